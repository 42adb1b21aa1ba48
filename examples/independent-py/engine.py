#!/usr/bin/env python3
"""independent-py: a GE memory-options engine written from the source text alone.

Speaks the ge-conformance subprocess protocol (version 2) on stdin/stdout and implements
the five capabilities: options, transfer, memory, session, weights.

Every rule below cites the section of the source text ("GE memory options", one section
per option key) it rests on.  Where the text is silent the choice is ours; each such
choice is marked "CHOICE" here and listed in NOTES.md.

Standard library only.
"""

import hashlib
import json
import os
import posixpath
import re
import stat
import sys

ENGINE_NAME = "independent-py"
ENGINE_VERSION = "0.1.0"
PROTOCOL = 2
CAPABILITIES = ["options", "transfer", "memory", "session", "weights"]

U32_MAX = 2 ** 32 - 1
U64_MAX = 2 ** 64 - 1
ALIGN = 32  # 32-byte alignment (section ge.exec.inputReuseMemIndexes / outputReuseMemIndexes, Note)

LEVELS = ("global", "session", "graph")
PRECEDENCE = ("graph", "session", "global")  # CHOICE: narrowest level wins

# Option keys.
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

IFS_MAX = 33554432  # section ge.exec.input_fusion_size: "from 0 to 33,554,432 bytes"

# The options table: grammar, default, the levels listed under "Effective level", and the
# values listed under "Parameter values" of each section.
OPTIONS = {
    ACP: {"grammar": "enum", "default": "0", "levels": ("session",), "values": ("0", "1"), "clause": "ACP-001"},
    DRM: {"grammar": "enum", "default": "0", "levels": LEVELS, "values": ("0", "1"), "clause": "DRM-001"},
    IFS: {"grammar": "int", "default": "131072", "levels": LEVELS, "clause": "IFS-001"},
    IRM: {"grammar": "indexes", "default": "", "levels": ("graph",), "clause": "IRM-004", "range": "IRM-003"},
    RZC: {"grammar": "enum", "default": "0", "levels": LEVELS, "values": ("0", "1"), "clause": "RZC-001"},
    SMP: {"grammar": "enum", "default": "0", "levels": ("global", "session"), "values": ("0", "2", "3", "4"), "clause": "SMP-001"},
    ORI: {"grammar": "pairs", "default": "", "levels": ("graph",), "clause": "ORI-006"},
    ORM: {"grammar": "indexes", "default": "", "levels": ("graph",), "clause": "ORM-004", "range": "ORM-003"},
    EXW: {"grammar": "enum", "default": "0", "levels": ("global", "session"), "values": ("0", "1", "2"), "clause": "EXW-001"},
    EWD: {"grammar": "path", "default": "", "levels": ("global", "session"), "clause": "EWD-004"},
    IBC: {"grammar": "enum", "default": "0", "levels": LEVELS, "values": ("0", "1"), "clause": "IBC-001"},
    FBR: {"grammar": "enum", "default": "0", "levels": LEVELS, "values": ("0", "1"), "clause": "FBR-001"},
}

# Section ge.inputBatchCpy, Restrictions bullet 1: the products batch copy is available on.
BATCH_PRODUCTS = {
    "ascend-950pr", "ascend-950dt",
    "atlas-a3-training", "atlas-a3-inference",
    "atlas-a2-training", "atlas-a2-inference",
}

DECIMAL = re.compile(r"^(0|[1-9][0-9]*)$")  # CHOICE: plain decimal, no sign/space/leading zero


def log(msg):
    sys.stderr.write("[independent-py] %s\n" % msg)
    sys.stderr.flush()


def diag(clause, message, key=None, level=None, value=None, **subject):
    """One diagnostic in the vocabulary's form (protocol.md, "Diagnostics")."""
    d = {"clause": clause or "", "message": message, "subject": {k: v for k, v in subject.items() if v is not None}}
    if key is not None:
        d["key"] = key
    if level is not None:
        d["level"] = level
    if value is not None:
        d["value"] = value
    return d


def round_up(n, a=ALIGN):
    return (n + a - 1) // a * a


# ======================================================================================
# Options: parsing one value
# ======================================================================================

class Facts:
    """What option resolution may depend on; None means "not known here, do not check"."""

    def __init__(self, inputs=None, outputs=None, shape=None, run_mode=None, product=None):
        self.inputs = inputs
        self.outputs = outputs
        self.shape = shape
        self.run_mode = run_mode
        self.product = product


def parse_enum(key, level, value):
    """Sections of the enumerated options, "Parameter values": only the listed values.
    CHOICE: exact string match ("01", " 1", "" are not listed values)."""
    spec = OPTIONS[key]
    if value in spec["values"]:
        return value, [], []
    return None, [diag(spec["clause"], "value %r is not one of %s" % (value, ", ".join(spec["values"])),
                       key, level, value)], []


def parse_fusion_size(key, level, value):
    """Section ge.exec.input_fusion_size: a byte count from 0 to 33,554,432."""
    if not DECIMAL.match(value):
        return None, [diag("IFS-001", "threshold %r is not a plain decimal byte count" % value, key, level, value)], []
    n = int(value)
    if n > IFS_MAX:
        return None, [diag("IFS-001", "threshold %s is above 33554432 bytes" % value, key, level, value)], []
    return str(n), [], []


def parse_index_list(key, level, value, count):
    """Sections ge.exec.inputReuseMemIndexes / ge.exec.outputReuseMemIndexes: comma-separated
    indexes counted from 0.  Note: an index >= the input (output) count is invalid and does not
    take effect.  CHOICE: only that index is dropped (with a warning); malformed items reject
    the option; duplicates are merged silently."""
    spec = OPTIONS[key]
    if value == "":
        return "", [], []  # CHOICE: the empty list means "no index"
    errors, warnings, kept = [], [], set()
    for item in value.split(","):
        if not DECIMAL.match(item):
            errors.append(diag(spec["clause"], "item %r is not a plain decimal index" % item, key, level, value, item=item))
            continue
        idx = int(item)
        if count is not None and idx >= count:
            what = "input" if key == IRM else "output"
            subj = {"index": idx} if idx <= U64_MAX else {"item": item}
            warnings.append(diag(spec["range"], "index %s is not below the %s count %d: ignored" % (item, what, count),
                                 key, level, value, **subj))
            continue
        kept.add(idx)
    if errors:
        return None, errors, []
    return ",".join(str(i) for i in sorted(kept)), [], warnings


