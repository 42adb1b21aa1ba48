//! Two reports side by side: what changed trial by trial and clause by clause between an earlier
//! run (the baseline, OLD) and a later one (NEW), what counts as a regression, and the renderings
//! of the comparison (terminal, JSON, Markdown). `ge-conformance compare OLD NEW` loads and
//! verifies two bundles and prints [`compare`]'s answer; nothing here reads a file.
//!
//! # The rules
//!
//! Trials are matched by name. Each trial's outcome in OLD and in NEW (or its absence) gives one
//! [`Change`]; the whole comparison regressed when any trial's change is a regression, or the
//! scope or the waivers changed in a way that fails NEW where OLD did not. One principle decides
//! every row: **NEW regressed when it fails where OLD did not**: a trial OLD passed fails in NEW
//! (a waiver does not hide it), a trial OLD did not judge or did not run fails NEW's run, a
//! waiver OLD applied no longer covers a failure, a failure breaks a clause OLD's did not, or a
//! judgement OLD made is lost (a skip never counts as a pass). A failure waived on a trial OLD
//! did not judge or run is known and accepted: listed, not counted.
//!
//! | OLD \ NEW | pass | deviation | fail | waived | unexpected-pass | not-supported | absent |
//! |---|---|---|---|---|---|---|---|
//! | pass | unchanged | new-deviation | **regressed** | **newly-waived** | **unexpected-pass** | **no-longer-judged** | **vanished** (went-away when explained) |
//! | deviation | deviation-resolved | unchanged (new-deviation or deviation-resolved as its clauses change) | **regressed** | **newly-waived** | **unexpected-pass** | **no-longer-judged** | **vanished** (went-away when explained) |
//! | fail | fixed | fixed | still-failing (**clause-regressed** on a new clause) | now-waived (**clause-regressed** on a new clause) | fixed (its waiver is stale: the run still fails) | **no-longer-judged** | **vanished** (went-away when explained) |
//! | waived | fixed | fixed | **waiver-lost** | still-failing (**clause-regressed** on a new clause) | **unexpected-pass** | **no-longer-judged** | **vanished** (went-away when explained) |
//! | unexpected-pass | fixed | fixed | **regressed** | **newly-waived** | unchanged | **no-longer-judged** | **vanished** (went-away when explained) |
//! | not-supported | newly-judged | newly-judged | **new-failure** | newly-judged | **unexpected-pass** | unchanged | went-away |
//! | absent | appeared | appeared | **new-failure** | appeared | **unexpected-pass** | appeared | |
//!
//! Each cell starts with the [`Change`] (its [`Change::as_str`]), in bold when it is a
//! regression; `tests/it/compare.rs` holds the table to what [`compare`] does. The choices behind
//! the cells that could go either way:
//!
//! - A trial that failed in both is *still failing*, not a regression, unless NEW's failure breaks
//!   a clause OLD's did not: then it is *clause regressed*, a regression, because a second bug
//!   must not hide behind a first one in the same trial. Clauses are compared only when both
//!   failures name them: a failure that names none (a breakdown: a crash, a timeout, a panic)
//!   says nothing of the clauses, and the trial is compared on its outcome alone.
//! - A waiver moves a failure out of the verdict, not out of the comparison: a trial OLD passed
//!   and NEW fails under a waiver is *newly waived*, a regression; a waiver that stops covering a
//!   failure (waived → fail) is *waiver lost*, a regression; a failure newly waived (fail →
//!   waived) is *now waived*, not a fix (the engine does the same).
//! - A trial that reaches `unexpected-pass` from an outcome that did not fail the run is a
//!   regression (NEW's run fails on it: a waiver names a trial that passes), even when it comes
//!   from `waived` (the engine was fixed, the waiver was not removed).
//! - A trial of a capability the engine no longer declares (judged → not supported) has lost its
//!   verdict: *no longer judged*, a regression. One of a capability newly declared is *newly
//!   judged*, and a *new failure* (a regression) when it fails.
//! - A trial NEW does not list *went away*. That is explained, and no regression, when the
//!   tables changed (the spec tables' digest or the vendor's own case tables' digest), or when
//!   the profile changed (the profiles select different cases). A trial OLD judged that went
//!   away with neither is *vanished*, a regression: a run of the same tables lists every trial
//!   (a verified bundle cannot lack one). A filter explains nothing: a NEW run filtered to leave
//!   out what would regress must not pass the gate (round seven, M3), so a trial OLD judged and
//!   NEW's filter left out is vanished too; compare runs of the same filter, or of none.
//! - A trial that *appeared* (NEW lists it, OLD does not) is no regression unless it fails the
//!   run: a failure OLD never ran is a failure OLD did not have.
//! - Deviations (the suite's own choices broken at level `documented`) never fail a run: new ones
//!   and resolved ones are listed, never counted as regressions.
//!
//! Beside the trials, the scope regressed when NEW declares fewer capabilities than OLD, or a
//! capability its run requires is not declared where OLD's was; the waivers regressed when NEW
//! has an expired waiver OLD did not have (an expired waiver fails the run). Settings that make
//! outcomes differ without the engine changing (level, profile, seed, scenarios per property,
//! filter) are listed, never judged: a property's broken clauses may differ with the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ge_spec::Capability;
use serde::{Deserialize, Serialize};

