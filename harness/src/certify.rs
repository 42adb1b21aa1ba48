//! Certification: runs every case of the tables and every property (generated scenarios judged
//! by the oracles and compared with the reference) against a backend, applies the expectations,
//! and builds the report.
//!
//! Every problem is weighed by the clause it breaks, at the level in force ([`Judging`]): a
//! broken clause that binds is a failure, a broken suite choice at level `documented` is a
//! deviation. A property keeps going over its whole budget and reports each distinct broken
//! clause once, with a counterexample shrunk for that clause alone, so one deviation never hides
//! a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use ge_reference::Reference;
use ge_spec::{Backend, Capability, Observation, Scenario, Spec};
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};

use crate::expectations::{Date, Expectations};
use crate::input::{one_line, MAX_NAME};
use crate::judging::Judging;
use crate::oracle;
use crate::pattern;
use crate::reduce::{self, Removal};
use crate::report::{Counterexample, Meta, Outcome, Report, TrialKind, TrialResult};
use crate::runner::{self, Problem, Verdict};

/// The default number of generated scenarios per property.
pub const DEFAULT_CASES: u32 = 256;

/// How a certification run is set up: one value, handed down once.
#[derive(Debug, Clone)]
pub struct Config {
    /// The profile and the conformance level.
    pub judging: Judging,
    /// Seed of the generated scenarios.
    pub seed: u64,
    /// Generated scenarios per property (at least one).
    pub cases: u32,
    /// Waivers.
    pub expectations: Expectations,
    /// How the backend was named on the command line, for reproducers (`reference`, `exec:...`).
    pub backend_arg: String,
    /// Only trials whose name contains this run (all when `None`): a partial run.
    pub filter: Option<String>,
    /// The date expiry is judged against.
    pub today: Date,
    /// Whether each property judges its boundary catalogue before its random scenarios (on by
    /// default). Off, a property reports what its random phase and shrinking find alone: how
    /// the generators and the shrinking are measured (`docs/benchmarks.md`).
    pub boundaries: bool,
    /// A vendor's own case tables, run beside the contract's cases (none by default).
    pub local: Option<crate::local::LocalCases>,
    /// The capabilities the run must cover (`--require`, `Suite::require`): one the backend
    /// does not declare makes the verdict NOT CERTIFIED. None by default.
    pub required: BTreeSet<Capability>,
}

/// Reads a `--require` value: `all`, or capability names separated by commas
/// (`options,transfer`).
pub fn parse_required(text: &str) -> Result<BTreeSet<Capability>, String> {
    if text.trim() == "all" {
        return Ok(Capability::ALL.into_iter().collect());
    }
    text.split(',')
        .map(|part| {
            part.trim().parse::<Capability>().map_err(|_| {
                format!(
                    "`{}` is no capability: say `all`, or some of {} separated by commas",
                    part.trim(),
                    Capability::ALL.map(|c| c.as_str()).join(", ")
                )
            })
        })
        .collect()
}

