//! The reference weights capability: writes the weights of a root graph's constants to real files
//! inside a sandbox, and removes the temporary weight directory again at unload.
//!
//! Safety rules, each a clause of the spec: every path stays inside the sandbox (WGT-001), a
//! file appears under its final name only complete (written under a temporary name, then
//! renamed: WGT-004), unload removes the `tmp_weight_<pid>_<sessionid>` directory and nothing
//! else, never follows a symbolic link (WGT-006, WGT-007), and never touches the user's
//! `ge.externalWeightDir` (EWD-013). Under the upstream profile a load that converts a constant
//! also keeps an index, [`META_FILE`], at the top of the weight directory, as GE does; a load
//! that converts nothing creates no directory (EXW-015's upstream entry); each file is written
//! under its final name, through a link planted there, and a failed mode-1 write does not stop
//! the others (WGT-004's and WGT-007's upstream entries); a link at the temporary directory's
//! path to a directory is used as the directory (WGT-008's); and the mode-2 root graph name is
//! taken as it is, `/` included, as long as the combined file stays in the sandbox (WGT-002's).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ge_spec::vocab::weights::resolve_in_sandbox;
use ge_spec::vocab::weights::{
    encode_hex, ConstNode, NodeConversion, NodeType, SetupStep, WeightsObservation,
    WeightsScenario, WorkPathEnv, WrittenFile, MAX_WEIGHT_BYTES,
};
use ge_spec::{Answer, Diagnostic, Part, Product, Profile, RunMode, ShapeKind, Subject};
use sha2::{Digest, Sha256};

use crate::options::{self, Context};

/// Offsets in the combined file (mode 2) are multiples of this many bytes (EXW-015).
pub const COMBINED_ALIGNMENT: u64 = 512;

/// The most constants one scenario may hold (WGT-002).
pub const MAX_CONSTANTS: usize = 10_000;

/// The index file upstream keeps at the top of the weight directory whenever a load converts
/// at least one constant, in modes 1 and 2 (EXW-011's, EXW-014's and WGT-011's upstream
/// entries). Only its presence is judged; its content is the reference's own.
pub const META_FILE: &str = "meta.json";

/// SHA-256 of `bytes`, lowercase hex (EXW-012).
pub fn sha256_hex(bytes: &[u8]) -> String {
    encode_hex(&Sha256::digest(bytes))
}

/// The name of the session's temporary weight directory.
pub fn tmp_dir_name(pid: u32, session_id: u64) -> String {
    format!("tmp_weight_{pid}_{session_id}")
}

/// The name of the mode-1 file of a weight under `profile`: `weight_<SHA-256 in 64 hex digits>`
/// (EXW-012); upstream prints each byte of the SHA-256 as hex without zero-padding (`0x0a` as
/// `a`), so its names have 32 to 64 hex digits (EXW-012's upstream entry).
pub fn weight_file_name(profile: Profile, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => format!("weight_{}", sha256_hex(bytes)),
        Profile::Upstream => format!("weight_{}", upstream_hash(bytes)),
    }
}

/// The SHA-256 of `bytes` as upstream prints it: each byte as hex without zero-padding
/// (EXW-012's upstream entry).
pub fn upstream_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:x}"))
        .collect()
}

/// The name of a node converted to FileConstant (modes 1 and 2) under `profile`: upstream
/// renames it `<name>_<hash>`, the hash of the weight's own bytes as it names mode-1 files
/// (EXW-011's and EXW-014's upstream entries); the documented profile keeps the name.
pub fn converted_node_name(profile: Profile, name: &str, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => name.to_owned(),
        Profile::Upstream => format!("{name}_{}", upstream_hash(bytes)),
    }
}

/// Whether modes 1 and 2 convert a constant holding `bytes` under `profile`. Upstream computes
/// no hash for a constant whose weight is an empty tensor, so it is never collected for
/// conversion: it stays Const/Constant under its own name, with no file and no place in the
/// combined file (EXW-011's and EXW-014's upstream entries). A vocabulary constant with no bytes
/// stands for such an empty tensor. The documented profile converts every constant.
pub fn converts(profile: Profile, bytes: &[u8]) -> bool {
    profile == Profile::Documented || !bytes.is_empty()
}

