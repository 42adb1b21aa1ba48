//! The engine's pools as its trace shows them, and the clause a difference from the model is charged to.

use super::*;

/// The shared pools as the engine holds them, read from its own trace step by step. Under the
/// documented profile the model takes each pool's size from there before an event: what the
/// text states is when a pool grows (a graph needing more than the pool holds) and which
/// events give memory back, not the pool's size (SMP-012) or whether it outlives its last
/// user (SMP-013). So a pool the engine made larger, or kept, is judged from what it holds.
pub(super) struct EnginePools<'o> {
    pub(super) trace: &'o [ge_spec::vocab::session::TraceEntry],
    pub(super) events: &'o [SessionEvent],
    pub(super) next: usize,
    pub(super) held: BTreeMap<&'o str, Vec<u64>>,
    /// What [`EnginePools::check_cover`] found: a pool smaller than a loaded graph's need.
    pub(super) short: Vec<Violation>,
}

impl<'o> EnginePools<'o> {
    pub(super) fn new(obs: &'o SessionObservation, events: &'o [SessionEvent]) -> Self {
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
    pub(super) fn check_cover(&mut self, step: u32, model: &Model) {
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
                    format_args!(
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
    pub(super) fn allocated(
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
                format_args!(
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
                format_args!(
                    "step {}: `{}` is allocated at {} bytes; the memory the largest graph drawing on it needs is {largest} bytes",
                    e.step, e.pool, e.bytes
                ),
            )
        })
    }

    /// Reads the engine's entries before `step`, and gives the model's pools the sizes the
    /// engine holds (documented profile; a pool the engine holds as one block or none).
    pub(super) fn adopt(&mut self, step: u32, model: &mut Model) {
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
pub(super) enum StepKind {
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
pub(super) struct StepWants {
    pub(super) step: u32,
    pub(super) kind: StepKind,
    /// The graphs the step concerns, by ascending id: the event's graph (before the event, or
    /// as the event loaded it); at the end of the script, every graph still loaded. A list, not
    /// a map: a script keeps one per step, of a single graph but at the end.
    pub(super) known: Vec<(u32, Graph)>,
    pub(super) want: Vec<Want>,
}

/// The clause an entry that the clauses do not call for breaks.
pub(super) fn blame(
    kind: StepKind,
    block: Block,
    model: &Model,
    known: &[(u32, Graph)],
) -> &'static str {
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
pub(super) fn blame_pool(
    kind: StepKind,
    shape: ShapeKind,
    model: &Model,
    g: Option<&Graph>,
) -> &'static str {
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
