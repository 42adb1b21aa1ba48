//! The reference served over the protocol (`ge-conformance serve-reference`, reached through
//! `exec:`) gets exactly the verdicts of the in-process reference, trial by trial; and the CLI
//! certifies it end to end.

use std::process::Command;
use std::time::Duration;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::report::Outcome;
use ge_spec::Profile;

fn exec_arg() -> String {
    format!(
        "exec:{} serve-reference",
        shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

#[test]
fn every_verdict_through_exec_equals_the_in_process_run() {
    let cfg = Config {
        cases: 64,
        seed: 7,
        ..Config::default()
    };
    let timeout = Duration::from_secs(30);
    let inproc = backends::open("reference", timeout, Profile::Documented).expect("reference");
    let exec = backends::open(&exec_arg(), timeout, Profile::Documented).expect("exec");
    let a = certify::certify(inproc.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    let b = certify::certify(exec.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    assert_eq!(a.meta.backend, b.meta.backend);
    assert_eq!(a.meta.backend_version, b.meta.backend_version);
    assert_eq!(a.meta.capabilities, b.meta.capabilities);
    assert_eq!(a.trials.len(), b.trials.len());
    for (x, y) in a.trials.iter().zip(&b.trials) {
        // Everything but the wall time, which the protocol adds to.
        let timeless = |t: &ge_conformance::report::TrialResult| {
            let mut t = t.clone();
            t.micros = 0;
            t
        };
        assert_eq!(timeless(x), timeless(y), "{} differs through exec:", x.name);
    }
    assert!(b.trials.iter().any(|t| t.outcome == Outcome::Pass));
    assert_eq!(a.certified, b.certified);
    assert_eq!(
        exec.stderr(),
        "",
        "the reference server writes nothing on stderr"
    );
}

#[test]
fn the_cli_certifies_the_reference_through_exec() {
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "certify",
            "--cases",
            "16",
            "--timeout-ms",
            "20000",
            "--backend",
        ])
        .arg(exec_arg())
        .output()
        .expect("run ge-conformance");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("backend ge-reference"), "{stdout}");
    assert!(stdout.contains("CERTIFIED"), "{stdout}");
}

#[test]
fn eval_asks_a_case_through_exec() {
    let case = ge_spec::Spec::embedded().cases()[0].full_name();
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["eval", "--case", &case, "--backend"])
        .arg(exec_arg())
        .output()
        .expect("run ge-conformance");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let observation: ge_spec::Observation =
        serde_json::from_slice(&out.stdout).expect("eval prints an observation");
    assert_eq!(
        observation.capability(),
        ge_spec::Spec::embedded().cases()[0].capability()
    );
}

#[test]
fn exec_ge_conformance_means_this_harness_when_none_is_on_path() {
    // As the docs and the crash note write it, run from a checkout: no `ge-conformance` on PATH.
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "certify",
            "--backend",
            "exec:ge-conformance serve-reference",
            "--filter",
            "options-numbers/",
        ])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("the harness runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("0 failed"), "{text}");
}
