//! The picture of a session trace: the script's events across, one lane per pool or block, each
//! held allocation a bar from the event that took it to the event that gave it back, the bytes
//! held in all above the lanes, and the refreshes (done or refused) in a lane of their own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ge_spec::vocab::session::{
    SessionEvent, SessionObservation, SessionScenario, TraceAction, TraceEntry,
};

use super::{bytes, cut, line, num, rect, text, Marks, Panel, MAX_ITEMS};

const LEFT: f64 = 130.0;
const PLOT_W: f64 = 560.0;
const CHART_H: f64 = 90.0;
const LANE: f64 = 22.0;
const MAX_LANES: usize = 32;
const MAX_EVENT_ROWS: usize = 24;
const ROW: f64 = 13.0;
/// Where the first lane begins, under the chart.
const LANES_TOP: f64 = CHART_H + 14.0;

/// The allocations each pool holds, in the order taken: the trace entry, its step, its bytes.
type Held<'a> = BTreeMap<&'a str, Vec<(usize, u32, u64)>>;

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

/// The panel of `obs`, a trace of `scenario`'s script: the chart of bytes held, the lanes with
/// their allocations and the refreshes, then the script and the notes, `marks` highlighted.
pub(super) fn panel(scenario: &SessionScenario, obs: &SessionObservation, marks: &Marks) -> Panel {
    let plot = Plot::new(scenario, obs, marks);
    let mut out = String::new();
    plot.chart(&mut out);
    plot.lane_names(&mut out);
    // The lanes, then the refreshes' lane.
    let bottom = plot.lane_y(plot.lanes.len() + 1);
    plot.axes(&mut out, bottom);
    let bars = plot.allocations(&mut out);
    plot.refreshes(&mut out);
    // The script, then what was not drawn, the errors and the warnings.
    let mut ly = plot.script(&mut out, bottom + 46.0);
    for n in &plot.notes(bars) {
        text(&mut out, 2.0, ly, "small bad", &cut(n, 140), 3);
        ly += ROW;
    }
    Panel {
        width: LEFT + PLOT_W + 8.0,
        height: ly + 4.0,
        body: out,
    }
}

/// What a session panel draws from, and the geometry its parts share.
struct Plot<'a> {
    scenario: &'a SessionScenario,
    obs: &'a SessionObservation,
    marks: &'a Marks,
    /// The trace entries drawn: the first `MAX_ITEMS * 4`.
    trace: Vec<&'a TraceEntry>,
    /// One lane per pool or block, in order of first appearance, the first [`MAX_LANES`].
    lanes: Vec<&'a str>,
    /// How many pools have no lane.
    hidden_lanes: usize,
    /// The script's events.
    events: f64,
    /// The columns across: one per event, the last one the end of the script.
    columns: f64,
}

impl<'a> Plot<'a> {
    /// The entries to draw and their lanes.
    fn new(scenario: &'a SessionScenario, obs: &'a SessionObservation, marks: &'a Marks) -> Self {
        let trace: Vec<_> = obs.trace.iter().take(MAX_ITEMS * 4).collect();
        let mut lanes: Vec<&str> = Vec::new();
        for e in &trace {
            if !lanes.contains(&e.pool.as_str()) {
                lanes.push(&e.pool);
            }
        }
        let hidden_lanes = lanes.len().saturating_sub(MAX_LANES);
        lanes.truncate(MAX_LANES);
        let events = scenario.events.len() as f64;
        Plot {
            scenario,
            obs,
            marks,
            trace,
            lanes,
            hidden_lanes,
            events,
            columns: events + 1.0,
        }
    }

    /// Where the column `step` begins across the plot.
    fn x(&self, step: f64) -> f64 {
        LEFT + step / self.columns * PLOT_W
    }

    /// The top of the lane `k`.
    fn lane_y(&self, k: usize) -> f64 {
        LANES_TOP + LANE * k as f64
    }

    /// The lane of `pool`, when it has one.
    fn lane(&self, pool: &str) -> Option<usize> {
        self.lanes.iter().position(|p| *p == pool)
    }

    /// The bytes held in all after each entry, at the entry's step (from none before the
    /// first), and the most held.
    fn held(&self) -> (Vec<(f64, u64)>, u64) {
        let mut held_total: u64 = 0;
        let mut points: Vec<(f64, u64)> = vec![(0.0, 0)];
        let mut most: u64 = 0;
        for e in &self.trace {
            held_total = match e.action {
                TraceAction::Alloc => held_total.saturating_add(e.bytes),
                TraceAction::Free => held_total.saturating_sub(e.bytes),
            };
            most = most.max(held_total);
            points.push((f64::from(e.step), held_total));
        }
        (points, most)
    }

