//! The session oracle: judges the allocation/free trace, refresh results and refusals of any
//! backend against a session script, naming the clause each departure breaks.
//!
//! Two layers of checks:
//! - trace hygiene, whatever the script: block names (SES-014), no empty blocks (SES-015),
//!   steps in range and in order (SES-013), balance block by block (SES-010) and nothing held
//!   at the end (SES-011);
//! - a replay of the script under the clauses: for every step, the entries the clauses call for
//!   (as a multiset: order within a step is free, except what the balance check already fixes
//!   and the ascending unload order at the end, SES-011);
//!   a missing entry breaks the clause that calls for it, an extra one the clause that forbids
//!   it. Refresh results and refusals are checked the same way.
//!
//! The I/O bytes of a graph go where the profile's RZC clauses put them ([`io_of`]): a
//! `graph-<id>/io` block per execution or per load as documented; upstream, inside the feature
//! memory (static shape, `0`), nowhere (static shape, `1`), or per execution (dynamic shape).
//!
//! Option values come from the oracle's own reading of the tables ([`super::options`]): the
//! session's own (global and session maps) and one per load (SES-016); their errors and warnings
//! are the ones the observation must carry, those of one load naming its graph (SES-017).
//!
//! This file holds the judge, its check tables and the refresh twin (FBR-003); one family lives
//! in each submodule: `model` (blocks, pools and what each step needs), `pools` (the engine's
//! pools as traced, and whom a difference blames), `hygiene` (the first layer above), `replay`
//! (the second) and `entries` (the trace's entries against the replay).

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry, MAX_SCRIPT,
};
use ge_spec::{Diagnostic, OptionKey, OptionMaps, Profile, ShapeKind, Spec, Subject};

use super::diagnostics::{self, Expected};
use super::options::{ge_step, Alternative, Context, Reading, Values};
use super::{Called, Entry, Phase, Violation};
use crate::judging::Judging;

mod entries;
mod hygiene;
mod model;
mod pools;
mod replay;
use entries::*;
use hygiene::*;
use model::*;
use pools::*;
use replay::*;

/// The oracle's reading of the session's options (global and session maps) and of each event's
/// (`None` for events that are not loads), by the rules of SES-016.
fn readings(
    profile: Profile,
    scenario: &SessionScenario,
) -> (Rc<Reading>, Vec<Option<Rc<Reading>>>) {
    // The session's maps, and each load's graph map beside them in turn.
    let mut maps = OptionMaps {
        global: scenario.options.global.clone(),
        session: scenario.options.session.clone(),
        graph: BTreeMap::new(),
    };
    let session = Rc::new(Reading::new(profile, &maps, ctx(ShapeKind::Static)));
    // Loads whose graph maps set the same options, in the same shape, read alike: each pair
    // is read once (other keys only pass through, which a session does not report). A load
    // whose map sets none of the twelve, in a static shape, reads as the session does.
    type Read<'a> = (Vec<(&'a String, &'a String)>, ShapeKind, Rc<Reading>);
    let mut read: Vec<Read<'_>> = vec![(Vec::new(), ShapeKind::Static, Rc::clone(&session))];
    let mut loads = Vec::with_capacity(scenario.events.len());
    for event in &scenario.events {
        let SessionEvent::Load { shape, options, .. } = event else {
            loads.push(None);
            continue;
        };
        let graph = options.as_ref().unwrap_or(&scenario.options.graph);
        let set: Vec<(&String, &String)> = graph
            .iter()
            .filter(|(k, _)| k.parse::<OptionKey>().is_ok())
            .collect();
        let known = read.iter().find(|(g, s, _)| *g == set && s == shape);
        let r = match known {
            Some((_, _, r)) => Rc::clone(r),
            None => {
                maps.graph.clone_from(graph);
                let r = Rc::new(Reading::new(profile, &maps, ctx(*shape)));
                read.push((set, *shape, Rc::clone(&r)));
                r
            }
        };
        loads.push(Some(r));
    }
    (session, loads)
}

