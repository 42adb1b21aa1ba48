//! Choice variants: the other direction of the fault table. Each backend here is the reference
//! with ONE of the suite's own choices made another way the source text allows (another clause
//! cited or none, one error for several offending items, another hash in mode-1 file names,
//! a combined file without padding). Each must certify at level `documented` with no failure,
//! and break the clause of that choice at level `strict` (a deviation at `documented`): what an
//! engine chose where the text is silent never fails it. `docs/choices.md` lists them.

use std::fs;
use std::path::Path;

mod common;

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::judging::Judging;
use ge_conformance::report::{Outcome, Report};
use ge_reference::Reference;
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};
use ge_spec::{Answer, Backend, Capability, Diagnostic, Profile, Spec};
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
}

impl Choice {
    fn capabilities(self) -> &'static [Capability] {
        match self {
            Choice::NoClause | Choice::OptionClause => &Capability::ALL,
            Choice::OneErrorPerKey | Choice::RefuseListOutOfRange => &[Capability::Options],
            Choice::OtherHash | Choice::Packed => &[Capability::Weights],
        }
    }
}

/// The reference with one choice made otherwise.
struct Variant(Choice);

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
        let mut o = Reference::new(Profile::Documented).options(s)?;
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
        let mut o = Reference::new(Profile::Documented).transfer(s)?;
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn memory(
        &self,
        s: &ge_spec::vocab::memory::MemoryScenario,
    ) -> Answer<ge_spec::vocab::memory::MemoryObservation> {
        let mut o = Reference::new(Profile::Documented).memory(s)?;
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn session(
        &self,
        s: &ge_spec::vocab::session::SessionScenario,
    ) -> Answer<ge_spec::vocab::session::SessionObservation> {
        let mut o = Reference::new(Profile::Documented).session(s)?;
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let mut o = Reference::new(Profile::Documented).weights(s, sandbox)?;
        relabel(self.0, &mut o.errors);
        relabel(self.0, &mut o.warnings);
        match self.0 {
            Choice::OtherHash => other_hash(&mut o, sandbox),
            Choice::Packed if !s.unload => common::engines::pack_combined(&mut o, sandbox),
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
