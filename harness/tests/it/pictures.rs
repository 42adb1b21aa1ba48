//! The pictures of `ge_conformance::draw`: snapshots of the SVG text for a few fixed plans, the
//! overlap of a faulty plan highlighted and its clause named, hostile names escaped, a huge plan
//! bounded, options refused; and the README's picture kept in step with the drawing code.

use crate::common;

use ge_conformance::draw::{self, DrawError, Marks, Style};
use ge_conformance::judging::Judging;
use ge_conformance::oracle;
use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario, Role, Tensor};
use ge_spec::vocab::session::{SessionEvent, SessionScenario};
use ge_spec::vocab::transfer::{TransferInput, TransferScenario};
use ge_spec::{Backend, Observation, Profile, Scenario};

fn tensor(name: &str, size: u64, first: u32, last: u32, role: Role) -> Tensor {
    Tensor {
        name: name.into(),
        size,
        first,
        last,
        role,
    }
}

/// The source text's example of `ge.exec.outputReuseInputMemIndexes`: Data > TensorMove >
/// InplaceOp > NetOutput, the output declared to share the input's address ("0,0").
fn inplace_chain() -> Scenario {
    let mut s = MemoryScenario {
        inputs: 1,
        outputs: 1,
        tensors: vec![
            tensor("data", 4096, 0, 1, Role::Input { index: 0 }),
            tensor("tensor_move", 4096, 1, 2, Role::Intermediate),
            tensor("inplace_op", 4096, 2, 3, Role::Intermediate),
            tensor("workspace", 1024, 2, 2, Role::Intermediate),
            tensor("net_output", 4096, 3, 4, Role::Output { index: 0 }),
        ],
        ..MemoryScenario::default()
    };
    s.options
        .graph
        .insert("ge.exec.outputReuseInputMemIndexes".into(), "0,0".into());
    Scenario::Memory(s)
}

fn memsets() -> Scenario {
    Scenario::Memory(MemoryScenario {
        tensors: vec![
            tensor("m0", 128, 0, 2, Role::Memset { op: "clear".into() }),
            tensor("m1", 96, 1, 3, Role::Memset { op: "clear".into() }),
            tensor("a", 512, 0, 1, Role::Intermediate),
            tensor("b", 512, 2, 3, Role::Intermediate),
        ],
        ..MemoryScenario::default()
    })
}

fn answer(scenario: &Scenario) -> Observation {
    let mut o = Reference::new(Profile::Documented)
        .answer(scenario, std::path::Path::new("."))
        .expect("the reference answers");
    o.canonicalize();
    o
}

fn style() -> Style {
    Style::default()
}

/// Every tensor at offset 0: a plan that shares the bytes of tensors in use at once.
fn overlapping(scenario: &Scenario) -> Observation {
    let Observation::Memory(mut o) = answer(scenario) else {
        unreachable!("a memory scenario")
    };
    for off in o.offsets.values_mut() {
        *off = 0;
    }
    o.aliases.clear();
    Observation::Memory(o)
}

fn violations_marks(scenario: &Scenario, obs: &Observation) -> Marks {
    let found = oracle::judge(&Judging::DEFAULT, scenario, obs);
    let mut clauses: Vec<String> = found.iter().map(|v| v.clause.clone()).collect();
    clauses.sort();
    clauses.dedup();
    let messages: Vec<String> = found.iter().map(ToString::to_string).collect();
    Marks::from_problems(clauses, &messages)
}

#[test]
fn memory_inplace_chain() {
    let s = inplace_chain();
    let svg = draw::picture(&s, &answer(&s), &Marks::default(), style(), "inplace chain")
        .expect("a memory plan draws");
    common::with_snapshots(|| insta::assert_snapshot!("memory_inplace_chain", svg));
}

#[test]
fn memory_memsets_with_grid() {
    let s = memsets();
    let svg = draw::picture(
        &s,
        &answer(&s),
        &Marks::default(),
        Style {
            grid: true,
            ..style()
        },
        "memsets",
    )
    .expect("a memory plan draws");
    assert!(svg.contains("class=\"grid\""), "the grid is drawn");
    assert!(
        svg.contains("class=\"cleanup\""),
        "the cleanup group is drawn"
    );
    common::with_snapshots(|| insta::assert_snapshot!("memory_memsets_with_grid", svg));
}

/// Three tensors, each in use with the next over two steps.
fn overlapping_lifetimes() -> Scenario {
    Scenario::Memory(MemoryScenario {
        tensors: vec![
            tensor("a", 512, 0, 2, Role::Intermediate),
            tensor("b", 512, 1, 3, Role::Intermediate),
            tensor("c", 256, 3, 5, Role::Intermediate),
        ],
        ..MemoryScenario::default()
    })
}

