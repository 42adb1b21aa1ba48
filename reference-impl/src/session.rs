//! The reference session capability: runs a script of graph loads, executions, feature-base
//! refreshes and unloads in one session, and records every device allocation and release.
//!
//! The model, clause by clause (see `spec/tables/clauses/{SES,SMP,RZC,FBR}.toml`):
//! - options are resolved before anything runs, once for the session and once per load; any
//!   rejected option stops the script before its first event (SES-016, SES-017); upstream only
//!   a value GE refuses at initialisation or session creation does, and any other refusal
//!   refuses the one load whose checks make it, the rest of the script running;
//! - feature memory is taken at load and given back at unload (SES-018): a block of its own
//!   (`graph-<id>/feature`) or a shared pool (`static-pool`, `dynamic-pool`) chosen by
//!   `ge.exec.staticMemoryPolicy` and the graph's shape (SMP-010..014): the session's policy,
//!   or upstream the graph's own (SMP-015); the documented pool is one block taken again at the
//!   larger size, the upstream static pool a set of blocks that only grows (SMP-011, SMP-012);
//! - the zero-copy I/O area is a block of its own (`graph-<id>/io`), allocated per execution or
//!   once per load by `ge.exec.reuseZeroCopyMemory` (RZC-010..013); upstream, a static-shape
//!   graph has no such area: with `0` its I/O bytes are part of its feature memory, with `1` the
//!   caller's buffers are used, and a dynamic-shape graph takes its I/O memory per execution
//!   whatever the value ([`io_place`]);
//! - refreshes never touch the trace (upstream, the first accepted one gives back the feature
//!   memory taken at load, SES-018); their result follows `ge.featureBaseRefreshable`
//!   (FBR-010..014);
//! - a script error refuses the one event and the script goes on (SES-012); at the end every
//!   graph still loaded is unloaded, in ascending id order (SES-011).

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use ge_spec::vocab::session::{
    RefreshResult, SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry,
};
use ge_spec::{
    Answer, Diagnostic, OptionKey, OptionMaps, Part, Product, Profile, RunMode, ShapeKind, Subject,
};

use crate::options::{check_point, resolve, CheckPoint, Context, Resolution};

/// Largest number of events, and largest total of executions, in one script (SES-020).
pub const MAX_SCRIPT: u64 = 100_000;

/// The graph-level option map that applies to one load (SES-016): the load's own map when it
/// brings one, the scenario's `options.graph` otherwise.
pub fn graph_maps(
    scenario: &SessionScenario,
    own: Option<&BTreeMap<String, String>>,
) -> OptionMaps {
    OptionMaps {
        global: scenario.options.global.clone(),
        session: scenario.options.session.clone(),
        graph: own
            .cloned()
            .unwrap_or_else(|| scenario.options.graph.clone()),
    }
}

/// The entries of a graph-level map that set one of the twelve options, as (key, value).
type OptionEntries<'a> = Vec<(&'a str, &'a str)>;

/// The [`OptionEntries`] of a graph-level map.
fn option_entries(graph: &BTreeMap<String, String>) -> OptionEntries<'_> {
    graph
        .iter()
        .filter(|(k, _)| k.parse::<OptionKey>().is_ok())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// The option context of a graph of `shape` in a session (asynchronous run, default product,
/// input and output counts unknown).
pub fn context(shape: ShapeKind) -> Context {
    Context {
        inputs: None,
        outputs: None,
        shape,
        run_mode: RunMode::Async,
        product: Product::default(),
    }
}

/// The two shared pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum PoolKind {
    Static,
    Dynamic,
}

impl PoolKind {
    fn name(self) -> &'static str {
        match self {
            PoolKind::Static => "static-pool",
            PoolKind::Dynamic => "dynamic-pool",
        }
    }
}

