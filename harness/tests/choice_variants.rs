//! Choice variants: the other direction of the fault table. Each backend here is the reference
//! with ONE of the suite's own choices made another way the source text allows (another clause
//! cited or none, one error for several offending items, lenient spellings read, invalid values
//! ignored, another hash, no padding, no sharing of identical weights, pools kept for the
//! session, no batch copy on dynamic shapes, a missing weight directory refused). Each must
//! certify at level `documented` with no failure, and break the clause of that choice at level
//! `strict` (a deviation at `documented`): what an engine chose where the text is silent never
//! fails it. `docs/choices.md` lists them, and the suite's choices that have no variant yet,
//! each with why ([`NO_VARIANT`]).

use std::fs;
use std::path::Path;

mod common;

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::judging::Judging;
use ge_conformance::oracle::options::{read_reported, Context, Reading};
use ge_conformance::report::{Outcome, Report};
use ge_reference::Reference;
use ge_spec::tables::Grammar;
use ge_spec::vocab::session::{TraceAction, TraceEntry};
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario, WrittenFile};
use ge_spec::{
    Answer, Backend, Capability, Diagnostic, Level, OptionKey, OptionMaps, Profile, Spec,
};
use rstest::rstest;

/// The one choice a variant makes otherwise.
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// Every diagnostic cites no clause (an adapter over an engine that knows no clause IDs).
    NoClause,
    /// Every diagnostic with a key cites its option's first clause (the value grammar), the
    /// others keep theirs: an adapter mapping its errors as well as it can.
    OptionClause,
    /// One error per rejected key, however many items, values or levels offend.
    OneErrorPerKey,
    /// An index list with an index out of range is refused whole instead of dropping that
    /// index alone.
    RefuseListOutOfRange,
    /// Mode-1 files are named `weight_` and the SHA-256 of the bytes, spelled backwards.
    OtherHash,
    /// The combined file of mode 2 holds the distinct weights back to back, no padding.
    Packed,
    /// A number spelled with white space, a sign or leading zeros (` 1`, `+1`, `05`, `-0`),
    /// and a list of such numbers, is read as the number it spells instead of refused.
    LenientSpellings,
    /// Identical weights are not shared: in mode 1 each constant has a file of its own (named
    /// after its name and its bytes), in mode 2 each is stored where it comes.
    Duplicates,
    /// A shared pool outlives its last graph: kept for the session, taken again only when a
    /// load needs more than it holds, and given back when the session closes.
    PoolsKept,
    /// No batch copy on a dynamic-shape graph: the inputs go one by one.
    NoBatchOnDynamic,
    /// A ge.externalWeightDir that does not exist fails the load, naming it, instead of being
    /// created.
    MissingUserDirRefused,
    /// An invalid value is ignored with a warning (the next level's value, or the default, in
    /// force) instead of rejecting its option and refusing what depends on it.
    IgnoreInvalid,
}

impl Choice {
    fn capabilities(self) -> &'static [Capability] {
        match self {
            Choice::NoClause | Choice::OptionClause => &Capability::ALL,
            Choice::OneErrorPerKey | Choice::RefuseListOutOfRange => &[Capability::Options],
            Choice::PoolsKept => &[Capability::Session],
            Choice::NoBatchOnDynamic => &[Capability::Transfer],
            Choice::OtherHash
            | Choice::Packed
            | Choice::Duplicates
            | Choice::MissingUserDirRefused => &[Capability::Weights],
            Choice::LenientSpellings | Choice::IgnoreInvalid => &Capability::ALL,
        }
    }
}

/// The reference with one choice made otherwise.
struct Variant(Choice);

/// A scenario whose option maps the variant can respell.
trait WithOptions: Clone {
    fn maps(&mut self) -> &mut OptionMaps;
    /// What the options layer knows of the graph and the run.
    fn context(&self) -> Context {
        Context::plain()
    }
}

macro_rules! with_options {
    ($($t:ty),*) => {$(
        impl WithOptions for $t {
            fn maps(&mut self) -> &mut OptionMaps {
                &mut self.options
            }
        }
    )*};
}

with_options!(
    ge_spec::vocab::memory::MemoryScenario,
    ge_spec::vocab::session::SessionScenario,
    WeightsScenario
);

impl WithOptions for ge_spec::vocab::options::OptionsScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        Context::of(self)
    }
}

impl WithOptions for ge_spec::vocab::transfer::TransferScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        ge_conformance::oracle::transfer::context(self)
    }
}

