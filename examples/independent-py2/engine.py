#!/usr/bin/env python3
"""independent-py2: an independent graph-engine backend written from the GE memory-options text.

Speaks the ge-conformance subprocess protocol (version 2) on stdin/stdout.
Standard library only.
"""
import sys
import os
import json
import hashlib
import bisect
import stat

NAME = "independent-py2"
VERSION = "0.4.0"

ACP = "ge.exec.atomicCleanPolicy"
DRM = "ge.exec.disableReuseMemory"
IFS = "ge.exec.input_fusion_size"
IRM = "ge.exec.inputReuseMemIndexes"
RZC = "ge.exec.reuseZeroCopyMemory"
SMP = "ge.exec.staticMemoryPolicy"
ORI = "ge.exec.outputReuseInputMemIndexes"
ORM = "ge.exec.outputReuseMemIndexes"
EXW = "ge.externalWeight"
EWD = "ge.externalWeightDir"
IBC = "ge.inputBatchCpy"
FBR = "ge.featureBaseRefreshable"

ALL = ["global", "session", "graph"]
GS = ["global", "session"]

# key -> (kind, allowed/range, default, levels, clause prefix)
OPTIONS = {
    ACP: ("enum", {"0", "1"}, "0", ["session"], "ACP"),
    DRM: ("enum", {"0", "1"}, "0", ALL, "DRM"),
    IFS: ("range", (0, 33554432), "131072", ALL, "IFS"),
    IRM: ("ilist", None, "", ["graph"], "IRM"),
    RZC: ("enum", {"0", "1"}, "0", ALL, "RZC"),
    SMP: ("enum", {"0", "2", "3", "4"}, "0", GS, "SMP"),
    ORI: ("plist", None, "", ["graph"], "ORI"),
    ORM: ("ilist", None, "", ["graph"], "ORM"),
    EXW: ("enum", {"0", "1", "2"}, "0", GS, "EXW"),
    EWD: ("path", None, "", GS, "EWD"),
    IBC: ("enum", {"0", "1"}, "0", ALL, "IBC"),
    FBR: ("enum", {"0", "1"}, "0", ALL, "FBR"),
}
ORDER = [ACP, DRM, IFS, IRM, RZC, SMP, ORI, ORM, EXW, EWD, IBC, FBR]

BATCH_PRODUCTS = {"ascend-950pr", "ascend-950dt", "atlas-a3-training", "atlas-a3-inference",
                  "atlas-a2-training", "atlas-a2-inference"}
PRODUCTS = BATCH_PRODUCTS | {"atlas-training", "atlas-inference", "atlas-200i-500-a2"}

ALIGN = 64            # memory planner alignment (unusual: 64, not 32)
FUSE_PAD = 32         # each fused piece is padded to 32 bytes inside the staging buffer
COMBINED_ALIGN = 64   # combined weight file: each weight starts at a multiple of 64
MAX_EVENTS = 65536
MAX_EXECUTIONS = 65536
MAX_WEIGHT_BYTES = 96 * 1024 * 1024
MAX_CONSTANTS = 16384
U64 = (1 << 64) - 1


def diag(clause, key=None, level=None, value=None, message="", **subject):
    d = {"clause": clause, "message": message}
    if key is not None:
        d["key"] = key
    if level is not None:
        d["level"] = level
    if value is not None:
        d["value"] = value
    d["subject"] = {k: v for k, v in subject.items() if v is not None}
    return d


def is_plain_decimal(s):
    if not s or not all("0" <= c <= "9" for c in s):
        return False
    return s == "0" or s[0] != "0"


# ---------------------------------------------------------------- options layer

def parse_index_list(key, raw, level, count, clause):
    """Returns (ok, indexes, errors, warnings). indexes is a sorted list or None."""
    errors, warnings = [], []
    if raw == "":
        return True, [], errors, warnings  # an empty list lists nothing
    items = raw.split(",")
    vals = []
    for it in items:
        if not is_plain_decimal(it):
            errors.append(diag(clause + "-004", key, level, raw,
                               "indexlist entry %r: expected digits 0-9 without a leading zero" % it,
                               item=it))
            continue
        vals.append(int(it))
    if errors:
        return False, None, errors, warnings
    vals = sorted(set(vals))  # repeated indexes collapse into one
    bad = [v for v in vals if count is not None and v >= count]
    if bad:
        # The whole index configuration does not take effect when one index is invalid.
        for v in bad:
            if v > U64:
                warnings.append(diag(clause + "-003", key, level, raw,
                                     "index %d is not below the count %d; the index configuration is ignored as a whole" % (v, count),
                                     item=str(v)))
            else:
                warnings.append(diag(clause + "-003", key, level, raw,
                                     "index %d is not below the count %d; the index configuration is ignored as a whole" % (v, count),
                                     index=v))
        return True, [], errors, warnings
    return True, vals, errors, warnings


