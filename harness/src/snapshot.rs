//! Snapshot trials: what a backend answers for each scenario of the snapshot set, kept as one
//! insta snapshot per scenario in a directory of the backend's owner, and beside it, where the
//! answer differs from the reference, a deviation snapshot listing the differences.
//!
//! They follow insta's own flow: a new or changed answer fails the trial and is written as
//! `<name>.snap.new` for `cargo insta review` / `cargo insta accept` (or straight to `.snap`
//! with `INSTA_UPDATE=always`), and with `CI=true` nothing is written and any change fails.
//! A snapshot keeps the whole observation, diagnostics' wording included: wording is reviewed
//! here and never judged in a verdict. Snapshots are no part of a certification either: they
//! say what changed, the cases and properties say whether it is right.
//!
//! The snapshot set ([`set`]) is every configuration example of the source text
//! (`example/<option>`, and all of them together), one showcase per capability
//! (`showcase/<capability>`), and every case of the tables (`<table>/<case>`, local tables
//! included). The file of `<a>/<b>` is `<a>__<b>.snap`; its deviation snapshot is
//! `<a>__<b>@deviation.snap`. The reference's own snapshots are this mechanism run on the
//! reference (`harness/tests/reference_snapshots.rs`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryScenario, Role, Tensor};
use ge_spec::vocab::weights::{ConstNode, Fill, NodeType, WeightsScenario, WorkPathEnv};
use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{Backend, Capability, OptionMaps, Profile, Scenario, Spec};

use crate::judging::Judging;
use crate::runner;

/// The suffix insta gives a deviation snapshot (`<name>@deviation.snap`).
pub const DEVIATION_SUFFIX: &str = "deviation";

/// One scenario of the snapshot set.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `example/<option>`, `showcase/<capability>` or `<table>/<case>`.
    pub name: String,
    /// The question asked.
    pub scenario: Scenario,
}

impl Entry {
    /// The capability the scenario exercises.
    pub fn capability(&self) -> Capability {
        self.scenario.capability()
    }

    /// The snapshot's name, which is also its file stem: `/` spelled `__`, as insta does.
    pub fn file_stem(&self) -> String {
        self.name.replace('/', "__")
    }
}

/// The configuration examples of the source text, each option as its section shows it (the
/// index lists at graph level, the others at session level, on a graph of ten inputs and ten
/// outputs), one scenario per option and one with all of them together.
pub fn examples() -> Vec<Entry> {
    const SESSION: [(&str, &str); 9] = [
        ("ge.exec.atomicCleanPolicy", "0"),
        ("ge.exec.disableReuseMemory", "0"),
        ("ge.exec.input_fusion_size", "131072"),
        ("ge.exec.reuseZeroCopyMemory", "0"),
        ("ge.exec.staticMemoryPolicy", "0"),
        ("ge.externalWeight", "1"),
        ("ge.externalWeightDir", "$HOME/your_tmp_path"),
        ("ge.inputBatchCpy", "0"),
        ("ge.featureBaseRefreshable", "0"),
    ];
    const GRAPH: [(&str, &str); 3] = [
        ("ge.exec.inputReuseMemIndexes", "0,1,2"),
        ("ge.exec.outputReuseMemIndexes", "0,1,2"),
        ("ge.exec.outputReuseInputMemIndexes", "0,1|6,8"),
    ];
    let scenario = |maps: OptionMaps| {
        Scenario::Options(OptionsScenario {
            options: maps,
            graph: GraphFacts {
                inputs: 10,
                outputs: 10,
                ..GraphFacts::default()
            },
            ..OptionsScenario::default()
        })
    };
    let mut all = OptionMaps::default();
    let mut entries = Vec::new();
    for (graph, list) in [(false, &SESSION[..]), (true, &GRAPH[..])] {
        for (key, value) in list {
            let mut maps = OptionMaps::default();
            for m in [&mut maps, &mut all] {
                let level = if graph { &mut m.graph } else { &mut m.session };
                level.insert((*key).to_owned(), (*value).to_owned());
            }
            entries.push(Entry {
                name: format!("example/{key}"),
                scenario: scenario(maps),
            });
        }
    }
    entries.push(Entry {
        name: "example/all-together".to_owned(),
        scenario: scenario(all),
    });
    entries
}

