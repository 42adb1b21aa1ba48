//! The example Python shim (`examples/python-shim/`) passes every options case and the options
//! property through `exec:`, and is reported not supported, never passed, for the rest.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::report::Outcome;
use ge_spec::Capability;

use common::docs;

/// The spec as JSON written into `dir` (what the shim reads with `--spec`), and the shim.
fn shim_and_spec(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let spec = dir.join("spec.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["spec", "--format", "json"])
        .output()
        .expect("run ge-conformance spec");
    assert!(out.status.success());
    std::fs::write(&spec, &out.stdout).expect("write spec.json");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/python-shim/ge_shim.py");
    (spec, script)
}

#[test]
fn the_python_shim_passes_the_options_capability() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (spec, script) = shim_and_spec(dir.path());
    let py = common::python();
    let arg = format!(
        "exec:{py} {} --spec {}",
        shell_quote(&script.to_string_lossy()),
        shell_quote(&spec.to_string_lossy())
    );
    let handle = backends::open(
        &arg,
        std::time::Duration::from_secs(30),
        ge_spec::Profile::Documented,
    )
    .expect("exec");
    // The default budget, so the report is the one the READMEs show.
    let cfg = Config {
        backend_arg: arg,
        ..Config::default()
    };
    let mut report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    report.meta.confinement = handle.confinement();
    the_readmes_show_this_report(&report.to_text());
    assert_eq!(report.meta.backend, "python-shim", "{}", handle.stderr());
    let mut options = 0;
    for t in &report.trials {
        let expected = if t.capability == Capability::Options {
            options += 1;
            Outcome::Pass
        } else {
            Outcome::NotSupported
        };
        assert_eq!(t.outcome, expected, "{}: {:?}", t.name, t.message);
    }
    assert!(options > 1, "the options cases and property ran");
    assert!(
        report.certified,
        "a partial backend with no failure certifies what it claims"
    );
}

/// The python shim's README shows the whole report up to its verdict and the README its
/// verdict line: both are what a run prints today (the tables' digest and the machine's
/// confinement aside), so the docs cannot drift from the suite. `UPDATE_DOCS=1` rewrites them.
fn the_readmes_show_this_report(text: &str) {
    let mut shown = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("spec tables ") {
            shown.push(format!(
                "spec tables [..]{}",
                &rest[rest.find(' ').unwrap_or(rest.len())..]
            ));
        } else if line.starts_with("confinement of the backend: ") {
            shown.push("confinement of the backend: [..]".to_owned());
        } else {
            shown.push(line.to_owned());
        }
        if line.starts_with("CERTIFIED") || line.starts_with("NOT CERTIFIED") {
            break;
        }
    }
    let verdict = shown.last().cloned().unwrap_or_default();
    let checked = docs::check(
        "examples/python-shim/README.md",
        "python-shim-report",
        &shown.join("\n"),
    )
    .and_then(|()| docs::check("README.md", "python-shim-verdict", &verdict));
    if let Err(e) = checked {
        panic!("{e}");
    }
}

/// docs/protocol.md's "A complete session" is a real one: the lines `eval` and the Python shim
/// exchange over one options scenario, recorded on the pipe with `tee` (unconfined, so that
/// `tee` may write beside the test).
#[test]
fn the_protocol_doc_shows_a_real_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (spec, script) = shim_and_spec(dir.path());
    let (sent, got) = (dir.path().join("sent"), dir.path().join("got"));
    let q = |p: &std::path::Path| shell_quote(&p.to_string_lossy());
    let py = common::python();
    let pipe = format!(
        "tee {} | {py} {} --spec {} | tee {}",
        q(&sent),
        q(&script),
        q(&spec),
        q(&got)
    );
    let mut eval = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["eval", "--no-confine", "--backend"])
        .arg(format!("exec:sh -c {}", shell_quote(&pipe)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("eval starts");
    {
        use std::io::Write as _;
        let mut stdin = eval.stdin.take().expect("a pipe");
        stdin
            .write_all(
                br#"{"capability":"options","options":{"global":{"ge.exec.input_fusion_size":"12"}}}"#,
            )
            .expect("written");
    }
    let status = eval.wait_with_output().expect("eval ends").status;
    assert!(
        status.success(),
        "eval through the recording pipe: {status:?}"
    );
    let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("recorded");
    let (sent, got) = (read(&sent), read(&got));
    let mut transcript = Vec::new();
    let mut answers = got.lines();
    for line in sent.lines() {
        transcript.push(format!("harness: {line}"));
        if let Some(answer) = answers.next() {
            transcript.push(format!("backend: {answer}"));
        }
    }
    if let Err(e) = docs::check(
        "docs/protocol.md",
        "session-transcript",
        &transcript.join("\n"),
    ) {
        panic!("{e}");
    }
}
