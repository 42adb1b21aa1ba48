//! The vendor entry point: turns the suite into libtest trials (`<table>/<case>` and
//! `property/<capability>`), so `cargo test`, filters, `--ignored` and nextest work in a vendor's
//! crate. A test target with `harness = false` and a `main` of a few lines is all it takes:
//!
//! ```no_run
//! # use std::collections::BTreeSet;
//! # use ge_spec::{Backend, vocab::Capability};
//! # struct MyEngine;
//! # impl Backend for MyEngine {
//! #     fn name(&self) -> &str { "my-engine" }
//! #     fn capabilities(&self) -> BTreeSet<Capability> { BTreeSet::new() }
//! # }
//! fn main() {
//!     ge_conformance::libtest::Suite::new(MyEngine).run_and_exit();
//! }
//! ```
//!
//! Trials of capabilities the backend does not declare are marked ignored (never passed); a
//! backend that declares none fails the trial `setup/capabilities`: nothing to certify.
//! `GE_CONFORMANCE_EXPECTATIONS` names a waiver file, `GE_CONFORMANCE_SEED` and
//! `GE_CONFORMANCE_CASES` set the seed and the scenarios per property,
//! `GE_CONFORMANCE_PROFILE` (`documented` or `upstream`) the behaviour profile and
//! `GE_CONFORMANCE_LEVEL` (`documented` or `strict`) the conformance level.
//!
//! At level `documented` (the default) a trial that only departs from the suite's own choices
//! passes; the deviations are listed after libtest's summary. At level `strict` they fail.
//!
//! A vendor's own case tables run beside the suite's ([`Suite::with_cases`]); the backend's
//! answers to the snapshot set are kept as insta snapshots ([`Suite::with_snapshots`] or
//! `GE_CONFORMANCE_SNAPSHOTS`, see [`crate::snapshot`]); and the report bundle of the run,
//! which `ge-conformance verify` checks, is written with [`Suite::with_bundle`] or
//! `GE_CONFORMANCE_OUT`:
//!
//! ```no_run
//! # use std::collections::BTreeSet;
//! # use ge_spec::{Backend, vocab::Capability};
//! # struct MyEngine;
//! # impl Backend for MyEngine {
//! #     fn name(&self) -> &str { "my-engine" }
//! #     fn capabilities(&self) -> BTreeSet<Capability> { BTreeSet::new() }
//! # }
//! fn main() {
//!     ge_conformance::libtest::Suite::new(MyEngine)
//!         .with_cases("cases")           // cases/<table>.toml, the format of the suite's tables
//!         .with_snapshots("snapshots")   // snapshots/<table>__<case>.snap, reviewed with cargo insta
//!         .run_and_exit();
//! }
//! ```
//!
//! Waivers behave as under `certify`: a waived failure is listed after the summary;
//! a trial an exact waiver names that passes fails as an unexpected pass (a glob waiver only
//! accepts the failures among the trials it covers); an expired waiver is a failing trial
//! `waiver/expired/<pattern>` (the waived trials still run); a waiver that matches no trial is
//! a trial `waiver/stale/<pattern>` that shows as ignored with that reason. A waived failure
//! shows as ignored too, with the waiver's reason: it is not a pass.
//!
//! nextest shows a trial it runs only as passed or failed, and skips those listed as ignored.
//! So when the ignored trials are listed (`--list --ignored`, nextest's second listing call),
//! the trials a waiver may waive are judged first, in a child process, and those whose failures
//! are all waived are listed as ignored: nextest skips them. `GE_CONFORMANCE_LIST_TIMEOUT_MS`
//! bounds each of those trials (default 60,000); one that runs longer, or during which the
//! engine ends the child, is listed to run. A run of the ignored trials (`--ignored`) runs every
//! trial a waiver may waive, each showing what it is. Run in a nextest process, a waived
//! failure or a stale waiver fails, saying why: it is not a pass.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ge_spec::{Backend, Conformance, Profile};

use crate::certify::{self, Config};
use crate::expectations::Expectations;
use crate::local::LocalCases;
use crate::report::{Outcome, TrialKind, TrialResult};
use crate::snapshot::{self, Snapshots};

mod ahead;
pub mod baseline;
pub mod runner;
pub use runner::{run, Arguments, Completion, Conclusion, Failed, Trial};

