//! The reference memory capability: plans one graph's tensors into one device arena, honouring
//! reuse, I/O reuse lists, output/input aliases and memset cleanup policies.
//!
//! # How the plan is made
//!
//! Tensors are first grouped into *blocks*, each with one lifetime (a range of steps) and a size
//! rounded up to [`ALIGNMENT`]:
//! - an alias pair (`outputReuseInputMemIndexes`) is one block holding both tensors at its start;
//! - memset outputs under `atomicCleanPolicy=0` are one block holding all of them side by side;
//!   under `1`, one block per memset operator;
//! - every other tensor is a block of its own.
//!
//! Blocks that must live for the whole run (unlisted inputs and outputs, alias pairs, and every
//! block when `disableReuseMemory=1`) are stacked from offset 0. The policy-0 memset region is
//! live from step 0 (it is cleaned before the run) to the last step of its last memset output
//! (ACP-012), and is reused after that like any other block. The others are placed by a sweep
//! over the steps, in order of their first step (largest first within a step): each takes the
//! smallest free interval of the arena above the whole-run blocks that holds it (best fit), or
//! else the top, and its bytes are free again once the sweep passes its last step (lifetimes are
//! inclusive, DRM-013). Five such sweeps are made (forward and backward in time, with different
//! orders within a step; two from 131,072 blocks on, side by side on threads from 16,384) and
//! the one with the lowest peak is kept. Free intervals are kept by
//! size and by offset, merged with their neighbours when bytes come back, so each block costs
//! `O(log n)` and a plan `O(n log n)`. A
//! zero-byte block shares nothing and sits at offset 0. When stacking every block largest
//! first, as with reuse disabled, gives a lower peak (possible only through the padding of the
//! top block), that plan is kept instead.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use ge_spec::vocab::memory::{
    aligned, Alias, CleanupGroup, MemoryObservation, MemoryScenario, Role, ALIGNMENT,
};
use ge_spec::{Answer, Diagnostic, OptionKey, Product, Profile, RunMode, ShapeKind, Subject};

use crate::options::{self, Context, Values};

/// Plans the device memory of one graph under `profile`.
pub fn plan(profile: Profile, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
    Ok(observe(profile, scenario))
}

/// The option context of a memory scenario: its counts, a static-shape graph run asynchronously
/// on the default product.
pub fn context(scenario: &MemoryScenario) -> Context {
    Context {
        inputs: Some(scenario.inputs),
        outputs: Some(scenario.outputs),
        shape: ShapeKind::Static,
        run_mode: RunMode::Async,
        product: Product::default(),
    }
}

/// The observation of the reference for `scenario` under `profile`.
pub fn observe(profile: Profile, scenario: &MemoryScenario) -> MemoryObservation {
    let mut obs = MemoryObservation::default();
    let invalid = scenario.validate();
    if !invalid.is_empty() {
        obs.errors = invalid;
        obs.canonicalize();
        return obs;
    }
    let resolution = options::resolve(profile, &scenario.options, context(scenario));
    obs.warnings = resolution.observation.warnings.clone();
    if resolution.rejected() {
        obs.errors = resolution.observation.errors.clone();
        obs.canonicalize();
        return obs;
    }
    let values = resolution.values;
    // IRM-011 / ORM-011 upstream: GE checks no size of a listed input or output.
    if profile != Profile::Upstream {
        obs.errors = misaligned_reuse(scenario, &values);
    }
    if !obs.errors.is_empty() {
        obs.canonicalize();
        return obs;
    }
    // ORI-010 upstream: GE's planners never read the pairs; each half is planned like any
    // other input or output, the pairs stay in force for the run's address check.
    let planned = match profile {
        Profile::Documented => values.clone(),
        Profile::Upstream => Values {
            output_reuse_input: Vec::new(),
            ..values.clone()
        },
    };
    let offsets = place(scenario, &planned);
    fill_plan(scenario, &planned, &offsets, &mut obs);
    obs.aliases = values
        .output_reuse_input
        .iter()
        .map(|&(input, output)| Alias { input, output })
        .collect();
    obs.errors.extend(run_errors(profile, scenario, &values));
    obs.canonicalize();
    obs
}

