//! Properties of the weights capability on a real filesystem: on generated scenarios the
//! reference satisfies the oracle and the sandbox check, its files read back every constant byte
//! for byte, and hostile scenarios never make it panic or touch anything outside its sandbox.

use std::fs;

use ge_conformance::gen::weights::{hostile_scenario, scenario};
use ge_conformance::oracle::weights::{check_sandbox, judge, plant};
use ge_reference::Reference;
use ge_spec::vocab::weights::{NodeType, MAX_WEIGHT_BYTES};
use ge_spec::Backend;
use proptest::prelude::*;

/// The reference is held to every clause, its own choices included.
const STRICT: ge_conformance::judging::Judging = ge_conformance::judging::Judging::DEFAULT.strict();

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn reference_satisfies_oracle_and_sandbox(s in scenario()) {
        let sandbox = tempfile::tempdir().unwrap();
        plant(&s, sandbox.path()).unwrap();
        let mut obs = Reference.weights(&s, sandbox.path()).unwrap();
        obs.canonicalize();
        let judged = judge(&STRICT, &s, &obs);
        prop_assert!(judged.is_empty(), "oracle: {judged:?}\n{obs:#?}");
        let found = check_sandbox(&STRICT, &s, &obs, sandbox.path());
        prop_assert!(found.is_empty(), "sandbox: {found:?}\n{obs:#?}");
    }

    #[test]
    fn files_read_back_every_constant(mut s in scenario()) {
        // Keep the files to read them.
        s.unload = false;
        let sandbox = tempfile::tempdir().unwrap();
        let obs = Reference.weights(&s, sandbox.path()).unwrap();
        prop_assert!(obs.errors.is_empty(), "{:?}", obs.errors);
        for c in &s.constants {
            let node = obs.nodes.iter().find(|n| n.name == c.name).expect("every constant converted");
            let want = c.bytes(MAX_WEIGHT_BYTES).unwrap();
            if node.node_type != NodeType::FileConstant {
                prop_assert!(node.file.is_none());
                continue;
            }
            let file = fs::read(sandbox.path().join(node.file.as_deref().unwrap())).unwrap();
            let at = node.offset.unwrap() as usize;
            let len = node.length.unwrap() as usize;
            prop_assert_eq!(&file[at..at + len], want.as_slice(), "{}", c.name);
        }
    }

    #[test]
    fn hostile_scenarios_stay_inside_the_sandbox(s in hostile_scenario()) {
        let outer = tempfile::tempdir().unwrap();
        let sandbox = outer.path().join("sandbox");
        fs::create_dir(&sandbox).unwrap();
        let obs = Reference.weights(&s, &sandbox).unwrap();
        let around: Vec<_> = fs::read_dir(outer.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        prop_assert_eq!(around.len(), 1, "something was written next to the sandbox: {:?} ({:?})", around, obs);
        let found = check_sandbox(&STRICT, &s, &obs, &sandbox);
        prop_assert!(found.is_empty(), "sandbox: {found:?}\n{obs:#?}");
    }

    #[test]
    fn oracle_sees_every_mutation(s in scenario(), which in 0usize..5, pick in any::<prop::sample::Index>()) {
        // The oracle must not be a rubber stamp: any one change to a correct observation of a
        // successful load is caught, by judge or by the sandbox check.
        let sandbox = tempfile::tempdir().unwrap();
        let mut obs = Reference.weights(&s, sandbox.path()).unwrap();
        obs.canonicalize();
        prop_assume!(obs.errors.is_empty() && !obs.nodes.is_empty());
        let n = pick.index(obs.nodes.len());
        match which {
            0 => obs.nodes[n].offset = Some(obs.nodes[n].offset.unwrap_or(0) + 1),
            1 => obs.nodes[n].length = Some(obs.nodes[n].length.unwrap_or(0) + 1),
            2 => obs.nodes[n].node_type = match obs.nodes[n].node_type {
                NodeType::FileConstant => NodeType::Const,
                _ => NodeType::FileConstant,
            },
            3 => obs.dir.push('x'),
            _ => {
                if obs.files.is_empty() {
                    obs.removed.push("elsewhere".into());
                } else {
                    obs.files.remove(pick.index(obs.files.len()));
                }
            }
        }
        let caught = judge(&STRICT, &s, &obs).len() + check_sandbox(&STRICT, &s, &obs, sandbox.path()).len();
        prop_assert!(caught > 0, "mutation {which} went unnoticed: {obs:#?}");
    }
}
