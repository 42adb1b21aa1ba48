//! Deliberately wrong session backends: each wraps the reference with one fault the contract
//! forbids, and must be caught by the session cases naming the clause the fault breaks; the
//! upstream ones wrap the upstream reference and are judged under the upstream profile.

use crate::common;

use std::collections::BTreeSet;

use ge_conformance::judging::Judging;
use ge_conformance::runner::caught_clauses;
use ge_reference::Reference;
use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry, MAX_SCRIPT,
};
use ge_spec::Profile;
use ge_spec::{Answer, Backend, Capability};
use rstest::rstest;

const SMP: &str = "ge.exec.staticMemoryPolicy";
const RZC: &str = "ge.exec.reuseZeroCopyMemory";
const FBR: &str = "ge.featureBaseRefreshable";

/// One fault each.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// The shared pool keeps its first size: a larger graph never makes it grow.
    PoolNeverGrows,
    /// The pool is allocated at twice the largest need: the text allocates the memory the
    /// largest graph needs.
    PoolOversized,
    /// A pool that grows is allocated at its new size before the smaller one is freed: the
    /// text releases the previous graph's memory first, then reallocates.
    PoolAllocatedBeforeFree,
    /// A static-shape load that needs less than the pool holds takes the pool again at its own
    /// size, while a larger graph still draws on it.
    PoolShrinksUnderLargerUser,
    /// The static pool is freed when one of its graphs unloads while another still draws on it.
    PoolFreedWithUsersLeft,
    /// Zero-copy areas are taken per execution although reuse is on.
    ZeroCopyReallocatedWithReuseOn,
    /// One zero-copy area is kept although reuse is off.
    ZeroCopyReusedWithReuseOff,
    /// Per-execution zero-copy areas are never freed by their execution.
    ZeroCopyNotFreedPerExecution,
    /// The feature base can be refreshed again although the option is 0.
    RefreshAllowedTwiceWithOptionOff,
    /// The option 1 is ignored: static-shape graphs refresh only once.
    RefreshOnceWithOptionOn,
    /// The first setting of the base is refused where the graph is not refreshable (the
    /// option 0, or a dynamic shape): the base counts as set at load.
    FirstRefreshRefused,
    /// A base smaller than the feature memory is accepted.
    SmallBaseAccepted,
    /// A dynamic-shape graph honours the option 1.
    DynamicGraphRefreshable,
    /// No warning when the option is set for a dynamic-shape graph.
    NoDynamicShapeWarning,
    /// A shared pool is used under policy 0.
    SharedPoolUnderPolicy0,
    /// Dynamic-shape graphs are pooled under policy 2.
    DynamicPooledUnderPolicy2,
    /// Graphs still loaded at the end of the script are never unloaded.
    NoUnloadAtEnd,
    /// At the end of the script the graphs are unloaded in descending id order.
    EndUnloadsDescending,
    /// Events on graphs that are not loaded pass silently.
    ScriptErrorsSilent,
    /// End-of-script releases are recorded one step too late.
    EndReleasesMisnumbered,
    /// The static pool is called something else.
    PoolMisnamed,
    /// Empty I/O areas are allocated and freed.
    ZeroByteBlocks,
    /// Frees of feature blocks report one byte more than was allocated.
    FreeSizeMismatch,
    /// A load's own graph-level map is ignored: the options given with that graph do not take
    /// effect at graph level, which breaks the option's documented level (caught through
    /// RZC-010), not only the suite's vocabulary of maps (SES-016).
    LoadMapIgnored,
    /// A rejected option stops nothing: the script runs on defaults.
    RunsDespiteRejectedOption,
    /// A refresh replaces the feature block: it allocates and frees feature memory.
    RefreshTouchesTrace,
    /// Refused refreshes have no result.
    RefusedRefreshWithoutResult,
    /// A script over the size limit is silently not run.
    OversizedScriptSilent,
    /// The cap on events is off by one: 100,001 events run (as if the last were absent).
    EventCapOffByOne,
    /// A refresh refused because the option is 0 gets no error.
    RefusalUnreported,
}

#[derive(Debug)]
struct Faulty(Fault);

