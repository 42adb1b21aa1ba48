//! Report bundles: `certify --out DIR` writes the reports plus a manifest of SHA-256 digests;
//! `verify DIR` checks a bundle offline. The manifest gives integrity (nothing changed, missing
//! or added since it was written), not authenticity: sign the manifest to prove who wrote it.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ge_spec::Spec;
use sha2::{Digest, Sha256};

use crate::report::{self, Report};

/// The manifest's file name inside a bundle.
pub const MANIFEST: &str = "MANIFEST.sha256";

/// The report files of a bundle. Beside them a bundle holds the pictures of its failures,
/// `picture-NNN.svg` ([`crate::report::is_picture_file`]), each named by its trial in
/// `report.json`, linked from `report.md` and inlined in `report.html`.
pub const FILES: [&str; 5] = [
    "report.json",
    "report.md",
    "report.xml",
    "report.txt",
    "report.html",
];

/// The largest file `verify` reads from a bundle: a bundle is untrusted input.
pub const MAX_BUNDLE_FILE: u64 = 64 << 20;

/// The most bytes all the files of a bundle may hold together: `verify` refuses a larger one
/// before reading any file (a report of the suite's own is a few megabytes: messages, problems
/// and pictures are capped).
pub const MAX_BUNDLE: u64 = 128 << 20;

/// Reads a file of an untrusted bundle: a regular file only (a link, FIFO, device or socket is
/// refused without being opened; the file is opened without following links and without
/// blocking, then checked again), at most [`MAX_BUNDLE_FILE`] bytes.
fn read_untrusted(path: &Path) -> Result<Vec<u8>, String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("is not a regular file (a link, directory, FIFO or device)".to_owned());
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    let file = options.open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("is not a regular file".to_owned());
    }
    crate::input::read_capped(file, MAX_BUNDLE_FILE, &path.display().to_string())
        .map_err(|e| e.to_string())
}

/// A problem with a bundle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        message: String,
    },
    /// The bundle does not check out; every finding is listed, each on one line with what a
    /// terminal would read as a control written as an escape (findings name the files of an
    /// untrusted directory).
    #[error("bundle does not verify:\n{}", .0.iter().map(|f| format!("  - {}", crate::input::one_line(f, crate::input::MAX_TEXT))).collect::<Vec<_>>().join("\n"))]
    Tampered(Vec<String>),
}

fn io(path: &Path, e: std::io::Error) -> BundleError {
    BundleError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What `dir` holds now, as far as writing a bundle there is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Destination {
    /// Nothing there yet.
    Missing,
    /// An empty directory.
    Empty,
    /// An earlier bundle: report files and a manifest, nothing else.
    Bundle,
}

/// Says whether a bundle may be written into `dir`: a new or empty directory, or an earlier
/// bundle when `force` is set. A link, a file, or a directory holding anything else is refused,
/// so a bundle never overwrites a user's files or writes through a planted link.
pub fn check_destination(dir: &Path, force: bool) -> Result<(), BundleError> {
    match destination(dir, force)? {
        // A directory to be made: its nearest existing ancestor must take a new directory,
        // found now rather than after the whole run.
        Destination::Missing => writable_ancestor(dir),
        _ => Ok(()),
    }
}

/// Removes the bundle an earlier run left in `dir` (a directory holding a bundle and nothing
/// else): `true` when there was one. Anything else there is left alone.
pub fn discard(dir: &Path) -> Result<bool, BundleError> {
    match destination(dir, true)? {
        Destination::Bundle => fs::remove_dir_all(dir)
            .map(|()| true)
            .map_err(|e| io(dir, e)),
        _ => Ok(false),
    }
}

/// Whether a directory can be made where `dir` would go: a test directory is made (and
/// removed) in its nearest existing ancestor.
fn writable_ancestor(dir: &Path) -> Result<(), BundleError> {
    let absolute = std::path::absolute(dir).map_err(|e| io(dir, e))?;
    let Some(ancestor) = absolute.ancestors().skip(1).find(|a| a.exists()) else {
        return Ok(());
    };
    tempfile::Builder::new()
        .prefix(".ge-conformance-probe-")
        .tempdir_in(ancestor)
        .map(drop)
        .map_err(|e| BundleError::Io {
            path: dir.display().to_string(),
            message: format!(
                "cannot be made: {} does not take a new directory ({e})",
                ancestor.display()
            ),
        })
}

fn destination(dir: &Path, force: bool) -> Result<Destination, BundleError> {
    let refuse = |why: &str| BundleError::Io {
        path: dir.display().to_string(),
        message: why.to_owned(),
    };
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Destination::Missing),
        Err(e) => return Err(io(dir, e)),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(
            "is a symbolic link; a bundle is written into a real directory only",
        ));
    }
    if !meta.is_dir() {
        return Err(refuse("exists and is not a directory"));
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        let ours = name == MANIFEST
            || FILES.contains(&name.as_str())
            || crate::report::is_picture_file(&name);
        if !regular || !ours {
            return Err(refuse(&format!(
                "holds `{name}`, which is not part of a report bundle; give a new or empty directory"
            )));
        }
        names.push(name);
    }
    if names.is_empty() {
        return Ok(Destination::Empty);
    }
    if !force {
        return Err(refuse(
            "holds an earlier report bundle; pass --force to replace it",
        ));
    }
    Ok(Destination::Bundle)
}

