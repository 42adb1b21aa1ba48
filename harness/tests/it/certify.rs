//! The certification run as a vendor sees it: the reference certifies; waivers, unexpected
//! passes, expired and stale entries; a panicking backend fails only its own trials; a backend
//! that declares a capability and refuses it fails; bundles verify and catch tampering.

use std::collections::BTreeSet;

use crate::common::OptionsOnly;

use ge_conformance::bundle;
use ge_conformance::certify::{certify, Config};
use ge_conformance::expectations::{Date, Expectations};
use ge_conformance::report::{Outcome, Report, Standing};
use ge_reference::Reference;
use ge_spec::vocab::{Capability, OptionsObservation, OptionsScenario};
use ge_spec::{Answer, Backend, NotSupported};

fn run(backend: &dyn Backend, cfg: &Config) -> Report {
    certify(backend, cfg, &mut |_, _, _| {}).expect("a run")
}

fn small() -> Config {
    Config {
        cases: 16,
        today: Date(2026, 11, 29),
        ..Config::default()
    }
}

/// Gets the fusion threshold range wrong by one.
struct OffByOne;

impl Backend for OffByOne {
    fn name(&self) -> &str {
        "off-by-one"
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        // The largest threshold of the options table, and the one past it taken for it.
        let max = ge_conformance::gen::transfer::max_threshold();
        let (max, past) = (max.to_string(), (max + 1).to_string());
        let mut s = s.clone();
        for level in ge_spec::Level::ALL {
            if let Some(v) = s.options.at_mut(level).get_mut("ge.exec.input_fusion_size") {
                if *v == past {
                    v.clone_from(&max);
                }
            }
        }
        Reference.options(&s)
    }
}

/// Panics on every scenario with a graph-level option.
struct Panicky;

impl Backend for Panicky {
    fn name(&self) -> &str {
        "panicky"
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        assert!(s.options.graph.is_empty(), "graph options are too hard");
        Reference.options(s)
    }
}

/// Declares the options capability but refuses it.
struct Liar;

impl Backend for Liar {
    fn name(&self) -> &str {
        "liar"
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }
    fn options(&self, _: &OptionsScenario) -> Answer<OptionsObservation> {
        Err(NotSupported::new(Capability::Options, "changed my mind"))
    }
}

#[test]
fn the_reference_certifies_at_both_levels() {
    for level in ge_spec::Conformance::ALL {
        let cfg = Config {
            judging: ge_conformance::judging::Judging::new(ge_spec::Profile::Documented, level),
            ..small()
        };
        let report = run(&Reference, &cfg);
        assert_eq!(report.verdict, Standing::Certified, "{}", report.to_text());
        assert_eq!(report.meta.level, level);
        assert!(report
            .verdict_line()
            .starts_with(&format!("CERTIFIED at level {level}")));
    }
}

