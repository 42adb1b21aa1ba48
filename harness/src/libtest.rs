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

use std::sync::{Arc, Mutex};

use ge_spec::{Backend, Conformance, Profile, Spec};
use libtest_mimic::{Arguments, Failed, Trial};

use crate::certify::{self, Config};
use crate::expectations::Expectations;
use crate::report::{Outcome, TrialResult};

/// The suite, ready to run against one backend.
#[derive(Debug)]
pub struct Suite<B> {
    backend: Arc<B>,
    config: Config,
    deviations: Arc<Mutex<Vec<String>>>,
}

fn render(r: &TrialResult) -> String {
    let mut out = r.message.clone().unwrap_or_default();
    if let Some(s) = &r.scenario {
        out.push_str(&format!("\nscenario: {s}"));
        // The command line cannot load a backend linked into the vendor's test binary: rerun the
        // trial here, and ask the reference what it answers for the same scenario.
        out.push_str(&format!(
            "\nrerun: cargo test -- --exact {}",
            certify::shell_quote(&r.name)
        ));
        out.push_str(&format!(
            "\nthe reference's answer: echo {} | ge-conformance eval",
            certify::shell_quote(&s.to_string())
        ));
    }
    out
}

fn verdict(r: TrialResult, deviations: &Mutex<Vec<String>>) -> Result<(), Failed> {
    match r.outcome {
        Outcome::Pass | Outcome::Waived => Ok(()),
        Outcome::Deviation => {
            if let Ok(mut d) = deviations.lock() {
                d.push(format!("{}: {}", r.name, r.deviations.join(", ")));
            }
            Ok(())
        }
        // Such trials are marked ignored; run anyway (`--include-ignored`), a skip must still
        // never show as a pass.
        Outcome::NotSupported => {
            Err(format!("not supported: {}", r.message.unwrap_or_default()).into())
        }
        Outcome::Fail | Outcome::UnexpectedPass => Err(render(&r).into()),
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
            let (backend, config, case_ref, deviations) = (
                Arc::clone(&self.backend),
                Arc::clone(&config),
                case.clone(),
                Arc::clone(&self.deviations),
            );
            let waived = |r: TrialResult, cfg: &Config| apply(r, cfg);
            trials.push(
                Trial::test(case.full_name(), move || {
                    verdict(
                        waived(
                            certify::run_case_trial(backend.as_ref(), &case_ref, &config),
                            &config,
                        ),
                        &deviations,
                    )
                })
                .with_kind(case.capability().as_str())
                .with_ignored_flag(!declared.contains(&case.capability())),
            );
        }
        for cap in ge_spec::Capability::ALL {
            let (backend, config, deviations) = (
                Arc::clone(&self.backend),
                Arc::clone(&config),
                Arc::clone(&self.deviations),
            );
            trials.push(
                Trial::test(format!("property/{cap}"), move || {
                    verdict(
                        apply(
                            certify::run_property(backend.as_ref(), cap, &config),
                            &config,
                        ),
                        &deviations,
                    )
                })
                .with_kind("property")
                .with_ignored_flag(!declared.contains(&cap)),
            );
        }
        trials
    }

    /// Parses the libtest arguments, runs the trials and exits with libtest's status.
    pub fn run_and_exit(self) -> ! {
        let args = Arguments::from_args();
        let expired = self.config.expectations.expired(self.config.today);
        if !expired.is_empty() {
            for w in expired {
                eprintln!(
                    "expired waiver: {} ({}, expired {})",
                    w.pattern, w.tracker, w.expires
                );
            }
            std::process::exit(101);
        }
        let level = self.config.judging.level;
        let deviations = Arc::clone(&self.deviations);
        let conclusion = libtest_mimic::run(&args, self.trials());
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