/// Writes `report` as a bundle into `dir`: a new or empty directory, or, with `force`, one
/// holding an earlier bundle (see [`check_destination`]). The files are written into a fresh
/// directory beside `dir`, each created new, and that directory is renamed into place: a run
/// that stops half-way leaves no half bundle, and two runs writing to the same place never mix
/// their files (the later one is refused, or, with `force`, replaces the earlier one whole).
pub fn write(report: &Report, dir: &Path, force: bool) -> Result<(), BundleError> {
    let found = destination(dir, force)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|e| io(&parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".ge-conformance-bundle-")
        .tempdir_in(&parent)
        .map_err(|e| io(&parent, e))?;
    let contents = [
        report.to_json(),
        report.to_markdown(),
        report.to_junit(),
        report.to_text(),
        report.to_html(),
    ];
    let pictures = report
        .pictures
        .iter()
        .filter(|(name, _)| crate::report::is_picture_file(name))
        .map(|(name, svg)| (name.as_str(), svg.clone()));
    let mut manifest = String::new();
    for (name, text) in FILES.iter().copied().zip(contents).chain(pictures) {
        create_new(&staging.path().join(name), text.as_bytes())?;
        manifest.push_str(&format!("{}  {name}\n", sha256_hex(text.as_bytes())));
    }
    create_new(&staging.path().join(MANIFEST), manifest.as_bytes())?;
    let raced = |e: std::io::Error| BundleError::Io {
        path: dir.display().to_string(),
        message: format!("another run wrote here at the same time ({e}); nothing was written"),
    };
    match found {
        // rename(2) puts a directory in place of nothing, or of an empty directory, at once.
        Destination::Missing | Destination::Empty => {
            fs::rename(staging.path(), dir).map_err(raced)?;
        }
        Destination::Bundle => {
            let old = tempfile::Builder::new()
                .prefix(".ge-conformance-replaced-")
                .tempdir_in(&parent)
                .map_err(|e| io(&parent, e))?;
            let aside = old.path().join("bundle");
            fs::rename(dir, &aside).map_err(raced)?;
            fs::rename(staging.path(), dir).map_err(raced)?;
        }
    }
    // The staging directory is the bundle now: nothing is left to remove under its old name.
    let _ = staging.keep();
    Ok(())
}

/// Creates `path`, which must not exist (no link is followed), with `bytes`.
fn create_new(path: &Path, bytes: &[u8]) -> Result<(), BundleError> {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io(path, e))
}

/// Verifies a bundle: every file listed with the right digest, nothing missing or extra, and a
/// report made against this suite's spec tables. Returns the report on success.
pub fn verify(dir: &Path) -> Result<Report, BundleError> {
    let manifest_path = dir.join(MANIFEST);
    let manifest = read_untrusted(&manifest_path).map_err(|message| BundleError::Io {
        path: manifest_path.display().to_string(),
        message,
    })?;
    let (listed, mut findings) = parse_manifest(&String::from_utf8_lossy(&manifest));
    for name in FILES {
        if !listed.contains_key(name) {
            findings.push(format!("{name} is not in the manifest"));
        }
    }
    // Sizes first: a bundle whose files add up past the cap is refused before any is read,
    // so that verifying costs bounded memory whatever the directory holds (sparse files).
    if let Some(why) = too_large(dir, listed.keys()) {
        findings.push(why);
        return Err(BundleError::Tampered(findings));
    }
    let mut read = BTreeMap::new();
    for (name, digest) in &listed {
        let path = dir.join(name);
        match read_untrusted(&path) {
            Ok(bytes) if sha256_hex(&bytes) == *digest => {
                read.insert(name.clone(), bytes);
            }
            Ok(_) => findings.push(format!(
                "{name} was changed (digest differs from the manifest)"
            )),
            Err(_) if fs::symlink_metadata(&path).is_err() => {
                findings.push(format!("{name} is missing"));
            }
            Err(why) => findings.push(format!("{name}: {why}")),
        }
    }
    let entries = fs::read_dir(dir).map_err(|e| io(dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != MANIFEST && !listed.contains_key(&name) {
            findings.push(format!("{name} is not in the manifest (extra file)"));
        }
    }
    let mut report: Option<Report> = read
        .get("report.json")
        .and_then(|bytes| serde_json::from_slice(bytes).ok());
    if let Some(r) = &mut report {
        for (name, bytes) in read
            .iter()
            .filter(|(n, _)| crate::report::is_picture_file(n))
        {
            match String::from_utf8(bytes.clone()) {
                Ok(svg) => {
                    r.pictures.insert(name.clone(), svg);
                }
                Err(_) => findings.push(format!("{name} is not UTF-8 text")),
            }
        }
    }
    match &report {
        None => findings.push("report.json is not a readable report".to_owned()),
        Some(r) if r.meta.spec_digest != Spec::embedded().digest() => findings.push(format!(
            "report.json was made against spec tables {}, this suite has {}",
            r.meta.spec_digest,
            Spec::embedded().digest()
        )),
        Some(r) => findings.extend(recheck(r, &read)),
    }
    match (findings.is_empty(), report) {
        (true, Some(r)) => Ok(r),
        _ => Err(BundleError::Tampered(findings)),
    }
}

/// The files a manifest lists, by name, with their digests, and what is wrong with its lines.
fn parse_manifest(manifest: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut findings = Vec::new();
    let mut listed = BTreeMap::new();
    for (n, line) in manifest.lines().enumerate() {
        match line.split_once("  ") {
            Some((digest, name))
                if digest.len() == 64 && !name.contains('/') && !name.contains('\\') =>
            {
                if listed.insert(name.to_owned(), digest.to_owned()).is_some() {
                    findings.push(format!("{MANIFEST} line {}: {name} listed twice", n + 1));
                }
            }
            _ => findings.push(format!("{MANIFEST} line {}: not `<sha256>  <file>`", n + 1)),
        }
    }
    (listed, findings)
}

/// Why the regular files `names` of `dir` are too large to verify together, if they are.
fn too_large<'n>(dir: &Path, names: impl Iterator<Item = &'n String>) -> Option<String> {
    let total: u64 = names
        .filter_map(|name| fs::symlink_metadata(dir.join(name)).ok())
        .filter(|m| m.file_type().is_file())
        .map(|m| m.len())
        .sum();
    (total > MAX_BUNDLE).then(|| {
        format!(
            "its files hold {total} bytes together, more than the {MAX_BUNDLE} a bundle may hold"
        )
    })
}