#[test]
fn the_reference_passes_every_options_trial() {
    let cfg = Config {
        filter: Some("options".into()),
        ..small()
    };
    let report = run(&Reference, &cfg);
    // A filtered run is partial: never a certification, whatever it finds.
    assert_eq!(report.verdict, Standing::Partial, "{}", report.to_text());
    assert!(!report.certified);
    assert_eq!(report.totals.failed, 0);
    assert!(report.totals.passed > 150);
    let prop = report
        .trials
        .iter()
        .find(|t| t.name == "property/options")
        .expect("the options property runs");
    // The boundary catalogue, then the 16 random scenarios asked for.
    let boundaries = ge_conformance::gen::boundary_scenarios(Capability::Options).len();
    assert!(boundaries > 1000);
    assert_eq!(
        (prop.outcome, prop.scenarios as usize),
        (Outcome::Pass, boundaries + 16)
    );
    // A report says which reference certified: the name and the version of the crate (one
    // workspace version for the suite and the reference).
    assert_eq!(
        (
            report.meta.backend.as_str(),
            report.meta.backend_version.as_str()
        ),
        ("ge-reference", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn undeclared_capabilities_are_not_supported_never_passed() {
    let report = run(&OptionsOnly, &small());
    assert!(report.certified, "{}", report.to_text());
    for t in &report.trials {
        if t.capability != Capability::Options {
            assert_eq!(t.outcome, Outcome::NotSupported, "{}", t.name);
        }
    }
}

#[test]
fn a_wrong_backend_fails_with_a_reproducer() {
    let cfg = Config {
        filter: Some("options-".into()),
        backend_arg: "exec:./engine".into(),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    assert!(!report.certified);
    let failed: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .collect();
    let names: Vec<_> = failed.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["options-numbers/ifs-rejects-max-plus-one"]);
    // With an invalid value beside it the option is rejected anyway: the text is kept, only the
    // suite's choice of one error per invalid value (the form, OPT-012) is missed, a deviation
    // at this level.
    let two = report
        .trials
        .iter()
        .find(|t| t.name == "options-defaults/two-invalid-levels-two-errors")
        .expect("the case ran");
    assert_eq!(two.outcome, Outcome::Deviation, "{:?}", two.message);
    assert_eq!(two.deviations, ["OPT-012"]);
    let t = failed[0];
    assert_eq!(t.name, "options-numbers/ifs-rejects-max-plus-one");
    assert!(t.broken.contains(&"IFS-001".to_owned()));
    assert!(t.scenario.is_some());
    assert_eq!(
        t.reproducer.as_deref(),
        Some("ge-conformance eval --backend exec:./engine --case options-numbers/ifs-rejects-max-plus-one")
    );
    let text = report.to_text();
    assert!(
        text.contains("NOT CERTIFIED") && text.contains("reproduce:"),
        "{text}"
    );
}

#[test]
fn a_property_failure_is_shrunk_and_reproducible() {
    let cfg = Config {
        filter: Some("property/options".into()),
        cases: 512,
        seed: 7,
        ..small()
    };
    let report = run(&Panicky, &cfg);
    let t = &report.trials[0];
    assert_eq!(t.outcome, Outcome::Fail, "{}", report.to_text());
    assert!(t
        .message
        .as_deref()
        .unwrap_or_default()
        .contains("panicked"));
    let reproducer = t.reproducer.as_deref().expect("a reproducer");
    assert!(
        reproducer.starts_with("echo '{\"capability\":\"options\"")
            && reproducer.ends_with("| ge-conformance eval --judge --backend reference"),
        "{reproducer}"
    );
    // Shrinking leaves a single graph-level option.
    let scenario = t.scenario.as_ref().expect("the minimal scenario");
    assert_eq!(
        scenario["options"]["graph"].as_object().map(|m| m.len()),
        Some(1),
        "{scenario}"
    );
    // The same seed gives the same minimal scenario.
    let again = run(&Panicky, &cfg);
    assert_eq!(again.trials[0].scenario, t.scenario);
}

#[test]
fn a_panicking_backend_fails_only_its_cases_and_the_report_is_written() {
    let cfg = Config {
        filter: Some("options-".into()),
        ..small()
    };
    let report = run(&Panicky, &cfg);
    let failed = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .count();
    let passed = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Pass)
        .count();
    assert!(
        failed > 50 && passed > 50,
        "{failed} failed, {passed} passed"
    );
    assert!(report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .all(|t| t
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("panicked")));
}

#[test]
fn declaring_a_capability_and_refusing_it_fails() {
    let cfg = Config {
        filter: Some("options-defaults/".into()),
        ..small()
    };
    let report = run(&Liar, &cfg);
    assert!(report.trials.iter().all(|t| t.outcome == Outcome::Fail));
    assert!(report.trials[0]
        .message
        .as_deref()
        .unwrap_or_default()
        .contains("declares capability"));
}

fn waivers(text: &str) -> Expectations {
    Expectations::parse(text).expect("valid expectations")
}

#[test]
fn waivers_waive_and_unexpected_passes_fail() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        expectations: waivers(
            r#"
[[waive]]
match = "IFS-001"
reason = "range check off by one"
tracker = "ENG-1"
expires = "2027-01-01"

[[waive]]
match = "options-numbers/ifs-accepts-zero"
reason = "thought to fail"
tracker = "ENG-2"
expires = "2027-01-01"

[[waive]]
match = "nothing/*"
reason = "stale"
tracker = "ENG-3"
expires = "2027-01-01"
"#,
        ),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    let outcome = |name: &str| {
        report
            .trials
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.outcome)
    };
    assert_eq!(
        outcome("options-numbers/ifs-rejects-max-plus-one"),
        Some(Outcome::Waived)
    );
    assert_eq!(
        outcome("options-numbers/ifs-accepts-zero"),
        Some(Outcome::UnexpectedPass)
    );
    // Other IFS-001 cases pass: a clause waiver waives failures of its clause and leaves a
    // passing trial that cites it a pass.
    assert_eq!(
        outcome("options-numbers/ifs-rejects-huge"),
        Some(Outcome::Pass)
    );
    assert!(!report.certified);
    assert_eq!(report.stale_waivers, vec!["nothing/* (ENG-3)".to_owned()]);
}