def parse_pair_list(raw, level, n_in, n_out):
    errors, warnings = [], []
    if raw == "":
        return True, [], errors, warnings
    segs = raw.split("|")
    pairs = []
    for seg in segs:
        parts = seg.split(",")
        if len(parts) != 2 or not is_plain_decimal(parts[0]) or not is_plain_decimal(parts[1]):
            errors.append(diag("ORI-006", ORI, level, raw,
                               "segment %r is not of the form <input>,<output>" % seg, pair=seg))
            continue
        pairs.append((seg, int(parts[0]), int(parts[1])))
    if errors:
        return False, None, errors, warnings
    kept = []
    seen = set()
    for seg, i, o in pairs:
        if (i, o) in seen:
            continue
        seen.add((i, o))
        if (n_in is not None and i >= n_in) or (n_out is not None and o >= n_out):
            warnings.append(diag("ORI-003", ORI, level, raw,
                                 "pair %s names an index outside the model; that pair is dropped" % seg, pair=seg))
            continue
        kept.append((seg, i, o))
    # contradictory pairs (one output or one input in two pairs) are all dropped
    outs, ins = {}, {}
    for seg, i, o in kept:
        outs.setdefault(o, []).append(seg)
        ins.setdefault(i, []).append(seg)
    final = []
    for seg, i, o in kept:
        if len(outs[o]) > 1:
            warnings.append(diag("ORI-004", ORI, level, raw,
                                 "output %d appears in more than one pair; pair %s dropped" % (o, seg), output=o, pair=seg))
            continue
        if len(ins[i]) > 1:
            warnings.append(diag("ORI-005", ORI, level, raw,
                                 "input %d appears in more than one pair; pair %s dropped" % (i, seg), input=i, pair=seg))
            continue
        final.append((i, o))
    final.sort(key=lambda p: (p[1], p[0]))
    return True, final, errors, warnings


def validate(key, raw, level, facts):
    """Returns (ok, canonical, parsed, errors, warnings)."""
    kind, allowed, default, levels, pre = OPTIONS[key]
    if kind == "enum":
        if raw in allowed:
            return True, raw, raw, [], []
        return False, None, None, [diag(pre + "-001", key, level, raw,
                                        "%s does not accept %r (accepted: %s)" % (key, raw, "/".join(sorted(allowed))))], []
    if kind == "range":
        lo, hi = allowed
        if is_plain_decimal(raw) and lo <= int(raw) <= hi:
            return True, str(int(raw)), int(raw), [], []
        return False, None, None, [diag(pre + "-001", key, level, raw,
                                        "%s wants a byte count in %d..%d, got %r" % (key, lo, hi, raw))], []
    if kind == "ilist":
        count = facts.get("inputs") if key == IRM else facts.get("outputs")
        ok, vals, e, w = parse_index_list(key, raw, level, count, pre)
        if not ok:
            return False, None, None, e, w
        return True, ",".join(str(v) for v in vals), vals, e, w
    if kind == "plist":
        ok, pairs, e, w = parse_pair_list(raw, level, facts.get("inputs"), facts.get("outputs"))
        if not ok:
            return False, None, None, e, w
        return True, "|".join("%d,%d" % p for p in pairs), pairs, e, w
    if kind == "path":
        if "\x00" in raw:
            return False, None, None, [diag("EWD-004", key, level, raw, "a directory name cannot contain NUL")], []
        return True, raw, raw, [], []
    raise AssertionError(kind)


