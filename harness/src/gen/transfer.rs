//! Proptest strategies that generate transfer scenarios (used by property tests and the certify runner).
//!
//! Sizes and thresholds gather around the boundaries the clauses care about (0, the threshold,
//! one over it, the default and the maximum of the options table) so that small runs reach
//! them, and reach the tails too: one input size in five is drawn log-uniformly over all 64 bits
//! ([`super::log_uniform`]), one valid threshold in five over the bits below the maximum's
//! top bit, and one refused value in four is a number of any width. Every bound is read from
//! the options table, so a changed bound moves the generators with it.

use ge_spec::vocab::transfer::{Placement, TransferInput, TransferScenario};
use ge_spec::{Level, OptionKey, OptionMaps, Product, RunMode, ShapeKind, Spec};
use proptest::prelude::*;

/// The threshold option's key.
pub const FUSION_KEY: &str = "ge.exec.input_fusion_size";
/// The batch-copy option's key.
pub const BATCH_KEY: &str = "ge.inputBatchCpy";
/// The threshold option's row of the options table.
fn fusion() -> &'static ge_spec::OptionSpec {
    Spec::embedded().option(OptionKey::InputFusionSize)
}

/// The largest threshold the option accepts (the table's `max`).
pub fn max_threshold() -> u64 {
    fusion().max.unwrap_or(0)
}

/// The threshold in force when none is set (the table's `default`).
pub fn default_threshold() -> u64 {
    fusion().default_number().unwrap_or(0)
}

/// A valid threshold, biased to the interesting values (weight 8 of 10), else of any width below
/// the maximum's top bit (2 of 10).
pub fn threshold() -> impl Strategy<Value = u64> {
    let max = max_threshold();
    let bits = fusion().range_bits().unwrap_or(1);
    prop_oneof![
        2 => super::log_uniform(bits - 1),
        8 => prop_oneof![
        Just(0u64),
        Just(1),
        Just(1024),
        Just(4096),
        Just(102_400),
        Just(default_threshold()),
        Just(max),
        0..=max,
        ],
    ]
}

/// An input size, biased to the interesting values: 0, around the usual thresholds, around the
/// maximum, and anything up to twice the maximum (weight 16 of 20), else of any width up to 64 bits
/// (4 of 20).
pub fn input_size() -> impl Strategy<Value = u64> {
    let (max, default) = (max_threshold(), default_threshold());
    prop_oneof![
        4 => super::log_uniform(64),
        16 => prop_oneof![
        Just(0u64),
        Just(1),
        Just(1023),
        Just(1024),
        Just(1025),
        Just(4096),
        Just(4097),
        Just(51_200),
        Just(102_400),
        Just(102_401),
        Just(default),
        Just(default + 1),
        Just(max),
        Just(max + 1),
        0u64..=2048,
        0u64..=2 * max,
        ],
    ]
}

/// Where an input sits: mostly on the host.
pub fn placement() -> impl Strategy<Value = Placement> {
    prop_oneof![4 => Just(Placement::Host), 1 => Just(Placement::Device)]
}

