//! The picture of a session trace: the script's events across, one lane per pool or block, each
//! held allocation a bar from the event that took it to the event that gave it back, the bytes
//! held in all above the lanes, and the refreshes (done or refused) in a lane of their own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ge_spec::vocab::session::{SessionEvent, SessionObservation, SessionScenario, TraceAction};

use super::{bytes, cut, line, num, rect, text, Marks, Panel, MAX_ITEMS};

const LEFT: f64 = 130.0;
const PLOT_W: f64 = 560.0;
const CHART_H: f64 = 90.0;
const LANE: f64 = 22.0;
const MAX_LANES: usize = 32;
const MAX_EVENT_ROWS: usize = 24;
const ROW: f64 = 13.0;

fn event_text(e: &SessionEvent) -> String {
    match e {
        SessionEvent::Load {
            graph,
            feature_bytes,
            io_bytes,
            shape,
            ..
        } => format!(
            "load graph {graph} ({}, feature {}, io {})",
            format!("{shape:?}").to_lowercase(),
            bytes(*feature_bytes),
            bytes(*io_bytes)
        ),
        SessionEvent::Execute { graph, times } => format!("execute graph {graph} ×{times}"),
        SessionEvent::Refresh { graph, bytes: b } => {
            format!("refresh graph {graph} with {}", bytes(*b))
        }
        SessionEvent::Unload { graph } => format!("unload graph {graph}"),
    }
}

fn lane_class(pool: &str) -> &'static str {
    if pool.ends_with("/feature") {
        "feature"
    } else if pool.ends_with("/io") {
        "io"
    } else if pool.ends_with("-pool") {
        "pool"
    } else {
        "other"
    }
}