/// Takes out of `maps` every value the options layer refuses, returning a warning for each:
/// the engine ignores an invalid value instead of rejecting its option.
fn ignore_invalid(maps: &mut OptionMaps, ctx: Context) -> Vec<Diagnostic> {
    let reading = Reading::new(Profile::Documented, maps, ctx);
    let mut warnings = Vec::new();
    for e in &reading.errors {
        let (Some(key), Some(level)) = (e.key.as_deref(), e.level) else {
            continue;
        };
        if let Some(value) = maps.at_mut(level).remove(key) {
            warnings.push(
                Diagnostic::new("", "an invalid value is ignored")
                    .key(key)
                    .level(level)
                    .value(value),
            );
        }
    }
    warnings
}

impl Variant {
    /// The scenario the reference is asked (the one given, its options respelled or cleaned
    /// as the variant reads them) and the warnings the variant adds.
    fn scenario<S: WithOptions>(&self, s: &S) -> (S, Vec<Diagnostic>) {
        let mut s = s.clone();
        let ctx = s.context();
        let warnings = match self.0 {
            Choice::LenientSpellings => {
                read_leniently(s.maps());
                Vec::new()
            }
            Choice::IgnoreInvalid => ignore_invalid(s.maps(), ctx),
            _ => Vec::new(),
        };
        (s, warnings)
    }
}

fn first_clause_of(key: &str) -> Option<String> {
    Spec::embedded()
        .clauses()
        .find(|c| c.option.is_some_and(|o| o.as_str() == key))
        .map(|c| c.id.clone())
}

fn relabel(choice: Choice, list: &mut [Diagnostic]) {
    for d in list.iter_mut() {
        match choice {
            Choice::NoClause => d.clause.clear(),
            Choice::OptionClause => {
                if let Some(c) = d.key.as_deref().and_then(first_clause_of) {
                    d.clause = c;
                }
            }
            _ => {}
        }
    }
}

/// Moves every index list the reference warned about (an index out of range, IRM-003 or
/// ORM-003) from `effective` to `rejected`, with one error about it instead of the warnings.
fn refuse_out_of_range(o: &mut ge_spec::vocab::options::OptionsObservation) {
    let keys: std::collections::BTreeSet<String> = o
        .warnings
        .iter()
        .filter(|w| w.clause == "IRM-003" || w.clause == "ORM-003")
        .filter_map(|w| w.key.clone())
        .collect();
    for key in keys {
        let level = o
            .warnings
            .iter()
            .find(|w| w.key.as_deref() == Some(key.as_str()))
            .and_then(|w| w.level);
        o.warnings
            .retain(|w| w.key.as_deref() != Some(key.as_str()));
        o.effective.remove(&key);
        o.rejected.push(key.clone());
        let mut e = Diagnostic::new("", "an index is out of range").key(key);
        e.level = level;
        o.errors.push(e);
    }
    o.rejected.sort();
}

/// Respells, at every level, each value of the twelve options that the reference would refuse
/// for its spelling alone but that reads as a number (or a list of numbers): the engine takes
/// ` 1`, `+1`, `05` or `1, 2` for what it spells.
fn read_leniently(maps: &mut OptionMaps) {
    let spec = Spec::embedded();
    for level in Level::ALL {
        for (key, raw) in maps.at_mut(level).iter_mut() {
            let Ok(key) = key.parse::<OptionKey>() else {
                continue;
            };
            let grammar = spec.option(key).grammar;
            if grammar == Grammar::Path {
                continue;
            }
            if let Some(m) = read_reported(grammar, raw) {
                *raw = m.canonical();
            }
        }
    }
}

/// The user's weight directory, sandbox-relative, when the scenario writes weights there
/// (`ge.externalWeight` 1 or 2) and nothing is at that path yet.
fn missing_user_dir(s: &WeightsScenario, sandbox: &Path) -> Option<String> {
    let get = |k: &str| s.options.session.get(k).or_else(|| s.options.global.get(k));
    if !matches!(
        get("ge.externalWeight").map(String::as_str),
        Some("1" | "2")
    ) {
        return None;
    }
    let dir = get("ge.externalWeightDir").filter(|d| !d.is_empty())?;
    let base: Vec<String> = s
        .work_dir
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect();
    let parts = ge_spec::vocab::weights::resolve_in_sandbox(&base, dir)?;
    let rel = parts.join("/");
    let exists = fs::symlink_metadata(sandbox.join(&rel)).is_ok();
    (!exists && !rel.is_empty()).then_some(rel)
}