/// Sets `key` to `value` at graph level for every graph of the script.
fn force_graph_option(s: &mut SessionScenario, key: &str, value: &str) {
    s.options.graph.insert(key.into(), value.into());
    for e in &mut s.events {
        if let SessionEvent::Load {
            options: Some(m), ..
        } = e
        {
            m.insert(key.into(), value.into());
        }
    }
}

/// The staticMemoryPolicy the session asks for (session level over global, default 0).
fn policy(s: &SessionScenario) -> String {
    s.options
        .session
        .get(SMP)
        .or(s.options.global.get(SMP))
        .cloned()
        .unwrap_or_else(|| "0".into())
}

fn is_pool(name: &str) -> bool {
    name.ends_with("-pool")
}

fn entry(step: u32, action: TraceAction, pool: String, bytes: u64) -> TraceEntry {
    TraceEntry {
        step,
        action,
        pool,
        bytes,
    }
}

/// The reference's `trace` with the static pool cut below a loaded user's need, as `fault`
/// says: retaken at a smaller load's size, or freed at an unload that leaves users. The pool's
/// later entries are kept balanced (a free gives back what is held; one of a pool no longer
/// held is dropped), so the one clause broken is the pool's size under its users.
fn pool_cut_short(
    fault: Fault,
    scenario: &SessionScenario,
    trace: &[TraceEntry],
) -> Vec<TraceEntry> {
    const POOL: &str = "static-pool";
    let mut held: Option<u64> = None;
    let mut users = BTreeSet::new();
    let mut out = Vec::new();
    let mut entries = trace.iter().peekable();
    for (step, event) in (0u32..).zip(&scenario.events) {
        while let Some(e) = entries.next_if(|e| e.step == step) {
            let mut e = e.clone();
            if e.pool == POOL {
                match e.action {
                    TraceAction::Alloc => held = Some(e.bytes),
                    TraceAction::Free => match held.take() {
                        Some(bytes) => e.bytes = bytes,
                        None => continue,
                    },
                }
            }
            out.push(e);
        }
        match (fault, event) {
            (
                Fault::PoolShrinksUnderLargerUser,
                SessionEvent::Load {
                    graph,
                    shape: ge_spec::ShapeKind::Static,
                    feature_bytes,
                    ..
                },
            ) => {
                users.insert(*graph);
                if let Some(h) = held.filter(|h| *feature_bytes > 0 && feature_bytes < h) {
                    out.push(entry(step, TraceAction::Free, POOL.into(), h));
                    out.push(entry(step, TraceAction::Alloc, POOL.into(), *feature_bytes));
                    held = Some(*feature_bytes);
                }
            }
            (
                _,
                SessionEvent::Load {
                    graph,
                    shape: ge_spec::ShapeKind::Static,
                    ..
                },
            ) => {
                users.insert(*graph);
            }
            (Fault::PoolFreedWithUsersLeft, SessionEvent::Unload { graph }) => {
                let others_left = users.remove(graph) && !users.is_empty();
                if let Some(h) = held.take_if(|_| others_left) {
                    out.push(entry(step, TraceAction::Free, POOL.into(), h));
                }
            }
            (_, SessionEvent::Unload { graph }) => {
                users.remove(graph);
            }
            _ => {}
        }
    }
    for e in entries {
        let mut e = e.clone();
        if e.pool == POOL && e.action == TraceAction::Free {
            match held.take() {
                Some(bytes) => e.bytes = bytes,
                None => continue,
            }
        }
        out.push(e);
    }
    out
}