pub(super) fn panel(scenario: &SessionScenario, obs: &SessionObservation, marks: &Marks) -> Panel {
    let mut out = String::new();
    let events = scenario.events.len() as f64;
    // Columns 0..=events: the last one is the end of the script.
    let columns = events + 1.0;
    let x = |step: f64| LEFT + step / columns * PLOT_W;
    let trace: Vec<_> = obs.trace.iter().take(MAX_ITEMS * 4).collect();

    // Lanes in order of first appearance.
    let mut lanes: Vec<&str> = Vec::new();
    for e in &trace {
        if !lanes.contains(&e.pool.as_str()) {
            lanes.push(&e.pool);
        }
    }
    let hidden_lanes = lanes.len().saturating_sub(MAX_LANES);
    lanes.truncate(MAX_LANES);

    // Bytes held after each entry, for the chart.
    let mut held_total: u64 = 0;
    let mut points: Vec<(f64, u64)> = vec![(0.0, 0)];
    let mut most: u64 = 0;
    for e in &trace {
        held_total = match e.action {
            TraceAction::Alloc => held_total.saturating_add(e.bytes),
            TraceAction::Free => held_total.saturating_sub(e.bytes),
        };
        most = most.max(held_total);
        points.push((f64::from(e.step), held_total));
    }
    let chart_top = most.max(1) as f64 * 1.1;
    let cy = |b: u64| CHART_H - b as f64 / chart_top * CHART_H;
    let _ = write!(
        out,
        "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
        num(LEFT),
        num(PLOT_W),
        num(CHART_H)
    );
    let mut path = format!("M{},{}", num(x(0.0)), num(cy(0)));
    let mut last_y = cy(0);
    for &(step, b) in &points[1..] {
        let xx = x(step + 0.5);
        let _ = write!(
            path,
            " L{},{} L{},{}",
            num(xx),
            num(last_y),
            num(xx),
            num(cy(b))
        );
        last_y = cy(b);
    }
    let _ = write!(path, " L{},{}", num(x(columns)), num(last_y));
    let _ = write!(
        out,
        "<path d=\"{path}\" fill=\"none\" stroke=\"#3b6e8f\" stroke-width=\"1.5\"/>"
    );
    text(&mut out, 2.0, 12.0, "small", "bytes held in all", 1);
    text(
        &mut out,
        2.0,
        26.0,
        "small",
        &format!("most {}", bytes(most)),
        1,
    );

    // Lanes: one per pool or block, then the refreshes.
    let lanes_top = CHART_H + 14.0;
    let lane_y = |k: usize| lanes_top + LANE * k as f64;
    for (k, pool) in lanes.iter().enumerate() {
        let class = if marks.names.contains(*pool) {
            "small bad mono"
        } else {
            "small mono"
        };
        text(&mut out, 2.0, lane_y(k) + 14.0, class, pool, 1);
        line(
            &mut out,
            (LEFT, lane_y(k) + LANE),
            (LEFT + PLOT_W, lane_y(k) + LANE),
            "tick",
        );
    }
    let refresh_lane = lanes.len();
    text(
        &mut out,
        2.0,
        lane_y(refresh_lane) + 14.0,
        "small",
        "refreshes",
        1,
    );
    let bottom = lane_y(refresh_lane + 1);
    line(&mut out, (LEFT, 0.0), (LEFT, bottom), "axis");
    line(&mut out, (LEFT, bottom), (LEFT + PLOT_W, bottom), "axis");
    let every = (columns / 16.0).ceil().max(1.0);
    let mut s = 0.0;
    while s < columns {
        let xx = x(s + 0.5);
        line(&mut out, (xx, bottom), (xx, bottom + 4.0), "axis");
        let label = if s == events {
            "end".to_owned()
        } else {
            format!("{s}")
        };
        text(&mut out, xx - 4.0, bottom + 15.0, "small", &label, 1);
        s += every;
    }
    text(
        &mut out,
        LEFT + PLOT_W / 2.0 - 40.0,
        bottom + 28.0,
        "small",
        "script event (the trace entry's step)",
        1,
    );

    // Bars: an allocation from its step to the step of the free that matches it.
    let mut open: BTreeMap<&str, Vec<(usize, u32, u64)>> = BTreeMap::new();
    let mut bars = 0usize;
    let mut bar = |out: &mut String, lane: usize, from: f64, to: f64, class: &str, tip: &str| {
        bars += 1;
        if bars > MAX_ITEMS {
            return;
        }
        // From the middle of the event that takes it to the middle of the one that gives it back.
        let (x1, x2) = (x(from + 0.5), x(to + 0.5));
        rect(
            out,
            [x1, lane_y(lane) + 4.0, (x2 - x1).max(2.0), LANE - 8.0],
            class,
            tip,
            Some(tip),
        );
    };
    for (i, e) in trace.iter().enumerate() {
        let Some(lane) = lanes.iter().position(|p| *p == e.pool) else {
            continue;
        };
        match e.action {
            TraceAction::Alloc => open.entry(&e.pool).or_default().push((i, e.step, e.bytes)),
            TraceAction::Free => {
                let blocks = open.entry(&e.pool).or_default();
                let found = blocks
                    .iter()
                    .position(|&(_, _, b)| b == e.bytes)
                    .or(if blocks.is_empty() { None } else { Some(0) });
                match found {
                    Some(k) => {
                        let (a, step, b) = blocks.remove(k);
                        let bad = marks.entries.contains(&a) || marks.entries.contains(&i);
                        let mut class = lane_class(&e.pool).to_owned();
                        if bad {
                            class.push_str(" violating");
                        }
                        let tip = if b == e.bytes {
                            format!("{} (entries {a}–{i})", bytes(b))
                        } else {
                            format!(
                                "{} taken, {} given back (entries {a}–{i})",
                                bytes(b),
                                bytes(e.bytes)
                            )
                        };
                        bar(
                            &mut out,
                            lane,
                            f64::from(step),
                            f64::from(e.step),
                            &class,
                            &tip,
                        );
                    }
                    None => {
                        // A free of nothing held: a red cross at its step.
                        let (xx, yy) = (x(f64::from(e.step) + 0.5), lane_y(lane) + LANE / 2.0);
                        line(
                            &mut out,
                            (xx - 5.0, yy - 5.0),
                            (xx + 5.0, yy + 5.0),
                            "violating",
                        );
                        line(
                            &mut out,
                            (xx - 5.0, yy + 5.0),
                            (xx + 5.0, yy - 5.0),
                            "violating",
                        );
                        let _ = write!(
                            out,
                            "<circle cx=\"{}\" cy=\"{}\" r=\"7\" fill=\"none\" stroke=\"#d00\"><title>{}</title></circle>",
                            num(xx),
                            num(yy),
                            super::esc(&format!("entry {i}: frees {} that is not held", bytes(e.bytes)))
                        );
                    }
                }
            }
        }
    }
    // Still held after the trace: open to the right edge, outlined as a violation.
    for (pool, blocks) in &open {
        let Some(lane) = lanes.iter().position(|p| p == pool) else {
            continue;
        };
        for &(a, step, b) in blocks {
            let tip = format!("{} still held at the end (entry {a})", bytes(b));
            let class = format!("{} violating", lane_class(pool));
            bar(&mut out, lane, f64::from(step), columns - 1.0, &class, &tip);
        }
    }
    for r in obs.refreshes.iter().take(MAX_ITEMS) {
        let xx = x(f64::from(r.step) + 0.5);
        let yy = lane_y(refresh_lane) + LANE / 2.0 + 4.0;
        let (mark, class) = if r.ok {
            ("✓", "small")
        } else {
            ("✗", "small bad")
        };
        text(
            &mut out,
            xx - 3.0,
            yy,
            class,
            &format!("{mark}{}", r.graph),
            1,
        );
    }

    // The script, then what was not drawn, the errors and the warnings.
    let mut ly = bottom + 46.0;
    text(&mut out, 2.0, ly, "sub", "script", 1);
    ly += ROW;
    for (i, e) in scenario.events.iter().take(MAX_EVENT_ROWS).enumerate() {
        text(
            &mut out,
            2.0,
            ly,
            "small mono",
            &format!("{i}: {}", event_text(e)),
            2,
        );
        ly += ROW;
    }
    let mut notes = Vec::new();
    if scenario.events.len() > MAX_EVENT_ROWS {
        notes.push(format!(
            "… {} more events",
            scenario.events.len() - MAX_EVENT_ROWS
        ));
    }
    if obs.trace.len() > trace.len() || bars > MAX_ITEMS {
        notes.push(format!(
            "showing {} of {} allocations (the picture draws at most {MAX_ITEMS})",
            bars.min(MAX_ITEMS),
            obs.trace.len()
        ));
    }
    if hidden_lanes > 0 {
        notes.push(format!("{hidden_lanes} more pools not drawn"));
    }
    for d in obs.errors.iter().take(6) {
        notes.push(format!("error [{}] {}", d.clause, d.message));
    }
    for d in obs.warnings.iter().take(4) {
        notes.push(format!("warning [{}] {}", d.clause, d.message));
    }
    for n in &notes {
        text(&mut out, 2.0, ly, "small bad", &cut(n, 140), 3);
        ly += ROW;
    }
    Panel {
        width: LEFT + PLOT_W + 8.0,
        height: ly + 4.0,
        body: out,
    }
}
