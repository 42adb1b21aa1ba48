//! Choice variants: the other direction of the fault table. Each backend here is the reference
//! with ONE of the suite's own choices made another way the source text allows (another clause
//! cited or none, one error for several offending items, lenient spellings read, invalid values
//! ignored, another hash, no padding, no sharing of identical weights, pools kept for the
//! session or following GE_USE_STATIC_MEMORY, no batch copy on dynamic shapes, a missing or
//! uncreatable weight directory handled otherwise, a failed load's directory left, a planner
//! that reuses less well, borrows an unlisted output's bytes or reports no aliases, a kept
//! zero-copy area given back at the session's close). Each must
//! certify at level `documented` with no failure, and break the clause of that choice at level
//! `strict` (a deviation at `documented`): what an engine chose where the text is silent never
//! fails it. `docs/choices.md` lists them, and the suite's choices that have no variant yet,
//! each with why ([`NO_VARIANT`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::common;

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::judging::Judging;
use ge_conformance::oracle::options::{read_reported, Context, Reading};
use ge_conformance::report::{Outcome, Report};
use ge_reference::Reference;
use ge_spec::tables::Grammar;
use ge_spec::vocab::memory::{aligned, MemoryObservation, MemoryScenario, Role, Tensor};
use ge_spec::vocab::session::{TraceAction, TraceEntry};
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario, WrittenFile};
use ge_spec::{
    Answer, Backend, Capability, Diagnostic, Level, OptionKey, OptionMaps, Profile, Spec,
};
use rstest::rstest;

/// The one choice a variant makes otherwise.
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// Every diagnostic cites no clause (an adapter over an engine that knows no clause IDs).
    NoClause,
    /// Every diagnostic with a key cites its option's first clause (the value grammar), the
    /// others keep theirs: an adapter mapping its errors as well as it can.
    OptionClause,
    /// One error per rejected key, however many items, values or levels offend.
    OneErrorPerKey,
    /// An index list with an index out of range is refused whole instead of dropping that
    /// index alone.
    RefuseListOutOfRange,
    /// Mode-1 files are named `weight_` and the SHA-256 of the bytes, spelled backwards.
    OtherHash,
    /// The combined file of mode 2 holds the distinct weights back to back, no padding.
    Packed,
    /// A number spelled with white space, a sign or leading zeros (` 1`, `+1`, `05`, `-0`),
    /// and a list of such numbers, is read as the number it spells instead of refused.
    LenientSpellings,
    /// Identical weights are not shared: in mode 1 each constant has a file of its own (named
    /// after its name and its bytes), in mode 2 each is stored where it comes.
    Duplicates,
    /// A shared pool outlives its last graph: kept for the session, taken again only when a
    /// load needs more than it holds, and given back when the session closes.
    PoolsKept,
    /// No batch copy on a dynamic-shape graph: the inputs go one by one.
    NoBatchOnDynamic,
    /// A ge.externalWeightDir that does not exist fails the load, naming it, instead of being
    /// created.
    MissingUserDirRefused,
    /// An ASCEND_WORK_PATH that does not exist fails the load, naming it, instead of being
    /// created.
    MissingWorkPathRefused,
    /// An ASCEND_WORK_PATH that does not exist and cannot be created is passed over for the
    /// working directory, as upstream does, instead of failing the load.
    UncreatableWorkPathSkipped,
    /// After a load that failed, unload leaves the directory the load made, with what is in it.
    FailedLoadLeavesItsDir,
    /// A planner that reuses less well: one intermediate tensor, whose bytes no input or output
    /// shares, is moved to fresh memory above the plan, where other sharing remains.
    WastefulPlanner,
    /// A planner that lets an intermediate tensor use the bytes of an unlisted output before
    /// the output is written.
    BorrowsUnlistedOutput,
    /// The session's pools follow GE_USE_STATIC_MEMORY as well as the policy, as upstream
    /// combines them (`1`, `2` or `4` pools static shapes, `3` or `4` dynamic ones).
    FollowsEnvironment,
    /// A graph's kept zero-copy area outlives its unload: given back when the session closes.
    IoKeptToTheEnd,
    /// The pairs of outputReuseInputMemIndexes are planned but not reported in `aliases`.
    AliasesUnreported,
    /// An invalid value is ignored with a warning (the next level's value, or the default, in
    /// force) instead of rejecting its option and refusing what depends on it.
    IgnoreInvalid,
}

