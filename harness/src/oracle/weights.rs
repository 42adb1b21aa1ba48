//! The weights oracle: the invariants every weights observation must hold, whoever produced it
//! ([`judge`]), and the sandbox check that compares an observation with what is really on disk
//! ([`check_sandbox`]). [`plant`] lays out a scenario's `setup` steps before the backend runs.
//!
//! The oracle holds no expected answer: each check applies its clause's rule to what was
//! observed, calling small rule functions, each named after the clause it encodes, for the one
//! fact it needs from the scenario and the oracle's own reading of the options
//! ([`super::options`]): whether and why the load must be refused (`refusal`), the directory
//! the flush-path priority names and its tier ([`flush_dir`]), where mode 2's combined file goes
//! (`combined_file`), which constants a profile converts (`converts`), the hash a mode-1 file
//! is named after (`weight_hash`), the order and base of the combined file (`store_order`,
//! `combined_base`) and where its next content goes (`next_offset`). Mode 1's files are
//! judged from the files the nodes read and what they hold; mode 2's offsets from the offsets
//! observed, each against the one before it, and the combined file's length and hash against
//! the bytes that placement implies (`implied_file`). So a backend that merely agrees with
//! itself, or with the reference, is still judged against the clauses.
//!
//! This file holds the judge, its phases and check tables, the refusal and failure checks and
//! unload; one family of clauses lives in each submodule: `names` (what files are called),
//! `paths` (the flush-path priority, refusals, the setup's entries), `mode1` (modes 0 and 1),
//! `mode2` (the combined file), `plant` (the setup laid out) and `disk` (the answer against the
//! sandbox).

use ge_spec::vocab::weights::resolve_in_sandbox;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use ge_spec::vocab::weights::{
    decode_hex, NodeConversion, NodeType, SetupStep, WeightsObservation, WeightsScenario,
    WorkPathEnv, WrittenFile, MAX_CONSTANTS, MAX_WEIGHT_BYTES,
};
use ge_spec::{OptionKey, Profile, Spec};
use sha2::{Digest, Sha256};

use super::diagnostics;
use super::options::{self, Context, Outcome, Reading, Values};
use super::{Called, Entry as Check, Phase, Violation};
use crate::judging::{Judging, SANDBOX_RULE};
use crate::sandbox::Entry;

mod disk;
mod mode1;
mod mode2;
mod names;
mod paths;
mod plant;
pub use disk::check_sandbox;
use disk::*;
use mode1::*;
use mode2::*;
pub(crate) use names::sha;
use names::*;
use paths::*;
pub use paths::{flush_dir, Tier};
use plant::*;
pub use plant::{beside, plant};

/// The options a load acts on.
const KEYS: [OptionKey; 2] = [OptionKey::ExternalWeight, OptionKey::ExternalWeightDir];

/// The alignment of offsets in the combined file (EXW-015).
const ALIGN: u64 = 512;

/// The index file upstream keeps at the top of the weight directory (EXW-011's, EXW-014's and
/// WGT-011's upstream entries).
const META: &str = "meta.json";

/// Judges a weights observation against the clauses under `judging`, without looking at the
/// filesystem.
pub fn judge(
    judging: &Judging,
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
) -> Vec<Violation> {
    judge_named(judging, Naming::Strict, scenario, observation)
}

/// [`judge`] for a case that runs under both profiles: a converted node may carry either
/// profile's name (EXW-011 and EXW-014 diverge on it); everything else is judged under the
/// profile of `judging`.
pub fn judge_shared(
    judging: &Judging,
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
) -> Vec<Violation> {
    judge_named(judging, Naming::EitherProfile, scenario, observation)
}

fn judge_named(
    judging: &Judging,
    naming: Naming,
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
) -> Vec<Violation> {
    let profile = judging.profile;
    let reading = Reading::new(profile, &scenario.options, Context::plain());
    let o = observation;
    let planned = !o.dir.is_empty() || !o.files.is_empty() || !o.nodes.is_empty();
    let rejected_keys: Vec<OptionKey> = reading
        .keys
        .iter()
        .filter(|k| k.strict == Outcome::Rejected)
        .map(|k| k.key)
        .collect();
    super::under_readings(judging, &reading, &KEYS, planned, |values, rejected| {
        let refused = refusal(profile, scenario, values, rejected);
        let mut v = option_diagnostics(&reading, refused, o);
        let load = Load {
            profile,
            naming,
            scenario,
            values,
            refused,
            rejected_keys: &rejected_keys,
        };
        let judged = judge_load(&load, o);
        // A load refused outright, that nothing else explains, is explained by a setting where
        // its option does not take effect, when there is one: a departure from OPT-002's choice.
        let unexplained = judged.iter().any(|x| judging.binds(&x.clause));
        match reading.refusal_reason() {
            Some(allowed) if unexplained && refused.is_none() && wrote_nothing(o) => {
                v.push(allowed);
            }
            _ => v.extend(judged),
        }
        v
    })
}