/// The node of a constant left as it is: same name and type, no file.
fn kept(w: &Weight) -> NodeConversion {
    NodeConversion {
        name: w.name.clone(),
        node_type: w.node_type,
        file: None,
        offset: None,
        length: None,
    }
}

/// Whether unloading the model removes the temporary weight directory under `profile`: the
/// upstream online session API removes it when the session ends, not at model unload
/// (EXW-019's upstream entry; EXW-021: the scenarios' unload keeps the session open).
pub fn unload_removes_tmp_dir(profile: Profile) -> bool {
    profile == Profile::Documented
}

/// The name of the mode-2 file of a root graph under `profile`:
/// `<root graph name>_weight_combined` (EXW-014); upstream falls back to `weight_combined` when
/// the root graph has no name (EXW-014's upstream entry).
pub fn combined_file_name(profile: Profile, root_graph: &str) -> String {
    if profile == Profile::Upstream && root_graph.is_empty() {
        "weight_combined".to_owned()
    } else {
        format!("{root_graph}_weight_combined")
    }
}

/// The sandbox-relative parts of the mode-2 file of `root_graph` in the directory `dir` under
/// `profile`, or `None` when it would leave the sandbox.
///
/// Documented: the name is one component (WGT-002 refuses a name that is not). Upstream joins
/// the directory and the name with a `/` (`file_constant_utils.cc` `GetValidFullPath`), so a `/`
/// in the name is a separator: empty and `.` components stay where they are, `..` goes up, and
/// `.` or `..` alone are ordinary names (`._weight_combined`). The path is resolved by its
/// spelling; the scenarios plant no link on the way below the directory.
pub fn combined_path(profile: Profile, dir: &[String], root_graph: &str) -> Option<Vec<String>> {
    let name = combined_file_name(profile, root_graph);
    let mut parts = dir.to_vec();
    if profile == Profile::Documented {
        parts.push(name);
        return Some(parts);
    }
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p.to_owned()),
        }
    }
    (!parts.is_empty()).then_some(parts)
}

/// A sandbox-relative path as observations spell it (`.` for the sandbox itself).
fn show(parts: &[String]) -> String {
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

fn join(parts: &[String], name: &str) -> String {
    if parts.is_empty() {
        name.to_owned()
    } else {
        format!("{}/{name}", parts.join("/"))
    }
}

fn on_disk(sandbox: &Path, parts: &[String]) -> PathBuf {
    parts.iter().fold(sandbox.to_path_buf(), |p, c| p.join(c))
}

/// The mode-2 layout of `weights` (name and bytes, in graph order) under `profile`: the offset
/// of each, in the order given, and the file length (EXW-015).
///
/// Documented: weights are stored in graph order, each distinct content once at the next
/// multiple of 512, and the file ends where the last stored weight ends. Upstream (EXW-015's
/// upstream entry): they are stored in the order of the constants' node names, compared
/// bytewise (a stable sort, so equal names keep graph order; the vocabulary's names are unique),
/// and every stored weight is padded with zeros to a multiple of 512, the last one too. Either
/// way identical contents are stored once, at the offset of the first in storing order.
pub fn combined_layout(profile: Profile, weights: &[(&str, &[u8])]) -> Option<(Vec<u64>, u64)> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    if profile == Profile::Upstream {
        order.sort_by(|&a, &b| weights[a].0.as_bytes().cmp(weights[b].0.as_bytes()));
    }
    let mut first: BTreeMap<&[u8], u64> = BTreeMap::new();
    let mut offsets = vec![0u64; weights.len()];
    let mut end = 0u64;
    for i in order {
        let w = weights[i].1;
        if let Some(&at) = first.get(w) {
            offsets[i] = at;
            continue;
        }
        let at = end.checked_next_multiple_of(COMBINED_ALIGNMENT)?;
        end = at.checked_add(w.len() as u64)?;
        first.insert(w, at);
        offsets[i] = at;
    }
    if profile == Profile::Upstream {
        end = end.checked_next_multiple_of(COMBINED_ALIGNMENT)?;
    }
    Some((offsets, end))
}

/// Which of the three flush-path tiers chose the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// `ge.externalWeightDir`: the user's directory.
    User,
    /// `$ASCEND_WORK_PATH/tmp_weight_<pid>_<sessionid>` or the working directory's.
    Temporary,
}