impl Choice {
    fn capabilities(self) -> &'static [Capability] {
        match self {
            Choice::NoClause | Choice::OptionClause => &Capability::ALL,
            Choice::OneErrorPerKey | Choice::RefuseListOutOfRange => &[Capability::Options],
            Choice::PoolsKept | Choice::FollowsEnvironment | Choice::IoKeptToTheEnd => {
                &[Capability::Session]
            }
            Choice::WastefulPlanner | Choice::BorrowsUnlistedOutput | Choice::AliasesUnreported => {
                &[Capability::Memory]
            }
            Choice::NoBatchOnDynamic => &[Capability::Transfer],
            Choice::OtherHash
            | Choice::Packed
            | Choice::Duplicates
            | Choice::MissingUserDirRefused
            | Choice::MissingWorkPathRefused
            | Choice::UncreatableWorkPathSkipped
            | Choice::FailedLoadLeavesItsDir => &[Capability::Weights],
            Choice::LenientSpellings | Choice::IgnoreInvalid => &Capability::ALL,
        }
    }
}

/// The reference with one choice made otherwise.
struct Variant(Choice);

/// A scenario whose option maps the variant can respell.
trait WithOptions: Clone {
    fn maps(&mut self) -> &mut OptionMaps;
    /// What the options layer knows of the graph and the run.
    fn context(&self) -> Context {
        Context::plain()
    }
}

macro_rules! with_options {
    ($($t:ty),*) => {$(
        impl WithOptions for $t {
            fn maps(&mut self) -> &mut OptionMaps {
                &mut self.options
            }
        }
    )*};
}

with_options!(
    ge_spec::vocab::memory::MemoryScenario,
    ge_spec::vocab::session::SessionScenario,
    WeightsScenario
);

impl WithOptions for ge_spec::vocab::options::OptionsScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        Context::of(self)
    }
}

impl WithOptions for ge_spec::vocab::transfer::TransferScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        ge_conformance::oracle::transfer::context(self)
    }
}

/// Takes out of `maps` every value the options layer refuses, returning a warning for each:
/// the engine ignores an invalid value instead of rejecting its option.
fn ignore_invalid(maps: &mut OptionMaps, ctx: Context) -> Vec<Diagnostic> {
    let reading = Reading::new(Profile::Documented, maps, ctx);
    let mut warnings = Vec::new();
    for e in &reading.errors {
        let (Some(key), Some(level)) = (e.key.as_deref(), e.level) else {
            continue;
        };
        if let Some(value) = maps.at_mut(level).remove(key) {
            warnings.push(
                Diagnostic::new("", "an invalid value is ignored")
                    .key(key)
                    .level(level)
                    .value(value),
            );
        }
    }
    warnings
}

impl Variant {
    /// The scenario the reference is asked (the one given, its options respelled or cleaned
    /// as the variant reads them) and the warnings the variant adds.
    fn scenario<S: WithOptions>(&self, s: &S) -> (S, Vec<Diagnostic>) {
        let mut s = s.clone();
        let ctx = s.context();
        let warnings = match self.0 {
            Choice::LenientSpellings => {
                read_leniently(s.maps());
                Vec::new()
            }
            Choice::IgnoreInvalid => ignore_invalid(s.maps(), ctx),
            _ => Vec::new(),
        };
        (s, warnings)
    }
}

fn first_clause_of(key: &str) -> Option<String> {
    Spec::embedded()
        .clauses()
        .find(|c| c.option.is_some_and(|o| o.as_str() == key))
        .map(|c| c.id.clone())
}

fn relabel(choice: Choice, list: &mut [Diagnostic]) {
    for d in list.iter_mut() {
        match choice {
            Choice::NoClause => d.clause.clear(),
            Choice::OptionClause => {
                if let Some(c) = d.key.as_deref().and_then(first_clause_of) {
                    d.clause = c;
                }
            }
            _ => {}
        }
    }
}

