//! Deliberately wrong weights backends: each wraps the reference with ONE fault the clauses
//! forbid, and the suite must catch it by the clause it breaks. The reference itself must be
//! caught by nothing.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use ge_conformance::judging::Judging;
use ge_conformance::runner::caught_clauses;
use ge_reference::Reference;
use ge_spec::vocab::weights::{
    NodeType, WeightsObservation, WeightsScenario, WorkPathEnv, WrittenFile, MAX_CONSTANTS,
    MAX_WEIGHT_BYTES,
};
use ge_spec::{Answer, Backend, Capability, Profile};
use rstest::rstest;

/// The one thing a faulty backend gets wrong.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// ASCEND_WORK_PATH wins over ge.externalWeightDir.
    TiersSwapped,
    /// ASCEND_WORK_PATH is never read.
    WorkPathIgnored,
    /// Unload leaves the tmp directory in place.
    TmpNotRemoved,
    /// Unload removes the user's ge.externalWeightDir as well.
    UserDirRemoved,
    /// Unload follows the links in the tmp directory and removes what they point at.
    SymlinkFollowed,
    /// The observation lies about the files' contents.
    LiesAboutFiles,
    /// A temporary file is left next to the weights.
    TempLeftBehind,
    /// Mode-1 file names carry only the first 16 hex digits of the hash.
    HashTruncated,
    /// Mode-1 files named with a truncated hash (as `HashTruncated`), and a file that cannot be
    /// written under that name is reported written, its node converted: a trap at the suite's
    /// name would never meet this engine, so the trap follows its names
    /// (`runner::following`).
    TruncatedNamesFailureHidden,
    /// The combined file is packed without alignment.
    Unaligned,
    /// An empty ASCEND_WORK_PATH is taken as the sandbox root rather than as unset.
    EmptyWorkPathAsRoot,
    /// A relative ge.externalWeightDir is resolved against the sandbox, not the working dir.
    DirFromWrongBase,
    /// Mode 0 writes the weights anyway, as mode 1 would.
    Mode0Writes,
    /// An invalid ge.externalWeight is taken as 1 instead of refusing the load: the value takes
    /// effect, which EXW-001 rules out (refusing, or the default in force, are both allowed).
    RejectedModeUsed,
    /// Unload does its job but reports nothing removed.
    RemovalUnreported,
    /// Unload also removes the other sessions' tmp directories next to its own.
    OtherSessionsRemoved,
    /// The first byte of every weight file is flipped; the report is honest about the result.
    CorruptWeights,
    /// A write failure is swallowed: no error is reported, so the load claims success with the
    /// constants unconverted, which breaks EXW-011 (EXW-014 in mode 2), not only the suite's
    /// report of the failure (WGT-008).
    FailureHidden,
    /// The constant cap is off by one: 10,001 constants load (as if the last were absent).
    ConstantCapOffByOne,
    /// Weights are capped one by one, not in total: a model past 64 MiB in all loads (answered
    /// as if its last constant were absent, so the test writes nothing that large).
    TotalCapIgnored,
    /// The documented behaviour with upstream's index: `meta.json` written and listed beside
    /// the weights whenever a constant is converted.
    IndexWritten,
    /// Upstream without its index: no `meta.json` beside the weights (the profile before the
    /// index was modelled).
    IndexOmitted,
    /// Upstream writing its index but leaving it out of `files`.
    IndexUnreported,
    /// Upstream writing (and listing) an index also when no constant is converted.
    IndexWhenNothingConverted,
    /// Upstream creating the weight directory when nothing is converted (the profile before
    /// EXW-015's early return was modelled).
    DirWhenNothingConverted,
    /// Upstream refusing a mode-2 root graph name of `.`, `..` or one with a `/`, as the
    /// documented profile does (WGT-002).
    GraphNameRefused,
    /// Upstream stopping at the first mode-1 write that fails, so later weights get no file
    /// (WGT-004).
    StopsAtFirstFailure,
    /// Upstream refusing a link at the temporary directory's path, as the documented profile
    /// does (WGT-008).
    TmpLinkRefused,
    /// Upstream replacing a link planted at a weight file's name instead of writing through it
    /// (WGT-007).
    WeightLinkReplaced,
}

