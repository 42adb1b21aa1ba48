//! Every case of the spec tables run against the reference backend of its profile: it must pass
//! them all, under both profiles.

use ge_conformance::runner::{run_case_in, Verdict};
use ge_reference::Reference;
use ge_spec::{Profile, Spec};

#[test]
fn reference_passes_every_case() {
    let spec = Spec::embedded();
    let mut failures = Vec::new();
    for profile in Profile::ALL {
        for case in spec.cases_in(profile) {
            match run_case_in(profile, &Reference::new(profile), case) {
                Verdict::Pass => {}
                other => failures.push(format!("{profile} {}: {other:?}", case.full_name())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
