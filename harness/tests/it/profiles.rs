//! The two behaviour profiles end to end: the reference passes each under its own
//! expectations, each reference certified under the other profile fails exactly on the clauses
//! where the profiles diverge, the divergence map is stable, and the protocol carries the
//! profile both ways.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::{Outcome, Report, Standing, TrialKind};
use ge_conformance::{backends, divergence};
use ge_reference::Reference;
use ge_spec::{Conformance, Profile, Spec};

/// Certifies `backend` under `profile` at level strict: every clause binds, so every departure
/// from the profile's expectations fails.
fn certify_under(backend: &Reference, profile: Profile, cases: u32) -> Report {
    let cfg = Config {
        cases,
        seed: 3,
        judging: Judging::new(profile, Conformance::Strict),
        ..Config::default()
    };
    certify::certify(backend, &cfg, &mut |_, _, _| {}).expect("a run")
}

/// Checks that the other profile's reference fails exactly the cases that involve a divergent
/// clause: every failed case cites or breaks one, and every divergent clause the cases of
/// `profile` exercise is cited by a failed case. (What a failure breaks may lie downstream of the
/// divergence: upstream's graph-level atomicCleanPolicy, ACP-002, shows as cleanup groups
/// ACP-010 does not allow.)
fn fails_exactly_on_divergent_clauses(report: &Report, profile: Profile) {
    let spec = Spec::embedded();
    let divergent = |c: &String| spec.clause(c).is_some_and(|c| c.diverges());
    let failed: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.kind == TrialKind::Case && t.outcome == Outcome::Fail)
        .collect();
    assert!(!failed.is_empty());
    let unexplained: Vec<_> = failed
        .iter()
        // A trial failing only on the form (OPT-012) met the same diagnostic cited under
        // another clause: the two profiles cite different clauses where they diverge.
        .filter(|t| {
            !t.clauses.iter().chain(&t.broken).any(divergent)
                && !t.broken.iter().all(|c| c == "OPT-012")
        })
        .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
        .collect();
    assert!(
        unexplained.is_empty(),
        "cases that cite no divergent clause fail: {unexplained:?}"
    );
    let cited: BTreeSet<String> = failed
        .iter()
        .flat_map(|t| t.clauses.iter().cloned())
        .filter(divergent)
        .collect();
    assert_eq!(cited, divergent_exercised(profile));
}

/// The divergent clauses that some case running under `profile` checks.
fn divergent_exercised(profile: Profile) -> BTreeSet<String> {
    let spec = Spec::embedded();
    spec.cases_in(profile)
        .flat_map(|c| c.case.clauses.iter())
        .filter(|id| spec.clause(id).is_some_and(|c| c.diverges()))
        .cloned()
        .collect()
}

#[test]
fn the_reference_passes_both_profiles_under_their_own_expectations() {
    for profile in Profile::ALL {
        let report = certify_under(&Reference::new(profile), profile, 32);
        assert_eq!(report.meta.profile, profile);
        let failed: Vec<_> = report
            .trials
            .iter()
            .filter(|t| t.outcome != Outcome::Pass)
            .map(|t| format!("{} {:?}: {:?}", t.name, t.outcome, t.message))
            .collect();
        assert!(failed.is_empty(), "{profile}: {failed:#?}");
        assert!(report.certified, "{profile}");
        // A report made under the upstream profile names the GE source it was checked against;
        // one under the documented profile names none.
        let pin = Spec::embedded().upstream_pin().expect("pinned");
        match profile {
            Profile::Upstream => {
                let named = report.meta.upstream_source.as_deref().expect("named");
                assert_eq!(named, format!("{}@{}", pin.repository, pin.commit));
                for text in [report.to_text(), report.to_markdown(), report.to_junit()] {
                    assert!(text.contains(named), "{text}");
                }
            }
            Profile::Documented => {
                assert_eq!(report.meta.upstream_source, None);
                assert!(!report.to_text().contains(&pin.commit));
            }
        }
    }
}

#[test]
fn each_profile_runs_its_own_cases() {
    let spec = Spec::embedded();
    let documented: BTreeSet<_> = spec
        .cases_in(Profile::Documented)
        .map(|c| c.full_name())
        .collect();
    let upstream: BTreeSet<_> = spec
        .cases_in(Profile::Upstream)
        .map(|c| c.full_name())
        .collect();
    assert!(documented.iter().any(|n| !upstream.contains(n)));
    assert!(upstream.iter().any(|n| !documented.contains(n)));
    assert!(documented.intersection(&upstream).count() > 100);
}

#[test]
fn the_documented_reference_fails_the_upstream_profile_exactly_on_divergent_clauses() {
    let report = certify_under(&Reference, Profile::Upstream, 8);
    assert!(!report.certified);
    fails_exactly_on_divergent_clauses(&report, Profile::Upstream);
}

#[test]
fn the_upstream_reference_fails_the_documented_profile_exactly_on_divergent_clauses() {
    let report = certify_under(&Reference::upstream(), Profile::Documented, 8);
    assert!(!report.certified);
    fails_exactly_on_divergent_clauses(&report, Profile::Documented);
}