def parse_pairs(key, level, value, inputs, outputs):
    """Section ge.exec.outputReuseInputMemIndexes: "in,out|in,out"; Note "Index validity":
    every index must be within the model's range.  CHOICE: a malformed pair, an index out of
    range, or an input or output named by two different pairs rejects the option (the build
    cannot honour it); a pair repeated verbatim counts once."""
    if value == "":
        return "", [], []
    errors, pairs = [], []
    for seg in value.split("|"):
        parts = seg.split(",")
        if len(parts) != 2 or not DECIMAL.match(parts[0]) or not DECIMAL.match(parts[1]):
            errors.append(diag("ORI-006", "pair %r is not two plain decimal indexes 'in,out'" % seg, key, level, value, pair=seg))
            continue
        i, o = int(parts[0]), int(parts[1])
        if (inputs is not None and i >= inputs) or (outputs is not None and o >= outputs):
            errors.append(diag("ORI-003", "pair %r names an index outside the model's inputs or outputs" % seg,
                               key, level, value, pair=seg))
            continue
        if (i, o) not in pairs:
            pairs.append((i, o))
    outs, ins = {}, {}
    for i, o in pairs:
        outs.setdefault(o, []).append(i)
        ins.setdefault(i, []).append(o)
    for o, lst in sorted(outs.items()):
        if len(lst) > 1:
            errors.append(diag("ORI-004", "output %d is paired with %d inputs" % (o, len(lst)), key, level, value,
                               output=o if o <= U32_MAX else None, pair=None if o <= U32_MAX else str(o)))
    for i, lst in sorted(ins.items()):
        if len(lst) > 1:
            errors.append(diag("ORI-005", "input %d is paired with %d outputs" % (i, len(lst)), key, level, value,
                               input=i if i <= U32_MAX else None, pair=None if i <= U32_MAX else str(i)))
    if errors:
        return None, errors, []
    return "|".join("%d,%d" % p for p in sorted(pairs)), [], []


def parse_path(key, level, value):
    """Section ge.externalWeightDir: a directory path.  CHOICE: kept verbatim; a NUL byte cannot
    be part of any path, so such a value is refused."""
    if "\x00" in value:
        return None, [diag("EWD-004", "the path holds a NUL byte", key, level, value)], []
    return value, [], []


def parse_value(key, level, value, facts):
    grammar = OPTIONS[key]["grammar"]
    if grammar == "enum":
        return parse_enum(key, level, value)
    if grammar == "int":
        return parse_fusion_size(key, level, value)
    if grammar == "indexes":
        count = facts.inputs if key == IRM else facts.outputs
        return parse_index_list(key, level, value, count)
    if grammar == "pairs":
        return parse_pairs(key, level, value, facts.inputs, facts.outputs)
    return parse_path(key, level, value)


# ======================================================================================
# Options: resolution over the three levels
# ======================================================================================

class Resolution:
    def __init__(self):
        self.effective = {}    # key -> (canonical value, from)
        self.rejected = []
        self.passthrough = []
        self.errors = []
        self.warnings = []

    def value(self, key):
        return self.effective[key][0] if key in self.effective else None

    def ok(self):
        return not self.rejected


def warn_wrong_level(key, level, value):
    """Each section's "Effective level" lists where the option takes effect.  CHOICE: a value set
    elsewhere is ignored (not validated) and a warning says so."""
    return diag("OPT-002", "%s does not take effect at the %s level: ignored" % (key, level), key, level, value)


def restriction_warnings(res, facts, maps):
    """Restrictions outside the option maps never reject a value (CHOICE): the value stays in
    force and, when it was set explicitly and asks for the feature, a warning says why it
    cannot take effect."""
    out = []

    def explicit(key):
        if key not in res.effective:
            return None
        val, src = res.effective[key]
        if src == "default" or val == OPTIONS[key]["default"]:
            return None
        return val, src

    # Section ge.exec.input_fusion_size: "takes effect only when the static graph is run
    # asynchronously".  A threshold of 0 asks for nothing.
    e = explicit(IFS)
    if e and e[0] != "0":
        if facts.run_mode == "sync":
            out.append(diag("IFS-003", "input fusion takes effect only on the asynchronous run", IFS, e[1], e[0]))
        if facts.shape == "dynamic":
            out.append(diag("IFS-004", "input fusion takes effect only on static-shape graphs", IFS, e[1], e[0]))
    # Section ge.inputBatchCpy: value 1 only with more than one user input (and Restrictions
    # bullet 4); only on the listed products (bullet 1); only with RunGraphAsync (bullet 3).
    e = explicit(IBC)
    if e and e[0] == "1":
        if facts.inputs is not None and facts.inputs <= 1:
            out.append(diag("IBC-003", "batch copy needs more than one user input", IBC, e[1], e[0]))
        if facts.product is not None and facts.product not in BATCH_PRODUCTS:
            out.append(diag("IBC-004", "batch copy is not available on %s" % facts.product, IBC, e[1], e[0]))
        if facts.run_mode == "sync":
            out.append(diag("IBC-005", "batch copy takes effect only on the asynchronous run", IBC, e[1], e[0]))
    # Section ge.featureBaseRefreshable: "applies only to static shape graphs".
    e = explicit(FBR)
    if e and e[0] == "1" and facts.shape == "dynamic":
        out.append(diag("FBR-003", "feature base refresh applies only to static-shape graphs", FBR, e[1], e[0]))
    # Section ge.externalWeightDir, Restrictions bullet 1: use it together with ge.externalWeight.
    e = explicit(EWD)
    if e and res.value(EXW) == "0":
        out.append(diag("EWD-003", "ge.externalWeightDir has no effect while ge.externalWeight is 0", EWD, e[1], e[0]))
    return out


