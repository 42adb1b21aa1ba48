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

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry, MAX_SCRIPT,
};
use ge_spec::{Diagnostic, OptionKey, OptionMaps, Profile, ShapeKind, Spec, Subject};

use super::diagnostics::{self, Expected};
use super::options::{ge_step, Alternative, Context, Reading, Values};
use super::{Called, Entry, Phase, Violation};
use crate::judging::Judging;

/// What a block name designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Feature(u32),
    Io(u32),
    Pool(ShapeKind),
}

fn parse_block(name: &str) -> Option<Block> {
    match name {
        "static-pool" => return Some(Block::Pool(ShapeKind::Static)),
        "dynamic-pool" => return Some(Block::Pool(ShapeKind::Dynamic)),
        _ => {}
    }
    let rest = name.strip_prefix("graph-")?;
    let (id, kind) = rest.split_once('/')?;
    // The id is spelled in plain decimal, as the reference writes it.
    if id.is_empty()
        || !id.bytes().all(|b| b.is_ascii_digit())
        || (id.len() > 1 && id.starts_with('0'))
    {
        return None;
    }
    let id: u32 = id.parse().ok()?;
    match kind {
        "feature" => Some(Block::Feature(id)),
        "io" => Some(Block::Io(id)),
        _ => None,
    }
}

fn pool_name(shape: ShapeKind) -> &'static str {
    match shape {
        ShapeKind::Static => "static-pool",
        ShapeKind::Dynamic => "dynamic-pool",
    }
}

fn action_text(a: TraceAction) -> &'static str {
    match a {
        TraceAction::Alloc => "alloc",
        TraceAction::Free => "free",
    }
}

/// The option context of a graph of `shape` in a session: asynchronous run, default product,
/// counts unknown.
fn ctx(shape: ShapeKind) -> Context {
    Context {
        shape,
        ..Context::plain()
    }
}

/// Whether `policy` pools graphs of `shape` (SMP-010, SMP-011, SMP-014).
fn pooled(policy: u8, shape: ShapeKind) -> bool {
    matches!(
        (policy, shape),
        (2 | 4, ShapeKind::Static) | (3 | 4, ShapeKind::Dynamic)
    )
}

/// The clause that governs a graph's feature memory under `policy`.
fn feature_clause(policy: u8, shape: ShapeKind) -> &'static str {
    match (policy, shape) {
        (0, _) => "SMP-010",
        (2 | 4, ShapeKind::Static) => "SMP-011",
        _ => "SMP-014",
    }
}

/// The policy the pools follow (SMP-016), and whether `GE_USE_STATIC_MEMORY` is what sets it
/// apart from the option alone (then SMP-016 is the clause a pooling mistake breaks, under
/// either profile: the documented one ignores the variable, upstream combines it).
fn pools_policy(profile: Profile, policy: u8, env: Option<&str>) -> (u8, bool) {
    // Which shapes expand: (static, dynamic).
    let own = (matches!(policy, 2 | 4), matches!(policy, 3 | 4));
    let said = |values: &[&str]| env.is_some_and(|e| values.contains(&e));
    let combined = (own.0 || said(&["1", "2", "4"]), own.1 || said(&["3", "4"]));
    let shapes = match profile {
        Profile::Documented => own,
        Profile::Upstream => combined,
    };
    let policy = match shapes {
        (true, true) => 4,
        (true, false) => 2,
        (false, true) => 3,
        (false, false) => 0,
    };
    (policy, combined != own)
}

#[derive(Debug, Clone)]
struct Graph {
    shape: ShapeKind,
    /// The policy its feature memory follows, `GE_USE_STATIC_MEMORY` combined (SMP-015,
    /// SMP-016).
    policy: u8,
    /// `GE_USE_STATIC_MEMORY` is what sets `policy` apart from the option alone.
    env_decides: bool,
    /// The graph's own policy (upstream) pools it where the session's would not, or the other
    /// way round (SMP-015).
    graph_decides: bool,
    feature: u64,
    io: u64,
    /// Where its I/O bytes live (RZC-010..013).
    io_at: Io,
    /// `ge.exec.reuseZeroCopyMemory` is `1` for it.
    reuse_value: bool,
    refreshable: bool,
    base_set: bool,
    /// Upstream: an accepted refresh gave back the feature memory taken at load (SES-018).
    released: bool,
}

#[derive(Debug, Default)]
struct Pool {
    /// Blocks held, in bytes: at most one under the documented profile; upstream, the static
    /// pool holds one per need that no earlier block covered (SMP-011, SMP-012).
    blocks: Vec<u64>,
    users: BTreeSet<u32>,
}

/// 2 MiB: the upstream static pool rounds a block above this size up to a multiple of it
/// (SMP-012's upstream entry).
const GRANULE: u64 = 1 << 21;

/// The block the upstream static pool adds for a need none of its blocks covers (SMP-011,
/// SMP-012 upstream): the need, rounded up to a whole number of granules above one granule;
/// taken as it is where the rounding would pass 64 bits.
fn added_block(need: u64) -> u64 {
    if need <= GRANULE {
        return need;
    }
    need.div_ceil(GRANULE).checked_mul(GRANULE).unwrap_or(need)
}

/// Whether the shared pool of `shape` grows by added blocks under `profile` (the upstream static
/// pool) rather than being taken again at the larger size.
fn grows_by_blocks(profile: Profile, shape: ShapeKind) -> bool {
    profile == Profile::Upstream && shape == ShapeKind::Static
}

/// Where a graph's zero-copy I/O bytes are, as the clauses of `ge.exec.reuseZeroCopyMemory`
/// and their upstream entries place them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Io {
    /// `graph-<id>/io` taken and released by each execution (RZC-010, RZC-011).
    Run,
    /// `graph-<id>/io` held from load to unload (RZC-012, RZC-013).
    Kept,
    /// Inside the feature memory taken at load (upstream, static shape, `0`).
    Feature,
    /// The caller's buffers: no memory (upstream, static shape, `1`).
    None,
}

/// Where the I/O bytes go (RZC-010..013): as documented, by the value; upstream, a
/// dynamic-shape graph never reads the option and takes them per execution, and a static-shape
/// graph keeps them in its feature memory with `0` and uses the caller's with `1`.
fn io_of(profile: Profile, shape: ShapeKind, reuse: bool) -> Io {
    if profile == Profile::Upstream {
        return match (shape, reuse) {
            (ShapeKind::Dynamic, _) => Io::Run,
            (ShapeKind::Static, false) => Io::Feature,
            (ShapeKind::Static, true) => Io::None,
        };
    }
    if reuse {
        Io::Kept
    } else {
        Io::Run
    }
}

/// The blocks the upstream static pool adds for a load, given the blocks `held` and the graph's
/// `parts` (bytes, whether GE allocates the part when no held block takes it), in memory order.
/// Every held block starts empty for the load; parts go in largest first (ties in memory order)
/// and fill the held blocks, largest block first, one after another; what no block takes gets a
/// block of its own, rounded ([`added_block`]), unless it is not allocated. Each block added
/// comes with the index of its part.
fn pool_additions(held: &[u64], parts: &[(u64, bool)]) -> Vec<(usize, u64)> {
    let mut left: Vec<(usize, u64)> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.0 > 0)
        .map(|(i, p)| (i, p.0))
        .collect();
    left.sort_by_key(|&(i, b)| (std::cmp::Reverse(b), i));
    let mut sizes = held.to_vec();
    sizes.sort_unstable();
    for &size in sizes.iter().rev() {
        let mut room = size;
        left.retain(|&(_, b)| {
            if b <= room {
                room -= b;
                false
            } else {
                true
            }
        });
    }
    left.sort_by_key(|&(i, _)| i);
    left.into_iter()
        .filter(|&(i, _)| parts[i].1)
        .map(|(i, b)| (i, added_block(b)))
        .collect()
}

