//! The boundary catalogue: deterministic scenarios at the edges of what the vocabulary's numbers
//! and lists hold, judged before any random scenario of a property and written into the fuzz
//! corpus, so a region the random generators reach rarely is reached on every run.
//!
//! - **options**, which every other capability reads its options through: every option set at
//!   every level to each of its interesting values and to the numbers around 2^8, 2^16, 2^31,
//!   2^32, 2^53, 2^63 and 2^64 (each minus one, itself, plus one), and the three list options
//!   at the lengths 0, 1, 8, 9, 64 and 1,024;
//! - **transfer**: input sizes around every width, beside a small input they may fuse with and
//!   between two that fuse, fifty scenarios in a row that fuse (a fault that strikes once every
//!   N calls, N up to 50, is met whatever the seed), and fused totals past 64 MiB, 1 GiB and
//!   4 GiB;
//! - **memory**: tensor sizes around every width and in every residue class modulo 32, a listed
//!   input of every residue, and plans whose offsets pass 4 GiB;
//! - **session**: feature, I/O and refresh sizes around every width under each pool policy, two
//!   graphs whose pooled sizes add up past 2^32 and 2^64, the largest graph id, and the
//!   execution count at the script cap and one past it;
//! - **weights**: `ASCEND_WORK_PATH` and `ge.externalWeightDir` combined (unset, empty, the
//!   sandbox, equal, nested either way, apart), in modes 1 and 2, with and without an unload; a
//!   weight of every length modulo 512 before another in the combined file; one byte past the
//!   weights cap.

use ge_spec::vocab::memory::{MemoryScenario, Role, Tensor};
use ge_spec::vocab::session::{SessionEvent, SessionScenario, MAX_SCRIPT};
use ge_spec::vocab::transfer::{Placement, TransferInput, TransferScenario};
use ge_spec::vocab::weights::{ConstNode, Fill, NodeType, WeightsScenario, WorkPathEnv};
use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{Level, OptionKey, OptionMaps, Product, RunMode, ShapeKind};

use super::options::interesting_values;

/// The powers of two whose neighbourhoods are tried: the widths integers are read into.
pub const POWERS: [u32; 7] = [8, 16, 31, 32, 53, 63, 64];

/// The list lengths tried: empty, one, around eight (a fixed-size buffer), and long.
pub const LIST_LENGTHS: [usize; 6] = [0, 1, 8, 9, 64, 1024];

/// The decimal numbers around each power of [`POWERS`] (2^k - 1, 2^k, 2^k + 1), ascending.
pub fn numbers() -> Vec<String> {
    let mut out = Vec::new();
    for k in POWERS {
        let p = 1u128 << k;
        for n in [p - 1, p, p + 1] {
            out.push(n.to_string());
        }
    }
    out
}

/// A list value of `key` with `n` entries, each naming index `i` (pairs name input and output
/// `i`): every entry is in range for a graph of `n` inputs and outputs.
fn list_of(key: OptionKey, n: usize) -> String {
    let items = (0..n).map(|i| match key {
        OptionKey::OutputReuseInputMemIndexes => format!("{i},{i}"),
        _ => i.to_string(),
    });
    let sep = if key == OptionKey::OutputReuseInputMemIndexes {
        "|"
    } else {
        ","
    };
    items.collect::<Vec<_>>().join(sep)
}

/// One options scenario setting `key` to `value` at `level` alone, for a static graph of
/// `count` inputs and outputs, run asynchronously on the default product.
fn single(key: OptionKey, level: Level, value: &str, count: u32) -> OptionsScenario {
    let mut options = OptionMaps::default();
    let map = match level {
        Level::Global => &mut options.global,
        Level::Session => &mut options.session,
        Level::Graph => &mut options.graph,
    };
    map.insert(key.as_str().to_owned(), value.to_owned());
    OptionsScenario {
        options,
        graph: GraphFacts {
            inputs: count,
            outputs: count,
            shape: ShapeKind::Static,
        },
        run_mode: RunMode::Async,
        product: Product::default(),
    }
}