impl Config {
    /// The cases this run draws on: the contract's, with the local tables when there are some.
    pub fn spec(&self) -> &Spec {
        match &self.local {
            Some(local) => local.spec(),
            None => Spec::embedded(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            judging: Judging::DEFAULT,
            seed: 0,
            cases: DEFAULT_CASES,
            expectations: Expectations::default(),
            backend_arg: "reference".to_owned(),
            filter: None,
            today: Date::today(),
            boundaries: true,
            local: None,
            required: BTreeSet::new(),
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

/// The flags that repeat a judging on the command line (nothing for the defaults).
fn judging_flags(judging: &Judging) -> String {
    let mut flags = String::new();
    if judging.profile != ge_spec::Profile::Documented {
        flags.push_str(&format!(" --profile {}", judging.profile));
    }
    if judging.level != ge_spec::Conformance::Documented {
        flags.push_str(&format!(" --level {}", judging.level));
    }
    flags
}

/// A command line that shows what `backend_arg` answers for `scenario` and judges it.
pub fn reproducer_for_scenario(
    judging: &Judging,
    backend_arg: &str,
    scenario: &Scenario,
) -> String {
    let json = serde_json::to_string(scenario).unwrap_or_default();
    format!(
        "echo {} | ge-conformance eval --judge --backend {}{}",
        shell_quote(&json),
        shell_quote(backend_arg),
        judging_flags(judging)
    )
}

/// A command line that reruns one table case against `backend_arg` and judges it (with
/// `--cases-dir` when the case is one of the local tables of `cfg`).
pub fn reproducer_for_case(cfg: &Config, case: &ge_spec::TableCase) -> String {
    let local = cfg
        .local
        .as_ref()
        .filter(|l| l.spec().is_local(case))
        .map(|l| {
            format!(
                " --cases-dir {}",
                shell_quote(&l.dir().display().to_string())
            )
        })
        .unwrap_or_default();
    format!(
        "ge-conformance eval --backend {}{local} --case {}{}",
        shell_quote(&cfg.backend_arg),
        shell_quote(&case.full_name()),
        judging_flags(&cfg.judging)
    )
}

/// The clauses a property over `capability` covers under `profile`: every clause some case of
/// that capability checks (the property judges the same ground with generated scenarios).
pub fn property_clauses(profile: ge_spec::Profile, capability: Capability) -> Vec<String> {
    let mut clauses: Vec<String> = Spec::embedded()
        .cases_in(profile)
        .filter(|c| c.capability() == capability)
        .flat_map(|c| c.case.clauses.iter().cloned())
        .collect();
    clauses.sort();
    clauses.dedup();
    clauses
}

/// The suite's own clause that a difference from the reference breaks when the oracle finds
/// nothing wrong with the answer: the capabilities with one right answer only. What is left
/// there is the form of what the answer says (the spelling of a value, OPT-007; a plan's
/// warnings, TRF-004; a load's diagnostics, OPT-012), always a reference-defined clause: the
/// vocabulary's (TRF-001, WGT-005) bind at every level and are their checks' alone.
fn residual_clause(capability: Capability) -> Option<&'static str> {
    match capability {
        Capability::Options => Some("OPT-007"),
        Capability::Transfer => Some("TRF-004"),
        Capability::Weights => Some("OPT-012"),
        Capability::Memory | Capability::Session => None,
    }
}

/// Asks `backend` and the reference about one scenario and judges the backend's answer: the
/// oracle of the capability first, on its own reading of the tables; then, where the answer
/// is unique and the oracle found nothing, whatever still differs from the reference (the
/// suite's own choices). The reference is asked only where that last check exists: the memory
/// and session oracles judge every clause themselves, so there its answer would change nothing.
/// Weights run in two fresh sandboxes, and the backend's is inspected. Returns the problems,
/// weighed under `judging` (empty: nothing to report).
pub fn compare(judging: &Judging, backend: &dyn Backend, scenario: &Scenario) -> Vec<Problem> {
    let scenario = &runner::following(judging.profile, backend, scenario);
    let broke = |message: String| vec![Problem::broke(&message)];
    let residual = residual_clause(scenario.capability());
    let expected = match residual.map(|_| reference_answer(judging, scenario)) {
        None => None,
        Some(Ok(Some(o))) => Some(o),
        // The reference answers every capability and never panics; when it cannot answer (a
        // setup that cannot be planted), the scenario is outside what the suite can judge.
        Some(Ok(None)) => return Vec::new(),
        Some(Err(e)) => return broke(e),
    };
    let Ok(theirs) = runner::sandbox(scenario) else {
        return broke("cannot create sandbox directories".into());
    };
    let mut actual = match runner::ask(backend, scenario, runner::sandbox_path(&theirs)) {
        Err(panic) => return broke(panic),
        Ok(Err(ns)) => {
            return broke(format!(
                "declared capability answered not supported: {}",
                ns.reason
            ))
        }
        Ok(Ok(o)) => o,
    };
    actual.canonicalize();
    let mut violations = oracle::judge(judging, scenario, &actual);
    violations.extend(runner::reuse_twin_violations(
        judging, backend, scenario, &actual,
    ));
    if let (Scenario::Weights(s), Observation::Weights(o)) = (scenario, &actual) {
        violations.extend(oracle::weights::check_sandbox(
            judging,
            s,
            o,
            runner::sandbox_path(&theirs),
        ));
        violations.extend(oracle::weights::beside(&theirs));
    }
    let mut problems: Vec<Problem> = violations
        .into_iter()
        .map(|v| Problem::weighed(judging, vec![v.clause], v.message))
        .collect();
    if problems.is_empty() {
        if let (Some(clause), Some(expected)) = (residual, &expected) {
            if let Some(m) = first_difference(expected, &actual) {
                // What the oracle, judging every clause the text states, left standing is a
                // departure from the suite's choices alone: a failure at level strict, never
                // at level documented, whatever the origin of the clause it is filed under.
                let mut residual = Problem::weighed(
                    judging,
                    vec![clause.to_owned()],
                    format!("differs from the reference {m}"),
                );
                residual.deviation = judging.level != ge_spec::Conformance::Strict;
                problems.push(residual);
            }
        }
    }
    dedup(problems)
}

/// The reference's answer to `scenario`, in a sandbox of its own: `None` when it cannot
/// answer; an error when no sandbox can be made.
fn reference_answer(judging: &Judging, scenario: &Scenario) -> Result<Option<Observation>, String> {
    let ours = runner::sandbox(scenario).map_err(|_| "cannot create sandbox directories")?;
    Ok(
        match runner::ask(
            &Reference::new(judging.profile),
            scenario,
            runner::sandbox_path(&ours),
        ) {
            Ok(Ok(mut o)) => {
                o.canonicalize();
                Some(o)
            }
            _ => None,
        },
    )
}

/// The first difference between two observations outside their diagnostics, located by a JSON
/// Pointer.
fn first_difference(expected: &Observation, actual: &Observation) -> Option<String> {
    // The usual case, and the cheap one: the same answer, messages and all. A value matches
    // itself as a pattern, so the walks below would find nothing.
    if expected == actual {
        return None;
    }
    let (e, a) = (
        serde_json::to_value(expected).ok()?,
        serde_json::to_value(actual).ok()?,
    );
    let matched = pattern::check(&e, &a);
    if let Some(m) = matched.mismatches.first() {
        return Some(m.to_string());
    }
    // The diagnostics are the oracle's to judge: it knows which a MAY clause permits.
    pattern::check(&a, &e)
        .mismatches
        .first()
        .map(ToString::to_string)
}

/// One problem per clause and weight (the first message kept).
fn dedup(problems: Vec<Problem>) -> Vec<Problem> {
    let mut seen = std::collections::BTreeSet::new();
    problems
        .into_iter()
        .filter(|p| seen.insert((p.clauses.clone(), p.deviation)))
        .collect()
}

/// The scenario generator of a capability.
pub fn generator(capability: Capability) -> Option<BoxedStrategy<Scenario>> {
    crate::gen::scenarios(capability)
}

/// A fresh seed (`--seed random`, `GE_CONFORMANCE_SEED=random`): the standard library's
/// per-process random keys, mixed with the clock, without a random-number crate. The run
/// prints it and records it in its report, so a failure replays with it.
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// The random source of `capability`'s property at `seed`: a run draws its scenarios from
/// [`generator`] with it, so a test can draw exactly what a run judges.
pub fn seed_rng(seed: u64, capability: Capability) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8] = capability as u8;
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// How long a property may spend shrinking in all, and how many judgements for one clause
/// (removals and simpler values together): a backend that hangs until the protocol timeout
/// must not make shrinking last for hours.
const SHRINK_TIME: Duration = Duration::from_secs(60);
const SHRINK_STEPS: u32 = 2048;

/// What a problem is filed under in a property: its clause; a panic of the backend under one
/// key of its own (shrunk like a wrong answer, to the input that makes it panic); any other
/// breakdown (a broken pipe, a timeout, garbage on the protocol) under the empty key, reported
/// as it happened and never shrunk: shrinking is for wrong answers, not for broken pipes.
fn key_of(p: &Problem) -> String {
    match p.clauses.first() {
        Some(c) => c.clone(),
        None if p.message.starts_with(runner::PANICKED) => "(panic)".to_owned(),
        None => String::new(),
    }
}

// Long because: boundary phase, generated phase and shrinking share the trial being built;
// not yet split into phases.
/// Runs the property of `capability`: the boundary scenarios of its catalogue
/// ([`crate::gen::boundaries`]), then `cfg.cases` generated scenarios, each judged by
/// [`compare`]. Every distinct clause broken is reported once, with a counterexample (a random
/// one shrunk for that clause); a breakdown of the backend is reported as it happened, unshrunk.
pub fn run_property(backend: &dyn Backend, capability: Capability, cfg: &Config) -> TrialResult {
    let judging = &cfg.judging;
    let mut result = TrialResult::new(
        format!("property/{capability}"),
        TrialKind::Property,
        capability,
        property_clauses(judging.profile, capability),
    );
    result.scenarios = cfg.cases;
    let Some(strategy) = generator(capability) else {
        result.outcome = Outcome::NotSupported;
        result.message = Some("no generator for this capability".into());
        result.scenarios = 0;
        return result;
    };
    let mut runner = TestRunner::new_with_rng(PtConfig::default(), seed_rng(cfg.seed, capability));
    let mut found: BTreeMap<String, Counterexample> = BTreeMap::new();
    let started = Instant::now();
    // The boundary phase: every scenario of the catalogue, in order, before any random one.
    // Each sets one thing at one edge, so it is its own smallest counterexample.
    let boundaries = if cfg.boundaries {
        crate::gen::boundary_scenarios(capability)
    } else {
        Vec::new()
    };
    result.scenarios += u32::try_from(boundaries.len()).unwrap_or(u32::MAX);
    'boundaries: for scenario in &boundaries {
        for p in compare(judging, backend, scenario) {
            let key = key_of(&p);
            // A backend that broke down (a broken pipe, garbage, a timeout) is reported once;
            // asking it the rest of the catalogue would only restart it again and again.
            let broke = key.is_empty();
            found.entry(key).or_insert_with(|| Counterexample {
                clauses: p.clauses.clone(),
                deviation: p.deviation,
                message: p.message.clone(),
                scenario: serde_json::to_value(scenario).unwrap_or_default(),
                reproducer: reproducer_for_scenario(judging, &cfg.backend_arg, scenario),
            });
            if broke {
                break 'boundaries;
            }
        }
    }
    for _ in 0..cfg.cases {
        // A copy of the runner before the draw replays the same scenario: each clause found in
        // it shrinks from the original, not from what shrinking for another clause left.
        let replay = runner.clone();
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let original = tree.current();
        let problems = compare(judging, backend, &original);
        for p in problems {
            let key = key_of(&p);
            if found.contains_key(&key) {
                continue;
            }
            let fresh = strategy.new_tree(&mut replay.clone()).ok();
            let (scenario, p) = match fresh {
                Some(mut tree) if !key.is_empty() && started.elapsed() <= SHRINK_TIME => {
                    shrink(&mut tree, (original.clone(), p), started, |s| {
                        compare(judging, backend, s)
                            .into_iter()
                            .find(|q| key_of(q) == key)
                    })
                }
                _ => (original.clone(), p),
            };
            found.insert(
                key,
                Counterexample {
                    clauses: p.clauses.clone(),
                    deviation: p.deviation,
                    message: p.message.clone(),
                    scenario: serde_json::to_value(&scenario).unwrap_or_default(),
                    reproducer: reproducer_for_scenario(judging, &cfg.backend_arg, &scenario),
                },
            );
        }
    }
    let mut counterexamples: Vec<Counterexample> = found.into_values().collect();
    // Failures first, then deviations, each in clause order.
    counterexamples.sort_by(|a, b| (a.deviation, &a.clauses).cmp(&(b.deviation, &b.clauses)));
    result.fill_from_counterexamples(counterexamples);
    result
}

/// Shrinks a failing scenario while `still` finds the problem in it; returns the smallest
/// scenario found with its problem (`found` when the tree does not reproduce it).
///
/// Whole elements go first ([`reduce`]): every option key, event, tensor, input, constant and
/// list item that the failure does not need, across the whole scenario. Then proptest's own
/// shrinking simplifies the values, each value it proposes judged with the same elements
/// removed, so nothing removed comes back. Last, a second removal pass takes out what the
/// simpler values no longer need. All three share one budget of judgements.
fn shrink(
    tree: &mut Box<dyn ValueTree<Value = Scenario>>,
    found: (Scenario, Problem),
    started: Instant,
    still: impl Fn(&Scenario) -> Option<Problem>,
) -> (Scenario, Problem) {
    let start = tree.current();
    let Some(problem) = still(&start) else {
        return found;
    };
    let in_time = || started.elapsed() <= SHRINK_TIME;
    let judge = |s: &Scenario| if in_time() { still(s) } else { None };
    let mut budget = SHRINK_STEPS;
    let (mut best, removed) = reduce::remove_while((start, problem), &mut budget, judge);
    // Proptest steps on elements already removed change nothing: they cost no judgement, but
    // are bounded all the same.
    let mut idle = 16 * SHRINK_STEPS;
    // Half of what is left goes to values, so the last removal pass always has its share.
    let last_pass = budget / 2;
    let mut more = tree.simplify();
    while more && budget > last_pass && idle > 0 && in_time() {
        let current = Removal::apply_all(&removed, &tree.current());
        let fails = if current == best.0 {
            idle -= 1;
            true
        } else if reduce::elements(&current) > reduce::elements(&best.0) {
            // A regenerated value (a flat-mapped list drawn again) can bring back more than
            // was removed: simpler values never buy a larger scenario.
            false
        } else {
            budget -= 1;
            match still(&current) {
                Some(p) => {
                    best = (current, p);
                    true
                }
                None => false,
            }
        };
        more = if fails {
            tree.simplify()
        } else {
            tree.complicate()
        };
    }
    reduce::remove_while(best, &mut budget, judge).0
}

/// Runs one table case and turns its verdict into a trial result.
pub fn run_case_trial(
    backend: &dyn Backend,
    case: &ge_spec::TableCase,
    cfg: &Config,
) -> TrialResult {
    let verdict = runner::run_case(&cfg.judging, backend, case);
    let mut result = TrialResult::new(
        case.full_name(),
        TrialKind::Case,
        case.capability(),
        case.case.clauses.clone(),
    );
    match &verdict {
        Verdict::Pass => {}
        Verdict::NotSupported(why) => {
            result.outcome = Outcome::NotSupported;
            result.message = Some(why.clone());
        }
        Verdict::Fail(problems) | Verdict::Deviates(problems) => {
            result.outcome = if matches!(verdict, Verdict::Fail(_)) {
                Outcome::Fail
            } else {
                Outcome::Deviation
            };
            result.broken = verdict.broken_clauses();
            result.deviations = verdict.deviated_clauses();
            result.message = Some(
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            result.scenario = serde_json::to_value(&case.case.scenario).ok();
            result.reproducer = Some(reproducer_for_case(cfg, case));
        }
    }
    result
}

/// How the message of a waived trial starts: the waiver, then on the next lines the failures it
/// waives. Only a trial ended ignored with such a message counts as waived when a listing
/// judges ahead (`libtest/ahead.rs`).
pub const WAIVED: &str = "waived: ";

/// Applies the waivers to a result. A waiver naming the trial waives its failure whole. A
/// waiver naming a clause waives that clause's failures wherever they occur, inside a property
/// too, and nothing else: the trial is waived when every clause it fails on is waived, and
/// still fails, saying which clauses were waived, when it fails on another one as well. A
/// trial that passes is an unexpected pass when a waiver names it exactly, and stays a pass
/// when only globs or clause waivers cover it; a deviation stays a deviation (it fails nothing
/// to waive).
pub fn apply_waivers(result: &mut TrialResult, expectations: &Expectations) {
    let waived_with = |what: &str, message: &str| format!("{WAIVED}{what}\n{message}");
    let why = |w: &crate::expectations::Waiver| {
        format!("{} ({}, expires {})", w.reason, w.tracker, w.expires)
    };
    match result.outcome {
        Outcome::Fail => {
            let message = result.message.clone().unwrap_or_default();
            if let Some(w) = expectations.naming_trial(&result.name).next() {
                result.outcome = Outcome::Waived;
                result.message = Some(waived_with(&why(w), &message));
                return;
            }
            let waived: Vec<(&String, &crate::expectations::Waiver)> = result
                .broken
                .iter()
                .filter_map(|c| expectations.for_clause(c).map(|w| (c, w)))
                .collect();
            if waived.is_empty() {
                return;
            }
            let listed = waived
                .iter()
                .map(|(c, w)| format!("{c}: {}", why(w)))
                .collect::<Vec<_>>()
                .join("; ");
            if waived.len() == result.broken.len() {
                result.outcome = Outcome::Waived;
                result.message = Some(waived_with(&listed, &message));
            } else {
                result.message = Some(format!(
                    "fails on clauses no waiver names (waived here: {listed})\n{message}"
                ));
            }
        }
        // Only a waiver naming this trial exactly insists that it fails; a glob covers a group
        // of which some may pass (part of a fix landed), and a clause waiver waives failures
        // of its clause, whichever trials pass while citing it.
        Outcome::Pass => {
            if let Some(w) = expectations
                .naming_trial(&result.name)
                .find(|w| !w.is_glob())
            {
                result.outcome = Outcome::UnexpectedPass;
                result.message = Some(format!(
                    "passed, but is waived as failing: {}; remove the waiver",
                    why(w)
                ));
            }
        }
        _ => {}
    }
}

/// The waivers that match no trial of the suite (the cases of `spec`, local ones included)
/// under `profile`, by name or by the clauses it checks: stale, reported by `certify` and by
/// `libtest::Suite` alike, never failing.
pub fn stale_waivers<'e>(
    expectations: &'e Expectations,
    spec: &Spec,
    profile: ge_spec::Profile,
) -> Vec<&'e crate::expectations::Waiver> {
    let mut used = vec![false; expectations.waive.len()];
    let mut mark = |name: &str, clauses: &[String]| {
        for (i, _) in expectations.matching(name, clauses) {
            used[i] = true;
        }
    };
    for case in spec.cases_in(profile) {
        mark(&case.full_name(), &case.case.clauses);
    }
    for cap in Capability::ALL {
        mark(&format!("property/{cap}"), &property_clauses(profile, cap));
    }
    expectations
        .waive
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(w, _)| w)
        .collect()
}

