#!/usr/bin/env python3
"""An example ge-conformance backend in Python (standard library only).

It speaks the subprocess protocol of docs/protocol.md on standard input and output, implements
the `options` capability by reading the spec tables' JSON form (what
`ge-conformance spec --format json` prints), and answers not-supported for the other
capabilities.

    ge-conformance spec --format json > spec.json
    ge-conformance certify --backend 'exec:python3 examples/python-shim/ge_shim.py --spec spec.json'

Without --spec, it runs `ge-conformance spec --format json` itself (the program named by the
GE_CONFORMANCE environment variable, else `ge-conformance` on PATH).
"""

import argparse
import json
import os
import subprocess
import sys

PROTOCOL_VERSION = 2
NAME = "python-shim"
VERSION = "0.1.0"
LEVELS = ["global", "session", "graph"]

# The one fact the JSON form does not carry: which clause a warning cites when a restriction of
# an option is not met (OPT-008). Keyed by (option key, restriction).
RESTRICTION_CLAUSES = {
    ("ge.exec.input_fusion_size", "run_mode"): "IFS-003",
    ("ge.exec.input_fusion_size", "shape"): "IFS-004",
    ("ge.inputBatchCpy", "min_inputs"): "IBC-003",
    ("ge.inputBatchCpy", "products"): "IBC-004",
    ("ge.inputBatchCpy", "run_mode"): "IBC-005",
    ("ge.featureBaseRefreshable", "shape"): "FBR-003",
    ("ge.externalWeightDir", "depends_on"): "EWD-003",
}


class Rejected(Exception):
    """A value the option's grammar refuses; carries the diagnostic."""

    def __init__(self, diagnostic):
        super().__init__(diagnostic["message"])
        self.diagnostic = diagnostic


def strict_decimal(text):
    """Digits only, no leading zero but `0` itself. None: not a number; -1: beyond u64."""
    if not text or any(c not in "0123456789" for c in text) or (len(text) > 1 and text[0] == "0"):
        return None
    n = int(text)
    return n if n < 2**64 else -1