struct Weight {
    name: String,
    node_type: NodeType,
    bytes: Vec<u8>,
}

fn scenario_error(subject: Subject, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new("WGT-001", message).subject(subject)
}

/// Checks the scenario's own paths and constants; returns the working directory and weights.
fn check_scenario(
    scenario: &WeightsScenario,
    errors: &mut Vec<Diagnostic>,
) -> Option<(Vec<String>, Vec<Weight>)> {
    let start = errors.len();
    let work = resolve_in_sandbox(&[], &scenario.work_dir);
    if work.is_none() {
        errors.push(scenario_error(
            Subject::part(Part::WorkDir),
            format!(
                "work_dir {:?} is not a relative path inside the sandbox",
                scenario.work_dir
            ),
        ));
    }
    if let WorkPathEnv::Set { path } = &scenario.ascend_work_path {
        if path.is_empty() || resolve_in_sandbox(&[], path).is_none() {
            errors.push(scenario_error(
                Subject::part(Part::AscendWorkPath),
                format!("ASCEND_WORK_PATH {path:?} is not a non-empty relative path inside the sandbox (use state = \"empty\" for an empty variable)"),
            ));
        }
    }
    for (i, step) in scenario.setup.iter().enumerate() {
        let bad_target = matches!(step, SetupStep::Symlink { target, .. } if resolve_in_sandbox(&[], target).is_none());
        if resolve_in_sandbox(&[], step.path()).is_none_or(|p| p.is_empty()) || bad_target {
            errors.push(scenario_error(
                Subject::setup(u32::try_from(i).unwrap_or(u32::MAX)),
                format!("setup step {i} names a path outside the sandbox"),
            ));
        }
    }
    let sound = check_constants(&scenario.constants, errors)?;
    if errors.len() > start {
        return None;
    }
    // Every constant passed: only now are their bytes made (up to 64 MiB), never for a load
    // refused anyway.
    let weights = sound
        .into_iter()
        .map(|node| Weight {
            name: node.name.clone(),
            node_type: node.node_type,
            // `check` passed: `bytes` gives the same answer, the bytes themselves.
            bytes: node.bytes(MAX_WEIGHT_BYTES).unwrap_or_default(),
        })
        .collect();
    Some((work.unwrap_or_default(), weights))
}

/// WGT-002: the constants' count, names, types, lengths and spellings, each error pushed;
/// `None` at the cap on the count or on the total (nothing after it is looked at). Returns the
/// constants that passed, their bytes not yet made.
fn check_constants<'a>(
    constants: &'a [ConstNode],
    errors: &mut Vec<Diagnostic>,
) -> Option<Vec<&'a ConstNode>> {
    if constants.len() > MAX_CONSTANTS {
        errors.push(
            Diagnostic::new("WGT-002", format!("more than {MAX_CONSTANTS} constants"))
                .subject(Subject::part(Part::Constants)),
        );
        return None;
    }
    let mut names = BTreeSet::new();
    let mut total = 0u64;
    let mut sound = Vec::new();
    for node in constants {
        let subject = Subject::constant(node.name.clone());
        let bad = |m: String| Diagnostic::new("WGT-002", m).subject(subject.clone());
        if node.name.is_empty() {
            errors.push(bad("a constant has an empty name".into()));
        } else if !names.insert(node.name.as_str()) {
            errors.push(bad(format!("constant name {:?} is used twice", node.name)));
        }
        if node.node_type == NodeType::FileConstant {
            errors.push(bad(format!(
                "{} is already a FileConstant; the graph holds Const/Constant nodes",
                node.name
            )));
        }
        // Checked before decoding, so an oversized scenario never allocates.
        let declared = node.declared_len().unwrap_or(0);
        match total.checked_add(declared) {
            Some(t) if t <= MAX_WEIGHT_BYTES => total = t,
            _ => {
                errors.push(bad(format!(
                    "the weights add up to more than {MAX_WEIGHT_BYTES} bytes"
                )));
                return None;
            }
        }
        match node.check(MAX_WEIGHT_BYTES) {
            Ok(()) => sound.push(node),
            Err(m) => errors.push(bad(format!("constant {:?}: {m}", node.name))),
        }
    }
    Some(sound)
}

