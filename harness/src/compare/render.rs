//! The terminal and Markdown renderings of a comparison. Every text that comes from a report
//! (names, clause IDs, waivers, digests, the backend's name) is a third party's: it goes through
//! [`crate::input::one_line`] (no control character, no terminal escape, cut to a cap) and, in
//! Markdown, through the report's Markdown escapes as well.

use std::fmt::Write as _;

use super::{Change, Comparison, Side, TrialChange};
use crate::input::{one_line, MAX_NAME, MAX_TEXT};
use crate::report::{code_cell, md, Outcome};

/// A trial name or waiver from a report, safe on one line.
fn safe(s: &str) -> String {
    one_line(s, MAX_TEXT)
}

/// A list of clause IDs or names from a report, safe on one line.
fn safe_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| one_line(s, MAX_NAME))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An outcome, or `absent`.
fn outcome(o: Option<Outcome>) -> &'static str {
    o.map_or("absent", Outcome::as_str)
}

/// The clause lists of a trial change, in words (`newly breaks A, B; no longer breaks C`).
fn clause_words(t: &TrialChange) -> String {
    [
        ("newly breaks", &t.newly_broken),
        ("no longer breaks", &t.no_longer_broken),
        ("newly deviates from", &t.newly_deviating),
        ("no longer deviates from", &t.no_longer_deviating),
    ]
    .into_iter()
    .filter(|(_, list)| !list.is_empty())
    .map(|(what, list)| format!("{what} {}", safe_list(list)))
    .collect::<Vec<_>>()
    .join("; ")
}

/// A digest from a report, shortened to 16 characters as the text report shows it.
fn short(digest: &str) -> String {
    one_line(digest.get(..16).unwrap_or(digest), MAX_NAME)
}

impl Comparison {
    /// The verdict line every rendering ends with: regressed or not, with the counts.
    pub fn verdict_line(&self) -> String {
        let count = |c: Change| self.of(c).count();
        format!(
            "{}: {} regressions, {} fixes, {} still failing, {} new deviations, {} appeared, {} went away",
            if self.regressed {
                "REGRESSED"
            } else {
                "NO REGRESSION"
            },
            self.regressions,
            self.fixes,
            count(Change::StillFailing) + count(Change::NowWaived),
            count(Change::NewDeviation),
            count(Change::Appeared),
            count(Change::WentAway) + count(Change::Vanished),
        )
    }

    /// The terminal rendering: both runs, what else changed (settings, tables, scope, waivers),
    /// the trials by change (regressions first), the clauses, and the verdict line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "old: {}", side_line(&self.old));
        let _ = writeln!(out, "new: {}", side_line(&self.new));
        for line in self.notes() {
            let _ = writeln!(out, "{line}");
        }
        for change in Change::ALL {
            let trials: Vec<&TrialChange> = self.of(change).collect();
            if trials.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\n{} ({}): {}",
                change.as_str().to_uppercase(),
                trials.len(),
                change.meaning()
            );
            for t in trials {
                let clauses = clause_words(t);
                let _ = writeln!(
                    out,
                    "  {} ({}): {} -> {}{}{clauses}",
                    safe(&t.name),
                    t.capability,
                    outcome(t.old),
                    outcome(t.new),
                    if clauses.is_empty() { "" } else { "; " },
                );
            }
        }
        self.text_clauses(&mut out);
        let _ = writeln!(out, "\n{}", self.verdict_line());
        out
    }

    /// One line per clause that changed.
    fn text_clauses(&self, out: &mut String) {
        if self.clauses.is_empty() {
            return;
        }
        let _ = writeln!(out, "\nCLAUSES:");
        for c in &self.clauses {
            let words: Vec<String> = [
                ("newly broken in", &c.newly_broken),
                ("no longer broken in", &c.no_longer_broken),
                ("newly deviating in", &c.newly_deviating),
                ("no longer deviating in", &c.no_longer_deviating),
            ]
            .into_iter()
            .filter(|(_, trials)| !trials.is_empty())
            .map(|(what, trials)| {
                let names: Vec<String> = trials.iter().map(|t| safe(t)).collect();
                format!("{what} {}", names.join(", "))
            })
            .collect();
            let _ = writeln!(
                out,
                "  {}: {}",
                one_line(&c.clause, MAX_NAME),
                words.join("; ")
            );
        }
    }

    /// What changed besides the trials, one line each, every text from a report made safe:
    /// settings, tables, scope, waivers, duplicate names.
    fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let settings: Vec<String> = self
            .settings
            .iter()
            .map(|s| format!("{} {} -> {}", s.setting, safe(&s.old), safe(&s.new)))
            .collect();
        if !settings.is_empty() {
            out.push(format!("settings changed: {}", settings.join("; ")));
        }
        if let Some(t) = &self.tables {
            let local = |d: &Option<String>| d.as_deref().map_or("none".to_owned(), short);
            out.push(format!(
                "the tables differ (spec tables {} -> {}, the vendor's case tables {} -> {}): trials are matched by name",
                short(&t.old_spec),
                short(&t.new_spec),
                local(&t.old_local),
                local(&t.new_local)
            ));
        }
        out.extend(self.scope_notes());
        out.extend(self.waiver_notes());
        if !self.duplicates.is_empty() {
            let names: Vec<String> = self.duplicates.iter().map(|d| safe(d)).collect();
            out.push(format!(
                "listed twice (the first compared): {}",
                names.join(", ")
            ));
        }
        out
    }

    /// The scope's changes, in words; a regression says so.
    fn scope_notes(&self) -> Vec<String> {
        let caps =
            |c: &[ge_spec::Capability]| c.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
        let s = &self.scope;
        [
            ("capabilities no longer declared (regression)", &s.removed),
            ("capabilities newly declared", &s.added),
            (
                "required but not declared now (regression)",
                &s.newly_missing,
            ),
            ("required and declared now", &s.no_longer_missing),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(what, list)| format!("scope: {what}: {}", caps(list)))
        .collect()
    }

    /// The waivers' changes, in words; a regression says so.
    fn waiver_notes(&self) -> Vec<String> {
        let w = &self.waivers;
        [
            ("expired now (regression)", &w.expired_added),
            ("no longer expired", &w.expired_removed),
            ("stale now", &w.stale_added),
            ("no longer stale", &w.stale_removed),
            ("trials newly waived", &w.newly_waived),
            ("trials no longer waived", &w.no_longer_waived),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(what, list)| {
            let items: Vec<String> = list.iter().map(|s| safe(s)).collect();
            format!("waivers: {what}: {}", items.join(", "))
        })
        .collect()
    }

    /// Markdown: both runs side by side, the verdict line, what else changed, one table of the
    /// trials (regressions first) and one of the clauses.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("# ge-conformance comparison\n\n");
        markdown_sides(&mut out, &self.old, &self.new);
        let _ = writeln!(out, "**{}**\n", md(&self.verdict_line()));
        let notes = self.notes();
        if !notes.is_empty() {
            let _ = writeln!(out, "## What else changed\n");
            for n in notes {
                // Already one line and safe; `md` escapes what Markdown would read.
                let _ = writeln!(out, "- {}", md(&n));
            }
            let _ = writeln!(out);
        }
        self.markdown_trials(&mut out);
        self.markdown_clauses(&mut out);
        out
    }

    /// The table of the trials, regressions first (in bold), then the other changes.
    fn markdown_trials(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "## Trials\n\n| trial | capability | old | new | change | clauses |\n|---|---|---|---|---|---|"
        );
        for change in Change::ALL {
            for t in self.of(change) {
                let name = if change.is_regression() {
                    format!("**{}**", change.as_str())
                } else {
                    change.as_str().to_owned()
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {name} | {} |",
                    code_cell(&safe(&t.name)),
                    t.capability,
                    outcome(t.old),
                    outcome(t.new),
                    md(&clause_words(t))
                );
            }
        }
        let _ = writeln!(out);
    }

    /// The table of the clauses that changed.
    fn markdown_clauses(&self, out: &mut String) {
        if self.clauses.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "## Clauses\n\n| clause | newly broken in | no longer broken in | newly deviating in | no longer deviating in |\n|---|---|---|---|---|"
        );
        let cell = |trials: &[String]| {
            trials
                .iter()
                .map(|t| code_cell(&safe(t)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for c in &self.clauses {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                md(&one_line(&c.clause, MAX_NAME)),
                cell(&c.newly_broken),
                cell(&c.no_longer_broken),
                cell(&c.newly_deviating),
                cell(&c.no_longer_deviating)
            );
        }
        let _ = writeln!(out);
    }
}

