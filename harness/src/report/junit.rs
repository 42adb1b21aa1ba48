//! The JUnit XML rendering of a report (`report.xml`, `--format junit`): one test suite per
//! capability, one test case per trial, and a suite for expired and stale waivers.

use std::fmt::Write as _;
use std::time::Duration;

use ge_spec::Capability;

use super::xml::{Case, Document, Status, Suite};
use super::{Outcome, Report, TrialResult};

impl Report {
    /// JUnit XML: one test suite per capability, one test case per trial. A deviation is a
    /// skipped test whose message starts with `deviation`: not a pass, not a failure.
    pub fn to_junit(&self) -> String {
        self.junit_document().to_xml()
    }

    /// The JUnit document, before it is written.
    fn junit_document(&self) -> Document {
        let m = &self.meta;
        let timestamp = m.started.as_deref().and_then(crate::clock::junit_timestamp);
        let properties: Vec<(String, String)> = self
            .junit_properties()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), spelled(&v)))
            .collect();
        let stderr_with = self.stderr_suite();
        let mut suites = Vec::new();
        for cap in Capability::ALL {
            let trials: Vec<_> = self.trials.iter().filter(|x| x.capability == cap).collect();
            if trials.is_empty() {
                continue;
            }
            suites.push(Suite {
                name: cap.as_str().to_owned(),
                timestamp: timestamp.clone(),
                time: Some(Duration::from_micros(trials.iter().map(|t| t.micros).sum())),
                properties: properties.clone(),
                system_err: (stderr_with == Some(cap) && !self.backend_stderr.is_empty())
                    .then(|| spelled(&self.backend_stderr)),
                cases: trials.into_iter().map(|t| junit_case(cap, t)).collect(),
            });
        }
        suites.extend(self.waiver_suite(timestamp));
        Document {
            name: "ge-conformance".to_owned(),
            time: Duration::from_micros(m.micros),
            suites,
        }
    }

    /// What every suite carries as properties: the tables, the backend, the judging, the seed
    /// and whatever else the run recorded.
    fn junit_properties(&self) -> Vec<(&'static str, String)> {
        let m = &self.meta;
        let mut properties = vec![
            ("spec_digest", m.spec_digest.clone()),
            ("backend", m.backend.clone()),
            ("profile", m.profile.to_string()),
            ("level", m.level.to_string()),
            ("verdict", self.verdict.as_str().to_owned()),
            ("seed", m.seed.to_string()),
        ];
        for (name, value) in [
            ("filter", &m.filter),
            ("local_cases", &m.local_cases),
            ("upstream_source", &m.upstream_source),
            ("confinement", &m.confinement),
            ("host", &m.host),
        ] {
            if let Some(v) = value {
                properties.push((name, v.clone()));
            }
        }
        properties
    }

    /// The suite the backend's standard error goes with: the first that failed, or the first.
    fn stderr_suite(&self) -> Option<Capability> {
        Capability::ALL
            .iter()
            .copied()
            .filter(|c| self.trials.iter().any(|t| t.capability == *c))
            .find(|c| {
                self.trials
                    .iter()
                    .any(|t| t.capability == *c && t.outcome.fails_run())
            })
            .or_else(|| self.trials.first().map(|t| t.capability))
    }

    /// Expired and stale waivers as test cases, named as under `cargo test`: a dashboard shows
    /// why a run with no failing trial failed. `None` when there are none.
    fn waiver_suite(&self, timestamp: Option<String>) -> Option<Suite> {
        let notes = self.waiver_notes();
        if notes.is_empty() {
            return None;
        }
        let cases = notes
            .into_iter()
            .map(|n| Case {
                name: spelled(&n.name),
                classname: "waivers".to_owned(),
                // A waiver runs nothing; dashboards that sum times want the attribute.
                time: Some(Duration::ZERO),
                status: if n.fails {
                    Status::Failure {
                        message: spelled(&n.why),
                        ty: "expired-waiver".to_owned(),
                        text: None,
                    }
                } else {
                    Status::Skipped {
                        message: spelled(&n.why),
                    }
                },
            })
            .collect();
        Some(Suite {
            name: "waivers".to_owned(),
            timestamp,
            time: Some(Duration::ZERO),
            properties: Vec::new(),
            cases,
            system_err: None,
        })
    }
}

