//! Every case of the spec tables run against the reference backend of its profile: it must pass
//! them all, under both profiles, at level strict (its own choices bind it).

use ge_conformance::judging::Judging;
use ge_conformance::runner::{run_case, Verdict};
use ge_reference::Reference;
use ge_spec::{Backend, Conformance, Observation, Profile, Scenario, Spec, Subject};

#[test]
fn reference_passes_every_case() {
    let spec = Spec::embedded();
    let mut failures = Vec::new();
    for profile in Profile::ALL {
        for case in spec.cases_in(profile) {
            let judging = Judging::new(profile, Conformance::Strict);
            match run_case(&judging, &Reference::new(profile), case) {
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

/// The runner refuses a `setup` step that leaves the sandbox before any backend is asked, so no
/// case can show the reference's own guard; callers that use the reference directly rely on
/// it. Each step here is bad in one way only: its path, or its link's target.
#[test]
fn reference_called_directly_refuses_setup_steps_that_leave_the_sandbox() {
    let steps = [
        serde_json::json!({ "step": "dir", "path": "../out" }),
        serde_json::json!({ "step": "file", "path": ".", "hex": "00" }),
        serde_json::json!({ "step": "symlink", "path": "inside", "target": "../../etc" }),
    ];
    for profile in Profile::ALL {
        for step in &steps {
            let scenario: Scenario = serde_json::from_value(serde_json::json!({
                "capability": "weights",
                "root_graph": "net",
                "pid": 1,
                "session_id": 2,
                "options": { "session": { "ge.externalWeight": "1" } },
                "setup": [step],
                "constants": [{ "name": "a", "type": "Const", "hex": "00" }],
            }))
            .expect("a weights scenario");
            let sandbox = tempfile::tempdir().expect("a temporary directory");
            let Ok(Observation::Weights(o)) =
                Reference::new(profile).answer(&scenario, sandbox.path())
            else {
                panic!("the reference answers weights scenarios");
            };
            let refused: Vec<_> = o
                .errors
                .iter()
                .map(|d| (d.clause.as_str(), d.subject.clone()))
                .collect();
            assert_eq!(
                refused,
                [("WGT-001", Subject::setup(0))],
                "{profile} {step}"
            );
            assert!(o.files.is_empty() && o.nodes.is_empty(), "{profile} {step}");
            let left: Vec<_> = std::fs::read_dir(sandbox.path())
                .expect("readable")
                .collect();
            assert!(left.is_empty(), "{profile} {step}: wrote {left:?}");
        }
    }
}
