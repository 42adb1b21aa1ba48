//! Certification reports: the verdict on every trial (case or property), summaries per clause
//! and per option, the deviations from the suite's own choices apart from the failures, and
//! renderers for the terminal, JSON, Markdown and JUnit XML.

use std::collections::BTreeMap;

use ge_spec::{Capability, Conformance, Profile, Spec};
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod junit;
mod markdown;
mod text;
mod xml;

// The escapes of the Markdown rendering, for the other Markdown the crate writes (a comparison).
pub(crate) use markdown::{code_cell, md};

/// The outcome of one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The backend answered as the contract says.
    Pass,
    /// It did not (or broke down, or declared a capability and refused it).
    Fail,
    /// The capability is not declared by the backend: not judged, never a pass.
    NotSupported,
    /// It failed, and an expectations entry waives the failure.
    Waived,
    /// It departed only from the suite's own choices (reference-defined clauses) at a level where
    /// they do not bind: reported, never a failure.
    Deviation,
    /// An expectations entry waives it, but it passed: the entry is out of date. Fails the run.
    UnexpectedPass,
}

impl Outcome {
    /// The outcome's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::NotSupported => "not-supported",
            Outcome::Waived => "waived",
            Outcome::Deviation => "deviation",
            Outcome::UnexpectedPass => "unexpected-pass",
        }
    }

    /// True when this outcome stops certification.
    pub fn fails_run(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::UnexpectedPass)
    }

    /// True when the trial was run and its answer judged (everything but not supported).
    pub fn judged(self) -> bool {
        self != Outcome::NotSupported
    }
}

/// Whether a trial is a table case or a generated property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TrialKind {
    /// A `[[case]]` of the tables.
    Case,
    /// A property over generated scenarios.
    Property,
}

/// The result of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TrialResult {
    /// `<table>/<case>` or `property/<capability>`.
    pub name: String,
    /// Case or property.
    pub kind: TrialKind,
    /// The capability exercised.
    pub capability: Capability,
    /// The clauses the trial checks.
    pub clauses: Vec<String>,
    /// The outcome.
    pub outcome: Outcome,
    /// For failures: what went wrong; for waivers: the reason and tracker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The clauses a failure implicates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    /// The suite's choices (reference-defined clauses) the answer departs from, at a level where
    /// they do not bind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<String>,
    /// For failures: the scenario (after shrinking, for properties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<serde_json::Value>,
    /// Wall time the trial took, in microseconds (0 when unknown).
    #[serde(default)]
    pub micros: u64,
    /// For failures: a command line that reproduces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    /// For properties: how many scenarios were generated and judged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scenarios: u32,
    /// For properties: one counterexample per distinct clause broken, each shrunk for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counterexamples: Vec<Counterexample>,
    /// For failures drawn in a report bundle: the picture's file name beside `report.json`
    /// (the backend's answer beside the reference's, see `ge_conformance::draw`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picture: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A scenario of a property that breaks one clause, shrunk for that clause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Counterexample {
    /// The clauses broken (empty when the backend broke down).
    pub clauses: Vec<String>,
    /// True when the clause is a suite choice that does not bind at the level in force.
    pub deviation: bool,
    /// What differs.
    pub message: String,
    /// The scenario.
    pub scenario: serde_json::Value,
    /// A command line that reproduces it.
    pub reproducer: String,
}

impl TrialResult {
    /// A passing trial of `name`, to be filled in.
    pub fn new(
        name: String,
        kind: TrialKind,
        capability: Capability,
        clauses: Vec<String>,
    ) -> Self {
        TrialResult {
            name,
            kind,
            capability,
            clauses,
            outcome: Outcome::Pass,
            message: None,
            broken: Vec::new(),
            deviations: Vec::new(),
            scenario: None,
            reproducer: None,
            scenarios: 0,
            counterexamples: Vec::new(),
            micros: 0,
            picture: None,
        }
    }

