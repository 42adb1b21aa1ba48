//! Unit tests: the worked examples of the documentation text, and the engine's own decisions
//! (numbered as in `NOTES.md`).

use std::collections::BTreeMap;

use ge_spec::diag::{Diagnostic, Part, Subject};
use ge_spec::option::{Level, OptionKey, Product, RunMode, ShapeKind, Source};
use ge_spec::vocab::memory::Role;
use ge_spec::vocab::memory::{Alias, RunAddresses, Tensor};
use ge_spec::vocab::transfer::{Placement, TransferInput};
use ge_spec::vocab::{
    GraphFacts, MemoryObservation, MemoryScenario, OptionMaps, OptionsObservation, OptionsScenario,
    TransferObservation, TransferScenario,
};
use ge_spec::Backend;

use crate::TextEngine;

const KB: u64 = 1024;

fn maps(global: &[(&str, &str)], session: &[(&str, &str)], graph: &[(&str, &str)]) -> OptionMaps {
    let m = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    OptionMaps {
        global: m(global),
        session: m(session),
        graph: m(graph),
    }
}

fn graph_only(pairs: &[(&str, &str)]) -> OptionMaps {
    maps(&[], &[], pairs)
}

fn options(options: OptionMaps) -> OptionsObservation {
    TextEngine
        .options(&OptionsScenario {
            options,
            ..OptionsScenario::default()
        })
        .expect("options are supported")
}

fn options_with(options: OptionMaps, graph: GraphFacts) -> OptionsObservation {
    TextEngine
        .options(&OptionsScenario {
            options,
            graph,
            ..OptionsScenario::default()
        })
        .expect("options are supported")
}

