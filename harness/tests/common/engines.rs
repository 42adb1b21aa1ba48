//! What the tests of engines written apart from the suite share: the clauses an engine departs
//! from at level `strict`, checked against the adjudication in `docs/independent.md`, and the
//! rewriting of a weights answer into another layout the text allows.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ge_conformance::report::{Outcome, Report};
use ge_spec::vocab::weights::WeightsObservation;
use sha2::{Digest, Sha256};

/// Fails the test unless `report` certifies, listing every trial that fails the run.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn assert_certified(report: &Report) {
    let failures: Vec<String> = report
        .trials
        .iter()
        .filter(|t| t.outcome.fails_run())
        .map(|t| format!("{}: {}", t.name, t.message.clone().unwrap_or_default()))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(
        report.verdict,
        ge_conformance::report::Standing::Certified,
        "{}",
        report.verdict_line()
    );
}

/// The clauses `report` (a run at level `strict`) fails on that `adjudication` never names.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn unadjudicated(report: &Report, adjudication: &str) -> Vec<String> {
    let mut broken: Vec<String> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .flat_map(|t| t.broken.clone())
        .collect();
    broken.sort();
    broken.dedup();
    broken.retain(|c| !adjudication.contains(c.as_str()));
    broken
}

/// Rewrites the combined file of a weights answer with its distinct weights back to back (no
/// padding), on disk and in the observation; an answer without a combined file on disk is left
/// as it is.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn pack_combined(obs: &mut WeightsObservation, sandbox: &Path) {
    pack_combined_with(obs, sandbox, true);
}

/// [`pack_combined`], storing identical weights once (`dedup`) or each where its constant
/// comes.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn pack_combined_with(obs: &mut WeightsObservation, sandbox: &Path, dedup: bool) {
    let Some(file) = obs
        .files
        .iter_mut()
        .find(|f| f.path.ends_with("_weight_combined"))
    else {
        return;
    };
    let Ok(old) = fs::read(sandbox.join(&file.path)) else {
        return;
    };
    let mut out = Vec::new();
    let mut moved: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut nodes: Vec<_> = obs.nodes.iter_mut().collect();
    nodes.sort_by_key(|n| n.offset);
    for n in nodes {
        let (Some(at), Some(len)) = (n.offset, n.length) else {
            continue;
        };
        let Some(bytes) = old.get(at as usize..(at + len) as usize) else {
            return;
        };
        let mut store = || {
            let new_at = out.len() as u64;
            out.extend_from_slice(bytes);
            new_at
        };
        let new_at = if dedup {
            *moved.entry((at, len)).or_insert_with(store)
        } else {
            store()
        };
        n.offset = Some(new_at);
    }
    if fs::write(sandbox.join(&file.path), &out).is_ok() {
        file.len = out.len() as u64;
        file.sha256 = Sha256::digest(&out)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
    }
}
