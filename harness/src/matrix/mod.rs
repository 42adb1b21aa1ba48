//! Reports of several engines side by side: one column per engine (a report bundle), one row per
//! option and per clause of the spec tables, each cell counting the engine's trials on that row
//! by outcome and pointing at the ones that did not pass. `ge-conformance matrix BUNDLE...`
//! verifies each bundle and renders the [`Matrix`] as one self-contained HTML page
//! ([`Matrix::to_html`]) or a Markdown table ([`Matrix::to_markdown`]); nothing here reads a file.
//!
//! # The rules
//!
//! The rows are fixed by the spec tables, not by the reports: the twelve options in the order of
//! the source text, then `cross-cutting` (the clauses of no option), each followed by its
//! clauses in ID order. A clause a report cites that the tables do not hold makes no row: the
//! engine's column says how many such IDs it cited.
//!
//! A trial counts on every clause it touches: those it checks (`clauses`), those it broke
//! (`broken`) and those it departed from (`deviations`). Its outcome **on a clause** is
//!
//! | the trial's outcome | on a clause it broke | on a clause it departed from | on another clause it checks |
//! |---|---|---|---|
//! | fail, waived, unexpected-pass | its outcome | deviation | its outcome when it broke none (a breakdown names no clause), else pass |
//! | deviation | deviation | deviation | pass |
//! | pass | pass | deviation | pass |
//! | not-supported | not-supported | not-supported | not-supported |
//!
//! so a failure is charged to the clauses it broke, not to every clause its trial checks (a
//! property checks dozens). A trial counts once on an option's row, with its worst outcome on
//! the option's clauses (worst first: fail, unexpected-pass, waived, deviation, pass,
//! not-supported). A cell's [`Status`] is its worst count: failed (fail or unexpected pass),
//! waived, deviation, passed, not supported, or untested when no trial touches the row.
//!
//! # What a page may hold
//!
//! Every text taken from a report (names, versions, messages, reproducers, clause IDs) is a third
//! party's: it is made one line ([`crate::input::one_line`]; messages keep their line breaks) and
//! cut, and the renderings escape it again for their format. A matrix sets at most
//! [`MAX_ENGINES`] reports side by side, and whatever they hold it carries at most
//! [`DETAIL_BUDGET`] bytes of trial details and [`PICTURE_BUDGET`] bytes of pictures, shared
//! equally by its engines: the trials that did not pass are listed worst first, their names and
//! clauses before any message, and what does not fit is counted and said, never dropped
//! silently. The counts in the cells are always complete.

use std::collections::BTreeMap;

use ge_spec::{Capability, Conformance, Origin, Profile, Spec, Strength};
use serde::Serialize;

use crate::report::{Outcome, Report, Standing, Tally, TrialKind};

mod column;
mod html;
mod markdown;

pub use html::content_security_policy;

/// The most engines (report bundles) one matrix sets side by side.
pub const MAX_ENGINES: usize = 64;

/// The most bytes of trial details (names, clause lists, messages, reproducers, and the
/// references from the cells to them, measured as the page's JSON writes them) one matrix
/// carries, shared equally by its engines.
pub const DETAIL_BUDGET: usize = 640 << 10;

/// The most bytes of pictures (SVG, before base64 makes them a third larger) one matrix carries,
/// shared equally by its engines; a picture larger than what is left of its engine's share is
/// left out, saying so.
pub const PICTURE_BUDGET: usize = 512 << 10;

/// The most bytes kept of one trial's message.
pub const MAX_MESSAGE: usize = 2048;

/// The most bytes kept of one trial's reproducer (a longer one is cut, saying so, and no longer
/// runs: the bundle's own report holds it whole).
pub const MAX_REPRODUCER: usize = 2048;

/// What a cell amounts to: its worst count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A trial failed on the row (or passed where a waiver expected a failure).
    Failed,
    /// A trial failed on the row under a waiver.
    Waived,
    /// A trial departed from a suite choice on the row, at a level where it does not bind.
    Deviation,
    /// Every trial on the row passed.
    Passed,
    /// The engine does not declare the capability of the row's trials.
    NotSupported,
    /// No trial of the engine touches the row.
    Untested,
}

impl Status {
    /// The status's name, as the page's style classes and the Markdown legend use it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Failed => "failed",
            Status::Waived => "waived",
            Status::Deviation => "deviation",
            Status::Passed => "passed",
            Status::NotSupported => "not-supported",
            Status::Untested => "untested",
        }
    }
}

