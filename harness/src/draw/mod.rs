//! Pictures of answers: a memory plan, a session trace or a transfer plan drawn as one
//! self-contained SVG document (no external font, image, style sheet or script), alone or the
//! backend's answer beside the reference's with what a judge found wrong highlighted.
//!
//! The SVG is written with `write!`: the pictures are rectangles, lines and text, and a crate
//! would add a dependency without making them shorter. Every text that comes from a scenario or
//! an answer (tensor names, pool names, messages) is escaped and cut to a bounded length, and a
//! picture draws at most [`MAX_ITEMS`] tensors, trace entries or inputs (saying so when there
//! are more), so a plan of a million tensors still makes a picture of a few hundred kilobytes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use ge_reference::Reference;
use ge_spec::{Backend, Capability, Observation, Scenario};

use crate::certify;
use crate::report::Report;
pub use crate::report::{is_picture_file, picture_file};
use crate::runner::{self, Problem};

mod memory;
mod session;
mod transfer;

/// The most tensors, trace entries or inputs one panel draws; the rest are counted, not drawn.
pub const MAX_ITEMS: usize = 400;

/// The most characters of one label drawn (a longer one is cut, with an ellipsis).
pub const MAX_LABEL: usize = 48;

/// The most problem lines the header of a picture lists.
const MAX_PROBLEMS: usize = 8;

/// Why nothing was drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawError {
    /// The capability has no picture (options and weights answers are lists, not plans).
    #[error("{0} answers have nothing to draw: pictures are made of memory, session and transfer answers")]
    NothingToDraw(Capability),
    /// The observation answers another capability than the scenario's.
    #[error("a {scenario} scenario was answered with a {observation} observation; there is no plan to draw")]
    Mismatch {
        /// The scenario's capability.
        scenario: Capability,
        /// The observation's capability.
        observation: Capability,
    },
}

/// What to highlight in a picture: the clauses a judge named and the things its messages point
/// at (tensor and pool names between backticks, `trace entry N`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// The clauses broken, named in the picture's header.
    pub clauses: Vec<String>,
    /// The problems found, one line each, listed in the header.
    pub problems: Vec<String>,
    /// Names (tensors, pools) the problems point at.
    pub names: BTreeSet<String>,
    /// Trace entries (by position) the problems point at.
    pub entries: BTreeSet<usize>,
}

impl Marks {
    /// Marks read from a judge's problem messages: every text between backticks is a name, every
    /// `trace entry N` an entry. `clauses` are named as given.
    pub fn from_problems(clauses: Vec<String>, messages: &[String]) -> Marks {
        let mut marks = Marks {
            clauses,
            ..Marks::default()
        };
        for message in messages {
            // Text between an odd and the next even backtick is quoted; an unclosed one is not.
            let parts: Vec<&str> = message.split('`').collect();
            for (i, quoted) in parts.iter().enumerate() {
                if i % 2 == 1 && i + 1 < parts.len() && !quoted.is_empty() {
                    marks.names.insert((*quoted).to_owned());
                }
            }
            let mut rest = message.as_str();
            while let Some(at) = rest.find("trace entry ") {
                rest = &rest[at + "trace entry ".len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = digits.parse() {
                    marks.entries.insert(n);
                }
            }
            marks.problems.extend(message.lines().map(str::to_owned));
        }
        marks
    }

    /// True when nothing is to be highlighted.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty() && self.names.is_empty() && self.entries.is_empty()
    }
}

/// The most pictures a report bundle holds: the first failures drawn say enough, and a backend
/// failing every trial must not make a bundle of thousands of pictures.
pub const MAX_PICTURES: usize = 64;

/// How a picture is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Draw the 32-byte alignment grid behind a memory plan (where it is at least a few pixels
    /// apart).
    pub grid: bool,
    /// The profile the options are read under (the transfer picture's threshold).
    pub profile: ge_spec::Profile,
}

/// One drawn panel, in its own coordinates from (0, 0).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Panel {
    pub width: f64,
    pub height: f64,
    pub body: String,
}

/// Draws one answer: `observation` to `scenario`, with `marks` highlighted.
pub fn picture(
    scenario: &Scenario,
    observation: &Observation,
    marks: &Marks,
    style: Style,
    title: &str,
) -> Result<String, DrawError> {
    let panel = panel(scenario, observation, marks, style)?;
    Ok(document(title, marks, &[(String::new(), panel)]))
}