#[test]
fn memory_overlap_beside_the_reference() {
    let s = overlapping_lifetimes();
    let bad = overlapping(&s);
    let marks = violations_marks(&s, &bad);
    assert!(
        marks.clauses.iter().any(|c| c == "DRM-011"),
        "{:?}",
        marks.clauses
    );
    let svg = draw::side_by_side(
        &s,
        ("backend overlapping", &bad),
        ("reference", &answer(&s)),
        &marks,
        style(),
        "every tensor at offset 0",
    )
    .expect("draws");
    assert!(
        svg.contains("class=\"overlap\""),
        "shared bytes are hatched"
    );
    assert!(svg.contains("`a` and `b` share [0, 512) at steps 1..=2"));
    assert!(
        svg.contains("class=\"intermediate violating\""),
        "the named tensors are outlined"
    );
    assert!(svg.contains("breaks DRM-011"), "the clause is named");
    common::with_snapshots(|| insta::assert_snapshot!("memory_overlap_beside_the_reference", svg));
}

#[test]
fn a_right_plan_has_nothing_highlighted() {
    // The checks above fail on a right plan: nothing hatched, nothing outlined, no clause.
    let s = overlapping_lifetimes();
    let good = answer(&s);
    let marks = violations_marks(&s, &good);
    assert!(marks.is_empty(), "{marks:?}");
    let svg = draw::picture(&s, &good, &marks, style(), "right").expect("draws");
    assert!(!svg.contains("class=\"overlap\""));
    assert!(!svg.contains("class=\"intermediate violating\""));
    assert!(!svg.contains("breaks "));
}

fn session() -> Scenario {
    let mut s = SessionScenario {
        events: vec![
            SessionEvent::Load {
                graph: 1,
                shape: Default::default(),
                feature_bytes: 4096,
                io_bytes: 1024,
                options: None,
            },
            SessionEvent::Execute { graph: 1, times: 3 },
            SessionEvent::Refresh {
                graph: 1,
                bytes: 8192,
            },
            SessionEvent::Load {
                graph: 2,
                shape: Default::default(),
                feature_bytes: 2048,
                io_bytes: 0,
                options: None,
            },
            SessionEvent::Unload { graph: 1 },
        ],
        ..SessionScenario::default()
    };
    s.options
        .graph
        .insert("ge.featureBaseRefreshable".into(), "1".into());
    Scenario::Session(s)
}

#[test]
fn session_two_graphs() {
    let s = session();
    let svg = draw::picture(&s, &answer(&s), &Marks::default(), style(), "two graphs")
        .expect("a session trace draws");
    common::with_snapshots(|| insta::assert_snapshot!("session_two_graphs", svg));
}

#[test]
fn session_marks_the_entries_named() {
    let s = session();
    let Observation::Session(mut o) = answer(&s) else {
        unreachable!("a session scenario")
    };
    // Drop the last free: a block is still held at the end.
    o.trace.pop();
    let bad = Observation::Session(o);
    let marks = violations_marks(&s, &bad);
    assert!(!marks.clauses.is_empty());
    let svg = draw::side_by_side(
        &s,
        ("backend", &bad),
        ("reference", &answer(&s)),
        &marks,
        style(),
        "a block never freed",
    )
    .expect("draws");
    assert!(svg.contains("still held at the end"));
    assert!(svg.contains("violating"));
}

#[test]
fn transfer_five_inputs() {
    // The source text's example of input fusion and batch copy: five inputs, four under the
    // threshold.
    let mut s = TransferScenario {
        inputs: [1000, 2000, 3000, 4000, 500_000]
            .iter()
            .enumerate()
            .map(|(i, &size)| TransferInput {
                index: i as u32,
                size,
                placement: Default::default(),
            })
            .collect(),
        ..TransferScenario::default()
    };
    s.options
        .graph
        .insert("ge.inputBatchCpy".into(), "1".into());
    let s = Scenario::Transfer(s);
    let svg = draw::picture(&s, &answer(&s), &Marks::default(), style(), "five inputs")
        .expect("a transfer plan draws");
    assert!(svg.contains("fused: 4 inputs"), "{svg}");
    assert!(svg.contains("class=\"threshold\""));
    common::with_snapshots(|| insta::assert_snapshot!("transfer_five_inputs", svg));
}

#[test]
fn hostile_names_are_escaped() {
    let evil = "</text><script>alert(1)</script><text x=\"0\">&amp;\u{1}";
    let s = Scenario::Memory(MemoryScenario {
        inputs: 0,
        outputs: 0,
        tensors: vec![tensor(evil, 64, 0, 1, Role::Memset { op: evil.into() })],
        ..MemoryScenario::default()
    });
    let obs = answer(&s);
    let marks = Marks::from_problems(vec![evil.into()], &[format!("`{evil}` is {evil}")]);
    let svg = draw::picture(&s, &obs, &marks, style(), evil).expect("draws");
    assert!(!svg.contains("<script"), "{svg}");
    assert!(!svg.contains('\u{1}'));
    assert!(svg.contains("&lt;/text&gt;&lt;script&gt;"));
    // Every `<` the document holds opens one of the drawing's own elements.
    for part in svg.split('<').skip(1) {
        let name: String = part
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        assert!(
            [
                "svg", "title", "defs", "style", "pattern", "rect", "line", "text", "g", "path",
                "circle"
            ]
            .contains(&name.as_str()),
            "unexpected element <{name}"
        );
    }
}

