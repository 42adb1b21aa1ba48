#!/usr/bin/env node
// independent-js2: a GE memory-options engine written from the source text, speaking protocol v2.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const readline = require('readline');

// ---------- JSON with exact 64-bit integers ----------
function parseJSON(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  function val() {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const o = {}; ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws(); const k = str(); ws();
        if (text[i] !== ':') throw new Error('bad json'); i++;
        o[k] = val(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return o; }
        throw new Error('bad json');
      }
    }
    if (c === '[') {
      i++; const a = []; ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) {
        a.push(val()); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return a; }
        throw new Error('bad json');
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new Error('bad json at ' + i);
    i += m[0].length;
    if (m[1] || m[2]) return Number(m[0]);
    const n = Number(m[0]);
    return Number.isSafeInteger(n) ? n : BigInt(m[0]);
  }
  function str() {
    if (text[i] !== '"') throw new Error('bad json string');
    let j = i + 1;
    for (;;) {
      const ch = text[j];
      if (ch === undefined) throw new Error('unterminated');
      if (ch === '\\') { j += 2; continue; }
      if (ch === '"') break;
      j++;
    }
    const s = JSON.parse(text.slice(i, j + 1));
    i = j + 1;
    return s;
  }
  const v = val(); ws();
  if (i !== text.length) throw new Error('trailing json');
  return v;
}
function toJSON(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(toJSON).join(',') + ']';
  const parts = [];
  for (const k of Object.keys(v)) { if (v[k] !== undefined) parts.push(JSON.stringify(k) + ':' + toJSON(v[k])); }
  return '{' + parts.join(',') + '}';
}
const B = (x) => (x === undefined || x === null ? 0n : BigInt(x));
const U64MAX = (1n << 64n) - 1n;
const cmpB = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// ---------- options ----------
const LEVELS = ['global', 'session', 'graph'];
const OPTS = {
  'ge.exec.atomicCleanPolicy': { kind: 'enum', values: ['0', '1'], def: '0', levels: ['session'] },
  'ge.exec.disableReuseMemory': { kind: 'enum', values: ['0', '1'], def: '0', levels: LEVELS },
  'ge.exec.input_fusion_size': { kind: 'int', max: 33554432n, def: '131072', levels: LEVELS },
  'ge.exec.inputReuseMemIndexes': { kind: 'ilist', def: '', levels: ['graph'], count: 'inputs' },
  'ge.exec.reuseZeroCopyMemory': { kind: 'enum', values: ['0', '1'], def: '0', levels: LEVELS },
  'ge.exec.staticMemoryPolicy': { kind: 'enum', values: ['0', '2', '3', '4'], def: '0', levels: ['global', 'session'] },
  'ge.exec.outputReuseInputMemIndexes': { kind: 'plist', def: '', levels: ['graph'] },
  'ge.exec.outputReuseMemIndexes': { kind: 'ilist', def: '', levels: ['graph'], count: 'outputs' },
  'ge.externalWeight': { kind: 'enum', values: ['0', '1', '2'], def: '0', levels: ['global', 'session'] },
  'ge.externalWeightDir': { kind: 'path', def: '', levels: ['global', 'session'] },
  'ge.inputBatchCpy': { kind: 'enum', values: ['0', '1'], def: '0', levels: LEVELS },
  'ge.featureBaseRefreshable': { kind: 'enum', values: ['0', '1'], def: '0', levels: LEVELS },
};
const KEYS = Object.keys(OPTS);

// Lenient number: ASCII digits only, leading zeros allowed (CHOICE). Returns BigInt or null.
function num(s) { return /^[0-9]+$/.test(s) ? BigInt(s) : null; }

function diag(key, level, value, message, subject, extra) {
  const d = { clause: '', key: key, level: level, value: value, subject: subject || {}, message: message };
  if (extra) Object.assign(d, extra);
  return d;
}

