//! The third engine written from the text alone (`examples/independent-js`, JavaScript on
//! Node.js, all five capabilities, over the subprocess protocol) is certified at level
//! `documented` with no failure, and every clause it departs from at level `strict` is
//! adjudicated in `docs/independent.md`.

use crate::common;

use ge_spec::Conformance;

const SCRIPT: &str = "examples/independent-js/engine.js";

/// One certification at level `documented` proves both: no failure, and every deviation (each a
/// clause the engine would fail at level `strict`) adjudicated.
#[test]
fn the_javascript_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    let report = common::engines::certify_script("node", SCRIPT, Conformance::Documented);
    common::engines::assert_certified(&report);
    let section = common::engines::adjudication("## A third engine, in JavaScript");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the JavaScript engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
