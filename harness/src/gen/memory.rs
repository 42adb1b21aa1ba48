//! Proptest strategies that generate memory scenarios (used by property tests and the certify runner).
//!
//! [`scenario`] draws valid graphs with every memory option in play (including out-of-range
//! indexes, misaligned reused I/O and run-time address mismatches, so error paths are drawn
//! too); [`workload`] draws plain intermediate tensors for judging plan quality.

use proptest::collection::vec;
use proptest::prelude::*;

use ge_spec::vocab::memory::{MemoryScenario, Role, RunAddresses, Tensor};
use ge_spec::OptionMaps;

/// The widest tensor size drawn, in bits: a scenario holds at most 23 tensors, each padded to
/// at most 512 bytes more, so their total stays far below 2^64 and no arena total overflows.
pub const SIZE_BITS: u32 = 58;

/// A tensor size: mostly multiples of 32 bytes (weight 6 of 11), sometimes not (2), sometimes
/// 0 (1), else of any width up to [`SIZE_BITS`] bits (2), so plans pass 4 GiB and every residue
/// modulo 32 occurs at every width.
pub fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => (1u64..=16).prop_map(|k| k * 32),
        2 => 1u64..=600,
        1 => Just(0u64),
        2 => super::log_uniform(SIZE_BITS),
    ]
}

/// A lifetime `(first, last)` within a short graph of about a dozen steps.
pub fn lifetime() -> impl Strategy<Value = (u32, u32)> {
    (0u32..10, 0u32..5).prop_map(|(first, len)| (first, first + len))
}

/// Raw ingredients of the options, turned into strings by [`scenario`].
#[derive(Debug, Clone)]
struct Knobs {
    disable: Option<bool>,
    input_mask: u8,
    output_mask: u8,
    pairs: Vec<(u32, u32)>,
    clean: Option<bool>,
    run: Option<Option<usize>>,
    /// An index of any width added to the input list (one scenario in ten).
    far_index: Option<u64>,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        proptest::option::of(any::<bool>()),
        any::<u8>(),
        any::<u8>(),
        vec((0u32..5, 0u32..5), 0..3),
        proptest::option::of(any::<bool>()),
        proptest::option::of(proptest::option::of(0usize..3)),
        proptest::option::weighted(0.1, super::log_uniform(64)),
    )
        .prop_map(
            |(disable, input_mask, output_mask, pairs, clean, run, far_index)| Knobs {
                disable,
                input_mask,
                output_mask,
                pairs,
                clean,
                run,
                far_index,
            },
        )
}

/// A comma-separated list of the indexes set in `mask`, among `0..=count` (so one index may be
/// out of range, which the option layer ignores with a warning).
fn index_list(mask: u8, count: u32) -> Option<String> {
    let items: Vec<String> = (0..=count.min(7))
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| i.to_string())
        .collect();
    (!items.is_empty()).then(|| items.join(","))
}

/// A valid memory scenario: up to 4 inputs and 4 outputs, up to 10 intermediates, up to 5 memset
/// outputs of up to 3 operators, every memory option sometimes set, and sometimes run addresses.
pub fn scenario() -> impl Strategy<Value = MemoryScenario> {
    (
        vec((size(), lifetime()), 0..4),
        vec((size(), lifetime()), 0..4),
        vec((size(), lifetime()), 0..10),
        vec((size(), lifetime(), 0u8..3), 0..5),
        knobs(),
    )
        .prop_map(|(ins, outs, mids, memsets, knobs)| {
            let (inputs, outputs) = (ins.len() as u32, outs.len() as u32);
            let tensors = tensors(&ins, &outs, &mids, &memsets);
            let (options, pairs) = options(&knobs, inputs, outputs);
            let run = knobs
                .run
                .map(|mismatch| run_addresses(inputs, outputs, &pairs, mismatch));
            MemoryScenario {
                options,
                inputs,
                outputs,
                tensors,
                run,
            }
        })
}

/// A drawn size and lifetime.
type Drawn = (u64, (u32, u32));