/// The suite, ready to run against one backend.
#[derive(Debug)]
pub struct Suite<B> {
    backend: Arc<B>,
    config: Config,
    deviations: Arc<Mutex<Vec<String>>>,
    waived: Arc<Mutex<Vec<String>>>,
    /// Where the snapshot trials keep their snapshots (none: no snapshot trials).
    snapshots: Option<Snapshots>,
    /// Where the report bundle goes after the run (none: no bundle).
    bundle: Option<PathBuf>,
    /// Why the local case tables could not be added: a failing trial `cases/local`.
    cases_error: Option<String>,
    /// The environment variables that could not be used: a failing trial `setup/environment`.
    setup: Vec<String>,
    /// Every case and property trial's result, waivers applied, for the bundle.
    results: Arc<Mutex<Vec<TrialResult>>>,
    /// How long a listing waits for one trial it judges ahead ([`Self::mark_waived`]).
    list_limit: std::time::Duration,
    /// The earlier run each trial is judged against ([`Self::baseline`]), or why it cannot be:
    /// a failing trial `setup/baseline`.
    baseline: Option<Result<Arc<baseline::Baseline>, String>>,
    /// The trials shown as known failures of the baseline, and those it failed that pass now.
    against: Arc<Mutex<Against>>,
}

/// What the trials were against the baseline, listed after the summary.
#[derive(Debug, Default)]
struct Against {
    known: Vec<String>,
    fixed: Vec<String>,
}

fn render(r: &TrialResult, cfg: &Config) -> String {
    let mut out = r.message.clone().unwrap_or_default();
    if let Some(s) = &r.scenario {
        out.push_str(&format!("\nscenario: {s}"));
        out.push_str(&format!("\nrerun: {}", reproducer(r, cfg)));
    }
    out
}

/// How to rerun trial `r` of this route: the command line cannot load a backend linked into
/// the vendor's test binary, so the trial is rerun here, with the settings that change which
/// scenarios a property draws; then the reference's answer for the same scenario. This is also
/// the reproducer the report bundle records (not `ge-conformance eval --backend <name>`, which
/// the command line would refuse).
fn reproducer(r: &TrialResult, cfg: &Config) -> String {
    let default = Config::default();
    let mut env = String::new();
    if cfg.seed != default.seed {
        env.push_str(&format!("GE_CONFORMANCE_SEED={} ", cfg.seed));
    }
    if cfg.cases != default.cases {
        env.push_str(&format!("GE_CONFORMANCE_CASES={} ", cfg.cases));
    }
    if cfg.judging.profile != default.judging.profile {
        env.push_str(&format!("GE_CONFORMANCE_PROFILE={} ", cfg.judging.profile));
    }
    if cfg.judging.level != default.judging.level {
        env.push_str(&format!("GE_CONFORMANCE_LEVEL={} ", cfg.judging.level));
    }
    let target = test_target()
        .map(|t| format!(" --test {}", certify::shell_quote(&t)))
        .unwrap_or_default();
    let mut line = format!(
        "{env}cargo test{target} -- --exact {}",
        certify::shell_quote(&r.name)
    );
    if let Some(s) = &r.scenario {
        line.push_str(&format!(
            "\nthe reference's answer: echo {} | ge-conformance eval",
            certify::shell_quote(&s.to_string())
        ));
    }
    line
}

/// The environment variable naming the directory a run writes its bundle to.
const OUT_ENV: &str = "GE_CONFORMANCE_OUT";

/// The test target this binary was built from: cargo names a test binary `<target>-<16 hex
/// digits>`; `None` when the name is not of that form (a binary run by other means).
fn test_target() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    target_of(&exe.file_stem()?.to_string_lossy())
}

/// The `<target>` of a test binary's file stem `<target>-<16 hex digits>`.
fn target_of(stem: &str) -> Option<String> {
    let (target, hash) = stem.rsplit_once('-')?;
    let hashed = hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (hashed && !target.is_empty()).then(|| target.to_owned())
}

/// Where a trial's outcome goes besides pass or fail: the lists printed after the summary, and
/// the baseline it is judged against.
#[derive(Debug, Clone, Default)]
struct Lists {
    deviations: Arc<Mutex<Vec<String>>>,
    waived: Arc<Mutex<Vec<String>>>,
    baseline: Option<Arc<baseline::Baseline>>,
    against: Arc<Mutex<Against>>,
}

/// A trial's outcome as libtest shows it: a waived failure is neither a pass nor a failure, so
/// it shows as ignored with the waiver's reason (and is listed after the summary).
fn verdict(mut r: TrialResult, cfg: &Config, lists: &Lists) -> Result<Completion, Failed> {
    if let Some(baseline) = &lists.baseline {
        match baseline.judge(&r) {
            baseline::Against::Known(reason) => {
                let shown = ignored_at_run_time(&reason, &render(&r, cfg));
                if let (Ok(_), Ok(mut a)) = (&shown, lists.against.lock()) {
                    a.known.push(r.name.clone());
                }
                return shown;
            }
            baseline::Against::Regressed(what) => {
                r.message = Some(format!("{what}\n{}", r.message.unwrap_or_default()));
            }
            baseline::Against::Fixed => {
                if let Ok(mut a) = lists.against.lock() {
                    a.fixed.push(r.name.clone());
                }
            }
            baseline::Against::Same => {}
        }
    }
    let deviations = &lists.deviations;
    match r.outcome {
        Outcome::Pass => Ok(Completion::Completed),
        Outcome::Waived => {
            // The message's first line is the waiver, the rest the failures it waives.
            let message = r.message.as_deref().unwrap_or_default();
            let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
            let shown = ignored_at_run_time(first, rest);
            // Listed after the summary as waived only where it shows as ignored.
            if let (Ok(_), Ok(mut w)) = (&shown, lists.waived.lock()) {
                w.push(format!("{}: {first}", r.name));
            }
            shown
        }
        Outcome::Deviation => {
            if let Ok(mut d) = deviations.lock() {
                d.push(format!("{}: {}", r.name, r.deviations.join(", ")));
            }
            Ok(Completion::Completed)
        }
        // Such trials are marked ignored; run anyway (`--include-ignored`), a skip must still
        // never show as a pass.
        Outcome::NotSupported => {
            Err(format!("not supported: {}", r.message.unwrap_or_default()).into())
        }
        Outcome::Fail | Outcome::UnexpectedPass => Err(render(&r, cfg).into()),
    }
}

