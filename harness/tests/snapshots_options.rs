//! Snapshots of the options capability: every error and warning message the reference writes
//! for the options cases (so wording changes are reviewed), and the effective options for the
//! configuration examples of the source text.

mod common;

use std::collections::BTreeMap;

use ge_reference::Reference;
use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{Backend, OptionMaps, Scenario, Spec};

#[test]
fn every_options_message() {
    let mut messages: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in Spec::embedded().cases_in(ge_spec::Profile::Documented) {
        if let Scenario::Options(s) = &case.case.scenario {
            let o = Reference.options(s).expect("the reference answers options");
            let lines: Vec<String> = o
                .errors
                .iter()
                .map(|d| format!("error {d}"))
                .chain(o.warnings.iter().map(|d| format!("warning {d}")))
                .collect();
            if !lines.is_empty() {
                messages.insert(case.full_name(), lines);
            }
        }
    }
    common::with_snapshots(|| insta::assert_json_snapshot!("options_messages", messages));
}

/// The upstream reference's diagnostics for the options cases that hold under the upstream
/// profile only: the wording a reviewer reads next to the divergence map.
#[test]
fn every_upstream_options_message() {
    let upstream = Reference::upstream();
    let mut messages: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in Spec::embedded().cases() {
        if case.case.profile != Some(ge_spec::Profile::Upstream) {
            continue;
        }
        if let Scenario::Options(s) = &case.case.scenario {
            let o = upstream.options(s).expect("the reference answers options");
            let lines: Vec<String> = o
                .errors
                .iter()
                .map(|d| format!("error {d}"))
                .chain(o.warnings.iter().map(|d| format!("warning {d}")))
                .collect();
            if !lines.is_empty() {
                messages.insert(case.full_name(), lines);
            }
        }
    }
    assert!(!messages.is_empty());
    common::with_snapshots(|| insta::assert_json_snapshot!("upstream_options_messages", messages));
}

#[test]
fn source_text_configuration_examples() {
    let mut maps = OptionMaps::default();
    for (k, v) in [
        ("ge.exec.atomicCleanPolicy", "0"),
        ("ge.exec.disableReuseMemory", "0"),
        ("ge.exec.input_fusion_size", "131072"),
        ("ge.exec.reuseZeroCopyMemory", "0"),
        ("ge.exec.staticMemoryPolicy", "0"),
        ("ge.externalWeight", "1"),
        ("ge.externalWeightDir", "$HOME/your_tmp_path"),
        ("ge.inputBatchCpy", "0"),
        ("ge.featureBaseRefreshable", "0"),
    ] {
        maps.session.insert(k.to_owned(), v.to_owned());
    }
    for (k, v) in [
        ("ge.exec.inputReuseMemIndexes", "0,1,2"),
        ("ge.exec.outputReuseMemIndexes", "0,1,2"),
        ("ge.exec.outputReuseInputMemIndexes", "0,1|6,8"),
    ] {
        maps.graph.insert(k.to_owned(), v.to_owned());
    }
    let scenario = OptionsScenario {
        options: maps,
        graph: GraphFacts {
            inputs: 10,
            outputs: 10,
            ..GraphFacts::default()
        },
        ..OptionsScenario::default()
    };
    let o = Reference
        .options(&scenario)
        .expect("the reference answers options");
    common::with_snapshots(|| insta::assert_json_snapshot!("source_examples_effective", o));
}
