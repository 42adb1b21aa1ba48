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

pub(super) fn panel(
    scenario: &TransferScenario,
    obs: &TransferObservation,
    marks: &Marks,
    profile: Profile,
) -> Panel {
    let mut out = String::new();
    let reading = Reading::new(
        profile,
        &scenario.options,
        crate::oracle::transfer::context(scenario),
    );
    let threshold = reading.values().fusion_size;
    let sizes: BTreeMap<u32, u64> = scenario.inputs.iter().map(|i| (i.index, i.size)).collect();
    let groups: [(&str, &str, &Vec<u32>); 4] = [
        ("fused", "fused", &obs.fused),
        ("batched", "batch-copied", &obs.batched),
        ("direct", "copied alone", &obs.direct),
        ("on_device", "on the device", &obs.on_device),
    ];
    let planned: BTreeSet<u32> = groups.iter().flat_map(|g| g.2.iter().copied()).collect();
    let unplanned: Vec<u32> = scenario
        .inputs
        .iter()
        .map(|i| i.index)
        .filter(|i| !planned.contains(i))
        .collect();
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
    let bar_x = |b: u64| LEFT + (b as f64 + 1.0).log2() / scale * PLOT_W;
    let mut y = 8.0;
    let mut rows = 0usize;
    let mut hidden = 0usize;
    let all: Vec<(&str, &str, &Vec<u32>)> = groups
        .iter()
        .copied()
        .chain(std::iter::once(("unplanned", "not planned", &unplanned)))
        .collect();
    for (class, name, members) in all {
        if members.is_empty() {
            continue;
        }
        let total: u64 = members
            .iter()
            .filter_map(|i| sizes.get(i))
            .fold(0u64, |a, b| a.saturating_add(*b));
        let head = if class == "fused" {
            format!(
                "{name}: {} inputs, {} in one buffer (fused_bytes {})",
                members.len(),
                bytes(total),
                obs.fused_bytes
            )
        } else {
            format!("{name}: {} inputs, {}", members.len(), bytes(total))
        };
        text(&mut out, 2.0, y + 10.0, "sub", &head, 2);
        y += ROW + 2.0;
        for &index in members {
            if rows >= MAX_ROWS {
                hidden += 1;
                continue;
            }
            rows += 1;
            let size = sizes.get(&index).copied();
            let label = match size {
                Some(s) => format!("input {index} · {}", exact(s)),
                None => format!("input {index} · not in the scenario"),
            };
            let mut cls = class.to_owned();
            if size.is_none() || marks.names.contains(&index.to_string()) {
                cls.push_str(" violating");
            }
            text(&mut out, 14.0, y + 11.0, "small mono", &label, 1);
            let w = bar_x(size.unwrap_or(0)) - LEFT;
            rect(
                &mut out,
                [LEFT, y + 2.0, w.max(1.0), ROW - 4.0],
                &cls,
                &format!("{label}, {name}"),
                None,
            );
            y += ROW;
        }
        y += 6.0;
    }
    let bottom = y.max(40.0);
    // The lines go under the labels and bars.
    let mut under = String::new();
    line(&mut under, (LEFT, 0.0), (LEFT, bottom), "axis");
    let tx = bar_x(threshold);
    line(&mut under, (tx, 0.0), (tx, bottom), "threshold");
    out.insert_str(0, &under);
    text(
        &mut out,
        (tx + 4.0).min(LEFT + PLOT_W - 260.0),
        bottom + 14.0,
        "small bad",
        &format!(
            "fusion threshold {}{} (sizes on a log scale)",
            exact(threshold),
            if threshold == 0 { ": fusion off" } else { "" }
        ),
        2,
    );
    let mut ly = bottom + 30.0;
    let mut notes = Vec::new();
    if hidden > 0 {
        notes.push(format!(
            "showing {rows} of {} inputs (the picture draws at most {MAX_ROWS})",
            rows + hidden
        ));
    }
    for d in obs.errors.iter().take(6) {
        notes.push(format!("error [{}] {}", d.clause, d.message));
    }
    for d in obs.warnings.iter().take(4) {
        notes.push(format!("warning [{}] {}", d.clause, d.message));
    }
    if obs.errors.is_empty() && planned.is_empty() && unplanned.is_empty() {
        notes.push("no inputs".to_owned());
    }
    for n in &notes {
        text(&mut out, 2.0, ly, "small bad", n, 3);
        ly += ROW;
    }
    Panel {
        width: LEFT + PLOT_W + 16.0,
        height: ly + 4.0,
        body: out,
    }
}