#[test]
fn a_clause_waiver_waives_that_clause_inside_a_property_and_nothing_else() {
    let waive = |clause: &str| {
        Config {
        filter: Some("property/options".into()),
        expectations: waivers(&format!(
            "[[waive]]\nmatch = \"{clause}\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\n"
        )),
        ..small()
    }
    };
    let property = |report: &ge_conformance::report::Report| {
        report
            .trials
            .iter()
            .find(|t| t.name == "property/options")
            .cloned()
            .expect("the property ran")
    };
    // The off-by-one range check breaks IFS-001 only: waiving it waives the property.
    let t = property(&run(&OffByOne, &waive("IFS-001")));
    assert_eq!(t.outcome, Outcome::Waived, "{:?}", t.message);
    // A clause the property covers but that the backend does not break waives nothing: the
    // property still fails on IFS-001 (a waiver matching the clauses the trial covers used
    // to waive it whole).
    let t = property(&run(&OffByOne, &waive("OPT-001")));
    assert_eq!(t.outcome, Outcome::Fail, "{:?}", t.message);
    assert_eq!(t.broken, ["IFS-001"]);
}

/// Answers every options scenario with an empty observation: wrong almost everywhere.
struct Empty;

impl Backend for Empty {
    fn name(&self) -> &str {
        "empty"
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }
    fn options(&self, _: &OptionsScenario) -> Answer<OptionsObservation> {
        Ok(OptionsObservation::default())
    }
}

#[test]
fn a_waiver_covers_failures_never_the_judging() {
    let cfg = Config {
        expectations: waivers(
            "[[waive]]\nmatch = \"*\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\nbroad = true\n",
        ),
        ..small()
    };
    let report = run(&Empty, &cfg);
    assert!(report.totals.waived > 0 && report.totals.failed == 0);
    assert!(
        !report.certified,
        "a run whose every failure is waived judged nothing: {}",
        report.verdict_line()
    );
}

#[test]
fn a_waived_failure_alone_certifies_but_an_expired_waiver_does_not() {
    let entry = |expires: &str| {
        waivers(&format!(
            "[[waive]]\nmatch = \"options-numbers/ifs-rejects-max-plus-one\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"{expires}\"\n"
        ))
    };
    let base = Config {
        filter: Some("options-numbers/".into()),
        ..small()
    };
    let ok = run(
        &OffByOne,
        &Config {
            expectations: entry("2026-11-29"),
            ..base.clone()
        },
    );
    assert_eq!(ok.verdict, Standing::Partial, "{}", ok.to_text());
    assert_eq!((ok.totals.waived, ok.totals.failed), (1, 0));
    let expired = run(
        &OffByOne,
        &Config {
            expectations: entry("2026-11-28"),
            ..base
        },
    );
    assert!(!expired.certified);
    assert_eq!(expired.expired_waivers.len(), 1);
}

