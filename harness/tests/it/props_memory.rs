//! Properties of the memory capability over generated scenarios: the oracle accepts every
//! reference plan, and turning reuse on never raises the peak.

use ge_conformance::gen::memory::{scenario, workload};
use ge_conformance::oracle::memory::judge;
use ge_reference::memory::observe;
use ge_spec::Profile;
use proptest::prelude::*;

/// The reference is held to every clause, its own choices included.
const STRICT: ge_conformance::judging::Judging = ge_conformance::judging::Judging::DEFAULT.strict();

proptest! {
    // Scenarios whose options stop planning (misaligned reused I/O) are skipped by the reuse
    // property; about a quarter of draws, so the reject budget is raised.
    #![proptest_config(ProptestConfig { max_global_rejects: 1 << 20, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn the_oracle_accepts_every_reference_plan(s in scenario()) {
        let obs = observe(Profile::Documented, &s);
        let violations = judge(&STRICT, &s, &obs);
        prop_assert!(violations.is_empty(), "{violations:#?}\nobservation: {obs:#?}");
    }

    #[test]
    fn reuse_never_raises_the_peak(s in scenario()) {
        let mut on = s.clone();
        on.options.global.remove("ge.exec.disableReuseMemory");
        on.options.session.remove("ge.exec.disableReuseMemory");
        on.options.graph.insert("ge.exec.disableReuseMemory".into(), "0".into());
        let planned = |o: &ge_spec::vocab::MemoryObservation| o.offsets.len() == s.tensors.len();
        let mut off = s.clone();
        off.options.graph.insert("ge.exec.disableReuseMemory".into(), "1".into());
        let (on, off) = (observe(Profile::Documented, &on), observe(Profile::Documented, &off));
        prop_assume!(planned(&on) && planned(&off));
        prop_assert!(on.peak_bytes <= off.peak_bytes, "reuse on: {}, off: {}", on.peak_bytes, off.peak_bytes);
    }

    #[test]
    fn the_oracle_accepts_plans_of_plain_workloads(s in workload(200)) {
        let obs = observe(Profile::Documented, &s);
        let violations = judge(&STRICT, &s, &obs);
        prop_assert!(violations.is_empty(), "{violations:#?}");
    }
}
