//! Certification: runs every case of the tables and every property (generated scenarios compared
//! with the reference) against a backend, applies the expectations, and builds the report.

use std::path::Path;

use ge_reference::Reference;
use ge_spec::{Backend, Capability, Observation, Profile, Scenario, Spec};
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestError, TestRng, TestRunner};

use crate::expectations::{Date, Expectations};
use crate::oracle;
use crate::pattern;
use crate::report::{Meta, Outcome, Report, TrialKind, TrialResult};
use crate::runner::{self, Verdict};

/// The default number of generated scenarios per property.
pub const DEFAULT_CASES: u32 = 256;

/// How a certification run is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Seed of the generated scenarios.
    pub seed: u64,
    /// Generated scenarios per property.
    pub cases: u32,
    /// Waivers.
    pub expectations: Expectations,
    /// The behaviour profile: which cases run and which reference the properties compare with.
    pub profile: Profile,
    /// How the backend was named on the command line, for reproducers (`reference`, `exec:...`).
    pub backend_arg: String,
    /// Only trials whose name contains this run (all when `None`).
    pub filter: Option<String>,
    /// The date expiry is judged against.
    pub today: Date,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 0,
            cases: DEFAULT_CASES,
            expectations: Expectations::default(),
            profile: Profile::Documented,
            backend_arg: "reference".to_owned(),
            filter: None,
            today: Date::today(),
        }
    }
}

/// Quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@,".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A command line that shows what `backend_arg` answers for `scenario` and judges it against
/// the reference.
pub fn reproducer_for_scenario(backend_arg: &str, scenario: &Scenario) -> String {
    let json = serde_json::to_string(scenario).unwrap_or_default();
    format!(
        "echo {} | ge-conformance eval --judge --backend {}",
        shell_quote(&json),
        shell_quote(backend_arg)
    )
}

/// A command line that reruns one table case against `backend_arg` and judges it.
pub fn reproducer_for_case(backend_arg: &str, case: &str) -> String {
    format!(
        "ge-conformance eval --backend {} --case {}",
        shell_quote(backend_arg),
        shell_quote(case)
    )
}

/// The clauses a property over `capability` covers: every clause some case of that capability
/// checks (the property compares the backend with the reference on the same ground).
pub fn property_clauses(capability: Capability) -> Vec<String> {
    property_clauses_in(Profile::Documented, capability)
}

/// [`property_clauses`] over the cases that run under `profile`.
pub fn property_clauses_in(profile: Profile, capability: Capability) -> Vec<String> {
    let mut clauses: Vec<String> = Spec::embedded()
        .cases_in(profile)
        .filter(|c| c.capability() == capability)
        .flat_map(|c| c.case.clauses.iter().cloned())
        .collect();
    clauses.sort();
    clauses.dedup();
    clauses
}

/// A difference between a backend's answer and what the contract allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Clauses implicated (may be empty when no single clause is to blame).
    pub clauses: Vec<String>,
    /// What differs.
    pub message: String,
}

fn diag_clauses(o: &Observation) -> Vec<String> {
    let v = serde_json::to_value(o).unwrap_or_default();
    let mut out = Vec::new();
    for list in ["errors", "warnings"] {
        if let Some(items) = v.get(list).and_then(|x| x.as_array()) {
            for d in items {
                if let Some(c) = d.get("clause").and_then(|c| c.as_str()) {
                    out.push(format!("{list}:{c}"));
                }
            }
        }
    }
    out.sort();
    out
}

/// Compares `backend` with the reference on one scenario: exact match where the answer is
/// unique (options, transfer, weights), the oracle plus the diagnostics where many answers are
/// right (memory, session). Weights run in two fresh sandboxes, and the backend's is inspected.
pub fn compare(backend: &dyn Backend, scenario: &Scenario) -> Result<(), Difference> {
    compare_in(Profile::Documented, backend, scenario)
}