/// IRM-011 / ORM-011: a listed input or output whose size is not a multiple of 32 bytes.
fn misaligned_reuse(scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for &i in &values.input_reuse {
        if let Some(t) = scenario.input(i) {
            if t.size % ALIGNMENT != 0 {
                errors.push(
                    Diagnostic::new(
                        "IRM-011",
                        format!(
                            "input {i} (`{}`) is listed for reuse but its size, {} bytes, is not a multiple of {ALIGNMENT}",
                            t.name, t.size
                        ),
                    )
                    .key(OptionKey::InputReuseMemIndexes.as_str())
                    .subject(Subject::input(i))
                    .value(t.size.to_string()),
                );
            }
        }
    }
    for &j in &values.output_reuse {
        if let Some(t) = scenario.output(j) {
            if t.size % ALIGNMENT != 0 {
                errors.push(
                    Diagnostic::new(
                        "ORM-011",
                        format!(
                            "output {j} (`{}`) is listed for reuse but its size, {} bytes, is not a multiple of {ALIGNMENT}",
                            t.name, t.size
                        ),
                    )
                    .key(OptionKey::OutputReuseMemIndexes.as_str())
                    .subject(Subject::output(j))
                    .value(t.size.to_string()),
                );
            }
        }
    }
    errors
}

/// ORI-011: the run's addresses of a pair differ, or (upstream) one of them is not passed. GE
/// skips the check when the run passes no input or no output at all (ORI-011 upstream).
fn run_errors(profile: Profile, scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let Some(run) = &scenario.run else {
        return Vec::new();
    };
    let upstream = profile == Profile::Upstream;
    if upstream && (run.inputs.is_empty() || run.outputs.is_empty()) {
        return Vec::new();
    }
    values
        .output_reuse_input
        .iter()
        .filter_map(|&(i, o)| {
            let a = run.inputs.get(i as usize);
            let b = run.outputs.get(o as usize);
            let fails = a != b || (upstream && a.is_none());
            fails.then(|| {
                let at = |x: Option<&u64>| x.map_or_else(|| "no address".to_owned(), |x| format!("{x:#x}"));
                Diagnostic::new(
                    "ORI-011",
                    format!("input {i} is passed at {} but its paired output {o} at {}; a pair must be passed at one address", at(a), at(b)),
                )
                .key(OptionKey::OutputReuseInputMemIndexes.as_str())
                .subject(Subject::alias(i, o))
            })
        })
        .collect()
}

/// A unit of placement: tensors that move together.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// Aligned size.
    size: u64,
    /// End of its last byte in use, relative to its start (at most `size`).
    used: u64,
    /// First step (inclusive).
    start: u32,
    /// Last step (inclusive).
    end: u32,
    /// Members live in `members[from..to]` as (tensor index, offset in the block).
    from: usize,
    to: usize,
    /// Live for the whole run.
    whole: bool,
}