/// The options catalogue: for every option and level, each interesting value and each boundary
/// number alone (a number is also tried as the index and as either side of a pair), then each
/// list option at every length of [`LIST_LENGTHS`], once with every entry in range and once
/// on a graph of eight inputs and outputs, where the entries from the ninth on are not.
pub fn options() -> Vec<OptionsScenario> {
    let numbers = numbers();
    let mut out = Vec::new();
    for key in OptionKey::ALL {
        let mut values = interesting_values(key);
        for n in &numbers {
            if key == OptionKey::OutputReuseInputMemIndexes {
                values.push(format!("{n},0"));
                values.push(format!("0,{n}"));
            } else {
                values.push(n.clone());
            }
        }
        for level in Level::ALL {
            for v in &values {
                out.push(single(key, level, v, 2));
            }
        }
    }
    for key in [
        OptionKey::InputReuseMemIndexes,
        OptionKey::OutputReuseMemIndexes,
        OptionKey::OutputReuseInputMemIndexes,
    ] {
        for n in LIST_LENGTHS {
            let value = list_of(key, n);
            let all_in_range = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
            for level in Level::ALL {
                out.push(single(key, level, &value, all_in_range));
                out.push(single(key, level, &value, 8));
            }
        }
    }
    // The options that name inputs and outputs together: the same indexes in both reuse lists,
    // and an input both listed for reuse and aliased (each list is checked on its own).
    let mut both = single(OptionKey::InputReuseMemIndexes, Level::Graph, "0,1", 2);
    both.options.graph.insert(
        OptionKey::OutputReuseMemIndexes.as_str().to_owned(),
        "0,1".to_owned(),
    );
    out.push(both.clone());
    both.options.graph.insert(
        OptionKey::OutputReuseInputMemIndexes.as_str().to_owned(),
        "0,0".to_owned(),
    );
    out.push(both);
    out
}

/// The sizes around every power of [`POWERS`] that fit in a `u64` (2^64 - 1 for 2^64).
pub fn sizes() -> Vec<u64> {
    let mut out = Vec::new();
    for k in POWERS {
        let p = 1u128 << k;
        for n in [p - 1, p, p + 1] {
            if let Ok(n) = u64::try_from(n) {
                out.push(n);
            }
        }
    }
    out
}

/// A transfer scenario of `inputs` (index, size) on the host, with the fusion threshold at
/// `threshold` when given.
fn transfer_of(threshold: Option<u64>, inputs: &[(u32, u64)]) -> TransferScenario {
    let mut options = OptionMaps::default();
    if let Some(t) = threshold {
        options.session.insert(
            OptionKey::InputFusionSize.as_str().to_owned(),
            t.to_string(),
        );
    }
    TransferScenario {
        options,
        run_mode: RunMode::Async,
        product: Product::default(),
        shape: ShapeKind::Static,
        inputs: inputs
            .iter()
            .map(|&(index, size)| TransferInput {
                index,
                size,
                placement: Placement::Host,
            })
            .collect(),
    }
}

/// The transfer catalogue: each size of [`sizes`] alone, beside a one-byte input (under the
/// default threshold and the largest) and between two one-byte inputs that fuse; fifty
/// scenarios in a row that fuse at their threshold's edge; and as many inputs of the largest
/// threshold as take the fused total past 64 MiB, 1 GiB and 4 GiB.
pub fn transfer() -> Vec<TransferScenario> {
    let max = super::transfer::max_threshold();
    let mut out = Vec::new();
    for size in sizes() {
        for threshold in [None, Some(max)] {
            out.push(transfer_of(threshold, &[(0, size)]));
            out.push(transfer_of(threshold, &[(0, size), (1, 1)]));
        }
    }
    // Each size between two inputs that fuse: an input of 4 GiB or more among fusion candidates.
    for size in sizes() {
        out.push(transfer_of(Some(max), &[(0, 1), (1, size), (2, 1)]));
    }
    // A run of 50 scenarios that all fuse, each at its threshold's edge (an input of exactly
    // the threshold fuses, one byte more does not): a planner wrong once every N calls, N up to
    // 50, meets one of them whatever the seed.
    for k in 1..=50u64 {
        let t = k * 1024;
        out.push(transfer_of(Some(t), &[(0, t), (1, 1), (2, t + 1)]));
    }
    for total in [64u64 << 20, 1 << 30, 4 << 30] {
        let n = u32::try_from(total / max + 1).unwrap_or(u32::MAX);
        let inputs: Vec<(u32, u64)> = (0..n).map(|i| (i, max)).collect();
        out.push(transfer_of(Some(max), &inputs));
    }
    out
}

