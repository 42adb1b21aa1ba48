//! Cases built in code because their scenarios are too large to write as table rows: the
//! caps of the suite's own scenarios, at the cap and one past it (WGT-002's 10,000 constants,
//! SES-020's 100,000 events). [`Spec::embedded`] loads them with the case tables, under the
//! table names in [`TABLES`], so they run, report and count like any other case.
//!
//! They are built as typed values, not parsed: every process that loads the spec builds them
//! (parsing 100,000 events as JSON took seconds in a debug build).
//!
//! [`Spec::embedded`]: crate::Spec::embedded

use serde_json::{json, Value};

use crate::option::ShapeKind;
use crate::tables::{Case, TableCase};
use crate::vocab::session::{SessionEvent, SessionScenario, MAX_SCRIPT};
use crate::vocab::weights::{ConstNode, Fill, NodeType, WeightsScenario, MAX_CONSTANTS};
use crate::vocab::Scenario;

/// The table names of the built cases (no file under `tables/cases/` may take them).
pub const TABLES: [&str; 2] = [WEIGHTS, SESSION];

/// This file's text: the spec's digest covers it in place of the built cases themselves, which
/// would take longer to serialise than to build.
pub(crate) const SOURCE: &str = include_str!("built.rs");

const WEIGHTS: &str = "weights-limits";
const SESSION: &str = "session-limits";

/// The most events a session script may hold (SES-020).
const MAX_EVENTS: usize = MAX_SCRIPT as usize;

/// A weights scenario with `count` one-byte constants `c0`, `c1`, ... in mode 0 (nothing is
/// written, so the case costs only the count).
fn constants(count: usize) -> Scenario {
    Scenario::Weights(WeightsScenario {
        root_graph: "net".into(),
        pid: 1,
        session_id: 2,
        constants: (0..count)
            .map(|i| ConstNode {
                name: constant_name(i),
                node_type: NodeType::Const,
                hex: None,
                fill: Some(Fill {
                    byte: (i % 256) as u8,
                    len: 1,
                }),
            })
            .collect(),
        ..WeightsScenario::default()
    })
}

/// `c<i>`, written without the formatting machinery: a process that lists the cases builds
/// 131,073 of these names, so they are a good part of its start-up.
fn constant_name(i: usize) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut name = String::with_capacity(1 + digits.len() - at);
    name.push('c');
    name.extend(digits[at..].iter().map(|&d| char::from(d)));
    name
}

/// A session script of `events` events: one load, then single executions of its graph. The
/// graph has feature bytes and no I/O bytes, so the executions add nothing to the trace under
/// either profile (a zero-copy area, or upstream the I/O bytes' place, would differ by profile:
/// RZC-010..013). The executions stay under SES-020's cap of executions, so only the count of
/// events is at stake.
fn events(events: usize) -> Scenario {
    let mut script = vec![SessionEvent::Load {
        graph: 1,
        shape: ShapeKind::Static,
        feature_bytes: 64,
        io_bytes: 0,
        options: None,
    }];
    script.resize(events, SessionEvent::Execute { graph: 1, times: 1 });
    Scenario::Session(SessionScenario {
        events: script,
        ..SessionScenario::default()
    })
}

fn case(
    (table, clause): (&str, &str),
    name: &str,
    comment: &str,
    scenario: Scenario,
    expect: Value,
) -> TableCase {
    TableCase {
        table: table.to_owned(),
        case: std::sync::Arc::new(Case {
            name: name.to_owned(),
            clauses: vec![clause.to_owned()],
            comment: Some(comment.to_owned()),
            scenario,
            expect: Some(expect),
            oracle: true,
            profile: None,
        }),
    }
}

/// The built cases, in a fixed order.
pub fn cases() -> Vec<TableCase> {
    vec![
        case(
            (WEIGHTS, "WGT-002"),
            "constants-at-cap",
            "Exactly 10,000 constants: the most a scenario may hold, accepted.",
            constants(MAX_CONSTANTS),
            json!({ "files": [], "errors": [] }),
        ),
        case(
            (WEIGHTS, "WGT-002"),
            "constants-past-cap",
            "10,001 constants: one past the cap, refused as a whole before any constant is read.",
            constants(MAX_CONSTANTS + 1),
            json!({
                "files": [],
                "nodes": [],
                "errors": [{ "clause": "WGT-002", "subject": { "part": "constants" } }],
            }),
        ),
        case(
            (SESSION, "SES-020"),
            "events-at-cap",
            "Exactly 100,000 events (one load, 99,999 executions): the most a script may hold, run.",
            events(MAX_EVENTS),
            json!({
                "errors": [],
                "trace": [
                    { "step": 0, "action": "alloc", "pool": "graph-1/feature", "bytes": 64 },
                    { "step": MAX_EVENTS, "action": "free", "pool": "graph-1/feature", "bytes": 64 },
                ],
            }),
        ),
        case(
            (SESSION, "SES-020"),
            "events-past-cap",
            "100,001 events (one load, 100,000 executions, within their own cap): one event past the cap, refused, and nothing runs.",
            events(MAX_EVENTS + 1),
            json!({
                "errors": [{ "clause": "SES-020", "subject": { "part": "script" } }],
                "trace": [],
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_names_are_what_formatting_writes() {
        for i in [0, 1, 9, 10, 99, 100, 65_535, 65_536, usize::MAX] {
            assert_eq!(constant_name(i), format!("c{i}"));
        }
    }
}
