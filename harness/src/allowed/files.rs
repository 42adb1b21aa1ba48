//! How an allowed engine writes weight files: other names, another layout of the combined
//! file, no sharing, an empty combined file, and missing directories handled otherwise. Every
//! rewrite changes the files on disk and the answer together, so the answer stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use ge_reference::Reference;
use ge_spec::vocab::weights::{
    resolve_in_sandbox, WeightsObservation, WeightsScenario, WorkPathEnv, WrittenFile,
};
use ge_spec::{Answer, Backend, Diagnostic, Profile, Subject};

use super::Rewrite;
use crate::oracle::weights::sha;

/// The value of a session-wide option (the session map over the global one).
fn get<'a>(s: &'a WeightsScenario, key: &str) -> Option<&'a str> {
    s.options
        .session
        .get(key)
        .or_else(|| s.options.global.get(key))
        .map(String::as_str)
}

/// The load of `s` in `sandbox` by an engine making `picks`.
pub(super) fn load(
    picks: &BTreeSet<Rewrite>,
    s: &WeightsScenario,
    sandbox: &Path,
) -> Answer<WeightsObservation> {
    let reference = Reference::new(Profile::Documented);
    let missing = if picks.contains(&Rewrite::MissingUserDirRefused) {
        missing_user_dir(s, sandbox)
    } else {
        None
    };
    let missing = missing.or_else(|| {
        picks
            .contains(&Rewrite::MissingWorkPathRefused)
            .then(|| missing_work_path(s, sandbox).map(|(p, _)| p))
            .flatten()
    });
    if let Some(dir) = missing {
        return Ok(WeightsObservation {
            errors: vec![Diagnostic::new("", "the weight directory does not exist")
                .subject(Subject::path(dir))],
            ..WeightsObservation::default()
        });
    }
    if picks.contains(&Rewrite::UncreatableWorkPathSkipped) {
        if let Some((_, false)) = missing_work_path(s, sandbox) {
            let mut passed_over = s.clone();
            passed_over.ascend_work_path = WorkPathEnv::Unset;
            return reference.weights(&passed_over, sandbox);
        }
    }
    if picks.contains(&Rewrite::FailedLoadLeavesItsDir) && s.unload {
        let mut kept = s.clone();
        kept.unload = false;
        let o = reference.weights(&kept, sandbox)?;
        if !o.errors.is_empty() {
            return Ok(o);
        }
        // The load worked: it is loaded again and unloaded as the reference does (the
        // directory the first load made is reused, WGT-003).
    }
    let mut o = reference.weights(s, sandbox)?;
    lay_out(picks, s, sandbox, &mut o);
    Ok(o)
}

/// The files of a successful load laid out as an engine making `picks` lays them out, on disk
/// and in the answer.
fn lay_out(
    picks: &BTreeSet<Rewrite>,
    s: &WeightsScenario,
    sandbox: &Path,
    o: &mut WeightsObservation,
) {
    if !o.errors.is_empty() {
        return;
    }
    // The rewrites that rename or rewrite files work on the files the load left; after an
    // unload they are gone, and the engine names them as the reference does.
    if s.unload {
        return;
    }
    let own = picks.contains(&Rewrite::OwnFilePerConstant);
    if own {
        own_files(o, sandbox);
    }
    if own || picks.contains(&Rewrite::PackedCombinedFile) {
        pack_combined(o, sandbox, !own);
    }
    if picks.contains(&Rewrite::OtherHash) {
        other_hash(o, sandbox);
    }
    if picks.contains(&Rewrite::EmptyCombinedFile) {
        empty_combined(s, o, sandbox);
    }
}