/// Whether `o` refuses the load outright: errors, and no directory, file, node or removal.
fn wrote_nothing(o: &WeightsObservation) -> bool {
    !o.errors.is_empty()
        && o.dir.is_empty()
        && o.files.is_empty()
        && o.nodes.is_empty()
        && o.removed.is_empty()
}

/// The options' warnings, and their errors when the load is refused for a rejected option
/// (WGT-009; `refused`: the clause the refusal rests on, [`refusal`]).
fn option_diagnostics(
    reading: &Reading,
    refused: Option<&str>,
    o: &WeightsObservation,
) -> Vec<Violation> {
    let spec = Spec::embedded();
    let warnings = reading.expected_warnings();
    let mut v = diagnostics::compare(spec, "warnings", &warnings, &o.warnings, false);
    if refused == Some("WGT-009") {
        let errors = reading.expected_errors();
        // The refusal itself is judged on what the load did; these only report it.
        v.extend(diagnostics::compare_reports(
            spec, "errors", &errors, &o.errors, false,
        ));
    }
    v
}

/// A load under one reading of its options: the scenario, the options as read, whether and why
/// the load must be refused ([`refusal`]), and the keys the strict reading rejects.
struct Load<'a> {
    profile: Profile,
    naming: Naming,
    scenario: &'a WeightsScenario,
    values: &'a Values,
    refused: Option<&'static str>,
    rejected_keys: &'a [OptionKey],
}

/// Runs the phases on the observation `o` of `load`, in order: a refused load, a failed one,
/// then (the directory known) one in mode 0 or one that wrote its weights.
fn judge_load(load: &Load, o: &WeightsObservation) -> Vec<Violation> {
    let (profile, scenario) = (load.profile, load.scenario);
    let mut v = Vec::new();
    if let Some(clause) = load.refused {
        let cx = Refusal {
            clause,
            rejected_keys: load.rejected_keys,
            o,
        };
        super::run_table(REFUSED, &cx, &mut v);
        return v;
    }
    let weights = constants(scenario);
    if !o.errors.is_empty() {
        let cx = Failure {
            profile,
            scenario,
            values: load.values,
            weights: &weights,
            o,
        };
        super::run_table(FAILED, &cx, &mut v);
        return v;
    }
    let mode = mode_of(load.values);
    let place = flush_dir_with(profile, scenario, load.values);
    if let Some(missing) = work_path_missing(place.as_ref().map(|p| p.1)) {
        return vec![missing];
    }
    let by_weight = match match_nodes(profile, load.naming, mode, &weights, o) {
        Ok(by_weight) => by_weight,
        Err(unmatched) => return vec![unmatched],
    };
    let cx = Loaded {
        profile,
        scenario,
        mode,
        weights: &weights,
        o,
        by_weight,
    };
    if mode == 0 {
        super::run_table(MODE0, &cx, &mut v);
        return v;
    }
    let Some((dir, tier)) = place else {
        return v;
    };
    if o.dir != dir {
        return vec![wrong_dir(scenario, tier, &dir, &o.dir)];
    }
    let files = Written::of(&cx, &dir);
    let wrote = Wrote {
        cx: &cx,
        files: &files,
        dir: &dir,
        tier,
    };
    super::run_table(WROTE, &wrote, &mut v);
    v
}

/// What the checks of a refused load read.
struct Refusal<'a> {
    /// The clause the refusal rests on ([`refusal`]).
    clause: &'static str,
    rejected_keys: &'a [OptionKey],
    o: &'a WeightsObservation,
}

/// A check of the phases whose context is [`Refusal`].
type RefusalCheck = Check<fn(&Refusal<'_>) -> Vec<Violation>>;

/// A load the reading refuses: the checks of a refusal, in order.
const REFUSED: &[RefusalCheck] = &[
    Check {
        clauses: &["EXW-001", "EWD-001"],
        name: "rejected_value_acted_on",
        run: |cx| rejected_value_acted_on(cx.rejected_keys, cx.o),
    },
    Check {
        clauses: &["WGT-001", "WGT-002", "WGT-009"],
        name: "refused_with_error",
        run: |cx| refused_with_error(cx.clause, cx.o).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-001", "WGT-002", "WGT-009"],
        name: "refused_leaves_nothing",
        run: |cx| {
            refused_leaves_nothing(cx.clause, cx.o)
                .into_iter()
                .collect()
        },
    },
];

/// What the checks of a failed load read: the scenario, the options as read, its constants.
struct Failure<'a> {
    profile: Profile,
    scenario: &'a WeightsScenario,
    values: &'a Values,
    weights: &'a [Weight],
    o: &'a WeightsObservation,
}