/// Creates `parts` (and its missing parents) under the sandbox. The temporary directory must be
/// a real directory: an existing link or file in its place is refused, so that nothing is ever
/// written or removed through it (WGT-008). Upstream checks only that something is there, links
/// followed, and a link to a directory serves as the directory (WGT-008's upstream entry).
fn create_dir(
    profile: Profile,
    sandbox: &Path,
    parts: &[String],
    tier: Tier,
) -> Result<(), String> {
    let path = on_disk(sandbox, parts);
    if tier == Tier::Temporary && profile == Profile::Documented {
        if let Ok(meta) = fs::symlink_metadata(&path) {
            if !meta.is_dir() {
                return Err("it exists and is not a directory (a link or a file)".into());
            }
        }
    }
    fs::create_dir_all(&path).map_err(|e| e.to_string())?;
    if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
        Ok(())
    } else {
        Err("it is not a directory".into())
    }
}

/// Whether `ASCEND_WORK_PATH` can be flushed under, as upstream decides it (EXW-022's upstream
/// entry): it exists (links followed, so a dangling link is missing), or it can be created with
/// its missing parents.
fn work_path_usable(path: &Path) -> bool {
    path.exists() || fs::create_dir_all(path).is_ok()
}

/// Whether `ASCEND_WORK_PATH` exists or creating it could succeed, without creating anything:
/// the nearest ancestor that exists, links followed, is a directory (a file or a dangling link on
/// the way makes it impossible). Used where upstream never looks at the variable (nothing is
/// converted: EXW-015's upstream entry) but the observation still names the directory the
/// options choose.
fn work_path_available(sandbox: &Path, path: &Path) -> bool {
    let mut at = Some(path);
    while let Some(p) = at {
        if fs::symlink_metadata(p).is_ok() {
            return fs::metadata(p).is_ok_and(|m| m.is_dir());
        }
        if p == sandbox {
            return false;
        }
        at = p.parent();
    }
    false
}

/// Writes `bytes` to `dir/name` under its final name, as upstream does (WGT-004's upstream
/// entry): created or truncated, and through a link planted at the name, whose target gets the
/// bytes (WGT-007's upstream entry).
fn write_in_place(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Writes `bytes` to `dir/name` under a temporary name first, then renames it, so the final name
/// never holds a truncated file; the temporary file is removed on failure (WGT-004).
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.partial"));
    if let Ok(meta) = fs::symlink_metadata(&tmp) {
        if meta.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is in the way (a directory)",
                tmp.display()
            )));
        }
        fs::remove_file(&tmp)?;
    }
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Lists `dir` and everything under it without following links, deepest entries first.
fn collect_tree(
    dir: &Path,
    rel: &str,
    out: &mut Vec<(PathBuf, String, bool)>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = format!("{rel}/{name}");
        // symlink_metadata: a link is an entry of its own, never the thing it points at.
        let is_dir = fs::symlink_metadata(&path)?.is_dir();
        if is_dir {
            collect_tree(&path, &child, out)?;
        }
        out.push((path, child, is_dir));
    }
    Ok(())
}

/// Removes the temporary weight directory: links are removed as links, nothing outside the
/// directory is touched. Returns the sandbox-relative paths removed.
fn remove_tmp_dir(sandbox: &Path, parts: &[String], errors: &mut Vec<Diagnostic>) -> Vec<String> {
    let path = on_disk(sandbox, parts);
    let rel = show(parts);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => {}
        // Missing, a file or a link: not ours to remove.
        _ => return Vec::new(),
    }
    let mut entries = Vec::new();
    if let Err(e) = collect_tree(&path, &rel, &mut entries) {
        errors.push(
            Diagnostic::new("WGT-008", format!("cannot list {rel} for removal: {e}"))
                .subject(Subject::path(rel)),
        );
        return Vec::new();
    }
    let mut removed = Vec::new();
    for (p, r, is_dir) in entries {
        let result = if is_dir {
            fs::remove_dir(&p)
        } else {
            fs::remove_file(&p)
        };
        match result {
            Ok(()) => removed.push(r),
            Err(e) => errors.push(
                Diagnostic::new("WGT-008", format!("cannot remove {r}: {e}"))
                    .subject(Subject::path(r)),
            ),
        }
    }
    match fs::remove_dir(&path) {
        Ok(()) => removed.push(rel),
        Err(e) => errors.push(
            Diagnostic::new("WGT-008", format!("cannot remove {rel}: {e}"))
                .subject(Subject::path(rel)),
        ),
    }
    removed.sort();
    removed
}