use crate::report::{Meta, Outcome, Report, Standing, Tally, TrialKind, TrialResult};

mod render;

/// What happened to one trial between two reports (the module docs hold the whole table).
/// Variants are declared in the order the renderings list them: regressions first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Judged passing in OLD (pass, deviation or unexpected pass), failing in NEW. A regression.
    Regressed,
    /// Judged passing in OLD, failing under a waiver in NEW. A regression.
    NewlyWaived,
    /// Waived in OLD, failing unwaived in NEW. A regression.
    WaiverLost,
    /// Failing in NEW where OLD did not judge it (capability not declared) or did not run it.
    /// A regression.
    NewFailure,
    /// An unexpected pass in NEW (a waiver names a trial that passes: the run fails) where OLD's
    /// outcome did not fail the run. A regression.
    UnexpectedPass,
    /// Failing (or waived) in both, NEW's failure breaking a clause OLD's did not. A regression.
    ClauseRegressed,
    /// Judged in OLD, not supported in NEW (the capability is no longer declared). A regression.
    NoLongerJudged,
    /// Judged in OLD, absent from NEW with nothing to explain it (same tables, same profile; a
    /// filter of NEW's explains nothing). A regression.
    Vanished,
    /// A failure of OLD (failing, waived, or an unexpected pass) that NEW no longer has.
    Fixed,
    /// Failing in OLD, waived in NEW, breaking no new clause: the engine does the same.
    NowWaived,
    /// Failing (or waived) in both, breaking no clause OLD's failure did not.
    StillFailing,
    /// NEW departs from a suite choice (a reference-defined clause) OLD's answer kept.
    NewDeviation,
    /// OLD departed from a suite choice NEW's answer keeps, and NEW departs from none it did not.
    DeviationResolved,
    /// Not judged in OLD (capability not declared), judged without failing the run in NEW.
    NewlyJudged,
    /// Absent from OLD, listed in NEW without failing its run.
    Appeared,
    /// Listed in OLD, absent from NEW, explained by changed tables or profile (or OLD did not
    /// judge it).
    WentAway,
}

impl Change {
    /// Every change, in the order the renderings list them.
    pub const ALL: [Change; 16] = [
        Change::Regressed,
        Change::NewlyWaived,
        Change::WaiverLost,
        Change::NewFailure,
        Change::UnexpectedPass,
        Change::ClauseRegressed,
        Change::NoLongerJudged,
        Change::Vanished,
        Change::Fixed,
        Change::NowWaived,
        Change::StillFailing,
        Change::NewDeviation,
        Change::DeviationResolved,
        Change::NewlyJudged,
        Change::Appeared,
        Change::WentAway,
    ];

    /// True when the change fails a comparison (`compare` exits 1).
    pub fn is_regression(self) -> bool {
        matches!(
            self,
            Change::Regressed
                | Change::NewlyWaived
                | Change::WaiverLost
                | Change::NewFailure
                | Change::UnexpectedPass
                | Change::ClauseRegressed
                | Change::NoLongerJudged
                | Change::Vanished
        )
    }

    /// True when the change is a fix: a failure of OLD that NEW no longer has.
    pub fn is_fix(self) -> bool {
        self == Change::Fixed
    }