impl Fault {
    /// The profile whose reference the faulty backend wraps (and is judged under).
    fn profile(self) -> Profile {
        match self {
            Fault::IndexOmitted
            | Fault::IndexUnreported
            | Fault::IndexWhenNothingConverted
            | Fault::DirWhenNothingConverted
            | Fault::GraphNameRefused
            | Fault::StopsAtFirstFailure
            | Fault::TmpLinkRefused
            | Fault::WeightLinkReplaced => Profile::Upstream,
            _ => Profile::Documented,
        }
    }
}

#[derive(Debug)]
struct Faulty(Fault);

fn user_dir_set(s: &WeightsScenario) -> bool {
    s.options.global.contains_key("ge.externalWeightDir")
        || s.options.session.contains_key("ge.externalWeightDir")
}

/// Removes, before the backend runs its unload, whatever the links under any `tmp_weight_*`
/// directory point at: the effect of an unload that follows links.
fn follow_links(dir: &Path, inside_tmp: bool) {
    let Ok(read) = fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if inside_tmp {
                if let Ok(target) = fs::canonicalize(&path) {
                    if target.is_dir() {
                        let _ = fs::remove_dir_all(&target);
                    } else {
                        let _ = fs::remove_file(&target);
                    }
                }
            }
        } else if meta.is_dir() {
            follow_links(&path, inside_tmp || name.starts_with("tmp_weight_"));
        }
    }
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "faulty-weights"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Weights].into_iter().collect()
    }

    // Long because: one arm per fault of the table above, each the fault it names, read on its own.
    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let mut s = scenario.clone();
        match self.0 {
            Fault::TiersSwapped => {
                if matches!(s.ascend_work_path, WorkPathEnv::Set { .. }) {
                    s.options.global.remove("ge.externalWeightDir");
                    s.options.session.remove("ge.externalWeightDir");
                }
            }
            Fault::WorkPathIgnored => s.ascend_work_path = WorkPathEnv::Unset,
            Fault::EmptyWorkPathAsRoot if s.ascend_work_path == WorkPathEnv::Empty => {
                s.ascend_work_path = WorkPathEnv::Set { path: ".".into() }
            }
            Fault::DirFromWrongBase if user_dir_set(&s) => s.work_dir.clear(),
            Fault::Mode0Writes | Fault::RejectedModeUsed => {
                for map in [&mut s.options.global, &mut s.options.session] {
                    let bad = match map.get("ge.externalWeight").map(String::as_str) {
                        None | Some("0") => matches!(self.0, Fault::Mode0Writes),
                        Some("1" | "2") => false,
                        Some(_) => matches!(self.0, Fault::RejectedModeUsed),
                    };
                    if bad {
                        map.insert("ge.externalWeight".into(), "1".into());
                    }
                }
            }
            Fault::TmpNotRemoved if !user_dir_set(&s) => s.unload = false,
            Fault::SymlinkFollowed if s.unload => follow_links(sandbox, false),
            Fault::ConstantCapOffByOne if s.constants.len() == MAX_CONSTANTS + 1 => {
                s.constants.pop();
            }
            Fault::TotalCapIgnored => {
                let total = s
                    .constants
                    .iter()
                    .filter_map(|c| c.declared_len())
                    .fold(0u64, u64::saturating_add);
                let each_fits = s
                    .constants
                    .iter()
                    .all(|c| c.declared_len().is_some_and(|l| l <= MAX_WEIGHT_BYTES));
                if total > MAX_WEIGHT_BYTES && each_fits {
                    s.constants.pop();
                }
            }
            _ => {}
        }
        let odd_name = |g: &str| g.is_empty() || g == "." || g == ".." || g.contains('/');
        let tmp = format!("tmp_weight_{}_{}", s.pid, s.session_id);
        let tmp_is_link =
            fs::symlink_metadata(sandbox.join(&tmp)).is_ok_and(|m| m.file_type().is_symlink());
        let mut obs = match self.0 {
            Fault::GraphNameRefused if mode(&s) == "2" && odd_name(&s.root_graph) => {
                Reference::new(Profile::Documented).weights(&s, sandbox)?
            }
            Fault::TmpLinkRefused if tmp_is_link => {
                let mut o = Reference::new(Profile::Documented).weights(&s, sandbox)?;
                o.removed.clear();
                o
            }
            _ => Reference::new(self.0.profile()).weights(&s, sandbox)?,
        };
        let index = if obs.dir == "." {
            "meta.json".to_owned()
        } else {
            format!("{}/meta.json", obs.dir)
        };
        let converted = obs
            .nodes
            .iter()
            .any(|n| n.node_type == NodeType::FileConstant);
        match self.0 {
            Fault::UserDirRemoved
                if scenario.unload && user_dir_set(scenario) && !obs.dir.is_empty() =>
            {
                let _ = fs::remove_dir_all(sandbox.join(&obs.dir));
            }
            Fault::LiesAboutFiles => {
                for f in &mut obs.files {
                    f.len += 1;
                }
            }
            Fault::TempLeftBehind if !obs.dir.is_empty() && obs.errors.is_empty() => {
                let _ = fs::write(sandbox.join(&obs.dir).join(".weight.partial"), b"half");
            }
            Fault::HashTruncated => truncate_hashes(&mut obs, sandbox, false),
            Fault::TruncatedNamesFailureHidden => truncate_hashes(&mut obs, sandbox, true),
            Fault::Unaligned if !scenario.unload => {
                ge_conformance::allowed::pack_combined(&mut obs, sandbox, true)
            }
            Fault::RemovalUnreported => obs.removed.clear(),
            Fault::FailureHidden => obs.errors.retain(|d| d.clause != "WGT-008"),
            Fault::CorruptWeights if !scenario.unload => {
                for f in &mut obs.files {
                    let path = sandbox.join(&f.path);
                    if let Ok(mut bytes) = fs::read(&path) {
                        if let Some(b) = bytes.first_mut() {
                            *b ^= 0xff;
                            let _ = fs::write(&path, &bytes);
                            f.sha256 = sha(&bytes);
                        }
                    }
                }
            }
            Fault::DirWhenNothingConverted
                if !obs.dir.is_empty() && obs.errors.is_empty() && !converted =>
            {
                let _ = fs::create_dir_all(sandbox.join(&obs.dir));
            }
            Fault::StopsAtFirstFailure => stop_at_first_failure(scenario, &mut obs, sandbox),
            Fault::WeightLinkReplaced => {
                for f in &obs.files {
                    let path = sandbox.join(&f.path);
                    let link =
                        fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
                    if link {
                        if let Ok(bytes) = fs::read(&path) {
                            let _ = fs::remove_file(&path);
                            let _ = fs::write(&path, &bytes);
                        }
                    }
                }
            }
            Fault::IndexWritten | Fault::IndexWhenNothingConverted
                if !obs.dir.is_empty()
                    && obs.errors.is_empty()
                    && (converted == matches!(self.0, Fault::IndexWritten)) =>
            {
                let text = b"{}\n";
                let _ = fs::create_dir_all(sandbox.join(&obs.dir));
                if fs::write(sandbox.join(&index), text).is_ok() {
                    obs.files.push(WrittenFile {
                        path: index,
                        len: text.len() as u64,
                        sha256: sha(text),
                    });
                }
            }
            Fault::IndexOmitted => {
                if obs.files.iter().any(|f| f.path == index) {
                    let _ = fs::remove_file(sandbox.join(&index));
                }
                obs.files.retain(|f| f.path != index);
            }
            Fault::IndexUnreported => obs.files.retain(|f| f.path != index),
            Fault::OtherSessionsRemoved if !obs.removed.is_empty() => {
                // Lexical parent: the session's own directory is gone by now.
                let own = sandbox.join(&obs.dir);
                let parent = own.parent().unwrap_or(sandbox);
                for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
                    if entry
                        .file_name()
                        .to_string_lossy()
                        .starts_with("tmp_weight_")
                    {
                        let _ = fs::remove_dir_all(entry.path());
                    }
                }
            }
            _ => {}
        }
        Ok(obs)
    }
}

