//! `ge-conformance certify`: a backend certified against the whole suite (with the vendor's
//! waivers and case tables), the report printed and written as a bundle, the snapshot set
//! checked, and the verdict turned into the exit status.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Expectations;
use ge_conformance::judging::Judging;
use ge_conformance::report::{Outcome, Report, Standing, TrialResult};
use ge_conformance::snapshot::{self, Snapshots};
use ge_conformance::{bundle, draw, input};
use ge_spec::Backend;

use super::{
    judging, load_local, open_backend, parse_seed, Exec, Format, LevelArg, ProfileArg, Usage,
    DEFAULT_TIMEOUT_MS,
};

/// The flags of `certify`.
#[derive(clap::Args, Debug)]
pub struct CertifyArgs {
    /// The backend: `reference`, `dylib:<path>` (in-process, C ABI) or `exec:<command line>`.
    #[arg(long, default_value = "reference")]
    backend: String,
    /// Generated scenarios per property.
    #[arg(long, default_value_t = certify::DEFAULT_CASES)]
    cases: u32,
    /// Seed of the generated scenarios: a number, or `random` for a fresh one, printed (and
    /// recorded in the report) so that a failure can be replayed with `--seed N`.
    #[arg(long, default_value = "0", value_parser = parse_seed)]
    seed: u64,
    /// Waivers (TOML): known failures with reason, tracker and expiry.
    #[arg(long)]
    expectations: Option<PathBuf>,
    /// The capabilities the run must cover: `all`, or names separated by commas
    /// (`options,transfer`). One the backend does not declare makes the verdict NOT CERTIFIED,
    /// so a capability dropped by mistake fails the gate.
    #[arg(long, value_parser = certify::parse_required)]
    require: Option<std::collections::BTreeSet<ge_spec::Capability>>,
    /// Write the report bundle (reports plus a SHA-256 manifest) into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the earlier bundle in the `--out` directory (without it, a directory that
    /// is not new or empty is refused before the run).
    #[arg(long, requires = "out")]
    force: bool,
    /// Format of the report printed on standard output.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Only trials whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// A directory of your own case tables (`<table>.toml`, the format of the suite's
    /// `cases/*.toml`), run beside the suite's cases after the same checks.
    #[arg(long)]
    cases_dir: Option<PathBuf>,
    /// Record the backend's observation of every scenario of the snapshot set as an insta
    /// snapshot in this directory (with a deviation snapshot where it differs from the
    /// reference); a new or changed snapshot makes the exit status 1, never the verdict.
    #[arg(long)]
    snapshots: Option<PathBuf>,
    /// Milliseconds an `exec:` backend has to answer each request; past it, the request
    /// fails and the backend is restarted. A `dylib:` call past it ends the run (status 4).
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// Requests in a row that time out, after which an `exec:` backend is declared dead:
    /// every remaining trial fails at once with that reason (0: never give up).
    #[arg(long, default_value_t = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER)]
    give_up_after: u32,
    /// Requests in a row that crash an `exec:` backend (it exits, or answers out of step, and is
    /// restarted), after which it is declared dead in the same way (0: never give up).
    #[arg(long, default_value_t = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER_CRASHES)]
    give_up_after_crashes: u32,
    /// Requests in the whole run that time out or crash an `exec:` backend, in a row or not,
    /// after which it is declared dead in the same way: the bound of a run whose backend breaks
    /// its streaks on purpose (0: never give up).
    #[arg(long, default_value_t = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER_RESTARTS)]
    give_up_after_restarts: u32,
    /// Seconds the whole run may last, after which an `exec:` backend is declared dead in the
    /// same way: the bound of a run whose backend answers every request just inside its
    /// timeout. An in-process `dylib:` run past it (plus a minute) is ended with status 4 and
    /// no report (0: never give up).
    #[arg(long, default_value_t = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER_SECS)]
    give_up_after_secs: u64,
    /// Milliseconds an `exec:` backend has to start and answer each hello, its first and the
    /// one after each restart [default: --timeout-ms, at least 10000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    hello_timeout_ms: Option<u64>,
    /// Run an `exec:` backend with the harness's own environment and no write restriction
    /// (see docs/protocol.md, "Confinement"); writes outside the sandbox then go unseen.
    #[arg(long)]
    no_confine: bool,
    /// Refuse to run an `exec:` backend that Landlock cannot confine (a kernel without it, or
    /// a build without the `landlock` feature), instead of running it with only its own
    /// `$TMPDIR` and `$HOME` watched, where writes elsewhere go unseen.
    #[arg(long, conflicts_with = "no_confine")]
    require_confinement: bool,
    /// The behaviour profile certified against: which cases run and which reference the
    /// properties compare with.
    #[arg(long, value_enum, default_value = "documented")]
    profile: ProfileArg,
    /// The conformance level certified at: `documented` judges what the source text states
    /// (the suite's own choices are reported as deviations), `strict` judges those too.
    #[arg(long, value_enum, default_value = "documented")]
    level: LevelArg,
}