class Options:
    """The option layer, driven by the options table and the clause catalogue."""

    def __init__(self, spec):
        self.rows = spec["options"]
        self.by_key = {row["key"]: row for row in self.rows}
        # Each option's clause IDs share a prefix (ACP-001, ...): read it from the catalogue.
        self.prefix = {}
        for clause in spec["clauses"]:
            if clause.get("option"):
                self.prefix.setdefault(clause["option"], clause["id"].split("-")[0])

    def resolve(self, scenario):
        maps = scenario.get("options", {})
        graph = scenario.get("graph", {})
        ctx = {
            "inputs": graph.get("inputs", 1),
            "outputs": graph.get("outputs", 1),
            "shape": graph.get("shape", "static"),
            "run_mode": scenario.get("run_mode", "async"),
            "product": scenario.get("product", "ascend-950pr"),
        }
        obs = {"effective": {}, "rejected": [], "passthrough": [], "errors": [], "warnings": []}
        for level in LEVELS:
            for key in maps.get(level, {}):
                if key not in self.by_key and key not in obs["passthrough"]:
                    obs["passthrough"].append(key)
        for row in self.rows:
            key = row["key"]
            winner = None
            rejected = False
            for level in LEVELS:
                raw = maps.get(level, {}).get(key)
                if raw is None:
                    continue
                if level not in row["levels"]:
                    obs["warnings"].append(diag("OPT-002", key, level, raw,
                                                f"{key} has no effect at {level} level"))
                    continue
                warnings = []
                try:
                    winner = (self.parse(row, level, raw, ctx, warnings), level, warnings)
                except Rejected as e:
                    obs["errors"].append(e.diagnostic)
                    rejected = True
            if rejected:
                obs["rejected"].append(key)
            elif winner is not None:
                value, level, warnings = winner
                obs["warnings"].extend(warnings)
                obs["effective"][key] = {"value": value, "from": level}
            else:
                obs["effective"][key] = {"value": row.get("default") or "", "from": "default"}
        self.restrictions(obs, ctx)
        for name in ("rejected", "passthrough"):
            obs[name].sort()
        return obs

    def parse(self, row, level, raw, ctx, warnings):
        key, grammar = row["key"], row["grammar"]
        prefix = self.prefix[key]

        def reject(number, message, subject=None):
            clause = number if isinstance(number, str) else f"{prefix}-{number:03}"
            return Rejected(diag(clause, key, level, raw, message, subject))

        if raw == "":
            raise reject("OPT-003", f"{key} is empty")
        if grammar == "enumeration":
            if raw not in [v["value"] for v in row.get("values", [])]:
                raise reject(1, f"{key} = {raw!r} is not an allowed value")
            return raw
        if grammar == "integer-range":
            n = strict_decimal(raw)
            if n is None:
                raise reject("OPT-003", f"{key} = {raw!r} is not a plain decimal number")
            if n < 0 or not row.get("min", 0) <= n <= row.get("max", 2**64 - 1):
                raise reject(1, f"{key} = {raw} is out of range")
            return str(n)
        if grammar == "index-list":
            count, what = (ctx["inputs"], "input") if key == "ge.exec.inputReuseMemIndexes" \
                else (ctx["outputs"], "output")
            seen, kept = set(), []
            for item in raw.split(","):
                if item == "":
                    raise reject(4, f"{key} has an empty item", {"item": ""})
                n = strict_decimal(item)
                if n is None:
                    raise reject(4, f"{key}: {item!r} is not a decimal index", {"item": item})
                if item in seen:
                    raise reject(4, f"{key}: index {item} is listed twice", index_subject(item))
                seen.add(item)
                if 0 <= n < count:
                    kept.append(n)
                else:
                    warnings.append(diag(f"{prefix}-003", key, level, raw,
                                         f"{key}: {what} index {item} is ignored",
                                         index_subject(item)))
            return ",".join(str(n) for n in sorted(kept))
        if grammar == "pair-list":
            pairs, inputs, outputs = [], set(), set()
            for segment in raw.split("|"):
                parts = segment.split(",")
                numbers = [strict_decimal(p) for p in parts] if len(parts) == 2 else [None]
                if None in numbers:
                    raise reject(6, f"{key}: {segment!r} is not a pair", {"pair": segment})
                i, o = numbers
                if not (0 <= i < ctx["inputs"] and 0 <= o < ctx["outputs"]):
                    raise reject(3, f"{key}: pair {segment} is out of range", {"pair": segment})
                if o in outputs:
                    raise reject(4, f"{key}: output {o} is named twice", {"output": o})
                if i in inputs:
                    raise reject(5, f"{key}: input {i} is named twice", {"input": i})
                outputs.add(o)
                inputs.add(i)
                pairs.append((i, o))
            return "|".join(f"{i},{o}" for i, o in sorted(pairs))
        if grammar == "path":
            if "\0" in raw:
                raise reject(4, f"{key} contains a NUL byte")
            return raw
        raise reject("OPT-003", f"{key}: unknown grammar {grammar}")

    def restrictions(self, obs, ctx):
        """OPT-008: a non-default value set where a restriction is not met draws a warning."""
        effective = obs["effective"]
        for row in self.rows:
            key = row["key"]
            eff = effective.get(key)
            if eff is None or eff["from"] == "default" or eff["value"] == row.get("default"):
                continue
            r = row.get("restrictions", {})
            unmet = []
            if "run_mode" in r and r["run_mode"] != ctx["run_mode"]:
                unmet.append("run_mode")
            if "shape" in r and r["shape"] != ctx["shape"]:
                unmet.append("shape")
            if r.get("products") and ctx["product"] not in r["products"]:
                unmet.append("products")
            if "min_inputs" in r and ctx["inputs"] < r["min_inputs"]:
                unmet.append("min_inputs")
            if "depends_on" in r:
                dep = effective.get(r["depends_on"])
                if dep is not None and dep["value"] == self.by_key[r["depends_on"]].get("default"):
                    unmet.append("depends_on")
            for restriction in unmet:
                clause = RESTRICTION_CLAUSES.get((key, restriction))
                if clause:
                    obs["warnings"].append(diag(clause, key, eff["from"], eff["value"],
                                                f"{key} has no effect here ({restriction})"))


def index_subject(item):
    """The subject naming an index as written: its number, or the item when past 64 bits."""
    n = int(item)
    return {"index": n} if n < 2 ** 64 else {"item": item}


def diag(clause, key, level, value, message, subject=None):
    d = {"clause": clause, "key": key, "level": level, "value": value, "message": message}
    if subject is not None:
        d["subject"] = subject
    return d


def load_spec(path):
    if path:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    program = os.environ.get("GE_CONFORMANCE", "ge-conformance")
    out = subprocess.run([program, "spec", "--format", "json"], check=True,
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout
    return json.loads(out)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", help="the JSON of `ge-conformance spec --format json`")
    args = parser.parse_args()
    options = Options(load_spec(args.spec))
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as e:
            send({"type": "error", "message": f"cannot read the message: {e}"})
            continue
        kind, rid = message.get("type"), message.get("id")
        if kind == "hello":
            if message.get("protocol") != PROTOCOL_VERSION:
                send({"type": "error", "message": f"this shim speaks protocol version "
                                                  f"{PROTOCOL_VERSION}, not {message.get('protocol')}"})
                return
            send({"type": "hello", "protocol": PROTOCOL_VERSION, "name": NAME,
                  "version": VERSION, "capabilities": ["options"]})
        elif kind == "request" and message.get("capability") == "options":
            try:
                observation = options.resolve(message["scenario"])
            except Exception as e:  # a bug here fails one case, not the session
                send({"type": "error", "id": rid, "message": f"{type(e).__name__}: {e}"})
                continue
            observation["capability"] = "options"
            send({"type": "observation", "id": rid, "observation": observation})
        elif kind == "request":
            send({"type": "not-supported", "id": rid,
                  "reason": "this shim implements the options capability only"})
        else:
            send({"type": "error", "id": rid, "message": f"unknown message type {kind!r}"})


if __name__ == "__main__":
    main()