/// A check of the phases whose context is [`Failure`].
type FailureCheck = Check<fn(&Failure<'_>) -> Vec<Violation>>;

/// A load that failed where the reading lets it go ahead: the checks of a failure, in order.
const FAILED: &[FailureCheck] = &[
    Check {
        clauses: &["WGT-008"],
        name: "failed_converts_nothing",
        run: |cx| failed_converts_nothing(cx.o).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-011", "EXW-014"],
        name: "nothing_in_the_way",
        run: |cx| nothing_in_the_way(cx).into_iter().collect(),
    },
    Check {
        clauses: &[
            "EWD-010", "EWD-011", "EXW-016", "EXW-017", "EXW-018", "EXW-022",
        ],
        name: "failed_dir_named",
        run: |cx| failed_dir_named(cx).into_iter().collect(),
    },
];

/// A check of the phases whose context is [`Loaded`].
type LoadedCheck = Check<fn(&Loaded<'_>) -> Vec<Violation>>;

/// The check of a load in mode 0.
const MODE0: &[LoadedCheck] = &[Check {
    clauses: &["EXW-010"],
    name: "mode1::mode0_leaves_all",
    run: mode0_leaves_all,
}];

/// What the checks of a load that wrote its weights read: the load, its files, the directory
/// and the tier it was chosen by.
struct Wrote<'c, 'a> {
    cx: &'c Loaded<'a>,
    files: &'c Written<'a>,
    dir: &'c str,
    tier: Tier,
}

/// A check of the phases whose context is [`Wrote`].
type WroteCheck = Check<fn(&Wrote<'_, '_>) -> Vec<Violation>>;

/// The checks of a load in mode 1 or 2 in the right directory, in order.
const WROTE: &[WroteCheck] = &[
    Check {
        clauses: &["EXW-011", "EXW-014"],
        name: "mode1::empty_tensors_stay",
        run: |w| empty_tensors_stay(w.cx),
    },
    Check {
        clauses: &["WGT-005"],
        name: "mode1::index_listed",
        run: |w| index_listed(w.files, w.cx.o).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011"],
        name: "read_back_reported",
        run: |w| read_back_reported(w.cx, w.files),
    },
    Check {
        clauses: &["WGT-011"],
        name: "mode1::idle_files",
        run: |w| idle_files(w.files).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-011", "EXW-012", "EXW-013", "WGT-011"],
        name: "mode1::judge_mode1",
        run: |w| match w.cx.mode {
            1 => judge_mode1(w.cx, w.files, w.dir),
            _ => Vec::new(),
        },
    },
    Check {
        clauses: &["EXW-014", "EXW-015", "EXW-020", "WGT-011"],
        name: "mode2::judge_mode2",
        run: |w| match w.cx.mode {
            1 => Vec::new(),
            _ => judge_mode2(w.cx, w.files, w.dir),
        },
    },
    Check {
        clauses: &["WGT-010", "EWD-013"],
        name: "nothing_removed",
        run: |w| match removes(w) {
            Some(temporary) => nothing_removed(w.cx.o, temporary).into_iter().collect(),
            None => Vec::new(),
        },
    },
    // That the directory is gone is judged on the disk (EXW-019, `check_sandbox`); here only
    // the report of it (WGT-010).
    Check {
        clauses: &["WGT-010"],
        name: "unload_reports_removed",
        run: |w| match removes(w) {
            Some(_) => Vec::new(),
            None => unload_reports_removed(w.cx.o, w.files, w.dir),
        },
    },
    Check {
        clauses: &["WGT-007"],
        name: "unload_removes_inside",
        run: |w| match removes(w) {
            Some(_) => Vec::new(),
            None => unload_removes_inside(w.cx.o, w.dir),
        },
    },
];

/// `None` when unload removes the temporary directory the load wrote in; otherwise whether the
/// directory is a temporary one (which unload then keeps).
fn removes(w: &Wrote) -> Option<bool> {
    let temporary = w.tier != Tier::User;
    (!unload_removes(w.cx.profile, w.cx.scenario) || !temporary).then_some(temporary)
}

/// The checks the drivers call themselves: the options' diagnostics (under each reading), the
/// boundaries of a load that went ahead, and the check beside the sandbox ([`beside`]).
const CALLED: &[Called] = &[
    Check {
        clauses: &["WGT-009"],
        name: "option_diagnostics",
        run: (),
    },
    Check {
        clauses: &["EXW-022"],
        name: "work_path_missing",
        run: (),
    },
    Check {
        clauses: &["EXW-010", "EXW-011", "EXW-014"],
        name: "match_nodes",
        run: (),
    },
    Check {
        clauses: &[
            "EWD-010", "EWD-011", "EXW-016", "EXW-017", "EXW-018", "EXW-022",
        ],
        name: "plant::wrong_dir",
        run: (),
    },
    Check {
        clauses: &["WGT-007"],
        name: "plant::beside",
        run: (),
    },
];

/// The checks of the weights oracle, by phase, for the registry.
pub(super) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("a refused load", REFUSED),
        Phase::of("a failed load", FAILED),
        Phase::of("a load in mode 0", MODE0),
        Phase::of("a load that wrote its weights", WROTE),
        Phase::of(
            "each converted constant in mode 1 (judge_mode1)",
            MODE1_CONSTANT,
        ),
        Phase::of(
            "each converted constant in mode 2 (judge_mode2)",
            MODE2_CONSTANT,
        ),
        Phase::of("the sandbox after the answer (check_sandbox)", DISK),
        Phase::called("by the driver", CALLED),
    ]
}