fn tensor(name: &str, size: u64, first: u32, last: u32, role: Role) -> Tensor {
    Tensor {
        name: name.into(),
        size,
        first,
        last,
        role,
    }
}

/// One scenario per capability that shows most of what it answers at once: options refused,
/// warned about and taking effect at three levels; ten inputs fused, batch-copied and copied
/// directly; a chain of tensors with reuse and a memset pair; a session with both pools and
/// refreshes; and weights written as separate files, then unloaded.
pub fn showcases() -> Vec<Entry> {
    [
        options_showcase(),
        transfer_showcase(),
        memory_showcase(),
        session_showcase(),
        weights_showcase(),
    ]
    .into_iter()
    .map(|scenario| Entry {
        name: format!("showcase/{}", scenario.capability()),
        scenario,
    })
    .collect()
}

/// Options refused, warned about and taking effect at the three levels.
fn options_showcase() -> Scenario {
    let mut options = OptionMaps::default();
    options
        .global
        .insert("ge.exec.atomicCleanPolicy".into(), "1".into());
    // One over the threshold's maximum (the options table's), refused.
    let past_max = crate::gen::transfer::max_threshold() + 1;
    for (k, v) in [
        ("ge.exec.input_fusion_size", past_max.to_string()),
        ("ge.inputBatchCpy", "1".to_owned()),
        ("ge.exec.staticMemoryPolicy", "2".to_owned()),
    ] {
        options.session.insert(k.into(), v);
    }
    for (k, v) in [
        ("ge.exec.inputReuseMemIndexes", "0,0,7"),
        ("ge.exec.outputReuseInputMemIndexes", "0,1"),
        ("ge.exec.disableReuseMemory", "2"),
    ] {
        options.graph.insert(k.into(), v.into());
    }
    Scenario::Options(OptionsScenario {
        options,
        graph: GraphFacts {
            inputs: 4,
            outputs: 2,
            ..GraphFacts::default()
        },
        ..OptionsScenario::default()
    })
}

/// A chain of tensors with reuse and a memset pair cleaned separately.
fn memory_showcase() -> Scenario {
    let mut memory = MemoryScenario {
        inputs: 1,
        outputs: 1,
        tensors: vec![
            tensor("x", 256, 0, 0, Role::Input { index: 0 }),
            tensor("a", 512, 0, 1, Role::Intermediate),
            tensor("b", 256, 1, 2, Role::Intermediate),
            tensor("c", 512, 2, 3, Role::Intermediate),
            tensor("y", 256, 3, 4, Role::Output { index: 0 }),
            tensor(
                "m0",
                128,
                1,
                1,
                Role::Memset {
                    op: "clear_a".into(),
                },
            ),
            tensor(
                "m1",
                64,
                1,
                2,
                Role::Memset {
                    op: "clear_a".into(),
                },
            ),
        ],
        ..MemoryScenario::default()
    };
    memory
        .options
        .session
        .insert("ge.exec.atomicCleanPolicy".into(), "1".into());
    Scenario::Memory(memory)
}

/// Three constants written as separate weight files under a work path, then unloaded.
fn weights_showcase() -> Scenario {
    let mut weights = WeightsScenario {
        root_graph: "resnet".into(),
        pid: 4242,
        session_id: 3,
        ascend_work_path: WorkPathEnv::Set {
            path: "work".into(),
        },
        unload: true,
        constants: vec![
            ConstNode {
                name: "conv1.weight".into(),
                node_type: NodeType::Const,
                hex: Some("0102030405".into()),
                fill: None,
            },
            ConstNode {
                name: "conv1.bias".into(),
                node_type: NodeType::Constant,
                hex: Some("ff".into()),
                fill: None,
            },
            ConstNode {
                name: "fc.weight".into(),
                node_type: NodeType::Const,
                hex: None,
                fill: Some(Fill {
                    byte: 0x3c,
                    len: 600,
                }),
            },
        ],
        ..WeightsScenario::default()
    };
    weights
        .options
        .session
        .insert("ge.externalWeight".into(), "1".into());
    Scenario::Weights(weights)
}

