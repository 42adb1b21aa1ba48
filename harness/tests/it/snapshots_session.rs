//! Snapshots of the reference's session traces for a few readable scripts, rendered step by
//! step (the event, then what it allocated and freed), plus the refresh results and diagnostics.

use crate::common;

use std::fmt::Write as _;

use ge_spec::vocab::session::{SessionEvent, SessionScenario, TraceAction};
use ge_spec::Profile;

/// Renders a script and the reference's observation as text a person can check by eye.
fn render(json: &str) -> String {
    let s: SessionScenario = serde_json::from_str(json).expect("a valid scenario");
    let obs =
        ge_reference::session::run(Profile::Documented, &s).expect("the reference runs sessions");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "options: {}",
        serde_json::to_string(&s.options).unwrap()
    );
    for step in 0..=s.events.len() {
        let what = match s.events.get(step) {
            Some(SessionEvent::Load {
                graph,
                shape,
                feature_bytes,
                io_bytes,
                options,
            }) => format!(
                "load graph {graph} ({shape:?}, feature {feature_bytes}, io {io_bytes}{})",
                options
                    .as_ref()
                    .map(|m| format!(", graph options {m:?}"))
                    .unwrap_or_default()
            ),
            Some(SessionEvent::Execute { graph, times }) => {
                format!("execute graph {graph} x{times}")
            }
            Some(SessionEvent::Refresh { graph, bytes }) => {
                let result = obs
                    .refreshes
                    .iter()
                    .find(|r| r.step as usize == step)
                    .map_or("no result", |r| if r.ok { "accepted" } else { "refused" });
                format!("refresh graph {graph} with {bytes} bytes -> {result}")
            }
            Some(SessionEvent::Unload { graph }) => format!("unload graph {graph}"),
            None => "end of script".to_owned(),
        };
        let _ = writeln!(out, "step {step}: {what}");
        for e in obs.trace.iter().filter(|e| e.step as usize == step) {
            let action = match e.action {
                TraceAction::Alloc => "alloc",
                TraceAction::Free => "free ",
            };
            let _ = writeln!(out, "    {action} {:<16} {:>6}", e.pool, e.bytes);
        }
    }
    for d in &obs.errors {
        let _ = writeln!(out, "error:   {d}");
    }
    for d in &obs.warnings {
        let _ = writeln!(out, "warning: {d}");
    }
    out
}

#[test]
fn static_pool_with_zero_copy() {
    let text = render(
        r#"{
        "options": { "session": { "ge.exec.staticMemoryPolicy": "2", "ge.exec.reuseZeroCopyMemory": "1" } },
        "events": [
            { "event": "load", "graph": 1, "feature_bytes": 1024, "io_bytes": 128 },
            { "event": "execute", "graph": 1, "times": 3 },
            { "event": "load", "graph": 2, "feature_bytes": 4096, "io_bytes": 64,
              "options": { "ge.exec.reuseZeroCopyMemory": "0" } },
            { "event": "execute", "graph": 2, "times": 2 },
            { "event": "load", "graph": 3, "feature_bytes": 2048 },
            { "event": "unload", "graph": 2 },
            { "event": "unload", "graph": 1 }
        ]
    }"#,
    );
    common::with_snapshots(|| insta::assert_snapshot!(text));
}

#[test]
fn both_pools_and_refreshes() {
    let text = render(
        r#"{
        "options": { "global": { "ge.exec.staticMemoryPolicy": "4" }, "session": { "ge.featureBaseRefreshable": "1" } },
        "events": [
            { "event": "load", "graph": 1, "shape": "static", "feature_bytes": 1000 },
            { "event": "load", "graph": 2, "shape": "dynamic", "feature_bytes": 3000 },
            { "event": "load", "graph": 3, "shape": "dynamic", "feature_bytes": 5000 },
            { "event": "refresh", "graph": 1, "bytes": 1000 },
            { "event": "refresh", "graph": 1, "bytes": 999 },
            { "event": "refresh", "graph": 1, "bytes": 2000 },
            { "event": "refresh", "graph": 2, "bytes": 3000 },
            { "event": "refresh", "graph": 2, "bytes": 3000 },
            { "event": "unload", "graph": 3 }
        ]
    }"#,
    );
    common::with_snapshots(|| insta::assert_snapshot!(text));
}

#[test]
fn script_errors_and_end_of_script() {
    let text = render(
        r#"{
        "events": [
            { "event": "execute", "graph": 7 },
            { "event": "load", "graph": 2, "feature_bytes": 512, "io_bytes": 32 },
            { "event": "load", "graph": 2, "feature_bytes": 999 },
            { "event": "execute", "graph": 2, "times": 2 },
            { "event": "refresh", "graph": 2, "bytes": 512 },
            { "event": "refresh", "graph": 2, "bytes": 512 },
            { "event": "load", "graph": 1, "shape": "dynamic", "feature_bytes": 256 }
        ]
    }"#,
    );
    common::with_snapshots(|| insta::assert_snapshot!(text));
}
