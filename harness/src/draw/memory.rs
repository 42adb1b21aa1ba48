//! The picture of a memory plan: steps across, offsets up, each placed tensor a rectangle over
//! its bytes and its inclusive lifetime, coloured by role and labelled with name, role and size;
//! reused and aliased I/O outlined, cleanup groups as bands, the peak and the lower bound as
//! lines, and bytes two tensors in use at once share hatched in red.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario, Role, Tensor, ALIGNMENT};

use super::{bytes, cut, esc, inside, line, num, rect, text, Marks, Panel, Style, MAX_ITEMS};

const LEFT: f64 = 78.0;
const PLOT_W: f64 = 520.0;
const PLOT_H: f64 = 320.0;
const LEGEND_X: f64 = LEFT + PLOT_W + 28.0;
const LEGEND_ROWS: usize = 32;
const ROW: f64 = 13.0;

fn role_text(role: &Role) -> String {
    match role {
        Role::Input { index } => format!("input {index}"),
        Role::Output { index } => format!("output {index}"),
        Role::Intermediate => "intermediate".to_owned(),
        Role::Memset { op } => format!("memset {}", cut(op, 16)),
    }
}

fn role_class(role: &Role) -> &'static str {
    match role {
        Role::Input { .. } => "input",
        Role::Output { .. } => "output",
        Role::Intermediate => "intermediate",
        Role::Memset { .. } => "memset",
    }
}