/// The waivers that waive nothing in a whole run's `trials`: stale as [`stale_waivers`] says,
/// or naming no trial and matching no clause any trial failed on (a clause waiver whose clause
/// every trial passes). A filtered run cannot tell, and reports the first kind only.
pub fn stale_after<'e>(
    expectations: &'e Expectations,
    spec: &Spec,
    profile: ge_spec::Profile,
    trials: Option<&[TrialResult]>,
) -> Vec<&'e crate::expectations::Waiver> {
    let mut stale = stale_waivers(expectations, spec, profile);
    let Some(trials) = trials else {
        return stale;
    };
    let names = trial_names(spec, profile);
    for w in &expectations.waive {
        let names_a_trial = names.iter().any(|(n, _)| w.matches(n));
        let fails_its_clause = trials.iter().any(|t| t.broken.iter().any(|c| w.matches(c)));
        if !names_a_trial && !fails_its_clause && !stale.iter().any(|s| std::ptr::eq(*s, w)) {
            stale.push(w);
        }
    }
    stale
}

/// A waiver too broad to be taken without `broad = true`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("waiver `{pattern}` covers {what}: it would waive whatever that part of the engine gets wrong; name the trials or clauses, or mark it `broad = true` with its reason")]
pub struct BroadWaiver {
    /// Its pattern.
    pub pattern: String,
    /// What it covers: `every case of transfer`, `every clause of the suite`.
    pub what: String,
}