/// How often a run off a terminal says how far it is.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Certifies the backend, prints the report, writes the bundle and checks the snapshots.
impl CertifyArgs {
    /// The library of an engine this run loads in-process (`--backend dylib:PATH`).
    pub fn in_process_engine(&self) -> Option<&str> {
        self.backend.strip_prefix("dylib:")
    }

    /// The whole run's bound in time (`--give-up-after-secs`), if it has one.
    pub fn run_bound(&self) -> Option<Duration> {
        (self.give_up_after_secs > 0).then(|| Duration::from_secs(self.give_up_after_secs))
    }
}

pub fn run(mut args: CertifyArgs) -> Result<ExitCode, Usage> {
    // The directories the run writes are fixed before an engine is loaded: one loaded
    // in-process that changes the working directory moves nothing.
    for dir in [&mut args.out, &mut args.snapshots].into_iter().flatten() {
        if let Ok(absolute) = std::path::absolute(&*dir) {
            *dir = absolute;
        }
    }
    let judging = judging(args.profile, args.level);
    // A bundle directory that would be refused is refused before a long run, not after it.
    if let Some(dir) = &args.out {
        bundle::check_destination(dir, args.force).map_err(|e| Usage(e.to_string()))?;
    }
    let local = load_local(args.cases_dir.as_deref())?;
    let snapshots = args.snapshots.as_deref().map(snapshots);
    let cfg = Config {
        judging,
        seed: args.seed,
        cases: args.cases,
        expectations: load_waivers(args.expectations.as_deref())?,
        backend_arg: args.backend.clone(),
        filter: args.filter,
        local,
        required: args.require.unwrap_or_default(),
        ..Config::default()
    };
    // Usage first: a run that could judge nothing never starts the backend.
    certify::check(&cfg).map_err(|e| Usage(e.to_string()))?;
    let exec = Exec::new(args.timeout_ms, args.no_confine)
        .requiring_confinement(args.require_confinement)
        .giving_up(ge_conformance::backends::GiveUp {
            timeouts: args.give_up_after,
            crashes: args.give_up_after_crashes,
            restarts: args.give_up_after_restarts,
            seconds: args.give_up_after_secs,
            hello: args.hello_timeout_ms.map(Duration::from_millis),
            ..ge_conformance::backends::GiveUp::default()
        });
    let handle = open_backend(&args.backend, exec, judging.profile)?;
    let mut progress = Progress::new();
    let mut report = certify::certify(handle.backend(), &cfg, &mut |done, total, r| {
        progress.step(done, total, r)
    })
    .map_err(|e| Usage(e.to_string()))?;
    if args.out.is_some() {
        // The bundle draws its failures: the backend is asked each failing scenario again.
        draw::attach_pictures(&mut report, handle.backend());
    }
    report.backend_stderr = handle.stderr();
    report.meta.confinement = handle.confinement();
    print_report(&report, args.format);
    if let Some(dir) = args.out {
        bundle::write(&report, &dir, args.force).map_err(|e| Usage(e.to_string()))?;
        eprintln!("report bundle written to {}", dir.display());
    }
    // Snapshots say what changed, never whether it is right: they come after the verdict and
    // change only the exit status.
    let snapshots_changed =
        snapshots.is_some_and(|s| check_snapshots(&s, &cfg, &judging, handle.backend()));
    Ok(status(report.verdict, snapshots_changed))
}

/// The snapshot directory of `--snapshots`, with insta set up for a command line.
fn snapshots(dir: &Path) -> Snapshots {
    // Set before any backend thread runs. insta finds its settings beside the snapshots,
    // not in a checkout of the suite; and it prints nothing unless INSTA_OUTPUT asks: each
    // changed snapshot is reported with its diff below, on standard error, so a report in a
    // machine format on standard output stays whole.
    let snapshots = Snapshots::new(dir);
    if std::env::var_os("INSTA_WORKSPACE_ROOT").is_none() {
        std::env::set_var("INSTA_WORKSPACE_ROOT", snapshots.dir());
    }
    snapshot::quiet_insta();
    snapshots
}

