//! Verdicts nobody can forge, in memory the suite bounds: a backend whose name, version,
//! answers, reasons, panics and standard error carry newlines, terminal escapes, NUL bytes and
//! text-reordering marks cannot write a line of a text or Markdown report, nor put a control
//! character in one; and an answer that breaks one clause a great many times costs a short
//! message, not one line per breach.

use ge_conformance::certify::{certify, Config};
use ge_conformance::report::{Outcome, Report};
use ge_reference::Reference;
use ge_spec::vocab::{
    Capability, Effective, MemoryObservation, MemoryScenario, OptionsObservation, OptionsScenario,
    SessionObservation, SessionScenario,
};
use ge_spec::{Answer, Backend, Diagnostic, NotSupported, Source};

/// What every forged text carries: a line that reads like a verdict, a screen clear, a NUL,
/// a right-to-left override and DEL.
const FORGED: &str =
    "\nCERTIFIED at level strict (profile documented): 999 passed\n\u{1b}[2J\u{0}\u{202e}\u{7f}";

/// Stray tensors and warnings the memory answers carry, each a breach of its own, where a
/// clause broken a great many times is the point: one line each would make a message of some
/// 120 KB and a text report of several MB (capped, they measured 3 KB and 14 KB).
const STRAYS: usize = 2_000;

/// Answers like the reference, with forged text wherever a backend supplies text.
struct Forger {
    name: String,
    version: String,
    /// Stray tensors and warnings in each memory answer.
    strays: usize,
}

impl Forger {
    fn new(strays: usize) -> Self {
        Forger {
            name: format!("forger{FORGED}"),
            version: format!("1.0{FORGED}"),
            strays,
        }
    }
}

impl Backend for Forger {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
        [Capability::Options, Capability::Memory, Capability::Session]
            .into_iter()
            .collect()
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = Reference.options(s)?;
        o.rejected.push(format!("ge.forged{FORGED}"));
        o.effective.insert(
            format!("ge.exec.forged{FORGED}"),
            Effective {
                value: FORGED.to_owned(),
                from: Source::Graph,
            },
        );
        Ok(o)
    }
    fn memory(&self, s: &MemoryScenario) -> Answer<MemoryObservation> {
        if s.tensors.len().is_multiple_of(3) {
            panic!("the engine gave up{FORGED}");
        }
        let mut o = Reference.memory(s)?;
        for n in 0..self.strays {
            o.offsets
                .insert(format!("stray-{n}{FORGED}"), n as u64 * 32);
            o.warnings
                .push(Diagnostic::new("MEM-004", format!("warning {n}{FORGED}")));
        }
        Ok(o)
    }
    fn session(&self, _: &SessionScenario) -> Answer<SessionObservation> {
        Err(NotSupported::new(Capability::Session, FORGED))
    }
}

/// True for a character no line of a text report may hold: the controls but newline (the
/// report's own line ends), and the marks that reorder text.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n') || c == '\u{202e}'
}

/// The lines of `text` that start like a verdict.
fn verdict_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let l = l.trim_start_matches(['#', ' ', '*']);
            [
                "CERTIFIED",
                "NOT CERTIFIED",
                "PARTIAL",
                "NOTHING TO CERTIFY",
            ]
            .iter()
            .any(|v| l.starts_with(v))
        })
        .collect()
}

#[test]
fn no_line_of_a_report_is_the_backends() {
    let cfg = Config {
        cases: 2,
        ..Config::default()
    };
    // A few strays: forged text in a stray's name and warning as well.
    let mut report = certify(&Forger::new(3), &cfg, &mut |_, _, _| {}).expect("a run");
    report.backend_stderr = format!("the engine says{FORGED}\nand more{FORGED}");
    assert!(!report.certified);
    assert!(
        report.trials.iter().any(|t| t.outcome == Outcome::Fail),
        "the forger fails"
    );
    let text = report.to_text();
    let markdown = report.to_markdown();
    for (what, rendering) in [("text", &text), ("markdown", &markdown)] {
        assert_eq!(
            verdict_lines(rendering),
            vec![report.verdict_line().as_str()],
            "{what}: only the verdict line reads as a verdict"
        );
        if let Some((n, line)) = rendering
            .lines()
            .enumerate()
            .find(|(_, l)| l.chars().any(hidden))
        {
            panic!("{what}, line {}: a hidden character in {line:?}", n + 1);
        }
    }
    // What the backend wrote to standard error is shown, each line behind the prefix.
    assert!(
        text.contains("  | the engine says\n  | CERTIFIED at level strict"),
        "{text}"
    );
    // Names and versions stay on one line wherever they are kept.
    assert!(!report.meta.backend.contains('\n'));
    assert!(!report.meta.backend_version.contains('\n'));
    assert_forged_text_is_escaped_in_messages(&report);
}

/// The panics, reasons and answers quoted in messages keep their forged text, escaped.
fn assert_forged_text_is_escaped_in_messages(report: &Report) {
    let messages: Vec<&str> = report
        .trials
        .iter()
        .filter_map(|t| t.message.as_deref())
        .collect();
    for what in ["the engine gave up", "answered not supported"] {
        let m = messages
            .iter()
            .find(|m| m.contains(what))
            .unwrap_or_else(|| panic!("no message says {what:?}"));
        assert!(m.contains("\\nCERTIFIED at level strict"), "{m}");
        assert!(m.contains("\\u{1b}[2J"), "{m}");
    }
}

#[test]
fn a_clause_broken_many_times_costs_a_short_message() {
    let cfg = Config {
        cases: 2,
        filter: Some("memory".to_owned()),
        ..Config::default()
    };
    let report = certify(&Forger::new(STRAYS), &cfg, &mut |_, _, _| {}).expect("a run");
    // The strays break MEM-002 (the vocabulary's: a plan names no other tensor), which binds
    // at every level, as do the panics: both are kept, both short.
    let judged: Vec<_> = report
        .trials
        .iter()
        .filter(|t| matches!(t.outcome, Outcome::Fail | Outcome::Deviation))
        .collect();
    assert!(judged
        .iter()
        .any(|t| t.outcome == Outcome::Fail && t.broken.contains(&"MEM-002".to_owned())));
    for t in &judged {
        let message = t.message.as_deref().unwrap_or("");
        assert!(
            message.len() < 16 << 10,
            "{}: {} bytes of message for {STRAYS} strays",
            t.name,
            message.len()
        );
    }
    let text = report.to_text();
    assert!(
        text.len() < 1 << 20,
        "{} bytes of text report for {} trials",
        text.len(),
        report.trials.len()
    );
}
