//! Certification reports: the verdict on every trial (case or property), summaries per clause
//! and per option, and renderers for the terminal, JSON, Markdown and JUnit XML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ge_spec::{Capability, Profile, Spec};
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
            Outcome::UnexpectedPass => "unexpected-pass",
        }
    }

    /// True when this outcome stops certification.
    pub fn fails_run(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::UnexpectedPass)
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
    /// For failures: the scenario (after shrinking, for properties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<serde_json::Value>,
    /// For failures: a command line that reproduces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    /// For properties: how many scenarios were generated and judged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scenarios: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
    /// The seed of the generated scenarios.
    pub seed: u64,
    /// Generated scenarios per property.
    pub case_budget: u32,
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
}

impl Tally {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::NotSupported => self.not_supported += 1,
            Outcome::Waived => self.waived += 1,
            Outcome::UnexpectedPass => self.unexpected_pass += 1,
        }
    }

    /// Every trial counted.
    pub fn total(&self) -> u32 {
        self.passed + self.failed + self.not_supported + self.waived + self.unexpected_pass
    }
}

/// A certification report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// What the report was made of.
    pub meta: Meta,
    /// True when no trial failed, no waived trial passed and no waiver expired.
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
}

/// The option a clause belongs to, or `cross-cutting`.
pub fn option_of(spec: &Spec, clause: &str) -> String {
    spec.clause(clause)
        .and_then(|c| c.option)
        .map_or_else(|| "cross-cutting".to_owned(), |k| k.as_str().to_owned())
}

