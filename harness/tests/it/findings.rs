//! `corpus` and `promote`: seeds come from the case tables, and a finding against a wrong
//! backend becomes a case that the reference passes and the wrong backend fails.

use std::collections::BTreeSet;

use ge_conformance::findings::{self, FindingError, PromoteOptions};
use ge_conformance::fuzz;
use ge_conformance::judging::Judging;
use ge_conformance::runner::{run_case, Verdict};
use ge_reference::Reference;
use ge_spec::tables::ROOT_CAUSE_SLOT;
use ge_spec::vocab::{Capability, OptionsObservation, OptionsScenario};
use ge_spec::{Answer, Backend, Spec};

const STRICT: Judging = Judging::DEFAULT.strict();

/// Drops every warning: a backend that parses right but says nothing about ignored settings.
struct Mute;

impl Backend for Mute {
    fn name(&self) -> &str {
        "mute"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = Reference.options(scenario)?;
        o.warnings.clear();
        Ok(o)
    }
}

/// `ge.exec.atomicCleanPolicy` set at global level, where it does not take effect: a warning.
const SCENARIO: &str = r#"{
  "capability": "options",
  "options": { "global": { "ge.exec.atomicCleanPolicy": "1" } }
}"#;

fn write(dir: &std::path::Path, name: &str, text: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// The embedded tables plus `table` as `cases/<stem>.toml`, with the root cause written.
pub(crate) fn load_with(table: &std::path::Path) -> Spec {
    let stem = table.file_stem().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(table)
        .expect("the table was written")
        .replace(ROOT_CAUSE_SLOT, "(the root cause)");
    let mut files: Vec<(String, String)> = Spec::embedded_files()
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    files.push((format!("cases/{stem}.toml"), text));
    Spec::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str()))).expect("loads")
}

#[test]
fn a_finding_becomes_a_case_the_reference_passes_and_the_wrong_backend_fails() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "finding.json", SCENARIO.as_bytes());
    let table = dir.path().join("regressions.toml");
    // A silent backend only departs from the suite's own choice (OPT-002's warning): a finding at
    // level strict.
    let opts = PromoteOptions {
        table: table.clone(),
        judging: STRICT,
        ..Default::default()
    };
    let p = findings::promote(&Mute, &input, &opts).expect("promotes");
    assert!(p.failure.is_some(), "the wrong backend fails the scenario");
    assert!(
        p.case.clauses.iter().any(|c| c == "OPT-002"),
        "{:?}",
        p.case.clauses
    );
    assert_eq!(p.case.comment.as_deref(), Some(ROOT_CAUSE_SLOT));
    assert!(p.case.name.starts_with("options-"), "{}", p.case.name);

    // Unexplained, the table does not load; explained, it does, and the case judges.
    let raw = std::fs::read_to_string(&table).unwrap();
    assert!(raw.contains(ROOT_CAUSE_SLOT));
    // The reference's diagnostics go in by what the clauses define; their wording never does, or
    // every other engine would fail the case on it.
    assert!(raw.contains("OPT-002"), "{raw}");
    assert!(!raw.contains("message"), "{raw}");
    let spec = load_with(&table);
    let case = spec
        .cases()
        .iter()
        .find(|c| c.table == "regressions")
        .expect("the promoted case is in the table");
    assert_eq!(run_case(&STRICT, &Reference, case), Verdict::Pass);
    assert!(matches!(run_case(&STRICT, &Mute, case), Verdict::Fail(_)));
    // At level documented the same departure is a deviation, not a failure.
    assert!(matches!(
        run_case(&Judging::DEFAULT, &Mute, case),
        Verdict::Deviates(_)
    ));

    // The same finding again: the name is taken.
    let again = findings::promote(&Mute, &input, &opts).unwrap_err();
    assert!(
        matches!(again, FindingError::DuplicateName { .. }),
        "{again}"
    );
    // With another name it goes in as a second case.
    let second = PromoteOptions {
        name: Some("second".into()),
        ..opts.clone()
    };
    findings::promote(&Mute, &input, &second).expect("promotes");
    let spec = load_with(&table);
    assert_eq!(
        spec.cases()
            .iter()
            .filter(|c| c.table == "regressions")
            .count(),
        2
    );
}

#[test]
fn a_fixed_bug_needs_its_clauses_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "finding.json", SCENARIO.as_bytes());
    let opts = PromoteOptions {
        table: dir.path().join("regressions.toml"),
        ..Default::default()
    };
    let err = findings::promote(&Reference, &input, &opts).unwrap_err();
    assert!(matches!(err, FindingError::NoClause(_)), "{err}");
    let named = PromoteOptions {
        clauses: vec!["OPT-002".into()],
        ..opts.clone()
    };
    let p = findings::promote(&Reference, &input, &named).expect("promotes");
    assert_eq!(p.case.clauses, vec!["OPT-002".to_owned()]);
    let bogus = PromoteOptions {
        clauses: vec!["XYZ-999".into()],
        name: Some("bogus".into()),
        ..opts
    };
    let err = findings::promote(&Reference, &input, &bogus).unwrap_err();
    assert!(matches!(err, FindingError::UnknownClause(_)), "{err}");
}