/// Draws the backend's answer beside the reference's, both to `scenario`: `marks` (what the
/// judge found) are highlighted in the backend's, the reference's is drawn plain.
pub fn side_by_side(
    scenario: &Scenario,
    backend: (&str, &Observation),
    reference: (&str, &Observation),
    marks: &Marks,
    style: Style,
    title: &str,
) -> Result<String, DrawError> {
    let left = panel(scenario, backend.1, marks, style)?;
    let right = panel(scenario, reference.1, &Marks::default(), style)?;
    Ok(document(
        title,
        marks,
        &[
            (backend.0.to_owned(), left),
            (reference.0.to_owned(), right),
        ],
    ))
}

fn panel(
    scenario: &Scenario,
    observation: &Observation,
    marks: &Marks,
    style: Style,
) -> Result<Panel, DrawError> {
    match (scenario, observation) {
        (Scenario::Memory(s), Observation::Memory(o)) => Ok(memory::panel(s, o, marks, style)),
        (Scenario::Session(s), Observation::Session(o)) => Ok(session::panel(s, o, marks)),
        (Scenario::Transfer(s), Observation::Transfer(o)) => {
            Ok(transfer::panel(s, o, marks, style.profile))
        }
        (s, o) if s.capability() != o.capability() => Err(DrawError::Mismatch {
            scenario: s.capability(),
            observation: o.capability(),
        }),
        (s, _) => Err(DrawError::NothingToDraw(s.capability())),
    }
}

/// Draws `backend`'s answer (its name and observation) to `scenario`, beside the reference's
/// when it is given, with what `problems` point at highlighted and their clauses named: the
/// picture of `eval --draw` and `eval --judge --draw`.
pub fn of_problems(
    scenario: &Scenario,
    backend: (&str, &Observation),
    reference: Option<&Observation>,
    problems: &[Problem],
    style: Style,
) -> Result<String, DrawError> {
    let mut clauses: Vec<String> = problems.iter().flat_map(|p| p.clauses.clone()).collect();
    clauses.sort();
    clauses.dedup();
    let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let marks = Marks::from_problems(clauses, &messages);
    let capability = scenario.capability();
    match reference {
        Some(reference) => side_by_side(
            scenario,
            (&format!("backend {}", backend.0), backend.1),
            (&format!("reference (profile {})", style.profile), reference),
            &marks,
            style,
            &format!(
                "{capability} answer of {} beside the reference's",
                backend.0
            ),
        ),
        None => picture(
            scenario,
            backend.1,
            &marks,
            style,
            &format!("{capability} answer of {}", backend.0),
        ),
    }
}

/// Draws every failing trial of a drawable capability in `report` (memory, session, transfer):
/// its scenario (a property's first failing counterexample) asked of `backend` again and of the
/// reference of the report's profile, side by side, what the trial's message points at
/// highlighted and its broken clauses named, the first [`MAX_PICTURES`] of them. Each picture goes into `report.pictures` under
/// [`picture_file`], named by its trial's `picture`. A trial whose backend breaks down on the
/// second asking, or whose scenario does not parse, gets no picture.
pub fn attach_pictures(report: &mut Report, backend: &dyn Backend) {
    let profile = report.meta.profile;
    let reference = Reference::new(profile);
    let mut n = 0;
    for trial in &mut report.trials {
        if n == MAX_PICTURES {
            break;
        }
        if !trial.outcome.fails_run() || !draws(trial.capability) {
            continue;
        }
        let (scenario, message) = match trial.counterexamples.iter().find(|c| !c.deviation) {
            Some(c) => (Some(&c.scenario), Some(c.message.clone())),
            None => (trial.scenario.as_ref(), trial.message.clone()),
        };
        let Some(scenario) =
            scenario.and_then(|s| serde_json::from_value::<Scenario>(s.clone()).ok())
        else {
            continue;
        };
        let Ok(dir) = runner::sandbox(&scenario) else {
            continue;
        };
        let (Ok(ours), Ok(theirs)) = (
            certify::evaluate(backend, &scenario, runner::sandbox_path(&dir)),
            certify::evaluate(&reference, &scenario, runner::sandbox_path(&dir)),
        ) else {
            continue;
        };
        let messages: Vec<String> = message.into_iter().collect();
        let marks = Marks::from_problems(trial.broken.clone(), &messages);
        let Ok(svg) = side_by_side(
            &scenario,
            (&format!("backend {}", report.meta.backend), &ours),
            (&format!("reference (profile {profile})"), &theirs),
            &marks,
            Style {
                grid: false,
                profile,
            },
            &trial.name,
        ) else {
            continue;
        };
        n += 1;
        let file = picture_file(n);
        trial.picture = Some(file.clone());
        report.pictures.insert(file, svg);
    }
}

