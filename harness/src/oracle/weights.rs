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

/// The options a load acts on.
const KEYS: [OptionKey; 2] = [OptionKey::ExternalWeight, OptionKey::ExternalWeightDir];

/// The alignment of offsets in the combined file (EXW-015).
const ALIGN: u64 = 512;

/// The index file upstream keeps at the top of the weight directory (EXW-011's, EXW-014's and
/// WGT-011's upstream entries).
const META: &str = "meta.json";

/// EXW-011's, EXW-014's and WGT-011's upstream entries: where upstream must leave its index
/// file after a load in `mode` that succeeded in `dir`: at the top of the weight directory,
/// whenever at least one constant is converted (`converting`, in modes 1 and 2); `None` under
/// the documented profile, in mode 0, and when nothing is converted.
fn meta_path(profile: Profile, dir: &str, mode: u8, converting: bool) -> Option<String> {
    (profile == Profile::Upstream && mode != 0 && converting).then(|| in_dir(dir, META))
}

/// EXW-012 (and its upstream entry): the hash a mode-1 file holding `bytes` is named after,
/// `weight_<hash>`: the SHA-256 of the bytes in zero-padded lowercase hex; upstream, each byte
/// without zero-padding ([`upstream_sha`]).
fn weight_hash(profile: Profile, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => sha(bytes),
        Profile::Upstream => upstream_sha(bytes),
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

/// EXW-011, EXW-014 (and their upstream entries): whether modes 1 and 2 convert a constant
/// holding `bytes` under `profile`: upstream gives an empty-tensor weight (no bytes, in the
/// vocabulary) no hash, so it is never converted and stays Const/Constant under its own name.
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

/// EXW-014 (WGT-002's upstream entry): where mode 2's combined file goes: the sandbox-relative
/// path of the mode-2 file of `root_graph` in `dir` under `profile`, or `None` when it would
/// leave the sandbox. Upstream joins directory and name with a `/`, so a
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

/// The SHA-256 of `bytes` in lowercase hexadecimal, as a weights answer reports a file's.
pub(crate) fn sha(bytes: &[u8]) -> String {
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

/// The options' reading of `ge.externalWeight`: the mode in force (EXW-010, EXW-011, EXW-014).
fn mode_of(values: &Values) -> u8 {
    u8::try_from(values.external_weight).unwrap_or(u8::MAX)
}

/// A constant as the scenario holds it: name, type, bytes.
type Weight = (String, NodeType, Vec<u8>);

/// WGT-001, WGT-002, WGT-009: whether and why a load of `scenario` under `profile`, with the
/// options read as `values` (`rejected`: some option is), must be refused: the clause of the
/// first rule it breaks, in the order the load checks them: its paths (WGT-001), its model
/// (WGT-002), its options (WGT-009); then, in modes 1 and 2, the root graph's name (WGT-002),
/// the user's directory (WGT-001) and the combined file's path (WGT-001, WGT-002's upstream
/// entry). `None` when the load goes ahead.
fn refusal(
    profile: Profile,
    scenario: &WeightsScenario,
    values: &Values,
    rejected: bool,
) -> Option<&'static str> {
    let mode = mode_of(values);
    let mut weights = Vec::new();
    paths_in_sandbox(scenario)
        .err()
        .or_else(|| well_formed_constants(scenario, &mut weights).err())
        .or_else(|| options_accepted(rejected).err())
        .or_else(|| match mode {
            0 => None,
            _ => usable_root_graph(profile, mode, &scenario.root_graph).err(),
        })
        .or_else(|| {
            if mode == 0 {
                return None;
            }
            let Some((dir, _)) = flush_dir_with(profile, scenario, values) else {
                return Some("WGT-001");
            };
            let converting = weights.iter().any(|w| converts(profile, &w.2));
            combined_in_sandbox(profile, mode, converting, &dir, &scenario.root_graph).err()
        })
}

/// WGT-001, WGT-002: the model's constants as a load reads them (name, type, bytes), in graph
/// order: none when its paths leave the sandbox (WGT-001, checked first), else those before the
/// first malformed one (WGT-002); all of them when the load goes ahead.
fn constants(scenario: &WeightsScenario) -> Vec<Weight> {
    let mut weights = Vec::new();
    if paths_in_sandbox(scenario).is_ok() {
        let _ = well_formed_constants(scenario, &mut weights);
    }
    weights
}

/// EWD-010, EXW-016, EXW-017, EXW-018, EXW-022: the directory the flush-path priority names
/// (sandbox-relative) and the tier that names it, for a load of `scenario` under `profile`
/// with the strict reading of its options; `None` in mode 0 (EXW-010: no directory) and where
/// the working directory or the user's directory leaves the sandbox (WGT-001).
pub fn flush_dir(profile: Profile, scenario: &WeightsScenario) -> Option<(String, Tier)> {
    let reading = Reading::new(profile, &scenario.options, Context::plain());
    flush_dir_with(profile, scenario, &reading.values())
}

/// EWD-010, EXW-016, EXW-017, EXW-018, EXW-022: [`flush_dir`] with the options read as
/// `values`.
fn flush_dir_with(
    profile: Profile,
    scenario: &WeightsScenario,
    values: &Values,
) -> Option<(String, Tier)> {
    if mode_of(values) == 0 {
        return None;
    }
    let work = resolve_in_sandbox(&[], &scenario.work_dir)?;
    let user = values
        .external_weight_dir
        .as_deref()
        .filter(|d| !d.is_empty());
    let (parts, tier) = flush_dir_parts(profile, scenario, user, &work).ok()?;
    Some((rel(&parts), tier))
}

/// WGT-001: the working directory, ASCEND_WORK_PATH (when set, and not empty) and every setup
/// step's path and link target stay inside the sandbox.
fn paths_in_sandbox(scenario: &WeightsScenario) -> Result<(), &'static str> {
    if resolve_in_sandbox(&[], &scenario.work_dir).is_none() {
        return Err("WGT-001");
    }
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
        return Err("WGT-001");
    }
    Ok(())
}