def resolve(maps, facts, graph_subject=None):
    """Resolve the option maps. Returns dict with effective, parsed, rejected, passthrough,
    errors, warnings, misplaced (settings at levels where the option does not take effect)."""
    maps = maps or {}
    effective, parsed = {}, {}
    rejected, passthrough, errors, warnings, misplaced = [], set(), [], [], []
    for lvl in ALL:
        for k in (maps.get(lvl) or {}):
            if k not in OPTIONS:
                passthrough.add(k)
    for key in ORDER:
        kind, allowed, default, levels, pre = OPTIONS[key]
        bad = False
        winner = None
        for lvl in ALL:
            m = maps.get(lvl) or {}
            if key not in m:
                continue
            raw = m[key]
            if lvl not in levels:
                # refusal: a setting where the option does not take effect
                misplaced.append(diag(pre + "-002", key, lvl, raw,
                                      "%s cannot be given at %s level (only %s); request refused" %
                                      (key, lvl, ", ".join(levels)), graph=graph_subject))
                continue
            ok, canon, val, e, w = validate(key, raw, lvl, facts)
            for d in e + w:
                if graph_subject is not None:
                    d["subject"]["graph"] = graph_subject
            errors.extend(e)
            warnings.extend(w)
            if not ok:
                bad = True
            else:
                winner = (lvl, canon, val)  # narrower level seen later wins
        if bad:
            rejected.append(key)
            continue
        if winner is None:
            canon = default
            kind_ = kind
            val = {"enum": default, "range": int(default) if kind_ == "range" else None,
                   "ilist": [], "plist": [], "path": ""}[kind_]
            effective[key] = {"value": canon, "from": "default"}
            parsed[key] = val
        else:
            effective[key] = {"value": winner[1], "from": winner[0]}
            parsed[key] = winner[2]
    # restriction warnings
    def rw(clause, key, msg):
        src = effective[key]["from"]
        d = diag(clause, key, None if src == "default" else src, effective[key]["value"], msg, graph=graph_subject)
        warnings.append(d)
    if IFS in effective and effective[IFS]["from"] != "default" and parsed[IFS] != 0:
        if facts.get("run_mode") == "sync":
            rw("IFS-003", IFS, "input fusion only happens on RunGraphAsync; this run is synchronous")
        if facts.get("shape") == "dynamic":
            rw("IFS-004", IFS, "input fusion only happens on static-shape graphs")
    if IBC in effective and parsed[IBC] == "1":
        if facts.get("product") is not None and facts.get("product") not in BATCH_PRODUCTS:
            rw("IBC-004", IBC, "batch copy is not available on product %s" % facts.get("product"))
        if facts.get("run_mode") == "sync":
            rw("IBC-005", IBC, "batch copy only happens on RunGraphAsync")
        if facts.get("inputs") is not None and facts.get("inputs") < 2:
            rw("IBC-003", IBC, "batch copy needs more than one user input")
    if IBC in effective and effective[IBC]["from"] in ("global", "graph"):
        warnings.append(diag("IBC-006", IBC, effective[IBC]["from"], effective[IBC]["value"],
                             "ge.inputBatchCpy is best given per session", graph=graph_subject))
    if FBR in effective and parsed[FBR] == "1" and facts.get("shape") == "dynamic":
        rw("FBR-003", FBR, "a refreshable feature base only exists for static-shape graphs")
    if EWD in effective and EXW in effective and parsed[EWD] != "" and parsed[EXW] == "0":
        rw("EWD-003", EWD, "no weight is externalised (ge.externalWeight is 0), so this directory is unused")
    return {"effective": effective, "parsed": parsed, "rejected": sorted(rejected),
            "passthrough": sorted(passthrough), "errors": errors, "warnings": warnings,
            "misplaced": misplaced}


def options_obs(sc):
    g = sc.get("graph") or {}
    facts = {"inputs": g.get("inputs", 1), "outputs": g.get("outputs", 1),
             "shape": g.get("shape", "static"), "run_mode": sc.get("run_mode", "async"),
             "product": sc.get("product", "ascend-950pr")}
    errs = []
    if facts["product"] not in PRODUCTS:
        errs.append(diag("OPT-009", None, None, facts["product"], "unknown product spelling"))
    r = resolve(sc.get("options") or {}, facts)
    return {"capability": "options", "effective": r["effective"], "rejected": r["rejected"],
            "passthrough": r["passthrough"], "errors": errs + r["errors"] + r["misplaced"],
            "warnings": r["warnings"]}


# ---------------------------------------------------------------- transfer

def rup(n, a):
    return (n + a - 1) // a * a


def transfer_obs(sc):
    obs = {"capability": "transfer", "fused": [], "direct": [], "batched": [], "on_device": [],
           "fused_bytes": 0, "errors": [], "warnings": []}
    inputs = sc.get("inputs") or []
    seen = set()
    for inp in inputs:
        if inp["index"] in seen:
            obs["errors"].append(diag("TRF-002", None, None, None,
                                      "two inputs claim index %d" % inp["index"], input=inp["index"]))
        seen.add(inp["index"])
    if len(inputs) > 0xFFFFFFFF:
        obs["errors"].append(diag("TRF-002", None, None, None, "too many inputs", part="fused-inputs"))
    product = sc.get("product", "ascend-950pr")
    if product not in PRODUCTS:
        obs["errors"].append(diag("OPT-009", None, None, product, "unknown product spelling"))
    facts = {"inputs": len(inputs), "outputs": None, "shape": sc.get("shape", "static"),
             "run_mode": sc.get("run_mode", "async"), "product": product}
    r = resolve(sc.get("options") or {}, facts)
    obs["warnings"] = r["warnings"]
    obs["errors"] += r["errors"] + r["misplaced"]
    if obs["errors"]:
        return obs
    p = r["parsed"]
    thr = p[IFS]
    host = [i for i in inputs if i.get("placement", "host") == "host"]
    obs["on_device"] = sorted(i["index"] for i in inputs if i.get("placement", "host") == "device")
    fuse_on = facts["run_mode"] == "async" and facts["shape"] == "static" and thr > 0
    rest = []
    fused = []
    for i in host:
        if fuse_on and i["size"] <= thr:
            fused.append(i)
        else:
            rest.append(i)
    obs["fused"] = sorted(i["index"] for i in fused)
    obs["fused_bytes"] = sum(rup(i["size"], FUSE_PAD) for i in fused)
    batch_on = (p[IBC] == "1" and product in BATCH_PRODUCTS and facts["run_mode"] == "async"
                and len(inputs) > 1)
    if batch_on and len(rest) >= 2:
        obs["batched"] = sorted(i["index"] for i in rest)
    else:
        obs["direct"] = sorted(i["index"] for i in rest)
    return obs


# ---------------------------------------------------------------- memory

