//! The weights oracle: the invariants every weights observation must hold, whoever produced it
//! ([`judge`]), and the sandbox check that compares an observation with what is really on disk
//! ([`check_sandbox`]). [`plant`] lays out a scenario's `setup` steps before the backend runs.
//!
//! The oracle works the expected directory, names and layout out on its own from the scenario
//! and its own reading of the options ([`super::options`]), so a backend that merely agrees with
//! itself, or with the reference, is still judged against the clauses.

use ge_spec::vocab::weights::resolve_in_sandbox;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use ge_spec::vocab::weights::{
    decode_hex, NodeType, SetupStep, WeightsObservation, WeightsScenario, WorkPathEnv,
    MAX_CONSTANTS, MAX_WEIGHT_BYTES,
};
use ge_spec::{OptionKey, Profile, Spec};
use sha2::{Digest, Sha256};

use super::diagnostics;
use super::options::{self, Context, Outcome, Reading, Values};
use super::Violation;
use crate::judging::Judging;
use crate::sandbox::Entry;

/// The options a load acts on.
const KEYS: [OptionKey; 2] = [OptionKey::ExternalWeight, OptionKey::ExternalWeightDir];

/// The alignment of offsets in the combined file (EXW-015).
const ALIGN: u64 = 512;

/// The index file upstream keeps at the top of the weight directory (EXW-011's, EXW-014's and
/// WGT-011's upstream entries).
const META: &str = "meta.json";

/// Where upstream must leave its index file after a load of `e` that succeeded: at the top of
/// the weight directory, whenever at least one constant is converted (in modes 1 and 2); `None`
/// under the documented profile, in mode 0, and when nothing is converted.
fn meta_path(profile: Profile, e: &Expected) -> Option<String> {
    let converting = e.weights.iter().any(|w| converts(profile, &w.2));
    match (&e.dir, profile) {
        (Some(dir), Profile::Upstream) if !e.refused && e.mode != 0 && converting => {
            Some(in_dir(dir, META))
        }
        _ => None,
    }
}

/// The mode-1 file name of `bytes` under `profile` (EXW-012 and its upstream entry: no
/// zero-padding of each byte upstream).
fn weight_name(profile: Profile, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => format!("weight_{}", sha(bytes)),
        Profile::Upstream => format!("weight_{}", upstream_sha(bytes)),
    }
}

/// The SHA-256 of `bytes` as upstream prints it: each byte as hex without zero-padding.
fn upstream_sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:x}"))
        .collect()
}

/// The name of a constant converted to FileConstant (modes 1 and 2) under `profile`: kept
/// (documented), or `<name>_<hash>` with the hash of the weight's own bytes spelled as in
/// mode-1 file names (EXW-011's and EXW-014's upstream entries).
fn converted_name(profile: Profile, name: &str, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => name.to_owned(),
        Profile::Upstream => format!("{name}_{}", upstream_sha(bytes)),
    }
}

/// Whether modes 1 and 2 convert a constant holding `bytes` under `profile`: upstream gives an
/// empty-tensor weight (no bytes, in the vocabulary) no hash, so it is never converted and stays
/// Const/Constant under its own name (EXW-011's and EXW-014's upstream entries).
fn converts(profile: Profile, bytes: &[u8]) -> bool {
    profile == Profile::Documented || !bytes.is_empty()
}

/// The name the node of constant `name` carries after a mode-1 or mode-2 load under `profile`.
fn name_after(profile: Profile, name: &str, bytes: &[u8]) -> String {
    if converts(profile, bytes) {
        converted_name(profile, name, bytes)
    } else {
        name.to_owned()
    }
}

/// How the judge holds node names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    /// The name the profile gives (properties, `eval --judge`, profile-bound cases).
    Strict,
    /// Either profile's name for a converted node: a case that runs under both profiles
    /// checks only what they agree on (the name is checked by profile-bound cases).
    EitherProfile,
}

/// The names under which the judge accepts the node of constant `name` in `mode`.
fn accepted_names(
    profile: Profile,
    naming: Naming,
    mode: u8,
    name: &str,
    bytes: &[u8],
) -> Vec<String> {
    match (mode, naming) {
        (0, _) => vec![name.to_owned()],
        (_, Naming::Strict) => vec![name_after(profile, name, bytes)],
        (_, Naming::EitherProfile) => Profile::ALL
            .iter()
            .map(|&p| name_after(p, name, bytes))
            .collect(),
    }
}

/// The mode-2 file name under `profile` (EXW-014 and its upstream fallback).
fn combined_name(profile: Profile, root_graph: &str) -> String {
    if profile == Profile::Upstream && root_graph.is_empty() {
        "weight_combined".to_owned()
    } else {
        format!("{root_graph}_weight_combined")
    }
}