/// What the checks of a load that went ahead read: the scenario, the mode the reading puts in
/// force, the model's constants, the observation, and each constant's node, matched once
/// ([`match_nodes`]).
struct Loaded<'a> {
    profile: Profile,
    scenario: &'a WeightsScenario,
    mode: u8,
    weights: &'a [Weight],
    o: &'a WeightsObservation,
    /// The index in `o.nodes` of each constant's node, by the constant's name.
    by_weight: BTreeMap<&'a str, usize>,
}

impl<'a> Loaded<'a> {
    /// The node of the constant `name`.
    fn node(&self, name: &str) -> Option<&'a NodeConversion> {
        self.by_weight.get(name).map(|&i| &self.o.nodes[i])
    }

    /// The node of the constant `name`, which [`match_nodes`] guarantees.
    fn node_of(&self, name: &str) -> NodeConversion {
        self.node(name)
            .cloned()
            .unwrap_or_else(|| unreachable_node(name))
    }
}

/// EXW-010, EXW-011, EXW-014: the clause of mode `mode`.
fn mode_clause(mode: u8) -> &'static str {
    match mode {
        0 => "EXW-010",
        1 => "EXW-011",
        _ => "EXW-014",
    }
}

/// True when `n` is no longer a `ty` node without a file.
fn altered(n: &NodeConversion, ty: NodeType) -> bool {
    n.node_type != ty || n.file.is_some() || n.offset.is_some() || n.length.is_some()
}

/// EXW-001, EWD-001 (each option's value clause): not refused, and acting on the options: under
/// this reading the rejected value took effect, which its option's value clause rules out.
/// (Another reading the text allows, such as the default in force, is tried next.)
fn rejected_value_acted_on(rejected_keys: &[OptionKey], o: &WeightsObservation) -> Vec<Violation> {
    let converted = o
        .nodes
        .iter()
        .any(|n| n.node_type == NodeType::FileConstant);
    if !(o.errors.is_empty() && (!o.files.is_empty() || converted)) {
        return Vec::new();
    }
    rejected_keys
        .iter()
        .map(|key| {
            Violation::new(
                options::value_clause(*key),
                format_args!("{key} holds a value that takes no effect, yet the load acted on it"),
            )
        })
        .collect()
}

/// WGT-001, WGT-002, WGT-009 (the refusal's clause, `clause`: [`refusal`]): the load is
/// refused with an error.
fn refused_with_error(clause: &'static str, o: &WeightsObservation) -> Option<Violation> {
    o.errors
        .is_empty()
        .then(|| Violation::new(clause, "the load must be refused with an error"))
}

/// WGT-001, WGT-002, WGT-009 (the refusal's clause, `clause`: [`refusal`]): a refused load
/// writes, converts and removes nothing.
fn refused_leaves_nothing(clause: &'static str, o: &WeightsObservation) -> Option<Violation> {
    (!o.files.is_empty() || !o.nodes.is_empty() || !o.removed.is_empty()).then(|| {
        Violation::new(
            clause,
            "a refused load writes, converts and removes nothing",
        )
    })
}