/// Refuses a glob waiver that covers every case of a capability (its property aside), or every
/// clause of the suite, unless it says `broad = true`.
pub fn check_waivers(cfg: &Config) -> Result<(), BroadWaiver> {
    let spec = cfg.spec();
    let names = trial_names(spec, cfg.judging.profile);
    let clauses: Vec<&str> = spec.clauses().map(|c| c.id.as_str()).collect();
    for w in cfg
        .expectations
        .waive
        .iter()
        .filter(|w| w.is_glob() && !w.broad)
    {
        let refuse = |what: String| BroadWaiver {
            pattern: w.pattern.clone(),
            what,
        };
        if clauses.iter().all(|c| w.matches(c)) {
            return Err(refuse("every clause of the suite".to_owned()));
        }
        for cap in Capability::ALL {
            let mut cases = names
                .iter()
                .filter(|(n, c)| *c == cap && !n.starts_with("property/"))
                .peekable();
            if cases.peek().is_some() && cases.all(|(n, _)| w.matches(n)) {
                return Err(refuse(format!("every case of {cap}")));
            }
        }
    }
    Ok(())
}

/// Every trial of the suite under `profile`, by name, in run order: the cases of `spec`, then
/// one property per capability.
pub fn trial_names(spec: &Spec, profile: ge_spec::Profile) -> Vec<(String, Capability)> {
    let mut names: Vec<(String, Capability)> = spec
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

/// Why a certification cannot run as asked: a usage error, not a verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// `--filter` matches no trial.
    #[error("the filter {0:?} matches no trial (`ge-conformance certify --filter` takes a part of a trial name such as `options-values/` or `property/memory`)")]
    FilterMatchesNothing(String),
    /// `--filter` matches only trials of capabilities the backend does not declare.
    #[error("the filter {0:?} matches only trials of capabilities the backend does not declare: nothing would be judged")]
    FilterJudgesNothing(String),
    /// No scenario per property.
    #[error("--cases must be at least 1: a property judged on no scenario proves nothing")]
    NoScenarios,
    /// A waiver covers a whole capability or the whole suite without saying so.
    #[error(transparent)]
    Broad(BroadWaiver),
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// This machine's host name, for the report (none where the system does not say).
fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .filter(|h| !h.is_empty())
}