/// Loads (and maybe unloads) a model with external weights inside `sandbox`, under `profile`.
/// Never panics; every problem is a diagnostic in the observation.
pub fn load(
    profile: Profile,
    scenario: &WeightsScenario,
    sandbox: &Path,
) -> Answer<WeightsObservation> {
    let mut obs = run(profile, scenario, sandbox);
    obs.canonicalize();
    Ok(obs)
}

/// The option context of a weights scenario: the options it reads do not depend on the graph's
/// counts, shape, run mode or product.
pub fn context() -> Context {
    Context {
        inputs: None,
        outputs: None,
        shape: ShapeKind::Static,
        run_mode: RunMode::Async,
        product: Product::default(),
    }
}

fn run(profile: Profile, scenario: &WeightsScenario, sandbox: &Path) -> WeightsObservation {
    let mut obs = WeightsObservation::default();
    let resolution = options::resolve(profile, &scenario.options, context());
    obs.warnings = resolution.observation.warnings.clone();
    obs.errors = resolution.observation.errors.clone();
    let checked = check_scenario(scenario, &mut obs.errors);
    let values = &resolution.values;
    let user_dir = values
        .external_weight_dir
        .as_deref()
        .filter(|d| !d.is_empty());
    let Some((work, weights)) = checked else {
        return obs;
    };
    let Ok(user_parts) = user_dir_parts(user_dir, values.external_weight, &work, &mut obs) else {
        return obs;
    };
    if !obs.errors.is_empty() {
        // An option was rejected: the load is refused and nothing is written (WGT-009).
        return obs;
    }
    let mode = values.external_weight;
    if mode == 0 {
        obs.nodes = weights.iter().map(kept).collect();
        return obs;
    }
    let g = &scenario.root_graph;
    if let Some(unusable) = unusable_root_graph(profile, mode, g) {
        obs.errors.push(unusable);
        return obs;
    }
    // EXW-015 upstream: with nothing to convert GE returns before it makes its weight manager,
    // so it neither creates the directory nor reads (or creates) ASCEND_WORK_PATH.
    let converting = weights.iter().any(|w| converts(profile, &w.bytes));
    let (dir, tier) = flush_dir(profile, scenario, sandbox, user_parts, &work, converting);
    if !converting && profile == Profile::Upstream {
        obs.dir = show(&dir);
        obs.nodes = weights.iter().map(kept).collect();
        return obs;
    }
    let combined = if mode == 2 {
        let Some(parts) = combined_path(profile, &dir, g) else {
            // WGT-002 upstream: GE would write there; the suite never lets a load write
            // outside its sandbox (WGT-001), so such a name is a scenario error.
            obs.errors.push(scenario_error(
                Subject::part(Part::RootGraph),
                format!("root graph name {g:?} puts the combined file outside the sandbox"),
            ));
            return obs;
        };
        parts
    } else {
        Vec::new()
    };
    obs.dir = show(&dir);
    let dir_path = on_disk(sandbox, &dir);
    let place = Place {
        profile,
        dir: &dir,
        dir_path: &dir_path,
        combined: &combined,
        sandbox,
    };
    let loaded = create_dir_and_write(&place, tier, mode, &weights, &mut obs);
    if !loaded {
        obs.nodes.clear();
    }
    if scenario.unload && tier == Tier::Temporary && unload_removes_tmp_dir(profile) {
        obs.removed = remove_tmp_dir(sandbox, &dir, &mut obs.errors);
    }
    obs
}

/// Creates the weight directory (WGT-008 when it cannot be made) and writes the weights into
/// it; whether the load went through.
fn create_dir_and_write(
    place: &Place,
    tier: Tier,
    mode: u8,
    weights: &[Weight],
    obs: &mut WeightsObservation,
) -> bool {
    match create_dir(place.profile, place.sandbox, place.dir, tier) {
        Err(e) => {
            obs.errors.push(
                Diagnostic::new(
                    "WGT-008",
                    format!(
                        "cannot create the weight directory {}: {e}",
                        show(place.dir)
                    ),
                )
                .subject(Subject::path(show(place.dir))),
            );
            false
        }
        Ok(()) => write_weights(place, mode, weights, obs),
    }
}

