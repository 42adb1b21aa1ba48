//! The session oracle's model of memory: blocks and pools under each policy, the graphs a script loads, and what each step of the script needs.

use super::*;

/// What a block name designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Block {
    Feature(u32),
    Io(u32),
    Pool(ShapeKind),
}

pub(super) fn parse_block(name: &str) -> Option<Block> {
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

pub(super) fn pool_name(shape: ShapeKind) -> &'static str {
    match shape {
        ShapeKind::Static => "static-pool",
        ShapeKind::Dynamic => "dynamic-pool",
    }
}

pub(super) fn action_text(a: TraceAction) -> &'static str {
    match a {
        TraceAction::Alloc => "alloc",
        TraceAction::Free => "free",
    }
}

/// The option context of a graph of `shape` in a session: asynchronous run, default product,
/// counts unknown.
pub(super) fn ctx(shape: ShapeKind) -> Context {
    Context {
        shape,
        ..Context::plain()
    }
}

/// Whether `policy` pools graphs of `shape` (SMP-010, SMP-011, SMP-014).
pub(super) fn pooled(policy: u8, shape: ShapeKind) -> bool {
    matches!(
        (policy, shape),
        (2 | 4, ShapeKind::Static) | (3 | 4, ShapeKind::Dynamic)
    )
}

/// The clause that governs a graph's feature memory under `policy`.
pub(super) fn feature_clause(policy: u8, shape: ShapeKind) -> &'static str {
    match (policy, shape) {
        (0, _) => "SMP-010",
        (2 | 4, ShapeKind::Static) => "SMP-011",
        _ => "SMP-014",
    }
}

/// The policy the pools follow (SMP-016), and whether `GE_USE_STATIC_MEMORY` is what sets it
/// apart from the option alone (then SMP-016 is the clause a pooling mistake breaks, under
/// either profile: the documented one ignores the variable, upstream combines it).
pub(super) fn pools_policy(profile: Profile, policy: u8, env: Option<&str>) -> (u8, bool) {
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
pub(super) struct Graph {
    pub(super) shape: ShapeKind,
    /// The policy its feature memory follows, `GE_USE_STATIC_MEMORY` combined (SMP-015,
    /// SMP-016).
    pub(super) policy: u8,
    /// `GE_USE_STATIC_MEMORY` is what sets `policy` apart from the option alone.
    pub(super) env_decides: bool,
    /// The graph's own policy (upstream) pools it where the session's would not, or the other
    /// way round (SMP-015).
    pub(super) graph_decides: bool,
    pub(super) feature: u64,
    pub(super) io: u64,
    /// Where its I/O bytes live (RZC-010..013).
    pub(super) io_at: Io,
    /// `ge.exec.reuseZeroCopyMemory` is `1` for it.
    pub(super) reuse_value: bool,
    pub(super) refreshable: bool,
    pub(super) base_set: bool,
    /// Upstream: an accepted refresh gave back the feature memory taken at load (SES-018).
    pub(super) released: bool,
}

#[derive(Debug, Default)]
pub(super) struct Pool {
    /// Blocks held, in bytes: at most one under the documented profile; upstream, the static
    /// pool holds one per need that no earlier block covered (SMP-011, SMP-012).
    pub(super) blocks: Vec<u64>,
    pub(super) users: BTreeSet<u32>,
}

/// 2 MiB: the upstream static pool rounds a block above this size up to a multiple of it
/// (SMP-012's upstream entry).
pub(super) const GRANULE: u64 = 1 << 21;

/// The block the upstream static pool adds for a need none of its blocks covers (SMP-011,
/// SMP-012 upstream): the need, rounded up to a whole number of granules above one granule;
/// taken as it is where the rounding would pass 64 bits.
pub(super) fn added_block(need: u64) -> u64 {
    if need <= GRANULE {
        return need;
    }
    need.div_ceil(GRANULE).checked_mul(GRANULE).unwrap_or(need)
}

/// Whether the shared pool of `shape` grows by added blocks under `profile` (the upstream static
/// pool) rather than being taken again at the larger size.
pub(super) fn grows_by_blocks(profile: Profile, shape: ShapeKind) -> bool {
    profile == Profile::Upstream && shape == ShapeKind::Static
}

/// Where a graph's zero-copy I/O bytes are, as the clauses of `ge.exec.reuseZeroCopyMemory`
/// and their upstream entries place them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Io {
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
pub(super) fn io_of(profile: Profile, shape: ShapeKind, reuse: bool) -> Io {
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
pub(super) fn pool_additions(held: &[u64], parts: &[(u64, bool)]) -> Vec<(usize, u64)> {
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
pub(super) struct Want {
    pub(super) action: TraceAction,
    pub(super) name: String,
    pub(super) bytes: u64,
    pub(super) clause: &'static str,
}

pub(super) struct Model {
    /// The profile judged: it decides how the static pool grows (SMP-011, SMP-012).
    pub(super) profile: Profile,
    /// The session's policy (SMP-015): what an entry no loaded graph explains is blamed on.
    pub(super) policy: u8,
    /// `GE_USE_STATIC_MEMORY` would change the session's pools (SMP-016).
    pub(super) env_decides: bool,
    pub(super) graphs: BTreeMap<u32, Graph>,
    pub(super) pools: BTreeMap<bool, Pool>,
}

impl Model {
    pub(super) fn want(
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
    pub(super) fn feature_clause(g: &Graph) -> &'static str {
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
    pub(super) fn own_feature(g: &Graph, io_clause: &'static str) -> (u64, &'static str) {
        if g.io_at == Io::Feature && g.io > 0 {
            (g.feature.saturating_add(g.io), io_clause)
        } else {
            (g.feature, Self::feature_clause(g))
        }
    }

    pub(super) fn pool_key(shape: ShapeKind) -> bool {
        shape == ShapeKind::Static
    }

    pub(super) fn load(&mut self, id: u32, g: Graph, out: &mut Vec<Want>) {
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
    pub(super) fn load_pooled(&mut self, id: u32, g: &Graph, out: &mut Vec<Want>) {
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
    pub(super) fn release(&mut self, id: u32, out: &mut Vec<Want>) {
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

    pub(super) fn unload(&mut self, id: u32, out: &mut Vec<Want>) {
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
    pub(super) fn give_back(&mut self, id: u32, g: &Graph, out: &mut Vec<Want>) {
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