#[test]
fn bundles_verify_and_catch_tampering() {
    let cfg = Config {
        filter: Some("options-defaults/".into()),
        ..small()
    };
    let report = run(&Reference, &cfg);
    let dir = tempfile::tempdir().expect("temp dir");
    bundle::write(&report, dir.path(), false).expect("bundle written");
    let back = bundle::verify(dir.path()).expect("a fresh bundle verifies");
    assert_eq!(back, report);

    let check = |mutate: &dyn Fn(&std::path::Path), expect: &str| {
        let d = tempfile::tempdir().expect("temp dir");
        bundle::write(&report, d.path(), false).expect("bundle written");
        mutate(d.path());
        let err = bundle::verify(d.path())
            .expect_err("tampering is caught")
            .to_string();
        assert!(err.contains(expect), "expected `{expect}` in: {err}");
    };
    check(
        &|p| std::fs::write(p.join("report.md"), "# all good\n").unwrap(),
        "report.md was changed",
    );
    check(
        &|p| std::fs::remove_file(p.join("report.xml")).unwrap(),
        "report.xml is missing",
    );
    check(
        &|p| std::fs::write(p.join("extra.txt"), "x").unwrap(),
        "extra.txt is not in the manifest",
    );
    check(
        &|p| {
            let text = std::fs::read_to_string(p.join("report.json"))
                .unwrap()
                .replace(ge_spec::Spec::embedded().digest(), &"0".repeat(64));
            std::fs::write(p.join("report.json"), &text).unwrap();
            // Re-sign the manifest so only the spec digest check can catch it.
            let manifest = std::fs::read_to_string(p.join(bundle::MANIFEST)).unwrap();
            let digest = sha256(text.as_bytes());
            let fixed: String = manifest
                .lines()
                .map(|l| {
                    if l.ends_with("  report.json") {
                        format!("{digest}  report.json\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            std::fs::write(p.join(bundle::MANIFEST), fixed).unwrap();
        },
        "made against spec tables",
    );
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn reports_render_in_every_format() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    let json: serde_json::Value =
        serde_json::from_str(&report.to_json()).expect("JSON report parses");
    assert_eq!(
        json["meta"]["spec_digest"],
        ge_spec::Spec::embedded().digest()
    );
    assert_eq!(json["meta"]["backend"], "off-by-one");
    let md = report.to_markdown();
    assert!(md.contains("| verdict | **not certified** |") && md.contains("`IFS-001`"));
    let junit = report.to_junit();
    assert!(
        junit.starts_with("<?xml")
            && junit.contains("<failure")
            && junit.contains("failures=\"1\"")
    );
    assert_eq!(junit.matches("<testcase").count(), report.trials.len());
}

#[test]
fn junit_stays_well_formed_whatever_a_backend_says() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        ..small()
    };
    let mut report = run(&OffByOne, &cfg);
    let failing = report
        .trials
        .iter_mut()
        .find(|t| t.outcome == Outcome::Fail)
        .expect("a failing trial");
    // Characters XML 1.0 cannot carry, even as references.
    failing.message = Some("bad \u{fffe} \u{ffff} \u{1} \u{1f} & <end>".into());
    let junit = report.to_junit();
    for c in junit.chars() {
        let ok = matches!(c, '\t' | '\n' | '\r')
            || ('\u{20}'..='\u{d7ff}').contains(&c)
            || ('\u{e000}'..='\u{fffd}').contains(&c)
            || c >= '\u{10000}';
        assert!(ok, "U+{:04X} is not an XML 1.0 character", c as u32);
    }
    assert!(junit.contains("\\u{fffe}") && junit.contains("&amp; &lt;end&gt;"));
}

#[test]
fn impossible_waiver_dates_are_refused_with_their_line() {
    for date in ["2099-02-31", "0000-01-01", "2027-02-29", "2027-13-01"] {
        let text = format!(
            "[[waive]]\nmatch = \"x\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"{date}\"\n"
        );
        let err = Expectations::parse(&text).expect_err(date).to_string();
        assert!(err.contains("line 5"), "{date}: {err}");
        assert!(err.contains(date), "{date}: {err}");
    }
    assert!(Expectations::parse(
        "[[waive]]\nmatch = \"x\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2028-02-29\"\n"
    )
    .is_ok());
}

#[test]
fn a_glob_waiver_accepts_the_failures_it_covers_and_leaves_the_passes_alone() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        expectations: waivers(
            r#"
[[waive]]
match = "options-numbers/ifs-*"
reason = "range check off by one"
tracker = "ENG-1"
expires = "2027-01-01"
"#,
        ),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    let ifs: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.name.starts_with("options-numbers/ifs-"))
        .collect();
    assert!(ifs.iter().any(|t| t.outcome == Outcome::Waived));
    assert!(ifs.iter().any(|t| t.outcome == Outcome::Pass));
    assert!(
        ifs.iter()
            .all(|t| matches!(t.outcome, Outcome::Waived | Outcome::Pass)),
        "a glob insists on no trial failing"
    );
    assert_eq!(report.totals.unexpected_pass, 0);
    assert!(report.stale_waivers.is_empty());
}

