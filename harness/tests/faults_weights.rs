//! Deliberately wrong weights backends: each wraps the reference with ONE fault the clauses
//! forbid, and the suite must catch it by the clause it breaks. The reference itself must be
//! caught by nothing.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use ge_conformance::runner::caught_clauses;
use ge_reference::Reference;
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario, WorkPathEnv};
use ge_spec::{Answer, Backend, Capability};
use rstest::rstest;

/// The one thing a faulty backend gets wrong.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// ASCEND_WORK_PATH wins over ge.externalWeightDir.
    TiersSwapped,
    /// ASCEND_WORK_PATH is never read.
    WorkPathIgnored,
    /// Unload leaves the tmp directory in place.
    TmpNotRemoved,
    /// Unload removes the user's ge.externalWeightDir as well.
    UserDirRemoved,
    /// Unload follows the links in the tmp directory and removes what they point at.
    SymlinkFollowed,
    /// The observation lies about the files' contents.
    LiesAboutFiles,
    /// A temporary file is left next to the weights.
    TempLeftBehind,
}

#[derive(Debug)]
struct Faulty(Fault);

fn user_dir_set(s: &WeightsScenario) -> bool {
    s.options.global.contains_key("ge.externalWeightDir")
        || s.options.session.contains_key("ge.externalWeightDir")
}

/// Removes, before the backend runs its unload, whatever the links under any `tmp_weight_*`
/// directory point at: the effect of an unload that follows links.
fn follow_links(dir: &Path, inside_tmp: bool) {
    let Ok(read) = fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if inside_tmp {
                if let Ok(target) = fs::canonicalize(&path) {
                    if target.is_dir() {
                        let _ = fs::remove_dir_all(&target);
                    } else {
                        let _ = fs::remove_file(&target);
                    }
                }
            }
        } else if meta.is_dir() {
            follow_links(&path, inside_tmp || name.starts_with("tmp_weight_"));
        }
    }
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "faulty-weights"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Weights].into_iter().collect()
    }

    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let mut s = scenario.clone();
        match self.0 {
            Fault::TiersSwapped => {
                if matches!(s.ascend_work_path, WorkPathEnv::Set { .. }) {
                    s.options.global.remove("ge.externalWeightDir");
                    s.options.session.remove("ge.externalWeightDir");
                }
            }
            Fault::WorkPathIgnored => s.ascend_work_path = WorkPathEnv::Unset,
            Fault::TmpNotRemoved if !user_dir_set(&s) => s.unload = false,
            Fault::SymlinkFollowed if s.unload => follow_links(sandbox, false),
            _ => {}
        }
        let mut obs = Reference.weights(&s, sandbox)?;
        match self.0 {
            Fault::UserDirRemoved
                if scenario.unload && user_dir_set(scenario) && !obs.dir.is_empty() =>
            {
                let _ = fs::remove_dir_all(sandbox.join(&obs.dir));
            }
            Fault::LiesAboutFiles => {
                for f in &mut obs.files {
                    f.len += 1;
                }
            }
            Fault::TempLeftBehind if !obs.dir.is_empty() && obs.errors.is_empty() => {
                let _ = fs::write(sandbox.join(&obs.dir).join(".weight.partial"), b"half");
            }
            _ => {}
        }
        Ok(obs)
    }
}

#[test]
fn reference_is_caught_by_nothing() {
    let caught = caught_clauses(&Reference, Some(Capability::Weights));
    assert!(caught.is_empty(), "the reference fails: {caught:#?}");
}

#[rstest]
#[case::tiers_swapped(Fault::TiersSwapped, "EWD-010")]
#[case::work_path_ignored(Fault::WorkPathIgnored, "EXW-016")]
#[case::tmp_not_removed(Fault::TmpNotRemoved, "EXW-019")]
#[case::user_dir_removed(Fault::UserDirRemoved, "EWD-013")]
#[case::symlink_followed(Fault::SymlinkFollowed, "WGT-006")]
#[case::lies_about_files(Fault::LiesAboutFiles, "WGT-005")]
#[case::temp_left_behind(Fault::TempLeftBehind, "WGT-004")]
fn fault_is_caught_by_its_clause(#[case] fault: Fault, #[case] clause: &str) {
    let caught = caught_clauses(&Faulty(fault), Some(Capability::Weights));
    assert!(
        caught.contains_key(clause),
        "{fault:?} should break {clause}; caught: {caught:#?}"
    );
}