    /// Sets the outcome, clauses, message, scenario and reproducer of a property from its
    /// counterexamples (failures first): the first one stands for the trial.
    pub fn fill_from_counterexamples(&mut self, counterexamples: Vec<Counterexample>) {
        let clauses = |deviation: bool| {
            let mut c: Vec<String> = counterexamples
                .iter()
                .filter(|x| x.deviation == deviation)
                .flat_map(|x| x.clauses.clone())
                .collect();
            c.sort();
            c.dedup();
            c
        };
        self.broken = clauses(false);
        self.deviations = clauses(true);
        self.outcome = if counterexamples.iter().any(|c| !c.deviation) {
            Outcome::Fail
        } else if counterexamples.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Deviation
        };
        if let Some(first) = counterexamples.first() {
            self.message = Some(
                counterexamples
                    .iter()
                    .map(|c| {
                        let tag = if c.deviation { "deviation " } else { "" };
                        let line = if c.clauses.is_empty() {
                            c.message.clone()
                        } else {
                            format!("{tag}[{}] {}", c.clauses.join(", "), c.message)
                        };
                        // Each clause shrinks on its own: the scenario shown after the message
                        // is the first one's, so another one says where it was found.
                        if c.scenario == first.scenario {
                            line
                        } else {
                            format!("{line}\n  found on: {}", c.scenario)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            self.scenario = Some(first.scenario.clone());
            self.reproducer = Some(first.reproducer.clone());
        }
        self.counterexamples = counterexamples;
    }
}

/// What a report was made of: enough for a third party to redo and check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Meta {
    /// Always `ge-conformance`.
    pub suite: String,
    /// Version of the suite.
    pub suite_version: String,
    /// SHA-256 of the spec tables ([`Spec::digest`]).
    pub spec_digest: String,
    /// The backend's name.
    pub backend: String,
    /// The backend's version.
    pub backend_version: String,
    /// The capabilities the backend declared.
    pub capabilities: Vec<Capability>,
    /// The capabilities the run was required to cover (`certify --require`,
    /// `Suite::require`): one the backend does not declare fails the run. Empty when none was
    /// required.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<Capability>,
    /// The behaviour profile judged against.
    pub profile: Profile,
    /// The conformance level judged at.
    pub level: Conformance,
    /// The seed of the generated scenarios.
    pub seed: u64,
    /// Generated scenarios per property.
    pub case_budget: u32,
    /// The filter the run was restricted to: a partial run, never a certification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// SHA-256 of the vendor's own case tables run beside the contract's
    /// (`ge_spec::Spec::local_digest`); absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_cases: Option<String>,
    /// Under the upstream profile, the GE source it was checked against, `owner/name@commit`
    /// (the tables' `upstream.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_source: Option<String>,
    /// How a subprocess backend was confined (its own watched `$TMPDIR` and `$HOME`, and
    /// Landlock or not: `ge_conformance::confine`); absent for an in-process backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<String>,
    /// When the run started, RFC 3339 in UTC (`2026-12-01T20:45:07Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// The machine it ran on (its host name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Wall time of the whole run, in microseconds.
    #[serde(default)]
    pub micros: u64,
}

/// Counts of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Tally {
    /// Passed.
    pub passed: u32,
    /// Failed.
    pub failed: u32,
    /// Not supported.
    pub not_supported: u32,
    /// Waived.
    pub waived: u32,
    /// Unexpected passes.
    pub unexpected_pass: u32,
    /// Deviations from the suite's own choices.
    #[serde(default)]
    pub deviations: u32,
}

impl Tally {
    /// Counts one more trial of `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::NotSupported => self.not_supported += 1,
            Outcome::Waived => self.waived += 1,
            Outcome::UnexpectedPass => self.unexpected_pass += 1,
            Outcome::Deviation => self.deviations += 1,
        }
    }

    /// Every trial counted.
    pub fn total(&self) -> u32 {
        self.passed
            + self.failed
            + self.not_supported
            + self.waived
            + self.unexpected_pass
            + self.deviations
    }
}

/// What a report amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Every trial ran, every declared (and every required) capability was judged, nothing
    /// failed at the level in force, and no failure was waived.
    Certified,
    /// As `certified`, except that failures were waived: a vendor's own CI may accept it
    /// (`certify` exits 0), a third-party certification does not (`verify --no-waivers`).
    CertifiedWithWaivers,
    /// A trial failed, a waived trial passed, a waiver expired, a declared capability had no
    /// trial that passed (all not supported, or all waived), or a required capability is not
    /// declared.
    NotCertified,
    /// A filtered run: nothing failed among the trials it ran, but it is not a certification.
    Partial,
    /// The backend declares no capability.
    NothingToCertify,
}

impl Standing {
    /// True for a certification, with waivers or without.
    pub fn is_certified(self) -> bool {
        matches!(self, Standing::Certified | Standing::CertifiedWithWaivers)
    }

