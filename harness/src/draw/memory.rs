//! The picture of a memory plan: steps across, offsets up, each placed tensor a rectangle over
//! its bytes and its inclusive lifetime, coloured by role and labelled with name, role and size;
//! reused and aliased I/O outlined, cleanup groups as bands, the peak and the lower bound as
//! lines, and bytes two tensors in use at once share hatched in red.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario, Role, Tensor, ALIGNMENT};

use super::{bytes, cut, esc, inside, line, num, rect, text, Marks, Panel, Style, MAX_ITEMS};

const LEFT: f64 = 78.0;
const PLOT_W: f64 = 520.0;
const PLOT_H: f64 = 320.0;
const LEGEND_X: f64 = LEFT + PLOT_W + 28.0;
const LEGEND_ROWS: usize = 32;
const ROW: f64 = 13.0;

/// The legend's colour key: the classes of the swatches and what each stands for.
const KEY: [(&str, &str); 9] = [
    ("input", "graph input"),
    ("output", "graph output"),
    ("intermediate", "intermediate"),
    ("memset", "memset output"),
    ("intermediate reused", "I/O reused by other tensors"),
    ("intermediate alias", "output aliased to its input"),
    ("intermediate violating", "named by a broken clause"),
    ("overlap", "bytes shared while both in use"),
    ("cleanup", "cleanup group"),
];

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

/// The key of a graph input (`true`) or output (`false`) by its index; `None` for the others.
fn io_key(role: &Role) -> Option<(bool, u32)> {
    match role {
        Role::Input { index } => Some((true, *index)),
        Role::Output { index } => Some((false, *index)),
        _ => None,
    }
}

/// The panel of `obs`, a plan for `scenario`: the plot (frame, grid when `style` asks, axes,
/// cleanup bands, tensors, hatched overlaps, their labels, peak and bound), the legend at its
/// right and the notes under it, `marks` highlighted.
pub(super) fn panel(
    scenario: &MemoryScenario,
    obs: &MemoryObservation,
    marks: &Marks,
    style: Style,
) -> Panel {
    let plot = Plot::new(scenario, obs, marks);
    let mut out = String::new();
    plot.frame(&mut out);
    if style.grid {
        plot.grid(&mut out);
    }
    plot.axes(&mut out);
    plot.cleanup(&mut out);
    // The tensors; their labels go above the hatching, drawn after it.
    let placement = plot.tensors(&mut out);
    let overlaps = plot.overlaps(&mut out, &placement.placed);
    out.push_str(&placement.labels);
    plot.peak_and_bound(&mut out);
    let ly = legend_key(&mut out);
    let ly = plot.legend_tensors(&mut out, ly);
    let mut ny = PLOT_H + 56.0;
    for n in &plot.notes(overlaps, &placement.unplaced) {
        text(&mut out, 2.0, ny, "small bad", n, 3);
        ny += ROW;
    }
    Panel {
        width: LEGEND_X + 250.0,
        height: ny.max(ly) + 4.0,
        body: out,
    }
}

/// What a memory panel draws from, and the scales of its plot.
struct Plot<'a> {
    scenario: &'a MemoryScenario,
    obs: &'a MemoryObservation,
    marks: &'a Marks,
    /// The tensors drawn: the marked ones first, then the others, up to [`MAX_ITEMS`].
    drawn: Vec<&'a Tensor>,
    /// The columns across: the steps of the run.
    steps: f64,
    /// The lower bound of the peak (the most bytes live at one step).
    bound: u64,
    /// The bytes the plot's height stands for.
    top: f64,
}

/// The tensors of a plan as drawn: the placed ones with their offsets, the others, and the
/// placed ones' labels (drawn last, above the hatching).
struct Placement<'a> {
    placed: Vec<(&'a Tensor, u64)>,
    unplaced: Vec<&'a Tensor>,
    labels: String,
}

impl<'a> Plot<'a> {
    /// The tensors to draw, and a height that holds them, the cleanup groups, the peak and the
    /// lower bound.
    fn new(scenario: &'a MemoryScenario, obs: &'a MemoryObservation, marks: &'a Marks) -> Self {
        let drawn = drawn(scenario, marks);
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
        Plot {
            scenario,
            obs,
            marks,
            drawn,
            steps,
            bound,
            top,
        }
    }

    /// The height of the offset `off` in the plot.
    fn y(&self, off: u64) -> f64 {
        PLOT_H - (off as f64 / self.top * PLOT_H)
    }

    /// Where the step `step` is across the plot.
    fn x(&self, step: f64) -> f64 {
        LEFT + step / self.steps * PLOT_W
    }

