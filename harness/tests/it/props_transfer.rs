//! Property tests of the transfer capability on the reference: the plan is a partition of the
//! inputs, raising the threshold never un-fuses, the synchronous run fuses and batches nothing,
//! a batch never holds exactly one input, and the transfer oracle accepts every reference plan.

use ge_conformance::gen::transfer as gen;
use ge_conformance::oracle::transfer::judge;
use ge_reference::transfer::plan_observation;
use ge_spec::Profile;
use ge_spec::RunMode;
use proptest::prelude::*;

/// The reference is held to every clause, its own choices included.
const STRICT: ge_conformance::judging::Judging = ge_conformance::judging::Judging::DEFAULT.strict();

proptest! {
    // The planner is cheap; 256 cases of up to 24 inputs run in well under a second.
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// TRF-001: every input of a valid scenario is in exactly one group.
    #[test]
    fn every_input_in_exactly_one_group(s in gen::scenario(24)) {
        let o = plan_observation(Profile::Documented, &s);
        prop_assert!(o.errors.is_empty(), "valid scenario refused: {:?}", o.errors);
        let mut planned: Vec<u32> = o
            .fused
            .iter()
            .chain(&o.direct)
            .chain(&o.batched)
            .chain(&o.on_device)
            .copied()
            .collect();
        planned.sort_unstable();
        let mut inputs: Vec<u32> = s.inputs.iter().map(|i| i.index).collect();
        inputs.sort_unstable();
        prop_assert_eq!(planned, inputs);
    }

    /// IFS-010: a larger threshold keeps every input the smaller one fused.
    #[test]
    fn raising_the_threshold_never_unfuses(
        s in gen::scenario(24),
        a in gen::threshold(),
        b in gen::threshold(),
    ) {
        let (low, high) = (a.min(b), a.max(b));
        let at_low = plan_observation(Profile::Documented, &gen::with_threshold(&s, low));
        let at_high = plan_observation(Profile::Documented, &gen::with_threshold(&s, high));
        for index in &at_low.fused {
            prop_assert!(
                at_high.fused.contains(index),
                "input {} fused at {} but not at {}", index, low, high
            );
        }
        prop_assert!(at_high.fused_bytes >= at_low.fused_bytes);
    }

    /// IFS-003, IBC-005: the synchronous run fuses and batches nothing, whatever the options.
    #[test]
    fn sync_run_fuses_and_batches_nothing(mut s in gen::scenario(24)) {
        s.run_mode = RunMode::Sync;
        let o = plan_observation(Profile::Documented, &s);
        prop_assert!(o.fused.is_empty());
        prop_assert_eq!(o.fused_bytes, 0);
        prop_assert!(o.batched.is_empty());
    }

    /// IBC-013: with batch copy forced on for an asynchronous run, a batch never holds exactly
    /// one input.
    #[test]
    fn batch_never_holds_exactly_one(mut s in gen::scenario(12)) {
        s.options.graph.insert(gen::BATCH_KEY.to_owned(), "1".to_owned());
        s.run_mode = RunMode::Async;
        let o = plan_observation(Profile::Documented, &s);
        prop_assert_ne!(o.batched.len(), 1);
    }

    /// The oracle finds nothing wrong with any reference answer, invalid scenarios included,
    /// and the reference never panics on them.
    #[test]
    fn oracle_accepts_every_reference_plan(s in gen::any_scenario(24)) {
        let mut o = plan_observation(Profile::Documented, &s);
        o.canonicalize();
        let violations = judge(&STRICT, &s, &o);
        prop_assert!(violations.is_empty(), "{:?}\nscenario: {}", violations,
            serde_json::to_string(&s).unwrap_or_default());
    }
}