    /// The verdict's words in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Certified => "certified",
            Standing::CertifiedWithWaivers => "certified with waivers",
            Standing::NotCertified => "not certified",
            Standing::Partial => "partial run, not a certification",
            Standing::NothingToCertify => "nothing to certify",
        }
    }
}

/// A certification report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Report {
    /// What the report was made of.
    pub meta: Meta,
    /// What the report amounts to.
    pub verdict: Standing,
    /// True exactly when the verdict is `certified` or `certified-with-waivers` (the verdict
    /// says which; [`Standing::is_certified`]).
    pub certified: bool,
    /// All trials together.
    pub totals: Tally,
    /// Per clause ID.
    pub clauses: BTreeMap<String, Tally>,
    /// Per option key (`cross-cutting` for clauses of no option).
    pub options: BTreeMap<String, Tally>,
    /// Every trial.
    pub trials: Vec<TrialResult>,
    /// Waivers that matched nothing.
    #[serde(default)]
    pub stale_waivers: Vec<String>,
    /// Waivers past their expiry date (each fails the run).
    #[serde(default)]
    pub expired_waivers: Vec<String>,
    /// What the backend wrote to its standard error (subprocess backends).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub backend_stderr: String,
    /// The pictures of failures, by file name (SVG text): written into a bundle beside the
    /// reports and inlined in `report.html`, never part of `report.json` (its trials name them).
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub pictures: BTreeMap<String, String>,
}

/// A waiver a report names beside its trials, under the name `cargo test` gives its trial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaiverNote {
    /// `waiver/expired/<pattern>` or `waiver/stale/<pattern>`.
    pub name: String,
    /// An expired waiver fails the run; a stale one fails nothing.
    pub fails: bool,
    /// What it is and what to do about it.
    pub why: String,
}

/// The option a clause belongs to, or `cross-cutting`.
pub fn option_of(spec: &Spec, clause: &str) -> String {
    spec.clause(clause)
        .and_then(|c| c.option)
        .map_or_else(|| "cross-cutting".to_owned(), |k| k.as_str().to_owned())
}

/// The tallies of a list of trials: all together, per clause, per option.
pub fn tallies(
    trials: &[TrialResult],
) -> (Tally, BTreeMap<String, Tally>, BTreeMap<String, Tally>) {
    let spec = Spec::embedded();
    let mut totals = Tally::default();
    let mut clauses: BTreeMap<String, Tally> = BTreeMap::new();
    let mut options: BTreeMap<String, Tally> = BTreeMap::new();
    for t in trials {
        totals.add(t.outcome);
        let mut opts: Vec<String> = Vec::new();
        for c in &t.clauses {
            clauses.entry(c.clone()).or_default().add(t.outcome);
            opts.push(option_of(spec, c));
        }
        opts.sort();
        opts.dedup();
        for o in opts {
            options.entry(o).or_default().add(t.outcome);
        }
    }
    (totals, clauses, options)
}

/// The verdict the trials of a run amount to (see [`Standing`]).
pub fn standing(meta: &Meta, trials: &[TrialResult], expired: &[String]) -> Standing {
    if meta.capabilities.is_empty() {
        return Standing::NothingToCertify;
    }
    let failed = trials.iter().any(|t| t.outcome.fails_run()) || !expired.is_empty();
    // A waiver covers a failure, never the judging: a capability counts as judged when some
    // trial of it passed (or deviated), not when all of them were waived.
    let unjudged = meta.capabilities.iter().any(|cap| {
        !trials.iter().any(|t| {
            t.capability == *cap && matches!(t.outcome, Outcome::Pass | Outcome::Deviation)
        })
    });
    let waived = trials.iter().any(|t| t.outcome == Outcome::Waived);
    match (failed, meta.filter.is_some()) {
        (true, _) => Standing::NotCertified,
        (false, true) => Standing::Partial,
        (false, false) if unjudged || !missing(meta).is_empty() => Standing::NotCertified,
        (false, false) if waived => Standing::CertifiedWithWaivers,
        (false, false) => Standing::Certified,
    }
}

/// The capabilities `meta` requires that the backend does not declare.
pub fn missing(meta: &Meta) -> Vec<Capability> {
    meta.required
        .iter()
        .filter(|c| !meta.capabilities.contains(c))
        .copied()
        .collect()
}