// Validate one value. Returns {ok:true, canon} or {ok:false, msg, subject}.
function validate(key, raw, facts) {
  const o = OPTS[key];
  if (o.kind === 'enum') {
    const n = num(raw);
    if (n === null) return { ok: false, msg: 'not a number' };
    const c = n.toString();
    if (!o.values.includes(c)) return { ok: false, msg: 'value ' + c + ' is not one of ' + o.values.join(', ') };
    return { ok: true, canon: c };
  }
  if (o.kind === 'int') {
    const n = num(raw);
    if (n === null) return { ok: false, msg: 'not a number' };
    if (n > o.max) return { ok: false, msg: 'out of range 0..' + o.max };
    return { ok: true, canon: n.toString() };
  }
  if (o.kind === 'path') {
    if (raw.includes('\0')) return { ok: false, msg: 'a path cannot hold NUL' };
    return { ok: true, canon: raw };
  }
  if (o.kind === 'ilist') {
    if (raw === '') return { ok: true, canon: '', list: [] };
    const items = raw.split(',');
    const set = new Set();
    for (const it of items) {
      if (it === '') continue; // CHOICE: empty items are ignored
      const n = num(it);
      if (n === null) return { ok: false, msg: 'item "' + it + '" is not a decimal index', subject: { item: it } };
      set.add(n);
    }
    const list = [...set].sort(cmpB);
    const count = B(facts[o.count]);
    // CHOICE: "index is invalid and the index configuration does not take effect" -> the whole list is dropped
    if (list.some((n) => n >= count)) return { ok: true, canon: '', list: [], dropped: true };
    return { ok: true, canon: list.join(','), list: list.map(Number) };
  }
  if (o.kind === 'plist') {
    if (raw === '') return { ok: true, canon: '', pairs: [] };
    const segs = raw.split('|');
    const pairs = [];
    const seen = new Set();
    for (const seg of segs) {
      if (seg === '') continue; // CHOICE: empty segments ignored
      const p = seg.split(',');
      if (p.length !== 2) return { ok: false, msg: 'pair "' + seg + '" is not input,output', subject: { pair: seg } };
      const a = num(p[0]), b = num(p[1]);
      if (a === null || b === null) return { ok: false, msg: 'pair "' + seg + '" has a non-decimal index', subject: { pair: seg } };
      if (a >= B(facts.inputs) || b >= B(facts.outputs)) return { ok: false, msg: 'pair "' + seg + '" names an index outside the model', subject: { pair: seg } };
      const k = a + ',' + b;
      if (seen.has(k)) continue;
      seen.add(k);
      pairs.push([Number(a), Number(b)]);
    }
    const outs = new Set();
    for (const [, b] of pairs) {
      if (outs.has(b)) return { ok: false, msg: 'output ' + b + ' would need two addresses', subject: { output: b } };
      outs.add(b);
    }
    pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    return { ok: true, canon: pairs.map((p) => p[0] + ',' + p[1]).join('|'), pairs };
  }
  throw new Error('unknown kind');
}

// Resolve the options. facts: {inputs, outputs}. Returns {effective, rejected, passthrough, errors, misplaced, values}
function resolve(maps, facts) {
  maps = maps || {};
  const effective = {}, rejected = [], errors = [], misplaced = [], parsed = {};
  const pass = new Set();
  for (const lv of LEVELS) for (const k of Object.keys(maps[lv] || {})) if (!OPTS[k]) pass.add(k);
  for (const key of KEYS) {
    const o = OPTS[key];
    for (const lv of LEVELS) {
      const m = maps[lv] || {};
      if (Object.prototype.hasOwnProperty.call(m, key) && !o.levels.includes(lv)) misplaced.push({ key, level: lv, value: m[key] });
    }
    // narrowest effective level first; an invalid value does not take effect and the next level is used (CHOICE)
    let chosen = null, anyInvalid = false;
    for (const lv of [...o.levels].reverse()) {
      const m = maps[lv] || {};
      if (!Object.prototype.hasOwnProperty.call(m, key)) continue;
      const raw = m[key];
      const r = validate(key, raw, facts);
      if (!r.ok) {
        anyInvalid = true;
        errors.push(diag(key, lv, raw, key + ' at ' + lv + ' level: ' + r.msg, r.subject));
        continue;
      }
      chosen = { value: r.canon, from: lv, r };
      break;
    }
    if (chosen) { effective[key] = { value: chosen.value, from: chosen.from }; parsed[key] = chosen.r; }
    else if (anyInvalid) rejected.push(key);
    else { effective[key] = { value: o.def, from: 'default' }; parsed[key] = validate(key, o.def, facts); }
  }
  return { effective, rejected: rejected.sort(), passthrough: [...pass].sort(), errors, misplaced, parsed };
}

function misplacedErrors(res, graphSubject) {
  return res.misplaced.map((m) => diag(m.key, m.level, m.value,
    m.key + ' has no effect at the ' + m.level + ' level; the request is refused', graphSubject));
}