/// WGT-008: a failed load converts no node.
fn failed_converts_nothing(o: &WeightsObservation) -> Option<Violation> {
    (!o.nodes.is_empty()).then(|| Violation::new("WGT-008", "a failed load converts no node"))
}

/// EWD-010, EWD-011, EXW-016, EXW-017, EXW-018, EXW-022 (the tier's clause, [`wrong_dir`]): a
/// failed load may leave its directory unnamed, but one it names must be the one the
/// flush-path priority names ([`flush_dir`]).
fn failed_dir_named(cx: &Failure) -> Option<Violation> {
    let o = cx.o;
    match flush_dir_with(cx.profile, cx.scenario, cx.values) {
        Some((dir, tier)) if !o.dir.is_empty() && o.dir != dir => {
            Some(wrong_dir(cx.scenario, tier, &dir, &o.dir))
        }
        _ => None,
    }
}

/// EXW-022: ASCEND_WORK_PATH can be neither found nor created (documented: `tier`, the tier of
/// the flush directory, [`flush_dir`]), so a load that went ahead breaks it.
fn work_path_missing(tier: Option<Tier>) -> Option<Violation> {
    (tier == Some(Tier::WorkPathMissing)).then(|| {
        Violation::new(
            "EXW-022",
            "ASCEND_WORK_PATH can be neither found nor created, so the load must fail",
        )
    })
}

/// EXW-010, EXW-011, EXW-014 (the mode's clause): each constant's node is found under a name
/// the profile (or, for a shared case, either profile) gives it; every node must be some
/// constant's, each constant reported once. The index of each constant's node, by name.
fn match_nodes<'a>(
    profile: Profile,
    naming: Naming,
    mode: u8,
    weights: &'a [Weight],
    o: &WeightsObservation,
) -> Result<BTreeMap<&'a str, usize>, Violation> {
    // Each constant takes the first node not yet taken whose name it accepts. The nodes of one
    // name are taken in order, so the ones taken are a prefix of that name's list: a cursor per
    // name finds the first free one without scanning every node for every constant.
    let mut by_name: BTreeMap<&str, (Vec<usize>, usize)> = BTreeMap::new();
    for (i, n) in o.nodes.iter().enumerate() {
        by_name.entry(n.name.as_str()).or_default().0.push(i);
    }
    let mut taken = 0;
    let mut matched = Vec::with_capacity(weights.len());
    for (name, _, bytes) in weights {
        let accepted = accepted_names(profile, naming, mode, name, bytes);
        let mut at: Option<(usize, &str)> = None;
        for n in &accepted {
            if let Some((nodes, next)) = by_name.get(n.as_str()) {
                if let Some(&i) = nodes.get(*next) {
                    if at.is_none_or(|(j, _)| i < j) {
                        at = Some((i, n.as_str()));
                    }
                }
            }
        }
        if let Some((_, next)) = at.and_then(|(_, n)| by_name.get_mut(n)) {
            *next += 1;
            taken += 1;
        }
        matched.push(at.map(|(i, _)| i));
    }
    if matched.iter().any(Option::is_none) || taken < o.nodes.len() {
        let names: Vec<&str> = o.nodes.iter().map(|n| n.name.as_str()).collect();
        let want: Vec<String> = weights
            .iter()
            .flat_map(|(name, _, bytes)| accepted_names(profile, naming, mode, name, bytes))
            .collect();
        return Err(Violation::new(
            mode_clause(mode),
            format_args!(
                "every constant must be reported once, named one of {want:?}; found nodes {names:?}"
            ),
        ));
    }
    Ok(weights
        .iter()
        .zip(&matched)
        .filter_map(|(w, at)| at.map(|i| (w.0.as_str(), i)))
        .collect())
}

/// WGT-010, EWD-013: nothing may be removed where unload does not remove the directory, nor
/// ever from the user's directory (EWD-013, `temporary` false).
fn nothing_removed(o: &WeightsObservation, temporary: bool) -> Option<Violation> {
    let clause = if temporary { "WGT-010" } else { "EWD-013" };
    (!o.removed.is_empty()).then(|| {
        Violation::new(
            clause,
            format_args!(
                "nothing may be removed here; reported {}",
                crate::judging::Joined(&o.removed, ", ")
            ),
        )
    })
}