/// One side in one line: backend, verdict, level, profile, tables, totals.
fn side_line(s: &Side) -> String {
    let m = &s.meta;
    let t = &s.totals;
    format!(
        "backend {} {}, {} at level {} (profile {}), spec tables {}: {} passed, {} failed, {} deviations, {} not supported, {} waived, {} unexpected passes",
        one_line(&m.backend, MAX_NAME),
        one_line(&m.backend_version, MAX_NAME),
        s.verdict.as_str(),
        m.level,
        m.profile,
        short(&m.spec_digest),
        t.passed,
        t.failed,
        t.deviations,
        t.not_supported,
        t.waived,
        t.unexpected_pass
    )
}

/// The table of both runs side by side.
fn markdown_sides(out: &mut String, old: &Side, new: &Side) {
    let _ = writeln!(out, "| | old | new |\n|---|---|---|");
    let row = |out: &mut String, what: &str, f: &dyn Fn(&Side) -> String| {
        let _ = writeln!(out, "| {what} | {} | {} |", f(old), f(new));
    };
    row(out, "backend", &|s| {
        md(&format!(
            "{} {}",
            one_line(&s.meta.backend, MAX_NAME),
            one_line(&s.meta.backend_version, MAX_NAME)
        ))
    });
    row(out, "verdict", &|s| s.verdict.as_str().to_owned());
    row(out, "level", &|s| s.meta.level.to_string());
    row(out, "profile", &|s| s.meta.profile.to_string());
    row(out, "spec tables (SHA-256)", &|s| {
        code_cell(&one_line(&s.meta.spec_digest, MAX_NAME))
    });
    row(out, "the vendor's case tables (SHA-256)", &|s| {
        s.meta
            .local_cases
            .as_deref()
            .map_or("none".to_owned(), |d| code_cell(&one_line(d, MAX_NAME)))
    });
    row(out, "capabilities", &|s| {
        let caps: Vec<&str> = s.meta.capabilities.iter().map(|c| c.as_str()).collect();
        caps.join(", ")
    });
    row(out, "filter", &|s| {
        s.meta
            .filter
            .as_deref()
            .map_or("none".to_owned(), |f| code_cell(&safe(f)))
    });
    row(out, "seed", &|s| s.meta.seed.to_string());
    row(out, "scenarios per property", &|s| {
        s.meta.case_budget.to_string()
    });
    row(out, "totals", &|s| {
        let t = &s.totals;
        format!(
            "{} passed, {} failed, {} deviations, {} not supported, {} waived, {} unexpected passes",
            t.passed, t.failed, t.deviations, t.not_supported, t.waived, t.unexpected_pass
        )
    });
    let _ = writeln!(out);
}