impl Faulty {
    // Long because: one arm per fault of the table above, each the fault it names, read on its own.
    fn run(&self, scenario: &SessionScenario) -> SessionObservation {
        let mut s = scenario.clone();
        match self.0 {
            Fault::ZeroCopyReallocatedWithReuseOn => force_graph_option(&mut s, RZC, "0"),
            Fault::ZeroCopyReusedWithReuseOff => force_graph_option(&mut s, RZC, "1"),
            Fault::RefreshAllowedTwiceWithOptionOff => force_graph_option(&mut s, FBR, "1"),
            Fault::RefreshOnceWithOptionOn => force_graph_option(&mut s, FBR, "0"),
            Fault::SharedPoolUnderPolicy0 if policy(&s) == "0" => {
                s.options.session.insert(SMP.into(), "4".into());
            }
            Fault::DynamicPooledUnderPolicy2 if policy(&s) == "2" => {
                s.options.session.insert(SMP.into(), "4".into());
            }
            Fault::EventCapOffByOne if s.events.len() as u64 == MAX_SCRIPT + 1 => {
                s.events.pop();
            }
            Fault::LoadMapIgnored => {
                for e in &mut s.events {
                    if let SessionEvent::Load { options, .. } = e {
                        *options = None;
                    }
                }
            }
            _ => {}
        }
        let mut obs = ge_reference::session::run(Profile::Documented, &s)
            .expect("the reference runs sessions");
        let end = scenario.events.len() as u32;
        match self.0 {
            Fault::PoolNeverGrows => {
                let mut size = std::collections::BTreeMap::new();
                let mut out = Vec::new();
                let mut i = 0;
                while i < obs.trace.len() {
                    let mut e = obs.trace[i].clone();
                    if is_pool(&e.pool) {
                        let next = obs.trace.get(i + 1);
                        let growth = e.action == TraceAction::Free
                            && next.is_some_and(|n| {
                                n.pool == e.pool && n.action == TraceAction::Alloc
                            });
                        if growth {
                            i += 2;
                            continue;
                        }
                        match e.action {
                            TraceAction::Alloc => {
                                size.insert(e.pool.clone(), e.bytes);
                            }
                            TraceAction::Free => e.bytes = size.remove(&e.pool).unwrap_or(0),
                        }
                    }
                    out.push(e);
                    i += 1;
                }
                obs.trace = out;
            }
            Fault::PoolShrinksUnderLargerUser | Fault::PoolFreedWithUsersLeft
                if matches!(policy(&s).as_str(), "2" | "4") =>
            {
                obs.trace = pool_cut_short(self.0, scenario, &obs.trace);
            }
            Fault::PoolAllocatedBeforeFree => {
                for i in 1..obs.trace.len() {
                    let (a, b) = (&obs.trace[i - 1], &obs.trace[i]);
                    if a.step == b.step
                        && is_pool(&a.pool)
                        && a.pool == b.pool
                        && a.action == TraceAction::Free
                        && b.action == TraceAction::Alloc
                    {
                        obs.trace.swap(i - 1, i);
                    }
                }
            }
            Fault::PoolOversized => {
                for e in &mut obs.trace {
                    if is_pool(&e.pool) {
                        e.bytes = e.bytes.saturating_mul(2);
                    }
                }
            }
            Fault::ZeroCopyNotFreedPerExecution => {
                let executes: BTreeSet<u32> = scenario
                    .events
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| matches!(e, SessionEvent::Execute { .. }))
                    .map(|(i, _)| i as u32)
                    .collect();
                obs.trace.retain(|e| {
                    !(e.action == TraceAction::Free
                        && e.pool.ends_with("/io")
                        && executes.contains(&e.step))
                });
            }
            Fault::FirstRefreshRefused => refuse_first_setting(scenario, &mut obs),
            Fault::SmallBaseAccepted | Fault::DynamicGraphRefreshable => {
                let clause = match self.0 {
                    Fault::SmallBaseAccepted => "FBR-013",
                    _ => "FBR-014",
                };
                let steps: BTreeSet<u32> = obs
                    .errors
                    .iter()
                    .filter(|d| d.clause == clause)
                    .filter_map(|d| d.subject.step)
                    .collect();
                obs.errors.retain(|d| d.clause != clause);
                for r in &mut obs.refreshes {
                    if steps.contains(&r.step) {
                        r.ok = true;
                    }
                }
            }
            Fault::NoDynamicShapeWarning => obs.warnings.retain(|d| d.clause != "FBR-003"),
            Fault::NoUnloadAtEnd => obs.trace.retain(|e| e.step != end),
            Fault::EndUnloadsDescending => {
                let at = obs.trace.iter().position(|e| e.step == end);
                if let Some(at) = at {
                    obs.trace[at..].reverse();
                }
            }
            Fault::ScriptErrorsSilent => obs.errors.retain(|d| d.clause != "SES-012"),
            Fault::EndReleasesMisnumbered => {
                for e in &mut obs.trace {
                    if e.step == end {
                        e.step += 1;
                    }
                }
            }
            Fault::PoolMisnamed => {
                for e in &mut obs.trace {
                    if e.pool == "static-pool" {
                        e.pool = "pool-static".into();
                    }
                }
            }
            Fault::ZeroByteBlocks => {
                for (i, e) in scenario.events.iter().enumerate() {
                    if let SessionEvent::Load {
                        graph, io_bytes: 0, ..
                    } = e
                    {
                        let name = format!("graph-{graph}/io");
                        obs.trace
                            .push(entry(i as u32, TraceAction::Alloc, name.clone(), 0));
                        obs.trace.push(entry(i as u32, TraceAction::Free, name, 0));
                    }
                }
                obs.trace.sort_by_key(|e| e.step);
            }
            Fault::FreeSizeMismatch => {
                for e in &mut obs.trace {
                    if e.action == TraceAction::Free && e.pool.ends_with("/feature") {
                        e.bytes = e.bytes.saturating_add(1);
                    }
                }
            }
            Fault::RunsDespiteRejectedOption if obs.trace.is_empty() && !obs.errors.is_empty() => {
                let mut plain = scenario.clone();
                plain.options = Default::default();
                for e in &mut plain.events {
                    if let SessionEvent::Load { options, .. } = e {
                        *options = None;
                    }
                }
                if let Ok(ran) = ge_reference::session::run(Profile::Documented, &plain) {
                    obs.trace = ran.trace;
                    obs.refreshes = ran.refreshes;
                }
            }
            Fault::RefreshTouchesTrace => {
                for r in obs.refreshes.clone() {
                    if r.ok {
                        let name = format!("graph-{}/feature", r.graph);
                        obs.trace
                            .push(entry(r.step, TraceAction::Alloc, name.clone(), 1));
                        obs.trace.push(entry(r.step, TraceAction::Free, name, 1));
                    }
                }
                obs.trace.sort_by_key(|e| e.step);
            }
            Fault::RefusedRefreshWithoutResult => obs.refreshes.retain(|r| r.ok),
            Fault::OversizedScriptSilent => obs.errors.retain(|d| d.clause != "SES-020"),
            Fault::RefusalUnreported => obs.errors.retain(|d| d.clause != "FBR-011"),
            _ => {}
        }
        obs
    }
}