/// The `ge.externalWeight` a scenario sets (session over global), `0` when none.
fn mode(s: &WeightsScenario) -> &str {
    s.options
        .session
        .get("ge.externalWeight")
        .or_else(|| s.options.global.get("ge.externalWeight"))
        .map_or("0", String::as_str)
}

/// Undoes every mode-1 weight file written after the first one whose write failed (in graph
/// order): the load as it would be had it stopped there.
fn stop_at_first_failure(s: &WeightsScenario, obs: &mut WeightsObservation, sandbox: &Path) {
    let failed: Vec<&str> = obs
        .errors
        .iter()
        .filter(|d| d.clause == "WGT-008")
        .filter_map(|d| d.subject.path.as_deref())
        .collect();
    let names: Vec<String> = s
        .constants
        .iter()
        .filter_map(|c| c.bytes(MAX_WEIGHT_BYTES).ok())
        .map(|b| ge_reference::weights::weight_file_name(Profile::Upstream, &b))
        .collect();
    let Some(first) = names
        .iter()
        .position(|n| failed.iter().any(|f| f.ends_with(&format!("/{n}"))))
    else {
        return;
    };
    let later: Vec<&String> = names[first + 1..].iter().collect();
    obs.files.retain(|f| {
        let drop = later.iter().any(|n| f.path.ends_with(&format!("/{n}")));
        if drop {
            let _ = fs::remove_file(sandbox.join(&f.path));
        }
        !drop
    });
}