def resolve_options(option_maps, facts):
    """Resolve the twelve options from the global, session and graph maps."""
    option_maps = option_maps or {}
    res = Resolution()
    passthrough = set()
    for level in LEVELS:
        for key, value in (option_maps.get(level) or {}).items():
            if key not in OPTIONS:
                passthrough.add(key)  # CHOICE: other GE options pass through untouched
            elif level not in OPTIONS[key]["levels"]:
                res.warnings.append(warn_wrong_level(key, level, value))
    res.passthrough = sorted(passthrough)

    for key, spec in OPTIONS.items():
        parsed = {}
        bad = False
        for level in spec["levels"]:
            m = option_maps.get(level) or {}
            if key not in m:
                continue
            canon, errs, warns = parse_value(key, level, m[key], facts)
            res.errors.extend(errs)
            if canon is None:
                bad = True
            else:
                parsed[level] = (canon, warns)
        if bad:
            # CHOICE: an invalid value wherever the option takes effect refuses the option
            # (as GE refuses the call that carries it); it has no effective value.
            res.rejected.append(key)
            continue
        for level in PRECEDENCE:
            if level in parsed:
                res.effective[key] = (parsed[level][0], level)
                res.warnings.extend(parsed[level][1])  # only the value in force is acted on
                break
        else:
            res.effective[key] = (spec["default"], "default")  # "Mandatory/Optional: optional"
    res.rejected.sort()
    res.warnings.extend(restriction_warnings(res, facts, option_maps))
    return res


def index_set(res, key):
    v = res.value(key)
    return set(int(x) for x in v.split(",")) if v else set()


def pair_list(res):
    v = res.value(ORI)
    return [tuple(int(x) for x in p.split(",")) for p in v.split("|")] if v else []


def answer_options(scenario, request):
    g = scenario.get("graph") or {}
    facts = Facts(inputs=g.get("inputs", 1), outputs=g.get("outputs", 1), shape=g.get("shape", "static"),
                  run_mode=scenario.get("run_mode", "async"), product=scenario.get("product", "ascend-950pr"))
    res = resolve_options(scenario.get("options"), facts)
    return {
        "capability": "options",
        "effective": {k: {"value": v, "from": s} for k, (v, s) in res.effective.items()},
        "rejected": res.rejected,
        "passthrough": res.passthrough,
        "errors": res.errors,
        "warnings": res.warnings,
    }


# ======================================================================================
# Transfer: host-to-device movement of user inputs
# ======================================================================================

def transfer_fusion(host, threshold, facts):
    """Section ge.exec.input_fusion_size: inputs of size <= threshold are fused, larger ones
    move directly; threshold 0 disables; only for static graphs run with RunGraphAsync.
    CHOICE: a fusion needs at least two eligible inputs (fusing one piece saves nothing)."""
    if facts.run_mode != "async" or facts.shape != "static" or threshold == 0:
        return [], host
    eligible = [t for t in host if t["size"] <= threshold]
    if len(eligible) < 2:
        return [], host
    ids = set(t["index"] for t in eligible)
    return eligible, [t for t in host if t["index"] not in ids]


def transfer_batch(rest, batch_on, facts, graph_inputs):
    """Section ge.inputBatchCpy: with 1, on a listed product, with RunGraphAsync and more than
    one user input, the inputs left after fusion are batch-copied (Restrictions bullet 5: fused
    inputs are not batch-copied; the example's lone fifth input is not batched)."""
    if not batch_on or facts.product not in BATCH_PRODUCTS or facts.run_mode != "async" or graph_inputs <= 1:
        return [], rest
    if len(rest) < 2:
        return [], rest
    return rest, []


def answer_transfer(scenario, request):
    inputs = scenario.get("inputs") or []
    facts = Facts(inputs=len(inputs), outputs=None, shape=scenario.get("shape", "static"),
                  run_mode=scenario.get("run_mode", "async"), product=scenario.get("product", "ascend-950pr"))
    obs = {"capability": "transfer", "fused": [], "fused_bytes": 0, "direct": [], "batched": [],
           "on_device": [], "errors": [], "warnings": []}
    res = resolve_options(scenario.get("options"), facts)
    obs["warnings"] = res.warnings
    errors = list(res.errors)
    seen = {}
    for t in inputs:
        seen[t["index"]] = seen.get(t["index"], 0) + 1
    for idx, n in sorted(seen.items()):
        if n > 1:
            errors.append(diag("TRF-002", "input index %d is given %d times" % (idx, n), input=idx))
    if errors:
        obs["errors"] = errors
        return obs
    device = [t for t in inputs if t.get("placement", "host") == "device"]
    host = [t for t in inputs if t.get("placement", "host") != "device"]
    fused, rest = transfer_fusion(host, int(res.value(IFS)), facts)
    total = sum(t["size"] for t in fused)
    if total > U64_MAX:
        obs["errors"] = [diag("TRF-002", "the fused inputs add up past 64 bits", part="fused-inputs")]
        return obs
    batched, direct = transfer_batch(rest, res.value(IBC) == "1", facts, len(inputs))
    obs["fused"] = sorted(t["index"] for t in fused)
    obs["fused_bytes"] = total
    obs["batched"] = sorted(t["index"] for t in batched)
    obs["direct"] = sorted(t["index"] for t in direct)
    obs["on_device"] = sorted(t["index"] for t in device)  # data already on the device is not moved
    return obs


# ======================================================================================
# Memory: the static memory plan of one graph
# ======================================================================================