/// Moves every index list the reference warned about (an index out of range, IRM-003 or
/// ORM-003) from `effective` to `rejected`, with one error about it instead of the warnings.
fn refuse_out_of_range(o: &mut ge_spec::vocab::options::OptionsObservation) {
    let keys: std::collections::BTreeSet<String> = o
        .warnings
        .iter()
        .filter(|w| w.clause == "IRM-003" || w.clause == "ORM-003")
        .filter_map(|w| w.key.clone())
        .collect();
    for key in keys {
        let level = o
            .warnings
            .iter()
            .find(|w| w.key.as_deref() == Some(key.as_str()))
            .and_then(|w| w.level);
        o.warnings
            .retain(|w| w.key.as_deref() != Some(key.as_str()));
        o.effective.remove(&key);
        o.rejected.push(key.clone());
        let mut e = Diagnostic::new("", "an index is out of range").key(key);
        e.level = level;
        o.errors.push(e);
    }
    o.rejected.sort();
}

/// Respells, at every level, each value of the twelve options that the reference would refuse
/// for its spelling alone but that reads as a number (or a list of numbers): the engine takes
/// ` 1`, `+1`, `05` or `1, 2` for what it spells.
fn read_leniently(maps: &mut OptionMaps) {
    let spec = Spec::embedded();
    for level in Level::ALL {
        for (key, raw) in maps.at_mut(level).iter_mut() {
            let Ok(key) = key.parse::<OptionKey>() else {
                continue;
            };
            let grammar = spec.option(key).grammar;
            if grammar == Grammar::Path {
                continue;
            }
            if let Some(m) = read_reported(grammar, raw) {
                *raw = m.canonical();
            }
        }
    }
}

/// The user's weight directory, sandbox-relative, when the scenario writes weights there
/// (`ge.externalWeight` 1 or 2) and nothing is at that path yet.
fn missing_user_dir(s: &WeightsScenario, sandbox: &Path) -> Option<String> {
    let get = |k: &str| s.options.session.get(k).or_else(|| s.options.global.get(k));
    if !matches!(
        get("ge.externalWeight").map(String::as_str),
        Some("1" | "2")
    ) {
        return None;
    }
    let dir = get("ge.externalWeightDir").filter(|d| !d.is_empty())?;
    let base: Vec<String> = s
        .work_dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect();
    let parts = ge_spec::vocab::weights::resolve_in_sandbox(&base, dir)?;
    let rel = parts.join("/");
    let exists = fs::symlink_metadata(sandbox.join(&rel)).is_ok();
    (!exists && !rel.is_empty()).then_some(rel)
}

/// When the scenario writes weights under ASCEND_WORK_PATH (mode 1 or 2, no
/// ge.externalWeightDir) and nothing is at that path: the path, and whether it could be
/// created (no file, link or other non-directory in the way above it).
fn missing_work_path(s: &WeightsScenario, sandbox: &Path) -> Option<(String, bool)> {
    let get = |k: &str| s.options.session.get(k).or_else(|| s.options.global.get(k));
    if !matches!(
        get("ge.externalWeight").map(String::as_str),
        Some("1" | "2")
    ) || get("ge.externalWeightDir").is_some_and(|d| !d.is_empty())
    {
        return None;
    }
    let ge_spec::vocab::weights::WorkPathEnv::Set { path } = &s.ascend_work_path else {
        return None;
    };
    let parts = ge_spec::vocab::weights::resolve_in_sandbox(&[], path)?;
    if parts.is_empty() || fs::symlink_metadata(sandbox.join(parts.join("/"))).is_ok() {
        return None;
    }
    let mut creatable = true;
    for end in 1..parts.len() {
        let above = sandbox.join(parts[..end].join("/"));
        match fs::symlink_metadata(&above) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                creatable = false;
                break;
            }
            Err(_) => break,
        }
    }
    Some((parts.join("/"), creatable))
}

/// Sets the session's staticMemoryPolicy to what it and GE_USE_STATIC_MEMORY say together.
fn follow_environment(s: &mut ge_spec::vocab::session::SessionScenario) {
    let key = "ge.exec.staticMemoryPolicy";
    let Some(env) = s.ge_use_static_memory.clone() else {
        return;
    };
    let set = s
        .options
        .session
        .get(key)
        .or_else(|| s.options.global.get(key));
    let own: u8 = match set.map(|v| v.parse::<u8>()) {
        None => 0,
        Some(Ok(p)) if p <= 4 => p,
        Some(_) => return,
    };
    let said = |values: &[&str]| values.contains(&env.as_str());
    let statics = matches!(own, 2 | 4) || said(&["1", "2", "4"]);
    let dynamics = matches!(own, 3 | 4) || said(&["3", "4"]);
    let combined = match (statics, dynamics) {
        (true, true) => 4,
        (true, false) => 2,
        (false, true) => 3,
        (false, false) => own,
    };
    if combined != own {
        s.options.session.insert(key.into(), combined.to_string());
    }
}

