//! `report.xml` against a published JUnit schema: the Jenkins xUnit plugin's `junit-10.xsd`
//! (MIT; where it comes from is said at the top of `tests/junit/junit-10.xsd`), checked with
//! `xmllint --schema` from Debian's `libxml2-utils` (`.ci/run` installs it when missing; without
//! it these tests show as ignored, never as passed).
//!
//! The whole report is validated, its `<testsuites>` root included, and each `<testsuite>` on
//! its own as well: that is where the schema defines what CI dashboards read (tests, failures,
//! times, timestamps, properties, system-err).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use ge_conformance::certify::{self, Config};
use ge_conformance::libtest::{Arguments, Failed, Trial};
use ge_reference::Reference;
use ge_spec::vocab::{TransferObservation, TransferScenario};
use ge_spec::{Answer, Backend, Capability};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/junit/junit-10.xsd");

/// The reference's transfer plans with every fused input sent directly instead.
#[derive(Debug)]
struct NoFusion;

impl Backend for NoFusion {
    fn name(&self) -> &str {
        "no-fusion"
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        BTreeSet::from([Capability::Transfer])
    }
    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        let mut o = Reference.transfer(s)?;
        o.direct.append(&mut o.fused);
        o.fused_bytes = 0;
        Ok(o)
    }
}

fn junit(backend: &dyn Backend, stderr: &str) -> String {
    let cfg = Config {
        filter: Some("transfer-examples/".to_owned()),
        ..Config::default()
    };
    let mut report =
        certify::certify(backend, &cfg, &mut |_, _, _| {}).expect("a filter that matches");
    report.backend_stderr = stderr.to_owned();
    report.to_junit()
}

/// Runs `xmllint --schema` on one document; the error is what xmllint said.
fn xmllint(dir: &Path, name: &str, xml: &str) -> Result<(), String> {
    let file = dir.join(name);
    std::fs::write(&file, xml).map_err(|e| e.to_string())?;
    let out = Command::new("xmllint")
        .args(["--noout", "--schema", SCHEMA])
        .arg(&file)
        .output()
        .map_err(|e| format!("xmllint: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Validates `xml` with the schema, as a whole and suite by suite, and checks the root's
/// attributes.
fn validate(xml: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = xml
        .lines()
        .find(|l| l.trim_start().starts_with("<testsuites"))
        .ok_or("no <testsuites> root")?;
    for attr in ["name=", "tests=", "failures=", "errors=", "time="] {
        if !root.contains(attr) {
            return Err(format!("the root has no {attr}: {root}"));
        }
    }
    let mut suites = 0;
    let mut rest = xml;
    while let Some(start) = rest.find("<testsuite ") {
        let tail = &rest[start..];
        let end = tail
            .find("</testsuite>")
            .map(|e| e + "</testsuite>".len())
            .ok_or("a <testsuite> is not closed")?;
        suites += 1;
        let doc = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
            &tail[..end]
        );
        xmllint(dir.path(), &format!("suite-{suites}.xml"), &doc)?;
        rest = &tail[end..];
    }
    if suites == 0 {
        return Err("no <testsuite> in the report".into());
    }
    xmllint(dir.path(), "report.xml", xml)
        .map_err(|e| format!("the whole report does not validate: {e}"))?;
    Ok(())
}

fn the_references_report_validates() -> Result<(), Failed> {
    let xml = junit(&Reference, "");
    validate(&xml).map_err(|e| format!("{e}\n{xml}"))?;
    for needle in [
        "time=\"",
        "timestamp=\"",
        "<testcase name=\"transfer-examples/",
    ] {
        if !xml.contains(needle) {
            return Err(format!("no `{needle}` in:\n{xml}").into());
        }
    }
    Ok(())
}

fn a_failing_backends_report_validates_and_names_what_broke() -> Result<(), Failed> {
    let xml = junit(&NoFusion, "no-fusion: a line of standard error\n");
    validate(&xml).map_err(|e| format!("{e}\n{xml}"))?;
    // The failure message is the broken clause and the first difference, never just "fail".
    if !xml.contains("<failure message=\"[IFS-") || xml.contains("message=\"fail\"") {
        return Err(format!("the failures do not name their clause:\n{xml}").into());
    }
    if !xml.contains("<system-err>") || !xml.contains("a line of standard error") {
        return Err(format!("the backend's standard error is not in system-err:\n{xml}").into());
    }
    Ok(())
}

fn expired_and_stale_waivers_validate_as_their_own_suite() -> Result<(), Failed> {
    let expectations = ge_conformance::expectations::Expectations::parse(
        r#"
[[waive]]
match = "transfer-examples/ten-inputs-threshold-0"
reason = "old"
tracker = "ENG-1"
expires = "2020-01-01"

[[waive]]
match = "nothing/*"
reason = "stale"
tracker = "ENG-2"
expires = "2099-01-01"
"#,
    )
    .map_err(|e| e.to_string())?;
    let cfg = Config {
        filter: Some("transfer-examples/".to_owned()),
        expectations,
        ..Config::default()
    };
    let report =
        certify::certify(&Reference, &cfg, &mut |_, _, _| {}).map_err(|e| e.to_string())?;
    let xml = report.to_junit();
    validate(&xml).map_err(|e| format!("{e}\n{xml}"))?;
    for needle in [
        "<testsuite name=\"waivers\"",
        "name=\"waiver/expired/transfer-examples/ten-inputs-threshold-0\"",
        "name=\"waiver/stale/nothing/*\"",
    ] {
        if !xml.contains(needle) {
            return Err(format!("no `{needle}` in:\n{xml}").into());
        }
    }
    Ok(())
}

fn the_schema_refuses_a_suite_it_does_not_describe() -> Result<(), Failed> {
    let xml = junit(&Reference, "");
    // A testsuite without its required `tests` count, and a testcase without its name.
    let broken = xml.replacen(" tests=\"4\" skipped", " skipped", 2);
    if broken == xml {
        return Err(format!("no `tests=\"4\"` to take out of:\n{xml}").into());
    }
    match validate(&broken) {
        Err(e) if e.contains("tests") => {}
        other => return Err(format!("a suite without `tests` passed: {other:?}").into()),
    }
    let nameless = xml.replacen("<testcase name=", "<testcase label=", 1);
    match validate(&nameless) {
        Err(e) if e.contains("name") => Ok(()),
        other => Err(format!("a nameless testcase passed: {other:?}").into()),
    }
}

fn main() {
    let missing = Command::new("xmllint").arg("--version").output().is_err();
    let trial = |name: &'static str, f: fn() -> Result<(), Failed>| {
        Trial::test(name, f).with_ignored_flag(missing)
    };
    let trials = vec![
        trial(
            "the_references_report_validates",
            the_references_report_validates,
        ),
        trial(
            "a_failing_backends_report_validates_and_names_what_broke",
            a_failing_backends_report_validates_and_names_what_broke,
        ),
        trial(
            "expired_and_stale_waivers_validate_as_their_own_suite",
            expired_and_stale_waivers_validate_as_their_own_suite,
        ),
        trial(
            "the_schema_refuses_a_suite_it_does_not_describe",
            the_schema_refuses_a_suite_it_does_not_describe,
        ),
    ];
    if missing {
        eprintln!("xmllint is not installed (Debian: apt-get install libxml2-utils): the JUnit schema tests are ignored");
    }
    ge_conformance::libtest::run(&Arguments::from_args(), trials).exit();
}