// The transfer and session showcases are written as JSON, the shape every other language
// sends; both parse, as the module's tests check, so a failure here is a bug of this file and
// never of a user's input.

/// Ten inputs fused, batch-copied and copied directly; the last two the size of the default
/// threshold and of the largest (the options table's).
fn transfer_showcase() -> Scenario {
    let (default, max) = (
        crate::gen::transfer::default_threshold(),
        crate::gen::transfer::max_threshold(),
    );
    serde_json::from_str(&format!(
        r#"{{"capability":"transfer",
            "options":{{"session":{{"ge.exec.input_fusion_size":"102400","ge.inputBatchCpy":"1"}}}},
            "inputs":[{{"index":0,"size":204800}},{{"index":1,"size":102400}},{{"index":2,"size":51200}},
                      {{"index":3,"size":1048576}},{{"index":4,"size":102401}},{{"index":5,"size":102400}},
                      {{"index":6,"size":524288}},{{"index":7,"size":51200}},{{"index":8,"size":{default}}},
                      {{"index":9,"size":{max}}}]}}"#,
    ))
    .expect("the transfer showcase is a scenario")
}

/// A session with both pools and refreshes of a static and a dynamic graph.
fn session_showcase() -> Scenario {
    serde_json::from_str(
        r#"{"capability":"session",
            "options":{"global":{"ge.exec.staticMemoryPolicy":"4"},"session":{"ge.featureBaseRefreshable":"1"}},
            "events":[
              {"event":"load","graph":1,"shape":"static","feature_bytes":1000},
              {"event":"load","graph":2,"shape":"dynamic","feature_bytes":3000},
              {"event":"execute","graph":2,"times":2},
              {"event":"refresh","graph":1,"bytes":1000},
              {"event":"refresh","graph":1,"bytes":999},
              {"event":"refresh","graph":2,"bytes":3000},
              {"event":"unload","graph":2}]}"#,
    )
    .expect("the session showcase is a scenario")
}

/// The snapshot set under `profile`: the examples, the showcases, then every case of `spec`
/// that runs under `profile`, in table order, except the cases built in code
/// ([`ge_spec::built::TABLES`]): their scenarios are the caps of 10,000 constants and 100,000
/// events, whose answers are megabytes no reviewer reads, and the cases judge them already.
pub fn set(spec: &Spec, profile: Profile) -> Vec<Entry> {
    let mut entries = examples();
    entries.extend(showcases());
    let built = |c: &&ge_spec::TableCase| ge_spec::built::TABLES.contains(&c.table.as_str());
    entries.extend(spec.cases_in(profile).filter(|c| !built(c)).map(|c| Entry {
        name: c.full_name(),
        scenario: c.case.scenario.clone(),
    }));
    entries
}

/// The snapshot files the set of `spec` may leave in a directory under any profile (a
/// snapshot and its deviation snapshot per scenario).
pub fn known_files(spec: &Spec) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for profile in Profile::ALL {
        for e in set(spec, profile) {
            let stem = e.file_stem();
            names.insert(format!("{stem}@{DEVIATION_SUFFIX}.snap"));
            names.insert(format!("{stem}.snap"));
        }
    }
    names
}

/// The `.snap` files of `dir` that belong to no scenario of the set: left over from a case
/// that was renamed or removed. A directory that does not exist has none.
pub fn unreferenced(dir: &Path, spec: &Spec) -> Vec<String> {
    let known = known_files(spec);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stray: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap") && !known.contains(n))
        .collect();
    stray.sort();
    stray
}

/// What `backend` answers for `scenario`, as the snapshot keeps it: the canonical observation
/// as pretty JSON, or the line that says why there is none (not supported, a panic).
pub fn observation_text(backend: &dyn Backend, scenario: &Scenario) -> String {
    let sandbox = match runner::sandbox(scenario) {
        Ok(s) => s,
        Err(e) => return format!("no sandbox directory could be made: {e}"),
    };
    match runner::ask(backend, scenario, runner::sandbox_path(&sandbox)) {
        Ok(Ok(mut o)) => {
            o.canonicalize();
            serde_json::to_string_pretty(&o).unwrap_or_else(|e| format!("not JSON: {e}"))
        }
        Ok(Err(ns)) => format!("not supported: {}", ns.reason),
        Err(panic) => panic,
    }
}