/// A trial that found, once run, that it is neither a pass nor a failure (a waived failure, a
/// stale waiver): ignored for `reason`, as libtest shows it. nextest shows a trial it runs only
/// as passed or failed, and this is not a pass: there it fails, saying why, with `detail`
/// (it skips such a trial when the listing marks it ignored, see [`Suite::mark_waived`]).
fn ignored_at_run_time(reason: &str, detail: &str) -> Result<Completion, Failed> {
    if !under_nextest() {
        return Ok(Completion::ignored_with(reason));
    }
    Err(format!(
        "ignored ({reason}), and run under nextest, which shows a trial it runs only as passed \
         or failed: this is not a pass (`cargo nextest run` skips the trials its listing finds \
         waived; `cargo test` shows this one as ignored)\n{detail}"
    )
    .into())
}

impl<B: Backend + Send + Sync + 'static> Suite<B> {
    /// The suite for `backend`, configured from the environment (see the module docs).
    ///
    /// A variable that cannot be used (a waiver file that cannot be read or parsed, a seed or
    /// case count that is not a number, a profile or level that names none) never panics: it
    /// makes a failing trial `setup/environment` that names it and what is wrong, and the rest
    /// of the suite runs with that setting's default, so `--list` and nextest still work.
    pub fn new(backend: B) -> Self {
        let mut config = Config {
            backend_arg: backend.name().to_owned(),
            ..Config::default()
        };
        let mut setup = Vec::new();
        let var = |name: &str| std::env::var(name).ok();
        if let Some(path) = var("GE_CONFORMANCE_EXPECTATIONS") {
            match crate::input::read_text(path.as_ref(), crate::input::MAX_EXPECTATIONS) {
                Ok(text) => match Expectations::parse(&text) {
                    Ok(e) => config.expectations = e,
                    Err(e) => setup.push(format!("GE_CONFORMANCE_EXPECTATIONS={path}: {e}")),
                },
                Err(e) => setup.push(format!("GE_CONFORMANCE_EXPECTATIONS={path}: {e}")),
            }
        }
        if let Some(seed) = var("GE_CONFORMANCE_SEED") {
            match seed.parse() {
                Ok(n) => config.seed = n,
                Err(_) if seed == "random" => {
                    config.seed = certify::random_seed();
                    eprintln!(
                        "seed {} (GE_CONFORMANCE_SEED=random; replay with GE_CONFORMANCE_SEED={})",
                        config.seed, config.seed
                    );
                }
                Err(_) => setup.push(format!(
                    "GE_CONFORMANCE_SEED={seed} is neither a number nor `random`"
                )),
            }
        }
        if let Some(cases) = var("GE_CONFORMANCE_CASES") {
            match cases.parse() {
                Ok(n) => config.cases = n,
                Err(_) => setup.push(format!("GE_CONFORMANCE_CASES={cases} is not a number")),
            }
        }
        if let Some(profile) = var("GE_CONFORMANCE_PROFILE") {
            match profile.parse() {
                Ok(p) => config.judging.profile = p,
                Err(e) => setup.push(format!("GE_CONFORMANCE_PROFILE={profile}: {e}")),
            }
        }
        let mut list_limit = ahead::DEFAULT_LIMIT;
        if let Some(ms) = var("GE_CONFORMANCE_LIST_TIMEOUT_MS") {
            match ms.parse() {
                Ok(ms) => list_limit = std::time::Duration::from_millis(ms),
                Err(_) => setup.push(format!(
                    "GE_CONFORMANCE_LIST_TIMEOUT_MS={ms} is not a number"
                )),
            }
        }
        if let Some(level) = var("GE_CONFORMANCE_LEVEL") {
            match level.parse() {
                Ok(l) => config.judging.level = l,
                Err(e) => setup.push(format!("GE_CONFORMANCE_LEVEL={level}: {e}")),
            }
        }
        let suite = Suite {
            backend: Arc::new(backend),
            config,
            deviations: Arc::new(Mutex::new(Vec::new())),
            waived: Arc::new(Mutex::new(Vec::new())),
            snapshots: None,
            bundle: None,
            cases_error: None,
            setup,
            results: Arc::new(Mutex::new(Vec::new())),
            list_limit,
            baseline: None,
            against: Arc::default(),
        };
        suite.with_directories_of_the_environment()
    }

    /// The snapshot directory, the bundle's and the baseline's, when the environment names
    /// them (`GE_CONFORMANCE_SNAPSHOTS`, `GE_CONFORMANCE_OUT`, `GE_CONFORMANCE_BASELINE`).
    fn with_directories_of_the_environment(mut self) -> Self {
        if let Some(dir) = std::env::var_os("GE_CONFORMANCE_SNAPSHOTS") {
            self = self.with_snapshots(dir);
        }
        if let Some(dir) = std::env::var_os(OUT_ENV) {
            self = self.with_bundle(dir);
        }
        if let Some(dir) = std::env::var_os("GE_CONFORMANCE_BASELINE") {
            self = self.baseline(dir);
        }
        self
    }

    /// Adds snapshot trials, `snapshot/<scenario>`: the backend's answer to every scenario of
    /// the snapshot set ([`crate::snapshot`]) asserted with insta against `<dir>/<name>.snap`,
    /// and a deviation snapshot beside it where the answer differs from the reference. A
    /// relative `dir` is taken from the working directory, which `cargo test` makes the
    /// crate's. `GE_CONFORMANCE_SNAPSHOTS=dir` does the same.
    ///
    /// Unless `INSTA_WORKSPACE_ROOT` is set, it is set to the working directory (the crate's,
    /// under `cargo test`): otherwise insta asks `cargo metadata` where the workspace is, once
    /// per process, which under nextest (a process per trial) is most of a snapshot trial's cost.
    /// A vendor whose insta settings live in a workspace root above the crate sets it there.
    pub fn with_snapshots(mut self, dir: impl AsRef<Path>) -> Self {
        if std::env::var_os("INSTA_WORKSPACE_ROOT").is_none() {
            if let Ok(here) = std::env::current_dir() {
                // Set while the suite is built, before libtest starts any thread.
                std::env::set_var("INSTA_WORKSPACE_ROOT", here);
            }
        }
        self.snapshots = Some(Snapshots::new(dir));
        self
    }

    /// Adds the case tables of `dir` (every `<table>.toml` there, in the format of the suite's
    /// `cases/*.toml`): checked by the same loader (clauses that exist, unique names, no table
    /// named as one of the suite's), then run as trials `<table>/<case>` like the suite's own.
    /// Tables that cannot be added make a failing trial `cases/local` that says why, and the
    /// suite's own trials still run. A relative `dir` is taken from the working directory.
    pub fn with_cases(mut self, dir: impl AsRef<Path>) -> Self {
        match LocalCases::load(dir.as_ref()) {
            Ok(local) => {
                self.config.local = Some(local);
                self.cases_error = None;
            }
            Err(e) => self.cases_error = Some(e.to_string()),
        }
        self
    }

    /// Writes the report bundle into `dir` after the run (`report.json`, `.md`, `.xml`, `.txt`
    /// and `MANIFEST.sha256`, as `certify --out` does; `ge-conformance verify` checks it). An
    /// earlier bundle there is replaced; a directory holding anything else is refused by a
    /// failing trial `bundle/destination`. A filtered run writes a partial-run report. The
    /// bundle is not written when trials are only listed. `GE_CONFORMANCE_OUT=dir` does the
    /// same.
    pub fn with_bundle(mut self, dir: impl AsRef<Path>) -> Self {
        self.bundle = Some(dir.as_ref().to_path_buf());
        self
    }

    fn lists(&self) -> Lists {
        Lists {
            deviations: Arc::clone(&self.deviations),
            waived: Arc::clone(&self.waived),
            baseline: self
                .baseline
                .as_ref()
                .and_then(|b| b.as_ref().ok())
                .cloned(),
            against: Arc::clone(&self.against),
        }
    }

    /// Judges each trial against the report bundle in `dir`, an earlier run's (verified as
    /// `ge-conformance verify` does; one that does not verify is a failing trial
    /// `setup/baseline`): a trial failing as it failed there is shown as ignored (`known: ...`,
    /// skipped under nextest as a waived one is), a new failure fails and says it is new, and a
    /// trial the baseline failed that passes now is listed after the summary. So a crate gates
    /// on "nothing got worse" while it works towards conformance. Trials are matched by name, as
    /// `ge-conformance compare` matches them; the run's own bundle still records every failure.
    /// `GE_CONFORMANCE_BASELINE=dir` does the same.
    pub fn baseline(mut self, dir: impl AsRef<Path>) -> Self {
        self.baseline = Some(baseline::Baseline::load(dir.as_ref()).map(Arc::new));
        self
    }

    /// Certifies against `profile` instead (its cases, its reference).
    pub fn with_profile(mut self, profile: Profile) -> Self {
        self.config.judging.profile = profile;
        self
    }

    /// Judges at `level` instead.
    pub fn with_level(mut self, level: Conformance) -> Self {
        self.config.judging.level = level;
        self
    }

    /// The capabilities the engine must cover: each one the backend does not declare is a
    /// failing trial `scope/<capability>`, and the bundle's verdict NOT CERTIFIED. Without it a
    /// capability dropped from `capabilities()` by mistake only shows as ignored trials.
    pub fn require(mut self, capabilities: impl IntoIterator<Item = ge_spec::Capability>) -> Self {
        self.config.required.extend(capabilities);
        self
    }

    /// Replaces the configuration (seed, budget, waivers).
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The trials: one per case (the local tables' too) and one per property, the waiver
    /// trials, and with [`Self::with_snapshots`] one snapshot trial per scenario of the
    /// snapshot set.
    pub fn trials(&self) -> Vec<Trial> {
        let declared = self.backend.capabilities();
        let config = Arc::new(self.config.clone());
        let mut trials = self.setup_trials(&declared);
        trials.extend(self.case_trials(&declared, &config));
        trials.extend(self.property_trials(&declared, &config));
        trials.extend(self.waiver_trials());
        trials.extend(self.snapshot_trials());
        trials.extend(self.bundle_trial());
        trials
    }

    /// The trials that fail when the run cannot judge as asked: an unusable environment, a
    /// backend that declares no capability (every other trial would be ignored and the run
    /// would pass, judging nothing), local case tables that do not load.
    fn setup_trials(
        &self,
        declared: &std::collections::BTreeSet<ge_spec::Capability>,
    ) -> Vec<Trial> {
        let mut trials: Vec<Trial> = self
            .setup_problems(declared)
            .into_iter()
            .map(|(name, kind, why)| Trial::test(name, move || Err(why.into())).with_kind(kind))
            .collect();
        for cap in self
            .config
            .required
            .iter()
            .filter(|c| !declared.contains(c))
        {
            let why = format!(
                "the suite requires `{cap}` (Suite::require) and the backend does not declare it"
            );
            trials.push(
                Trial::test(format!("scope/{cap}"), move || Err(why.into())).with_kind("scope"),
            );
        }
        trials
    }

    /// What keeps the run from judging as asked, as (trial, kind, why): an unusable
    /// environment, a backend that declares nothing, local case tables that do not load,
    /// waivers that are refused. Each is a failing trial, and a run with any writes no bundle
    /// (its report would not be the run that was asked for).
    fn setup_problems(
        &self,
        declared: &std::collections::BTreeSet<ge_spec::Capability>,
    ) -> Vec<(&'static str, &'static str, String)> {
        let mut problems = Vec::new();
        if !self.setup.is_empty() {
            let why = format!(
                "the suite's environment cannot be used (the other trials ran with the defaults \
                 of these settings):\n  {}",
                self.setup.join("\n  ")
            );
            problems.push(("setup/environment", "setup", why));
        }
        if declared.is_empty() {
            let why = "the backend declares no capability: nothing to certify".to_owned();
            problems.push(("setup/capabilities", "setup", why));
        }
        if let Some(why) = &self.cases_error {
            problems.push(("cases/local", "cases", why.clone()));
        }
        if let Some(Err(why)) = &self.baseline {
            problems.push(("setup/baseline", "setup", why.clone()));
        }
        if let Err(e) = certify::check_waivers(&self.config) {
            problems.push(("setup/waivers", "setup", e.to_string()));
        }
        problems
    }

    /// One trial per case that runs under the profile, ignored for the capabilities the
    /// backend does not declare.
    fn case_trials(
        &self,
        declared: &std::collections::BTreeSet<ge_spec::Capability>,
        config: &Arc<Config>,
    ) -> Vec<Trial> {
        let profile = self.config.judging.profile;
        let mut trials = Vec::new();
        for (i, case) in self.config.spec().cases_in(profile).enumerate() {
            let (backend, config, lists, results) = (
                Arc::clone(&self.backend),
                Arc::clone(config),
                self.lists(),
                Arc::clone(&self.results),
            );
            // The trial finds its case again when it runs rather than keeping a copy: the cases
            // at the caps hold 100,000 events or 10,000 constants, and under nextest every
            // process builds every trial to run one.
            trials.push(
                Trial::ignorable_test(case.full_name(), move || {
                    let started = Instant::now();
                    let Some(case) = config.spec().cases_in(profile).nth(i) else {
                        return Err("the case is no longer in the tables".into());
                    };
                    let r = certify::run_case_trial(backend.as_ref(), case, &config);
                    verdict(finish(r, &config, started, &results), &config, &lists)
                })
                .with_kind(case.capability().as_str())
                .with_ignored_flag(!declared.contains(&case.capability())),
            );
        }
        trials
    }

    /// One trial per capability's property, ignored for those the backend does not declare.
    fn property_trials(
        &self,
        declared: &std::collections::BTreeSet<ge_spec::Capability>,
        config: &Arc<Config>,
    ) -> Vec<Trial> {
        let mut trials = Vec::new();
        for cap in ge_spec::Capability::ALL {
            let (backend, config, lists, results) = (
                Arc::clone(&self.backend),
                Arc::clone(config),
                self.lists(),
                Arc::clone(&self.results),
            );
            trials.push(
                Trial::ignorable_test(format!("property/{cap}"), move || {
                    let started = Instant::now();
                    let r = certify::run_property(backend.as_ref(), cap, &config);
                    verdict(finish(r, &config, started, &results), &config, &lists)
                })
                .with_kind("property")
                .with_ignored_flag(!declared.contains(&cap)),
            );
        }
        trials
    }

    /// With `--ignored`, marks ignored the case and property trials a waiver may waive, among
    /// those the filters select (a waiver names them; once one names a clause, every declared
    /// trial, since which clauses a trial breaks is known only by running it).
    ///
    /// Listing (`--list --ignored`, nextest's second listing call), it marks only those whose
    /// failures are all waived, judged ahead in a child process ([`ahead::waived`]): libtest
    /// shows them as ignored once run, and nextest, which shows a trial it runs only as passed
    /// or failed, skips them. Running (`--ignored`), it marks every one of them, so each runs
    /// and shows what it is: a run that judged otherwise than its listing still shows the
    /// trial's verdict, never drops it.
    fn mark_waived(&self, args: &Arguments, trials: Vec<Trial>) -> Vec<Trial> {
        let expectations = &self.config.expectations;
        let baseline = self.lists().baseline;
        if !args.ignored || (expectations.waive.is_empty() && baseline.is_none()) {
            return trials;
        }
        let spec = self.config.spec();
        let declared = self.backend.capabilities();
        let judged: std::collections::BTreeSet<String> =
            certify::trial_names(spec, self.config.judging.profile)
                .into_iter()
                .filter(|(_, capability)| declared.contains(capability))
                .map(|(name, _)| name)
                .collect();
        let clause_waiver = expectations
            .waive
            .iter()
            .any(|w| spec.clauses().any(|c| w.matches(&c.id)));
        let touched: Vec<String> = trials
            .iter()
            .filter(|t| judged.contains(t.name()) && args.filters_select(t))
            .filter(|t| {
                clause_waiver
                    || expectations.naming_trial(t.name()).next().is_some()
                    || baseline.as_ref().is_some_and(|b| b.failed(t.name()))
            })
            .map(|t| t.name().to_owned())
            .collect();
        let marked: std::collections::BTreeMap<String, String> = if args.list {
            ahead::waived(&touched, self.list_limit)
        } else {
            let why = "a waiver may waive it, or it may fail as in the baseline";
            touched.into_iter().map(|n| (n, why.to_owned())).collect()
        };
        trials
            .into_iter()
            .map(|t| match marked.get(t.name()) {
                Some(why) => t.with_ignored_reason(why.clone()),
                None => t,
            })
            .collect()
    }

    /// A failing trial per expired waiver, an ignored one per stale waiver.
    fn waiver_trials(&self) -> Vec<Trial> {
        let expectations = &self.config.expectations;
        let mut trials = Vec::new();
        for w in expectations.expired(self.config.today) {
            let why = format!(
                "expired waiver: {} ({}, expired {}): renew it or remove it",
                w.pattern, w.tracker, w.expires
            );
            trials.push(
                Trial::test(format!("waiver/expired/{}", w.pattern), move || {
                    Err(why.into())
                })
                .with_kind("waiver"),
            );
        }
        for w in certify::stale_waivers(
            expectations,
            self.config.spec(),
            self.config.judging.profile,
        ) {
            const STALE: &str = "this waiver matches no trial of the suite: remove it";
            trials.push(
                Trial::ignorable_test(format!("waiver/stale/{}", w.pattern), || {
                    ignored_at_run_time(STALE, "")
                })
                .with_kind("waiver")
                .with_ignored_reason(STALE),
            );
        }
        trials
    }

    /// `bundle/destination`, failing, when a bundle is asked for and cannot be written: under
    /// nextest (a process per trial) or where the directory is refused.
    fn bundle_trial(&self) -> Option<Trial> {
        let dir = self.bundle.as_ref()?;
        let refused = if under_nextest() {
            Some(
                "nextest runs each trial in a process of its own, so the bundle would hold \
                 one trial: write it with `cargo test` or `ge-conformance certify --out`"
                    .to_owned(),
            )
        } else {
            crate::bundle::check_destination(dir, true)
                .err()
                .map(|e| e.to_string())
        };
        let why = format!("the report bundle cannot be written: {}", refused?);
        Some(Trial::test("bundle/destination", move || Err(why.into())).with_kind("bundle"))
    }

    /// The snapshot trials alone (none without [`Self::with_snapshots`]): one per scenario of
    /// the snapshot set, ignored for the capabilities the backend does not declare, and
    /// `snapshot/unreferenced`, which fails when the directory holds a snapshot of no scenario
    /// (a case renamed or removed). [`Self::trials`] includes them; a test that records a
    /// backend's answers and judges nothing runs these only.
    pub fn snapshot_trials(&self) -> Vec<Trial> {
        let Some(snapshots) = &self.snapshots else {
            return Vec::new();
        };
        let declared = self.backend.capabilities();
        let mut trials = Vec::new();
        let judging = self.config.judging;
        for entry in snapshot::set(self.config.spec(), judging.profile) {
            let (backend, snapshots) = (Arc::clone(&self.backend), snapshots.clone());
            let capability = entry.capability();
            trials.push(
                Trial::ignorable_test(format!("snapshot/{}", entry.name), move || {
                    snapshots
                        .check(&judging, backend.as_ref(), &entry)
                        .map(|()| Completion::Completed)
                        .map_err(Failed::from)
                })
                .with_kind("snapshot")
                .with_ignored_flag(!declared.contains(&capability)),
            );
        }
        let (snapshots, config) = (snapshots.clone(), Arc::new(self.config.clone()));
        let tables_broken = self.cases_error.is_some();
        trials.push(
            Trial::test("snapshot/unreferenced", move || {
                if tables_broken {
                    // The vendor's tables did not load (`cases/local` says why): their
                    // snapshots look unreferenced, but deleting them would lose valid ones.
                    return Err("not checked: the vendor's case tables did not load (see cases/local); \
                         their snapshots are kept as they are"
                        .into());
                }
                let stray = snapshot::unreferenced(snapshots.dir(), config.spec());
                if stray.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "snapshots of no scenario of the set in {} (a case renamed or removed): delete {}",
                        snapshots.dir().display(),
                        stray.join(", ")
                    )
                    .into())
                }
            })
            .with_kind("snapshot"),
        );
        trials
    }

    /// The report of the trials that ran: the undeclared capabilities' trials that libtest
    /// ignored count as not supported, as under `certify`; any other trial that did not run
    /// (a filter, `--skip`) makes it a partial run.
    fn report(
        &self,
        args: &Arguments,
        started: std::time::SystemTime,
        wall: std::time::Duration,
    ) -> crate::report::Report {
        let declared = self.backend.capabilities();
        let mut ran = self.results.lock().map(|r| r.clone()).unwrap_or_default();
        let profile = self.config.judging.profile;
        let mut trials = Vec::new();
        let mut partial = false;
        for (name, capability) in certify::trial_names(self.config.spec(), profile) {
            if let Some(i) = ran.iter().position(|r| r.name == name) {
                trials.push(ran.swap_remove(i));
            } else if !declared.contains(&capability) {
                let (kind, clauses) = match name.strip_prefix("property/") {
                    Some(_) => (
                        TrialKind::Property,
                        certify::property_clauses(profile, capability),
                    ),
                    None => (
                        TrialKind::Case,
                        self.config
                            .spec()
                            .cases()
                            .iter()
                            .find(|c| c.full_name() == name)
                            .map(|c| c.case.clauses.clone())
                            .unwrap_or_default(),
                    ),
                };
                let mut r = TrialResult::new(name, kind, capability, clauses);
                r.outcome = Outcome::NotSupported;
                r.message = Some(format!("capability `{capability}` is not declared"));
                trials.push(r);
            } else {
                partial = true;
            }
        }
        let mut cfg = self.config.clone();
        if partial {
            cfg.filter = Some(if args.filters.is_empty() {
                "(libtest --skip or --ignored)".to_owned()
            } else {
                args.filters.join(" ")
            });
        }
        certify::report(self.backend.as_ref(), &cfg, trials, started, wall)
    }

    /// Parses the libtest arguments, runs the trials and exits with libtest's status.
    pub fn run_and_exit(self) -> ! {
        let args = Arguments::from_args();
        let started = std::time::SystemTime::now();
        let clock = Instant::now();
        // Snapshot trials say what changed in their own failure, not through insta's printing;
        // a first run prints a line per new snapshot, not its contents.
        if self.snapshots.is_some() {
            snapshot::quiet_insta();
        }
        let first_snapshots = self.snapshots.as_ref().filter(|s| s.adopting());
        // A child judging ahead for a listing: its run is not the run, so it writes no bundle.
        let judging_ahead = ahead::in_child();
        let bundle = self.bundle.clone().filter(|_| !judging_ahead);
        let trials = self.mark_waived(&args, self.trials());
        // An engine that exits while the trials run (its own `exit(0)`, say) fails the run
        // instead of ending it with the status it chose.
        let exits = ge_dylib::exit_fails_while(
            "ge-conformance: the process was asked to exit (by the engine?) before the trials \
             finished: the run fails (status 101)",
        );
        let conclusion = run(&args, trials);
        drop(exits);
        if let Some(s) = first_snapshots {
            s.summarise_first_run();
        }
        let wall = clock.elapsed();
        self.print_lists();
        // Under nextest each process runs one trial: `bundle/destination` fails instead.
        if let Some(dir) = bundle.as_ref().filter(|_| !args.list && !under_nextest()) {
            let problems = self.setup_problems(&self.backend.capabilities());
            if !problems.is_empty() {
                // The run did not judge as asked: its report would not say what was asked (the
                // set-up trials have failed already). A bundle an earlier run left there goes,
                // so that no gate reads it as this run's.
                let names: Vec<&str> = problems.iter().map(|(name, ..)| *name).collect();
                let removed = match crate::bundle::discard(dir) {
                    Ok(true) => format!("; the earlier bundle in {} was removed", dir.display()),
                    _ => String::new(),
                };
                eprintln!(
                    "the report bundle was not written: the run's set-up failed ({}){removed}",
                    names.join(", ")
                );
                std::process::exit(101);
            }
            let mut report = self.report(&args, started, wall);
            // As under `certify --out`: each failure drawn, its scenario asked again.
            crate::draw::attach_pictures(&mut report, &*self.backend);
            match crate::bundle::write(&report, dir, true) {
                Ok(()) => println!(
                    "report bundle written to {}: {}",
                    dir.display(),
                    report.verdict_line()
                ),
                Err(e) => {
                    // Already a failing trial when the destination was refused up front.
                    eprintln!("the report bundle was not written: {e}");
                    std::process::exit(101);
                }
            }
        }
        // The run's private sandbox root goes with it (its sandboxes are gone by now).
        crate::sandbox::remove_root();
        conclusion.exit()
    }
}