/// The (clause, key, level, subject) of each diagnostic: what is judged.
fn ids(diags: &[Diagnostic]) -> Vec<(String, Option<String>, Option<Level>, Subject)> {
    sorted(
        diags
            .iter()
            .map(|d| (d.clause.clone(), d.key.clone(), d.level, d.subject.clone()))
            .collect(),
    )
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// A list of expected diagnostic identities, in canonical order.
macro_rules! set {
    ($($x:expr),* $(,)?) => {
        sorted(vec![$($x),*])
    };
}

fn id(
    clause: &str,
    key: OptionKey,
    level: Option<Level>,
    subject: Subject,
) -> (String, Option<String>, Option<Level>, Subject) {
    (
        clause.to_owned(),
        Some(key.as_str().to_owned()),
        level,
        subject,
    )
}

fn effective(obs: &OptionsObservation, key: OptionKey) -> (String, Source) {
    let e = &obs.effective[key.as_str()];
    (e.value.clone(), e.from)
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

#[test]
fn defaults_when_nothing_is_set() {
    let obs = options(OptionMaps::default());
    assert_eq!(obs.effective.len(), 12);
    assert!(obs.errors.is_empty() && obs.warnings.is_empty());
    assert!(obs.rejected.is_empty() && obs.passthrough.is_empty());
    let expect = [
        (OptionKey::AtomicCleanPolicy, "0"),
        (OptionKey::DisableReuseMemory, "0"),
        (OptionKey::InputFusionSize, "131072"),
        (OptionKey::InputReuseMemIndexes, ""),
        (OptionKey::ReuseZeroCopyMemory, "0"),
        (OptionKey::StaticMemoryPolicy, "0"),
        (OptionKey::OutputReuseInputMemIndexes, ""),
        (OptionKey::OutputReuseMemIndexes, ""),
        (OptionKey::ExternalWeight, "0"),
        (OptionKey::ExternalWeightDir, ""),
        (OptionKey::InputBatchCpy, "0"),
        (OptionKey::FeatureBaseRefreshable, "0"),
    ];
    for (key, value) in expect {
        assert_eq!(
            effective(&obs, key),
            (value.to_owned(), Source::Default),
            "{key}"
        );
    }
}

#[test]
fn configuration_examples_of_the_text_are_accepted() {
    let obs = options(maps(
        &[],
        &[
            ("ge.exec.atomicCleanPolicy", "0"),
            ("ge.exec.disableReuseMemory", "0"),
            ("ge.exec.input_fusion_size", "131072"),
            ("ge.exec.reuseZeroCopyMemory", "0"),
            ("ge.exec.staticMemoryPolicy", "0"),
            ("ge.externalWeight", "1"),
            ("ge.externalWeightDir", "$HOME/your_tmp_path"),
            ("ge.inputBatchCpy", "0"),
            ("ge.featureBaseRefreshable", "0"),
        ],
        &[
            ("ge.exec.inputReuseMemIndexes", "0,1,2"),
            ("ge.exec.outputReuseMemIndexes", "0,1,2"),
            ("ge.exec.outputReuseInputMemIndexes", "0,1|6,8"),
        ],
    ));
    // One input and one output by default: the index examples assume more.
    assert!(obs.errors.iter().all(|d| d.clause == "ORI-003"));
    let obs = options_with(
        maps(
            &[],
            &[
                ("ge.externalWeight", "1"),
                ("ge.externalWeightDir", "$HOME/your_tmp_path"),
            ],
            &[
                ("ge.exec.inputReuseMemIndexes", "0,1,2"),
                ("ge.exec.outputReuseMemIndexes", "0,1,2"),
                ("ge.exec.outputReuseInputMemIndexes", "0,1|6,8"),
            ],
        ),
        GraphFacts {
            inputs: 10,
            outputs: 10,
            shape: ShapeKind::Static,
        },
    );
    assert!(obs.errors.is_empty() && obs.warnings.is_empty(), "{obs:?}");
    assert_eq!(
        effective(&obs, OptionKey::OutputReuseInputMemIndexes),
        ("0,1|6,8".to_owned(), Source::Graph)
    );
    assert_eq!(
        effective(&obs, OptionKey::ExternalWeightDir),
        ("$HOME/your_tmp_path".to_owned(), Source::Session)
    );
}

/// N1: the narrowest level that sets an option wins.
#[test]
fn narrowest_level_wins() {
    let key = "ge.exec.disableReuseMemory";
    let obs = options(maps(&[(key, "1")], &[(key, "0")], &[(key, "1")]));
    assert_eq!(
        effective(&obs, OptionKey::DisableReuseMemory),
        ("1".to_owned(), Source::Graph)
    );
    let obs = options(maps(&[(key, "1")], &[(key, "0")], &[]));
    assert_eq!(
        effective(&obs, OptionKey::DisableReuseMemory),
        ("0".to_owned(), Source::Session)
    );
    let obs = options(maps(&[(key, "1")], &[], &[]));
    assert_eq!(
        effective(&obs, OptionKey::DisableReuseMemory),
        ("1".to_owned(), Source::Global)
    );
}

/// N2: a setting at a level where the option does not take effect is ignored, with OPT-002,
/// and is not parsed.
#[test]
fn wrong_level_is_ignored_with_a_warning() {
    let obs = options(maps(
        &[("ge.exec.atomicCleanPolicy", "1")],
        &[("ge.exec.inputReuseMemIndexes", "0")],
        &[
            ("ge.exec.staticMemoryPolicy", "2"),
            ("ge.externalWeight", "not even a number"),
        ],
    ));
    assert!(obs.errors.is_empty());
    assert_eq!(
        ids(&obs.warnings),
        set![
            id(
                "OPT-002",
                OptionKey::AtomicCleanPolicy,
                Some(Level::Global),
                Subject::default()
            ),
            id(
                "OPT-002",
                OptionKey::InputReuseMemIndexes,
                Some(Level::Session),
                Subject::default()
            ),
            id(
                "OPT-002",
                OptionKey::StaticMemoryPolicy,
                Some(Level::Graph),
                Subject::default()
            ),
            id(
                "OPT-002",
                OptionKey::ExternalWeight,
                Some(Level::Graph),
                Subject::default()
            ),
        ]
    );
    assert_eq!(
        effective(&obs, OptionKey::AtomicCleanPolicy),
        ("0".to_owned(), Source::Default)
    );
    assert_eq!(
        effective(&obs, OptionKey::ExternalWeight),
        ("0".to_owned(), Source::Default)
    );
}

/// N3: plain decimal only; everything else is OPT-003 and rejects the option.
#[test]
fn numbers_must_be_plain_decimal() {
    for bad in ["", "01", "+1", "-1", " 1", "1 ", "0x1", "1.0", "١", "00"] {
        let obs = options(graph_only(&[("ge.exec.disableReuseMemory", bad)]));
        assert_eq!(
            ids(&obs.errors),
            set![id(
                "OPT-003",
                OptionKey::DisableReuseMemory,
                Some(Level::Graph),
                Subject::default()
            )],
            "{bad:?}"
        );
        assert_eq!(obs.rejected, vec!["ge.exec.disableReuseMemory".to_owned()]);
        assert_eq!(obs.effective.len(), 11);
    }
}

#[test]
fn values_outside_the_allowed_ones_are_errors_of_the_value_clause() {
    let cases = [
        ("ge.exec.atomicCleanPolicy", "2", "ACP-001", Level::Session),
        ("ge.exec.disableReuseMemory", "2", "DRM-001", Level::Graph),
        (
            "ge.exec.input_fusion_size",
            "33554433",
            "IFS-001",
            Level::Graph,
        ),
        (
            "ge.exec.input_fusion_size",
            "99999999999999999999999999",
            "IFS-001",
            Level::Graph,
        ),
        ("ge.exec.reuseZeroCopyMemory", "7", "RZC-001", Level::Global),
        ("ge.exec.staticMemoryPolicy", "1", "SMP-001", Level::Session),
        ("ge.exec.staticMemoryPolicy", "5", "SMP-001", Level::Global),
        ("ge.externalWeight", "3", "EXW-001", Level::Session),
        ("ge.inputBatchCpy", "2", "IBC-001", Level::Session),
        (
            "ge.featureBaseRefreshable",
            "18446744073709551616",
            "FBR-001",
            Level::Graph,
        ),
    ];
    for (key, value, clause, level) in cases {
        let mut m = OptionMaps::default();
        m.at_mut(level).insert(key.to_owned(), value.to_owned());
        let obs = options(m);
        let parsed: OptionKey = key.parse().expect("a known key");
        assert_eq!(
            ids(&obs.errors),
            set![id(clause, parsed, Some(level), Subject::default())],
            "{key} = {value}"
        );
        assert_eq!(obs.rejected, vec![key.to_owned()]);
        assert!(!obs.effective.contains_key(key));
    }
}

#[test]
fn bounds_of_the_fusion_size_are_accepted() {
    for value in ["0", "33554432", "131072"] {
        let obs = options(graph_only(&[("ge.exec.input_fusion_size", value)]));
        assert!(obs.errors.is_empty());
        assert_eq!(
            effective(&obs, OptionKey::InputFusionSize),
            (value.to_owned(), Source::Graph)
        );
    }
    for value in ["0", "2", "3", "4"] {
        let obs = options(maps(&[], &[("ge.exec.staticMemoryPolicy", value)], &[]));
        assert!(obs.errors.is_empty(), "{value}");
    }
}

/// N4: an invalid setting at any level where the option takes effect rejects the option,
/// even when a narrower level sets a valid value.
#[test]
fn an_invalid_wider_setting_rejects_the_option() {
    let key = "ge.exec.input_fusion_size";
    let obs = options(maps(&[(key, "x")], &[], &[(key, "0")]));
    assert_eq!(obs.rejected, vec![key.to_owned()]);
    assert_eq!(
        ids(&obs.errors),
        set![id(
            "OPT-003",
            OptionKey::InputFusionSize,
            Some(Level::Global),
            Subject::default()
        )]
    );
}

/// N5, N6: index lists are spelled sorted, without spaces; the empty string is the empty list.
#[test]
fn index_lists_canonical_spelling() {
    let facts = GraphFacts {
        inputs: 4,
        outputs: 4,
        shape: ShapeKind::Static,
    };
    let obs = options_with(
        graph_only(&[("ge.exec.inputReuseMemIndexes", "2,0,1")]),
        facts.clone(),
    );
    assert_eq!(
        effective(&obs, OptionKey::InputReuseMemIndexes),
        ("0,1,2".to_owned(), Source::Graph)
    );
    let obs = options_with(graph_only(&[("ge.exec.outputReuseMemIndexes", "")]), facts);
    assert!(obs.errors.is_empty());
    assert_eq!(
        effective(&obs, OptionKey::OutputReuseMemIndexes),
        (String::new(), Source::Graph)
    );
}

/// The text: "If the configured input index is greater than or equal to the value of the input
/// count, index is invalid and the index configuration does not take effect." A warning, and
/// (N5) the index stays in the spelling of the value.
#[test]
fn out_of_range_indexes_are_warned_about() {
    let facts = GraphFacts {
        inputs: 2,
        outputs: 1,
        shape: ShapeKind::Static,
    };
    let obs = options_with(
        graph_only(&[
            ("ge.exec.inputReuseMemIndexes", "0,1,2,99999999999999999999"),
            ("ge.exec.outputReuseMemIndexes", "1"),
        ]),
        facts,
    );
    assert!(obs.errors.is_empty());
    assert_eq!(
        ids(&obs.warnings),
        set![
            id(
                "IRM-003",
                OptionKey::InputReuseMemIndexes,
                Some(Level::Graph),
                Subject::index(2)
            ),
            id(
                "IRM-003",
                OptionKey::InputReuseMemIndexes,
                Some(Level::Graph),
                Subject::item("99999999999999999999")
            ),
            id(
                "ORM-003",
                OptionKey::OutputReuseMemIndexes,
                Some(Level::Graph),
                Subject::index(1)
            ),
        ]
    );
    // Only what takes effect is in force (N5, as revised).
    assert_eq!(effective(&obs, OptionKey::InputReuseMemIndexes).0, "0,1");
    assert_eq!(effective(&obs, OptionKey::OutputReuseMemIndexes).0, "");
}

/// N7: malformed and repeated items; identical diagnostics once.
#[test]
fn malformed_index_items() {
    let facts = GraphFacts {
        inputs: 8,
        outputs: 8,
        shape: ShapeKind::Static,
    };
    let obs = options_with(
        graph_only(&[("ge.exec.inputReuseMemIndexes", "0,,1, 2,01,x,x,3,3,3,")]),
        facts,
    );
    let key = OptionKey::InputReuseMemIndexes;
    let g = Some(Level::Graph);
    assert_eq!(
        ids(&obs.errors),
        set![
            id("IRM-004", key, g, Subject::index(3)),
            id("IRM-004", key, g, Subject::item("")),
            id("IRM-004", key, g, Subject::item(" 2")),
            id("IRM-004", key, g, Subject::item("01")),
            id("IRM-004", key, g, Subject::item("x")),
        ]
    );
    assert_eq!(obs.rejected, vec![key.as_str().to_owned()]);
    assert!(obs.warnings.is_empty());
}

#[test]
fn pair_lists() {
    let facts = GraphFacts {
        inputs: 10,
        outputs: 10,
        shape: ShapeKind::Static,
    };
    let key = OptionKey::OutputReuseInputMemIndexes;
    let g = Some(Level::Graph);
    let run = |value: &str| options_with(graph_only(&[(key.as_str(), value)]), facts.clone());
    let obs = run("6,8|0,1");
    assert!(obs.errors.is_empty());
    assert_eq!(effective(&obs, key), ("0,1|6,8".to_owned(), Source::Graph));

    let obs = run("0,1|1|a,b||2,3,4|0-1");
    assert_eq!(
        ids(&obs.errors),
        set![
            id("ORI-006", key, g, Subject::pair("")),
            id("ORI-006", key, g, Subject::pair("0-1")),
            id("ORI-006", key, g, Subject::pair("1")),
            id("ORI-006", key, g, Subject::pair("2,3,4")),
            id("ORI-006", key, g, Subject::pair("a,b")),
        ]
    );
    let obs = run("0,10|10,0|4294967296,1");
    assert_eq!(
        ids(&obs.errors),
        set![
            id("ORI-003", key, g, Subject::pair("0,10")),
            id("ORI-003", key, g, Subject::pair("10,0")),
            id("ORI-003", key, g, Subject::pair("4294967296,1")),
        ]
    );
    let obs = run("0,1|2,1|0,3");
    assert_eq!(
        ids(&obs.errors),
        set![
            id("ORI-004", key, g, Subject::output(1)),
            id("ORI-005", key, g, Subject::input(0)),
        ]
    );
    assert_eq!(obs.rejected, vec![key.as_str().to_owned()]);
}

#[test]
fn external_weight_dir() {
    let obs = options(maps(&[], &[("ge.externalWeightDir", "a\0b")], &[]));
    assert_eq!(
        ids(&obs.errors),
        set![id(
            "EWD-004",
            OptionKey::ExternalWeightDir,
            Some(Level::Session),
            Subject::default()
        )]
    );
    // "use this parameter together with ge.externalWeight"
    let obs = options(maps(&[("ge.externalWeightDir", "/tmp/w")], &[], &[]));
    assert_eq!(
        ids(&obs.warnings),
        set![id(
            "EWD-003",
            OptionKey::ExternalWeightDir,
            Some(Level::Global),
            Subject::default()
        )]
    );
    let obs = options(maps(
        &[("ge.externalWeightDir", "/tmp/w")],
        &[("ge.externalWeight", "2")],
        &[],
    ));
    assert!(obs.warnings.is_empty());
    // An empty directory asks for nothing.
    let obs = options(maps(&[("ge.externalWeightDir", "")], &[], &[]));
    assert!(obs.warnings.is_empty());
}

/// N10: conditions outside the maps.
#[test]
fn conditions_outside_the_maps() {
    let scenario = |m: OptionMaps, inputs: u32, shape, run_mode, product| OptionsScenario {
        options: m,
        graph: GraphFacts {
            inputs,
            outputs: 1,
            shape,
        },
        run_mode,
        product,
    };
    let s = scenario(
        maps(
            &[],
            &[
                ("ge.exec.input_fusion_size", "1024"),
                ("ge.inputBatchCpy", "1"),
                ("ge.featureBaseRefreshable", "1"),
            ],
            &[],
        ),
        1,
        ShapeKind::Dynamic,
        RunMode::Sync,
        Product::AtlasTraining,
    );
    let obs = TextEngine.options(&s).expect("supported");
    let l = Some(Level::Session);
    assert_eq!(
        ids(&obs.warnings),
        set![
            id(
                "FBR-003",
                OptionKey::FeatureBaseRefreshable,
                l,
                Subject::default()
            ),
            id("IBC-003", OptionKey::InputBatchCpy, l, Subject::default()),
            id("IBC-004", OptionKey::InputBatchCpy, l, Subject::default()),
            id("IBC-005", OptionKey::InputBatchCpy, l, Subject::default()),
            id("IFS-003", OptionKey::InputFusionSize, l, Subject::default()),
            id("IFS-004", OptionKey::InputFusionSize, l, Subject::default()),
        ]
    );
    // Values that ask for nothing, and defaults, are not warned about.
    let s = scenario(
        maps(
            &[],
            &[
                ("ge.exec.input_fusion_size", "0"),
                ("ge.inputBatchCpy", "0"),
            ],
            &[],
        ),
        1,
        ShapeKind::Dynamic,
        RunMode::Sync,
        Product::AtlasTraining,
    );
    assert!(TextEngine
        .options(&s)
        .expect("supported")
        .warnings
        .is_empty());
    // Every condition met: no warning.
    let s = scenario(
        maps(&[], &[("ge.inputBatchCpy", "1")], &[]),
        2,
        ShapeKind::Static,
        RunMode::Async,
        Product::AtlasA2Inference,
    );
    assert!(TextEngine
        .options(&s)
        .expect("supported")
        .warnings
        .is_empty());
}

/// N11: batch copy at the global or graph level is "not recommended".
#[test]
fn batch_copy_outside_the_session_level() {
    let key = "ge.inputBatchCpy";
    let facts = GraphFacts {
        inputs: 3,
        outputs: 1,
        shape: ShapeKind::Static,
    };
    let obs = options_with(maps(&[(key, "1")], &[(key, "1")], &[(key, "0")]), facts);
    assert_eq!(
        ids(&obs.warnings),
        set![
            id(
                "IBC-006",
                OptionKey::InputBatchCpy,
                Some(Level::Global),
                Subject::default()
            ),
            id(
                "IBC-006",
                OptionKey::InputBatchCpy,
                Some(Level::Graph),
                Subject::default()
            ),
        ]
    );
    assert_eq!(
        effective(&obs, OptionKey::InputBatchCpy),
        ("0".to_owned(), Source::Graph)
    );
}

#[test]
fn unknown_keys_pass_through() {
    let obs = options(maps(
        &[
            ("ge.graphRunMode", "1"),
            ("ge.exec.DisableReuseMemory", "1"),
        ],
        &[("ge.graphRunMode", "0")],
        &[("", "")],
    ));
    assert_eq!(
        obs.passthrough,
        vec![
            String::new(),
            "ge.exec.DisableReuseMemory".to_owned(),
            "ge.graphRunMode".to_owned()
        ]
    );
    assert_eq!(obs.effective.len(), 12);
    assert!(obs.errors.is_empty() && obs.warnings.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Transfer
// ---------------------------------------------------------------------------------------------

fn host(index: u32, size: u64) -> TransferInput {
    TransferInput {
        index,
        size,
        placement: Placement::Host,
    }
}

fn transfer(options: OptionMaps, inputs: Vec<TransferInput>) -> TransferObservation {
    TextEngine
        .transfer(&TransferScenario {
            options,
            inputs,
            ..TransferScenario::default()
        })
        .expect("transfer is supported")
}

/// The ten inputs of the text: two of 100 KB, two of 50 KB, six larger than 100 KB.
fn ten_inputs() -> Vec<TransferInput> {
    let sizes = [
        100 * KB,
        200 * KB,
        50 * KB,
        101 * KB,
        100 * KB,
        300 * KB,
        50 * KB,
        1024 * KB,
        150 * KB,
        100 * KB + 1,
    ];
    sizes
        .iter()
        .enumerate()
        .map(|(i, s)| host(i as u32, *s))
        .collect()
}

#[test]
fn fusion_worked_example_100_kb() {
    let obs = transfer(
        graph_only(&[("ge.exec.input_fusion_size", "102400")]),
        ten_inputs(),
    );
    assert!(obs.errors.is_empty() && obs.warnings.is_empty());
    assert_eq!(obs.fused, vec![0, 2, 4, 6]);
    assert_eq!(obs.fused_bytes, 300 * KB);
    assert_eq!(obs.direct, vec![1, 3, 5, 7, 8, 9]);
    assert!(obs.batched.is_empty() && obs.on_device.is_empty());
}

#[test]
fn fusion_worked_example_0_kb() {
    let obs = transfer(
        graph_only(&[("ge.exec.input_fusion_size", "0")]),
        ten_inputs(),
    );
    assert!(obs.fused.is_empty());
    assert_eq!(obs.fused_bytes, 0);
    assert_eq!(obs.direct, (0..10).collect::<Vec<u32>>());
}

#[test]
fn default_threshold_is_128_kb() {
    let obs = transfer(
        OptionMaps::default(),
        vec![host(0, 128 * KB), host(1, 128 * KB + 1)],
    );
    assert_eq!(obs.fused, vec![0]);
    assert_eq!(obs.fused_bytes, 128 * KB);
    assert_eq!(obs.direct, vec![1]);
}

/// The text: "if a user has five inputs and four of them meet the threshold for the fusion and
/// copy function, the fusion and copy function is performed on the four inputs, and the batch
/// copy function is not performed on the remaining input."
#[test]
fn batch_copy_worked_example() {
    let inputs = vec![
        host(0, KB),
        host(1, KB),
        host(2, KB),
        host(3, KB),
        host(4, 10 * 1024 * KB),
    ];
    let obs = transfer(maps(&[], &[("ge.inputBatchCpy", "1")], &[]), inputs);
    assert_eq!(obs.fused, vec![0, 1, 2, 3]);
    assert_eq!(obs.fused_bytes, 4 * KB);
    assert_eq!(obs.direct, vec![4]);
    assert!(obs.batched.is_empty());
}

#[test]
fn batch_copy_of_the_inputs_left_over() {
    let inputs = vec![
        host(0, KB),
        host(1, 1024 * KB),
        host(2, 2048 * KB),
        host(3, 4096 * KB),
    ];
    let obs = transfer(maps(&[], &[("ge.inputBatchCpy", "1")], &[]), inputs.clone());
    assert_eq!(obs.fused, vec![0]);
    assert_eq!(obs.batched, vec![1, 2, 3]);
    assert!(obs.direct.is_empty());
    // Outside the product list: no batch copy, and a warning.
    let obs = TextEngine
        .transfer(&TransferScenario {
            options: maps(&[], &[("ge.inputBatchCpy", "1")], &[]),
            product: Product::Atlas200I500A2,
            inputs,
            ..TransferScenario::default()
        })
        .expect("supported");
    assert_eq!(obs.direct, vec![1, 2, 3]);
    assert_eq!(
        ids(&obs.warnings),
        set![id(
            "IBC-004",
            OptionKey::InputBatchCpy,
            Some(Level::Session),
            Subject::default()
        )]
    );
}

/// "If the number of initial network inputs is 1, the batch copy function does not take effect".
#[test]
fn batch_copy_needs_more_than_one_input() {
    let obs = transfer(
        maps(&[], &[("ge.inputBatchCpy", "1")], &[]),
        vec![host(0, 1024 * KB)],
    );
    assert_eq!(obs.direct, vec![0]);
    assert_eq!(
        ids(&obs.warnings),
        set![id(
            "IBC-003",
            OptionKey::InputBatchCpy,
            Some(Level::Session),
            Subject::default()
        )]
    );
}

#[test]
fn synchronous_run_neither_fuses_nor_batches() {
    let obs = TextEngine
        .transfer(&TransferScenario {
            options: maps(&[], &[("ge.inputBatchCpy", "1")], &[]),
            run_mode: RunMode::Sync,
            inputs: vec![host(0, 1), host(1, 2), host(2, 1024 * KB)],
            ..TransferScenario::default()
        })
        .expect("supported");
    assert_eq!(obs.direct, vec![0, 1, 2]);
    assert_eq!(
        ids(&obs.warnings),
        set![id(
            "IBC-005",
            OptionKey::InputBatchCpy,
            Some(Level::Session),
            Subject::default()
        )]
    );
    let obs = TextEngine
        .transfer(&TransferScenario {
            shape: ShapeKind::Dynamic,
            inputs: vec![host(0, 1), host(1, 2)],
            ..TransferScenario::default()
        })
        .expect("supported");
    assert_eq!(obs.direct, vec![0, 1]);
    assert!(obs.warnings.is_empty());
}

#[test]
fn inputs_on_the_device_are_not_moved() {
    let mut inputs = vec![host(0, 1), host(1, 2), host(2, 1024 * KB)];
    inputs[1].placement = Placement::Device;
    let obs = transfer(OptionMaps::default(), inputs);
    assert_eq!(obs.on_device, vec![1]);
    assert_eq!(obs.fused, vec![0]);
    assert_eq!(obs.fused_bytes, 1);
    assert_eq!(obs.direct, vec![2]);
}

#[test]
fn shared_indexes_and_option_errors_stop_the_plan() {
    let obs = transfer(
        OptionMaps::default(),
        vec![host(3, 1), host(3, 2), host(1, 1)],
    );
    assert_eq!(
        ids(&obs.errors),
        set![("TRF-002".to_owned(), None, None, Subject::input(3))]
    );
    assert!(obs.fused.is_empty() && obs.direct.is_empty());
    let obs = transfer(
        graph_only(&[("ge.exec.input_fusion_size", "-1")]),
        vec![host(0, 1)],
    );
    assert_eq!(obs.errors.len(), 1);
    assert!(obs.fused.is_empty() && obs.direct.is_empty());
}

#[test]
fn huge_transfer_sizes() {
    let obs = transfer(
        graph_only(&[("ge.exec.input_fusion_size", "33554432")]),
        vec![
            host(0, u64::MAX),
            host(u32::MAX, 33_554_432),
            host(1, 33_554_432),
        ],
    );
    assert_eq!(obs.fused, vec![1, u32::MAX]);
    assert_eq!(obs.fused_bytes, 2 * 33_554_432);
    assert_eq!(obs.direct, vec![0]);
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

fn tensor(name: &str, size: u64, first: u32, last: u32, role: Role) -> Tensor {
    Tensor {
        name: name.to_owned(),
        size,
        first,
        last,
        role,
    }
}

fn input(index: u32) -> Role {
    Role::Input { index }
}

fn output(index: u32) -> Role {
    Role::Output { index }
}

fn memset(op: &str) -> Role {
    Role::Memset { op: op.to_owned() }
}

fn memory(options: OptionMaps, inputs: u32, outputs: u32, tensors: Vec<Tensor>) -> MemoryScenario {
    MemoryScenario {
        options,
        inputs,
        outputs,
        tensors,
        run: None,
    }
}

fn plan(s: &MemoryScenario) -> MemoryObservation {
    let obs = TextEngine.memory(s).expect("memory is supported");
    if obs.errors.is_empty() {
        check_safe(s, &obs);
    }
    obs
}

/// Independent check of a plan's safety: aligned offsets, no two tensors in use at the same time
/// sharing a byte, unlisted inputs and outputs alone in their bytes, cleanup regions holding their
/// tensors and nothing else in use meanwhile, and a correct peak.
// Long because: an engine written from the text alone, kept as its author wrote it.
fn check_safe(s: &MemoryScenario, obs: &MemoryObservation) {
    let listed = |key: &str| -> Vec<u32> {
        s.options
            .graph
            .get(key)
            .map(|v| v.split(',').filter_map(|i| i.parse().ok()).collect())
            .unwrap_or_default()
    };
    let reuse_off = s
        .options
        .graph
        .get("ge.exec.disableReuseMemory")
        .map(String::as_str)
        == Some("1")
        || s.options
            .session
            .get("ge.exec.disableReuseMemory")
            .map(String::as_str)
            == Some("1");
    let (li, lo) = (
        listed("ge.exec.inputReuseMemIndexes"),
        listed("ge.exec.outputReuseMemIndexes"),
    );
    let pairs: Vec<(u32, u32)> = s
        .options
        .graph
        .get("ge.exec.outputReuseInputMemIndexes")
        .map(|v| {
            v.split('|')
                .filter_map(|p| {
                    let (a, b) = p.split_once(',')?;
                    Some((a.parse().ok()?, b.parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    let end = s.run_end();
    let live = |t: &Tensor| match t.role {
        _ if reuse_off => (0, end),
        Role::Input { index } if li.contains(&index) => (0, t.last),
        Role::Output { index } if lo.contains(&index) => (t.first, end),
        Role::Input { .. } | Role::Output { .. } => (0, end),
        _ => (t.first, t.last),
    };
    let partners = |a: &Tensor, b: &Tensor| {
        pairs.iter().any(|(i, o)| {
            (a.role == input(*i) && b.role == output(*o))
                || (b.role == input(*i) && a.role == output(*o))
        })
    };
    let bytes = |t: &Tensor| {
        let o = obs.offsets[&t.name];
        (o, o + t.size)
    };
    let mut peak = 0;
    for (n, a) in s.tensors.iter().enumerate() {
        let (ao, ae) = bytes(a);
        assert_eq!(ao % 32, 0, "{} is not aligned", a.name);
        peak = peak.max(ae);
        for b in &s.tensors[n + 1..] {
            if partners(a, b) {
                assert_eq!(ao, obs.offsets[&b.name]);
                continue;
            }
            let (bo, be) = bytes(b);
            let (la, lb) = (live(a), live(b));
            if la.0 <= lb.1 && lb.0 <= la.1 {
                assert!(
                    ae <= bo || be <= ao,
                    "{} and {} share bytes while both in use",
                    a.name,
                    b.name
                );
            }
        }
    }
    assert_eq!(obs.peak_bytes, peak);
    for g in &obs.cleanup {
        let members: Vec<&Tensor> = s
            .tensors
            .iter()
            .filter(|t| g.tensors.contains(&t.name))
            .collect();
        let from = members.iter().map(|t| t.first).min().unwrap_or(0);
        let to = members.iter().map(|t| t.last).max().unwrap_or(0);
        for t in &s.tensors {
            let (o, e) = bytes(t);
            if members.iter().any(|m| m.name == t.name) {
                assert!(g.offset <= o && e <= g.offset + g.size.max(e - o));
            } else if t.size > 0 && o < g.offset + g.size && g.offset < e {
                let l = live(t);
                assert!(
                    l.1 < from || to < l.0,
                    "{} lies in cleanup region {g:?}",
                    t.name
                );
            }
        }
    }
}

/// A small chain: input 0 → a → b → output 0, with a memset output.
fn chain(options: OptionMaps) -> MemoryScenario {
    memory(
        options,
        1,
        1,
        vec![
            tensor("in", 64, 0, 1, input(0)),
            tensor("a", 64, 1, 2, Role::Intermediate),
            tensor("b", 64, 2, 3, Role::Intermediate),
            tensor("c", 64, 3, 4, Role::Intermediate),
            tensor("out", 64, 4, 5, output(0)),
        ],
    )
}

#[test]
fn intermediates_reuse_memory_by_default() {
    let obs = plan(&chain(OptionMaps::default()));
    assert!(obs.errors.is_empty());
    // a and c are never in use together: c takes a's bytes back.
    assert_eq!(obs.offsets["a"], obs.offsets["c"]);
    assert!(obs.reused_inputs.is_empty() && obs.reused_outputs.is_empty());
    assert_eq!(obs.peak_bytes, 4 * 64);
}

#[test]
fn reuse_disabled_gives_every_tensor_its_own_bytes() {
    let s = chain(graph_only(&[
        ("ge.exec.disableReuseMemory", "1"),
        ("ge.exec.inputReuseMemIndexes", "0"),
    ]));
    let obs = plan(&s);
    assert!(obs.errors.is_empty());
    assert_eq!(obs.peak_bytes, 5 * 64);
    assert!(obs.reused_inputs.is_empty());
}

#[test]
fn listed_input_and_output_are_reused() {
    let s = chain(graph_only(&[
        ("ge.exec.inputReuseMemIndexes", "0"),
        ("ge.exec.outputReuseMemIndexes", "0"),
    ]));
    let obs = plan(&s);
    assert!(obs.errors.is_empty());
    assert_eq!(obs.reused_inputs, vec![0]);
    assert_eq!(obs.reused_outputs, vec![0]);
    assert_eq!(obs.peak_bytes, 2 * 64);
}

#[test]
fn unlisted_and_out_of_range_indexes_are_not_reused() {
    let s = chain(graph_only(&[("ge.exec.inputReuseMemIndexes", "1")]));
    let obs = plan(&s);
    assert!(obs.errors.is_empty());
    assert!(obs.reused_inputs.is_empty());
    assert_eq!(
        ids(&obs.warnings),
        set![id(
            "IRM-003",
            OptionKey::InputReuseMemIndexes,
            Some(Level::Graph),
            Subject::index(1)
        )]
    );
}

/// "ensure that the input memory size is 32-byte aligned"
#[test]
fn listed_sizes_must_be_multiples_of_32() {
    let mut s = chain(graph_only(&[
        ("ge.exec.inputReuseMemIndexes", "0"),
        ("ge.exec.outputReuseMemIndexes", "0"),
    ]));
    s.tensors[0].size = 65;
    s.tensors[4].size = 33;
    let obs = plan(&s);
    assert_eq!(
        ids(&obs.errors),
        set![
            id(
                "IRM-011",
                OptionKey::InputReuseMemIndexes,
                None,
                Subject::input(0)
            ),
            id(
                "ORM-011",
                OptionKey::OutputReuseMemIndexes,
                None,
                Subject::output(0)
            ),
        ]
    );
    assert!(obs.offsets.is_empty());
    assert_eq!(obs.peak_bytes, 0);
}

/// The worked example of `ge.exec.outputReuseInputMemIndexes`: ten inputs and outputs,
/// "0,1|6,8".
#[test]
fn alias_worked_example() {
    let mut tensors = Vec::new();
    for i in 0..10 {
        tensors.push(tensor(&format!("in{i}"), 96, 0, 1, input(i)));
        tensors.push(tensor(&format!("out{i}"), 96, 2, 3, output(i)));
    }
    tensors.push(tensor("mid", 96, 1, 2, Role::Intermediate));
    let mut s = memory(
        graph_only(&[("ge.exec.outputReuseInputMemIndexes", "0,1|6,8")]),
        10,
        10,
        tensors,
    );
    let obs = plan(&s);
    assert!(obs.errors.is_empty(), "{:?}", obs.errors);
    assert_eq!(
        obs.aliases,
        vec![
            Alias {
                input: 0,
                output: 1
            },
            Alias {
                input: 6,
                output: 8
            }
        ]
    );
    assert_eq!(obs.offsets["in0"], obs.offsets["out1"]);
    assert_eq!(obs.offsets["in6"], obs.offsets["out8"]);
    assert!(obs.reused_inputs.is_empty() && obs.reused_outputs.is_empty());

    // "ensure that the corresponding input and output are transferred to the same memory
    // address. Otherwise, a runtime error will occur."
    let mut run = RunAddresses {
        inputs: (0..10).map(|i| 0x1000 * (i + 1)).collect(),
        outputs: (0..10).map(|i| 0x10_0000 * (i + 1)).collect(),
    };
    run.outputs[1] = run.inputs[0];
    s.run = Some(run);
    let obs = plan(&s);
    assert_eq!(
        ids(&obs.errors),
        set![(
            "ORI-011".to_owned(),
            Some(OptionKey::OutputReuseInputMemIndexes.as_str().to_owned()),
            None,
            Subject::alias(6, 8)
        )]
    );
    // A run-time error: the plan stands.
    assert_eq!(obs.offsets.len(), 21);
}

#[test]
fn collective_cleanup_is_one_region() {
    let tensors = vec![
        tensor("m1", 40, 1, 2, memset("op1")),
        tensor("m2", 64, 3, 4, memset("op1")),
        tensor("m3", 32, 5, 6, memset("op2")),
        tensor("x", 64, 0, 6, Role::Intermediate),
    ];
    let obs = plan(&memory(OptionMaps::default(), 0, 0, tensors.clone()));
    assert!(obs.errors.is_empty());
    assert_eq!(obs.cleanup.len(), 1);
    let g = &obs.cleanup[0];
    assert_eq!(g.tensors, vec!["m1", "m2", "m3"]);
    assert_eq!(g.size, 64 + 64 + 32);

    let obs = plan(&memory(
        maps(&[], &[("ge.exec.atomicCleanPolicy", "1")], &[]),
        0,
        0,
        tensors,
    ));
    assert!(obs.errors.is_empty());
    assert_eq!(obs.cleanup.len(), 2);
    let by_first: Vec<&Vec<String>> = obs.cleanup.iter().map(|g| &g.tensors).collect();
    assert!(by_first.contains(&&vec!["m1".to_owned(), "m2".to_owned()]));
    assert!(by_first.contains(&&vec!["m3".to_owned()]));
    // Separate cleanup lets op2 take op1's bytes back: less memory, as the text says.
    assert_eq!(obs.peak_bytes, 64 + 128);
}

#[test]
fn invalid_scenarios_and_option_errors_plan_nothing() {
    let obs = plan(&memory(
        OptionMaps::default(),
        1,
        0,
        vec![tensor("t", u64::MAX, 0, 0, Role::Intermediate)],
    ));
    assert!(obs
        .errors
        .iter()
        .any(|d| d.subject == Subject::part(Part::Sizes)));
    assert!(obs.errors.iter().any(|d| d.subject == Subject::input(0)));
    assert!(obs.offsets.is_empty());

    let obs = plan(&chain(maps(
        &[],
        &[("ge.exec.atomicCleanPolicy", "2")],
        &[],
    )));
    assert_eq!(obs.errors.len(), 1);
    assert!(obs.offsets.is_empty());
}

#[test]
fn empty_and_zero_sized() {
    let obs = plan(&memory(OptionMaps::default(), 0, 0, Vec::new()));
    assert!(obs.errors.is_empty() && obs.offsets.is_empty());
    assert_eq!(obs.peak_bytes, 0);
    let obs = plan(&memory(
        OptionMaps::default(),
        1,
        1,
        vec![
            tensor("i", 0, 0, 0, input(0)),
            tensor("o", 0, 0, 0, output(0)),
            tensor("z", 0, 0, 0, memset("m")),
        ],
    ));
    assert!(obs.errors.is_empty());
    assert_eq!(obs.peak_bytes, 0);
    assert_eq!(obs.cleanup.len(), 1);
}

#[test]
fn sizes_near_the_top_of_u64() {
    let big = (u64::MAX / 2) & !31;
    let obs = plan(&memory(
        OptionMaps::default(),
        0,
        0,
        vec![
            tensor("a", big, 0, 0, Role::Intermediate),
            tensor("b", big, 1, 1, Role::Intermediate),
            tensor("c", 31, 0, 1, Role::Intermediate),
        ],
    ));
    assert!(obs.errors.is_empty(), "{:?}", obs.errors);
    assert_eq!(obs.offsets["a"], obs.offsets["b"]);
}

/// A tiny deterministic generator, so that the property test needs no dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound.max(1)
    }
}

#[test]
fn random_plans_are_safe() {
    let mut rng = Lcg(7);
    for round in 0..400 {
        let inputs = rng.next(4) as u32;
        let outputs = rng.next(4) as u32;
        let steps = 1 + rng.next(8) as u32;
        let mut tensors = Vec::new();
        let mut add = |name: String, role: Role, rng: &mut Lcg| {
            let a = rng.next(u64::from(steps)) as u32;
            let b = rng.next(u64::from(steps)) as u32;
            let size = if rng.next(3) == 0 {
                32 * rng.next(5)
            } else {
                rng.next(200)
            };
            tensors.push(tensor(&name, size, a.min(b), a.max(b), role));
        };
        for i in 0..inputs {
            add(format!("i{i}"), input(i), &mut rng);
        }
        for o in 0..outputs {
            add(format!("o{o}"), output(o), &mut rng);
        }
        for k in 0..rng.next(10) {
            add(format!("t{k}"), Role::Intermediate, &mut rng);
        }
        for k in 0..rng.next(5) {
            let op = format!("op{}", rng.next(3));
            add(format!("m{k}"), Role::Memset { op }, &mut rng);
        }
        let mut graph = Vec::new();
        let list = |count: u32, rng: &mut Lcg| -> String {
            (0..count)
                .filter(|_| rng.next(2) == 0)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let li = list(inputs, &mut rng);
        let lo = list(outputs, &mut rng);
        graph.push(("ge.exec.inputReuseMemIndexes".to_owned(), li));
        graph.push(("ge.exec.outputReuseMemIndexes".to_owned(), lo));
        if inputs > 0 && outputs > 0 && rng.next(2) == 0 {
            let pair = format!(
                "{},{}",
                rng.next(u64::from(inputs)),
                rng.next(u64::from(outputs))
            );
            graph.push(("ge.exec.outputReuseInputMemIndexes".to_owned(), pair));
        }
        if rng.next(4) == 0 {
            graph.push(("ge.exec.disableReuseMemory".to_owned(), "1".to_owned()));
        }
        let mut m = OptionMaps {
            graph: graph.into_iter().collect(),
            ..OptionMaps::default()
        };
        if rng.next(2) == 0 {
            m.session
                .insert("ge.exec.atomicCleanPolicy".to_owned(), "1".to_owned());
        }
        let s = memory(m, inputs, outputs, tensors);
        let obs = plan(&s);
        // Only the 32-byte rule may refuse these scenarios.
        assert!(
            obs.errors.iter().all(|d| d.clause.ends_with("-011")),
            "round {round}: {:?}",
            obs.errors
        );
    }
}

#[test]
fn many_tensors_are_planned_quickly() {
    let tensors: Vec<Tensor> = (0..50_000u32)
        .map(|i| {
            tensor(
                &format!("t{i}"),
                1 + u64::from(i % 97) * 32,
                i,
                i + 3,
                Role::Intermediate,
            )
        })
        .collect();
    let obs = TextEngine
        .memory(&memory(OptionMaps::default(), 0, 0, tensors))
        .expect("supported");
    assert!(obs.errors.is_empty());
    assert_eq!(obs.offsets.len(), 50_000);
}

#[test]
fn huge_counts_do_not_panic() {
    let s = memory(
        graph_only(&[
            (
                "ge.exec.inputReuseMemIndexes",
                "4294967294,18446744073709551615",
            ),
            (
                "ge.exec.outputReuseInputMemIndexes",
                "4294967294,4294967294",
            ),
        ]),
        u32::MAX,
        u32::MAX,
        vec![tensor("i", 1, 0, 0, input(u32::MAX - 1))],
    );
    let obs = TextEngine.memory(&s).expect("supported");
    assert!(!obs.errors.is_empty());
    let obs = options_with(
        graph_only(&[("ge.exec.inputReuseMemIndexes", &"9".repeat(10_000))]),
        GraphFacts {
            inputs: u32::MAX,
            outputs: u32::MAX,
            shape: ShapeKind::Static,
        },
    );
    assert_eq!(obs.warnings.len(), 1);
}

#[test]
fn capabilities() {
    use ge_spec::vocab::Capability;
    let caps = TextEngine.capabilities();
    assert_eq!(
        caps.into_iter().collect::<Vec<_>>(),
        vec![
            Capability::Options,
            Capability::Transfer,
            Capability::Memory
        ]
    );
    assert_eq!(TextEngine.name(), "text-engine");
}

#[test]
fn transfer_does_not_judge_memory_index_ranges() {
    let obs = transfer(
        graph_only(&[
            ("ge.exec.outputReuseInputMemIndexes", "0,1|6,8"),
            ("ge.exec.inputReuseMemIndexes", "5"),
        ]),
        vec![host(0, 1)],
    );
    assert!(obs.errors.is_empty() && obs.warnings.is_empty(), "{obs:?}");
    assert_eq!(obs.fused, vec![0]);
}

#[test]
fn memset_regions_with_reuse_off_and_zero_sized_aliases() {
    let s = memory(
        graph_only(&[
            ("ge.exec.disableReuseMemory", "1"),
            ("ge.exec.outputReuseInputMemIndexes", "0,0"),
        ]),
        1,
        1,
        vec![
            tensor("i", 0, 0, 0, input(0)),
            tensor("o", 64, 1, 1, output(0)),
            tensor("m", 8, 0, 0, memset("a")),
            tensor("n", 8, 1, 1, memset("b")),
        ],
    );
    let obs = plan(&s);
    assert!(obs.errors.is_empty());
    assert_eq!(obs.offsets["i"], obs.offsets["o"]);
    assert_eq!(obs.cleanup.len(), 1);
    assert_eq!(obs.cleanup[0].size, 40);
    // Nothing shares with reuse off: the two blocks (64 and 2 x 32 bytes) are stacked.
    assert!(obs.peak_bytes == 64 + 40 || obs.peak_bytes == 64 + 64);
}