/// The sandbox-relative path of the mode-2 file of `root_graph` in `dir` under `profile`, or
/// `None` when it would leave the sandbox. Upstream joins directory and name with a `/`, so a
/// `/` in the name separates components, `..` among them climbing (WGT-002's upstream entry);
/// the documented name is one component.
fn combined_file(profile: Profile, dir: &str, root_graph: &str) -> Option<String> {
    let name = combined_name(profile, root_graph);
    if profile == Profile::Documented {
        return Some(in_dir(dir, &name));
    }
    let mut parts: Vec<&str> = if dir == "." {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Where a write to the sandbox-relative `path` lands under `profile`: upstream follows the
/// links the setup planted, at every component, the last one too (WGT-007's and WGT-008's
/// upstream entries), so the path is resolved through them as the filesystem would; the
/// documented profile refuses or replaces them, so the path is taken as it is. Only the plant
/// record is read: the harness never follows a link on disk.
fn landing(profile: Profile, setup: &[SetupStep], path: &str) -> String {
    if profile == Profile::Documented {
        return path.to_owned();
    }
    let links: BTreeMap<Vec<String>, Vec<String>> = setup
        .iter()
        .filter_map(|s| match s {
            SetupStep::Symlink { path, target } => Some((
                resolve_in_sandbox(&[], path)?,
                resolve_in_sandbox(&[], target)?,
            )),
            _ => None,
        })
        .collect();
    let Some(parts) = resolve_in_sandbox(&[], path) else {
        return path.to_owned();
    };
    let real = follow(&links, &parts, 0);
    rel(&real)
}

/// [`landing`]'s resolution of `parts` through `links` (link path -> target), at link depth
/// `depth`; past 40 links the path is left as it is (the filesystem would refuse it).
fn follow(
    links: &BTreeMap<Vec<String>, Vec<String>>,
    parts: &[String],
    depth: usize,
) -> Vec<String> {
    let mut at: Vec<String> = Vec::new();
    for part in parts {
        at.push(part.clone());
        if let Some(target) = links.get(&at) {
            if depth < 40 {
                at = follow(links, target, depth + 1);
            }
        }
    }
    at
}

/// Whether the scenario's unload removes the temporary directory (EXW-019; not upstream, whose
/// online session API removes it only when the session ends: EXW-021).
fn unload_removes(profile: Profile, scenario: &WeightsScenario) -> bool {
    scenario.unload && profile == Profile::Documented
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn rel(parts: &[String]) -> String {
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

fn under(path: &str, dir: &str) -> bool {
    dir == "." || path == dir || path.starts_with(&format!("{dir}/"))
}

/// Which flush-path tier a scenario falls in, with the clause that defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// `ge.externalWeightDir` (EWD-010).
    User,
    /// `$ASCEND_WORK_PATH/tmp_weight_<pid>_<sessionid>` (EXW-016).
    WorkPath,
    /// `ASCEND_WORK_PATH` missing and impossible to create, documented profile: the directory
    /// stays under it and the load must fail (EXW-022).
    WorkPathMissing,
    /// `ASCEND_WORK_PATH` missing and impossible to create, upstream profile: the working
    /// directory's tmp directory (EXW-022's upstream entry).
    WorkPathFallback,
    /// `ASCEND_WORK_PATH` set but empty: the working directory's tmp directory (EXW-018).
    EmptyWorkPath,
    /// `ASCEND_WORK_PATH` unset: the working directory's tmp directory (EXW-017).
    WorkDir,
}

impl Tier {
    /// The clause that sets this tier.
    pub fn clause(self) -> &'static str {
        match self {
            Tier::User => "EWD-010",
            Tier::WorkPath => "EXW-016",
            Tier::WorkPathMissing | Tier::WorkPathFallback => "EXW-022",
            Tier::EmptyWorkPath => "EXW-018",
            Tier::WorkDir => "EXW-017",
        }
    }
}

/// What the clauses say a scenario must lead to, worked out from the scenario alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// True when the load must be refused (a rejected option or a scenario error).
    pub refused: bool,
    /// The clause a refusal rests on: WGT-009 (an option rejected), WGT-001 (a path leaving
    /// the sandbox) or WGT-002 (a malformed model).
    pub refusal: &'static str,
    /// `ge.externalWeight` in force.
    pub mode: u8,
    /// The directory, sandbox-relative (mode 1 and 2 only).
    pub dir: Option<String>,
    /// The tier that chose it.
    pub tier: Option<Tier>,
    /// The constants: name, type, bytes, in graph order.
    pub weights: Vec<(String, NodeType, Vec<u8>)>,
    /// The combined file, sandbox-relative (mode 2, when a constant is converted).
    pub combined: Option<String>,
}

/// Works out [`Expected`] for `scenario` under `profile`, with the strict reading of its options.
pub fn expected(profile: Profile, scenario: &WeightsScenario) -> Expected {
    let reading = Reading::new(profile, &scenario.options, Context::plain());
    expected_with(profile, scenario, &reading.values(), reading.rejected())
}

/// [`expected`] with the options read as `values` (`rejected`: some option is).
fn expected_with(
    profile: Profile,
    scenario: &WeightsScenario,
    values: &Values,
    rejected: bool,
) -> Expected {
    let mode = u8::try_from(values.external_weight).unwrap_or(u8::MAX);
    let mut out = Expected {
        refused: true,
        refusal: "WGT-001",
        mode,
        dir: None,
        tier: None,
        weights: Vec::new(),
        combined: None,
    };
    let Some(work) = resolve_in_sandbox(&[], &scenario.work_dir) else {
        return out;
    };
    let mut names = BTreeSet::new();
    let mut total = 0u64;
    let env_ok = match &scenario.ascend_work_path {
        WorkPathEnv::Set { path } => !path.is_empty() && resolve_in_sandbox(&[], path).is_some(),
        _ => true,
    };
    let setup_ok = scenario.setup.iter().all(|s| {
        resolve_in_sandbox(&[], s.path()).is_some_and(|p| !p.is_empty())
            && match s {
                SetupStep::Symlink { target, .. } => resolve_in_sandbox(&[], target).is_some(),
                _ => true,
            }
    });
    if !env_ok || !setup_ok {
        return out;
    }
    out.refusal = "WGT-002";
    if scenario.constants.len() > MAX_CONSTANTS {
        return out;
    }
    for c in &scenario.constants {
        let Some(len) = c.declared_len() else {
            return out;
        };
        total = match total.checked_add(len) {
            Some(t) if t <= MAX_WEIGHT_BYTES => t,
            _ => return out,
        };
        let Ok(bytes) = c.bytes(MAX_WEIGHT_BYTES) else {
            return out;
        };
        if c.name.is_empty()
            || !names.insert(c.name.clone())
            || c.node_type == NodeType::FileConstant
        {
            return out;
        }
        out.weights.push((c.name.clone(), c.node_type, bytes));
    }
    if rejected {
        out.refusal = "WGT-009";
        return out;
    }
    let user = values.external_weight_dir.clone().filter(|d| !d.is_empty());
    if mode != 0 {
        let g = &scenario.root_graph;
        // WGT-002: upstream takes any name but one with a NUL (which no file name holds).
        let unusable = profile == Profile::Documented
            && (g.is_empty() || g == "." || g == ".." || g.contains('/'));
        if mode == 2 && (unusable || g.contains('\0')) {
            return out;
        }
        let tmp = format!("tmp_weight_{}_{}", scenario.pid, scenario.session_id);
        let (parts, tier) = match (&user, &scenario.ascend_work_path) {
            (Some(d), _) => match resolve_in_sandbox(&work, d) {
                Some(p) => (p, Tier::User),
                None => {
                    out.refusal = "WGT-001";
                    return out;
                }
            },
            (None, WorkPathEnv::Set { path }) => {
                let p = resolve_in_sandbox(&[], path).unwrap_or_default();
                let stuck = look_up(&scenario.setup, &p) == Found::Missing { creatable: false };
                let (mut p, tier) = match (stuck, profile) {
                    (false, _) => (p, Tier::WorkPath),
                    (true, Profile::Documented) => (p, Tier::WorkPathMissing),
                    (true, Profile::Upstream) => (work.clone(), Tier::WorkPathFallback),
                };
                p.push(tmp);
                (p, tier)
            }
            (None, env) => {
                let mut p = work.clone();
                p.push(tmp);
                let tier = if *env == WorkPathEnv::Empty {
                    Tier::EmptyWorkPath
                } else {
                    Tier::WorkDir
                };
                (p, tier)
            }
        };
        let converting = out.weights.iter().any(|w| converts(profile, &w.2));
        if mode == 2 && converting {
            // WGT-002 upstream: a name putting the combined file outside the sandbox is a
            // scenario error (WGT-001), as the suite never lets a load write there.
            match combined_file(profile, &rel(&parts), g) {
                Some(path) => out.combined = Some(path),
                None => {
                    out.refusal = "WGT-001";
                    return out;
                }
            }
        }
        out.dir = Some(rel(&parts));
        out.tier = Some(tier);
    }
    out.refused = false;
    out
}

/// What stands at a sandbox path once the setup steps are planted, links followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    Dir,
    File,
    /// Nothing: `creatable` says whether creating it with its parents can succeed (not when a
    /// file, a dangling link or a link loop stands on the way).
    Missing {
        creatable: bool,
    },
}

