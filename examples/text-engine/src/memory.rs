//! The memory layer: plans the device memory of one graph in a single arena, honouring memory
//! reuse (`ge.exec.disableReuseMemory`), input and output reuse indexes, output/input aliases,
//! the memset cleanup policy and the run-time address check of aliased pairs.
//!
//! The planner works on *blocks*: a tensor on its own, an aliased input/output pair placed at one
//! address, or a memset cleanup region holding its tensors side by side. Each block has a
//! lifetime (an inclusive step range) and an aligned size; a sweep over start steps hands out
//! offsets from a free list, and a block's bytes return to the free list only after its last
//! step. Two blocks whose lifetimes overlap therefore never share a byte.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use ge_spec::diag::{Diagnostic, Part, Subject};
use ge_spec::option::OptionKey;
use ge_spec::vocab::memory::{aligned, CleanupGroup, Role, Tensor};
use ge_spec::vocab::{MemoryObservation, MemoryScenario};

use crate::options::{self, Facts, Resolved};

/// One unit of placement: tensors at fixed offsets inside it, one lifetime, one aligned size.
#[derive(Debug, Clone)]
struct Block {
    /// First step the block's bytes are in use (inclusive).
    start: u32,
    /// Last step the block's bytes are in use (inclusive).
    end: u32,
    /// Bytes reserved, a multiple of [`ge_spec::vocab::memory::ALIGNMENT`].
    size: u64,
    /// The tensors (by position in the scenario) and their offsets inside the block.
    members: Vec<(usize, u64)>,
    /// True for a memset cleanup region.
    cleanup: bool,
}

/// The arena: a top and a free list of holes below it, each kept twice to find holes both by
/// address (to merge neighbours) and by size (best fit).
#[derive(Debug, Default)]
struct Arena {
    top: u64,
    by_offset: BTreeMap<u64, u64>,
    by_size: BTreeSet<(u64, u64)>,
}

impl Arena {
    fn insert_hole(&mut self, offset: u64, len: u64) {
        self.by_offset.insert(offset, len);
        self.by_size.insert((len, offset));
    }

    fn remove_hole(&mut self, offset: u64, len: u64) {
        self.by_offset.remove(&offset);
        self.by_size.remove(&(len, offset));
    }

    /// Bytes for a block of `size`: the smallest hole that fits, else the top of the arena.
    fn alloc(&mut self, size: u64) -> Option<u64> {
        if size == 0 {
            return Some(0);
        }
        if let Some(&(len, offset)) = self.by_size.range((size, 0)..).next() {
            self.remove_hole(offset, len);
            if len > size {
                self.insert_hole(offset.checked_add(size)?, len - size);
            }
            return Some(offset);
        }
        let offset = self.top;
        self.top = self.top.checked_add(size)?;
        Some(offset)
    }

    /// Gives the bytes of a block back, merging neighbouring holes and lowering the top.
    fn release(&mut self, offset: u64, size: u64) -> Option<()> {
        if size == 0 {
            return Some(());
        }
        let (mut start, mut len) = (offset, size);
        if let Some((&before, &before_len)) = self.by_offset.range(..offset).next_back() {
            if before.checked_add(before_len)? == offset {
                self.remove_hole(before, before_len);
                start = before;
                len = len.checked_add(before_len)?;
            }
        }
        let end = start.checked_add(len)?;
        if let Some(&after_len) = self.by_offset.get(&end) {
            self.remove_hole(end, after_len);
            len = len.checked_add(after_len)?;
        }
        if start.checked_add(len)? == self.top {
            self.top = start;
        } else {
            self.insert_hole(start, len);
        }
        Some(())
    }
}

/// The error for arithmetic that leaves `u64`: the sizes taken together are too large.
fn too_large() -> Diagnostic {
    Diagnostic::new(
        "MEM-001",
        "the tensor sizes, each rounded up to 32 bytes, add up to more than 2^64 - 1 bytes",
    )
    .subject(Subject::part(Part::Sizes))
}

