//! How an allowed engine plans: memory plans placed otherwise where the text leaves placement
//! open, and session traces that keep pools and zero-copy areas longer.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::memory::{aligned, MemoryObservation, MemoryScenario, Role, Tensor};
use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry,
};
use ge_spec::Level;

use super::Rewrite;

/// The reference's plan for `s`, as an engine making `picks` places it.
pub(super) fn memory(picks: &BTreeSet<Rewrite>, s: &MemoryScenario, o: &mut MemoryObservation) {
    if !o.errors.is_empty() || o.offsets.is_empty() {
        return;
    }
    let reuse_on = !Level::ALL.iter().any(|&l| {
        s.options
            .at(l)
            .get("ge.exec.disableReuseMemory")
            .is_some_and(|v| v != "0")
    });
    if reuse_on {
        if picks.contains(&Rewrite::WastefulPlanner) {
            waste_one(s, o);
        }
        if picks.contains(&Rewrite::BorrowsUnlistedOutput) {
            borrow_unlisted_output(s, o);
        }
        if picks.contains(&Rewrite::AliasesUnreported) {
            o.aliases.clear();
        }
    }
    if picks.contains(&Rewrite::RaisedPlan) {
        raise(s, o, RAISE);
    }
}

/// How far [`Rewrite::RaisedPlan`] raises a plan: a multiple of every alignment the text or
/// the suite speaks of.
const RAISE: u64 = 512;

/// Raises every offset of plan `o`, its cleanup regions with them, by `by` bytes: the memory
/// below is left unused, and every tensor shares with exactly the tensors it shared with.
fn raise(s: &MemoryScenario, o: &mut MemoryObservation, by: u64) {
    for at in o.offsets.values_mut() {
        *at = at.saturating_add(by);
    }
    for g in &mut o.cleanup {
        g.offset = g.offset.saturating_add(by);
    }
    // A tensor of no bytes ends where it is placed, and counts for the peak there.
    o.peak_bytes = s
        .tensors
        .iter()
        .filter_map(|t| o.offsets.get(&t.name).map(|at| at.saturating_add(t.size)))
        .max()
        .unwrap_or(0);
}

/// The byte range of tensor `t` in plan `o` (`None`: not placed or empty).
fn range(o: &MemoryObservation, t: &Tensor) -> Option<(u64, u64)> {
    let at = *o.offsets.get(&t.name)?;
    (t.size > 0).then(|| (at, at.saturating_add(t.size)))
}

