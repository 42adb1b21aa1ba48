//! `ge-conformance eval --draw`: a picture for memory, session and transfer scenarios, a usage
//! error for options before the backend starts, and with `--judge` the answer of a backend that
//! shares live bytes beside the reference's, the overlap hatched and the clause named.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn eval(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .arg("eval")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the harness starts");
    let mut input = child.stdin.take().expect("piped");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("written");
    drop(input);
    child.wait_with_output().expect("the harness ends")
}

fn svg_at(path: &Path) -> String {
    let svg = std::fs::read_to_string(path).expect("the picture is written");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    svg
}

#[test]
fn each_plan_capability_draws() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a directory");
    for (case, needle) in [
        (
            "memory-plans/overlapping-lifetimes-never-share",
            "lower bound",
        ),
        ("session-refresh/on-refresh-many-times", "refreshes"),
        (
            "transfer-examples/ten-inputs-threshold-100kib",
            "fusion threshold",
        ),
    ] {
        let file = dir.path().join("picture.svg");
        let out = eval(
            &["--case", case, "--draw", &file.to_string_lossy(), "--grid"],
            None,
        );
        assert!(out.status.success(), "{case}: {out:?}");
        let svg = svg_at(&file);
        assert!(svg.contains(needle), "{case}: no {needle:?}");
        assert!(
            !svg.contains("breaks "),
            "{case}: the reference breaks nothing"
        );
    }
}

#[test]
fn options_have_nothing_to_draw() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a directory");
    let file = dir.path().join("options.svg");
    let out = eval(
        &["--draw", &file.to_string_lossy()],
        Some(r#"{"capability":"options","options":{}}"#),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("options answers have nothing to draw"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "the backend was never asked");
    assert!(!file.exists());
}

#[test]
fn judge_draws_the_backend_beside_the_reference() {
    // The backend writes no file, but it runs confined to the sandbox root like any other.
    let dir = common::OwnDir::new();
    let file = dir.path().join("judged.svg");
    let backend = format!("exec:{}", common::misbehave("zero-offsets memory"));
    let out = eval(
        &[
            "--case",
            "memory-plans/overlapping-lifetimes-never-share",
            "--backend",
            &backend,
            "--judge",
            "--draw",
            &file.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "the answer fails: {out:?}");
    let svg = svg_at(&file);
    assert!(svg.contains("breaks DRM-011"), "the clause is named");
    assert!(
        svg.contains("class=\"overlap\""),
        "the shared bytes are hatched"
    );
    assert!(svg.contains("class=\"intermediate violating\""));
    assert!(svg.contains("reference (profile documented)"));
}

/// `certify --out` from the command line, against a backend behind the protocol whose memory
/// plans put every tensor at offset 0: the bundle verifies, each failing memory trial names a
/// picture it holds, and report.html shows the overlap hatched with DRM-011 named.
#[test]
fn certify_out_draws_a_failing_backends_bundle() {
    let dir = common::OwnDir::new();
    let bundle = dir.path().join("bundle");
    let backend = format!("exec:{}", common::misbehave("zero-offsets memory"));
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "certify",
            "--backend",
            &backend,
            "--filter",
            "memory-plans/",
        ])
        .arg("--out")
        .arg(&bundle)
        .output()
        .expect("certify runs");
    assert_eq!(out.status.code(), Some(1), "the plans fail: {out:?}");
    let report = ge_conformance::bundle::verify(&bundle).expect("the bundle verifies");
    let drawn: Vec<&str> = report
        .trials
        .iter()
        .filter(|t| t.outcome.fails_run() && t.capability == ge_spec::Capability::Memory)
        .filter_map(|t| t.picture.as_deref())
        .collect();
    assert!(!drawn.is_empty(), "the failing memory trials are drawn");
    for picture in &drawn {
        assert!(bundle.join(picture).is_file(), "{picture} is in the bundle");
    }
    let html = std::fs::read_to_string(bundle.join("report.html")).expect("report.html");
    assert!(html.contains("DRM-011"), "the clause is named");
    assert!(
        html.contains("class=\"overlap\""),
        "the shared bytes are hatched"
    );
    let md = std::fs::read_to_string(bundle.join("report.md")).expect("report.md");
    assert!(
        md.contains(&format!("]({})", drawn[0])),
        "report.md links the picture"
    );
}
