//! A small JUnit XML writer for `report.xml`: the few elements and attributes the report uses,
//! written byte for byte as quick-junit 0.8 wrote them (the writer the suite used before), so
//! a bundle made then still verifies (`bundle::verify` renders its `report.xml` again); but
//! for the marks that reorder or hide text, which are spelled out (`\u{202e}`, see
//! `escape_into`).
//!
//! The shape: the XML declaration, one element a line indented by four spaces, text inline
//! (`<failure ...>text</failure>`), a childless element self-closed (`<testcase .../>`), and a
//! newline at the end. Times are seconds with three decimals; timestamps come formatted.

use std::time::Duration;

/// A JUnit document: the `<testsuites>` root and its suites. The root carries only what the
/// Jenkins xUnit schema (`junit-10.xsd`) lists for it: no `skipped`, no `timestamp`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Document {
    /// The root's name.
    pub name: String,
    /// The whole run's wall time.
    pub time: Duration,
    /// The suites, in order.
    pub suites: Vec<Suite>,
}

/// A `<testsuite>`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Suite {
    /// Its name.
    pub name: String,
    /// When it started, formatted (`2026-12-01T20:45:07.000+00:00`).
    pub timestamp: Option<String>,
    /// The time its cases took.
    pub time: Option<Duration>,
    /// Its properties, as (name, value).
    pub properties: Vec<(String, String)>,
    /// Its test cases.
    pub cases: Vec<Case>,
    /// Its `<system-err>`.
    pub system_err: Option<String>,
}

/// A `<testcase>`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Case {
    /// Its name.
    pub name: String,
    /// Its class name.
    pub classname: String,
    /// The time it took.
    pub time: Option<Duration>,
    /// Passed, failed or skipped.
    pub status: Status,
}

/// What became of a test case.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Status {
    /// Passed: a childless `<testcase>`.
    Success,
    /// A `<failure>` with its message, type and, when there is one, its text.
    Failure {
        /// The one line a dashboard shows.
        message: String,
        /// The kind of failure.
        ty: String,
        /// The whole story.
        text: Option<String>,
    },
    /// A `<skipped>` with its message.
    Skipped {
        /// Why.
        message: String,
    },
}

impl Suite {
    /// (tests, skipped, failures) among its cases.
    fn counts(&self) -> (usize, usize, usize) {
        let count = |f: fn(&Status) -> bool| self.cases.iter().filter(|c| f(&c.status)).count();
        (
            self.cases.len(),
            count(|s| matches!(s, Status::Skipped { .. })),
            count(|s| matches!(s, Status::Failure { .. })),
        )
    }

    /// Writes the suite, its properties, cases and standard error.
    fn write(&self, w: &mut Writer) {
        let (tests, skipped, failures) = self.counts();
        w.start("testsuite");
        w.attr("name", &self.name);
        w.attr("tests", &tests.to_string());
        w.attr("skipped", &skipped.to_string());
        w.attr("errors", "0");
        w.attr("failures", &failures.to_string());
        if let Some(t) = &self.timestamp {
            w.attr("timestamp", t);
        }
        if let Some(t) = self.time {
            w.attr("time", &seconds(t));
        }
        if self.properties.is_empty() && self.cases.is_empty() && self.system_err.is_none() {
            w.end_empty();
            return;
        }
        w.end_open();
        if !self.properties.is_empty() {
            w.start("properties");
            w.end_open();
            for (name, value) in &self.properties {
                w.start("property");
                w.attr("name", name);
                w.attr("value", value);
                w.end_empty();
            }
            w.close("properties");
        }
        for case in &self.cases {
            case.write(w);
        }
        if let Some(err) = &self.system_err {
            w.start("system-err");
            w.text_then_close("system-err", err);
        }
        w.close("testsuite");
    }
}

