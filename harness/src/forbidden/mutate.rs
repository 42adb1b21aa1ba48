//! The mutations of [`super::Mutation`], one function per capability. Each changes a
//! conforming answer in place, keeping it a well-formed answer of the vocabulary where it can
//! (a trace that still balances, a listing that still matches the disk), so that what it breaks
//! is what the text says about the behaviour.

use std::fs;
use std::path::Path;

use ge_spec::vocab::memory::{aligned, CleanupGroup, MemoryObservation, MemoryScenario, Role};
use ge_spec::vocab::options::{Effective, OptionsObservation, OptionsScenario};
use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry,
};
use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::vocab::weights::{NodeType, WeightsObservation, WeightsScenario, WrittenFile};
use ge_spec::{Diagnostic, Level, OptionKey, ShapeKind, Source, Spec};

use super::Mutation;
use crate::oracle::weights::sha;

fn refusal() -> Vec<Diagnostic> {
    vec![Diagnostic::new("", "the request is refused")]
}

/// Options: see [`Mutation`].
pub(super) fn options(m: Mutation, s: &OptionsScenario, o: &mut OptionsObservation) {
    let set: Vec<String> = o
        .effective
        .iter()
        .filter(|(_, e)| e.from != Source::Default)
        .map(|(k, _)| k.clone())
        .collect();
    let unset: Vec<String> = o
        .effective
        .iter()
        .filter(|(_, e)| e.from == Source::Default)
        .map(|(k, _)| k.clone())
        .collect();
    match m {
        Mutation::AcceptRejected(k) => accept_rejected(s, o, k),
        Mutation::RejectAccepted(k) => {
            if let Some(key) = set.get(k) {
                reject(o, key);
            }
        }
        Mutation::DefaultInstead(k) => {
            if let Some(key) = set.get(k) {
                default_instead(o, key);
            }
        }
        Mutation::SetWhereUnset(k) => {
            if let Some(key) = unset.get(k) {
                set_where_unset(o, key);
            }
        }
        Mutation::ValueOff(k) => {
            let keys: Vec<String> = o
                .effective
                .iter()
                .filter(|(_, e)| !e.value.is_empty())
                .map(|(k, _)| k.clone())
                .collect();
            let Some(e) = keys.get(k).and_then(|key| o.effective.get_mut(key)) else {
                return;
            };
            if let Ok(n) = e.value.parse::<u64>() {
                e.value = n.saturating_add(1).to_string();
            } else if let Some((rest, _)) = e.value.rsplit_once(['|', ',']) {
                e.value = rest.to_owned();
            }
        }
        Mutation::WarnedValueInForce(k) => {
            let named: Vec<(String, String)> = o
                .warnings
                .iter()
                .filter_map(|w| Some((w.key.clone()?, w.value.clone()?)))
                .filter(|(key, _)| o.effective.contains_key(key))
                .collect();
            let Some((key, value)) = named.get(k).cloned() else {
                return;
            };
            o.warnings
                .retain(|w| w.key.as_ref() != Some(&key) || w.value.as_ref() != Some(&value));
            if let Some(e) = o.effective.get_mut(&key) {
                e.value = value;
            }
        }
        _ => {}
    }
}

/// Options, transfer, session: the scenario the engine answers, the one asked for or, under
/// [`Mutation::ShapeIgnored`], the same with every shape static.
pub(super) fn options_scenario(m: Mutation, s: &OptionsScenario) -> OptionsScenario {
    let mut s = s.clone();
    if m == Mutation::ShapeIgnored {
        s.graph.shape = ShapeKind::Static;
    }
    s
}

/// See [`options_scenario`].
pub(super) fn transfer_scenario(m: Mutation, s: &TransferScenario) -> TransferScenario {
    let mut s = s.clone();
    if m == Mutation::ShapeIgnored {
        s.shape = ShapeKind::Static;
    }
    s
}

/// See [`options_scenario`].
pub(super) fn session_scenario(m: Mutation, s: &SessionScenario) -> SessionScenario {
    let mut s = s.clone();
    if m == Mutation::ShapeIgnored {
        for e in &mut s.events {
            if let SessionEvent::Load { shape, .. } = e {
                *shape = ShapeKind::Static;
            }
        }
    }
    s
}

/// `key` in force at its default instead.
fn default_instead(o: &mut OptionsObservation, key: &str) {
    let Ok(option) = key.parse::<OptionKey>() else {
        return;
    };
    let default = Spec::embedded()
        .option(option)
        .default
        .clone()
        .unwrap_or_default();
    o.effective.insert(
        key.to_owned(),
        Effective {
            value: default,
            from: Source::Default,
        },
    );
}

