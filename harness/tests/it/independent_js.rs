//! The third engine written from the text alone (`examples/independent-js`, JavaScript on
//! Node.js, all five capabilities, over the subprocess protocol) is certified at level
//! `documented` with no failure, and every clause it departs from at level `strict` is
//! adjudicated in `docs/independent.md`.

use crate::common;

use ge_spec::Conformance;

const SCRIPT: &str = "examples/independent-js/engine.js";

#[test]
fn the_javascript_engine_is_certified_at_level_documented() {
    common::engines::assert_certified(&common::engines::certify_script(
        "node",
        SCRIPT,
        Conformance::Documented,
    ));
}

#[test]
fn its_deviations_at_level_strict_are_the_adjudicated_ones() {
    let report = common::engines::certify_script("node", SCRIPT, Conformance::Strict);
    let section = common::engines::adjudication("## A third engine, in JavaScript");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the JavaScript engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