/// Whether a row is an option or one of its clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// An option key, or `cross-cutting`: its cells count each trial once.
    Option,
    /// A clause of the option above it.
    Clause,
}

/// One row: an option (or `cross-cutting`) or a clause, from the spec tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The option key, `cross-cutting`, or the clause ID.
    pub id: String,
    /// Option or clause.
    pub kind: RowKind,
    /// The option the row belongs to (its own key for an option row).
    pub option: String,
    /// The option's or the clause's one-line summary.
    pub summary: String,
    /// A clause's origin (documented, reference-defined, vocabulary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// A documented clause's strength.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strength: Option<Strength>,
}

/// One engine's trials on one row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The trials touching the row, by their outcome on it.
    pub counts: Tally,
    /// The trials whose outcome on the row is not a pass (nor not supported), as indices into
    /// the engine's [`Engine::trials`]: what opening the cell lists.
    pub trials: Vec<usize>,
    /// Such trials the page's budget left out of [`Engine::trials`].
    pub unlisted: u32,
}

impl Cell {
    /// What the cell amounts to: its worst count.
    pub fn status(&self) -> Status {
        let c = &self.counts;
        if c.failed + c.unexpected_pass > 0 {
            Status::Failed
        } else if c.waived > 0 {
            Status::Waived
        } else if c.deviations > 0 {
            Status::Deviation
        } else if c.passed > 0 {
            Status::Passed
        } else if c.not_supported > 0 {
            Status::NotSupported
        } else {
            Status::Untested
        }
    }
}

/// A trial of an engine that did not pass on some row, as a cell opens it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// The trial's name.
    pub name: String,
    /// Case or property.
    pub kind: TrialKind,
    /// Its capability.
    pub capability: Capability,
    /// Its outcome.
    pub outcome: Outcome,
    /// The clauses it broke.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    /// The suite's choices it departed from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<String>,
    /// What went wrong (line breaks kept), when the budget let it in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The command line that reproduces it, when the budget let it in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    /// Its picture, as an index into the engine's [`Engine::pictures`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<usize>,
    /// What the page left out of this trial, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// One column: an engine's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Engine {
    /// The backend's name.
    pub name: String,
    /// The backend's version.
    pub version: String,
    /// What the report came from (the bundle's directory name), as the caller labelled it.
    pub bundle: String,
    /// The report's verdict.
    pub verdict: Standing,
    /// The level it was judged at.
    pub level: Conformance,
    /// The profile it was judged under.
    pub profile: Profile,
    /// The capabilities the engine declared.
    pub capabilities: Vec<Capability>,
    /// All its trials together.
    pub totals: Tally,
    /// The trials that did not pass on some row, worst first, as far as the budget reaches.
    pub trials: Vec<Listed>,
    /// The pictures of listed trials, SVG encoded as base64 (shown through `<img>` only).
    pub pictures: Vec<String>,
    /// What the page says of this column besides its cells: clause IDs the tables do not
    /// hold, trials, messages and pictures the budget left out.
    pub notes: Vec<String>,
}

/// Engines side by side, options and clauses down.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// The suite's version that made the matrix.
    pub suite_version: String,
    /// The SHA-256 of the spec tables the rows come from (every verified bundle was made against
    /// them).
    pub spec_digest: String,
    /// The columns, in the order they were added.
    pub engines: Vec<Engine>,
    /// The rows: each option, then its clauses.
    pub rows: Vec<Row>,
    /// The cells, `cells[row][engine]`.
    pub cells: Vec<Vec<Cell>>,
}

/// Why a report cannot join a matrix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatrixError {
    /// More reports than the builder was made for, or than [`MAX_ENGINES`].
    #[error("a matrix sets at most {0} engines side by side")]
    TooMany(usize),
}

/// Builds a [`Matrix`] one report at a time, so that a caller holds one report at a time: each
/// engine's share of the budgets is fixed when the builder is made.
#[derive(Debug)]
pub struct MatrixBuilder {
    matrix: Matrix,
    capacity: usize,
    rows: column::RowIndex,
}

/// The group of clauses of no option.
pub const CROSS_CUTTING: &str = "cross-cutting";