/// The pooling policy in force once `GE_USE_STATIC_MEMORY` is taken into account (SMP-016).
///
/// The documented profile ignores the variable (the source text names none). Upstream expands
/// static-shape memory when the option or the variable says `1`, `2` or `4`, and dynamic-shape
/// memory when either says `3` or `4`; the variable is compared as exact text. The result is
/// written as the policy that expands the same shapes (`0`, `2`, `3` or `4`).
pub fn effective_policy(profile: Profile, policy: u8, env: Option<&str>) -> u8 {
    let env = match profile {
        Profile::Documented => None,
        Profile::Upstream => env,
    };
    let fixed = matches!(policy, 1 | 2 | 4) || matches!(env, Some("1" | "2" | "4"));
    let dynamic = matches!(policy, 3 | 4) || matches!(env, Some("3" | "4"));
    match (fixed, dynamic) {
        (true, true) => 4,
        (true, false) => 2,
        (false, true) => 3,
        (false, false) => 0,
    }
}

/// The policy value that decides where one graph's feature memory comes from (SMP-015), before
/// `GE_USE_STATIC_MEMORY` is combined with it: the session's (`session`, from its global and
/// session maps) under the documented profile; upstream, the graph's own resolution (`graph`:
/// its graph-level value first, then the session's, then the global one), since GE reads the
/// policy through the context that holds the graph's options while it loads the graph
/// (SMP-015's upstream entry).
pub fn graph_policy(profile: Profile, session: u8, graph: u8) -> u8 {
    match profile {
        Profile::Documented => session,
        Profile::Upstream => graph,
    }
}

/// Which pool, if any, serves a graph of `shape` under `policy` (SMP-010, SMP-011, SMP-014).
fn pool_for(policy: u8, shape: ShapeKind) -> Option<PoolKind> {
    match (policy, shape) {
        (2 | 4, ShapeKind::Static) => Some(PoolKind::Static),
        (3 | 4, ShapeKind::Dynamic) => Some(PoolKind::Dynamic),
        _ => None,
    }
}

/// The granule of the upstream static pool's blocks: 2 MiB (SMP-012's upstream entry).
pub const POOL_GRANULE: u64 = 2 * 1024 * 1024;

/// The bytes of the block the upstream static pool adds for a need no block it holds can cover
/// (SMP-011, SMP-012 upstream): the whole need, rounded up to a multiple of [`POOL_GRANULE`]
/// when it is larger than one granule. A need whose rounding does not fit in 64 bits is taken
/// as it is (GE's sizes are signed 64-bit and never get there).
pub fn upstream_pool_block(need: u64) -> u64 {
    if need > POOL_GRANULE {
        need.checked_next_multiple_of(POOL_GRANULE).unwrap_or(need)
    } else {
        need
    }
}

/// Where a graph's zero-copy I/O bytes live (RZC-010..013).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoPlace {
    /// A `graph-<id>/io` block allocated and freed by every execution (RZC-010, RZC-011).
    PerExecution,
    /// One `graph-<id>/io` block from load to unload (RZC-012, RZC-013).
    PerLoad,
    /// Part of the graph's feature memory, taken at load and given back at unload: upstream,
    /// static shape, `0` (RZC-010, RZC-011 upstream).
    InFeature,
    /// Nowhere: the caller's buffers are used and GE allocates none: upstream, static shape,
    /// `1` (RZC-013 upstream).
    Caller,
}

/// Where the I/O bytes of a graph of `shape` live under `profile` when
/// `ge.exec.reuseZeroCopyMemory` is `reuse` (RZC-010..013 and their upstream entries).
///
/// Upstream, the static-shape path sizes the feature memory taken at load with the zero-copy
/// bytes when the value is not `1`, and without them when it is; no execution allocates I/O
/// memory. The dynamic-shape path never reads the option and takes its I/O memory during
/// each execution.
pub fn io_place(profile: Profile, shape: ShapeKind, reuse: bool) -> IoPlace {
    match (profile, shape, reuse) {
        (Profile::Documented, _, false) | (Profile::Upstream, ShapeKind::Dynamic, _) => {
            IoPlace::PerExecution
        }
        (Profile::Documented, _, true) => IoPlace::PerLoad,
        (Profile::Upstream, ShapeKind::Static, false) => IoPlace::InFeature,
        (Profile::Upstream, ShapeKind::Static, true) => IoPlace::Caller,
    }
}