/// The waivers of `--expectations` (none without it).
fn load_waivers(path: Option<&Path>) -> Result<Expectations, Usage> {
    match path {
        Some(path) => {
            let text = input::read_text(path, input::MAX_EXPECTATIONS)
                .map_err(|e| Usage(e.to_string()))?;
            Expectations::parse(&text).map_err(|e| Usage(format!("{}: {e}", path.display())))
        }
        None => Ok(Expectations::default()),
    }
}

/// How far the run is: on a terminal, indicatif's bar. Off one (a CI log) indicatif draws
/// nothing by design, so a line every few seconds says the run is alive, and each trial that
/// did not pass is named.
#[derive(Debug)]
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    said: Instant,
}

impl Progress {
    /// The bar on a terminal, the log lines off one; the clock starts now.
    fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "[{bar:30}] {pos}/{len} {elapsed_precise} {wide_msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("#>-"),
            );
            bar
        });
        let started = Instant::now();
        Progress {
            bar,
            started,
            said: started,
        }
    }

    /// Trial `r` is done, the `done`th of `total`.
    fn step(&mut self, done: usize, total: usize, r: &TrialResult) {
        match &self.bar {
            Some(bar) => Self::show(bar, done, total, r),
            None => self.log(done, total, r),
        }
    }

    /// Whether a finished trial is named as it ends: one that did not pass, except a trial of a
    /// capability the backend does not declare (the summary counts those; naming each would
    /// bury the failures under a line per trial of the capability).
    fn named(r: &TrialResult) -> bool {
        !matches!(r.outcome, Outcome::Pass | Outcome::NotSupported)
    }

    /// Moves the bar, printing above it a trial that did not pass.
    fn show(bar: &indicatif::ProgressBar, done: usize, total: usize, r: &TrialResult) {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(r.name.clone());
        if Self::named(r) {
            bar.println(format!("{} {}", r.outcome.as_str(), r.name));
        }
        if done == total {
            bar.finish_and_clear();
        }
    }

    /// Names a trial that did not pass, and says how far the run is every `PROGRESS_EVERY`.
    fn log(&mut self, done: usize, total: usize, r: &TrialResult) {
        let mut err = std::io::stderr().lock();
        if Self::named(r) {
            let _ = writeln!(err, "{} {}", r.outcome.as_str(), r.name);
        }
        if self.said.elapsed() >= PROGRESS_EVERY && done < total {
            self.said = Instant::now();
            let _ = writeln!(
                err,
                "[ge-conformance] {done}/{total} trials after {} s",
                self.started.elapsed().as_secs()
            );
        }
    }
}

/// Prints the report on standard output in `format`.
fn print_report(report: &Report, format: Format) {
    let text = match format {
        Format::Text => report.to_text(),
        Format::Json => report.to_json(),
        Format::Markdown => report.to_markdown(),
        Format::Junit => report.to_junit(),
    };
    outn!("{text}");
}

/// Checks the backend's answers against the snapshot set (of `--filter`'s trials) and says
/// what changed; true when a snapshot is new, changed or unreferenced.
fn check_snapshots(
    snapshots: &Snapshots,
    cfg: &Config,
    judging: &Judging,
    backend: &dyn Backend,
) -> bool {
    let entries: Vec<_> = snapshot::set(cfg.spec(), judging.profile)
        .into_iter()
        .filter(|e| cfg.filter.as_deref().is_none_or(|f| e.name.contains(f)))
        .collect();
    let summary = snapshots.check_all(judging, backend, cfg.spec(), &entries);
    for c in &summary.changed {
        eprintln!("snapshot {c}");
    }
    for u in &summary.unreferenced {
        eprintln!("snapshot file {u} belongs to no scenario of the set: delete it");
    }
    let changed = !summary.changed.is_empty() || !summary.unreferenced.is_empty();
    eprintln!(
        "snapshots in {}: {} checked, {} new or changed, {} unreferenced{}",
        snapshots.dir().display(),
        summary.checked,
        summary.changed.len(),
        summary.unreferenced.len(),
        if changed {
            " (review the .snap.new files: cargo insta review, or INSTA_UPDATE=always to accept)"
        } else {
            ""
        }
    );
    changed
}

/// The exit status: 1 when a snapshot changed or the verdict is not a pass.
fn status(verdict: Standing, snapshots_changed: bool) -> ExitCode {
    match verdict {
        _ if snapshots_changed => ExitCode::from(1),
        Standing::Certified | Standing::CertifiedWithWaivers | Standing::Partial => {
            ExitCode::SUCCESS
        }
        Standing::NotCertified | Standing::NothingToCertify => ExitCode::from(1),
    }
}