/// A tensor of `size` bytes living over `first..=last`.
fn tensor(name: &str, size: u64, (first, last): (u32, u32), role: Role) -> Tensor {
    Tensor {
        name: name.to_owned(),
        size,
        first,
        last,
        role,
    }
}

/// A graph of one input and one output (32 bytes each, steps 0 and 2) around `middle`.
fn memory_of(middle: Vec<Tensor>, options: OptionMaps) -> MemoryScenario {
    let mut tensors = vec![
        tensor("in", 32, (0, 1), Role::Input { index: 0 }),
        tensor("out", 32, (2, 2), Role::Output { index: 0 }),
    ];
    tensors.extend(middle);
    MemoryScenario {
        options,
        inputs: 1,
        outputs: 1,
        tensors,
        run: None,
    }
}

/// The memory catalogue: an intermediate tensor of each size of [`sizes`] whose aligned size
/// fits, and of each residue modulo 32 (alone and beside a second one living at the same time);
/// the graph's one input listed for reuse at each residue; three 3 GiB tensors alive together,
/// so that the third lies past 4 GiB; the input aliased to the output while listed for reuse;
/// three pairs at run time, one of which at a time (or none) at two addresses.
pub fn memory() -> Vec<MemoryScenario> {
    let mut out = Vec::new();
    let mid = |name: &str, size: u64| tensor(name, size, (1, 2), Role::Intermediate);
    for size in sizes() {
        // Two of them must fit in the arena too (MEM-001 refuses a sum past 2^64).
        if ge_spec::vocab::memory::aligned(size).is_some_and(|a| a <= u64::MAX / 4) {
            out.push(memory_of(vec![mid("t", size)], OptionMaps::default()));
        }
    }
    for r in 0..32u64 {
        out.push(memory_of(vec![mid("t", 64 + r)], OptionMaps::default()));
        out.push(memory_of(
            vec![mid("t", 64 + r), mid("u", 32 + r)],
            OptionMaps::default(),
        ));
        let mut listed = memory_of(Vec::new(), OptionMaps::default());
        listed.tensors[0].size = 32 + r;
        listed.options.graph.insert(
            OptionKey::InputReuseMemIndexes.as_str().to_owned(),
            "0".to_owned(),
        );
        listed
            .tensors
            .push(tensor("t", 32, (1, 2), Role::Intermediate));
        out.push(listed);
    }
    out.push(memory_of(
        vec![mid("t", 3 << 30), mid("u", 3 << 30), mid("v", 3 << 30)],
        OptionMaps::default(),
    ));
    // The input aliased to the output, then listed for reuse as well, the output listed, and
    // both: the alias holds whatever the lists say.
    let (irm, orm) = (
        OptionKey::InputReuseMemIndexes,
        OptionKey::OutputReuseMemIndexes,
    );
    for lists in [&[][..], &[irm], &[orm], &[irm, orm]] {
        let mut options = OptionMaps::default();
        options.graph.insert(
            OptionKey::OutputReuseInputMemIndexes.as_str().to_owned(),
            "0,0".to_owned(),
        );
        for key in lists {
            options
                .graph
                .insert(key.as_str().to_owned(), "0".to_owned());
        }
        out.push(memory_of(Vec::new(), options));
    }
    // Three pairs at run time, each alone at two addresses, and none: a check of the run that
    // looks at some of the pairs only (the first, the last, a list cut short) meets a pair it
    // misses.
    for odd in [None, Some(0), Some(1), Some(2)] {
        out.push(pairs_at_run(3, odd));
    }
    out
}

