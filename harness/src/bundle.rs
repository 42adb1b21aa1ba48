//! Report bundles: `certify --out DIR` writes the reports plus a manifest of SHA-256 digests;
//! `verify DIR` checks a bundle offline. The manifest gives integrity (nothing changed, missing
//! or added since it was written), not authenticity: sign the manifest to prove who wrote it.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ge_spec::Spec;
use sha2::{Digest, Sha256};

use crate::report::{self, Report, Standing};

/// The manifest's file name inside a bundle.
pub const MANIFEST: &str = "MANIFEST.sha256";

/// The report files of a bundle.
pub const FILES: [&str; 4] = ["report.json", "report.md", "report.xml", "report.txt"];

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
    /// The bundle does not check out; every finding is listed.
    #[error("bundle does not verify:\n{}", .0.iter().map(|f| format!("  - {f}")).collect::<Vec<_>>().join("\n"))]
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

/// Writes `report` as a bundle into `dir` (created if missing).
pub fn write(report: &Report, dir: &Path) -> Result<(), BundleError> {
    fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let contents = [
        report.to_json(),
        report.to_markdown(),
        report.to_junit(),
        report.to_text(),
    ];
    let mut manifest = String::new();
    for (name, text) in FILES.iter().zip(contents) {
        let path = dir.join(name);
        fs::write(&path, &text).map_err(|e| io(&path, e))?;
        manifest.push_str(&format!("{}  {name}\n", sha256_hex(text.as_bytes())));
    }
    let path = dir.join(MANIFEST);
    fs::write(&path, manifest).map_err(|e| io(&path, e))
}

/// Verifies a bundle: every file listed with the right digest, nothing missing or extra, and a
/// report made against this suite's spec tables. Returns the report on success.
pub fn verify(dir: &Path) -> Result<Report, BundleError> {
    let manifest_path = dir.join(MANIFEST);
    let manifest = fs::read_to_string(&manifest_path).map_err(|e| io(&manifest_path, e))?;
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
    for name in FILES {
        if !listed.contains_key(name) {
            findings.push(format!("{name} is not in the manifest"));
        }
    }
    for (name, digest) in &listed {
        match fs::read(dir.join(name)) {
            Ok(bytes) if sha256_hex(&bytes) == *digest => {}
            Ok(_) => findings.push(format!(
                "{name} was changed (digest differs from the manifest)"
            )),
            Err(_) => findings.push(format!("{name} is missing")),
        }
    }
    let entries = fs::read_dir(dir).map_err(|e| io(dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != MANIFEST && !listed.contains_key(&name) {
            findings.push(format!("{name} is not in the manifest (extra file)"));
        }
    }
    let report_path = dir.join("report.json");
    let report: Option<Report> = fs::read_to_string(&report_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    match &report {
        None => findings.push("report.json is not a readable report".to_owned()),
        Some(r) if r.meta.spec_digest != Spec::embedded().digest() => findings.push(format!(
            "report.json was made against spec tables {}, this suite has {}",
            r.meta.spec_digest,
            Spec::embedded().digest()
        )),
        Some(r) => findings.extend(recheck(r, dir)),
    }
    match (findings.is_empty(), report) {
        (true, Some(r)) => Ok(r),
        _ => Err(BundleError::Tampered(findings)),
    }
}

/// What a report must say given its own trials: the totals and summaries add up, the verdict
/// follows from them (a filtered run is never a certification), and the text, Markdown and
/// JUnit files are renderings of the same report. A manifest recomputed after an edit does not
/// hide a verdict that does not follow.
fn recheck(r: &Report, dir: &Path) -> Vec<String> {
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
    let verdict = report::standing(&r.meta, &r.trials, &r.expired_waivers);
    if r.verdict != verdict || r.certified != (verdict == Standing::Certified) {
        findings.push(format!(
            "report.json says {:?} (certified: {}), but its trials make it {:?}",
            r.verdict, r.certified, verdict
        ));
    }
    for (name, rendered) in [
        ("report.txt", r.to_text()),
        ("report.md", r.to_markdown()),
        ("report.xml", r.to_junit()),
    ] {
        match fs::read(dir.join(name)) {
            Ok(bytes) if bytes == rendered.as_bytes() => {}
            Ok(_) => findings.push(format!("{name} does not say what report.json says")),
            // Reported with the manifest check.
            Err(_) => {}
        }
    }
    findings
}