    /// The change's name in the JSON comparison and the renderings.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Regressed => "regressed",
            Change::NewlyWaived => "newly-waived",
            Change::WaiverLost => "waiver-lost",
            Change::NewFailure => "new-failure",
            Change::UnexpectedPass => "unexpected-pass",
            Change::ClauseRegressed => "clause-regressed",
            Change::NoLongerJudged => "no-longer-judged",
            Change::Vanished => "vanished",
            Change::Fixed => "fixed",
            Change::NowWaived => "now-waived",
            Change::StillFailing => "still-failing",
            Change::NewDeviation => "new-deviation",
            Change::DeviationResolved => "deviation-resolved",
            Change::NewlyJudged => "newly-judged",
            Change::Appeared => "appeared",
            Change::WentAway => "went-away",
        }
    }

    /// What the change means, in words, beside its name in the renderings.
    pub fn meaning(self) -> &'static str {
        match self {
            Change::Regressed => "passed before, fails now",
            Change::NewlyWaived => "passed before, fails now under a waiver",
            Change::WaiverLost => "waived before, fails now",
            Change::NewFailure => "not judged or not run before, fails now",
            Change::UnexpectedPass => "a waiver names a trial that passes now: the run fails",
            Change::ClauseRegressed => "failed before, fails now on a clause it did not break",
            Change::NoLongerJudged => "judged before, not supported now (capability not declared)",
            Change::Vanished => {
                "listed before, not now, though the tables and profile are the same (a filter of NEW's left it out, or the engine's run lost it)"
            }
            Change::Fixed => "failed before (or failed the run), passes now",
            Change::NowWaived => "failed before, fails now under a waiver",
            Change::StillFailing => "failed before, fails now, on no new clause",
            Change::NewDeviation => "departs from a suite choice it kept before",
            Change::DeviationResolved => "keeps a suite choice it departed from before",
            Change::NewlyJudged => "not judged before (capability not declared), judged now",
            Change::Appeared => "not listed before",
            Change::WentAway => "not listed now (the tables or profile changed)",
        }
    }
}

/// One trial whose standing changed, or that still fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialChange {
    /// The trial's name, as both reports (or the one listing it) give it.
    pub name: String,
    /// Case or property.
    pub kind: TrialKind,
    /// The capability it exercises.
    pub capability: Capability,
    /// Its outcome in OLD; `None` when OLD does not list it.
    pub old: Option<Outcome>,
    /// Its outcome in NEW; `None` when NEW does not list it.
    pub new: Option<Outcome>,
    /// What the change amounts to.
    pub change: Change,
    /// True when [`Change::is_regression`].
    pub regression: bool,
    /// Clauses NEW's judgement breaks that OLD's did not (all NEW breaks when OLD did not judge
    /// the trial; none when either failure names no clause).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub newly_broken: Vec<String>,
    /// Clauses OLD's judgement broke that NEW's, judging the trial too, does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_longer_broken: Vec<String>,
    /// Suite choices NEW departs from that OLD did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub newly_deviating: Vec<String>,
    /// Suite choices OLD departed from that NEW, judging the trial too, does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_longer_deviating: Vec<String>,
}

/// How one clause's standing changed, gathered from the trials that cite it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClauseChange {
    /// The clause's ID.
    pub clause: String,
    /// The trials whose judgement in NEW breaks it and OLD's did not (or OLD did not judge).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub newly_broken: Vec<String>,
    /// The trials whose judgement in OLD broke it and NEW's does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_longer_broken: Vec<String>,
    /// The trials that depart from it in NEW and did not in OLD.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub newly_deviating: Vec<String>,
    /// The trials that departed from it in OLD and do not in NEW.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_longer_deviating: Vec<String>,
}

/// What one side of the comparison was: its run's metadata, verdict and totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    /// What the report was made of.
    pub meta: Meta,
    /// Its verdict.
    pub verdict: Standing,
    /// Its totals.
    pub totals: Tally,
}

/// A run setting that differs between the two reports (besides the tables and the scope).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingChange {
    /// What it is (`level`, `seed`, ...).
    pub setting: String,
    /// OLD's value (`none` when unset).
    pub old: String,
    /// NEW's value.
    pub new: String,
}