/// WGT-010: unload reports the temporary directory `dir` removed, and the files the backend
/// wrote in it, under whatever names it chose.
fn unload_reports_removed(o: &WeightsObservation, files: &Written, dir: &str) -> Vec<Violation> {
    let mut v = Vec::new();
    if !o.removed.iter().any(|r| r == dir) {
        v.push(Violation::new(
            "WGT-010",
            format_args!("unload must report {dir} as removed"),
        ));
    }
    for f in files.read.iter().map(|f| &f.path) {
        if !o.removed.contains(f) {
            v.push(Violation::new(
                "WGT-010",
                format_args!("unload must report {f} as removed"),
            ));
        }
    }
    v
}

/// WGT-007: unload removes nothing outside the temporary directory `dir`.
fn unload_removes_inside(o: &WeightsObservation, dir: &str) -> Vec<Violation> {
    o.removed
        .iter()
        .filter(|r| !under(r, dir))
        .map(|r| Violation::new("WGT-007", format_args!("unload removed {r}, outside {dir}")))
        .collect()
}

/// EXW-011, EXW-014 (the mode's clause): a refused load that nothing the suite chose could explain: mode 1 or 2 in force, the
/// temporary directory under the sandbox root as the working directory (no
/// `ge.externalWeightDir`, no ASCEND_WORK_PATH), nothing planted, and for mode 2 a plain root
/// graph name. The text says such a load flushes its weights there (EXW-011, EXW-014), so
/// refusing it breaks that, whatever the error cites. Anywhere else a refusal may stand on one
/// of the suite's choices (a directory to create, a cap, a name) and is judged there.
fn nothing_in_the_way(cx: &Failure) -> Option<Violation> {
    let (scenario, mode) = (cx.scenario, mode_of(cx.values));
    let place = flush_dir_with(cx.profile, scenario, cx.values);
    let plain_name = |g: &str| !g.is_empty() && g != "." && g != ".." && !g.contains(['/', '\0']);
    let clear = cx.profile == Profile::Documented
        && place.as_ref().is_some_and(|p| p.1 == Tier::WorkDir)
        && scenario.work_dir.is_empty()
        && scenario.setup.is_empty()
        && !cx.weights.is_empty()
        && (mode == 1 || (mode == 2 && plain_name(&scenario.root_graph)));
    clear.then(|| {
        Violation::new(
            if mode == 1 { "EXW-011" } else { "EXW-014" },
            format_args!(
                "the load is refused, yet nothing stands in its way: mode {} flushes the weights to {}",
                mode,
                place.map_or_else(|| "its temporary directory".to_owned(), |p| p.0)
            ),
        )
    })
}

/// WGT-011: a FileConstant that reads another length than its constant's bytes cannot read
/// them back, whatever the layout.
fn wrong_length(
    name: &str,
    bytes: &[u8],
    n: &ge_spec::vocab::weights::NodeConversion,
) -> Option<Violation> {
    n.length.filter(|&l| l != bytes.len() as u64).map(|l| {
        Violation::new(
            "WGT-011",
            format_args!(
                "{name} holds {} bytes, but its FileConstant reads {l}",
                bytes.len()
            ),
        )
    })
}

/// True when `file` is a file of `dir` named `weight_` followed by a hash of the engine's
/// choosing (EXW-011 names the pattern, not the hash).
fn is_weight_file(dir: &str, file: &str) -> bool {
    file.strip_prefix(&in_dir(dir, "weight_"))
        .is_some_and(|h| !h.is_empty() && !h.contains('/'))
}

/// WGT-011 from what the observation says of its files, for files a later unload removed (the
/// sandbox check reads the others back from disk): a weight's bytes lie inside its file, and
/// where the file holds that weight alone the reported hash is the hash of its bytes.
fn read_back_reported(cx: &Loaded, files: &Written) -> Vec<Violation> {
    let mut v = Vec::new();
    for &(name, _, bytes) in &files.converted {
        let Some(n) = cx.node(name) else { continue };
        let (Some(file), Some(off), Some(len)) = (n.file.as_deref(), n.offset, n.length) else {
            continue;
        };
        let Some(f) = files.by_path.get(file) else {
            continue;
        };
        let past_end = off.checked_add(len).is_none_or(|end| end > f.len);
        let alone = off == 0 && len == f.len;
        if past_end || (alone && f.sha256 != sha(bytes)) {
            v.push(Violation::new(
                "WGT-011",
                format_args!(
                    "{file} ({} bytes, SHA-256 {}) does not hold the bytes of {name} at offset {off}, length {len}",
                    f.len, f.sha256
                ),
            ));
        }
    }
    v
}