/// WGT-001: the user's directory, resolved against the working directory `work`, must stay
/// inside the sandbox too (an absolute path would make the case depend on this machine): its
/// parts, `None` without one, or `Err` with the error in `obs` when it leaves the sandbox and
/// the mode would flush to it.
fn user_dir_parts(
    user_dir: Option<&str>,
    mode: u8,
    work: &[String],
    obs: &mut WeightsObservation,
) -> Result<Option<Vec<String>>, ()> {
    match user_dir.map(|d| (d, resolve_in_sandbox(work, d))) {
        Some((d, None)) if mode != 0 => {
            obs.errors.push(
                scenario_error(
                    Subject::part(Part::ExternalWeightDir),
                    format!("ge.externalWeightDir {d:?} is absolute or leaves the sandbox"),
                )
                .key("ge.externalWeightDir"),
            );
            Err(())
        }
        Some((_, parts)) => Ok(parts),
        None => Ok(None),
    }
}

/// WGT-002: in mode 2 the root graph's name must be usable as part of a file name. Upstream
/// takes the name as it is (WGT-002's upstream entry); a NUL cannot reach a file name under
/// either profile.
fn unusable_root_graph(profile: Profile, mode: u8, g: &str) -> Option<Diagnostic> {
    let unusable = match profile {
        Profile::Documented => g.is_empty() || g == "." || g == ".." || g.contains('/'),
        Profile::Upstream => false,
    };
    (mode == 2 && (unusable || g.contains('\0'))).then(|| {
        Diagnostic::new(
            "WGT-002",
            format!("root graph name {g:?} cannot be part of a file name"),
        )
        .subject(Subject::part(Part::RootGraph))
    })
}

/// The flush-path priority (EWD-010, EXW-016, EXW-017): the weight directory's parts and its
/// tier. An empty ASCEND_WORK_PATH counts as unset (EXW-018).
fn flush_dir(
    profile: Profile,
    scenario: &WeightsScenario,
    sandbox: &Path,
    user_parts: Option<Vec<String>>,
    work: &[String],
    converting: bool,
) -> (Vec<String>, Tier) {
    let tmp_name = tmp_dir_name(scenario.pid, scenario.session_id);
    match (user_parts, &scenario.ascend_work_path) {
        (Some(parts), _) => (parts, Tier::User),
        (None, WorkPathEnv::Set { path }) => {
            let mut parts = resolve_in_sandbox(&[], path).unwrap_or_default();
            // EXW-022: upstream creates a missing ASCEND_WORK_PATH itself and, when it
            // cannot, flushes under the working directory instead; the documented profile
            // keeps the path, and the load fails when the directory cannot be made (WGT-008).
            let at = on_disk(sandbox, &parts);
            let usable = if converting {
                work_path_usable(&at)
            } else {
                work_path_available(sandbox, &at)
            };
            if profile == Profile::Upstream && !usable {
                parts = work.to_vec();
            }
            parts.push(tmp_name);
            (parts, Tier::Temporary)
        }
        (None, WorkPathEnv::Unset | WorkPathEnv::Empty) => {
            let mut parts = work.to_vec();
            parts.push(tmp_name);
            (parts, Tier::Temporary)
        }
    }
}

/// Where a load writes: the profile, the weight directory (sandbox-relative and on disk), the
/// combined file's sandbox-relative parts (mode 2) and the sandbox.
struct Place<'a> {
    profile: Profile,
    dir: &'a [String],
    dir_path: &'a Path,
    combined: &'a [String],
    sandbox: &'a Path,
}