pub(super) fn panel(
    scenario: &MemoryScenario,
    obs: &MemoryObservation,
    marks: &Marks,
    style: Style,
) -> Panel {
    let mut out = String::new();
    let tensors = &scenario.tensors;
    // The marked tensors first, then the others in the scenario's order, up to the cap.
    let mut drawn: Vec<&Tensor> = tensors
        .iter()
        .filter(|t| marks.names.contains(&t.name))
        .take(MAX_ITEMS)
        .collect();
    let room = MAX_ITEMS - drawn.len();
    drawn.extend(
        tensors
            .iter()
            .filter(|t| !marks.names.contains(&t.name))
            .take(room),
    );
    let steps = f64::from(scenario.run_end()) + 1.0;
    let bound = ge_reference::memory::lower_bound(scenario);
    let top_end = drawn
        .iter()
        .filter_map(|t| obs.offsets.get(&t.name).map(|o| o.saturating_add(t.size)))
        .max()
        .unwrap_or(0);
    let cleanup_end = obs
        .cleanup
        .iter()
        .map(|g| g.offset.saturating_add(g.size))
        .max()
        .unwrap_or(0);
    let top = obs
        .peak_bytes
        .max(bound)
        .max(top_end)
        .max(cleanup_end)
        .max(ALIGNMENT) as f64
        * 1.05;
    let y = |off: u64| PLOT_H - (off as f64 / top * PLOT_H);
    let x = |step: f64| LEFT + step / steps * PLOT_W;

    // Frame and axes.
    let _ = std::fmt::Write::write_fmt(
        &mut out,
        format_args!(
            "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
            num(LEFT),
            num(PLOT_W),
            num(PLOT_H)
        ),
    );
    if style.grid {
        // Every 32 bytes where the lines stay at least 4 px apart, else every multiple of 32
        // that does, and said so.
        let per_px = top / PLOT_H;
        let mut every = ALIGNMENT as f64;
        while every / per_px < 4.0 {
            every *= 2.0;
        }
        let mut at = every;
        while at < top {
            line(
                &mut out,
                (LEFT, y(at as u64)),
                (LEFT + PLOT_W, y(at as u64)),
                "grid",
            );
            at += every;
        }
        let what = if every == ALIGNMENT as f64 {
            "grid: every 32 bytes".to_owned()
        } else {
            format!(
                "grid: every {} (32-byte lines would be under 4 px apart)",
                bytes(every as u64)
            )
        };
        text(&mut out, LEFT, PLOT_H + 40.0, "small", &what, 2);
    }
    line(&mut out, (LEFT, 0.0), (LEFT, PLOT_H), "axis");
    line(&mut out, (LEFT, PLOT_H), (LEFT + PLOT_W, PLOT_H), "axis");
    for k in 0..=4u32 {
        let off = (top / 1.05 * f64::from(k) / 4.0) as u64;
        let yy = y(off);
        line(&mut out, (LEFT - 4.0, yy), (LEFT, yy), "axis");
        text(&mut out, 2.0, yy + 4.0, "small", &bytes(off), 1);
    }
    let step_every = (steps / 12.0).ceil().max(1.0);
    let mut s = 0.0;
    while s < steps {
        let xx = x(s + 0.5);
        line(&mut out, (xx, PLOT_H), (xx, PLOT_H + 4.0), "axis");
        text(
            &mut out,
            xx - 3.0,
            PLOT_H + 15.0,
            "small",
            &format!("{s}"),
            1,
        );
        s += step_every;
    }
    text(
        &mut out,
        LEFT + PLOT_W / 2.0 - 30.0,
        PLOT_H + 28.0,
        "small",
        "step (inclusive lifetimes)",
        1,
    );
    text(&mut out, 2.0, PLOT_H + 28.0, "small", "offset ↑ (bytes)", 1);

    // Cleanup groups: bands behind the tensors, and a bracket at the right edge.
    for (i, g) in obs.cleanup.iter().take(MAX_ITEMS).enumerate() {
        let (y1, y2) = (y(g.offset.saturating_add(g.size)), y(g.offset));
        let tip = format!(
            "cleanup group {}: [{}, {}) {} over {}",
            i + 1,
            g.offset,
            g.offset.saturating_add(g.size),
            bytes(g.size),
            g.tensors.join(", ")
        );
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "<rect class=\"cleanup\" fill-opacity=\"0.45\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                num(LEFT),
                num(y1),
                num(PLOT_W + 12.0 + 6.0 * (i % 3) as f64),
                num((y2 - y1).max(1.0)),
                esc(&cut(&tip, 240))
            ),
        );
        text(
            &mut out,
            LEFT + PLOT_W + 2.0 + 6.0 * (i % 3) as f64,
            y1 + 9.0,
            "small",
            &format!("c{}", i + 1),
            1,
        );
    }

    let reused: BTreeSet<(bool, u32)> = obs
        .reused_inputs
        .iter()
        .map(|&i| (true, i))
        .chain(obs.reused_outputs.iter().map(|&o| (false, o)))
        .collect();
    let aliased: BTreeSet<(bool, u32)> = obs
        .aliases
        .iter()
        .flat_map(|a| [(true, a.input), (false, a.output)])
        .collect();
    let io = |role: &Role| match role {
        Role::Input { index } => Some((true, *index)),
        Role::Output { index } => Some((false, *index)),
        _ => None,
    };
    // Alias partners share their bytes by design: not an overlap.
    let partners: BTreeMap<&str, BTreeSet<&str>> = {
        let mut m: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for a in &obs.aliases {
            if let (Some(i), Some(o)) = (scenario.input(a.input), scenario.output(a.output)) {
                m.entry(&i.name).or_default().insert(&o.name);
                m.entry(&o.name).or_default().insert(&i.name);
            }
        }
        m
    };

    // The tensors; their labels go above the hatching, drawn after it.
    let mut labels = String::new();
    let mut unplaced = Vec::new();
    let mut placed: Vec<(&Tensor, u64)> = Vec::new();
    for t in &drawn {
        let Some(&off) = obs.offsets.get(&t.name) else {
            unplaced.push(*t);
            continue;
        };
        placed.push((t, off));
        let end = off.saturating_add(t.size);
        let (x1, x2) = (x(f64::from(t.first)), x(f64::from(t.last) + 1.0));
        let (y1, y2) = (y(end), y(off));
        let mut class = role_class(&t.role).to_owned();
        let mut notes = Vec::new();
        if let Some(k) = io(&t.role) {
            if reused.contains(&k) {
                class.push_str(" reused");
                notes.push("reused");
            }
            if aliased.contains(&k) {
                class.push_str(" alias");
                notes.push("aliased");
            }
        }
        if marks.names.contains(&t.name) {
            class.push_str(" violating");
        }
        let note = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        let tip = format!(
            "{} · {} · {} at [{off}, {end}) steps {}..={}{note}",
            t.name,
            role_text(&t.role),
            bytes(t.size),
            t.first,
            t.last
        );
        let label = format!(
            "{} · {} · {}{note}",
            t.name,
            role_text(&t.role),
            bytes(t.size)
        );
        let r = [x1 + 0.5, y1, (x2 - x1 - 1.0).max(1.0), (y2 - y1).max(1.5)];
        rect(&mut out, r, &class, &tip, None);
        inside(&mut labels, r, &label);
    }

    // Bytes shared by two tensors in use at one step (alias partners apart), hatched.
    let mut order: Vec<(u64, u64, &Tensor)> = placed
        .iter()
        .filter(|(t, _)| t.size > 0)
        .map(|(t, off)| (*off, off.saturating_add(t.size), *t))
        .collect();
    order.sort_by_key(|&(off, _, _)| off);
    let mut active: Vec<(u64, u64, &Tensor)> = Vec::new();
    let mut overlaps = 0usize;
    for &(off, end, t) in &order {
        active.retain(|&(_, e, _)| e > off);
        for &(aoff, aend, a) in &active {
            let partner = partners
                .get(a.name.as_str())
                .is_some_and(|p| p.contains(t.name.as_str()));
            let (first, last) = (a.first.max(t.first), a.last.min(t.last));
            if partner || first > last {
                continue;
            }
            overlaps += 1;
            if overlaps > MAX_ITEMS {
                continue;
            }
            let (lo, hi) = (aoff.max(off), aend.min(end));
            let tip = format!(
                "`{}` and `{}` share [{lo}, {hi}) at steps {first}..={last}",
                a.name, t.name
            );
            rect(
                &mut out,
                [
                    x(f64::from(first)) + 0.5,
                    y(hi),
                    (x(f64::from(last) + 1.0) - x(f64::from(first)) - 1.0).max(1.0),
                    (y(lo) - y(hi)).max(2.0),
                ],
                "overlap",
                &tip,
                None,
            );
        }
        active.push((off, end, t));
    }

    out.push_str(&labels);

    // Peak and lower bound.
    let peak_y = y(obs.peak_bytes);
    line(&mut out, (LEFT, peak_y), (LEFT + PLOT_W, peak_y), "peak");
    text(
        &mut out,
        LEFT + PLOT_W - 150.0,
        peak_y - 3.0,
        "small",
        &format!("peak {} ({} B)", bytes(obs.peak_bytes), obs.peak_bytes),
        1,
    );
    let bound_y = y(bound);
    line(&mut out, (LEFT, bound_y), (LEFT + PLOT_W, bound_y), "bound");
    text(
        &mut out,
        LEFT + 4.0,
        bound_y + 10.0,
        "small",
        &format!("lower bound {} ({bound} B)", bytes(bound)),
        1,
    );

    // The legend: colour key, then the tensors, then what is not drawn or not placed.
    let mut ly = 4.0;
    let mut key = |out: &mut String, class: &str, what: &str| {
        // `key` tells the legend's swatches from the plan's own rectangles.
        rect(
            out,
            [LEGEND_X, ly, 14.0, 9.0],
            &format!("key {class}"),
            what,
            None,
        );
        text(out, LEGEND_X + 18.0, ly + 8.0, "small", what, 1);
        ly += ROW;
    };
    for (class, what) in [
        ("input", "graph input"),
        ("output", "graph output"),
        ("intermediate", "intermediate"),
        ("memset", "memset output"),
        ("intermediate reused", "I/O reused by other tensors"),
        ("intermediate alias", "output aliased to its input"),
        ("intermediate violating", "named by a broken clause"),
        ("overlap", "bytes shared while both in use"),
        ("cleanup", "cleanup group"),
    ] {
        key(&mut out, class, what);
    }
    line(
        &mut out,
        (LEGEND_X, ly + 4.0),
        (LEGEND_X + 14.0, ly + 4.0),
        "peak",
    );
    text(&mut out, LEGEND_X + 18.0, ly + 8.0, "small", "peak", 1);
    ly += ROW;
    line(
        &mut out,
        (LEGEND_X, ly + 4.0),
        (LEGEND_X + 14.0, ly + 4.0),
        "bound",
    );
    text(
        &mut out,
        LEGEND_X + 18.0,
        ly + 8.0,
        "small",
        "lower bound (live bytes)",
        1,
    );
    ly += ROW * 2.0;
    text(&mut out, LEGEND_X, ly, "sub", "tensors", 1);
    ly += ROW;
    for t in drawn.iter().take(LEGEND_ROWS) {
        let class = if marks.names.contains(&t.name) {
            "small bad mono"
        } else {
            "small mono"
        };
        let at = obs
            .offsets
            .get(&t.name)
            .map_or_else(|| "not placed".to_owned(), |o| format!("@{o}"));
        text(
            &mut out,
            LEGEND_X,
            ly,
            class,
            &format!(
                "{} {} {} {at} s{}..{}",
                cut(&t.name, 20),
                role_text(&t.role),
                bytes(t.size),
                t.first,
                t.last
            ),
            2,
        );
        ly += ROW;
    }
    if drawn.len() > LEGEND_ROWS {
        text(
            &mut out,
            LEGEND_X,
            ly,
            "small",
            &format!("… {} more in the plot", drawn.len() - LEGEND_ROWS),
            1,
        );
        ly += ROW;
    }
    let mut notes = Vec::new();
    if tensors.len() > drawn.len() {
        notes.push(format!(
            "showing {} of {} tensors (the picture draws at most {MAX_ITEMS})",
            drawn.len(),
            tensors.len()
        ));
    }
    if overlaps > MAX_ITEMS {
        notes.push(format!(
            "{overlaps} shared regions, the first {MAX_ITEMS} hatched"
        ));
    }
    if !unplaced.is_empty() {
        notes.push(format!(
            "not placed: {}",
            unplaced
                .iter()
                .take(8)
                .map(|t| cut(&t.name, 16))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let named: BTreeSet<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    let strays = obs
        .offsets
        .keys()
        .filter(|n| !named.contains(n.as_str()))
        .count();
    if strays > 0 {
        notes.push(format!("{strays} offsets name no tensor of the scenario"));
    }
    for d in obs.errors.iter().take(6) {
        notes.push(format!("error [{}] {}", d.clause, d.message));
    }
    if obs.errors.len() > 6 {
        notes.push(format!("… {} more errors", obs.errors.len() - 6));
    }
    for d in obs.warnings.iter().take(4) {
        notes.push(format!("warning [{}] {}", d.clause, d.message));
    }
    let mut ny = PLOT_H + 56.0;
    for n in &notes {
        text(&mut out, 2.0, ny, "small bad", n, 3);
        ny += ROW;
    }
    Panel {
        width: LEGEND_X + 250.0,
        height: ny.max(ly) + 4.0,
        body: out,
    }
}
