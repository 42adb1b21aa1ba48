//! `ge-conformance serve-reference` and `serve-dylib`: a backend served over the subprocess
//! protocol on standard input and output, the reference or an engine built as a shared library.

use std::path::PathBuf;
use std::process::ExitCode;

use ge_conformance::protocol;
use ge_spec::Profile;

use super::{ProfileArg, Usage};

/// The flags of `serve-reference`.
#[derive(clap::Args, Debug)]
pub struct ServeReferenceArgs {
    /// The profile the served reference behaves per (and declares in its hello).
    #[arg(long, value_enum, default_value = "documented")]
    profile: ProfileArg,
    /// Serve the reference with these alternatives of `spec/tables/alternatives.toml` made
    /// (ids, comma-separated): an engine that chose otherwise where the text is silent, which
    /// certifies at level `documented` (the documented profile only).
    #[arg(long, value_delimiter = ',', conflicts_with = "mutation")]
    alternatives: Vec<String>,
    /// Serve the reference with this forbidden mutation made (`byte-flipped-0`, `refused`,
    /// ...; `ge_conformance::forbidden::Mutation`): an engine with one fault the text forbids
    /// (the documented profile only).
    #[arg(long)]
    mutation: Option<String>,
}

/// The arguments of `serve-dylib`.
#[derive(clap::Args, Debug)]
pub struct ServeDylibArgs {
    /// The engine's shared library.
    path: PathBuf,
    /// The most address space this server may use, in MiB (RLIMIT_AS; 0: no limit): an
    /// engine that allocates past it fails its trial, not the machine. Use 0 for an engine
    /// built with AddressSanitizer, which reserves terabytes of address space.
    #[arg(long, default_value_t = ge_conformance::dylib::DEFAULT_MEMORY_LIMIT_MIB)]
    memory_limit_mib: u64,
}

/// Serves the reference of `--profile` until standard input ends; status 1 when serving fails.
pub fn run_reference(args: ServeReferenceArgs) -> Result<ExitCode, Usage> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let profile: Profile = args.profile.into();
    let reference = ge_reference::Reference::new(profile);
    let changed = !args.alternatives.is_empty() || args.mutation.is_some();
    if changed && profile != Profile::Documented {
        return Err(Usage(
            "--alternatives and --mutation change the documented reference: leave --profile out"
                .into(),
        ));
    }
    let allowed = args
        .alternatives
        .iter()
        .map(|id| id.parse::<ge_conformance::allowed::Rewrite>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Usage(e.to_string()))?;
    let forbidden = args
        .mutation
        .as_deref()
        .map(str::parse::<ge_conformance::forbidden::Mutation>)
        .transpose()
        .map_err(|e| Usage(e.to_string()))?;
    let allowed_engine = ge_conformance::allowed::Engine::new(allowed);
    let forbidden_engine = forbidden.map(ge_conformance::forbidden::Engine::new);
    let backend: &dyn ge_spec::Backend = match &forbidden_engine {
        Some(f) => f,
        None if changed => &allowed_engine,
        None => &reference,
    };
    match protocol::serve_profiles(backend, &[profile], stdin, stdout) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("serve-reference: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Serves the engine of the shared library at `args.path` within `--memory-limit-mib`; status
/// 1 when it cannot be loaded or serving fails.
pub fn run_dylib(args: ServeDylibArgs) -> Result<ExitCode, Usage> {
    ge_conformance::dylib::limit_memory(args.memory_limit_mib).map_err(Usage)?;
    let stdin = std::io::stdin().lock();
    match ge_conformance::dylib::serve(&args.path, stdin) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}