/// Writes the files of mode 1 or 2 and fills `files` and `nodes`; false on a write failure.
///
/// Under upstream, a load that converts at least one constant also keeps [`META_FILE`] at the
/// top of the directory (EXW-011's, EXW-014's and WGT-011's upstream entries): it is created
/// empty, when missing, before any weight is written, and holds the index once every weight
/// is, so a write failing midway leaves it empty, as GE leaves the file it opened.
fn write_weights(
    place: &Place,
    mode: u8,
    weights: &[Weight],
    obs: &mut WeightsObservation,
) -> bool {
    let profile = place.profile;
    let keeps_meta =
        profile == Profile::Upstream && weights.iter().any(|w| converts(profile, &w.bytes));
    if !keeps_meta {
        return write_weight_files(place, mode, weights, obs);
    }
    let rel = join(place.dir, META_FILE);
    let created = match open_meta(&place.dir_path.join(META_FILE)) {
        Ok(created) => created,
        Err(e) => {
            obs.errors.push(
                Diagnostic::new("WGT-008", format!("cannot open {rel}: {e}"))
                    .subject(Subject::path(rel)),
            );
            return false;
        }
    };
    if !write_weight_files(place, mode, weights, obs) {
        if created {
            // Left as it was opened, empty; it exists, so it is listed (WGT-005).
            obs.files.push(WrittenFile {
                path: rel,
                len: 0,
                sha256: sha256_hex(&[]),
            });
        }
        return false;
    }
    let index = meta_index(profile, weights, place.dir, obs);
    let mut parts = place.dir.to_vec();
    parts.push(META_FILE.to_owned());
    write_listed(place, &parts, &index, obs)
}

/// Writes `bytes` to the file at the sandbox-relative `parts` and lists it in the observation;
/// a failure is a WGT-008 error naming it. True when the file was written. The documented
/// profile writes under a temporary name and renames (WGT-004); upstream writes in place.
fn write_listed(
    place: &Place,
    parts: &[String],
    bytes: &[u8],
    obs: &mut WeightsObservation,
) -> bool {
    let rel = show(parts);
    let path = on_disk(place.sandbox, parts);
    let done = match (place.profile, path.parent(), path.file_name()) {
        (Profile::Documented, Some(dir), Some(name)) => {
            write_atomic(dir, &name.to_string_lossy(), bytes)
        }
        _ => write_in_place(&path, bytes),
    };
    match done {
        Ok(()) => {
            obs.files.push(WrittenFile {
                path: rel,
                len: bytes.len() as u64,
                sha256: sha256_hex(bytes),
            });
            true
        }
        Err(e) => {
            obs.errors.push(
                Diagnostic::new("WGT-008", format!("cannot write {rel}: {e}"))
                    .subject(Subject::path(rel)),
            );
            false
        }
    }
}

/// Makes sure the index file at `path` exists as a regular file, creating it empty when
/// missing; true when it was created. A directory or a link in its place is refused, so that
/// nothing is ever written through it (WGT-008).
fn open_meta(path: &Path) -> std::io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(false),
        Ok(_) => Err(std::io::Error::other(
            "it exists and is not a regular file (a directory or a link)",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            Ok(true)
        }
        Err(e) => Err(e),
    }
}

/// The reference's own index of a load's weights: for each hash (as upstream spells it), the
/// file (its name in the directory) and the offset where that weight lies, in JSON. GE keeps
/// a serialisation of its own there; no clause states the content, so it is never judged.
fn meta_index(
    profile: Profile,
    weights: &[Weight],
    dir: &[String],
    obs: &WeightsObservation,
) -> Vec<u8> {
    let placed: BTreeMap<&str, (&str, u64)> = obs
        .nodes
        .iter()
        .filter_map(|n| Some((n.name.as_str(), (n.file.as_deref()?, n.offset?))))
        .collect();
    let prefix = join(dir, "");
    let mut index = serde_json::Map::new();
    for w in weights.iter().filter(|w| converts(profile, &w.bytes)) {
        let name = converted_node_name(profile, &w.name, &w.bytes);
        if let Some(&(file, offset)) = placed.get(name.as_str()) {
            let file = file.strip_prefix(&prefix).unwrap_or(file);
            index
                .entry(upstream_hash(&w.bytes))
                .or_insert_with(|| serde_json::json!({ "file": file, "offset": offset }));
        }
    }
    let mut text = serde_json::Value::Object(index).to_string();
    text.push('\n');
    text.into_bytes()
}

/// [`write_weights`] without the index: the weight files alone.
///
/// Mode 1 writes one file per distinct weight. The documented profile stops at the first that
/// fails; upstream writes them all from a thread pool that runs every queued write before the
/// load returns, so a failure leaves every other weight's file complete (WGT-004's upstream
/// entry), each failed write reporting its own error.
fn write_weight_files(
    place: &Place,
    mode: u8,
    weights: &[Weight],
    obs: &mut WeightsObservation,
) -> bool {
    if mode == 1 {
        write_own_files(place, weights, obs)
    } else {
        write_combined_file(place, weights, obs)
    }
}