/// `key`, at its default, in force at another value of its table, from graph level.
fn set_where_unset(o: &mut OptionsObservation, key: &str) {
    let Ok(option) = key.parse::<OptionKey>() else {
        return;
    };
    let row = Spec::embedded().option(option);
    let default = row.default.clone().unwrap_or_default();
    let Some(other) = row.values.iter().find(|v| v.value != default) else {
        return;
    };
    o.effective.insert(
        key.to_owned(),
        Effective {
            value: other.value.clone(),
            from: Source::Graph,
        },
    );
}

/// The `k`-th rejected key of `o` in force after all, at the value and level it was set at
/// where its option takes effect (the graph level first).
fn accept_rejected(s: &OptionsScenario, o: &mut OptionsObservation, k: usize) {
    let Some(key) = o.rejected.get(k).cloned() else {
        return;
    };
    let Ok(option) = key.parse::<OptionKey>() else {
        return;
    };
    let row = Spec::embedded().option(option);
    let found = [Level::Graph, Level::Session, Level::Global]
        .into_iter()
        .filter(|&l| row.takes_effect_at(l))
        .find_map(|l| s.options.at(l).get(&key).map(|v| (l, v.clone())));
    let Some((level, value)) = found else { return };
    o.rejected.retain(|r| *r != key);
    o.errors.retain(|e| e.key.as_deref() != Some(key.as_str()));
    o.effective.insert(
        key,
        Effective {
            value,
            from: level.into(),
        },
    );
}

/// The key `key`, in force in `o`, rejected instead with an error at the level it came from.
fn reject(o: &mut OptionsObservation, key: &str) {
    let Some(e) = o.effective.remove(key) else {
        return;
    };
    let level = match e.from {
        Source::Global => Level::Global,
        Source::Session => Level::Session,
        _ => Level::Graph,
    };
    o.rejected.push(key.to_owned());
    o.rejected.sort();
    o.errors.push(
        Diagnostic::new("", "the value is refused")
            .key(key)
            .level(level),
    );
}

/// Moves input `index` between two lists of a transfer plan.
fn shift(from: &mut Vec<u32>, to: &mut Vec<u32>, k: usize) -> Option<u32> {
    if k >= from.len() {
        return None;
    }
    let index = from.remove(k);
    to.push(index);
    to.sort_unstable();
    Some(index)
}

/// Transfer: see [`Mutation`].
pub(super) fn transfer(m: Mutation, s: &TransferScenario, o: &mut TransferObservation) {
    if !o.errors.is_empty() {
        return;
    }
    let size = |index: u32| {
        s.inputs
            .iter()
            .find(|i| i.index == index)
            .map_or(0, |i| i.size)
    };
    match m {
        Mutation::FusedToDirect(k) => {
            if let Some(i) = shift(&mut o.fused, &mut o.direct, k) {
                o.fused_bytes = o.fused_bytes.saturating_sub(size(i));
            }
        }
        Mutation::DirectToFused(k) => {
            if let Some(i) = shift(&mut o.direct, &mut o.fused, k) {
                o.fused_bytes = o.fused_bytes.saturating_add(size(i));
            }
        }
        Mutation::BatchedToDirect(k) => {
            shift(&mut o.batched, &mut o.direct, k);
        }
        Mutation::DirectToBatched(k) => {
            shift(&mut o.direct, &mut o.batched, k);
        }
        Mutation::DirectPairToBatched(k) if k + 1 < o.direct.len() => {
            shift(&mut o.direct, &mut o.batched, k);
            shift(&mut o.direct, &mut o.batched, k);
        }
        Mutation::FusedAlsoBatched(k) => {
            if let Some(&i) = o.fused.get(k) {
                o.batched.push(i);
                o.batched.sort_unstable();
            }
        }
        Mutation::Refused => {
            *o = TransferObservation {
                errors: refusal(),
                ..TransferObservation::default()
            };
        }
        _ => {}
    }
}

/// Where plan `o` needs memory up to: the largest offset plus size.
fn peak(s: &MemoryScenario, o: &MemoryObservation) -> u64 {
    s.tensors
        .iter()
        .filter_map(|t| o.offsets.get(&t.name).map(|at| at.saturating_add(t.size)))
        .max()
        .unwrap_or(0)
}