/// One entry the clauses call for.
#[derive(Debug, Clone)]
struct Want {
    action: TraceAction,
    name: String,
    bytes: u64,
    clause: &'static str,
}

struct Model {
    /// The profile judged: it decides how the static pool grows (SMP-011, SMP-012).
    profile: Profile,
    /// The session's policy (SMP-015): what an entry no loaded graph explains is blamed on.
    policy: u8,
    /// `GE_USE_STATIC_MEMORY` would change the session's pools (SMP-016).
    env_decides: bool,
    graphs: BTreeMap<u32, Graph>,
    pools: BTreeMap<bool, Pool>,
}

impl Model {
    fn want(
        out: &mut Vec<Want>,
        action: TraceAction,
        name: String,
        bytes: u64,
        clause: &'static str,
    ) {
        if bytes > 0 {
            out.push(Want {
                action,
                name,
                bytes,
                clause,
            });
        }
    }

    /// The clause that governs a graph's feature memory: SMP-016 when the environment variable
    /// decides the pooling, SMP-015 when the graph's own policy does.
    fn feature_clause(g: &Graph) -> &'static str {
        if g.env_decides {
            "SMP-016"
        } else if g.graph_decides {
            "SMP-015"
        } else {
            feature_clause(g.policy, g.shape)
        }
    }

    /// The bytes of a graph's own feature block, and the clause they are due under: the feature
    /// bytes under the feature's clause; upstream with the I/O bytes inside (static shape, `0`),
    /// their sum under `io_clause` (RZC-010 at load, RZC-011 at unload). A sum past 64 bits
    /// stays at the largest value.
    fn own_feature(g: &Graph, io_clause: &'static str) -> (u64, &'static str) {
        if g.io_at == Io::Feature && g.io > 0 {
            (g.feature.saturating_add(g.io), io_clause)
        } else {
            (g.feature, Self::feature_clause(g))
        }
    }

    fn pool_key(shape: ShapeKind) -> bool {
        shape == ShapeKind::Static
    }

    fn load(&mut self, id: u32, g: Graph, out: &mut Vec<Want>) {
        if pooled(g.policy, g.shape) {
            self.load_pooled(id, &g, out);
        } else {
            let (bytes, clause) = Self::own_feature(&g, "RZC-010");
            Self::want(
                out,
                TraceAction::Alloc,
                format!("graph-{id}/feature"),
                bytes,
                clause,
            );
        }
        if g.io_at == Io::Kept {
            Self::want(
                out,
                TraceAction::Alloc,
                format!("graph-{id}/io"),
                g.io,
                "RZC-013",
            );
        }
        self.graphs.insert(id, g);
    }

    /// The feature memory of graph `id`, pooled, taken from its shared pool: upstream the static
    /// pool adds blocks (SMP-011, SMP-012), otherwise the pool is taken again at the larger size.
    fn load_pooled(&mut self, id: u32, g: &Graph, out: &mut Vec<Want>) {
        let clause = Self::feature_clause(g);
        let grows = grows_by_blocks(self.profile, g.shape);
        let pool = self.pools.entry(Self::pool_key(g.shape)).or_default();
        pool.users.insert(id);
        if grows {
            // Upstream: nothing held is freed; a part that no block takes adds one. The
            // I/O bytes are a part of their own, allocated with `0` (RZC-010 upstream), and
            // with `1` laid out but never allocated (RZC-013 upstream); a graph with nothing
            // to allocate never reaches the pool.
            let mut parts = vec![(g.feature, true)];
            match g.io_at {
                Io::Feature => parts.push((g.io, true)),
                Io::None if g.feature > 0 => parts.push((g.io, false)),
                _ => {}
            }
            for (part, bytes) in pool_additions(&pool.blocks, &parts) {
                pool.blocks.push(bytes);
                // The feature memory's block is due under the pool's clause, the I/O
                // bytes' under RZC-010's upstream entry.
                Self::want(
                    out,
                    TraceAction::Alloc,
                    pool_name(g.shape).into(),
                    bytes,
                    if part == 0 { clause } else { "RZC-010" },
                );
            }
        } else if g.feature > pool.blocks.iter().copied().max().unwrap_or(0) {
            let old = pool.blocks.iter().copied().max().unwrap_or(0);
            pool.blocks = vec![g.feature];
            Self::want(
                out,
                TraceAction::Free,
                pool_name(g.shape).into(),
                old,
                clause,
            );
            Self::want(
                out,
                TraceAction::Alloc,
                pool_name(g.shape).into(),
                g.feature,
                clause,
            );
        }
    }

    /// SES-018 upstream: the first accepted refresh gives back the feature memory taken at load,
    /// as an unload would (the I/O area aside); the unload then has none to give back.
    fn release(&mut self, id: u32, out: &mut Vec<Want>) {
        let Some(g) = self.graphs.get_mut(&id) else {
            return;
        };
        if std::mem::replace(&mut g.released, true) {
            return;
        }
        let g = g.clone();
        let mut freed = Vec::new();
        self.give_back(id, &g, &mut freed);
        for w in &mut freed {
            w.clause = "SES-018";
        }
        out.extend(freed);
    }

    fn unload(&mut self, id: u32, out: &mut Vec<Want>) {
        let Some(g) = self.graphs.remove(&id) else {
            return;
        };
        if !g.released {
            self.give_back(id, &g, out);
        }
        if g.io_at == Io::Kept {
            Self::want(
                out,
                TraceAction::Free,
                format!("graph-{id}/io"),
                g.io,
                "RZC-013",
            );
        }
    }

    /// The feature memory of graph `id` given back: its own block, or its place among the pool's
    /// users (the pool going with the last, SMP-013).
    fn give_back(&mut self, id: u32, g: &Graph, out: &mut Vec<Want>) {
        if pooled(g.policy, g.shape) {
            let pool = self.pools.entry(Self::pool_key(g.shape)).or_default();
            pool.users.remove(&id);
            if pool.users.is_empty() {
                // Every block the pool holds goes with its last user.
                for size in std::mem::take(&mut pool.blocks) {
                    Self::want(
                        out,
                        TraceAction::Free,
                        pool_name(g.shape).into(),
                        size,
                        "SMP-013",
                    );
                }
            }
        } else {
            let (bytes, clause) = Self::own_feature(g, "RZC-011");
            Self::want(
                out,
                TraceAction::Free,
                format!("graph-{id}/feature"),
                bytes,
                clause,
            );
        }
    }
}

/// The shared pools as the engine holds them, read from its own trace step by step. Under the
/// documented profile the model takes each pool's size from there before an event: what the
/// text states is when a pool grows (a graph needing more than the pool holds) and which
/// events give memory back, not the pool's size (SMP-012) or whether it outlives its last
/// user (SMP-013). So a pool the engine made larger, or kept, is judged from what it holds.
struct EnginePools<'o> {
    trace: &'o [ge_spec::vocab::session::TraceEntry],
    events: &'o [SessionEvent],
    next: usize,
    held: BTreeMap<&'o str, Vec<u64>>,
    /// What [`EnginePools::check_cover`] found: a pool smaller than a loaded graph's need.
    short: Vec<Violation>,
}