/// Groups the tensors into blocks (see the module docs).
// Long because: the blocks in the order they are taken (I/O pairs, cleanup groups, the rest, then
// reuse turned off), sharing one push closure over the member list; split, each part would need the
// index maps and the list passed along.
fn blocks(scenario: &MemoryScenario, values: &Values) -> (Vec<Block>, Vec<(usize, u64)>) {
    let end = scenario.run_end();
    let mut blocks = Vec::with_capacity(scenario.tensors.len());
    let mut members: Vec<(usize, u64)> = Vec::with_capacity(scenario.tensors.len());
    let mut index_of_input = BTreeMap::new();
    let mut index_of_output = BTreeMap::new();
    let mut memset: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, t) in scenario.tensors.iter().enumerate() {
        match &t.role {
            Role::Input { index } => {
                index_of_input.insert(*index, k);
            }
            Role::Output { index } => {
                index_of_output.insert(*index, k);
            }
            Role::Memset { op } => memset.entry(op.as_str()).or_default().push(k),
            Role::Intermediate => {}
        }
    }
    // Validated: every size rounds up, and their sum fits.
    let size_of = |k: usize| aligned(scenario.tensors[k].size).unwrap_or(u64::MAX);
    let mut taken = vec![false; scenario.tensors.len()];
    let mut push =
        |blocks: &mut Vec<Block>, list: &[(usize, u64)], size: u64, start, stop, whole| {
            let used = list
                .iter()
                .map(|&(k, rel)| rel + scenario.tensors[k].size)
                .max()
                .unwrap_or(0);
            let from = members.len();
            members.extend_from_slice(list);
            blocks.push(Block {
                size,
                used,
                start,
                end: stop,
                from,
                to: members.len(),
                whole,
            });
        };
    for &(i, o) in &values.output_reuse_input {
        if let (Some(&a), Some(&b)) = (index_of_input.get(&i), index_of_output.get(&o)) {
            taken[a] = true;
            taken[b] = true;
            let size = size_of(a).max(size_of(b));
            push(&mut blocks, &[(a, 0), (b, 0)], size, 0, end, true);
        }
    }
    let mut groups: Vec<Vec<usize>> = if values.separate_atomic_clean {
        memset.into_values().collect()
    } else {
        vec![memset.into_values().flatten().collect()]
    };
    groups.retain(|g| !g.is_empty());
    for mut group in groups {
        group.sort_by(|&a, &b| scenario.tensors[a].name.cmp(&scenario.tensors[b].name));
        let mut list = Vec::with_capacity(group.len());
        let mut size = 0u64;
        let (mut start, mut stop) = (u32::MAX, 0);
        for &k in &group {
            taken[k] = true;
            list.push((k, size));
            size = size.saturating_add(size_of(k));
            start = start.min(scenario.tensors[k].first);
            stop = stop.max(scenario.tensors[k].last);
        }
        // ACP-012: the collective region is cleaned before the run, so it is in use from step 0
        // until its last memset output dies; ACP-013: an operator's region spans its outputs.
        let start = if values.separate_atomic_clean {
            start
        } else {
            0
        };
        push(&mut blocks, &list, size, start, stop, false);
    }
    for (k, t) in scenario.tensors.iter().enumerate() {
        if taken[k] {
            continue;
        }
        let (start, stop, whole) = match t.role {
            Role::Input { index } if values.input_reuse.contains(&index) => (0, t.last, false),
            Role::Output { index } if values.output_reuse.contains(&index) => (t.first, end, false),
            Role::Input { .. } | Role::Output { .. } => (0, end, true),
            _ => (t.first, t.last, false),
        };
        push(&mut blocks, &[(k, 0)], size_of(k), start, stop, whole);
    }
    if values.disable_reuse {
        for b in &mut blocks {
            b.whole = true;
            b.start = 0;
            b.end = end;
        }
    }
    (blocks, members)
}

/// Offsets of every tensor, by tensor index.
fn place(scenario: &MemoryScenario, values: &Values) -> Vec<u64> {
    let (blocks, members) = blocks(scenario, values);
    let block_offsets = place_blocks(&blocks);
    let mut offsets = vec![0u64; scenario.tensors.len()];
    for (b, block) in blocks.iter().enumerate() {
        for &(k, rel) in &members[block.from..block.to] {
            offsets[k] = block_offsets[b] + rel;
        }
    }
    offsets
}

/// The sweeps [`place_blocks`] tries: the direction (forward in time, or backward, which sees the
/// graph from its end) and which of the blocks starting at one step goes first. Five sweeps cost
/// a constant factor over one; on random workloads of 300 to 30,000 tensors they bring the worst
/// peak from 1.12 to 1.08 times the lower bound, and the mean from about 1.06 to 1.05.
const SWEEPS: [(Direction, InStep); 5] = [
    (Direction::Forward, InStep::Largest),
    (Direction::Backward, InStep::Largest),
    (Direction::Forward, InStep::Longest),
    (Direction::Backward, InStep::Longest),
    (Direction::Forward, InStep::Area),
];

/// The direction of a sweep over the steps.
#[derive(Debug, Clone, Copy)]
enum Direction {
    Forward,
    Backward,
}

/// Which of the blocks starting at one step a sweep places first.
#[derive(Debug, Clone, Copy)]
enum InStep {
    /// The largest, then the first listed.
    Largest,
    /// The one that lives the longest, then the largest.
    Longest,
    /// The largest in size times steps lived.
    Area,
}

impl InStep {
    /// The rank of a block among those starting with it: higher goes first.
    fn rank(self, b: &Block) -> u128 {
        let steps = u128::from(b.end - b.start) + 1;
        match self {
            InStep::Largest => u128::from(b.size),
            InStep::Longest => (steps << 64) | u128::from(b.size),
            InStep::Area => u128::from(b.size) * steps,
        }
    }
}