/// The pairs of tensors of some bytes, in scenario order, whose lifetimes meet (`live`) or
/// not, and whose bytes do not meet in plan `o`.
fn pairs(s: &MemoryScenario, o: &MemoryObservation, live: bool) -> Vec<(String, String)> {
    let placed: Vec<_> = s
        .tensors
        .iter()
        .filter(|t| t.size > 0)
        .filter_map(|t| o.offsets.get(&t.name).map(|&at| (t, at)))
        .collect();
    let mut out = Vec::new();
    for (i, (a, at_a)) in placed.iter().enumerate() {
        for (b, at_b) in &placed[i + 1..] {
            let meet_in_time = a.first <= b.last && b.first <= a.last;
            let meet_in_bytes =
                *at_a < at_b.saturating_add(b.size) && *at_b < at_a.saturating_add(a.size);
            if meet_in_time == live && !meet_in_bytes {
                out.push((a.name.clone(), b.name.clone()));
            }
        }
    }
    out
}

/// Memory: see [`Mutation`].
pub(super) fn memory(m: Mutation, s: &MemoryScenario, o: &mut MemoryObservation) {
    match m {
        Mutation::Refused => {
            *o = MemoryObservation {
                errors: refusal(),
                ..MemoryObservation::default()
            };
            return;
        }
        Mutation::RunErrorsDropped => {
            if s.run.is_some() {
                o.errors.clear();
            }
            return;
        }
        _ => {}
    }
    if !o.errors.is_empty() || o.offsets.is_empty() {
        return;
    }
    match m {
        Mutation::Overlap(k) | Mutation::ShareDisjoint(k) => {
            let live = matches!(m, Mutation::Overlap(_));
            let Some((a, b)) = pairs(s, o, live).into_iter().nth(k) else {
                return;
            };
            let Some(&at) = o.offsets.get(&a) else { return };
            o.offsets.insert(b, at);
        }
        Mutation::NoReuse => {
            if !o.aliases.is_empty() || !o.cleanup.is_empty() {
                return;
            }
            let mut next = 0u64;
            for t in &s.tensors {
                o.offsets.insert(t.name.clone(), next);
                next = next.saturating_add(aligned(t.size).unwrap_or(u64::MAX));
            }
        }
        Mutation::CleanupRegrouped => regroup(s, o),
        _ => return,
    }
    o.peak_bytes = peak(s, o);
}

/// The cleanup region of `tensors` in plan `o`.
fn region(s: &MemoryScenario, o: &MemoryObservation, tensors: Vec<String>) -> CleanupGroup {
    let ranges: Vec<(u64, u64)> = s
        .tensors
        .iter()
        .filter(|t| tensors.contains(&t.name))
        .filter_map(|t| {
            o.offsets
                .get(&t.name)
                .map(|&at| (at, at.saturating_add(t.size)))
        })
        .collect();
    let offset = ranges.iter().map(|r| r.0).min().unwrap_or(0);
    let end = ranges.iter().map(|r| r.1).max().unwrap_or(0);
    CleanupGroup {
        offset,
        size: end.saturating_sub(offset),
        tensors,
    }
}

/// One cleanup group made one per memset operator, or several made one.
fn regroup(s: &MemoryScenario, o: &mut MemoryObservation) {
    match o.cleanup.len() {
        0 => {}
        1 => {
            let mut by_op: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
            for t in &s.tensors {
                if let Role::Memset { op } = &t.role {
                    by_op.entry(op.as_str()).or_default().push(t.name.clone());
                }
            }
            if by_op.len() > 1 {
                o.cleanup = by_op.into_values().map(|t| region(s, o, t)).collect();
            }
        }
        _ => {
            let mut all: Vec<String> = o.cleanup.iter().flat_map(|g| g.tensors.clone()).collect();
            all.sort();
            o.cleanup = vec![region(s, o, all)];
        }
    }
}

/// Session: see [`Mutation`].
pub(super) fn session(m: Mutation, s: &SessionScenario, o: &mut SessionObservation) {
    match m {
        Mutation::EntryDropped(k) if k < o.trace.len() => {
            o.trace.remove(k);
        }
        Mutation::AllocHalved(k) => resize(o, k, |b| aligned(b / 2).unwrap_or(b)),
        Mutation::AllocDoubled(k) => resize(o, k, |b| b.saturating_mul(2)),
        Mutation::EntriesSwapped(k) => {
            if let Some(i) = (1..o.trace.len())
                .filter(|&i| o.trace[i - 1].step == o.trace[i].step && o.trace[i - 1] != o.trace[i])
                .nth(k)
            {
                o.trace.swap(i - 1, i);
            }
        }
        Mutation::RefreshFlipped(k) => {
            if let Some(r) = o.refreshes.get_mut(k) {
                r.ok = !r.ok;
            }
        }
        Mutation::ExtraIoArea(k) => {
            let Some((step, graph)) = s
                .events
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    SessionEvent::Execute { graph, .. } => Some((i, *graph)),
                    _ => None,
                })
                .nth(k)
            else {
                return;
            };
            let step = u32::try_from(step).unwrap_or(u32::MAX);
            let at = o.trace.iter().take_while(|e| e.step <= step).count();
            let pool = format!("graph-{graph}/io");
            let entry = |action| TraceEntry {
                step,
                action,
                pool: pool.clone(),
                bytes: 32,
            };
            o.trace.insert(at, entry(TraceAction::Free));
            o.trace.insert(at, entry(TraceAction::Alloc));
        }
        Mutation::Refused => {
            *o = SessionObservation {
                errors: refusal(),
                ..SessionObservation::default()
            };
        }
        _ => {}
    }
}