/// The blocks the upstream static pool adds for one graph's pieces (SMP-011, SMP-012 and
/// RZC-010, RZC-013 upstream), given the blocks it holds.
///
/// Each piece is `(bytes, allocated)`, in the order of their place in the graph's memory (the
/// feature memory first, then the zero-copy bytes). Every held block is taken as empty for the
/// graph being loaded; the pieces, largest first (equal sizes in their order), are laid one
/// after another into the held blocks, largest block first, each where it still fits. A piece
/// that fits nowhere gets a block of its own ([`upstream_pool_block`]) if it is allocated; the
/// zero-copy piece of a graph using the caller's buffers is laid into the blocks like the
/// others, taking room there, but never allocated.
pub fn upstream_pool_blocks(held: &[u64], pieces: &[(u64, bool)]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..pieces.len()).filter(|&i| pieces[i].0 > 0).collect();
    // A stable sort keeps equal sizes in their order, as GE's sort does for two pieces.
    order.sort_by(|&a, &b| pieces[b].0.cmp(&pieces[a].0));
    let mut blocks: Vec<u64> = held.to_vec();
    blocks.sort_unstable_by(|a, b| b.cmp(a));
    let mut placed = vec![false; pieces.len()];
    for total in blocks {
        let mut used = 0u64;
        for &i in &order {
            if !placed[i] && pieces[i].0 <= total - used {
                placed[i] = true;
                used += pieces[i].0;
            }
        }
    }
    (0..pieces.len())
        .filter(|&i| !placed[i] && pieces[i].1 && pieces[i].0 > 0)
        .map(|i| upstream_pool_block(pieces[i].0))
        .collect()
}

#[derive(Debug, Default)]
struct Pool {
    /// The blocks held, in bytes (empty: not allocated). The documented pool holds at most one;
    /// the upstream static pool one per need that did not fit the earlier ones.
    blocks: Vec<u64>,
    /// Graphs that draw on it.
    users: BTreeSet<u32>,
}

#[derive(Debug)]
struct Graph {
    shape: ShapeKind,
    feature: u64,
    io: u64,
    pool: Option<PoolKind>,
    io_place: IoPlace,
    refreshable: bool,
    base_set: bool,
    /// Upstream: an accepted refresh gave back the feature memory taken at load (SES-018).
    released: bool,
}

impl Graph {
    /// The bytes of the graph's own feature block: its feature bytes, and upstream on the
    /// static-shape path with `0` its I/O bytes too (RZC-010 upstream). A sum past 64 bits is
    /// held at the largest value (no device gets there).
    fn feature_block(&self) -> u64 {
        match self.io_place {
            IoPlace::InFeature => self.feature.saturating_add(self.io),
            _ => self.feature,
        }
    }
}

struct Run {
    profile: Profile,
    trace: Vec<TraceEntry>,
    refreshes: Vec<RefreshResult>,
    errors: Vec<Diagnostic>,
    graphs: BTreeMap<u32, Graph>,
    /// Upstream: graphs added whose compilation or build GE refused (SES-017); they hold no
    /// memory, refuse executions and refreshes, and an unload removes them without an error.
    unbuilt: BTreeSet<u32>,
    pools: BTreeMap<PoolKind, Pool>,
}

impl Run {
    /// SES-017 upstream: whether GE refuses the load of graph `id` on options, with the load's
    /// resolution `r`; the refusals GE reports are recorded as errors naming the graph.
    ///
    /// A graph already added and unbuilt fails again: its new map meets the addition checks
    /// (their refusal is reported), then the compilation runs on the map it was added with,
    /// which fails again, with no new error. Otherwise the load is refused when its
    /// resolution rejects a value: refused at addition, the graph is never added; at
    /// compilation or build, it stays added and unbuilt (unless a loaded graph holds the id:
    /// that one stays as it is).
    fn refused_by_options(&mut self, id: u32, r: Option<&Resolution>) -> bool {
        let errors = r.map_or(&[][..], |r| r.observation.errors.as_slice());
        let first = errors.iter().map(check_point).min();
        if self.unbuilt.contains(&id) {
            for d in errors
                .iter()
                .filter(|d| check_point(d) == CheckPoint::Addition)
            {
                self.errors.push(for_graph(d.clone(), id));
            }
            return true;
        }
        let Some(first) = first else {
            return false;
        };
        self.errors
            .extend(errors.iter().map(|d| for_graph(d.clone(), id)));
        if first == CheckPoint::Compilation && !self.graphs.contains_key(&id) {
            self.unbuilt.insert(id);
        }
        true
    }