/// Panics on every scenario: an engine that crashes.
struct Crashing;

impl Backend for Crashing {
    fn name(&self) -> &str {
        "crashing"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options, Capability::Transfer]
            .into_iter()
            .collect()
    }

    fn options(&self, _: &OptionsScenario) -> Answer<OptionsObservation> {
        panic!("segmentation fault in the option parser")
    }

    fn transfer(
        &self,
        _: &ge_spec::vocab::TransferScenario,
    ) -> Answer<ge_spec::vocab::TransferObservation> {
        panic!("segmentation fault in the transfer planner")
    }
}

/// A crash on a scenario that sets no option holds the engine to the defaults in force: the
/// value clauses of the options its capability's cases cite. With a clause named that does
/// not say why the case holds under one profile only, the clauses where the profiles diverge
/// are added, so the case loads.
#[test]
fn a_crash_on_a_scenario_setting_no_option_promotes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = r#"{"capability":"transfer","run_mode":"async","shape":"static",
        "inputs":[{"index":0,"size":100,"placement":"host"},
                  {"index":1,"size":200000,"placement":"host"},
                  {"index":2,"size":64,"placement":"host"}]}"#;
    let input = write(dir.path(), "crash.json", scenario.as_bytes());
    for (name, clauses) in [("no-clause", vec![]), ("named", vec!["TRF-002".to_owned()])] {
        let table = dir.path().join(format!("{name}.toml"));
        let opts = PromoteOptions {
            table: table.clone(),
            clauses,
            ..Default::default()
        };
        let p = findings::promote(&Crashing, &input, &opts)
            .unwrap_or_else(|e| panic!("{name}: a crash promotes: {e}"));
        for value in ["IFS-001", "IBC-001"] {
            assert!(
                name == "named" || p.case.clauses.contains(&value.to_owned()),
                "{name}: {:?}",
                p.case.clauses
            );
        }
        // The two references plan these inputs differently (fusion of the small ones), so
        // the case holds under one profile and cites a clause where they diverge.
        assert!(p.case.profile.is_some(), "{name}: {:?}", p.case);
        let spec = load_with(&table);
        let divergent = |id: &String| spec.clause(id).is_some_and(ge_spec::Clause::diverges);
        assert!(
            p.case.clauses.iter().any(divergent),
            "{name}: {:?}",
            p.case.clauses
        );
        reference_passes_and_crashing_fails(&spec, &p.case.name);
    }
}

/// The promoted case `name` of `spec`: the reference passes it, the crashing engine fails it.
fn reference_passes_and_crashing_fails(spec: &ge_spec::Spec, name: &str) {
    let case = spec
        .cases()
        .iter()
        .find(|c| c.case.name == name)
        .expect("the promoted case is in the table");
    assert!(matches!(run_case(&STRICT, &Reference, case), Verdict::Pass));
    assert!(matches!(
        run_case(&Judging::DEFAULT, &Crashing, case),
        Verdict::Fail(_)
    ));
}

#[test]
fn a_crash_is_a_finding_and_promotes_without_a_clause_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "crash.json", SCENARIO.as_bytes());
    let table = dir.path().join("regressions.toml");
    let opts = PromoteOptions {
        table: table.clone(),
        ..Default::default()
    };
    let p = findings::promote(&Crashing, &input, &opts).expect("a crash promotes");
    // The case holds the engine to the value the scenario sets, and says why it cites it.
    assert_eq!(p.case.clauses, vec!["ACP-001".to_owned()]);
    assert!(p.cites_values_in_force);
    assert!(p.to_string().contains("the finding names no clause"), "{p}");
    assert!(
        p.failure
            .as_deref()
            .is_some_and(|f| f.contains("segmentation fault")),
        "{:?}",
        p.failure
    );
    // The reference passes the case, the crashing engine fails it.
    reference_passes_and_crashing_fails(&load_with(&table), &p.case.name);
}

