//! The reach table: for every documented clause, the forbidden answers
//! (`ge_conformance::forbidden`) that the judge fails under that clause alone, made on the
//! fixed scenarios of every certification (the case tables and the boundary catalogue, which no
//! seed changes, so what they reach is reached at every seed). `docs/reach.md` is the table,
//! regenerated with `UPDATE_REACH=1` (`ge-conformance spec --reach` prints it). Every
//! documented clause that can be broken is reached, or the test fails.

use ge_conformance::forbidden;
use ge_spec::Spec;

#[test]
fn every_documented_clause_is_reached_by_the_fixed_scenarios() {
    let reach = forbidden::reach(&forbidden::fixed_scenarios());
    let spec = Spec::embedded();
    for c in spec.clauses().filter(|c| c.permits_only()) {
        let reached = reach.get(&c.id).is_some_and(|r| r.answers > 0);
        assert!(!reached, "{} only permits, yet an answer breaks it", c.id);
    }
    let missing = forbidden::unreached(&reach);
    let text = forbidden::table(&reach);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reach.md");
    if std::env::var_os("UPDATE_REACH").is_some() {
        std::fs::write(path, &text).expect("write docs/reach.md");
    } else {
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == text,
            "docs/reach.md is stale: run UPDATE_REACH=1 cargo test -p ge-conformance --test it reach::"
        );
    }
    assert!(
        missing.is_empty(),
        "documented clauses no forbidden answer reaches: {missing:?}"
    );
}

#[test]
fn a_mutation_that_changes_nothing_reaches_nothing() {
    // The reference's own answers: nothing binding fails, so nothing is reached.
    let scenarios = forbidden::fixed_scenarios();
    let some: Vec<_> = scenarios.into_iter().step_by(40).collect();
    for (name, s) in &some {
        let problems = ge_conformance::certify::compare(
            &ge_conformance::judging::Judging::DEFAULT,
            &ge_reference::Reference::new(ge_spec::Profile::Documented),
            s,
        );
        assert!(
            problems.iter().all(|p| p.deviation),
            "{name}: the reference fails"
        );
    }
}
