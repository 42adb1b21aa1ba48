//! Cases built in code because their scenarios are too large to write as table rows: the
//! 10,000-constant cap of WGT-002, at the cap and one past it. [`Spec::embedded`] loads them
//! with the case tables, under the table name [`TABLE`], so they run, report and count like
//! any other case.
//!
//! [`Spec::embedded`]: crate::Spec::embedded

use serde_json::{json, Value};

use crate::tables::{Case, TableCase};

/// The table name of the built cases (no file under `tables/cases/` may take it).
pub const TABLE: &str = "weights-limits";

/// The most constants a weights scenario may hold (WGT-002).
const MAX_CONSTANTS: usize = 10_000;

/// A weights scenario with `count` one-byte constants `c0`, `c1`, ... in mode 0 (nothing is
/// written, so the case costs only the count).
fn constants(count: usize) -> Value {
    let constants: Vec<Value> = (0..count)
        .map(|i| json!({ "name": format!("c{i}"), "type": "Const", "fill": { "byte": i % 256, "len": 1 } }))
        .collect();
    json!({
        "capability": "weights",
        "root_graph": "net",
        "pid": 1,
        "session_id": 2,
        "constants": constants,
    })
}

fn case(name: &str, comment: &str, scenario: Value, expect: Value) -> TableCase {
    let case = json!({
        "name": name,
        "clauses": ["WGT-002"],
        "comment": comment,
        "scenario": scenario,
        "expect": expect,
        "oracle": true,
    });
    TableCase {
        table: TABLE.to_owned(),
        // The JSON above is fixed, so this holds; the crate's tests load every built case.
        case: serde_json::from_value::<Case>(case)
            .unwrap_or_else(|e| panic!("a built case does not read as a case: {e}")),
    }
}

/// The built cases, in a fixed order.
pub fn cases() -> Vec<TableCase> {
    vec![
        case(
            "constants-at-cap",
            "Exactly 10,000 constants: the most a scenario may hold, accepted.",
            constants(MAX_CONSTANTS),
            json!({ "files": [], "errors": [] }),
        ),
        case(
            "constants-past-cap",
            "10,001 constants: one past the cap, refused as a whole before any constant is read.",
            constants(MAX_CONSTANTS + 1),
            json!({
                "files": [],
                "nodes": [],
                "errors": [{ "clause": "WGT-002", "subject": "constants" }],
            }),
        ),
    ]
}