def validate_memory_scenario(sc):
    """CHOICE: a graph that cannot exist (two tensors with one name, a lifetime ending before it
    begins, I/O roles outside the counts or doubled, an I/O index with no tensor, run addresses
    not one per input and output) is refused and nothing is planned."""
    errs = []
    tensors = sc.get("tensors") or []
    n_in, n_out = sc.get("inputs", 0), sc.get("outputs", 0)
    names, ins, outs = set(), {}, {}
    for t in tensors:
        name = t["name"]
        if name in names:
            errs.append(diag("MEM-001", "tensor %r appears twice" % name, tensor=name))
        names.add(name)
        if t["first"] > t["last"]:
            errs.append(diag("MEM-001", "tensor %r begins after it ends" % name, tensor=name))
        role = t["role"]
        for kind, count, seen in (("input", n_in, ins), ("output", n_out, outs)):
            if role.get("kind") == kind:
                idx = role["index"]
                if idx >= count:
                    errs.append(diag("MEM-001", "%s index %d of %r is not below %d" % (kind, idx, name, count), tensor=name))
                elif idx in seen:
                    errs.append(diag("MEM-001", "%s %d is taken by two tensors" % (kind, idx), tensor=name))
                else:
                    seen[idx] = t
    for kind, count, seen in (("input", n_in, ins), ("output", n_out, outs)):
        for i in range(count):
            if i not in seen:
                errs.append(diag("MEM-001", "%s %d has no tensor" % (kind, i), **{kind: i}))
                if len(errs) > 1000:
                    break
    if sum(round_up(t["size"]) for t in tensors) > U64_MAX:
        errs.append(diag("MEM-001", "the tensor sizes add up past 64 bits", part="sizes"))
    run = sc.get("run")
    if run is not None:
        if len(run.get("inputs") or []) != n_in or len(run.get("outputs") or []) != n_out:
            errs.append(diag("MEM-001", "run addresses are not one per input and output", part="run"))
    return errs, ins, outs


class Block:
    """A region placed as one piece: a tensor, an alias pair, or a memset cleanup group."""

    def __init__(self, members, start, end, cleanup=False):
        self.members = members  # [(tensor, offset inside the block)]
        self.size = 0
        self.start, self.end = start, end
        self.cleanup = cleanup
        self.offset = 0


def single(t, start, end):
    b = Block([(t, 0)], start, end)
    b.size = round_up(t["size"])
    return b


def alias_blocks(pairs, ins, outs, end_of_run):
    """Section ge.exec.outputReuseInputMemIndexes: each pair's input and output share one memory
    address.  CHOICE: the shared region is as large as the larger tensor and is held for the
    whole run (the input is live from the start, the output to the end)."""
    blocks = []
    for i, o in pairs:
        b = Block([(ins[i], 0), (outs[o], 0)], 0, end_of_run)
        b.size = max(round_up(ins[i]["size"]), round_up(outs[o]["size"]))
        blocks.append(b)
    return blocks


def input_block(t, listed, reuse_on, end_of_run, warnings):
    """Section ge.exec.inputReuseMemIndexes: a listed input's memory may be reused as
    intermediate memory (its data is overwritten).  CHOICE: an unlisted input is held for the
    whole run; a listed one from step 0 to its last use.  Note bullet 1 asks for 32-byte
    aligned sizes: CHOICE: a listed input that is not aligned is not reused, with a warning."""
    if listed and reuse_on:
        if t["size"] % ALIGN == 0:
            return single(t, 0, t["last"])
        warnings.append(diag("IRM-011", "input %d (%d bytes) is not 32-byte aligned: its memory is not reused"
                             % (t["role"]["index"], t["size"]), IRM, "graph", input=t["role"]["index"]))
    return single(t, 0, end_of_run)


def output_block(t, listed, reuse_on, end_of_run, warnings):
    """Section ge.exec.outputReuseMemIndexes: a listed output's memory may serve as intermediate
    memory.  CHOICE: an unlisted output is held for the whole run; a listed one from its first
    use to the end of the run (its value must survive the run).  Note bullet 1: 32-byte
    alignment; CHOICE as for inputs."""
    if listed and reuse_on:
        if t["size"] % ALIGN == 0:
            return single(t, t["first"], end_of_run)
        warnings.append(diag("ORM-011", "output %d (%d bytes) is not 32-byte aligned: its memory is not reused"
                             % (t["role"]["index"], t["size"]), ORM, "graph", output=t["role"]["index"]))
    return single(t, 0, end_of_run)


def memset_blocks(memsets, policy):
    """Section ge.exec.atomicCleanPolicy: 0 cleans the memory of all memset operators
    collectively, 1 cleans each operator's memory separately.  CHOICE: a cleanup is one
    contiguous region (one clear operation), holding its tensors side by side, live from the
    first use of its first tensor to the last use of its last one."""
    groups = {}
    for t in memsets:
        gk = "" if policy == "0" else t["role"]["op"]
        groups.setdefault(gk, []).append(t)
    blocks = []
    for gk in sorted(groups):
        ts = groups[gk]
        b = Block([], min(t["first"] for t in ts), max(t["last"] for t in ts), cleanup=True)
        off = 0
        for t in ts:
            b.members.append((t, off))
            off += round_up(t["size"])
        b.size = off
        blocks.append(b)
    return blocks


def place_blocks(blocks, reuse_on):
    """Section ge.exec.disableReuseMemory: with 0 memory is reused between tensors that are not
    in use at once; with 1 it is not reused at all.  CHOICE: lifetimes are inclusive step
    ranges; blocks are placed in order of their first step (larger first) at the lowest
    32-byte-aligned offset free of every placed block they conflict with (first fit)."""
    order = sorted(range(len(blocks)), key=lambda k: (blocks[k].start, -blocks[k].size, k))
    if not reuse_on:
        # Reuse off: every block conflicts with every other, so they are simply stacked.
        top = 0
        for k in order:
            blocks[k].offset = top if blocks[k].size else 0
            top += blocks[k].size
        return
    placed = []
    for k in order:
        b = blocks[k]
        if b.size == 0:
            b.offset = 0
            continue
        busy = sorted((p.offset, p.offset + p.size) for p in placed if p.start <= b.end and b.start <= p.end)
        off = 0
        for lo, hi in busy:
            if off + b.size <= lo:
                break
            off = max(off, hi)
        b.offset = off
        placed.append(b)


def overlapping_io(tensors, offsets, partner):
    """Which I/O tensors share a byte with some other tensor that is not their alias partner."""
    spans = sorted((offsets[t["name"]], offsets[t["name"]] + t["size"], t["name"]) for t in tensors if t["size"] > 0)
    hit = set()
    # Sweep: compare each span with the spans that start before it ends.
    for a in range(len(spans)):
        lo, hi, na = spans[a]
        b = a + 1
        while b < len(spans) and spans[b][0] < hi:
            nb = spans[b][2]
            if partner.get(na) != nb and partner.get(nb) != na:
                hit.add(na)
                hit.add(nb)
            b += 1
    return hit


