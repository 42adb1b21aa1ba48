//! The matrix as Markdown: the engines, what the page left out, then one table with the engines
//! across and the options and their clauses down, and one table per engine of its trials that
//! did not pass. Every text from a report is already one line and cut ([`super::column`]); here
//! it is Markdown-escaped as well ([`crate::report::md`], [`crate::report::code_cell`]).

use std::fmt::Write as _;

use super::{Cell, Engine, Listed, Matrix, RowKind};
use crate::input::one_line;
use crate::report::{code_cell, md, Tally};

/// The most bytes of a message's first line shown in the Markdown (the page shows it whole).
const MESSAGE_LINE: usize = 240;

/// A cell's counts, worst first, as the page shows them: `✗1 ✓11`, or `·` for no trial.
fn counts_text(t: &Tally) -> String {
    let parts: Vec<String> = [
        ('✗', t.failed),
        ('!', t.unexpected_pass),
        ('w', t.waived),
        ('~', t.deviations),
        ('✓', t.passed),
        ('–', t.not_supported),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(s, n)| format!("{s}{n}"))
    .collect();
    if parts.is_empty() {
        "·".to_owned()
    } else {
        parts.join(" ")
    }
}

/// `N: name version`, Markdown-escaped.
fn label(j: usize, e: &Engine) -> String {
    md(&format!("{}: {} {}", j + 1, e.name, e.version))
}

impl Matrix {
    /// Markdown: the engines and their verdicts, the notes, the matrix (engines across, options
    /// in bold and their clauses down, each cell's counts worst first), and each engine's trials
    /// that did not pass, with the clauses they broke, their message's first line and their
    /// reproducer.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("# ge-conformance results matrix\n\n");
        let clauses = self
            .rows
            .iter()
            .filter(|r| r.kind == RowKind::Clause)
            .count();
        let _ = writeln!(
            out,
            "{} engines side by side on {clauses} clauses; spec tables `{}`. A cell counts the engine's trials on the row by outcome: ✗ failed, ! unexpected pass, w waived, ~ deviation, ✓ passed, – not supported, · no trial.\n",
            self.engines.len(),
            self.spec_digest.get(..16).unwrap_or(&self.spec_digest)
        );
        self.markdown_engines(&mut out);
        self.markdown_table(&mut out);
        for (j, e) in self.engines.iter().enumerate() {
            markdown_trials(&mut out, j, e);
        }
        out
    }

    /// The table of the engines (verdict, level, profile, totals) and their notes.
    fn markdown_engines(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "| engine | bundle | verdict | level | profile | passed | failed | deviations | not supported | waived | unexpected passes |\n|---|---|---|---|---|---:|---:|---:|---:|---:|---:|"
        );
        for (j, e) in self.engines.iter().enumerate() {
            let t = &e.totals;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                label(j, e),
                md(&e.bundle),
                e.verdict.as_str(),
                e.level,
                e.profile,
                t.passed,
                t.failed,
                t.deviations,
                t.not_supported,
                t.waived,
                t.unexpected_pass
            );
        }
        let _ = writeln!(out);
        for (j, e) in self.engines.iter().enumerate() {
            for n in &e.notes {
                let _ = writeln!(out, "- {}: {}", label(j, e), md(n));
            }
        }
        if self.engines.iter().any(|e| !e.notes.is_empty()) {
            let _ = writeln!(out);
        }
    }

    /// The matrix itself: options in bold, their clauses under them.
    fn markdown_table(&self, out: &mut String) {
        let _ = write!(out, "| option / clause |");
        for (j, e) in self.engines.iter().enumerate() {
            let _ = write!(out, " {} |", label(j, e));
        }
        let _ = writeln!(out, "\n|---|{}", "---|".repeat(self.engines.len()));
        for (row, cells) in self.rows.iter().zip(&self.cells) {
            let name = match row.kind {
                RowKind::Option => format!("**`{}`**", row.id),
                RowKind::Clause => format!("`{}`", row.id),
            };
            let _ = write!(out, "| {name} |");
            for c in cells {
                let _ = write!(out, " {} |", cell_text(c));
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out);
    }
}

/// A cell of the Markdown table: its counts, in bold when it failed.
fn cell_text(c: &Cell) -> String {
    let text = counts_text(&c.counts);
    if c.status() == super::Status::Failed {
        format!("**{text}**")
    } else {
        text
    }
}

/// The table of an engine's listed trials, when it has any.
fn markdown_trials(out: &mut String, j: usize, e: &Engine) {
    if e.trials.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## {}: trials that did not pass\n\n| trial | capability | outcome | breaks | departs from | what differs (first line) | reproduce |\n|---|---|---|---|---|---|---|",
        label(j, e)
    );
    for t in &e.trials {
        let _ = writeln!(out, "{}", trial_row(t));
    }
    let _ = writeln!(out);
}

/// One row of an engine's table of trials.
fn trial_row(t: &Listed) -> String {
    let first = t
        .message
        .as_deref()
        .and_then(|m| m.lines().next())
        .map(|l| md(&one_line(l, MESSAGE_LINE)))
        .unwrap_or_default();
    format!(
        "| {} | {} | {} | {} | {} | {first} | {} |",
        code_cell(&t.name),
        t.capability,
        t.outcome.as_str(),
        md(&t.broken.join(", ")),
        md(&t.deviations.join(", ")),
        t.reproducer.as_deref().map(code_cell).unwrap_or_default()
    )
}