/// Refuses, for each load of a graph that is not refreshable (the option off, or a dynamic
/// shape), the first refresh the reference accepts: the base counts as set at load, so there is
/// no initial setting to allow (FBR-012 is the suite's reading; the text says nothing of it).
fn refuse_first_setting(
    s: &SessionScenario,
    obs: &mut ge_spec::vocab::session::SessionObservation,
) {
    let level = |map: &std::collections::BTreeMap<String, String>| map.get(FBR).cloned();
    let inherited = level(&s.options.graph)
        .or_else(|| level(&s.options.session))
        .or_else(|| level(&s.options.global));
    // Per graph: refreshable as loaded, and whether a refresh has been accepted since.
    let mut loaded: std::collections::BTreeMap<u32, (bool, bool)> = Default::default();
    let mut refused_steps = BTreeSet::new();
    for (step, e) in s.events.iter().enumerate() {
        match e {
            SessionEvent::Load {
                graph,
                shape,
                options,
                ..
            } => {
                let value = match options {
                    Some(own) => level(own)
                        .or_else(|| level(&s.options.session))
                        .or_else(|| level(&s.options.global)),
                    None => inherited.clone(),
                };
                let refreshable =
                    value.as_deref() == Some("1") && *shape == ge_spec::ShapeKind::Static;
                loaded.entry(*graph).or_insert((refreshable, false));
            }
            SessionEvent::Unload { graph } => {
                loaded.remove(graph);
            }
            SessionEvent::Refresh { graph, .. } => {
                let accepted = obs
                    .refreshes
                    .iter()
                    .any(|r| r.step as usize == step && r.ok);
                if let Some((refreshable, set)) = loaded.get_mut(graph) {
                    if accepted && !*refreshable && !*set {
                        refused_steps.insert(step as u32);
                    }
                    *set |= accepted;
                }
            }
            _ => {}
        }
    }
    for r in &mut obs.refreshes {
        if refused_steps.contains(&r.step) {
            r.ok = false;
        }
    }
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "faulty-session"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Session].into_iter().collect()
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        Ok(self.run(scenario))
    }
}