impl Report {
    /// Builds a report from trial results, computing the summaries.
    pub fn new(
        meta: Meta,
        trials: Vec<TrialResult>,
        stale: Vec<String>,
        expired: Vec<String>,
    ) -> Report {
        let spec = Spec::embedded();
        let mut totals = Tally::default();
        let mut clauses: BTreeMap<String, Tally> = BTreeMap::new();
        let mut options: BTreeMap<String, Tally> = BTreeMap::new();
        for t in &trials {
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
        let certified = totals.failed == 0 && totals.unexpected_pass == 0 && expired.is_empty();
        Report {
            meta,
            certified,
            totals,
            clauses,
            options,
            trials,
            stale_waivers: stale,
            expired_waivers: expired,
            backend_stderr: String::new(),
        }
    }

    /// The terminal rendering: a per-option table, then every failure with its reproducer.
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
            "spec tables {}  profile {}  seed {}  scenarios per property {}",
            &m.spec_digest[..16.min(m.spec_digest.len())],
            m.profile,
            m.seed,
            m.case_budget
        );
        let _ = writeln!(out);
        let width = self
            .options
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            out,
            "{:<width$}  {:>6} {:>6} {:>13} {:>6}",
            "option", "passed", "failed", "not-supported", "waived"
        );
        for (option, t) in &self.options {
            let _ = writeln!(
                out,
                "{option:<width$}  {:>6} {:>6} {:>13} {:>6}",
                t.passed,
                t.failed + t.unexpected_pass,
                t.not_supported,
                t.waived
            );
        }
        let t = &self.totals;
        let _ = writeln!(
            out,
            "{:<width$}  {:>6} {:>6} {:>13} {:>6}",
            "all trials",
            t.passed,
            t.failed + t.unexpected_pass,
            t.not_supported,
            t.waived
        );
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
            if let Some(s) = &trial.scenario {
                let _ = writeln!(out, "    scenario: {s}");
            }
            if let Some(r) = &trial.reproducer {
                let _ = writeln!(out, "    reproduce: {r}");
            }
        }
        for w in &self.expired_waivers {
            let _ = writeln!(out, "\nEXPIRED waiver: {w}");
        }
        for w in &self.stale_waivers {
            let _ = writeln!(out, "\nstale waiver (matches nothing): {w}");
        }
        if !self.backend_stderr.is_empty() {
            let _ = writeln!(out, "\nbackend stderr:\n{}", self.backend_stderr);
        }
        let _ = writeln!(
            out,
            "\n{}: {} passed, {} failed, {} not supported, {} waived, {} unexpected passes",
            match (self.certified, t.not_supported) {
                (false, _) => "NOT CERTIFIED".to_owned(),
                (true, 0) => "CERTIFIED".to_owned(),
                (true, _) => format!(
                    "CERTIFIED for {} only",
                    self.meta
                        .capabilities
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            t.passed,
            t.failed,
            t.not_supported,
            t.waived,
            t.unexpected_pass
        );
        out
    }

    /// Markdown: metadata, per-option and per-clause tables, failures.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let m = &self.meta;
        let _ = writeln!(
            out,
            "# ge-conformance report: {} {}\n",
            m.backend, m.backend_version
        );
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(
            out,
            "| verdict | **{}** |",
            if self.certified {
                "certified"
            } else {
                "not certified"
            }
        );
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
        let _ = writeln!(out, "| profile | {} |", m.profile);
        let _ = writeln!(out, "| seed | {} |", m.seed);
        let _ = writeln!(out, "| scenarios per property | {} |\n", m.case_budget);
        let table = |out: &mut String, title: &str, rows: &BTreeMap<String, Tally>| {
            let _ = writeln!(out, "## {title}\n\n| {title} | passed | failed | not supported | waived | unexpected pass |\n|---|---:|---:|---:|---:|---:|");
            for (k, t) in rows {
                let _ = writeln!(
                    out,
                    "| `{k}` | {} | {} | {} | {} | {} |",
                    t.passed, t.failed, t.not_supported, t.waived, t.unexpected_pass
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
                let _ = writeln!(out, "### `{}` ({})\n", t.name, t.outcome.as_str());
                let _ = writeln!(out, "Clauses: {}\n", t.clauses.join(", "));
                if let Some(msg) = &t.message {
                    let _ = writeln!(out, "```text\n{msg}\n```\n");
                }
                if let Some(r) = &t.reproducer {
                    let _ = writeln!(out, "Reproduce:\n\n```sh\n{r}\n```\n");
                }
            }
        }
        out
    }

    /// JUnit XML: one test suite per capability, one test case per trial.
    pub fn to_junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let t = &self.totals;
        let _ = writeln!(
            out,
            "<testsuites name=\"ge-conformance\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">",
            t.total(),
            t.failed + t.unexpected_pass,
            t.not_supported + t.waived
        );
        for cap in Capability::ALL {
            let trials: Vec<_> = self.trials.iter().filter(|x| x.capability == cap).collect();
            if trials.is_empty() {
                continue;
            }
            let failures = trials.iter().filter(|x| x.outcome.fails_run()).count();
            let skipped = trials
                .iter()
                .filter(|x| matches!(x.outcome, Outcome::NotSupported | Outcome::Waived))
                .count();
            let _ = writeln!(out, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">", cap, trials.len());
            let _ = writeln!(out, "    <properties><property name=\"spec_digest\" value=\"{}\"/><property name=\"backend\" value=\"{}\"/><property name=\"profile\" value=\"{}\"/><property name=\"seed\" value=\"{}\"/></properties>", xml(&self.meta.spec_digest), xml(&self.meta.backend), self.meta.profile, self.meta.seed);
            for trial in trials {
                let _ = write!(
                    out,
                    "    <testcase classname=\"{}\" name=\"{}\">",
                    cap,
                    xml(&trial.name)
                );
                match trial.outcome {
                    Outcome::Pass => {}
                    Outcome::Fail | Outcome::UnexpectedPass => {
                        let msg = trial.message.clone().unwrap_or_default();
                        let repro = trial.reproducer.clone().unwrap_or_default();
                        let _ = write!(
                            out,
                            "<failure message=\"{}\">{}\n{}</failure>",
                            xml(trial.outcome.as_str()),
                            xml(&msg),
                            xml(&repro)
                        );
                    }
                    Outcome::NotSupported | Outcome::Waived => {
                        let _ = write!(
                            out,
                            "<skipped message=\"{}\"/>",
                            xml(&format!(
                                "{}: {}",
                                trial.outcome.as_str(),
                                trial.message.clone().unwrap_or_default()
                            ))
                        );
                    }
                }
                let _ = writeln!(out, "</testcase>");
            }
            let _ = writeln!(out, "  </testsuite>");
        }
        out.push_str("</testsuites>\n");
        out
    }

    /// Pretty JSON (the schema is `spec/schema/report.schema.json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"report does not serialise: {e}\"}}"))
    }
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r' => {
                // XML 1.0 cannot carry these at all, not even as references: spell them out.
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
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
