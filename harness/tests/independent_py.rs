//! The second engine written from the text alone (`examples/independent-py`, Python, all five
//! capabilities, over the subprocess protocol) is certified at level `documented` with no
//! failure, and every clause it departs from at level `strict` is adjudicated in
//! `docs/independent.md`.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::Report;
use ge_spec::{Conformance, Profile};

fn run(level: Conformance) -> Report {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/independent-py/engine.py");
    let arg = format!("exec:python3 {}", shell_quote(&script.to_string_lossy()));
    let judging = Judging::new(Profile::Documented, level);
    let handle =
        backends::open(&arg, Duration::from_secs(30), judging.profile).expect("the engine starts");
    let cfg = Config {
        judging,
        backend_arg: arg,
        ..Config::default()
    };
    certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run")
}

#[test]
fn the_python_engine_is_certified_at_level_documented() {
    common::engines::assert_certified(&run(Conformance::Documented));
}

#[test]
fn its_deviations_at_level_strict_are_the_adjudicated_ones() {
    let report = run(Conformance::Strict);
    let doc = include_str!("../../docs/independent.md");
    let section = doc
        .split("## A second engine, in another language")
        .nth(1)
        .expect("docs/independent.md has the second engine's section");
    let unlisted = common::engines::unadjudicated(&report, section);
    assert!(
        unlisted.is_empty(),
        "at level strict the Python engine departs from {unlisted:?}, which docs/independent.md does not adjudicate"
    );
}