/// Rewrites the combined file of a weights answer with its distinct weights back to back (no
/// padding), storing identical weights once (`dedup`) or each where its constant comes, on
/// disk and in the observation; an answer without a combined file on disk is left as it is.
pub fn pack_combined(obs: &mut WeightsObservation, sandbox: &Path, dedup: bool) {
    let Some(file) = obs
        .files
        .iter_mut()
        .find(|f| f.path.ends_with("_weight_combined"))
    else {
        return;
    };
    let Ok(old) = fs::read(sandbox.join(&file.path)) else {
        return;
    };
    let mut out = Vec::new();
    let mut moved: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut nodes: Vec<_> = obs.nodes.iter_mut().collect();
    nodes.sort_by_key(|n| n.offset);
    for n in nodes {
        let (Some(at), Some(len)) = (n.offset, n.length) else {
            continue;
        };
        let Some(bytes) = usize::try_from(at)
            .ok()
            .zip(usize::try_from(at.saturating_add(len)).ok())
            .and_then(|(a, b)| old.get(a..b))
        else {
            return;
        };
        let mut store = || {
            let new_at = out.len() as u64;
            out.extend_from_slice(bytes);
            new_at
        };
        let new_at = if dedup {
            *moved.entry((at, len)).or_insert_with(store)
        } else {
            store()
        };
        n.offset = Some(new_at);
    }
    if fs::write(sandbox.join(&file.path), &out).is_ok() {
        file.len = out.len() as u64;
        file.sha256 = sha(&out);
    }
}

/// Gives every mode-1 FileConstant a file of its own, `weight_` and the SHA-256 of its name and
/// of its bytes' hash, on disk (where the load left the file) and in the observation.
fn own_files(obs: &mut WeightsObservation, sandbox: &Path) {
    let mode1 = |p: &str| {
        p.rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("weight_") && n.len() == 71)
    };
    let old: BTreeMap<String, WrittenFile> = obs
        .files
        .iter()
        .filter(|f| mode1(&f.path))
        .map(|f| (f.path.clone(), f.clone()))
        .collect();
    if old.is_empty() {
        return;
    }
    let mut new_files = Vec::new();
    let mut failed = Vec::new();
    let mut renamed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in &mut obs.nodes {
        let Some(f) = n.file.as_deref().and_then(|f| old.get(f)) else {
            continue;
        };
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        let hash = sha(format!("{}\0{}", n.name, f.sha256).as_bytes());
        let path = if dir.is_empty() {
            format!("weight_{hash}")
        } else {
            format!("{dir}/weight_{hash}")
        };
        // Under a temporary name first, then renamed: a link planted at the final name is
        // replaced, never written through (WGT-004, WGT-006).
        let part = sandbox.join(format!("{path}.part"));
        let written = fs::read(sandbox.join(&f.path))
            .and_then(|bytes| fs::write(&part, bytes))
            .and_then(|()| fs::rename(&part, sandbox.join(&path)))
            .is_ok();
        if !written {
            let _ = fs::remove_file(&part);
        }
        if !written {
            failed.push(path);
            continue;
        }
        renamed
            .entry(f.path.clone())
            .or_default()
            .push(path.clone());
        new_files.push(WrittenFile {
            path: path.clone(),
            ..f.clone()
        });
        n.file = Some(path);
    }
    for path in old.keys() {
        let _ = fs::remove_file(sandbox.join(path));
    }
    obs.files.retain(|f| !old.contains_key(&f.path));
    obs.files.extend(new_files);
    obs.files.sort_by(|a, b| a.path.cmp(&b.path));
    let removed = std::mem::take(&mut obs.removed);
    for r in removed {
        match renamed.get(&r) {
            Some(paths) => obs.removed.extend(paths.iter().cloned()),
            None => obs.removed.push(r),
        }
    }
    obs.removed.sort();
    obs.removed.dedup();
    fail_writes(obs, failed);
}

/// A load some of whose files could not be written at the names the engine gave them (a trap
/// planted there): it fails, as the reference's does, naming each such path, with no node
/// converted; the files written completely stay listed.
fn fail_writes(obs: &mut WeightsObservation, failed: Vec<String>) {
    if failed.is_empty() {
        return;
    }
    obs.files.retain(|f| !failed.contains(&f.path));
    obs.nodes.clear();
    for path in failed {
        obs.errors.push(
            Diagnostic::new("", "the weight file cannot be written").subject(Subject::path(path)),
        );
    }
}