/// The memory capability: validates the scenario, resolves the options, checks the listed
/// inputs and outputs, plans, then checks the run's addresses.
pub fn plan(scenario: &MemoryScenario) -> MemoryObservation {
    let mut obs = MemoryObservation {
        errors: scenario.validate(),
        ..MemoryObservation::default()
    };
    let facts = Facts {
        inputs: Some(scenario.inputs),
        outputs: Some(scenario.outputs),
        user_inputs: Some(scenario.inputs),
        ..Facts::default()
    };
    let resolved = options::resolve(&scenario.options, &facts);
    obs.errors
        .extend(resolved.observation.errors.iter().cloned());
    obs.warnings
        .extend(resolved.observation.warnings.iter().cloned());
    if !obs.errors.is_empty() {
        obs.canonicalize();
        return obs;
    }
    match place(scenario, &resolved) {
        Ok(placed) => placed.report(scenario, &resolved, &mut obs),
        Err(errors) => obs.errors.extend(errors),
    }
    obs.canonicalize();
    obs
}

/// A finished placement: the offset of every tensor and the partner of every aliased tensor.
#[derive(Debug)]
struct Placed {
    offsets: Vec<u64>,
    partner: Vec<Option<usize>>,
    cleanup: Vec<CleanupGroup>,
}

/// Where each graph input and output sits among the tensors.
fn io_positions(tensors: &[Tensor]) -> (BTreeMap<u32, usize>, BTreeMap<u32, usize>) {
    let mut inputs = BTreeMap::new();
    let mut outputs = BTreeMap::new();
    for (i, t) in tensors.iter().enumerate() {
        match t.role {
            Role::Input { index } => {
                inputs.insert(index, i);
            }
            Role::Output { index } => {
                outputs.insert(index, i);
            }
            Role::Intermediate | Role::Memset { .. } => {}
        }
    }
    (inputs, outputs)
}

/// The listed indexes of an index-list option that are below `count` (the others do not take
/// effect).
fn listed(resolved: &Resolved, key: OptionKey, count: u32) -> BTreeSet<u32> {
    resolved
        .indexes(key)
        .iter()
        .filter_map(|i| i.below(count))
        .collect()
}