/// [`compare`] under `profile`: against the reference of that profile, with its oracles.
pub fn compare_in(
    profile: Profile,
    backend: &dyn Backend,
    scenario: &Scenario,
) -> Result<(), Difference> {
    let fail = |clauses: Vec<String>, message: String| Err(Difference { clauses, message });
    let (ours, theirs) = match (runner::sandbox(scenario), runner::sandbox(scenario)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return fail(Vec::new(), "cannot create sandbox directories".into()),
    };
    let expected = match runner::ask(
        &Reference::new(profile),
        scenario,
        runner::sandbox_path(&ours),
    ) {
        Ok(Ok(mut o)) => {
            o.canonicalize();
            o
        }
        // The reference implements every capability and never panics; if it ever does, the
        // scenario is outside what the suite can judge.
        _ => return Ok(()),
    };
    let mut actual = match runner::ask(backend, scenario, runner::sandbox_path(&theirs)) {
        Err(panic) => return fail(Vec::new(), panic),
        Ok(Err(ns)) => {
            return fail(
                Vec::new(),
                format!("declared capability answered not supported: {}", ns.reason),
            )
        }
        Ok(Ok(o)) => o,
    };
    actual.canonicalize();
    let mut violations = oracle::judge_in(profile, scenario, &actual);
    if let (Scenario::Weights(s), Observation::Weights(o)) = (scenario, &actual) {
        violations.extend(oracle::weights::check_sandbox_in(
            profile,
            s,
            o,
            runner::sandbox_path(&theirs),
        ));
    }
    if let Some(v) = violations.first() {
        return fail(
            violations.iter().map(|v| v.clause.clone()).collect(),
            format!("{} violation(s), first: {v}", violations.len()),
        );
    }
    let exact = matches!(
        scenario.capability(),
        Capability::Options | Capability::Transfer | Capability::Weights
    );
    if exact && actual != expected {
        let (e, a) = (
            serde_json::to_value(&expected).unwrap_or_default(),
            serde_json::to_value(&actual).unwrap_or_default(),
        );
        let where_ = pattern::check(&e, &a)
            .err()
            .or_else(|| pattern::check(&a, &e).err());
        let (de, da) = (diag_clauses(&expected), diag_clauses(&actual));
        let mut clauses: Vec<String> = de
            .iter()
            .filter(|c| !da.contains(c))
            .chain(da.iter().filter(|c| !de.contains(c)))
            .map(|c| c.split(':').nth(1).unwrap_or_default().to_owned())
            .collect();
        clauses.sort();
        clauses.dedup();
        return fail(
            clauses,
            format!(
                "differs from the reference {}",
                where_.map_or_else(|| "somewhere".to_owned(), |m| m.to_string())
            ),
        );
    }
    if !exact && diag_clauses(&expected) != diag_clauses(&actual) {
        return fail(
            Vec::new(),
            format!(
                "diagnostics differ from the reference: expected {:?}, found {:?}",
                diag_clauses(&expected),
                diag_clauses(&actual)
            ),
        );
    }
    Ok(())
}

/// The scenario generator of a capability.
pub fn generator(capability: Capability) -> Option<BoxedStrategy<Scenario>> {
    crate::gen::scenarios(capability)
}