#[test]
fn reference_is_caught_by_nothing() {
    let caught = caught_clauses(
        &Judging::DEFAULT.strict(),
        &Reference,
        Some(Capability::Session),
    );
    assert!(caught.is_empty(), "the reference fails {caught:#?}");
}

#[rstest]
#[case::pool_never_grows(Fault::PoolNeverGrows, "SMP-011")]
#[case::pool_oversized(Fault::PoolOversized, "SMP-011")]
#[case::pool_allocated_before_the_old_is_freed(Fault::PoolAllocatedBeforeFree, "SMP-011")]
#[case::pool_shrinks_under_larger_user(Fault::PoolShrinksUnderLargerUser, "SMP-011")]
#[case::pool_freed_with_users_left(Fault::PoolFreedWithUsersLeft, "SMP-011")]
#[case::zero_copy_reallocated_with_reuse_on(Fault::ZeroCopyReallocatedWithReuseOn, "RZC-012")]
#[case::zero_copy_reused_with_reuse_off(Fault::ZeroCopyReusedWithReuseOff, "RZC-010")]
#[case::zero_copy_not_freed_per_execution(Fault::ZeroCopyNotFreedPerExecution, "RZC-011")]
#[case::refresh_allowed_twice_with_option_off(Fault::RefreshAllowedTwiceWithOptionOff, "FBR-011")]
#[case::refresh_once_with_option_on(Fault::RefreshOnceWithOptionOn, "FBR-010")]
#[case::first_refresh_refused(Fault::FirstRefreshRefused, "FBR-012")]
#[case::small_base_accepted(Fault::SmallBaseAccepted, "FBR-013")]
#[case::dynamic_graph_refreshable(Fault::DynamicGraphRefreshable, "FBR-014")]
#[case::no_dynamic_shape_warning(Fault::NoDynamicShapeWarning, "OPT-008")]
#[case::shared_pool_under_policy_0(Fault::SharedPoolUnderPolicy0, "SMP-010")]
#[case::dynamic_pooled_under_policy_2(Fault::DynamicPooledUnderPolicy2, "SMP-014")]
#[case::no_unload_at_end(Fault::NoUnloadAtEnd, "SES-011")]
#[case::end_unloads_descending(Fault::EndUnloadsDescending, "SES-011")]
#[case::script_errors_silent(Fault::ScriptErrorsSilent, "SES-012")]
#[case::end_releases_misnumbered(Fault::EndReleasesMisnumbered, "SES-013")]
#[case::pool_misnamed(Fault::PoolMisnamed, "SES-014")]
#[case::zero_byte_blocks(Fault::ZeroByteBlocks, "SES-015")]
#[case::free_size_mismatch(Fault::FreeSizeMismatch, "SES-010")]
#[case::load_map_ignored(Fault::LoadMapIgnored, "RZC-010")]
#[case::runs_despite_rejected_option(Fault::RunsDespiteRejectedOption, "SES-017")]
#[case::refresh_touches_trace(Fault::RefreshTouchesTrace, "SES-018")]
#[case::refused_refresh_without_result(Fault::RefusedRefreshWithoutResult, "SES-019")]
#[case::oversized_script_silent(Fault::OversizedScriptSilent, "SES-020")]
#[case::event_cap_off_by_one(Fault::EventCapOffByOne, "SES-020")]
#[case::refusal_unreported(Fault::RefusalUnreported, "FBR-015")]
fn fault_is_caught(#[case] fault: Fault, #[case] clause: &str) {
    let caught = caught_clauses(
        &Judging::failing(Profile::Documented, clause),
        &Faulty(fault),
        Some(Capability::Session),
    );
    assert!(
        caught.contains_key(clause),
        "{fault:?} should be caught by {clause}; caught: {caught:#?}"
    );
    common::assert_no_failure_at_documented_for_a_choice(
        &fault,
        &Faulty(fault),
        Capability::Session,
        Profile::Documented,
        clause,
    );
}

