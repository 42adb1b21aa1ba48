//! The sixth engine written from the text alone (`examples/independent-perl`, Perl 5 with core
//! modules only, all five capabilities, over the subprocess protocol, told to pick unusual but
//! sound answers wherever the text is silent) is certified at level `documented` with no
//! failure, and every clause it departs from at level `strict` is adjudicated in
//! `docs/independent.md`.

use crate::common;

#[test]
fn the_sixth_engine_is_certified_at_level_documented_and_departs_only_where_adjudicated() {
    common::engines::assert_certified_and_adjudicated(
        "perl",
        "examples/independent-perl/engine.pl",
        "## A sixth engine, unusual, in Perl",
        "the sixth engine",
    );
}