/// WGT-002: a well-formed model: at most [`MAX_CONSTANTS`] constants, each with a declared
/// length and bytes, [`MAX_WEIGHT_BYTES`] in all, under a unique name that is not empty, none
/// already a FileConstant. Each constant that passes is pushed to `weights`, in graph order.
fn well_formed_constants(
    scenario: &WeightsScenario,
    weights: &mut Vec<Weight>,
) -> Result<(), &'static str> {
    if scenario.constants.len() > MAX_CONSTANTS {
        return Err("WGT-002");
    }
    // The lengths first: a load past the cap is refused whatever its constants hold, and
    // their bytes (up to 64 MiB) are never made.
    let mut total = 0u64;
    for c in &scenario.constants {
        let Some(len) = c.declared_len() else {
            return Err("WGT-002");
        };
        total = match total.checked_add(len) {
            Some(t) if t <= MAX_WEIGHT_BYTES => t,
            _ => return Err("WGT-002"),
        };
    }
    let mut names = BTreeSet::new();
    for c in &scenario.constants {
        let Ok(bytes) = c.bytes(MAX_WEIGHT_BYTES) else {
            return Err("WGT-002");
        };
        if c.name.is_empty()
            || !names.insert(c.name.clone())
            || c.node_type == NodeType::FileConstant
        {
            return Err("WGT-002");
        }
        weights.push((c.name.clone(), c.node_type, bytes));
    }
    Ok(())
}

/// WGT-009: a load with a rejected option is refused.
fn options_accepted(rejected: bool) -> Result<(), &'static str> {
    if rejected {
        Err("WGT-009")
    } else {
        Ok(())
    }
}

/// WGT-002: in mode 2 the root graph's name makes the combined file's: documented, it is not
/// empty, `.`, `..` or holding a `/`; upstream takes any name but one with a NUL (which no file
/// name holds).
fn usable_root_graph(profile: Profile, mode: u8, g: &str) -> Result<(), &'static str> {
    let unusable = profile == Profile::Documented
        && (g.is_empty() || g == "." || g == ".." || g.contains('/'));
    if mode == 2 && (unusable || g.contains('\0')) {
        return Err("WGT-002");
    }
    Ok(())
}

/// EWD-010, EXW-016, EXW-017, EXW-018, EXW-022: the weight directory's parts and the tier that
/// chooses it: `ge.externalWeightDir` (`user`) resolved against the working directory `work`,
/// else `tmp_weight_<pid>_<sessionid>` under ASCEND_WORK_PATH (kept or left per profile when it
/// can be neither found nor created), else under the working directory. WGT-001 when the user's
/// directory leaves the sandbox.
fn flush_dir_parts(
    profile: Profile,
    scenario: &WeightsScenario,
    user: Option<&str>,
    work: &[String],
) -> Result<(Vec<String>, Tier), &'static str> {
    let tmp = format!("tmp_weight_{}_{}", scenario.pid, scenario.session_id);
    match (user, &scenario.ascend_work_path) {
        (Some(d), _) => match resolve_in_sandbox(work, d) {
            Some(p) => Ok((p, Tier::User)),
            None => Err("WGT-001"),
        },
        (None, WorkPathEnv::Set { path }) => {
            let p = resolve_in_sandbox(&[], path).unwrap_or_default();
            let stuck = look_up(&scenario.setup, &p) == Found::Missing { creatable: false };
            let (mut p, tier) = match (stuck, profile) {
                (false, _) => (p, Tier::WorkPath),
                (true, Profile::Documented) => (p, Tier::WorkPathMissing),
                (true, Profile::Upstream) => (work.to_vec(), Tier::WorkPathFallback),
            };
            p.push(tmp);
            Ok((p, tier))
        }
        (None, env) => {
            let mut p = work.to_vec();
            p.push(tmp);
            let tier = if *env == WorkPathEnv::Empty {
                Tier::EmptyWorkPath
            } else {
                Tier::WorkDir
            };
            Ok((p, tier))
        }
    }
}