/// A node the name check above guarantees exists; kept total so the oracle never panics.
fn unreachable_node(name: &str) -> ge_spec::vocab::weights::NodeConversion {
    ge_spec::vocab::weights::NodeConversion {
        name: name.to_owned(),
        node_type: NodeType::Const,
        file: None,
        offset: None,
        length: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_show_optional_values_as_values_never_as_rust_options() {
        assert_eq!(shown(Some(512u64)), "512");
        assert_eq!(shown(Some("run/tmp_weight_0_0")), "run/tmp_weight_0_0");
        assert_eq!(shown(None::<u64>), "none");
        let n = NodeConversion {
            name: "c0".into(),
            node_type: ge_spec::vocab::weights::NodeType::FileConstant,
            file: Some("w/weight_0".into()),
            offset: Some(512),
            length: None,
        };
        let v = alone_at_zero("c0", b"", &n).expect("a file not at offset 0");
        assert!(!v.message.contains("Some("), "{}", v.message);
        assert!(
            v.message.contains("offset 512, length none"),
            "{}",
            v.message
        );
    }

    #[test]
    fn the_implied_combined_file_stays_within_what_the_rules_could_lay_out() {
        let (a, b): (&[u8], &[u8]) = (b"abc", b"de");
        let doc =
            |placed: &[(&[u8], Option<u64>)]| implied_file(Profile::Documented, vec![], placed);
        // Laid out by the rules: each content at the previous end rounded up to 512.
        let laid = doc(&[(a, Some(0)), (b, Some(512))]).expect("within the rules");
        assert_eq!((laid.len(), &laid[..3], &laid[512..]), (514, a, b));
        // Upstream pads the end to 512 from the base, after what was planted.
        let up = implied_file(Profile::Upstream, vec![7; 5], &[(a, Some(5))]).expect("padded");
        assert_eq!((up.len(), &up[..5], &up[5..8]), (517, &[7u8; 5][..], a));
        // An offset a backend reports far past any rule-made layout builds nothing (EXW-015 is
        // charged at that offset): no buffer of the backend's choosing.
        assert_eq!(doc(&[(a, Some(100 << 20))]), None);
        assert_eq!(doc(&[(a, Some(0)), (b, Some(1024))]), None);
        assert_eq!(doc(&[(a, None)]), None);
    }

    fn parts(p: &str) -> Vec<String> {
        resolve_in_sandbox(&[], p).unwrap()
    }

    fn dir(p: &str) -> SetupStep {
        SetupStep::Dir { path: p.into() }
    }

    fn file(p: &str) -> SetupStep {
        SetupStep::File {
            path: p.into(),
            hex: String::new(),
        }
    }

    fn link(p: &str, t: &str) -> SetupStep {
        SetupStep::Symlink {
            path: p.into(),
            target: t.into(),
        }
    }

    #[test]
    fn look_up_follows_the_planted_tree_as_the_filesystem_would() {
        let stuck = Found::Missing { creatable: false };
        let free = Found::Missing { creatable: true };
        let setup = vec![
            dir("d/e"),
            file("f"),
            link("to-d", "d"),
            link("to-to-d", "to-d"),
            link("to-f", "f"),
            link("dangling", "nowhere"),
            link("loop-a", "loop-b"),
            link("loop-b", "loop-a"),
        ];
        let cases = [
            ("", Found::Dir),
            ("d", Found::Dir),
            ("d/e", Found::Dir),
            ("d/x/y", free),
            ("new/dir", free),
            ("f", Found::File),
            ("f/below", stuck),
            ("to-d/e", Found::Dir),
            ("to-to-d/e", Found::Dir),
            ("to-to-d/new", free),
            ("to-f", Found::File),
            ("to-f/below", stuck),
            ("dangling", stuck),
            ("dangling/below", stuck),
            ("loop-a", stuck),
        ];
        for (path, want) in cases {
            assert_eq!(look_up(&setup, &parts(path)), want, "{path:?}");
        }
    }

    #[test]
    fn an_uncreatable_work_path_is_kept_or_left_per_profile() {
        let mut s = scenario("1");
        s.ascend_work_path = WorkPathEnv::Set {
            path: "f/work".into(),
        };
        s.setup = vec![file("f")];
        let doc = flush_dir(Profile::Documented, &s);
        assert_eq!(
            doc,
            Some(("f/work/tmp_weight_1_2".to_owned(), Tier::WorkPathMissing))
        );
        let up = flush_dir(Profile::Upstream, &s);
        assert_eq!(
            up,
            Some(("tmp_weight_1_2".to_owned(), Tier::WorkPathFallback))
        );
        s.setup = vec![dir("f")];
        for profile in [Profile::Documented, Profile::Upstream] {
            let e = flush_dir(profile, &s);
            assert_eq!(
                e,
                Some(("f/work/tmp_weight_1_2".to_owned(), Tier::WorkPath))
            );
        }
    }

    fn scenario(mode: &str) -> WeightsScenario {
        serde_json::from_value(serde_json::json!({
            "root_graph": "net",
            "pid": 1,
            "session_id": 2,
            "options": { "session": { "ge.externalWeight": mode } },
            "constants": [{ "name": "a", "type": "Const", "hex": "00010203" }],
        }))
        .expect("a weights scenario")
    }

    fn observe(profile: Profile, s: &WeightsScenario) -> WeightsObservation {
        let dir = tempfile::tempdir().expect("a sandbox");
        ge_reference::weights::load(profile, s, dir.path()).expect("an observation")
    }

    #[test]
    fn upstream_lists_its_index_only_when_a_constant_is_converted() {
        let up_j = Judging::new(Profile::Upstream, ge_spec::Conformance::Strict);
        let doc_j = Judging::new(Profile::Documented, ge_spec::Conformance::Strict);
        let index = |o: &WeightsObservation| o.files.iter().position(|f| f.path.ends_with(META));
        for (mode, clause) in [("1", "EXW-011"), ("2", "EXW-014")] {
            let s = scenario(mode);
            let up = observe(Profile::Upstream, &s);
            assert_eq!(
                index(&up).map(|i| up.files[i].path.as_str()),
                Some("tmp_weight_1_2/meta.json")
            );
            assert!(judge(&up_j, &s, &up).is_empty());
            let mut without = up.clone();
            without.files.retain(|f| !f.path.ends_with(META));
            // Unlisted, it is the listing that is wrong (WGT-005); the mode's clause judges
            // the file on disk (`check_sandbox`).
            let wrong = judge(&up_j, &s, &without);
            assert!(wrong.iter().any(|v| v.clause == "WGT-005"), "{wrong:?}");
            assert!(!wrong.iter().any(|v| v.clause == clause), "{wrong:?}");
            // The documented profile writes no index, and one listed is not a weight file.
            let mut doc = observe(Profile::Documented, &s);
            assert_eq!(index(&doc), None);
            doc.files
                .push(up.files[index(&up).unwrap_or_default()].clone());
            let wrong = judge(&doc_j, &s, &doc);
            assert!(wrong.iter().any(|v| v.clause == "WGT-011"), "{wrong:?}");
        }
        // Nothing converted (only an empty tensor): upstream keeps no index either.
        let mut s = scenario("2");
        s.constants[0].hex = Some(String::new());
        let up = observe(Profile::Upstream, &s);
        assert_eq!(index(&up), None);
        assert!(judge(&up_j, &s, &up).is_empty());
    }

    #[test]
    fn converted_names_are_strict_per_profile_and_either_in_shared_cases() {
        for mode in ["1", "2"] {
            let s = scenario(mode);
            let clause = if mode == "1" { "EXW-011" } else { "EXW-014" };
            let up = observe(Profile::Upstream, &s);
            // Worked out with python3 hashlib: SHA-256 of 00010203, bytes unpadded.
            assert_eq!(
                up.nodes[0].name,
                "a_54edec1d0211f624fedcbca9d4f940be491c43742af2c5b0abebf0c990d8"
            );
            let doc = observe(Profile::Documented, &s);
            assert_eq!(doc.nodes[0].name, "a");
            let (doc_j, up_j) = (
                Judging::new(Profile::Documented, ge_spec::Conformance::Strict),
                Judging::new(Profile::Upstream, ge_spec::Conformance::Strict),
            );
            assert!(judge(&up_j, &s, &up).is_empty());
            assert!(judge(&doc_j, &s, &doc).is_empty());
            let wrong = judge(&doc_j, &s, &up);
            assert!(wrong.iter().any(|v| v.clause == clause), "{wrong:?}");
            let wrong = judge(&up_j, &s, &doc);
            assert!(wrong.iter().any(|v| v.clause == clause), "{wrong:?}");
            // Upstream's padding differs in mode 2 (EXW-015), so only the names are compared.
            let shared = judge_shared(&doc_j, &s, &up);
            assert!(shared.iter().all(|v| v.clause != clause), "{shared:?}");
            assert!(judge_shared(&up_j, &s, &up).is_empty());
        }
    }
}
