//! `ge-conformance matrix BUNDLE...`: report bundles verified one at a time as `verify` checks
//! them (one that is not intact, or was made against other spec tables, is refused: exit 2, with
//! every refusal said), set side by side by `ge_conformance::matrix` (its docs hold the rules and
//! the budgets) and written as one self-contained HTML page or as Markdown, on standard output or
//! into `--out FILE`. The matrix judges nothing: exit 0 once it is written, whatever the engines'
//! verdicts. Only one bundle's report is held at a time, so the memory it takes is one bundle's
//! (at most `bundle::MAX_BUNDLE` bytes of files) and the page's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ge_conformance::bundle;
use ge_conformance::input::{one_line, replace_file, MAX_NAME, MAX_TEXT};
use ge_conformance::matrix::{Matrix, MAX_ENGINES};

use super::Usage;

/// The formats `matrix` writes.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq, Default)]
pub enum MatrixFormat {
    /// One self-contained HTML page: sorting, filtering, and a cell's trials opened by a click.
    #[default]
    Html,
    /// Markdown: the engines, the matrix as a table, and each engine's trials that did not pass.
    Markdown,
}

/// The flags of `matrix`.
#[derive(clap::Args, Debug)]
pub struct MatrixArgs {
    /// The bundles (`certify --out` directories), one column each, in this order; at most 64.
    #[arg(required = true)]
    bundles: Vec<PathBuf>,
    /// What to write.
    #[arg(long, value_enum, default_value_t)]
    format: MatrixFormat,
    /// Write into FILE (replaced whole by a rename: a link there is replaced, never written
    /// through) instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Verifies every bundle, sets them side by side and writes the matrix.
pub fn run(args: MatrixArgs) -> Result<ExitCode, Usage> {
    if args.bundles.len() > MAX_ENGINES {
        return Err(Usage(format!(
            "{} bundles given: a matrix sets at most {MAX_ENGINES} side by side",
            args.bundles.len()
        )));
    }
    let mut builder = Matrix::builder(args.bundles.len());
    let mut refused = Vec::new();
    for dir in &args.bundles {
        match bundle::verify(dir) {
            // Once one is refused nothing is written; the others are still verified, so that
            // every refusal is said at once.
            Ok(report) if refused.is_empty() => builder
                .add(&report, &label(dir))
                .map_err(|e| Usage(e.to_string()))?,
            Ok(_) => {}
            Err(e) => refused.push(format!(
                "bundle {} cannot be set in the matrix: {}",
                one_line(&dir.display().to_string(), MAX_TEXT),
                super::bundle_findings(&e)
            )),
        }
    }
    if !refused.is_empty() {
        return Err(Usage(refused.join("\n")));
    }
    let matrix = builder.finish();
    let text = match args.format {
        MatrixFormat::Html => matrix.to_html(),
        MatrixFormat::Markdown => matrix.to_markdown(),
    };
    match &args.out {
        Some(path) => replace_file(path, text.as_bytes()).map_err(|e| {
            Usage(format!(
                "{}: {}",
                one_line(&path.display().to_string(), MAX_TEXT),
                one_line(&e.to_string(), MAX_TEXT)
            ))
        })?,
        None => outn!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// What a column says it came from: the bundle directory's name.
fn label(dir: &Path) -> String {
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    one_line(&name, MAX_NAME)
}
