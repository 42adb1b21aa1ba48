//! Choice variants: the other direction of the fault table. Each backend here is the reference
//! with ONE of the suite's own choices made otherwise, a row of `spec/tables/alternatives.toml`
//! alone ([`ge_conformance::allowed::Engine`] with one pick; `allowed_answers` combines them).
//! Each must certify at level `documented` with no failure, and break the clause of that
//! choice at level `strict` (a deviation at `documented`): what an engine chose where the text
//! is silent never fails it. `docs/choices.md` lists them, and the suite's choices that have no
//! variant yet, each with why ([`NO_VARIANT`]).

use std::collections::BTreeMap;
use std::fs;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ge_conformance::allowed::{Engine, Rewrite};
use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::judging::Judging;
use ge_conformance::report::{Outcome, Report};
use ge_spec::Spec;
use rstest::rstest;

fn run(choice: Rewrite, judging: Judging, filter: Option<String>) -> Report {
    let cfg = Config {
        judging,
        cases: 48,
        filter,
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    certify::certify(&Engine::new([choice]), &cfg, &mut |_, _, _| {}).expect("a run")
}

/// The variant's run at level `documented`, made once per choice in a process: several cases
/// judge one choice (on different clauses), and the run does not depend on the clause.
fn documented(choice: Rewrite) -> Arc<Report> {
    type Runs = Mutex<BTreeMap<String, Arc<OnceLock<Arc<Report>>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let slot = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(format!("{choice:?}"))
        .or_default()
        .clone();
    slot.get_or_init(|| Arc::new(run(choice, Judging::DEFAULT, None)))
        .clone()
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
#[case::no_clause_cited(Rewrite::NoClauseCited, "OPT-012")]
#[case::option_clause_cited(Rewrite::OptionClauseCited, "OPT-012")]
#[case::one_error_per_key(Rewrite::OneErrorPerKey, "OPT-012")]
#[case::refuse_list_out_of_range(Rewrite::RefuseListOutOfRange, "IRM-005")]
#[case::other_hash(Rewrite::OtherHash, "EXW-012")]
#[case::packed_combined_file(Rewrite::PackedCombinedFile, "EXW-015")]
#[case::warnings_dropped(Rewrite::WarningsDropped, "OPT-002")]
#[case::warnings_as_errors(Rewrite::WarningsAsErrors, "OPT-012")]
#[case::refused_over_ineffective_setting(Rewrite::RefusedOverIneffectiveSetting, "OPT-002")]
#[case::raised_plan(Rewrite::RaisedPlan, "DRM-016")]
#[case::empty_combined_file(Rewrite::EmptyCombinedFile, "EXW-015")]
#[case::lower_script_cap(Rewrite::LowerScriptCap, "SES-020")]
#[case::io_area_at_first_execution(Rewrite::IoAreaAtFirstExecution, "RZC-013")]
#[case::lenient_spellings(Rewrite::LenientSpellings, "OPT-003")]
#[case::lenient_index_lists(Rewrite::LenientSpellings, "ORM-004")]
#[case::lenient_pair_lists(Rewrite::LenientSpellings, "ORI-006")]
#[case::ignore_invalid(Rewrite::IgnoreInvalid, "OPT-005")]
#[case::pools_kept_for_the_session(Rewrite::PoolsKept, "SMP-013")]
#[case::pools_kept_at_their_size(Rewrite::PoolsKept, "SMP-012")]
#[case::no_batch_copy_on_dynamic_shapes(Rewrite::NoBatchOnDynamic, "IBC-015")]
#[case::missing_user_dir_refused(Rewrite::MissingUserDirRefused, "EWD-012")]
#[case::invalid_mode_ignored_by_the_load(Rewrite::IgnoreInvalid, "WGT-009")]
#[case::missing_work_path_refused(Rewrite::MissingWorkPathRefused, "WGT-003")]
#[case::uncreatable_work_path_skipped(Rewrite::UncreatableWorkPathSkipped, "EXW-022")]
#[case::failed_load_leaves_its_dir(Rewrite::FailedLoadLeavesItsDir, "EXW-021")]
#[case::wasteful_planner(Rewrite::WastefulPlanner, "DRM-016")]
#[case::borrows_unlisted_output(Rewrite::BorrowsUnlistedOutput, "ORM-010")]
#[case::follows_ge_use_static_memory(Rewrite::FollowsEnvironment, "SMP-016")]
#[case::io_area_kept_to_the_end(Rewrite::IoKeptToTheEnd, "RZC-013")]
#[case::aliases_unreported(Rewrite::AliasesUnreported, "ORI-010")]
#[case::own_file_per_constant(Rewrite::OwnFilePerConstant, "EXW-013")]
#[case::duplicates_stored_again(Rewrite::OwnFilePerConstant, "EXW-020")]
fn a_choice_the_text_allows_certifies_and_deviates_on_its_clause(
    #[case] choice: Rewrite,
    #[case] clause: &str,
) {
    let doc = documented(choice);
    assert!(
        doc.certified,
        "{choice:?} must certify at level documented; failed:\n{}",
        failures(&doc).join("\n")
    );
    let deviated = doc
        .trials
        .iter()
        .find(|t| t.deviations.iter().any(|c| c == clause));
    let Some(deviated) = deviated else {
        panic!("{choice:?} must show {clause} as a deviation");
    };
    // The trial that deviated, again at level strict: the same scenarios, judged with the
    // suite's choices binding.
    let strict = run(
        choice,
        Judging::DEFAULT.strict(),
        Some(deviated.name.clone()),
    );
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
    let me = fs::read_to_string(format!("{root}/harness/tests/it/choice_variants.rs"))
        .expect("this file");
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
    ("IBC-014", "covered by the fault row `HostInputCount` (OPT-008): counting only host inputs changes the IBC-003 warning alone"),
    ("IFS-015", "no other reading: the unit of the source text's own figures, which the suite's cases use; an engine is given bytes and never a unit"),
    ("IFS-017", "no other reading: an empty input is within any threshold above 0, so IFS-010 fuses it (the row `ZeroByteNotMoved` fails there)"),
    ("IFS-019", "no other reading: an input within the threshold by its bytes is fused by IFS-010 (the row `AlignedSizes` fails there)"),
    ("IFS-020", "covered by `ignore_invalid` (OPT-005), the one other answer the text leaves: any value in force but the default breaks IFS-001"),
    ("OPT-009", "no other reading: the scenario's spelling of products, which an engine reads and does not choose"),
    ("OPT-010", "covered by the fault row `Silence(\"OPT-002\")`: the index options are one case of OPT-002, stated apart for the upstream profile"),
    ("OPT-011", "no other reading: how the upstream profile reports upstream's later refusals; the documented profile does not use it"),
    ("SES-016", "no other reading: what a scenario's option maps mean for its graphs, the vocabulary's, which an engine reads and does not choose"),
    ("SMP-015", "no other reading: a policy that a graph's map changes would take effect at graph level, which SMP-002 rules out"),
    ("TRF-005", "covered by the fault row `PlanningDespiteErrors` (TRF-004), whose oracle clause it is: a plan made despite errors"),
    ("WGT-001", "no other reading: the sandbox's rule for scenario paths, without which no run can be judged safely"),
];

#[test]
fn every_choice_of_the_suite_has_a_variant_or_a_reason() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let me = fs::read_to_string(format!("{root}/harness/tests/it/choice_variants.rs"))
        .expect("this file");
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
