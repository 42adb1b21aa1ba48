//! Snapshots of the reference plans for the source text's worked examples, taken from the case
//! tables so the scenario is written down once.

mod common;

use ge_reference::transfer::plan_observation;
use ge_spec::vocab::transfer::TransferScenario;
use ge_spec::Profile;
use ge_spec::{Scenario, Spec};

fn scenario(full_name: &str) -> TransferScenario {
    let case = Spec::embedded()
        .cases()
        .iter()
        .find(|c| c.full_name() == full_name)
        .unwrap_or_else(|| panic!("no case {full_name} in the tables"));
    match &case.case.scenario {
        Scenario::Transfer(s) => s.clone(),
        other => panic!("{full_name} is a {} case", other.capability()),
    }
}

#[test]
fn ten_inputs_threshold_100kib() {
    let plan = plan_observation(
        Profile::Documented,
        &scenario("transfer-examples/ten-inputs-threshold-100kib"),
    );
    common::with_snapshots(|| insta::assert_json_snapshot!(plan));
}

#[test]
fn ten_inputs_threshold_0() {
    let plan = plan_observation(
        Profile::Documented,
        &scenario("transfer-examples/ten-inputs-threshold-0"),
    );
    common::with_snapshots(|| insta::assert_json_snapshot!(plan));
}

#[test]
fn five_inputs_four_fused_one_alone() {
    let plan = plan_observation(
        Profile::Documented,
        &scenario("transfer-examples/five-inputs-four-fused-one-alone"),
    );
    common::with_snapshots(|| insta::assert_json_snapshot!(plan));
}
