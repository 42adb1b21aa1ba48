//! Judging by clause, at the level in force: what the text states fails, the suite's own
//! choices deviate, and the oracles stand apart from the reference they judge.

use ge_conformance::judging::Judging;
use ge_conformance::oracle::memory;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::{Conformance, Profile};

fn scenario(json: serde_json::Value) -> MemoryScenario {
    serde_json::from_value(json).expect("a memory scenario")
}

fn plan(offsets: &[(&str, u64)], peak: u64, cleanup: serde_json::Value) -> MemoryObservation {
    serde_json::from_value(serde_json::json!({
        "offsets": offsets.iter().map(|(n, o)| (n.to_string(), o)).collect::<std::collections::BTreeMap<_, _>>(),
        "cleanup": cleanup,
        "peak_bytes": peak,
    }))
    .expect("a memory observation")
}

fn clauses(j: &Judging, s: &MemoryScenario, o: &MemoryObservation) -> Vec<String> {
    memory::judge(j, s, o)
        .into_iter()
        .map(|v| v.clause)
        .collect()
}

const DOC: Judging = Judging::DEFAULT;
const STRICT: Judging = Judging::DEFAULT.strict();

/// The collective memset region is cleaned before the run; once its last memset output is dead
/// another tensor may use it (ACP-012). The plan of the conformance-levels issue, where `t`
/// reuses `m`'s bytes after `m` died, is right at both levels; during `m`'s life it is not.
#[test]
fn the_collective_region_may_be_reused_after_its_last_memset_output() {
    let s = scenario(serde_json::json!({
        "inputs": 0, "outputs": 0,
        "tensors": [
            {"name": "m", "size": 64, "first": 0, "last": 1, "role": {"kind": "memset", "op": "a"}},
            {"name": "t", "size": 64, "first": 3, "last": 3, "role": {"kind": "intermediate"}},
        ],
    }));
    let cleanup = serde_json::json!([{ "offset": 0, "size": 64, "tensors": ["m"] }]);
    let reuse = plan(&[("m", 0), ("t", 0)], 64, cleanup.clone());
    for j in [DOC, STRICT] {
        assert!(
            clauses(&j, &s, &reuse).is_empty(),
            "{:?}",
            clauses(&j, &s, &reuse)
        );
    }
    // The reference plans it that way.
    let ours = ge_reference::memory::observe(Profile::Documented, &s);
    assert_eq!(ours.offsets["t"], ours.offsets["m"], "{ours:?}");

    // A tensor used before the memset output, at step 0, shares the region while it is held.
    let early = scenario(serde_json::json!({
        "inputs": 0, "outputs": 0,
        "tensors": [
            {"name": "t", "size": 64, "first": 0, "last": 0, "role": {"kind": "intermediate"}},
            {"name": "m", "size": 64, "first": 1, "last": 1, "role": {"kind": "memset", "op": "a"}},
        ],
    }));
    let shared = plan(&[("m", 0), ("t", 0)], 64, cleanup);
    assert_eq!(clauses(&STRICT, &early, &shared), ["ACP-012"]);
    // The text says only that the outputs are cleaned together: a deviation, not a failure.
    assert!(!DOC.any_binding(&memory::judge(&DOC, &early, &shared)));
}

/// Two tensors in use over several common steps never share a byte (DRM-011, the text's); two
/// that only meet at one step, one ending as the other begins, are the suite's inclusive reading
/// (DRM-013).
#[test]
fn overlapping_lifetimes_fail_and_a_shared_boundary_step_deviates() {
    let s = |a: (u32, u32), b: (u32, u32)| {
        scenario(serde_json::json!({
            "inputs": 0, "outputs": 0,
            "tensors": [
                {"name": "a", "size": 64, "first": a.0, "last": a.1, "role": {"kind": "intermediate"}},
                {"name": "b", "size": 64, "first": b.0, "last": b.1, "role": {"kind": "intermediate"}},
            ],
        }))
    };
    let same = plan(&[("a", 0), ("b", 0)], 64, serde_json::json!([]));
    let overlap = s((0, 3), (2, 5));
    assert_eq!(clauses(&DOC, &overlap, &same), ["DRM-011"]);
    assert!(DOC.any_binding(&memory::judge(&DOC, &overlap, &same)));
    let boundary = s((0, 2), (2, 5));
    assert_eq!(clauses(&DOC, &boundary, &same), ["DRM-013"]);
    assert!(!DOC.any_binding(&memory::judge(&DOC, &boundary, &same)));
    assert!(STRICT.any_binding(&memory::judge(&STRICT, &boundary, &same)));
}

/// At level documented the oracle tries every reading of the options the text allows: an engine
/// that lets the session's `disableReuseMemory` win over the graph's (the precedence is the
/// suite's choice, OPT-001) and plans accordingly deviates; it does not fail DRM-010.
#[test]
fn another_precedence_is_judged_by_what_it_leads_to() {
    let s = scenario(serde_json::json!({
        "inputs": 0, "outputs": 0,
        "options": { "session": { "ge.exec.disableReuseMemory": "0" }, "graph": { "ge.exec.disableReuseMemory": "1" } },
        "tensors": [
            {"name": "a", "size": 64, "first": 0, "last": 0, "role": {"kind": "intermediate"}},
            {"name": "b", "size": 64, "first": 2, "last": 2, "role": {"kind": "intermediate"}},
        ],
    }));
    let reused = plan(&[("a", 0), ("b", 0)], 64, serde_json::json!([]));
    let doc = memory::judge(&DOC, &s, &reused);
    assert!(!DOC.any_binding(&doc), "{doc:?}");
    assert!(doc.iter().any(|v| v.clause == "OPT-001"), "{doc:?}");
    let strict = memory::judge(&STRICT, &s, &reused);
    assert!(STRICT.any_binding(&strict), "{strict:?}");
    assert!(strict.iter().any(|v| v.clause == "OPT-001"), "{strict:?}");
}

/// The oracles judge on their own reading of the tables: no oracle's code names the reference
/// (its tests may, to compare).
#[test]
fn the_oracles_never_ask_the_reference() {
    let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/oracle")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("the oracle sources") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.iter().any(|p| p.ends_with("transfer/upstream.rs")));
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        assert!(
            !code.contains("ge_reference"),
            "{} uses the reference outside its tests",
            path.display()
        );
    }
}

/// Upstream facts bind at both levels: a clause with an `upstream` entry records what GE does.
#[test]
fn upstream_entries_bind_at_level_documented() {
    let up = Judging::new(Profile::Upstream, Conformance::Documented);
    for c in ge_spec::Spec::embedded().clauses().filter(|c| c.diverges()) {
        assert!(up.binds(&c.id), "{}", c.id);
    }
}
