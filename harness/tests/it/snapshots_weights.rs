//! Snapshots of the reference's weights observations for the two naming modes, so any change
//! in file names, layout, hashes or the cleanup report shows up in review.

use crate::common;

use ge_reference::Reference;
use ge_spec::vocab::weights::{
    ConstNode, Fill, NodeType, WeightsObservation, WeightsScenario, WorkPathEnv,
};
use ge_spec::Backend;

fn model(mode: &str, unload: bool) -> WeightsScenario {
    let mut s = WeightsScenario {
        root_graph: "resnet".into(),
        pid: 4242,
        session_id: 3,
        ascend_work_path: WorkPathEnv::Set {
            path: "work".into(),
        },
        unload,
        constants: vec![
            ConstNode {
                name: "conv1.weight".into(),
                node_type: NodeType::Const,
                hex: Some("0102030405".into()),
                fill: None,
            },
            ConstNode {
                name: "conv1.bias".into(),
                node_type: NodeType::Constant,
                hex: Some("ff".into()),
                fill: None,
            },
            ConstNode {
                name: "conv2.weight".into(),
                node_type: NodeType::Const,
                hex: Some("0102030405".into()),
                fill: None,
            },
            ConstNode {
                name: "fc.weight".into(),
                node_type: NodeType::Const,
                hex: None,
                fill: Some(Fill {
                    byte: 0x3c,
                    len: 600,
                }),
            },
        ],
        ..WeightsScenario::default()
    };
    s.options
        .session
        .insert("ge.externalWeight".into(), mode.into());
    s
}

fn observe(s: &WeightsScenario) -> WeightsObservation {
    let sandbox = tempfile::tempdir().expect("temporary sandbox");
    let mut obs = Reference
        .weights(s, sandbox.path())
        .expect("the reference supports weights");
    obs.canonicalize();
    obs
}

#[test]
fn mode1_separate_files() {
    let obs = observe(&model("1", false));
    common::with_snapshots(|| insta::assert_json_snapshot!(obs));
}

#[test]
fn mode2_combined_file() {
    let obs = observe(&model("2", false));
    common::with_snapshots(|| insta::assert_json_snapshot!(obs));
}

#[test]
fn mode1_with_unload() {
    let obs = observe(&model("1", true));
    common::with_snapshots(|| insta::assert_json_snapshot!(obs));
}

#[test]
fn mode2_with_unload() {
    let obs = observe(&model("2", true));
    common::with_snapshots(|| insta::assert_json_snapshot!(obs));
}