fn sha(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Renames every `weight_<hash>` file to `weight_<first 16 digits>` and reports that.
fn truncate_hashes(obs: &mut WeightsObservation, sandbox: &Path, hide_failures: bool) {
    let short = |p: &str| match p.rsplit_once("/weight_") {
        Some((dir, hash)) if hash.len() == 64 => format!("{dir}/weight_{}", &hash[..16]),
        _ => p.to_owned(),
    };
    // A name taken by something no rename replaces (a trap moved to this engine's names)
    // fails that write honestly: the load fails naming it, no node converted.
    let mut failed = Vec::new();
    for f in &mut obs.files {
        let new = short(&f.path);
        let old = sandbox.join(&f.path);
        if new != f.path && old.exists() && fs::rename(&old, sandbox.join(&new)).is_err() {
            let _ = fs::remove_file(&old);
            failed.push(new.clone());
        }
        f.path = new;
    }
    for n in &mut obs.nodes {
        n.file = n.file.as_deref().map(short);
    }
    if !failed.is_empty() && !hide_failures {
        obs.files.retain(|f| !failed.contains(&f.path));
        obs.nodes.clear();
        for path in failed {
            obs.errors.push(
                ge_spec::Diagnostic::new("", "cannot write").subject(ge_spec::Subject::path(path)),
            );
        }
    }
}

#[test]
fn reference_is_caught_by_nothing() {
    let caught = caught_clauses(
        &Judging::DEFAULT.strict(),
        &Reference,
        Some(Capability::Weights),
    );
    assert!(caught.is_empty(), "the reference fails: {caught:#?}");
}

#[rstest]
#[case::tiers_swapped(Fault::TiersSwapped, "EWD-010")]
#[case::work_path_ignored(Fault::WorkPathIgnored, "EXW-016")]
#[case::tmp_not_removed(Fault::TmpNotRemoved, "EXW-019")]
#[case::user_dir_removed(Fault::UserDirRemoved, "EWD-013")]
#[case::symlink_followed(Fault::SymlinkFollowed, "WGT-006")]
#[case::lies_about_files(Fault::LiesAboutFiles, "WGT-005")]
#[case::temp_left_behind(Fault::TempLeftBehind, "WGT-004")]
#[case::hash_truncated(Fault::HashTruncated, "EXW-012")]
#[case::truncated_names_failure_hidden(Fault::TruncatedNamesFailureHidden, "WGT-011")]
#[case::unaligned(Fault::Unaligned, "EXW-015")]
#[case::empty_work_path_as_root(Fault::EmptyWorkPathAsRoot, "EXW-018")]
#[case::dir_from_wrong_base(Fault::DirFromWrongBase, "EWD-011")]
#[case::mode0_writes(Fault::Mode0Writes, "EXW-010")]
#[case::rejected_mode_used(Fault::RejectedModeUsed, "EXW-001")]
#[case::removal_unreported(Fault::RemovalUnreported, "WGT-010")]
#[case::other_sessions_removed(Fault::OtherSessionsRemoved, "WGT-007")]
#[case::corrupt_weights(Fault::CorruptWeights, "WGT-011")]
#[case::failure_hidden(Fault::FailureHidden, "EXW-011")]
#[case::constant_cap_off_by_one(Fault::ConstantCapOffByOne, "WGT-002")]
#[case::total_cap_ignored(Fault::TotalCapIgnored, "WGT-002")]
#[case::index_written(Fault::IndexWritten, "WGT-011")]
#[case::upstream_index_unreported(Fault::IndexUnreported, "WGT-005")]
#[case::upstream_index_when_nothing_converted(Fault::IndexWhenNothingConverted, "WGT-011")]
#[case::upstream_dir_when_nothing_converted(Fault::DirWhenNothingConverted, "EXW-015")]
#[case::upstream_graph_name_refused(Fault::GraphNameRefused, "WGT-002")]
#[case::upstream_stops_at_first_failure(Fault::StopsAtFirstFailure, "WGT-004")]
#[case::upstream_tmp_link_refused(Fault::TmpLinkRefused, "WGT-008")]
#[case::upstream_weight_link_replaced(Fault::WeightLinkReplaced, "WGT-007")]
fn fault_is_caught_by_its_clause(#[case] fault: Fault, #[case] clause: &str) {
    let caught = caught_clauses(
        &Judging::failing(fault.profile(), clause),
        &Faulty(fault),
        Some(Capability::Weights),
    );
    assert!(
        caught.contains_key(clause),
        "{fault:?} should break {clause}; caught: {caught:#?}"
    );
    common::assert_no_failure_at_documented_for_a_choice(
        &fault,
        &Faulty(fault),
        Capability::Weights,
        fault.profile(),
        clause,
    );
}

/// Upstream without its index is caught in both modes, by the clause of each mode, at the
/// default level (the profile before `meta.json` was modelled).
#[rstest]
#[case::upstream_index_omitted(Fault::IndexOmitted, "EXW-011", "EXW-014")]
#[case::upstream_dir_when_nothing_converted(Fault::DirWhenNothingConverted, "EXW-011", "EXW-015")]
fn upstream_fault_is_caught_in_both_modes(
    #[case] fault: Fault,
    #[case] mode1: &str,
    #[case] mode2: &str,
) {
    let judging = Judging::new(fault.profile(), ge_spec::Conformance::Documented);
    let caught = caught_clauses(&judging, &Faulty(fault), Some(Capability::Weights));
    for clause in [mode1, mode2] {
        assert!(
            caught.contains_key(clause),
            "{fault:?} should break {clause}; caught: {caught:#?}"
        );
    }
}

#[test]
fn the_upstream_reference_is_caught_by_nothing() {
    let caught = caught_clauses(
        &Judging::new(Profile::Upstream, ge_spec::Conformance::Strict),
        &Reference::upstream(),
        Some(Capability::Weights),
    );
    assert!(
        caught.is_empty(),
        "the upstream reference fails: {caught:#?}"
    );
}

/// Faults only the default certification's generated scenarios reach (the weights property,
/// whose boundary phase combines every `ASCEND_WORK_PATH` with every `ge.externalWeightDir`).
#[derive(Debug, Clone, Copy)]
enum Rare {
    /// A flush directory equal to ASCEND_WORK_PATH is taken for the engine's own temporary
    /// directory, and unload removes it with the user's weights: a combination of two paths.
    EqualDirsTakenForTemp,
    /// An index written beside the sandbox (`<sandbox>/../`), outside the chosen directory.
    WritesBeside,
}

#[derive(Debug)]
struct RareFault(Rare);

impl Backend for RareFault {
    fn name(&self) -> &str {
        "rare-weights-fault"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Weights].into_iter().collect()
    }

    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let obs = Reference::new(Profile::Documented).weights(scenario, sandbox)?;
        match self.0 {
            Rare::EqualDirsTakenForTemp => {
                let env = match &scenario.ascend_work_path {
                    WorkPathEnv::Set { path } => path.trim_start_matches("./"),
                    _ => "",
                };
                if scenario.unload && user_dir_set(scenario) && !env.is_empty() && obs.dir == env {
                    let _ = fs::remove_dir_all(sandbox.join(&obs.dir));
                }
            }
            Rare::WritesBeside if !obs.files.is_empty() => {
                let _ = fs::write(sandbox.join("../stray-index"), b"{}\n");
            }
            Rare::WritesBeside => {}
        }
        Ok(obs)
    }
}