/// The byte range of tensor `t` in plan `o` (`None`: not placed or empty).
fn range(o: &MemoryObservation, t: &Tensor) -> Option<(u64, u64)> {
    let at = *o.offsets.get(&t.name)?;
    (t.size > 0).then(|| (at, at + t.size))
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

/// Gives every mode-1 FileConstant a file of its own, `weight_` and the SHA-256 of its name and
/// of its bytes' hash, on disk (where the load left the file) and in the observation.
fn own_files(obs: &mut WeightsObservation, sandbox: &Path) {
    let mode1 = |p: &str| {
        p.rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("weight_") && n.len() == 71)
    };
    let old: std::collections::BTreeMap<String, WrittenFile> = obs
        .files
        .iter()
        .filter(|f| mode1(&f.path))
        .map(|f| (f.path.clone(), f.clone()))
        .collect();
    if old.is_empty() {
        return;
    }
    let mut new_files = Vec::new();
    let mut renamed: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for n in &mut obs.nodes {
        let Some(f) = n.file.as_deref().and_then(|f| old.get(f)) else {
            continue;
        };
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        let hash = sha(format!("{}\0{}", n.name, f.sha256).as_bytes());
        let path = if dir.is_empty() {
            format!("weight_{hash}")
        } else {
            format!("{dir}/weight_{hash}")
        };
        if let Ok(bytes) = fs::read(sandbox.join(&f.path)) {
            let _ = fs::write(sandbox.join(&path), bytes);
        }
        renamed
            .entry(f.path.clone())
            .or_default()
            .push(path.clone());
        new_files.push(WrittenFile {
            path: path.clone(),
            ..f.clone()
        });
        n.file = Some(path);
    }
    for path in old.keys() {
        let _ = fs::remove_file(sandbox.join(path));
    }
    obs.files.retain(|f| !old.contains_key(&f.path));
    obs.files.extend(new_files);
    obs.files.sort_by(|a, b| a.path.cmp(&b.path));
    let removed = std::mem::take(&mut obs.removed);
    for r in removed {
        match renamed.get(&r) {
            Some(paths) => obs.removed.extend(paths.iter().cloned()),
            None => obs.removed.push(r),
        }
    }
    obs.removed.sort();
    obs.removed.dedup();
}

