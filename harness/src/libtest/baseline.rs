//! A baseline for the `cargo test` route ([`super::Suite::baseline`]): the verified bundle of an
//! earlier run, against which each trial is judged as it runs, by the rules of `compare`. A
//! failure the baseline had (the same trial failing, on no clause its failure there did not
//! break) is known: shown as ignored, and skipped under nextest as a waived one is. A new
//! failure fails, saying it is new. A fix passes and is listed after the summary, so the
//! baseline can be brought up to date. The run's own report and bundle are untouched: a known
//! failure is a failure there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::compare::{self, Change};
use crate::report::{Outcome, TrialResult};

/// How the reason of a trial shown as ignored for its baseline starts (a listing judging ahead
/// takes it, as it takes a waiver's).
pub const KNOWN: &str = "known: ";

/// An earlier run's trials, by name.
#[derive(Debug)]
pub struct Baseline {
    dir: PathBuf,
    trials: BTreeMap<String, TrialResult>,
}

/// What one trial is against the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// It fails as it failed in the baseline: ignored for this reason.
    Known(String),
    /// It fails where the baseline's did not, or on a clause the baseline's failure did not
    /// break: what changed, for its failure message.
    Regressed(String),
    /// The baseline failed it; it does not fail now.
    Fixed,
    /// Nothing to say.
    Same,
}

impl Baseline {
    /// The bundle in `dir`, verified (`ge-conformance verify`'s check): an error says why it
    /// cannot serve as a baseline.
    pub fn load(dir: &Path) -> Result<Baseline, String> {
        let report = crate::bundle::verify(dir)
            .map_err(|e| format!("the baseline bundle {}: {e}", dir.display()))?;
        let mut trials = BTreeMap::new();
        for t in report.trials {
            trials.entry(t.name.clone()).or_insert(t);
        }
        Ok(Baseline {
            dir: dir.to_path_buf(),
            trials,
        })
    }

    /// Where the bundle is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when the baseline failed the trial `name` (a waived failure included): one a run
    /// may show as known.
    pub fn failed(&self, name: &str) -> bool {
        self.trials
            .get(name)
            .is_some_and(|t| matches!(t.outcome, Outcome::Fail | Outcome::Waived))
    }

    /// What `r` (waivers applied) is against the baseline. A failure a waiver of this run covers
    /// is the waiver's to show, not the baseline's.
    pub fn judge(&self, r: &TrialResult) -> Against {
        let Some(change) = compare::trial(self.trials.get(&r.name), r) else {
            return Against::Same;
        };
        match change.change {
            Change::StillFailing if r.outcome == Outcome::Fail => Against::Known(format!(
                "{KNOWN}it failed the same way in the baseline {} (on no clause it did not break \
                 there)",
                self.dir.display()
            )),
            Change::Fixed => Against::Fixed,
            c if c.is_regression() && r.outcome == Outcome::Fail => {
                let clauses = if change.newly_broken.is_empty() {
                    String::new()
                } else {
                    format!(" (newly broken: {})", change.newly_broken.join(", "))
                };
                Against::Regressed(format!(
                    "new since the baseline {}: {}{clauses}",
                    self.dir.display(),
                    c.meaning()
                ))
            }
            _ => Against::Same,
        }
    }
}