// ---------- options capability ----------
function doOptions(sc) {
  const g = sc.graph || {};
  const facts = { inputs: g.inputs === undefined ? 1 : g.inputs, outputs: g.outputs === undefined ? 1 : g.outputs };
  const r = resolve(sc.options, facts);
  return { capability: 'options', effective: r.effective, rejected: r.rejected, passthrough: r.passthrough, errors: r.errors, warnings: [] };
}

// ---------- transfer ----------
const BATCH_PRODUCTS = ['ascend-950pr', 'ascend-950dt', 'atlas-a3-training', 'atlas-a3-inference', 'atlas-a2-training', 'atlas-a2-inference'];
function doTransfer(sc) {
  const inputs = sc.inputs || [];
  const empty = { capability: 'transfer', fused: [], fused_bytes: 0, direct: [], batched: [], on_device: [], warnings: [] };
  const errors = [];
  const seen = new Set();
  for (const inp of inputs) {
    const k = String(inp.index);
    if (seen.has(k)) errors.push(diag(null, null, null, 'input ' + k + ' is given twice', { input: Number(inp.index) }));
    seen.add(k);
  }
  const r = resolve(sc.options, { inputs: inputs.length, outputs: 1 });
  errors.push(...r.errors, ...misplacedErrors(r));
  if (r.rejected.length || errors.length) return Object.assign(empty, { errors });
  const async = (sc.run_mode || 'async') === 'async';
  const statik = (sc.shape || 'static') === 'static';
  const product = sc.product || 'ascend-950pr';
  const thr = BigInt(r.effective['ge.exec.input_fusion_size'].value);
  const ibc = r.effective['ge.inputBatchCpy'].value === '1';
  const fused = [], direct = [], batched = [], dev = [];
  let fb = 0n;
  const host = [];
  for (const inp of inputs) {
    if ((inp.placement || 'host') === 'device') dev.push(Number(inp.index));
    else host.push(inp);
  }
  const left = [];
  for (const inp of host) {
    const sz = B(inp.size);
    // CHOICE: a lone eligible input is "fused" too (fusion of one); fused slots padded to 64 bytes
    if (async && statik && thr > 0n && sz <= thr) { fused.push(Number(inp.index)); fb += (sz + 63n) / 64n * 64n; }
    else left.push(Number(inp.index));
  }
  const hostCount = host.length; // CHOICE: "user inputs" counted as the host inputs to be moved
  if (ibc && async && BATCH_PRODUCTS.includes(product) && hostCount > 1 && left.length >= 2) batched.push(...left);
  else direct.push(...left);
  const s = (a) => a.sort((x, y) => x - y);
  return { capability: 'transfer', fused: s(fused), fused_bytes: fb, direct: s(direct), batched: s(batched), on_device: s(dev), errors: [], warnings: [] };
}