def place_blocks(blocks):
    """blocks: list of dicts with size (aligned), start, end (inclusive). Adds 'off'.
    Strategy: largest block first, each at the lowest aligned offset free for its lifetime."""
    order = sorted(range(len(blocks)), key=lambda k: (-blocks[k]["size"], blocks[k]["start"], k))
    placed = []  # (start, end, off, size)
    for k in order:
        b = blocks[k]
        if b["size"] == 0:
            b["off"] = 0
            continue
        busy = sorted((o, o + s) for (st, en, o, s) in placed if st <= b["end"] and b["start"] <= en)
        off = 0
        for lo, hi in busy:
            if lo >= off + b["size"]:
                break
            if hi > off:
                off = hi
        b["off"] = off
        placed.append((b["start"], b["end"], off, b["size"]))


def memory_obs(sc):
    obs = {"capability": "memory", "offsets": {}, "peak_bytes": 0, "cleanup": [], "aliases": [],
           "reused_inputs": [], "reused_outputs": [], "errors": [], "warnings": []}
    n_in, n_out = sc["inputs"], sc["outputs"]
    tensors = sc.get("tensors") or []
    errs = []
    names = set()
    ins, outs = {}, {}
    total = 0
    for t in tensors:
        if t["name"] in names:
            errs.append(diag("MEM-001", None, None, None, "tensor name %r used twice" % t["name"], tensor=t["name"]))
        names.add(t["name"])
        if t["first"] > t["last"]:
            errs.append(diag("MEM-001", None, None, None, "tensor %r ends before it starts" % t["name"], tensor=t["name"]))
        role = t["role"]
        total += rup(t["size"], ALIGN)
        if role["kind"] == "input":
            i = role["index"]
            if i >= n_in:
                errs.append(diag("MEM-001", None, None, None, "input index %d beyond %d inputs" % (i, n_in), input=i, tensor=t["name"]))
            elif i in ins:
                errs.append(diag("MEM-001", None, None, None, "input %d has two tensors" % i, input=i, tensor=t["name"]))
            else:
                ins[i] = t
        elif role["kind"] == "output":
            j = role["index"]
            if j >= n_out:
                errs.append(diag("MEM-001", None, None, None, "output index %d beyond %d outputs" % (j, n_out), output=j, tensor=t["name"]))
            elif j in outs:
                errs.append(diag("MEM-001", None, None, None, "output %d has two tensors" % j, output=j, tensor=t["name"]))
            else:
                outs[j] = t
    for i in range(n_in):
        if i not in ins:
            errs.append(diag("MEM-001", None, None, None, "input %d has no tensor" % i, input=i))
            if len(errs) > 2000:
                break
    for j in range(n_out):
        if j not in outs:
            errs.append(diag("MEM-001", None, None, None, "output %d has no tensor" % j, output=j))
            if len(errs) > 4000:
                break
    if total > U64:
        errs.append(diag("MEM-001", None, None, None, "the tensors do not fit a 64-bit arena", part="sizes"))
    run = sc.get("run")
    if run is not None:
        if len(run.get("inputs", [])) != n_in or len(run.get("outputs", [])) != n_out:
            errs.append(diag("MEM-001", None, None, None, "run addresses must be one per input and output", part="run"))
    facts = {"inputs": n_in, "outputs": n_out, "shape": "static", "run_mode": "async", "product": None}
    r = resolve(sc.get("options") or {}, facts)
    obs["warnings"] = list(r["warnings"])
    errs += r["errors"] + r["misplaced"]
    if errs:
        obs["errors"] = errs
        return obs
    p = r["parsed"]
    reuse_off = p[DRM] == "1"
    in_list = set(p[IRM])
    out_list = set(p[ORM])
    pairs = p[ORI]
    # misaligned listed tensors: planned anyway, just not reused (with a warning)
    for i in sorted(in_list):
        if ins[i]["size"] % 32:
            obs["warnings"].append(diag("IRM-011", IRM, "graph", None,
                                        "input %d is %d bytes, not 32-byte aligned: its memory is not reused" % (i, ins[i]["size"]),
                                        input=i))
            in_list.discard(i)
    for j in sorted(out_list):
        if outs[j]["size"] % 32:
            obs["warnings"].append(diag("ORM-011", ORM, "graph", None,
                                        "output %d is %d bytes, not 32-byte aligned: its memory is not reused" % (j, outs[j]["size"]),
                                        output=j))
            out_list.discard(j)
    end = max((t["last"] for t in tensors), default=0)
    alias_in = {i: o for i, o in pairs}
    alias_out = {o: i for i, o in pairs}
    blocks = []  # each: size, start, end, members [(name, rel_off)]
    # aliases
    for i, o in pairs:
        ti, to = ins[i], outs[o]
        blocks.append({"size": rup(max(ti["size"], to["size"]), ALIGN), "start": 0, "end": end,
                       "members": [(ti["name"], 0), (to["name"], 0)]})
    # memset groups
    memsets = [t for t in tensors if t["role"]["kind"] == "memset"]
    groups = []
    if memsets:
        if p[ACP] == "0":
            groups.append(memsets)
        else:
            byop = {}
            for t in memsets:
                byop.setdefault(t["role"]["op"], []).append(t)
            groups = [byop[k] for k in sorted(byop)]
    group_blocks = []
    for g in groups:
        g = sorted(g, key=lambda t: (t["first"], t["name"]))
        rel = 0
        members = []
        for t in g:
            members.append((t["name"], rel))
            rel += rup(t["size"], ALIGN)
        if p[ACP] == "0" or reuse_off:
            st, en = 0, end  # collective region held for the whole run
        else:
            st, en = min(t["first"] for t in g), max(t["last"] for t in g)
        b = {"size": rup(rel, ALIGN), "start": st, "end": en, "members": members, "group": [t["name"] for t in g]}
        blocks.append(b)
        group_blocks.append(b)
    for t in tensors:
        k = t["role"]["kind"]
        if k == "memset":
            continue
        if k == "input":
            i = t["role"]["index"]
            if i in alias_in:
                continue
            st, en = 0, (t["last"] if i in in_list else end)
            if reuse_off and i not in in_list:
                st, en = 0, end
        elif k == "output":
            j = t["role"]["index"]
            if j in alias_out:
                continue
            st, en = ((t["first"], end) if j in out_list else (0, end))
        else:
            st, en = t["first"], t["last"]
            if reuse_off:
                st, en = 0, end
        blocks.append({"size": rup(t["size"], ALIGN), "start": st, "end": en, "members": [(t["name"], 0)]})
    place_blocks(blocks)
    offsets = {}
    for b in blocks:
        for name, rel in b["members"]:
            offsets[name] = b["off"] + rel
    obs["offsets"] = offsets
    size_of = {t["name"]: t["size"] for t in tensors}
    obs["peak_bytes"] = max((offsets[n] + size_of[n] for n in offsets), default=0)
    for b in group_blocks:
        offs = [offsets[n] for n in b["group"]]
        lo = min(offs)
        hi = max(offsets[n] + size_of[n] for n in b["group"])
        obs["cleanup"].append({"offset": lo, "size": hi - lo, "tensors": sorted(b["group"])})
    obs["aliases"] = [{"input": i, "output": o} for i, o in sorted(pairs)]
    # reuse reports
    iv = sorted((offsets[t["name"]], offsets[t["name"]] + t["size"], t["name"]) for t in tensors if t["size"] > 0)
    starts = [x[0] for x in iv]
    partner = {}
    for i, o in pairs:
        partner[ins[i]["name"]] = outs[o]["name"]
        partner[outs[o]["name"]] = ins[i]["name"]

    def shared(name):
        a = offsets[name]
        bnd = a + size_of[name]
        if size_of[name] == 0:
            return False
        hi = bisect.bisect_left(starts, bnd)
        for k in range(hi - 1, -1, -1):
            o, e, n = iv[k]
            if n == name or n == partner.get(name):
                continue
            if e > a:
                return True
        return False
    obs["reused_inputs"] = sorted(i for i, t in ins.items() if shared(t["name"]))
    obs["reused_outputs"] = sorted(j for j, t in outs.items() if shared(t["name"]))
    # run-time address check
    if run is not None:
        ri, ro = run.get("inputs", []), run.get("outputs", [])
        for i, o in sorted(pairs):
            if ri[i] != ro[o]:
                obs["errors"].append(diag("ORI-011", ORI, "graph", None,
                                          "run passes input %d at %#x but its paired output %d at %#x" % (i, ri[i], o, ro[o]),
                                          input=i, output=o))
    return obs