impl<'o> EnginePools<'o> {
    fn new(obs: &'o SessionObservation, events: &'o [SessionEvent]) -> Self {
        EnginePools {
            trace: &obs.trace,
            events,
            next: 0,
            held: BTreeMap::new(),
            short: Vec::new(),
        }
    }

    /// SMP-011, SMP-014 (or SMP-015, SMP-016 where they decide the pooling): after each event,
    /// a shared pool the engine names holds, in one block, at least the feature bytes of every
    /// loaded graph that draws on it. The text has the pool allocated at the largest graph's
    /// need; how much more, and how long after its last user, are the suite's choices
    /// (SMP-012, SMP-013), but a pool below a loaded user's need is no pool for it. A pool the
    /// engine never named is left to the entries' checks (its name is SES-014's).
    fn check_cover(&mut self, step: u32, model: &Model) {
        for shape in [ShapeKind::Static, ShapeKind::Dynamic] {
            let Some(held) = self.held.get(pool_name(shape)) else {
                continue;
            };
            let Some(pool) = model.pools.get(&Model::pool_key(shape)) else {
                continue;
            };
            let largest = held.iter().copied().max().unwrap_or(0);
            let users = pool.users.iter().filter_map(|id| {
                model
                    .graphs
                    .get(id)
                    .filter(|g| !g.released && g.feature > largest)
                    .map(|g| (*id, g))
            });
            if let Some((id, g)) = users.max_by_key(|(_, g)| g.feature) {
                self.short.push(Violation::new(
                    Model::feature_clause(g),
                    format!(
                        "before step {step}: `{}` holds {largest} bytes in its largest block, \
                         but graph {id}, loaded and drawing on it, needs {} bytes",
                        pool_name(shape),
                        g.feature
                    ),
                ));
            }
        }
    }

    /// SMP-011, SMP-014 (or SMP-015, SMP-016 where they decide the pooling): a shared pool
    /// allocated by the load of a graph that draws on it is allocated at what the largest
    /// loaded graph drawing on it needs ("the memory required by the maximum graph is
    /// allocated", reallocated "based on the memory required by the current graph", read as
    /// the suite reads "based on the actual size" for per-graph memory: that size), and only
    /// once the pool it replaces is given back ("the memory of the previous graph is directly
    /// released", then reallocated). `holds`: the engine holds a block under the pool's name
    /// at the allocation. Whether and when a pool is given back otherwise are the suite's
    /// choices (SMP-012, SMP-013), judged elsewhere.
    fn allocated(
        &self,
        e: &ge_spec::vocab::session::TraceEntry,
        holds: bool,
        model: &Model,
    ) -> Option<Violation> {
        let Some(SessionEvent::Load { graph, .. }) = self.events.get(e.step as usize) else {
            return None;
        };
        let g = model.graphs.get(graph)?;
        if pool_name(g.shape) != e.pool || !pooled(g.policy, g.shape) {
            return None;
        }
        let clause = Model::feature_clause(g);
        if holds {
            return Some(Violation::new(
                clause,
                format!(
                    "step {}: `{}` is allocated again while it still holds its block: the previous pool is released first, then the pool is reallocated",
                    e.step, e.pool
                ),
            ));
        }
        let pool = model.pools.get(&Model::pool_key(g.shape))?;
        let largest = pool
            .users
            .iter()
            .filter_map(|id| model.graphs.get(id))
            .filter(|u| !u.released)
            .map(|u| u.feature)
            .chain([g.feature])
            .max()
            .unwrap_or(g.feature);
        (e.bytes != largest).then(|| {
            Violation::new(
                clause,
                format!(
                    "step {}: `{}` is allocated at {} bytes; the memory the largest graph drawing on it needs is {largest} bytes",
                    e.step, e.pool, e.bytes
                ),
            )
        })
    }

    /// Reads the engine's entries before `step`, and gives the model's pools the sizes the
    /// engine holds (documented profile; a pool the engine holds as one block or none).
    fn adopt(&mut self, step: u32, model: &mut Model) {
        while let Some(e) = self.trace.get(self.next).filter(|e| e.step < step) {
            self.next += 1;
            if !matches!(parse_block(&e.pool), Some(Block::Pool(_))) {
                continue;
            }
            if e.action == TraceAction::Alloc && model.profile == Profile::Documented {
                let holds = self
                    .held
                    .get(e.pool.as_str())
                    .is_some_and(|b| !b.is_empty());
                if let Some(v) = self.allocated(e, holds, model) {
                    self.short.push(v);
                }
            }
            let blocks = self.held.entry(e.pool.as_str()).or_default();
            match e.action {
                TraceAction::Alloc => blocks.push(e.bytes),
                TraceAction::Free => {
                    if let Some(at) = blocks.iter().position(|b| *b == e.bytes) {
                        blocks.remove(at);
                    } else {
                        blocks.pop();
                    }
                }
            }
        }
        if model.profile != Profile::Documented {
            return;
        }
        self.check_cover(step, model);
        for shape in [ShapeKind::Static, ShapeKind::Dynamic] {
            // A pool the engine never named (or names otherwise, SES-014) keeps the model's.
            let Some(held) = self.held.get(pool_name(shape)).cloned() else {
                continue;
            };
            if held.len() > 1 {
                continue;
            }
            let pool = model.pools.entry(Model::pool_key(shape)).or_default();
            pool.blocks = held;
        }
    }
}

/// What one step of the script was, for blaming extra entries.
#[derive(Debug, Clone, Copy)]
enum StepKind {
    Refused,
    /// Upstream: a load GE refuses on its options, or the unload of a graph it left unbuilt
    /// (SES-017).
    OptionsRefused,
    Load(u32),
    Execute(u32),
    Refresh,
    Unload(u32),
    End,
}

/// What one step of the script calls for.
struct StepWants {
    step: u32,
    kind: StepKind,
    /// The graphs the step concerns, by ascending id: the event's graph (before the event, or
    /// as the event loaded it); at the end of the script, every graph still loaded. A list, not
    /// a map: a script keeps one per step, of a single graph but at the end.
    known: Vec<(u32, Graph)>,
    want: Vec<Want>,
}

/// The clause an entry that the clauses do not call for breaks.
fn blame(kind: StepKind, block: Block, model: &Model, known: &[(u32, Graph)]) -> &'static str {
    let graph = match kind {
        StepKind::Refused => return "SES-012",
        StepKind::OptionsRefused => return "SES-017",
        StepKind::Refresh => return "SES-018",
        StepKind::Load(g) | StepKind::Execute(g) | StepKind::Unload(g) => Some(g),
        StepKind::End => None,
    };
    let info = |id: u32| known.iter().find(|(k, _)| *k == id).map(|(_, g)| g);
    match block {
        Block::Feature(id) | Block::Io(id) if graph.is_some_and(|g| g != id) => "SES-013",
        Block::Feature(id) | Block::Io(id) if graph.is_none() && info(id).is_none() => "SES-011",
        Block::Feature(_) if matches!(kind, StepKind::Execute(_)) => "SES-018",
        Block::Feature(id) => match info(id) {
            // Upstream the I/O bytes are part of this block (RZC-010, RZC-011 upstream).
            Some(g) if g.io_at == Io::Feature && g.io > 0 => match kind {
                StepKind::Load(_) => "RZC-010",
                _ => "RZC-011",
            },
            Some(g) => Model::feature_clause(g),
            None => "SES-013",
        },
        Block::Io(id) => {
            let io = info(id).map_or(Io::Run, |g| g.io_at);
            let reuse = info(id).is_some_and(|g| g.reuse_value);
            match (kind, io, reuse) {
                // Upstream no I/O block exists on the static path: with `0` the bytes are in
                // the feature memory (RZC-010), with `1` they are the caller's (RZC-013).
                (_, Io::Feature, _) => "RZC-010",
                (_, Io::None, _) => "RZC-013",
                (StepKind::Execute(_), _, true) => "RZC-012",
                (StepKind::Execute(_), _, false) => "RZC-010",
                (_, _, true) => "RZC-013",
                (_, _, false) => "RZC-011",
            }
        }
        Block::Pool(shape) => blame_pool(kind, shape, model, graph.and_then(info)),
    }
}