/// Checks that `cfg` can make a meaningful run under its profile.
pub fn check(cfg: &Config) -> Result<(), SetupError> {
    if cfg.cases == 0 {
        return Err(SetupError::NoScenarios);
    }
    if let Some(f) = &cfg.filter {
        if !trial_names(cfg.spec(), cfg.judging.profile)
            .iter()
            .any(|(n, _)| n.contains(f.as_str()))
        {
            return Err(SetupError::FilterMatchesNothing(f.clone()));
        }
    }
    check_waivers(cfg).map_err(SetupError::Broad)
}

/// Certifies `backend`: runs every trial (calling `progress` after each), applies the
/// expectations and builds the report. A configuration [`check`] refuses is refused here too.
pub fn certify(
    backend: &dyn Backend,
    cfg: &Config,
    progress: &mut dyn FnMut(usize, usize, &TrialResult),
) -> Result<Report, SetupError> {
    check(cfg)?;
    let declared = backend.capabilities();
    let selected = |name: &str| cfg.filter.as_deref().is_none_or(|f| name.contains(f));
    if let Some(f) = &cfg.filter {
        let judged = trial_names(cfg.spec(), cfg.judging.profile)
            .iter()
            .any(|(n, c)| selected(n) && declared.contains(c));
        if !judged && !declared.is_empty() {
            return Err(SetupError::FilterJudgesNothing(f.clone()));
        }
    }
    let cases: Vec<_> = cfg
        .spec()
        .cases_in(cfg.judging.profile)
        .filter(|c| selected(&c.full_name()))
        .collect();
    let props: Vec<Capability> = Capability::ALL
        .into_iter()
        .filter(|c| selected(&format!("property/{c}")))
        .collect();
    let total = cases.len() + props.len();
    let mut trials = Vec::with_capacity(total);
    let started = std::time::SystemTime::now();
    let run_started = Instant::now();
    // Each trial's wall time counts from the end of the one before it.
    let mut last = Instant::now();
    let mut finish = |mut r: TrialResult, trials: &mut Vec<TrialResult>| {
        r.micros = micros(last.elapsed());
        last = Instant::now();
        apply_waivers(&mut r, &cfg.expectations);
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
            let mut r = TrialResult::new(
                format!("property/{cap}"),
                TrialKind::Property,
                cap,
                property_clauses(cfg.judging.profile, cap),
            );
            r.outcome = Outcome::NotSupported;
            r.message = Some(format!("capability `{cap}` is not declared"));
            r
        };
        finish(r, &mut trials);
    }
    Ok(report(backend, cfg, trials, started, run_started.elapsed()))
}