def answer_memory(scenario, request):
    obs = {"capability": "memory", "offsets": {}, "peak_bytes": 0, "cleanup": [], "aliases": [],
           "reused_inputs": [], "reused_outputs": [], "errors": [], "warnings": []}
    tensors = scenario.get("tensors") or []
    facts = Facts(inputs=scenario.get("inputs", 0), outputs=scenario.get("outputs", 0), shape="static")
    res = resolve_options(scenario.get("options"), facts)
    obs["warnings"] = list(res.warnings)
    errs, ins, outs = validate_memory_scenario(scenario)
    errs = res.errors + errs
    if errs:
        obs["errors"] = errs
        return obs

    reuse_on = res.value(DRM) == "0"
    end_of_run = max([t["last"] for t in tensors] or [0])
    pairs = pair_list(res)
    aliased = set(("in", i) for i, _ in pairs) | set(("out", o) for _, o in pairs)
    # CHOICE: reuse off (disableReuseMemory=1) also turns the reuse lists off.
    irm, orm = index_set(res, IRM), index_set(res, ORM)

    blocks = alias_blocks(pairs, ins, outs, end_of_run)
    memsets = []
    for t in tensors:
        kind = t["role"]["kind"]
        if kind == "input":
            if ("in", t["role"]["index"]) not in aliased:
                blocks.append(input_block(t, t["role"]["index"] in irm, reuse_on, end_of_run, obs["warnings"]))
        elif kind == "output":
            if ("out", t["role"]["index"]) not in aliased:
                blocks.append(output_block(t, t["role"]["index"] in orm, reuse_on, end_of_run, obs["warnings"]))
        elif kind == "memset":
            memsets.append(t)
        else:
            blocks.append(single(t, t["first"], t["last"]))
    cleanup = memset_blocks(memsets, res.value(ACP))
    blocks.extend(cleanup)
    place_blocks(blocks, reuse_on)

    offsets = {}
    for b in blocks:
        for t, rel in b.members:
            offsets[t["name"]] = b.offset + rel
    obs["offsets"] = offsets
    obs["peak_bytes"] = max([offsets[t["name"]] + t["size"] for t in tensors] or [0])
    for b in cleanup:
        lo = min(offsets[t["name"]] for t, _ in b.members)
        hi = max(offsets[t["name"]] + t["size"] for t, _ in b.members)
        obs["cleanup"].append({"offset": lo, "size": hi - lo, "tensors": sorted(t["name"] for t, _ in b.members)})
    obs["aliases"] = [{"input": i, "output": o} for i, o in sorted(pairs)]

    partner = {}
    for i, o in pairs:
        partner[ins[i]["name"]] = outs[o]["name"]
        partner[outs[o]["name"]] = ins[i]["name"]
    hit = overlapping_io(tensors, offsets, partner)
    obs["reused_inputs"] = sorted(i for i, t in ins.items() if t["name"] in hit)
    obs["reused_outputs"] = sorted(o for o, t in outs.items() if t["name"] in hit)

    obs["errors"] = check_run_addresses(scenario.get("run"), pairs)
    return obs


def check_run_addresses(run, pairs):
    """Section ge.exec.outputReuseInputMemIndexes, Note "Address consistency": the paired input
    and output must be passed at one address, otherwise a runtime error occurs."""
    if run is None:
        return []
    errs = []
    ri, ro = run.get("inputs") or [], run.get("outputs") or []
    for i, o in sorted(pairs):
        if ri[i] != ro[o]:
            errs.append(diag("ORI-011", "input %d and output %d are passed at different addresses" % (i, o),
                             ORI, "graph", input=i, output=o))
    return errs


# ======================================================================================
# Session: a script of loads, executions, refreshes and unloads
# ======================================================================================

MAX_EVENTS = 100000       # CHOICE: bounds that keep any answer small
MAX_EXECUTIONS = 100000


