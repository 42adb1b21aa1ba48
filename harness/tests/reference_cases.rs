//! Every case of the spec tables run against the reference backend: it must pass them all.

use ge_conformance::runner::{run_case, Verdict};
use ge_reference::Reference;
use ge_spec::Spec;

#[test]
fn reference_passes_every_case() {
    let spec = Spec::embedded();
    let mut failures = Vec::new();
    for case in spec.cases() {
        match run_case(&Reference, case) {
            Verdict::Pass => {}
            other => failures.push(format!("{}: {other:?}", case.full_name())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
