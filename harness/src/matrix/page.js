'use strict';
// The results matrix: renders the JSON island #data (harness/src/matrix/html.rs) as a table of
// engines across and options and clauses down, with sorting, filtering and the trials a cell
// opens. Every text from a bundle reaches the page through textContent or setAttribute, never as
// markup; a picture only as an <img> of a data: URL, where an SVG runs no script.
(() => {
  const data = JSON.parse(document.getElementById('data').textContent);
  const engines = data.engines;
  const rows = data.rows;
  // A cell's counts `c`: passed, failed, deviations, not supported, waived, unexpected passes;
  // shown worst first.
  const COUNTS = [
    [1, '\u2717', 'failed', 'failed'], [5, '!', 'unexpected pass', 'unexpected passes'],
    [4, 'w', 'waived', 'waived'], [2, '~', 'deviation', 'deviations'],
    [0, '\u2713', 'passed', 'passed'], [3, '\u2013', 'not supported', 'not supported'],
  ];
  const SEVERITY = {failed: 0, waived: 1, deviation: 2, passed: 3, 'not-supported': 4, untested: 5};
  const STATUSES = [
    ['all', 'every row'], ['failed', 'rows with a failure'], ['waived', 'rows with a waiver'],
    ['deviation', 'rows with a deviation'], ['not-supported', 'rows not supported'],
    ['untested', 'rows no trial touches'], ['differ', 'rows where the engines differ'],
  ];
  // What the reader chose; kept in the URL's fragment, so a link (or a reload) shows the same.
  const state = {sortBy: -1, text: '', status: 'all', optionsOnly: false, folded: new Set(), open: null};
  const controlled = {};

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, ...children) {
    for (const c of children) {
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function countsText(c) {
    const parts = COUNTS.filter(([i]) => c[i] > 0).map(([i, s]) => s + c[i]);
    return parts.length ? parts.join(' ') : '\u00b7';
  }
  function countsWords(c) {
    const parts = COUNTS.filter(([i]) => c[i] > 0)
      .map(([i, , one, many]) => c[i] + ' ' + (c[i] === 1 ? one : many));
    return parts.length ? parts.join(', ') : 'no trial';
  }
  function engineLabel(j) {
    const e = engines[j];
    return (j + 1) + ': ' + e.name + ' ' + e.version;
  }
  const cell = (i, j) => data.cells[i][j];

  // The groups: each option row with its clause rows, in the tables' order.
  const groups = [];
  const rowById = new Map();
  rows.forEach((r, i) => {
    rowById.set(r.id, i);
    if (r.kind === 'option') groups.push({opt: i, clauses: []});
    else if (groups.length) groups[groups.length - 1].clauses.push(i);
  });

  function summary() {
    const clauses = rows.filter((r) => r.kind === 'clause').length;
    document.getElementById('summary').textContent =
      engines.length + ' engines side by side on ' + clauses + ' clauses of ' +
      (groups.length - 1) + ' options and the cross-cutting ones; spec tables ' +
      data.spec.slice(0, 16) + '\u2026; ge-conformance ' + data.suite +
      '. A cell counts the engine\u2019s trials on the row by outcome; click it for the ' +
      'trials that did not pass, click an engine to sort by it.';
    const noted = engines.map((e, j) => [j, e.notes || []]).filter(([, n]) => n.length);
    if (!noted.length) return;
    const list = el('ul');
    for (const [j, notes] of noted) {
      for (const n of notes) add(list, el('li', null, engineLabel(j) + ': ' + n));
    }
    add(document.getElementById('notes'), list);
  }

  function controls() {
    const box = document.getElementById('controls');
    const search = el('input');
    search.type = 'search';
    search.placeholder = 'filter rows: option, clause or words';
    search.setAttribute('aria-label', 'filter rows');
    search.addEventListener('input', () => { state.text = search.value; remember(); });
    const select = el('select');
    select.setAttribute('aria-label', 'rows to show');
    for (const [value, words] of STATUSES) {
      const o = el('option', null, words);
      o.value = value;
      add(select, o);
    }
    select.addEventListener('change', () => { state.status = select.value; remember(); });
    const only = el('input');
    only.type = 'checkbox';
    only.addEventListener('change', () => { state.optionsOnly = only.checked; remember(); });
    const legend = el('span', 'legend');
    for (const [, s, w] of COUNTS) add(legend, el('span', null, s + ' ' + w));
    add(legend, el('span', null, '\u00b7 no trial'));
    const shown = el('span');
    shown.id = 'shown';
    add(box, search, select, add(el('label'), only, ' options only'), legend, shown);
    Object.assign(controlled, {search, select, only});
  }

  const trs = [];
  const tds = [];

  function header() {
    const tr = el('tr');
    const corner = el('th');
    const reset = add(el('button'), 'option / clause');
    reset.type = 'button';
    reset.title = 'the tables\u2019 order';
    reset.addEventListener('click', () => { state.sortBy = -1; remember(); });
    add(tr, add(corner, reset));
    engines.forEach((e, j) => {
      const th = el('th', 'eng');
      const b = el('button');
      b.type = 'button';
      b.title = engineLabel(j) + ' (' + e.bundle + '): ' + e.verdict + ', level ' + e.level +
        ', profile ' + e.profile + '; ' + countsWords(e.totals) + '. Click to sort by it.';
      add(b, el('div', 'num', String(j + 1)), el('div', 'name', e.name), el('div', 'ver', e.version));
      if (e.bundle) add(b, el('div', 'bundle', e.bundle));
      add(b, el('div', 'verdict v-' + e.standing, e.verdict));
      b.addEventListener('click', () => { state.sortBy = j; remember(); });
      add(tr, add(th, b));
    });
    return add(el('thead'), tr);
  }

  function rowHeader(r, i) {
    const th = el('th');
    th.scope = 'row';
    th.title = r.id + ': ' + r.summary;
    if (r.kind === 'option') {
      const fold = el('button', 'fold', '\u25be');
      fold.type = 'button';
      fold.setAttribute('aria-label', 'fold the clauses of ' + r.id);
      fold.addEventListener('click', () => {
        if (state.folded.has(i)) state.folded.delete(i); else state.folded.add(i);
        fold.textContent = state.folded.has(i) ? '\u25b8' : '\u25be';
        apply();
      });
      add(th, fold, el('code', null, r.id), el('span', 'sum', r.summary));
    } else {
      add(th, el('code', null, r.id));
      if (r.origin) add(th, el('span', 'origin', r.origin));
      add(th, el('span', 'sum', r.summary));
    }
    return th;
  }

  function body() {
    const tbody = el('tbody');
    rows.forEach((r, i) => {
      const tr = el('tr', r.kind === 'option' ? 'opt' : 'cl');
      add(tr, rowHeader(r, i));
      tds.push([]);
      engines.forEach((e, j) => {
        const c = cell(i, j);
        const td = el('td', 'cell s-' + c.s);
        td.title = engineLabel(j) + ' on ' + r.id + ': ' + countsWords(c.c);
        if (c.s === 'untested') {
          td.textContent = '\u00b7';
        } else {
          const b = el('button', null, countsText(c.c));
          b.type = 'button';
          b.addEventListener('click', () => { state.open = [j, i]; remember(); });
          add(td, b);
        }
        tds[i].push(td);
        add(tr, td);
      });
      trs.push(tr);
      add(tbody, tr);
    });
    return tbody;
  }

  function matchesText(i) {
    if (!state.text) return true;
    const r = rows[i];
    return (r.id + ' ' + r.summary).toLowerCase().includes(state.text.toLowerCase());
  }
  function matchesStatus(i) {
    const ss = engines.map((e, j) => cell(i, j).s);
    if (state.status === 'all') return true;
    if (state.status === 'differ') return ss.some((s) => s !== ss[0]);
    return ss.includes(state.status);
  }

  function ordered() {
    if (state.sortBy < 0) return groups;
    const j = state.sortBy;
    const sev = (i) => SEVERITY[cell(i, j).s];
    return groups
      .map((g) => ({opt: g.opt, clauses: g.clauses.slice().sort((a, b) => sev(a) - sev(b) || a - b)}))
      .sort((a, b) => sev(a.opt) - sev(b.opt) || a.opt - b.opt);
  }

  function apply() {
    const tbody = trs[0].parentNode;
    let shown = 0;
    for (const g of ordered()) {
      const optText = matchesText(g.opt);
      const visible = g.clauses.filter((i) => (optText || matchesText(i)) && matchesStatus(i));
      const showOpt = (optText && matchesStatus(g.opt)) || visible.length > 0;
      trs[g.opt].hidden = !showOpt;
      add(tbody, trs[g.opt]);
      shown += showOpt ? 1 : 0;
      for (const i of g.clauses) {
        const show = showOpt && !state.optionsOnly && !state.folded.has(g.opt) && visible.includes(i);
        trs[i].hidden = !show;
        add(tbody, trs[i]);
        shown += show ? 1 : 0;
      }
    }
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' rows shown';
    document.querySelectorAll('thead th[aria-sort]').forEach((th) => th.removeAttribute('aria-sort'));
    const sorted = document.querySelectorAll('thead th')[state.sortBy + 1];
    if (state.sortBy >= 0 && sorted) sorted.setAttribute('aria-sort', 'descending');
  }

  const PICTURE = /^[A-Za-z0-9+/]*={0,2}$/;

  function trialView(e, t) {
    const a = el('article', 'trial o-' + t.outcome);
    add(a, add(el('h3'), el('code', null, t.name), el('span', 'badge', t.outcome),
      t.capability + ' ' + t.kind));
    if (t.broken) add(a, el('p', null, 'Breaks ' + t.broken.join(', ') + '.'));
    if (t.deviations) {
      add(a, el('p', null, 'Departs from the suite\u2019s choices ' + t.deviations.join(', ') + '.'));
    }
    if (t.message) add(a, el('h4', null, 'What differs'), el('pre', 'message', t.message));
    if (t.reproducer) add(a, el('h4', null, 'Reproduce'), el('pre', 'reproducer', t.reproducer));
    const picture = t.picture === undefined ? undefined : e.pictures[t.picture];
    if (typeof picture === 'string' && PICTURE.test(picture)) {
      const img = el('img');
      img.alt = 'the picture of ' + t.name;
      img.src = 'data:image/svg+xml;base64,' + picture;
      add(a, add(el('figure'), img, el('figcaption', null,
        'The engine\u2019s answer (left) beside the reference\u2019s (right), what the broken ' +
        'clauses name outlined in red.')));
    }
    for (const x of t.left_out || []) add(a, el('p', 'note', 'Left out: ' + x + '.'));
    return a;
  }

  function close() {
    const d = document.getElementById('detail');
    d.hidden = true;
    d.replaceChildren();
    document.querySelectorAll('td.cell.open').forEach((td) => td.classList.remove('open'));
  }

  function open(j, i) {
    close();
    const e = engines[j];
    const r = rows[i];
    const c = cell(i, j);
    const d = document.getElementById('detail');
    const x = el('button', 'close', 'close');
    x.type = 'button';
    x.addEventListener('click', () => { state.open = null; remember(); });
    add(d, x, el('h2', null, engineLabel(j) + ' on ' + r.id), el('p', 'sum', r.summary),
      el('p', 'counts', 'Trials on this row: ' + countsWords(c.c) + '.'));
    const listed = c.t || [];
    for (const k of listed) add(d, trialView(e, e.trials[k]));
    if (c.u) {
      add(d, el('p', 'note', c.u + ' more trials that did not pass here are not listed: the ' +
        'page\u2019s share of details for this engine is spent (the bundle\u2019s report.html lists them).'));
    }
    if (!listed.length && !c.u) add(d, el('p', null, 'Every trial of this engine on this row passed (or is not supported).'));
    d.hidden = false;
    tds[i][j].classList.add('open');
  }

  // The fragment: `open=<engine, from 1>/<row id>` (the cell opened), `sort=<engine>`,
  // `rows=<words>`, `show=<status>` and `options`, joined by `&`.
  function fragment() {
    const parts = [];
    if (state.open) {
      parts.push('open=' + (state.open[0] + 1) + '/' + encodeURIComponent(rows[state.open[1]].id));
    }
    if (state.sortBy >= 0) parts.push('sort=' + (state.sortBy + 1));
    if (state.text) parts.push('rows=' + encodeURIComponent(state.text));
    if (state.status !== 'all') parts.push('show=' + state.status);
    if (state.optionsOnly) parts.push('options');
    return parts.join('&');
  }

  // Puts the state into the fragment (replacing the history entry); the page follows the
  // fragment, so every change is drawn by fromHash.
  function remember() {
    location.replace('#' + fragment());
  }

  function engineOf(text) {
    const j = /^\d+$/.test(text) ? Number(text) - 1 : -1;
    return j >= 0 && j < engines.length ? j : -1;
  }

  function read(key, value) {
    let v;
    try { v = decodeURIComponent(value); } catch (err) { return; }
    if (key === 'open') {
      const at = v.indexOf('/');
      const j = engineOf(v.slice(0, at));
      const i = rowById.get(v.slice(at + 1));
      if (at > 0 && j >= 0 && i !== undefined) state.open = [j, i];
    } else if (key === 'sort') {
      state.sortBy = engineOf(v);
    } else if (key === 'rows') {
      state.text = v;
    } else if (key === 'show' && STATUSES.some(([s]) => s === v)) {
      state.status = v;
    } else if (key === 'options') {
      state.optionsOnly = true;
    }
  }

  // Reads the fragment into the state, sets the controls to it, and draws the page.
  function fromHash() {
    Object.assign(state, {sortBy: -1, text: '', status: 'all', optionsOnly: false, open: null});
    for (const part of location.hash.replace(/^#/, '').split('&')) {
      const eq = part.indexOf('=');
      if (part) read(eq < 0 ? part : part.slice(0, eq), eq < 0 ? '' : part.slice(eq + 1));
    }
    const c = controlled;
    if (c.search.value !== state.text) c.search.value = state.text;
    c.select.value = state.status;
    c.only.checked = state.optionsOnly;
    apply();
    if (state.open) open(state.open[0], state.open[1]); else close();
  }

  summary();
  controls();
  const table = add(el('table', 'matrix'), header(), body());
  add(document.getElementById('matrix'), table);
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
