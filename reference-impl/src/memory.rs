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
//! (ACP-012), and is reused after that like any other block. The
//! others are placed greedily, largest first: each takes the smallest gap, among the blocks
//! already placed whose lifetimes overlap its own, that fits it, or else the top of those blocks.
//! Placed blocks are indexed by time buckets, so a block only looks at its neighbours in time;
//! the cost is `O(n log n)` for the sort plus the candidates each block inspects, which stays
//! bounded when lifetimes are short compared with the run, as in real graphs.

use std::collections::BTreeMap;

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

/// The orders blocks are placed in; the plan keeps the one with the lowest peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Largest first.
    Size,
    /// Longest lifetime first, then largest.
    Length,
    /// Largest size times lifetime first.
    Area,
    /// Every block stacked, largest first, as if reuse were disabled: the plan never does worse
    /// than that.
    Stack,
}

/// Offsets of the blocks: whole-run blocks stacked from 0, the others best-fit in a few orders,
/// keeping the order whose plan has the lowest peak (ties: the earlier order).
fn place_blocks(blocks: &[Block]) -> Vec<u64> {
    let mut best: Option<(u64, Vec<u64>)> = None;
    for order in [Order::Size, Order::Length, Order::Area, Order::Stack] {
        let offsets = place_in_order(blocks, order);
        let peak = blocks
            .iter()
            .zip(&offsets)
            .map(|(b, &o)| o + b.used)
            .max()
            .unwrap_or(0);
        if best.as_ref().is_none_or(|(p, _)| peak < *p) {
            best = Some((peak, offsets));
        }
    }
    best.map(|(_, o)| o).unwrap_or_default()
}

/// Offsets of the blocks, placing the ones that are not whole-run in `order`.
fn place_in_order(blocks: &[Block], order: Order) -> Vec<u64> {
    let mut offsets = vec![0u64; blocks.len()];
    let len = |b: &Block| u64::from(b.end - b.start) + 1;
    let key = |b: &Block| -> (u128, u64) {
        match order {
            Order::Size => (u128::from(b.size), 0),
            Order::Length => (u128::from(len(b)), b.size),
            Order::Area => (u128::from(b.size) * u128::from(len(b)), b.size),
            Order::Stack => (u128::from(b.size), 0),
        }
    };
    let stack = order == Order::Stack;
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&blocks[a], &blocks[b]);
        // Stacking ignores lifetimes, so ties go by position alone, exactly as when reuse is
        // disabled and every block spans the run.
        let (xs, ys) = if stack { (0, 0) } else { (x.start, y.start) };
        key(y).cmp(&key(x)).then(xs.cmp(&ys)).then(a.cmp(&b))
    });
    let mut base = 0u64;
    for &b in order.iter().filter(|&&b| stack || blocks[b].whole) {
        offsets[b] = base;
        base += blocks[b].size;
    }
    let rest: Vec<usize> = order
        .into_iter()
        .filter(|&b| !stack && !blocks[b].whole)
        .collect();
    if rest.is_empty() {
        return offsets;
    }
    // Time buckets: about one mean lifetime wide, and never more than 2n + 1 of them.
    let last = rest.iter().map(|&b| blocks[b].end).max().unwrap_or(0) as u64;
    let total_len: u64 = rest
        .iter()
        .map(|&b| u64::from(blocks[b].end - blocks[b].start) + 1)
        .sum();
    let n = rest.len() as u64;
    let width = (total_len / n).max(1).max((last + 1).div_ceil(2 * n + 1));
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); (last / width + 1) as usize];
    let mut seen = vec![u32::MAX; blocks.len()];
    let mut candidates: Vec<(u64, u64)> = Vec::new();
    for (round, &b) in rest.iter().enumerate() {
        let block = blocks[b];
        let (lo, hi) = (
            (u64::from(block.start) / width) as usize,
            (u64::from(block.end) / width) as usize,
        );
        candidates.clear();
        for bucket in &buckets[lo..=hi] {
            for &p in bucket {
                let p = p as usize;
                let other = &blocks[p];
                if seen[p] != round as u32 && other.start <= block.end && block.start <= other.end {
                    seen[p] = round as u32;
                    candidates.push((offsets[p], offsets[p] + other.size));
                }
            }
        }
        candidates.sort_unstable();
        let mut cursor = base;
        let mut best: Option<(u64, u64)> = None; // (gap, offset)
        for &(start, stop) in &candidates {
            if start > cursor {
                let gap = start - cursor;
                if gap >= block.size && best.is_none_or(|(g, _)| gap < g) {
                    best = Some((gap, cursor));
                }
            }
            cursor = cursor.max(stop);
        }
        offsets[b] = best.map_or(cursor, |(_, at)| at);
        for bucket in &mut buckets[lo..=hi] {
            bucket.push(b as u32);
        }
    }
    offsets
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

/// For each tensor: whether some other tensor occupies one of its bytes. Uses prefix maxima of
/// byte ends over tensors sorted by offset, keeping the two largest so a tensor can skip itself.
fn sharing(scenario: &MemoryScenario, offsets: &[u64]) -> Vec<bool> {
    let tensors = &scenario.tensors;
    let mut order: Vec<usize> = (0..tensors.len())
        .filter(|&k| tensors[k].size > 0)
        .collect();
    order.sort_by_key(|&k| offsets[k]);
    // top[p] = the two largest ends (with their tensor) among order[..=p].
    let mut top: Vec<[(u64, usize); 2]> = Vec::with_capacity(order.len());
    let mut best = [(0u64, usize::MAX); 2];
    for &k in &order {
        let e = offsets[k] + tensors[k].size;
        if e > best[0].0 {
            best = [(e, k), best[0]];
        } else if e > best[1].0 {
            best[1] = (e, k);
        }
        top.push(best);
    }
    let mut shared = vec![false; tensors.len()];
    for &k in &order {
        let (o, e) = (offsets[k], offsets[k] + tensors[k].size);
        // Tensors starting before `e` share with k when they end after `o`.
        let count = order.partition_point(|&x| offsets[x] < e);
        if count == 0 {
            continue;
        }
        let [first, second] = top[count - 1];
        let other_end = if first.1 == k { second.0 } else { first.0 };
        shared[k] = other_end > o;
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