impl<B: Backend + Send + Sync + 'static> Suite<B> {
    /// Lists after the summary the waived trials, the baseline's known failures and fixes, and
    /// the deviations.
    fn print_lists(&self) {
        let mut listed = self.waived.lock().map(|w| w.clone()).unwrap_or_default();
        if !listed.is_empty() {
            listed.sort();
            println!("{} trial(s) failed as waived:", listed.len());
            for w in listed {
                println!("  waived {w}");
            }
        }
        self.print_against_baseline();
        let mut listed = self
            .deviations
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default();
        if !listed.is_empty() {
            listed.sort();
            println!(
                "{} trial(s) departed from the suite's own choices (reference-defined clauses), \
                 not judged at level {}; GE_CONFORMANCE_LEVEL=strict fails them:",
                listed.len(),
                self.config.judging.level
            );
            for d in listed {
                println!("  deviation {d}");
            }
        }
    }

    /// Lists after the summary the trials shown as known failures of the baseline, and those
    /// the baseline failed that pass now.
    fn print_against_baseline(&self) {
        let Some(Ok(baseline)) = &self.baseline else {
            return;
        };
        let Ok(mut against) = self.against.lock() else {
            return;
        };
        let dir = baseline.dir().display();
        against.known.sort();
        against.fixed.sort();
        if !against.known.is_empty() {
            println!(
                "{} trial(s) failed as in the baseline {dir}:",
                against.known.len()
            );
            for name in &against.known {
                println!("  known {name}");
            }
        }
        if !against.fixed.is_empty() {
            println!(
                "{} trial(s) the baseline {dir} failed pass now: make a new baseline \
                 (GE_CONFORMANCE_OUT) to keep them passing:",
                against.fixed.len()
            );
            for name in &against.fixed {
                println!("  fixed {name}");
            }
        }
    }
}