#[test]
fn a_million_tensors_make_a_bounded_picture() {
    let n = 1_000_000u32;
    let tensors: Vec<Tensor> = (0..n)
        .map(|i| {
            tensor(
                &format!("t{i}"),
                64,
                i % 1000,
                i % 1000 + 1,
                Role::Intermediate,
            )
        })
        .collect();
    let obs = MemoryObservation {
        offsets: tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i as u64 * 64))
            .collect(),
        peak_bytes: u64::from(n) * 64,
        ..MemoryObservation::default()
    };
    let s = Scenario::Memory(MemoryScenario {
        tensors,
        ..MemoryScenario::default()
    });
    let svg = draw::picture(
        &s,
        &Observation::Memory(obs),
        &Marks::default(),
        style(),
        "huge",
    )
    .expect("draws");
    assert!(svg.len() < 512 << 10, "{} bytes", svg.len());
    assert!(
        svg.contains("showing 400 of 1000000 tensors"),
        "the picture says it is cut"
    );
}

#[test]
fn huge_sessions_and_transfers_make_bounded_pictures() {
    use ge_spec::vocab::session::{SessionObservation, TraceAction, TraceEntry};
    use ge_spec::vocab::transfer::TransferObservation;
    let evil = "</text><script>alert(1)</script>";
    let events = 100_000u32;
    let s = Scenario::Session(SessionScenario {
        events: (0..events)
            .map(|graph| SessionEvent::Execute { graph, times: 1 })
            .collect(),
        ..SessionScenario::default()
    });
    let trace = (0..events)
        .flat_map(|step| {
            let pool = format!("{evil}{step}");
            [TraceAction::Alloc, TraceAction::Free].map(|action| TraceEntry {
                step,
                action,
                pool: pool.clone(),
                bytes: 64,
            })
        })
        .collect();
    let o = Observation::Session(SessionObservation {
        trace,
        ..SessionObservation::default()
    });
    let svg = draw::picture(&s, &o, &Marks::default(), style(), evil).expect("draws");
    assert!(svg.len() < 512 << 10, "{} bytes", svg.len());
    assert!(!svg.contains("<script"));
    assert!(svg.contains("more pools not drawn"));
    assert!(svg.contains("… 99976 more events"));

    let inputs = 100_000u32;
    let s = Scenario::Transfer(TransferScenario {
        inputs: (0..inputs)
            .map(|index| TransferInput {
                index,
                size: u64::from(index) * 1000,
                placement: Default::default(),
            })
            .collect(),
        ..TransferScenario::default()
    });
    let o = Observation::Transfer(TransferObservation {
        direct: (0..inputs).collect(),
        ..TransferObservation::default()
    });
    let svg = draw::picture(&s, &o, &Marks::default(), style(), "many inputs").expect("draws");
    assert!(svg.len() < 64 << 10, "{} bytes", svg.len());
    assert!(svg.contains("showing 64 of 100000 inputs"));
}

#[test]
fn options_have_nothing_to_draw() {
    let s: Scenario =
        serde_json::from_str(r#"{"capability":"options","options":{}}"#).expect("a scenario");
    let o = answer(&s);
    assert!(matches!(
        draw::picture(&s, &o, &Marks::default(), style(), "options"),
        Err(DrawError::NothingToDraw(ge_spec::Capability::Options))
    ));
    let m = inplace_chain();
    assert!(matches!(
        draw::picture(&m, &o, &Marks::default(), style(), "mismatch"),
        Err(DrawError::Mismatch { .. })
    ));
}

/// The picture the README shows: the source text's in-place example as the reference plans it.
/// `UPDATE_DOCS=1` rewrites it; otherwise a drawing that changed fails here.
#[test]
fn the_readme_picture_is_in_step() {
    let s = inplace_chain();
    let svg = draw::picture(
        &s,
        &answer(&s),
        &Marks::default(),
        Style {
            grid: true,
            ..style()
        },
        "Data > TensorMove > InplaceOp > NetOutput, ge.exec.outputReuseInputMemIndexes = \"0,0\" (reference plan)",
    )
    .expect("draws");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/pictures/memory-inplace-chain.svg");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("docs/pictures");
        std::fs::write(&path, &svg).expect("written");
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == svg,
        "docs/pictures/memory-inplace-chain.svg is out of step with the drawing code; rerun with UPDATE_DOCS=1"
    );
}