#[test]
fn crash_files_are_read_through_their_target() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = dir.path().join("artifacts/transfer");
    std::fs::create_dir_all(&artifacts).unwrap();
    // Raw bytes, as libFuzzer writes them: the target comes from the directory.
    let crash = write(&artifacts, "crash-0", &[7u8; 64]);
    let (scenario, label) = findings::finding_scenario(&crash, &[7u8; 64], None).expect("reads");
    assert_eq!(label, "transfer");
    assert_eq!(scenario.capability(), Capability::Transfer);
    // Elsewhere, the target must be named.
    let loose = write(dir.path(), "crash-1", &[7u8; 64]);
    let err = findings::finding_scenario(&loose, &[7u8; 64], None).unwrap_err();
    assert!(matches!(err, FindingError::NeedsTarget(_)), "{err}");
    let err = findings::finding_scenario(&loose, &[7u8; 64], Some("nope")).unwrap_err();
    assert!(matches!(err, FindingError::UnknownTarget(_)), "{err}");
    // Input a target cannot read (too short for a scenario) is refused, not defaulted.
    let err = findings::finding_scenario(&loose, b"{", Some("memory")).unwrap_err();
    assert!(matches!(err, FindingError::Undecodable { .. }), "{err}");
}

#[test]
fn the_corpus_has_seeds_for_every_target_from_the_tables_and_the_boundaries() {
    // Every target's seeds, as `corpus` writes them: one file per seed, so names never repeat.
    let spec = Spec::embedded();
    let seeds: Vec<_> = fuzz::TARGETS
        .iter()
        .map(|t| (t.name, t.seeds(spec)))
        .collect();
    for (target, seeds) in &seeds {
        assert!(!seeds.is_empty(), "{target} has no seeds");
        let names: BTreeSet<&str> = seeds.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), seeds.len(), "{target} names two seeds alike");
        assert!(
            seeds.iter().all(|(_, b)| b.len() <= fuzz::MAX_SEED_BYTES),
            "{target} has a seed over the cap"
        );
    }
    // The built cases (10,000 constants, 100,000 events) are over the seed size cap; every table
    // case and every boundary scenario seeds the differential target.
    let cases = spec
        .cases()
        .iter()
        .filter(|c| !ge_spec::built::TABLES.contains(&c.table.as_str()))
        .count();
    let boundaries: usize = ge_spec::Capability::ALL
        .into_iter()
        .map(|c| ge_conformance::gen::boundary_scenarios(c).len())
        .sum();
    let differential = seeds.iter().find(|(t, _)| *t == "differential").unwrap();
    assert_eq!(differential.1.len(), cases + boundaries);
    // Written to disk: each target's seeds, byte for byte. One target is enough here: the
    // whole corpus is some 12,000 files, 6 s of file creation on this kind of disk (CI's fuzz
    // step writes all of it).
    let dir = tempfile::tempdir().unwrap();
    let (target, want) = seeds.iter().find(|(t, _)| *t == "session").unwrap();
    let written = findings::write_corpus(spec, dir.path(), Some(target)).expect("writes");
    assert_eq!(written, [(*target, want.len())]);
    for (name, bytes) in want {
        let got = std::fs::read(dir.path().join(target).join(name)).unwrap();
        assert_eq!(&got, bytes, "{target}/{name}");
    }
    let files = std::fs::read_dir(dir.path().join(target)).unwrap().count();
    assert_eq!(files, want.len(), "{target}: only its seeds");
    // Its dictionary beside it, in libFuzzer's format, holding the tables' bounds.
    let dict = std::fs::read_to_string(dir.path().join(format!("{target}.dict"))).unwrap();
    assert_eq!(dict, fuzz::dictionary(spec));
    let entries = fuzz::dictionary_entries(&dict).expect("libFuzzer's format");
    let fusion = spec.option(ge_spec::OptionKey::InputFusionSize);
    let past = (fusion.max.unwrap() + 1).to_string();
    assert!(entries.iter().any(|e| e == past.as_bytes()), "{dict}");
    let err = findings::write_corpus(spec, dir.path(), Some("nope")).unwrap_err();
    assert!(matches!(err, FindingError::UnknownTarget(_)), "{err}");
}

/// The two references report an empty index list under different clauses (documented OPT-003,
/// upstream IRM-004's grammar), a difference the judge takes for a deviation only. A finding on
/// such a scenario is bound to its profile and cites the divergent clause the references'
/// diagnostics differ by; `promote` refused it before ("cites no clause with an `upstream`
/// entry"), and the fuzzing drill's first input, the empty one, reached it in the `lists` target.
#[test]
fn a_finding_the_references_label_differently_promotes_bound_to_its_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = write(
        dir.path(),
        "empty-list.json",
        br#"{"capability":"options","options":{"graph":{"ge.exec.inputReuseMemIndexes":""}}}"#,
    );
    let engine = ge_conformance::forbidden::Engine::new("value-off-0".parse().expect("mutation"));
    let opts = PromoteOptions {
        table: dir.path().join("found.toml"),
        ..PromoteOptions::default()
    };
    let p = findings::promote(&engine, &input, &opts).expect("promoted");
    assert_eq!(p.case.profile, Some(ge_spec::Profile::Documented));
    assert!(
        p.case.clauses.contains(&"IRM-004".to_owned()),
        "{:?}",
        p.case.clauses
    );
    load_with(&opts.table);
}