/// `n` inputs each paired with the output of its index (`0,0|1,1|...`), with run addresses
/// that agree for every pair but `odd`'s, whose output sits 4 KiB further on.
fn pairs_at_run(n: u32, odd: Option<u32>) -> MemoryScenario {
    let mut tensors = Vec::new();
    for i in 0..n {
        tensors.push(tensor(
            &format!("in{i}"),
            32,
            (0, 1),
            Role::Input { index: i },
        ));
        tensors.push(tensor(
            &format!("out{i}"),
            32,
            (2, 2),
            Role::Output { index: i },
        ));
    }
    let list: Vec<String> = (0..n).map(|i| format!("{i},{i}")).collect();
    let mut options = OptionMaps::default();
    options.graph.insert(
        OptionKey::OutputReuseInputMemIndexes.as_str().to_owned(),
        list.join("|"),
    );
    let address = |i: u32| 4096 * u64::from(i + 1);
    MemoryScenario {
        options,
        inputs: n,
        outputs: n,
        tensors,
        run: Some(ge_spec::vocab::memory::RunAddresses {
            inputs: (0..n).map(address).collect(),
            outputs: (0..n)
                .map(|i| address(i) + if Some(i) == odd { 4096 * 16 } else { 0 })
                .collect(),
        }),
    }
}

/// A session of `events` under the session-level options `session`.
fn session_of(session: &[(&str, &str)], events: Vec<SessionEvent>) -> SessionScenario {
    let mut options = OptionMaps::default();
    for (k, v) in session {
        options.session.insert((*k).to_owned(), (*v).to_owned());
    }
    SessionScenario {
        options,
        events,
        ge_use_static_memory: None,
    }
}

fn load(graph: u32, feature_bytes: u64, io_bytes: u64) -> SessionEvent {
    SessionEvent::Load {
        graph,
        shape: ShapeKind::Static,
        feature_bytes,
        io_bytes,
        options: None,
    }
}

/// The session catalogue. For each size of [`sizes`], under no pool, the static pool (`2`)
/// and the static and dynamic pools (`4`), with zero-copy reuse off and on: a graph needing
/// that much feature memory and that much I/O memory, executed twice, its base refreshed with
/// a buffer of that size and one byte less (refreshable), then unloaded. Then two pooled graphs
/// of 2^31 + 1 and 2^63 + 1 bytes each, whose pool sizes add up past 2^32 and 2^64; the largest
/// graph id; and the execution count at [`MAX_SCRIPT`] and one past it.
pub fn session() -> Vec<SessionScenario> {
    let mut out = Vec::new();
    let policies: [&[(&str, &str)]; 3] = [
        &[],
        &[("ge.exec.staticMemoryPolicy", "2")],
        &[("ge.exec.staticMemoryPolicy", "4")],
    ];
    for size in sizes() {
        for policy in policies {
            for rzc in ["0", "1"] {
                let mut options = policy.to_vec();
                options.push(("ge.exec.reuseZeroCopyMemory", rzc));
                options.push(("ge.featureBaseRefreshable", "1"));
                out.push(session_of(
                    &options,
                    vec![
                        load(1, size, size),
                        SessionEvent::Execute { graph: 1, times: 2 },
                        SessionEvent::Refresh {
                            graph: 1,
                            bytes: size,
                        },
                        SessionEvent::Refresh {
                            graph: 1,
                            bytes: size.saturating_sub(1),
                        },
                        SessionEvent::Unload { graph: 1 },
                    ],
                ));
            }
        }
    }
    for half in [(1u64 << 31) + 1, (1u64 << 63) + 1] {
        for policy in &policies[1..] {
            out.push(session_of(
                policy,
                vec![
                    load(1, half, 0),
                    load(2, half, 0),
                    SessionEvent::Execute { graph: 2, times: 1 },
                    SessionEvent::Unload { graph: 1 },
                ],
            ));
        }
    }
    out.push(session_of(
        &[],
        vec![
            load(u32::MAX, 64, 0),
            SessionEvent::Execute {
                graph: u32::MAX,
                times: 1,
            },
            SessionEvent::Unload { graph: u32::MAX },
        ],
    ));
    for times in [MAX_SCRIPT, MAX_SCRIPT + 1] {
        out.push(session_of(
            &[],
            vec![
                load(1, 64, 0),
                SessionEvent::Execute {
                    graph: 1,
                    times: u32::try_from(times).unwrap_or(u32::MAX),
                },
            ],
        ));
    }
    out
}