/// True in a process that nextest started (it sets `NEXTEST_RUN_ID`, and `NEXTEST=1`): one
/// trial per process, so no run-wide report can be made there.
fn under_nextest() -> bool {
    std::env::var_os("NEXTEST_RUN_ID").is_some() || std::env::var("NEXTEST").is_ok_and(|v| v == "1")
}

/// Applies the waivers to a trial's result, records its wall time and keeps a copy for the
/// report bundle.
fn finish(
    mut r: TrialResult,
    cfg: &Config,
    started: Instant,
    results: &Mutex<Vec<TrialResult>>,
) -> TrialResult {
    certify::apply_waivers(&mut r, &cfg.expectations);
    r.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    if r.reproducer.is_some() {
        r.reproducer = Some(reproducer(&r, cfg));
    }
    if let Ok(mut all) = results.lock() {
        all.push(r.clone());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::target_of;

    #[test]
    fn the_test_target_is_read_from_cargos_binary_name() {
        assert_eq!(
            target_of("conformance-0123456789abcdef").as_deref(),
            Some("conformance")
        );
        assert_eq!(
            target_of("my-engine-tests-0123456789abcdef").as_deref(),
            Some("my-engine-tests")
        );
        assert_eq!(target_of("conformance"), None);
        assert_eq!(target_of("conformance-0123"), None);
        assert_eq!(target_of("-0123456789abcdef"), None);
    }
}