    fn push(&mut self, step: u32, action: TraceAction, pool: String, bytes: u64) {
        // SES-015: a block of no bytes is never allocated, so never freed either.
        if bytes > 0 {
            self.trace.push(TraceEntry {
                step,
                action,
                pool,
                bytes,
            });
        }
    }

    fn refuse(&mut self, step: u32, clause: &str, message: String) {
        self.errors
            .push(Diagnostic::new(clause, message).subject(Subject::step(step)));
    }

    fn load(&mut self, step: u32, id: u32, graph: Graph) {
        if self.graphs.contains_key(&id) {
            return self.refuse(
                step,
                "SES-012",
                format!("graph {id} is already loaded; the load is refused"),
            );
        }
        match graph.pool {
            Some(kind) if self.profile == Profile::Upstream && kind == PoolKind::Static => {
                let pool = self.pools.entry(kind).or_default();
                pool.users.insert(id);
                // SMP-011, SMP-012 upstream: pieces that fit the blocks already held take
                // nothing; each other one adds a block of its own, and nothing held is freed.
                // RZC-010, RZC-013 upstream: the zero-copy bytes are a piece of their own,
                // allocated with `0`, laid out but never allocated with `1`, and absent when
                // the graph has no memory to take (GE then never calls the allocator).
                let pieces = match graph.io_place {
                    IoPlace::InFeature => vec![(graph.feature, true), (graph.io, true)],
                    IoPlace::Caller if graph.feature > 0 => {
                        vec![(graph.feature, true), (graph.io, false)]
                    }
                    _ => vec![(graph.feature, true)],
                };
                let added = upstream_pool_blocks(&pool.blocks, &pieces);
                pool.blocks.extend(&added);
                for bytes in added {
                    self.push(step, TraceAction::Alloc, kind.name().into(), bytes);
                }
            }
            Some(kind) => {
                let pool = self.pools.entry(kind).or_default();
                pool.users.insert(id);
                let old = pool.blocks.iter().copied().max().unwrap_or(0);
                if graph.feature > old {
                    // SMP-011: the smaller pool goes first, then the pool is taken again at
                    // the size the new graph needs (SMP-012: exactly that size).
                    pool.blocks = vec![graph.feature];
                    self.push(step, TraceAction::Free, kind.name().into(), old);
                    self.push(step, TraceAction::Alloc, kind.name().into(), graph.feature);
                }
            }
            None => self.push(
                step,
                TraceAction::Alloc,
                format!("graph-{id}/feature"),
                graph.feature_block(),
            ),
        }
        if graph.io_place == IoPlace::PerLoad {
            // RZC-013: the one zero-copy area is planned with the graph, apart from the rest.
            self.push(step, TraceAction::Alloc, format!("graph-{id}/io"), graph.io);
        }
        self.graphs.insert(id, graph);
    }

    fn execute(&mut self, step: u32, id: u32, times: u32) {
        let Some(graph) = self.graphs.get(&id) else {
            return self.refuse(
                step,
                "SES-012",
                format!("graph {id} is not loaded; the execution is refused"),
            );
        };
        if graph.io_place != IoPlace::PerExecution {
            // RZC-012: every execution reuses the area taken at load; upstream, static-shape
            // executions use the feature memory's I/O bytes or the caller's buffers.
            return;
        }
        let io = graph.io;
        for _ in 0..times {
            // RZC-010, RZC-011: a fresh area per execution, released when it ends.
            self.push(step, TraceAction::Alloc, format!("graph-{id}/io"), io);
            self.push(step, TraceAction::Free, format!("graph-{id}/io"), io);
        }
    }

