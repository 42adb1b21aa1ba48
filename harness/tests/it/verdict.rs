//! The verdict is safe to gate on: certified means at least one capability declared, each judged,
//! and nothing failing at the level in force; a run that judges nothing, or part of the suite
//! only, never says certified; usage and set-up errors exit 2; and `verify` recomputes the
//! verdict and the totals from the trials, so an edited report does not verify even with its
//! manifest recomputed.

use std::path::{Path, PathBuf};

use crate::common::{cli, text};

use ge_conformance::bundle;
use ge_conformance::certify::{certify, shell_quote, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::{Outcome, Report, Standing};
use ge_reference::Reference;
use ge_spec::vocab::{Capability, OptionsObservation, OptionsScenario};
use ge_spec::{Answer, Backend};

#[test]
fn a_filter_that_matches_nothing_is_a_usage_error() {
    let o = cli(&["certify", "--filter", "no-such-trial"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("matches no trial"), "{err}");
    assert!(!out.contains("CERTIFIED"), "{out}");
}

#[test]
fn a_random_seed_is_fresh_printed_and_replayable() {
    let run = |seed: &str| {
        let o = cli(&[
            "certify",
            "--seed",
            seed,
            "--filter",
            "property/",
            "--cases",
            "4",
            "--format",
            "json",
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        let report: serde_json::Value = serde_json::from_str(&out).expect("a JSON report");
        (report["meta"]["seed"].as_u64().expect("a seed"), err)
    };
    let (a, err_a) = run("random");
    let (b, _) = run("random");
    assert_ne!(a, b, "two random seeds in a row");
    assert!(
        err_a.contains(&format!("replay with --seed {a}")),
        "{err_a}"
    );
    let (replayed, err) = run(&a.to_string());
    assert_eq!(replayed, a);
    assert!(!err.contains("random"), "{err}");
    let o = cli(&["certify", "--seed", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("nor `random`"), "{}", text(&o).1);
}

#[test]
fn spec_accepts_only_the_formats_it_prints() {
    for format in ["markdown", "junit"] {
        let o = cli(&["spec", "--format", format]);
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert!(
            text(&o).1.contains("possible values: text, json"),
            "{}",
            text(&o).1
        );
    }
    let o = cli(&["spec", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let spec: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(spec["clauses"].as_array().is_some_and(|c| !c.is_empty()));
}

#[test]
fn no_scenarios_per_property_is_a_usage_error() {
    let o = cli(&["certify", "--cases", "0"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("--cases must be at least 1"), "{err}");
}

#[test]
fn no_time_to_answer_is_a_usage_error_not_the_backends_fault() {
    for command in ["certify", "eval"] {
        let o = cli(&[command, "--timeout-ms", "0"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{command}: {out}{err}");
        assert!(err.contains("--timeout-ms"), "{command}: {err}");
    }
}

#[test]
fn a_backend_that_cannot_start_is_a_set_up_error_with_one_message() {
    let o = cli(&["certify", "--backend", "exec:/nonexistent/engine"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        out.is_empty(),
        "no report for a backend never started: {out}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(err.contains("cannot run `/nonexistent/engine`"), "{err}");
}

fn shim(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shims")
        .join(name);
    format!("exec:sh {}", shell_quote(&path.to_string_lossy()))
}

#[test]
fn a_backend_that_declares_nothing_has_nothing_to_certify() {
    let o = cli(&[
        "certify",
        "--cases",
        "2",
        "--backend",
        &shim("declares-nothing.sh"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("NOTHING TO CERTIFY"), "{out}");
    assert!(!out.contains("\nCERTIFIED"), "{out}");
}

#[test]
fn a_filtered_run_is_partial_in_every_report_and_records_its_filter() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out_dir = dir.path().join("bundle");
    let o = cli(&[
        "certify",
        "--filter",
        "options-defaults/",
        "--out",
        &out_dir.to_string_lossy(),
    ]);
    let (out, err) = text(&o);
    // Nothing failed among the trials it ran: not an error, but not a certification either.
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("PARTIAL RUN"), "{out}");
    let report: Report = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("report.json")).expect("report.json"),
    )
    .expect("a report");
    assert_eq!(report.verdict, Standing::Partial);
    assert!(!report.certified);
    assert_eq!(report.meta.filter.as_deref(), Some("options-defaults/"));
    for (file, needle) in [
        ("report.md", "partial run, not a certification"),
        (
            "report.xml",
            "<property name=\"filter\" value=\"options-defaults/\"/>",
        ),
        ("report.txt", "PARTIAL RUN"),
    ] {
        let t = std::fs::read_to_string(out_dir.join(file)).expect("a report file");
        assert!(t.contains(needle), "{file}: {t}");
    }
    // A gate: intact but not certified is a failure, unless integrity alone is asked.
    let o = cli(&["verify", &out_dir.to_string_lossy()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("partial run") && !out.contains(", certified"),
        "{out}"
    );
    assert!(err.contains("not CERTIFIED"), "{err}");
    let o = cli(&["verify", "--integrity-only", &out_dir.to_string_lossy()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Rewrites `report.json` with `edit` and recomputes the manifest, as a forger would.
fn forge(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join("report.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("report.json")).expect("JSON");
    edit(&mut v);
    let text = serde_json::to_string_pretty(&v).expect("JSON");
    std::fs::write(&path, &text).expect("write");
    let manifest = std::fs::read_to_string(dir.join(bundle::MANIFEST)).expect("manifest");
    let fixed: String = manifest
        .lines()
        .map(|l| {
            if l.ends_with("  report.json") {
                format!("{}  report.json\n", sha256(text.as_bytes()))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(dir.join(bundle::MANIFEST), fixed).expect("write");
}

/// Answers options like the reference, but puts ACP "2" in force.
struct AcceptsTwo;

impl Backend for AcceptsTwo {
    fn name(&self) -> &str {
        "accepts-two"
    }
    fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = Reference.options(s)?;
        let key = "ge.exec.atomicCleanPolicy";
        if s.options.session.get(key).map(String::as_str) == Some("2") {
            o.rejected.retain(|k| k != key);
            o.errors.retain(|d| d.key.as_deref() != Some(key));
            o.effective.insert(
                key.into(),
                ge_spec::vocab::Effective {
                    value: "2".into(),
                    from: ge_spec::Source::Session,
                },
            );
        }
        Ok(o)
    }
}

/// A forgery of `report.json`.
type Edit = fn(&mut serde_json::Value);

#[test]
fn verify_recomputes_the_verdict_and_totals_of_an_edited_bundle() {
    let cfg = Config {
        cases: 4,
        ..Config::default()
    };
    let report = certify(&AcceptsTwo, &cfg, &mut |_, _, _| {}).expect("a run");
    assert_eq!(report.verdict, Standing::NotCertified);
    let edits: [(&str, Edit); 4] = [
        ("verdict", |v| {
            v["certified"] = true.into();
            v["verdict"] = "certified".into();
        }),
        ("totals", |v| {
            v["totals"]["failed"] = 0.into();
            v["totals"]["passed"] = 10_000.into();
        }),
        ("a trial", |v| {
            for t in v["trials"].as_array_mut().expect("trials") {
                if t["outcome"] == "fail" {
                    t["outcome"] = "pass".into();
                }
            }
        }),
        ("the filter", |v| {
            v["meta"]["filter"] = "options".into();
        }),
    ];
    for (what, edit) in edits {
        let dir = tempfile::tempdir().expect("a temporary directory");
        bundle::write(&report, dir.path(), false).expect("written");
        assert!(
            bundle::verify(dir.path()).is_ok(),
            "a fresh bundle verifies"
        );
        forge(dir.path(), edit);
        let err = bundle::verify(dir.path())
            .expect_err("an edited report does not verify")
            .to_string();
        assert!(
            err.contains("report.json") || err.contains("does not say what"),
            "{what}: {err}"
        );
    }
}

#[test]
fn a_deviation_never_hides_a_failure_in_a_property() {
    // Drops every warning (deviations: the warnings are the suite's choices) and puts ACP "2" in
    // force (a failure of ACP-001): the property reports both, each with its own scenario.
    struct Both;
    impl Backend for Both {
        fn name(&self) -> &str {
            "both"
        }
        fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
            [Capability::Options].into_iter().collect()
        }
        fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
            let mut o = AcceptsTwo.options(s)?;
            o.warnings.clear();
            Ok(o)
        }
    }
    let cfg = Config {
        cases: 2_000,
        filter: Some("property/options".into()),
        ..Config::default()
    };
    let report = certify(&Both, &cfg, &mut |_, _, _| {}).expect("a run");
    let t = &report.trials[0];
    assert_eq!(t.outcome, Outcome::Fail, "{}", report.to_text());
    assert!(t.broken.contains(&"ACP-001".to_owned()), "{:?}", t.broken);
    assert!(!t.deviations.is_empty(), "{:?}", t.deviations);
    for c in &t.counterexamples {
        assert!(c.reproducer.contains("ge-conformance eval --judge"));
    }
    // Failures come first: the trial's scenario is the failure's.
    assert!(!t.counterexamples[0].deviation);
}

#[test]
fn the_verdict_line_names_the_level() {
    for (level, word) in [
        (ge_spec::Conformance::Documented, "level documented"),
        (ge_spec::Conformance::Strict, "level strict"),
    ] {
        let cfg = Config {
            cases: 2,
            judging: Judging::new(ge_spec::Profile::Documented, level),
            ..Config::default()
        };
        let report = certify(&Reference, &cfg, &mut |_, _, _| {}).expect("a run");
        assert!(
            report.verdict_line().contains(word),
            "{}",
            report.verdict_line()
        );
        assert!(report
            .to_markdown()
            .contains(&format!("| level | {level} |")));
        assert!(report
            .to_junit()
            .contains(&format!("<property name=\"level\" value=\"{level}\"/>")));
        assert!(report
            .to_json()
            .contains(&format!("\"level\": \"{level}\"")));
    }
}

#[test]
fn verify_gates_on_waivers_and_scope_when_asked() {
    let cfg = Config {
        cases: 4,
        expectations: ge_conformance::expectations::Expectations::parse(
            "[[waive]]\nmatch = \"ACP-001\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2099-01-01\"\n",
        )
        .expect("waivers"),
        ..Config::default()
    };
    let report = certify(&AcceptsTwo, &cfg, &mut |_, _, _| {}).expect("a run");
    assert_eq!(
        report.verdict,
        Standing::CertifiedWithWaivers,
        "{}",
        report.to_text()
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    bundle::write(&report, dir.path(), false).expect("written");
    let path = dir.path().to_string_lossy().into_owned();
    let verify = |flags: &[&str]| {
        let mut args = vec!["verify"];
        args.extend_from_slice(flags);
        args.push(&path);
        let o = cli(&args);
        let (out, err) = text(&o);
        (o.status.code(), out, err)
    };
    // The vendor's own gate takes it, and says what it is.
    let (code, out, err) = verify(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("certified with waivers for options")
            && out.contains(&format!("{} waived", report.totals.waived)),
        "{out}"
    );
    // A third-party certification does not.
    let (code, out, err) = verify(&["--no-waivers"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("CERTIFIED WITH WAIVERS"), "{err}");
    // Nor one that needs every capability.
    let (code, _, err) = verify(&["--require", "all"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not certified for transfer"), "{err}");
    let (code, out, err) = verify(&["--require", "options"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, _, err) = verify(&["--require", "options,nothing"]);
    assert_eq!(code, Some(2), "{err}");
    // Nor one that asks for more scenarios per property than the run used (4).
    assert!(out.contains("4 scenarios per property"), "{out}");
    let (code, _, err) = verify(&["--min-cases", "5"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ran 4 scenarios each, fewer than --min-cases 5"),
        "{err}"
    );
    let (code, out, err) = verify(&["--min-cases", "4"]);
    assert_eq!(code, Some(0), "{out}{err}");
    // Its profile and tables, when asked.
    let (code, out, err) = verify(&["--profile", "documented"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, _, err) = verify(&["--profile", "upstream"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("judged under the documented profile, not upstream"),
        "{err}"
    );
    // A bundle of other tables never verifies: its verdict cannot be recomputed here.
    forge(dir.path(), |v| v["meta"]["spec_digest"] = "0123abcd".into());
    let (code, out, err) = verify(&[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("made against spec tables 0123abcd"), "{err}");
}

#[test]
fn certify_require_is_read_on_the_command_line() {
    // A bad name is a usage error before any backend starts.
    let o = cli(&["certify", "--require", "options,bogus"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`bogus` is no capability"), "{err}");
    // The reference declares all five: `--require all` holds, and the report records it.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out_dir = dir.path().join("b");
    let o = cli(&[
        "certify",
        "--cases",
        "1",
        "--require",
        "all",
        "--out",
        &out_dir.to_string_lossy(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let report: Report = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("report.json")).expect("report.json"),
    )
    .expect("a report");
    assert_eq!(report.meta.required, Capability::ALL.to_vec());
}

/// A bundle whose failing trials were dropped, its totals, tallies and verdict recomputed to
/// match, still does not verify: an unfiltered run lists every trial of the suite.
#[test]
fn a_bundle_without_its_failing_trials_does_not_verify() {
    let cfg = Config {
        cases: 4,
        ..Config::default()
    };
    let mut report = certify(&AcceptsTwo, &cfg, &mut |_, _, _| {}).expect("a run");
    assert!(!report.certified, "{}", report.to_text());
    report.trials.retain(|t| t.outcome != Outcome::Fail);
    let (totals, clauses, options) = ge_conformance::report::tallies(&report.trials);
    (report.totals, report.clauses, report.options) = (totals, clauses, options);
    report.verdict =
        ge_conformance::report::standing(&report.meta, &report.trials, &report.expired_waivers);
    report.certified = report.verdict.is_certified();
    assert!(report.certified, "the forged report says certified");
    let dir = tempfile::tempdir().expect("a temporary directory");
    bundle::write(&report, dir.path(), false).expect("written");
    let err = bundle::verify(dir.path())
        .expect_err("the forged bundle does not verify")
        .to_string();
    assert!(err.contains("report.json lists no trial"), "{err}");
}

/// A filter that selects only trials of capabilities the backend does not declare judges
/// nothing: a set-up error, never a partial run that passes.
#[test]
fn a_filter_that_judges_nothing_is_a_setup_error() {
    let cfg = Config {
        cases: 4,
        filter: Some("weights-".to_owned()),
        ..Config::default()
    };
    let err = certify(&AcceptsTwo, &cfg, &mut |_, _, _| {}).expect_err("nothing to judge");
    assert!(
        matches!(
            err,
            ge_conformance::certify::SetupError::FilterJudgesNothing(_)
        ),
        "{err}"
    );
    let o = cli(&[
        "certify",
        "--backend",
        "reference",
        "--filter",
        "no-such-trial",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
