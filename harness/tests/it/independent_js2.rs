//! The fifth engine written from the text alone (`examples/independent-js2`, JavaScript, all
//! five capabilities, over the subprocess protocol, inventive wherever the text is silent) is
//! certified at level `documented` with no failure, and every clause it departs from at level
//! `strict` is adjudicated in `docs/independent.md`.

use crate::common;

#[test]
fn the_fifth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    common::engines::assert_certified_and_adjudicated(
        "node",
        "examples/independent-js2/engine.js",
        "## A fifth engine, inventive, in JavaScript",
        "the fifth engine",
    );
}