/// Looks `parts` up in the sandbox the setup steps leave (nothing else is in it before the
/// backend runs), following links as the filesystem would.
fn look_up(setup: &[SetupStep], parts: &[String]) -> Found {
    let mut nodes: BTreeMap<Vec<String>, Option<Vec<String>>> = BTreeMap::new();
    let mut files = BTreeSet::new();
    for step in setup {
        let Some(p) = resolve_in_sandbox(&[], step.path()) else {
            continue;
        };
        for i in 1..p.len() {
            nodes.entry(p[..i].to_vec()).or_insert(None);
        }
        match step {
            SetupStep::Dir { .. } => {
                nodes.entry(p).or_insert(None);
            }
            SetupStep::File { .. } => {
                files.insert(p.clone());
                nodes.insert(p, None);
            }
            SetupStep::Symlink { target, .. } => {
                let t = resolve_in_sandbox(&[], target).unwrap_or_default();
                nodes.insert(p, Some(t));
            }
        }
    }
    look_up_in(&nodes, &files, parts, 0).0
}

/// [`look_up`] over the planted entries (`Some(target)` for a link), at link depth `depth`;
/// a directory comes with its path once every link is followed.
fn look_up_in(
    nodes: &BTreeMap<Vec<String>, Option<Vec<String>>>,
    files: &BTreeSet<Vec<String>>,
    parts: &[String],
    depth: usize,
) -> (Found, Vec<String>) {
    const MAX_LINKS: usize = 40;
    let stuck = Found::Missing { creatable: false };
    let mut at: Vec<String> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = at.clone();
        next.push(part.clone());
        match nodes.get(&next) {
            None => return (Found::Missing { creatable: true }, next),
            Some(None) if files.contains(&next) => {
                return (if last { Found::File } else { stuck }, next);
            }
            Some(None) => at = next,
            Some(Some(_)) if depth >= MAX_LINKS => return (stuck, next),
            Some(Some(target)) => match look_up_in(nodes, files, target, depth + 1) {
                (Found::Dir, real) => at = real,
                (Found::File, real) if last => return (Found::File, real),
                (_, real) => return (stuck, real),
            },
        }
    }
    (Found::Dir, at)
}

