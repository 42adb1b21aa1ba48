#!/usr/bin/env node
// indep-js: an independent engine for the GE memory-option conformance protocol (version 2).
//
// Written from the source text (ge-memory-options.txt), the protocol description and the JSON
// schemas. Where the source text is silent this engine makes its own choices; each one is marked
// "CHOICE:" in a comment (and listed in NOTES.md). Clause IDs are cited only where a
// diagnostic plainly is what a catalogue clause talks about; diagnostics that come from this
// engine's own choices cite no clause.
//
// Only Node's standard library is used. Standard input is read synchronously line by line,
// standard output is written synchronously (one JSON object per line), logging goes to stderr.
'use strict';

const fs = require('fs');
const pathMod = require('path');
const crypto = require('crypto');

const ENGINE_NAME = 'indep-js';
const ENGINE_VERSION = '0.1.0';
const PROTOCOL = 2;
const CAPABILITIES = ['options', 'transfer', 'memory', 'session', 'weights'];

// ---------------------------------------------------------------------------------------------
// JSON with exact 64-bit integers
// ---------------------------------------------------------------------------------------------
// JSON.parse loses precision above 2^53, and sizes, offsets and addresses are uint64. This parser
// returns integers outside the safe range as BigInt; objects have no prototype, so keys such as
// "__proto__" stay ordinary keys.

const NUM_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