// ---------- memory ----------
const ALIGN = 256n; // CHOICE
const al = (x) => (x + ALIGN - 1n) / ALIGN * ALIGN;
function doMemory(sc) {
  const tensors = sc.tensors || [];
  const nIn = Number(sc.inputs || 0), nOut = Number(sc.outputs || 0);
  const out = { capability: 'memory', offsets: {}, peak_bytes: 0, cleanup: [], aliases: [], reused_inputs: [], reused_outputs: [], errors: [], warnings: [] };
  const errors = [];
  const names = new Set();
  const inT = new Map(), outT = new Map();
  for (const t of tensors) {
    if (names.has(t.name)) errors.push(diag(null, null, null, 'tensor name repeated', { tensor: t.name }));
    names.add(t.name);
    if (Number(t.first) > Number(t.last)) errors.push(diag(null, null, null, 'first step after last step', { tensor: t.name }));
    const role = t.role || {};
    if (role.kind === 'input' || role.kind === 'output') {
      const idx = Number(role.index);
      const [lim, map, fld] = role.kind === 'input' ? [nIn, inT, 'input'] : [nOut, outT, 'output'];
      if (idx >= lim) errors.push(diag(null, null, null, role.kind + ' index ' + idx + ' beyond the graph', { tensor: t.name, [fld]: idx }));
      else if (map.has(idx)) errors.push(diag(null, null, null, role.kind + ' ' + idx + ' has two tensors', { tensor: t.name, [fld]: idx }));
      else map.set(idx, t);
    }
  }
  const r = resolve(sc.options, { inputs: nIn, outputs: nOut });
  errors.push(...r.errors, ...misplacedErrors(r));
  if (errors.length || r.rejected.length) { out.errors = errors; return out; }
  const disable = r.effective['ge.exec.disableReuseMemory'].value === '1';
  const acp = r.effective['ge.exec.atomicCleanPolicy'].value;
  const inList = new Set(r.parsed['ge.exec.inputReuseMemIndexes'].list || []);
  const outList = new Set(r.parsed['ge.exec.outputReuseMemIndexes'].list || []);
  const pairs = (r.parsed['ge.exec.outputReuseInputMemIndexes'].pairs || []).filter(([a, b]) => inT.has(a) && outT.has(b));

  let end = 0;
  for (const t of tensors) end = Math.max(end, Number(t.last));
  const blocks = []; // {size, s, e, members:[[t,rel]], shareable}
  const inBlock = new Set();
  const aliasOf = new Map();
  // alias pairs: one block per input (an input may feed several outputs)
  const byIn = new Map();
  for (const [a, b] of pairs) { if (!byIn.has(a)) byIn.set(a, []); byIn.get(a).push(b); }
  for (const [a, bs] of byIn) {
    const ti = inT.get(a);
    let size = B(ti.size);
    const mem = [[ti, 0n]];
    inBlock.add(ti.name);
    for (const b of bs) {
      const to = outT.get(b);
      if (B(to.size) > size) size = B(to.size);
      mem.push([to, 0n]); inBlock.add(to.name);
      aliasOf.set(to.name, ti.name);
      aliasOf.set(ti.name, ti.name);
    }
    blocks.push({ size, s: 0, e: end, members: mem, shareable: false, key: ti.name });
    out.aliases.push(...bs.map((b) => ({ input: a, output: b })));
  }
  const partners = (x, y) => {
    const ax = aliasOf.get(x.name), ay = aliasOf.get(y.name);
    return ax !== undefined && ax === ay;
  };
  // memset groups
  const groups = new Map();
  for (const t of tensors) {
    if ((t.role || {}).kind !== 'memset') continue;
    const g = acp === '0' ? '*' : 'op:' + t.role.op;
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(t);
  }
  const groupBlocks = [];
  for (const [, ts] of groups) {
    ts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let rel = 0n; const mem = []; let s = Infinity, e = 0;
    for (const t of ts) {
      mem.push([t, rel]); rel = al(rel + B(t.size)); inBlock.add(t.name);
      s = Math.min(s, Number(t.first)); e = Math.max(e, Number(t.last));
    }
    const last = mem[mem.length - 1];
    const size = last[1] + B(last[0].size);
    // CHOICE: cleaned just before the group's first use, held to its last use
    const blk = { size, s, e, members: mem, shareable: false, key: ts[0].name };
    blocks.push(blk); groupBlocks.push(blk);
  }
  for (const t of tensors) {
    if (inBlock.has(t.name)) continue;
    const role = t.role || {};
    let s = Number(t.first), e = Number(t.last), shareable = false;
    if (role.kind === 'input') {
      // CHOICE: a listed input whose size is not 32-byte aligned is simply not reused
      if (inList.has(Number(role.index)) && B(t.size) % 32n === 0n) { s = 0; shareable = true; } else { s = 0; e = end; }
    } else if (role.kind === 'output') {
      if (outList.has(Number(role.index)) && B(t.size) % 32n === 0n) { e = end; shareable = true; } else { s = 0; e = end; }
    }
    blocks.push({ size: B(t.size), s, e, members: [[t, 0n]], shareable, key: t.name });
  }
  const conflict = (x, y) => {
    if (x.s <= y.e && y.s <= x.e) return true;
    if (disable && !x.shareable && !y.shareable) return true; // CHOICE: reuse lists win over reuse-off
    return false;
  };
  // best-fit, largest first
  const order = blocks.slice().sort((x, y) => cmpB(y.size, x.size) || x.s - y.s || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  const placed = [];
  for (const b of order) {
    const sz = al(b.size);
    if (b.size === 0n) { b.off = 0n; continue; }
    const iv = placed.filter((p) => conflict(p, b)).map((p) => [p.off, p.off + al(p.size)]).sort((x, y) => cmpB(x[0], y[0]));
    let best = null, bestGap = null, cur = 0n;
    for (const [lo, hi] of iv) {
      if (lo > cur) { const gap = lo - cur; if (gap >= sz && (bestGap === null || gap < bestGap)) { best = cur; bestGap = gap; } }
      if (hi > cur) cur = hi;
    }
    if (best === null) best = cur;
    b.off = best;
    placed.push(b);
  }
  let peak = 0n;
  const spans = [];
  for (const b of blocks) for (const [t, rel] of b.members) {
    const off = b.off + rel;
    out.offsets[t.name] = off;
    const endb = off + B(t.size);
    if (endb > peak) peak = endb;
    spans.push({ t, lo: off, hi: endb });
  }
  if (peak > U64MAX) {
    out.offsets = {}; out.aliases = [];
    out.errors = [diag(null, null, null, 'the plan does not fit a 64-bit arena', { part: 'sizes' })];
    return out;
  }
  out.peak_bytes = peak;
  for (const gb of groupBlocks) {
    const ts = gb.members.map(([t]) => t.name).sort();
    out.cleanup.push({ offset: gb.off, size: gb.size, tensors: ts });
  }
  // reuse reports
  spans.sort((x, y) => cmpB(x.lo, y.lo));
  const ri = new Set(), ro = new Set();
  for (let i = 0; i < spans.length; i++) {
    const a = spans[i];
    if (a.hi === a.lo) continue;
    for (let j = i + 1; j < spans.length && spans[j].lo < a.hi; j++) {
      const b = spans[j];
      if (b.hi === b.lo || partners(a.t, b.t)) continue;
      for (const x of [a.t, b.t]) {
        if (x.role.kind === 'input') ri.add(Number(x.role.index));
        if (x.role.kind === 'output') ro.add(Number(x.role.index));
      }
    }
  }
  out.reused_inputs = [...ri].sort((a, b) => a - b);
  out.reused_outputs = [...ro].sort((a, b) => a - b);
  out.aliases.sort((x, y) => x.input - y.input || x.output - y.output);
  // run-time address check
  if (sc.run) {
    const ia = sc.run.inputs || [], oa = sc.run.outputs || [];
    for (const { input, output } of out.aliases) {
      if (ia[input] === undefined || oa[output] === undefined) continue; // CHOICE: unchecked when not passed
      if (B(ia[input]) !== B(oa[output])) out.errors.push(diag('ge.exec.outputReuseInputMemIndexes', 'graph', r.effective['ge.exec.outputReuseInputMemIndexes'].value,
        'run passes input ' + input + ' and output ' + output + ' at different addresses', { input, output }));
    }
  }
  return out;
}

// ---------- session ----------
const MAX_EVENTS = 2048, MAX_EXECS = 20000; // CHOICE
function doSession(sc) {
  const events = sc.events || [];
  const out = { capability: 'session', trace: [], refreshes: [], errors: [], warnings: [] };
  let execs = 0n;
  for (const ev of events) if (ev.event === 'execute') execs += B(ev.times === undefined ? 1 : ev.times);
  if (events.length > MAX_EVENTS || execs > BigInt(MAX_EXECS)) {
    out.errors.push(diag(null, null, null, 'script too large for this engine (' + MAX_EVENTS + ' events, ' + MAX_EXECS + ' executions at most)', { part: 'script' }));
    return out;
  }
  const maps = sc.options || {};
  const base = resolve({ global: maps.global, session: maps.session }, { inputs: 1, outputs: 1 });
  const errors = [...base.errors, ...misplacedErrors(base)];
  const perLoad = new Map();
  events.forEach((ev, i) => {
    if (ev.event !== 'load') return;
    const gm = ev.options === undefined || ev.options === null ? (maps.graph || {}) : ev.options;
    const r = resolve({ global: maps.global, session: maps.session, graph: gm }, { inputs: 1 << 30, outputs: 1 << 30 });
    const subj = { graph: Number(ev.graph) };
    for (const e of r.errors) if (e.level === 'graph') errors.push(Object.assign(e, { subject: Object.assign({}, e.subject, subj) }));
    for (const m of r.misplaced) if (m.level === 'graph') errors.push(diag(m.key, 'graph', m.value, m.key + ' has no effect at the graph level; the request is refused', subj));
    if (r.rejected.length) for (const k of r.rejected) if (!base.rejected.includes(k) && !errors.some((e) => e.key === k)) errors.push(diag(k, 'graph', null, k + ' rejected', subj));
    perLoad.set(i, r);
  });
  if (errors.length || base.rejected.length) { out.errors = errors; return out; }
  const smp = base.effective['ge.exec.staticMemoryPolicy'].value;
  const trace = out.trace;
  const T = (step, action, pool, bytes) => trace.push({ step, action, pool, bytes });
  const loaded = new Map(); // id -> {feature, io, shape, rzc, fbr, pool, ioHeld}
  const pools = {}; // name -> size
  const poolFor = (shape) => {
    if (shape === 'static' && (smp === '2' || smp === '4')) return 'static-pool';
    if (shape === 'dynamic' && (smp === '3' || smp === '4')) return 'dynamic-pool';
    return null;
  };
  const unload = (id, step) => {
    const g = loaded.get(id);
    if (g.ioHeld) T(step, 'free', 'graph-' + id + '/io', g.io);
    if (!g.pool && g.feature > 0n) T(step, 'free', 'graph-' + id + '/feature', g.feature);
    // CHOICE: pools are kept after their last user unloads, until the session closes
    loaded.delete(id);
  };
  events.forEach((ev, step) => {
    const id = String(ev.graph);
    if (ev.event === 'load') {
      if (loaded.has(id)) return; // CHOICE: silently ignored
      const r = perLoad.get(step);
      const shape = ev.shape || 'static';
      const g = { feature: B(ev.feature_bytes), io: B(ev.io_bytes), shape, rzc: r.effective['ge.exec.reuseZeroCopyMemory'].value === '1',
        fbr: r.effective['ge.featureBaseRefreshable'].value === '1', pool: poolFor(shape), ioHeld: false };
      if (g.pool) {
        const cur = pools[g.pool];
        if (g.feature > 0n) {
          if (cur === undefined) { pools[g.pool] = g.feature; T(step, 'alloc', g.pool, g.feature); }
          else if (g.feature > cur) { T(step, 'free', g.pool, cur); pools[g.pool] = g.feature; T(step, 'alloc', g.pool, g.feature); }
        }
      } else if (g.feature > 0n) T(step, 'alloc', 'graph-' + id + '/feature', g.feature);
      loaded.set(id, g);
    } else if (ev.event === 'execute') {
      const g = loaded.get(id);
      if (!g) return;
      const times = Number(ev.times === undefined ? 1 : ev.times);
      if (g.io === 0n) return;
      for (let k = 0; k < times; k++) {
        if (g.rzc) { if (!g.ioHeld) { g.ioHeld = true; T(step, 'alloc', 'graph-' + id + '/io', g.io); } } // CHOICE: lazily at first execution
        else { T(step, 'alloc', 'graph-' + id + '/io', g.io); T(step, 'free', 'graph-' + id + '/io', g.io); }
      }
    } else if (ev.event === 'refresh') {
      const g = loaded.get(id);
      // CHOICE: with 0 (or on a dynamic-shape graph) no refresh is ever accepted, the first included
      const ok = !!g && g.shape === 'static' && g.fbr && B(ev.bytes) >= g.feature;
      out.refreshes.push({ step, graph: Number(ev.graph), ok });
    } else if (ev.event === 'unload') {
      if (loaded.has(id)) unload(id, step);
    }
  });
  const n = events.length;
  const ids = [...loaded.keys()].sort((a, b) => Number(b) - Number(a)); // CHOICE: descending at close
  for (const id of ids) unload(id, n);
  for (const p of ['dynamic-pool', 'static-pool']) if (pools[p] !== undefined) T(n, 'free', p, pools[p]);
  return out;
}

// ---------- weights ----------
const MAX_WEIGHT_BYTES = 256n * 1024n * 1024n, MAX_CONSTS = 65536; // CHOICE
function sha256(buf) { return crypto.createHash('sha256').update(buf).digest('hex'); }
function doWeights(sc, sandbox) {
  const out = { capability: 'weights', dir: '', files: [], nodes: [], removed: [], errors: [], warnings: [] };
  const err = (msg, subject) => out.errors.push(diag(null, null, null, msg, subject));
  const sbx = fs.realpathSync(sandbox);
  const rel = (abs) => { const r = path.relative(sbx, abs); return r === '' ? '.' : r.split(path.sep).join('/'); };
  const inside = (abs) => { const r = path.relative(sbx, abs); return r === '' || (!r.startsWith('..') && !path.isAbsolute(r)); };
  // scenario paths
  const wd = sc.work_dir || '';
  if (path.isAbsolute(wd) || !inside(path.resolve(sbx, wd))) err('working directory leaves the sandbox', { part: 'work-dir', path: wd });
  const awp = sc.ascend_work_path || { state: 'unset' };
  if (awp.state === 'set') {
    if (awp.path === '' || path.isAbsolute(awp.path) || !inside(path.resolve(sbx, awp.path))) err('ASCEND_WORK_PATH leaves the sandbox', { part: 'ascend-work-path', path: awp.path });
  }
  // constants
  const consts = sc.constants || [];
  const names = new Set();
  const bytes = [];
  let total = 0n;
  if (consts.length > MAX_CONSTS) err('too many constants', { part: 'constants' });
  for (const c of consts) {
    if (!c.name || names.has(c.name)) err('empty or repeated node name', { constant: c.name });
    names.add(c.name);
    if (c.type === 'FileConstant') err('a FileConstant is not a constant to externalise', { constant: c.name });
    const hasHex = c.hex !== undefined && c.hex !== null, hasFill = c.fill !== undefined && c.fill !== null;
    if (hasHex === hasFill) { err('bytes must be given exactly one way', { constant: c.name }); bytes.push(null); continue; }
    if (hasHex) {
      if (c.hex.length % 2 || !/^[0-9a-fA-F]*$/.test(c.hex)) { err('bad hex', { constant: c.name }); bytes.push(null); continue; }
      total += BigInt(c.hex.length / 2);
      bytes.push(total > MAX_WEIGHT_BYTES ? null : Buffer.from(c.hex, 'hex'));
    } else {
      const len = B(c.fill.len);
      total += len;
      bytes.push(total > MAX_WEIGHT_BYTES ? null : Buffer.alloc(Number(len), Number(c.fill.byte)));
    }
  }
  if (total > MAX_WEIGHT_BYTES) err('weights larger than this engine takes', { part: 'constants' });
  const r = resolve(sc.options, { inputs: 1, outputs: 1 });
  const oerr = [...r.errors, ...misplacedErrors(r)];
  if (oerr.length || r.rejected.length) { out.errors = oerr; return out; }
  if (out.errors.length) return out;
  const mode = r.effective['ge.externalWeight'].value;
  const nodes = consts.map((c) => ({ name: c.name, type: c.type }));
  const sortNodes = (ns) => ns.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (mode === '0') { out.nodes = sortNodes(nodes); return out; }
  // choose the directory
  const wdAbs = path.resolve(sbx, wd);
  const ewd = r.effective['ge.externalWeightDir'].value;
  const tmpName = 'tmp_weight_' + sc.pid + '_' + sc.session_id;
  let dirAbs, isTmp;
  if (ewd !== '') {
    dirAbs = path.resolve(wdAbs, ewd); isTmp = false;
    if (!inside(dirAbs)) { err('ge.externalWeightDir leaves the sandbox', { part: 'external-weight-dir', path: ewd }); return out; }
  } else if (awp.state === 'set') { dirAbs = path.resolve(sbx, awp.path, tmpName); isTmp = true; }
  else { dirAbs = path.resolve(wdAbs, tmpName); isTmp = true; }
  out.dir = rel(dirAbs);
  // make the directory, never following a link out of the sandbox
  const mk = (abs) => {
    const parts = path.relative(sbx, abs).split(path.sep).filter((x) => x);
    let cur = sbx;
    for (const p of parts) {
      cur = path.join(cur, p);
      let st = null;
      try { st = fs.lstatSync(cur); } catch (e) { /* missing */ }
      if (st === null) { fs.mkdirSync(cur); continue; }
      if (st.isSymbolicLink()) {
        if (isTmp && cur === abs) throw Object.assign(new Error('the weight directory is a link'), { at: cur });
        let real;
        try { real = fs.realpathSync(cur); } catch (e) { throw Object.assign(new Error('dangling link'), { at: cur }); }
        if (!inside(real) || !fs.statSync(real).isDirectory()) throw Object.assign(new Error('link leaves the sandbox or is no directory'), { at: cur });
        continue;
      }
      if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { at: cur });
    }
  };
  try { mk(dirAbs); } catch (e) { err('cannot create the weight directory: ' + e.message, { path: rel(e.at || dirAbs) }); return out; }
  const realDir = fs.realpathSync(dirAbs);
  const written = [];
  const writeFile = (name, buf) => {
    const fin = path.join(realDir, name);
    const tmp = path.join(realDir, '.' + name + '.part-' + process.pid);
    try {
      const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
      try { if (buf.length) fs.writeSync(fd, buf); } finally { fs.closeSync(fd); }
      let st = null;
      try { st = fs.lstatSync(fin); } catch (e) { /* none */ }
      if (st && st.isDirectory()) throw new Error('a directory holds the name');
      fs.renameSync(tmp, fin);
    } catch (e) {
      try { fs.unlinkSync(tmp); } catch (e2) { /* gone */ }
      throw Object.assign(e, { at: path.join(dirAbs, name) });
    }
    written.push({ path: rel(path.join(dirAbs, name)), len: buf.length, sha256: sha256(buf) });
  };
  const conv = [];
  try {
    if (mode === '1') {
      const done = new Map();
      consts.forEach((c, i) => {
        const h = crypto.createHash('sha1').update(bytes[i]).digest('hex'); // CHOICE: SHA-1, 40 hex digits
        const name = 'weight_' + h;
        if (!done.has(name)) { writeFile(name, bytes[i]); done.set(name, true); }
        conv.push({ name: c.name, type: 'FileConstant', file: rel(path.join(dirAbs, name)), offset: 0, length: bytes[i].length });
      });
    } else if (consts.length) {
      // CHOICE: largest weight first, 128-byte alignment, identical contents stored once
      const fname = String(sc.root_graph).replace(/[\/\0]/g, '_') + '_weight_combined';
      const idx = consts.map((c, i) => i).sort((a, b) => bytes[b].length - bytes[a].length || (consts[a].name < consts[b].name ? -1 : 1));
      const at = new Map(); const place = new Array(consts.length);
      let cur = 0, endf = 0; const chunks = [];
      for (const i of idx) {
        const k = sha256(bytes[i]) + ':' + bytes[i].length;
        if (at.has(k)) { place[i] = at.get(k); continue; }
        const off = Math.ceil(cur / 128) * 128;
        chunks.push([off, bytes[i]]); at.set(k, off); place[i] = off;
        cur = off + bytes[i].length; endf = Math.max(endf, cur);
      }
      const buf = Buffer.alloc(endf);
      for (const [off, b] of chunks) b.copy(buf, off);
      writeFile(fname, buf);
      consts.forEach((c, i) => conv.push({ name: c.name, type: 'FileConstant', file: rel(path.join(dirAbs, fname)), offset: place[i], length: bytes[i].length }));
    }
    out.nodes = sortNodes(conv);
  } catch (e) {
    err('cannot write a weight file: ' + e.message, { path: rel(e.at || dirAbs) });
    out.nodes = [];
  }
  out.files = written.sort((a, b) => (a.path < b.path ? -1 : 1));
  if (sc.unload && isTmp) {
    const removed = [];
    const rm = (abs) => {
      const st = fs.lstatSync(abs);
      if (st.isDirectory()) { for (const e of fs.readdirSync(abs)) rm(path.join(abs, e)); fs.rmdirSync(abs); }
      else fs.unlinkSync(abs);
      removed.push(rel(abs));
    };
    try {
      const st = fs.lstatSync(dirAbs);
      if (st.isDirectory()) rm(dirAbs);
    } catch (e) { /* nothing to remove */ }
    out.removed = removed.sort();
  }
  return out;
}