    fn refresh(&mut self, step: u32, id: u32, bytes: u64) {
        let ok = match self.graphs.get_mut(&id) {
            None => {
                self.refuse(
                    step,
                    "SES-012",
                    format!("graph {id} is not loaded; the refresh is refused"),
                );
                false
            }
            Some(graph)
                if self.profile == Profile::Upstream && graph.shape == ShapeKind::Dynamic =>
            {
                // FBR-014 upstream: a dynamic-shape graph refuses every update, the first
                // included, before the size or the option is looked at.
                self.errors.push(
                    Diagnostic::new(
                        "FBR-014",
                        format!("graph {id} has a dynamic shape; its feature base cannot be set"),
                    )
                    .key(OptionKey::FeatureBaseRefreshable.as_str())
                    .subject(Subject::step(step)),
                );
                false
            }
            Some(graph) if bytes < graph.feature => {
                let need = graph.feature;
                self.refuse(
                    step,
                    "FBR-013",
                    format!("graph {id} needs {need} bytes of feature memory; a base of {bytes} bytes is refused"),
                );
                false
            }
            Some(graph) => {
                // FBR-014: on a dynamic-shape graph the option does nothing; the default rule
                // holds.
                let refreshable = graph.refreshable && graph.shape == ShapeKind::Static;
                // FBR-012 upstream: once loaded, a graph that is not refreshable refuses every
                // update, the first included (GE's one setting happens before load).
                let set_before = graph.base_set || self.profile == Profile::Upstream;
                if set_before && !refreshable {
                    let clause = if graph.shape == ShapeKind::Static {
                        "FBR-011"
                    } else {
                        "FBR-014"
                    };
                    self.errors.push(
                        Diagnostic::new(
                            clause,
                            format!("the feature base of graph {id} is already set and cannot be refreshed again"),
                        )
                        .key(OptionKey::FeatureBaseRefreshable.as_str())
                        .subject(Subject::step(step)),
                    );
                    false
                } else {
                    // FBR-012: the first accepted refresh is the initial setting of the base.
                    graph.base_set = true;
                    true
                }
            }
        };
        if ok && self.profile == Profile::Upstream {
            self.release_feature(step, id);
        }
        self.refreshes.push(RefreshResult {
            step,
            graph: id,
            ok,
        });
    }

    /// SES-018 upstream: the first accepted refresh of a loaded graph gives back the feature
    /// memory GE took at load (the graph now runs on the user's base): its own block, or its
    /// share of the pool, the pool going with its last user. Later refreshes and the unload have
    /// none left to give back.
    fn release_feature(&mut self, step: u32, id: u32) {
        let Some(graph) = self.graphs.get_mut(&id) else {
            return;
        };
        if std::mem::replace(&mut graph.released, true) {
            return;
        }
        let (pool, block) = (graph.pool, graph.feature_block());
        self.give_back(step, id, pool, block);
    }

    /// Gives back the feature memory of graph `id`: its own block of `block` bytes, or its place
    /// among the users of `pool`.
    fn give_back(&mut self, step: u32, id: u32, pool: Option<PoolKind>, block: u64) {
        match pool {
            Some(kind) => {
                let pool = self.pools.entry(kind).or_default();
                pool.users.remove(&id);
                if pool.users.is_empty() {
                    // SMP-013: the pool goes with the last graph that draws on it, every block
                    // it holds (upstream, largest first, as GE keeps them sorted).
                    let mut blocks = std::mem::take(&mut pool.blocks);
                    blocks.sort_unstable_by(|a, b| b.cmp(a));
                    for size in blocks {
                        self.push(step, TraceAction::Free, kind.name().into(), size);
                    }
                }
            }
            None => self.push(
                step,
                TraceAction::Free,
                format!("graph-{id}/feature"),
                block,
            ),
        }
    }