/// True when answers of `capability` can be drawn.
pub fn draws(capability: Capability) -> bool {
    matches!(
        capability,
        Capability::Memory | Capability::Session | Capability::Transfer
    )
}

const MARGIN: f64 = 16.0;
const GAP: f64 = 32.0;
const LINE: f64 = 16.0;

/// The shared style sheet: inline, generic font families only, every rule under the `ge-draw`
/// class of the picture's root, so a picture inlined in a page neither takes nor gives styles;
/// `violating` comes last, so its outline wins over every role's and pool's colour.
const CSS: &str = ".ge-draw text{font-family:sans-serif;font-size:11px;fill:#222}\
.ge-draw .title{font-size:15px;font-weight:bold}.ge-draw .sub{font-size:13px;font-weight:bold}\
.ge-draw .small{font-size:9px}.ge-draw .bad{fill:#b00020}.ge-draw .mono{font-family:monospace}\
.ge-draw .axis{stroke:#444;stroke-width:1}.ge-draw .tick{stroke:#bbb;stroke-width:0.5}\
.ge-draw .grid{stroke:#e4e4e4;stroke-width:0.5}\
.ge-draw .input{fill:#9ecae1;stroke:#3b6e8f}.ge-draw .output{fill:#a1d99b;stroke:#3f7f3a}\
.ge-draw .intermediate{fill:#d9d9d9;stroke:#666}.ge-draw .memset{fill:#fdd0a2;stroke:#a0522d}\
.ge-draw .reused{stroke-dasharray:4 2;stroke-width:2}.ge-draw .alias{stroke:#6a3d9a;stroke-width:2.5}\
.ge-draw .overlap{stroke:#d00;stroke-width:1}\
.ge-draw .peak{stroke:#c51b7d;stroke-width:1.5;stroke-dasharray:6 3}\
.ge-draw .bound{stroke:#2166ac;stroke-width:1.5;stroke-dasharray:2 3}\
.ge-draw .cleanup{fill:#fff3cd;stroke:#b8860b;stroke-width:1}\
.ge-draw .feature{fill:#c6dbef;stroke:#3b6e8f}.ge-draw .io{fill:#c7e9c0;stroke:#3f7f3a}\
.ge-draw .pool{fill:#fdd0a2;stroke:#a0522d}.ge-draw .other{fill:#eee;stroke:#888}\
.ge-draw .fused{fill:#fdae6b;stroke:#a0522d}.ge-draw .batched{fill:#9e9ac8;stroke:#54278f}\
.ge-draw .direct{fill:#9ecae1;stroke:#3b6e8f}.ge-draw .on_device{fill:#d9d9d9;stroke:#666}\
.ge-draw .unplanned{fill:#fff;stroke:#d00;stroke-dasharray:3 2}\
.ge-draw .threshold{stroke:#d00;stroke-width:1.5;stroke-dasharray:5 3}\
.ge-draw .violating{stroke:#d00;stroke-width:3}";