/// Mode 1: one file per distinct weight, named after its hash (EXW-011); whether the load
/// went through.
fn write_own_files(place: &Place, weights: &[Weight], obs: &mut WeightsObservation) -> bool {
    let profile = place.profile;
    let dir = place.dir;
    let mut done = BTreeSet::new();
    let mut failed = false;
    for w in weights {
        if !converts(profile, &w.bytes) {
            obs.nodes.push(kept(w));
            continue;
        }
        let name = weight_file_name(profile, &w.bytes);
        if done.insert(name.clone()) {
            let mut parts = dir.to_vec();
            parts.push(name.clone());
            if !write_listed(place, &parts, &w.bytes, obs) {
                failed = true;
                if profile == Profile::Documented {
                    return false;
                }
            }
        }
        obs.nodes.push(NodeConversion {
            name: converted_node_name(profile, &w.name, &w.bytes),
            node_type: NodeType::FileConstant,
            file: Some(join(dir, &name)),
            offset: Some(0),
            length: Some(w.bytes.len() as u64),
        });
    }
    !failed
}

/// Mode 2: every converted weight in one combined file (EXW-014); whether the load went
/// through.
fn write_combined_file(place: &Place, weights: &[Weight], obs: &mut WeightsObservation) -> bool {
    let profile = place.profile;
    let (weights, left): (Vec<&Weight>, Vec<&Weight>) =
        weights.iter().partition(|w| converts(profile, &w.bytes));
    obs.nodes.extend(left.into_iter().map(kept));
    let views: Vec<(&str, &[u8])> = weights
        .iter()
        .map(|w| (w.name.as_str(), w.bytes.as_slice()))
        .collect();
    let padded = combined_layout(profile, &views);
    let Some((offsets, end)) = padded else {
        obs.errors.push(
            Diagnostic::new("WGT-002", "the combined file would be too large")
                .subject(Subject::part(Part::Constants)),
        );
        return false;
    };
    if weights.is_empty() {
        // No constant, no file: there is nothing to combine.
        return true;
    }
    let Ok(len) = usize::try_from(end) else {
        obs.errors.push(
            Diagnostic::new("WGT-002", "the combined file would be too large")
                .subject(Subject::part(Part::Constants)),
        );
        return false;
    };
    let mut buffer = vec![0u8; len];
    for (w, &at) in weights.iter().zip(&offsets) {
        // In range: the layout placed every weight below `end`.
        let at = at as usize;
        buffer[at..at + w.bytes.len()].copy_from_slice(&w.bytes);
    }
    let rel = show(place.combined);
    let written = match profile {
        // EXW-015 upstream: GE opens the combined file for appending (through a link planted at
        // its name, WGT-007's upstream entry; its parent is never created), so a regular file
        // already there is kept and the weights go after its end.
        Profile::Upstream => append(&on_disk(place.sandbox, place.combined), &buffer),
        Profile::Documented => {
            if write_listed(place, place.combined, &buffer, obs) {
                Ok(0)
            } else {
                return false;
            }
        }
    };
    let base = match written {
        Ok(base) => base,
        Err(e) => {
            obs.errors.push(
                Diagnostic::new("WGT-008", format!("cannot write {rel}: {e}"))
                    .subject(Subject::path(rel)),
            );
            return false;
        }
    };
    if profile == Profile::Upstream {
        // Listed with what the file holds now: what was there, then the weights.
        let all = fs::read(on_disk(place.sandbox, place.combined)).unwrap_or_default();
        obs.files.push(WrittenFile {
            path: rel.clone(),
            len: all.len() as u64,
            sha256: sha256_hex(&all),
        });
    }
    for (w, &at) in weights.iter().zip(&offsets) {
        obs.nodes.push(NodeConversion {
            name: converted_node_name(profile, &w.name, &w.bytes),
            node_type: NodeType::FileConstant,
            file: Some(rel.clone()),
            offset: Some(base + at),
            length: Some(w.bytes.len() as u64),
        });
    }
    true
}

/// Appends `bytes` to the file at `path`, creating it when missing (its directory is not
/// created); returns the length it had before.
fn append(path: &Path, bytes: &[u8]) -> std::io::Result<u64> {
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    let base = file.metadata()?.len();
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(base)
}