class SessionRun:
    def __init__(self, scenario):
        self.sc = scenario
        self.trace = []
        self.refreshes = []
        self.errors = []
        self.warnings = []
        self.loaded = {}   # graph id -> state
        self.pools = {}    # pool name -> {"size": n, "users": set()}
        self.policy = "0"

    def alloc(self, step, pool, n):
        if n > 0:  # CHOICE: a zero-byte block is never allocated
            self.trace.append({"step": step, "action": "alloc", "pool": pool, "bytes": n})

    def free(self, step, pool, n):
        if n > 0:
            self.trace.append({"step": step, "action": "free", "pool": pool, "bytes": n})

    def pool_for(self, shape):
        """Section ge.exec.staticMemoryPolicy: 0 per-graph allocation; 2 static shapes share an
        expandable pool; 3 only dynamic shapes; 4 both."""
        if shape == "static" and self.policy in ("2", "4"):
            return "static-pool"
        if shape == "dynamic" and self.policy in ("3", "4"):
            return "dynamic-pool"
        return None

    def refuse(self, step, g, what):
        self.errors.append(diag("SES-012", "%s: graph %d %s" % (what, g, "is already loaded" if what == "load" else "is not loaded"),
                                step=step, graph=g))

    # ---- events --------------------------------------------------------------------
    def load(self, step, ev):
        g = ev["graph"]
        if g in self.loaded:
            return self.refuse(step, g, "load")
        shape = ev.get("shape", "static")
        gmap = ev.get("options")
        if gmap is None:
            gmap = (self.sc.get("options") or {}).get("graph") or {}
        maps = dict(self.sc.get("options") or {})
        maps["graph"] = gmap
        res = resolve_options(maps, Facts(shape=shape))
        for w in res.warnings:
            if not any(same_diag(w, s) for s in self.session_warnings):
                w["subject"]["graph"] = g
                self.warnings.append(w)
        if res.errors:
            # CHOICE: a graph whose own options are invalid is not added; the session goes on.
            for e in res.errors:
                e["subject"]["graph"] = g
                e["subject"]["step"] = step
            self.errors.extend(res.errors)
            return
        st = {"feature": ev["feature_bytes"], "io": ev.get("io_bytes", 0), "shape": shape,
              "zero_copy_reuse": res.value(RZC) == "1", "refreshable": res.effective[FBR],
              "pool": self.pool_for(shape), "base_set": False}
        self.loaded[g] = st
        if st["pool"]:
            self.pool_take(step, st["pool"], g, st["feature"])
        else:
            self.alloc(step, "graph-%d/feature" % g, st["feature"])
        # Section ge.exec.reuseZeroCopyMemory, 1: the I/O area is planned once, apart from other
        # blocks.  CHOICE: allocated at load, freed at unload.
        if st["zero_copy_reuse"]:
            self.alloc(step, "graph-%d/io" % g, st["io"])

    def pool_take(self, step, name, g, need):
        """Section ge.exec.staticMemoryPolicy, 2: the memory of the largest graph is allocated; when
        a graph needs more, the previous memory is released and allocated again at the new size."""
        p = self.pools.setdefault(name, {"size": 0, "users": set()})
        if need > p["size"]:
            self.free(step, name, p["size"])
            self.alloc(step, name, need)
            p["size"] = need
        p["users"].add(g)

    def pool_give(self, step, name, g):
        """CHOICE: a pool is released when the last graph drawing on it is unloaded."""
        p = self.pools[name]
        p["users"].discard(g)
        if not p["users"]:
            self.free(step, name, p["size"])
            del self.pools[name]

    def execute(self, step, ev):
        g = ev["graph"]
        if g not in self.loaded:
            return self.refuse(step, g, "execute")
        st = self.loaded[g]
        # Section ge.exec.reuseZeroCopyMemory, 0: each execution allocates a new zero-copy area.
        # CHOICE: it is freed when that execution ends.
        if not st["zero_copy_reuse"]:
            for _ in range(ev.get("times", 1)):
                self.alloc(step, "graph-%d/io" % g, st["io"])
                self.free(step, "graph-%d/io" % g, st["io"])

    def refresh(self, step, ev):
        """Section ge.featureBaseRefreshable: with 1 the feature memory address can be refreshed
        many times; with 0 it cannot.  Only static-shape graphs (on dynamic ones the option has
        no effect, so the default rule applies).  CHOICE: the first setting of the base after a
        load is allowed under 0 (it is no refresh yet); a base smaller than the graph's feature
        memory is refused."""
        g = ev["graph"]
        if g not in self.loaded:
            self.refuse(step, g, "refresh")
            self.refreshes.append({"step": step, "graph": g, "ok": False})
            return
        st = self.loaded[g]
        value, src = st["refreshable"]
        refreshable = value == "1" and st["shape"] == "static"
        ok = True
        if ev["bytes"] < st["feature"]:
            ok = False
            self.errors.append(diag("FBR-013", "base of %d bytes is smaller than the %d feature bytes of graph %d"
                                    % (ev["bytes"], st["feature"], g), step=step, graph=g))
        elif st["base_set"] and not refreshable:
            ok = False
            self.errors.append(diag("FBR-011", "the feature memory base of graph %d cannot be refreshed" % g,
                                    FBR, None if src == "default" else src, step=step, graph=g))
        if ok:
            st["base_set"] = True
        self.refreshes.append({"step": step, "graph": g, "ok": ok})

    def unload(self, step, ev):
        g = ev["graph"]
        if g not in self.loaded:
            return self.refuse(step, g, "unload")
        st = self.loaded.pop(g)
        if st["zero_copy_reuse"]:
            self.free(step, "graph-%d/io" % g, st["io"])
        if st["pool"]:
            self.pool_give(step, st["pool"], g)
        else:
            self.free(step, "graph-%d/feature" % g, st["feature"])

    # ---- the whole script ----------------------------------------------------------
    def run(self):
        events = self.sc.get("events") or []
        executions = sum(ev.get("times", 1) for ev in events if ev.get("event") == "execute")
        if len(events) > MAX_EVENTS or executions > MAX_EXECUTIONS:
            self.errors.append(diag("SES-020", "the script is too large (%d events, %d executions)"
                                    % (len(events), executions), part="script"))
            return
        maps = dict(self.sc.get("options") or {})
        maps["graph"] = {}
        res = resolve_options(maps, Facts())
        self.session_warnings = res.warnings
        self.warnings.extend(res.warnings)
        if res.errors:
            # CHOICE: invalid global or session options fail the session: nothing runs.
            self.errors.extend(res.errors)
            return
        # Section ge.exec.staticMemoryPolicy, "Effective level: global and session".
        self.policy = res.value(SMP)
        for step, ev in enumerate(events):
            getattr(self, ev["event"])(step, ev)
        # CHOICE: the end of the script closes the session: remaining graphs are unloaded.
        for g in sorted(self.loaded):
            self.unload(len(events), {"graph": g})


def same_diag(a, b):
    return (a.get("clause"), a.get("key"), a.get("level"), json.dumps(a.get("subject"), sort_keys=True)) == \
           (b.get("clause"), b.get("key"), b.get("level"), json.dumps(b.get("subject"), sort_keys=True))


def answer_session(scenario, request):
    run = SessionRun(scenario)
    run.run()
    return {"capability": "session", "trace": run.trace, "refreshes": run.refreshes,
            "errors": run.errors, "warnings": run.warnings}


# ======================================================================================
# Weights: externalised Const/Constant weights
# ======================================================================================

MAX_WEIGHT_BYTES = 64 * 1024 * 1024  # CHOICE: refuse models with more weight bytes than this


def constant_bytes(c, errors):
    """The bytes of one constant: `hex` or `fill`, exactly one of them."""
    has_hex, has_fill = c.get("hex") is not None, c.get("fill") is not None
    if has_hex == has_fill:
        errors.append(diag("WGT-002", "constant %r gives its bytes neither or both ways" % c["name"], constant=c["name"]))
        return None
    if has_hex:
        h = c["hex"]
        if len(h) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", h):
            errors.append(diag("WGT-002", "constant %r has bad hex" % c["name"], constant=c["name"]))
            return None
        return bytes.fromhex(h)
    return c["fill"]


