//! The HTML rendering of a report (`report.html` in a bundle): one self-contained page, readable
//! without JavaScript and without any file or network fetch, with the verdict, the per-option
//! table, the deviations, and each failure with its difference, reproducer, scenario and
//! picture inlined (the SVG of [`crate::draw`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::draw::{self, esc};
use crate::report::{Report, Standing, Tally};

const CSS: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1800px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}\
h3{font-size:15px;margin-bottom:4px}h4{font-size:13px;margin:10px 0 4px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
td.n{text-align:right}th{background:#f2f2f2}\
pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}\
.verdict{font-size:16px;font-weight:bold;padding:8px;border-radius:4px}\
.ok{background:#e6f4e6;color:#1b5e20}.bad{background:#fdecea;color:#b00020}.partial{background:#fff3cd;color:#7a5a00}\
.failure{border-left:4px solid #b00020;padding-left:12px;margin:18px 0}\
figure{margin:8px 0;overflow-x:auto}figcaption{font-size:12px;color:#555}code{font-size:12px}";

/// The page runs nothing and fetches nothing: its one style sheet is inline, its pictures are
/// inline SVG. Said to the browser too, so that a picture a third party slipped into a bundle
/// (with a rewritten manifest, which `verify --integrity-only` cannot tell) runs no script.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

impl Report {
    /// The HTML page: the report's metadata and verdict, the per-option table (per clause under
    /// a disclosure), the deviations, and each failure with its message, reproducer, scenario
    /// and, when [`Report::pictures`] holds it, its picture inline.
    pub fn to_html(&self) -> String {
        let mut out = String::new();
        header(&mut out, self);
        meta_table(&mut out, self);
        tallies(&mut out, self);
        deviations(&mut out, self);
        failures(&mut out, self);
        waivers(&mut out, self);
        if !self.backend_stderr.is_empty() {
            let _ = writeln!(
                out,
                "<h2>Backend standard error</h2>\n<pre>{}</pre>",
                esc_pre(&self.backend_stderr)
            );
        }
        let _ = writeln!(out, "</body>\n</html>");
        out
    }
}

/// The page's head (title and style sheet), its heading and the verdict, coloured.
fn header(out: &mut String, report: &Report) {
    let m = &report.meta;
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>ge-conformance report: {} {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&m.backend),
        esc(&m.backend_version)
    );
    let _ = writeln!(
        out,
        "<h1>ge-conformance report: {} {}</h1>",
        esc(&m.backend),
        esc(&m.backend_version)
    );
    let class = match report.verdict {
        Standing::Certified => "ok",
        Standing::Partial | Standing::CertifiedWithWaivers => "partial",
        Standing::NotCertified | Standing::NothingToCertify => "bad",
    };
    let _ = writeln!(
        out,
        "<p class=\"verdict {class}\">{}</p>",
        esc(&report.verdict_line())
    );
}

/// A row of the metadata table: `k` escaped, `v` as given (HTML already).
fn row(out: &mut String, k: &str, v: String) {
    let _ = writeln!(out, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
}

/// The metadata table: verdict, level and profile, where and when the run was, the suite and
/// its tables, the capabilities, the filter, the seed and the scenarios per property.
fn meta_table(out: &mut String, report: &Report) {
    let m = &report.meta;
    let _ = writeln!(out, "<table>");
    row(out, "verdict", esc(report.verdict.as_str()));
    row(out, "level", m.level.to_string());
    row(out, "profile", m.profile.to_string());
    if let Some(u) = &m.upstream_source {
        row(
            out,
            "upstream GE source",
            format!("<code>{}</code>", esc(u)),
        );
    }
    if let Some(c) = &m.confinement {
        row(out, "confinement", esc(c));
    }
    if let Some(t) = &m.started {
        let host = m
            .host
            .as_ref()
            .map(|h| format!(" on {}", esc(h)))
            .unwrap_or_default();
        let seconds = m.micros as f64 / 1e6;
        row(out, "started", format!("{} ({seconds:.1} s{host})", esc(t)));
    }
    let suite = format!("{} {}", esc(&m.suite), esc(&m.suite_version));
    row(out, "suite", suite);
    let digest = format!("<code>{}</code>", esc(&m.spec_digest));
    row(out, "spec tables (SHA-256)", digest);
    let capabilities: Vec<&str> = m.capabilities.iter().map(|c| c.as_str()).collect();
    row(out, "capabilities", capabilities.join(", "));
    if let Some(f) = &m.filter {
        row(
            out,
            "filter (partial run)",
            format!("<code>{}</code>", esc(f)),
        );
    }
    row(out, "seed", m.seed.to_string());
    row(out, "scenarios per property", m.case_budget.to_string());
    let _ = writeln!(out, "</table>");
}

/// The per-option table, then the per-clause one under a disclosure.
fn tallies(out: &mut String, report: &Report) {
    let _ = writeln!(out, "<h2>Per option</h2>");
    tally_table(out, "option", &report.options);
    let _ = writeln!(
        out,
        "<details><summary>Per clause ({} clauses)</summary>",
        report.clauses.len()
    );
    tally_table(out, "clause", &report.clauses);
    let _ = writeln!(out, "</details>");
}

/// The deviations: each trial that departs from the suite's own choices, with the clauses.
fn deviations(out: &mut String, report: &Report) {
    let deviating = report.deviating();
    let _ = writeln!(out, "<h2>Deviations ({})</h2>", deviating.len());
    if deviating.is_empty() {
        let _ = writeln!(
            out,
            "<p>None: no trial departs from the suite's own choices.</p>"
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p>Departures from the suite's own choices (reference-defined clauses), not judged at level {}.</p>\n<table><tr><th>trial</th><th>clauses</th></tr>",
        report.meta.level
    );
    for t in deviating {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            esc(&t.name),
            esc(&t.deviations.join(", "))
        );
    }
    let _ = writeln!(out, "</table>");
}

/// The failures, each a section: its name and outcome, the clauses checked and broken, what
/// differs, how to reproduce it, its scenario and its picture.
fn failures(out: &mut String, report: &Report) {
    let failing: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome.fails_run())
        .collect();
    let _ = writeln!(out, "<h2>Failures ({})</h2>", failing.len());
    if failing.is_empty() {
        let _ = writeln!(out, "<p>None.</p>");
    }
    for (i, t) in failing.iter().enumerate() {
        let _ = writeln!(
            out,
            "<section class=\"failure\" id=\"failure-{}\">\n<h3><code>{}</code> ({})</h3>",
            i + 1,
            esc(&t.name),
            t.outcome.as_str()
        );
        clauses(out, &t.clauses, &t.broken);
        let scenario = t
            .scenario
            .as_ref()
            .map(|s| serde_json::to_string_pretty(s).unwrap_or_default());
        evidence(out, t.message.as_deref(), t.reproducer.as_deref(), scenario);
        if let Some(p) = &t.picture {
            figure(out, report, i + 1, p);
        }
        let _ = writeln!(out, "</section>");
    }
}

/// The clauses a failure checked, and those it broke.
fn clauses(out: &mut String, checked: &[String], broken: &[String]) {
    let _ = writeln!(
        out,
        "<p>Clauses checked: {}. Broken: <strong>{}</strong>.</p>",
        esc(&checked.join(", ")),
        if broken.is_empty() {
            "none named".to_owned()
        } else {
            esc(&broken.join(", "))
        }
    );
}

/// What a failure's answer differs in, how to reproduce it and its scenario (pretty JSON,
/// under a disclosure), each when there is one.
fn evidence(
    out: &mut String,
    message: Option<&str>,
    reproducer: Option<&str>,
    scenario: Option<String>,
) {
    if let Some(msg) = message {
        let _ = writeln!(out, "<h4>What differs</h4>\n<pre>{}</pre>", esc_pre(msg));
    }
    if let Some(r) = reproducer {
        let _ = writeln!(out, "<h4>Reproduce</h4>\n<pre>{}</pre>", esc_pre(r));
    }
    if let Some(s) = scenario {
        let _ = writeln!(
            out,
            "<details><summary>Scenario</summary>\n<pre>{}</pre>\n</details>",
            esc_pre(&s)
        );
    }
}

/// The picture `file` of the `n`th failure inline, under its caption, its hatching pattern
/// renamed for this page; or a line saying the bundle lacks it.
fn figure(out: &mut String, report: &Report, n: usize, file: &str) {
    let Some(svg) = report.pictures.get(file) else {
        let _ = writeln!(out, "<p>Picture {} is not in the bundle.</p>", esc(file));
        return;
    };
    // Ids are the page's: each picture's hatching pattern gets its own.
    let id = format!("hatch-{n}");
    let svg = svg
        .replace(draw::HATCH, &format!(" fill=\"url(#{id})\""))
        .replace(draw::HATCH_ID, &format!(" id=\"{id}\""));
    let _ = writeln!(
        out,
        "<figure>\n{}\n<figcaption>{}: the backend's answer (left) beside the reference's (right), what the broken clauses name outlined in red and shared bytes hatched.</figcaption>\n</figure>",
        svg.trim_end(),
        esc(file)
    );
}

/// The waivers' notes, when there are any: each waiver's pattern, whether it fails the run,
/// and why.
fn waivers(out: &mut String, report: &Report) {
    let notes = report.waiver_notes();
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h2>Waivers ({})</h2>\n<ul>", notes.len());
    for n in notes {
        let what = if n.fails { "fails the run" } else { "ignored" };
        let _ = writeln!(
            out,
            "<li><code>{}</code> ({what}): {}</li>",
            esc(&n.name),
            esc(&n.why)
        );
    }
    let _ = writeln!(out, "</ul>");
}

/// Text for a `<pre>`: escaped, its newlines kept.
fn esc_pre(s: &str) -> String {
    s.split('\n').map(esc).collect::<Vec<_>>().join("\n")
}

fn tally_table(out: &mut String, title: &str, rows: &BTreeMap<String, Tally>) {
    let _ = writeln!(
        out,
        "<table><tr><th>{title}</th><th>passed</th><th>failed</th><th>deviation</th><th>not supported</th><th>waived</th><th>unexpected pass</th></tr>"
    );
    for (k, t) in rows {
        let bad = t.failed + t.unexpected_pass > 0;
        let _ = writeln!(
            out,
            "<tr{}><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            if bad { " class=\"bad\"" } else { "" },
            esc(k),
            t.passed,
            t.failed,
            t.deviations,
            t.not_supported,
            t.waived,
            t.unexpected_pass
        );
    }
    let _ = writeln!(out, "</table>");
}