# ---------------------------------------------------------------- session

def session_obs(sc):
    obs = {"capability": "session", "trace": [], "refreshes": [], "errors": [], "warnings": []}
    events = sc.get("events") or []
    total_exec = sum(e.get("times", 1) for e in events if e["event"] == "execute")
    if len(events) > MAX_EVENTS or total_exec > MAX_EXECUTIONS:
        obs["errors"].append(diag("SES-020", None, None, None,
                                  "script too long (%d events, %d executions; limit %d/%d)" %
                                  (len(events), total_exec, MAX_EVENTS, MAX_EXECUTIONS), part="script"))
        return obs
    opts = sc.get("options") or {}
    base = {"global": opts.get("global") or {}, "session": opts.get("session") or {}}
    sr = resolve(base, {"inputs": None, "outputs": None, "shape": "static", "run_mode": "async", "product": None})
    errors = sr["errors"] + sr["misplaced"]
    warnings = [w for w in sr["warnings"] if w["clause"] not in ("FBR-003", "IFS-004")]
    per_load = {}
    for step, e in enumerate(events):
        if e["event"] != "load":
            continue
        gm = e.get("options")
        if gm is None:
            gm = opts.get("graph") or {}
        maps = {"global": base["global"], "session": base["session"], "graph": gm}
        lr = resolve(maps, {"inputs": None, "outputs": None, "shape": e.get("shape", "static"),
                            "run_mode": "async", "product": None}, graph_subject=e["graph"])
        errors += [d for d in lr["errors"] + lr["misplaced"] if d.get("level") == "graph"]
        warnings += [d for d in lr["warnings"] if d.get("level") == "graph" or d["clause"] in ("FBR-003", "IFS-004")]
        per_load[step] = lr
    obs["warnings"] = warnings
    if errors:
        obs["errors"] = errors
        return obs
    policy = sr["parsed"][SMP]
    trace = obs["trace"]
    loaded = {}
    pools = {}  # name -> {"size": n, "users": set()}

    def alloc(step, pool, n):
        trace.append({"step": step, "action": "alloc", "pool": pool, "bytes": n})

    def free(step, pool, n):
        trace.append({"step": step, "action": "free", "pool": pool, "bytes": n})

    def pool_for(shape):
        if shape == "static" and policy in ("2", "4"):
            return "static-pool"
        if shape == "dynamic" and policy in ("3", "4"):
            return "dynamic-pool"
        return None

    def unload(step, gid):
        g = loaded.pop(gid)
        if g["io_held"]:
            free(step, "graph-%d/io" % gid, g["io"])
        if g["pool"] is None:
            if g["feature"] > 0:
                free(step, "graph-%d/feature" % gid, g["feature"])
        else:
            if g["pool"] in pools:
                pools[g["pool"]]["users"].discard(gid)
            # pools are kept until the session closes, even without users

    for step, e in enumerate(events):
        kind = e["event"]
        gid = e["graph"]
        if kind == "load":
            if gid in loaded:
                obs["errors"].append(diag("SES-012", None, None, None, "graph %d is already loaded" % gid, step=step, graph=gid))
                continue
            lr = per_load[step]
            shape = e.get("shape", "static")
            feat = e["feature_bytes"]
            io = e.get("io_bytes", 0)
            pname = pool_for(shape)
            g = {"feature": feat, "io": io, "shape": shape, "pool": pname, "io_held": False,
                 "rzc": lr["parsed"][RZC], "fbr": lr["parsed"][FBR]}
            if pname is None:
                if feat > 0:
                    alloc(step, "graph-%d/feature" % gid, feat)
            else:
                pl = pools.get(pname)
                if pl is None:
                    if feat > 0:
                        pools[pname] = {"size": feat, "users": {gid}}
                        alloc(step, pname, feat)
                elif feat > pl["size"]:
                    free(step, pname, pl["size"])
                    alloc(step, pname, feat)
                    pl["size"] = feat
                    pl["users"].add(gid)
                else:
                    pl["users"].add(gid)
            if g["rzc"] == "1" and io > 0:
                alloc(step, "graph-%d/io" % gid, io)
                g["io_held"] = True
            loaded[gid] = g
        elif kind == "execute":
            if gid not in loaded:
                obs["errors"].append(diag("SES-012", None, None, None, "graph %d is not loaded" % gid, step=step, graph=gid))
                continue
            g = loaded[gid]
            if g["rzc"] == "0" and g["io"] > 0:
                for _ in range(e.get("times", 1)):
                    # a fresh area per execution; the previous one is given back first
                    if g["io_held"]:
                        free(step, "graph-%d/io" % gid, g["io"])
                    alloc(step, "graph-%d/io" % gid, g["io"])
                    g["io_held"] = True
        elif kind == "refresh":
            if gid not in loaded:
                obs["errors"].append(diag("SES-012", None, None, None, "graph %d is not loaded" % gid, step=step, graph=gid))
                obs["refreshes"].append({"step": step, "graph": gid, "ok": False})
                continue
            g = loaded[gid]
            if e["bytes"] < g["feature"]:
                obs["errors"].append(diag("FBR-013", FBR, None, None,
                                          "base of %d bytes is smaller than the %d feature bytes" % (e["bytes"], g["feature"]),
                                          step=step, graph=gid))
                obs["refreshes"].append({"step": step, "graph": gid, "ok": False})
                continue
            if g["shape"] == "static" and g["fbr"] == "1":
                obs["refreshes"].append({"step": step, "graph": gid, "ok": True})
            else:
                obs["errors"].append(diag("FBR-011", FBR, None, None,
                                          "feature base of graph %d is not refreshable" % gid, step=step, graph=gid))
                obs["refreshes"].append({"step": step, "graph": gid, "ok": False})
        elif kind == "unload":
            if gid not in loaded:
                obs["errors"].append(diag("SES-012", None, None, None, "graph %d is not loaded" % gid, step=step, graph=gid))
                continue
            unload(step, gid)
    endstep = len(events)
    for gid in sorted(loaded, reverse=True):
        unload(endstep, gid)
    for pname in sorted(pools):
        free(endstep, pname, pools[pname]["size"])
    return obs


