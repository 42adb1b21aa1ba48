//! Certification reports: the verdict on every trial (case or property), summaries per clause
//! and per option, the deviations from the suite's own choices apart from the failures, and
//! renderers for the terminal, JSON, Markdown and JUnit XML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ge_spec::{Capability, Conformance, Profile, Spec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The outcome of one trial.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrialKind {
    /// A `[[case]]` of the tables.
    Case,
    /// A property over generated scenarios.
    Property,
}

/// The result of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    fn add(&mut self, outcome: Outcome) {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Every trial ran, every declared capability was judged, and nothing failed at the level
    /// in force.
    Certified,
    /// A trial failed, a waived trial passed, a waiver expired, or a declared capability had no
    /// trial that passed (all not supported, or all waived).
    NotCertified,
    /// A filtered run: nothing failed among the trials it ran, but it is not a certification.
    Partial,
    /// The backend declares no capability.
    NothingToCertify,
}

impl Standing {
    /// The verdict's words in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Certified => "certified",
            Standing::NotCertified => "not certified",
            Standing::Partial => "partial run, not a certification",
            Standing::NothingToCertify => "nothing to certify",
        }
    }
}

/// A certification report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// What the report was made of.
    pub meta: Meta,
    /// What the report amounts to.
    pub verdict: Standing,
    /// True exactly when the verdict is `certified`.
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
    #[schemars(skip)]
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
    match (failed, meta.filter.is_some()) {
        (true, _) => Standing::NotCertified,
        (false, true) => Standing::Partial,
        (false, false) if unjudged => Standing::NotCertified,
        (false, false) => Standing::Certified,
    }
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
            certified: verdict == Standing::Certified,
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
            why: format!("waiver {w} matches no trial of the suite: remove it"),
        });
        expired.chain(stale).collect()
    }

    /// The verdict line every rendering ends with (or starts with): what the report amounts to,
    /// at which level and profile, with the totals.
    pub fn verdict_line(&self) -> String {
        let m = &self.meta;
        let t = &self.totals;
        let head = match self.verdict {
            Standing::Certified if t.not_supported == 0 => {
                format!("CERTIFIED at level {} (profile {})", m.level, m.profile)
            }
            Standing::Certified => format!(
                "CERTIFIED for {} only, at level {} (profile {})",
                m.capabilities
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                m.level,
                m.profile
            ),
            Standing::NotCertified => {
                format!("NOT CERTIFIED at level {} (profile {})", m.level, m.profile)
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

    /// The terminal rendering: a per-option table, every failure with its reproducer, the
    /// deviations, and the verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let m = &self.meta;
        let _ = writeln!(
            out,
            "ge-conformance {} — backend {} {}",
            m.suite_version, m.backend, m.backend_version
        );
        let _ = writeln!(
            out,
            "spec tables {}  profile {}  level {}  seed {}  scenarios per property {}{}{}",
            &m.spec_digest[..16.min(m.spec_digest.len())],
            m.profile,
            m.level,
            m.seed,
            m.case_budget,
            m.filter
                .as_ref()
                .map(|f| format!("  filter {f:?} (partial run)"))
                .unwrap_or_default(),
            m.upstream_source
                .as_ref()
                .map(|u| format!("\nupstream profile checked against GE source {u}"))
                .unwrap_or_default()
        );
        if let Some(d) = &m.local_cases {
            let _ = writeln!(
                out,
                "with the vendor's own case tables {}",
                &d[..16.min(d.len())]
            );
        }
        if let Some(c) = &m.confinement {
            let _ = writeln!(out, "confinement of the backend: {c}");
        }
        let _ = writeln!(out);
        let width = self
            .options
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(6)
            .max(10);
        let _ = writeln!(
            out,
            "{:<width$}  {:>6} {:>6} {:>9} {:>13} {:>6}",
            "option", "passed", "failed", "deviation", "not-supported", "waived"
        );
        let row = |out: &mut String, name: &str, t: &Tally| {
            let _ = writeln!(
                out,
                "{name:<width$}  {:>6} {:>6} {:>9} {:>13} {:>6}",
                t.passed,
                t.failed + t.unexpected_pass,
                t.deviations,
                t.not_supported,
                t.waived
            );
        };
        for (option, t) in &self.options {
            row(&mut out, option, t);
        }
        row(&mut out, "all trials", &self.totals);
        for trial in self.trials.iter().filter(|t| t.outcome.fails_run()) {
            let _ = writeln!(
                out,
                "\n{} {}: {}",
                trial.outcome.as_str().to_uppercase(),
                trial.name,
                trial.clauses.join(", ")
            );
            if let Some(msg) = &trial.message {
                for line in msg.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
            if trial.counterexamples.len() > 1 {
                for c in trial.counterexamples.iter().skip(1) {
                    let _ = writeln!(
                        out,
                        "    counterexample for [{}]: {}\n    reproduce: {}",
                        c.clauses.join(", "),
                        c.scenario,
                        c.reproducer
                    );
                }
            }
            if let Some(s) = &trial.scenario {
                let _ = writeln!(out, "    scenario: {s}");
            }
            if let Some(r) = &trial.reproducer {
                let _ = writeln!(out, "    reproduce: {r}");
            }
            if let Some(p) = &trial.picture {
                let _ = writeln!(out, "    picture: {p} (in the report bundle)");
            }
        }
        let deviating: Vec<_> = self
            .trials
            .iter()
            .filter(|t| !t.deviations.is_empty())
            .collect();
        if !deviating.is_empty() {
            let _ = writeln!(
                out,
                "\nDEVIATIONS from the suite's own choices (reference-defined clauses; not judged at level {}):",
                m.level
            );
            for t in deviating {
                let _ = writeln!(out, "  {}: {}", t.name, t.deviations.join(", "));
            }
        }
        for n in self.waiver_notes() {
            let what = if n.fails { "FAIL" } else { "ignored" };
            let _ = writeln!(out, "\n{} ({what}): {}", n.name, n.why);
        }
        if !self.backend_stderr.is_empty() {
            let _ = writeln!(out, "\nbackend stderr:\n{}", self.backend_stderr);
        }
        let _ = writeln!(out, "\n{}", self.verdict_line());
        out
    }

    /// Markdown: metadata, per-option and per-clause tables, failures, deviations.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let m = &self.meta;
        let _ = writeln!(
            out,
            "# ge-conformance report: {} {}\n",
            md(&m.backend),
            md(&m.backend_version)
        );
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(out, "| verdict | **{}** |", self.verdict.as_str());
        let _ = writeln!(out, "| level | {} |", m.level);
        let _ = writeln!(out, "| profile | {} |", m.profile);
        if let Some(u) = &m.upstream_source {
            let _ = writeln!(out, "| upstream GE source | `{}` |", md(u));
        }
        if let Some(c) = &m.confinement {
            let _ = writeln!(out, "| confinement | {} |", md(c));
        }
        if let Some(t) = &m.started {
            let _ = writeln!(
                out,
                "| started | {} ({:.1} s{}) |",
                md(t),
                m.micros as f64 / 1e6,
                m.host
                    .as_ref()
                    .map(|h| format!(" on {}", md(h)))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(out, "| suite | {} {} |", m.suite, m.suite_version);
        let _ = writeln!(out, "| spec tables (SHA-256) | `{}` |", m.spec_digest);
        let _ = writeln!(
            out,
            "| capabilities | {} |",
            m.capabilities
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(f) = &m.filter {
            let _ = writeln!(out, "| filter (partial run) | `{}` |", md(f));
        }
        if let Some(d) = &m.local_cases {
            let _ = writeln!(out, "| the vendor's own case tables (SHA-256) | `{d}` |");
        }
        let _ = writeln!(out, "| seed | {} |", m.seed);
        let _ = writeln!(out, "| scenarios per property | {} |\n", m.case_budget);
        let _ = writeln!(out, "{}\n", md(&self.verdict_line()));
        let table = |out: &mut String, title: &str, rows: &BTreeMap<String, Tally>| {
            let _ = writeln!(out, "## {title}\n\n| {title} | passed | failed | deviation | not supported | waived | unexpected pass |\n|---|---:|---:|---:|---:|---:|---:|");
            for (k, t) in rows {
                let _ = writeln!(
                    out,
                    "| `{k}` | {} | {} | {} | {} | {} | {} |",
                    t.passed, t.failed, t.deviations, t.not_supported, t.waived, t.unexpected_pass
                );
            }
            let _ = writeln!(out);
        };
        table(&mut out, "option", &self.options);
        table(&mut out, "clause", &self.clauses);
        let failing: Vec<_> = self
            .trials
            .iter()
            .filter(|t| t.outcome.fails_run())
            .collect();
        if !failing.is_empty() {
            let _ = writeln!(out, "## Failures\n");
            for t in failing {
                let _ = writeln!(out, "### `{}` ({})\n", md(&t.name), t.outcome.as_str());
                let _ = writeln!(out, "Clauses: {}\n", t.clauses.join(", "));
                if let Some(msg) = &t.message {
                    let _ = writeln!(out, "{}\n", fenced("text", msg));
                }
                if let Some(r) = &t.reproducer {
                    let _ = writeln!(out, "Reproduce:\n\n{}\n", fenced("sh", r));
                }
                if let Some(p) = t.picture.as_deref().filter(|p| is_picture_file(p)) {
                    let _ = writeln!(
                        out,
                        "Picture, the backend's answer beside the reference's ([{p}]({p})):\n\n![{} drawn]({p})\n",
                        md(&t.name)
                    );
                }
            }
        }
        let deviating: Vec<_> = self
            .trials
            .iter()
            .filter(|t| !t.deviations.is_empty())
            .collect();
        if !deviating.is_empty() {
            let _ = writeln!(
                out,
                "## Deviations\n\nDepartures from the suite's own choices (reference-defined clauses), not judged at level {}.\n\n| trial | clauses |\n|---|---|",
                m.level
            );
            for t in deviating {
                let _ = writeln!(out, "| `{}` | {} |", md(&t.name), t.deviations.join(", "));
            }
            let _ = writeln!(out);
        }
        let notes = self.waiver_notes();
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "## Waivers\n\n| trial | outcome | why |\n|---|---|---|"
            );
            for n in notes {
                let what = if n.fails { "fail" } else { "ignored" };
                let _ = writeln!(out, "| {} | {what} | {} |", code_cell(&n.name), md(&n.why));
            }
            let _ = writeln!(out);
        }
        out
    }

    /// JUnit XML: one test suite per capability, one test case per trial. A deviation is a
    /// skipped test whose message starts with `deviation`: not a pass, not a failure.
    pub fn to_junit(&self) -> String {
        use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
        let m = &self.meta;
        let duration = std::time::Duration::from_micros;
        let timestamp = m
            .started
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        let mut properties = vec![
            ("spec_digest", m.spec_digest.clone()),
            ("backend", m.backend.clone()),
            ("profile", m.profile.to_string()),
            ("level", m.level.to_string()),
            ("verdict", self.verdict.as_str().to_owned()),
            ("seed", m.seed.to_string()),
        ];
        for (name, value) in [
            ("filter", &m.filter),
            ("local_cases", &m.local_cases),
            ("upstream_source", &m.upstream_source),
            ("confinement", &m.confinement),
            ("host", &m.host),
        ] {
            if let Some(v) = value {
                properties.push((name, v.clone()));
            }
        }
        let mut report = quick_junit::Report::new("ge-conformance");
        report.set_time(duration(m.micros));
        if let Some(t) = timestamp {
            report.set_timestamp(t);
        }
        // The backend's standard error goes with the first suite that failed (or the first).
        let stderr_with = Capability::ALL
            .iter()
            .copied()
            .filter(|c| self.trials.iter().any(|t| t.capability == *c))
            .find(|c| {
                self.trials
                    .iter()
                    .any(|t| t.capability == *c && t.outcome.fails_run())
            })
            .or_else(|| self.trials.first().map(|t| t.capability));
        for cap in Capability::ALL {
            let trials: Vec<_> = self.trials.iter().filter(|x| x.capability == cap).collect();
            if trials.is_empty() {
                continue;
            }
            let mut suite = TestSuite::new(cap.as_str());
            suite.set_time(duration(trials.iter().map(|t| t.micros).sum()));
            if let Some(t) = timestamp {
                suite.set_timestamp(t);
            }
            suite.add_properties(
                properties
                    .iter()
                    .map(|(n, v)| Property::new(*n, spelled(v))),
            );
            if stderr_with == Some(cap) && !self.backend_stderr.is_empty() {
                suite.set_system_err(spelled(&self.backend_stderr));
            }
            for trial in trials {
                let message = trial.message.clone().unwrap_or_default();
                let status = match trial.outcome {
                    Outcome::Pass => TestCaseStatus::success(),
                    Outcome::Fail | Outcome::UnexpectedPass => {
                        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        // What a dashboard shows in one line: the broken clauses and the
                        // first line of what differs; the whole message and the reproducer
                        // below it.
                        status
                            .set_message(spelled(&junit_failure_line(&trial.broken, &message)))
                            .set_type(trial.outcome.as_str())
                            .set_description(spelled(&format!(
                                "{message}\n{}",
                                trial.reproducer.clone().unwrap_or_default()
                            )));
                        status
                    }
                    Outcome::NotSupported | Outcome::Waived | Outcome::Deviation => {
                        let mut status = TestCaseStatus::skipped();
                        let clauses = if trial.outcome == Outcome::Deviation {
                            trial.deviations.as_slice()
                        } else {
                            &[]
                        };
                        status.set_message(spelled(&junit_skipped_message(
                            trial.outcome,
                            clauses,
                            &message,
                        )));
                        status
                    }
                };
                let mut case = TestCase::new(spelled(&trial.name), status);
                case.set_classname(cap.as_str())
                    .set_time(duration(trial.micros));
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        // Expired and stale waivers are test cases too, named as under `cargo test`: a
        // dashboard shows why a run with no failing trial failed.
        let notes = self.waiver_notes();
        if !notes.is_empty() {
            let mut suite = TestSuite::new("waivers");
            if let Some(t) = timestamp {
                suite.set_timestamp(t);
            }
            for n in notes {
                let mut status = if n.fails {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_type("expired-waiver");
                    status
                } else {
                    TestCaseStatus::skipped()
                };
                status.set_message(spelled(&n.why));
                let mut case = TestCase::new(spelled(&n.name), status);
                case.set_classname("waivers");
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        report
            .to_string()
            .map(|xml| root_as_schema_lists(&xml))
            .unwrap_or_else(|e| format!("<!-- the JUnit report could not be written: {e} -->\n"))
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

/// A failed trial's one line for a dashboard: its broken clauses once, then the first line of
/// what differs without the clause tag that line may start with (`[IFS-001] [IFS-001] ...`
/// before); with no broken clause (a backend that crashed), that line alone, or the outcome.
fn junit_failure_line(broken: &[String], message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let rest = without_clause_tag(first);
    match (broken.is_empty(), rest.is_empty()) {
        (true, true) => "fail".to_owned(),
        (true, false) => first.to_owned(),
        (false, true) => format!("[{}]", broken.join(", ")),
        (false, false) => format!("[{}] {rest}", broken.join(", ")),
    }
}

/// A skipped trial's message: the outcome, a deviation's clauses, then the message without the
/// outcome's name it may already start with (`waived: waived: ...` before).
fn junit_skipped_message(outcome: Outcome, clauses: &[String], message: &str) -> String {
    let name = outcome.as_str();
    let body = message
        .strip_prefix(name)
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(message);
    if clauses.is_empty() {
        format!("{name}: {body}")
    } else {
        format!("{name} [{}]: {body}", clauses.join(", "))
    }
}

/// `line` without a leading clause tag such as `[IRM-003]` or `[SMP-011, SES-010]`.
fn without_clause_tag(line: &str) -> &str {
    let Some(inner) = line.strip_prefix('[') else {
        return line;
    };
    let Some((tag, rest)) = inner.split_once(']') else {
        return line;
    };
    let is_clause = |id: &str| {
        let (area, number) = id.split_once('-').unwrap_or(("", ""));
        !area.is_empty()
            && area.chars().all(|c| c.is_ascii_uppercase())
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit())
    };
    if tag.split(", ").all(is_clause) {
        rest.trim_start()
    } else {
        line
    }
}

/// The JUnit document with the `<testsuites>` root holding only the attributes the Jenkins
/// xUnit schema (`junit-10.xsd`) lists for it: quick-junit always adds `skipped` and
/// `timestamp` there, which that schema refuses (each `<testsuite>` keeps its own).
fn root_as_schema_lists(xml: &str) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml.to_owned();
    };
    let Some(len) = xml[start..].find('>') else {
        return xml.to_owned();
    };
    let mut root = xml[start..start + len].to_owned();
    for attr in [" skipped=\"", " timestamp=\""] {
        if let Some(at) = root.find(attr) {
            let value = at + attr.len();
            if let Some(close) = root[value..].find('"') {
                root.replace_range(at..value + close + 1, "");
            }
        }
    }
    format!("{}{root}{}", &xml[..start], &xml[start + len..])
}

/// Text for a Markdown table cell or heading: the characters Markdown reads as syntax escaped.
/// `s` as a code span in a Markdown table cell: nothing is escaped inside a code span but the
/// cell's `|`, and the span's backticks outnumber any run of them in `s`.
fn code_cell(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {s} {fence}")
}

fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '`' | '*' | '_' | '<' | '>' | '[' | ']' | '\\') {
            out.push('\\');
        }
        if c == '\n' || c == '\r' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// A fenced code block that `text` cannot close early, whatever it holds.
fn fenced(lang: &str, text: &str) -> String {
    let mut fence = "```".to_owned();
    while text.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}{lang}\n{text}\n{fence}")
}

/// `s` with every character XML 1.0 cannot carry, not even as a reference, spelled out
/// (`\u{fffe}`): what a backend prints must not make the report unreadable. Escaping is
/// the writer's.
fn spelled(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if ((c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r')
            || c == '\u{fffe}'
            || c == '\u{ffff}'
        {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The JSON Schema of the JSON report, as (file name under `spec/schema/`, schema).
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    vec![(
        "report.schema.json",
        serde_json::to_value(schemars::schema_for!(Report)).unwrap_or(serde_json::Value::Null),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_failure_line_names_its_clauses_once() {
        let broken = ids(&["IFS-001"]);
        assert_eq!(
            junit_failure_line(&broken, "[IFS-001] 0 was accepted\nmore"),
            "[IFS-001] 0 was accepted"
        );
        assert_eq!(
            junit_failure_line(
                &ids(&["IRM-003", "ORM-003"]),
                "[IRM-003] index 2^32 read as 0"
            ),
            "[IRM-003, ORM-003] index 2^32 read as 0"
        );
        // A line whose brackets are not a clause tag keeps them.
        assert_eq!(
            junit_failure_line(&broken, "[x] not a tag"),
            "[IFS-001] [x] not a tag"
        );
        // No broken clause: no empty brackets.
        assert_eq!(
            junit_failure_line(&[], "the backend crashed"),
            "the backend crashed"
        );
        assert_eq!(junit_failure_line(&[], ""), "fail");
        assert_eq!(junit_failure_line(&broken, ""), "[IFS-001]");
    }

    #[test]
    fn a_skipped_message_names_its_outcome_once() {
        assert_eq!(
            junit_skipped_message(
                Outcome::Waived,
                &[],
                "waived: T-1 until 2027-01-01\n[IFS-001] x"
            ),
            "waived: T-1 until 2027-01-01\n[IFS-001] x"
        );
        assert_eq!(
            junit_skipped_message(Outcome::Deviation, &ids(&["EWD-012"]), "[EWD-012] kept"),
            "deviation [EWD-012]: [EWD-012] kept"
        );
        assert_eq!(
            junit_skipped_message(Outcome::NotSupported, &[], "no memory capability"),
            "not-supported: no memory capability"
        );
    }
}