/// `f` of each load's reading (`None` for events that are not loads), worked out once per
/// reading: a reading shared with an earlier load takes that load's.
fn per_reading<T: Clone>(
    loads: &[Option<Rc<Reading>>],
    f: impl Fn(&Reading) -> T,
) -> Vec<Option<T>> {
    let mut out: Vec<Option<T>> = Vec::with_capacity(loads.len());
    for (i, r) in loads.iter().enumerate() {
        let v = r.as_ref().and_then(|r| {
            match loads[..i]
                .iter()
                .position(|e| e.as_ref().is_some_and(|e| Rc::ptr_eq(e, r)))
            {
                Some(j) => out[j].clone(),
                None => Some(f(r)),
            }
        });
        out.push(v);
    }
    out
}

/// The diagnostics of `of` that `base` does not have (multiset difference).
fn extra(of: &[Diagnostic], base: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut left: Vec<&Diagnostic> = base.iter().collect();
    let mut out = Vec::new();
    for d in of {
        match left.iter().position(|b| *b == d) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => out.push(d.clone()),
        }
    }
    out
}

/// The options' diagnostics a session reports (SES-017): the session's, then what each load adds,
/// naming its graph; errors and warnings, each required or optional.
fn option_diagnostics(
    scenario: &SessionScenario,
    session: &Reading,
    loads: &[Option<Rc<Reading>>],
) -> (Vec<Expected>, Vec<Expected>) {
    let lists = |r: &Reading| {
        [
            r.errors.clone(),
            r.optional_errors.clone(),
            r.warnings.clone(),
            r.optional_warnings.clone(),
        ]
    };
    let base = lists(session);
    let mut all = base.clone();
    for (event, r) in scenario.events.iter().zip(loads) {
        let (SessionEvent::Load { graph, .. }, Some(r)) = (event, r) else {
            continue;
        };
        let mark = |d: Diagnostic| Diagnostic {
            subject: d.subject.clone().in_graph(*graph),
            ..d
        };
        for ((list, of), base) in all.iter_mut().zip(lists(r)).zip(&base) {
            list.extend(extra(&of, base).into_iter().map(mark));
        }
    }
    for list in &mut all {
        list.sort();
        list.dedup();
    }
    let [errors, optional_errors, warnings, optional_warnings] = all;
    let expected = |required: Vec<Diagnostic>, optional: Vec<Diagnostic>| {
        let mut e: Vec<Expected> = required.iter().map(Expected::exact).collect();
        e.extend(optional.iter().map(Expected::optional));
        e
    };
    (
        expected(errors, optional_errors),
        expected(warnings, optional_warnings),
    )
}

/// The option the pools follow (SMP-015: the session's; upstream each graph's own, whose reading
/// has no alternatives).
const SESSION_KEYS: [OptionKey; 1] = [OptionKey::StaticMemoryPolicy];
/// The options each load acts on.
const LOAD_KEYS: [OptionKey; 2] = [
    OptionKey::ReuseZeroCopyMemory,
    OptionKey::FeatureBaseRefreshable,
];

/// Judges a session observation under `judging`: with the strict reading of the options, and,
/// when that finds a binding violation, with the other readings the text allows (see [`super::under_readings`]; here the k-th reading of the session and of every
/// load together).
pub fn judge(
    judging: &Judging,
    scenario: &SessionScenario,
    obs: &SessionObservation,
) -> Vec<Violation> {
    let events = &scenario.events;
    if events.len() as u64 > MAX_SCRIPT || scenario.executions() > MAX_SCRIPT {
        return judge_with(judging.profile, scenario, obs, None);
    }
    let (session, loads) = readings(judging.profile, scenario);
    let session: &Reading = &session;
    // The strict reading first, alone: most answers are judged by it only.
    let strict = per_reading(&loads, Reading::strict);
    let first = judge_with(
        judging.profile,
        scenario,
        obs,
        Some((session, &loads, &session.strict(), &strict)),
    );
    if !judging.any_binding(&first) {
        return first;
    }
    let planned = !obs.trace.is_empty() || !obs.refreshes.is_empty();
    let session_alts = session.alternatives(&SESSION_KEYS, planned);
    let load_alts = per_reading(&loads, |r| r.alternatives(&LOAD_KEYS, planned));
    let rounds = load_alts
        .iter()
        .flatten()
        .map(Vec::len)
        .chain([session_alts.len()])
        .max()
        .unwrap_or(1);
    let pick =
        |alts: &[Alternative], k: usize| -> Alternative { alts.get(k).unwrap_or(&alts[0]).clone() };
    // The k-th reading of the session and of every load together (the strict ones were round 0).
    for k in 1..rounds {
        let s = pick(&session_alts, k);
        let per_load: Vec<Option<Alternative>> = load_alts
            .iter()
            .map(|a| a.as_ref().map(|a| pick(a, k)))
            .collect();
        let mut v = judge_with(
            judging.profile,
            scenario,
            obs,
            Some((session, &loads, &s, &per_load)),
        );
        if judging.any_binding(&v) {
            continue;
        }
        let mut departs: Vec<String> = s.departs.clone();
        departs.extend(per_load.iter().flatten().flat_map(|a| a.departs.clone()));
        departs.sort();
        departs.dedup();
        for clause in departs {
            v.push(Violation::new(
                clause,
                "the answer follows another reading of the options than the suite's, one the text allows",
            ));
        }
        return v;
    }
    first
}