/// Up to `max` inputs with distinct indexes (0..n, in a shuffled order).
pub fn inputs(max: usize) -> impl Strategy<Value = Vec<TransferInput>> {
    prop::collection::vec((input_size(), placement()), 0..=max)
        .prop_map(|items| {
            items
                .into_iter()
                .enumerate()
                .map(|(i, (size, placement))| TransferInput {
                    // `max` is small; an index that did not fit would only make a duplicate.
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                    size,
                    placement,
                })
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
}

/// Up to `max` inputs whose indexes may repeat (for scenarios that must be refused).
pub fn inputs_any_index(max: usize) -> impl Strategy<Value = Vec<TransferInput>> {
    prop::collection::vec((0u32..8, input_size(), placement()), 0..=max).prop_map(|items| {
        items
            .into_iter()
            .map(|(index, size, placement)| TransferInput {
                index,
                size,
                placement,
            })
            .collect()
    })
}

/// Any product, listed for batch copy or not.
pub fn product() -> impl Strategy<Value = Product> {
    prop::sample::select(Product::ALL.to_vec())
}

/// A level.
pub fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(Level::ALL.to_vec())
}

/// Option maps with valid transfer settings: maybe a threshold, maybe a batch-copy value, each
/// at some level (sometimes at two levels, so precedence is exercised).
pub fn valid_options() -> impl Strategy<Value = OptionMaps> {
    let setting = |values: BoxedStrategy<String>| prop::collection::vec((level(), values), 0..=2);
    (
        setting(threshold().prop_map(|t| t.to_string()).boxed()),
        setting(prop_oneof![Just("0".to_owned()), Just("1".to_owned())].boxed()),
    )
        .prop_map(|(fusion, batch)| {
            let mut maps = OptionMaps::default();
            for (level, value) in fusion {
                maps.at_mut(level).insert(FUSION_KEY.to_owned(), value);
            }
            for (level, value) in batch {
                maps.at_mut(level).insert(BATCH_KEY.to_owned(), value);
            }
            maps
        })
}

/// A value `key` refuses: one the options table puts just outside its values (weight 2 of 7:
/// for the threshold `-1` and one past the maximum), a spelling no table states (3), or a
/// number of any width (2).
fn refused(key: OptionKey) -> impl Strategy<Value = String> {
    let table = Spec::embedded().option(key).edges().refused;
    prop_oneof![
        2 => prop::sample::select(table),
        3 => prop_oneof![
        Just(String::new()),
        Just("01".to_owned()),
        Just("2".to_owned()),
        Just("128KB".to_owned()),
        "[0-9a-z ]{0,6}",
        ],
        2 => super::log_uniform(64).prop_map(|n| n.to_string()),
    ]
}

/// Option maps that may also carry an invalid value of one of the two options (four in five).
pub fn any_options() -> impl Strategy<Value = OptionMaps> {
    let bad = prop_oneof![
        refused(OptionKey::InputFusionSize).prop_map(|v| (FUSION_KEY, v)),
        refused(OptionKey::InputBatchCpy).prop_map(|v| (BATCH_KEY, v)),
    ];
    (valid_options(), prop::option::weighted(0.8, (level(), bad))).prop_map(|(mut maps, bad)| {
        if let Some((level, (key, value))) = bad {
            maps.at_mut(level).insert(key.to_owned(), value);
        }
        maps
    })
}

/// A valid transfer scenario: distinct indexes, valid option values, any run mode, shape and
/// product, up to `max_inputs` inputs.
pub fn scenario(max_inputs: usize) -> impl Strategy<Value = TransferScenario> {
    (
        valid_options(),
        prop_oneof![Just(RunMode::Async), Just(RunMode::Sync)],
        product(),
        prop_oneof![3 => Just(ShapeKind::Static), 1 => Just(ShapeKind::Dynamic)],
        inputs(max_inputs),
    )
        .prop_map(
            |(options, run_mode, product, shape, inputs)| TransferScenario {
                options,
                run_mode,
                product,
                shape,
                inputs,
            },
        )
}

/// Any transfer scenario the vocabulary can express: invalid option values and repeated
/// indexes included. Backends must answer these without panicking.
pub fn any_scenario(max_inputs: usize) -> impl Strategy<Value = TransferScenario> {
    (
        any_options(),
        prop_oneof![Just(RunMode::Async), Just(RunMode::Sync)],
        product(),
        prop_oneof![Just(ShapeKind::Static), Just(ShapeKind::Dynamic)],
        prop_oneof![inputs(max_inputs), inputs_any_index(max_inputs)],
    )
        .prop_map(
            |(options, run_mode, product, shape, inputs)| TransferScenario {
                options,
                run_mode,
                product,
                shape,
                inputs,
            },
        )
}

/// `scenario` with the threshold set to `threshold` at the graph level (the narrowest, so it
/// wins over whatever the other levels say).
pub fn with_threshold(scenario: &TransferScenario, threshold: u64) -> TransferScenario {
    let mut s = scenario.clone();
    s.options
        .graph
        .insert(FUSION_KEY.to_owned(), threshold.to_string());
    s
}