# ---------------------------------------------------------------- weights

class LoadFail(Exception):
    def __init__(self, d):
        self.d = d


def norm_rel(p):
    """Normalise a sandbox-relative path lexically; None if it climbs out or is absolute."""
    if p is None or p.startswith("/") or "\x00" in p:
        return None
    parts = []
    for c in p.split("/"):
        if c in ("", "."):
            continue
        if c == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(c)
    return "/".join(parts)


def join_rel(a, b):
    if a == "":
        return norm_rel(b)
    return norm_rel(a + "/" + b)


def show(rel):
    return rel if rel else "."


def weights_obs(sc, sandbox):
    obs = {"capability": "weights", "dir": "", "files": [], "nodes": [], "removed": [],
           "errors": [], "warnings": []}
    sandbox = os.path.realpath(sandbox)
    errs = []
    work = norm_rel(sc.get("work_dir", "") or "")
    if work is None:
        errs.append(diag("WGT-001", None, None, sc.get("work_dir"), "working directory leaves the sandbox", part="work-dir"))
    awp = sc.get("ascend_work_path") or {"state": "unset"}
    awp_rel = None
    if awp.get("state") == "set":
        awp_rel = norm_rel(awp.get("path", ""))
        if awp_rel is None or awp.get("path", "") == "":
            errs.append(diag("WGT-001", None, None, awp.get("path"), "ASCEND_WORK_PATH leaves the sandbox", part="ascend-work-path"))
    for k, s in enumerate(sc.get("setup") or []):
        if norm_rel(s.get("path", "")) is None:
            errs.append(diag("WGT-001", None, None, s.get("path"), "setup path leaves the sandbox", setup=k))
    consts = sc.get("constants") or []
    blobs = []
    names = set()
    tot = 0
    if len(consts) > MAX_CONSTANTS:
        errs.append(diag("WGT-002", None, None, None, "more than %d constants" % MAX_CONSTANTS, part="constants"))
        consts = []
    for c in consts:
        nm = c.get("name", "")
        if nm == "" or nm in names:
            errs.append(diag("WGT-002", None, None, nm, "node name empty or repeated", constant=nm))
        names.add(nm)
        if c.get("type") not in ("Const", "Constant"):
            errs.append(diag("WGT-002", None, None, c.get("type"), "only Const/Constant nodes can be externalised", constant=nm))
        hx, fl = c.get("hex"), c.get("fill")
        data = None
        if (hx is None) == (fl is None):
            errs.append(diag("WGT-002", None, None, None, "weight bytes must be given exactly one way", constant=nm))
        elif hx is not None:
            try:
                if len(hx) % 2:
                    raise ValueError
                data = bytes.fromhex(hx) if all(ch in "0123456789abcdefABCDEF" for ch in hx) else None
                if data is None:
                    raise ValueError
            except ValueError:
                errs.append(diag("WGT-002", None, None, None, "weight hex is malformed", constant=nm))
        else:
            ln = fl.get("len", 0)
            if tot + ln > MAX_WEIGHT_BYTES:
                data = None
                tot += ln
            else:
                data = bytes([fl.get("byte", 0)]) * ln
        if data is not None:
            tot += len(data)
        blobs.append(data)
    if tot > MAX_WEIGHT_BYTES:
        errs.append(diag("WGT-002", None, None, None, "weights exceed %d bytes" % MAX_WEIGHT_BYTES, part="constants"))
    r = resolve(sc.get("options") or {}, {"inputs": None, "outputs": None, "shape": "static",
                                           "run_mode": "async", "product": None})
    obs["warnings"] = r["warnings"]
    if r["errors"] or r["misplaced"]:
        obs["errors"] = r["errors"] + r["misplaced"]
        return obs
    mode = r["parsed"][EXW]
    root = sc.get("root_graph", "")
    if mode == "2" and (root in ("", ".", "..") or "/" in root or "\x00" in root or len(root.encode()) > 200):
        errs.append(diag("WGT-002", None, None, root, "root graph name cannot be part of a file name", part="root-graph"))
    if errs:
        obs["errors"] = errs
        return obs
    if mode == "0":
        obs["nodes"] = sorted(({"name": c["name"], "type": c["type"]} for c in consts), key=lambda n: n["name"])
        return obs
    # choose the directory
    ewd = r["parsed"][EWD]
    tmpname = "tmp_weight_%d_%d" % (sc["pid"], sc["session_id"])
    is_tmp = True
    if ewd != "":
        is_tmp = False
        if "\x00" in ewd:
            drel = None
        elif ewd.startswith("/"):
            if ewd == sandbox or ewd.startswith(sandbox + "/"):
                drel = norm_rel(ewd[len(sandbox) + 1:])
            else:
                drel = None
        else:
            drel = join_rel(work, ewd)
        if drel is None:
            obs["errors"] = [diag("WGT-001", EWD, r["effective"][EWD]["from"], ewd,
                                  "ge.externalWeightDir leaves the sandbox", part="external-weight-dir")]
            return obs
    elif awp_rel is not None:
        drel = join_rel(awp_rel, tmpname)
    else:
        drel = join_rel(work, tmpname)
    obs["dir"] = show(drel)
    written = []   # (rel path, data)
    created_dir = False

    def absp(rel):
        return os.path.join(sandbox, rel) if rel else sandbox

    def fail(path_rel, msg):
        raise LoadFail(diag("WGT-008", None, None, None, msg, path=show(path_rel)))

    try:
        # create the directory, refusing any link on the way
        parts = drel.split("/") if drel else []
        cur = ""
        for k, c in enumerate(parts):
            cur = c if not cur else cur + "/" + c
            ap = absp(cur)
            try:
                st = os.lstat(ap)
            except FileNotFoundError:
                try:
                    os.mkdir(ap)
                except OSError as ex:
                    fail(cur, "cannot create directory: %s" % ex.strerror)
                if k == len(parts) - 1:
                    created_dir = True
                continue
            except OSError as ex:
                fail(cur, "cannot inspect: %s" % ex.strerror)
            if stat.S_ISLNK(st.st_mode):
                if k == len(parts) - 1 and is_tmp:
                    fail(cur, "the temporary weight directory is taken by a link")
                # a link on the way: follow only if it stays inside the sandbox and is a directory
                real = os.path.realpath(ap)
                if not (real == sandbox or real.startswith(sandbox + "/")) or not os.path.isdir(real):
                    fail(cur, "link leads outside the sandbox or not to a directory")
            elif not stat.S_ISDIR(st.st_mode):
                fail(cur, "exists and is not a directory")
        dabs = absp(drel)
        nodes = []
        if mode == "1":
            by_hash = {}
            for c, data in zip(consts, blobs):
                h = hashlib.blake2b(data, digest_size=20).hexdigest()
                fname = "weight_" + h
                if h not in by_hash:
                    by_hash[h] = fname
                    write_file(dabs, fname, data, join_rel(drel, fname), fail)
                    written.append((join_rel(drel, fname), data))
                nodes.append({"name": c["name"], "type": "FileConstant", "file": join_rel(drel, fname),
                              "offset": 0, "length": len(data)})
        else:
            fname = root + "_weight_combined"
            frel = join_rel(drel, fname)
            buf = bytearray()
            seen = {}
            locs = []
            for data in blobs:
                if data in seen:
                    locs.append(seen[data])
                    continue
                off = rup(len(buf), COMBINED_ALIGN)
                buf.extend(b"\x00" * (off - len(buf)))
                buf.extend(data)
                seen[data] = off
                locs.append(off)
            data = bytes(buf)
            write_file(dabs, fname, data, frel, fail)
            written.append((frel, data))
            for c, off, b in zip(consts, locs, blobs):
                nodes.append({"name": c["name"], "type": "FileConstant", "file": frel, "offset": off, "length": len(b)})
        obs["nodes"] = sorted(nodes, key=lambda n: n["name"])
        obs["files"] = sorted(({"path": p, "len": len(d), "sha256": hashlib.sha256(d).hexdigest()} for p, d in written),
                              key=lambda f: f["path"])
    except LoadFail as lf:
        # a failed load leaves nothing behind: what it wrote goes, and the directory if it made it
        for p, _ in written:
            try:
                os.unlink(absp(p))
            except OSError:
                pass
        if created_dir:
            try:
                os.rmdir(absp(drel))
            except OSError:
                pass
        obs["errors"] = [lf.d]
        return obs
    if sc.get("unload") and is_tmp:
        removed = []
        remove_tree(absp(drel), drel, removed)
        obs["removed"] = sorted(removed)
    return obs