#[test]
fn the_divergence_map_is_stable() {
    let spec = Spec::embedded();
    let rows = divergence::rows(spec);
    assert_eq!(rows.len(), spec.divergent_clauses().count());
    let json: serde_json::Value =
        serde_json::from_str(&divergence::json(spec)).expect("the map is JSON");
    assert_eq!(json["clauses"].as_array().map(Vec::len), Some(rows.len()));
    common::with_snapshots(|| {
        insta::assert_snapshot!("divergence_map", divergence::markdown(spec));
    });
}

fn serve_arg(profile: &str) -> String {
    format!(
        "exec:{} serve-reference --profile {profile}",
        shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

#[test]
fn the_served_upstream_reference_certifies_under_the_upstream_profile() {
    let handle = backends::open(
        &serve_arg("upstream"),
        Duration::from_secs(30),
        Profile::Upstream,
    )
    .expect("exec");
    let cfg = Config {
        cases: 4,
        judging: Judging::new(Profile::Upstream, Conformance::Strict),
        filter: Some("options-".into()),
        ..Config::default()
    };
    let report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    assert!(report.trials.iter().any(|t| t.name.ends_with("-upstream")));
    assert_eq!(report.verdict, Standing::Partial, "{}", report.to_text());
    assert!(report.trials.iter().all(|t| t.outcome == Outcome::Pass));
}

#[test]
fn a_backend_without_the_profile_is_refused_clearly() {
    // The served reference declares the documented profile only: nothing can be certified
    // against the upstream profile, a set-up error with its reason.
    let err = backends::open(
        &serve_arg("documented"),
        Duration::from_secs(30),
        Profile::Upstream,
    )
    .expect_err("refused");
    assert!(
        err.contains("documented profile(s)") && err.contains("upstream profile"),
        "{err}"
    );
}

#[test]
fn the_cli_names_the_profile_in_every_report_format() {
    for (format, needle) in [
        ("text", "profile upstream"),
        ("json", "\"profile\": \"upstream\""),
        ("markdown", "| profile | upstream |"),
        ("junit", "<property name=\"profile\" value=\"upstream\"/>"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
            .args([
                "certify",
                "--profile",
                "upstream",
                "--cases",
                "2",
                "--filter",
                "options-levels/",
                "--format",
                format,
            ])
            .output()
            .expect("run ge-conformance");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{format}: {stdout}");
        assert!(stdout.contains(needle), "{format}: {stdout}");
    }
}

#[test]
fn eval_refuses_a_case_of_the_other_profile() {
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "eval",
            "--case",
            "options-levels/acp-at-global-is-used-upstream",
        ])
        .output()
        .expect("run ge-conformance");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--profile upstream"));
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "eval",
            "--profile",
            "upstream",
            "--case",
            "options-levels/acp-at-global-is-used-upstream",
        ])
        .output()
        .expect("run ge-conformance");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_vendor_suite_runs_the_cases_of_its_profile() {
    let names = |suite: ge_conformance::libtest::Suite<Reference>| -> BTreeSet<String> {
        suite.trials().iter().map(|t| t.name().to_owned()).collect()
    };
    let upstream = names(
        ge_conformance::libtest::Suite::new(Reference::upstream()).with_profile(Profile::Upstream),
    );
    let documented = names(ge_conformance::libtest::Suite::new(Reference));
    assert!(upstream.contains("options-levels/acp-at-global-is-used-upstream"));
    assert!(!upstream.contains("options-levels/acp-at-global-is-ignored"));
    assert!(documented.contains("options-levels/acp-at-global-is-ignored"));
    assert!(!documented.contains("options-levels/acp-at-global-is-used-upstream"));
}

#[test]
fn explain_shows_the_upstream_behaviour_and_profile_bound_cases() {
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["explain", "ACP-002"])
        .output()
        .expect("run ge-conformance");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "Upstream GE departs from this: Accepted at the global, session and graph levels"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("options-levels/acp-at-global-is-used-upstream [upstream only]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("options-levels/acp-at-global-is-ignored [documented only]"),
        "{stdout}"
    );
    // The evidence: the pinned commit, then each location of the entry's `source`.
    let spec = Spec::embedded();
    let pin = spec.upstream_pin().expect("pinned");
    assert!(
        stdout.contains(&format!("Evidence at {}@{}:", pin.repository, pin.commit)),
        "{stdout}"
    );
    let up = spec
        .clause("ACP-002")
        .and_then(|c| c.upstream.as_ref())
        .expect("an upstream entry");
    for e in &up.source {
        assert!(
            stdout.contains(&format!("  {e}")),
            "{e} missing from {stdout}"
        );
    }
}

#[test]
fn the_harness_refuses_a_backend_whose_hello_lacks_the_profile() {
    let shim =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/shims/documented-only.sh");
    let arg = format!("exec:sh {}", shell_quote(&shim.to_string_lossy()));
    let err = backends::open(&arg, Duration::from_secs(5), Profile::Upstream)
        .expect_err("refused at the handshake");
    assert!(
        err.contains("the backend supports the documented profile(s) and this certification is against the upstream profile"),
        "{err}"
    );
    assert_eq!(err.matches("documented profile(s)").count(), 1, "{err}");
}
