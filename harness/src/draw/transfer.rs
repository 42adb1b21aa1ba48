//! The picture of a transfer plan: the inputs grouped by how they move (fused, batch-copied,
//! copied alone, already on the device, not planned), each a bar as long as its size, with the
//! fusion threshold in force (`ge.exec.input_fusion_size`, as the suite reads the options) as
//! a line across the bars.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::Profile;

use super::{bytes, exact, line, rect, text, Marks, Panel};
use crate::oracle::options::Reading;

const LEFT: f64 = 200.0;
const PLOT_W: f64 = 420.0;
const ROW: f64 = 16.0;
const MAX_ROWS: usize = 64;

/// The panel of `obs`, a plan for `scenario`'s inputs: a group after another, each input a
/// row, over the axis and the threshold of `profile`, then the notes, `marks` highlighted.
pub(super) fn panel(
    scenario: &TransferScenario,
    obs: &TransferObservation,
    marks: &Marks,
    profile: Profile,
) -> Panel {
    let plan = Plan::new(scenario, obs, marks, profile);
    let unplanned = unplanned(scenario, obs);
    let groups = groups(obs, &unplanned);
    let mut out = String::new();
    let mut rows = Rows {
        y: 8.0,
        drawn: 0,
        hidden: 0,
    };
    for (class, name, members) in &groups {
        if !members.is_empty() {
            plan.group(&mut out, &mut rows, (class, name), members);
        }
    }
    let bottom = rows.y.max(40.0);
    plan.threshold(&mut out, bottom);
    let no_inputs = groups.iter().all(|(_, _, members)| members.is_empty());
    let mut ly = bottom + 30.0;
    for n in &plan.notes(&rows, no_inputs) {
        text(&mut out, 2.0, ly, "small bad", n, 3);
        ly += ROW;
    }
    Panel {
        width: LEFT + PLOT_W + 16.0,
        height: ly + 4.0,
        body: out,
    }
}

/// The inputs by how they move: the class of their bars, the group's name and its members,
/// `unplanned` (the inputs no group of the plan holds) last.
fn groups<'a>(
    obs: &'a TransferObservation,
    unplanned: &'a [u32],
) -> [(&'static str, &'static str, &'a [u32]); 5] {
    [
        ("fused", "fused", &obs.fused),
        ("batched", "batch-copied", &obs.batched),
        ("direct", "copied alone", &obs.direct),
        ("on_device", "on the device", &obs.on_device),
        ("unplanned", "not planned", unplanned),
    ]
}

/// The inputs of `scenario` no group of the plan holds, in the scenario's order.
fn unplanned(scenario: &TransferScenario, obs: &TransferObservation) -> Vec<u32> {
    let planned: BTreeSet<u32> = [&obs.fused, &obs.batched, &obs.direct, &obs.on_device]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    scenario
        .inputs
        .iter()
        .map(|i| i.index)
        .filter(|i| !planned.contains(i))
        .collect()
}

/// What a transfer panel draws from: the answer, the marks, the inputs' sizes, the fusion
/// threshold and the scale of the bars.
struct Plan<'a> {
    obs: &'a TransferObservation,
    marks: &'a Marks,
    /// The size of each input of the scenario, by index.
    sizes: BTreeMap<u32, u64>,
    /// The fusion threshold in force (`ge.exec.input_fusion_size`), bytes.
    threshold: u64,
    /// The bars' scale: log2 of twice the largest size (or threshold).
    scale: f64,
}

/// Where the next row goes, how many rows are drawn and how many are not.
struct Rows {
    y: f64,
    drawn: usize,
    hidden: usize,
}

impl<'a> Plan<'a> {
    /// The sizes and the threshold (`ge.exec.input_fusion_size` as the options read under
    /// `profile`) of `scenario`, and a scale for both.
    fn new(
        scenario: &TransferScenario,
        obs: &'a TransferObservation,
        marks: &'a Marks,
        profile: Profile,
    ) -> Self {
        let reading = Reading::new(
            profile,
            &scenario.options,
            crate::oracle::transfer::context(scenario),
        );
        let threshold = reading.values().fusion_size;
        let sizes: BTreeMap<u32, u64> = scenario.inputs.iter().map(|i| (i.index, i.size)).collect();
        // A logarithmic scale: sizes run from bytes to gigabytes in one plan.
        let scale = ((sizes
            .values()
            .copied()
            .max()
            .unwrap_or(0)
            .max(threshold)
            .max(1) as f64)
            * 2.0)
            .log2();
        Plan {
            obs,
            marks,
            sizes,
            threshold,
            scale,
        }
    }