/// Offsets of the blocks: the best of the [`SWEEPS`], or every block stacked largest first as
/// if reuse were disabled when that has a lower peak (with unaligned sizes it can: the top
/// block's padding), so the plan never needs more than the reuse-off one. Ties keep the earlier
/// candidate.
fn place_blocks(blocks: &[Block]) -> Vec<u64> {
    let peak = |offsets: &[u64]| {
        blocks
            .iter()
            .zip(offsets)
            .map(|(b, &o)| o + b.used)
            .max()
            .unwrap_or(0)
    };
    let mut order: Vec<(Reverse<u64>, usize)> = blocks
        .iter()
        .enumerate()
        .map(|(b, block)| (Reverse(block.size), b))
        .collect();
    order.sort_unstable();
    let mut stacked = vec![0u64; blocks.len()];
    let mut base = 0;
    for (_, b) in order {
        stacked[b] = base;
        base += blocks[b].size;
    }
    let mut sweeps = swept(blocks).into_iter();
    let mut best = sweeps.next().unwrap_or_default();
    for candidate in sweeps.chain([stacked]) {
        if peak(&candidate) < peak(&best) {
            best = candidate;
        }
    }
    best
}

/// From this many blocks on, the sweeps run on threads of their own: they are independent, and
/// below this a thread costs more than the sweep it runs (a sweep of 16,384 blocks takes about
/// 5 ms here; the suite plans thousands of small graphs).
const PARALLEL_FROM: usize = 16_384;

/// From this many blocks on, only the first two [`SWEEPS`] are made (forward and backward,
/// largest first): at 10^6 random tensors the backward one is the best of the five and the
/// others cost two seconds more on two cores, while at that size every sweep's peak is within
/// 1.08 of the lower bound (`cargo bench -p ge-reference --bench memory`).
const FEW_SWEEPS_FROM: usize = 131_072;