/// The rows of the embedded spec tables: each option (then `cross-cutting`), then its clauses.
pub fn rows() -> Vec<Row> {
    let spec = Spec::embedded();
    let mut groups: Vec<(String, String)> = spec
        .options()
        .map(|o| (o.key.as_str().to_owned(), o.summary.clone()))
        .collect();
    groups.sort_by_key(|(key, _)| {
        ge_spec::OptionKey::ALL
            .iter()
            .position(|k| k.as_str() == key)
    });
    groups.push((
        CROSS_CUTTING.to_owned(),
        "Clauses of no single option: diagnostics, levels, the vocabulary's own contract.".into(),
    ));
    let mut rows = Vec::new();
    for (key, summary) in groups {
        rows.push(Row {
            id: key.clone(),
            kind: RowKind::Option,
            option: key.clone(),
            summary,
            origin: None,
            strength: None,
        });
        for c in spec
            .clauses()
            .filter(|c| c.option.map_or(CROSS_CUTTING, |k| k.as_str()) == key)
        {
            rows.push(Row {
                id: c.id.clone(),
                kind: RowKind::Clause,
                option: key.clone(),
                summary: c.summary.clone(),
                origin: Some(c.origin),
                strength: c.strength,
            });
        }
    }
    rows
}

impl Matrix {
    /// A builder for a matrix of `engines` columns (1 to [`MAX_ENGINES`]; each gets that share
    /// of the budgets).
    pub fn builder(engines: usize) -> MatrixBuilder {
        let rows = rows();
        let capacity = engines.clamp(1, MAX_ENGINES);
        MatrixBuilder {
            rows: column::RowIndex::new(&rows),
            matrix: Matrix {
                suite_version: env!("CARGO_PKG_VERSION").to_owned(),
                spec_digest: Spec::embedded().digest().to_owned(),
                engines: Vec::new(),
                cells: vec![Vec::new(); rows.len()],
                rows,
            },
            capacity,
        }
    }

    /// The matrix of `reports`, each labelled by its position (`1`, `2`, ...).
    pub fn of(reports: &[Report]) -> Result<Matrix, MatrixError> {
        let mut builder = Matrix::builder(reports.len());
        for (i, r) in reports.iter().enumerate() {
            builder.add(r, &(i + 1).to_string())?;
        }
        Ok(builder.finish())
    }

    /// The index of the row `id` (an option key, `cross-cutting` or a clause ID).
    pub fn row(&self, id: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.id == id)
    }

    /// The cell of engine `engine` (0-based) on row `id`.
    pub fn cell(&self, id: &str, engine: usize) -> Option<&Cell> {
        self.cells.get(self.row(id)?)?.get(engine)
    }
}

impl MatrixBuilder {
    /// Adds `report` as the next column, labelled `bundle` (where it came from).
    pub fn add(&mut self, report: &Report, bundle: &str) -> Result<(), MatrixError> {
        if self.matrix.engines.len() >= self.capacity {
            return Err(MatrixError::TooMany(self.capacity));
        }
        let share = column::Share {
            details: DETAIL_BUDGET / self.capacity,
            pictures: PICTURE_BUDGET / self.capacity,
        };
        let (engine, cells) = column::column(report, bundle, &self.rows, share);
        for (row, cell) in self.matrix.cells.iter_mut().zip(cells) {
            row.push(cell);
        }
        self.matrix.engines.push(engine);
        Ok(())
    }

    /// The matrix of the reports added.
    pub fn finish(self) -> Matrix {
        self.matrix
    }
}

/// The outcomes of `trial` on each clause it touches (the table of the module docs), by clause
/// ID as the report spells it.
pub fn outcomes_by_clause(trial: &crate::report::TrialResult) -> BTreeMap<&str, Outcome> {
    let o = trial.outcome;
    let bad = matches!(o, Outcome::Fail | Outcome::Waived | Outcome::UnexpectedPass);
    let charged_all = bad && trial.broken.is_empty();
    let mut out = BTreeMap::new();
    for c in &trial.clauses {
        let on = match o {
            Outcome::NotSupported => Outcome::NotSupported,
            _ if charged_all => o,
            _ => Outcome::Pass,
        };
        out.insert(c.as_str(), on);
    }
    for c in &trial.deviations {
        let on = match o {
            Outcome::NotSupported => Outcome::NotSupported,
            _ => Outcome::Deviation,
        };
        out.insert(c.as_str(), on);
    }
    for c in &trial.broken {
        out.insert(c.as_str(), o);
    }
    out
}

/// How bad an outcome is on a row, worst first (0).
pub fn severity(o: Outcome) -> u8 {
    match o {
        Outcome::Fail => 0,
        Outcome::UnexpectedPass => 1,
        Outcome::Waived => 2,
        Outcome::Deviation => 3,
        Outcome::Pass => 4,
        Outcome::NotSupported => 5,
    }
}

/// True for an outcome a cell lists (it did not pass on the row).
pub fn listed_on_row(o: Outcome) -> bool {
    severity(o) < severity(Outcome::Pass)
}
