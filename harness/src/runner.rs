//! Runs one case against one backend and says pass, fail or not supported: the backend answers,
//! the harness judges (pattern, oracle), and a panicking backend fails only its own case.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::sandbox::Sandbox;

use ge_spec::{Backend, Observation, Scenario, TableCase};

use crate::input::{one_line, MAX_TEXT};
use crate::judging::{Judging, Violation};

use crate::oracle;
use crate::pattern;

/// One reason a case did not pass, with the clauses it implicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The clauses broken: the oracle's clause for an invariant violation, the clause that calls
    /// for a missing or extra diagnostic, the case's clauses for another departure from the
    /// table's expectation, none for a backend that broke down.
    pub clauses: Vec<String>,
    /// What went wrong.
    pub message: String,
    /// True when no clause broken binds at the level in force: a deviation, not a failure.
    pub deviation: bool,
}

impl Problem {
    /// A problem naming `clauses`, weighed under `judging`. The message is kept on one line
    /// and capped ([`crate::input::one_line`]): it quotes what the backend answered.
    pub fn weighed(judging: &Judging, clauses: Vec<String>, message: String) -> Self {
        let deviation = !clauses.is_empty() && !clauses.iter().any(|c| judging.binds(c));
        Problem {
            clauses,
            message: one_line(&message, MAX_TEXT),
            deviation,
        }
    }

    /// A problem that implicates no clause: the backend broke down (a panic, a timeout, an
    /// answer that cannot be read). The message is kept on one line and capped, as above.
    pub fn broke(message: &str) -> Self {
        Problem {
            clauses: Vec::new(),
            message: one_line(message, MAX_TEXT),
            deviation: false,
        }
    }
}

/// The most problems of one trial kept under the same clauses (and weight); the rest are
/// counted in one more problem under those clauses. An answer that breaks one clause a
/// hundred thousand times costs one short message, and no clause found is lost.
pub const MAX_PROBLEMS_PER_CLAUSE: usize = 8;

/// `problems` with at most [`MAX_PROBLEMS_PER_CLAUSE`] under each set of clauses and weight,
/// in their order, each set's surplus counted in a last problem of its own.
fn capped(problems: Vec<Problem>) -> Vec<Problem> {
    let mut seen: Vec<((Vec<String>, bool), usize)> = Vec::new();
    let mut kept = Vec::new();
    for p in problems {
        let key = (p.clauses.clone(), p.deviation);
        match seen.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                if *n <= MAX_PROBLEMS_PER_CLAUSE {
                    kept.push(p);
                }
            }
            None => {
                seen.push((key, 1));
                kept.push(p);
            }
        }
    }
    for ((clauses, deviation), n) in seen {
        if n > MAX_PROBLEMS_PER_CLAUSE {
            kept.push(Problem {
                clauses,
                message: format!(
                    "… and {} more problems like the ones above",
                    n - MAX_PROBLEMS_PER_CLAUSE
                ),
                deviation,
            });
        }
    }
    kept
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = if self.deviation { "deviation " } else { "" };
        if self.clauses.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{tag}[{}] {}", self.clauses.join(", "), self.message)
        }
    }
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The observation matched.
    Pass,
    /// It departed only from the suite's own choices (reference-defined clauses), at a level
    /// where they do not bind.
    Deviates(Vec<Problem>),
    /// It did not pass; each problem says where and which clauses it breaks (deviations are
    /// among them, marked).
    Fail(Vec<Problem>),
    /// The backend does not implement the capability (and did not claim it).
    NotSupported(String),
}

impl Verdict {
    /// True for [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// A failure with one problem that implicates no clause (the backend broke down).
    pub fn broke(message: impl Into<String>) -> Self {
        Verdict::Fail(vec![Problem::broke(&message.into())])
    }

    /// The verdict for a list of problems: a pass without, a deviation when none binds. At
    /// most [`MAX_PROBLEMS_PER_CLAUSE`] problems under the same clauses are kept.
    pub fn of(problems: Vec<Problem>) -> Self {
        let problems = capped(problems);
        if problems.is_empty() {
            Verdict::Pass
        } else if problems.iter().all(|p| p.deviation) {
            Verdict::Deviates(problems)
        } else {
            Verdict::Fail(problems)
        }
    }

