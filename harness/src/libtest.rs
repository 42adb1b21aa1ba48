//! The vendor entry point: turns the suite into libtest-mimic trials (`<table>/<case>` and
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
//! Trials of capabilities the backend does not declare are marked ignored (never passed).
//! `GE_CONFORMANCE_EXPECTATIONS` names a waiver file, `GE_CONFORMANCE_SEED` and
//! `GE_CONFORMANCE_CASES` set the seed and the scenarios per property,
//! `GE_CONFORMANCE_PROFILE` (`documented` or `upstream`) the behaviour profile and
//! `GE_CONFORMANCE_LEVEL` (`documented` or `strict`) the conformance level.
//!
//! At level `documented` (the default) a trial that only departs from the suite's own choices
//! passes; the deviations are listed after libtest's summary. At level `strict` they fail.
//!
//! Waivers behave as under `certify`: a waived failure is listed after the summary;
//! a trial an exact waiver names that passes fails as an unexpected pass (a glob waiver only
//! accepts the failures among the trials it covers); an expired waiver is a failing trial
//! `waiver/expired/<pattern>` (the waived trials still run); a waiver that matches no trial is
//! a trial `waiver/stale/<pattern>` that shows as ignored with that reason. A waived failure
//! shows as ignored too, with the waiver's reason: it is not a pass.

use std::sync::{Arc, Mutex};

use ge_spec::{Backend, Conformance, Profile, Spec};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::certify::{self, Config};
use crate::expectations::Expectations;
use crate::report::{Outcome, TrialResult};

/// The suite, ready to run against one backend.
#[derive(Debug)]
pub struct Suite<B> {
    backend: Arc<B>,
    config: Config,
    deviations: Arc<Mutex<Vec<String>>>,
    waived: Arc<Mutex<Vec<String>>>,
}

fn render(r: &TrialResult, cfg: &Config) -> String {
    let mut out = r.message.clone().unwrap_or_default();
    if let Some(s) = &r.scenario {
        out.push_str(&format!("\nscenario: {s}"));
        // The command line cannot load a backend linked into the vendor's test binary: rerun the
        // trial here, and ask the reference what it answers for the same scenario.
        // The settings that change which scenarios a property draws travel with the line.
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
        out.push_str(&format!(
            "\nrerun: {env}cargo test -- --exact {}",
            certify::shell_quote(&r.name)
        ));
        out.push_str(&format!(
            "\nthe reference's answer: echo {} | ge-conformance eval",
            certify::shell_quote(&s.to_string())
        ));
    }
    out
}

/// Where a trial's outcome goes besides pass or fail: the lists printed after the summary.
#[derive(Debug, Clone, Default)]
struct Lists {
    deviations: Arc<Mutex<Vec<String>>>,
    waived: Arc<Mutex<Vec<String>>>,
}

