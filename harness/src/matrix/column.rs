//! One report made a column of the matrix: its trials counted on the rows they touch, the ones
//! that did not pass listed worst first within the engine's share of the budgets (names and
//! clauses first, then messages and reproducers, then pictures), and what was left out said.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{listed_on_row, outcomes_by_clause, severity, Cell, Engine, Listed, Row, RowKind};
use super::{MAX_MESSAGE, MAX_REPRODUCER};
use crate::input::{one_line, prefixed_lines, MAX_NAME};
use crate::report::{Outcome, Report, TrialResult};

/// The most bytes kept of one clause ID a trial names (the tables' are seven).
const MAX_CLAUSE_ID: usize = 64;

/// The most clause IDs listed of one trial's broken (or deviating) clauses.
const MAX_CLAUSES_LISTED: usize = 32;

/// What listing a trial costs beside its texts: the JSON's keys and numbers, and room for the
/// notes of what was left out of it.
const LISTING_OVERHEAD: usize = 256;

/// What one reference from a cell to a listed trial costs at most (`12345,`).
const REFERENCE_COST: usize = 6;

/// The rows by clause ID, and each row's option row.
#[derive(Debug)]
pub(super) struct RowIndex {
    clauses: HashMap<String, usize>,
    group: Vec<usize>,
}

impl RowIndex {
    /// The index of `rows` (each option row followed by its clauses).
    pub(super) fn new(rows: &[Row]) -> RowIndex {
        let mut clauses = HashMap::new();
        let mut group = Vec::with_capacity(rows.len());
        let mut current = 0;
        for (i, r) in rows.iter().enumerate() {
            match r.kind {
                RowKind::Option => current = i,
                RowKind::Clause => {
                    clauses.insert(r.id.clone(), i);
                }
            }
            group.push(current);
        }
        RowIndex { clauses, group }
    }

    fn len(&self) -> usize {
        self.group.len()
    }
}

/// An engine's share of the page's budgets, in bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Share {
    /// Trial details, as the page's JSON writes them.
    pub details: usize,
    /// Pictures, as SVG.
    pub pictures: usize,
}

/// What counting the trials found besides the cells.
#[derive(Debug, Default)]
struct Counted<'r> {
    /// The trials that did not pass on some row, with those rows.
    notable: Vec<(usize, Vec<usize>)>,
    /// Clause IDs cited that the tables do not hold.
    unknown: HashSet<&'r str>,
    /// Trials that did not pass and touch no row.
    rowless: usize,
}

/// The column of `report`, labelled `bundle`: the engine and its cell on each row.
pub(super) fn column(
    report: &Report,
    bundle: &str,
    rows: &RowIndex,
    share: Share,
) -> (Engine, Vec<Cell>) {
    let mut cells = vec![Cell::default(); rows.len()];
    let mut counted = Counted::default();
    for (i, t) in report.trials.iter().enumerate() {
        let on = tally_trial(t, rows, &mut cells, &mut counted.unknown);
        if !on.is_empty() {
            counted.notable.push((i, on));
        } else if listed_on_row(t.outcome) {
            counted.rowless += 1;
        }
    }
    // Worst first, in run order among equals.
    counted
        .notable
        .sort_by_key(|(i, _)| (severity(report.trials[*i].outcome), *i));
    let m = &report.meta;
    let mut engine = Engine {
        name: one_line(&m.backend, MAX_NAME),
        version: one_line(&m.backend_version, MAX_NAME),
        bundle: one_line(bundle, MAX_NAME),
        verdict: report.verdict,
        level: m.level,
        profile: m.profile,
        capabilities: m.capabilities.clone(),
        totals: report.totals,
        trials: Vec::new(),
        pictures: Vec::new(),
        notes: Vec::new(),
    };
    let mut details = share.details;
    let listed = list(
        report,
        &counted.notable,
        &mut cells,
        &mut engine,
        &mut details,
    );
    let messages = attach_texts(report, &listed, &mut engine, &mut details);
    let pictures = attach_pictures(report, &listed, &mut engine, share.pictures);
    let unlisted = counted.notable.len() - listed.len();
    engine.notes = notes(&counted, unlisted, messages, pictures);
    (engine, cells)
}

/// Counts `t` on every row it touches (its clauses, and once on each of their options), and
/// returns the rows where it did not pass.
fn tally_trial<'r>(
    t: &'r TrialResult,
    rows: &RowIndex,
    cells: &mut [Cell],
    unknown: &mut HashSet<&'r str>,
) -> Vec<usize> {
    let mut worst: BTreeMap<usize, Outcome> = BTreeMap::new();
    let mut notable = Vec::new();
    for (clause, o) in outcomes_by_clause(t) {
        let Some(&r) = rows.clauses.get(clause) else {
            unknown.insert(clause);
            continue;
        };
        cells[r].counts.add(o);
        if listed_on_row(o) {
            notable.push(r);
        }
        let w = worst.entry(rows.group[r]).or_insert(o);
        if severity(o) < severity(*w) {
            *w = o;
        }
    }
    for (g, o) in worst {
        cells[g].counts.add(o);
        if listed_on_row(o) {
            notable.push(g);
        }
    }
    notable
}

