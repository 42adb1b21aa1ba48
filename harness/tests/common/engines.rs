//! What the tests of engines written apart from the suite share: the clauses an engine departs
//! from at level `strict`, checked against the adjudication in `docs/independent.md`.

use std::path::Path;

use ge_conformance::report::{Outcome, Report};

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

/// The test of an engine written from the text alone: `interpreter` runs `script` over the
/// subprocess protocol; one certification at level `documented` proves both that nothing fails
/// and that every deviation (each a clause the engine would fail at level `strict`) is
/// adjudicated in the section `heading` of `docs/independent.md`. `engine` names it in the
/// message.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn assert_certified_and_adjudicated(
    interpreter: &str,
    script: &str,
    heading: &str,
    engine: &str,
) {
    let report = certify_script(interpreter, script, ge_spec::Conformance::Documented);
    assert_certified(&report);
    let unlisted = unadjudicated(&report, adjudication(heading));
    assert!(
        unlisted.is_empty(),
        "at level strict {engine} departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