/// Builds the blocks and places them.
// Long because: an engine written from the text alone, kept as its author wrote it: the placement
// in one pass, as the text describes it.
fn place(scenario: &MemoryScenario, resolved: &Resolved) -> Result<Placed, Vec<Diagnostic>> {
    let tensors = &scenario.tensors;
    let (input_at, output_at) = io_positions(tensors);
    let listed_inputs = listed(resolved, OptionKey::InputReuseMemIndexes, scenario.inputs);
    let listed_outputs = listed(resolved, OptionKey::OutputReuseMemIndexes, scenario.outputs);

    // The text asks that a reused input or output be 32-byte aligned in size (N20).
    let mut errors = Vec::new();
    for (set, at, key, clause, is_input) in [
        (
            &listed_inputs,
            &input_at,
            OptionKey::InputReuseMemIndexes,
            "IRM-011",
            true,
        ),
        (
            &listed_outputs,
            &output_at,
            OptionKey::OutputReuseMemIndexes,
            "ORM-011",
            false,
        ),
    ] {
        for index in set {
            let Some(&pos) = at.get(index) else { continue };
            let size = tensors[pos].size;
            if aligned(size) != Some(size) {
                let what = if is_input { "input" } else { "output" };
                errors.push(
                    Diagnostic::new(
                        clause,
                        format!("{what} {index} is listed for reuse but its size {size} is not a multiple of 32"),
                    )
                    .key(key.as_str())
                    .subject(if is_input {
                        Subject::input(*index)
                    } else {
                        Subject::output(*index)
                    }),
                );
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    let reuse = resolved.number(OptionKey::DisableReuseMemory) == 0;
    let run_end = scenario.run_end();
    // The steps a tensor's bytes must stay untouched (N18, N19).
    let lifetime = |t: &Tensor| -> (u32, u32) {
        match t.role {
            Role::Input { index } if listed_inputs.contains(&index) => (0, t.last),
            Role::Input { .. } => (0, run_end),
            Role::Output { index } if listed_outputs.contains(&index) => (t.first, run_end),
            Role::Output { .. } => (0, run_end),
            Role::Intermediate | Role::Memset { .. } => (t.first, t.last),
        }
    };
    let size_of = |t: &Tensor| aligned(t.size).ok_or_else(|| vec![too_large()]);

    let mut blocks: Vec<Block> = Vec::new();
    let mut grouped = vec![false; tensors.len()];
    let mut partner: Vec<Option<usize>> = vec![None; tensors.len()];

    // Memset cleanup regions: one for all memset outputs (policy 0), or one per memset operator
    // (policy 1) (N21).
    let separate = resolved.number(OptionKey::AtomicCleanPolicy) == 1;
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in tensors.iter().enumerate() {
        if let Role::Memset { op } = &t.role {
            let group = if separate { op.as_str() } else { "" };
            groups.entry(group).or_default().push(i);
        }
    }
    for mut members in groups.into_values() {
        members.sort_by(|a, b| tensors[*a].name.cmp(&tensors[*b].name));
        let mut block = Block {
            start: u32::MAX,
            end: 0,
            size: 0,
            members: Vec::with_capacity(members.len()),
            cleanup: true,
        };
        for i in members {
            let t = &tensors[i];
            let (start, end) = lifetime(t);
            block.start = block.start.min(start);
            block.end = block.end.max(end);
            block.members.push((i, block.size));
            block.size = block
                .size
                .checked_add(size_of(t)?)
                .ok_or_else(|| vec![too_large()])?;
            grouped[i] = true;
        }
        blocks.push(block);
    }

    // Aliased pairs: the output at its input's address (N22).
    for alias in resolved.pairs() {
        let (Some(&i), Some(&o)) = (input_at.get(&alias.input), output_at.get(&alias.output))
        else {
            continue;
        };
        let (a, b) = (lifetime(&tensors[i]), lifetime(&tensors[o]));
        blocks.push(Block {
            start: a.0.min(b.0),
            end: a.1.max(b.1),
            size: size_of(&tensors[i])?.max(size_of(&tensors[o])?),
            members: vec![(i, 0), (o, 0)],
            cleanup: false,
        });
        grouped[i] = true;
        grouped[o] = true;
        partner[i] = Some(o);
        partner[o] = Some(i);
    }

    for (i, t) in tensors.iter().enumerate() {
        if !grouped[i] {
            let (start, end) = lifetime(t);
            blocks.push(Block {
                start,
                end,
                size: size_of(t)?,
                members: vec![(i, 0)],
                cleanup: false,
            });
        }
    }

    let block_offsets = sweep(&blocks, reuse).ok_or_else(|| vec![too_large()])?;

    let mut offsets = vec![0u64; tensors.len()];
    let mut cleanup = Vec::new();
    for (block, &base) in blocks.iter().zip(&block_offsets) {
        let mut span_end = base;
        for &(i, rel) in &block.members {
            let at = base.checked_add(rel).ok_or_else(|| vec![too_large()])?;
            offsets[i] = at;
            span_end = span_end.max(
                at.checked_add(tensors[i].size)
                    .ok_or_else(|| vec![too_large()])?,
            );
        }
        if block.cleanup {
            cleanup.push(CleanupGroup {
                offset: base,
                size: span_end - base,
                tensors: block
                    .members
                    .iter()
                    .map(|(i, _)| tensors[*i].name.clone())
                    .collect(),
            });
        }
    }
    Ok(Placed {
        offsets,
        partner,
        cleanup,
    })
}

/// Places the blocks in order of their first step (larger first among equals). With reuse on, a
/// block's bytes go back to the free list once a block starting after its last step is placed;
/// with reuse off, nothing is ever given back, so every block has bytes of its own.
fn sweep(blocks: &[Block], reuse: bool) -> Option<Vec<u64>> {
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    order.sort_by_key(|&b| (blocks[b].start, Reverse(blocks[b].size), b));
    let mut arena = Arena::default();
    let mut offsets = vec![0u64; blocks.len()];
    let mut live: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
    for b in order {
        if reuse {
            while let Some(&Reverse((end, done))) = live.peek() {
                if end >= blocks[b].start {
                    break;
                }
                live.pop();
                arena.release(offsets[done], blocks[done].size)?;
            }
        }
        offsets[b] = arena.alloc(blocks[b].size)?;
        live.push(Reverse((blocks[b].end, b)));
    }
    Some(offsets)
}

impl Placed {
    /// Fills the observation from the placement, then checks the run's addresses.
    fn report(&self, scenario: &MemoryScenario, resolved: &Resolved, obs: &mut MemoryObservation) {
        let tensors = &scenario.tensors;
        let mut peak = 0u64;
        for (t, &offset) in tensors.iter().zip(&self.offsets) {
            obs.offsets.insert(t.name.clone(), offset);
            peak = peak.max(offset.saturating_add(t.size));
        }
        obs.peak_bytes = peak;
        obs.cleanup = self.cleanup.clone();
        obs.aliases = resolved.pairs().to_vec();

        let shared = self.shared(tensors);
        for (i, t) in tensors.iter().enumerate() {
            if !shared[i] {
                continue;
            }
            match t.role {
                Role::Input { index } => obs.reused_inputs.push(index),
                Role::Output { index } => obs.reused_outputs.push(index),
                Role::Intermediate | Role::Memset { .. } => {}
            }
        }

        // The text: "ensure that the corresponding input and output are transferred to the same
        // memory address. Otherwise, a runtime error will occur." (N23)
        if let Some(run) = &scenario.run {
            for alias in resolved.pairs() {
                let input = run.inputs.get(alias.input as usize);
                let output = run.outputs.get(alias.output as usize);
                if let (Some(a), Some(b)) = (input, output) {
                    if a != b {
                        obs.errors.push(
                            Diagnostic::new(
                                "ORI-011",
                                format!(
                                    "input {} is passed at {a:#x} but its aliased output {} at {b:#x}",
                                    alias.input, alias.output
                                ),
                            )
                            .key(OptionKey::OutputReuseInputMemIndexes.as_str())
                            .subject(Subject::alias(alias.input, alias.output)),
                        );
                    }
                }
            }
        }
    }

    /// For every tensor: whether some other tensor, not its alias partner, occupies one of its
    /// bytes. Sorts the tensors by offset once, then looks at the widest tensor before and the
    /// next tensors after each one.
    fn shared(&self, tensors: &[Tensor]) -> Vec<bool> {
        let end = |i: usize| self.offsets[i].saturating_add(tensors[i].size);
        let mut order: Vec<usize> = (0..tensors.len())
            .filter(|&i| tensors[i].size > 0)
            .collect();
        order.sort_by_key(|&i| (self.offsets[i], i));
        // Before position k: the two largest ends among order[..k], with their tensors.
        type Best = Option<(u64, usize)>;
        let mut prefix: Vec<(Best, Best)> = Vec::with_capacity(order.len() + 1);
        let (mut first, mut second): (Best, Best) = (None, None);
        for &i in &order {
            prefix.push((first, second));
            let candidate = Some((end(i), i));
            if candidate > first {
                second = first;
                first = candidate;
            } else if candidate > second {
                second = candidate;
            }
        }
        let mut shared = vec![false; tensors.len()];
        for (k, &i) in order.iter().enumerate() {
            let partner = self.partner[i];
            let start = self.offsets[i];
            let (a, b) = prefix[k];
            let before = if a.map(|(_, j)| j) == partner && partner.is_some() {
                b
            } else {
                a
            };
            let overlaps_before = before.is_some_and(|(e, _)| e > start);
            let overlaps_after = order[k + 1..]
                .iter()
                .filter(|&&j| Some(j) != partner)
                .take(1)
                .any(|&j| self.offsets[j] < end(i));
            shared[i] = overlaps_before || overlaps_after;
        }
        shared
    }
}