/// The tables the two runs were made against, when they differ: trials are then matched by
/// name, and one that appeared or went away may be the tables' doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablesChange {
    /// OLD's spec tables' digest.
    pub old_spec: String,
    /// NEW's spec tables' digest.
    pub new_spec: String,
    /// OLD's digest of the vendor's own case tables, if it had any.
    pub old_local: Option<String>,
    /// NEW's digest of the vendor's own case tables, if it had any.
    pub new_local: Option<String>,
}

/// How the capabilities declared and required changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeChange {
    /// Declared in NEW, not in OLD.
    pub added: Vec<Capability>,
    /// Declared in OLD, not in NEW: a regression.
    pub removed: Vec<Capability>,
    /// Required by NEW's run and not declared by its engine, where OLD's was not missing it:
    /// a regression.
    pub newly_missing: Vec<Capability>,
    /// Required by OLD's run and not declared by its engine, and not missing in NEW.
    pub no_longer_missing: Vec<Capability>,
}

impl ScopeChange {
    /// True when the scope regressed.
    pub fn regressed(&self) -> bool {
        !self.removed.is_empty() || !self.newly_missing.is_empty()
    }
}

/// How the waivers changed: the trials they cover, and the waivers reported as stale or expired.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiverChange {
    /// Trials waived in NEW and not in OLD.
    pub newly_waived: Vec<String>,
    /// Trials waived in OLD and not in NEW.
    pub no_longer_waived: Vec<String>,
    /// Expired waivers NEW reports that OLD did not: a regression (an expired waiver fails the
    /// run).
    pub expired_added: Vec<String>,
    /// Expired waivers OLD reported that NEW does not.
    pub expired_removed: Vec<String>,
    /// Stale waivers (waiving nothing) NEW reports that OLD did not.
    pub stale_added: Vec<String>,
    /// Stale waivers OLD reported that NEW does not.
    pub stale_removed: Vec<String>,
}

/// Two reports compared: [`compare`]'s answer, serialisable as the JSON `compare --format json`
/// prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// The earlier run (the baseline).
    pub old: Side,
    /// The later run.
    pub new: Side,
    /// True when anything regressed: a trial's change, the scope or the waivers.
    pub regressed: bool,
    /// How many regressions: trials whose change is one, plus capabilities dropped or newly
    /// missing, plus expired waivers added.
    pub regressions: usize,
    /// How many trials were fixed.
    pub fixes: usize,
    /// The tables, when they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<TablesChange>,
    /// Run settings that differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingChange>,
    /// How the capabilities changed.
    pub scope: ScopeChange,
    /// How the waivers changed.
    pub waivers: WaiverChange,
    /// Every trial whose standing changed, and every trial still failing, by name.
    pub trials: Vec<TrialChange>,
    /// Every clause some trial newly breaks, no longer breaks, or deviates from anew or no
    /// longer, by ID.
    pub clauses: Vec<ClauseChange>,
    /// Trial names a report lists more than once (`old: NAME` or `new: NAME`): only the first
    /// of each is compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<String>,
}

impl Comparison {
    /// The trials of one change, in name order.
    pub fn of(&self, change: Change) -> impl Iterator<Item = &TrialChange> {
        self.trials.iter().filter(move |t| t.change == change)
    }

    /// The trials whose change is a regression.
    pub fn regressed_trials(&self) -> impl Iterator<Item = &TrialChange> {
        self.trials.iter().filter(|t| t.regression)
    }

    /// Pretty JSON, safe on a terminal: every character a terminal could read as a control
    /// (besides the line breaks between fields) is written as JSON's `\uXXXX` escape, which
    /// reads back as the same string.
    pub fn to_json(&self) -> String {
        let json = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"comparison does not serialise: {e}\"}}"));
        let mut out = String::with_capacity(json.len());
        for c in json.chars() {
            // serde_json escapes the C0 controls inside strings; a raw line break is the
            // layout's. What is left (DEL, the C1 controls, the marks that reorder text) can
            // only sit inside a string.
            if c != '\n' && crate::input::unsafe_in_text(c) {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            } else {
                out.push(c);
            }
        }
        out
    }
}

