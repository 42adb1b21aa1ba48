//! `ge-conformance corpus`: seed inputs for every fuzz target, written from the case tables,
//! and the dictionary each is run with, written from the options table.

use std::path::PathBuf;
use std::process::ExitCode;

use ge_spec::Spec;

use super::Usage;

/// The flags of `corpus`.
#[derive(clap::Args, Debug)]
pub struct CorpusArgs {
    /// The corpus root; each target's seeds go to `<out>/<target>/`.
    #[arg(long, default_value = "fuzz/corpus")]
    out: PathBuf,
    /// Only this target.
    #[arg(long)]
    target: Option<String>,
}

/// Writes the seeds and says how many each target got, and where.
pub fn run(args: CorpusArgs) -> Result<ExitCode, Usage> {
    let out = args.out;
    let written =
        ge_conformance::findings::write_corpus(Spec::embedded(), &out, args.target.as_deref())
            .map_err(|e| Usage(e.to_string()))?;
    for (target, n) in written {
        out!(
            "{target}: {n} seeds in {}, its dictionary in {}",
            out.join(target).display(),
            out.join(format!("{target}.dict")).display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
