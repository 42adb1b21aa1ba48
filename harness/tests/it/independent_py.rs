//! The second engine written from the text alone (`examples/independent-py`, Python, all five
//! capabilities, over the subprocess protocol) is certified at level `documented` with no
//! failure, and every clause it departs from at level `strict` is adjudicated in
//! `docs/independent.md`.

use crate::common;

#[test]
fn the_python_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    common::engines::assert_certified_and_adjudicated(
        common::python(),
        "examples/independent-py/engine.py",
        "## A second engine, in another language",
        "the Python engine",
    );
}
