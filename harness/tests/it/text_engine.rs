//! The proof that the suite certifies conformance to the documentation, not likeness to the
//! reference: an engine written from the source text and the vocabulary alone, kept apart from
//! the reference, the tables and the oracles while it was written (`examples/text-engine`),
//! is certified at level `documented` with no failure. Its deviations at level `strict` are the
//! ones `docs/independent.md` lists, each adjudicated there.

use crate::common;

use ge_conformance::certify::{certify, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::Report;
use ge_spec::{Conformance, Profile};

fn run(level: Conformance) -> Report {
    let cfg = Config {
        judging: Judging::new(Profile::Documented, level),
        backend_arg: "text-engine".into(),
        ..Config::default()
    };
    certify(&text_engine::TextEngine, &cfg, &mut |_, _, _| {}).expect("a run")
}

#[test]
fn the_text_engine_is_certified_at_level_documented() {
    common::engines::assert_certified(&run(Conformance::Documented));
}

/// Its departures at level `strict` are adjudicated, and they are the clauses of its deviations
/// at level `documented`: a deviation is what fails at `strict`, so a run at `documented` shows
/// what an engine departs from (the Python and JavaScript engines' tests count on it).
#[test]
fn deviations_at_documented_are_the_failures_at_strict() {
    let strict = run(Conformance::Strict);
    let doc = include_str!("../../../docs/independent.md");
    let unlisted = common::engines::unadjudicated(&strict, doc);
    assert!(
        unlisted.is_empty(),
        "at level strict the text engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
    let clauses = |report: &Report, of: fn(&ge_conformance::report::TrialResult) -> &[String]| {
        let mut all: Vec<String> = report.trials.iter().flat_map(|t| of(t).to_vec()).collect();
        all.sort();
        all.dedup();
        all
    };
    let failed = clauses(&strict, |t| &t.broken);
    assert!(
        !failed.is_empty(),
        "the text engine departs from some of the suite's choices"
    );
    let documented = run(Conformance::Documented);
    assert_eq!(clauses(&documented, |t| &t.deviations), failed);
    assert_eq!(clauses(&documented, |t| &t.broken), Vec::<String>::new());
}
