//! The Markdown rendering of a report (`report.md`): metadata, per-option and per-clause
//! tables, failures with their reproducers and pictures, deviations and waivers.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{is_picture_file, Report, Tally, TrialResult};

impl Report {
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
        self.markdown_meta(&mut out);
        let _ = writeln!(out, "{}\n", md(&self.verdict_line()));
        tally_table(&mut out, "option", &self.options);
        tally_table(&mut out, "clause", &self.clauses);
        let failing: Vec<_> = self
            .trials
            .iter()
            .filter(|t| t.outcome.fails_run())
            .collect();
        if !failing.is_empty() {
            let _ = writeln!(out, "## Failures\n");
            for t in failing {
                markdown_failure(&mut out, t);
            }
        }
        self.markdown_deviations(&mut out);
        self.markdown_waivers(&mut out);
        out
    }

    /// The table of what was run: verdict, level, profile, timing, suite, tables, seed.
    fn markdown_meta(&self, out: &mut String) {
        let m = &self.meta;
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
    }

    /// The trials with deviations from the suite's own choices, as a table.
    fn markdown_deviations(&self, out: &mut String) {
        let deviating = self.deviating();
        if deviating.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "## Deviations\n\nDepartures from the suite's own choices (reference-defined clauses), not judged at level {}.\n\n| trial | clauses |\n|---|---|",
            self.meta.level
        );
        for t in deviating {
            let _ = writeln!(out, "| `{}` | {} |", md(&t.name), t.deviations.join(", "));
        }
        let _ = writeln!(out);
    }

    /// Expired and stale waivers, as a table.
    fn markdown_waivers(&self, out: &mut String) {
        let notes = self.waiver_notes();
        if notes.is_empty() {
            return;
        }
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
}

/// A table of tallies (per option or per clause) under its heading.
fn tally_table(out: &mut String, title: &str, rows: &BTreeMap<String, Tally>) {
    let _ = writeln!(out, "## {title}\n\n| {title} | passed | failed | deviation | not supported | waived | unexpected pass |\n|---|---:|---:|---:|---:|---:|---:|");
    for (k, t) in rows {
        let _ = writeln!(
            out,
            "| `{k}` | {} | {} | {} | {} | {} | {} |",
            t.passed, t.failed, t.deviations, t.not_supported, t.waived, t.unexpected_pass
        );
    }
    let _ = writeln!(out);
}

/// One failing trial: heading, clauses, message, reproducer and picture.
fn markdown_failure(out: &mut String, t: &TrialResult) {
    let _ = writeln!(out, "### `{}` ({})\n", md(&t.name), t.outcome.as_str());
    // The clauses it breaks; a property covers dozens, which say nothing of this failure.
    if t.broken.is_empty() {
        let _ = writeln!(out, "Checks: {}\n", t.clauses.join(", "));
    } else {
        let _ = writeln!(out, "Breaks: {}\n", t.broken.join(", "));
    }
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

/// `s` as a code span in a Markdown table cell: nothing is escaped inside a code span but the
/// cell's `|`, and the span's backticks outnumber any run of them in `s`.
pub(crate) fn code_cell(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {s} {fence}")
}

/// Text for a Markdown table cell or heading: the characters Markdown reads as syntax escaped,
/// control characters (line breaks among them) written as escapes.
pub(crate) fn md(s: &str) -> String {
    // Controls first (a newline, an escape sequence), as `\n` and `\u{1b}`; then the
    // characters Markdown reads.
    let s = crate::input::one_line(s, usize::MAX);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '`' | '*' | '_' | '<' | '>' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
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
