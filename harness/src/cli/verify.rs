//! `ge-conformance verify`: a report bundle checked offline (digests, missing or extra files,
//! spec tables); exit 0 only for an intact bundle whose verdict is CERTIFIED (with waivers or
//! without; `--no-waivers` takes only a clean one), covering the capabilities `--require`
//! names, its properties run on at least `--min-cases` scenarios each, under the `--profile`
//! asked for. A bundle made against other spec tables never verifies (its verdict cannot be
//! recomputed here).

use std::path::PathBuf;
use std::process::ExitCode;

use ge_conformance::bundle;
use ge_conformance::input::{one_line, MAX_NAME};
use ge_conformance::report::{Report, Standing};

use super::Usage;

/// The flags of `verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The bundle directory.
    dir: PathBuf,
    /// Check integrity only: exit 0 for an intact bundle whatever its verdict.
    #[arg(long)]
    integrity_only: bool,
    /// The gate of a third-party certification: a verdict CERTIFIED WITH WAIVERS fails.
    #[arg(long)]
    no_waivers: bool,
    /// The capabilities the bundle's engine must have been certified for: `all`, or names
    /// separated by commas. One it did not declare fails.
    #[arg(long, value_parser = ge_conformance::certify::parse_required)]
    require: Option<std::collections::BTreeSet<ge_spec::Capability>>,
    /// The fewest scenarios per property the run must have used (`certify --cases`; the
    /// default run uses 256): a bundle of a quicker run fails.
    #[arg(long)]
    min_cases: Option<u32>,
    /// The profile the bundle must have been judged under: a bundle judged under the other
    /// fails (an upstream certification says what GE's code does, not what the text says).
    #[arg(long, value_enum)]
    profile: Option<super::ProfileArg>,
}

/// Verifies the bundle in `args.dir` and says what it holds.
pub fn run(args: VerifyArgs) -> Result<ExitCode, Usage> {
    match bundle::verify(&args.dir) {
        Ok(report) => {
            summary(&report);
            if args.integrity_only {
                return Ok(ExitCode::SUCCESS);
            }
            let gate = Gate {
                no_waivers: args.no_waivers,
                require: args.require.as_ref(),
                min_cases: args.min_cases,
                profile: args.profile.map(ge_spec::Profile::from),
            };
            let refused = refusals(&report, &gate);
            if refused.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            eprintln!(
                "the bundle is intact but does not pass (--integrity-only checks integrity alone):"
            );
            for why in refused {
                eprintln!(
                    "  - {}",
                    ge_conformance::input::one_line(&why, ge_conformance::input::MAX_TEXT)
                );
            }
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            // Its findings name files of an untrusted directory: printed safe for a terminal.
            eprintln!("{}", super::bundle_findings(&e));
            Ok(ExitCode::from(1))
        }
    }
}

/// What a bundle must hold besides a CERTIFIED verdict.
struct Gate<'a> {
    no_waivers: bool,
    require: Option<&'a std::collections::BTreeSet<ge_spec::Capability>>,
    min_cases: Option<u32>,
    profile: Option<ge_spec::Profile>,
}

/// Why an intact bundle does not pass the gate asked for: every reason, none when it passes.
fn refusals(report: &Report, gate: &Gate<'_>) -> Vec<String> {
    let undeclared: Vec<&str> = gate
        .require
        .into_iter()
        .flatten()
        .filter(|c| !report.meta.capabilities.contains(c))
        .map(|c| c.as_str())
        .collect();
    let mut out = Vec::new();
    if !report.verdict.is_certified() {
        out.push("its verdict is not CERTIFIED".to_owned());
    }
    if !undeclared.is_empty() {
        out.push(format!(
            "its engine was not certified for {} (--require)",
            undeclared.join(", ")
        ));
    }
    if let Some(p) = gate.profile.filter(|&p| p != report.meta.profile) {
        out.push(format!(
            "it was judged under the {} profile, not {p} (--profile)",
            report.meta.profile
        ));
    }
    if let Some(min) = gate.min_cases.filter(|&m| report.meta.case_budget < m) {
        out.push(format!(
            "its properties ran {} scenarios each, fewer than --min-cases {min}",
            report.meta.case_budget
        ));
    }
    if gate.no_waivers && report.verdict == Standing::CertifiedWithWaivers {
        out.push(format!(
            "its verdict is CERTIFIED WITH WAIVERS ({} waived; --no-waivers takes only a clean certification)",
            report.totals.waived
        ));
    }
    out
}

/// The line that says an intact bundle's backend, verdict, scope, totals, budget and tables
/// ("intact": its files are what it says; whether it passes the gate follows).
fn summary(report: &Report) {
    let caps: Vec<&str> = report
        .meta
        .capabilities
        .iter()
        .map(|c| c.as_str())
        .collect();
    out!(
        "bundle intact: backend {} {}, {} for {} at level {} (profile {}; {} passed, {} failed, {} deviations, {} waived; {} scenarios per property), spec tables {}{}",
        one_line(&report.meta.backend, MAX_NAME),
        one_line(&report.meta.backend_version, MAX_NAME),
        report.verdict.as_str(),
        caps.join(", "),
        report.meta.level,
        report.meta.profile,
        report.totals.passed,
        report.totals.failed,
        report.totals.deviations,
        report.totals.waived,
        report.meta.case_budget,
        report.meta.spec_digest,
        report
            .meta
            .local_cases
            .as_ref()
            .map(|d| format!(", with the vendor's own case tables {d}"))
            .unwrap_or_default()
    );
}
