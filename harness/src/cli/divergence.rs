//! `ge-conformance divergence`: the divergence map, every clause where upstream GE departs from
//! the documented behaviour, as Markdown or JSON.

use std::process::ExitCode;

use clap::ValueEnum;
use ge_spec::Spec;

use super::Usage;

/// The flags of `divergence`.
#[derive(clap::Args, Debug)]
pub struct DivergenceArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "markdown")]
    format: MapFormat,
}

/// The formats of the divergence map.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum MapFormat {
    Markdown,
    Json,
}

/// Prints the map in the format asked for.
pub fn run(args: DivergenceArgs) -> Result<ExitCode, Usage> {
    match args.format {
        MapFormat::Markdown => {
            outn!("{}", ge_conformance::divergence::markdown(Spec::embedded()))
        }
        MapFormat::Json => out!("{}", ge_conformance::divergence::json(Spec::embedded())),
    }
    Ok(ExitCode::SUCCESS)
}