/// The oracle alone, without the tables' expectations, names the clause: every session case's
/// scenario is judged on the faulty backend's observation.
#[rstest]
#[case(Fault::PoolNeverGrows, "SMP-011")]
#[case(Fault::PoolOversized, "SMP-011")]
#[case(Fault::PoolAllocatedBeforeFree, "SMP-011")]
#[case(Fault::PoolShrinksUnderLargerUser, "SMP-011")]
#[case(Fault::PoolFreedWithUsersLeft, "SMP-011")]
#[case(Fault::ZeroCopyReallocatedWithReuseOn, "RZC-012")]
#[case(Fault::ZeroCopyReusedWithReuseOff, "RZC-010")]
#[case(Fault::ZeroCopyNotFreedPerExecution, "RZC-011")]
#[case(Fault::RefreshAllowedTwiceWithOptionOff, "FBR-011")]
#[case(Fault::RefreshOnceWithOptionOn, "FBR-010")]
#[case(Fault::FirstRefreshRefused, "FBR-012")]
#[case(Fault::SmallBaseAccepted, "FBR-013")]
#[case(Fault::DynamicGraphRefreshable, "FBR-014")]
#[case(Fault::NoDynamicShapeWarning, "OPT-008")]
#[case(Fault::SharedPoolUnderPolicy0, "SMP-010")]
#[case(Fault::DynamicPooledUnderPolicy2, "SMP-014")]
#[case(Fault::NoUnloadAtEnd, "SES-011")]
#[case(Fault::EndUnloadsDescending, "SES-011")]
#[case(Fault::ScriptErrorsSilent, "SES-012")]
#[case(Fault::EndReleasesMisnumbered, "SES-013")]
#[case(Fault::PoolMisnamed, "SES-014")]
#[case(Fault::ZeroByteBlocks, "SES-015")]
#[case(Fault::FreeSizeMismatch, "SES-010")]
#[case(Fault::RunsDespiteRejectedOption, "SES-017")]
#[case(Fault::RefreshTouchesTrace, "SES-018")]
#[case(Fault::RefusedRefreshWithoutResult, "SES-019")]
#[case(Fault::OversizedScriptSilent, "SES-020")]
fn oracle_alone_names_the_clause(#[case] fault: Fault, #[case] clause: &str) {
    let mut named = BTreeSet::new();
    for case in ge_spec::Spec::embedded().cases() {
        if let ge_spec::Scenario::Session(s) = &case.case.scenario {
            for v in ge_conformance::oracle::session::judge(
                &Judging::DEFAULT.strict(),
                s,
                &Faulty(fault).run(s),
            ) {
                named.insert(v.clause);
            }
        }
    }
    assert!(
        named.contains(clause),
        "{fault:?}: the oracle should name {clause}; it named {named:?}"
    );
}

/// Upstream engines, each wrapping the upstream reference with one fault the upstream profile
/// forbids.
#[derive(Debug, Clone, Copy)]
enum UpstreamFault {
    /// A load refused on its options stops the whole script, as the documented profile has it:
    /// the option errors are reported and nothing runs (SES-017's upstream entry refuses that
    /// load alone).
    WholeScriptStops,
    /// A load refused on its options loads anyway, the script running on default options.
    RefusedGraphLoads,
}

#[derive(Debug)]
struct UpstreamFaulty(UpstreamFault);

