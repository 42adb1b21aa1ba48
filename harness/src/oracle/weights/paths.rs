//! Where a load writes: the flush-path tiers and the directory they name, why a load must be refused, and what the scenario's setup put in the way.

use super::*;

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
pub(super) fn mode_of(values: &Values) -> u8 {
    u8::try_from(values.external_weight).unwrap_or(u8::MAX)
}

/// A constant as the scenario holds it: name, type, bytes.
pub(super) type Weight = (String, NodeType, Vec<u8>);

/// WGT-001, WGT-002, WGT-009: whether and why a load of `scenario` under `profile`, with the
/// options read as `values` (`rejected`: some option is), must be refused: the clause of the
/// first rule it breaks, in the order the load checks them: its paths (WGT-001), its model
/// (WGT-002), its options (WGT-009); then, in modes 1 and 2, the root graph's name (WGT-002),
/// the user's directory (WGT-001) and the combined file's path (WGT-001, WGT-002's upstream
/// entry). `None` when the load goes ahead.
pub(super) fn refusal(
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
pub(super) fn constants(scenario: &WeightsScenario) -> Vec<Weight> {
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
pub(super) fn flush_dir_with(
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
pub(super) fn paths_in_sandbox(scenario: &WeightsScenario) -> Result<(), &'static str> {
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
pub(super) fn well_formed_constants(
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
pub(super) fn options_accepted(rejected: bool) -> Result<(), &'static str> {
    if rejected {
        Err("WGT-009")
    } else {
        Ok(())
    }
}

/// WGT-002: in mode 2 the root graph's name makes the combined file's: documented, it is not
/// empty, `.`, `..` or holding a `/`; upstream takes any name but one with a NUL (which no file
/// name holds).
pub(super) fn usable_root_graph(profile: Profile, mode: u8, g: &str) -> Result<(), &'static str> {
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
pub(super) fn flush_dir_parts(
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
pub(super) fn combined_in_sandbox(
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
pub(super) enum Found {
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
pub(super) fn look_up(setup: &[SetupStep], parts: &[String]) -> Found {
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
pub(super) fn look_up_in(
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

pub(super) fn in_dir(dir: &str, name: &str) -> String {
    if dir == "." {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}