/// Gives every mode-1 FileConstant a file of its own, `weight_` and the SHA-256 of its name and
/// of its bytes' hash, on disk (where the load left the file) and in the observation.
fn own_files(obs: &mut WeightsObservation, sandbox: &Path) {
    let mode1 = |p: &str| {
        p.rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("weight_") && n.len() == 71)
    };
    let old: std::collections::BTreeMap<String, WrittenFile> = obs
        .files
        .iter()
        .filter(|f| mode1(&f.path))
        .map(|f| (f.path.clone(), f.clone()))
        .collect();
    if old.is_empty() {
        return;
    }
    let mut new_files = Vec::new();
    let mut renamed: std::collections::BTreeMap<String, Vec<String>> = Default::default();
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
        if let Ok(bytes) = fs::read(sandbox.join(&f.path)) {
            let _ = fs::write(sandbox.join(&path), bytes);
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
}

/// Rewrites the reference's trace so that each shared pool is kept once taken: its last
/// graph's unload gives nothing back, a later load takes it again only when it needs more than
/// the pool holds (freeing the smaller first, as growth does), and the session's close (step
/// `end`) gives it back.
fn keep_pools(trace: &mut Vec<TraceEntry>, end: u32) {
    let is_pool = |p: &str| p == "static-pool" || p == "dynamic-pool";
    let old = std::mem::take(trace);
    let mut held: std::collections::BTreeMap<String, u64> = Default::default();
    for e in &old {
        if !is_pool(&e.pool) {
            trace.push(e.clone());
            continue;
        }
        match e.action {
            // Growth (an alloc of the pool follows at the same step), the last unload, the
            // close: the pool stays until the close, below.
            TraceAction::Free => {}
            TraceAction::Alloc => {
                let kept = held.get(&e.pool).copied();
                if kept.is_some_and(|k| k >= e.bytes) {
                    continue;
                }
                if let Some(k) = kept {
                    trace.push(TraceEntry {
                        action: TraceAction::Free,
                        bytes: k,
                        ..e.clone()
                    });
                }
                trace.push(e.clone());
                held.insert(e.pool.clone(), e.bytes);
            }
        }
    }
    for (pool, bytes) in held {
        trace.push(TraceEntry {
            step: end,
            action: TraceAction::Free,
            pool,
            bytes,
        });
    }
}

fn sha(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    for f in &mut obs.files {
        let new = rename(&f.path);
        // A file unload removed already is reported under the name the engine gave it.
        let _ = fs::rename(sandbox.join(&f.path), sandbox.join(&new));
        f.path = new;
    }
    for n in &mut obs.nodes {
        n.file = n.file.as_deref().map(rename);
    }
    for r in &mut obs.removed {
        *r = rename(r);
    }
}

impl Backend for Variant {
    fn name(&self) -> &str {
        "choice-variant"
    }

    fn capabilities(&self) -> std::collections::BTreeSet<Capability> {
        self.0.capabilities().iter().copied().collect()
    }

    fn options(
        &self,
        s: &ge_spec::vocab::options::OptionsScenario,
    ) -> Answer<ge_spec::vocab::options::OptionsObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).options(&s)?;
        o.warnings.extend(added);
        if let Choice::OneErrorPerKey = self.0 {
            let mut seen = std::collections::BTreeSet::new();
            o.errors.retain(|d| seen.insert(d.key.clone()));
        }
        if let Choice::RefuseListOutOfRange = self.0 {
            refuse_out_of_range(&mut o);
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn transfer(
        &self,
        s: &ge_spec::vocab::transfer::TransferScenario,
    ) -> Answer<ge_spec::vocab::transfer::TransferObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).transfer(&s)?;
        o.warnings.extend(added);
        if let Choice::NoBatchOnDynamic = self.0 {
            if s.shape == ge_spec::ShapeKind::Dynamic {
                o.direct.append(&mut o.batched);
                o.direct.sort_unstable();
            }
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn memory(
        &self,
        s: &ge_spec::vocab::memory::MemoryScenario,
    ) -> Answer<ge_spec::vocab::memory::MemoryObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).memory(&s)?;
        o.warnings.extend(added);
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn session(
        &self,
        s: &ge_spec::vocab::session::SessionScenario,
    ) -> Answer<ge_spec::vocab::session::SessionObservation> {
        let (s, added) = self.scenario(s);
        let mut o = Reference::new(Profile::Documented).session(&s)?;
        o.warnings.extend(added);
        if let Choice::PoolsKept = self.0 {
            if !o.trace.is_empty() {
                keep_pools(&mut o.trace, s.events.len() as u32);
            }
        }
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let (s, added) = self.scenario(s);
        let s = &s;
        if let Choice::MissingUserDirRefused = self.0 {
            if let Some(dir) = missing_user_dir(s, sandbox) {
                return Ok(WeightsObservation {
                    dir: String::new(),
                    files: Vec::new(),
                    nodes: Vec::new(),
                    removed: Vec::new(),
                    errors: vec![Diagnostic::new("", "the weight directory does not exist")
                        .subject(ge_spec::Subject::path(dir))],
                    warnings: added,
                });
            }
        }
        let mut o = Reference::new(Profile::Documented).weights(s, sandbox)?;
        o.warnings.extend(added);
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        match self.0 {
            Choice::OtherHash => other_hash(&mut o, sandbox),
            Choice::Packed if !s.unload => common::engines::pack_combined(&mut o, sandbox),
            Choice::Duplicates => {
                own_files(&mut o, sandbox);
                if !s.unload {
                    common::engines::pack_combined_with(&mut o, sandbox, false);
                }
            }
            _ => {}
        }
        Ok(o)
    }
}