    /// The plot's frame.
    fn frame(&self, out: &mut String) {
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
            num(LEFT),
            num(PLOT_W),
            num(PLOT_H)
        );
    }

    /// The alignment grid: a line every 32 bytes where they stay at least 4 px apart, else
    /// every multiple of 32 that does, and a caption saying which.
    fn grid(&self, out: &mut String) {
        let per_px = self.top / PLOT_H;
        let mut every = ALIGNMENT as f64;
        while every / per_px < 4.0 {
            every *= 2.0;
        }
        let mut at = every;
        while at < self.top {
            let yy = self.y(at as u64);
            line(out, (LEFT, yy), (LEFT + PLOT_W, yy), "grid");
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
        text(out, LEFT, PLOT_H + 40.0, "small", &what, 2);
    }

    /// The axes: offsets up with five ticks, steps across with at most a dozen, and their
    /// titles.
    fn axes(&self, out: &mut String) {
        line(out, (LEFT, 0.0), (LEFT, PLOT_H), "axis");
        line(out, (LEFT, PLOT_H), (LEFT + PLOT_W, PLOT_H), "axis");
        for k in 0..=4u32 {
            let off = (self.top / 1.05 * f64::from(k) / 4.0) as u64;
            let yy = self.y(off);
            line(out, (LEFT - 4.0, yy), (LEFT, yy), "axis");
            text(out, 2.0, yy + 4.0, "small", &bytes(off), 1);
        }
        let step_every = (self.steps / 12.0).ceil().max(1.0);
        let mut s = 0.0;
        while s < self.steps {
            let xx = self.x(s + 0.5);
            line(out, (xx, PLOT_H), (xx, PLOT_H + 4.0), "axis");
            text(out, xx - 3.0, PLOT_H + 15.0, "small", &format!("{s}"), 1);
            s += step_every;
        }
        let title_x = LEFT + PLOT_W / 2.0 - 30.0;
        let title = "step (inclusive lifetimes)";
        text(out, title_x, PLOT_H + 28.0, "small", title, 1);
        text(out, 2.0, PLOT_H + 28.0, "small", "offset ↑ (bytes)", 1);
    }

    /// The cleanup groups: bands behind the tensors, each named (`c1`, `c2`, ...) in a bracket
    /// at the right edge.
    fn cleanup(&self, out: &mut String) {
        for (i, g) in self.obs.cleanup.iter().take(MAX_ITEMS).enumerate() {
            let end = g.offset.saturating_add(g.size);
            let (y1, y2) = (self.y(end), self.y(g.offset));
            let tip = format!(
                "cleanup group {}: [{}, {end}) {} over {}",
                i + 1,
                g.offset,
                bytes(g.size),
                g.tensors.join(", ")
            );
            let _ = write!(
                out,
                "<rect class=\"cleanup\" fill-opacity=\"0.45\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                num(LEFT),
                num(y1),
                num(PLOT_W + 12.0 + 6.0 * (i % 3) as f64),
                num((y2 - y1).max(1.0)),
                esc(&cut(&tip, 240))
            );
            let name_x = LEFT + PLOT_W + 2.0 + 6.0 * (i % 3) as f64;
            text(out, name_x, y1 + 9.0, "small", &format!("c{}", i + 1), 1);
        }
    }

    /// The placed tensors, each a rectangle over its bytes and its lifetime; returns them with
    /// the ones not placed and the labels to draw over them.
    fn tensors(&self, out: &mut String) -> Placement<'a> {
        let io = Io::new(self.obs);
        let mut placement = Placement {
            placed: Vec::new(),
            unplaced: Vec::new(),
            labels: String::new(),
        };
        for &t in &self.drawn {
            let Some(&off) = self.obs.offsets.get(&t.name) else {
                placement.unplaced.push(t);
                continue;
            };
            placement.placed.push((t, off));
            self.tensor(out, &mut placement.labels, &io, t, off);
        }
        placement
    }

    /// One placed tensor at `off`: its rectangle, classed by role, reuse, alias and marks, with
    /// a tooltip, and its label (into `labels`) where it fits.
    fn tensor(&self, out: &mut String, labels: &mut String, io: &Io, t: &Tensor, off: u64) {
        let end = off.saturating_add(t.size);
        let (x1, x2) = (self.x(f64::from(t.first)), self.x(f64::from(t.last) + 1.0));
        let (y1, y2) = (self.y(end), self.y(off));
        let (class, note) = io.class(t, self.marks);
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
        rect(out, r, &class, &tip, None);
        inside(labels, r, &label);
    }

    /// Hatches the bytes two placed tensors share while both are in use (alias partners share
    /// theirs by design), the first [`MAX_ITEMS`] regions; returns how many there are.
    fn overlaps(&self, out: &mut String, placed: &[(&Tensor, u64)]) -> usize {
        let partners = partners(self.scenario, self.obs);
        let mut order: Vec<(u64, u64, &Tensor)> = placed
            .iter()
            .filter(|(t, _)| t.size > 0)
            .map(|(t, off)| (*off, off.saturating_add(t.size), *t))
            .collect();
        order.sort_by_key(|&(off, _, _)| off);
        // A sweep up the offsets: `active` holds the tensors whose bytes reach past `off`.
        let mut active: Vec<(u64, u64, &Tensor)> = Vec::new();
        let mut overlaps = 0usize;
        for &(off, end, t) in &order {
            active.retain(|&(_, e, _)| e > off);
            for &(aoff, aend, a) in &active {
                let partner = partners
                    .get(a.name.as_str())
                    .is_some_and(|p| p.contains(t.name.as_str()));
                let steps = (a.first.max(t.first), a.last.min(t.last));
                if partner || steps.0 > steps.1 {
                    continue;
                }
                overlaps += 1;
                if overlaps <= MAX_ITEMS {
                    let shared = (aoff.max(off), aend.min(end));
                    self.hatch(out, (a, t), shared, steps);
                }
            }
            active.push((off, end, t));
        }
        overlaps
    }

    /// One shared region hatched: bytes `[lo, hi)` that `a` and `t` both use at steps
    /// `first..=last`.
    fn hatch(
        &self,
        out: &mut String,
        (a, t): (&Tensor, &Tensor),
        (lo, hi): (u64, u64),
        (first, last): (u32, u32),
    ) {
        let tip = format!(
            "`{}` and `{}` share [{lo}, {hi}) at steps {first}..={last}",
            a.name, t.name
        );
        let x1 = self.x(f64::from(first));
        let r = [
            x1 + 0.5,
            self.y(hi),
            (self.x(f64::from(last) + 1.0) - x1 - 1.0).max(1.0),
            (self.y(lo) - self.y(hi)).max(2.0),
        ];
        rect(out, r, "overlap", &tip, None);
    }

    /// The peak and the lower bound: lines across the plot, each with its value.
    fn peak_and_bound(&self, out: &mut String) {
        let peak = self.obs.peak_bytes;
        let peak_y = self.y(peak);
        line(out, (LEFT, peak_y), (LEFT + PLOT_W, peak_y), "peak");
        let what = format!("peak {} ({peak} B)", bytes(peak));
        text(out, LEFT + PLOT_W - 150.0, peak_y - 3.0, "small", &what, 1);
        let bound = self.bound;
        let bound_y = self.y(bound);
        line(out, (LEFT, bound_y), (LEFT + PLOT_W, bound_y), "bound");
        let what = format!("lower bound {} ({bound} B)", bytes(bound));
        text(out, LEFT + 4.0, bound_y + 10.0, "small", &what, 1);
    }

    /// The legend's list of the tensors drawn from `ly` down (the marked ones in red), the
    /// first [`LEGEND_ROWS`]; returns the height below it.
    fn legend_tensors(&self, out: &mut String, mut ly: f64) -> f64 {
        text(out, LEGEND_X, ly, "sub", "tensors", 1);
        ly += ROW;
        for t in self.drawn.iter().take(LEGEND_ROWS) {
            let class = if self.marks.names.contains(&t.name) {
                "small bad mono"
            } else {
                "small mono"
            };
            let at = self
                .obs
                .offsets
                .get(&t.name)
                .map_or_else(|| "not placed".to_owned(), |o| format!("@{o}"));
            let row = format!(
                "{} {} {} {at} s{}..{}",
                cut(&t.name, 20),
                role_text(&t.role),
                bytes(t.size),
                t.first,
                t.last
            );
            text(out, LEGEND_X, ly, class, &row, 2);
            ly += ROW;
        }
        if self.drawn.len() > LEGEND_ROWS {
            let more = format!("… {} more in the plot", self.drawn.len() - LEGEND_ROWS);
            text(out, LEGEND_X, ly, "small", &more, 1);
            ly += ROW;
        }
        ly
    }

    /// The lines under the plot: what is not drawn or not placed, then the answer's errors and
    /// warnings.
    fn notes(&self, overlaps: usize, unplaced: &[&Tensor]) -> Vec<String> {
        let tensors = &self.scenario.tensors;
        let mut notes = Vec::new();
        if tensors.len() > self.drawn.len() {
            notes.push(format!(
                "showing {} of {} tensors (the picture draws at most {MAX_ITEMS})",
                self.drawn.len(),
                tensors.len()
            ));
        }
        if overlaps > MAX_ITEMS {
            notes.push(format!(
                "{overlaps} shared regions, the first {MAX_ITEMS} hatched"
            ));
        }
        if !unplaced.is_empty() {
            let names: Vec<String> = unplaced.iter().take(8).map(|t| cut(&t.name, 16)).collect();
            notes.push(format!("not placed: {}", names.join(", ")));
        }
        let named: BTreeSet<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
        let strays = self
            .obs
            .offsets
            .keys()
            .filter(|n| !named.contains(n.as_str()))
            .count();
        if strays > 0 {
            notes.push(format!("{strays} offsets name no tensor of the scenario"));
        }
        notes.extend(diagnostics(self.obs));
        notes
    }
}

