//! The fifth engine written from the text alone (`examples/independent-js2`, JavaScript, all
//! five capabilities, over the subprocess protocol, inventive wherever the text is silent) is
//! certified at level `documented` with no failure, and every clause it departs from at level
//! `strict` is adjudicated in `docs/independent.md`.

use crate::common;

use ge_spec::Conformance;

const SCRIPT: &str = "examples/independent-js2/engine.js";

#[test]
fn the_fifth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    let report = common::engines::certify_script("node", SCRIPT, Conformance::Documented);
    common::engines::assert_certified(&report);
    let section = common::engines::adjudication("## A fifth engine, inventive, in JavaScript");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the fifth engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