/// Lists the notable trials, worst first, while the budget lasts: name, kind, outcome and
/// clauses, and a reference from each cell where it did not pass. A trial the budget cannot
/// take is counted in those cells' `unlisted`. Returns the listed trials' indices in `report`.
fn list(
    report: &Report,
    notable: &[(usize, Vec<usize>)],
    cells: &mut [Cell],
    engine: &mut Engine,
    budget: &mut usize,
) -> Vec<usize> {
    let mut listed = Vec::new();
    for (i, on) in notable {
        let t = &report.trials[*i];
        let entry = Listed {
            name: one_line(&t.name, MAX_NAME),
            kind: t.kind,
            capability: t.capability,
            outcome: t.outcome,
            broken: clause_list(&t.broken),
            deviations: clause_list(&t.deviations),
            message: None,
            reproducer: None,
            picture: None,
            left_out: Vec::new(),
        };
        let cost = json_len(&entry.name)
            + entry.broken.iter().map(|c| json_len(c) + 1).sum::<usize>()
            + entry
                .deviations
                .iter()
                .map(|c| json_len(c) + 1)
                .sum::<usize>()
            + on.len() * REFERENCE_COST
            + LISTING_OVERHEAD;
        if cost > *budget {
            for &r in on {
                cells[r].unlisted += 1;
            }
            continue;
        }
        *budget -= cost;
        for &r in on {
            cells[r].trials.push(engine.trials.len());
        }
        engine.trials.push(entry);
        listed.push(*i);
    }
    listed
}

/// The clause IDs of a trial's list, each one line and cut, at most [`MAX_CLAUSES_LISTED`] with
/// a last item saying how many more.
fn clause_list(ids: &[String]) -> Vec<String> {
    let mut out: Vec<String> = ids
        .iter()
        .take(MAX_CLAUSES_LISTED)
        .map(|c| one_line(c, MAX_CLAUSE_ID))
        .collect();
    if ids.len() > MAX_CLAUSES_LISTED {
        out.push(format!("… {} more", ids.len() - MAX_CLAUSES_LISTED));
    }
    out
}

/// Gives the listed trials their messages and reproducers, in listing order, while the budget
/// lasts; returns how many trials lost one or both.
fn attach_texts(
    report: &Report,
    listed: &[usize],
    engine: &mut Engine,
    budget: &mut usize,
) -> usize {
    let mut left_out = 0;
    for (entry, i) in engine.trials.iter_mut().zip(listed) {
        let t = &report.trials[*i];
        let message = t.message.as_deref().map(|m| {
            prefixed_lines(m, "", MAX_MESSAGE)
                .trim_end_matches('\n')
                .to_owned()
        });
        let reproducer = t.reproducer.as_deref().map(|r| one_line(r, MAX_REPRODUCER));
        let mut lost = false;
        for (text, slot, what) in [
            (message, &mut entry.message, "its message"),
            (reproducer, &mut entry.reproducer, "its reproducer"),
        ] {
            let Some(text) = text else { continue };
            let cost = json_len(&text);
            if cost <= *budget {
                *budget -= cost;
                *slot = Some(text);
            } else {
                lost = true;
                entry.left_out.push(format!(
                    "{what}: the page's share of details for this engine is spent"
                ));
            }
        }
        left_out += usize::from(lost);
    }
    left_out
}

/// Gives the listed trials their pictures (base64 SVG), in listing order, while the picture
/// budget lasts; returns how many were left out.
fn attach_pictures(report: &Report, listed: &[usize], engine: &mut Engine, budget: usize) -> usize {
    let mut left = budget;
    let mut left_out = 0;
    for (entry, i) in engine.trials.iter_mut().zip(listed) {
        let Some(name) = report.trials[*i].picture.as_deref() else {
            continue;
        };
        match report.pictures.get(name) {
            Some(svg) if svg.len() <= left => {
                left -= svg.len();
                entry.picture = Some(engine.pictures.len());
                engine.pictures.push(base64(svg.as_bytes()));
            }
            Some(svg) => {
                left_out += 1;
                entry.left_out.push(format!(
                    "its picture ({} bytes): the page's share of pictures for this engine is spent",
                    svg.len()
                ));
            }
            None => entry
                .left_out
                .push("its picture: the bundle does not hold it".to_owned()),
        }
    }
    left_out
}

/// The notes of a column: what it cites that has no row, and what the budgets left out.
fn notes(counted: &Counted, unlisted: usize, messages: usize, pictures: usize) -> Vec<String> {
    let mut out = Vec::new();
    if !counted.unknown.is_empty() {
        out.push(format!(
            "cites {} clause IDs the spec tables do not hold (counted on no row)",
            counted.unknown.len()
        ));
    }
    if counted.rowless > 0 {
        out.push(format!(
            "{} trials that did not pass touch no clause of the spec tables (on no row)",
            counted.rowless
        ));
    }
    if unlisted > 0 {
        out.push(format!(
            "{unlisted} trials that did not pass are counted but not listed: the page's share of details for this engine is spent (the bundle's report.html lists them)"
        ));
    }
    if messages > 0 {
        out.push(format!(
            "{messages} listed trials lost their message or reproducer to the page's budget"
        ));
    }
    if pictures > 0 {
        out.push(format!(
            "{pictures} pictures left out: the page's share of pictures for this engine is spent"
        ));
    }
    out
}

/// The bytes `s` takes as a string of the page's JSON, quotes included, escaped as the page
/// escapes it (`<`, `>`, `&` and the line separators as `\uXXXX`).
pub(super) fn json_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => 6,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// `bytes` in standard base64, padded.
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn json_len_is_what_the_page_writes() {
        for s in ["plain", "<\u{2028}&>\"\\\n\u{1}é"] {
            let written = serde_json::to_string(s).expect("a string");
            let escaped = super::super::html::island_escape(&written);
            assert_eq!(json_len(s), escaped.len(), "{s:?}");
        }
    }
}
