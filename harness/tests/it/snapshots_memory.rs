//! Snapshots of the reference's memory plans for a few readable scenarios, so a change in the
//! planner shows up in review as a diff of offsets, groups and peaks.

use crate::common;

use ge_reference::memory::observe;
use ge_spec::vocab::memory::{MemoryScenario, Role, Tensor};
use ge_spec::Profile;

fn tensor(name: &str, size: u64, first: u32, last: u32, role: Role) -> Tensor {
    Tensor {
        name: name.into(),
        size,
        first,
        last,
        role,
    }
}

fn mid(name: &str, size: u64, first: u32, last: u32) -> Tensor {
    tensor(name, size, first, last, Role::Intermediate)
}

fn chain(options: &[(&str, &str, &str)]) -> MemoryScenario {
    let mut s = MemoryScenario {
        inputs: 1,
        outputs: 1,
        tensors: vec![
            tensor("x", 256, 0, 0, Role::Input { index: 0 }),
            mid("a", 512, 0, 1),
            mid("b", 256, 1, 2),
            mid("c", 512, 2, 3),
            tensor("y", 256, 3, 4, Role::Output { index: 0 }),
        ],
        ..MemoryScenario::default()
    };
    for &(level, key, value) in options {
        let map = match level {
            "session" => &mut s.options.session,
            _ => &mut s.options.graph,
        };
        map.insert(key.into(), value.into());
    }
    s
}

#[test]
fn chain_with_reuse() {
    common::with_snapshots(|| {
        insta::assert_json_snapshot!(observe(Profile::Documented, &chain(&[])))
    });
}

#[test]
fn chain_without_reuse() {
    let s = chain(&[("graph", "ge.exec.disableReuseMemory", "1")]);
    common::with_snapshots(|| insta::assert_json_snapshot!(observe(Profile::Documented, &s)));
}

#[test]
fn chain_with_io_reuse() {
    let s = chain(&[
        ("graph", "ge.exec.inputReuseMemIndexes", "0"),
        ("graph", "ge.exec.outputReuseMemIndexes", "0"),
    ]);
    common::with_snapshots(|| insta::assert_json_snapshot!(observe(Profile::Documented, &s)));
}

#[test]
fn chain_with_alias() {
    let s = chain(&[("graph", "ge.exec.outputReuseInputMemIndexes", "0,0")]);
    common::with_snapshots(|| insta::assert_json_snapshot!(observe(Profile::Documented, &s)));
}

fn memsets(policy: &str) -> MemoryScenario {
    let mut s = MemoryScenario {
        tensors: vec![
            tensor(
                "m0",
                128,
                0,
                0,
                Role::Memset {
                    op: "clear_a".into(),
                },
            ),
            tensor(
                "m1",
                64,
                0,
                1,
                Role::Memset {
                    op: "clear_a".into(),
                },
            ),
            mid("t", 192, 1, 2),
            tensor(
                "m2",
                128,
                3,
                3,
                Role::Memset {
                    op: "clear_b".into(),
                },
            ),
        ],
        ..MemoryScenario::default()
    };
    s.options
        .session
        .insert("ge.exec.atomicCleanPolicy".into(), policy.into());
    s
}

#[test]
fn memset_collective() {
    common::with_snapshots(|| {
        insta::assert_json_snapshot!(observe(Profile::Documented, &memsets("0")))
    });
}

#[test]
fn memset_separate() {
    common::with_snapshots(|| {
        insta::assert_json_snapshot!(observe(Profile::Documented, &memsets("1")))
    });
}