/// The report of a run of `backend` under `cfg` that produced `trials` (waivers applied),
/// started at `started` and lasting `wall`: the stale and expired waivers, the meta and the
/// verdict. [`certify`] and `libtest::Suite` build their reports with it.
pub fn report(
    backend: &dyn Backend,
    cfg: &Config,
    trials: Vec<TrialResult>,
    started: std::time::SystemTime,
    wall: Duration,
) -> Report {
    // Stale means matching no trial of the suite, whatever the filter ran (the list `cargo
    // test` shows ahead); a whole run also knows which clause waivers waived nothing.
    let whole = cfg.filter.is_none().then_some(trials.as_slice());
    let stale = stale_after(&cfg.expectations, cfg.spec(), cfg.judging.profile, whole)
        .into_iter()
        .map(|w| format!("{} ({})", w.pattern, w.tracker))
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
        // Both are the backend's words: one line each, capped.
        backend: one_line(backend.name(), MAX_NAME),
        backend_version: one_line(backend.version(), MAX_NAME),
        capabilities: backend.capabilities().into_iter().collect(),
        required: cfg.required.iter().copied().collect(),
        profile: cfg.judging.profile,
        level: cfg.judging.level,
        seed: cfg.seed,
        case_budget: cfg.cases,
        filter: cfg.filter.clone(),
        local_cases: cfg.spec().local_digest().map(str::to_owned),
        upstream_source: (cfg.judging.profile == ge_spec::Profile::Upstream)
            .then(|| crate::divergence::pinned(Spec::embedded())),
        confinement: None,
        started: Some(crate::clock::rfc3339_utc(started)),
        host: host_name(),
        micros: micros(wall),
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

/// The clauses whose failures the default certification of `backend` finds (its table cases and
/// properties, boundary phases included, at the default seed and budget), limited to the trials
/// whose names contain `filter` and judged under `judging`. Fault tests use it where a fault is
/// one the generated scenarios must reach, not only a case.
pub fn caught_in_certification(
    judging: &Judging,
    backend: &dyn Backend,
    filter: &str,
) -> std::collections::BTreeSet<String> {
    let cfg = Config {
        judging: *judging,
        filter: Some(filter.to_owned()),
        ..Config::default()
    };
    certify(backend, &cfg, &mut |_, _, _| {})
        .map(|report| report.trials.into_iter().flat_map(|t| t.broken).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_residual_difference_is_filed_under_a_suite_choice() {
        for c in Capability::ALL {
            if let Some(id) = residual_clause(c) {
                let clause = Spec::embedded().clause(id).expect("the clause exists");
                assert!(
                    clause.is_suite_choice(ge_spec::Profile::Documented),
                    "{c}: {id} is {}",
                    clause.origin
                );
            }
        }
    }
}
