//! Reproducers reproduce: every reproducer line a failing certification prints, run as printed
//! (a shell, `ge-conformance` on the PATH), fails again. The backend is served over the
//! protocol and confined, as a vendor's engine is: the reference with one forbidden mutation
//! (`serve-reference --mutation`), on weights, whose trials write in a sandbox and are judged
//! on the disk, and on memory, whose twin checks ask the backend again.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::expectations::Date;
use ge_conformance::report::Outcome;
use ge_spec::Profile;
use rstest::rstest;

fn served(mutation: &str) -> String {
    format!(
        "exec:{} serve-reference --mutation {mutation}",
        shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

#[rstest]
#[case::a_weight_file_changed_on_disk("byte-flipped-0", "weights-")]
#[case::a_refused_plan("refused", "memory-plans/")]
fn every_printed_reproducer_fails_as_its_trial_did(#[case] mutation: &str, #[case] filter: &str) {
    let arg = served(mutation);
    let handle = backends::open(&arg, Duration::from_secs(30), Profile::Documented)
        .expect("the served engine greets");
    let cfg = Config {
        filter: Some(filter.to_owned()),
        backend_arg: arg,
        cases: 16,
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    let report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    let failed: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .collect();
    assert!(
        !failed.is_empty(),
        "{mutation} fails nothing under {filter}"
    );
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .parent()
        .expect("a directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for t in failed.iter().take(6) {
        let line = t
            .reproducer
            .as_deref()
            .expect("a failing trial has a reproducer");
        let out = Command::new("sh")
            .args(["-c", line])
            .env("PATH", &path)
            .output()
            .expect("sh runs");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: `{line}` must fail as the trial did ({:?}); it said:\n{}",
            t.name,
            t.broken,
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stderr);
        for clause in &t.broken {
            assert!(
                said.contains(clause.as_str()),
                "{}: the reproducer does not name {clause}:\n{said}",
                t.name
            );
        }
    }
}