fn meet(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether two tensors other than `but` share a byte in `o`.
fn sharing_left(s: &MemoryScenario, o: &MemoryObservation, but: &str) -> bool {
    let placed: Vec<(u64, u64)> = s
        .tensors
        .iter()
        .filter(|t| t.name != but)
        .filter_map(|t| range(o, t))
        .collect();
    placed
        .iter()
        .enumerate()
        .any(|(i, a)| placed[i + 1..].iter().any(|b| meet(*a, *b)))
}

/// The peak of plan `o`: where its highest tensor ends.
fn peak_of(s: &MemoryScenario, o: &MemoryObservation) -> u64 {
    s.tensors
        .iter()
        .filter_map(|t| range(o, t))
        .map(|r| r.1)
        .max()
        .unwrap_or(0)
}

/// The byte ranges of the plan's inputs and outputs (every tensor but the intermediates).
fn io_ranges(s: &MemoryScenario, o: &MemoryObservation) -> Vec<(u64, u64)> {
    s.tensors
        .iter()
        .filter(|t| !matches!(t.role, Role::Intermediate))
        .filter_map(|t| range(o, t))
        .collect()
}

/// Moves the last-starting intermediate tensor whose bytes no input or output shares to fresh
/// memory above the plan, where other tensors still share, and the plan stays within what no
/// reuse at all would take.
fn waste_one(s: &MemoryScenario, o: &mut MemoryObservation) {
    if !o.aliases.is_empty() || !o.cleanup.is_empty() {
        return;
    }
    let io = io_ranges(s, o);
    let no_reuse: u64 = s.tensors.iter().filter_map(|t| aligned(t.size)).sum();
    let candidate = s
        .tensors
        .iter()
        .filter(|t| matches!(t.role, Role::Intermediate))
        .filter(|t| range(o, t).is_some_and(|r| !io.iter().any(|x| meet(r, *x))))
        .filter(|t| sharing_left(s, o, &t.name))
        .max_by_key(|t| (t.first, t.name.clone()));
    let Some(t) = candidate else { return };
    let Some(top) = aligned(o.peak_bytes.max(peak_of(s, o))) else {
        return;
    };
    if top.saturating_add(aligned(t.size).unwrap_or(u64::MAX)) > no_reuse {
        return;
    }
    o.offsets.insert(t.name.clone(), top);
    o.peak_bytes = peak_of(s, o);
}

/// Puts an intermediate tensor that ends before an unlisted output is first used, and fits in
/// it, at the output's offset (the output's bytes are its own for the whole run otherwise).
fn borrow_unlisted_output(s: &MemoryScenario, o: &mut MemoryObservation) {
    if !o.aliases.is_empty() || !o.cleanup.is_empty() {
        return;
    }
    if s.options
        .graph
        .contains_key("ge.exec.outputReuseMemIndexes")
        || !o.reused_outputs.is_empty()
    {
        return;
    }
    let io = io_ranges(s, o);
    for out in s
        .tensors
        .iter()
        .filter(|t| matches!(t.role, Role::Output { .. }))
    {
        let Some(slot) = range(o, out) else { continue };
        let borrower = s.tensors.iter().find(|t| {
            matches!(t.role, Role::Intermediate)
                && t.size > 0
                && t.size <= out.size
                && t.last < out.first
                && range(o, t).is_some_and(|r| !io.iter().any(|x| meet(r, *x)))
        });
        if let Some(t) = borrower {
            o.offsets.insert(t.name.clone(), slot.0);
            o.peak_bytes = peak_of(s, o);
            return;
        }
    }
}

/// The reference's trace for `s`, as an engine making `picks` keeps its memory.
pub(super) fn session(picks: &BTreeSet<Rewrite>, s: &SessionScenario, o: &mut SessionObservation) {
    let end = u32::try_from(s.events.len()).unwrap_or(u32::MAX);
    if picks.contains(&Rewrite::PoolsKept) && !o.trace.is_empty() {
        keep_pools(&mut o.trace, end);
    }
    if picks.contains(&Rewrite::IoAreaAtFirstExecution) {
        io_at_first_execution(s, &mut o.trace);
    }
    if picks.contains(&Rewrite::IoKeptToTheEnd) {
        let unloads = |step: u32| {
            matches!(
                s.events.get(step as usize),
                Some(SessionEvent::Unload { .. })
            )
        };
        let (mut moved, mut kept): (Vec<_>, Vec<_>) = o.trace.drain(..).partition(|e| {
            e.action == TraceAction::Free && e.pool.ends_with("/io") && unloads(e.step)
        });
        for e in &mut moved {
            e.step = end;
        }
        kept.extend(moved);
        o.trace = kept;
    }
}

/// Moves each zero-copy area kept across executions (allocated at its graph's load) to the
/// graph's first execution; a graph loaded and never executed takes none, and gives none back.
fn io_at_first_execution(s: &SessionScenario, trace: &mut Vec<TraceEntry>) {
    let mut out = Vec::with_capacity(trace.len());
    let mut never_used: Vec<(String, u64)> = Vec::new();
    for e in std::mem::take(trace) {
        let loaded = match s.events.get(e.step as usize) {
            Some(SessionEvent::Load { graph, .. })
                if e.action == TraceAction::Alloc && e.pool == format!("graph-{graph}/io") =>
            {
                Some(*graph)
            }
            _ => None,
        };
        if let Some(graph) = loaded {
            let first = s
                .events
                .iter()
                .enumerate()
                .skip(e.step as usize + 1)
                .find_map(|(i, ev)| match ev {
                    SessionEvent::Execute { graph: g, .. } if *g == graph => Some(Some(i)),
                    SessionEvent::Unload { graph: g } if *g == graph => Some(None),
                    _ => None,
                });
            match first.flatten().and_then(|i| u32::try_from(i).ok()) {
                Some(step) => out.push(TraceEntry { step, ..e }),
                None => never_used.push((e.pool.clone(), e.bytes)),
            }
            continue;
        }
        let unused = never_used
            .iter()
            .position(|(p, b)| e.action == TraceAction::Free && *p == e.pool && *b == e.bytes);
        match unused {
            Some(i) => {
                never_used.remove(i);
            }
            None => out.push(e),
        }
    }
    // The moved entries join their new step, after what the step already held.
    out.sort_by_key(|e| e.step);
    *trace = out;
}

/// Rewrites the reference's trace so that each shared pool is kept once taken: its last
/// graph's unload gives nothing back, a later load takes it again only when it needs more than
/// the pool holds (freeing the smaller first, as growth does), and the session's close (step
/// `end`) gives it back.
fn keep_pools(trace: &mut Vec<TraceEntry>, end: u32) {
    let is_pool = |p: &str| p == "static-pool" || p == "dynamic-pool";
    let old = std::mem::take(trace);
    let mut held: BTreeMap<String, u64> = BTreeMap::new();
    for e in &old {
        if !is_pool(&e.pool) {
            trace.push(e.clone());
            continue;
        }
        match e.action {
            // Growth (an alloc of the pool follows at the same step), the last unload, the
            // close: the pool stays until the close, below.
            TraceAction::Free => {}
            TraceAction::Alloc => {
                let kept = held.get(&e.pool).copied();
                if kept.is_some_and(|k| k >= e.bytes) {
                    continue;
                }
                if let Some(k) = kept {
                    trace.push(TraceEntry {
                        action: TraceAction::Free,
                        bytes: k,
                        ..e.clone()
                    });
                }
                trace.push(e.clone());
                held.insert(e.pool.clone(), e.bytes);
            }
        }
    }
    for (pool, bytes) in held {
        trace.push(TraceEntry {
            step: end,
            action: TraceAction::Free,
            pool,
            bytes,
        });
    }
}