function parseJSON(s) {
  let i = 0;
  const n = s.length;
  const fail = (m) => { throw new SyntaxError(`${m} at offset ${i}`); };
  const ws = () => {
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++; else break;
    }
  };
  function str() {
    i++; // opening quote
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = s.charCodeAt(i);
      if (c === 34) { out += s.slice(start, i); i++; return out; }
      if (c === 92) {
        out += s.slice(start, i);
        const e = s[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const h = s.substr(i, 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) fail('bad \\u escape');
            out += String.fromCharCode(parseInt(h, 16));
            i += 4;
            break;
          }
          default: fail('bad escape');
        }
        start = i;
        continue;
      }
      if (c < 0x20) fail('control character in string');
      i++;
    }
  }
  function num() {
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(s);
    if (!m) fail('unexpected character');
    i = NUM_RE.lastIndex;
    if (m[1] === undefined && m[2] === undefined) {
      const v = Number(m[0]);
      return Number.isSafeInteger(v) ? v : BigInt(m[0]);
    }
    return Number(m[0]);
  }
  function value() {
    ws();
    if (i >= n) fail('unexpected end');
    const c = s[i];
    if (c === '{') {
      i++;
      const o = Object.create(null);
      ws();
      if (s[i] === '}') { i++; return o; }
      for (;;) {
        ws();
        if (s[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (s[i] !== ':') fail('expected ":"');
        i++;
        o[k] = value();
        ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === '}') { i++; return o; }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const a = [];
      ws();
      if (s[i] === ']') { i++; return a; }
      for (;;) {
        a.push(value());
        ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === ']') { i++; return a; }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    if (s.startsWith('true', i)) { i += 4; return true; }
    if (s.startsWith('false', i)) { i += 5; return false; }
    if (s.startsWith('null', i)) { i += 4; return null; }
    return num();
  }
  const v = value();
  ws();
  if (i !== n) fail('trailing characters');
  return v;
}

function ser(v) {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'bigint': return v.toString();
    case 'number': return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean': return v ? 'true' : 'false';
    case 'string': return JSON.stringify(v);
    default: break;
  }
  if (Array.isArray(v)) {
    const parts = new Array(v.length);
    for (let k = 0; k < v.length; k++) parts[k] = ser(v[k]);
    return '[' + parts.join(',') + ']';
  }
  const parts = [];
  if (v instanceof Map) {
    for (const [k, x] of v) if (x !== undefined) parts.push(JSON.stringify(String(k)) + ':' + ser(x));
  } else {
    for (const k of Object.keys(v)) if (v[k] !== undefined) parts.push(JSON.stringify(k) + ':' + ser(v[k]));
  }
  return '{' + parts.join(',') + '}';
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const U64_MAX = (1n << 64n) - 1n;
const has = (o, k) => o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
const get = (o, k, d) => (has(o, k) && o[k] !== null && o[k] !== undefined ? o[k] : d);

// A scenario that does not follow the schema is answered with a protocol error naming the field.
class ScenarioError extends Error {}
function big(x, what) {
  if (typeof x === 'bigint') { if (x < 0n || x > U64_MAX) throw new ScenarioError(`${what} is out of the 64-bit range`); return x; }
  if (typeof x === 'number' && Number.isInteger(x) && x >= 0) return BigInt(x);
  throw new ScenarioError(`${what} is not an unsigned integer`);
}
function u32(x, what) {
  if (typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff) return x;
  throw new ScenarioError(`${what} is not a 32-bit unsigned integer`);
}
const roundUp = (x, a) => ((x + a - 1n) / a) * a;
// Sorting "sorted" lists: byte-wise (UTF-8) order of strings, so it matches any engine's order.
const cmpBytes = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const cmpBig = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const sortNum = (arr) => arr.slice().sort((a, b) => a - b);

function diag(d) {
  // Only fields the protocol allows. `clause` is omitted when this engine cites none.
  const o = {};
  if (d.clause) o.clause = d.clause;
  if (d.key !== undefined && d.key !== null) o.key = d.key;
  if (d.level !== undefined && d.level !== null) o.level = d.level;
  if (d.value !== undefined && d.value !== null) o.value = d.value;
  o.subject = d.subject || {};
  o.message = d.message || '';
  return o;
}

// ---------------------------------------------------------------------------------------------
// The options layer
// ---------------------------------------------------------------------------------------------

const LEVELS = ['global', 'session', 'graph'];
const K = {
  ACP: 'ge.exec.atomicCleanPolicy',
  DRM: 'ge.exec.disableReuseMemory',
  IFS: 'ge.exec.input_fusion_size',
  IRM: 'ge.exec.inputReuseMemIndexes',
  RZC: 'ge.exec.reuseZeroCopyMemory',
  SMP: 'ge.exec.staticMemoryPolicy',
  ORI: 'ge.exec.outputReuseInputMemIndexes',
  ORM: 'ge.exec.outputReuseMemIndexes',
  EXW: 'ge.externalWeight',
  EWD: 'ge.externalWeightDir',
  IBC: 'ge.inputBatchCpy',
  FBR: 'ge.featureBaseRefreshable',
};

const BATCH_PRODUCTS = ['ascend-950pr', 'ascend-950dt', 'atlas-a3-training', 'atlas-a3-inference',
  'atlas-a2-training', 'atlas-a2-inference'];
const ALL_PRODUCTS = BATCH_PRODUCTS.concat(['atlas-training', 'atlas-inference', 'atlas-200i-500-a2']);
const IFS_MAX = 33554432n;

const DIGITS = /^[0-9]+$/;

// Enumerations: the value must be exactly one of the tokens the text lists.
function parseEnum(values, clause) {
  return (raw) => {
    if (values.includes(raw)) return { ok: true, canon: raw, parsed: raw, warnings: [] };
    return {
      ok: false,
      errors: [{ clause, subject: {}, message: `${JSON.stringify(raw)} is not one of ${values.join(', ')}` }],
    };
  };
}

// The fusion threshold: a byte count 0..=33554432.
// CHOICE: a number is ASCII digits only (no sign, no blank, never empty); leading zeros are
// accepted ("0100" is 100 bytes) and the value is reported in plain decimal.
function parseThreshold(raw) {
  if (!DIGITS.test(raw)) {
    return { ok: false, errors: [{ clause: 'IFS-001', subject: {}, message: `${JSON.stringify(raw)} is not a decimal byte count` }] };
  }
  const v = BigInt(raw);
  if (v > IFS_MAX) {
    return { ok: false, errors: [{ clause: 'IFS-001', subject: {}, message: `${raw} is above the maximum of 33554432 bytes` }] };
  }
  return { ok: true, canon: v.toString(), parsed: v, warnings: [] };
}

// Index lists (inputReuseMemIndexes, outputReuseMemIndexes).
// CHOICE: the empty string is the empty list (it is the option's own default spelling);
// an empty item or a non-digit item rejects the option; a repeated index is the same request
// made twice and is kept once; an index at or beyond the count is dropped alone with a warning
// (the text: "index is invalid and the index configuration does not take effect").
function parseIndexList(countFact, tag) {
  return (raw, facts) => {
    if (raw === '') return { ok: true, canon: '', parsed: [], warnings: [] };
    const errors = [];
    const vals = [];
    for (const item of raw.split(',')) {
      if (!DIGITS.test(item)) {
        errors.push({ clause: `${tag}-004`, subject: { item }, message: item === '' ? 'empty item in the index list' : `item ${JSON.stringify(item)} is not a decimal index` });
        continue;
      }
      vals.push({ item, v: BigInt(item) });
    }
    if (errors.length) return { ok: false, errors };
    const count = facts[countFact];
    const seen = new Set();
    const kept = [];
    const warnings = [];
    for (const { item, v } of vals) {
      if (seen.has(v)) continue;
      seen.add(v);
      if (count !== null && count !== undefined && v >= BigInt(count)) {
        const subject = v <= U64_MAX ? { index: v } : { item };
        warnings.push({ clause: `${tag}-003`, subject, message: `index ${item} is not below the ${countFact === 'inputs' ? 'input' : 'output'} count ${count}: it does not take effect` });
        continue;
      }
      kept.push(v);
    }
    kept.sort(cmpBig);
    return { ok: true, canon: kept.map(String).join(','), parsed: kept, warnings };
  };
}

// Pair list (outputReuseInputMemIndexes): "in,out|in,out".
// CHOICE: "" is the empty list; every segment must be exactly two decimal numbers; an index out
// of range rejects the option (the text says the index "must" be within range, unlike the index
// lists, whose text says an invalid index just does not take effect); the same pair written twice
// is kept once; one input paired with two outputs, or one output with two inputs, is a
// contradiction and rejects the option.
function parsePairs(raw, facts) {
  if (raw === '') return { ok: true, canon: '', parsed: [], warnings: [] };
  const errors = [];
  const pairs = [];
  for (const seg of raw.split('|')) {
    const sides = seg.split(',');
    if (sides.length !== 2 || !DIGITS.test(sides[0]) || !DIGITS.test(sides[1])) {
      errors.push({ clause: 'ORI-006', subject: { pair: seg }, message: `${JSON.stringify(seg)} is not a pair "input,output" of decimal indexes` });
      continue;
    }
    pairs.push({ seg, i: BigInt(sides[0]), o: BigInt(sides[1]) });
  }
  // Every problem is reported, one diagnostic per offending pair, index or side.
  const uniq = [];
  const seenPair = new Set();
  for (const p of pairs) {
    const k = `${p.i},${p.o}`;
    if (seenPair.has(k)) continue;
    seenPair.add(k);
    uniq.push(p);
  }
  for (const p of uniq) {
    const badIn = facts.inputs !== null && facts.inputs !== undefined && p.i >= BigInt(facts.inputs);
    const badOut = facts.outputs !== null && facts.outputs !== undefined && p.o >= BigInt(facts.outputs);
    if (badIn || badOut) {
      errors.push({ clause: 'ORI-003', subject: { pair: p.seg }, message: `pair ${p.seg} names ${badIn ? `input ${p.i}` : ''}${badIn && badOut ? ' and ' : ''}${badOut ? `output ${p.o}` : ''}, outside the graph` });
    }
  }
  const byIn = new Map();
  const byOut = new Map();
  for (const p of uniq) {
    byIn.set(p.i, (byIn.get(p.i) || 0) + 1);
    byOut.set(p.o, (byOut.get(p.o) || 0) + 1);
  }
  for (const [o, c] of byOut) {
    if (c > 1) errors.push({ clause: 'ORI-004', subject: o <= 0xffffffffn ? { output: Number(o) } : {}, message: `output ${o} is paired with ${c} different inputs` });
  }
  for (const [i, c] of byIn) {
    if (c > 1) errors.push({ clause: 'ORI-005', subject: i <= 0xffffffffn ? { input: Number(i) } : {}, message: `input ${i} is paired with ${c} different outputs` });
  }
  if (errors.length) return { ok: false, errors };
  uniq.sort((a, b) => cmpBig(a.i, b.i) || cmpBig(a.o, b.o));
  return {
    ok: true,
    canon: uniq.map((p) => `${p.i},${p.o}`).join('|'),
    parsed: uniq.map((p) => ({ input: Number(p.i), output: Number(p.o) })),
    warnings: [],
  };
}

// The weight directory: a path, verbatim.
// CHOICE: "" means "no directory" (the default's own spelling), so the next tier applies;
// a NUL byte cannot be part of any path and rejects the option.
function parsePath(raw) {
  if (raw.includes('\u0000')) {
    return { ok: false, errors: [{ clause: 'EWD-004', subject: {}, message: 'a path cannot contain a NUL byte' }] };
  }
  return { ok: true, canon: raw, parsed: raw, warnings: [] };
}

// The twelve options, with the levels where the source text says each takes effect.
const OPTIONS = [
  { key: K.ACP, def: '0', levels: ['session'], parse: parseEnum(['0', '1'], 'ACP-001') },
  { key: K.DRM, def: '0', levels: LEVELS, parse: parseEnum(['0', '1'], 'DRM-001') },
  { key: K.IFS, def: '131072', defParsed: 131072n, levels: LEVELS, parse: parseThreshold },
  { key: K.IRM, def: '', defParsed: [], levels: ['graph'], parse: parseIndexList('inputs', 'IRM') },
  { key: K.RZC, def: '0', levels: LEVELS, parse: parseEnum(['0', '1'], 'RZC-001') },
  { key: K.SMP, def: '0', levels: ['global', 'session'], parse: parseEnum(['0', '2', '3', '4'], 'SMP-001') },
  { key: K.ORI, def: '', defParsed: [], levels: ['graph'], parse: parsePairs },
  { key: K.ORM, def: '', defParsed: [], levels: ['graph'], parse: parseIndexList('outputs', 'ORM') },
  { key: K.EXW, def: '0', levels: ['global', 'session'], parse: parseEnum(['0', '1', '2'], 'EXW-001') },
  { key: K.EWD, def: '', levels: ['global', 'session'], parse: parsePath },
  { key: K.IBC, def: '0', levels: LEVELS, parse: parseEnum(['0', '1'], 'IBC-001') },
  { key: K.FBR, def: '0', levels: LEVELS, parse: parseEnum(['0', '1'], 'FBR-001') },
];
const OPTION_KEYS = new Set(OPTIONS.map((o) => o.key));

// Resolve the three maps.
// facts: { inputs, outputs, batchInputs, shape, runMode, product }; null means "not known in this
// scenario", and the checks that need that fact are skipped.
//
// CHOICE (precedence): graph over session over global, the narrower scope being the more
// specific request.
// CHOICE (levels): a value given at a level where the option does not take effect is ignored,
// not validated, and draws a warning.
// CHOICE (invalid values): an invalid value at a level where the option takes effect rejects the
// option, even when a narrower level sets a valid one (in GE each level is a separate call, and
// the call carrying the bad value fails).
// CHOICE (restrictions): a restriction outside the maps (run mode, shape, product, input count,
// companion option) never rejects a value; it draws a warning when the user explicitly asked for
// something the restriction makes ineffective (a non-zero threshold, batch copy 1, refreshable 1,
// a non-empty weight directory).
function resolveOptions(maps, facts) {
  maps = maps || {};
  const out = { effective: new Map(), rejected: [], passthrough: [], errors: [], warnings: [] };
  const pass = new Set();
  for (const level of LEVELS) {
    const m = get(maps, level, null);
    if (!m) continue;
    for (const k of Object.keys(m)) if (!OPTION_KEYS.has(k)) pass.add(k);
  }
  out.passthrough = [...pass].sort(cmpBytes);

  const setAt = new Map(); // key -> [{level, raw, valid}]
  for (const spec of OPTIONS) {
    let chosen = null;
    let bad = false;
    const sets = [];
    for (const level of LEVELS) {
      const m = get(maps, level, null);
      if (!m || !has(m, spec.key)) continue;
      const raw = m[spec.key];
      if (!spec.levels.includes(level)) {
        out.warnings.push(diag({
          clause: 'OPT-002', key: spec.key, level, value: typeof raw === 'string' ? raw : undefined,
          message: `${spec.key} does not take effect at the ${level} level (only at ${spec.levels.join(', ')}); this setting is ignored`,
        }));
        continue;
      }
      const r = typeof raw === 'string' ? spec.parse(raw, facts)
        : { ok: false, errors: [{ subject: {}, message: 'the value is not a string' }] };
      if (!r.ok) {
        bad = true;
        for (const e of r.errors) {
          out.errors.push(diag({ clause: e.clause, key: spec.key, level, value: typeof raw === 'string' ? raw : undefined, subject: e.subject, message: e.message }));
        }
        sets.push({ level, raw, valid: false });
        continue;
      }
      for (const w of r.warnings) {
        out.warnings.push(diag({ clause: w.clause, key: spec.key, level, value: raw, subject: w.subject, message: w.message }));
      }
      sets.push({ level, raw, valid: true });
      chosen = { value: r.canon, from: level, parsed: r.parsed };
    }
    setAt.set(spec.key, sets);
    if (bad) out.rejected.push(spec.key);
    else out.effective.set(spec.key, chosen || { value: spec.def, from: 'default', parsed: spec.defParsed !== undefined ? spec.defParsed : spec.def });
  }
  out.rejected.sort(cmpBytes);

  const eff = (k) => out.effective.get(k);
  const warn = (clause, k, message) => {
    const e = eff(k);
    out.warnings.push(diag({ clause, key: k, level: e.from, value: e.value, message }));
  };
  // Fusion threshold: takes effect only on the asynchronous run of a static-shape graph.
  const ifs = eff(K.IFS);
  if (ifs && ifs.from !== 'default' && ifs.parsed > 0n) {
    if (facts.runMode === 'sync') warn('IFS-003', K.IFS, 'input fusion takes effect only on the asynchronous run (RunGraphAsync); nothing is fused on the synchronous run');
    if (facts.shape === 'dynamic') warn('IFS-004', K.IFS, 'input fusion takes effect only on static-shape graphs; nothing is fused on this dynamic-shape graph');
  }
  // Batch copy: more than one user input, a listed product, the asynchronous run.
  const ibc = eff(K.IBC);
  if (ibc && ibc.from !== 'default' && ibc.value === '1') {
    if (facts.batchInputs !== null && facts.batchInputs !== undefined && facts.batchInputs < 2) {
      warn('IBC-003', K.IBC, `batch copy takes effect only when the graph has more than one user input (it has ${facts.batchInputs})`);
    }
    if (facts.product !== null && facts.product !== undefined && !BATCH_PRODUCTS.includes(facts.product)) {
      warn('IBC-004', K.IBC, `batch copy is not available on ${facts.product}`);
    }
    if (facts.runMode === 'sync') warn('IBC-005', K.IBC, 'batch copy takes effect only on the asynchronous run (RunGraphAsync)');
  }
  // The text advises against ge.inputBatchCpy at the global or graph level (IBC-006 permits a
  // warning). CHOICE: this engine gives that advice for every valid global or graph setting.
  for (const s of setAt.get(K.IBC)) {
    if (s.valid && (s.level === 'global' || s.level === 'graph')) {
      out.warnings.push(diag({ clause: 'IBC-006', key: K.IBC, level: s.level, value: s.raw, message: `setting ${K.IBC} at the ${s.level} level is not recommended; set it per session` }));
    }
  }
  // Refreshable feature base: static-shape graphs only.
  const fbr = eff(K.FBR);
  if (fbr && fbr.from !== 'default' && fbr.value === '1' && facts.shape === 'dynamic') {
    warn('FBR-003', K.FBR, 'ge.featureBaseRefreshable applies only to static-shape graphs; it has no effect on this dynamic-shape graph');
  }
  // The weight directory takes effect only together with ge.externalWeight.
  const ewd = eff(K.EWD);
  const exw = eff(K.EXW);
  if (ewd && ewd.from !== 'default' && ewd.value !== '' && exw && exw.value === '0') {
    warn('EWD-003', K.EWD, 'ge.externalWeightDir takes effect only together with a non-zero ge.externalWeight; nothing is flushed to it');
  }

  out.value = (k) => (eff(k) ? eff(k).value : undefined);
  out.parsed = (k) => (eff(k) ? eff(k).parsed : undefined);
  return out;
}

// ---------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------

function checkEnumFact(val, allowed, what, errors) {
  if (!allowed.includes(val)) {
    errors.push(diag({ subject: {}, message: `unknown ${what} ${JSON.stringify(val)}` }));
    return null;
  }
  return val;
}

function answerOptions(sc) {
  const g = get(sc, 'graph', {});
  const scenErrors = [];
  const facts = {
    inputs: u32(get(g, 'inputs', 1), 'graph.inputs'),
    outputs: u32(get(g, 'outputs', 1), 'graph.outputs'),
    shape: checkEnumFact(get(g, 'shape', 'static'), ['static', 'dynamic'], 'shape', scenErrors),
    runMode: checkEnumFact(get(sc, 'run_mode', 'async'), ['sync', 'async'], 'run mode', scenErrors),
    product: checkEnumFact(get(sc, 'product', 'ascend-950pr'), ALL_PRODUCTS, 'product', scenErrors),
  };
  facts.batchInputs = facts.inputs;
  const r = resolveOptions(get(sc, 'options', {}), facts);
  const effective = new Map();
  for (const [k, e] of r.effective) effective.set(k, { value: e.value, from: e.from });
  return {
    capability: 'options',
    effective,
    rejected: r.rejected,
    passthrough: r.passthrough,
    errors: r.errors.concat(scenErrors),
    warnings: r.warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// transfer
// ---------------------------------------------------------------------------------------------

function answerTransfer(sc) {
  const obs = { capability: 'transfer', fused: [], fused_bytes: 0n, batched: [], direct: [], on_device: [], errors: [], warnings: [] };
  const inputs = get(sc, 'inputs', []).map((x, k) => ({
    index: u32(x.index, `inputs[${k}].index`),
    size: big(x.size, `inputs[${k}].size`),
    placement: get(x, 'placement', 'host'),
  }));
  const scenErrors = [];
  const facts = {
    inputs: inputs.length,
    outputs: null, // a transfer scenario does not describe the outputs
    batchInputs: inputs.length,
    shape: checkEnumFact(get(sc, 'shape', 'static'), ['static', 'dynamic'], 'shape', scenErrors),
    runMode: checkEnumFact(get(sc, 'run_mode', 'async'), ['sync', 'async'], 'run mode', scenErrors),
    product: checkEnumFact(get(sc, 'product', 'ascend-950pr'), ALL_PRODUCTS, 'product', scenErrors),
  };
  for (const x of inputs) {
    if (x.placement !== 'host' && x.placement !== 'device') {
      scenErrors.push(diag({ subject: { input: x.index }, message: `unknown placement ${JSON.stringify(x.placement)}` }));
    }
  }
  // An index names one graph input: two inputs claiming one index cannot both be planned.
  const count = new Map();
  for (const x of inputs) count.set(x.index, (count.get(x.index) || 0) + 1);
  for (const [idx, c] of [...count].sort((a, b) => a[0] - b[0])) {
    if (c > 1) scenErrors.push(diag({ subject: { input: idx }, message: `${c} inputs claim index ${idx}` }));
  }
  const r = resolveOptions(get(sc, 'options', {}), facts);
  obs.warnings = r.warnings;
  obs.errors = r.errors.concat(scenErrors);
  // CHOICE: any rejected option, or an invalid scenario, makes the whole request invalid:
  // nothing is planned (a run is not started with options GE refused).
  if (obs.errors.length) return obs;

  const threshold = r.parsed(K.IFS);
  const fusionOn = facts.runMode === 'async' && facts.shape === 'static' && threshold > 0n;
  // CHOICE: batch copy has no shape condition in the text (only fusion is static-only), and the
  // input count is the graph's user-input count, device inputs included.
  const batchOn = r.value(K.IBC) === '1' && BATCH_PRODUCTS.includes(facts.product)
    && facts.runMode === 'async' && inputs.length > 1;

  const host = [];
  for (const x of inputs) {
    if (x.placement === 'device') obs.on_device.push(x.index); // nothing to move
    else host.push(x);
  }
  let rest = host;
  if (fusionOn) {
    // A zero-byte input follows the size rule like any other (0 <= threshold).
    const eligible = host.filter((x) => x.size <= threshold);
    // CHOICE: fusing needs at least two pieces; one small input alone is moved like the others.
    if (eligible.length >= 2) {
      obs.fused = eligible.map((x) => x.index);
      obs.fused_bytes = eligible.reduce((a, x) => a + x.size, 0n); // the text's figure: the plain sum
      rest = host.filter((x) => x.size > threshold);
    }
  }
  // A batch never holds a single input: a lone leftover is copied on its own.
  if (batchOn && rest.length >= 2) obs.batched = rest.map((x) => x.index);
  else obs.direct = rest.map((x) => x.index);
  obs.fused = sortNum(obs.fused);
  obs.batched = sortNum(obs.batched);
  obs.direct = sortNum(obs.direct);
  obs.on_device = sortNum(obs.on_device);
  return obs;
}

// ---------------------------------------------------------------------------------------------
// memory
// ---------------------------------------------------------------------------------------------
// The plan places every tensor in one arena. Offsets are 32-byte aligned (CHOICE: the alignment
// the text asks of reused inputs and outputs, used for every tensor so freed memory fits anything).
// Placement is first-fit in order of decreasing rounded size, then first step: a tensor goes at
// the lowest offset where it shares no byte with any tensor whose kept lifetime overlaps its own.

const ALIGN = 32n;

function answerMemory(sc) {
  const obs = { capability: 'memory', offsets: new Map(), peak_bytes: 0n, cleanup: [], aliases: [], reused_inputs: [], reused_outputs: [], errors: [], warnings: [] };
  const nIn = u32(sc.inputs, 'inputs');
  const nOut = u32(sc.outputs, 'outputs');
  const tensors = get(sc, 'tensors', []).map((t, k) => {
    const role = t.role || {};
    return {
      name: String(t.name),
      size: big(t.size, `tensors[${k}].size`),
      first: u32(t.first, `tensors[${k}].first`),
      last: u32(t.last, `tensors[${k}].last`),
      kind: role.kind,
      index: role.index !== undefined && role.index !== null ? u32(role.index, `tensors[${k}].role.index`) : null,
      op: role.op !== undefined && role.op !== null ? String(role.op) : null,
    };
  });
  const r = resolveOptions(get(sc, 'options', {}), { inputs: nIn, outputs: nOut, shape: 'static', runMode: null, product: null, batchInputs: null });
  obs.warnings.push(...r.warnings);
  const errs = r.errors.slice();

  // --- the scenario must describe a graph ---
  const names = new Map();
  for (const t of tensors) names.set(t.name, (names.get(t.name) || 0) + 1);
  for (const [nm, c] of names) if (c > 1) errs.push(diag({ subject: { tensor: nm }, message: `${c} tensors are named ${JSON.stringify(nm)}` }));
  const inputT = new Map();
  const outputT = new Map();
  for (const t of tensors) {
    if (t.first > t.last) errs.push(diag({ subject: { tensor: t.name }, message: `tensor ${JSON.stringify(t.name)} is first used at step ${t.first}, after its last use at step ${t.last}` }));
    if (t.kind === 'input' || t.kind === 'output') {
      const isIn = t.kind === 'input';
      const lim = isIn ? nIn : nOut;
      const map = isIn ? inputT : outputT;
      const subj = isIn ? { tensor: t.name, input: t.index } : { tensor: t.name, output: t.index };
      if (t.index >= lim) { errs.push(diag({ subject: subj, message: `tensor ${JSON.stringify(t.name)} is ${t.kind} ${t.index}, but the graph has ${lim} ${t.kind}s` })); continue; }
      if (!map.has(t.index)) map.set(t.index, []);
      map.get(t.index).push(t);
    } else if (t.kind !== 'intermediate' && t.kind !== 'memset') {
      errs.push(diag({ subject: { tensor: t.name }, message: `tensor ${JSON.stringify(t.name)} has an unknown role` }));
    } else if (t.kind === 'memset' && t.op === null) {
      errs.push(diag({ subject: { tensor: t.name }, message: `memset tensor ${JSON.stringify(t.name)} names no operator` }));
    }
  }
  for (const [isIn, map, lim] of [[true, inputT, nIn], [false, outputT, nOut]]) {
    for (let k = 0; k < lim; k++) {
      const subj = isIn ? { input: k } : { output: k };
      const ts = map.get(k);
      if (!ts) errs.push(diag({ subject: subj, message: `${isIn ? 'input' : 'output'} ${k} has no tensor` }));
      else if (ts.length > 1) errs.push(diag({ subject: subj, message: `${isIn ? 'input' : 'output'} ${k} is claimed by ${ts.length} tensors` }));
    }
  }
  let total = 0n;
  for (const t of tensors) total += roundUp(t.size, ALIGN);
  if (total > U64_MAX) errs.push(diag({ subject: { part: 'sizes' }, message: 'the tensor sizes, each rounded to 32 bytes, add up past 2^64 - 1 bytes' }));
  if (errs.length) { obs.errors = errs; return obs; }

  // --- options in force ---
  const reuse = r.value(K.DRM) !== '1';
  const acp = r.value(K.ACP);
  const pairs = r.parsed(K.ORI);
  const pairedIn = new Map();
  const pairedOut = new Map();
  for (const p of pairs) { pairedIn.set(p.input, p.output); pairedOut.set(p.output, p.input); }
  // CHOICE: with reuse disabled the reuse lists do not apply either (switching reuse off, e.g.
  // to hunt a memory corruption, must switch all of it off); a pair's shared address still holds.
  // CHOICE: a listed input or output whose size is not a multiple of 32 bytes breaks the text's
  // condition for reusing it: it is planned, not reused, and a warning says so.
  const listed = (key, kind, map, paired) => {
    const s = new Set();
    if (!reuse) return s;
    for (const v of r.parsed(key)) {
      const idx = Number(v);
      if (paired.has(idx)) continue; // its memory belongs to the pair for the whole run
      const t = map.get(idx)[0];
      if (t.size % ALIGN !== 0n) {
        obs.warnings.push(diag({
          key, level: 'graph', value: r.value(key), subject: kind === 'input' ? { input: idx } : { output: idx },
          message: `${kind} ${idx} is listed for reuse but its size ${t.size} is not 32-byte aligned; its memory is not reused`,
        }));
        continue;
      }
      s.add(idx);
    }
    return s;
  };
  const reuseIn = listed(K.IRM, 'input', inputT, pairedIn);
  const reuseOut = listed(K.ORM, 'output', outputT, pairedOut);

  let END = 0;
  for (const t of tensors) if (t.last > END) END = t.last;

  // --- blocks: a tensor, an alias pair, or a memset cleanup region ---
  const blocks = [];
  const inPair = new Set();
  for (const p of pairs) {
    const ti = inputT.get(p.input)[0];
    const to = outputT.get(p.output)[0];
    inPair.add(ti); inPair.add(to);
    const ri = roundUp(ti.size, ALIGN);
    const ro = roundUp(to.size, ALIGN);
    // The input's data is there from the start, the output must hold its value at the end:
    // the shared address is reserved for the whole run, as large as the larger of the two.
    blocks.push({ members: [{ t: ti, rel: 0n }, { t: to, rel: 0n }], size: ri > ro ? ri : ro, start: 0, end: END, key: ti.name });
  }
  const memsets = tensors.filter((t) => t.kind === 'memset');
  const groups = [];
  if (memsets.length) {
    if (acp === '1') {
      const byOp = new Map();
      for (const t of memsets) { if (!byOp.has(t.op)) byOp.set(t.op, []); byOp.get(t.op).push(t); }
      for (const ts of byOp.values()) groups.push(ts);
    } else {
      groups.push(memsets);
    }
  }
  for (const ts of groups) {
    // One cleanup needs one contiguous region. CHOICE: the region is held from the first use
    // of its first output to the last use of its last output (the cleanup runs just before the
    // first of them is written); outside that span its memory may be reused.
    const sorted = ts.slice().sort((a, b) => a.first - b.first || cmpBytes(a.name, b.name));
    let rel = 0n;
    const members = [];
    let start = Infinity;
    let end = 0;
    for (const t of sorted) {
      members.push({ t, rel });
      rel += roundUp(t.size, ALIGN);
      if (t.first < start) start = t.first;
      if (t.last > end) end = t.last;
    }
    blocks.push({ members, size: rel, start, end, key: sorted[0].name, group: true });
  }
  for (const t of tensors) {
    if (t.kind === 'memset' || inPair.has(t)) continue;
    let start = t.first;
    let end = t.last;
    if (t.kind === 'input') {
      // A listed input holds its data from the start to its last use; an unlisted input is
      // the user's buffer and is left alone for the whole run.
      start = 0;
      end = reuseIn.has(t.index) ? t.last : END;
    } else if (t.kind === 'output') {
      // A listed output must hold its value from its first write to the end; an unlisted one
      // is the user's buffer for the whole run.
      start = reuseOut.has(t.index) ? t.first : 0;
      end = END;
    }
    blocks.push({ members: [{ t, rel: 0n }], size: roundUp(t.size, ALIGN), start, end, key: t.name });
  }
  if (!reuse) for (const b of blocks) { b.start = 0; b.end = END; } // nothing shares a byte

  const order = blocks.slice().sort((a, b) => cmpBig(b.size, a.size) || a.start - b.start || a.end - b.end || cmpBytes(a.key, b.key));
  const placed = []; // kept sorted by offset
  if (!reuse) {
    // Reuse off: every block is in use for the whole run, so first-fit is plain stacking.
    let top = 0n;
    for (const b of order) { b.off = b.size === 0n ? 0n : top; top += b.size; }
  } else for (const b of order) {
    if (b.size === 0n) { b.off = 0n; continue; } // occupies no byte
    let cand = 0n;
    for (const p of placed) {
      if (p.start > b.end || b.start > p.end) continue; // not in use at the same time
      if (cand + b.size <= p.off) break;
      const e = p.off + p.size;
      if (e > cand) cand = e;
    }
    b.off = cand;
    let lo = 0;
    let hi = placed.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (placed[mid].off <= cand) lo = mid + 1; else hi = mid; }
    placed.splice(lo, 0, b);
  }

  const off = new Map();
  for (const b of blocks) for (const m of b.members) off.set(m.t, b.off + m.rel);
  let peak = 0n;
  for (const t of tensors) {
    obs.offsets.set(t.name, off.get(t));
    const e = off.get(t) + t.size;
    if (e > peak) peak = e;
  }
  obs.peak_bytes = peak;
  for (const ts of groups) {
    let lo = null;
    let hi = 0n;
    for (const t of ts) {
      const o = off.get(t);
      if (lo === null || o < lo) lo = o;
      if (o + t.size > hi) hi = o + t.size;
    }
    obs.cleanup.push({ offset: lo, size: hi - lo, tensors: ts.map((t) => t.name).sort(cmpBytes) });
  }
  obs.aliases = pairs.map((p) => ({ input: p.input, output: p.output }));

  // Which inputs and outputs have bytes that some other tensor (not the alias partner) occupies.
  const partner = new Map();
  for (const p of pairs) {
    const ti = inputT.get(p.input)[0];
    const to = outputT.get(p.output)[0];
    partner.set(ti, to); partner.set(to, ti);
  }
  const bySpan = tensors.filter((t) => t.size > 0n).sort((a, b) => cmpBig(off.get(a), off.get(b)));
  const shares = (x) => {
    if (x.size === 0n) return false;
    const xs = off.get(x);
    const xe = xs + x.size;
    for (const y of bySpan) {
      const ys = off.get(y);
      if (ys >= xe) break;
      if (y === x || partner.get(x) === y) continue;
      if (ys + y.size > xs) return true;
    }
    return false;
  };
  for (const [idx, ts] of inputT) if (shares(ts[0])) obs.reused_inputs.push(idx);
  for (const [idx, ts] of outputT) if (shares(ts[0])) obs.reused_outputs.push(idx);
  obs.reused_inputs = sortNum(obs.reused_inputs);
  obs.reused_outputs = sortNum(obs.reused_outputs);

  // --- the run, if the scenario has one ---
  const run = get(sc, 'run', null);
  if (run) {
    const ai = get(run, 'inputs', []).map((a, k) => big(a, `run.inputs[${k}]`));
    const ao = get(run, 'outputs', []).map((a, k) => big(a, `run.outputs[${k}]`));
    if (ai.length !== nIn || ao.length !== nOut) {
      // CHOICE: a run with the wrong number of buffers fails at run time; the plan, made at
      // compile time, stands.
      obs.errors.push(diag({ subject: { part: 'run' }, message: `the run passes ${ai.length} input and ${ao.length} output addresses for a graph of ${nIn} inputs and ${nOut} outputs` }));
    } else {
      for (const p of pairs) {
        if (ai[p.input] !== ao[p.output]) {
          obs.errors.push(diag({
            clause: 'ORI-011', key: K.ORI, level: 'graph', value: r.value(K.ORI), subject: { input: p.input, output: p.output },
            message: `input ${p.input} (address ${ai[p.input]}) and output ${p.output} (address ${ao[p.output]}) must share one address; the run fails`,
          }));
        }
      }
    }
  }
  return obs;
}

// ---------------------------------------------------------------------------------------------
// session
// ---------------------------------------------------------------------------------------------

// CHOICE: a script is bounded so that its answer always fits the protocol's 64 MiB line:
// at most 100000 events and 100000 executions in all.
const MAX_EVENTS = 100000;
const MAX_EXECUTIONS = 100000;

function answerSession(sc) {
  const obs = { capability: 'session', trace: [], refreshes: [], errors: [], warnings: [] };
  const events = get(sc, 'events', []);
  let execs = 0;
  for (const ev of events) if (ev && ev.event === 'execute') execs += u32(get(ev, 'times', 1), 'times');
  if (events.length > MAX_EVENTS || execs > MAX_EXECUTIONS) {
    obs.errors.push(diag({ subject: { part: 'script' }, message: `the script holds ${events.length} events and ${execs} executions; this engine runs at most ${MAX_EVENTS} of each` }));
    return obs;
  }
  const options = get(sc, 'options', {});
  // GE_USE_STATIC_MEMORY is not read: the source text names no environment variable for the
  // policy, so the pools follow ge.exec.staticMemoryPolicy alone.

  // The session: global and session maps. A value GE refuses here fails session creation, so
  // nothing runs.
  const sres = resolveOptions({ global: get(options, 'global', null), session: get(options, 'session', null) },
    { inputs: null, outputs: null, batchInputs: null, shape: null, runMode: null, product: null });
  obs.warnings.push(...sres.warnings);
  if (sres.errors.length) { obs.errors.push(...sres.errors); return obs; }
  const policy = sres.value(K.SMP);
  const staticPooled = policy === '2' || policy === '4';
  const dynamicPooled = policy === '3' || policy === '4';

  const loaded = new Map(); // id -> graph state
  let loadSeq = 0;
  const pools = {
    static: { name: 'static-pool', held: false, size: 0n },
    dynamic: { name: 'dynamic-pool', held: false, size: 0n },
  };
  const trace = obs.trace;
  const alloc = (step, pool, bytes) => trace.push({ step, action: 'alloc', pool, bytes });
  const free = (step, pool, bytes) => trace.push({ step, action: 'free', pool, bytes });
  const scriptError = (step, graph, message) => obs.errors.push(diag({ subject: { step, graph }, message }));

  const unloadGraph = (step, id) => {
    const g = loaded.get(id);
    // Released in the reverse order of what load took: the kept I/O area, then feature memory.
    if (g.ioHeld) free(step, `graph-${id}/io`, g.io);
    if (g.place === 'own' && g.feature > 0n) free(step, `graph-${id}/feature`, g.feature);
    // CHOICE: a shared pool is a resource of the session: it is not given back when its last
    // user unloads, so graphs loaded one after another reuse it; it goes when the session ends.
    loaded.delete(id);
  };

  for (let step = 0; step < events.length; step++) {
    const ev = events[step];
    const id = u32(ev.graph, `events[${step}].graph`);
    switch (ev.event) {
      case 'load': {
        if (loaded.has(id)) { scriptError(step, id, `graph ${id} is already loaded`); break; }
        const shape = get(ev, 'shape', 'static');
        const graphMap = has(ev, 'options') && ev.options !== null ? ev.options : get(options, 'graph', null);
        const gres = resolveOptions({ global: get(options, 'global', null), session: get(options, 'session', null), graph: graphMap },
          { inputs: null, outputs: null, batchInputs: null, shape, runMode: null, product: null });
        // Session-wide diagnostics were reported once; keep what is about this load.
        for (const w of gres.warnings) {
          if (w.level === 'graph' || w.clause === 'FBR-003' || w.clause === 'IFS-004') {
            obs.warnings.push(Object.assign({}, w, { subject: Object.assign({ graph: id, step }, w.subject) }));
          }
        }
        const gerr = gres.errors.filter((e) => e.level === 'graph');
        if (gerr.length) {
          // CHOICE: a graph whose own map GE refuses is not added (AddGraph fails); only this load
          // fails and the rest of the script goes on.
          for (const e of gerr) obs.errors.push(Object.assign({}, e, { subject: Object.assign({ graph: id, step }, e.subject) }));
          break;
        }
        const g = {
          shape,
          feature: big(ev.feature_bytes, `events[${step}].feature_bytes`),
          io: big(get(ev, 'io_bytes', 0), `events[${step}].io_bytes`),
          rzc: gres.value(K.RZC),
          fbr: gres.value(K.FBR),
          fbrFrom: gres.effective.get(K.FBR).from,
          place: 'own',
          ioHeld: false,
          seq: loadSeq++,
        };
        if (shape === 'static' && staticPooled) g.place = 'static';
        else if (shape === 'dynamic' && dynamicPooled) g.place = 'dynamic';
        if (g.place === 'own') {
          if (g.feature > 0n) alloc(step, `graph-${id}/feature`, g.feature);
        } else {
          const pool = pools[g.place];
          if (g.feature > pool.size) {
            // The text: the previous (smaller) memory is released, then the memory is allocated
            // again at the size the current graph needs.
            if (pool.held) free(step, pool.name, pool.size);
            alloc(step, pool.name, g.feature);
            pool.held = true;
            pool.size = g.feature;
          }
        }
        if (g.rzc === '1' && g.io > 0n) {
          // Zero-copy reuse: one area of its own, planned with the graph, kept across executions.
          alloc(step, `graph-${id}/io`, g.io);
          g.ioHeld = true;
        }
        loaded.set(id, g);
        break;
      }
      case 'execute': {
        if (!loaded.has(id)) { scriptError(step, id, `graph ${id} is not loaded; it cannot be executed`); break; }
        const g = loaded.get(id);
        const times = u32(get(ev, 'times', 1), 'times');
        if (g.rzc !== '1' && g.io > 0n) {
          // Without zero-copy reuse every execution allocates a new I/O area.
          // CHOICE: that area is given back when its execution ends.
          for (let k = 0; k < times; k++) {
            alloc(step, `graph-${id}/io`, g.io);
            free(step, `graph-${id}/io`, g.io);
          }
        }
        break;
      }
      case 'refresh': {
        const bytes = big(ev.bytes, `events[${step}].bytes`);
        if (!loaded.has(id)) {
          scriptError(step, id, `graph ${id} is not loaded; its feature base cannot be refreshed`);
          obs.refreshes.push({ step, graph: id, ok: false });
          break;
        }
        const g = loaded.get(id);
        // The option applies only to static-shape graphs; on a dynamic-shape graph it has no
        // effect, so the default (not refreshable) holds.
        const refreshable = g.shape === 'static' && g.fbr === '1';
        if (!refreshable) {
          // CHOICE: with 0 the base of a loaded graph is the memory GE took for it at load, so
          // every refresh of a loaded graph is a change of that base and is refused.
          obs.errors.push(diag({
            clause: 'FBR-011', key: K.FBR, level: g.fbrFrom === 'default' ? null : g.fbrFrom, value: g.fbr,
            subject: { step, graph: id },
            message: g.shape === 'static'
              ? `graph ${id}'s feature memory base cannot be refreshed (ge.featureBaseRefreshable is 0)`
              : `graph ${id} has dynamic shapes: its feature memory base cannot be refreshed`,
          }));
          obs.refreshes.push({ step, graph: id, ok: false });
          break;
        }
        if (bytes < g.feature) {
          // CHOICE: a base smaller than the graph's feature memory would be overrun: refused.
          obs.errors.push(diag({ subject: { step, graph: id }, message: `a base of ${bytes} bytes is smaller than graph ${id}'s ${g.feature} bytes of feature memory` }));
          obs.refreshes.push({ step, graph: id, ok: false });
          break;
        }
        // The user's buffer is user memory: nothing is allocated or freed.
        obs.refreshes.push({ step, graph: id, ok: true });
        break;
      }
      case 'unload': {
        if (!loaded.has(id)) { scriptError(step, id, `graph ${id} is not loaded; it cannot be unloaded`); break; }
        unloadGraph(step, id);
        break;
      }
      default:
        obs.errors.push(diag({ subject: { step }, message: `unknown event ${JSON.stringify(ev.event)}` }));
    }
  }
  // The session closes after the last event: remaining graphs are unloaded, most recently loaded
  // first (CHOICE), then the shared pools are released.
  const endStep = events.length;
  const rest = [...loaded.entries()].sort((a, b) => b[1].seq - a[1].seq).map((e) => e[0]);
  for (const id of rest) unloadGraph(endStep, id);
  for (const pool of [pools.static, pools.dynamic]) {
    if (pool.held) { free(endStep, pool.name, pool.size); pool.held = false; }
  }
  return obs;
}

// ---------------------------------------------------------------------------------------------
// weights
// ---------------------------------------------------------------------------------------------
// All file work happens beneath the sandbox. Paths from the scenario are resolved by their
// spelling into a list of components below the sandbox; no symbolic link is ever followed: a
// link met on the way to the weight directory fails the load, a link inside the directory is
// removed as a link.

// CHOICE: caps that keep a load (and the files the harness reads back) bounded.
const MAX_CONSTANTS = 10000;
const MAX_WEIGHT_BYTES = 64n * 1024n * 1024n;
// CHOICE: the mode-2 combined file aligns every stored weight to 64 bytes (enough for any data
// type and vector load), stores equal contents once, keeps graph order and has no tail padding.
const COMBINED_ALIGN = 64;
// CHOICE: the <hash> of a mode-1 file name is SHA-512/256 of the weight bytes (64 lowercase hex
// digits): content-addressed, so equal weights share a file across models.
const NAME_HASH = 'sha512-256';

function splitRel(p, baseSegs) {
  // Returns the component list below the sandbox, or null when the path climbs out.
  const segs = baseSegs.slice();
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') { if (!segs.length) return null; segs.pop(); continue; }
    segs.push(s);
  }
  return segs;
}

function resolveScenarioPath(p, baseSegs, sandbox) {
  if (p.includes('\u0000')) return null;
  if (p.startsWith('/')) {
    // An absolute path is accepted only when it lies in the sandbox.
    const norm = pathMod.posix.normalize(p);
    const sb = pathMod.posix.normalize(sandbox).replace(/\/+$/, '');
    if (norm === sb) return [];
    if (!norm.startsWith(sb + '/')) return null;
    return splitRel(norm.slice(sb.length + 1), []);
  }
  return splitRel(p, baseSegs);
}

const relOf = (segs) => (segs.length ? segs.join('/') : '.');
const absOf = (sandbox, segs) => (segs.length ? pathMod.join(sandbox, ...segs) : sandbox);
const fileRel = (segs, name) => segs.concat([name]).join('/');

function lstatOrNull(p) {
  try { return fs.lstatSync(p); } catch (e) { if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null; throw e; }
}

// Create the directory (and its missing parents) beneath the sandbox without following links.
function ensureDir(sandbox, segs) {
  for (let k = 1; k <= segs.length; k++) {
    const p = absOf(sandbox, segs.slice(0, k));
    const st = lstatOrNull(p);
    if (st === null) {
      try { fs.mkdirSync(p); } catch (e) { return { ok: false, at: segs.slice(0, k), why: e.code || String(e) }; }
      continue;
    }
    if (st.isSymbolicLink()) return { ok: false, at: segs.slice(0, k), why: 'a symbolic link is in the way (links are not followed)' };
    if (!st.isDirectory()) return { ok: false, at: segs.slice(0, k), why: 'something other than a directory is in the way' };
  }
  return { ok: true };
}

// Write a complete file under a temporary name in the same directory, then rename it into place.
function writeAtomically(dirAbs, name, data) {
  const tmp = pathMod.join(dirAbs, `.indep-js-${crypto.randomBytes(8).toString('hex')}.part`);
  let fd = null;
  try {
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW || 0), 0o644);
    let off = 0;
    while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
    fs.closeSync(fd);
    fd = null;
    fs.renameSync(tmp, pathMod.join(dirAbs, name)); // replaces a file or a link, never writes through it
    return { ok: true };
  } catch (e) {
    if (fd !== null) { try { fs.closeSync(fd); } catch (_) { /* ignore */ } }
    try { fs.unlinkSync(tmp); } catch (_) { /* ignore */ }
    return { ok: false, why: e.code || String(e) };
  }
}