/// SMP-010..SMP-016, SES-018: the clause an entry of the pool of `shape` that the clauses do not
/// call for breaks, at a step of `kind` whose graph, if any, is `g`.
fn blame_pool(kind: StepKind, shape: ShapeKind, model: &Model, g: Option<&Graph>) -> &'static str {
    // The step's graph decides by its own policy (SMP-015); otherwise the session's.
    let policy = g.map_or(model.policy, |g| g.policy);
    let env_decides = g.map_or(model.env_decides, |g| g.env_decides);
    let graph_decides = g.is_some_and(|g| g.graph_decides);
    let pooling = |c: &'static str| match (env_decides, graph_decides) {
        (true, _) => "SMP-016",
        (false, true) => "SMP-015",
        (false, false) => c,
    };
    if policy == 0 {
        return pooling("SMP-010");
    }
    if matches!(kind, StepKind::Execute(_)) {
        return "SES-018";
    }
    if !pooled(policy, shape) {
        return pooling("SMP-014");
    }
    match g {
        Some(g) if g.shape != shape => pooling("SMP-014"),
        _ if matches!(kind, StepKind::Unload(_) | StepKind::End) => "SMP-013",
        _ => "SMP-012",
    }
}

/// The oracle's reading of the session's options (global and session maps) and of each event's
/// (`None` for events that are not loads), by the rules of SES-016.
fn readings(profile: Profile, scenario: &SessionScenario) -> (Reading, Vec<Option<Reading>>) {
    let session = Reading::new(
        profile,
        &OptionMaps {
            global: scenario.options.global.clone(),
            session: scenario.options.session.clone(),
            graph: BTreeMap::new(),
        },
        ctx(ShapeKind::Static),
    );
    let loads = scenario
        .events
        .iter()
        .map(|e| match e {
            SessionEvent::Load { shape, options, .. } => Some(Reading::new(
                profile,
                &OptionMaps {
                    global: scenario.options.global.clone(),
                    session: scenario.options.session.clone(),
                    graph: options
                        .clone()
                        .unwrap_or_else(|| scenario.options.graph.clone()),
                },
                ctx(*shape),
            )),
            _ => None,
        })
        .collect();
    (session, loads)
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
    loads: &[Option<Reading>],
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

/// What trace hygiene reads: the profile, the observation and the step of the script's end.
struct Traced<'a> {
    profile: Profile,
    obs: &'a SessionObservation,
    end: u64,
}

/// A check of the phases whose context is [`Traced`].
type TracedCheck = Entry<fn(&Traced<'_>) -> Vec<Violation>>;

/// Trace hygiene that holds whatever the script: names, sizes, steps, balance, entry by entry,
/// then what is left at the end. Every name holds at most one block at a time, except
/// `static-pool` under the upstream profile, which may hold several, each freed with its own
/// bytes (SES-010's upstream entry).
const HYGIENE: &[TracedCheck] = &[
    Entry {
        clauses: &["SES-014", "SES-015", "SES-013", "SES-010"],
        name: "check_trace_entries",
        run: check_trace_entries,
    },
    Entry {
        clauses: &["SES-011"],
        name: "check_nothing_held",
        run: |cx| {
            let mut out = Vec::new();
            check_nothing_held(held_at_end(cx), &mut out);
            out
        },
    },
    Entry {
        clauses: &["SES-011"],
        name: "check_unload_order",
        run: |cx| {
            let mut out = Vec::new();
            check_unload_order(cx.obs, cx.end, &mut out);
            out
        },
    },
];

/// SES-014, SES-015, SES-013, SES-010: each trace entry in turn names a block of the contract,
/// of some bytes, at a step in order, and keeps its name's balance.
fn check_trace_entries(cx: &Traced<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut last = 0u32;
    let mut held: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (i, e) in cx.obs.trace.iter().enumerate() {
        let what = format!(
            "trace entry {i} ({} {} {} bytes at step {})",
            action_text(e.action),
            e.pool,
            e.bytes,
            e.step
        );
        out.extend(check_block_name(&what, e));
        out.extend(check_block_size(&what, e));
        check_step_order(&what, e, cx.end, &mut last, &mut out);
        out.extend(check_balance(cx.profile, &what, e, &mut held));
    }
    out
}

/// What each block name holds after the last trace entry ([`check_balance`]'s bookkeeping).
fn held_at_end<'o>(cx: &Traced<'o>) -> BTreeMap<&'o str, Vec<u64>> {
    let mut held = BTreeMap::new();
    for e in &cx.obs.trace {
        let _ = check_balance(cx.profile, "", e, &mut held);
    }
    held
}

/// Whether the block name `name` may hold several blocks at once (the upstream static pool,
/// SES-010's upstream entry).
fn holds_several(profile: Profile, name: &str) -> bool {
    grows_by_blocks(profile, ShapeKind::Static) && name == pool_name(ShapeKind::Static)
}

/// SES-014: a trace entry names a block of the contract.
fn check_block_name(what: &str, e: &TraceEntry) -> Option<Violation> {
    parse_block(&e.pool).is_none().then(|| {
        Violation::new(
            "SES-014",
            format!("{what}: `{}` is not a block name of the contract", e.pool),
        )
    })
}

/// SES-015: no block of zero bytes is recorded.
fn check_block_size(what: &str, e: &TraceEntry) -> Option<Violation> {
    (e.bytes == 0).then(|| {
        Violation::new(
            "SES-015",
            format!("{what}: a block of zero bytes is recorded"),
        )
    })
}

/// SES-013: a trace entry's step is in the script (`end` events, the end of the script
/// included) and never before the step of an entry recorded earlier (`last`, which this
/// moves on).
fn check_step_order(
    what: &str,
    e: &TraceEntry,
    end: u64,
    last: &mut u32,
    out: &mut Vec<Violation>,
) {
    if u64::from(e.step) > end {
        out.push(Violation::new(
            "SES-013",
            format!("{what}: the script has only {end} events"),
        ));
    }
    if e.step < *last {
        out.push(Violation::new(
            "SES-013",
            format!("{what}: step goes back from {last}"),
        ));
    }
    *last = (*last).max(e.step);
}

