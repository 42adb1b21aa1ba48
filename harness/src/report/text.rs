//! The terminal rendering of a report (standard output and `report.txt`): a header, a
//! per-option table, every failure with its reproducer, the deviations, the waivers and the
//! verdict.

use std::fmt::Write as _;

use super::{Report, Tally, TrialResult};
use crate::input::{one_line, prefixed_lines, MAX_NAME};

/// The most bytes of the backend's standard error the text rendering shows (the JSON report
/// keeps all that was collected).
const MAX_STDERR_SHOWN: usize = 64 << 10;

impl Report {
    /// The terminal rendering: a per-option table, every failure with its reproducer, the
    /// deviations, and the verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.text_header(&mut out);
        self.text_options(&mut out);
        for trial in self.trials.iter().filter(|t| t.outcome.fails_run()) {
            text_failure(&mut out, trial);
        }
        self.text_deviations(&mut out);
        for n in self.waiver_notes() {
            let what = if n.fails { "FAIL" } else { "ignored" };
            let _ = writeln!(out, "\n{} ({what}): {}", n.name, n.why);
        }
        if !self.backend_stderr.is_empty() {
            // Every line starts with the harness's prefix: none can pass for the report's own.
            let stderr = prefixed_lines(&self.backend_stderr, "  | ", MAX_STDERR_SHOWN);
            let _ = write!(out, "\nbackend stderr:\n{stderr}");
        }
        let _ = writeln!(out, "\n{}", self.verdict_line());
        out
    }

    /// The suite, the backend and what the run was asked: tables, profile, level, seed.
    fn text_header(&self, out: &mut String) {
        let m = &self.meta;
        let _ = writeln!(
            out,
            "ge-conformance {} — backend {} {}",
            m.suite_version,
            one_line(&m.backend, MAX_NAME),
            one_line(&m.backend_version, MAX_NAME)
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
    }

    /// One row per option, then one for all trials.
    fn text_options(&self, out: &mut String) {
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
            row(out, option, t);
        }
        row(out, "all trials", &self.totals);
    }

    /// The trials with deviations from the suite's own choices, one line each.
    fn text_deviations(&self, out: &mut String) {
        let deviating = self.deviating();
        if deviating.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\nDEVIATIONS from the suite's own choices (reference-defined clauses; not judged at level {}):",
            self.meta.level
        );
        for t in deviating {
            let _ = writeln!(out, "  {}: {}", t.name, t.deviations.join(", "));
        }
    }
}

/// A trial that fails the run: its outcome and clauses, its message, every further
/// counterexample, its scenario, reproducer and picture.
fn text_failure(out: &mut String, trial: &TrialResult) {
    // The clauses the answer broke; a breakdown (a panic, a broken pipe) breaks none, and the
    // trial's own clauses say what it was checking.
    let clauses = if trial.broken.is_empty() {
        format!("checks {}", trial.clauses.join(", "))
    } else {
        format!("breaks {}", trial.broken.join(", "))
    };
    let _ = writeln!(
        out,
        "\n{} {}: {clauses}",
        trial.outcome.as_str().to_uppercase(),
        trial.name,
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