def validate_constants(constants):
    errors, names, total = [], set(), 0
    for c in constants:
        name = c.get("name", "")
        if name == "" or name in names:
            errors.append(diag("WGT-002", "constant name %r is empty or repeated" % name, constant=name))
        names.add(name)
        if c.get("type") not in ("Const", "Constant"):
            errors.append(diag("WGT-002", "constant %r is a %s, not a Const/Constant" % (name, c.get("type")), constant=name))
        if c.get("fill") is not None:
            total += c["fill"]["len"]
        elif c.get("hex") is not None:
            total += len(c["hex"]) // 2
    if total > MAX_WEIGHT_BYTES:
        errors.append(diag("WGT-002", "the model holds more than %d weight bytes" % MAX_WEIGHT_BYTES, part="constants"))
    return errors


def materialise(c, errors):
    b = constant_bytes(c, errors)
    if isinstance(b, dict):
        return bytes([b["byte"]]) * b["len"]
    return b


def inside(rel):
    """A sandbox-relative path that does not climb out (posix, normalised).  CHOICE: a path
    holding a NUL byte names nothing and is refused like one that climbs out."""
    n = posixpath.normpath(rel) if rel else "."
    return "\x00" not in n and not posixpath.isabs(n) and n != ".." and not n.startswith("../"), n


def choose_flush_dir(sc, res, sandbox, errors):
    """Section ge.externalWeight, "Description of the file flush path", and section
    ge.externalWeightDir: ge.externalWeightDir > ${ASCEND_WORK_PATH}/tmp_weight_<pid>_<sessionid>
    > <working directory>/tmp_weight_<pid>_<sessionid>.  Returns (relative dir, is temporary)."""
    ok, work = inside(sc.get("work_dir", ""))
    if not ok:
        errors.append(diag("WGT-001", "the working directory leaves the sandbox", path=sc.get("work_dir"), part="work-dir"))
        return None, False
    tmp_name = "tmp_weight_%d_%d" % (sc["pid"], sc["session_id"])
    ewd = res.value(EWD)
    if ewd:
        # CHOICE: a relative directory is relative to the process's working directory; no
        # variable ($HOME) is expanded.
        if posixpath.isabs(ewd):
            real_sandbox = os.path.realpath(sandbox)
            cand = posixpath.normpath(ewd)
            if cand == real_sandbox or cand.startswith(real_sandbox.rstrip("/") + "/"):
                return posixpath.normpath(posixpath.relpath(cand, real_sandbox)), False
            if cand == sandbox or cand.startswith(sandbox.rstrip("/") + "/"):
                return posixpath.normpath(posixpath.relpath(cand, sandbox)), False
            errors.append(diag("WGT-001", "ge.externalWeightDir %r is outside the sandbox" % ewd, EWD,
                               res.effective[EWD][1], ewd, part="external-weight-dir"))
            return None, False
        ok, d = inside(posixpath.join(work, ewd))
        if not ok:
            errors.append(diag("WGT-001", "ge.externalWeightDir %r leaves the sandbox" % ewd, EWD,
                               res.effective[EWD][1], ewd, part="external-weight-dir"))
            return None, False
        return d, False
    awp = sc.get("ascend_work_path") or {"state": "unset"}
    if awp.get("state") == "set":
        ok, base = inside(awp.get("path", ""))
        if not ok or awp.get("path", "") == "":
            errors.append(diag("WGT-001", "ASCEND_WORK_PATH leaves the sandbox", path=awp.get("path"), part="ascend-work-path"))
            return None, False
        return posixpath.normpath(posixpath.join(base, tmp_name)), True
    # CHOICE: ASCEND_WORK_PATH set to "" counts as not configured.
    return posixpath.normpath(posixpath.join(work, tmp_name)), True


def make_dir(sandbox, rel, temporary):
    """Create the flush directory and its missing parents inside the sandbox, following no link
    out of it.  CHOICE: a missing directory is created at every tier; the temporary directory
    must be a real directory (a link or a file in its place fails the load)."""
    real_root = os.path.realpath(sandbox)
    cur = real_root
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    for n, part in enumerate(parts):
        p = os.path.join(cur, part)
        last = n == len(parts) - 1
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            os.mkdir(p, 0o755)
            cur = p
            continue
        if stat.S_ISLNK(st.st_mode):
            if last and temporary:
                raise OSError("the temporary directory is taken by a link")
            target = os.path.realpath(p)
            if not (target == real_root or target.startswith(real_root + "/")):
                raise OSError("a link leads out of the sandbox")
            if not os.path.isdir(target):
                raise OSError("not a directory")
            cur = target
        elif stat.S_ISDIR(st.st_mode):
            cur = p
        else:
            raise OSError("a file is in the way")
    return cur


def write_atomically(directory, name, chunks):
    """Write under a temporary name in the same directory, then rename (CHOICE: no partial file
    is ever visible under the final name)."""
    final = os.path.join(directory, name)
    tmp = os.path.join(directory, ".%s.partial-%d" % (name, os.getpid()))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
        os.replace(tmp, final)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def file_record(rel_dir, name, data_len, sha):
    path = name if rel_dir == "." else rel_dir + "/" + name
    return {"path": path, "len": data_len, "sha256": sha}


def weights_mode1(consts, datas, real_dir, rel_dir, obs):
    """Section ge.externalWeight, 1: every Const/Constant becomes a FileConstant whose weight is
    flushed to its own file weight_<hash>.  CHOICE: <hash> is the SHA-256 of the bytes in
    lowercase hex, so equal weights share one file (written once)."""
    nodes, written = [], {}
    for c, data in zip(consts, datas):
        h = hashlib.sha256(data).hexdigest()
        name = "weight_" + h
        if name not in written:
            write_atomically(real_dir, name, [data])
            written[name] = file_record(rel_dir, name, len(data), h)
            obs["files"].append(written[name])
        nodes.append({"name": c["name"], "type": "FileConstant", "file": written[name]["path"],
                      "offset": 0, "length": len(data)})
    return nodes