/// Renames every mode-1 file `weight_<hash>` to `weight_<hash reversed>`, on disk and in the
/// observation.
fn other_hash(obs: &mut WeightsObservation, sandbox: &Path) {
    let rename = |p: &str| match p.rsplit_once("weight_") {
        Some((dir, hash)) if hash.len() == 64 && !hash.contains('/') => {
            format!("{dir}weight_{}", hash.chars().rev().collect::<String>())
        }
        _ => p.to_owned(),
    };
    let mut failed = Vec::new();
    for f in &mut obs.files {
        let new = rename(&f.path);
        if new != f.path && fs::rename(sandbox.join(&f.path), sandbox.join(&new)).is_err() {
            // The final name is taken by something no rename replaces: the file is not
            // written, and what was written under the temporary name goes.
            let _ = fs::remove_file(sandbox.join(&f.path));
            failed.push(new.clone());
        }
        f.path = new;
    }
    for n in &mut obs.nodes {
        n.file = n.file.as_deref().map(rename);
    }
    for r in &mut obs.removed {
        *r = rename(r);
    }
    fail_writes(obs, failed);
}

/// In mode 2, when no constant was converted and so no combined file written, writes the
/// combined file empty in the directory the load chose, on disk and in the answer.
fn empty_combined(s: &WeightsScenario, o: &mut WeightsObservation, sandbox: &Path) {
    if get(s, "ge.externalWeight") != Some("2")
        || o.dir.is_empty()
        || o.files.iter().any(|f| f.path.ends_with("_weight_combined"))
    {
        return;
    }
    let name = ge_reference::weights::combined_file_name(Profile::Documented, &s.root_graph);
    let path = if o.dir == "." {
        name
    } else {
        format!("{}/{name}", o.dir)
    };
    let at = sandbox.join(&path);
    if !sandbox.join(&o.dir).is_dir() || fs::symlink_metadata(&at).is_ok() {
        return;
    }
    if fs::write(&at, b"").is_ok() {
        o.files.push(WrittenFile {
            path,
            len: 0,
            sha256: sha(b""),
        });
        o.files.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// The user's weight directory, sandbox-relative, when the scenario writes weights there
/// (`ge.externalWeight` 1 or 2) and nothing is at that path yet.
fn missing_user_dir(s: &WeightsScenario, sandbox: &Path) -> Option<String> {
    if !matches!(get(s, "ge.externalWeight"), Some("1" | "2")) {
        return None;
    }
    let dir = get(s, "ge.externalWeightDir").filter(|d| !d.is_empty())?;
    let base: Vec<String> = s
        .work_dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect();
    let parts = resolve_in_sandbox(&base, dir)?;
    let rel = parts.join("/");
    let exists = fs::symlink_metadata(sandbox.join(&rel)).is_ok();
    (!exists && !rel.is_empty()).then_some(rel)
}

/// When the scenario writes weights under ASCEND_WORK_PATH (mode 1 or 2, no
/// ge.externalWeightDir) and nothing is at that path: the path, and whether it could be
/// created (no file, link or other non-directory in the way above it).
fn missing_work_path(s: &WeightsScenario, sandbox: &Path) -> Option<(String, bool)> {
    if !matches!(get(s, "ge.externalWeight"), Some("1" | "2"))
        || get(s, "ge.externalWeightDir").is_some_and(|d| !d.is_empty())
    {
        return None;
    }
    let WorkPathEnv::Set { path } = &s.ascend_work_path else {
        return None;
    };
    let parts = resolve_in_sandbox(&[], path)?;
    if parts.is_empty() || fs::symlink_metadata(sandbox.join(parts.join("/"))).is_ok() {
        return None;
    }
    let mut creatable = true;
    for end in 1..parts.len() {
        let above = sandbox.join(parts[..end].join("/"));
        match fs::symlink_metadata(&above) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                creatable = false;
                break;
            }
            Err(_) => break,
        }
    }
    Some((parts.join("/"), creatable))
}