impl Case {
    /// Writes the case, self-closed when it passed.
    fn write(&self, w: &mut Writer) {
        w.start("testcase");
        w.attr("name", &self.name);
        w.attr("classname", &self.classname);
        if let Some(t) = self.time {
            w.attr("time", &seconds(t));
        }
        match &self.status {
            Status::Success => {
                w.end_empty();
                return;
            }
            Status::Failure { message, ty, text } => {
                w.end_open();
                w.start("failure");
                w.attr("message", message);
                w.attr("type", ty);
                match text {
                    Some(text) => w.text_then_close("failure", text),
                    None => w.end_empty(),
                }
            }
            Status::Skipped { message } => {
                w.end_open();
                w.start("skipped");
                w.attr("message", message);
                w.end_empty();
            }
        }
        w.close("testcase");
    }
}

impl Document {
    /// The document as `report.xml` holds it.
    pub(super) fn to_xml(&self) -> String {
        let (mut tests, mut failures) = (0, 0);
        for suite in &self.suites {
            let (t, _, f) = suite.counts();
            tests += t;
            failures += f;
        }
        let mut w = Writer {
            out: String::from(r#"<?xml version="1.0" encoding="UTF-8"?>"#),
            depth: 0,
        };
        w.start("testsuites");
        w.attr("name", &self.name);
        w.attr("tests", &tests.to_string());
        w.attr("failures", &failures.to_string());
        w.attr("errors", "0");
        w.attr("time", &seconds(self.time));
        w.end_open();
        for suite in &self.suites {
            suite.write(&mut w);
        }
        w.close("testsuites");
        w.out.push('\n');
        w.out
    }
}

/// The text being written and how deep in elements it is.
struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    /// A new line at the current depth, then `<name` (attributes follow).
    fn start(&mut self, name: &str) {
        self.out.push('\n');
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push('<');
        self.out.push_str(name);
    }

    /// ` name="value"`, the value escaped.
    fn attr(&mut self, name: &str, value: &str) {
        self.out.push(' ');
        self.out.push_str(name);
        self.out.push_str("=\"");
        escape_into(&mut self.out, value);
        self.out.push('"');
    }

    /// Ends a start tag whose children follow on lines of their own.
    fn end_open(&mut self) {
        self.out.push('>');
        self.depth += 1;
    }

    /// Ends a childless element.
    fn end_empty(&mut self) {
        self.out.push_str("/>");
    }

    /// Ends a start tag, then writes `text` escaped and the end tag right after it.
    fn text_then_close(&mut self, name: &str, text: &str) {
        self.out.push('>');
        escape_into(&mut self.out, text);
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// The end tag of an element opened with [`Writer::end_open`], on a line of its own.
    fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.start("/");
        self.out.push_str(name);
        self.out.push('>');
    }
}

/// A duration as JUnit's `time`: seconds with three decimals.
fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Appends `s` escaped as quick-junit 0.8 wrote text and attribute values alike: `<`, `>`,
/// `&`, `'` and `"` as entities, and the controls it left out (its `XmlString`) left out: every
/// C0 control but the newline (tab and carriage return included) and the C1 controls
/// U+0080 to U+009F. quick-junit dropped ANSI escape sequences whole; a report spells ESC out
/// before text reaches here (`junit::spelled`), so there are none to drop.
///
/// Unlike quick-junit, the other characters of [`crate::input::unsafe_in_text`] that it kept
/// (DEL, the bidirectional overrides and isolates, the zero-width characters, the line and
/// paragraph separators, the byte order mark) are spelled out as the text report spells them
/// (`\u{202e}`): a backend's text must not reorder or hide a line of what a dashboard shows,
/// and a character reference (`&#x202e;`) would be read as the character itself.
fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push('\n'),
            '\u{0}'..='\u{1f}' | '\u{80}'..='\u{9f}' => {}
            c if crate::input::unsafe_in_text(c) => crate::input::push_spelled(out, c),
            _ => out.push(c),
        }
    }
}