/// The readings a session is judged with: the session's and each load's, and the alternative
/// of each chosen.
type Chosen<'a> = (
    &'a Reading,
    &'a [Option<Rc<Reading>>],
    &'a Alternative,
    &'a [Option<Alternative>],
);

/// The steps of the refresh events of `scenario` that meet a dynamic-shape graph whatever the
/// engine chose where the text is silent: the graph was loaded once as dynamic-shape and not
/// loaded again before being unloaded (a second load of a loaded id is refused or not as the
/// engine chooses, SES-012, so its refreshes are left out).
fn dynamic_refresh_steps(scenario: &SessionScenario) -> BTreeSet<u32> {
    let mut loaded: BTreeMap<u32, Option<ShapeKind>> = BTreeMap::new();
    let mut steps = BTreeSet::new();
    for (step, event) in scenario.events.iter().enumerate() {
        match event {
            SessionEvent::Load { graph, shape, .. } => {
                let twice = loaded.contains_key(graph);
                loaded.insert(*graph, if twice { None } else { Some(*shape) });
            }
            SessionEvent::Unload { graph } => {
                loaded.remove(graph);
            }
            SessionEvent::Refresh { graph, .. }
                if loaded.get(graph) == Some(&Some(ShapeKind::Dynamic)) =>
            {
                if let Ok(step) = u32::try_from(step) {
                    steps.insert(step);
                }
            }
            _ => {}
        }
    }
    steps
}

/// FBR-003 (documented): on a dynamic-shape graph the option has no effect. What the default
/// does there the text leaves open (FBR-014 is the suite's reading), so the option's having no
/// effect is judged against the engine itself: the same script with the option unset everywhere
/// must refresh the dynamic-shape graphs alike. `None` unless the script refreshes a
/// dynamic-shape graph ([`dynamic_refresh_steps`]) and sets the option to nothing but `0` and
/// `1`, with some `1`.
pub fn refresh_off_twin(scenario: &SessionScenario) -> Option<SessionScenario> {
    let key = OptionKey::FeatureBaseRefreshable.as_str();
    let mut values: Vec<&String> = ge_spec::Level::ALL
        .iter()
        .filter_map(|&l| scenario.options.at(l).get(key))
        .collect();
    for event in &scenario.events {
        if let SessionEvent::Load {
            options: Some(m), ..
        } = event
        {
            values.extend(m.get(key));
        }
    }
    let plain = values.iter().all(|v| *v == "0" || *v == "1");
    if dynamic_refresh_steps(scenario).is_empty() || !plain || !values.iter().any(|v| *v == "1") {
        return None;
    }
    let mut twin = scenario.clone();
    for level in ge_spec::Level::ALL {
        twin.options.at_mut(level).remove(key);
    }
    for event in &mut twin.events {
        if let SessionEvent::Load {
            options: Some(m), ..
        } = event
        {
            m.remove(key);
        }
    }
    Some(twin)
}

/// FBR-003 against the [`refresh_off_twin`]: each refresh of a dynamic-shape graph is accepted
/// or refused as in the engine's own answer with the option unset. A refresh missing from
/// either answer is not compared here (SES-019 judges that).
pub fn judge_refresh_twin(
    scenario: &SessionScenario,
    on: &SessionObservation,
    off: &SessionObservation,
) -> Vec<Violation> {
    let ok = |o: &SessionObservation, step: u32| {
        o.refreshes.iter().find(|r| r.step == step).map(|r| r.ok)
    };
    for step in dynamic_refresh_steps(scenario) {
        if let (Some(a), Some(b)) = (ok(on, step), ok(off, step)) {
            if a != b {
                let said = |ok: bool| if ok { "accepted" } else { "refused" };
                return vec![Violation::new(
                    "FBR-003",
                    format_args!(
                        "the refresh at step {step}, of a dynamic-shape graph, is {} with ge.featureBaseRefreshable = 1 but {} with it unset: on a dynamic-shape graph the option has no effect",
                        said(a),
                        said(b)
                    ),
                )];
            }
        }
    }
    Vec::new()
}