fn seed_rng(seed: u64, capability: Capability) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8] = capability as u8;
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Runs the property of `capability`: `cases` generated scenarios, the backend compared with
/// the reference on each; a failure is shrunk to a minimal scenario.
pub fn run_property(backend: &dyn Backend, capability: Capability, cfg: &Config) -> TrialResult {
    let name = format!("property/{capability}");
    let mut result = TrialResult {
        name,
        kind: TrialKind::Property,
        capability,
        clauses: property_clauses_in(cfg.profile, capability),
        outcome: Outcome::Pass,
        message: None,
        broken: Vec::new(),
        scenario: None,
        reproducer: None,
        scenarios: cfg.cases,
    };
    let Some(strategy) = generator(capability) else {
        result.outcome = Outcome::NotSupported;
        result.message = Some("no generator for this capability".into());
        result.scenarios = 0;
        return result;
    };
    let pt = PtConfig {
        cases: cfg.cases,
        failure_persistence: None,
        max_shrink_iters: 2048,
        // A backend that hangs until the protocol timeout on many scenarios must not make
        // shrinking last for hours.
        max_shrink_time: 60_000,
        ..PtConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(pt, seed_rng(cfg.seed, capability));
    let outcome = runner.run(&strategy, |scenario| {
        compare_in(cfg.profile, backend, &scenario)
            .map_err(|d| proptest::test_runner::TestCaseError::fail(d.message))
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(_, minimal)) => {
            let diff = compare_in(cfg.profile, backend, &minimal).err();
            result.outcome = Outcome::Fail;
            result.broken = diff.as_ref().map(|d| d.clauses.clone()).unwrap_or_default();
            result.message = Some(diff.map_or_else(
                || "failed (not reproducible after shrinking)".to_owned(),
                |d| d.message,
            ));
            result.scenario = serde_json::to_value(&minimal).ok();
            result.reproducer = Some(reproducer_for_scenario(&cfg.backend_arg, &minimal));
        }
        Err(TestError::Abort(why)) => {
            result.outcome = Outcome::Fail;
            result.message = Some(format!("property aborted: {why}"));
        }
    }
    result
}

/// Runs one table case and turns its verdict into a trial result.
pub fn run_case_trial(
    backend: &dyn Backend,
    case: &ge_spec::TableCase,
    cfg: &Config,
) -> TrialResult {
    let verdict = runner::run_case_in(cfg.profile, backend, case);
    let mut result = TrialResult {
        name: case.full_name(),
        kind: TrialKind::Case,
        capability: case.capability(),
        clauses: case.case.clauses.clone(),
        outcome: Outcome::Pass,
        message: None,
        broken: Vec::new(),
        scenario: None,
        reproducer: None,
        scenarios: 0,
    };
    match &verdict {
        Verdict::Pass => {}
        Verdict::NotSupported(why) => {
            result.outcome = Outcome::NotSupported;
            result.message = Some(why.clone());
        }
        Verdict::Fail(problems) => {
            result.outcome = Outcome::Fail;
            result.broken = verdict.broken_clauses();
            result.message = Some(
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            result.scenario = serde_json::to_value(&case.case.scenario).ok();
            result.reproducer = Some(reproducer_for_case(&cfg.backend_arg, &case.full_name()));
        }
    }
    result
}

/// Applies the waivers to a result; returns the indexes of the waivers that matched.
pub fn apply_waivers(result: &mut TrialResult, expectations: &Expectations) -> Vec<usize> {
    let matched: Vec<(usize, String)> = expectations
        .matching(&result.name, &result.clauses)
        .map(|(i, w)| {
            (
                i,
                format!("{} ({}, expires {})", w.reason, w.tracker, w.expires),
            )
        })
        .collect();
    if let Some((_, why)) = matched.first() {
        match result.outcome {
            Outcome::Fail => {
                result.outcome = Outcome::Waived;
                result.message = Some(format!(
                    "waived: {why}\n{}",
                    result.message.clone().unwrap_or_default()
                ));
            }
            Outcome::Pass => {
                result.outcome = Outcome::UnexpectedPass;
                result.message = Some(format!(
                    "passed, but is waived as failing: {why}; remove the waiver"
                ));
            }
            _ => {}
        }
    }
    matched.into_iter().map(|(i, _)| i).collect()
}

/// Every trial of the suite under the documented profile, by name, in run order: the cases,
/// then one property per capability.
pub fn trial_names() -> Vec<(String, Capability)> {
    trial_names_in(Profile::Documented)
}

/// [`trial_names`] under `profile`.
pub fn trial_names_in(profile: Profile) -> Vec<(String, Capability)> {
    let mut names: Vec<(String, Capability)> = Spec::embedded()
        .cases_in(profile)
        .map(|c| (c.full_name(), c.capability()))
        .collect();
    names.extend(
        Capability::ALL
            .iter()
            .map(|c| (format!("property/{c}"), *c)),
    );
    names
}

/// Certifies `backend`: runs every trial (calling `progress` after each), applies the
/// expectations and builds the report.
pub fn certify(
    backend: &dyn Backend,
    cfg: &Config,
    progress: &mut dyn FnMut(usize, usize, &TrialResult),
) -> Report {
    let declared = backend.capabilities();
    let selected = |name: &str| cfg.filter.as_deref().is_none_or(|f| name.contains(f));
    let cases: Vec<_> = Spec::embedded()
        .cases_in(cfg.profile)
        .filter(|c| selected(&c.full_name()))
        .collect();
    let props: Vec<Capability> = Capability::ALL
        .into_iter()
        .filter(|c| selected(&format!("property/{c}")))
        .collect();
    let total = cases.len() + props.len();
    let mut trials = Vec::with_capacity(total);
    let mut used = vec![false; cfg.expectations.waive.len()];
    let mut finish = |mut r: TrialResult, trials: &mut Vec<TrialResult>| {
        for i in apply_waivers(&mut r, &cfg.expectations) {
            used[i] = true;
        }
        progress(trials.len() + 1, total, &r);
        trials.push(r);
    };
    for case in cases {
        let r = run_case_trial(backend, case, cfg);
        finish(r, &mut trials);
    }
    for cap in props {
        let r = if declared.contains(&cap) {
            run_property(backend, cap, cfg)
        } else {
            TrialResult {
                name: format!("property/{cap}"),
                kind: TrialKind::Property,
                capability: cap,
                clauses: property_clauses_in(cfg.profile, cap),
                outcome: Outcome::NotSupported,
                message: Some(format!("capability `{cap}` is not declared")),
                broken: Vec::new(),
                scenario: None,
                reproducer: None,
                scenarios: 0,
            }
        };
        finish(r, &mut trials);
    }
    let stale = cfg
        .expectations
        .waive
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(w, _)| format!("{} ({})", w.pattern, w.tracker))
        .collect();
    let expired = cfg
        .expectations
        .expired(cfg.today)
        .into_iter()
        .map(|w| format!("{} ({}, expired {})", w.pattern, w.tracker, w.expires))
        .collect();
    let meta = Meta {
        suite: "ge-conformance".to_owned(),
        suite_version: env!("CARGO_PKG_VERSION").to_owned(),
        spec_digest: Spec::embedded().digest().to_owned(),
        backend: backend.name().to_owned(),
        backend_version: backend.version().to_owned(),
        capabilities: declared.into_iter().collect(),
        profile: cfg.profile,
        seed: cfg.seed,
        case_budget: cfg.cases,
    };
    Report::new(meta, trials, stale, expired)
}

/// Runs one scenario against `backend` in `sandbox` and returns its canonical observation.
pub fn evaluate(
    backend: &dyn Backend,
    scenario: &Scenario,
    sandbox: &Path,
) -> Result<Observation, String> {
    match runner::ask(backend, scenario, sandbox) {
        Err(panic) => Err(panic),
        Ok(Err(ns)) => Err(ns.to_string()),
        Ok(Ok(mut o)) => {
            o.canonicalize();
            Ok(o)
        }
    }
}

/// Draws one scenario of `capability` from its generator with `seed` (for `corpus` and demos).
pub fn sample(capability: Capability, seed: u64) -> Option<Scenario> {
    let strategy = generator(capability)?;
    let mut runner = TestRunner::new_with_rng(PtConfig::default(), seed_rng(seed, capability));
    strategy.new_tree(&mut runner).ok().map(|t| t.current())
}
