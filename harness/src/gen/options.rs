//! Proptest strategies that generate options scenarios: maps at every level mixing the twelve
//! keys, unknown keys, valid values, near-misses and arbitrary strings.

use std::collections::BTreeMap;

use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{OptionKey, OptionMaps, Product, RunMode, ShapeKind};
use proptest::prelude::*;

/// Values worth trying for `key`: valid ones, boundaries and near-misses.
pub fn interesting_values(key: OptionKey) -> Vec<&'static str> {
    let mut common = vec!["", " ", "0", "1", "-1", "+1", "01", "1 ", "x"];
    common.extend(match key {
        OptionKey::InputFusionSize => vec![
            "131072",
            "33554432",
            "33554433",
            "102400",
            "100KB",
            "99999999999999999999",
        ],
        OptionKey::StaticMemoryPolicy => vec!["2", "3", "4", "5"],
        OptionKey::ExternalWeight => vec!["2", "3"],
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes => {
            vec!["0,1,2", "2,0", "0,,1", "1,1", "7", "0,9", "4294967296"]
        }
        OptionKey::OutputReuseInputMemIndexes => vec![
            "0,1|6,8", "0,0", "0,1|0,2", "0,1|2,1", "0,1|", "0,1,2", "9,9",
        ],
        OptionKey::ExternalWeightDir => vec!["weights", "/abs/dir", "a\u{0}b"],
        _ => vec!["2", "true"],
    });
    common
}

fn value_for(key: OptionKey) -> impl Strategy<Value = String> {
    let values: Vec<String> = interesting_values(key)
        .into_iter()
        .map(str::to_owned)
        .collect();
    prop_oneof![
        4 => proptest::sample::select(values),
        1 => "[0-9,| +-]{0,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(16).collect()),
    ]
}

fn level_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::vec(entry_strategy(), 0..5)
        .prop_map(|entries| entries.into_iter().collect())
}

fn entry_strategy() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        8 => proptest::sample::select(OptionKey::ALL.to_vec())
            .prop_flat_map(|k| value_for(k).prop_map(move |v| (k.as_str().to_owned(), v))),
        1 => ("ge\\.[a-zA-Z_.]{0,20}", "[ -~]{0,6}"),
    ]
}

/// Option maps at the three levels.
pub fn option_maps() -> impl Strategy<Value = OptionMaps> {
    (level_map(), level_map(), level_map()).prop_map(|(global, session, graph)| OptionMaps {
        global,
        session,
        graph,
    })
}

/// Any run mode, shape and product.
pub fn context() -> impl Strategy<Value = (RunMode, ShapeKind, Product)> {
    (
        prop_oneof![Just(RunMode::Sync), Just(RunMode::Async)],
        prop_oneof![Just(ShapeKind::Static), Just(ShapeKind::Dynamic)],
        proptest::sample::select(Product::ALL.to_vec()),
    )
}

/// Options scenarios: any maps in any context.
pub fn scenario() -> impl Strategy<Value = OptionsScenario> {
    (option_maps(), 0u32..12, 0u32..12, context()).prop_map(
        |(options, inputs, outputs, (run_mode, shape, product))| OptionsScenario {
            options,
            graph: GraphFacts {
                inputs,
                outputs,
                shape,
            },
            run_mode,
            product,
        },
    )
}