/// Judges with one choice of readings (`None`: the script is over the caps, nothing is read):
/// the size limit, the options' warnings and refusals, the trace's hygiene, then the replay of
/// the script under the clauses and the answer against it, one clause at a time.
fn judge_with(
    profile: Profile,
    scenario: &SessionScenario,
    obs: &SessionObservation,
    chosen: Option<Chosen<'_>>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    if scenario.events.len() as u64 > MAX_SCRIPT || scenario.executions() > MAX_SCRIPT {
        super::run_table(OVER_LIMIT, obs, &mut out);
        return out;
    }
    let Some(chosen @ (session, loads, session_alt, load_alts)) = chosen else {
        return out;
    };
    let (errors, warnings) = option_diagnostics(scenario, session, loads);
    let opts = Optioned {
        obs,
        errors: &errors,
        warnings: &warnings,
    };
    super::run_table(WARNINGS, &opts, &mut out);
    let per_graph = refused_per_graph(profile, session);
    if !per_graph && (session_alt.rejected || load_alts.iter().flatten().any(|a| a.rejected)) {
        super::run_table(STOPPED, &opts, &mut out);
        return out;
    }
    let end = scenario.events.len() as u64;
    super::run_table(HYGIENE, &Traced { profile, obs, end }, &mut out);
    let replay = Replay::run(profile, scenario, obs, chosen, per_graph);
    if let Some(v) = refusal(scenario, &replay, obs, session, loads) {
        out.push(v);
        return out;
    }
    let cx = Replayed {
        replay,
        obs,
        warnings: &warnings,
    };
    super::run_table(REPLAYED, &cx, &mut out);
    out
}

/// A refusal of the whole script (errors, and no entry or refresh result where the script calls
/// for some) that the script's size allows ([`LARGE_SCRIPT`]: a departure from SES-020's
/// choice), or that a setting at a level where its option does not take effect allows, in the session's maps or a load's
/// ([`Reading::refusal_reason`]): a departure from OPT-002's choice, nothing more. `None`: the
/// answer is not such a refusal, or nothing allows one, and it is judged as the trace it is.
fn refusal(
    scenario: &SessionScenario,
    replay: &Replay<'_>,
    obs: &SessionObservation,
    session: &Reading,
    loads: &[Option<Rc<Reading>>],
) -> Option<Violation> {
    let due_anything =
        replay.wants.iter().any(|w| !w.want.is_empty()) || !replay.refreshes.is_empty();
    if !due_anything || obs.errors.is_empty() || !obs.trace.is_empty() || !obs.refreshes.is_empty()
    {
        return None;
    }
    let (events, executions) = (scenario.events.len() as u64, scenario.executions());
    if events > LARGE_SCRIPT || executions > LARGE_SCRIPT {
        return Some(Violation::new(
            "SES-020",
            format_args!(
                "a script of {events} events and {executions} executions, within the suite's bound of {MAX_SCRIPT}, is refused as too large"
            ),
        ));
    }
    std::iter::once(session)
        .chain(loads.iter().flatten().map(|r| &**r))
        .find_map(Reading::refusal_reason)
}

/// The size of script past which an engine may refuse a script as too large, its bound lower
/// than the suite's ([`MAX_SCRIPT`], SES-020): more than this many events, or executions in
/// all. The text sets no bound, and every engine has one; what the documented clauses need is
/// judged on scripts far below it (the generated scripts hold a few dozen events), so a refusal
/// above it departs from SES-020's choice only.
pub const LARGE_SCRIPT: u64 = 1_000;

/// A check of the phases whose context is [`SessionObservation`].
type ObservationCheck = Entry<fn(&SessionObservation) -> Vec<Violation>>;

/// The check of a script over the size limit.
const OVER_LIMIT: &[ObservationCheck] = &[Entry {
    clauses: &["SES-020"],
    name: "check_size_limit",
    run: |obs| {
        let mut out = Vec::new();
        check_size_limit(obs, &mut out);
        out
    },
}];