/// A constant named `name` of `len` bytes of `byte`.
fn filled(name: &str, byte: u8, len: u64) -> ConstNode {
    ConstNode {
        name: name.to_owned(),
        node_type: NodeType::Const,
        hex: None,
        fill: Some(Fill { byte, len }),
    }
}

/// A weights scenario of `constants` in mode `mode` (set at `level`), flushed to `dir` when
/// given (at the same level), with `ASCEND_WORK_PATH` as `env`.
fn weights_of(
    mode: &str,
    level: Level,
    dir: Option<&str>,
    env: WorkPathEnv,
    constants: Vec<ConstNode>,
    unload: bool,
) -> WeightsScenario {
    let mut options = OptionMaps::default();
    let map = match level {
        Level::Global => &mut options.global,
        _ => &mut options.session,
    };
    map.insert(
        OptionKey::ExternalWeight.as_str().to_owned(),
        mode.to_owned(),
    );
    if let Some(dir) = dir {
        map.insert(
            OptionKey::ExternalWeightDir.as_str().to_owned(),
            dir.to_owned(),
        );
    }
    WeightsScenario {
        options,
        root_graph: "net".to_owned(),
        constants,
        ascend_work_path: env,
        pid: 7,
        session_id: 1,
        work_dir: String::new(),
        setup: Vec::new(),
        unload,
    }
}