/// SES-010: every free releases a held block of exactly its bytes (the blocks of a name are a
/// multiset); SES-014: a name the naming gives one block is not allocated while it holds one. `held` is what each name holds
/// before the entry; this moves it on.
fn check_balance<'o>(
    profile: Profile,
    what: &str,
    e: &'o TraceEntry,
    held: &mut BTreeMap<&'o str, Vec<u64>>,
) -> Option<Violation> {
    let several = holds_several(profile, &e.pool);
    let blocks = held.entry(&e.pool).or_default();
    match e.action {
        TraceAction::Alloc => {
            // A second block under a name the suite's naming gives one block is a naming
            // matter (SES-014): the blocks still balance one by one, so both are held.
            let named_twice = match (several, blocks.first()) {
                (false, Some(b)) => Some(Violation::new(
                    "SES-014",
                    format!(
                        "{what}: `{}` is already held ({b} bytes); the naming gives it one block",
                        e.pool
                    ),
                )),
                _ => None,
            };
            blocks.push(e.bytes);
            named_twice
        }
        TraceAction::Free => match blocks.iter().position(|&b| b == e.bytes) {
            Some(i) => {
                blocks.swap_remove(i);
                None
            }
            None if blocks.is_empty() => Some(Violation::new(
                "SES-010",
                format!("{what}: `{}` is not held", e.pool),
            )),
            None => {
                let sizes: Vec<String> = blocks.iter().map(u64::to_string).collect();
                let v = Violation::new(
                    "SES-010",
                    format!(
                        "{what}: `{}` was allocated with {} bytes",
                        e.pool,
                        sizes.join(" and ")
                    ),
                );
                // The one block of a name that holds one counts as released.
                if !several && blocks.len() == 1 {
                    blocks.clear();
                }
                Some(v)
            }
        },
    }
}

/// SES-011: nothing is held after the last trace entry (`held`: what each name holds then).
fn check_nothing_held(held: BTreeMap<&str, Vec<u64>>, out: &mut Vec<Violation>) {
    for (name, blocks) in held {
        for bytes in blocks {
            out.push(Violation::new(
                "SES-011",
                format!("`{name}` ({bytes} bytes) is still held after the last trace entry"),
            ));
        }
    }
}

/// SES-011 fixes the one order within a step: at the end (step `end`) the graphs still loaded
/// are unloaded in ascending id order, so the graph blocks released there name non-decreasing
/// ids (a shared pool, released with its last user, names no graph).
fn check_unload_order(obs: &SessionObservation, end: u64, out: &mut Vec<Violation>) {
    let mut unloaded: Option<u32> = None;
    for e in obs.trace.iter().filter(|e| u64::from(e.step) == end) {
        let (Some(Block::Feature(id) | Block::Io(id)), TraceAction::Free) =
            (parse_block(&e.pool), e.action)
        else {
            continue;
        };
        if let Some(before) = unloaded.filter(|before| *before > id) {
            out.push(Violation::new(
                "SES-011",
                format!(
                    "at the end graph {id} is unloaded after graph {before}: the session unloads in ascending id order"
                ),
            ));
        }
        unloaded = Some(unloaded.map_or(id, |b| b.max(id)));
    }
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
    let planned = !obs.trace.is_empty() || !obs.refreshes.is_empty();
    let session_alts = session.alternatives(&SESSION_KEYS, planned);
    let load_alts: Vec<Option<Vec<Alternative>>> = loads
        .iter()
        .map(|r| r.as_ref().map(|r| r.alternatives(&LOAD_KEYS, planned)))
        .collect();
    let rounds = load_alts
        .iter()
        .flatten()
        .map(Vec::len)
        .chain([session_alts.len()])
        .max()
        .unwrap_or(1);
    let pick =
        |alts: &[Alternative], k: usize| -> Alternative { alts.get(k).unwrap_or(&alts[0]).clone() };
    let mut first = Vec::new();
    for k in 0..rounds {
        let s = pick(&session_alts, k);
        let per_load: Vec<Option<Alternative>> = load_alts
            .iter()
            .map(|a| a.as_ref().map(|a| pick(a, k)))
            .collect();
        let mut v = judge_with(
            judging.profile,
            scenario,
            obs,
            Some((&session, &loads, &s, &per_load)),
        );
        if k == 0 {
            if !judging.any_binding(&v) {
                return v;
            }
            first = v;
            continue;
        }
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
    &'a [Option<Reading>],
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
                    format!(
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
    super::run_table(REPLAYED, &Replayed { replay, obs }, &mut out);
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
    loads: &[Option<Reading>],
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
            format!(
                "a script of {events} events and {executions} executions, within the suite's bound of {MAX_SCRIPT}, is refused as too large"
            ),
        ));
    }
    std::iter::once(session)
        .chain(loads.iter().flatten())
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
        check_options_stop(Spec::embedded(), cx.errors, cx.obs, &mut out);
        out
    },
}];

/// What the checks of the answer against the replay read.
struct Replayed<'a> {
    replay: Replay<'a>,
    obs: &'a SessionObservation,
}