    fn unload(&mut self, step: u32, id: u32) {
        if self.unbuilt.remove(&id) {
            // SES-017 upstream: removing an added, unbuilt graph succeeds and frees nothing.
            return;
        }
        let Some(graph) = self.graphs.remove(&id) else {
            return self.refuse(
                step,
                "SES-012",
                format!("graph {id} is not loaded; the unload is refused"),
            );
        };
        if !graph.released {
            self.give_back(step, id, graph.pool, graph.feature_block());
        }
        if graph.io_place == IoPlace::PerLoad {
            self.push(step, TraceAction::Free, format!("graph-{id}/io"), graph.io);
        }
    }
}

/// Names graph `id` in the subject of a diagnostic that belongs to one graph (SES-017).
fn for_graph(mut d: Diagnostic, id: u32) -> Diagnostic {
    d.subject.graph = Some(id);
    d
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

/// Runs a session script under `profile`.
pub fn run(profile: Profile, scenario: &SessionScenario) -> Answer<SessionObservation> {
    let mut obs = SessionObservation::default();
    let events = &scenario.events;
    let executions = scenario.executions();
    if events.len() as u64 > MAX_SCRIPT || executions > MAX_SCRIPT {
        obs.errors.push(
            Diagnostic::new(
                "SES-020",
                format!("the script has {} events and {executions} executions; at most {MAX_SCRIPT} of each are run", events.len()),
            )
            .subject(Subject::part(Part::Script)),
        );
        return Ok(obs);
    }
    let options = SessionOptions::resolve(profile, scenario, &mut obs);
    if options.rejected {
        return Ok(obs);
    }
    let mut run = Run {
        profile,
        trace: Vec::new(),
        refreshes: Vec::new(),
        errors: Vec::new(),
        graphs: BTreeMap::new(),
        unbuilt: BTreeSet::new(),
        pools: BTreeMap::new(),
    };
    for (index, event) in events.iter().enumerate() {
        // The script holds at most MAX_SCRIPT events, so the index fits.
        let step = index as u32;
        match event {
            SessionEvent::Load { .. } => run.load_event(step, event, &options, scenario),
            SessionEvent::Execute { graph, times } => run.execute(step, *graph, *times),
            SessionEvent::Refresh { graph, bytes } => run.refresh(step, *graph, *bytes),
            SessionEvent::Unload { graph } => run.unload(step, *graph),
        }
    }
    // SES-011: the session closes; what is still loaded is unloaded, ascending by id.
    let end = events.len() as u32;
    let left: Vec<u32> = run.graphs.keys().copied().collect();
    for id in left {
        run.unload(end, id);
    }
    // SES-017 upstream: a graph left added but unbuilt holds nothing; it goes without a trace.
    run.unbuilt.clear();
    obs.trace = run.trace;
    obs.refreshes = run.refreshes;
    obs.errors.extend(run.errors);
    obs.canonicalize();
    // Two refused loads of one graph with one map give the same refusal: it is reported once.
    obs.errors.dedup();
    Ok(obs)
}

/// The options of a session (SES-016, SES-017): the session's own resolution, then one per
/// load event (`None` for the other events).
struct SessionOptions {
    session: Rc<Resolution>,
    per_load: Vec<Option<Rc<Resolution>>>,
    /// Upstream, when nothing is refused at session creation: each load answers for its own
    /// options, reported when it runs.
    per_graph: bool,
    /// The script stops before its first event.
    rejected: bool,
}

impl SessionOptions {
    /// Resolves the session's options and each load's, with their diagnostics in `obs`.
    fn resolve(profile: Profile, scenario: &SessionScenario, obs: &mut SessionObservation) -> Self {
        let session_maps = OptionMaps {
            global: scenario.options.global.clone(),
            session: scenario.options.session.clone(),
            graph: BTreeMap::new(),
        };
        let session = Rc::new(resolve(profile, &session_maps, context(ShapeKind::Static)));
        // SES-017: as documented, any rejected option stops the script; upstream, only a value
        // GE refuses at initialisation or session creation does, and every other refusal
        // belongs to the load whose addition, compilation or build makes it, reported when that
        // load runs.
        let per_graph = profile == Profile::Upstream
            && !session
                .observation
                .errors
                .iter()
                .any(|d| check_point(d) == CheckPoint::Session);
        let mut rejected = !per_graph && session.rejected();
        if !per_graph {
            obs.errors
                .extend(session.observation.errors.iter().cloned());
        }
        obs.warnings
            .extend(session.observation.warnings.iter().cloned());
        let mut per_load: Vec<Option<Rc<Resolution>>> = Vec::with_capacity(scenario.events.len());
        // Loads whose graph maps set the same options, in the same shape, resolve alike: each
        // pair is resolved once. (Keys outside the twelve only pass through, and a session
        // reports no passthrough.) A load whose map sets none of the twelve, in a static shape,
        // resolves as the session does.
        let mut resolved: Vec<(OptionEntries<'_>, ShapeKind, Rc<Resolution>)> =
            vec![(Vec::new(), ShapeKind::Static, Rc::clone(&session))];
        for event in &scenario.events {
            let SessionEvent::Load {
                graph,
                shape,
                options,
                ..
            } = event
            else {
                per_load.push(None);
                continue;
            };
            let own = options.as_ref();
            let set = option_entries(own.unwrap_or(&scenario.options.graph));
            let r = match resolved.iter().find(|(o, s, _)| *o == set && s == shape) {
                Some((_, _, r)) => Rc::clone(r),
                None => {
                    let r = Rc::new(resolve(
                        profile,
                        &graph_maps(scenario, own),
                        context(*shape),
                    ));
                    resolved.push((set, *shape, Rc::clone(&r)));
                    r
                }
            };
            if !per_graph {
                rejected |= r.rejected();
                for d in extra(&r.observation.errors, &session.observation.errors) {
                    obs.errors.push(for_graph(d, *graph));
                }
            }
            for d in extra(&r.observation.warnings, &session.observation.warnings) {
                obs.warnings.push(for_graph(d, *graph));
            }
            per_load.push(Some(r));
        }
        obs.errors.sort();
        obs.errors.dedup();
        obs.warnings.sort();
        obs.warnings.dedup();
        SessionOptions {
            session,
            per_load,
            per_graph,
            rejected,
        }
    }
}

impl Run {
    /// The load event at `step`, under the options resolved for it.
    fn load_event(
        &mut self,
        step: u32,
        event: &SessionEvent,
        options: &SessionOptions,
        scenario: &SessionScenario,
    ) {
        let SessionEvent::Load {
            graph,
            shape,
            feature_bytes,
            io_bytes,
            ..
        } = event
        else {
            return;
        };
        let profile = self.profile;
        let resolution = options
            .per_load
            .get(step as usize)
            .and_then(|r| r.as_deref());
        if options.per_graph && self.refused_by_options(*graph, resolution) {
            return;
        }
        let values = resolution.map(|r| r.values.clone()).unwrap_or_default();
        let own = graph_policy(
            profile,
            options.session.values.static_memory_policy,
            values.static_memory_policy,
        );
        let policy = effective_policy(profile, own, scenario.ge_use_static_memory.as_deref());
        self.load(
            step,
            *graph,
            Graph {
                shape: *shape,
                feature: *feature_bytes,
                io: *io_bytes,
                pool: pool_for(policy, *shape),
                io_place: io_place(profile, *shape, values.reuse_zero_copy),
                refreshable: values.feature_base_refreshable,
                base_set: false,
                released: false,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_blocks_go_to_pieces_that_fit_nowhere_and_take_memory() {
        // Nothing held: each allocated piece with bytes gets a block; a piece of no bytes gets
        // none (GE never calls the allocator for it), allocated or not.
        assert_eq!(
            upstream_pool_blocks(&[], &[(64, true), (0, true)]),
            vec![64]
        );
        assert!(upstream_pool_blocks(&[], &[(0, true), (0, false)]).is_empty());
        // A piece laid out but never allocated (the caller's buffers) takes room, no block.
        assert!(upstream_pool_blocks(&[], &[(64, false)]).is_empty());
        // A held block that fits the pieces takes them; a piece that does not fit gets its own.
        assert!(upstream_pool_blocks(&[128], &[(64, true), (64, true)]).is_empty());
        assert_eq!(
            upstream_pool_blocks(&[64], &[(64, true), (32, true)]),
            vec![32]
        );
    }
}