/// Compares two reports, OLD the baseline and NEW the later run, by the rules of the module docs.
/// Reports are untrusted input (bundles come from third parties): nothing here panics on what
/// they hold, and a trial name listed twice is compared once (the first) and named in
/// [`Comparison::duplicates`].
pub fn compare(old: &Report, new: &Report) -> Comparison {
    let mut duplicates = Vec::new();
    let old_trials = by_name(old, "old", &mut duplicates);
    let new_trials = by_name(new, "new", &mut duplicates);
    let absence_explained = absence_explained(&old.meta, &new.meta);
    let names: BTreeSet<&str> = old_trials
        .keys()
        .chain(new_trials.keys())
        .copied()
        .collect();
    let trials: Vec<TrialChange> = names
        .into_iter()
        .filter_map(|name| {
            let (o, n) = (old_trials.get(name).copied(), new_trials.get(name).copied());
            trial_change(o, n, absence_explained)
        })
        .collect();
    let scope = scope_change(&old.meta, &new.meta);
    let waivers = waiver_change(old, new, &trials);
    let regressions = trials.iter().filter(|t| t.regression).count()
        + scope.removed.len()
        + scope.newly_missing.len()
        + waivers.expired_added.len();
    Comparison {
        old: side(old),
        new: side(new),
        regressed: regressions > 0,
        regressions,
        fixes: trials.iter().filter(|t| t.change.is_fix()).count(),
        tables: tables_change(&old.meta, &new.meta),
        settings: setting_changes(&old.meta, &new.meta),
        clauses: clause_changes(&trials),
        scope,
        waivers,
        trials,
        duplicates,
    }
}

/// A report's trials by name, the first of each name kept; the names seen again go into
/// `duplicates`, prefixed with `which`.
fn by_name<'r>(
    report: &'r Report,
    which: &str,
    duplicates: &mut Vec<String>,
) -> BTreeMap<&'r str, &'r TrialResult> {
    let mut out = BTreeMap::new();
    for t in &report.trials {
        if out.contains_key(t.name.as_str()) {
            duplicates.push(format!("{which}: {}", t.name));
        } else {
            out.insert(t.name.as_str(), t);
        }
    }
    out
}

/// True when a trial OLD lists and NEW does not may have gone away for a reason other than the
/// engine: the tables or the profile changed. NEW's filter is no such reason: whoever ran NEW
/// chose what it left out.
fn absence_explained(old: &Meta, new: &Meta) -> bool {
    old.spec_digest != new.spec_digest
        || old.local_cases != new.local_cases
        || old.profile != new.profile
}

/// True for an outcome that judged the trial's answer passing at the level in force.
fn passing(o: Outcome) -> bool {
    matches!(
        o,
        Outcome::Pass | Outcome::Deviation | Outcome::UnexpectedPass
    )
}

/// True for an outcome that judged the trial's answer failing (waived or not).
fn failing(o: Outcome) -> bool {
    matches!(o, Outcome::Fail | Outcome::Waived)
}

/// The change between two outcomes of a trial both reports list, before its clauses are looked
/// at: the rows of the module docs' table. `None` when nothing changed that is worth listing.
fn outcome_change(old: Outcome, new: Outcome) -> Option<Change> {
    use Outcome::{Deviation, Fail, NotSupported, Pass, UnexpectedPass, Waived};
    let change = match (old, new) {
        (NotSupported, NotSupported)
        | (Pass, Pass)
        | (Deviation, Deviation)
        | (UnexpectedPass, UnexpectedPass) => return None,
        (NotSupported, Fail) => Change::NewFailure,
        (_, UnexpectedPass) if !old.fails_run() => Change::UnexpectedPass,
        (_, NotSupported) => Change::NoLongerJudged,
        (NotSupported, _) => Change::NewlyJudged,
        (Waived, Fail) => Change::WaiverLost,
        (Fail, Waived) => Change::NowWaived,
        (Fail, Fail) | (Waived, Waived) => Change::StillFailing,
        (o, Fail) if passing(o) => Change::Regressed,
        (o, Waived) if passing(o) => Change::NewlyWaived,
        // What is left: OLD failing the run or judged failing, NEW passing.
        (_, Pass | Deviation | UnexpectedPass) if failing(old) || old.fails_run() => Change::Fixed,
        (Pass, Deviation) => Change::NewDeviation,
        (Deviation, Pass) => Change::DeviationResolved,
        // The guards above cover every pair left (OLD failing the run or judged failing, NEW
        // passing); the compiler cannot see it.
        _ => Change::Fixed,
    };
    Some(change)
}