/// The `k`-th allocation of more than 32 bytes, and the free of that block, resized by `to`:
/// the trace still balances.
fn resize(o: &mut SessionObservation, k: usize, to: impl Fn(u64) -> u64) {
    let Some(at) = o
        .trace
        .iter()
        .enumerate()
        .filter(|(_, e)| e.action == TraceAction::Alloc && e.bytes > 32)
        .map(|(i, _)| i)
        .nth(k)
    else {
        return;
    };
    let (pool, bytes) = (o.trace[at].pool.clone(), o.trace[at].bytes);
    let new = to(bytes);
    o.trace[at].bytes = new;
    if let Some(free) = o.trace[at + 1..]
        .iter_mut()
        .find(|e| e.action == TraceAction::Free && e.pool == pool && e.bytes == bytes)
    {
        free.bytes = new;
    }
}

/// Weights: see [`Mutation`].
pub(super) fn weights(
    m: Mutation,
    _s: &WeightsScenario,
    o: &mut WeightsObservation,
    sandbox: &Path,
) {
    match m {
        Mutation::ByteFlipped(k) => {
            let Some(f) = o
                .files
                .iter_mut()
                .filter(|f| f.len > 0 && sandbox.join(&f.path).is_file())
                .nth(k)
            else {
                return;
            };
            let path = sandbox.join(&f.path);
            let Ok(mut bytes) = fs::read(&path) else {
                return;
            };
            if let Some(b) = bytes.first_mut() {
                *b ^= 0xff;
            }
            if fs::write(&path, &bytes).is_ok() {
                f.sha256 = sha(&bytes);
            }
        }
        Mutation::OffsetShifted(k) => {
            if let Some(n) = o.nodes.iter_mut().filter(|n| n.offset.is_some()).nth(k) {
                n.offset = n.offset.map(|at| at.saturating_add(1));
            }
        }
        Mutation::KeptConst(k) => {
            if let Some(n) = o.nodes.iter_mut().filter(|n| n.file.is_some()).nth(k) {
                n.node_type = NodeType::Const;
                n.file = None;
                n.offset = None;
                n.length = None;
            }
        }
        Mutation::StrayFile if o.errors.is_empty() && o.dir.is_empty() && o.files.is_empty() => {
            let path = "weight_stray";
            if fs::write(sandbox.join(path), b"").is_ok() {
                o.files.push(WrittenFile {
                    path: path.to_owned(),
                    len: 0,
                    sha256: sha(b""),
                });
            }
        }
        Mutation::OtherDir => other_dir(o, sandbox),
        _ => {}
    }
}

/// Moves the directory a load wrote in to `<dir>_moved` beside it, on disk and in the answer.
fn other_dir(o: &mut WeightsObservation, sandbox: &Path) {
    if !o.errors.is_empty() || o.dir.is_empty() || o.dir == "." || o.files.is_empty() {
        return;
    }
    let moved = format!("{}_moved", o.dir);
    if !sandbox.join(&o.dir).is_dir()
        || fs::symlink_metadata(sandbox.join(&moved)).is_ok()
        || fs::rename(sandbox.join(&o.dir), sandbox.join(&moved)).is_err()
    {
        return;
    }
    let prefix = format!("{}/", o.dir);
    let to = |p: &str| match p.strip_prefix(&prefix) {
        Some(rest) => format!("{moved}/{rest}"),
        None if p == o.dir => moved.clone(),
        None => p.to_owned(),
    };
    for f in &mut o.files {
        f.path = to(&f.path);
    }
    for n in &mut o.nodes {
        n.file = n.file.as_deref().map(to);
    }
    for r in &mut o.removed {
        *r = to(r);
    }
    o.dir = moved;
}
