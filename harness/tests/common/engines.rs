//! What the tests of engines written apart from the suite share: the clauses an engine departs
//! from at level `strict`, checked against the adjudication in `docs/independent.md`, and the
//! rewriting of a weights answer into another layout the text allows.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ge_conformance::report::{Outcome, Report};
use ge_spec::vocab::weights::WeightsObservation;
use sha2::{Digest, Sha256};

/// Certifies the engine `interpreter` runs from `script` (a path from the repository root) over
/// the subprocess protocol, at `level` under the documented profile.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn certify_script(interpreter: &str, script: &str, level: ge_spec::Conformance) -> Report {
    use ge_conformance::certify::{self, shell_quote, Config};
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(script);
    let arg = format!(
        "exec:{interpreter} {}",
        shell_quote(&script.to_string_lossy())
    );
    let judging = ge_conformance::judging::Judging::new(ge_spec::Profile::Documented, level);
    let handle =
        ge_conformance::backends::open(&arg, std::time::Duration::from_secs(30), judging.profile)
            .expect("the engine starts");
    let cfg = Config {
        judging,
        backend_arg: arg,
        ..Config::default()
    };
    certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run")
}

/// The section of `docs/independent.md` under the heading `heading`, up to the next one of its
/// level.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn adjudication(heading: &str) -> &'static str {
    let after = include_str!("../../../docs/independent.md")
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("docs/independent.md has no section {heading:?}"));
    after.split("\n## ").next().unwrap_or(after)
}

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

/// The clauses `report` departs from that `adjudication` never names: at level `strict`, the
/// clauses its failures break; at level `documented`, the clauses of its deviations as well
/// (the same clauses: a deviation is what fails at `strict`, as
/// `text_engine::deviations_at_documented_are_the_failures_at_strict` checks on a whole run).
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn unadjudicated(report: &Report, adjudication: &str) -> Vec<String> {
    let mut departed: Vec<String> = report
        .trials
        .iter()
        .flat_map(|t| {
            let broken = (t.outcome == Outcome::Fail).then_some(&t.broken);
            broken.into_iter().flatten().chain(&t.deviations).cloned()
        })
        .collect();
    departed.sort();
    departed.dedup();
    departed.retain(|c| !adjudication.contains(c.as_str()));
    departed
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