/// `new` less `old`, sorted, each once.
fn minus(new: &[String], old: &[String]) -> Vec<String> {
    let old: BTreeSet<&String> = old.iter().collect();
    let out: BTreeSet<&String> = new.iter().filter(|c| !old.contains(c)).collect();
    out.into_iter().cloned().collect()
}

/// A failure that names no clause: a breakdown (a crash, a timeout, a panic).
fn breakdown(t: &TrialResult) -> bool {
    failing(t.outcome) && t.broken.is_empty()
}

/// The clause lists of a trial change: (newly broken, no longer broken, newly deviating, no
/// longer deviating). Both judged: the differences, clauses of a breakdown left out. Only NEW
/// judged: what NEW breaks and departs from. NEW did not judge it: nothing.
fn clause_lists(old: Option<&TrialResult>, new: Option<&TrialResult>) -> [Vec<String>; 4] {
    let (old, new) = (
        old.filter(|t| t.outcome.judged()),
        new.filter(|t| t.outcome.judged()),
    );
    match (old, new) {
        (Some(o), Some(n)) => {
            let (broken_added, broken_removed) = if breakdown(o) || breakdown(n) {
                (Vec::new(), Vec::new())
            } else {
                (minus(&n.broken, &o.broken), minus(&o.broken, &n.broken))
            };
            [
                broken_added,
                broken_removed,
                minus(&n.deviations, &o.deviations),
                minus(&o.deviations, &n.deviations),
            ]
        }
        (None, Some(n)) => [
            minus(&n.broken, &[]),
            Vec::new(),
            minus(&n.deviations, &[]),
            Vec::new(),
        ],
        (_, None) => Default::default(),
    }
}

/// The change of one trial from its OLD result to its NEW one (either may be absent, not both);
/// `None` when nothing worth listing changed.
/// What happened to one trial NEW judged, against its baseline `old` (`None`: OLD does not list
/// it), by the rules of the module docs; `None` when nothing changed and it does not fail.
/// The libtest route's baseline (`Suite::baseline`) judges each trial with it as it runs.
pub fn trial(old: Option<&TrialResult>, new: &TrialResult) -> Option<TrialChange> {
    trial_change(old, Some(new), false)
}

fn trial_change(
    old: Option<&TrialResult>,
    new: Option<&TrialResult>,
    absence_explained: bool,
) -> Option<TrialChange> {
    let [newly_broken, no_longer_broken, newly_deviating, no_longer_deviating] =
        clause_lists(old, new);
    let change = match (old.map(|t| t.outcome), new.map(|t| t.outcome)) {
        (Some(o), Some(n)) => match outcome_change(o, n) {
            Some(Change::StillFailing | Change::NowWaived) if !newly_broken.is_empty() => {
                Change::ClauseRegressed
            }
            Some(c) => c,
            // Unchanged outcome: its deviations may still differ.
            None if !newly_deviating.is_empty() => Change::NewDeviation,
            None if !no_longer_deviating.is_empty() => Change::DeviationResolved,
            None => return None,
        },
        (None, Some(Outcome::Fail)) => Change::NewFailure,
        (None, Some(Outcome::UnexpectedPass)) => Change::UnexpectedPass,
        (None, Some(_)) => Change::Appeared,
        (Some(o), None) if o.judged() && !absence_explained => Change::Vanished,
        (Some(_), None) => Change::WentAway,
        (None, None) => return None,
    };
    let t = new.or(old)?;
    Some(TrialChange {
        name: t.name.clone(),
        kind: t.kind,
        capability: t.capability,
        old: old.map(|t| t.outcome),
        new: new.map(|t| t.outcome),
        change,
        regression: change.is_regression(),
        newly_broken,
        no_longer_broken,
        newly_deviating,
        no_longer_deviating,
    })
}