fn in_dir(dir: &str, name: &str) -> String {
    if dir == "." {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

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
        .filter(|(_, k)| k.strict == Outcome::Rejected)
        .map(|(key, _)| *key)
        .collect();
    super::under_readings(judging, &reading, &KEYS, planned, |values, rejected| {
        let e = expected_with(profile, scenario, values, rejected);
        let mut v = option_diagnostics(&reading, &e, o);
        v.extend(judge_expected(
            profile,
            naming,
            scenario,
            (&e, &rejected_keys),
            o,
        ));
        v
    })
}

/// The options' warnings, and their errors when the load is refused for a rejected option
/// (WGT-009).
fn option_diagnostics(reading: &Reading, e: &Expected, o: &WeightsObservation) -> Vec<Violation> {
    let spec = Spec::embedded();
    let warnings = reading.expected_warnings();
    let mut v = diagnostics::compare(spec, "warnings", &warnings, &o.warnings, false);
    if e.refused && e.refusal == "WGT-009" {
        let errors = reading.expected_errors();
        // The refusal itself is judged on what the load did; these only report it.
        v.extend(diagnostics::compare_reports(
            spec, "errors", &errors, &o.errors, false,
        ));
    }
    v
}

/// `expected`: what the reading makes of the scenario, and the keys the strict reading rejects.
fn judge_expected(
    profile: Profile,
    naming: Naming,
    scenario: &WeightsScenario,
    expected: (&Expected, &[OptionKey]),
    observation: &WeightsObservation,
) -> Vec<Violation> {
    let (e, rejected_keys) = expected;
    let mut v = Vec::new();
    let o = observation;
    let e = e.clone();
    if e.refused {
        let clause = e.refusal;
        let converted = o
            .nodes
            .iter()
            .any(|n| n.node_type == NodeType::FileConstant);
        if o.errors.is_empty() && (!o.files.is_empty() || converted) {
            // Not refused, and acting on the options: under this reading the rejected value
            // took effect, which its option's value clause rules out. (Another reading the
            // text allows, such as the default in force, is tried next.)
            for key in rejected_keys {
                v.push(Violation::new(
                    options::value_clause(*key),
                    format!("{key} holds a value that takes no effect, yet the load acted on it"),
                ));
            }
        }
        if o.errors.is_empty() {
            v.push(Violation::new(
                clause,
                "the load must be refused with an error",
            ));
        }
        if !o.files.is_empty() || !o.nodes.is_empty() || !o.removed.is_empty() {
            v.push(Violation::new(
                clause,
                "a refused load writes, converts and removes nothing",
            ));
        }
        return v;
    }
    if !o.errors.is_empty() {
        if !o.nodes.is_empty() {
            v.push(Violation::new("WGT-008", "a failed load converts no node"));
        }
        if let Some(why) = nothing_in_the_way(profile, scenario, &e) {
            v.push(why);
        }
        // A failed load may leave its directory unnamed, but one it names must be the right one.
        if let (Some(dir), Some(tier)) = (&e.dir, e.tier) {
            if !o.dir.is_empty() && o.dir != *dir {
                v.push(wrong_dir(scenario, tier, dir, &o.dir));
            }
        }
        return v;
    }
    if e.tier == Some(Tier::WorkPathMissing) {
        v.push(Violation::new(
            "EXW-022",
            "ASCEND_WORK_PATH can be neither found nor created, so the load must fail",
        ));
        return v;
    }
    let names: Vec<&str> = o.nodes.iter().map(|n| n.name.as_str()).collect();
    let mode_clause = match e.mode {
        0 => "EXW-010",
        1 => "EXW-011",
        _ => "EXW-014",
    };
    // Each constant's node, found under a name the profile (or, for a shared case, either
    // profile) gives it; every node must be some constant's, each constant reported once.
    let mut used = vec![false; o.nodes.len()];
    let mut matched = Vec::with_capacity(e.weights.len());
    for (name, _, bytes) in &e.weights {
        let accepted = accepted_names(profile, naming, e.mode, name, bytes);
        let at = o
            .nodes
            .iter()
            .enumerate()
            .position(|(i, n)| !used[i] && accepted.contains(&n.name));
        if let Some(i) = at {
            used[i] = true;
        }
        matched.push(at);
    }
    if matched.iter().any(Option::is_none) || used.iter().any(|u| !u) {
        let want: Vec<String> = e
            .weights
            .iter()
            .flat_map(|(name, _, bytes)| accepted_names(profile, naming, e.mode, name, bytes))
            .collect();
        v.push(Violation::new(
            mode_clause,
            format!(
                "every constant must be reported once, named one of {want:?}; found nodes {names:?}"
            ),
        ));
        return v;
    }
    let by_weight: BTreeMap<&str, usize> = e
        .weights
        .iter()
        .zip(&matched)
        .filter_map(|(w, at)| at.map(|i| (w.0.as_str(), i)))
        .collect();
    let node = |name: &str| by_weight.get(name).map(|&i| &o.nodes[i]);
    if e.mode == 0 {
        if !o.dir.is_empty() || !o.files.is_empty() || !o.removed.is_empty() {
            v.push(Violation::new(
                "EXW-010",
                "mode 0 chooses no directory, writes and removes nothing",
            ));
        }
        for (name, ty, _) in &e.weights {
            if node(name).is_some_and(|n| {
                n.node_type != *ty || n.file.is_some() || n.offset.is_some() || n.length.is_some()
            }) {
                v.push(Violation::new(
                    "EXW-010",
                    format!("{name} must stay a {ty:?} without a file"),
                ));
            }
        }
        return v;
    }
    let (Some(dir), Some(tier)) = (e.dir.clone(), e.tier) else {
        return v;
    };
    if o.dir != dir {
        v.push(wrong_dir(scenario, tier, &dir, &o.dir));
        return v;
    }
    let mut files: BTreeMap<String, (u64, String)> = BTreeMap::new();
    // Constants the profile leaves as they are: same type, no file (upstream's empty tensors).
    for (name, ty, bytes) in &e.weights {
        if !converts(profile, bytes)
            && node(name).is_some_and(|n| {
                n.node_type != *ty || n.file.is_some() || n.offset.is_some() || n.length.is_some()
            })
        {
            v.push(Violation::new(
                mode_clause,
                format!("{name} holds an empty tensor, so it must stay a {ty:?} without a file"),
            ));
        }
    }
    let converted: Vec<&(String, NodeType, Vec<u8>)> = e
        .weights
        .iter()
        .filter(|w| converts(profile, &w.2))
        .collect();
    // Upstream's index file is listed like every file written (WGT-005) but holds no weight:
    // it is set apart, and only its presence is judged (its content is GE's own).
    let meta = meta_path(profile, &e);
    let weight_files: Vec<&ge_spec::vocab::weights::WrittenFile> = o
        .files
        .iter()
        .filter(|f| meta.as_deref() != Some(f.path.as_str()))
        .collect();
    // Listing it is the vocabulary's rule (WGT-005); that it is on disk is GE's, judged by
    // `check_sandbox` under the mode's clause.
    if let Some(meta) = &meta {
        if weight_files.len() == o.files.len() {
            v.push(Violation::new(
                "WGT-005",
                format!(
                    "{meta} must be listed beside the weights: GE keeps its index there whenever it converts a constant"
                ),
            ));
        }
    }
    // What the text states is judged under its documented clauses (EXW-011, EXW-014: the
    // kind of node, the file's directory and name pattern; WGT-011: the bytes read back, here
    // against the reported hashes where the files are gone); the reference's own layout (the
    // hash, sharing, offsets and padding) only under the suite's clauses (EXW-012, EXW-013,
    // EXW-015), compared as contents so that one choice is not blamed under another.
    let by_path: BTreeMap<&str, &ge_spec::vocab::weights::WrittenFile> =
        weight_files.iter().map(|&f| (f.path.as_str(), f)).collect();
    v.extend(read_back_reported(&converted, &node, &by_path));
    // WGT-011: the listed files hold nothing but the weights, so each is some weight's file.
    let pointed: BTreeSet<&str> = o.nodes.iter().filter_map(|n| n.file.as_deref()).collect();
    let idle: Vec<&str> = weight_files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| !pointed.contains(p))
        .collect();
    if !idle.is_empty() {
        v.push(Violation::new(
            "WGT-011",
            format!(
                "the listed files hold nothing but the weights, yet no FileConstant reads {idle:?}"
            ),
        ));
    }
    let weight_files: Vec<&ge_spec::vocab::weights::WrittenFile> = weight_files
        .into_iter()
        .filter(|f| pointed.contains(f.path.as_str()))
        .collect();
    if e.mode == 1 {
        let mut holder: BTreeMap<String, &[u8]> = BTreeMap::new();
        for &(name, _, bytes) in &converted {
            let path = in_dir(&dir, &weight_name(profile, bytes));
            let n = node(name)
                .cloned()
                .unwrap_or_else(|| unreachable_node(name));
            if n.node_type != NodeType::FileConstant {
                v.push(Violation::new(
                    "EXW-011",
                    format!("{name} must become a FileConstant"),
                ));
            }
            if let Some(wrong) = wrong_length(name, bytes, &n) {
                v.push(wrong);
            } else if n.offset != Some(0) || n.length.is_none() {
                v.push(Violation::new(
                    "EXW-013",
                    format!(
                        "{name}'s file holds its weight alone, at offset 0; found offset {:?}, length {:?}",
                        n.offset, n.length
                    ),
                ));
            }
            match n.file.as_deref() {
                Some(f) if f == path => {}
                Some(f) if is_weight_file(&dir, f) => v.push(Violation::new(
                    "EXW-012",
                    format!("{name} must point at {path} (the SHA-256 of its bytes), found {f}"),
                )),
                other => v.push(Violation::new(
                    "EXW-011",
                    format!("{name} must point at a file weight_<hash> in {dir}, found {other:?}"),
                )),
            }
            if let Some(f) = n.file.clone() {
                match holder.get(&f) {
                    Some(held) if *held != bytes.as_slice() => v.push(Violation::new(
                        "EXW-011",
                        format!(
                            "{f} is the file of two different weights; each weight has its own"
                        ),
                    )),
                    _ => {
                        holder.insert(f, bytes);
                    }
                }
            }
            files.insert(path, (bytes.len() as u64, sha(bytes)));
        }
        // One file per distinct weight (EXW-013): the contents written, whatever their names.
        let contents = |m: &BTreeMap<String, (u64, String)>| {
            let mut c: Vec<(u64, String)> = m.values().cloned().collect();
            c.sort();
            c
        };
        let reported: BTreeMap<String, (u64, String)> = weight_files
            .iter()
            .map(|f| (f.path.clone(), (f.len, f.sha256.clone())))
            .collect();
        if reported.len() != weight_files.len() || contents(&reported) != contents(&files) {
            v.push(Violation::new(
                "EXW-013",
                format!(
                    "{} distinct weight(s) need {} file(s), one each; {} reported",
                    files.len(),
                    files.len(),
                    weight_files.len()
                ),
            ));
        }
    } else {
        let path = e
            .combined
            .clone()
            .unwrap_or_else(|| in_dir(&dir, &combined_name(profile, &scenario.root_graph)));
        // EXW-015: graph order; upstream stores in the order of the node names, bytewise
        // (a stable sort; the names are unique).
        let mut stored = converted.clone();
        if profile == Profile::Upstream {
            stored.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        }
        // EXW-015 upstream: the combined file is opened for appending, so a file the setup
        // planted at its path stays, and the first offset is its length.
        let mut buffer = match profile {
            Profile::Upstream => planted_file(scenario, &landing(profile, &scenario.setup, &path))
                .unwrap_or_default(),
            Profile::Documented => Vec::new(),
        };
        let base = buffer.len() as u64;
        let mut first: BTreeMap<&[u8], u64> = BTreeMap::new();
        // Where the engine put each distinct content (EXW-020: stored once).
        let mut engine_at: BTreeMap<&[u8], Option<u64>> = BTreeMap::new();
        let mut end = base;
        for (name, _, bytes) in stored {
            let at = match first.get(bytes.as_slice()) {
                Some(&at) => at,
                None => {
                    let at = base + (end - base).div_ceil(ALIGN) * ALIGN;
                    end = at + bytes.len() as u64;
                    first.insert(bytes, at);
                    buffer.resize(at as usize, 0);
                    buffer.extend_from_slice(bytes);
                    at
                }
            };
            let n = node(name)
                .cloned()
                .unwrap_or_else(|| unreachable_node(name));
            match engine_at.get(bytes.as_slice()) {
                Some(seen) if *seen != n.offset => v.push(Violation::new(
                    "EXW-020",
                    format!("{name} holds the same bytes as another weight, stored again at {:?}, not at {seen:?}", n.offset),
                )),
                Some(_) => {}
                None => {
                    engine_at.insert(bytes, n.offset);
                }
            }
            if n.node_type != NodeType::FileConstant || n.file.as_deref() != Some(path.as_str()) {
                v.push(Violation::new(
                    "EXW-014",
                    format!("{name} must become a FileConstant in {path}"),
                ));
            }
            if let Some(wrong) = wrong_length(name, bytes, &n) {
                v.push(wrong);
            } else if n.offset != Some(at) || n.length.is_none() {
                v.push(Violation::new(
                    "EXW-015",
                    format!(
                        "{name} must sit at offset {at}, length {}; found {:?}, {:?}",
                        bytes.len(),
                        n.offset,
                        n.length
                    ),
                ));
            }
        }
        if profile == Profile::Upstream {
            // EXW-015 upstream: every weight is padded to a multiple of 512, the last one too.
            end = base + (end - base).div_ceil(ALIGN) * ALIGN;
            buffer.resize(end as usize, 0);
        }
        if !converted.is_empty() {
            match by_path.get(path.as_str()) {
                None => v.push(Violation::new(
                    "EXW-014",
                    format!("mode 2 writes {path}, which is not reported"),
                )),
                Some(f) if (f.len, f.sha256.as_str()) != (end, sha(&buffer).as_str()) => {
                    v.push(Violation::new(
                        "EXW-015",
                        format!(
                            "{path} holds {} bytes, where the suite's layout makes {end}",
                            f.len
                        ),
                    ))
                }
                Some(_) => {}
            }
            files.insert(path, (end, sha(&buffer)));
        }
    }
    let temporary = tier != Tier::User;
    if !unload_removes(profile, scenario) || !temporary {
        if !o.removed.is_empty() {
            let clause = if temporary { "WGT-010" } else { "EWD-013" };
            v.push(Violation::new(
                clause,
                format!("nothing may be removed here; reported {:?}", o.removed),
            ));
        }
    } else {
        // That the directory is gone is judged on the disk (EXW-019, `check_sandbox`); here
        // only the report of it (WGT-010).
        if !o.removed.contains(&dir) {
            v.push(Violation::new(
                "WGT-010",
                format!("unload must report {dir} as removed"),
            ));
        }
        // The files the backend wrote, under whatever names it chose.
        for f in weight_files.iter().map(|f| &f.path) {
            if !o.removed.contains(f) {
                v.push(Violation::new(
                    "WGT-010",
                    format!("unload must report {f} as removed"),
                ));
            }
        }
        for r in &o.removed {
            if !under(r, &dir) {
                v.push(Violation::new(
                    "WGT-007",
                    format!("unload removed {r}, outside {dir}"),
                ));
            }
        }
    }
    v
}