/// WGT-001 (WGT-002's upstream entry): the combined file's path in `dir`, in mode 2 when a
/// constant is converted (`converting`). Upstream, a root graph name putting it outside the
/// sandbox is a scenario error, as the suite never lets a load write there.
fn combined_in_sandbox(
    profile: Profile,
    mode: u8,
    converting: bool,
    dir: &str,
    root_graph: &str,
) -> Result<Option<String>, &'static str> {
    if mode != 2 || !converting {
        return Ok(None);
    }
    match combined_file(profile, dir, root_graph) {
        Some(path) => Ok(Some(path)),
        None => Err("WGT-001"),
    }
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
    name: "mode0_leaves_all",
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
        name: "empty_tensors_stay",
        run: |w| empty_tensors_stay(w.cx),
    },
    Check {
        clauses: &["WGT-005"],
        name: "index_listed",
        run: |w| index_listed(w.files, w.cx.o).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011"],
        name: "read_back_reported",
        run: |w| read_back_reported(w.cx, w.files),
    },
    Check {
        clauses: &["WGT-011"],
        name: "idle_files",
        run: |w| idle_files(w.files).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-011", "EXW-012", "EXW-013", "WGT-011"],
        name: "judge_mode1",
        run: |w| match w.cx.mode {
            1 => judge_mode1(w.cx, w.files, w.dir),
            _ => Vec::new(),
        },
    },
    Check {
        clauses: &["EXW-014", "EXW-015", "EXW-020", "WGT-011"],
        name: "judge_mode2",
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
        name: "wrong_dir",
        run: (),
    },
    Check {
        clauses: &["WGT-007"],
        name: "beside",
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
                format!("{key} holds a value that takes no effect, yet the load acted on it"),
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
            format!(
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

/// EXW-010: mode 0 chooses no directory, writes and removes nothing, and every constant stays
/// a node of its own type without a file.
fn mode0_leaves_all(cx: &Loaded) -> Vec<Violation> {
    let o = cx.o;
    let mut v = Vec::new();
    if !o.dir.is_empty() || !o.files.is_empty() || !o.removed.is_empty() {
        v.push(Violation::new(
            "EXW-010",
            "mode 0 chooses no directory, writes and removes nothing",
        ));
    }
    for (name, ty, _) in cx.weights {
        if cx.node(name).is_some_and(|n| altered(n, *ty)) {
            v.push(Violation::new(
                "EXW-010",
                format!("{name} must stay a {ty:?} without a file"),
            ));
        }
    }
    v
}

/// EXW-011, EXW-014 (the mode's clause): a constant the profile leaves as it is (upstream's
/// empty tensors) keeps its type and has no file.
fn empty_tensors_stay(cx: &Loaded) -> Vec<Violation> {
    let mut v = Vec::new();
    for (name, ty, bytes) in cx.weights {
        if !converts(cx.profile, bytes) && cx.node(name).is_some_and(|n| altered(n, *ty)) {
            v.push(Violation::new(
                mode_clause(cx.mode),
                format!("{name} holds an empty tensor, so it must stay a {ty:?} without a file"),
            ));
        }
    }
    v
}

/// The files a load that went ahead lists and the constants it converts, sorted out once for
/// the checks that read them.
struct Written<'a> {
    /// The constants the profile converts, in graph order.
    converted: Vec<&'a Weight>,
    /// Upstream's index file, where the load must leave one: listed like every file written
    /// (WGT-005) but holding no weight, it is set apart, and only its presence is judged (its
    /// content is GE's own).
    meta: Option<String>,
    /// The files listed, the index set apart.
    listed: Vec<&'a WrittenFile>,
    /// `listed` by path.
    by_path: BTreeMap<&'a str, &'a WrittenFile>,
    /// The files some node reads.
    pointed: BTreeSet<&'a str>,
    /// The files of `listed` some node reads.
    read: Vec<&'a WrittenFile>,
}

impl<'a> Written<'a> {
    /// Sorts out the files of the load `cx` in its weight directory `dir`.
    fn of(cx: &Loaded<'a>, dir: &str) -> Self {
        let (profile, o) = (cx.profile, cx.o);
        let converted: Vec<&Weight> = cx
            .weights
            .iter()
            .filter(|w| converts(profile, &w.2))
            .collect();
        let meta = meta_path(profile, dir, cx.mode, !converted.is_empty());
        let listed: Vec<&WrittenFile> = o
            .files
            .iter()
            .filter(|f| meta.as_deref() != Some(f.path.as_str()))
            .collect();
        let by_path = listed.iter().map(|&f| (f.path.as_str(), f)).collect();
        let pointed: BTreeSet<&str> = o.nodes.iter().filter_map(|n| n.file.as_deref()).collect();
        let read = listed
            .iter()
            .copied()
            .filter(|f| pointed.contains(f.path.as_str()))
            .collect();
        Written {
            converted,
            meta,
            listed,
            by_path,
            pointed,
            read,
        }
    }
}

/// WGT-005: upstream's index file is listed beside the weights. Listing it is the
/// vocabulary's rule; that it is on disk is GE's, judged by `check_sandbox` under the mode's
/// clause.
fn index_listed(files: &Written, o: &WeightsObservation) -> Option<Violation> {
    let meta = files.meta.as_ref()?;
    (files.listed.len() == o.files.len()).then(|| {
        Violation::new(
            "WGT-005",
            format!(
                "{meta} must be listed beside the weights: GE keeps its index there whenever it converts a constant"
            ),
        )
    })
}

/// WGT-011: the listed files hold nothing but the weights, so each file that holds anything is
/// some weight's file. An empty file holds nothing else either: mode 2 with nothing to convert
/// may write its combined file empty as well as not at all (EXW-015 says which the suite does).
fn idle_files(files: &Written) -> Option<Violation> {
    let idle: Vec<&str> = files
        .listed
        .iter()
        .filter(|f| f.len > 0)
        .map(|f| f.path.as_str())
        .filter(|p| !files.pointed.contains(p))
        .collect();
    (!idle.is_empty()).then(|| {
        Violation::new(
            "WGT-011",
            format!(
                "the listed files hold nothing but the weights, yet no FileConstant reads {idle:?}"
            ),
        )
    })
}

// What the text states is judged under its documented clauses (EXW-011, EXW-014: the kind of
// node, the file's directory and name pattern; WGT-011: the bytes read back, against the
// reported hashes where the files are gone); the suite's rules of layout (the hash, sharing,
// offsets and padding) only under the suite's clauses (EXW-012, EXW-013, EXW-015), applied to
// what was observed and compared as contents so that one choice is not blamed under another.

/// Mode 1's checks: each converted constant's in turn, then the files'.
fn judge_mode1(cx: &Loaded, files: &Written, dir: &str) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut holder: BTreeMap<String, &[u8]> = BTreeMap::new();
    for &(name, _, bytes) in &files.converted {
        let n = cx.node_of(name);
        let one = OwnFile {
            profile: cx.profile,
            name,
            bytes,
            n: &n,
            dir,
            seen: &holder,
        };
        super::run_table(MODE1_CONSTANT, &one, &mut v);
        if let Some(f) = n.file.clone() {
            holder.entry(f).or_insert(bytes);
        }
    }
    v.extend(one_file_per_weight(files));
    v
}

/// What the checks of one converted constant in mode 1 read: its name, bytes and node, the
/// profile and directory, and the bytes each file holds by what the constants before it say
/// (`seen`).
struct OwnFile<'c, 'b> {
    profile: Profile,
    name: &'c str,
    bytes: &'b [u8],
    n: &'c NodeConversion,
    dir: &'c str,
    seen: &'c BTreeMap<String, &'b [u8]>,
}

/// A check of one converted constant in mode 1.
type OwnFileCheck = Check<fn(&OwnFile<'_, '_>) -> Vec<Violation>>;