#[rstest]
#[case::equal_dirs_taken_for_temp(Rare::EqualDirsTakenForTemp, "EWD-013")]
#[case::writes_beside_the_sandbox(Rare::WritesBeside, "WGT-007")]
fn rare_fault_is_caught_by_the_generated_scenarios(#[case] fault: Rare, #[case] clause: &str) {
    common::assert_caught_in_certification(&fault, &RareFault(fault), "property/weights", clause);
}

/// Measures shrinking: the size of each fault's property counterexample on its clause (option
/// keys and items), then their distribution, for `docs/benchmarks.md`. Run with
/// `cargo test --release -p ge-conformance --test it -- --ignored --nocapture faults_weights::counterexample_sizes`.
// Long because: a list of every fault with its clause, one row each; the measuring is the last
// lines.
#[test]
#[ignore = "a measurement for docs/benchmarks.md; the regression it guards is held by the shrinking tests"]
fn counterexample_sizes() {
    let faults: Vec<(&str, Box<dyn Backend>, &str)> = vec![
        (
            "tiers_swapped",
            Box::new(Faulty(Fault::TiersSwapped)),
            "EWD-010",
        ),
        (
            "work_path_ignored",
            Box::new(Faulty(Fault::WorkPathIgnored)),
            "EXW-016",
        ),
        (
            "tmp_not_removed",
            Box::new(Faulty(Fault::TmpNotRemoved)),
            "EXW-019",
        ),
        (
            "user_dir_removed",
            Box::new(Faulty(Fault::UserDirRemoved)),
            "EWD-013",
        ),
        (
            "symlink_followed",
            Box::new(Faulty(Fault::SymlinkFollowed)),
            "WGT-006",
        ),
        (
            "lies_about_files",
            Box::new(Faulty(Fault::LiesAboutFiles)),
            "WGT-005",
        ),
        (
            "temp_left_behind",
            Box::new(Faulty(Fault::TempLeftBehind)),
            "WGT-004",
        ),
        (
            "hash_truncated",
            Box::new(Faulty(Fault::HashTruncated)),
            "EXW-012",
        ),
        ("unaligned", Box::new(Faulty(Fault::Unaligned)), "EXW-015"),
        (
            "empty_work_path_as_root",
            Box::new(Faulty(Fault::EmptyWorkPathAsRoot)),
            "EXW-018",
        ),
        (
            "dir_from_wrong_base",
            Box::new(Faulty(Fault::DirFromWrongBase)),
            "EWD-011",
        ),
        (
            "mode0_writes",
            Box::new(Faulty(Fault::Mode0Writes)),
            "EXW-010",
        ),
        (
            "rejected_mode_used",
            Box::new(Faulty(Fault::RejectedModeUsed)),
            "WGT-009",
        ),
        (
            "removal_unreported",
            Box::new(Faulty(Fault::RemovalUnreported)),
            "WGT-010",
        ),
        (
            "other_sessions_removed",
            Box::new(Faulty(Fault::OtherSessionsRemoved)),
            "WGT-007",
        ),
        (
            "corrupt_weights",
            Box::new(Faulty(Fault::CorruptWeights)),
            "WGT-011",
        ),
        (
            "failure_hidden",
            Box::new(Faulty(Fault::FailureHidden)),
            "WGT-008",
        ),
        (
            "constant_cap_off_by_one",
            Box::new(Faulty(Fault::ConstantCapOffByOne)),
            "WGT-002",
        ),
        (
            "total_cap_ignored",
            Box::new(Faulty(Fault::TotalCapIgnored)),
            "WGT-002",
        ),
        (
            "index_written",
            Box::new(Faulty(Fault::IndexWritten)),
            "WGT-011",
        ),
        (
            "upstream_index_unreported",
            Box::new(Faulty(Fault::IndexUnreported)),
            "WGT-005",
        ),
        (
            "upstream_index_when_nothing_converted",
            Box::new(Faulty(Fault::IndexWhenNothingConverted)),
            "WGT-011",
        ),
        (
            "upstream_dir_when_nothing_converted",
            Box::new(Faulty(Fault::DirWhenNothingConverted)),
            "EXW-015",
        ),
        (
            "upstream_graph_name_refused",
            Box::new(Faulty(Fault::GraphNameRefused)),
            "WGT-002",
        ),
        (
            "upstream_stops_at_first_failure",
            Box::new(Faulty(Fault::StopsAtFirstFailure)),
            "WGT-004",
        ),
        (
            "upstream_tmp_link_refused",
            Box::new(Faulty(Fault::TmpLinkRefused)),
            "WGT-008",
        ),
        (
            "upstream_weight_link_replaced",
            Box::new(Faulty(Fault::WeightLinkReplaced)),
            "WGT-007",
        ),
    ];
    common::print_counterexample_sizes(Capability::Weights, &faults);
}