// Remove a directory tree without following links or crossing a mount; returns removed paths.
function removeTree(sandbox, segs, removed) {
  const abs = absOf(sandbox, segs);
  const st = lstatOrNull(abs);
  if (!st || !st.isDirectory()) return false;
  let entries = [];
  try { entries = fs.readdirSync(abs); } catch (_) { entries = []; }
  let all = true;
  for (const name of entries) {
    const childSegs = segs.concat([name]);
    const cabs = absOf(sandbox, childSegs);
    const cst = lstatOrNull(cabs);
    if (!cst) continue;
    if (cst.isDirectory()) {
      if (cst.dev !== st.dev) { all = false; continue; } // a mount: left alone
      if (!removeTree(sandbox, childSegs, removed)) all = false;
    } else {
      try { fs.unlinkSync(cabs); removed.push(fileRel(segs, name)); } catch (_) { all = false; }
    }
  }
  if (!all) return false;
  try { fs.rmdirSync(abs); removed.push(relOf(segs)); return true; } catch (_) { return false; }
}

function decodeHex(h) {
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) return null;
  return Buffer.from(h, 'hex');
}

function answerWeights(sc, sandbox) {
  const obs = { capability: 'weights', dir: '', files: [], nodes: [], removed: [], errors: [], warnings: [] };
  if (typeof sandbox !== 'string' || !pathMod.isAbsolute(sandbox)) {
    obs.errors.push(diag({ subject: {}, message: 'no sandbox directory was given: nothing is written' }));
    return obs;
  }
  const res = resolveOptions(get(sc, 'options', {}), { inputs: null, outputs: null, batchInputs: null, shape: null, runMode: null, product: null });
  obs.warnings.push(...res.warnings);
  const scen = [];

  // --- scenario paths ---
  const workDir = String(get(sc, 'work_dir', ''));
  const W = resolveScenarioPath(workDir, [], sandbox);
  if (W === null) scen.push(diag({ subject: { part: 'work-dir' }, value: workDir, message: `the working directory ${JSON.stringify(workDir)} leaves the sandbox` }));
  const awp = get(sc, 'ascend_work_path', { state: 'unset' });
  let A = null; // components of ASCEND_WORK_PATH, when set to something
  if (awp.state === 'set') {
    const p = String(get(awp, 'path', ''));
    if (p === '') scen.push(diag({ subject: { part: 'ascend-work-path' }, message: 'ASCEND_WORK_PATH is "set" with an empty path; an empty variable is spelled state "empty"' }));
    else {
      A = resolveScenarioPath(p, [], sandbox);
      if (A === null) scen.push(diag({ subject: { part: 'ascend-work-path' }, value: p, message: `ASCEND_WORK_PATH ${JSON.stringify(p)} leaves the sandbox` }));
    }
  } else if (awp.state !== 'unset' && awp.state !== 'empty') {
    scen.push(diag({ subject: { part: 'ascend-work-path' }, message: `unknown ASCEND_WORK_PATH state ${JSON.stringify(awp.state)}` }));
  }
  // CHOICE: ASCEND_WORK_PATH set to the empty string counts as not set (as ${VAR:-} does).
  get(sc, 'setup', []).forEach((st, k) => {
    for (const p of [st.path, st.target]) {
      if (p === undefined || p === null) continue;
      if (resolveScenarioPath(String(p), [], sandbox) === null) {
        scen.push(diag({ subject: { setup: k }, value: String(p), message: `setup step ${k} names ${JSON.stringify(p)}, outside the sandbox` }));
      }
    }
  });

  // --- the model: constant nodes ---
  const constants = get(sc, 'constants', []);
  const consts = [];
  if (constants.length > MAX_CONSTANTS) {
    scen.push(diag({ subject: { part: 'constants' }, message: `${constants.length} constants; this engine loads at most ${MAX_CONSTANTS}` }));
  } else {
    const seen = new Map();
    let total = 0n;
    let capped = false;
    for (const c of constants) {
      const name = typeof c.name === 'string' ? c.name : '';
      seen.set(name, (seen.get(name) || 0) + 1);
    }
    const reported = new Set();
    for (const c of constants) {
      const name = typeof c.name === 'string' ? c.name : '';
      const subj = { constant: name };
      let ok = true;
      if (name === '') { scen.push(diag({ subject: subj, message: 'a constant has an empty name' })); ok = false; }
      else if (seen.get(name) > 1) {
        if (!reported.has(name)) scen.push(diag({ subject: subj, message: `${seen.get(name)} constants are named ${JSON.stringify(name)}` }));
        reported.add(name);
        ok = false;
      }
      if (c.type !== 'Const' && c.type !== 'Constant') {
        scen.push(diag({ subject: subj, message: c.type === 'FileConstant' ? `${JSON.stringify(name)} is already a FileConstant; the input model must hold Const/Constant nodes` : `${JSON.stringify(name)} has an unknown type` }));
        ok = false;
      }
      const hex = get(c, 'hex', null);
      const fill = get(c, 'fill', null);
      let len = null;
      if ((hex === null) === (fill === null)) {
        scen.push(diag({ subject: subj, message: `${JSON.stringify(name)} must give its bytes exactly one way (hex or fill)` }));
        ok = false;
      } else if (hex !== null) {
        if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
          scen.push(diag({ subject: subj, message: `${JSON.stringify(name)} has bytes that are not hexadecimal pairs` }));
          ok = false;
        } else len = BigInt(hex.length / 2);
      } else {
        len = big(fill.len, 'fill.len');
        u32(fill.byte, 'fill.byte');
        if (fill.byte > 255) { scen.push(diag({ subject: subj, message: 'a fill byte is above 255' })); ok = false; }
      }
      if (len !== null && !capped) {
        total += len;
        if (total > MAX_WEIGHT_BYTES) {
          scen.push(diag({ subject: subj, message: `the weights pass ${MAX_WEIGHT_BYTES} bytes in all at ${JSON.stringify(name)}; this engine loads at most that` }));
          capped = true;
          ok = false;
        }
      }
      if (ok && !capped) consts.push({ name, type: c.type, hex, fill, len });
    }
  }
  if (res.errors.length || scen.length) {
    // A refused option or a malformed scenario: nothing is chosen, written or removed.
    obs.errors = res.errors.concat(scen);
    return obs;
  }
  for (const c of consts) c.data = c.hex !== null ? decodeHex(c.hex) : Buffer.alloc(Number(c.len), c.fill.byte);

  const mode = res.value(K.EXW);
  const byName = consts.slice().sort((a, b) => cmpBytes(a.name, b.name));
  if (mode === '0') {
    // The weights stay in the graph: no directory, no file, every node keeps its type.
    obs.nodes = byName.map((c) => ({ name: c.name, type: c.type }));
    return obs;
  }

  // --- mode 2 needs the root graph name for a file name ---
  const root = typeof sc.root_graph === 'string' ? sc.root_graph : '';
  if (mode === '2' && consts.length) {
    if (root === '' || root === '.' || root === '..' || root.includes('/') || root.includes('\u0000')) {
      obs.errors.push(diag({ subject: { part: 'root-graph' }, value: root, message: `the root graph name ${JSON.stringify(root)} cannot be part of a file name` }));
      return obs;
    }
  }

  // --- the flush directory: ge.externalWeightDir > $ASCEND_WORK_PATH/tmp_weight_<pid>_<sid> >
  //     <working directory>/tmp_weight_<pid>_<sid> ---
  const tmpName = `tmp_weight_${u32(sc.pid, 'pid')}_${big(sc.session_id, 'session_id')}`;
  const ewd = res.value(K.EWD);
  let D;
  let isTmp;
  if (ewd !== '') {
    // CHOICE: a relative directory is resolved against the working directory.
    D = resolveScenarioPath(ewd, W, sandbox);
    if (D === null) {
      const e = res.effective.get(K.EWD);
      obs.errors.push(diag({ key: K.EWD, level: e.from, value: ewd, subject: { part: 'external-weight-dir' }, message: `ge.externalWeightDir ${JSON.stringify(ewd)} leaves the sandbox` }));
      return obs;
    }
    isTmp = false;
  } else if (A !== null) {
    D = A.concat([tmpName]);
    isTmp = true;
  } else {
    D = W.concat([tmpName]);
    isTmp = true;
  }
  obs.dir = relOf(D);

  let loadOk = true;
  if (consts.length) {
    // CHOICE: a missing directory, at any tier, is created with its missing parents; an existing
    // real directory is used as it is; a link or a file in the way fails the load.
    const made = ensureDir(sandbox, D);
    if (!made.ok) {
      obs.errors.push(diag({ subject: { path: relOf(D) }, message: `cannot create the weight directory ${relOf(D)}: at ${relOf(made.at)}, ${made.why}` }));
      loadOk = false;
    }
    const dirAbs = absOf(sandbox, D);
    const written = [];
    const nodes = [];
    const emit = (name, data) => {
      const w = writeAtomically(dirAbs, name, data);
      if (!w.ok) {
        obs.errors.push(diag({ subject: { path: fileRel(D, name) }, message: `cannot write ${fileRel(D, name)}: ${w.why}` }));
        return false;
      }
      written.push({ path: fileRel(D, name), len: BigInt(data.length), sha256: crypto.createHash('sha256').update(data).digest('hex') });
      return true;
    };
    if (loadOk && mode === '1') {
      // One file per distinct weight, named by the hash of its bytes.
      const fileOf = new Map();
      for (const c of consts) {
        const h = crypto.createHash(NAME_HASH).update(c.data).digest('hex');
        const fname = `weight_${h}`;
        if (!fileOf.has(h)) {
          if (!emit(fname, c.data)) { loadOk = false; break; }
          fileOf.set(h, fname);
        }
        nodes.push({ name: c.name, type: 'FileConstant', file: fileRel(D, fname), offset: 0n, length: c.len });
      }
    } else if (loadOk && mode === '2') {
      // One combined file named after the root graph.
      const fname = `${root}_weight_combined`;
      const placedAt = new Map();
      let end = 0;
      const layout = [];
      for (const c of consts) {
        if (c.data.length === 0) { layout.push({ c, off: 0 }); continue; } // an empty weight: offset 0, length 0
        const h = crypto.createHash('sha256').update(c.data).digest('hex');
        if (placedAt.has(h)) { layout.push({ c, off: placedAt.get(h) }); continue; }
        const off = Math.ceil(end / COMBINED_ALIGN) * COMBINED_ALIGN;
        placedAt.set(h, off);
        layout.push({ c, off, store: true });
        end = off + c.data.length;
      }
      const file = Buffer.alloc(end); // gaps are zero bytes
      for (const l of layout) if (l.store) l.c.data.copy(file, l.off);
      if (!emit(fname, file)) loadOk = false;
      for (const l of layout) nodes.push({ name: l.c.name, type: 'FileConstant', file: fileRel(D, fname), offset: BigInt(l.off), length: l.c.len });
    }
    written.sort((a, b) => cmpBytes(a.path, b.path));
    obs.files = written; // CHOICE: files completed before a failure stay, and are listed
    if (loadOk) obs.nodes = nodes.sort((a, b) => cmpBytes(a.name, b.name));
  } else {
    // No constant: nothing to convert, nothing to write; no directory is made.
    obs.nodes = [];
  }

  // --- unload ---
  if (get(sc, 'unload', false) && isTmp) {
    // The tmp_weight_<pid>_<sessionid> directory goes with everything in it (links removed as
    // links). CHOICE: it goes after a failed load as well, when it is a real directory; the
    // user's ge.externalWeightDir is never removed.
    const removed = [];
    removeTree(sandbox, D, removed);
    obs.removed = removed.sort(cmpBytes);
  }
  return obs;
}