/// What the checks of the options read: the observation and the options' errors and warnings
/// ([`option_diagnostics`]).
struct Optioned<'a> {
    obs: &'a SessionObservation,
    errors: &'a [Expected],
    warnings: &'a [Expected],
}

/// A check of the options.
type OptionCheck = Entry<fn(&Optioned<'_>) -> Vec<Violation>>;

/// The check of the options' warnings, first of any script within the limit.
const WARNINGS: &[OptionCheck] = &[Entry {
    clauses: &["SES-017"],
    name: "check_option_warnings",
    run: |cx| check_option_warnings(Spec::embedded(), cx.warnings, cx.obs),
}];

/// The check of a script a rejected option stops.
const STOPPED: &[OptionCheck] = &[Entry {
    clauses: &["SES-017"],
    name: "check_options_stop",
    run: |cx| {
        let mut out = Vec::new();
        check_options_stop(Spec::embedded(), cx.errors, cx.warnings, cx.obs, &mut out);
        out
    },
}];

/// What the checks of the answer against the replay read.
struct Replayed<'a> {
    replay: Replay<'a>,
    obs: &'a SessionObservation,
    /// The options' warnings ([`option_diagnostics`]).
    warnings: &'a [Expected],
}

/// A check of the phases whose context is [`Replayed`].
type ReplayedCheck = Entry<fn(&Replayed<'_>) -> Vec<Violation>>;

/// The checks of the answer against the replay of the script under the clauses, in order.
const REPLAYED: &[ReplayedCheck] = &[
    Entry {
        clauses: &["SES-017"],
        name: "entries::check_nothing_ran",
        run: |cx| check_nothing_ran(&cx.replay, cx.obs).into_iter().collect(),
    },
    Entry {
        clauses: &[
            "SES-010", "SES-011", "SES-012", "SES-013", "SES-014", "SES-017", "SES-018", "SMP-010",
            "SMP-011", "SMP-012", "SMP-013", "SMP-014", "SMP-015", "SMP-016", "RZC-010", "RZC-011",
            "RZC-012", "RZC-013",
        ],
        name: "entries::check_entries",
        run: |cx| {
            let mut out = Vec::new();
            check_entries(&cx.replay, cx.obs, &mut out);
            out
        },
    },
    Entry {
        clauses: &["SMP-011", "SMP-014", "SMP-015", "SMP-016"],
        name: "pools::check_cover",
        run: |cx| cx.replay.short.clone(),
    },
    Entry {
        clauses: &["SES-019"],
        name: "entries::check_refresh_order",
        run: |cx| {
            check_refresh_order(&cx.replay, cx.obs)
                .into_iter()
                .collect()
        },
    },
    Entry {
        clauses: &[
            "SES-012", "FBR-010", "FBR-011", "FBR-012", "FBR-013", "FBR-014",
        ],
        name: "entries::check_refresh_decisions",
        run: |cx| {
            let mut out = Vec::new();
            check_refresh_decisions(&cx.replay, cx.obs, &mut out);
            out
        },
    },
    Entry {
        clauses: &["SES-012", "FBR-011", "FBR-013", "FBR-014", "SES-017"],
        name: "entries::check_refusals",
        run: |cx| check_refusals(Spec::embedded(), &cx.replay, cx.obs, cx.warnings),
    },
];

/// The checks the drivers call themselves: the twin comparison of FBR-003, and what the
/// replay decides (the clauses its checks charge come from it).
const CALLED: &[Called] = &[
    Entry {
        clauses: &["FBR-003"],
        name: "judge_refresh_twin",
        run: (),
    },
    Entry {
        clauses: &["FBR-010", "FBR-011", "FBR-012", "FBR-013", "FBR-014"],
        name: "replay::refresh_decision",
        run: (),
    },
];

/// The checks of the session oracle, by phase, for the registry.
pub(super) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("a script over the size limit", OVER_LIMIT),
        Phase::of("the options' warnings", WARNINGS),
        Phase::of("a script a rejected option stops", STOPPED),
        Phase::of("the trace's hygiene", HYGIENE),
        Phase::of("the answer against the replay", REPLAYED),
        Phase::called("by the driver", CALLED),
    ]
}