    /// The problems found (none for a pass or not supported).
    pub fn problems(&self) -> &[Problem] {
        match self {
            Verdict::Fail(p) | Verdict::Deviates(p) => p,
            _ => &[],
        }
    }

    /// The clauses the failures implicate (deviations left out).
    pub fn broken_clauses(&self) -> Vec<String> {
        self.clauses_where(false)
    }

    /// The clauses the deviations implicate.
    pub fn deviated_clauses(&self) -> Vec<String> {
        self.clauses_where(true)
    }

    fn clauses_where(&self, deviation: bool) -> Vec<String> {
        let mut all: Vec<String> = self
            .problems()
            .iter()
            .filter(|p| p.deviation == deviation)
            .flat_map(|p| p.clauses.clone())
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// A sandbox directory for `scenario`: a fresh temporary directory for weights scenarios (the
/// only capability that touches a filesystem), under [`crate::sandbox::root`], nothing for the
/// others, which never look at it.
pub fn sandbox(scenario: &Scenario) -> std::io::Result<Sandbox> {
    if !matches!(scenario, Scenario::Weights(_)) {
        return Ok(Sandbox::none());
    }
    Sandbox::new_in(crate::sandbox::root())
}

/// The path of a sandbox; the empty path stands for "no sandbox".
pub fn sandbox_path(dir: &Sandbox) -> &Path {
    dir.path()
}

/// Whether a setup path ends in a weight file's name as the reference gives it: `weight_<hash>`
/// (mode 1) or `<root graph>_weight_combined` (mode 2).
fn names_a_weight_file(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or(path);
    last.starts_with("weight_") || last.ends_with("_weight_combined")
}

/// The node -> file map of `backend`'s load of `scenario`, made in a sandbox of its own.
fn files_of(backend: &dyn Backend, scenario: &Scenario) -> Option<BTreeMap<String, String>> {
    let dir = sandbox(scenario).ok()?;
    match ask(backend, scenario, sandbox_path(&dir)) {
        Ok(Ok(Observation::Weights(o))) => Some(
            o.nodes
                .into_iter()
                .filter_map(|n| n.file.map(|f| (n.name, f)))
                .collect(),
        ),
        _ => None,
    }
}

/// Traps that follow the engine. A weights scenario's `setup` may plant a trap (a directory, a
/// file, a link) at the name the reference gives a weight's file; an engine that names its
/// files another way the text allows would never meet it, and a fault in how it handles a
/// write that fails, or a link in the way, would go unseen. This is the scenario with each such
/// trap moved to the name `backend` gives the same weight, learned from a load of the scenario
/// without the traps (the reference's names from the same load under `profile`). A trap whose
/// weight the engine names alike, or whose name is nobody's, stays where it is; so does every
/// scenario when either load fails. Certification, properties and `eval` judge the moved
/// scenario, which is the one the backend is asked.
pub fn following(
    profile: ge_spec::Profile,
    backend: &dyn Backend,
    scenario: &Scenario,
) -> Scenario {
    let Scenario::Weights(s) = scenario else {
        return scenario.clone();
    };
    let traps: Vec<usize> = (0..s.setup.len())
        .filter(|&i| names_a_weight_file(s.setup[i].path()))
        .collect();
    if traps.is_empty() {
        return scenario.clone();
    }
    let mut probe = s.clone();
    probe.setup = (0..s.setup.len())
        .filter(|i| !traps.contains(i))
        .map(|i| s.setup[i].clone())
        .collect();
    let probe = Scenario::Weights(probe);
    let reference = ge_reference::Reference::new(profile);
    let (Some(ours), Some(theirs)) = (files_of(&reference, &probe), files_of(backend, &probe))
    else {
        return scenario.clone();
    };
    let mut moved = s.clone();
    for i in traps {
        let at = s.setup[i].path();
        let Some(node) = ours.iter().find(|(_, f)| f.as_str() == at).map(|(n, _)| n) else {
            continue;
        };
        let Some(name) = theirs.get(node).filter(|n| n.as_str() != at) else {
            continue;
        };
        if moved.setup.iter().any(|step| step.path() == name) {
            continue;
        }
        match &mut moved.setup[i] {
            ge_spec::vocab::weights::SetupStep::Dir { path }
            | ge_spec::vocab::weights::SetupStep::File { path, .. }
            | ge_spec::vocab::weights::SetupStep::Symlink { path, .. } => *path = name.clone(),
        }
    }
    Scenario::Weights(moved)
}

/// [`following`] for a table case: the case with its scenario's traps moved to the backend's
/// names (the same case when nothing moves).
pub fn following_case(
    profile: ge_spec::Profile,
    backend: &dyn Backend,
    case: &TableCase,
) -> TableCase {
    let moved = following(profile, backend, &case.case.scenario);
    if moved == case.case.scenario {
        return case.clone();
    }
    TableCase {
        table: case.table.clone(),
        case: std::sync::Arc::new(ge_spec::Case {
            scenario: moved,
            ..(*case.case).clone()
        }),
    }
}

/// How the message of a backend that panicked starts.
pub const PANICKED: &str = "the backend panicked: ";

/// Asks `backend` about `scenario`, turning a panic into an error message. `sandbox` is the
/// directory weights scenarios work in; their `setup` (traps, other sessions' leftovers) is
/// planted there first, whoever asks.
pub fn ask(
    backend: &dyn Backend,
    scenario: &Scenario,
    sandbox: &Path,
) -> Result<Result<Observation, ge_spec::NotSupported>, String> {
    if let Scenario::Weights(s) = scenario {
        oracle::weights::plant(s, sandbox)
            .map_err(|e| format!("the scenario's setup cannot be planted: {e}"))?;
    }
    catch_unwind(AssertUnwindSafe(|| backend.answer(scenario, sandbox))).map_err(|payload| {
        // A subprocess backend whose request failed (timeout, crash, garbage) unwinds with this.
        if let Some(broken) = payload.downcast_ref::<crate::protocol::BrokenBackend>() {
            return broken.0.clone();
        }
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string payload".to_owned());
        format!("{PANICKED}{what}")
    })
}

/// Judges an observation against a case: the oracle of its capability (always), the `expect`
/// pattern (a mismatch in a diagnostic list by the clause that calls for the diagnostic, any
/// other by the case's clauses), each problem weighed under `judging`; at level `documented`
/// the pattern charges only the suite's choices ([`pattern_owns`]).
pub fn judge_observation(
    judging: &Judging,
    case: &TableCase,
    mut observation: Observation,
) -> Verdict {
    observation.canonicalize();
    let violations = case_violations(judging, case, &observation);
    let blame = Blame {
        departures: departures(judging, case, &violations),
        judged_whole: judged_whole(case, &violations),
    };
    let mut problems: Vec<Problem> = violations
        .into_iter()
        .map(|v| Problem::weighed(judging, vec![v.clause], v.message))
        .collect();
    if let Some(expect) = &case.case.expect {
        let mut expect = expect.clone();
        if judging.profile == ge_spec::Profile::Upstream
            && case.capability() == ge_spec::Capability::Weights
        {
            leave_out_meta(&mut expect, &mut observation);
        }
        // Read for the pattern only as far as it can look (`pattern::observe`): a hostile
        // answer's huge list costs what its pattern's list does.
        match pattern::observe(&expect, &observation) {
            Ok(actual) => {
                let found = pattern_problems(judging, case, &expect, &actual, &blame);
                let owns = pattern_owns(judging);
                problems.extend(found.into_iter().filter(|p| owns || p.deviation));
            }
            Err(e) => problems.push(Problem::broke(&format!(
                "observation cannot be serialised: {e}"
            ))),
        }
    }
    Verdict::of(problems)
}

/// Whether a case's `expect` pattern may charge a binding clause under `judging`: at level
/// `strict`, where every difference from the reference's answer departs from the text or a
/// choice of the suite, and under the upstream profile, whose tables record what GE does. At
/// level `documented` under the documented profile the oracles own every binding verdict: the
/// pattern documents the reference's answer and picks the scenario, and what differs from it
/// is reported only where it departs from a suite choice (a deviation). One path decides each
/// clause there, so a difference the oracle calls a form (OPT-012) is never also a failure of
/// the clause the case cites.
fn pattern_owns(judging: &Judging) -> bool {
    judging.level == ge_spec::Conformance::Strict || judging.profile == ge_spec::Profile::Upstream
}

/// What the oracle of the case's capability finds. A case that runs under both profiles is
/// judged on what they agree on: a converted node may carry either profile's name (a
/// profile-bound case checks the name).
fn case_violations(
    judging: &Judging,
    case: &TableCase,
    observation: &Observation,
) -> Vec<Violation> {
    match (&case.case.scenario, observation) {
        (ge_spec::Scenario::Weights(s), ge_spec::Observation::Weights(o))
            if case.case.profile.is_none() =>
        {
            oracle::weights::judge_shared(judging, s, o)
        }
        _ => oracle::judge(judging, &case.case.scenario, observation),
    }
}

/// Whom a difference from a case's pattern is charged to, besides the case's clauses.
struct Blame<'a> {
    /// The options oracle's departures from the suite's choices, when it found nothing binding.
    departures: Vec<String>,
    /// (path, clause) of the fields an oracle judges whole and found broken.
    judged_whole: Vec<(&'a str, &'a str)>,
}

/// The options oracle judges every key's outcome against all the text permits, and every
/// diagnostic: when it finds nothing binding but departures from the suite's choices, a
/// difference from the table is those departures' (an index list refused whole, IRM-005),
/// never the documented clause the case cites.
fn departures(judging: &Judging, case: &TableCase, violations: &[Violation]) -> Vec<String> {
    if case.capability() == ge_spec::Capability::Options && !judging.any_binding(violations) {
        let mut d: Vec<String> = violations.iter().map(|v| v.clause.clone()).collect();
        d.sort();
        d.dedup();
        d
    } else {
        Vec::new()
    }
}

/// Fields an oracle judges whole, under one clause: when it found that clause broken, a
/// difference from the table there is that clause's (refresh results that do not line up
/// with the script's refresh events cannot be read as answers to them; reports of aliases
/// and reuse are the reports' clauses), never the clauses the case cites.
fn judged_whole(case: &TableCase, violations: &[Violation]) -> Vec<(&'static str, &'static str)> {
    FIELDS_JUDGED_WHOLE
        .iter()
        .filter(|(cap, _, clause)| {
            *cap == case.capability() && violations.iter().any(|v| v.clause == *clause)
        })
        .map(|(_, path, clause)| (*path, *clause))
        .collect()
}

/// The differences between the case's `expect` pattern and the answer: each diagnostic list
/// compared as a set by the clauses that call for its diagnostics, every other mismatch
/// charged as [`Blame`] and the case's clauses say.
fn pattern_problems(
    judging: &Judging,
    case: &TableCase,
    expect: &serde_json::Value,
    actual: &pattern::Observed,
    blame: &Blame,
) -> Vec<Problem> {
    let spec = ge_spec::Spec::embedded();
    let matched = pattern::check_observed(expect, actual);
    let session = case.capability() == ge_spec::Capability::Session;
    let mut problems = Vec::new();
    for list in &matched.diagnostics {
        for v in
            oracle::diagnostics::compare(spec, &list.list, &list.expected, &list.actual, session)
        {
            problems.push(Problem::weighed(
                judging,
                vec![v.clause],
                format!("observation differs from the table: {}", v.message),
            ));
        }
    }
    if matched.mismatches.is_empty() {
        return problems;
    }
    let blamed = blamed_clauses(judging, case, blame);
    for m in &matched.mismatches {
        let blamed = match blame
            .judged_whole
            .iter()
            .find(|(path, _)| m.path.starts_with(path))
        {
            Some((_, clause)) => vec![(*clause).to_owned()],
            None => blamed.clone(),
        };
        problems.push(Problem::weighed(
            judging,
            blamed,
            format!("observation differs from the table {m}"),
        ));
    }
    problems
}

/// The clauses a pattern mismatch outside the fields judged whole breaks. When the case cites
/// only what the text states (or, upstream, what GE does), the departure breaks that; when it
/// cites suite choices too, the departure may be theirs alone, and they are named (a departure
/// from the text itself is the oracle's to find, under the clause it breaks).
fn blamed_clauses(judging: &Judging, case: &TableCase, blame: &Blame) -> Vec<String> {
    let spec = ge_spec::Spec::embedded();
    let clauses = &case.case.clauses;
    let choice = |c: &String| {
        spec.clause(c)
            .is_some_and(|c| c.is_suite_choice(judging.profile))
    };
    if !blame.departures.is_empty() {
        blame.departures.clone()
    } else if clauses.iter().any(choice) {
        clauses.iter().filter(|c| choice(c)).cloned().collect()
    } else {
        clauses.clone()
    }
}

/// The observation fields an oracle judges whole, each under one clause (see
/// [`judge_observation`]).
const FIELDS_JUDGED_WHOLE: &[(ge_spec::Capability, &str, &str)] = &[
    (ge_spec::Capability::Session, "/refreshes", "SES-019"),
    (ge_spec::Capability::Memory, "/aliases", "ORI-010"),
    (ge_spec::Capability::Memory, "/reused_inputs", "IRM-012"),
    (ge_spec::Capability::Memory, "/reused_outputs", "ORM-012"),
];

/// Under the upstream profile, takes the index file `meta.json` at the top of a weights
/// observation's directory out of its `files`, and out of the pattern's. GE writes it beside the
/// weights whenever it converts a constant (EXW-011's, EXW-014's and WGT-011's upstream
/// entries); the weights oracle, which judges every case, requires it then, on disk under the
/// mode's clause and in `files` under WGT-005 (the vocabulary's), and judges nothing but its
/// presence. The table comparison leaves it to the oracle, so that a file unlisted is charged
/// to the listing, never to the clause the case cites.
fn leave_out_meta(pattern: &mut serde_json::Value, observation: &mut Observation) {
    let Observation::Weights(o) = observation else {
        return;
    };
    let meta = match o.dir.as_str() {
        "" => return,
        "." => "meta.json".to_owned(),
        dir => format!("{dir}/meta.json"),
    };
    if let Some(files) = pattern
        .get_mut("files")
        .and_then(serde_json::Value::as_array_mut)
    {
        files.retain(|f| f.get("path").and_then(serde_json::Value::as_str) != Some(meta.as_str()));
    }
    o.files.retain(|f| f.path != meta);
}

/// The checks that need a second answer of the same backend, its twin. IFS-001, IBC-001: when
/// a transfer scenario leaves an option a plan acts on unset, asks for the same scenario with it
/// set to its default and compares the plans ([`oracle::transfer::judge_default_twin`]). DRM-015: when
/// `observation` is a memory plan made with reuse on, asks `backend` for the same graph with
/// reuse off and compares the two peaks ([`oracle::memory::judge_twin`]). FBR-003: when a session
/// refreshes a dynamic-shape graph with ge.featureBaseRefreshable at 1, asks for the same script
/// with the option unset and compares those refreshes ([`oracle::session::judge_refresh_twin`]).
/// The twin is a valid scenario of its own; when the backend cannot answer it (not supported, a
/// panic, errors), nothing is compared here.
pub fn reuse_twin_violations(
    judging: &Judging,
    backend: &dyn Backend,
    scenario: &Scenario,
    observation: &Observation,
) -> Vec<oracle::Violation> {
    match (scenario, observation) {
        (Scenario::Memory(s), Observation::Memory(on)) => {
            let Some(twin) = oracle::memory::reuse_off_twin(judging.profile, s) else {
                return Vec::new();
            };
            match ask(backend, &Scenario::Memory(twin), Path::new("")) {
                Ok(Ok(Observation::Memory(off))) => oracle::memory::judge_twin(s, on, &off),
                _ => Vec::new(),
            }
        }
        (Scenario::Transfer(s), Observation::Transfer(unset)) => {
            let mut out = Vec::new();
            for (key, twin) in oracle::transfer::default_twins(judging.profile, s) {
                if let Ok(Ok(Observation::Transfer(set))) =
                    ask(backend, &Scenario::Transfer(twin), Path::new(""))
                {
                    out.extend(oracle::transfer::judge_default_twin(key, unset, &set));
                }
            }
            out
        }
        (Scenario::Session(s), Observation::Session(on)) => {
            let Some(twin) = oracle::session::refresh_off_twin(s) else {
                return Vec::new();
            };
            match ask(backend, &Scenario::Session(twin), Path::new("")) {
                Ok(Ok(Observation::Session(off))) => {
                    oracle::session::judge_refresh_twin(s, on, &off)
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Runs `case` against `backend`, judged under `judging` (the caller picks the cases that run
/// under its profile: [`ge_spec::Case::runs_in`]). Weights cases get a fresh temporary sandbox,
/// inspected afterwards.
pub fn run_case(judging: &Judging, backend: &dyn Backend, case: &TableCase) -> Verdict {
    let case = &following_case(judging.profile, backend, case);
    let sandbox = match sandbox(&case.case.scenario) {
        Ok(dir) => dir,
        Err(e) => return Verdict::broke(format!("cannot create a sandbox directory: {e}")),
    };
    let declared = backend.capabilities().contains(&case.capability());
    match ask(backend, &case.case.scenario, sandbox_path(&sandbox)) {
        Err(panic) => Verdict::broke(panic),
        Ok(Err(ns)) if declared => Verdict::broke(format!(
            "the backend declares capability `{}` but answered not supported: {}",
            case.capability(),
            ns.reason
        )),
        Ok(Err(ns)) => Verdict::NotSupported(one_line(&ns.reason, MAX_TEXT)),
        Ok(Ok(_)) if !declared => Verdict::NotSupported(format!(
            "capability `{}` is not declared",
            case.capability()
        )),
        Ok(Ok(observation)) => judge_answer(judging, backend, case, observation, Some(&sandbox)),
    }
}

/// Judges `backend`'s answer to `case` as a certification does: against the case
/// ([`judge_observation`]), then the checks that ask the backend for a twin
/// ([`reuse_twin_violations`]), then, for weights, what is on disk in the sandbox and beside it.
/// `sandbox` is the directory the answer was made in, when the harness made it (a directory
/// the user names is inspected inside only). `eval --case` judges its answer here too, so a
/// case's reproducer gives the verdict its certification gave.
pub fn judge_answer(
    judging: &Judging,
    backend: &dyn Backend,
    case: &TableCase,
    observation: Observation,
    sandbox: Option<&Sandbox>,
) -> Verdict {
    judge_answer_in(judging, backend, case, observation, sandbox, None)
}

/// [`judge_answer`] for an answer made in the directory `dir`, which the harness did not make
/// (`eval --sandbox`): its inside is inspected, nothing beside it.
pub fn judge_answer_in_dir(
    judging: &Judging,
    backend: &dyn Backend,
    case: &TableCase,
    observation: Observation,
    dir: &Path,
) -> Verdict {
    judge_answer_in(judging, backend, case, observation, None, Some(dir))
}

fn judge_answer_in(
    judging: &Judging,
    backend: &dyn Backend,
    case: &TableCase,
    observation: Observation,
    sandbox: Option<&Sandbox>,
    dir: Option<&Path>,
) -> Verdict {
    let verdict = judge_observation(judging, case, observation.clone());
    let mut found = reuse_twin_violations(judging, backend, &case.case.scenario, &observation);
    if let (ge_spec::Scenario::Weights(s), ge_spec::Observation::Weights(o)) =
        (&case.case.scenario, &observation)
    {
        if let Some(path) = sandbox.map(sandbox_path).or(dir) {
            found.extend(oracle::weights::check_sandbox(judging, s, o, path));
        }
        if let Some(sandbox) = sandbox {
            found.extend(oracle::weights::beside(sandbox));
        }
    }
    if found.is_empty() {
        return verdict;
    }
    let mut problems = verdict.problems().to_vec();
    problems.extend(
        found
            .into_iter()
            .map(|v| Problem::weighed(judging, vec![v.clause], v.message)),
    );
    Verdict::of(problems)
}

/// Runs every case of `capability` (all cases when `None`) under `judging` and returns, for
/// each clause a failure implicates, the failing cases (deviations left out). Fault-injection
/// tests use it to prove that a deliberately wrong backend is caught by the clause it breaks.
pub fn caught_clauses(
    judging: &Judging,
    backend: &dyn Backend,
    capability: Option<ge_spec::Capability>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut caught: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for case in ge_spec::Spec::embedded().cases_in(judging.profile) {
        if capability.is_some_and(|c| c != case.capability()) {
            continue;
        }
        for clause in run_case(judging, backend, case).broken_clauses() {
            caught.entry(clause).or_default().push(case.full_name());
        }
    }
    caught
}
