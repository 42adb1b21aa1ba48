//! Proptest strategies that generate options scenarios: maps at every level mixing the twelve
//! keys, unknown keys, valid values, near-misses, numbers and index lists of every width and
//! length, and arbitrary strings.

use std::collections::BTreeMap;

use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{OptionKey, OptionMaps, Product, RunMode, ShapeKind};
use proptest::prelude::*;

/// Values worth trying for `key`: valid ones, boundaries and near-misses. The edges come from
/// the options table ([`ge_spec::Edges`]: a range's ends and the values just past them, an
/// enumeration's values and their neighbours) with the default; the near-misses of each
/// grammar that no table states follow.
pub fn interesting_values(key: OptionKey) -> Vec<String> {
    let mut values = table_values(key);
    let common = ["", " ", "0", "1", "-1", "+1", "01", "1 ", "x"];
    values.extend(common.iter().map(|s| (*s).to_owned()));
    values.extend(near_misses(key).iter().map(|s| (*s).to_owned()));
    let mut seen = std::collections::BTreeSet::new();
    values.retain(|v| seen.insert(v.clone()));
    values
}

/// The values of `key` the options table gives: its edges ([`ge_spec::Edges`]) and its
/// default.
fn table_values(key: OptionKey) -> Vec<String> {
    let row = ge_spec::Spec::embedded().option(key);
    let edges = row.edges();
    let mut values: Vec<String> = edges.accepted.into_iter().chain(edges.refused).collect();
    values.extend(row.default.clone());
    values.dedup();
    values
}

/// The near-misses of `key`'s grammar that no table states: spellings a parser may take for a
/// number, lists with a hole or a repeat, a path with a NUL.
fn near_misses(key: OptionKey) -> &'static [&'static str] {
    match key {
        OptionKey::InputFusionSize => &["102400", "100KB", "99999999999999999999"],
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes => {
            &["0,1,2", "2,0", "0,,1", "1,1", "7", "0,9", "4294967296"]
        }
        OptionKey::OutputReuseInputMemIndexes => &[
            "0,1|6,8", "0,0", "0,1|0,2", "0,1|2,1", "0,1|", "0,1,2", "9,9",
        ],
        OptionKey::ExternalWeightDir => &["weights", "/abs/dir", "a\u{0}b"],
        _ => &["true"],
    }
}

/// An index list of a log-uniform length up to 1,024 (a width of 0 to 10 bits), its items
/// small (weight 3 of 4) or of any width up to 64 bits (1 of 4), repeats allowed; pairs for
/// the pair list.
fn wide_list(key: OptionKey) -> impl Strategy<Value = String> {
    let item = prop_oneof![3 => 0u64..12, 1 => super::log_uniform(64)];
    let pairs = key == OptionKey::OutputReuseInputMemIndexes;
    super::log_uniform(10)
        .prop_flat_map(move |n| {
            let n = usize::try_from(n).unwrap_or(0);
            proptest::collection::vec((item.clone(), item.clone()), n..=n)
        })
        .prop_map(move |items| {
            let text: Vec<String> = items
                .into_iter()
                .map(|(a, b)| {
                    if pairs {
                        format!("{a},{b}")
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            text.join(if pairs { "|" } else { "," })
        })
}

/// A value for `key`: one the options table gives (its edges and default, weight 2 of 9), an
/// interesting value (3), a number of any width up to 64 bits (1, [`super::log_uniform`]), a
/// long index list of wide items (1), or arbitrary text (2).
fn value_for(key: OptionKey) -> impl Strategy<Value = String> {
    let values = interesting_values(key);
    let table = Some(table_values(key))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| values.clone());
    prop_oneof![
        2 => proptest::sample::select(table),
        3 => proptest::sample::select(values),
        1 => super::log_uniform(64).prop_map(|n| n.to_string()),
        1 => wide_list(key),
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

/// A graph's input or output count: below 12 (weight 4 of 5), else of any width up to 32 bits.
fn count() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0u32..12,
        1 => super::log_uniform(32).prop_map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
    ]
}

/// Options scenarios: any maps in any context.
pub fn scenario() -> impl Strategy<Value = OptionsScenario> {
    (option_maps(), count(), count(), context()).prop_map(
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
