//! The command line's side of a vendor's workflow: `certify --cases-dir` runs a vendor's own
//! case tables after the loader's checks, `promote --into` writes a finding where they are
//! read, `eval --cases-dir` reruns one of them, and `certify --snapshots` keeps the backend's
//! answers with insta's flow without touching the verdict or the report on standard output.

use std::path::Path;
use std::process::{Command, Output};

fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ge-conformance"));
    cmd.args(args)
        .env_remove("CI")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_OUTPUT")
        .env_remove("INSTA_WORKSPACE_ROOT")
        .env_remove("INSTA_FORCE_PASS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the command runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example_table() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/vendor-engine/cases/vendor-models.toml"),
    )
    .expect("the example's table")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

#[test]
fn certify_runs_a_vendors_cases_beside_the_suites() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("vendor-models.toml"), example_table()).expect("written");
    let out = cli(
        &[
            "certify",
            "--cases-dir",
            path(dir.path()),
            "--filter",
            "vendor-models/",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let names: Vec<&str> = report["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "vendor-models/detector-eight-inputs-batched",
            "vendor-models/detector-reuse-lists-at-graph-level"
        ]
    );
    assert_eq!(
        report["meta"]["local_cases"].as_str().map(str::len),
        Some(64)
    );

    // The same table under a name of the suite's is refused before the run.
    let clash = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(clash.path().join("transfer-examples.toml"), example_table()).expect("written");
    let out = cli(&["certify", "--cases-dir", path(clash.path())], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("local-transfer-examples"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "no report for a refused set-up");
}

#[test]
fn a_promoted_finding_lands_in_the_vendors_tables_and_waits_for_its_root_cause() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cases = dir.path().join("cases");
    let finding = dir.path().join("finding.json");
    std::fs::write(
        &finding,
        r#"{"capability":"transfer","options":{"session":{"ge.exec.input_fusion_size":"0"}},"inputs":[{"index":0,"size":64},{"index":1,"size":64}]}"#,
    )
    .expect("written");
    let out = cli(
        &[
            "promote",
            path(&finding),
            "--into",
            path(&cases),
            "--clause",
            "IFS-013",
            "--name",
            "fusion-off-two-inputs",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = cases.join("local-regressions.toml");
    let text = std::fs::read_to_string(&table).expect("the promoted table");
    assert!(text.contains("fusion-off-two-inputs"), "{text}");

    // The loader refuses the case until its root cause is written, as in the suite's tables.
    let out = cli(&["certify", "--cases-dir", path(&cases)], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("root cause"), "{}", stderr(&out));

    std::fs::write(
        &table,
        text.replace(
            ge_spec::tables::ROOT_CAUSE_SLOT,
            "the planner fused with fusion off",
        ),
    )
    .expect("written");
    let out = cli(
        &[
            "eval",
            "--cases-dir",
            path(&cases),
            "--case",
            "local-regressions/fusion-off-two-inputs",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("pass at level documented"),
        "{}",
        stderr(&out)
    );
}

/// Outside a checkout of the suite, `promote` without `--into` or `--table` writes nothing: the
/// default table is the suite's own, which nothing in a vendor's crate reads.
#[test]
fn promote_outside_the_suite_asks_for_the_vendors_cases_directory() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let finding = dir.path().join("finding.json");
    std::fs::write(
        &finding,
        r#"{"capability":"options","options":{"session":{"ge.exec.atomicCleanPolicy":"1"}}}"#,
    )
    .expect("written");
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["promote", path(&finding), "--clause", "ACP-001"])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--into <dir>"), "{}", stderr(&out));
    assert!(!dir.path().join("spec").exists(), "nothing written");
}

#[test]
fn certify_keeps_snapshots_with_insta_flow_apart_from_the_verdict() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let snaps = dir.path().join("snapshots");
    let args = [
        "certify",
        "--snapshots",
        path(&snaps),
        "--filter",
        "transfer-examples/",
        "--format",
        "json",
    ];
    let count = |suffix: &str| {
        std::fs::read_dir(&snaps).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(suffix))
                .count()
        })
    };
    // First run: every snapshot is new, written as .snap.new for review; the verdict and the
    // JSON report on standard output are untouched, the exit status says to review.
    let out = cli(&args, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(report["verdict"], "partial");
    assert_eq!(count(".snap.new"), 4, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("4 new or changed"),
        "{}",
        stderr(&out)
    );

    let out = cli(&args, &[("INSTA_UPDATE", "always")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(count(".snap"), 4);

    let out = cli(&args, &[("CI", "true")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    std::fs::write(snaps.join("transfer-examples__gone.snap"), "---\n---\n").expect("written");
    let out = cli(&args, &[("CI", "true")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("transfer-examples__gone.snap belongs to no scenario"));
}

#[test]
fn a_local_cases_reproducer_names_its_directory_and_a_suite_cases_does_not() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("vendor-models.toml"), example_table()).expect("written");
    let local = ge_conformance::local::LocalCases::load(dir.path()).expect("the example's table");
    let cfg = ge_conformance::certify::Config {
        local: Some(local),
        ..Default::default()
    };
    let case = |name: &str| {
        cfg.spec()
            .cases()
            .iter()
            .find(|c| c.full_name() == name)
            .expect("the case")
            .clone()
    };
    let theirs = ge_conformance::certify::reproducer_for_case(
        &cfg,
        &case("vendor-models/detector-eight-inputs-batched"),
    );
    assert!(
        theirs.contains(&format!("--cases-dir {}", path(dir.path()))),
        "{theirs}"
    );
    let ours = ge_conformance::certify::reproducer_for_case(
        &cfg,
        &case("transfer-examples/ten-inputs-threshold-0"),
    );
    assert!(!ours.contains("--cases-dir"), "{ours}");
    // An empty directory is refused: most likely the wrong one.
    let empty = tempfile::tempdir().expect("a temporary directory");
    let err = ge_conformance::local::LocalCases::load(empty.path()).expect_err("nothing to load");
    assert!(err.to_string().contains("no case table"), "{err}");
    // Tables each under the cap of one file, past the cap of all together, are refused.
    let cap = ge_conformance::local::MAX_LOCAL_TABLES as usize;
    for name in ["a.toml", "b.toml"] {
        let comment = format!("# {}\n", "x".repeat(cap / 2));
        std::fs::write(empty.path().join(name), comment).expect("a table");
    }
    let err = ge_conformance::local::LocalCases::load(empty.path()).expect_err("too large");
    assert!(err.to_string().contains("at most together"), "{err}");
}