/// The weights catalogue. Paths: every `ASCEND_WORK_PATH` state (unset, empty, the sandbox,
/// `w`, `w/deep`) against every `ge.externalWeightDir` (unset, the sandbox, equal to `w`,
/// nested in it, holding it, apart), in modes 1 and 2 at the session and global levels, each
/// with and without an unload. Lengths: in mode 2, a weight of every length modulo 512 (and
/// one past it) before a one-byte weight, whose offset depends on how the first is padded; in
/// mode 1 the lengths around 32 and 512. The cap: weights totalling one byte more than
/// [`ge_spec::vocab::weights::MAX_WEIGHT_BYTES`].
pub fn weights() -> Vec<WeightsScenario> {
    let mut out = Vec::new();
    let two = || vec![filled("c0", 0x5a, 40), filled("c1", 0xa5, 3)];
    let envs = [
        WorkPathEnv::Unset,
        WorkPathEnv::Empty,
        WorkPathEnv::Set { path: ".".into() },
        WorkPathEnv::Set { path: "w".into() },
        WorkPathEnv::Set {
            path: "w/deep".into(),
        },
    ];
    let dirs = [None, Some("."), Some("w"), Some("w/deep"), Some("v")];
    for env in &envs {
        for dir in dirs {
            for (mode, level) in [("1", Level::Session), ("2", Level::Global)] {
                for unload in [false, true] {
                    out.push(weights_of(mode, level, dir, env.clone(), two(), unload));
                }
            }
        }
    }
    for r in 0..=512u64 {
        out.push(weights_of(
            "2",
            Level::Session,
            None,
            WorkPathEnv::Unset,
            vec![filled("c0", 0x11, r), filled("c1", 0x22, 1)],
            false,
        ));
    }
    for len in [1, 31, 32, 33, 511, 512, 513] {
        out.push(weights_of(
            "1",
            Level::Session,
            None,
            WorkPathEnv::Unset,
            vec![filled("c0", 0x33, len)],
            true,
        ));
    }
    // One byte past the cap, the large weight last so that the total is refused before it is
    // decoded; the cap itself would hold 128 MiB in the two sandboxes of every trial, more
    // than the rest of a run.
    let cap = ge_spec::vocab::weights::MAX_WEIGHT_BYTES;
    out.push(weights_of(
        "1",
        Level::Session,
        None,
        WorkPathEnv::Unset,
        vec![filled("c0", 0x55, 1), filled("c1", 0x44, cap)],
        false,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_and_memory_reach_past_four_gib() {
        let t = transfer();
        assert!(t
            .iter()
            .any(|s| s.inputs.iter().map(|i| i.size).sum::<u64>() > 4 << 30));
        assert!(t
            .iter()
            .any(|s| s.inputs.iter().any(|i| i.size == u64::MAX)));
        let m = memory();
        for s in &m {
            assert!(s.validate().is_empty(), "{s:?}");
        }
        for r in 0..32 {
            assert!(m.iter().any(|s| s.tensors.iter().any(|t| t.size % 32 == r)));
        }
    }

    #[test]
    fn session_sizes_straddle_every_width_and_the_script_cap() {
        let all = session();
        let feature = |s: &SessionScenario| {
            s.events
                .iter()
                .filter_map(|e| match e {
                    SessionEvent::Load { feature_bytes, .. } => Some(*feature_bytes),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        for n in [u64::from(u32::MAX), 1 << 32, (1 << 32) + 1, u64::MAX] {
            assert!(all.iter().any(|s| feature(s).contains(&n)), "{n}");
        }
        assert!(all
            .iter()
            .any(|s| feature(s).iter().map(|&b| u128::from(b)).sum::<u128>() > 1 << 64));
        for n in [MAX_SCRIPT, MAX_SCRIPT + 1] {
            assert!(all.iter().any(|s| s.executions() == n), "{n}");
        }
    }

    #[test]
    fn weights_reach_every_residue_modulo_512_and_every_path_combination() {
        let w = weights();
        for r in 0..512 {
            assert!(
                w.iter().any(|s| s.constants.len() == 2
                    && s.constants[0]
                        .fill
                        .as_ref()
                        .is_some_and(|f| f.len % 512 == r)),
                "{r}"
            );
        }
        let dir = |s: &WeightsScenario| {
            [&s.options.session, &s.options.global]
                .into_iter()
                .find_map(|m| m.get(OptionKey::ExternalWeightDir.as_str()).cloned())
        };
        // The combination random scenarios reached in a few seeds only: the flush directory
        // equal to ASCEND_WORK_PATH, then an unload; and one nested in it.
        for (flush, env) in [("w", "w"), ("w/deep", "w"), ("w", "w/deep")] {
            assert!(w.iter().any(|s| s.unload
                && dir(s).as_deref() == Some(flush)
                && s.ascend_work_path == WorkPathEnv::Set { path: env.into() }));
        }
        let cap = ge_spec::vocab::weights::MAX_WEIGHT_BYTES;
        let total = |s: &WeightsScenario| {
            s.constants
                .iter()
                .map(|c| c.fill.as_ref().map_or(0, |f| f.len))
                .sum::<u64>()
        };
        assert!(w.iter().any(|s| total(s) == cap + 1));
    }

    #[test]
    fn numbers_straddle_every_width() {
        let n = numbers();
        assert_eq!(n.len(), 3 * POWERS.len());
        for s in [
            "255",
            "256",
            "257",
            "2147483648",
            "4294967295",
            "4294967296",
            "4294967297",
        ] {
            assert!(n.iter().any(|x| x == s), "{s}");
        }
        assert_eq!(n.last().map(String::as_str), Some("18446744073709551617"));
    }

    #[test]
    fn every_option_is_tried_at_every_level_and_lists_at_every_length() {
        let all = options();
        for key in OptionKey::ALL {
            for level in Level::ALL {
                assert!(
                    all.iter().any(|s| s
                        .options
                        .at(level)
                        .get(key.as_str())
                        .is_some_and(|v| v == "4294967296" || v == "4294967296,0")),
                    "{key} at {level}"
                );
            }
        }
        for n in LIST_LENGTHS {
            let value = list_of(OptionKey::InputReuseMemIndexes, n);
            let items = if value.is_empty() {
                0
            } else {
                value.split(',').count()
            };
            assert_eq!(items, n);
            assert!(all
                .iter()
                .any(|s| s.options.graph.get("ge.exec.inputReuseMemIndexes") == Some(&value)));
        }
        assert_eq!(list_of(OptionKey::OutputReuseInputMemIndexes, 2), "0,0|1,1");
    }
}