/// Rewrites the reference's trace so that each shared pool is kept once taken: its last
/// graph's unload gives nothing back, a later load takes it again only when it needs more than
/// the pool holds (freeing the smaller first, as growth does), and the session's close (step
/// `end`) gives it back.
fn keep_pools(trace: &mut Vec<TraceEntry>, end: u32) {
    let is_pool = |p: &str| p == "static-pool" || p == "dynamic-pool";
    let old = std::mem::take(trace);
    let mut held: std::collections::BTreeMap<String, u64> = Default::default();
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

fn sha(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Renames every mode-1 file `weight_<hash>` to `weight_<hash reversed>`, on disk and in the
/// observation.
fn other_hash(obs: &mut WeightsObservation, sandbox: &Path) {
    let rename = |p: &str| match p.rsplit_once("weight_") {
        Some((dir, hash)) if hash.len() == 64 && !hash.contains('/') => {
            format!("{dir}weight_{}", hash.chars().rev().collect::<String>())
        }
        _ => p.to_owned(),
    };
    for f in &mut obs.files {
        let new = rename(&f.path);
        // A file unload removed already is reported under the name the engine gave it.
        let _ = fs::rename(sandbox.join(&f.path), sandbox.join(&new));
        f.path = new;
    }
    for n in &mut obs.nodes {
        n.file = n.file.as_deref().map(rename);
    }
    for r in &mut obs.removed {
        *r = rename(r);
    }
}

impl Backend for Variant {
    fn name(&self) -> &str {
        "choice-variant"
    }

    fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
        self.0.capabilities().iter().copied().collect()
    }

    fn options(
        &self,
        s: &ge_spec::vocab::options::OptionsScenario,
    ) -> Answer<ge_spec::vocab::options::OptionsObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).options(&s)?;
        o.warnings.extend(added);
        if let Choice::OneErrorPerKey = self.0 {
            let mut seen = std::collections::BTreeSet::new();
            o.errors.retain(|d| seen.insert(d.key.clone()));
        }
        if let Choice::RefuseListOutOfRange = self.0 {
            refuse_out_of_range(&mut o);
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn transfer(
        &self,
        s: &ge_spec::vocab::transfer::TransferScenario,
    ) -> Answer<ge_spec::vocab::transfer::TransferObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).transfer(&s)?;
        o.warnings.extend(added);
        if let Choice::NoBatchOnDynamic = self.0 {
            if s.shape == ge_spec::ShapeKind::Dynamic {
                o.direct.append(&mut o.batched);
                o.direct.sort_unstable();
            }
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn memory(
        &self,
        s: &ge_spec::vocab::memory::MemoryScenario,
    ) -> Answer<ge_spec::vocab::memory::MemoryObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).memory(&s)?;
        o.warnings.extend(added);
        let reuse_on = !Level::ALL.iter().any(|&l| {
            s.options
                .at(l)
                .get("ge.exec.disableReuseMemory")
                .is_some_and(|v| v != "0")
        });
        if o.errors.is_empty() && !o.offsets.is_empty() && reuse_on {
            match self.0 {
                Choice::WastefulPlanner => waste_one(&s, &mut o),
                Choice::BorrowsUnlistedOutput => borrow_unlisted_output(&s, &mut o),
                Choice::AliasesUnreported => o.aliases.clear(),
                _ => {}
            }
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn session(
        &self,
        s: &ge_spec::vocab::session::SessionScenario,
    ) -> Answer<ge_spec::vocab::session::SessionObservation> {
        let (mut s, added) = self.scenario(s);
        if let Choice::FollowsEnvironment = self.0 {
            follow_environment(&mut s);
        }
        let mut o = Reference::new(Profile::Documented).session(&s)?;
        o.warnings.extend(added);
        if let Choice::PoolsKept = self.0 {
            if !o.trace.is_empty() {
                keep_pools(&mut o.trace, s.events.len() as u32);
            }
        }
        if let Choice::IoKeptToTheEnd = self.0 {
            let end = s.events.len() as u32;
            let unloads = |step: u32| {
                matches!(
                    s.events.get(step as usize),
                    Some(ge_spec::vocab::session::SessionEvent::Unload { .. })
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
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let (s, added) = self.scenario(s);
        let s = &s;
        let missing = match self.0 {
            Choice::MissingUserDirRefused => missing_user_dir(s, sandbox),
            Choice::MissingWorkPathRefused => missing_work_path(s, sandbox).map(|(p, _)| p),
            _ => None,
        };
        if let Choice::UncreatableWorkPathSkipped = self.0 {
            if let Some((_, false)) = missing_work_path(s, sandbox) {
                let mut passed_over = s.clone();
                passed_over.ascend_work_path = ge_spec::vocab::weights::WorkPathEnv::Unset;
                let mut o = Reference::new(Profile::Documented).weights(&passed_over, sandbox)?;
                o.warnings.extend(added);
                return Ok(o);
            }
        }
        if let Choice::FailedLoadLeavesItsDir = self.0 {
            if s.unload {
                let mut kept = s.clone();
                kept.unload = false;
                let o = Reference::new(Profile::Documented).weights(&kept, sandbox)?;
                if !o.errors.is_empty() {
                    return Ok(o);
                }
            }
        }
        {
            if let Some(dir) = missing {
                return Ok(WeightsObservation {
                    dir: String::new(),
                    files: Vec::new(),
                    nodes: Vec::new(),
                    removed: Vec::new(),
                    errors: vec![Diagnostic::new("", "the weight directory does not exist")
                        .subject(ge_spec::Subject::path(dir))],
                    warnings: added,
                });
            }
        }
        let mut o = Reference::new(Profile::Documented).weights(s, sandbox)?;
        o.warnings.extend(added);
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        match self.0 {
            Choice::OtherHash => other_hash(&mut o, sandbox),
            Choice::Packed if !s.unload => common::engines::pack_combined(&mut o, sandbox),
            Choice::Duplicates => {
                own_files(&mut o, sandbox);
                if !s.unload {
                    common::engines::pack_combined_with(&mut o, sandbox, false);
                }
            }
            _ => {}
        }
        Ok(o)
    }
}

fn run(choice: Choice, judging: Judging, filter: Option<String>) -> Report {
    let cfg = Config {
        judging,
        cases: 48,
        filter,
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    certify::certify(&Variant(choice), &cfg, &mut |_, _, _| {}).expect("a run")
}

/// The variant's run at level `documented`, made once per choice in a process: several cases
/// judge one choice (on different clauses), and the run does not depend on the clause.
fn documented(choice: Choice) -> Arc<Report> {
    type Runs = Mutex<BTreeMap<String, Arc<OnceLock<Arc<Report>>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let slot = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(format!("{choice:?}"))
        .or_default()
        .clone();
    slot.get_or_init(|| Arc::new(run(choice, Judging::DEFAULT, None)))
        .clone()
}

fn failures(report: &Report) -> Vec<String> {
    report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
        .collect()
}

#[rstest]
#[case::no_clause_cited(Choice::NoClause, "OPT-012")]
#[case::option_clause_cited(Choice::OptionClause, "OPT-012")]
#[case::one_error_per_key(Choice::OneErrorPerKey, "OPT-012")]
#[case::refuse_list_out_of_range(Choice::RefuseListOutOfRange, "IRM-005")]
#[case::other_hash(Choice::OtherHash, "EXW-012")]
#[case::packed_combined_file(Choice::Packed, "EXW-015")]
#[case::lenient_spellings(Choice::LenientSpellings, "OPT-003")]
#[case::lenient_index_lists(Choice::LenientSpellings, "ORM-004")]
#[case::lenient_pair_lists(Choice::LenientSpellings, "ORI-006")]
#[case::ignore_invalid(Choice::IgnoreInvalid, "OPT-005")]
#[case::pools_kept_for_the_session(Choice::PoolsKept, "SMP-013")]
#[case::no_batch_copy_on_dynamic_shapes(Choice::NoBatchOnDynamic, "IBC-015")]
#[case::missing_user_dir_refused(Choice::MissingUserDirRefused, "EWD-012")]
#[case::invalid_mode_ignored_by_the_load(Choice::IgnoreInvalid, "WGT-009")]
#[case::missing_work_path_refused(Choice::MissingWorkPathRefused, "WGT-003")]
#[case::uncreatable_work_path_skipped(Choice::UncreatableWorkPathSkipped, "EXW-022")]
#[case::failed_load_leaves_its_dir(Choice::FailedLoadLeavesItsDir, "EXW-021")]
#[case::wasteful_planner(Choice::WastefulPlanner, "DRM-016")]
#[case::borrows_unlisted_output(Choice::BorrowsUnlistedOutput, "ORM-010")]
#[case::follows_ge_use_static_memory(Choice::FollowsEnvironment, "SMP-016")]
#[case::io_area_kept_to_the_end(Choice::IoKeptToTheEnd, "RZC-013")]
#[case::aliases_unreported(Choice::AliasesUnreported, "ORI-010")]
#[case::own_file_per_constant(Choice::Duplicates, "EXW-013")]
#[case::duplicates_stored_again(Choice::Duplicates, "EXW-020")]
fn a_choice_the_text_allows_certifies_and_deviates_on_its_clause(
    #[case] choice: Choice,
    #[case] clause: &str,
) {
    let doc = documented(choice);
    assert!(
        doc.certified,
        "{choice:?} must certify at level documented; failed:\n{}",
        failures(&doc).join("\n")
    );
    let deviated = doc
        .trials
        .iter()
        .find(|t| t.deviations.iter().any(|c| c == clause));
    let Some(deviated) = deviated else {
        panic!("{choice:?} must show {clause} as a deviation");
    };
    // The trial that deviated, again at level strict: the same scenarios, judged with the
    // suite's choices binding.
    let strict = run(
        choice,
        Judging::DEFAULT.strict(),
        Some(deviated.name.clone()),
    );
    assert!(!strict.certified);
    assert!(
        strict
            .trials
            .iter()
            .any(|t| t.outcome == Outcome::Fail && t.broken.iter().any(|c| c == clause)),
        "{choice:?} must fail {clause} at level strict"
    );
}

#[test]
fn the_published_table_lists_exactly_these_variants() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let doc = fs::read_to_string(format!("{root}/docs/choices.md")).expect("docs/choices.md");
    let me = fs::read_to_string(format!("{root}/harness/tests/it/choice_variants.rs"))
        .expect("this file");
    let mut rows = Vec::new();
    for line in me.lines() {
        let Some(rest) = line.trim().strip_prefix("#[case::") else {
            continue;
        };
        let (name, args) = rest.split_once('(').expect("a case attribute");
        let clause = args.rsplit('"').nth(1).expect("a clause");
        rows.push(format!("| `{name}` |"));
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("docs/choices.md has no row for {name}"));
        assert!(row.trim_end().ends_with(&format!("| {clause} |")), "{row}");
    }
    let listed = doc.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(listed, rows.len(), "docs/choices.md lists other variants");
}

/// The suite's choices (reference-defined clauses under the documented profile) that no
/// variant here and no fault row named after a choice (`docs/faults.md`, level `strict`) makes
/// otherwise, each with why. `docs/choices.md` lists the same. An entry that gains a variant
/// or a row must go: the list only shrinks.
const NO_VARIANT: &[(&str, &str)] = &[
    ("IBC-014", "covered by the fault row `HostInputCount` (OPT-008): counting only host inputs changes the IBC-003 warning alone"),
    ("IFS-015", "no other reading: the unit of the source text's own figures, which the suite's cases use; an engine is given bytes and never a unit"),
    ("IFS-017", "no other reading: an empty input is within any threshold above 0, so IFS-010 fuses it (the row `ZeroByteNotMoved` fails there)"),
    ("IFS-019", "no other reading: an input within the threshold by its bytes is fused by IFS-010 (the row `AlignedSizes` fails there)"),
    ("IFS-020", "covered by `ignore_invalid` (OPT-005), the one other answer the text leaves: any value in force but the default breaks IFS-001"),
    ("OPT-009", "no other reading: the scenario's spelling of products, which an engine reads and does not choose"),
    ("OPT-010", "covered by the fault row `Silence(\"OPT-002\")`: the index options are one case of OPT-002, stated apart for the upstream profile"),
    ("OPT-011", "no other reading: how the upstream profile reports upstream's later refusals; the documented profile does not use it"),
    ("SES-016", "no other reading: what a scenario's option maps mean for its graphs, the vocabulary's, which an engine reads and does not choose"),
    ("SMP-015", "no other reading: a policy that a graph's map changes would take effect at graph level, which SMP-002 rules out"),
    ("TRF-005", "covered by the fault row `PlanningDespiteErrors` (TRF-004), whose oracle clause it is: a plan made despite errors"),
    ("WGT-001", "no other reading: the sandbox's rule for scenario paths, without which no run can be judged safely"),
];

#[test]
fn every_choice_of_the_suite_has_a_variant_or_a_reason() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let me = fs::read_to_string(format!("{root}/harness/tests/it/choice_variants.rs"))
        .expect("this file");
    let faults = fs::read_to_string(format!("{root}/docs/faults.md")).expect("docs/faults.md");
    let mut varied: std::collections::BTreeSet<String> = me
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#[case::"))
        .filter_map(|rest| rest.rsplit('"').nth(1))
        .map(str::to_owned)
        .collect();
    // A fault row at level strict is a choice made otherwise, held to no failure at level
    // documented (common::assert_no_failure_at_documented_for_a_choice).
    for row in faults
        .lines()
        .filter(|l| l.trim_end().ends_with("| strict |"))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // The transfer rows name the oracle's clause second: the first is the row's.
        if let Some(clause) = cells.get(4).and_then(|c| c.split(',').next()) {
            varied.insert(clause.trim().trim_matches('`').to_owned());
        }
    }
    let documented = Judging::DEFAULT;
    let mut missing = Vec::new();
    for c in Spec::embedded().clauses() {
        let listed = NO_VARIANT.iter().find(|(id, _)| *id == c.id);
        let varied = varied.contains(&c.id);
        if documented.binds(&c.id) {
            assert!(listed.is_none(), "{} binds at level documented", c.id);
            continue;
        }
        match (varied, listed) {
            (true, Some(_)) => panic!("{} has a variant now: take it out of NO_VARIANT", c.id),
            (false, None) => missing.push(c.id.clone()),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "choices with no variant and no reason: {missing:?}"
    );
    let doc = fs::read_to_string(format!("{root}/docs/choices.md")).expect("docs/choices.md");
    for (id, why) in NO_VARIANT {
        let row = format!("| {id} | {why} |");
        assert!(doc.contains(&row), "docs/choices.md lacks the row {row}");
    }
}