/// One trial as a test case of its capability's suite.
fn junit_case(cap: Capability, trial: &TrialResult) -> Case {
    let message = trial.message.clone().unwrap_or_default();
    let status = match trial.outcome {
        Outcome::Pass => Status::Success,
        // What a dashboard shows in one line: the broken clauses and the first line of what
        // differs; the whole message and the reproducer below it.
        Outcome::Fail | Outcome::UnexpectedPass => Status::Failure {
            message: spelled(&junit_failure_line(&trial.broken, &message)),
            ty: trial.outcome.as_str().to_owned(),
            text: Some(spelled(&format!(
                "{message}\n{}",
                trial.reproducer.clone().unwrap_or_default()
            ))),
        },
        Outcome::NotSupported | Outcome::Waived | Outcome::Deviation => {
            let clauses = if trial.outcome == Outcome::Deviation {
                trial.deviations.as_slice()
            } else {
                &[]
            };
            Status::Skipped {
                message: spelled(&junit_skipped_message(trial.outcome, clauses, &message)),
            }
        }
    };
    Case {
        name: spelled(&trial.name),
        classname: cap.as_str().to_owned(),
        time: Some(Duration::from_micros(trial.micros)),
        status,
    }
}

/// A failed trial's one line for a dashboard: its broken clauses once, then the first line of
/// what differs without the clause tag that line may start with (`[IFS-001] [IFS-001] ...`
/// before); with no broken clause (a backend that crashed), that line alone, or the outcome.
fn junit_failure_line(broken: &[String], message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let rest = without_clause_tag(first);
    match (broken.is_empty(), rest.is_empty()) {
        (true, true) => "fail".to_owned(),
        (true, false) => first.to_owned(),
        (false, true) => format!("[{}]", broken.join(", ")),
        (false, false) => format!("[{}] {rest}", broken.join(", ")),
    }
}

/// A skipped trial's message: the outcome, a deviation's clauses, then the message without the
/// outcome's name it may already start with (`waived: waived: ...` before).
fn junit_skipped_message(outcome: Outcome, clauses: &[String], message: &str) -> String {
    let name = outcome.as_str();
    // The message may already name its outcome (`waived: ...`), with its clauses
    // (`deviation [OPT-008] ...`): the line names them once.
    let body = match message.strip_prefix(name) {
        Some(rest) if rest.starts_with(": ") => &rest[2..],
        Some(rest) if rest.starts_with(" [") => {
            let rest = without_clause_tag(rest.trim_start());
            rest.strip_prefix(':').unwrap_or(rest).trim_start()
        }
        _ => message,
    };
    if clauses.is_empty() {
        format!("{name}: {body}")
    } else {
        format!("{name} [{}]: {body}", clauses.join(", "))
    }
}

/// `line` without a leading clause tag such as `[IRM-003]` or `[SMP-011, SES-010]`.
fn without_clause_tag(line: &str) -> &str {
    let Some(inner) = line.strip_prefix('[') else {
        return line;
    };
    let Some((tag, rest)) = inner.split_once(']') else {
        return line;
    };
    let is_clause = |id: &str| {
        let (area, number) = id.split_once('-').unwrap_or(("", ""));
        !area.is_empty()
            && area.chars().all(|c| c.is_ascii_uppercase())
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit())
    };
    if tag.split(", ").all(is_clause) {
        rest.trim_start()
    } else {
        line
    }
}

