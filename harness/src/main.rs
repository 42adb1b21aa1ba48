//! The `ge-conformance` command line: print the contract, evaluate one scenario, certify a
//! backend, verify a report bundle, compare two bundles, set bundles side by side, explain a
//! clause, seed the fuzzers and promote findings.
//!
//! This file holds the top-level arguments and the dispatch; each command lives in a module of
//! its own under `cli/`, with its flags and its `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ge_conformance::protocol;

mod cli;

use cli::Usage;

/// The whole command line.
#[derive(Parser, Debug)]
#[command(
    name = "ge-conformance",
    version,
    about = "Conformance suite for the GE memory-management options"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands; each variant's doc comment is its help.
#[derive(Subcommand, Debug)]
enum Command {
    /// Print the options table and the clause catalogue.
    Spec(cli::spec::SpecArgs),
    /// Read one scenario as JSON (a file, or standard input) and print the backend's observation.
    Eval(cli::eval::EvalArgs),
    /// Certify a backend against the whole suite and print the report.
    Certify(cli::certify::CertifyArgs),
    /// Serve the reference backend over the subprocess protocol on standard input and output
    /// (see docs/protocol.md); `certify --backend 'exec:ge-conformance serve-reference'` uses it.
    ServeReference(cli::serve::ServeReferenceArgs),
    /// Serve an engine built as a shared library against the C ABI (include/ge_conformance.h)
    /// over the subprocess protocol, so that `certify --backend 'exec:ge-conformance serve-dylib
    /// PATH'` isolates its crashes (see docs/c-abi.md).
    ServeDylib(cli::serve::ServeDylibArgs),
    /// Print the divergence map: every clause where the open-source GE implementation departs
    /// from the documented behaviour, with what each does.
    Divergence(cli::divergence::DivergenceArgs),
    /// Check a report bundle offline: digests, missing or extra files, spec tables; exit 0 only
    /// when it is intact and its verdict is CERTIFIED (the gate a CI job can use).
    Verify(cli::verify::VerifyArgs),
    /// Compare two report bundles (each verified first): what changed trial by trial and clause
    /// by clause; exit 0 when nothing regressed, 1 on a regression, 2 on a bundle that does not
    /// verify.
    Compare(cli::compare::CompareArgs),
    /// Set report bundles side by side (each verified first): engines across, options and
    /// clauses down, as one self-contained HTML page or Markdown; exit 2 on a bundle that does
    /// not verify.
    Matrix(cli::matrix::MatrixArgs),
    /// Write seed inputs for every fuzz target from the case tables (one file per case).
    Corpus(cli::corpus::CorpusArgs),
    /// Turn a finding (a fuzz target's crash file, or a scenario's JSON) into a new case of a
    /// regression table, with the clauses it breaks and a slot for its root cause.
    Promote(cli::promote::PromoteArgs),
    /// Explain one clause: summary, origin, rationale and cases.
    Explain(cli::explain::ExplainArgs),
}

/// Parses the command line, arranges for an interrupt to stop the backends, and runs the
/// command; a usage error exits with status 2.
fn main() -> ExitCode {
    let args = Cli::parse();
    // A certification that loads an engine in-process runs in a supervised child, so that no
    // way the engine ends the process can end the run green (cli/supervise.rs).
    if let Command::Certify(a) = &args.command {
        if let Some(engine) = a
            .in_process_engine()
            .filter(|_| !cli::supervise::supervised())
        {
            if let Some(code) = cli::supervise::run(engine, a.run_bound()) {
                return code;
            }
        }
    }
    // Interrupted (Ctrl-C, SIGTERM, SIGHUP), the harness stops every backend it started with
    // it: they run in process groups of their own, which the terminal's signal does not reach.
    let _ = ctrlc::set_handler(|| {
        protocol::stop_all_backends();
        ge_conformance::sandbox::remove_root();
        eprintln!("interrupted: every backend was stopped");
        // `_exit`, not `exit`: flushing the C streams could wait forever on a lock an
        // in-process engine's thread holds.
        ge_dylib::end_process(130);
    });
    let code = match run(args) {
        Ok(code) => code,
        Err(Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    };
    // The run's private sandbox root: its sandboxes and backends' directories are gone by now.
    ge_conformance::sandbox::remove_root();
    cli::supervise::leave_token(status_of(&code));
    code
}

/// The number an `ExitCode` made by this command line stands for (it only makes these).
fn status_of(code: &ExitCode) -> u8 {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == *code)
        .unwrap_or(1)
}

/// Runs the command asked for.
fn run(args: Cli) -> Result<ExitCode, Usage> {
    match args.command {
        Command::Spec(a) => cli::spec::run(a),
        Command::Eval(a) => cli::eval::run(a),
        Command::Certify(a) => cli::certify::run(a),
        Command::ServeReference(a) => cli::serve::run_reference(a),
        Command::ServeDylib(a) => cli::serve::run_dylib(a),
        Command::Divergence(a) => cli::divergence::run(a),
        Command::Verify(a) => cli::verify::run(a),
        Command::Compare(a) => cli::compare::run(a),
        Command::Matrix(a) => cli::matrix::run(a),
        Command::Corpus(a) => cli::corpus::run(a),
        Command::Promote(a) => cli::promote::run(a),
        Command::Explain(a) => cli::explain::run(a),
    }
}