/// A refused load that nothing the suite chose could explain: mode 1 or 2 in force, the
/// temporary directory under the sandbox root as the working directory (no
/// `ge.externalWeightDir`, no ASCEND_WORK_PATH), nothing planted, and for mode 2 a plain root
/// graph name. The text says such a load flushes its weights there (EXW-011, EXW-014), so
/// refusing it breaks that, whatever the error cites. Anywhere else a refusal may stand on one
/// of the suite's choices (a directory to create, a cap, a name) and is judged there.
fn nothing_in_the_way(
    profile: Profile,
    scenario: &WeightsScenario,
    e: &Expected,
) -> Option<Violation> {
    let plain_name = |g: &str| !g.is_empty() && g != "." && g != ".." && !g.contains(['/', '\0']);
    let clear = profile == Profile::Documented
        && !e.refused
        && e.tier == Some(Tier::WorkDir)
        && scenario.work_dir.is_empty()
        && scenario.setup.is_empty()
        && !e.weights.is_empty()
        && (e.mode == 1 || (e.mode == 2 && plain_name(&scenario.root_graph)));
    clear.then(|| {
        Violation::new(
            if e.mode == 1 { "EXW-011" } else { "EXW-014" },
            format!(
                "the load is refused, yet nothing stands in its way: mode {} flushes the weights to {}",
                e.mode,
                e.dir.as_deref().unwrap_or("its temporary directory")
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
            format!(
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
fn read_back_reported<'a>(
    converted: &[&(String, NodeType, Vec<u8>)],
    node: &impl Fn(&str) -> Option<&'a ge_spec::vocab::weights::NodeConversion>,
    files: &BTreeMap<&str, &ge_spec::vocab::weights::WrittenFile>,
) -> Vec<Violation> {
    let mut v = Vec::new();
    for &(name, _, bytes) in converted {
        let Some(n) = node(name) else { continue };
        let (Some(file), Some(off), Some(len)) = (n.file.as_deref(), n.offset, n.length) else {
            continue;
        };
        let Some(f) = files.get(file) else { continue };
        let past_end = off.checked_add(len).is_none_or(|end| end > f.len);
        let alone = off == 0 && len == f.len;
        if past_end || (alone && f.sha256 != sha(bytes)) {
            v.push(Violation::new(
                "WGT-011",
                format!(
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

/// What a backend wrote beside its sandbox (through `..`), in the private directory holding
/// it, or left in the directories the harness watches for it (the `confine` module): a WGT-007
/// violation each, since nothing outside the chosen directory may be created.
pub fn beside(sandbox: &crate::sandbox::Sandbox) -> Vec<Violation> {
    let beside = sandbox.written_beside().into_iter().map(|name| {
        Violation::new(
            "WGT-007",
            format!("../{name} was written beside the sandbox, outside it"),
        )
    });
    let watched = sandbox.written_outside().into_iter().map(|name| {
        Violation::new(
            "WGT-007",
            format!("{name} was left in the backend's own directory, outside the sandbox"),
        )
    });
    beside.chain(watched).collect()
}

/// What the setup steps leave in the sandbox: path -> entry (parents included).
fn planted(scenario: &WeightsScenario, sandbox: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    for step in &scenario.setup {
        let Some(parts) = resolve_in_sandbox(&[], step.path()) else {
            continue;
        };
        for i in 1..parts.len() {
            out.entry(parts[..i].join("/")).or_insert(Entry::Dir);
        }
        let entry = match step {
            SetupStep::Dir { .. } => Entry::Dir,
            SetupStep::File { hex, .. } => Entry::File(decode_hex(hex).unwrap_or_default()),
            SetupStep::Symlink { target, .. } => {
                let t = resolve_in_sandbox(&[], target).unwrap_or_default();
                Entry::Link(t.iter().fold(sandbox.to_path_buf(), |p, c| p.join(c)))
            }
        };
        out.insert(parts.join("/"), entry);
    }
    out
}

/// The bytes of the regular file a setup step plants right at `path` (sandbox-relative), if any.
fn planted_file(scenario: &WeightsScenario, path: &str) -> Option<Vec<u8>> {
    scenario.setup.iter().find_map(|step| match step {
        SetupStep::File { path: p, hex }
            if resolve_in_sandbox(&[], p).map(|p| rel(&p)).as_deref() == Some(path) =>
        {
            decode_hex(hex).ok()
        }
        _ => None,
    })
}

/// The backend named `found` as the weight directory where the tier's clause says `dir`.
/// The directory chosen is not `dir`, the one of `tier`. The user's relative directory taken
/// as it is written, not resolved against the working directory, is a departure from the
/// suite's resolution (EWD-011), not from the tier.
fn wrong_dir(scenario: &WeightsScenario, tier: Tier, dir: &str, found: &str) -> Violation {
    let written = scenario
        .options
        .session
        .get("ge.externalWeightDir")
        .or_else(|| scenario.options.global.get("ge.externalWeightDir"))
        .map(|d| d.trim_start_matches("./").trim_end_matches('/'));
    let clause = match written {
        Some(w) if tier == Tier::User && !w.starts_with('/') && w == found => "EWD-011",
        _ => tier.clause(),
    };
    Violation::new(
        clause,
        format!("the weight directory must be {dir}, found {found:?}"),
    )
}

/// Plants the scenario's `setup` steps in `sandbox`. Refuses any path that would leave it.
///
/// Steps may not overlap: a path planted twice, or a step below an earlier file or link, is
/// refused, so what the sandbox holds after planting is exactly what the steps say (the
/// oracle's record of the plants depends on it; a directory planted through a link would
/// silently land somewhere else).
pub fn plant(scenario: &WeightsScenario, sandbox: &Path) -> Result<(), String> {
    let mut seen: Vec<(Vec<String>, bool)> = Vec::new();
    for (i, step) in scenario.setup.iter().enumerate() {
        let parts = resolve_in_sandbox(&[], step.path())
            .filter(|p| !p.is_empty())
            .ok_or_else(|| format!("setup step {i}: path {:?} leaves the sandbox", step.path()))?;
        for (earlier, is_dir) in &seen {
            if *earlier == parts || (!is_dir && parts.starts_with(earlier)) {
                return Err(format!(
                    "setup step {i}: path {:?} overlaps an earlier step's {:?}",
                    step.path(),
                    earlier.join("/")
                ));
            }
        }
        seen.push((parts.clone(), matches!(step, SetupStep::Dir { .. })));
        let path = parts.iter().fold(sandbox.to_path_buf(), |p, c| p.join(c));
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("setup step {i}: {e}"))?;
        }
        let done = match step {
            SetupStep::Dir { .. } => fs::create_dir_all(&path),
            SetupStep::File { hex, .. } => {
                let bytes = decode_hex(hex).map_err(|e| format!("setup step {i}: {e}"))?;
                fs::write(&path, bytes)
            }
            SetupStep::Symlink { target, .. } => {
                let t = resolve_in_sandbox(&[], target).ok_or_else(|| {
                    format!("setup step {i}: target {target:?} leaves the sandbox")
                })?;
                let target = t.iter().fold(sandbox.to_path_buf(), |p, c| p.join(c));
                symlink(&target, &path)
            }
        };
        done.map_err(|e| format!("setup step {i}: {e}"))?;
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "symbolic links are only planted on unix",
    ))
}

/// Checks what a weights backend says against what is really in `sandbox` after it answered:
/// the harness never takes a backend's word for the filesystem.
pub fn check_sandbox(
    judging: &Judging,
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
    sandbox: &Path,
) -> Vec<Violation> {
    let profile = judging.profile;
    let mut v = Vec::new();
    let o = observation;
    let e = expected(profile, scenario);
    // Walked without trusting it: links not followed, only regular files opened, no mount
    // entered (crate::sandbox).
    let found = crate::sandbox::walk(sandbox);
    let plants = planted(scenario, sandbox);
    let temporary = matches!(e.tier, Some(t) if t != Tier::User);
    let user_dir = if e.tier == Some(Tier::User) {
        e.dir.clone()
    } else {
        None
    };
    // The directory unload must empty and remove (only when the load chose one).
    // A file or link planted where the temporary directory goes is not the session's to remove.
    let doomed = e.dir.clone().filter(|d| {
        unload_removes(profile, scenario)
            && temporary
            && plants.get(d).is_none_or(|p| *p == Entry::Dir)
    });
    let gone = |p: &str| doomed.as_deref().is_some_and(|d| under(p, d));
    // EXW-019 is the unload of a loaded model; after a load that failed there is none, and the
    // directory's going is the suite's reading (EXW-021).
    let unloaded = if o.errors.is_empty() {
        "EXW-019"
    } else {
        "EXW-021"
    };
    // Link targets planted in the sandbox: removing them means a link was followed.
    let targets: Vec<String> = plants
        .values()
        .filter_map(|p| match p {
            Entry::Link(t) => t
                .strip_prefix(sandbox)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/")),
            _ => None,
        })
        .collect();
    // Where each path the backend names really lies: upstream writes through the links the
    // setup planted (WGT-007's and WGT-008's upstream entries).
    let land = |p: &str| landing(profile, &scenario.setup, p);
    let reported: BTreeMap<String, _> = o.files.iter().map(|f| (land(&f.path), f)).collect();

    // Every reported file is really there, with the reported length and hash (or removed).
    for f in &o.files {
        match found.get(&land(&f.path)) {
            _ if gone(&f.path) => {}
            Some(Entry::File(bytes)) => {
                if bytes.len() as u64 != f.len || sha(bytes) != f.sha256 {
                    v.push(Violation::new(
                        "WGT-005",
                        format!(
                            "{} holds {} bytes with SHA-256 {}, not the {} bytes / {} reported",
                            f.path,
                            bytes.len(),
                            sha(bytes),
                            f.len,
                            f.sha256
                        ),
                    ));
                }
            }
            _ => {
                let clause =
                    if user_dir.as_deref().is_some_and(|d| under(&f.path, d)) && scenario.unload {
                        "EWD-013"
                    } else {
                        "WGT-005"
                    };
                v.push(Violation::new(
                    clause,
                    format!(
                        "{} is reported written but is not a file in the sandbox",
                        f.path
                    ),
                ));
            }
        }
    }
    // Reading the files back gives every constant byte for byte.
    if o.errors.is_empty() {
        for n in &o.nodes {
            let (Some(file), Some(off), Some(len)) = (&n.file, n.offset, n.length) else {
                continue;
            };
            if gone(file) {
                continue;
            }
            // Either profile's name: the judge holds the names, this reads the bytes back.
            let Some(w) = e.weights.iter().find(|w| {
                accepted_names(profile, Naming::EitherProfile, e.mode, &w.0, &w.2).contains(&n.name)
            }) else {
                continue;
            };
            let back = match found.get(&land(file)) {
                Some(Entry::File(bytes)) => usize::try_from(off).ok().and_then(|a| {
                    let b = a.checked_add(usize::try_from(len).ok()?)?;
                    bytes.get(a..b)
                }),
                // Gone after an unload: what may go is the unload's clauses' to judge (EXW-019,
                // EWD-013), and the reported hashes stand in for the bytes (`judge_expected`).
                None if scenario.unload => continue,
                _ => None,
            };
            if back != Some(w.2.as_slice()) {
                v.push(Violation::new(
                    "WGT-011",
                    format!(
                        "{file} at offset {off}, length {len} does not hold the bytes of {}",
                        n.name
                    ),
                ));
            }
        }
    }
    // Upstream's index file, after a load that converted a constant: a regular file at the top
    // of the directory (only its presence is judged).
    let meta = meta_path(profile, &e)
        .filter(|m| o.errors.is_empty() && e.tier != Some(Tier::WorkPathMissing) && !gone(m));
    if let Some(meta) = &meta {
        if !matches!(found.get(&land(meta)), Some(Entry::File(_))) {
            v.push(Violation::new(
                if e.mode == 1 { "EXW-011" } else { "EXW-014" },
                format!("{meta} is not a regular file in the sandbox: GE keeps its index there whenever it converts a constant"),
            ));
        }
    }
    // Nothing on disk that the backend did not report or the harness did not plant.
    let dir = e
        .dir
        .clone()
        .filter(|_| !e.refused && e.mode != 0)
        .map(|d| land(&d));
    // EXW-015 upstream: with nothing to convert GE returns before it makes its weight manager,
    // so neither the directory nor ASCEND_WORK_PATH (nor a parent) is created.
    let nothing_converted = profile == Profile::Upstream
        && o.errors.is_empty()
        && !e.weights.iter().any(|w| converts(profile, &w.2));
    for (path, entry) in &found {
        if plants.contains_key(path) {
            continue;
        }
        if let Entry::Foreign(what) = entry {
            let inside = dir.as_deref().is_some_and(|d| under(path, d));
            v.push(Violation::new(
                if inside { "WGT-005" } else { "WGT-007" },
                format!("{path} is {what}: a backend leaves only weight files and directories"),
            ));
            continue;
        }
        let allowed_dir = matches!(entry, Entry::Dir)
            && dir.as_deref().is_some_and(|d| d == path || under(d, path));
        if allowed_dir && nothing_converted {
            v.push(Violation::new(
                if e.mode == 1 { "EXW-011" } else { "EXW-015" },
                format!(
                    "{path} was created, but GE creates no directory when it converts no constant"
                ),
            ));
            continue;
        }
        if allowed_dir {
            if gone(path) {
                v.push(Violation::new(
                    unloaded,
                    format!("{path} is still there after unload"),
                ));
            }
            continue;
        }
        if reported.contains_key(path.as_str()) {
            if gone(path) {
                v.push(Violation::new(
                    unloaded,
                    format!("{path} is still there after unload"),
                ));
            }
            continue;
        }
        let outside = dir.as_deref().is_none_or(|d| !under(path, d));
        if outside {
            v.push(Violation::new(
                "WGT-007",
                format!("{path} appeared outside the weight directory {dir:?}"),
            ));
        } else {
            v.push(Violation::new(
                "WGT-005",
                format!("{path} is in the sandbox but not reported"),
            ));
            let name = path.rsplit('/').next().unwrap_or(path);
            let final_name = (name.starts_with("weight_") && name.len() == 71)
                || name.strip_prefix("weight_").is_some_and(|h| {
                    profile == Profile::Upstream
                        && (32..=64).contains(&h.len())
                        && h.bytes().all(|b| b.is_ascii_hexdigit())
                })
                || name == combined_name(profile, &scenario.root_graph)
                || (profile == Profile::Upstream
                    && dir.as_deref().is_some_and(|d| *path == in_dir(d, META)));
            if !final_name {
                v.push(Violation::new(
                    "WGT-004",
                    format!("{path} looks like a temporary file left behind"),
                ));
            }
            if gone(path) {
                v.push(Violation::new(
                    unloaded,
                    format!("{path} is still there after unload"),
                ));
            }
        }
    }
    // Everything the harness planted survives, unless it sat in the directory unload removes.
    for (path, plant) in &plants {
        let now = found.get(path);
        if gone(path) {
            if now.is_some() {
                v.push(Violation::new(
                    unloaded,
                    format!(
                        "{path} was in the temporary directory and is still there after unload"
                    ),
                ));
            } else if !o.removed.contains(path) {
                v.push(Violation::new(
                    "WGT-010",
                    format!("{path} was removed but not reported"),
                ));
            }
            continue;
        }
        if reported.contains_key(path.as_str()) {
            continue; // replaced by a weight file of the same name, as reported
        }
        if meta.as_deref().is_some_and(|m| land(m) == *path) {
            continue; // upstream's index, GE's to rewrite (listing it is WGT-005's)
        }
        let same = match (plant, now) {
            (Entry::Dir, Some(Entry::Dir)) => true,
            (Entry::File(a), Some(Entry::File(b))) => a == b,
            (Entry::Link(a), Some(Entry::Link(b))) => a == b,
            _ => false,
        };
        if !same {
            let clause = if targets.iter().any(|t| under(path, t)) {
                "WGT-006"
            } else if user_dir.as_deref().is_some_and(|d| under(path, d)) {
                "EWD-013"
            } else {
                "WGT-007"
            };
            v.push(Violation::new(
                clause,
                format!("{path}, planted before the load, was changed or removed"),
            ));
        }
    }
    // What unload says it removed is gone, and was inside the temporary directory.
    for r in &o.removed {
        if found.contains_key(r) {
            v.push(Violation::new(
                "WGT-010",
                format!("{r} is reported removed but is still there"),
            ));
        }
        if !doomed.as_deref().is_some_and(|d| under(r, d)) {
            v.push(Violation::new(
                "WGT-007",
                format!("{r} is outside the temporary weight directory"),
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let doc = expected(Profile::Documented, &s);
        assert_eq!(doc.dir.as_deref(), Some("f/work/tmp_weight_1_2"));
        assert_eq!(doc.tier, Some(Tier::WorkPathMissing));
        let up = expected(Profile::Upstream, &s);
        assert_eq!(up.dir.as_deref(), Some("tmp_weight_1_2"));
        assert_eq!(up.tier, Some(Tier::WorkPathFallback));
        s.setup = vec![dir("f")];
        for profile in [Profile::Documented, Profile::Upstream] {
            let e = expected(profile, &s);
            assert_eq!(e.dir.as_deref(), Some("f/work/tmp_weight_1_2"));
            assert_eq!(e.tier, Some(Tier::WorkPath));
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