/// A JSON value without the `message` of any table in it: diagnostics compared without their
/// wording.
fn without_messages(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "message")
                .map(|(k, v)| (k.clone(), without_messages(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_messages).collect()),
        other => other.clone(),
    }
}

/// Every place where `theirs` differs from `ours`, as `pointer: reference X, backend Y` lines.
fn diff(ours: &serde_json::Value, theirs: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let show = |v: Option<&Value>| v.map_or_else(|| "(absent)".to_owned(), ToString::to_string);
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(x, y, &here, out),
                    (x, y) => out.push(format!(
                        "{here}: reference {}, backend {}",
                        show(x),
                        show(y)
                    )),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, &format!("{at}/{i}"), out);
            }
        }
        (a, b) if a != b => out.push(format!(
            "{}: reference {}, backend {}",
            if at.is_empty() { "/" } else { at },
            show(Some(a)),
            show(Some(b))
        )),
        _ => {}
    }
}

/// What the deviation snapshot of `scenario` keeps, or `None` when `backend` answers as the
/// reference of `judging`'s profile does: the problems the suite finds, weighed at the level
/// in force (failures and deviations alike), then every field where the two observations
/// differ, diagnostics compared without their wording.
pub fn differences(
    judging: &Judging,
    backend: &dyn Backend,
    scenario: &Scenario,
) -> Option<String> {
    let problems = crate::certify::compare(judging, backend, scenario);
    let reference = Reference::new(judging.profile);
    let parse = |text: String| serde_json::from_str::<serde_json::Value>(&text).ok();
    let ours = parse(observation_text(&reference, scenario));
    let theirs = parse(observation_text(backend, scenario));
    let mut fields = Vec::new();
    if let (Some(a), Some(b)) = (&ours, &theirs) {
        diff(&without_messages(a), &without_messages(b), "", &mut fields);
    }
    if problems.is_empty() && fields.is_empty() {
        return None;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "judged at level {} (profile {}):",
        judging.level, judging.profile
    );
    if problems.is_empty() {
        let _ = writeln!(out, "  nothing broken");
    }
    for p in &problems {
        let kind = if p.deviation || p.clauses.is_empty() {
            ""
        } else {
            "failure "
        };
        let _ = writeln!(out, "  {kind}{p}");
    }
    if !fields.is_empty() {
        let _ = writeln!(out, "differences from the reference (wording left out):");
        for f in fields {
            let _ = writeln!(out, "  {f}");
        }
    }
    Some(out)
}

/// Where the snapshots of a backend go.
#[derive(Debug, Clone)]
pub struct Snapshots {
    dir: PathBuf,
}

