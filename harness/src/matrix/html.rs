//! The matrix as one self-contained HTML page: no file, font, style sheet or script fetched, and
//! a Content-Security-Policy that lets nothing else run or load. The data travel as one JSON
//! island (`<script type="application/json">`, with `<`, `>`, `&` and the line separators
//! escaped so no string can close it), and the page's one inline script (`page.js`, allowed by
//! its SHA-256) renders it with `textContent` and attributes only, never as markup. Pictures are
//! shown as `<img>` of `data:` URLs, where an SVG runs no script and loads nothing.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::column::base64;
use super::{Cell, Engine, Listed, Matrix, Row};
use crate::report::{Standing, Tally};

/// The page's script: renders the island into the table, the filters and the trial lists.
const SCRIPT: &str = include_str!("page.js");

/// The page's style sheet.
const STYLE: &str = include_str!("page.css");

/// What the script reads: the matrix, its texts as the report's (already made one line and
/// cut), its cells compact.
#[derive(Serialize)]
struct Island<'m> {
    suite: &'m str,
    spec: &'m str,
    engines: Vec<IslandEngine<'m>>,
    rows: &'m [Row],
    /// `cells[row][engine]`.
    cells: Vec<Vec<IslandCell<'m>>>,
}

#[derive(Serialize)]
struct IslandEngine<'m> {
    name: &'m str,
    version: &'m str,
    bundle: &'m str,
    standing: Standing,
    verdict: &'static str,
    level: String,
    profile: String,
    capabilities: Vec<&'static str>,
    totals: [u32; 6],
    notes: &'m [String],
    trials: &'m [Listed],
    pictures: &'m [String],
}

/// A cell: `s` its status, `c` its counts (passed, failed, deviations, not supported, waived,
/// unexpected passes), `t` the listed trials it opens, `u` how many more it has unlisted.
#[derive(Serialize)]
struct IslandCell<'m> {
    s: &'static str,
    c: [u32; 6],
    #[serde(skip_serializing_if = "<[usize]>::is_empty")]
    t: &'m [usize],
    #[serde(skip_serializing_if = "is_zero")]
    u: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn counts(t: &Tally) -> [u32; 6] {
    [
        t.passed,
        t.failed,
        t.deviations,
        t.not_supported,
        t.waived,
        t.unexpected_pass,
    ]
}

impl<'m> IslandEngine<'m> {
    fn of(e: &'m Engine) -> Self {
        IslandEngine {
            name: &e.name,
            version: &e.version,
            bundle: &e.bundle,
            standing: e.verdict,
            verdict: e.verdict.as_str(),
            level: e.level.to_string(),
            profile: e.profile.to_string(),
            capabilities: e.capabilities.iter().map(|c| c.as_str()).collect(),
            totals: counts(&e.totals),
            notes: &e.notes,
            trials: &e.trials,
            pictures: &e.pictures,
        }
    }
}

impl<'m> IslandCell<'m> {
    fn of(c: &'m Cell) -> Self {
        IslandCell {
            s: c.status().as_str(),
            c: counts(&c.counts),
            t: &c.trials,
            u: c.unlisted,
        }
    }
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` (which could close the element
/// or open a comment) and U+2028 and U+2029 (line ends to older script parsers) written as
/// `\uXXXX` escapes, which JSON reads back as the same characters. Valid only for JSON, where
/// these characters can stand only inside strings.
pub(super) fn island_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The `'sha256-...'` source of a Content-Security-Policy that allows the inline `text`.
fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's Content-Security-Policy: nothing loads but `data:` images, and only the page's
/// own style sheet and script, by their hashes, apply and run.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; img-src data:; style-src {}; script-src {}; base-uri 'none'; form-action 'none'",
        csp_hash(STYLE),
        csp_hash(SCRIPT)
    )
}

impl Matrix {
    /// The matrix as one self-contained HTML page (the module docs of `matrix::html` say what
    /// keeps it safe): the engines across, the options and their clauses down, sorting and
    /// filtering in the page, and a cell's trials (messages, reproducers, pictures) opened by a
    /// click. The URL's fragment keeps the view, so a link shows it again: `open=E/ROW` (the
    /// cell of engine E, numbered from 1, on ROW, an option key, `cross-cutting` or a clause
    /// ID), `sort=E`, `rows=WORDS`, `show=STATUS` (`failed`, `waived`, `deviation`,
    /// `not-supported`, `untested` or `differ`) and `options`, joined by `&`.
    pub fn to_html(&self) -> String {
        let island = Island {
            suite: &self.suite_version,
            spec: &self.spec_digest,
            engines: self.engines.iter().map(IslandEngine::of).collect(),
            rows: &self.rows,
            cells: self
                .cells
                .iter()
                .map(|row| row.iter().map(IslandCell::of).collect())
                .collect(),
        };
        // Plain data only: serialising cannot fail; `null` renders an empty page if it did.
        let json = serde_json::to_string(&island).unwrap_or_else(|_| "null".to_owned());
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>ge-conformance results matrix</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
<header><h1>ge-conformance results matrix</h1><p id=\"summary\"></p>\
<noscript><p>This page renders its matrix with its own inline script; \
<code>ge-conformance matrix --format markdown</code> writes the same matrix as a table that needs none.</p></noscript>\
<div id=\"notes\"></div><div id=\"controls\"></div></header>\n\
<main id=\"matrix\"></main>\n<aside id=\"detail\" hidden></aside>\n\
<script type=\"application/json\" id=\"data\">{}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
            island_escape(&json),
            csp = content_security_policy(),
        )
    }
}