/// A whole SVG document: the title, the clauses and problems of `marks`, then the panels side by
/// side, each under its caption.
fn document(title: &str, marks: &Marks, panels: &[(String, Panel)]) -> String {
    let mut header = Vec::new();
    header.push(format!(
        "<text class=\"title\" x=\"{MARGIN}\" y=\"{}\">{}</text>",
        MARGIN + 12.0,
        esc(&cut(title, 120))
    ));
    if !marks.clauses.is_empty() {
        header.push(format!(
            "<text class=\"sub bad\" x=\"{MARGIN}\" y=\"{}\">breaks {}</text>",
            MARGIN + 12.0 + LINE * 1.3,
            esc(&cut(&marks.clauses.join(", "), 160))
        ));
    }
    for (i, p) in marks.problems.iter().take(MAX_PROBLEMS).enumerate() {
        header.push(format!(
            "<text class=\"bad\" x=\"{MARGIN}\" y=\"{}\">{}</text>",
            MARGIN + 12.0 + LINE * (2.4 + i as f64),
            esc(&cut(p, 160))
        ));
    }
    let listed = marks.problems.len().min(MAX_PROBLEMS);
    if marks.problems.len() > MAX_PROBLEMS {
        header.push(format!(
            "<text class=\"bad\" x=\"{MARGIN}\" y=\"{}\">… and {} more problem lines</text>",
            MARGIN + 12.0 + LINE * (2.4 + listed as f64),
            marks.problems.len() - MAX_PROBLEMS
        ));
    }
    let lines = if marks.clauses.is_empty() && marks.problems.is_empty() {
        1.0
    } else {
        2.4 + listed as f64 + f64::from(u8::from(marks.problems.len() > MAX_PROBLEMS))
    };
    let top = MARGIN + 12.0 + LINE * lines + 8.0;
    let mut x = MARGIN;
    let mut body = String::new();
    let mut height: f64 = 0.0;
    for (caption, p) in panels {
        if !caption.is_empty() {
            let _ = write!(
                body,
                "<text class=\"sub\" x=\"{}\" y=\"{}\">{}</text>",
                num(x),
                num(top + 12.0),
                esc(&cut(caption, 80))
            );
        }
        let _ = write!(
            body,
            "<g transform=\"translate({},{})\">{}</g>",
            num(x),
            num(top + 20.0),
            p.body
        );
        x += p.width + GAP;
        height = height.max(p.height);
    }
    let width = (x - GAP + MARGIN).max(480.0);
    let height = top + 20.0 + height + MARGIN;
    let mut out = String::with_capacity(body.len() + 4096);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ge-draw\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\">\n<title>{t}</title>\n<defs><style>{CSS}</style>\
<pattern{HATCH_ID} width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
<rect width=\"6\" height=\"6\" fill=\"#ffd6d6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d00\" stroke-width=\"3\"/></pattern></defs>\n\
<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
        w = num(width),
        h = num(height),
        t = esc(&cut(title, 120)),
    );
    for h in header {
        out.push_str(&h);
        out.push('\n');
    }
    out.push_str(&body);
    out.push_str("\n</svg>\n");
    out
}