impl Snapshots {
    /// Snapshots in `dir`; a relative path is taken from the working directory (a test's is its
    /// crate's directory under `cargo test`).
    pub fn new(dir: impl AsRef<Path>) -> Snapshots {
        let dir = dir.as_ref();
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(dir))
                .unwrap_or_else(|_| dir.to_path_buf())
        };
        Snapshots { dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True on a first run: the directory holds no accepted snapshot (`*.snap`) yet, so every
    /// snapshot trial will write a new one for review.
    pub fn adopting(&self) -> bool {
        std::fs::read_dir(&self.dir).map_or(true, |entries| {
            !entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".snap"))
        })
    }

    /// After a first run: one line saying how many snapshots await review and how to review
    /// them.
    pub fn summarise_first_run(&self) {
        let new = std::fs::read_dir(&self.dir).map_or(0, |entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".snap.new"))
                .count()
        });
        if new > 0 {
            println!(
                "{new} new snapshot(s) written to {} as .snap.new: review them with `cargo insta review` \
                 (or accept them all with `cargo insta accept`), then commit the .snap files",
                self.dir.display()
            );
        }
    }

    /// Refuses to go on when a link stands at a name insta would write for `stem` (planted by
    /// whoever can write the directory, a confined backend among them): insta would write
    /// through it, outside the directory.
    fn refuse_links(&self, stem: &str) -> Result<(), String> {
        let deviation = format!("{stem}@{DEVIATION_SUFFIX}");
        for base in [stem, deviation.as_str()] {
            for ext in ["snap", "snap.new"] {
                let path = self.dir.join(format!("{base}.{ext}"));
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(format!(
                        "{} is a link: no snapshot is written through a link; remove it",
                        path.display()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Asks `backend` about `entry` and asserts its snapshot and, where it differs from the
    /// reference, its deviation snapshot, with insta. A change makes insta print the diff and
    /// panic (the trial fails); a deviation snapshot left over from a difference that is gone
    /// is an error naming the file to delete.
    pub fn check(
        &self,
        judging: &Judging,
        backend: &dyn Backend,
        entry: &Entry,
    ) -> Result<(), String> {
        let stem = entry.file_stem();
        self.refuse_links(&stem)?;
        let observed = observation_text(backend, &entry.scenario);
        let differences = differences(judging, backend, &entry.scenario);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(&self.dir);
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        let name = crate::input::one_line(backend.name(), crate::input::MAX_NAME);
        settings.set_description(format!("{name} answers {}", entry.name));
        settings.set_info(&entry.scenario);
        // A changed answer usually changes its deviations too: both are asserted before the
        // first failure is passed on, so one run writes both `.snap.new` files for review.
        let accepted = self.accepted(&stem);
        let answer = quietly(|| {
            settings.bind(|| insta::assert_snapshot!(stem.as_str(), observed.as_str()));
        })
        .map_err(|_| self.changed(&stem, accepted.as_deref(), &observed));
        let leftover = self.dir.join(format!("{stem}@{DEVIATION_SUFFIX}.snap"));
        let deviation = match differences {
            Some(text) => {
                settings.set_snapshot_suffix(DEVIATION_SUFFIX);
                settings.set_description(format!(
                    "where {name} departs from the reference on {}",
                    entry.name
                ));
                let deviation_stem = format!("{stem}@{DEVIATION_SUFFIX}");
                let accepted = self.accepted(&deviation_stem);
                quietly(|| {
                    settings.bind(|| insta::assert_snapshot!(stem.as_str(), text.as_str()));
                })
                .map_err(|_| self.changed(&deviation_stem, accepted.as_deref(), &text))
            }
            None if leftover.exists() => Err(format!(
                "{} now answers {} as the reference does: delete {}",
                backend.name(),
                entry.name,
                leftover.display()
            )),
            None => Ok(()),
        };
        for name in [
            format!("{stem}.snap"),
            format!("{stem}.snap.new"),
            format!("{stem}@{DEVIATION_SUFFIX}.snap"),
            format!("{stem}@{DEVIATION_SUFFIX}.snap.new"),
        ] {
            settle_source(&self.dir.join(name));
        }
        // The answer's failure first: a changed answer explains its changed deviations.
        answer.and(deviation)
    }

    /// The body of the accepted snapshot `<stem>.snap` (what follows its header), or `None`
    /// when there is none.
    fn accepted(&self, stem: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join(format!("{stem}.snap"))).ok()?;
        let body = text.strip_prefix("---\n")?;
        let end = body.find("\n---\n")?;
        Some(body[end + "\n---\n".len()..].to_owned())
    }

    /// The failure of a snapshot that is new or changed, in the suite's words: the file, a
    /// unified diff from the accepted body to `now`, and what to do with the `.snap.new` file
    /// insta wrote (or why it wrote none: `INSTA_UPDATE=no`, as in CI).
    fn changed(&self, stem: &str, accepted: Option<&str>, now: &str) -> String {
        let pending = self.dir.join(format!("{stem}.snap.new"));
        let written = pending.exists();
        let Some(accepted) = accepted else {
            return if written {
                format!("new snapshot, not yet reviewed: {}", pending.display())
            } else {
                format!(
                    "new snapshot, not written ({}): run the tests where insta may write it",
                    no_write_reason()
                )
            };
        };
        let (old, new) = (accepted.trim_end(), now.trim_end());
        let diff = similar::TextDiff::from_lines(old, new);
        let mut text = format!(
            "snapshot changed: {} no longer holds the answer\n{}",
            self.dir.join(format!("{stem}.snap")).display(),
            diff.unified_diff()
                .context_radius(3)
                .header("accepted", "now")
        );
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if written {
            text.push_str(&format!(
                "the new answer is in {}: when the change is intended, accept it with \
                 `cargo insta accept` (or `cargo insta review`)",
                pending.display()
            ));
        } else {
            text.push_str(&format!("no .snap.new written ({})", no_write_reason()));
        }
        text
    }
}

/// Why insta wrote no `.snap.new`: the setting that told it not to.
fn no_write_reason() -> String {
    let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    match (var("INSTA_UPDATE"), var("CI")) {
        (Some(v), _) => format!("INSTA_UPDATE={v}"),
        (None, Some(ci)) => {
            format!("CI={ci}: insta writes nothing under CI unless INSTA_UPDATE says to")
        }
        (None, None) => "insta's settings say not to".to_owned(),
    }
}

thread_local! {
    /// True while this thread asserts a snapshot: a panic there is insta's failed assertion,
    /// reported by the trial's message, not printed with a backtrace by the panic hook.
    static ASSERTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs an insta assertion, its panic caught and not printed (see [`ASSERTING`]).
fn quietly(assert: impl FnOnce()) -> std::thread::Result<()> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !ASSERTING.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    ASSERTING.with(|a| a.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(assert));
    ASSERTING.with(|a| a.set(false));
    result
}

/// insta prints nothing (`INSTA_OUTPUT=none`; it still writes each `.snap.new`): each trial's
/// failure says what changed, with the diff, in the trial's own section, and a first run's
/// summary follows the run. Unless `INSTA_OUTPUT` is set already (then insta prints as it
/// does, its wording included). Called before the trials' threads start: insta reads the
/// environment once.
pub fn quiet_insta() {
    if std::env::var_os("INSTA_OUTPUT").is_none() {
        std::env::set_var("INSTA_OUTPUT", "none");
    }
}

/// What a snapshot written by the trials records as its `source`: this file, named as in the
/// suite's repository. insta writes the path of the asserting file relative to the vendor's
/// workspace, which names where the suite is checked out (cargo's git checkout under a git
/// dependency) and so differs between machines; only the metadata changes, never what is
/// compared.
const SOURCE: &str = "harness/src/snapshot.rs";

/// Rewrites the `source` line of the header of the snapshot file at `path` to [`SOURCE`] when
/// it says anything else (a regular file only: nothing is followed through a link). Decided by
/// what the file says, never by when it was written: a filesystem's times can be coarser than
/// the clock, so a file written during the trial can look older than the trial.
fn settle_source(path: &Path) {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if !regular {
        return;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    if let Some(settled) = with_source(&text, SOURCE) {
        let _ = std::fs::write(path, settled);
    }
}

/// `text` with the `source:` line of its header (between the first two `---` lines) set to
/// `source`; `None` when it has no such line or already says so.
fn with_source(text: &str, source: &str) -> Option<String> {
    let body = text.strip_prefix("---\n")?;
    let header_len = body.find("\n---\n")?;
    let header = &body[..header_len];
    let mut lines: Vec<&str> = header.lines().collect();
    let wanted = format!("source: {source}");
    let line = lines.iter_mut().find(|l| l.starts_with("source: "))?;
    if *line == wanted {
        return None;
    }
    *line = &wanted;
    Some(format!("---\n{}{}", lines.join("\n"), &body[header_len..]))
}

/// What checking a whole set outside a test harness found (`certify --snapshots`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Scenarios checked.
    pub checked: usize,
    /// The scenarios whose snapshots are new or changed (or left over), with what insta or the
    /// check said.
    pub changed: Vec<String>,
    /// Snapshot files of the directory that belong to no scenario of the set.
    pub unreferenced: Vec<String>,
}

impl Snapshots {
    /// Checks every entry of `entries` whose capability `backend` declares, as [`Self::check`]
    /// does, catching insta's panic on a change so that every entry is checked; lists the
    /// unreferenced files of the directory too.
    ///
    /// The process's panic hook is silenced meanwhile (insta says what changed on standard
    /// output, or nothing with `INSTA_OUTPUT=none`): this is for a command line, not for a
    /// test harness, which reports the panics itself.
    pub fn check_all(
        &self,
        judging: &Judging,
        backend: &dyn Backend,
        spec: &Spec,
        entries: &[Entry],
    ) -> Summary {
        let declared = backend.capabilities();
        // insta's failed assertions are caught quietly in `check` (see `quietly`).
        let mut summary = Summary::default();
        for entry in entries
            .iter()
            .filter(|e| declared.contains(&e.capability()))
        {
            summary.checked += 1;
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.check(judging, backend, entry)
            }));
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(why)) => summary.changed.push(format!("{}: {why}", entry.name)),
                Err(payload) => {
                    let why = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_else(|| "the snapshot check failed".to_owned());
                    summary.changed.push(format!("{}: {why}", entry.name));
                }
            }
        }
        summary.unreferenced = unreferenced(&self.dir, spec);
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_link_at_a_snapshots_name_is_refused() {
        let dir = tempfile::tempdir().expect("a directory");
        let snapshots = Snapshots::new(dir.path());
        assert_eq!(snapshots.refuse_links("options__a"), Ok(()));
        let outside = dir.path().join("outside");
        for name in ["options__a.snap.new", "options__a@deviation.snap"] {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(&outside, &link).expect("a link");
            let err = snapshots.refuse_links("options__a").expect_err("refused");
            assert!(err.contains(name) && err.contains("is a link"), "{err}");
            std::fs::remove_file(&link).expect("removed");
        }
    }

    #[test]
    fn a_snapshot_names_the_suites_own_file_as_its_source() {
        let written = "---\nsource: ../../../ge-conformance/harness/src/snapshot.rs\ndescription: d\n---\nbody\nsource: kept\n";
        assert_eq!(
            with_source(written, SOURCE).as_deref(),
            Some("---\nsource: harness/src/snapshot.rs\ndescription: d\n---\nbody\nsource: kept\n")
        );
        let settled = with_source(written, SOURCE).unwrap_or_default();
        assert_eq!(with_source(&settled, SOURCE), None, "already settled");
        assert_eq!(with_source("no header", SOURCE), None);
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("x.snap.new");
        std::fs::write(&path, written).expect("written");
        // A filesystem with coarse times: the file looks written long before the trial.
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(old))
            .expect("set the file's time");
        settle_source(&path);
        assert_eq!(std::fs::read_to_string(&path).ok(), Some(settled));
    }

    #[test]
    fn the_set_names_every_case_once_and_parses_its_showcases() {
        let spec = Spec::embedded();
        let set = set(spec, Profile::Documented);
        let names: BTreeSet<&str> = set.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names.len(), set.len(), "names are unique");
        assert_eq!(showcases().len(), Capability::ALL.len());
        assert_eq!(examples().len(), 13);
        assert!(names.contains("transfer-examples/ten-inputs-threshold-0"));
        let built = spec
            .cases_in(Profile::Documented)
            .filter(|c| ge_spec::built::TABLES.contains(&c.table.as_str()))
            .count();
        assert!(built > 0);
        assert_eq!(
            set.len(),
            13 + 5 + spec.cases_in(Profile::Documented).count() - built
        );
    }

    #[test]
    fn differences_list_every_field_but_wording() {
        let mut a = serde_json::json!({"errors": [{"clause": "X", "message": "one"}], "n": 1});
        let b = serde_json::json!({"errors": [{"clause": "X", "message": "two"}], "n": 2, "m": 3});
        let mut out = Vec::new();
        diff(&without_messages(&a), &without_messages(&b), "", &mut out);
        assert_eq!(
            out,
            [
                "/m: reference (absent), backend 3",
                "/n: reference 1, backend 2"
            ]
        );
        a["n"] = 2.into();
        a["m"] = 3.into();
        out.clear();
        diff(&without_messages(&a), &without_messages(&b), "", &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