/// The tensors a panel draws: the marked ones first, then the others in the scenario's order,
/// up to [`MAX_ITEMS`].
fn drawn<'a>(scenario: &'a MemoryScenario, marks: &Marks) -> Vec<&'a Tensor> {
    let tensors = &scenario.tensors;
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
    drawn
}

/// The graph inputs and outputs the plan reuses, and those it aliases (keys of [`io_key`]).
struct Io {
    reused: BTreeSet<(bool, u32)>,
    aliased: BTreeSet<(bool, u32)>,
}

impl Io {
    /// The reused and aliased inputs and outputs of `obs`.
    fn new(obs: &MemoryObservation) -> Io {
        let reused = obs
            .reused_inputs
            .iter()
            .map(|&i| (true, i))
            .chain(obs.reused_outputs.iter().map(|&o| (false, o)))
            .collect();
        let aliased = obs
            .aliases
            .iter()
            .flat_map(|a| [(true, a.input), (false, a.output)])
            .collect();
        Io { reused, aliased }
    }

    /// The classes of `t`'s rectangle (its role, then `reused`, `alias`, `violating` as they
    /// apply) and the note its label ends with (` (reused, aliased)`, or nothing).
    fn class(&self, t: &Tensor, marks: &Marks) -> (String, String) {
        let mut class = role_class(&t.role).to_owned();
        let mut notes = Vec::new();
        if let Some(k) = io_key(&t.role) {
            if self.reused.contains(&k) {
                class.push_str(" reused");
                notes.push("reused");
            }
            if self.aliased.contains(&k) {
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
        (class, note)
    }
}

/// The alias partners of each tensor (by name): they share their bytes by design, which is not
/// an overlap.
fn partners<'a>(
    scenario: &'a MemoryScenario,
    obs: &MemoryObservation,
) -> BTreeMap<&'a str, BTreeSet<&'a str>> {
    let mut m: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for a in &obs.aliases {
        if let (Some(i), Some(o)) = (scenario.input(a.input), scenario.output(a.output)) {
            m.entry(&i.name).or_default().insert(&o.name);
            m.entry(&o.name).or_default().insert(&i.name);
        }
    }
    m
}

/// The legend's colour key from the top: a swatch per class of [`KEY`], then the peak's and
/// the lower bound's lines; returns the height below it.
fn legend_key(out: &mut String) -> f64 {
    let mut ly = 4.0;
    for (class, what) in KEY {
        // `key` tells the legend's swatches from the plan's own rectangles.
        let swatch = [LEGEND_X, ly, 14.0, 9.0];
        rect(out, swatch, &format!("key {class}"), what, None);
        text(out, LEGEND_X + 18.0, ly + 8.0, "small", what, 1);
        ly += ROW;
    }
    for (class, what) in [("peak", "peak"), ("bound", "lower bound (live bytes)")] {
        line(
            out,
            (LEGEND_X, ly + 4.0),
            (LEGEND_X + 14.0, ly + 4.0),
            class,
        );
        text(out, LEGEND_X + 18.0, ly + 8.0, "small", what, 1);
        ly += ROW;
    }
    ly + ROW
}

/// The answer's errors (the first six, then how many more) and warnings (the first four), one
/// line each.
fn diagnostics(obs: &MemoryObservation) -> Vec<String> {
    let mut notes = Vec::new();
    for d in obs.errors.iter().take(6) {
        notes.push(format!("error [{}] {}", d.clause, d.message));
    }
    if obs.errors.len() > 6 {
        notes.push(format!("… {} more errors", obs.errors.len() - 6));
    }
    for d in obs.warnings.iter().take(4) {
        notes.push(format!("warning [{}] {}", d.clause, d.message));
    }
    notes
}
