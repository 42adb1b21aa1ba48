//! Proptest strategies that generate session scenarios (used by property tests and the certify
//! runner): short scripts over a few graph ids, with sizes drawn from a small set so that pools
//! grow, stay and are shared, refresh bases around the feature size, and a few script errors.

use std::collections::BTreeMap;

use ge_spec::vocab::session::{SessionEvent, SessionScenario};
use ge_spec::{OptionMaps, ShapeKind};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// Graph ids used by generated scripts: few, so that events meet loaded graphs often.
pub const GRAPH_IDS: u32 = 4;

/// Sizes in bytes: zero (weight 1 of 11), equal and growing requirements from a few sizes (6)
/// and below 100,000 (2), and of any width up to 64 bits (2, [`super::log_uniform`]).
pub fn bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        6 => prop::sample::select(vec![256u64, 1024, 4096, 65_536]),
        2 => 1u64..100_000,
        2 => super::log_uniform(64),
    ]
}

/// A shape kind.
pub fn shape() -> impl Strategy<Value = ShapeKind> {
    prop_oneof![Just(ShapeKind::Static), Just(ShapeKind::Dynamic)]
}

/// A graph-level option map for one load: absent (the scenario's map applies), or a map
/// setting the two options that take effect at graph level.
pub fn load_options() -> impl Strategy<Value = Option<BTreeMap<String, String>>> {
    option::weighted(
        0.3,
        (option::of(0u8..2), option::of(0u8..2)).prop_map(|(rzc, fbr)| {
            let mut m = BTreeMap::new();
            if let Some(v) = rzc {
                m.insert("ge.exec.reuseZeroCopyMemory".to_owned(), v.to_string());
            }
            if let Some(v) = fbr {
                m.insert("ge.featureBaseRefreshable".to_owned(), v.to_string());
            }
            m
        }),
    )
}

/// One event over graph ids `0..GRAPH_IDS`.
pub fn event() -> impl Strategy<Value = SessionEvent> {
    let id = 0..GRAPH_IDS;
    prop_oneof![
        4 => (id.clone(), shape(), bytes(), bytes(), load_options()).prop_map(
            |(graph, shape, feature_bytes, io_bytes, options)| SessionEvent::Load {
                graph,
                shape,
                feature_bytes,
                io_bytes,
                options,
            }
        ),
        3 => (id.clone(), 0u32..4).prop_map(|(graph, times)| SessionEvent::Execute { graph, times }),
        3 => (id.clone(), bytes()).prop_map(|(graph, bytes)| SessionEvent::Refresh { graph, bytes }),
        2 => id.prop_map(|graph| SessionEvent::Unload { graph }),
    ]
}

/// Valid session and global option maps for the three session options, each level set or not.
pub fn options() -> impl Strategy<Value = OptionMaps> {
    let policy = prop::sample::select(vec!["0", "2", "3", "4"]);
    let flag = prop::sample::select(vec!["0", "1"]);
    (
        option::of(policy.clone()),
        option::of(policy),
        option::of(flag.clone()),
        option::of(flag.clone()),
        option::of(flag),
    )
        .prop_map(|(global_policy, session_policy, rzc, fbr, graph_fbr)| {
            let mut maps = OptionMaps::default();
            if let Some(p) = global_policy {
                maps.global
                    .insert("ge.exec.staticMemoryPolicy".into(), p.into());
            }
            if let Some(p) = session_policy {
                maps.session
                    .insert("ge.exec.staticMemoryPolicy".into(), p.into());
            }
            if let Some(v) = rzc {
                maps.session
                    .insert("ge.exec.reuseZeroCopyMemory".into(), v.into());
            }
            if let Some(v) = fbr {
                maps.global
                    .insert("ge.featureBaseRefreshable".into(), v.into());
            }
            if let Some(v) = graph_fbr {
                maps.graph
                    .insert("ge.featureBaseRefreshable".into(), v.into());
            }
            maps
        })
}

/// A whole scenario: valid options and a script of up to `max_events` events.
pub fn scenario_with(max_events: usize) -> impl Strategy<Value = SessionScenario> {
    let env = prop::option::of(prop::sample::select(vec!["0", "1", "2", "3", "4", "", "x"]));
    (options(), vec(event(), 0..=max_events), env).prop_map(|(options, events, env)| {
        SessionScenario {
            options,
            events,
            ge_use_static_memory: env.map(str::to_owned),
        }
    })
}

/// A whole scenario with up to 24 events.
pub fn scenario() -> impl Strategy<Value = SessionScenario> {
    scenario_with(24)
}