fn run(choice: Choice, judging: Judging) -> Report {
    let cfg = Config {
        judging,
        cases: 48,
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    certify::certify(&Variant(choice), &cfg, &mut |_, _, _| {}).expect("a run")
}

fn failures(report: &Report) -> Vec<String> {
    report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
        .collect()
}

#[rstest]
#[case::no_clause_cited(Choice::NoClause, "OPT-012")]
#[case::option_clause_cited(Choice::OptionClause, "OPT-012")]
#[case::one_error_per_key(Choice::OneErrorPerKey, "OPT-012")]
#[case::refuse_list_out_of_range(Choice::RefuseListOutOfRange, "IRM-005")]
#[case::other_hash(Choice::OtherHash, "EXW-012")]
#[case::packed_combined_file(Choice::Packed, "EXW-015")]
#[case::lenient_spellings(Choice::LenientSpellings, "OPT-003")]
#[case::lenient_index_lists(Choice::LenientSpellings, "ORM-004")]
#[case::lenient_pair_lists(Choice::LenientSpellings, "ORI-006")]
#[case::ignore_invalid(Choice::IgnoreInvalid, "OPT-005")]
#[case::pools_kept_for_the_session(Choice::PoolsKept, "SMP-013")]
#[case::no_batch_copy_on_dynamic_shapes(Choice::NoBatchOnDynamic, "IBC-015")]
#[case::missing_user_dir_refused(Choice::MissingUserDirRefused, "EWD-012")]
#[case::invalid_mode_ignored_by_the_load(Choice::IgnoreInvalid, "WGT-009")]
#[case::own_file_per_constant(Choice::Duplicates, "EXW-013")]
#[case::duplicates_stored_again(Choice::Duplicates, "EXW-020")]
fn a_choice_the_text_allows_certifies_and_deviates_on_its_clause(
    #[case] choice: Choice,
    #[case] clause: &str,
) {
    let doc = run(choice, Judging::DEFAULT);
    assert!(
        doc.certified,
        "{choice:?} must certify at level documented; failed:\n{}",
        failures(&doc).join("\n")
    );
    assert!(
        doc.trials
            .iter()
            .any(|t| t.deviations.iter().any(|c| c == clause)),
        "{choice:?} must show {clause} as a deviation"
    );
    let strict = run(choice, Judging::DEFAULT.strict());
    assert!(!strict.certified);
    assert!(
        strict
            .trials
            .iter()
            .any(|t| t.outcome == Outcome::Fail && t.broken.iter().any(|c| c == clause)),
        "{choice:?} must fail {clause} at level strict"
    );
}

#[test]
fn the_published_table_lists_exactly_these_variants() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let doc = fs::read_to_string(format!("{root}/docs/choices.md")).expect("docs/choices.md");
    let me =
        fs::read_to_string(format!("{root}/harness/tests/choice_variants.rs")).expect("this file");
    let mut rows = Vec::new();
    for line in me.lines() {
        let Some(rest) = line.trim().strip_prefix("#[case::") else {
            continue;
        };
        let (name, args) = rest.split_once('(').expect("a case attribute");
        let clause = args.rsplit('"').nth(1).expect("a clause");
        rows.push(format!("| `{name}` |"));
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("docs/choices.md has no row for {name}"));
        assert!(row.trim_end().ends_with(&format!("| {clause} |")), "{row}");
    }
    let listed = doc.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(listed, rows.len(), "docs/choices.md lists other variants");
}

