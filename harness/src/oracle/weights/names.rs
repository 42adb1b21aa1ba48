//! The weights oracle's naming rules: the hash a weight file is named after, the names a profile accepts, the combined file's and the index's names.

use super::*;

/// EXW-011's, EXW-014's and WGT-011's upstream entries: where upstream must leave its index
/// file after a load in `mode` that succeeded in `dir`: at the top of the weight directory,
/// whenever at least one constant is converted (`converting`, in modes 1 and 2); `None` under
/// the documented profile, in mode 0, and when nothing is converted.
pub(super) fn meta_path(profile: Profile, dir: &str, mode: u8, converting: bool) -> Option<String> {
    (profile == Profile::Upstream && mode != 0 && converting).then(|| in_dir(dir, META))
}

/// EXW-012 (and its upstream entry): the hash a mode-1 file holding `bytes` is named after,
/// `weight_<hash>`: the SHA-256 of the bytes in zero-padded lowercase hex; upstream, each byte
/// without zero-padding ([`upstream_sha`]).
pub(super) fn weight_hash(profile: Profile, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => sha(bytes),
        Profile::Upstream => upstream_sha(bytes),
    }
}

/// The SHA-256 of `bytes` as upstream prints it: each byte as hex without zero-padding.
pub(super) fn upstream_sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:x}"))
        .collect()
}

/// The name of a constant converted to FileConstant (modes 1 and 2) under `profile`: kept
/// (documented), or `<name>_<hash>` with the hash of the weight's own bytes spelled as in
/// mode-1 file names (EXW-011's and EXW-014's upstream entries).
pub(super) fn converted_name(profile: Profile, name: &str, bytes: &[u8]) -> String {
    match profile {
        Profile::Documented => name.to_owned(),
        Profile::Upstream => format!("{name}_{}", upstream_sha(bytes)),
    }
}

/// EXW-011, EXW-014 (and their upstream entries): whether modes 1 and 2 convert a constant
/// holding `bytes` under `profile`: upstream gives an empty-tensor weight (no bytes, in the
/// vocabulary) no hash, so it is never converted and stays Const/Constant under its own name.
pub(super) fn converts(profile: Profile, bytes: &[u8]) -> bool {
    profile == Profile::Documented || !bytes.is_empty()
}

/// The name the node of constant `name` carries after a mode-1 or mode-2 load under `profile`.
pub(super) fn name_after(profile: Profile, name: &str, bytes: &[u8]) -> String {
    if converts(profile, bytes) {
        converted_name(profile, name, bytes)
    } else {
        name.to_owned()
    }
}

/// How the judge holds node names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Naming {
    /// The name the profile gives (properties, `eval --judge`, profile-bound cases).
    Strict,
    /// Either profile's name for a converted node: a case that runs under both profiles
    /// checks only what they agree on (the name is checked by profile-bound cases).
    EitherProfile,
}

/// The names under which the judge accepts the node of constant `name` in `mode`.
pub(super) fn accepted_names(
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
pub(super) fn combined_name(profile: Profile, root_graph: &str) -> String {
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
pub(super) fn combined_file(profile: Profile, dir: &str, root_graph: &str) -> Option<String> {
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
pub(super) fn landing(profile: Profile, setup: &[SetupStep], path: &str) -> String {
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
pub(super) fn follow(
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
pub(super) fn unload_removes(profile: Profile, scenario: &WeightsScenario) -> bool {
    scenario.unload && profile == Profile::Documented
}

/// The SHA-256 of `bytes` in lowercase hexadecimal, as a weights answer reports a file's.
pub(crate) fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn rel(parts: &[String]) -> String {
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// Whether `path` is `dir` or lies beneath it; compared in place, without a copy of either (a
/// 31 MB path compared with each of thousands of files cost a copy each: round eight, M1).
pub(super) fn under(path: &str, dir: &str) -> bool {
    dir == "."
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}