impl UpstreamFaulty {
    fn run(&self, scenario: &SessionScenario) -> SessionObservation {
        let mut obs = ge_reference::session::run(Profile::Upstream, scenario)
            .expect("the reference runs sessions");
        // A refusal of one load's options is the only error naming a graph.
        if !obs.errors.iter().any(|d| d.subject.graph.is_some()) {
            return obs;
        }
        match self.0 {
            UpstreamFault::WholeScriptStops => {
                obs.trace.clear();
                obs.refreshes.clear();
                obs.errors.retain(|d| d.subject.step.is_none());
            }
            UpstreamFault::RefusedGraphLoads => {
                let mut plain = scenario.clone();
                plain.options = Default::default();
                for e in &mut plain.events {
                    if let SessionEvent::Load { options, .. } = e {
                        *options = None;
                    }
                }
                if let Ok(ran) = ge_reference::session::run(Profile::Upstream, &plain) {
                    obs.trace = ran.trace;
                    obs.refreshes = ran.refreshes;
                }
            }
        }
        obs
    }
}

impl Backend for UpstreamFaulty {
    fn name(&self) -> &str {
        "faulty-upstream-session"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Session].into_iter().collect()
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        Ok(self.run(scenario))
    }
}

#[test]
fn the_upstream_reference_is_caught_by_nothing_under_upstream() {
    let caught = caught_clauses(
        &Judging::new(Profile::Upstream, ge_spec::Conformance::Strict),
        &Reference::upstream(),
        Some(Capability::Session),
    );
    assert!(
        caught.is_empty(),
        "the upstream reference fails {caught:#?}"
    );
}

#[rstest]
#[case::whole_script_stops(UpstreamFault::WholeScriptStops, "SES-017")]
#[case::refused_graph_loads(UpstreamFault::RefusedGraphLoads, "SES-017")]
fn upstream_fault_is_caught(#[case] fault: UpstreamFault, #[case] clause: &str) {
    let caught = caught_clauses(
        &Judging::failing(Profile::Upstream, clause),
        &UpstreamFaulty(fault),
        Some(Capability::Session),
    );
    assert!(
        caught.contains_key(clause),
        "{fault:?} should be caught by {clause}; caught: {caught:#?}"
    );
    // The oracle alone names the clause too, on the upstream cases' scenarios.
    let judging = Judging::new(Profile::Upstream, ge_spec::Conformance::Strict);
    let named: BTreeSet<String> = ge_spec::Spec::embedded()
        .cases_in(Profile::Upstream)
        .filter_map(|case| match &case.case.scenario {
            ge_spec::Scenario::Session(s) => Some(s.clone()),
            _ => None,
        })
        .flat_map(|s| {
            ge_conformance::oracle::session::judge(&judging, &s, &UpstreamFaulty(fault).run(&s))
        })
        .map(|v| v.clause)
        .collect();
    assert!(
        named.contains(clause),
        "{fault:?}: the oracle named {named:?}"
    );
}

/// Faults only the default certification's generated scripts reach (the session property,
/// whose boundary phase sizes graphs around every width).
#[derive(Debug, Clone, Copy)]
enum Rare {
    /// Sizes kept in 32 bits: a graph of 2^32 bytes or more is allocated modulo 2^32.
    Sizes32,
}

#[derive(Debug)]
struct RareFault(Rare);

impl Backend for RareFault {
    fn name(&self) -> &str {
        "rare-session-fault"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Session].into_iter().collect()
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        let mut obs = Reference::new(Profile::Documented).session(scenario)?;
        match self.0 {
            Rare::Sizes32 => {
                for entry in &mut obs.trace {
                    entry.bytes = u64::from(entry.bytes as u32);
                }
            }
        }
        Ok(obs)
    }
}

#[rstest]
#[case::sizes_kept_in_32_bits(Rare::Sizes32, "SMP-010")]
fn rare_fault_is_caught_by_the_generated_scripts(#[case] fault: Rare, #[case] clause: &str) {
    common::assert_caught_in_certification(&fault, &RareFault(fault), "property/session", clause);
}