/// The tensors of drawn inputs, outputs, intermediates and memset outputs (with their
/// operator's number), named `in0`, `out0`, `t0` and `m0` onwards.
fn tensors(
    ins: &[Drawn],
    outs: &[Drawn],
    mids: &[Drawn],
    memsets: &[(u64, (u32, u32), u8)],
) -> Vec<Tensor> {
    let tensor = |name: String, &(size, (first, last)): &Drawn, role: Role| Tensor {
        name,
        size,
        first,
        last,
        role,
    };
    let mut tensors = Vec::new();
    for (i, drawn) in ins.iter().enumerate() {
        tensors.push(tensor(
            format!("in{i}"),
            drawn,
            Role::Input { index: i as u32 },
        ));
    }
    for (j, drawn) in outs.iter().enumerate() {
        tensors.push(tensor(
            format!("out{j}"),
            drawn,
            Role::Output { index: j as u32 },
        ));
    }
    for (k, drawn) in mids.iter().enumerate() {
        tensors.push(tensor(format!("t{k}"), drawn, Role::Intermediate));
    }
    for (k, (size, life, op)) in memsets.iter().enumerate() {
        let role = Role::Memset {
            op: format!("memset{op}"),
        };
        tensors.push(tensor(format!("m{k}"), &(*size, *life), role));
    }
    tensors
}

/// The options `knobs` set for a graph of `inputs` and `outputs`, and the reuse pairs among
/// them (within range, each input and output at most once).
fn options(knobs: &Knobs, inputs: u32, outputs: u32) -> (OptionMaps, Vec<(u32, u32)>) {
    let mut options = OptionMaps::default();
    let set = |maps: &mut OptionMaps, session: bool, key: &str, value: String| {
        let map = if session {
            &mut maps.session
        } else {
            &mut maps.graph
        };
        map.insert(key.to_owned(), value);
    };
    if let Some(d) = knobs.disable {
        set(
            &mut options,
            false,
            "ge.exec.disableReuseMemory",
            u8::from(d).to_string(),
        );
    }
    // An index of any width is out of range (ignored with a warning) unless it is small.
    let far = knobs.far_index.map(|i| i.to_string());
    let list = match (index_list(knobs.input_mask, inputs), far) {
        (Some(list), Some(far)) => Some(format!("{list},{far}")),
        (list, far) => list.or(far),
    };
    if let Some(list) = list {
        set(&mut options, false, "ge.exec.inputReuseMemIndexes", list);
    }
    if let Some(list) = index_list(knobs.output_mask, outputs) {
        set(&mut options, false, "ge.exec.outputReuseMemIndexes", list);
    }
    // Pairs within range, each input and output at most once (other pairs are option
    // errors, drawn by the options generator, not here).
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for &(i, o) in &knobs.pairs {
        if i < inputs && o < outputs && !pairs.iter().any(|&(a, b)| a == i || b == o) {
            pairs.push((i, o));
        }
    }
    if !pairs.is_empty() {
        let text: Vec<String> = pairs.iter().map(|(i, o)| format!("{i},{o}")).collect();
        set(
            &mut options,
            false,
            "ge.exec.outputReuseInputMemIndexes",
            text.join("|"),
        );
    }
    if let Some(c) = knobs.clean {
        set(
            &mut options,
            true,
            "ge.exec.atomicCleanPolicy",
            u8::from(c).to_string(),
        );
    }
    (options, pairs)
}

/// Run addresses for the graph's inputs and outputs, each paired output at its input's
/// address, except the `mismatch`-th pair, moved by 64 bytes.
fn run_addresses(
    inputs: u32,
    outputs: u32,
    pairs: &[(u32, u32)],
    mismatch: Option<usize>,
) -> RunAddresses {
    let mut run = RunAddresses {
        inputs: (0..inputs).map(|i| 0x1000 * (u64::from(i) + 1)).collect(),
        outputs: (0..outputs)
            .map(|j| 0x10_0000 * (u64::from(j) + 1))
            .collect(),
    };
    for (n, &(i, o)) in pairs.iter().enumerate() {
        run.outputs[o as usize] = run.inputs[i as usize];
        if mismatch == Some(n) {
            run.outputs[o as usize] += 0x40;
        }
    }
    run
}

/// Up to `max` intermediate tensors with random sizes (multiples of 32 bytes) and short
/// lifetimes over a graph of about `max / 4` steps, no options set.
pub fn workload(max: usize) -> impl Strategy<Value = MemoryScenario> {
    let steps = (max as u32 / 4).max(1);
    vec((1u64..=4096, 0..steps, 0u32..16), 1..=max.max(1)).prop_map(|rows| MemoryScenario {
        tensors: rows
            .into_iter()
            .enumerate()
            .map(|(k, (units, first, len))| Tensor {
                name: format!("t{k}"),
                size: units * 32,
                first,
                last: first + len,
                role: Role::Intermediate,
            })
            .collect(),
        ..MemoryScenario::default()
    })
}
