//! The fourth engine written from the text alone (`examples/independent-py2`, Python, all five
//! capabilities, over the subprocess protocol, its choices the unusual ones wherever the text is
//! silent) is certified at level `documented` with no failure, and every clause it departs from
//! at level `strict` is adjudicated in `docs/independent.md`.

use crate::common;

use ge_spec::Conformance;

const SCRIPT: &str = "examples/independent-py2/engine.py";

#[test]
fn the_fourth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    let report = common::engines::certify_script(common::python(), SCRIPT, Conformance::Documented);
    common::engines::assert_certified(&report);
    let section = common::engines::adjudication("## A fourth engine, choosing the unusual");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the fourth engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