/// The suite's trials an unfiltered report leaves out: every case of the tables under the
/// report's profile and every property is a trial of a whole run (one of a capability the
/// engine does not declare is listed as not supported), so a bundle whose failing trials were
/// dropped does not verify.
fn missing_trials(r: &Report) -> Option<String> {
    if r.meta.filter.is_some() {
        return None;
    }
    let listed: std::collections::BTreeSet<&str> =
        r.trials.iter().map(|t| t.name.as_str()).collect();
    let missing: Vec<String> = crate::certify::trial_names(Spec::embedded(), r.meta.profile)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !listed.contains(name.as_str()))
        .collect();
    let first = missing.first()?;
    Some(format!(
        "report.json lists no trial {first}{}: an unfiltered run lists every trial of the suite",
        match missing.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        }
    ))
}

/// What a report must say given its own trials: the totals and summaries add up, the verdict
/// follows from them (a filtered run is never a certification), and the text, Markdown and
/// JUnit files are renderings of the same report. A manifest recomputed after an edit does not
/// hide a verdict that does not follow.
fn recheck(r: &Report, read: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut findings = Vec::new();
    let (totals, clauses, options) = report::tallies(&r.trials);
    if r.totals != totals {
        findings.push(format!(
            "report.json's totals ({} passed, {} failed) are not what its trials add up to ({} passed, {} failed)",
            r.totals.passed, r.totals.failed, totals.passed, totals.failed
        ));
    }
    if r.clauses != clauses || r.options != options {
        findings.push(
            "report.json's per-clause or per-option tallies are not those of its trials".into(),
        );
    }
    findings.extend(missing_trials(r));
    let verdict = report::standing(&r.meta, &r.trials, &r.expired_waivers);
    if r.verdict != verdict || r.certified != verdict.is_certified() {
        findings.push(format!(
            "report.json says {:?} (certified: {}), but its trials make it {:?}",
            r.verdict, r.certified, verdict
        ));
    }
    let named: std::collections::BTreeSet<&str> = r
        .trials
        .iter()
        .filter_map(|t| t.picture.as_deref())
        .collect();
    for name in &named {
        if !crate::report::is_picture_file(name) {
            findings.push(format!(
                "report.json names picture `{name}`, which is not a picture file name"
            ));
        } else if !read.contains_key(*name) {
            findings.push(format!(
                "report.json names picture {name}, which the bundle does not hold"
            ));
        }
    }
    for name in read.keys().filter(|n| !FILES.contains(&n.as_str())) {
        if !named.contains(name.as_str()) {
            findings.push(format!(
                "{name} is listed in the manifest but no trial of report.json names it"
            ));
        }
    }
    for (name, rendered) in [
        ("report.txt", r.to_text()),
        ("report.md", r.to_markdown()),
        ("report.xml", r.to_junit()),
        ("report.html", r.to_html()),
    ] {
        match read.get(name) {
            Some(bytes) if bytes == rendered.as_bytes() => {}
            Some(_) => findings.push(format!("{name} does not say what report.json says")),
            // Reported with the manifest check.
            None => {}
        }
    }
    findings
}