/// Runs the `cargo test` route's trials named exactly `names` and returns libtest's tally.
fn libtest_run<B: Backend + Send + Sync + 'static>(
    suite: ge_conformance::libtest::Suite<B>,
    names: &[&str],
) -> ge_conformance::libtest::Conclusion {
    let trials: Vec<_> = suite
        .trials()
        .into_iter()
        .filter(|t| names.contains(&t.name()))
        .collect();
    assert_eq!(trials.len(), names.len(), "every named trial exists");
    // Into a file of its own: an inner libtest summary in the test log would read as this
    // binary's own.
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let args = ge_conformance::libtest::Arguments::parse([
        "--test-threads=1".to_owned(),
        format!("--logfile={}", log.path().display()),
    ])
    .expect("libtest's arguments");
    ge_conformance::libtest::run(&args, trials)
}

/// A backend that declares nothing.
struct NoCapability;

impl Backend for NoCapability {
    fn name(&self) -> &str {
        "no-capability"
    }

    fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
        std::collections::BTreeSet::new()
    }
}

#[test]
fn under_cargo_test_a_backend_that_declares_no_capability_fails() {
    let suite = ge_conformance::libtest::Suite::new(NoCapability);
    let conclusion = libtest_run(suite, &["setup/capabilities"]);
    assert_eq!(
        conclusion.num_failed, 1,
        "nothing to certify must fail the run"
    );
}

#[test]
fn under_cargo_test_a_required_capability_the_backend_drops_fails() {
    let suite = ge_conformance::libtest::Suite::new(OptionsOnly).require(Capability::ALL);
    let conclusion = libtest_run(
        suite,
        &[
            "scope/transfer",
            "scope/memory",
            "scope/session",
            "scope/weights",
        ],
    );
    assert_eq!(conclusion.num_failed, 4, "each missing capability fails");
    let suite = ge_conformance::libtest::Suite::new(OptionsOnly).require([Capability::Options]);
    assert!(
        !suite
            .trials()
            .iter()
            .any(|t| t.name().starts_with("scope/")),
        "a declared requirement adds no trial"
    );
}

#[test]
fn under_cargo_test_a_broad_waiver_fails_the_setup() {
    let cfg = Config {
        expectations: waivers(
            "[[waive]]\nmatch = \"*\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2099-01-01\"\n",
        ),
        ..small()
    };
    let suite = ge_conformance::libtest::Suite::new(OptionsOnly).with_config(cfg);
    let conclusion = libtest_run(suite, &["setup/waivers"]);
    assert_eq!(conclusion.num_failed, 1);
}