/// Mode 1's checks of each converted constant, in order.
const MODE1_CONSTANT: &[OwnFileCheck] = &[
    Check {
        clauses: &["EXW-011"],
        name: "mode1_file_constant",
        run: |c| mode1_file_constant(c.name, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011", "EXW-013"],
        name: "alone_at_zero",
        run: |c| alone_at_zero(c.name, c.bytes, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-012", "EXW-011"],
        name: "mode1_file_name",
        run: |c| mode1_file_name(c).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-011"],
        name: "own_file",
        run: |c| own_file(c.seen, c.bytes, c.n).into_iter().collect(),
    },
];

/// What the checks of one converted constant in mode 2 read: its name, bytes and node, the
/// combined file's path ([`combined_file`]), and what the constants stored before it say:
/// where the engine put each content (`stored`), and so where this one must sit (`at`: the
/// offset of its content if stored before, else where the content before it ends, rounded up
/// ([`next_offset`]); `None` when an offset before it is missing, which is judged there).
struct InCombined<'c, 'b> {
    name: &'c str,
    bytes: &'b [u8],
    n: &'c NodeConversion,
    path: &'c str,
    at: Option<u64>,
    stored: &'c BTreeMap<&'b [u8], Option<u64>>,
}

/// A check of one converted constant in mode 2.
type InCombinedCheck = Check<fn(&InCombined<'_, '_>) -> Vec<Violation>>;

/// Mode 2's checks of each converted constant, in order.
const MODE2_CONSTANT: &[InCombinedCheck] = &[
    Check {
        clauses: &["EXW-020"],
        name: "stored_once",
        run: |c| {
            stored_once(c.stored, c.name, c.bytes, c.n)
                .into_iter()
                .collect()
        },
    },
    Check {
        clauses: &["EXW-014"],
        name: "in_combined_file",
        run: |c| in_combined_file(c.name, c.path, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011", "EXW-015"],
        name: "at_its_offset",
        run: |c| {
            at_its_offset(c.name, c.bytes, c.at, c.n)
                .into_iter()
                .collect()
        },
    },
];

/// EXW-011: in mode 1 a converted constant becomes a FileConstant.
fn mode1_file_constant(name: &str, n: &NodeConversion) -> Option<Violation> {
    (n.node_type != NodeType::FileConstant)
        .then(|| Violation::new("EXW-011", format!("{name} must become a FileConstant")))
}

/// WGT-011, EXW-013: in mode 1 a constant's FileConstant reads its bytes' length
/// ([`wrong_length`]), at offset 0, its file holding its weight alone.
fn alone_at_zero(name: &str, bytes: &[u8], n: &NodeConversion) -> Option<Violation> {
    if let Some(wrong) = wrong_length(name, bytes, n) {
        return Some(wrong);
    }
    (n.offset != Some(0) || n.length.is_none()).then(|| {
        Violation::new(
            "EXW-013",
            format!(
                "{name}'s file holds its weight alone, at offset 0; found offset {}, length {}",
                shown(n.offset),
                shown(n.length)
            ),
        )
    })
}

/// EXW-011, EXW-012: in mode 1 the file a constant's node reads is a file `weight_<hash>` of
/// the directory (EXW-011), the hash that of the bytes of the weight it holds, spelled per
/// profile ([`weight_hash`], EXW-012).
fn mode1_file_name(c: &OwnFile) -> Option<Violation> {
    let (name, dir) = (c.name, c.dir);
    let hash = weight_hash(c.profile, c.bytes);
    match c.n.file.as_deref() {
        Some(f) if is_weight_file(dir, f) => {
            let found = f.strip_prefix(&in_dir(dir, "weight_")).unwrap_or_default();
            (found != hash).then(|| {
                Violation::new(
                    "EXW-012",
                    format!(
                        "{name} must point at {} (the SHA-256 of its bytes), found {f}",
                        in_dir(dir, &format!("weight_{hash}"))
                    ),
                )
            })
        }
        other => Some(Violation::new(
            "EXW-011",
            format!(
                "{name} must point at a file weight_<hash> in {dir}, found {}",
                shown(other)
            ),
        )),
    }
}

/// EXW-011: in mode 1 each weight has its own file: no file is two different weights' (`holder`:
/// the bytes of the first weight seen in each file, which `judge_mode1` fills as it goes).
fn own_file(
    holder: &BTreeMap<String, &[u8]>,
    bytes: &[u8],
    n: &NodeConversion,
) -> Option<Violation> {
    let f = n.file.clone()?;
    match holder.get(&f) {
        Some(held) if *held != bytes => Some(Violation::new(
            "EXW-011",
            format!("{f} is the file of two different weights; each weight has its own"),
        )),
        _ => None,
    }
}

/// EXW-013: one file per distinct weight in mode 1: the files the nodes read (`files.read`),
/// each listed once, hold between them each distinct weight the converted nodes hold, one
/// each (compared as contents, length and SHA-256, whatever the files' names).
fn one_file_per_weight(files: &Written) -> Option<Violation> {
    let distinct: BTreeSet<&[u8]> = files.converted.iter().map(|w| w.2.as_slice()).collect();
    let mut held: Vec<(u64, String)> = distinct.iter().map(|b| (b.len() as u64, sha(b))).collect();
    held.sort();
    let paths: BTreeSet<&str> = files.read.iter().map(|f| f.path.as_str()).collect();
    let mut read: Vec<(u64, String)> = files
        .read
        .iter()
        .map(|f| (f.len, f.sha256.clone()))
        .collect();
    read.sort();
    (paths.len() != files.read.len() || read != held).then(|| {
        Violation::new(
            "EXW-013",
            format!(
                "{} distinct weight(s) need {} file(s), one each; {} reported",
                distinct.len(),
                distinct.len(),
                files.read.len()
            ),
        )
    })
}

/// Mode 2's checks: each converted constant's in turn, in the order the combined file stores
/// them ([`store_order`]), each against where the engine put the ones before it, then the
/// combined file's.
fn judge_mode2(cx: &Loaded, files: &Written, dir: &str) -> Vec<Violation> {
    let root = &cx.scenario.root_graph;
    let path = combined_file(cx.profile, dir, root)
        .unwrap_or_else(|| in_dir(dir, &combined_name(cx.profile, root)));
    let planted = combined_base(cx.profile, cx.scenario, &path);
    let base = planted.len() as u64;
    let mut v = Vec::new();
    // Where the engine put each distinct content (EXW-020: stored once); where each lies by
    // what the engine says, in the order stored; where the next distinct content goes (EXW-015).
    let mut engine_at: BTreeMap<&[u8], Option<u64>> = BTreeMap::new();
    let mut placed: Vec<(&[u8], Option<u64>)> = Vec::new();
    let mut next = Some(base);
    for (name, _, bytes) in store_order(cx.profile, &files.converted) {
        let bytes = bytes.as_slice();
        let n = cx.node_of(name);
        let at = match placed.iter().find(|p| p.0 == bytes) {
            Some(p) => p.1,
            None => next,
        };
        let one = InCombined {
            name,
            bytes,
            n: &n,
            path: &path,
            at,
            stored: &engine_at,
        };
        super::run_table(MODE2_CONSTANT, &one, &mut v);
        if !engine_at.contains_key(bytes) {
            engine_at.insert(bytes, n.offset);
            // A node reading another length than its content's says nothing of where the
            // content lies (WGT-011 judges it): the content is taken where the rules put it.
            let lies = match wrong_length(name, bytes, &n) {
                Some(_) => at,
                None => n.offset,
            };
            placed.push((bytes, lies));
            next = lies.and_then(|o| next_offset(base, o, bytes.len() as u64));
        }
    }
    if !files.converted.is_empty() {
        let implied = implied_file(cx.profile, planted, &placed);
        v.extend(combined_file_holds(files, &path, implied));
    }
    v
}

/// EXW-015 (and its upstream entry): the order the combined file stores the converted
/// constants in: graph order; upstream, by node name, bytewise (a stable sort; the names are
/// unique).
fn store_order<'a>(profile: Profile, converted: &[&'a Weight]) -> Vec<&'a Weight> {
    let mut stored = converted.to_vec();
    if profile == Profile::Upstream {
        stored.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    }
    stored
}

