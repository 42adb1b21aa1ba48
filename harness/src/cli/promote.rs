//! `ge-conformance promote`: a finding (a fuzz target's crash file, or a scenario's JSON) turned
//! into a new case of a regression table, with the clauses it breaks.

use std::path::PathBuf;
use std::process::ExitCode;

use ge_conformance::findings::{self, PromoteOptions};

use super::{judging, open_backend, Exec, LevelArg, ProfileArg, Usage};

/// The flags of `promote`.
#[derive(clap::Args, Debug)]
pub struct PromoteArgs {
    /// The crash file or scenario JSON.
    input: PathBuf,
    /// The fuzz target the input came from (found from its directory when absent).
    #[arg(long)]
    target: Option<String>,
    /// The backend the finding is about: `reference`, `dylib:<path>` (in-process, C ABI) or
    /// `exec:<command line>`. For a crash of a C or C++ engine, serve it isolated
    /// (`exec:ge-conformance serve-dylib <lib.so>`): its crash is then the finding, not the end
    /// of `promote`.
    #[arg(long, default_value = "reference")]
    backend: String,
    /// The regression table to append to. Without it or `--into`, the suite's own
    /// `spec/tables/cases/regressions.toml`, in a checkout of the suite only: elsewhere (a
    /// vendor's crate) `promote` asks for `--into`, since nothing there reads that table.
    #[arg(long, conflicts_with = "into")]
    table: Option<PathBuf>,
    /// A directory of your own case tables: the case goes to its `local-regressions.toml`
    /// (created with the directory when missing), which `certify --cases-dir` and
    /// `Suite::with_cases` read.
    #[arg(long)]
    into: Option<PathBuf>,
    /// The case name.
    #[arg(long)]
    name: Option<String>,
    /// A clause the finding breaks (repeatable); needed when the bug is already fixed.
    #[arg(long = "clause")]
    clauses: Vec<String>,
    /// The profile the backend is judged under.
    #[arg(long, value_enum, default_value_t = ProfileArg::Documented)]
    profile: ProfileArg,
    /// The level the backend is judged at: the clauses it breaks there are cited.
    #[arg(long, value_enum, default_value_t = LevelArg::Documented)]
    level: LevelArg,
}

/// The suite's own regression table, when this is a checkout of the suite (its case tables'
/// directory is here).
fn suite_table() -> Result<PathBuf, Usage> {
    let dir = std::path::Path::new("spec/tables/cases");
    if dir.is_dir() {
        return Ok(dir.join("regressions.toml"));
    }
    Err(Usage(
        "no --into or --table, and no spec/tables/cases/ here: the default is the suite's own \
         regression table, in a checkout of the suite. In your crate, name the directory of \
         your case tables with --into <dir> (what `Suite::with_cases` and `certify --cases-dir` \
         read)"
            .to_owned(),
    ))
}

/// Appends the case to its table, prints it and says where it went.
pub fn run(args: PromoteArgs) -> Result<ExitCode, Usage> {
    let judging = judging(args.profile, args.level);
    let table = match args.into {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| Usage(format!("{}: {e}", dir.display())))?;
            dir.join(ge_conformance::local::PROMOTED_TABLE)
        }
        None => match args.table {
            Some(table) => table,
            None => suite_table()?,
        },
    };
    let handle = open_backend(&args.backend, Exec::new(10_000, false), judging.profile)?;
    let opts = PromoteOptions {
        target: args.target,
        table,
        name: args.name,
        clauses: args.clauses,
        judging,
    };
    let promotion = findings::promote(handle.backend(), &args.input, &opts)
        .map_err(|e| Usage(e.to_string()))?;
    out!("{}", promotion.text.trim_end());
    eprintln!("{promotion}");
    Ok(ExitCode::SUCCESS)
}