// ---------------------------------------------------------------------------------------------
// The protocol loop
// ---------------------------------------------------------------------------------------------

const SLEEP = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(SLEEP, 0, 0, ms);

function writeLine(obj) {
  const data = Buffer.from(ser(obj) + '\n', 'utf8');
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(1, data, off, data.length - off);
    } catch (e) {
      if (e.code === 'EAGAIN') { sleep(2); continue; }
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    }
  }
}

const log = (m) => { try { fs.writeSync(2, `[indep-js] ${m}\n`); } catch (_) { /* ignore */ } };

let greeted = false;

function handleLine(line) {
  if (line.trim() === '') return;
  let msg;
  try {
    msg = parseJSON(line);
  } catch (e) {
    writeLine({ type: 'error', message: `cannot read the line as JSON: ${e.message}` });
    return;
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
    writeLine({ type: 'error', message: 'a protocol message must be a JSON object' });
    return;
  }
  const id = has(msg, 'id') ? msg.id : undefined;
  if (msg.type === 'hello') {
    if (msg.protocol !== PROTOCOL) {
      writeLine({ type: 'error', message: `this engine speaks protocol version ${PROTOCOL}, not ${ser(msg.protocol)}` });
      return;
    }
    greeted = true;
    // Only the documented profile: the engine follows the source text, not upstream GE's code.
    writeLine({ type: 'hello', protocol: PROTOCOL, name: ENGINE_NAME, version: ENGINE_VERSION, capabilities: CAPABILITIES, profiles: ['documented'] });
    return;
  }
  if (msg.type !== 'request') {
    writeLine(id !== undefined ? { type: 'error', id, message: `unexpected message type ${ser(msg.type)}` } : { type: 'error', message: `unexpected message type ${ser(msg.type)}` });
    return;
  }
  if (id === undefined) { writeLine({ type: 'error', message: 'a request without an id' }); return; }
  if (!greeted) { writeLine({ type: 'error', id, message: 'a request came before the hello' }); return; }
  const sc = msg.scenario;
  const cap = msg.capability;
  if (!sc || typeof sc !== 'object' || sc.capability !== cap) {
    writeLine({ type: 'error', id, message: `the scenario's capability ${ser(sc && sc.capability)} is not the request's ${ser(cap)}` });
    return;
  }
  let obs;
  try {
    switch (cap) {
      case 'options': obs = answerOptions(sc); break;
      case 'transfer': obs = answerTransfer(sc); break;
      case 'memory': obs = answerMemory(sc); break;
      case 'session': obs = answerSession(sc); break;
      case 'weights': obs = answerWeights(sc, msg.sandbox); break;
      default:
        writeLine({ type: 'not-supported', id, reason: `unknown capability ${ser(cap)}` });
        return;
    }
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof TypeError) {
      log(`request ${ser(id)}: ${e && e.stack ? e.stack : e}`);
      writeLine({ type: 'error', id, message: `malformed scenario: ${e.message}` });
      return;
    }
    log(`request ${ser(id)}: ${e && e.stack ? e.stack : e}`);
    writeLine({ type: 'error', id, message: `internal error: ${e && e.message ? e.message : e}` });
    return;
  }
  writeLine({ type: 'observation', id, observation: obs });
}

function main() {
  const chunkSize = 1 << 20;
  const buf = Buffer.allocUnsafe(chunkSize);
  let parts = [];
  for (;;) {
    let n;
    try {
      n = fs.readSync(0, buf, 0, chunkSize, null);
    } catch (e) {
      if (e.code === 'EAGAIN') { sleep(2); continue; }
      if (e.code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl === -1 || nl >= n) break;
      parts.push(Buffer.from(buf.subarray(start, nl)));
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      handleLine(line);
      start = nl + 1;
    }
    if (start < n) parts.push(Buffer.from(buf.subarray(start, n)));
  }
  if (parts.length) handleLine(Buffer.concat(parts).toString('utf8'));
  process.exit(0);
}

main();
