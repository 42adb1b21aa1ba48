//! Properties of the session capability over generated scripts: the oracle accepts every
//! reference observation, and it notices when any one trace entry or refresh result is changed.

use ge_conformance::gen::session::{event, scenario};
use ge_conformance::oracle::session::judge;
use ge_spec::vocab::session::{SessionObservation, SessionScenario, TraceAction};
use ge_spec::Profile;
use proptest::prelude::*;

/// The reference is held to every clause, its own choices included.
const STRICT: ge_conformance::judging::Judging = ge_conformance::judging::Judging::DEFAULT.strict();

fn reference(s: &SessionScenario) -> SessionObservation {
    reference_under(Profile::Documented, s)
}

fn reference_under(profile: Profile, s: &SessionScenario) -> SessionObservation {
    ge_reference::session::run(profile, s).expect("the reference runs sessions")
}

/// The strict judging under the upstream profile.
fn upstream() -> ge_conformance::judging::Judging {
    ge_conformance::judging::Judging {
        profile: Profile::Upstream,
        ..STRICT
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn oracle_accepts_every_reference_trace(s in scenario()) {
        let obs = reference(&s);
        let found = judge(&STRICT, &s, &obs);
        prop_assert!(found.is_empty(), "{:#?}\non {}", found, serde_json::to_string(&s).unwrap());
    }

    #[test]
    fn dropping_any_trace_entry_is_noticed(s in scenario(), pick in any::<prop::sample::Index>()) {
        let mut obs = reference(&s);
        prop_assume!(!obs.trace.is_empty());
        let i = pick.index(obs.trace.len());
        obs.trace.remove(i);
        prop_assert!(!judge(&STRICT, &s, &obs).is_empty());
    }

    #[test]
    fn resizing_any_trace_entry_is_noticed(s in scenario(), pick in any::<prop::sample::Index>()) {
        let mut obs = reference(&s);
        prop_assume!(!obs.trace.is_empty());
        let i = pick.index(obs.trace.len());
        obs.trace[i].bytes += 1;
        prop_assert!(!judge(&STRICT, &s, &obs).is_empty());
    }

    #[test]
    fn flipping_any_action_is_noticed(s in scenario(), pick in any::<prop::sample::Index>()) {
        let mut obs = reference(&s);
        prop_assume!(!obs.trace.is_empty());
        let i = pick.index(obs.trace.len());
        obs.trace[i].action = match obs.trace[i].action {
            TraceAction::Alloc => TraceAction::Free,
            TraceAction::Free => TraceAction::Alloc,
        };
        prop_assert!(!judge(&STRICT, &s, &obs).is_empty());
    }

    #[test]
    fn flipping_any_refresh_result_is_noticed(s in scenario(), pick in any::<prop::sample::Index>()) {
        let mut obs = reference(&s);
        prop_assume!(!obs.refreshes.is_empty());
        let i = pick.index(obs.refreshes.len());
        obs.refreshes[i].ok = !obs.refreshes[i].ok;
        prop_assert!(!judge(&STRICT, &s, &obs).is_empty());
    }

    /// Option values good and bad, at every level: rejected options stop the script, accepted
    /// ones run it, and either way the oracle agrees with the reference.
    #[test]
    fn oracle_accepts_reference_under_any_option_values(
        values in prop::collection::vec(
            (0usize..3, 0usize..3, prop::sample::select(vec!["0", "1", "2", "3", "4", "x", "", "01"])),
            0..4,
        ),
        events in prop::collection::vec(event(), 0..12),
        env in prop::option::of(prop::sample::select(vec!["2", "3", "4", "x"])),
    ) {
        let keys = ["ge.exec.staticMemoryPolicy", "ge.exec.reuseZeroCopyMemory", "ge.featureBaseRefreshable"];
        let mut s = SessionScenario {
            options: Default::default(),
            events,
            ge_use_static_memory: env.map(str::to_owned),
        };
        for (level, key, value) in values {
            let map = match level {
                0 => &mut s.options.global,
                1 => &mut s.options.session,
                _ => &mut s.options.graph,
            };
            map.insert(keys[key].to_owned(), value.to_owned());
        }
        let obs = reference(&s);
        let found = judge(&STRICT, &s, &obs);
        prop_assert!(found.is_empty(), "{:#?}\non {}", found, serde_json::to_string(&s).unwrap());
    }

    /// Under the upstream profile too (where the I/O bytes of static-shape graphs go into the
    /// feature memory or nowhere, and the static pool grows by blocks), the oracle accepts the
    /// upstream reference's trace, and notices any one entry dropped or resized.
    #[test]
    fn oracle_accepts_every_upstream_reference_trace(s in scenario()) {
        let obs = reference_under(Profile::Upstream, &s);
        let found = judge(&upstream(), &s, &obs);
        prop_assert!(found.is_empty(), "{:#?}\non {}", found, serde_json::to_string(&s).unwrap());
    }

    #[test]
    fn changing_any_upstream_trace_entry_is_noticed(
        s in scenario(),
        pick in any::<prop::sample::Index>(),
        drop in any::<bool>(),
    ) {
        let mut obs = reference_under(Profile::Upstream, &s);
        prop_assume!(!obs.trace.is_empty());
        let i = pick.index(obs.trace.len());
        if drop {
            obs.trace.remove(i);
        } else {
            obs.trace[i].bytes += 1;
        }
        prop_assert!(!judge(&upstream(), &s, &obs).is_empty());
    }

    /// Under the upstream profile, option values good and bad at every level and in one load's
    /// own map, among them the values GE refuses graph by graph (SES-017's upstream entry): the
    /// oracle accepts the upstream reference, and notices a trace entry dropped or a refused
    /// load's error left out.
    #[test]
    fn oracle_judges_upstream_refusals_graph_by_graph(
        values in prop::collection::vec(
            (0usize..3, 0usize..5, prop::sample::select(vec!["0", "1", "2", "x", ""])),
            0..4,
        ),
        own in prop::option::of((0usize..12, 0usize..5, prop::sample::select(vec!["1", "2", "x"]))),
        events in prop::collection::vec(event(), 0..12),
        pick in any::<prop::sample::Index>(),
    ) {
        let keys = [
            "ge.exec.staticMemoryPolicy",
            "ge.exec.reuseZeroCopyMemory",
            "ge.featureBaseRefreshable",
            "ge.exec.atomicCleanPolicy",
            "ge.externalWeight",
        ];
        let mut s = SessionScenario {
            options: Default::default(),
            events,
            ge_use_static_memory: None,
        };
        for (level, key, value) in values {
            let map = match level {
                0 => &mut s.options.global,
                1 => &mut s.options.session,
                _ => &mut s.options.graph,
            };
            map.insert(keys[key].to_owned(), value.to_owned());
        }
        if let Some((at, key, value)) = own {
            if let Some(ge_spec::vocab::session::SessionEvent::Load { options, .. }) = s.events.get_mut(at) {
                options.get_or_insert_with(Default::default).insert(keys[key].to_owned(), value.to_owned());
            }
        }
        let obs = reference_under(Profile::Upstream, &s);
        let found = judge(&upstream(), &s, &obs);
        prop_assert!(found.is_empty(), "{:#?}\non {}", found, serde_json::to_string(&s).unwrap());
        if !obs.trace.is_empty() {
            let mut dropped = obs.clone();
            dropped.trace.remove(pick.index(obs.trace.len()));
            prop_assert!(!judge(&upstream(), &s, &dropped).is_empty());
        }
        let refused: Vec<usize> = (0..obs.errors.len())
            .filter(|&i| obs.errors[i].subject.graph.is_some())
            .collect();
        if !refused.is_empty() {
            let mut silent = obs.clone();
            silent.errors.remove(refused[pick.index(refused.len())]);
            prop_assert!(!judge(&upstream(), &s, &silent).is_empty());
        }
    }

    #[test]
    fn scenarios_survive_json(s in scenario()) {
        let text = serde_json::to_string(&s).unwrap();
        let back: SessionScenario = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, s);
    }
}

/// The largest script the contract runs, without zero-copy reuse: 200000 trace entries, which
/// the oracle accepts (matching per step by counts, so this stays fast). Kept out of the case
/// tables because every fault test would replay it.
#[test]
fn oracle_accepts_the_largest_script() {
    let s: SessionScenario = serde_json::from_str(
        r#"{"events": [
            {"event": "load", "graph": 1, "feature_bytes": 0, "io_bytes": 8},
            {"event": "execute", "graph": 1, "times": 100000}
        ]}"#,
    )
    .unwrap();
    let obs = reference(&s);
    assert!(obs.errors.is_empty(), "{:?}", obs.errors);
    assert_eq!(obs.trace.len(), 200_000);
    let found = judge(&STRICT, &s, &obs);
    assert!(found.is_empty(), "{:?}", &found[..found.len().min(5)]);
}
