//! `ge-conformance compare OLD NEW`: two report bundles verified as `verify` checks them (a
//! bundle that is not intact, or was made against other spec tables, is refused: exit 2), then
//! compared by `ge_conformance::compare` (its docs hold the rules) and the comparison printed as
//! text, JSON or Markdown. Exit 0 when nothing regressed, 1 on a regression, 2 on bad input.
//! Whether each bundle's verdict is CERTIFIED is no concern here: a failing bundle is what a
//! comparison is for.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ge_conformance::bundle;
use ge_conformance::compare::compare;
use ge_conformance::input::{one_line, MAX_TEXT};
use ge_conformance::report::Report;

use super::Usage;

/// The formats `compare` prints.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq, Default)]
pub enum CompareFormat {
    /// For the terminal: what changed, regressions first, and a verdict line.
    #[default]
    Text,
    /// The comparison as JSON (`ge_conformance::compare::Comparison`).
    Json,
    /// Markdown: both runs side by side, a table of the trials and one of the clauses.
    Markdown,
}

/// The flags of `compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The bundle of the earlier run: the baseline.
    old: PathBuf,
    /// The bundle of the later run.
    new: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value_t)]
    format: CompareFormat,
}

/// Verifies both bundles, compares them and prints the comparison; exit 1 when NEW regressed.
pub fn run(args: CompareArgs) -> Result<ExitCode, Usage> {
    let (old, new) = (load(&args.old, "OLD"), load(&args.new, "NEW"));
    let (old, new) = match (old, new) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let why: Vec<String> = [old.err(), new.err()].into_iter().flatten().collect();
            return Err(Usage(why.join("\n")));
        }
    };
    let comparison = compare(&old, &new);
    match args.format {
        CompareFormat::Text => outn!("{}", comparison.to_text()),
        CompareFormat::Json => out!("{}", comparison.to_json()),
        CompareFormat::Markdown => outn!("{}", comparison.to_markdown()),
    }
    Ok(super::status(comparison.regressed))
}

/// The report of the bundle in `dir`, or why it cannot be compared (made safe to print).
fn load(dir: &Path, which: &str) -> Result<Report, String> {
    bundle::verify(dir).map_err(|e| {
        format!(
            "{which} bundle {} cannot be compared: {}",
            one_line(&dir.display().to_string(), MAX_TEXT),
            super::bundle_findings(&e)
        )
    })
}
