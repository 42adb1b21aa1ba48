//! A vendor's own case tables join the embedded contract through the same per-case rules, and
//! never take the name of one of the contract's tables.

use ge_spec::{LoadError, Spec};

const GOOD: &str = r#"# a vendor's case
[[case]]
name = "fusion-off"
clauses = ["IFS-013"]
oracle = true
[case.scenario]
capability = "transfer"
options.session = { "ge.exec.input_fusion_size" = "0" }
inputs = [{ index = 0, size = 64 }]
[case.expect]
fused = []
"#;

fn errors(files: &[(&str, &str)]) -> Vec<LoadError> {
    match Spec::embedded().with_local_cases(files.iter().copied()) {
        Ok(_) => panic!("{files:?} should be refused"),
        Err(e) => e.0,
    }
}

#[test]
fn a_local_table_adds_its_cases_and_keeps_the_contract_digest() {
    let spec = Spec::embedded()
        .with_local_cases([("vendor-transfer.toml", GOOD)])
        .expect("a valid local table loads");
    assert_eq!(spec.cases().len(), Spec::embedded().cases().len() + 1);
    let case = spec
        .cases()
        .iter()
        .find(|c| c.full_name() == "vendor-transfer/fusion-off")
        .expect("the local case is there");
    assert!(spec.is_local(case));
    assert!(!spec.is_local(&Spec::embedded().cases()[0]));
    assert_eq!(spec.digest(), Spec::embedded().digest());
    let digest = spec.local_digest().expect("local tables have a digest");
    assert_eq!(digest.len(), 64);
    assert_eq!(spec.local_tables().collect::<Vec<_>>(), ["vendor-transfer"]);
    // Adding again replaces the local tables rather than doubling them.
    let again = spec
        .with_local_cases([("vendor-transfer.toml", GOOD)])
        .expect("the same table again");
    assert_eq!(again.cases().len(), spec.cases().len());
    assert_eq!(again.local_digest(), Some(digest));
    assert_eq!(Spec::embedded().local_digest(), None);
}

#[test]
fn a_local_case_naming_a_missing_clause_is_refused() {
    let text = GOOD.replace("IFS-013", "IFS-999");
    let errs = errors(&[("vendor.toml", &text)]);
    assert!(
        errs.iter()
            .any(|e| matches!(e, LoadError::UnknownClause { clause, .. } if clause == "IFS-999")),
        "{errs:?}"
    );
}

#[test]
fn duplicate_names_unknown_fields_and_messages_are_refused() {
    let twice = format!("{GOOD}{}", GOOD.replace("# a vendor's case\n", ""));
    let errs = errors(&[("vendor.toml", &twice)]);
    assert!(
        errs.iter()
            .any(|e| matches!(e, LoadError::DuplicateCase { name } if name == "vendor/fusion-off")),
        "{errs:?}"
    );
    let unknown = GOOD.replace("oracle = true", "oracle = true\nseverity = 3");
    assert!(matches!(
        errors(&[("vendor.toml", &unknown)])[..],
        [LoadError::Parse { .. }]
    ));
    let worded = r#"
[[case]]
name = "worded"
clauses = ["IFS-001"]
scenario = { capability = "options", options.session = { "ge.exec.input_fusion_size" = "x" } }
expect = { errors = [{ clause = "IFS-001", message = "bad" }] }
"#;
    let errs = errors(&[("vendor.toml", worded)]);
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("wording is never judged")),
        "{errs:?}"
    );
}

#[test]
fn a_local_table_never_takes_a_contract_table_name() {
    let errs = errors(&[("transfer-examples.toml", GOOD)]);
    assert!(
        matches!(&errs[..], [LoadError::LocalTable { file, why }]
            if file == "transfer-examples.toml" && why.contains("local-transfer-examples")),
        "{errs:?}"
    );
    let errs = errors(&[("Vendor.toml", GOOD), ("notes.txt", "")]);
    assert_eq!(errs.len(), 2, "{errs:?}");
}

#[test]
fn a_case_with_nothing_to_judge_is_refused_locally_too() {
    let text = GOOD
        .replace("oracle = true\n", "")
        .replace("[case.expect]\nfused = []\n", "");
    let errs = errors(&[("vendor.toml", &text)]);
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("could never fail")),
        "{errs:?}"
    );
}