/// `s` escaped for XML text and attribute values (the pictures and `report.html`); characters
/// XML 1.0 cannot carry (control characters, U+FFFE, U+FFFF) and those that could change how
/// the page reads ([`crate::input::unsafe_in_text`]) are spelled `\u{..}`.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if ((c as u32) < 0x20 && c != '\t') || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            // DEL, the C1 controls and the marks that reorder or hide text: a character
            // reference would be no escape, a browser applies it as the character.
            c if c != '\t' && crate::input::unsafe_in_text(c) => {
                crate::input::push_spelled(&mut out, c)
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to at most `max` characters, an ellipsis marking the cut.
pub(crate) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A coordinate with at most two decimals (short, and the same on every machine).
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_owned();
    }
    let r = (v * 100.0).round() / 100.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// A byte count as people read it: `512 B`, `96 KiB`, `1.5 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = 0;
    let mut value = n as f64;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else if value == value.trunc() {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A byte count as people read it, with the exact count when the short form rounds:
/// `100 KiB`, `100.0 KiB (102401 B)`.
pub fn exact(n: u64) -> String {
    let short = bytes(n);
    // `bytes` writes a fraction exactly when the unit does not divide the count.
    if short.contains('.') {
        format!("{short} ({n} B)")
    } else {
        short
    }
}

/// The fill of hatched rectangles, as written: the one reference to the pattern `hatch`. Text
/// from a scenario cannot hold it (quotes are escaped), so a page can rename the pattern in
/// each picture it inlines by replacing this and [`HATCH_ID`].
pub const HATCH: &str = " fill=\"url(#hatch)\"";

/// The hatching pattern's id attribute, as written.
pub const HATCH_ID: &str = " id=\"hatch\"";

/// A rectangle with a class, a tooltip and an optional label inside it when it fits.
pub(crate) fn rect(out: &mut String, r: [f64; 4], class: &str, tip: &str, label: Option<&str>) {
    let [x, y, w, h] = r;
    // The hatching is an attribute, not a style rule: a page inlining several pictures renames
    // each one's pattern (see [`HATCH`]), which a shared style rule could not follow.
    let fill = if class.split(' ').any(|c| c == "overlap") {
        HATCH
    } else {
        ""
    };
    let _ = write!(
        out,
        "<rect class=\"{class}\"{fill} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
        num(x),
        num(y),
        num(w.max(0.5)),
        num(h.max(0.5)),
        esc(&cut(tip, 240))
    );
    if let Some(label) = label {
        inside(out, r, label);
    }
}

/// A label inside the rectangle `r` when it fits (at least one line high and four characters
/// wide), cut to the room there is.
pub(crate) fn inside(out: &mut String, r: [f64; 4], label: &str) {
    let [x, y, w, h] = r;
    let room = (w / 6.0).floor() as usize;
    if h >= 12.0 && room >= 4 {
        let _ = write!(
            out,
            "<text class=\"small\" x=\"{}\" y=\"{}\">{}</text>",
            num(x + 3.0),
            num(y + h / 2.0 + 3.0),
            esc(&cut(label, room.min(MAX_LABEL)))
        );
    }
}

/// A text at (x, y) with a class, escaped and cut to [`MAX_LABEL`] characters times `wide`.
pub(crate) fn text(out: &mut String, x: f64, y: f64, class: &str, s: &str, wide: usize) {
    let _ = write!(
        out,
        "<text class=\"{class}\" x=\"{}\" y=\"{}\">{}</text>",
        num(x),
        num(y),
        esc(&cut(s, MAX_LABEL * wide.max(1)))
    );
}

/// A line from (x1, y1) to (x2, y2) with a class.
pub(crate) fn line(out: &mut String, from: (f64, f64), to: (f64, f64), class: &str) {
    let _ = write!(
        out,
        "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
        num(from.0),
        num(from.1),
        num(to.0),
        num(to.1)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_names_and_entries() {
        let m = Marks::from_problems(
            vec!["DRM-011".into()],
            &[
                "`t` [0, 32) steps 0..=1 and `m` [0, 32) steps 1..=2 share bytes".into(),
                "trace entry 3 (free x 1 bytes at step 2): `graph-1/io` is not held".into(),
                "odd ` backtick".into(),
            ],
        );
        assert_eq!(
            m.names.iter().map(String::as_str).collect::<Vec<_>>(),
            ["graph-1/io", "m", "t"]
        );
        assert_eq!(m.entries.iter().copied().collect::<Vec<_>>(), [3]);
    }

    /// Any scenario and any answer, however wrong (made from random bytes by `arbitrary`),
    /// draw into a whole document or give a typed error: nothing a backend answers panics here.
    #[test]
    fn arbitrary_answers_draw_or_are_refused() {
        use arbitrary::{Arbitrary, Unstructured};
        let mut state = 0x5eed_u64;
        let mut drawn = 0;
        for round in 0..3000 {
            let bytes: Vec<u8> = (0..512 + round % 4096)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    (state >> 56) as u8
                })
                .collect();
            let mut u = Unstructured::new(&bytes);
            let (Ok(scenario), Ok(observation)) =
                (Scenario::arbitrary(&mut u), Observation::arbitrary(&mut u))
            else {
                continue;
            };
            let marks = Marks::from_problems(
                vec!["X-1".into()],
                &[String::arbitrary(&mut u).unwrap_or_default()],
            );
            match picture(&scenario, &observation, &marks, Style::default(), "t") {
                Ok(svg) => {
                    assert!(svg.trim_end().ends_with("</svg>"));
                    drawn += 1;
                }
                Err(DrawError::NothingToDraw(_) | DrawError::Mismatch { .. }) => {}
            }
        }
        assert!(
            drawn > 50,
            "only {drawn} pictures drawn: the generator misses the point"
        );
    }

    #[test]
    fn text_is_escaped_and_cut() {
        assert_eq!(
            esc("<a href='x'>&\"\u{1}"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\\u{0001}"
        );
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(100), "100 B");
        assert_eq!(exact(102_400), "100 KiB");
        assert_eq!(exact(102_401), "100.0 KiB (102401 B)");
        assert_eq!(num(1.0 / 3.0), "0.33");
    }
}