/// A check of the phases whose context is [`Replayed`].
type ReplayedCheck = Entry<fn(&Replayed<'_>) -> Vec<Violation>>;

/// The checks of the answer against the replay of the script under the clauses, in order.
const REPLAYED: &[ReplayedCheck] = &[
    Entry {
        clauses: &["SES-017"],
        name: "check_nothing_ran",
        run: |cx| check_nothing_ran(&cx.replay, cx.obs).into_iter().collect(),
    },
    Entry {
        clauses: &[
            "SES-010", "SES-011", "SES-012", "SES-013", "SES-014", "SES-017", "SES-018", "SMP-010",
            "SMP-011", "SMP-012", "SMP-013", "SMP-014", "SMP-015", "SMP-016", "RZC-010", "RZC-011",
            "RZC-012", "RZC-013",
        ],
        name: "check_entries",
        run: |cx| {
            let mut out = Vec::new();
            check_entries(&cx.replay, cx.obs, &mut out);
            out
        },
    },
    Entry {
        clauses: &["SMP-011", "SMP-014", "SMP-015", "SMP-016"],
        name: "check_cover",
        run: |cx| cx.replay.short.clone(),
    },
    Entry {
        clauses: &["SES-019"],
        name: "check_refresh_order",
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
        name: "check_refresh_decisions",
        run: |cx| {
            let mut out = Vec::new();
            check_refresh_decisions(&cx.replay, cx.obs, &mut out);
            out
        },
    },
    Entry {
        clauses: &["SES-012", "FBR-011", "FBR-013", "FBR-014", "SES-017"],
        name: "check_refusals",
        run: |cx| check_refusals(Spec::embedded(), &cx.replay, cx.obs),
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
        name: "refresh_decision",
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
            format!(
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
    obs: &SessionObservation,
    out: &mut Vec<Violation>,
) {
    out.extend(ran_anyway(obs, "SES-017", "an option is rejected"));
    out.extend(diagnostics::compare(
        spec,
        "errors",
        option_errors,
        &obs.errors,
        true,
    ));
}

/// The replay of a script under the clauses: the session model's state as it goes, and what it
/// leaves for the checks (each step's entries, the refresh results, the refusals).
struct Replay<'a> {
    profile: Profile,
    /// `GE_USE_STATIC_MEMORY`.
    env: Option<&'a str>,
    /// The policy the session's reading gives (SMP-015).
    session_policy: u8,
    /// A rejected option is one load's refusal ([`refused_per_graph`]).
    per_graph: bool,
    model: Model,
    wants: Vec<StepWants>,
    /// (step, graph, ok, clause deciding it)
    refreshes: Vec<(u32, u32, bool, &'static str)>,
    /// (step, clause) of every refusal the clauses call for
    refusals: BTreeMap<u32, &'static str>,
    /// Upstream: the options' refusals of the loads GE refuses one by one, required and
    /// optional (SES-017).
    load_errors: (Vec<Diagnostic>, Vec<Diagnostic>),
    /// Upstream: the graphs GE added but could not build (SES-017).
    unbuilt: BTreeSet<u32>,
    /// Upstream: some load is refused on its options (SES-017).
    options_refused: bool,
    /// The engine's pools found smaller than a loaded user's need ([`EnginePools::check_cover`]).
    short: Vec<Violation>,
}

impl<'a> Replay<'a> {
    /// Replays `scenario` step by step, the documented pools taking the engine's sizes before
    /// each step ([`EnginePools`]), then the end of the script.
    fn run(
        profile: Profile,
        scenario: &'a SessionScenario,
        obs: &SessionObservation,
        (_, loads, session_alt, load_alts): Chosen<'_>,
        per_graph: bool,
    ) -> Self {
        let env = scenario.ge_use_static_memory.as_deref();
        let session_policy = u8::try_from(session_alt.values.static_memory_policy).unwrap_or(0);
        let (policy, env_decides) = pools_policy(profile, session_policy, env);
        let mut replay = Replay {
            profile,
            env,
            session_policy,
            per_graph,
            model: Model {
                profile,
                policy,
                env_decides,
                graphs: BTreeMap::new(),
                pools: BTreeMap::new(),
            },
            wants: Vec::new(),
            refreshes: Vec::new(),
            refusals: BTreeMap::new(),
            load_errors: Default::default(),
            unbuilt: BTreeSet::new(),
            options_refused: false,
            short: Vec::new(),
        };
        let mut engine = EnginePools::new(obs, &scenario.events);
        for (index, (event, res)) in scenario.events.iter().zip(load_alts).enumerate() {
            let step = index as u32;
            engine.adopt(step, &mut replay.model);
            let reading = loads.get(index).and_then(Option::as_ref);
            let values = res.as_ref().map_or(&session_alt.values, |a| &a.values);
            replay.event(step, event, reading, values);
        }
        let end = scenario.events.len() as u32;
        engine.adopt(end, &mut replay.model);
        replay.short = engine.short;
        replay.end(end);
        replay
    }

    /// One event of the script (`reading`, `values`: a load's options), recorded with what it
    /// calls for.
    fn event(
        &mut self,
        step: u32,
        event: &SessionEvent,
        reading: Option<&Reading>,
        values: &Values,
    ) {
        let id = match event {
            SessionEvent::Load { graph, .. }
            | SessionEvent::Execute { graph, .. }
            | SessionEvent::Refresh { graph, .. }
            | SessionEvent::Unload { graph } => *graph,
        };
        // The event's graph as it was before the event, or as the event made it.
        let mut known = Vec::with_capacity(1);
        if let Some(g) = self.model.graphs.get(&id) {
            known.push((id, g.clone()));
        }
        let mut w = Vec::new();
        let kind = match event {
            SessionEvent::Load {
                graph,
                shape,
                feature_bytes,
                io_bytes,
                ..
            } => {
                let g = (*shape, *feature_bytes, *io_bytes);
                self.load(step, *graph, g, reading, values, &mut w)
            }
            SessionEvent::Execute { graph, times } => self.execute(step, *graph, *times, &mut w),
            SessionEvent::Refresh { graph, bytes } => self.refresh(step, *graph, *bytes, &mut w),
            SessionEvent::Unload { graph } => self.unload(step, *graph, &mut w),
        };
        if let (true, Some(g)) = (known.is_empty(), self.model.graphs.get(&id)) {
            known.push((id, g.clone()));
        }
        self.wants.push(StepWants {
            step,
            kind,
            known,
            want: w,
        });
    }

    /// SES-017, SES-012: the load of graph `id` of (shape, feature bytes, I/O bytes) `g`:
    /// upstream refused on its options ([`refused_by_options`]); refused when `id` is loaded;
    /// otherwise the memory it takes ([`Model::load`]).
    fn load(
        &mut self,
        step: u32,
        id: u32,
        g: (ShapeKind, u64, u64),
        reading: Option<&Reading>,
        values: &Values,
        w: &mut Vec<Want>,
    ) -> StepKind {
        if self.per_graph
            && refused_by_options(
                id,
                reading,
                &self.model,
                &mut self.unbuilt,
                &mut self.load_errors,
            )
        {
            self.options_refused = true;
            StepKind::OptionsRefused
        } else if self.model.graphs.contains_key(&id) {
            self.refusals.insert(step, "SES-012");
            StepKind::Refused
        } else {
            let (shape, feature, io) = g;
            let graph = self.graph(shape, feature, io, values);
            self.model.load(id, graph, w);
            StepKind::Load(id)
        }
    }

    /// SMP-015, SMP-016, RZC-010..RZC-013: a graph of `shape` loaded with the options `values`.
    /// Its pools follow the session's policy, upstream the graph's own resolution (graph level
    /// first) as GE reads it while it loads the graph, `GE_USE_STATIC_MEMORY` combined; its
    /// I/O bytes go where [`io_of`] puts them.
    fn graph(&self, shape: ShapeKind, feature: u64, io: u64, values: &Values) -> Graph {
        let own = match self.profile {
            Profile::Documented => self.session_policy,
            Profile::Upstream => u8::try_from(values.static_memory_policy).unwrap_or(0),
        };
        let (policy, env_decides) = pools_policy(self.profile, own, self.env);
        let graph_decides = pooled(policy, shape) != pooled(self.model.policy, shape);
        Graph {
            shape,
            policy,
            env_decides,
            graph_decides,
            feature,
            io,
            io_at: io_of(self.profile, shape, values.reuse_zero_copy),
            reuse_value: values.reuse_zero_copy,
            refreshable: values.feature_base_refreshable,
            base_set: false,
            released: false,
        }
    }

    /// SES-012, RZC-010, RZC-011, RZC-012: `times` executions of graph `id`: refused when it is
    /// not loaded; each takes and releases its I/O memory where that lives per execution.
    fn execute(&mut self, step: u32, id: u32, times: u32, w: &mut Vec<Want>) -> StepKind {
        let Some(g) = self.model.graphs.get(&id) else {
            self.refusals.insert(step, "SES-012");
            return StepKind::Refused;
        };
        // No I/O bytes, no entries ([`Model::want`]): the block is not even named.
        if g.io_at == Io::Run && g.io > 0 {
            // Upstream a dynamic-shape graph with `1` still takes its I/O memory per execution:
            // the value is never read there (RZC-012 upstream).
            let clause = if g.reuse_value { "RZC-012" } else { "RZC-010" };
            let block = format!("graph-{id}/io");
            for _ in 0..times {
                Model::want(w, TraceAction::Alloc, block.clone(), g.io, clause);
                Model::want(
                    w,
                    TraceAction::Free,
                    block.clone(),
                    g.io,
                    if g.reuse_value { "RZC-012" } else { "RZC-011" },
                );
            }
        }
        StepKind::Execute(id)
    }

    /// SES-012, SES-018, FBR-010..FBR-014: a refresh of graph `id` with `bytes`: its result as
    /// decided ([`refresh_decision`]; refused when the graph is not loaded), the refusal due
    /// when refused; accepted upstream, it gives back the feature memory ([`Model::release`]).
    fn refresh(&mut self, step: u32, id: u32, bytes: u64, w: &mut Vec<Want>) -> StepKind {
        let profile = self.profile;
        // (accepted, the clause deciding the result, the clause the refusal names)
        let (ok, clause, refusal) = match self.model.graphs.get_mut(&id) {
            None => (false, "SES-012", "SES-012"),
            Some(g) => refresh_decision(profile, g, bytes),
        };
        if !ok {
            self.refusals.insert(step, refusal);
        } else if profile == Profile::Upstream {
            self.model.release(id, w);
        }
        self.refreshes.push((step, id, ok, clause));
        StepKind::Refresh
    }

    /// SES-017, SES-012: the unload of graph `id`: upstream, of a graph added and left unbuilt,
    /// it succeeds and frees nothing; of a loaded graph, it gives back its memory
    /// ([`Model::unload`]); otherwise it is refused.
    fn unload(&mut self, step: u32, id: u32, w: &mut Vec<Want>) -> StepKind {
        if self.unbuilt.remove(&id) {
            StepKind::OptionsRefused
        } else if self.model.graphs.contains_key(&id) {
            self.model.unload(id, w);
            StepKind::Unload(id)
        } else {
            self.refusals.insert(step, "SES-012");
            StepKind::Refused
        }
    }

    /// SES-011: the end of the script (step `end`) unloads what is still loaded, in ascending id
    /// order.
    fn end(&mut self, end: u32) {
        let before = self.model.graphs.clone();
        let mut w = Vec::new();
        for id in before.keys().copied().collect::<Vec<_>>() {
            self.model.unload(id, &mut w);
        }
        // That the session's end unloads what is still loaded is the suite's model of a script
        // (SES-011): the text's clauses speak of unloads, and the script has none here.
        for want in &mut w {
            want.clause = "SES-011";
        }
        self.wants.push(StepWants {
            step: end,
            kind: StepKind::End,
            known: before.into_iter().collect(),
            want: w,
        });
    }
}

/// FBR-010..FBR-014: whether a refresh with `bytes` of the loaded graph `g` is accepted, the
/// clause deciding it and the clause its refusal names. The graph's base is then set
/// (documented), or its first update tried (upstream).
fn refresh_decision(
    profile: Profile,
    g: &mut Graph,
    bytes: u64,
) -> (bool, &'static str, &'static str) {
    // FBR-014 upstream: a dynamic-shape graph refuses every update, before the size or the
    // option is looked at.
    if profile == Profile::Upstream && g.shape == ShapeKind::Dynamic {
        return (false, "FBR-014", "FBR-014");
    }
    if bytes < g.feature {
        return (false, "FBR-013", "FBR-013");
    }
    let refreshable = g.refreshable && g.shape == ShapeKind::Static;
    let decision = match (refreshable, g.base_set, g.shape, profile) {
        (true, _, _, _) => (true, "FBR-010", ""),
        // FBR-012 upstream: once loaded, every update is refused, the first included; it is the
        // first that departs.
        (false, false, _, Profile::Upstream) => (false, "FBR-012", "FBR-011"),
        (false, false, _, Profile::Documented) => (true, "FBR-012", ""),
        (false, true, ShapeKind::Static, _) => (false, "FBR-011", "FBR-011"),
        (false, true, ShapeKind::Dynamic, _) => (false, "FBR-014", "FBR-014"),
    };
    // Documented: the base is set; upstream: the first update was tried.
    g.base_set = true;
    decision
}

/// SES-017 upstream: a refused load stops nothing; a backend that ran nothing at all when the
/// script calls for entries or refresh results stopped the whole script.
fn check_nothing_ran(replay: &Replay<'_>, obs: &SessionObservation) -> Option<Violation> {
    let due_anything =
        replay.wants.iter().any(|w| !w.want.is_empty()) || !replay.refreshes.is_empty();
    let ran_nothing = obs.trace.is_empty() && obs.refreshes.is_empty();
    (replay.options_refused && due_anything && ran_nothing).then(|| {
        Violation::new(
            "SES-017",
            "GE refuses a load on its options by itself; the other events run, yet nothing ran",
        )
    })
}

/// The entries of each step against those the replay calls for, as multisets: counts per
/// (action, block, bytes). At each step: entries in another form ([`pair_by_form`]), then
/// entries missing, then entries not called for.
fn check_entries(replay: &Replay<'_>, obs: &SessionObservation, out: &mut Vec<Violation>) {
    let mut by_step: BTreeMap<u32, BTreeMap<EntryKey<'_>, u64>> = BTreeMap::new();
    for e in &obs.trace {
        *by_step
            .entry(e.step)
            .or_default()
            .entry((e.action, e.pool.as_str(), e.bytes))
            .or_default() += 1;
    }
    // Entries due at an earlier step and not found there: (entry, times, clause, step due).
    let mut due_before: Vec<(EntryKey<'_>, u64, &'static str, u32)> = Vec::new();
    for wants in &replay.wants {
        let step = wants.step;
        let mut got = by_step.remove(&step).unwrap_or_default();
        if matches!(wants.kind, StepKind::End) {
            // Entries numbered past the end are the end's, misnumbered (SES-013, hygiene).
            for (_, later) in by_step.split_off(&step) {
                for (key, n) in later {
                    *got.entry(key).or_default() += n;
                }
            }
        }
        let mut missing = missing_entries(&wants.want, &mut got);
        found_late(step, &mut due_before, &mut got, out);
        out.extend(pair_by_form(step, &mut missing, &mut got));
        due_before.extend(missing.into_iter().map(|(k, n, c)| (k, n, c, step)));
        check_extra_entries(wants, &replay.model, got, out);
    }
    for (key, short, clause, step) in due_before {
        check_missing_entries(step, vec![(key, short, clause)], out);
    }
}

/// An entry due at an earlier step that the engine made later, at `step`, breaks the clause
/// that calls for it when it is due (the timing), never the clause of the step it landed in:
/// a zero-copy area kept across executions and taken at the first execution instead of at
/// load departs from RZC-013's choice of when, not from RZC-012's reuse. What it accounts for
/// leaves `due_before` and `got`.
fn found_late<'a>(
    step: u32,
    due_before: &mut Vec<(EntryKey<'a>, u64, &'static str, u32)>,
    got: &mut BTreeMap<EntryKey<'a>, u64>,
    out: &mut Vec<Violation>,
) {
    for (key, short, clause, due) in due_before.iter_mut() {
        let Some(have) = got.get_mut(key) else {
            continue;
        };
        let n = (*have).min(*short);
        *have -= n;
        *short -= n;
        out.push(Violation::new(
            *clause,
            format!(
                "`{} {} {} bytes` is due at step {due} and made at step {step}",
                action_text(key.0),
                key.1,
                key.2
            ),
        ));
    }
    got.retain(|_, n| *n > 0);
    due_before.retain(|(_, short, _, _)| *short > 0);
}

/// The entries `want` calls for that `got` lacks: each with how many times it is short and the
/// clause calling for it. What `got` holds beyond is left in it; what `want` accounts for, taken.
fn missing_entries<'a>(
    want: &'a [Want],
    got: &mut BTreeMap<EntryKey<'a>, u64>,
) -> Vec<(EntryKey<'a>, u64, &'static str)> {
    let mut due: BTreeMap<EntryKey, (u64, &'static str)> = BTreeMap::new();
    for w in want {
        due.entry((w.action, w.name.as_str(), w.bytes))
            .or_insert((0, w.clause))
            .0 += 1;
    }
    let mut missing: Vec<(EntryKey, u64, &'static str)> = Vec::new();
    for ((a, n, b), (count, clause)) in due {
        let have = got.remove(&(a, n, b)).unwrap_or(0);
        if have < count {
            missing.push(((a, n, b), count - have, clause));
        } else if have > count {
            got.insert((a, n, b), have - count);
        }
    }
    missing
}

/// SMP-010..SMP-016, RZC-010..RZC-013, SES-011, SES-018: an entry due at `step` and not found
/// breaks the clause the replay calls for it under.
fn check_missing_entries(
    step: u32,
    missing: Vec<(EntryKey<'_>, u64, &'static str)>,
    out: &mut Vec<Violation>,
) {
    for ((a, n, b), short, clause) in missing {
        out.push(Violation::new(
            clause,
            format!(
                "step {step}: `{} {n} {b} bytes` is due {short} more time(s) than found",
                action_text(a)
            ),
        ));
    }
}

/// SES-011..SES-018, SMP-010..SMP-016, RZC-010..RZC-013: an entry of a step, with a block name
/// of the contract, that the clauses do not call for breaks the clause that forbids it
/// ([`blame`]).
fn check_extra_entries(
    wants: &StepWants,
    model: &Model,
    got: BTreeMap<EntryKey<'_>, u64>,
    out: &mut Vec<Violation>,
) {
    let step = wants.step;
    for ((a, n, b), count) in got {
        let Some(block) = parse_block(n) else {
            continue;
        };
        out.push(Violation::new(
            blame(wants.kind, block, model, &wants.known),
            format!(
                "step {step}: `{} {n} {b} bytes` ({count} time(s)) is not called for here",
                action_text(a)
            ),
        ));
    }
}

/// SES-019: one refresh result per refresh event, in order, naming its step and graph.
fn check_refresh_order(replay: &Replay<'_>, obs: &SessionObservation) -> Option<Violation> {
    let got: Vec<(u32, u32)> = obs.refreshes.iter().map(|r| (r.step, r.graph)).collect();
    let due: Vec<(u32, u32)> = replay.refreshes.iter().map(|r| (r.0, r.1)).collect();
    (got != due).then(|| {
        Violation::new(
            "SES-019",
            format!("refresh results name (step, graph) {got:?}; the script's refresh events are {due:?}"),
        )
    })
}

/// SES-012, FBR-010..FBR-014: each refresh result (in the order of the events) is accepted or
/// refused as decided ([`refresh_decision`]), or breaks the deciding clause.
fn check_refresh_decisions(
    replay: &Replay<'_>,
    obs: &SessionObservation,
    out: &mut Vec<Violation>,
) {
    if check_refresh_order(replay, obs).is_some() {
        // Results out of order ([`check_refresh_order`]) are not matched with the events.
        return;
    }
    for (r, (step, graph, ok, clause)) in obs.refreshes.iter().zip(&replay.refreshes) {
        if r.ok != *ok {
            out.push(Violation::new(
                *clause,
                format!(
                    "step {step}: the refresh of graph {graph} should be {}",
                    if *ok { "accepted" } else { "refused" }
                ),
            ));
        }
    }
}

/// SES-012, FBR-011, FBR-013, FBR-014, SES-017: the errors are the refusals the replay calls
/// for: each naming the deciding clause and the step (FBR-011's, under FBR-015, and FBR-014's
/// with the option's key), and upstream the options' refusals of the loads GE refuses (SES-017,
/// required or optional); none for accepted events.
fn check_refusals(spec: &Spec, replay: &Replay<'_>, obs: &SessionObservation) -> Vec<Violation> {
    let mut expected: Vec<Expected> = replay
        .refusals
        .iter()
        .map(|(step, clause)| {
            let mut d = Diagnostic::new(*clause, "").subject(Subject::step(*step));
            if matches!(*clause, "FBR-011" | "FBR-014") {
                d = d.key(OptionKey::FeatureBaseRefreshable.as_str());
            }
            Expected::exact(&d)
        })
        .collect();
    let (mut required, mut optional) = replay.load_errors.clone();
    required.sort();
    required.dedup();
    optional.sort();
    optional.dedup();
    optional.retain(|d| !required.contains(d));
    expected.extend(required.iter().map(Expected::exact));
    expected.extend(optional.iter().map(Expected::optional));
    diagnostics::compare(spec, "errors", &expected, &obs.errors, true)
}

/// A trace entry's action, block name and bytes.
type EntryKey<'a> = (TraceAction, &'a str, u64);

/// Pairs, at one step, entries due but not found with entries found but not due that do the
/// same thing in another form, and charges the form to the suite's clause that fixes it: the
/// same block with other bytes (a pool's size, SMP-012; a free's bytes, SES-010), or the same
/// bytes under a name outside the contract (SES-014). What pairs leaves both lists; what the
/// text states (which blocks are allocated and freed at which event) is judged on the rest.
fn pair_by_form(
    step: u32,
    missing: &mut Vec<(EntryKey<'_>, u64, &'static str)>,
    got: &mut BTreeMap<EntryKey<'_>, u64>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (key, short, _) in missing.iter_mut() {
        let (a, n, b) = *key;
        while *short > 0 {
            let other_bytes = got.keys().copied().find(|(ga, gn, _)| *ga == a && *gn == n);
            let other_name = || {
                got.keys()
                    .copied()
                    .find(|(ga, gn, gb)| *ga == a && *gb == b && parse_block(gn).is_none())
            };
            let Some(found) = other_bytes.or_else(other_name) else {
                break;
            };
            let clause = if found.1 != n {
                "SES-014"
            } else if matches!(parse_block(n), Some(Block::Pool(_))) {
                "SMP-012"
            } else if a == TraceAction::Free {
                "SES-010"
            } else {
                break;
            };
            out.push(Violation::new(
                clause,
                format!(
                    "step {step}: `{} {} {} bytes` found where `{} {n} {b} bytes` is due",
                    action_text(a),
                    found.1,
                    found.2,
                    action_text(a)
                ),
            ));
            *short -= 1;
            if let Some(c) = got.get_mut(&found) {
                *c -= 1;
                if *c == 0 {
                    got.remove(&found);
                }
            }
        }
    }
    missing.retain(|m| m.1 > 0);
    out
}

/// SES-017 upstream: whether GE refuses the load of graph `id` on its options (`reading`, the
/// load's), adding the refusals it reports, naming the graph, to `errors` (required, optional).
///
/// A graph added and left unbuilt fails again: the addition checks of its new map are made
/// (their refusals reported), then the compilation runs on the map it was added with and fails
/// with no new error. Otherwise the load is refused when its reading rejects a value; refused at
/// compilation or build (step 3 or 4), the graph stays added and unbuilt, unless a loaded graph
/// holds the id.
fn refused_by_options(
    id: u32,
    reading: Option<&Reading>,
    model: &Model,
    unbuilt: &mut BTreeSet<u32>,
    errors: &mut (Vec<Diagnostic>, Vec<Diagnostic>),
) -> bool {
    let Some(r) = reading else {
        return unbuilt.contains(&id);
    };
    let mark = |d: &Diagnostic| Diagnostic {
        subject: d.subject.clone().in_graph(id),
        ..d.clone()
    };
    if unbuilt.contains(&id) {
        let at_addition = |d: &&Diagnostic| ge_step(d) == 2;
        errors
            .0
            .extend(r.errors.iter().filter(at_addition).map(mark));
        errors
            .1
            .extend(r.optional_errors.iter().filter(at_addition).map(mark));
        return true;
    }
    let Some(first) = r.errors.iter().map(ge_step).min() else {
        return false;
    };
    errors.0.extend(r.errors.iter().map(mark));
    errors.1.extend(r.optional_errors.iter().map(mark));
    if first >= 3 && !model.graphs.contains_key(&id) {
        unbuilt.insert(id);
    }
    true
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
