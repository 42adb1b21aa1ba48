//! The scenario's setup laid out in the sandbox before the engine runs, and what the judge reads back of it.

use super::*;

/// What a backend wrote beside its sandbox (through `..`), in the private directory holding
/// it, or left in the places the harness watches for it (the `confine` module): a WGT-007
/// violation each, since nothing outside the chosen directory may be created. A write beside
/// the sandbox, or anywhere beneath the sandbox root outside the backend's own `$TMPDIR` and
/// `$HOME` (its scratch area), also breaks the harness's own safety rule ([`SANDBOX_RULE`]),
/// which fails at every level; what is left in the scratch area is WGT-007's alone.
pub fn beside(sandbox: &crate::sandbox::Sandbox) -> Vec<Violation> {
    let beside = sandbox
        .written_beside()
        .into_iter()
        .map(|name| format!("../{name} was written beside the sandbox, outside it"));
    let (scratch, elsewhere): (Vec<String>, Vec<String>) = sandbox
        .written_outside()
        .into_iter()
        .partition(|name| crate::sandbox::in_scratch(name));
    let elsewhere = elsewhere.into_iter().map(|name| {
        format!("{name} was written beneath the sandbox root, outside the sandbox and the backend's own directories")
    });
    let unsafe_writes = beside.chain(elsewhere).flat_map(|what| {
        [
            Violation::new(
                SANDBOX_RULE,
                format_args!("the harness's safety rule: {what}"),
            ),
            Violation::new("WGT-007", what),
        ]
    });
    let watched = scratch.into_iter().map(|name| {
        Violation::new(
            "WGT-007",
            format_args!("{name} was left in the backend's own directory, outside the sandbox"),
        )
    });
    unsafe_writes.chain(watched).collect()
}

/// What the setup steps leave in the sandbox: path -> entry (parents included).
pub(super) fn planted(scenario: &WeightsScenario, sandbox: &Path) -> BTreeMap<String, Entry> {
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
pub(super) fn planted_file(scenario: &WeightsScenario, path: &str) -> Option<Vec<u8>> {
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
pub(super) fn wrong_dir(
    scenario: &WeightsScenario,
    tier: Tier,
    dir: &str,
    found: &str,
) -> Violation {
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
        format_args!("the weight directory must be {dir}, found {found:?}"),
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
pub(super) fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
pub(super) fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "symbolic links are only planted on unix",
    ))
}