    /// Where a bar of `b` bytes ends.
    fn bar_x(&self, b: u64) -> f64 {
        LEFT + (b as f64 + 1.0).log2() / self.scale * PLOT_W
    }

    /// One group of inputs: its heading (how many, how many bytes, and for the fused the size
    /// of their buffer), then a row per member.
    fn group(&self, out: &mut String, rows: &mut Rows, kind: (&str, &str), members: &[u32]) {
        let (class, name) = kind;
        let total: u64 = members
            .iter()
            .filter_map(|i| self.sizes.get(i))
            .fold(0u64, |a, b| a.saturating_add(*b));
        let head = if class == "fused" {
            format!(
                "{name}: {} inputs, {} in one buffer (fused_bytes {})",
                members.len(),
                bytes(total),
                self.obs.fused_bytes
            )
        } else {
            format!("{name}: {} inputs, {}", members.len(), bytes(total))
        };
        text(out, 2.0, rows.y + 10.0, "sub", &head, 2);
        rows.y += ROW + 2.0;
        for &index in members {
            self.row(out, rows, kind, index);
        }
        rows.y += 6.0;
    }

    /// The row of input `index`, while fewer than [`MAX_ROWS`] are drawn: its label and a bar
    /// as long as its size, outlined when the scenario has no such input or the marks name it.
    fn row(&self, out: &mut String, rows: &mut Rows, (class, name): (&str, &str), index: u32) {
        if rows.drawn >= MAX_ROWS {
            rows.hidden += 1;
            return;
        }
        rows.drawn += 1;
        let size = self.sizes.get(&index).copied();
        let label = match size {
            Some(s) => format!("input {index} · {}", exact(s)),
            None => format!("input {index} · not in the scenario"),
        };
        let mut cls = class.to_owned();
        if size.is_none() || self.marks.names.contains(&index.to_string()) {
            cls.push_str(" violating");
        }
        let y = rows.y;
        text(out, 14.0, y + 11.0, "small mono", &label, 1);
        let w = self.bar_x(size.unwrap_or(0)) - LEFT;
        let r = [LEFT, y + 2.0, w.max(1.0), ROW - 4.0];
        rect(out, r, &cls, &format!("{label}, {name}"), None);
        rows.y += ROW;
    }

    /// The axis and the fusion threshold's line down to `bottom`, under the labels and bars
    /// already drawn, and the threshold's caption below them.
    fn threshold(&self, out: &mut String, bottom: f64) {
        let mut under = String::new();
        line(&mut under, (LEFT, 0.0), (LEFT, bottom), "axis");
        let tx = self.bar_x(self.threshold);
        line(&mut under, (tx, 0.0), (tx, bottom), "threshold");
        out.insert_str(0, &under);
        let caption = format!(
            "fusion threshold {}{} (sizes on a log scale)",
            exact(self.threshold),
            if self.threshold == 0 {
                ": fusion off"
            } else {
                ""
            }
        );
        let x = (tx + 4.0).min(LEFT + PLOT_W - 260.0);
        text(out, x, bottom + 14.0, "small bad", &caption, 2);
    }

    /// The lines under the bars: how many rows are not drawn, the answer's errors and
    /// warnings, and `no inputs` when there are none and no error says why.
    fn notes(&self, rows: &Rows, no_inputs: bool) -> Vec<String> {
        let obs = self.obs;
        let mut notes = Vec::new();
        if rows.hidden > 0 {
            notes.push(format!(
                "showing {} of {} inputs (the picture draws at most {MAX_ROWS})",
                rows.drawn,
                rows.drawn + rows.hidden
            ));
        }
        for d in obs.errors.iter().take(6) {
            notes.push(format!("error [{}] {}", d.clause, d.message));
        }
        for d in obs.warnings.iter().take(4) {
            notes.push(format!("warning [{}] {}", d.clause, d.message));
        }
        if obs.errors.is_empty() && no_inputs {
            notes.push("no inputs".to_owned());
        }
        notes
    }
}