/// Measures shrinking: the size of each fault's property counterexample on its clause (option
/// keys and items), then their distribution, for `docs/benchmarks.md`. Run with
/// `cargo test --release -p ge-conformance --test it -- --ignored --nocapture faults_session::counterexample_sizes`.
// Long because: a list of every fault with its clause, one row each; the measuring is the last
// lines.
#[test]
#[ignore = "a measurement for docs/benchmarks.md; the regression it guards is held by the shrinking tests"]
fn counterexample_sizes() {
    let faults: Vec<(&str, Box<dyn Backend>, &str)> = vec![
        (
            "pool_never_grows",
            Box::new(Faulty(Fault::PoolNeverGrows)),
            "SMP-011",
        ),
        (
            "pool_oversized",
            Box::new(Faulty(Fault::PoolOversized)),
            "SMP-011",
        ),
        (
            "zero_copy_reallocated_with_reuse_on",
            Box::new(Faulty(Fault::ZeroCopyReallocatedWithReuseOn)),
            "RZC-012",
        ),
        (
            "zero_copy_reused_with_reuse_off",
            Box::new(Faulty(Fault::ZeroCopyReusedWithReuseOff)),
            "RZC-010",
        ),
        (
            "zero_copy_not_freed_per_execution",
            Box::new(Faulty(Fault::ZeroCopyNotFreedPerExecution)),
            "RZC-011",
        ),
        (
            "refresh_allowed_twice_with_option_off",
            Box::new(Faulty(Fault::RefreshAllowedTwiceWithOptionOff)),
            "FBR-011",
        ),
        (
            "refresh_once_with_option_on",
            Box::new(Faulty(Fault::RefreshOnceWithOptionOn)),
            "FBR-010",
        ),
        (
            "first_refresh_refused",
            Box::new(Faulty(Fault::FirstRefreshRefused)),
            "FBR-012",
        ),
        (
            "small_base_accepted",
            Box::new(Faulty(Fault::SmallBaseAccepted)),
            "FBR-013",
        ),
        (
            "dynamic_graph_refreshable",
            Box::new(Faulty(Fault::DynamicGraphRefreshable)),
            "FBR-014",
        ),
        (
            "no_dynamic_shape_warning",
            Box::new(Faulty(Fault::NoDynamicShapeWarning)),
            "OPT-008",
        ),
        (
            "shared_pool_under_policy_0",
            Box::new(Faulty(Fault::SharedPoolUnderPolicy0)),
            "SMP-010",
        ),
        (
            "dynamic_pooled_under_policy_2",
            Box::new(Faulty(Fault::DynamicPooledUnderPolicy2)),
            "SMP-014",
        ),
        (
            "no_unload_at_end",
            Box::new(Faulty(Fault::NoUnloadAtEnd)),
            "SES-011",
        ),
        (
            "end_unloads_descending",
            Box::new(Faulty(Fault::EndUnloadsDescending)),
            "SES-011",
        ),
        (
            "script_errors_silent",
            Box::new(Faulty(Fault::ScriptErrorsSilent)),
            "SES-012",
        ),
        (
            "end_releases_misnumbered",
            Box::new(Faulty(Fault::EndReleasesMisnumbered)),
            "SES-013",
        ),
        (
            "pool_misnamed",
            Box::new(Faulty(Fault::PoolMisnamed)),
            "SES-014",
        ),
        (
            "zero_byte_blocks",
            Box::new(Faulty(Fault::ZeroByteBlocks)),
            "SES-015",
        ),
        (
            "free_size_mismatch",
            Box::new(Faulty(Fault::FreeSizeMismatch)),
            "SES-010",
        ),
        (
            "load_map_ignored",
            Box::new(Faulty(Fault::LoadMapIgnored)),
            "RZC-010",
        ),
        (
            "runs_despite_rejected_option",
            Box::new(Faulty(Fault::RunsDespiteRejectedOption)),
            "SES-017",
        ),
        (
            "refresh_touches_trace",
            Box::new(Faulty(Fault::RefreshTouchesTrace)),
            "SES-018",
        ),
        (
            "refused_refresh_without_result",
            Box::new(Faulty(Fault::RefusedRefreshWithoutResult)),
            "SES-019",
        ),
        (
            "oversized_script_silent",
            Box::new(Faulty(Fault::OversizedScriptSilent)),
            "SES-020",
        ),
        (
            "event_cap_off_by_one",
            Box::new(Faulty(Fault::EventCapOffByOne)),
            "SES-020",
        ),
        (
            "refusal_unreported",
            Box::new(Faulty(Fault::RefusalUnreported)),
            "FBR-015",
        ),
    ];
    common::print_counterexample_sizes(Capability::Session, &faults);
}