/// The offsets each sweep gives, in the order of [`SWEEPS`], whether run one after the other or
/// side by side (the same plans either way).
fn swept(blocks: &[Block]) -> Vec<Vec<u64>> {
    let sweeps = if blocks.len() < FEW_SWEEPS_FROM {
        &SWEEPS[..]
    } else {
        &SWEEPS[..2]
    };
    let one = |&(direction, in_step): &(Direction, InStep)| sweep(blocks, direction, in_step);
    if blocks.len() < PARALLEL_FROM {
        return sweeps.iter().map(one).collect();
    }
    std::thread::scope(|scope| {
        let running: Vec<_> = sweeps.iter().map(|s| scope.spawn(move || one(s))).collect();
        running
            .into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Offsets of the blocks from one sweep over the steps in `direction`. Whole-run blocks are
/// stacked from 0, largest first. The others are taken by first step (in the sweep's direction;
/// within a step, ordered by `in_step`) from the [`Arena`], and given back once the sweep passes
/// their last step. Blocks of zero bytes share nothing and stay at offset 0.
fn sweep(blocks: &[Block], direction: Direction, in_step: InStep) -> Vec<u64> {
    // A block's first and last step as the sweep meets them.
    let span = |b: &Block| match direction {
        Direction::Forward => (b.start, b.end),
        Direction::Backward => (u32::MAX - b.end, u32::MAX - b.start),
    };
    let mut offsets = vec![0u64; blocks.len()];
    let mut order: Vec<(u32, Reverse<u128>, usize)> = blocks
        .iter()
        .enumerate()
        .map(|(b, block)| (span(block).0, Reverse(in_step.rank(block)), b))
        .collect();
    order.sort_unstable();
    let mut arena = Arena::default();
    for &(_, _, b) in order.iter().filter(|o| blocks[o.2].whole) {
        offsets[b] = arena.take(blocks[b].size, u32::MAX);
    }
    // Blocks placed and not yet given back, by last step.
    let mut live: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
    for &(first, _, b) in order
        .iter()
        .filter(|o| !blocks[o.2].whole && blocks[o.2].size > 0)
    {
        // DRM-013: lifetimes are inclusive, so a block whose last step is this block's first
        // is still in use.
        while let Some(&Reverse((last, p))) = live.peek() {
            if last >= first {
                break;
            }
            live.pop();
            arena.give_back(offsets[p], blocks[p].size);
        }
        let last = span(&blocks[b]).1;
        offsets[b] = arena.take(blocks[b].size, last);
        live.push(Reverse((last, b)));
    }
    offsets
}

/// The arena during a sweep. Free intervals below the top are kept by size then offset (best
/// fit) and by offset (merging neighbours); everything from the top up is free, so no free
/// interval ends at the top. Blocks in use are kept by offset with their last step, so a block
/// given a larger interval than it needs sits at the end whose neighbour dies closer to its own
/// last step: when both die, their bytes come back as one interval.
#[derive(Debug, Default)]
struct Arena {
    by_size: BTreeSet<(u64, u64)>,
    by_offset: BTreeMap<u64, u64>,
    in_use: BTreeMap<u64, u32>,
    top: u64,
}

impl Arena {
    /// The offset of `size` bytes in use until step `last`: in the smallest free interval that
    /// holds them (the lowest of equal ones), or else at the top.
    fn take(&mut self, size: u64, last: u32) -> u64 {
        let at = match self.by_size.range((size, 0)..).next() {
            Some(&(free, start)) => {
                self.remove(start, free);
                // The neighbours' last steps; the whole-run blocks below all others never die.
                let below = self
                    .in_use
                    .range(..start)
                    .next_back()
                    .map_or(u32::MAX, |(_, &l)| l);
                let above = self.in_use.get(&(start + free)).map_or(u32::MAX, |&l| l);
                if below.abs_diff(last) > above.abs_diff(last) {
                    self.insert(start, free - size);
                    start + free - size
                } else {
                    self.insert(start + size, free - size);
                    start
                }
            }
            None => {
                self.top += size;
                self.top - size
            }
        };
        self.in_use.insert(at, last);
        at
    }

    /// Frees `size` bytes at `at`, merged with the free intervals just below and just above;
    /// freed bytes that reach the top lower it instead.
    fn give_back(&mut self, at: u64, size: u64) {
        self.in_use.remove(&at);
        let (mut start, mut end) = (at, at + size);
        if let Some((&below, &len)) = self.by_offset.range(..start).next_back() {
            if below + len == start {
                self.remove(below, len);
                start = below;
            }
        }
        if let Some(&len) = self.by_offset.get(&end) {
            self.remove(end, len);
            end += len;
        }
        if end == self.top {
            self.top = start;
        } else {
            self.insert(start, end - start);
        }
    }

    /// Records a free interval; one of zero bytes is no interval.
    fn insert(&mut self, at: u64, len: u64) {
        if len > 0 {
            self.by_size.insert((len, at));
            self.by_offset.insert(at, len);
        }
    }

    fn remove(&mut self, at: u64, len: u64) {
        self.by_size.remove(&(len, at));
        self.by_offset.remove(&at);
    }
}

/// Fills offsets, peak, cleanup groups, reuse and alias reports from the tensor offsets.
fn fill_plan(
    scenario: &MemoryScenario,
    values: &Values,
    offsets: &[u64],
    obs: &mut MemoryObservation,
) {
    let tensors = &scenario.tensors;
    obs.offsets = tensors
        .iter()
        .zip(offsets)
        .map(|(t, &o)| (t.name.clone(), o))
        .collect();
    obs.peak_bytes = tensors
        .iter()
        .zip(offsets)
        .map(|(t, &o)| o + t.size)
        .max()
        .unwrap_or(0);
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, t) in tensors.iter().enumerate() {
        if let Role::Memset { op } = &t.role {
            let key = if values.separate_atomic_clean {
                op.as_str()
            } else {
                ""
            };
            groups.entry(key).or_default().push(k);
        }
    }
    obs.cleanup = groups
        .into_values()
        .map(|members| {
            let start = members.iter().map(|&k| offsets[k]).min().unwrap_or(0);
            let stop = members
                .iter()
                .map(|&k| offsets[k] + tensors[k].size)
                .max()
                .unwrap_or(0);
            CleanupGroup {
                offset: start,
                size: stop - start,
                tensors: members.iter().map(|&k| tensors[k].name.clone()).collect(),
            }
        })
        .collect();
    obs.aliases = values
        .output_reuse_input
        .iter()
        .map(|&(input, output)| Alias { input, output })
        .collect();
    let shared = sharing(scenario, offsets);
    let paired_in: Vec<u32> = values.output_reuse_input.iter().map(|p| p.0).collect();
    let paired_out: Vec<u32> = values.output_reuse_input.iter().map(|p| p.1).collect();
    for (k, t) in tensors.iter().enumerate() {
        match t.role {
            Role::Input { index } if shared[k] && !paired_in.contains(&index) => {
                obs.reused_inputs.push(index);
            }
            Role::Output { index } if shared[k] && !paired_out.contains(&index) => {
                obs.reused_outputs.push(index);
            }
            _ => {}
        }
    }
}

/// For each tensor: whether some other tensor occupies one of its bytes. Over the tensors of
/// at least one byte sorted by offset, one shares with a tensor placed no higher when the
/// highest end before it passes its offset, and with one placed no lower when the next one
/// starts below its end (that one ends above its own start, so above this offset).
fn sharing(scenario: &MemoryScenario, offsets: &[u64]) -> Vec<bool> {
    let tensors = &scenario.tensors;
    let mut order: Vec<(u64, usize)> = (0..tensors.len())
        .filter(|&k| tensors[k].size > 0)
        .map(|k| (offsets[k], k))
        .collect();
    order.sort_unstable();
    let mut shared = vec![false; tensors.len()];
    // The highest end among the tensors before this one in `order`.
    let mut reach = 0u64;
    for (p, &(o, k)) in order.iter().enumerate() {
        let end = o + tensors[k].size;
        let next_starts_inside = order.get(p + 1).is_some_and(|&(next, _)| next < end);
        shared[k] = reach > o || next_starts_inside;
        reach = reach.max(end);
    }
    shared
}

/// The lower bound of any plan's peak: the largest sum of sizes of tensors live at one step
/// (over their own `first..=last`, without alignment or the whole-run rules).
pub fn lower_bound(scenario: &MemoryScenario) -> u64 {
    let mut events: Vec<(u64, bool, u64)> = Vec::with_capacity(scenario.tensors.len() * 2);
    for t in &scenario.tensors {
        // Starts before ends at the same position: lifetimes are inclusive.
        events.push((u64::from(t.first) * 2, true, t.size));
        events.push((u64::from(t.last) * 2 + 1, false, t.size));
    }
    events.sort_unstable_by_key(|&(at, _, _)| at);
    let (mut live, mut peak) = (0u64, 0u64);
    for (_, start, size) in events {
        if start {
            live = live.saturating_add(size);
            peak = peak.max(live);
        } else {
            live = live.saturating_sub(size);
        }
    }
    peak
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_spec::vocab::memory::Tensor;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` random intermediate blocks over `n / 4` steps, each live for 1 to 16 steps.
    fn random_blocks(n: u32, seed: u64) -> Vec<Block> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                let start = (splitmix(&mut state) % u64::from(n / 4)) as u32;
                let size = 32 * (1 + splitmix(&mut state) % 4096);
                Block {
                    size,
                    used: size,
                    start,
                    end: start + (splitmix(&mut state) % 16) as u32,
                    from: 0,
                    to: 0,
                    whole: false,
                }
            })
            .collect()
    }

    #[test]
    fn sweeps_on_threads_give_the_plans_they_give_one_after_the_other() {
        let blocks = random_blocks(PARALLEL_FROM as u32, 7);
        let alone: Vec<Vec<u64>> = SWEEPS.iter().map(|&(d, i)| sweep(&blocks, d, i)).collect();
        assert_eq!(swept(&blocks), alone);
        let small = random_blocks(300, 7);
        assert_eq!(swept(&small).len(), SWEEPS.len());
        let large = random_blocks(FEW_SWEEPS_FROM as u32, 7);
        let two: Vec<Vec<u64>> = SWEEPS[..2]
            .iter()
            .map(|&(d, i)| sweep(&large, d, i))
            .collect();
        assert_eq!(swept(&large), two);
    }

    #[test]
    fn random_workload_peak_is_within_ten_percent_of_the_lower_bound() {
        for seed in 1..=5u64 {
            let mut state = seed;
            let n = 3000u32;
            let tensors = (0..n)
                .map(|i| {
                    let first = (splitmix(&mut state) % u64::from(n / 4)) as u32;
                    let len = (splitmix(&mut state) % 16) as u32;
                    Tensor {
                        name: format!("t{i}"),
                        size: 32 * (1 + splitmix(&mut state) % 4096),
                        first,
                        last: first + len,
                        role: Role::Intermediate,
                    }
                })
                .collect();
            let scenario = MemoryScenario {
                tensors,
                ..MemoryScenario::default()
            };
            let obs = observe(Profile::Documented, &scenario);
            assert!(obs.errors.is_empty(), "{:?}", obs.errors);
            let bound = lower_bound(&scenario);
            let ratio = obs.peak_bytes as f64 / bound as f64;
            assert!(
                ratio <= 1.10,
                "seed {seed}: peak / lower bound = {ratio:.3}"
            );
        }
    }
}