/// A trial's outcome as libtest shows it: a waived failure is neither a pass nor a failure, so
/// it shows as ignored with the waiver's reason (and is listed after the summary).
fn verdict(r: TrialResult, cfg: &Config, lists: &Lists) -> Result<Completion, Failed> {
    let deviations = &lists.deviations;
    match r.outcome {
        Outcome::Pass => Ok(Completion::Completed),
        Outcome::Waived => {
            let why = r.message.as_deref().unwrap_or_default();
            let first = why.lines().next().unwrap_or_default().to_owned();
            if let Ok(mut w) = lists.waived.lock() {
                w.push(format!("{}: {first}", r.name));
            }
            Ok(Completion::ignored_with(first))
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

impl<B: Backend + Send + Sync + 'static> Suite<B> {
    /// The suite for `backend`, configured from the environment (see the module docs).
    ///
    /// # Panics
    /// When `GE_CONFORMANCE_EXPECTATIONS` names a file that cannot be read or parsed, or the seed
    /// or case count is not a number, or the profile names none: a test binary has no better way
    /// to refuse bad set-up.
    pub fn new(backend: B) -> Self {
        let mut config = Config {
            backend_arg: backend.name().to_owned(),
            ..Config::default()
        };
        if let Ok(path) = std::env::var("GE_CONFORMANCE_EXPECTATIONS") {
            let text = crate::input::read_text(path.as_ref(), crate::input::MAX_EXPECTATIONS)
                .unwrap_or_else(|e| panic!("GE_CONFORMANCE_EXPECTATIONS={path}: {e}"));
            config.expectations =
                Expectations::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        if let Ok(seed) = std::env::var("GE_CONFORMANCE_SEED") {
            config.seed = seed
                .parse()
                .unwrap_or_else(|_| panic!("GE_CONFORMANCE_SEED={seed} is not a number"));
        }
        if let Ok(cases) = std::env::var("GE_CONFORMANCE_CASES") {
            config.cases = cases
                .parse()
                .unwrap_or_else(|_| panic!("GE_CONFORMANCE_CASES={cases} is not a number"));
        }
        if let Ok(profile) = std::env::var("GE_CONFORMANCE_PROFILE") {
            config.judging.profile = profile
                .parse()
                .unwrap_or_else(|e| panic!("GE_CONFORMANCE_PROFILE: {e}"));
        }
        if let Ok(level) = std::env::var("GE_CONFORMANCE_LEVEL") {
            config.judging.level = level
                .parse()
                .unwrap_or_else(|e| panic!("GE_CONFORMANCE_LEVEL: {e}"));
        }
        Suite {
            backend: Arc::new(backend),
            config,
            deviations: Arc::new(Mutex::new(Vec::new())),
            waived: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn lists(&self) -> Lists {
        Lists {
            deviations: Arc::clone(&self.deviations),
            waived: Arc::clone(&self.waived),
        }
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

    /// Replaces the configuration (seed, budget, waivers).
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The trials, one per case and one per property.
    pub fn trials(&self) -> Vec<Trial> {
        let declared = self.backend.capabilities();
        let config = Arc::new(self.config.clone());
        let mut trials = Vec::new();
        for case in Spec::embedded().cases_in(self.config.judging.profile) {
            let (backend, config, case_ref, lists) = (
                Arc::clone(&self.backend),
                Arc::clone(&config),
                case.clone(),
                self.lists(),
            );
            trials.push(
                Trial::ignorable_test(case.full_name(), move || {
                    verdict(
                        apply(
                            certify::run_case_trial(backend.as_ref(), &case_ref, &config),
                            &config,
                        ),
                        &config,
                        &lists,
                    )
                })
                .with_kind(case.capability().as_str())
                .with_ignored_flag(!declared.contains(&case.capability())),
            );
        }
        for cap in ge_spec::Capability::ALL {
            let (backend, config, lists) =
                (Arc::clone(&self.backend), Arc::clone(&config), self.lists());
            trials.push(
                Trial::ignorable_test(format!("property/{cap}"), move || {
                    verdict(
                        apply(
                            certify::run_property(backend.as_ref(), cap, &config),
                            &config,
                        ),
                        &config,
                        &lists,
                    )
                })
                .with_kind("property")
                .with_ignored_flag(!declared.contains(&cap)),
            );
        }
        let expectations = &self.config.expectations;
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
        for w in certify::stale_waivers(expectations, self.config.judging.profile) {
            trials.push(
                Trial::ignorable_test(format!("waiver/stale/{}", w.pattern), || {
                    Ok(Completion::ignored_with(
                        "this waiver matches no trial of the suite: remove it",
                    ))
                })
                .with_kind("waiver"),
            );
        }
        trials
    }

    /// Parses the libtest arguments, runs the trials and exits with libtest's status.
    pub fn run_and_exit(self) -> ! {
        let args = Arguments::from_args();
        let level = self.config.judging.level;
        let deviations = Arc::clone(&self.deviations);
        let waived = Arc::clone(&self.waived);
        let conclusion = libtest_mimic::run(&args, self.trials());
        let mut listed = waived.lock().map(|w| w.clone()).unwrap_or_default();
        if !listed.is_empty() {
            listed.sort();
            println!("{} trial(s) failed as waived:", listed.len());
            for w in listed {
                println!("  waived {w}");
            }
        }
        let mut listed = deviations.lock().map(|d| d.clone()).unwrap_or_default();
        if !listed.is_empty() {
            listed.sort();
            println!(
                "{} trial(s) departed from the suite's own choices (reference-defined clauses), \
                 not judged at level {level}; GE_CONFORMANCE_LEVEL=strict fails them:",
                listed.len()
            );
            for d in listed {
                println!("  deviation {d}");
            }
        }
        conclusion.exit()
    }
}

fn apply(mut r: TrialResult, cfg: &Config) -> TrialResult {
    certify::apply_waivers(&mut r, &cfg.expectations);
    r
}
