//! The fourth engine written from the text alone (`examples/independent-py2`, Python, all five
//! capabilities, over the subprocess protocol, its choices the unusual ones wherever the text is
//! silent) is certified at level `documented` with no failure, and every clause it departs from
//! at level `strict` is adjudicated in `docs/independent.md`.

use crate::common;

#[test]
fn the_fourth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    common::engines::assert_certified_and_adjudicated(
        common::python(),
        "examples/independent-py2/engine.py",
        "## A fourth engine, choosing the unusual",
        "the fourth engine",
    );
}