/// The waivers both routes are tried with: one waived failure whose waiver has expired, one
/// exact waiver on a passing trial, one glob that matches nothing.
const ROUTES: &str = r#"
[[waive]]
match = "options-numbers/ifs-rejects-max-plus-one"
reason = "off by one"
tracker = "ENG-1"
expires = "2026-11-01"

[[waive]]
match = "options-numbers/ifs-accepts-zero"
reason = "thought to fail"
tracker = "ENG-2"
expires = "2027-01-01"

[[waive]]
match = "nothing/*"
reason = "stale"
tracker = "ENG-3"
expires = "2027-01-01"
"#;

#[test]
fn under_cargo_test_waivers_behave_as_under_certify_and_nothing_panics_before_the_run() {
    let suite = || {
        ge_conformance::libtest::Suite::new(OffByOne).with_config(Config {
            expectations: waivers(ROUTES),
            ..small()
        })
    };
    // The waived failure is ignored (not passed), its expired waiver fails a trial of its own,
    // the stale one shows as ignored, and an exact waiver on a passing trial fails it.
    let waived = libtest_run(suite(), &["options-numbers/ifs-rejects-max-plus-one"]);
    assert_eq!((waived.num_ignored, waived.num_failed), (1, 0));
    let expired = libtest_run(
        suite(),
        &["waiver/expired/options-numbers/ifs-rejects-max-plus-one"],
    );
    assert_eq!(expired.num_failed, 1);
    let stale = libtest_run(suite(), &["waiver/stale/nothing/*"]);
    assert_eq!((stale.num_ignored, stale.num_failed), (1, 0));
    let unexpected = libtest_run(suite(), &["options-numbers/ifs-accepts-zero"]);
    assert_eq!(unexpected.num_failed, 1);
}

/// Under `certify`, expired and stale waivers carry the names `cargo test` gives their trials,
/// in every rendering: the JUnit report has them as test cases (the expired one failing), so
/// a dashboard shows why a run whose trials all passed did not certify.
#[test]
fn every_rendering_names_expired_and_stale_waivers_as_cargo_test_does() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        expectations: waivers(ROUTES),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    assert!(!report.certified);
    let expired = "waiver/expired/options-numbers/ifs-rejects-max-plus-one";
    let stale = "waiver/stale/nothing/*";
    for (format, text) in [
        ("text", report.to_text()),
        ("markdown", report.to_markdown()),
        ("html", report.to_html()),
    ] {
        assert!(
            text.contains(expired) && text.contains(stale),
            "{format} names both waivers:\n{text}"
        );
    }
    let back = quick_junit::Report::deserialize_from_str(&report.to_junit())
        .expect("the JUnit report reads back");
    let suite = back
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "waivers")
        .expect("a waivers suite");
    let status = |name: &str| {
        suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .map(|c| c.status.clone())
    };
    assert!(matches!(
        status(expired),
        Some(quick_junit::TestCaseStatus::NonSuccess {
            kind: quick_junit::NonSuccessKind::Failure,
            ..
        })
    ));
    assert!(matches!(
        status(stale),
        Some(quick_junit::TestCaseStatus::Skipped { .. })
    ));
}

#[test]
fn junit_carries_what_dashboards_read_and_reads_back() {
    let cfg = Config {
        filter: Some("options-numbers/".into()),
        ..small()
    };
    let mut report = run(&OffByOne, &cfg);
    report.backend_stderr = "engine: range check at line 7\n".into();
    let xml = report.to_junit();
    let back =
        quick_junit::Report::deserialize_from_str(&xml).expect("the JUnit report reads back");
    assert_eq!(back.tests, report.trials.len());
    // The root carries only what junit-10.xsd lists for it; each suite has its timestamp.
    assert!(back.timestamp.is_none(), "{xml}");
    let suite = &back.test_suites[0];
    assert!(suite.timestamp.is_some() && suite.time.is_some());
    assert!(suite
        .system_err
        .as_ref()
        .is_some_and(|e| e.as_str().contains("range check at line 7")));
    let failed: Vec<_> = suite
        .test_cases
        .iter()
        .filter(|c| !matches!(c.status, quick_junit::TestCaseStatus::Success { .. }))
        .filter_map(|c| match &c.status {
            quick_junit::TestCaseStatus::NonSuccess { message, .. } => message.clone(),
            _ => None,
        })
        .collect();
    assert!(!failed.is_empty());
    for m in failed {
        assert!(
            m.as_str().starts_with("[IFS-001]"),
            "the broken clause first: {m:?}"
        );
        assert!(
            m.as_str().len() > "[IFS-001] ".len(),
            "and what differs: {m:?}"
        );
    }
    assert!(suite.test_cases.iter().all(|c| c.time.is_some()));
}