impl Report {
    /// Builds a report from trial results, computing the summaries and the verdict.
    pub fn new(
        meta: Meta,
        trials: Vec<TrialResult>,
        stale: Vec<String>,
        expired: Vec<String>,
    ) -> Report {
        let (totals, clauses, options) = tallies(&trials);
        let verdict = standing(&meta, &trials, &expired);
        Report {
            meta,
            verdict,
            certified: verdict.is_certified(),
            totals,
            clauses,
            options,
            trials,
            stale_waivers: stale,
            expired_waivers: expired,
            backend_stderr: String::new(),
            pictures: BTreeMap::new(),
        }
    }

    /// The trials that departed from a choice of the suite's (deviations at level
    /// `documented`), in run order: what every rendering lists under "Deviations".
    pub fn deviating(&self) -> Vec<&TrialResult> {
        self.trials
            .iter()
            .filter(|t| !t.deviations.is_empty())
            .collect()
    }

    /// The expired and stale waivers, named as `cargo test` names their trials, so every
    /// rendering and both routes call them alike. (A waiver's pattern is its entry up to ` (`.)
    pub fn waiver_notes(&self) -> Vec<WaiverNote> {
        let pattern = |entry: &str| entry.split_once(" (").map_or(entry, |(p, _)| p).to_owned();
        let expired = self.expired_waivers.iter().map(|w| WaiverNote {
            name: format!("waiver/expired/{}", pattern(w)),
            fails: true,
            why: format!("expired waiver {w}: renew it or remove it"),
        });
        let stale = self.stale_waivers.iter().map(|w| WaiverNote {
            name: format!("waiver/stale/{}", pattern(w)),
            fails: false,
            why: format!("waiver {w} waives nothing (it names no trial, or no trial fails on its clause): remove it"),
        });
        expired.chain(stale).collect()
    }

    /// The verdict line every rendering ends with (or starts with): what the report amounts to,
    /// at which level and profile, with the totals.
    pub fn verdict_line(&self) -> String {
        let m = &self.meta;
        let t = &self.totals;
        let scope = if t.not_supported == 0 {
            String::new()
        } else {
            let caps: Vec<&str> = m.capabilities.iter().map(|c| c.as_str()).collect();
            format!("for {} only, ", caps.join(", "))
        };
        let head = match self.verdict {
            Standing::Certified => {
                format!(
                    "CERTIFIED {scope}at level {} (profile {})",
                    m.level, m.profile
                )
            }
            Standing::CertifiedWithWaivers => format!(
                "CERTIFIED WITH WAIVERS ({}) {scope}at level {} (profile {})",
                t.waived, m.level, m.profile
            ),
            Standing::NotCertified => {
                let missing = missing(m);
                let why = if missing.is_empty() {
                    String::new()
                } else {
                    let caps: Vec<&str> = missing.iter().map(|c| c.as_str()).collect();
                    format!("; required but not declared: {}", caps.join(", "))
                };
                format!(
                    "NOT CERTIFIED at level {} (profile {}{why})",
                    m.level, m.profile
                )
            }
            Standing::Partial => format!(
                "PARTIAL RUN (filter {:?}), NOT A CERTIFICATION, at level {} (profile {})",
                m.filter.clone().unwrap_or_default(),
                m.level,
                m.profile
            ),
            Standing::NothingToCertify => {
                "NOTHING TO CERTIFY: the backend declares no capability".to_owned()
            }
        };
        format!(
            "{head}: {} passed, {} failed, {} deviations, {} not supported, {} waived, {} unexpected passes",
            t.passed, t.failed, t.deviations, t.not_supported, t.waived, t.unexpected_pass
        )
    }

    /// Pretty JSON (the schema is `spec/schema/report.schema.json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"report does not serialise: {e}\"}}"))
    }
}

/// The file name of the `n`-th picture of a report bundle.
pub fn picture_file(n: usize) -> String {
    format!("picture-{n:03}.svg")
}

/// True for the name of a picture of a bundle (`picture-NNN.svg`).
pub fn is_picture_file(name: &str) -> bool {
    name.strip_prefix("picture-")
        .and_then(|rest| rest.strip_suffix(".svg"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The JSON Schema of the JSON report, as (file name under `spec/schema/`, schema).
#[cfg(feature = "schema")]
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    vec![(
        "report.schema.json",
        serde_json::to_value(schemars::schema_for!(Report)).unwrap_or(serde_json::Value::Null),
    )]
}