/// The suite's choices (reference-defined clauses under the documented profile) that no
/// variant here and no fault row named after a choice (`docs/faults.md`, level `strict`) makes
/// otherwise, each with why. `docs/choices.md` lists the same. An entry that gains a variant
/// or a row must go: the list only shrinks.
const NO_VARIANT: &[(&str, &str)] = &[
    ("DRM-016", "open: a planner that reuses less well than the bound (a quality bar, not a rule of the text)"),
    ("EXW-021", "open: unload after a failed load that leaves the directory the load made"),
    ("EXW-022", "open: an uncreatable ASCEND_WORK_PATH that falls back to the working directory, as upstream does"),
    ("IBC-014", "covered by the fault row `HostInputCount` (OPT-008): counting only host inputs changes the IBC-003 warning alone"),
    ("IFS-015", "no other reading: the unit of the source text's own figures, which the suite's cases use; an engine is given bytes and never a unit"),
    ("IFS-017", "no other reading: an empty input is within any threshold above 0, so IFS-010 fuses it (the row `ZeroByteNotMoved` fails there)"),
    ("IFS-019", "no other reading: an input within the threshold by its bytes is fused by IFS-010 (the row `AlignedSizes` fails there)"),
    ("IFS-020", "covered by `ignore_invalid` (OPT-005), the one other answer the text leaves: any value in force but the default breaks IFS-001"),
    ("OPT-009", "no other reading: the scenario's spelling of products, which an engine reads and does not choose"),
    ("OPT-010", "covered by the fault row `Silence(\"OPT-002\")`: the index options are one case of OPT-002, stated apart for the upstream profile"),
    ("OPT-011", "no other reading: how the upstream profile reports upstream's later refusals; the documented profile does not use it"),
    ("ORI-010", "open: a planner that reserves a pair's memory for less than the whole run"),
    ("ORM-010", "open: a planner that lets working memory use an unlisted output's bytes before the output is written"),
    ("RZC-013", "open: the zero-copy area held inside a shared pool (taking it at the first execution instead breaks RZC-012)"),
    ("SES-016", "no other reading: what a scenario's option maps mean for its graphs, the vocabulary's, which an engine reads and does not choose"),
    ("SMP-015", "no other reading: a policy that a graph's map changes would take effect at graph level, which SMP-002 rules out"),
    ("SMP-016", "open: an engine that follows GE_USE_STATIC_MEMORY under the documented profile"),
    ("TRF-001", "no other reading: the shape of a transfer observation (each input in one group), which the vocabulary fixes; a plan made despite errors is TRF-004's row"),
    ("WGT-001", "no other reading: the sandbox's rule for scenario paths, without which no run can be judged safely"),
    ("WGT-003", "open: a missing ASCEND_WORK_PATH refused instead of created"),
];

#[test]
fn every_choice_of_the_suite_has_a_variant_or_a_reason() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let me =
        fs::read_to_string(format!("{root}/harness/tests/choice_variants.rs")).expect("this file");
    let faults = fs::read_to_string(format!("{root}/docs/faults.md")).expect("docs/faults.md");
    let mut varied: std::collections::BTreeSet<String> = me
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#[case::"))
        .filter_map(|rest| rest.rsplit('"').nth(1))
        .map(str::to_owned)
        .collect();
    // A fault row at level strict is a choice made otherwise, held to no failure at level
    // documented (common::assert_no_failure_at_documented_for_a_choice).
    for row in faults
        .lines()
        .filter(|l| l.trim_end().ends_with("| strict |"))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // The transfer rows name the oracle's clause second: the first is the row's.
        if let Some(clause) = cells.get(4).and_then(|c| c.split(',').next()) {
            varied.insert(clause.trim().trim_matches('`').to_owned());
        }
    }
    let documented = Judging::DEFAULT;
    let mut missing = Vec::new();
    for c in Spec::embedded().clauses() {
        let listed = NO_VARIANT.iter().find(|(id, _)| *id == c.id);
        let varied = varied.contains(&c.id);
        if documented.binds(&c.id) {
            assert!(listed.is_none(), "{} binds at level documented", c.id);
            continue;
        }
        match (varied, listed) {
            (true, Some(_)) => panic!("{} has a variant now: take it out of NO_VARIANT", c.id),
            (false, None) => missing.push(c.id.clone()),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "choices with no variant and no reason: {missing:?}"
    );
    let doc = fs::read_to_string(format!("{root}/docs/choices.md")).expect("docs/choices.md");
    for (id, why) in NO_VARIANT {
        let row = format!("| {id} | {why} |");
        assert!(doc.contains(&row), "docs/choices.md lacks the row {row}");
    }
}