/// EXW-015's upstream entry: upstream opens the combined file `path` for appending, so a file
/// the setup planted there (where the write lands, [`landing`]) stays, its bytes first and its
/// length the base of every offset; documented, and where nothing is planted, nothing.
fn combined_base(profile: Profile, scenario: &WeightsScenario, path: &str) -> Vec<u8> {
    match profile {
        Profile::Upstream => {
            planted_file(scenario, &landing(profile, &scenario.setup, path)).unwrap_or_default()
        }
        Profile::Documented => Vec::new(),
    }
}

/// EXW-015: where the next distinct content goes in the combined file: the end of the content
/// before it (stored at `at`, `len` bytes long) rounded up to a multiple of [`ALIGN`] from the
/// base `base`; `None` past the offsets a file can have, or for content before the base.
fn next_offset(base: u64, at: u64, len: u64) -> Option<u64> {
    let end = at.checked_add(len)?;
    base.checked_add(end.checked_sub(base)?.div_ceil(ALIGN).checked_mul(ALIGN)?)
}

/// Reads the observation: the bytes of the combined file that the placement observed implies,
/// `placed` (each distinct content where the engine's nodes say it lies, in the order stored,
/// [`store_order`]), after `base` (what a file planted at its path held, upstream:
/// [`combined_base`]): each content at its offset, zeros between, the file ending where the
/// last content stored does, upstream padded to a multiple of [`ALIGN`] from the base
/// (EXW-015's upstream entry). `None` when an offset is missing or puts a content past the
/// end a file laid out by the rules could reach (the base and each distinct content rounded up
/// to [`ALIGN`]): such a placement already broke EXW-015 at that offset, and the bytes built
/// stay within what the scenario holds, whatever offsets a backend reports.
fn implied_file(
    profile: Profile,
    base: Vec<u8>,
    placed: &[(&[u8], Option<u64>)],
) -> Option<Vec<u8>> {
    let start = base.len() as u64;
    let cap = placed
        .iter()
        .try_fold(start, |end, (bytes, _)| {
            end.checked_add((bytes.len() as u64).div_ceil(ALIGN).checked_mul(ALIGN)?)
        })?
        .min(crate::sandbox::MAX_SANDBOX_FILE);
    let mut buffer = base;
    let mut end = start;
    for &(bytes, at) in placed {
        let at = at?;
        end = at.checked_add(bytes.len() as u64).filter(|&e| e <= cap)?;
        if (buffer.len() as u64) < end {
            buffer.resize(usize::try_from(end).ok()?, 0);
        }
        let from = usize::try_from(at).ok()?;
        buffer[from..from + bytes.len()].copy_from_slice(bytes);
    }
    if profile == Profile::Upstream {
        end = next_offset(start, end, 0).filter(|&e| e <= cap)?;
    }
    buffer.resize(usize::try_from(end).ok()?, 0);
    Some(buffer)
}

/// EXW-020: in mode 2 the same bytes are stored once: a constant holding the bytes of one
/// checked before sits where that one does (`engine_at`: where the engine put each content,
/// which `judge_mode2` fills as it goes).
fn stored_once(
    engine_at: &BTreeMap<&[u8], Option<u64>>,
    name: &str,
    bytes: &[u8],
    n: &NodeConversion,
) -> Option<Violation> {
    match engine_at.get(bytes) {
        Some(seen) if *seen != n.offset => Some(Violation::new(
            "EXW-020",
            format!(
                "{name} holds the same bytes as another weight, stored again at offset {}, not at {}",
                shown(n.offset),
                shown(*seen)
            ),
        )),
        _ => None,
    }
}

/// EXW-014: in mode 2 a converted constant becomes a FileConstant in the combined file `path`.
fn in_combined_file(name: &str, path: &str, n: &NodeConversion) -> Option<Violation> {
    (n.node_type != NodeType::FileConstant || n.file.as_deref() != Some(path)).then(|| {
        Violation::new(
            "EXW-014",
            format!("{name} must become a FileConstant in {path}"),
        )
    })
}

/// WGT-011, EXW-015: in mode 2 a constant's FileConstant reads its bytes' length
/// ([`wrong_length`]), at the offset `at` the rules give it after what the engine did before
/// it (unchecked when that is unknown: the offset missing before it is judged there).
fn at_its_offset(
    name: &str,
    bytes: &[u8],
    at: Option<u64>,
    n: &NodeConversion,
) -> Option<Violation> {
    if let Some(wrong) = wrong_length(name, bytes, n) {
        return Some(wrong);
    }
    let misplaced = at.is_some_and(|at| n.offset != Some(at));
    (misplaced || n.length.is_none()).then(|| {
        Violation::new(
            "EXW-015",
            format!(
                "{name} must sit at offset {}, length {}; found offset {}, length {}",
                shown(at),
                bytes.len(),
                shown(n.offset),
                shown(n.length)
            ),
        )
    })
}

/// EXW-014, EXW-015: mode 2 reports the combined file `path` it writes (EXW-014), its length
/// and SHA-256 those of `implied`, the bytes the placement observed implies ([`implied_file`],
/// EXW-015).
fn combined_file_holds(files: &Written, path: &str, implied: Option<Vec<u8>>) -> Option<Violation> {
    let Some(f) = files.by_path.get(path) else {
        return Some(Violation::new(
            "EXW-014",
            format!("mode 2 writes {path}, which is not reported"),
        ));
    };
    match implied {
        Some(b) if (f.len, f.sha256.as_str()) == (b.len() as u64, sha(&b).as_str()) => None,
        _ => Some(Violation::new(
            "EXW-015",
            format!(
                "{path} holds {} bytes, where the placement observed makes {}",
                f.len,
                shown(implied.map(|b| b.len()))
            ),
        )),
    }
}