#[test]
fn a_waiver_over_a_whole_capability_or_the_suite_is_refused_unless_marked_broad() {
    for pattern in ["*", "???-*", "options-*", "transfer-*"] {
        let text = format!(
            "[[waive]]\nmatch = \"{pattern}\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\n"
        );
        let cfg = Config {
            expectations: waivers(&text),
            ..small()
        };
        let refused = certify(&Reference, &cfg, &mut |_, _, _| {}).map(|_| ());
        assert!(
            matches!(&refused, Err(ge_conformance::certify::SetupError::Broad(_))),
            "{pattern}: {refused:?}"
        );
        let broad = Config {
            expectations: waivers(&format!("{text}broad = true\n")),
            filter: Some("options-numbers/".into()),
            ..small()
        };
        assert!(ge_conformance::certify::check(&broad).is_ok(), "{pattern}");
    }
    // A glob over part of a capability is taken as it is.
    let part = Config {
        expectations: waivers(
            "[[waive]]\nmatch = \"options-numbers/*\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\n",
        ),
        ..small()
    };
    assert!(ge_conformance::certify::check(&part).is_ok());
}

#[test]
fn waived_failures_make_a_verdict_of_their_own_and_a_clause_waiver_that_waives_nothing_is_stale() {
    let cfg = Config {
        expectations: waivers(
            "[[waive]]\nmatch = \"IFS-001\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\n\
             [[waive]]\nmatch = \"ACP-001\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2027-01-01\"\n",
        ),
        ..small()
    };
    let report = run(&OffByOne, &cfg);
    assert_eq!(
        report.verdict,
        Standing::CertifiedWithWaivers,
        "{}",
        report.to_text()
    );
    assert!(report.certified);
    let line = report.verdict_line();
    assert!(
        line.starts_with(&format!(
            "CERTIFIED WITH WAIVERS ({})",
            report.totals.waived
        )),
        "{line}"
    );
    // Every trial citing ACP-001 passes: its waiver waived nothing.
    assert_eq!(report.stale_waivers, vec!["ACP-001 (T)".to_owned()]);
    // A clean run is CERTIFIED, and says no waiver.
    let clean = run(&Reference, &small());
    assert_eq!(clean.verdict, Standing::Certified);
    assert!(!clean.verdict_line().contains("WAIVERS"));
}

#[test]
fn a_required_capability_the_backend_does_not_declare_fails_the_run() {
    let cfg = Config {
        required: [Capability::Options, Capability::Transfer]
            .into_iter()
            .collect(),
        ..small()
    };
    let report = run(&OptionsOnly, &cfg);
    assert_eq!(report.verdict, Standing::NotCertified);
    assert!(
        report
            .verdict_line()
            .contains("required but not declared: transfer"),
        "{}",
        report.verdict_line()
    );
    assert_eq!(
        report.meta.required,
        vec![Capability::Options, Capability::Transfer]
    );
    // Required and declared: the scope holds.
    let options = Config {
        required: [Capability::Options].into_iter().collect(),
        ..small()
    };
    assert!(run(&OptionsOnly, &options).certified);
    assert_eq!(
        ge_conformance::certify::parse_required("all").map(|c| c.len()),
        Ok(5)
    );
    assert!(ge_conformance::certify::parse_required("options, nope").is_err());
}
