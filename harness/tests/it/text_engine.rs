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

#[test]
fn its_deviations_at_level_strict_are_the_adjudicated_ones() {
    let report = run(Conformance::Strict);
    let doc = include_str!("../../../docs/independent.md");
    let unlisted = common::engines::unadjudicated(&report, doc);
    assert!(
        unlisted.is_empty(),
        "at level strict the text engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