/// `s` with every character XML 1.0 cannot carry, not even as a reference, spelled out
/// (`\u{fffe}`): what a backend prints must not make the report unreadable. Escaping is
/// the writer's (`xml`).
fn spelled(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if ((c as u32) < 0x20 && c != '\n' && c != '\t' && c != '\r')
            || c == '\u{fffe}'
            || c == '\u{ffff}'
        {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A report with a bit of everything `report.xml` carries: every outcome, failures with
    /// several lines and a reproducer, expired and stale waivers, the backend's standard error
    /// (going with the second suite, the first that failed), every optional property, and text
    /// holding XML's special characters, controls and characters XML 1.0 cannot carry.
    fn rich_report(started: Option<&str>) -> Report {
        use ge_spec::{Capability as C, Conformance, Profile};

        use crate::report::{Meta, Outcome as O, TrialKind};

        let odd = concat!(
            "<a href=\"x\">'&amp;'</a>\u{1b}[31mred\u{1b}[0m\ttab\rcr\u{0}nul",
            "\u{7f}del\u{85}nel\u{9b}csi\u{fffe}\u{ffff}\u{fffd}é🦀"
        );
        let meta = Meta {
            suite: "ge-conformance".to_owned(),
            suite_version: "0.1.0".to_owned(),
            spec_digest: "5f0c".repeat(16),
            backend: format!("odd <engine> & \"co\" {odd}"),
            backend_version: "1.0".to_owned(),
            capabilities: vec![C::Options, C::Transfer, C::Memory],
            required: Vec::new(),
            profile: Profile::Upstream,
            level: Conformance::Strict,
            seed: 42,
            case_budget: 64,
            filter: Some("options-<numbers>/&'\"".to_owned()),
            local_cases: Some("beef".repeat(16)),
            upstream_source: Some("ge/graph-engine@0123abc".to_owned()),
            confinement: Some("own $TMPDIR and $HOME\tlandlock".to_owned()),
            started: started.map(str::to_owned),
            host: Some("host\u{7}<1>".to_owned()),
            micros: 12_345_678,
        };
        let odd_name = format!("memory-plans/{odd}");
        let mut trials: Vec<TrialResult> = [
            ("options-numbers/in-range", C::Options, O::Pass, 1_500),
            ("options-numbers/kept", C::Options, O::Deviation, 0),
            ("transfer-examples/fused", C::Transfer, O::Fail, 2_000_499),
            ("transfer-examples/crash", C::Transfer, O::Fail, 999_999),
            (
                "transfer-examples/waived-ok",
                C::Transfer,
                O::UnexpectedPass,
                5,
            ),
            ("memory-plans/waived", C::Memory, O::Waived, 1_000_000),
            (&odd_name, C::Memory, O::NotSupported, 7),
        ]
        .into_iter()
        .map(|(name, cap, outcome, micros)| {
            let mut t = TrialResult::new(name.to_owned(), TrialKind::Case, cap, ids(&["IFS-001"]));
            t.outcome = outcome;
            t.micros = micros;
            t
        })
        .collect();
        trials[1].deviations = ids(&["EWD-012", "OPT-008"]);
        trials[1].message = Some("[EWD-012] kept \"as is\" <here>".to_owned());
        trials[2].broken = ids(&["IFS-001", "IFS-016"]);
        trials[2].message = Some(format!(
            "[IFS-001] fused 3 < 4 & more\nsecond line {odd}\n  third"
        ));
        trials[2].reproducer =
            Some("ge-conformance certify --filter 'transfer-examples/fused' <x>".to_owned());
        trials[4].message = Some("the waiver T-1 matched & it passed".to_owned());
        trials[5].message = Some("waived: T-1 until 2027-01-01\n[IFS-001] x".to_owned());
        let mut report = Report::new(
            meta,
            trials,
            vec!["nothing/* (T-9 <stale>, until 2030-01-01)".to_owned()],
            vec![format!(
                "options-numbers/ifs-rejects-max-plus-one (T-2 {odd})"
            )],
        );
        report.backend_stderr = format!("engine: <warn> & \"quote\"\n{odd}\n");
        report
    }

    /// The writer's shape, pinned: a small report's whole `report.xml`.
    #[test]
    fn a_small_report_in_full() {
        let mut report = rich_report(Some("2026-12-01T20:45:07Z"));
        let m = &mut report.meta;
        m.spec_digest = "5f0c".to_owned();
        m.backend = "tiny <engine> & 'co'".to_owned();
        (m.local_cases, m.upstream_source, m.confinement) = (None, None, None);
        m.host = Some("h\u{1}\t1".to_owned());
        m.filter = None;
        report.trials = vec![report.trials[0].clone(), report.trials[2].clone()];
        report.trials[1].message = Some("[IFS-001] 3 < 4\n\"so\"".to_owned());
        report.trials[1].reproducer = Some("run it".to_owned());
        report.stale_waivers = vec!["x/* (T-9)".to_owned()];
        report.expired_waivers = vec!["y/z (T-2)".to_owned()];
        report.backend_stderr = "oops\n".to_owned();
        let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="ge-conformance" tests="4" failures="2" errors="0" time="12.346">
    <testsuite name="options" tests="1" skipped="0" errors="0" failures="0" timestamp="2026-12-01T20:45:07.000+00:00" time="0.002">
        <properties>
            <property name="spec_digest" value="5f0c"/>
            <property name="backend" value="tiny &lt;engine&gt; &amp; &apos;co&apos;"/>
            <property name="profile" value="upstream"/>
            <property name="level" value="strict"/>
            <property name="verdict" value="not certified"/>
            <property name="seed" value="42"/>
            <property name="host" value="h\u{0001}1"/>
        </properties>
        <testcase name="options-numbers/in-range" classname="options" time="0.002"/>
    </testsuite>
    <testsuite name="transfer" tests="1" skipped="0" errors="0" failures="1" timestamp="2026-12-01T20:45:07.000+00:00" time="2.000">
        <properties>
            <property name="spec_digest" value="5f0c"/>
            <property name="backend" value="tiny &lt;engine&gt; &amp; &apos;co&apos;"/>
            <property name="profile" value="upstream"/>
            <property name="level" value="strict"/>
            <property name="verdict" value="not certified"/>
            <property name="seed" value="42"/>
            <property name="host" value="h\u{0001}1"/>
        </properties>
        <testcase name="transfer-examples/fused" classname="transfer" time="2.000">
            <failure message="[IFS-001, IFS-016] 3 &lt; 4" type="fail">[IFS-001] 3 &lt; 4
&quot;so&quot;
run it</failure>
        </testcase>
        <system-err>oops
</system-err>
    </testsuite>
    <testsuite name="waivers" tests="2" skipped="1" errors="0" failures="1" timestamp="2026-12-01T20:45:07.000+00:00" time="0.000">
        <testcase name="waiver/expired/y/z" classname="waivers" time="0.000">
            <failure message="expired waiver y/z (T-2): renew it or remove it" type="expired-waiver"/>
        </testcase>
        <testcase name="waiver/stale/x/*" classname="waivers" time="0.000">
            <skipped message="waiver x/* (T-9) waives nothing (it names no trial, or no trial fails on its clause): remove it"/>
        </testcase>
    </testsuite>
</testsuites>
"#;
        assert_eq!(report.to_junit(), expected);
    }

    /// `s` with the marks that reorder or hide text that quick-junit kept (all of
    /// [`crate::input::unsafe_in_text`] but the C0 and C1 controls, which it left out) spelled
    /// out, as [`Document::to_xml`] spells them.
    fn marks_spelled(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            let dropped = c < '\u{20}' || ('\u{80}'..='\u{9f}').contains(&c);
            if !dropped && crate::input::unsafe_in_text(c) {
                crate::input::push_spelled(&mut out, c);
            } else {
                out.push(c);
            }
        }
        out
    }

    /// `doc` with every text's marks spelled out ([`marks_spelled`]).
    fn with_marks_spelled(doc: &Document) -> Document {
        let mut doc = doc.clone();
        for s in &mut doc.suites {
            s.name = marks_spelled(&s.name);
            for (n, v) in &mut s.properties {
                (*n, *v) = (marks_spelled(n), marks_spelled(v));
            }
            s.system_err = s.system_err.as_deref().map(marks_spelled);
            for c in &mut s.cases {
                (c.name, c.classname) = (marks_spelled(&c.name), marks_spelled(&c.classname));
                match &mut c.status {
                    Status::Success => {}
                    Status::Failure { message, ty, text } => {
                        (*message, *ty) = (marks_spelled(message), marks_spelled(ty));
                        *text = text.as_deref().map(marks_spelled);
                    }
                    Status::Skipped { message } => *message = marks_spelled(message),
                }
            }
        }
        doc
    }

    /// `doc` written by quick-junit 0.8, the writer `report.xml` had before, with the root's
    /// `skipped` and `timestamp` taken out as the suite then did, and the marks that reorder or
    /// hide text spelled out first ([`marks_spelled`]): what [`Document::to_xml`] must write
    /// byte for byte, so the reports of earlier bundles (without such marks) still verify.
    fn by_quick_junit(doc: &Document) -> String {
        use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

        let doc = &with_marks_spelled(doc);
        let mut report = quick_junit::Report::new(doc.name.as_str());
        report.set_time(doc.time);
        for s in &doc.suites {
            let mut suite = TestSuite::new(s.name.as_str());
            if let Some(t) = &s.timestamp {
                suite.set_timestamp(chrono::DateTime::parse_from_rfc3339(t).unwrap());
            }
            if let Some(t) = s.time {
                suite.set_time(t);
            }
            suite.add_properties(
                s.properties
                    .iter()
                    .map(|(n, v)| Property::new(n.as_str(), v.as_str())),
            );
            if let Some(e) = &s.system_err {
                suite.set_system_err(e.as_str());
            }
            for c in &s.cases {
                let status = match &c.status {
                    Status::Success => TestCaseStatus::success(),
                    Status::Failure { message, ty, text } => {
                        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        status.set_message(message.as_str()).set_type(ty.as_str());
                        if let Some(text) = text {
                            status.set_description(text.as_str());
                        }
                        status
                    }
                    Status::Skipped { message } => {
                        let mut status = TestCaseStatus::skipped();
                        status.set_message(message.as_str());
                        status
                    }
                };
                let mut case = TestCase::new(c.name.as_str(), status);
                case.set_classname(c.classname.as_str());
                if let Some(t) = c.time {
                    case.set_time(t);
                }
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        let xml = report.to_string().expect("quick-junit writes it");
        // The root line, `<testsuites name=".." tests=".." skipped=".." failures=..`.
        let (head, rest) = xml.split_once("<testsuites").unwrap();
        let (root, tail) = rest.split_once('>').unwrap();
        let at = root.find(" skipped=\"").unwrap();
        let len = root[at + 10..].find('"').unwrap() + 11;
        format!(
            "{head}<testsuites{}{}>{tail}",
            &root[..at],
            &root[at + len..]
        )
    }

    #[test]
    fn quick_junit_wrote_the_same() {
        let mut reports: Vec<Report> = [
            Some("2024-02-29T23:59:07Z"),
            Some("2023-12-31T23:59:59.987654-05:30"),
            Some("not a time"),
            None,
        ]
        .into_iter()
        .map(rich_report)
        .collect();
        let mut empty = rich_report(None);
        empty.trials.clear();
        empty.stale_waivers.clear();
        empty.expired_waivers.clear();
        reports.push(empty);
        let mut one = rich_report(None);
        one.trials.truncate(1);
        // A tab alone: quick-junit left it out, leaving an empty element.
        one.backend_stderr = "\t".to_owned();
        reports.push(one);
        for report in reports {
            let doc = report.junit_document();
            assert_eq!(doc.to_xml(), by_quick_junit(&doc));
        }
    }

    /// Text of the characters that matter to the writer: XML's specials, controls (C0, DEL,
    /// C1), those XML 1.0 cannot carry, marks that reorder or hide text, and some others.
    fn awkward_text() -> impl Strategy<Value = String> {
        let special = proptest::sample::select(vec![
            '<', '>', '&', '\'', '"', '\n', '\t', '\r', '\u{0}', '\u{1b}', '\u{7f}', '\u{80}',
            '\u{85}', '\u{9f}', '\u{a0}', '\u{fffd}', '\u{fffe}', '\u{ffff}', '[', ']', ' ',
            '\u{200b}', '\u{200f}', '\u{2028}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{feff}',
        ]);
        proptest::collection::vec(prop_oneof![special, any::<char>()], 0..40)
            .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn quick_junit_writes_any_text_the_same(
            text in proptest::collection::vec(awkward_text(), 6),
            micros in any::<u64>(),
        ) {
            let mut report = rich_report(Some("2026-12-01T20:45:07Z"));
            report.backend_stderr = text[0].clone();
            report.trials[2].message = Some(text[1].clone());
            report.trials[2].reproducer = Some(text[2].clone());
            report.trials[1].message = Some(text[3].clone());
            report.trials[0].name = text[4].clone();
            report.trials[0].micros = micros;
            report.meta.host = Some(text[5].clone());
            report.stale_waivers = vec![text[5].clone()];
            let doc = report.junit_document();
            prop_assert_eq!(doc.to_xml(), by_quick_junit(&doc));
        }
    }

    #[test]
    fn a_failure_line_names_its_clauses_once() {
        let broken = ids(&["IFS-001"]);
        assert_eq!(
            junit_failure_line(&broken, "[IFS-001] 0 was accepted\nmore"),
            "[IFS-001] 0 was accepted"
        );
        assert_eq!(
            junit_failure_line(
                &ids(&["IRM-003", "ORM-003"]),
                "[IRM-003] index 2^32 read as 0"
            ),
            "[IRM-003, ORM-003] index 2^32 read as 0"
        );
        // A line whose brackets are not a clause tag keeps them.
        assert_eq!(
            junit_failure_line(&broken, "[x] not a tag"),
            "[IFS-001] [x] not a tag"
        );
        // No broken clause: no empty brackets.
        assert_eq!(
            junit_failure_line(&[], "the backend crashed"),
            "the backend crashed"
        );
        assert_eq!(junit_failure_line(&[], ""), "fail");
        assert_eq!(junit_failure_line(&broken, ""), "[IFS-001]");
    }

    #[test]
    fn a_skipped_message_names_its_outcome_once() {
        assert_eq!(
            junit_skipped_message(
                Outcome::Waived,
                &[],
                "waived: T-1 until 2027-01-01\n[IFS-001] x"
            ),
            "waived: T-1 until 2027-01-01\n[IFS-001] x"
        );
        assert_eq!(
            junit_skipped_message(Outcome::Deviation, &ids(&["EWD-012"]), "[EWD-012] kept"),
            "deviation [EWD-012]: [EWD-012] kept"
        );
        assert_eq!(
            junit_skipped_message(
                Outcome::Deviation,
                &ids(&["OPT-008"]),
                "deviation [OPT-008] warnings: [IFS-003] x"
            ),
            "deviation [OPT-008]: warnings: [IFS-003] x"
        );
        assert_eq!(
            junit_skipped_message(Outcome::NotSupported, &[], "no memory capability"),
            "not-supported: no memory capability"
        );
    }
}