COMBINED_ALIGN = 32  # CHOICE: weights in the combined file start at 32-byte boundaries


def weights_mode2(consts, datas, real_dir, rel_dir, root, obs):
    """Section ge.externalWeight, 2: all weights in one file named
    "<root graph name>_weight_combined".  CHOICE: graph order, each distinct content once, at
    the next 32-byte boundary, zero padding between; empty weights at offset 0; no constant,
    no file."""
    if not consts:
        return []
    name = root + "_weight_combined"
    where, chunks, end = {}, [], 0
    placement = []
    for data in datas:
        if len(data) == 0:
            placement.append(0)
            continue
        if data not in where:
            start = round_up(end, COMBINED_ALIGN)
            if start > end:
                chunks.append(b"\x00" * (start - end))
            chunks.append(data)
            where[data] = start
            end = start + len(data)
        placement.append(where[data])
    write_atomically(real_dir, name, chunks)
    h = hashlib.sha256()
    for ch in chunks:
        h.update(ch)
    rec = file_record(rel_dir, name, end, h.hexdigest())
    obs["files"].append(rec)
    return [{"name": c["name"], "type": "FileConstant", "file": rec["path"], "offset": off, "length": len(d)}
            for c, d, off in zip(consts, datas, placement)]


def remove_tree(real_dir, rel_dir):
    """Section ge.externalWeight: "When the model is uninstalled, the tmp_weight_<pid>_<sessionid>
    directory is deleted."  Links are removed as links, never followed."""
    removed = []

    def walk(real, rel):
        for entry in os.scandir(real):
            r = rel + "/" + entry.name
            if entry.is_dir(follow_symlinks=False):
                walk(entry.path, r)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(r)
    walk(real_dir, rel_dir)
    os.rmdir(real_dir)
    removed.append(rel_dir)
    return sorted(removed)


def valid_root_name(root):
    return root not in ("", ".", "..") and "/" not in root and "\x00" not in root


def answer_weights(scenario, request):
    obs = {"capability": "weights", "dir": "", "files": [], "nodes": [], "removed": [], "errors": [], "warnings": []}
    sandbox = request.get("sandbox")
    if not sandbox:
        obs["errors"] = [diag("", "the request carries no sandbox to write in")]
        return obs
    res = resolve_options(scenario.get("options"), Facts())
    obs["warnings"] = res.warnings
    if res.errors:
        obs["errors"] = res.errors
        return obs
    consts = scenario.get("constants") or []
    errors = validate_constants(consts)
    mode = res.value(EXW)
    if mode == "2" and not valid_root_name(scenario.get("root_graph", "")):
        errors.append(diag("WGT-002", "the root graph name cannot be part of a file name", part="root-graph"))
    datas = []
    if not errors:
        datas = [materialise(c, errors) for c in consts]
    if errors:
        obs["errors"] = errors
        return obs
    if mode == "0":
        # Section ge.externalWeight, 0: the weights stay in the graph.
        obs["nodes"] = sorted(({"name": c["name"], "type": c["type"]} for c in consts), key=lambda n: n["name"])
        return obs
    rel_dir, temporary = choose_flush_dir(scenario, res, sandbox, errors)
    if errors:
        obs["errors"] = errors
        return obs
    obs["dir"] = rel_dir
    try:
        real_dir = make_dir(sandbox, rel_dir, temporary)
    except (OSError, ValueError) as e:
        obs["errors"] = [diag("WGT-008", "cannot create %s: %s" % (rel_dir, e), path=rel_dir)]
        return obs
    try:
        if mode == "1":
            nodes = weights_mode1(consts, datas, real_dir, rel_dir, obs)
        else:
            nodes = weights_mode2(consts, datas, real_dir, rel_dir, scenario["root_graph"], obs)
    except (OSError, ValueError) as e:
        obs["files"].sort(key=lambda f: f["path"])
        obs["errors"] = [diag("WGT-008", "cannot write in %s: %s" % (rel_dir, e), path=rel_dir)]
        return obs
    obs["files"].sort(key=lambda f: f["path"])
    obs["nodes"] = sorted(nodes, key=lambda n: n["name"])
    # CHOICE: only the temporary directory is removed at unload; the user's directory stays.
    if scenario.get("unload") and temporary:
        try:
            obs["removed"] = remove_tree(real_dir, rel_dir)
        except (OSError, ValueError) as e:
            obs["errors"].append(diag("WGT-008", "cannot remove %s: %s" % (rel_dir, e), path=rel_dir))
    return obs


# ======================================================================================
# The protocol loop
# ======================================================================================

HANDLERS = {
    "options": answer_options,
    "transfer": answer_transfer,
    "memory": answer_memory,
    "session": answer_session,
    "weights": answer_weights,
}


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def handle_request(msg):
    rid = msg.get("id")
    cap = msg.get("capability")
    scenario = msg.get("scenario") or {}
    handler = HANDLERS.get(cap)
    if handler is None:
        send({"type": "not-supported", "id": rid, "reason": "unknown capability %r" % cap})
        return
    try:
        obs = handler(scenario, msg)
    except Exception as e:  # an engine bug: report it, keep the session
        log("request %s failed: %r" % (rid, e))
        send({"type": "error", "id": rid, "message": "internal error: %r" % (e,)})
        return
    send({"type": "observation", "id": rid, "observation": obs})


def main():
    greeted = False
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log("not JSON: %r" % line[:200])
            continue
        kind = msg.get("type")
        if kind == "hello":
            if msg.get("protocol") != PROTOCOL:
                send({"type": "error", "message": "independent-py speaks protocol %d only" % PROTOCOL})
                return
            send({"type": "hello", "protocol": PROTOCOL, "name": ENGINE_NAME, "version": ENGINE_VERSION,
                  "capabilities": CAPABILITIES, "profiles": ["documented"]})
            greeted = True
        elif kind == "request" and greeted:
            handle_request(msg)
        else:
            log("unexpected message: %r" % line[:200])


if __name__ == "__main__":
    main()
