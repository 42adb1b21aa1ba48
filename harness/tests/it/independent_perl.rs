//! The sixth engine written from the text alone (`examples/independent-perl`, Perl 5 with core
//! modules only, all five capabilities, over the subprocess protocol, told to pick unusual but
//! sound answers wherever the text is silent) is certified at level `documented` with no
//! failure, and every clause it departs from at level `strict` is adjudicated in
//! `docs/independent.md`.

use crate::common;

use ge_spec::Conformance;

const SCRIPT: &str = "examples/independent-perl/engine.pl";

#[test]
fn the_sixth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    let report = common::engines::certify_script("perl", SCRIPT, Conformance::Documented);
    common::engines::assert_certified(&report);
    let section = common::engines::adjudication("## A sixth engine, unusual, in Perl");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the sixth engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