/// A violation of `clause` when the observation ran any of a script that stops (`why`).
fn ran_anyway(obs: &SessionObservation, clause: &str, why: &str) -> Option<Violation> {
    (!obs.trace.is_empty() || !obs.refreshes.is_empty()).then(|| {
        Violation::new(
            clause,
            format_args!(
                "{why}, yet the script ran ({} trace entries, {} refresh results)",
                obs.trace.len(),
                obs.refreshes.len()
            ),
        )
    })
}

/// SES-020: a script over the size limit runs nothing and is refused with an error naming
/// SES-020.
fn check_size_limit(obs: &SessionObservation, out: &mut Vec<Violation>) {
    out.extend(ran_anyway(
        obs,
        "SES-020",
        "the script is over the size limit",
    ));
    if !obs.errors.iter().any(|d| d.clause == "SES-020") {
        out.push(Violation::new(
            "SES-020",
            "a script over the size limit is refused with an error naming SES-020",
        ));
    }
}

/// SES-017: the warnings are the options' ([`option_diagnostics`]).
fn check_option_warnings(
    spec: &Spec,
    warnings: &[Expected],
    obs: &SessionObservation,
) -> Vec<Violation> {
    diagnostics::compare(spec, "warnings", warnings, &obs.warnings, true)
}

/// SES-017: whether a rejected option is one load's refusal rather than the whole script's: as
/// documented any rejected option stops the script; upstream only a value GE refuses at
/// initialisation or session creation does, and each other refusal is one load's.
fn refused_per_graph(profile: Profile, session: &Reading) -> bool {
    profile == Profile::Upstream && !session.errors.iter().any(|d| ge_step(d) <= 1)
}

/// SES-017: a rejected option that stops the script: nothing runs, and the errors are the
/// options' ([`option_diagnostics`]).
fn check_options_stop(
    spec: &Spec,
    option_errors: &[Expected],
    warnings: &[Expected],
    obs: &SessionObservation,
    out: &mut Vec<Violation>,
) {
    out.extend(ran_anyway(obs, "SES-017", "an option is rejected"));
    out.extend(diagnostics::compare_beside(
        spec,
        "errors",
        option_errors,
        &obs.errors,
        true,
        warnings,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_pool_fits_parts_largest_first_and_adds_what_fits_nowhere() {
        // (held blocks, parts) -> blocks added, with the index of their part
        type Case<'a> = (&'a [u64], &'a [(u64, bool)], &'a [(usize, u64)]);
        let cases: [Case; 6] = [
            (&[], &[(1024, true), (256, true)], &[(0, 1024), (1, 256)]),
            (&[1024, 256], &[(1024, true), (256, true)], &[]),
            (&[1280], &[(1024, true), (256, true)], &[]),
            // The part never allocated still takes room: the feature part no longer fits.
            (&[2560], &[(1024, true), (2048, false)], &[(0, 1024)]),
            (&[], &[(1024, true), (2048, false)], &[(0, 1024)]),
            (&[], &[(3 << 20, true), (0, true)], &[(0, 4 << 20)]),
        ];
        for (held, parts, want) in cases {
            assert_eq!(pool_additions(held, parts), want, "{held:?} {parts:?}");
        }
    }

    #[test]
    fn the_environment_variable_counts_upstream_only_and_as_exact_text() {
        let up = Profile::Upstream;
        let doc = Profile::Documented;
        // (profile, option policy, variable) -> (policy in force, variable decides)
        let cases = [
            (doc, 0, Some("4"), (0, true)),
            (doc, 2, Some("2"), (2, false)),
            (up, 0, None, (0, false)),
            (up, 0, Some("1"), (2, true)),
            (up, 0, Some("2"), (2, true)),
            (up, 0, Some("3"), (3, true)),
            (up, 0, Some("4"), (4, true)),
            (up, 2, Some("3"), (4, true)),
            (up, 3, Some("2"), (4, true)),
            (up, 4, Some("2"), (4, false)),
            (up, 2, Some("2"), (2, false)),
            (up, 0, Some(" 2"), (0, false)),
            (up, 0, Some("02"), (0, false)),
            (up, 0, Some("0"), (0, false)),
        ];
        for (profile, policy, env, want) in cases {
            assert_eq!(
                pools_policy(profile, policy, env),
                want,
                "{profile:?} {policy} {env:?}"
            );
        }
    }
}