    /// The chart above the lanes: the bytes held in all as a step line through the script,
    /// framed, and the most held.
    fn chart(&self, out: &mut String) {
        let (points, most) = self.held();
        let chart_top = most.max(1) as f64 * 1.1;
        let cy = |b: u64| CHART_H - b as f64 / chart_top * CHART_H;
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
            num(LEFT),
            num(PLOT_W),
            num(CHART_H)
        );
        let path = self.step_line(&points, cy);
        let _ = write!(
            out,
            "<path d=\"{path}\" fill=\"none\" stroke=\"#3b6e8f\" stroke-width=\"1.5\"/>"
        );
        text(out, 2.0, 12.0, "small", "bytes held in all", 1);
        text(out, 2.0, 26.0, "small", &format!("most {}", bytes(most)), 1);
    }

    /// The chart's path through `points` (step, bytes), each change in the middle of its
    /// event's column, `cy` the height of a byte count, on to the end of the script.
    fn step_line(&self, points: &[(f64, u64)], cy: impl Fn(u64) -> f64) -> String {
        let mut path = format!("M{},{}", num(self.x(0.0)), num(cy(0)));
        let mut last_y = cy(0);
        for &(step, b) in &points[1..] {
            let xx = self.x(step + 0.5);
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
        let _ = write!(path, " L{},{}", num(self.x(self.columns)), num(last_y));
        path
    }

    /// The lanes' names at the left (a marked pool's in red) with a line under each lane, then
    /// the name of the refreshes' lane.
    fn lane_names(&self, out: &mut String) {
        for (k, pool) in self.lanes.iter().enumerate() {
            let class = if self.marks.names.contains(*pool) {
                "small bad mono"
            } else {
                "small mono"
            };
            let y = self.lane_y(k);
            text(out, 2.0, y + 14.0, class, pool, 1);
            line(out, (LEFT, y + LANE), (LEFT + PLOT_W, y + LANE), "tick");
        }
        let y = self.lane_y(self.lanes.len());
        text(out, 2.0, y + 14.0, "small", "refreshes", 1);
    }

    /// The axes down to `bottom`, the script's events across (at most 16 ticks, the last
    /// column `end`) and their title.
    fn axes(&self, out: &mut String, bottom: f64) {
        line(out, (LEFT, 0.0), (LEFT, bottom), "axis");
        line(out, (LEFT, bottom), (LEFT + PLOT_W, bottom), "axis");
        let every = (self.columns / 16.0).ceil().max(1.0);
        let mut s = 0.0;
        while s < self.columns {
            let xx = self.x(s + 0.5);
            line(out, (xx, bottom), (xx, bottom + 4.0), "axis");
            let label = if s == self.events {
                "end".to_owned()
            } else {
                format!("{s}")
            };
            text(out, xx - 4.0, bottom + 15.0, "small", &label, 1);
            s += every;
        }
        let title = "script event (the trace entry's step)";
        text(
            out,
            LEFT + PLOT_W / 2.0 - 40.0,
            bottom + 28.0,
            "small",
            title,
            1,
        );
    }

    /// The allocations in their lanes: each a bar from its step to the step of the free that
    /// matches it, a cross for a free of nothing held, and a bar open to the right edge for
    /// what is still held at the end; returns how many bars there are (the first
    /// [`MAX_ITEMS`] drawn).
    fn allocations(&self, out: &mut String) -> usize {
        let mut open: Held = BTreeMap::new();
        let mut bars = 0usize;
        for (i, e) in self.trace.iter().enumerate() {
            let Some(lane) = self.lane(&e.pool) else {
                continue;
            };
            let blocks = open.entry(&e.pool).or_default();
            match e.action {
                TraceAction::Alloc => blocks.push((i, e.step, e.bytes)),
                TraceAction::Free => self.free(out, blocks, &mut bars, lane, (i, e)),
            }
        }
        self.still_held(out, &open, &mut bars);
        bars
    }

    /// The free of entry `i`, `e`, in `lane`: the bar of the allocation of its pool it gives
    /// back (the first of its size, else the first held), or a cross when none is held.
    fn free(
        &self,
        out: &mut String,
        blocks: &mut Vec<(usize, u32, u64)>,
        bars: &mut usize,
        lane: usize,
        (i, e): (usize, &TraceEntry),
    ) {
        let found = blocks
            .iter()
            .position(|&(_, _, b)| b == e.bytes)
            .or(if blocks.is_empty() { None } else { Some(0) });
        let Some(k) = found else {
            self.cross(out, lane, i, e);
            return;
        };
        let (a, step, b) = blocks.remove(k);
        let mut class = lane_class(&e.pool).to_owned();
        if self.marks.entries.contains(&a) || self.marks.entries.contains(&i) {
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
        let span = (f64::from(step), f64::from(e.step));
        self.bar(out, bars, lane, span, &class, &tip);
    }

    /// A free of nothing held (entry `i`, `e`): a red cross in a circle at its step in `lane`.
    fn cross(&self, out: &mut String, lane: usize, i: usize, e: &TraceEntry) {
        let (xx, yy) = (
            self.x(f64::from(e.step) + 0.5),
            self.lane_y(lane) + LANE / 2.0,
        );
        line(out, (xx - 5.0, yy - 5.0), (xx + 5.0, yy + 5.0), "violating");
        line(out, (xx - 5.0, yy + 5.0), (xx + 5.0, yy - 5.0), "violating");
        let tip = format!("entry {i}: frees {} that is not held", bytes(e.bytes));
        let _ = write!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"7\" fill=\"none\" stroke=\"#d00\"><title>{}</title></circle>",
            num(xx),
            num(yy),
            super::esc(&tip)
        );
    }

    /// What is still held after the trace: bars open to the right edge, outlined as
    /// violations.
    fn still_held(&self, out: &mut String, open: &Held, bars: &mut usize) {
        for (pool, blocks) in open {
            let Some(lane) = self.lane(pool) else {
                continue;
            };
            for &(a, step, b) in blocks {
                let tip = format!("{} still held at the end (entry {a})", bytes(b));
                let class = format!("{} violating", lane_class(pool));
                let span = (f64::from(step), self.columns - 1.0);
                self.bar(out, bars, lane, span, &class, &tip);
            }
        }
    }

    /// One more bar, counted in `bars` and drawn while there are at most [`MAX_ITEMS`]: in
    /// `lane`, from the middle of the event that takes the bytes to the middle of the one
    /// that gives them back.
    fn bar(
        &self,
        out: &mut String,
        bars: &mut usize,
        lane: usize,
        (from, to): (f64, f64),
        class: &str,
        tip: &str,
    ) {
        *bars += 1;
        if *bars > MAX_ITEMS {
            return;
        }
        let (x1, x2) = (self.x(from + 0.5), self.x(to + 0.5));
        let r = [x1, self.lane_y(lane) + 4.0, (x2 - x1).max(2.0), LANE - 8.0];
        rect(out, r, class, tip, Some(tip));
    }

    /// The refreshes in their lane at their steps: the graph, ✓ when done, ✗ (in red) when
    /// refused.
    fn refreshes(&self, out: &mut String) {
        let refresh_lane = self.lanes.len();
        for r in self.obs.refreshes.iter().take(MAX_ITEMS) {
            let xx = self.x(f64::from(r.step) + 0.5);
            let yy = self.lane_y(refresh_lane) + LANE / 2.0 + 4.0;
            let (mark, class) = if r.ok {
                ("✓", "small")
            } else {
                ("✗", "small bad")
            };
            text(out, xx - 3.0, yy, class, &format!("{mark}{}", r.graph), 1);
        }
    }

    /// The script from `ly` down, one event a line, the first [`MAX_EVENT_ROWS`]; returns the
    /// height below it.
    fn script(&self, out: &mut String, mut ly: f64) -> f64 {
        text(out, 2.0, ly, "sub", "script", 1);
        ly += ROW;
        for (i, e) in self.scenario.events.iter().take(MAX_EVENT_ROWS).enumerate() {
            let row = format!("{i}: {}", event_text(e));
            text(out, 2.0, ly, "small mono", &row, 2);
            ly += ROW;
        }
        ly
    }

    /// The lines under the script: what was not drawn (of `bars` allocations), then the
    /// answer's errors and warnings.
    fn notes(&self, bars: usize) -> Vec<String> {
        let (scenario, obs) = (self.scenario, self.obs);
        let mut notes = Vec::new();
        if scenario.events.len() > MAX_EVENT_ROWS {
            notes.push(format!(
                "… {} more events",
                scenario.events.len() - MAX_EVENT_ROWS
            ));
        }
        if obs.trace.len() > self.trace.len() || bars > MAX_ITEMS {
            notes.push(format!(
                "showing {} of {} allocations (the picture draws at most {MAX_ITEMS})",
                bars.min(MAX_ITEMS),
                obs.trace.len()
            ));
        }
        if self.hidden_lanes > 0 {
            notes.push(format!("{} more pools not drawn", self.hidden_lanes));
        }
        for d in obs.errors.iter().take(6) {
            notes.push(format!("error [{}] {}", d.clause, d.message));
        }
        for d in obs.warnings.iter().take(4) {
            notes.push(format!("warning [{}] {}", d.clause, d.message));
        }
        notes
    }
}
