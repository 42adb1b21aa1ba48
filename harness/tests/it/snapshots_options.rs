//! Snapshots of the options capability: every error and warning message the reference writes
//! for the options cases, in one file, so wording changes are reviewed together. (The effective
//! options of the source text's configuration examples are the snapshot trials
//! `example/<option>` and `example/all-together` of `reference_snapshots`.)

use crate::common;

use std::collections::BTreeMap;

use ge_reference::Reference;
use ge_spec::{Backend, Scenario, Spec};

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