/// The clauses the trial changes name, each with the trials that name it in each list.
fn clause_changes(trials: &[TrialChange]) -> Vec<ClauseChange> {
    let mut out: BTreeMap<String, ClauseChange> = BTreeMap::new();
    for t in trials {
        for c in &t.newly_broken {
            entry(&mut out, c).newly_broken.push(t.name.clone());
        }
        for c in &t.no_longer_broken {
            entry(&mut out, c).no_longer_broken.push(t.name.clone());
        }
        for c in &t.newly_deviating {
            entry(&mut out, c).newly_deviating.push(t.name.clone());
        }
        for c in &t.no_longer_deviating {
            entry(&mut out, c).no_longer_deviating.push(t.name.clone());
        }
    }
    out.into_values().collect()
}

/// The change of `clause` in `out`, made empty if it is not there yet.
fn entry<'o>(out: &'o mut BTreeMap<String, ClauseChange>, clause: &str) -> &'o mut ClauseChange {
    out.entry(clause.to_owned())
        .or_insert_with(|| ClauseChange {
            clause: clause.to_owned(),
            ..ClauseChange::default()
        })
}

/// How the capabilities declared and required changed.
fn scope_change(old: &Meta, new: &Meta) -> ScopeChange {
    let set = |caps: &[Capability]| caps.iter().copied().collect::<BTreeSet<Capability>>();
    let (old_caps, new_caps) = (set(&old.capabilities), set(&new.capabilities));
    let (old_missing, new_missing) = (
        set(&crate::report::missing(old)),
        set(&crate::report::missing(new)),
    );
    ScopeChange {
        added: new_caps.difference(&old_caps).copied().collect(),
        removed: old_caps.difference(&new_caps).copied().collect(),
        newly_missing: new_missing.difference(&old_missing).copied().collect(),
        no_longer_missing: old_missing.difference(&new_missing).copied().collect(),
    }
}

/// How the waivers changed, from the reports and their trial changes.
fn waiver_change(old: &Report, new: &Report, trials: &[TrialChange]) -> WaiverChange {
    let waived = |o: Option<Outcome>| o == Some(Outcome::Waived);
    WaiverChange {
        newly_waived: trials
            .iter()
            .filter(|t| waived(t.new) && !waived(t.old))
            .map(|t| t.name.clone())
            .collect(),
        no_longer_waived: trials
            .iter()
            .filter(|t| waived(t.old) && !waived(t.new))
            .map(|t| t.name.clone())
            .collect(),
        expired_added: minus(&new.expired_waivers, &old.expired_waivers),
        expired_removed: minus(&old.expired_waivers, &new.expired_waivers),
        stale_added: minus(&new.stale_waivers, &old.stale_waivers),
        stale_removed: minus(&old.stale_waivers, &new.stale_waivers),
    }
}

/// The tables of the two runs, when they differ.
fn tables_change(old: &Meta, new: &Meta) -> Option<TablesChange> {
    (old.spec_digest != new.spec_digest || old.local_cases != new.local_cases).then(|| {
        TablesChange {
            old_spec: old.spec_digest.clone(),
            new_spec: new.spec_digest.clone(),
            old_local: old.local_cases.clone(),
            new_local: new.local_cases.clone(),
        }
    })
}

/// The run settings that differ, besides the tables and the scope.
fn setting_changes(old: &Meta, new: &Meta) -> Vec<SettingChange> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
    let pairs = [
        ("backend", old.backend.clone(), new.backend.clone()),
        (
            "backend version",
            old.backend_version.clone(),
            new.backend_version.clone(),
        ),
        ("level", old.level.to_string(), new.level.to_string()),
        ("profile", old.profile.to_string(), new.profile.to_string()),
        ("seed", old.seed.to_string(), new.seed.to_string()),
        (
            "scenarios per property",
            old.case_budget.to_string(),
            new.case_budget.to_string(),
        ),
        ("filter", opt(&old.filter), opt(&new.filter)),
        (
            "upstream source",
            opt(&old.upstream_source),
            opt(&new.upstream_source),
        ),
        (
            "suite version",
            old.suite_version.clone(),
            new.suite_version.clone(),
        ),
    ];
    pairs
        .into_iter()
        .filter(|(_, o, n)| o != n)
        .map(|(setting, old, new)| SettingChange {
            setting: setting.to_owned(),
            old,
            new,
        })
        .collect()
}

/// One side of the comparison.
fn side(report: &Report) -> Side {
    Side {
        meta: report.meta.clone(),
        verdict: report.verdict,
        totals: report.totals,
    }
}