// ---------- protocol ----------
const CAPS = ['options', 'transfer', 'memory', 'session', 'weights'];
function handle(msg) {
  if (msg.type === 'hello') {
    if (msg.protocol !== 2) return { type: 'error', message: 'this engine speaks protocol 2 only' };
    if (msg.profile && msg.profile !== 'documented') return { type: 'error', message: 'this engine implements the documented profile only' };
    return { type: 'hello', protocol: 2, name: 'independent-js2', version: '0.5.0', capabilities: CAPS, profiles: ['documented'] };
  }
  if (msg.type !== 'request') return null;
  const sc = msg.scenario || {};
  try {
    let obs;
    switch (sc.capability) {
      case 'options': obs = doOptions(sc); break;
      case 'transfer': obs = doTransfer(sc); break;
      case 'memory': obs = doMemory(sc); break;
      case 'session': obs = doSession(sc); break;
      case 'weights': obs = doWeights(sc, msg.sandbox); break;
      default: return { type: 'not-supported', id: msg.id, reason: 'unknown capability' };
    }
    return { type: 'observation', id: msg.id, observation: obs };
  } catch (e) {
    process.stderr.write('independent-js2: ' + (e && e.stack) + '\n');
    return { type: 'error', id: msg.id, message: 'internal error: ' + (e && e.message) };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try { msg = parseJSON(line); } catch (e) { process.stderr.write('independent-js2: bad line\n'); return; }
  const ans = handle(msg);
  if (ans) fs.writeSync(1, toJSON(ans) + '\n');
});
rl.on('close', () => process.exit(0));