def write_file(dabs, fname, data, frel, fail):
    tmp = os.path.join(dabs, ".~" + fname + ".part")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as ex:
        fail(frel, "cannot write: %s" % ex.strerror)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.rename(tmp, os.path.join(dabs, fname))
    except OSError as ex:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail(frel, "cannot write: %s" % ex.strerror)


def remove_tree(ap, rel, removed):
    try:
        st = os.lstat(ap)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        try:
            os.chmod(ap, 0o700)
        except OSError:
            pass
        for n in sorted(os.listdir(ap)):
            remove_tree(os.path.join(ap, n), rel + "/" + n if rel else n, removed)
        try:
            os.rmdir(ap)
            removed.append(show(rel))
        except OSError:
            pass
    else:
        try:
            os.unlink(ap)
            removed.append(show(rel))
        except OSError:
            pass


# ---------------------------------------------------------------- protocol

HANDLERS = {"options": options_obs, "transfer": transfer_obs, "memory": memory_obs, "session": session_obs}


def answer(req):
    cap = req.get("capability")
    sc = req.get("scenario") or {}
    if cap == "weights":
        return weights_obs(sc, req["sandbox"])
    return HANDLERS[cap](sc)


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        t = msg.get("type")
        if t == "hello":
            if msg.get("protocol") != 2:
                out.write(json.dumps({"type": "error", "message": "this engine speaks protocol 2 only"}) + "\n")
            else:
                out.write(json.dumps({"type": "hello", "protocol": 2, "name": NAME, "version": VERSION,
                                      "capabilities": ["options", "transfer", "memory", "session", "weights"],
                                      "profiles": ["documented"]}) + "\n")
            out.flush()
            continue
        if t == "request":
            rid = msg.get("id")
            try:
                ob = answer(msg)
                ob["capability"] = msg.get("capability")
                resp = {"type": "observation", "id": rid, "observation": ob}
            except Exception as ex:  # noqa
                import traceback
                traceback.print_exc(file=sys.stderr)
                resp = {"type": "error", "id": rid, "message": "engine fault: %r" % (ex,)}
            out.write(json.dumps(resp) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
