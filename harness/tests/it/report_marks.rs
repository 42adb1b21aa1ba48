//! Text-reordering marks in `report.xml` and `report.html`: a report whose backend name and
//! version, trial names, messages, clauses, reproducers, scenarios, waivers, metadata and
//! standard error carry right-to-left overrides, isolates, zero-width characters, separators,
//! DEL and C1 controls (as a hostile backend or a forged `report.json` would) renders with
//! each of them spelled out as `\u{202e}`, as the text report spells it, and none left raw: a
//! character reference (`&#x202e;`) would still reorder the line in a browser.

use ge_conformance::input::unsafe_in_text;
use ge_conformance::report::{Meta, Outcome, Report, TrialKind, TrialResult};
use ge_spec::{Capability, Conformance, Profile};

/// Reads `FAIL` while it says `PASS` the other way round, then every other mark.
const MARKS: &str =
    "\u{202e}SSAP\u{202c} \u{2066}\u{2067}\u{2068}\u{2069}\u{200b}\u{200d}\u{2028}\u{feff}\u{7f}\u{85}";

/// The marks of [`MARKS`] as the reports spell them.
const SPELLED: [&str; 5] = [
    "\\u{202e}SSAP\\u{202c}",
    "\\u{2066}",
    "\\u{2028}",
    "\\u{feff}",
    "\\u{7f}",
];

fn meta() -> Meta {
    Meta {
        suite: "ge-conformance".into(),
        suite_version: "0".into(),
        spec_digest: format!("tables{MARKS}"),
        backend: format!("engine{MARKS}"),
        backend_version: format!("1.0{MARKS}"),
        capabilities: vec![Capability::Options, Capability::Memory],
        required: Vec::new(),
        profile: Profile::Documented,
        level: Conformance::Documented,
        seed: 0,
        case_budget: 1,
        filter: Some(format!("memory-plans/{MARKS}")),
        local_cases: None,
        upstream_source: Some(format!("ge/graph-engine@{MARKS}")),
        confinement: Some(format!("own $TMPDIR{MARKS}")),
        started: Some("2026-12-01T20:45:07Z".into()),
        host: Some(format!("host{MARKS}")),
        micros: 1,
    }
}

/// A trial of `outcome` on `cap`, every text of it carrying the marks.
fn trial(name: &str, cap: Capability, outcome: Outcome) -> TrialResult {
    let clause = format!("MEM-001{MARKS}");
    let mut t = TrialResult::new(
        format!("{name}/{MARKS}gnp.exe"),
        TrialKind::Case,
        cap,
        vec![clause.clone()],
    );
    t.outcome = outcome;
    t.message = Some(format!(
        "[MEM-001] the answer{MARKS} FAIL\nsecond line{MARKS}\tafter a tab"
    ));
    match outcome {
        Outcome::Fail => {
            t.broken = vec![clause];
            t.reproducer = Some(format!("ge-conformance eval --case '{name}{MARKS}'"));
            t.scenario = Some(serde_json::json!({ "tensor": format!("t{MARKS}") }));
        }
        Outcome::Deviation => t.deviations = vec![clause],
        _ => {}
    }
    t
}

/// A report with the marks everywhere a backend or a forged `report.json` puts text.
fn marked_report() -> Report {
    let trials = vec![
        trial("options-numbers", Capability::Options, Outcome::Pass),
        trial("options-kept", Capability::Options, Outcome::Deviation),
        trial("memory-plans", Capability::Memory, Outcome::Fail),
        trial("memory-waived", Capability::Memory, Outcome::Waived),
        trial(
            "memory-unsupported",
            Capability::Memory,
            Outcome::NotSupported,
        ),
    ];
    let mut report = Report::new(
        meta(),
        trials,
        vec![format!("nothing/{MARKS} (T-9{MARKS})")],
        vec![format!("memory-plans/x{MARKS} (T-2{MARKS})")],
    );
    report.backend_stderr = format!("engine: warning{MARKS}\n\tindented{MARKS}\n");
    report
}

/// The first raw mark of `rendering` (a character of `unsafe_in_text` but a newline or, in
/// the multi-line bodies that keep them, a tab), with the text around it.
fn raw_mark(rendering: &str) -> Option<String> {
    let at = rendering.find(|c: char| c != '\n' && c != '\t' && unsafe_in_text(c))?;
    let before: String = rendering[..at].chars().rev().take(80).collect();
    let after: String = rendering[at..].chars().take(40).collect();
    Some(format!(
        "{:?}",
        before.chars().rev().collect::<String>() + &after
    ))
}

/// Asserts that `rendering` (`what`) holds no raw mark and spells them out where the backend
/// name and a failure's message and name are.
fn assert_spelled(what: &str, rendering: &str) {
    if let Some(context) = raw_mark(rendering) {
        panic!("{what} holds a raw text-reordering mark: {context}");
    }
    for spelled in SPELLED {
        assert!(
            rendering.contains(spelled),
            "{what} spells {spelled}:\n{rendering}"
        );
    }
    for shown in [
        "engine\\u{202e}SSAP",
        "the answer\\u{202e}SSAP",
        "memory-plans/\\u{202e}SSAP",
    ] {
        assert!(
            rendering.contains(shown),
            "{what} shows {shown}:\n{rendering}"
        );
    }
    assert!(
        !rendering.contains("&#x202e;") && !rendering.contains("&#8238;"),
        "{what}"
    );
}

#[test]
fn junit_spells_out_text_reordering_marks() {
    let xml = marked_report().to_junit();
    assert_spelled("report.xml", &xml);
    // Still well-formed, and read back with the marks spelled.
    let back = quick_junit::Report::deserialize_from_str(&xml).expect("report.xml reads back");
    let failed = back
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .find(|c| c.name.as_str().starts_with("memory-plans/"))
        .expect("the failing trial");
    assert_eq!(failed.name.as_str(), "memory-plans/\\u{202e}SSAP\\u{202c} \\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200b}\\u{200d}\\u{2028}\\u{feff}\\u{7f}gnp.exe");
}

// `report.html` escapes with `ge_conformance::draw::esc`, as the pictures do.
#[test]
fn html_spells_out_text_reordering_marks() {
    assert_spelled("report.html", &marked_report().to_html());
}
