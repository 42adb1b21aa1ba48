//! Proptest strategies that generate weights scenarios (used by property tests and the certify
//! runner). Generated scenarios are valid and portable: every path stays inside the sandbox, and
//! weights are drawn from a small pool so identical contents (shared files) are common.

use ge_spec::vocab::weights::{ConstNode, Fill, NodeType, WeightsScenario, WorkPathEnv};
use ge_spec::OptionMaps;
use proptest::prelude::*;

/// The widest run of one byte drawn, in bits: six constants of at most 1 MiB each stay far
/// under `MAX_WEIGHT_BYTES` (64 MiB) and keep the sandboxes small.
pub const FILL_BITS: u32 = 20;

/// The bytes of one constant: mostly from a small pool (so duplicates occur), sometimes random
/// hex, sometimes a run of one byte, whose length is below 2048 (weight 3 of 4) or of any width
/// up to [`FILL_BITS`] bits (1 of 4).
pub fn weight_bytes() -> impl Strategy<Value = (Option<String>, Option<Fill>)> {
    prop_oneof![
        3 => prop::sample::select(vec!["", "00", "ff", "00010203", "deadbeef"])
            .prop_map(|h| (Some(h.to_owned()), None)),
        2 => prop::collection::vec(any::<u8>(), 0..48)
            .prop_map(|b| (Some(ge_spec::vocab::weights::encode_hex(&b)), None)),
        1 => (
            any::<u8>(),
            prop_oneof![3 => 0u64..2048, 1 => super::log_uniform(FILL_BITS)]
        )
            .prop_map(|(byte, len)| (None, Some(Fill { byte, len }))),
    ]
}

/// Up to `max` constants with unique names, of type Const or Constant.
pub fn constants(max: usize) -> impl Strategy<Value = Vec<ConstNode>> {
    prop::collection::vec((weight_bytes(), any::<bool>()), 0..=max).prop_map(|items| {
        items
            .into_iter()
            .enumerate()
            .map(|(i, ((hex, fill), constant))| ConstNode {
                name: format!("c{i}"),
                node_type: if constant {
                    NodeType::Constant
                } else {
                    NodeType::Const
                },
                hex,
                fill,
            })
            .collect()
    })
}

/// The `ASCEND_WORK_PATH` states, with sandbox-relative paths.
pub fn work_path() -> impl Strategy<Value = WorkPathEnv> {
    prop_oneof![
        Just(WorkPathEnv::Unset),
        Just(WorkPathEnv::Empty),
        prop::sample::select(vec![".", "ascend", "a/b"])
            .prop_map(|p| WorkPathEnv::Set { path: p.to_owned() }),
    ]
}

/// A valid weights scenario: mode 0, 1 or 2 at the global or session level, an optional
/// relative `ge.externalWeightDir`, any `ASCEND_WORK_PATH` state, and maybe an unload.
pub fn scenario() -> impl Strategy<Value = WeightsScenario> {
    (
        prop::option::of((prop::sample::select(vec!["0", "1", "2"]), any::<bool>())),
        prop::option::of((
            prop::sample::select(vec!["user", "user/deep", "../up", "."]),
            any::<bool>(),
        )),
        constants(6),
        work_path(),
        (0u32..5, 0u64..5),
        prop::sample::select(vec!["", "run", "run/sub"]),
        prop::sample::select(vec!["net", "g_1"]),
        any::<bool>(),
    )
        .prop_map(
            |(mode, dir, constants, env, (pid, session_id), work, graph, unload)| {
                let mut options = OptionMaps::default();
                if let Some((m, global)) = mode {
                    let map = if global {
                        &mut options.global
                    } else {
                        &mut options.session
                    };
                    map.insert("ge.externalWeight".into(), m.into());
                }
                if let Some((d, global)) = dir {
                    let map = if global {
                        &mut options.global
                    } else {
                        &mut options.session
                    };
                    map.insert("ge.externalWeightDir".into(), d.into());
                }
                // `../up` from the sandbox itself would leave it: pin a working directory.
                let work = if work.is_empty() && dir.is_some_and(|(d, _)| d.starts_with("..")) {
                    "run"
                } else {
                    work
                };
                WeightsScenario {
                    options,
                    root_graph: graph.to_owned(),
                    constants,
                    ascend_work_path: env,
                    pid,
                    session_id,
                    work_dir: work.to_owned(),
                    setup: Vec::new(),
                    unload,
                }
            },
        )
}

/// Any scenario, valid or not: hostile paths (absolute, `..` escapes, NUL), odd names, bad hex.
/// For robustness properties: a backend must answer it without panicking or leaving the sandbox.
pub fn hostile_scenario() -> impl Strategy<Value = WeightsScenario> {
    let path = prop_oneof![
        Just(String::new()),
        Just("/".to_owned()),
        Just("..".to_owned()),
        Just("../../x".to_owned()),
        Just("a/../../b".to_owned()),
        Just("a\0b".to_owned()),
        "[a-z./]{0,12}",
    ];
    (
        scenario(),
        path.clone(),
        path.clone(),
        path,
        "[a-z./]{0,6}",
        prop::option::of("[0-9a-gz]{0,5}"),
    )
        .prop_map(|(mut s, dir, work, env, graph, bad_hex)| {
            s.options.session.insert("ge.externalWeightDir".into(), dir);
            s.work_dir = work;
            s.ascend_work_path = WorkPathEnv::Set { path: env };
            s.root_graph = graph;
            if let Some(h) = bad_hex {
                s.constants.push(ConstNode {
                    name: "odd".into(),
                    node_type: NodeType::Const,
                    hex: Some(h),
                    fill: None,
                });
            }
            s
        })
}
