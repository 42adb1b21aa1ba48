//! `ge-conformance verify`: a report bundle checked offline (digests, missing or extra files,
//! spec tables); exit 0 only for an intact bundle whose verdict is CERTIFIED.

use std::path::PathBuf;
use std::process::ExitCode;

use ge_conformance::bundle;
use ge_conformance::input::{one_line, MAX_NAME};
use ge_conformance::report::Report;

use super::Usage;

/// The flags of `verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The bundle directory.
    dir: PathBuf,
    /// Check integrity only: exit 0 for an intact bundle whatever its verdict.
    #[arg(long)]
    integrity_only: bool,
}

/// Verifies the bundle in `args.dir` and says what it holds.
pub fn run(args: VerifyArgs) -> Result<ExitCode, Usage> {
    match bundle::verify(&args.dir) {
        Ok(report) => {
            summary(&report);
            if args.integrity_only || report.certified {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "the bundle is intact but its verdict is not CERTIFIED (--integrity-only checks integrity alone)"
                );
                Ok(ExitCode::from(1))
            }
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The line that says an intact bundle's backend, verdict, totals and tables.
fn summary(report: &Report) {
    out!(
        "bundle verifies: backend {} {}, {} at level {} (profile {}; {} passed, {} failed, {} deviations), spec tables {}{}",
        one_line(&report.meta.backend, MAX_NAME),
        one_line(&report.meta.backend_version, MAX_NAME),
        report.verdict.as_str(),
        report.meta.level,
        report.meta.profile,
        report.totals.passed,
        report.totals.failed,
        report.totals.deviations,
        report.meta.spec_digest,
        report
            .meta
            .local_cases
            .as_ref()
            .map(|d| format!(", with the vendor's own case tables {d}"))
            .unwrap_or_default()
    );
}