/// WGT-010, EWD-013: nothing may be removed where unload does not remove the directory, nor
/// ever from the user's directory (EWD-013, `temporary` false).
fn nothing_removed(o: &WeightsObservation, temporary: bool) -> Option<Violation> {
    let clause = if temporary { "WGT-010" } else { "EWD-013" };
    (!o.removed.is_empty()).then(|| {
        Violation::new(
            clause,
            format!(
                "nothing may be removed here; reported {}",
                o.removed.join(", ")
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
            format!("unload must report {dir} as removed"),
        ));
    }
    for f in files.read.iter().map(|f| &f.path) {
        if !o.removed.contains(f) {
            v.push(Violation::new(
                "WGT-010",
                format!("unload must report {f} as removed"),
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
        .map(|r| Violation::new("WGT-007", format!("unload removed {r}, outside {dir}")))
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
            format!(
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
/// violation each, since nothing outside the chosen directory may be created. A write beside
/// the sandbox also breaks the harness's own safety rule ([`SANDBOX_RULE`]), which fails at
/// every level; what is left in the backend's own `$TMPDIR` and `$HOME` (its scratch area) is
/// WGT-007's alone.
pub fn beside(sandbox: &crate::sandbox::Sandbox) -> Vec<Violation> {
    let beside = sandbox.written_beside().into_iter().flat_map(|name| {
        let what = format!("../{name} was written beside the sandbox, outside it");
        [
            Violation::new(SANDBOX_RULE, format!("the harness's safety rule: {what}")),
            Violation::new("WGT-007", what),
        ]
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

/// EWD-010, EWD-011, EXW-016, EXW-017, EXW-018, EXW-022 (the tier's clause): the backend named
/// `found` as the weight directory where the tier's clause says `dir`.
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
    let cx = Disk::new(judging.profile, scenario, observation, sandbox);
    let mut v = Vec::new();
    super::run_table(DISK, &cx, &mut v);
    v
}

/// A check of the phases whose context is [`Disk`].
type DiskCheck = Check<fn(&Disk<'_>) -> Vec<Violation>>;

/// The checks of the sandbox after a weights backend answered, in order.
const DISK: &[DiskCheck] = &[
    Check {
        clauses: &["WGT-005", "EWD-013"],
        name: "reported_files_on_disk",
        run: reported_files_on_disk,
    },
    Check {
        clauses: &["WGT-011"],
        name: "files_read_back",
        run: files_read_back,
    },
    Check {
        clauses: &["EXW-011", "EXW-014"],
        name: "index_on_disk",
        run: |cx| index_on_disk(cx).into_iter().collect(),
    },
    Check {
        clauses: &[
            "WGT-004", "WGT-005", "WGT-007", "EXW-011", "EXW-015", "EXW-019", "EXW-021",
        ],
        name: "unplanted_entries",
        run: unplanted_entries,
    },
    Check {
        clauses: &[
            "WGT-006", "WGT-007", "WGT-010", "EWD-013", "EXW-019", "EXW-021",
        ],
        name: "planted_entries",
        run: planted_entries,
    },
    Check {
        clauses: &["WGT-007", "WGT-010"],
        name: "removals",
        run: removals,
    },
];

/// WGT-004, WGT-005, WGT-007, EXW-011, EXW-015, EXW-019, EXW-021: each entry found in the
/// sandbox that the setup did not plant ([`unplanted_entry`]).
fn unplanted_entries(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for (path, entry) in &cx.found {
        if !cx.plants.contains_key(path) {
            v.extend(unplanted_entry(cx, path, entry));
        }
    }
    v
}

/// WGT-006, WGT-007, WGT-010, EWD-013, EXW-019, EXW-021: each entry the setup planted
/// ([`planted_entry`]).
fn planted_entries(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for (path, plant) in &cx.plants {
        v.extend(planted_entry(cx, path, plant));
    }
    v
}

/// WGT-010, WGT-007: each path unload says it removed is gone, and was inside the temporary
/// directory.
fn removals(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for r in &cx.o.removed {
        v.extend(removed_still_there(cx, r));
        v.extend(removed_outside_temporary(cx, r));
    }
    v
}

/// What the sandbox checks read, worked out once from the scenario, the observation and the
/// sandbox as it is after the backend answered.
struct Disk<'a> {
    profile: Profile,
    scenario: &'a WeightsScenario,
    o: &'a WeightsObservation,
    /// The mode in force, by the strict reading of the options.
    mode: u8,
    /// The model's constants, as the load reads them ([`constants`]).
    weights: Vec<Weight>,
    /// What is on disk, walked without trusting it: links not followed, only regular files
    /// opened, no mount entered (crate::sandbox).
    found: BTreeMap<String, Entry>,
    /// What the setup planted.
    plants: BTreeMap<String, Entry>,
    /// The user's directory (`ge.externalWeightDir`), when it is the one chosen.
    user_dir: Option<String>,
    /// The directory unload must empty and remove (only when the load chose one). A file or
    /// link planted where the temporary directory goes is not the session's to remove.
    doomed: Option<String>,
    /// The clause of an unload that leaves what it must remove ([`unload_clause`]).
    unloaded: &'static str,
    /// Link targets planted in the sandbox: removing them means a link was followed.
    targets: Vec<String>,
    /// The files reported, by where each really lies ([`Disk::land`]).
    reported: BTreeMap<String, &'a WrittenFile>,
    /// Upstream's index file, after a load that converted a constant and is not removed.
    meta: Option<String>,
    /// The weight directory, where it really lies (after a load that goes ahead, modes 1, 2).
    dir: Option<String>,
    /// Upstream, after a load that converted nothing.
    nothing_converted: bool,
}

impl<'a> Disk<'a> {
    fn new(
        profile: Profile,
        scenario: &'a WeightsScenario,
        o: &'a WeightsObservation,
        sandbox: &Path,
    ) -> Self {
        let reading = Reading::new(profile, &scenario.options, Context::plain());
        let values = reading.values();
        let mode = mode_of(&values);
        // The directory of a load that goes ahead (in modes 1 and 2).
        let place = match refusal(profile, scenario, &values, reading.rejected()) {
            Some(_) => None,
            None => flush_dir_with(profile, scenario, &values),
        };
        let (place_dir, tier) = (place.as_ref().map(|p| p.0.clone()), place.map(|p| p.1));
        let weights = constants(scenario);
        let converting = weights.iter().any(|w| converts(profile, &w.2));
        let plants = planted(scenario, sandbox);
        let temporary = matches!(tier, Some(t) if t != Tier::User);
        let user_dir = place_dir.clone().filter(|_| tier == Some(Tier::User));
        let doomed = place_dir.clone().filter(|d| {
            unload_removes(profile, scenario)
                && temporary
                && plants.get(d).is_none_or(|p| *p == Entry::Dir)
        });
        let targets = plants
            .values()
            .filter_map(|p| match p {
                Entry::Link(t) => t
                    .strip_prefix(sandbox)
                    .ok()
                    .map(|r| r.to_string_lossy().replace('\\', "/")),
                _ => None,
            })
            .collect();
        let land = |p: &str| landing(profile, &scenario.setup, p);
        let reported = o.files.iter().map(|f| (land(&f.path), f)).collect();
        let gone = |p: &str| doomed.as_deref().is_some_and(|d| under(p, d));
        let meta = place_dir
            .as_deref()
            .and_then(|d| meta_path(profile, d, mode, converting))
            .filter(|m| o.errors.is_empty() && tier != Some(Tier::WorkPathMissing) && !gone(m));
        let dir = place_dir.map(|d| land(&d));
        let nothing_converted = profile == Profile::Upstream && o.errors.is_empty() && !converting;
        Disk {
            found: crate::sandbox::walk(sandbox),
            unloaded: unload_clause(o),
            profile,
            scenario,
            o,
            mode,
            weights,
            plants,
            user_dir,
            doomed,
            targets,
            reported,
            meta,
            dir,
            nothing_converted,
        }
    }

    /// Whether `p` lies in the directory unload must remove.
    fn gone(&self, p: &str) -> bool {
        self.doomed.as_deref().is_some_and(|d| under(p, d))
    }

    /// Where the path `p` the backend names really lies: upstream writes through the links the
    /// setup planted (WGT-007's and WGT-008's upstream entries).
    fn land(&self, p: &str) -> String {
        landing(self.profile, &self.scenario.setup, p)
    }
}

/// EXW-019, EXW-021: the clause of an unload that leaves what it must remove. EXW-019 is the
/// unload of a loaded model; after a load that failed there is none, and the directory's going
/// is the suite's reading (EXW-021).
fn unload_clause(o: &WeightsObservation) -> &'static str {
    if o.errors.is_empty() {
        "EXW-019"
    } else {
        "EXW-021"
    }
}

/// Whether `path` lies in the user's weight directory.
fn in_user_dir(cx: &Disk, path: &str) -> bool {
    cx.user_dir.as_deref().is_some_and(|d| under(path, d))
}

/// WGT-005, EWD-013: every reported file is really there, with the reported length and hash
/// (or removed by unload, the directory unload removes or as the answer reports it); one
/// missing from the user's directory after an unload is EWD-013's.
fn reported_files_on_disk(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for f in &cx.o.files {
        match cx.found.get(&cx.land(&f.path)) {
            _ if cx.gone(&f.path) => {}
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
            // The answer says unload removed it: whether it should have is judged where
            // removals are (WGT-007, EXW-019), and the listing is true.
            _ if cx.scenario.unload
                && !in_user_dir(cx, &f.path)
                && cx.o.removed.iter().any(|r| under(&f.path, r)) => {}
            _ => {
                let clause = if in_user_dir(cx, &f.path) && cx.scenario.unload {
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
    v
}

/// WGT-011: after a load that succeeded, reading the files back gives every constant byte for
/// byte.
fn files_read_back(cx: &Disk) -> Vec<Violation> {
    let o = cx.o;
    let mut v = Vec::new();
    if !o.errors.is_empty() {
        return v;
    }
    // Either profile's name: the judge holds the names, this reads the bytes back. A name two
    // constants share is the first one's.
    let mut by_name: BTreeMap<String, &Weight> = BTreeMap::new();
    for w in cx.weights.iter() {
        for name in accepted_names(cx.profile, Naming::EitherProfile, cx.mode, &w.0, &w.2) {
            by_name.entry(name).or_insert(w);
        }
    }
    for n in &o.nodes {
        let (Some(file), Some(off), Some(len)) = (&n.file, n.offset, n.length) else {
            continue;
        };
        if cx.gone(file) {
            continue;
        }
        let Some(w) = by_name.get(&n.name) else {
            continue;
        };
        let back = match cx.found.get(&cx.land(file)) {
            Some(Entry::File(bytes)) => usize::try_from(off).ok().and_then(|a| {
                let b = a.checked_add(usize::try_from(len).ok()?)?;
                bytes.get(a..b)
            }),
            // Gone after an unload: what may go is the unload's clauses' to judge (EXW-019,
            // EWD-013), and the reported hashes stand in for the bytes (`read_back_reported`).
            None if cx.scenario.unload => continue,
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
    v
}

/// EXW-011, EXW-014 (upstream): after a load that converted a constant, GE's index file is a
/// regular file at the top of the directory (only its presence is judged).
fn index_on_disk(cx: &Disk) -> Option<Violation> {
    let meta = cx.meta.as_ref()?;
    (!matches!(cx.found.get(&cx.land(meta)), Some(Entry::File(_)))).then(|| {
        Violation::new(
            if cx.mode == 1 { "EXW-011" } else { "EXW-014" },
            format!("{meta} is not a regular file in the sandbox: GE keeps its index there whenever it converts a constant"),
        )
    })
}

/// Something on disk the harness did not plant: the checks of it, in order, the first that
/// settles it ending them. Nothing may be there that the backend did not report.
fn unplanted_entry(cx: &Disk, path: &str, entry: &Entry) -> Vec<Violation> {
    if let Entry::Foreign(what) = entry {
        return vec![foreign_entry(cx, path, what)];
    }
    let allowed_dir = matches!(entry, Entry::Dir)
        && cx
            .dir
            .as_deref()
            .is_some_and(|d| d == path || under(d, path));
    if let Some(created) = dir_without_conversion(cx, path, allowed_dir) {
        return vec![created];
    }
    if allowed_dir || cx.reported.contains_key(path) {
        return left_after_unload(cx, path).into_iter().collect();
    }
    if let Some(outside) = outside_weight_dir(cx, path) {
        return vec![outside];
    }
    // A file under a name no weight takes is a temporary left behind (the suite's choice of
    // how files are written, WGT-004); any other unlisted file breaks the listing (WGT-005).
    let mut v = vec![temporary_left(cx, path).unwrap_or_else(|| unreported(path))];
    v.extend(left_after_unload(cx, path));
    v
}

/// WGT-005, WGT-007: a backend leaves only weight files and directories: anything else is
/// charged to the listing inside the weight directory (WGT-005), to the write outside it
/// (WGT-007).
fn foreign_entry(cx: &Disk, path: &str, what: &str) -> Violation {
    let inside = cx.dir.as_deref().is_some_and(|d| under(path, d));
    Violation::new(
        if inside { "WGT-005" } else { "WGT-007" },
        format!("{path} is {what}: a backend leaves only weight files and directories"),
    )
}

/// EXW-011, EXW-015 (upstream): with nothing to convert GE returns before it makes its weight
/// manager, so neither the directory nor ASCEND_WORK_PATH (nor a parent) is created.
/// `allowed_dir`: `path` is the weight directory or one of its parents.
fn dir_without_conversion(cx: &Disk, path: &str, allowed_dir: bool) -> Option<Violation> {
    (allowed_dir && cx.nothing_converted).then(|| {
        Violation::new(
            if cx.mode == 1 { "EXW-011" } else { "EXW-015" },
            format!("{path} was created, but GE creates no directory when it converts no constant"),
        )
    })
}

/// EXW-019, EXW-021: unload leaves nothing in the directory it removes.
fn left_after_unload(cx: &Disk, path: &str) -> Option<Violation> {
    cx.gone(path)
        .then(|| Violation::new(cx.unloaded, format!("{path} is still there after unload")))
}

/// An optional value as a message shows it: the value itself, or `none`, never Rust's
/// `Some(..)` / `None`.
fn shown(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// WGT-007: nothing appears outside the weight directory.
fn outside_weight_dir(cx: &Disk, path: &str) -> Option<Violation> {
    let dir = &cx.dir;
    dir.as_deref().is_none_or(|d| !under(path, d)).then(|| {
        Violation::new(
            "WGT-007",
            format!(
                "{path} appeared outside the weight directory ({})",
                shown(dir.as_deref())
            ),
        )
    })
}

/// WGT-005: every file the backend leaves in the weight directory is reported.
fn unreported(path: &str) -> Violation {
    Violation::new(
        "WGT-005",
        format!("{path} is in the sandbox but not reported"),
    )
}

/// WGT-004: no temporary file is left behind: an unreported file in the weight directory bears
/// a final name (a weight file's, the combined file's, upstream's index).
fn temporary_left(cx: &Disk, path: &str) -> Option<Violation> {
    let profile = cx.profile;
    let name = path.rsplit('/').next().unwrap_or(path);
    let final_name = (name.starts_with("weight_") && name.len() == 71)
        || name.strip_prefix("weight_").is_some_and(|h| {
            profile == Profile::Upstream
                && (32..=64).contains(&h.len())
                && h.bytes().all(|b| b.is_ascii_hexdigit())
        })
        || name == combined_name(profile, &cx.scenario.root_graph)
        || (profile == Profile::Upstream
            && cx.dir.as_deref().is_some_and(|d| path == in_dir(d, META)));
    (!final_name).then(|| {
        Violation::new(
            "WGT-004",
            format!("{path} looks like a temporary file left behind"),
        )
    })
}

/// Something the harness planted: the checks of it, in order. Everything planted survives,
/// unless it sat in the directory unload removes.
fn planted_entry(cx: &Disk, path: &str, plant: &Entry) -> Vec<Violation> {
    if cx.gone(path) {
        let mut v: Vec<Violation> = plant_left_after_unload(cx, path).into_iter().collect();
        v.extend(removal_unreported(cx, path));
        return v;
    }
    if cx.reported.contains_key(path) {
        return Vec::new(); // replaced by a weight file of the same name, as reported
    }
    if cx.meta.as_deref().is_some_and(|m| cx.land(m) == path) {
        return Vec::new(); // upstream's index, GE's to rewrite (listing it is WGT-005's)
    }
    plant_changed(cx, path, plant).into_iter().collect()
}

/// EXW-019, EXW-021: unload leaves nothing planted in the temporary directory.
fn plant_left_after_unload(cx: &Disk, path: &str) -> Option<Violation> {
    cx.found.contains_key(path).then(|| {
        Violation::new(
            cx.unloaded,
            format!("{path} was in the temporary directory and is still there after unload"),
        )
    })
}

/// WGT-010: what unload removed from the temporary directory, planted there, is reported.
fn removal_unreported(cx: &Disk, path: &str) -> Option<Violation> {
    (!cx.found.contains_key(path) && !cx.o.removed.iter().any(|r| r == path))
        .then(|| Violation::new("WGT-010", format!("{path} was removed but not reported")))
}

/// WGT-006, EWD-013, WGT-007: what the setup planted is left as it was: a change is charged to
/// following a link (WGT-006) under a planted link's target, to the user's directory (EWD-013)
/// inside it, to a write outside the weight directory (WGT-007) elsewhere.
fn plant_changed(cx: &Disk, path: &str, plant: &Entry) -> Option<Violation> {
    let same = match (plant, cx.found.get(path)) {
        (Entry::Dir, Some(Entry::Dir)) => true,
        (Entry::File(a), Some(Entry::File(b))) => a == b,
        (Entry::Link(a), Some(Entry::Link(b))) => a == b,
        _ => false,
    };
    if same {
        return None;
    }
    let clause = if cx.targets.iter().any(|t| under(path, t)) {
        "WGT-006"
    } else if cx.user_dir.as_deref().is_some_and(|d| under(path, d)) {
        "EWD-013"
    } else {
        "WGT-007"
    };
    Some(Violation::new(
        clause,
        format!("{path}, planted before the load, was changed or removed"),
    ))
}

/// WGT-010: what unload says it removed is gone.
fn removed_still_there(cx: &Disk, r: &str) -> Option<Violation> {
    cx.found.contains_key(r).then(|| {
        Violation::new(
            "WGT-010",
            format!("{r} is reported removed but is still there"),
        )
    })
}

/// WGT-007: what unload says it removed was inside the temporary directory.
fn removed_outside_temporary(cx: &Disk, r: &str) -> Option<Violation> {
    (!cx.doomed.as_deref().is_some_and(|d| under(r, d))).then(|| {
        Violation::new(
            "WGT-007",
            format!("{r} is outside the temporary weight directory"),
        )
    })
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
