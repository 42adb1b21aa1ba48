//! The loader refuses every kind of broken table with a typed error, and accepts the embedded
//! tables.

use ge_spec::{LoadError, OptionKey, Spec};

const OPTIONS: &str = include_str!("../../tables/options.toml");

const CLAUSE: &str = r#"
[[clause]]
id = "OPT-001"
summary = "A rule."
strength = "MUST"
origin = "documented"
section = "s"
source = "p"
"#;

const CASE: &str = r#"
[[case]]
name = "one"
clauses = ["OPT-001"]
scenario = { capability = "options" }
expect = { errors = [] }
"#;

const PIN: &str = r#"# the pinned GE source
[upstream]
repository = "owner/ge"
commit = "0123456789abcdef0123456789abcdef01234567"
"#;

/// Loads `options.toml`, `upstream.toml` (unless `extra` brings its own; `-` as its text leaves
/// it out) and `extra`.
fn load(extra: &[(&str, &str)]) -> Result<Spec, Vec<LoadError>> {
    let mut files = vec![("options.toml", OPTIONS)];
    if !extra.iter().any(|(p, _)| *p == "upstream.toml") {
        files.push(("upstream.toml", PIN));
    }
    files.extend(extra.iter().copied().filter(|(_, text)| *text != "-"));
    Spec::from_files(files).map_err(|e| e.0)
}

#[test]
fn the_embedded_tables_load() {
    let spec = Spec::embedded();
    assert_eq!(spec.options().count(), 12);
    assert!(spec.clauses().count() > 40);
    assert!(spec.cases().len() > 100);
    assert_eq!(spec.digest().len(), 64);
    for key in OptionKey::ALL {
        assert_eq!(spec.option(key).key, key);
    }
}

#[test]
fn every_table_file_starts_with_a_comment() {
    for (path, text) in Spec::embedded_files() {
        assert!(
            text.starts_with('#'),
            "{path} must start with a `#` comment saying what it covers"
        );
    }
}

#[test]
fn a_minimal_set_loads() {
    let spec = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", CASE)]).expect("loads");
    assert_eq!(spec.cases()[0].full_name(), "t/one");
}

#[test]
fn unknown_fields_are_refused() {
    let bad_case = CASE.replace("name = \"one\"", "name = \"one\"\nnmae = \"typo\"");
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &bad_case)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::Parse { file, message } if file == "cases/t.toml" && message.contains("nmae")),
        "{errors:?}"
    );

    let bad_scenario = CASE.replace(
        "capability = \"options\"",
        "capability = \"options\", colour = 1",
    );
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &bad_scenario)]).unwrap_err();
    assert!(matches!(&errors[0], LoadError::Parse { .. }), "{errors:?}");
}

#[test]
fn unknown_capability_is_refused() {
    let bad = CASE.replace("capability = \"options\"", "capability = \"teleport\"");
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &bad)]).unwrap_err();
    assert!(matches!(&errors[0], LoadError::Parse { .. }), "{errors:?}");
}

#[test]
fn duplicates_are_refused() {
    let errors = load(&[
        ("clauses/a.toml", CLAUSE),
        ("clauses/b.toml", CLAUSE),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err();
    assert!(
        errors.contains(&LoadError::DuplicateClause {
            id: "OPT-001".into()
        }),
        "{errors:?}"
    );

    let two = format!("{CASE}{CASE}");
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &two)]).unwrap_err();
    assert!(
        errors.contains(&LoadError::DuplicateCase {
            name: "t/one".into()
        }),
        "{errors:?}"
    );

    let twice = format!(
        "{OPTIONS}\n{}",
        &OPTIONS[OPTIONS.find("[[option]]").unwrap()..]
    );
    let errors = Spec::from_files([
        ("options.toml", twice.as_str()),
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err()
    .0;
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, LoadError::Option(m) if m.contains("twice"))),
        "{errors:?}"
    );
}

#[test]
fn the_same_case_name_in_two_tables_is_fine() {
    load(&[
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
        ("cases/u.toml", CASE),
    ])
    .expect("names are per table");
}

#[test]
fn a_case_naming_a_missing_clause_is_refused() {
    let bad = CASE.replace("[\"OPT-001\"]", "[\"OPT-001\", \"OPT-404\"]");
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &bad)]).unwrap_err();
    assert_eq!(
        errors,
        vec![LoadError::UnknownClause {
            case: "t/one".into(),
            clause: "OPT-404".into()
        }]
    );
}

#[test]
fn a_clause_without_a_case_is_refused() {
    let second = CLAUSE.replace("OPT-001", "OPT-002");
    let errors = load(&[
        ("clauses/a.toml", CLAUSE),
        ("clauses/b.toml", &second),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err();
    assert_eq!(
        errors,
        vec![LoadError::UncoveredClause {
            id: "OPT-002".into()
        }]
    );
}

#[test]
fn a_case_that_cannot_fail_is_refused() {
    let bad = CASE.replace("expect = { errors = [] }", "");
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &bad)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadCase { why, .. } if why.contains("could never fail")),
        "{errors:?}"
    );
}

#[test]
fn a_promoted_case_without_its_root_cause_is_refused() {
    let promoted = CASE.replace(
        "name = \"one\"",
        &format!(
            "name = \"one\"\ncomment = \"{}\"",
            ge_spec::tables::ROOT_CAUSE_SLOT
        ),
    );
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &promoted)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadCase { why, .. } if why.contains("root cause")),
        "{errors:?}"
    );
    let explained = promoted.replace(
        ge_spec::tables::ROOT_CAUSE_SLOT,
        "Off by one in the parser.",
    );
    load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &explained)]).expect("loads");
}

#[test]
fn clause_rows_are_checked() {
    let cases = CASE.replace("OPT-001", "XYZ-1");
    let bad_id = CLAUSE.replace("OPT-001", "XYZ-1");
    let errors = load(&[("clauses/a.toml", &bad_id), ("cases/t.toml", &cases)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadClause { why, .. } if why.contains("three capital letters")),
        "{errors:?}"
    );

    let no_rationale = CLAUSE.replace("documented", "reference-defined");
    let errors = load(&[("clauses/a.toml", &no_rationale), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadClause { why, .. } if why.contains("rationale")),
        "{errors:?}"
    );

    let rationale_on_documented = CLAUSE.replace(
        "section = \"s\"",
        "section = \"s\"\nrationale = \"because\"",
    );
    let errors = load(&[
        ("clauses/a.toml", &rationale_on_documented),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadClause { .. }),
        "{errors:?}"
    );

    let wrong_prefix = CLAUSE.replace(
        "id = \"OPT-001\"",
        "id = \"OPT-001\"\noption = \"ge.inputBatchCpy\"",
    );
    let errors = load(&[("clauses/a.toml", &wrong_prefix), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::BadClause { why, .. } if why.contains("IBC")),
        "{errors:?}"
    );
}

#[test]
fn option_rows_are_checked() {
    let missing: String = OPTIONS.replace(
        "key = \"ge.inputBatchCpy\"",
        "key = \"ge.featureBaseRefreshable\"",
    );
    let errors = Spec::from_files([
        ("options.toml", missing.as_str()),
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err()
    .0;
    assert!(
        errors.iter().any(
            |e| matches!(e, LoadError::Option(m) if m.contains("ge.inputBatchCpy has no row"))
        ),
        "{errors:?}"
    );

    // The threshold's default set one past its maximum (both read from the table).
    let fusion = Spec::embedded().option(ge_spec::OptionKey::InputFusionSize);
    let default = format!("default = \"{}\"", fusion.default_number().unwrap());
    let past = format!("default = \"{}\"", fusion.max.unwrap() + 1);
    let bad_default = OPTIONS.replace(&default, &past);
    assert_ne!(bad_default, OPTIONS, "the default was replaced");
    let errors = Spec::from_files([
        ("options.toml", bad_default.as_str()),
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
    ])
    .unwrap_err()
    .0;
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, LoadError::Option(m) if m.contains("min..=max"))),
        "{errors:?}"
    );
}

#[test]
fn stray_and_unparsable_files_are_refused() {
    let errors = load(&[
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
        ("notes.toml", "# x\n"),
    ])
    .unwrap_err();
    assert_eq!(
        errors,
        vec![LoadError::StrayFile {
            file: "notes.toml".into()
        }]
    );
    let errors = load(&[("clauses/a.toml", "[[clause]\n"), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        matches!(&errors[0], LoadError::Parse { file, .. } if file == "clauses/a.toml"),
        "{errors:?}"
    );
}

#[test]
fn the_digest_changes_with_any_byte() {
    let a = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", CASE)]).unwrap();
    let case2 = CASE.replace("one", "two");
    let b = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", &case2)]).unwrap();
    assert_ne!(a.digest(), b.digest());
}

const DIVERGENT_CLAUSE: &str = r#"
[[clause]]
id = "OPT-001"
summary = "A rule."
strength = "MUST"
origin = "documented"
section = "s"
source = "p"
upstream = { behaviour = "Upstream does something else.", source = [{ file = "src/a.cc", function = "Decide", lines = "10-20" }] }
"#;

const PROFILE_CASES: &str = r#"
[[case]]
name = "documented"
clauses = ["OPT-001"]
profile = "documented"
scenario = { capability = "options" }
expect = { errors = [] }

[[case]]
name = "upstream"
clauses = ["OPT-001"]
profile = "upstream"
scenario = { capability = "options" }
expect = { warnings = [] }
"#;

#[test]
fn profile_bound_cases_on_a_divergent_clause_load() {
    use ge_spec::Profile;
    let spec = load(&[
        ("clauses/a.toml", DIVERGENT_CLAUSE),
        ("cases/t.toml", PROFILE_CASES),
    ])
    .expect("loads");
    let names = |p| spec.cases_in(p).map(|c| c.full_name()).collect::<Vec<_>>();
    assert_eq!(names(Profile::Documented), ["t/documented"]);
    assert_eq!(names(Profile::Upstream), ["t/upstream"]);
    let divergent: Vec<_> = spec.divergent_clauses().map(|c| c.id.as_str()).collect();
    assert_eq!(divergent, ["OPT-001"]);
}

#[test]
fn a_profile_bound_case_must_cite_a_divergent_clause() {
    let errors = load(&[("clauses/a.toml", CLAUSE), ("cases/t.toml", PROFILE_CASES)]).unwrap_err();
    assert!(
        errors.iter().any(|e| matches!(e, LoadError::BadCase { name, why } if name == "t/upstream" && why.contains("upstream"))),
        "{errors:?}"
    );
}

#[test]
fn a_divergent_clause_needs_an_upstream_case() {
    let errors = load(&[("clauses/a.toml", DIVERGENT_CLAUSE), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        errors.iter().any(|e| matches!(e, LoadError::BadClause { id, why } if id == "OPT-001" && why.contains("profile = \"upstream\""))),
        "{errors:?}"
    );
}

#[test]
fn every_clause_needs_a_case_under_each_profile() {
    let only_upstream = PROFILE_CASES
        .split("[[case]]")
        .nth(2)
        .map(|c| format!("[[case]]{c}"))
        .expect("two cases");
    let errors = load(&[
        ("clauses/a.toml", DIVERGENT_CLAUSE),
        ("cases/t.toml", &only_upstream),
    ])
    .unwrap_err();
    assert_eq!(
        errors,
        [LoadError::UncoveredInProfile {
            id: "OPT-001".into(),
            profile: ge_spec::Profile::Documented
        }]
    );
}

#[test]
fn an_unknown_profile_or_upstream_field_is_refused() {
    let bad_profile = PROFILE_CASES.replace("profile = \"upstream\"", "profile = \"vendor\"");
    let errors = load(&[
        ("clauses/a.toml", DIVERGENT_CLAUSE),
        ("cases/t.toml", &bad_profile),
    ])
    .unwrap_err();
    assert!(matches!(&errors[0], LoadError::Parse { .. }), "{errors:?}");
    let bad_upstream = DIVERGENT_CLAUSE.replace("behaviour =", "behavior =");
    let errors = load(&[
        ("clauses/a.toml", &bad_upstream),
        ("cases/t.toml", PROFILE_CASES),
    ])
    .unwrap_err();
    assert!(matches!(&errors[0], LoadError::Parse { .. }), "{errors:?}");
}

#[test]
fn an_upstream_entry_without_its_source_is_refused() {
    let load_with = |clause: &str| {
        load(&[("clauses/a.toml", clause), ("cases/t.toml", PROFILE_CASES)]).map(|s| {
            let up = s.clause("OPT-001").and_then(|c| c.upstream.clone());
            (up, s.upstream_pin().cloned())
        })
    };
    let (up, pin) = load_with(DIVERGENT_CLAUSE).expect("the entry with a source loads");
    let source = &up.expect("an upstream entry").source;
    assert_eq!(source[0].to_string(), "src/a.cc:10-20 (Decide)");
    assert_eq!(pin.expect("the pin").repository, "owner/ge");

    let with_source = r#", source = [{ file = "src/a.cc", function = "Decide", lines = "10-20" }]"#;
    let no_source = DIVERGENT_CLAUSE.replace(with_source, "");
    assert_ne!(no_source, DIVERGENT_CLAUSE);
    let errors = load_with(&no_source).unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "cites no `source`"),
        "{errors:?}"
    );
    let empty = DIVERGENT_CLAUSE.replace(with_source, ", source = []");
    let errors = load_with(&empty).unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "cites no `source`"),
        "{errors:?}"
    );

    for good in ["7", "1-2, 5", "10-20, 30-31"] {
        let clause = DIVERGENT_CLAUSE.replace("\"10-20\"", &format!("{good:?}"));
        assert!(load_with(&clause).is_ok(), "{good}");
    }
    for bad in [
        "20-10",
        "ten",
        "010",
        "",
        "1-",
        "-1",
        "1,,2",
        "1,2",
        "3 (absent)",
    ] {
        let clause = DIVERGENT_CLAUSE.replace("\"10-20\"", &format!("{bad:?}"));
        let errors = load_with(&clause).unwrap_err();
        assert!(
            bad_clause(&errors, "OPT-001", "not `N` or `N-M`"),
            "{bad}: {errors:?}"
        );
    }
    for bad in ["/etc/a.cc", "../a.cc", "", "a//b.cc"] {
        let clause = DIVERGENT_CLAUSE.replace("\"src/a.cc\"", &format!("{bad:?}"));
        let errors = load_with(&clause).unwrap_err();
        assert!(
            bad_clause(&errors, "OPT-001", "upstream source"),
            "{bad}: {errors:?}"
        );
    }
}

#[test]
fn upstream_entries_need_the_pinned_commit() {
    let files = |pin: &'static str| {
        [
            ("clauses/a.toml", DIVERGENT_CLAUSE),
            ("cases/t.toml", PROFILE_CASES),
            ("upstream.toml", pin),
        ]
    };
    let errors = load(&files("-")).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, LoadError::Upstream(why) if why.contains("no upstream.toml"))),
        "{errors:?}"
    );
    let short = "[upstream]\nrepository = \"o/ge\"\ncommit = \"abc\"\n";
    let errors = load(&files(short)).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, LoadError::Upstream(why) if why.contains("40 hexadecimal"))),
        "{errors:?}"
    );
    // Tables without any upstream entry need no pin.
    let plain = [
        ("clauses/a.toml", CLAUSE),
        ("cases/t.toml", CASE),
        ("upstream.toml", "-"),
    ];
    assert!(load(&plain).is_ok());
}

#[test]
fn the_embedded_tables_pin_the_ge_commit_and_every_entry_cites_it() {
    let pin = Spec::embedded().upstream_pin().expect("a pin");
    assert_eq!(pin.repository, "hicann/ge");
    assert_eq!(pin.commit.len(), 40);
    for clause in Spec::embedded().divergent_clauses() {
        let up = clause.upstream.as_ref().expect("divergent");
        assert!(!up.source.is_empty(), "{} has no source", clause.id);
    }
}

#[test]
fn the_built_cases_load_with_the_tables_under_names_no_file_takes() {
    for (path, _) in Spec::embedded_files() {
        let stem = path
            .strip_prefix("cases/")
            .and_then(|p| p.strip_suffix(".toml"));
        assert!(
            stem.is_none_or(|s| !ge_spec::built::TABLES.contains(&s)),
            "{path} takes the name of a built table"
        );
    }
    let built: Vec<_> = Spec::embedded()
        .cases()
        .iter()
        .filter(|c| ge_spec::built::TABLES.contains(&c.table.as_str()))
        .map(|c| c.full_name())
        .collect();
    assert_eq!(built.len(), ge_spec::built::cases().len(), "{built:?}");
}

const SUITE_CHOICE: &str = r#"
[[clause]]
id = "OPT-002"
summary = "A choice of the suite."
origin = "reference-defined"
rationale = "The text is silent."
section = "s"
"#;

fn bad_clause(errors: &[LoadError], id: &str, needle: &str) -> bool {
    errors.iter().any(
        |e| matches!(e, LoadError::BadClause { id: i, why } if i == id && why.contains(needle)),
    )
}

fn bad_case(errors: &[LoadError], needle: &str) -> bool {
    errors
        .iter()
        .any(|e| matches!(e, LoadError::BadCase { why, .. } if why.contains(needle)))
}

#[test]
fn strength_and_source_belong_to_documented_clauses() {
    let case = CASE.replace("[\"OPT-001\"]", "[\"OPT-001\", \"OPT-002\"]");
    let with_strength = SUITE_CHOICE.replace("origin =", "strength = \"MUST\"\norigin =");
    let errors = load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{with_strength}")),
        (
            "cases/t.toml",
            &format!("{case}{}", CASE.replace("one", "two")),
        ),
    ])
    .unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-002", "strength is for documented"),
        "{errors:?}"
    );

    let no_source = CLAUSE.replace("source = \"p\"\n", "");
    let errors = load(&[("clauses/a.toml", &no_source), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "need a `source`"),
        "{errors:?}"
    );

    let no_strength = CLAUSE.replace("strength = \"MUST\"\n", "");
    let errors = load(&[("clauses/a.toml", &no_strength), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "need a strength"),
        "{errors:?}"
    );
}

#[test]
fn a_documented_clause_needs_a_case_that_binds_at_the_documented_level() {
    // The only case citing OPT-001 also cites a suite choice: breaking OPT-001 could then only
    // ever be a deviation.
    let case = CASE.replace("[\"OPT-001\"]", "[\"OPT-001\", \"OPT-002\"]");
    let errors = load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{SUITE_CHOICE}")),
        ("cases/t.toml", &case),
    ])
    .unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "cites only binding clauses"),
        "{errors:?}"
    );
    // One more case citing OPT-001 alone mends it.
    let pure = CASE.replace("one", "two");
    assert!(load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{SUITE_CHOICE}")),
        ("cases/t.toml", &format!("{case}{pure}")),
    ])
    .is_ok());
}

#[test]
fn patterns_never_name_a_message_and_type_their_diagnostics() {
    let clause = CLAUSE.replace("source = \"p\"", "source = \"p\"\nsubject = [\"index\"]");
    let with = |expect: &str| CASE.replace("expect = { errors = [] }", expect);
    let cases = [
        (
            r#"expect = { errors = [{ clause = "OPT-001", message = "exactly this" }] }"#,
            "wording is never judged",
        ),
        (r#"expect = { message = "x" }"#, "wording is never judged"),
        (
            r#"expect = { errors = [{ clause = "OPT-001", subject = "index 3" }] }"#,
            "not a table of typed fields",
        ),
        (
            r#"expect = { errors = [{ clause = "OPT-001", subject = { item = "x" } }] }"#,
            "does not define",
        ),
        (
            r#"expect = { errors = [{ clause = "OPT-001", colour = 1 }] }"#,
            "no field of a diagnostic pattern",
        ),
        (
            r#"expect = { errors = [{ clause = "OPT-404" }] }"#,
            "names no clause",
        ),
        (
            r#"expect = { errors = [{ clause = "OPT-001", optional = true }] }"#,
            "not a MAY clause",
        ),
    ];
    for (expect, needle) in cases {
        let errors =
            load(&[("clauses/a.toml", &clause), ("cases/t.toml", &with(expect))]).unwrap_err();
        assert!(bad_case(&errors, needle), "{expect}: {errors:?}");
    }
    let fine = with(r#"expect = { errors = [{ clause = "OPT-001", subject = { index = 3 } }] }"#);
    assert!(load(&[("clauses/a.toml", &clause), ("cases/t.toml", &fine)]).is_ok());
    let may = clause.replace("strength = \"MUST\"", "strength = \"MAY\"");
    let optional = with(r#"expect = { warnings = [{ clause = "OPT-001", optional = true }] }"#);
    assert!(load(&[("clauses/a.toml", &may), ("cases/t.toml", &optional)]).is_ok());
}

#[test]
fn reported_under_and_subject_name_what_exists() {
    let clause = CLAUSE.replace(
        "source = \"p\"",
        "source = \"p\"\nreported_under = \"OPT-404\"\nsubject = [\"colour\"]",
    );
    let errors = load(&[("clauses/a.toml", &clause), ("cases/t.toml", CASE)]).unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "names OPT-404"),
        "{errors:?}"
    );
    assert!(
        bad_clause(&errors, "OPT-001", "no field of a subject"),
        "{errors:?}"
    );
}

#[test]
fn implied_by_names_documented_clauses_that_are_not_implied_themselves() {
    let second = |id: &str, origin: &str, extra: &str| {
        format!(
            "\n[[clause]]\nid = \"{id}\"\nsummary = \"R.\"\norigin = \"{origin}\"\nsection = \"s\"\n{extra}"
        )
    };
    // OPT-001, implied by `by`.
    let implying = |by: &str| {
        CLAUSE.replace(
            "source = \"p\"",
            &format!("source = \"p\"\nimplied_by = [\"{by}\"]"),
        )
    };
    let try_load = |clauses: String, cites: &str| {
        let case = CASE.replace("[\"OPT-001\"]", cites);
        load(&[("clauses/a.toml", &clauses), ("cases/t.toml", &case)])
    };
    let own = implying("OPT-001");
    let errors = try_load(own, "[\"OPT-001\"]").unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "the clause itself"),
        "{errors:?}"
    );

    let missing = implying("OPT-404");
    let errors = try_load(missing, "[\"OPT-001\"]").unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "names OPT-404"),
        "{errors:?}"
    );

    let by_choice =
        implying("OPT-002") + &second("OPT-002", "reference-defined", "rationale = \"why\"\n");
    let errors = try_load(by_choice, "[\"OPT-001\", \"OPT-002\"]").unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "both must be documented"),
        "{errors:?}"
    );

    let chain = implying("OPT-002")
        + &second(
            "OPT-002",
            "documented",
            "strength = \"MUST\"\nsource = \"p\"\nimplied_by = [\"OPT-003\"]\n",
        )
        + &second(
            "OPT-003",
            "documented",
            "strength = \"MUST\"\nsource = \"p\"\n",
        );
    let errors = try_load(chain, "[\"OPT-001\", \"OPT-002\", \"OPT-003\"]").unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-001", "implied itself"),
        "{errors:?}"
    );

    let fine = implying("OPT-002")
        + &second(
            "OPT-002",
            "documented",
            "strength = \"MUST\"\nsource = \"p\"\n",
        );
    let loaded = try_load(fine, "[\"OPT-001\", \"OPT-002\"]").expect("loads");
    assert_eq!(
        loaded.clause("OPT-001").map(|c| c.implied_by.clone()),
        Some(vec!["OPT-002".to_owned()])
    );
}

#[test]
fn the_embedded_documented_clauses_carry_a_source_and_suite_choices_no_strength() {
    use ge_spec::Origin;
    for c in Spec::embedded().clauses() {
        match c.origin {
            Origin::Documented => assert!(c.source.is_some() && c.strength.is_some(), "{}", c.id),
            Origin::ReferenceDefined | Origin::Vocabulary => {
                assert!(c.strength.is_none() && c.rationale.is_some(), "{}", c.id)
            }
        }
    }
}

#[test]
fn a_vocabulary_clause_binds_at_every_level_and_needs_a_rationale() {
    use ge_spec::{Conformance, Origin, Profile};
    let spec = Spec::embedded();
    let vocabulary: Vec<&str> = spec
        .clauses()
        .filter(|c| c.origin == Origin::Vocabulary)
        .map(|c| c.id.as_str())
        .collect();
    assert!(vocabulary.contains(&"MEM-002") && vocabulary.contains(&"SES-010"));
    for id in &vocabulary {
        let c = spec.clause(id).unwrap();
        assert!(!c.is_suite_choice(Profile::Documented), "{id}");
        assert!(
            c.binds(Profile::Documented, Conformance::Documented),
            "{id}"
        );
        assert!(c.binds(Profile::Upstream, Conformance::Documented), "{id}");
    }
    let case = CASE.replace("[\"OPT-001\"]", "[\"OPT-001\", \"OPT-002\"]");
    let cases = format!("{case}{}", CASE.replace("one", "two"));
    let vocabulary = SUITE_CHOICE.replace("reference-defined", "vocabulary");
    let without = vocabulary.replace("rationale = \"The text is silent.\"\n", "");
    let errors = load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{without}")),
        ("cases/t.toml", &cases),
    ])
    .unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-002", "vocabulary clauses need a rationale"),
        "{errors:?}"
    );
    let strong = vocabulary.replace("origin =", "strength = \"MUST\"\norigin =");
    let errors = load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{strong}")),
        ("cases/t.toml", &cases),
    ])
    .unwrap_err();
    assert!(
        bad_clause(&errors, "OPT-002", "vocabulary clause binds"),
        "{errors:?}"
    );
    assert!(load(&[
        ("clauses/a.toml", &format!("{CLAUSE}{vocabulary}")),
        ("cases/t.toml", &cases),
    ])
    .is_ok());
}

#[test]
fn only_an_upstream_case_citing_opt_011_may_leave_a_later_refusal_optional() {
    // OPT-011 upstream: GE stops at its first failing check, so a refusal after it may be
    // absent; anywhere else only a MAY clause permits an absent diagnostic.
    let first_failure = DIVERGENT_CLAUSE.replace("OPT-001", "OPT-011");
    let case = |profile: &str, cites: &str| {
        format!(
            r#"
[[case]]
name = "plain"
clauses = ["OPT-001", "OPT-011"]
scenario = {{ capability = "options" }}
expect = {{ errors = [] }}

[[case]]
name = "first-failure"
clauses = ["OPT-001", "{cites}"]
profile = "{profile}"
scenario = {{ capability = "options" }}
expect = {{ errors = [{{ clause = "OPT-001", optional = true }}] }}
"#
        )
    };
    let tables = |cases: &str| {
        load(&[
            ("clauses/a.toml", CLAUSE),
            ("clauses/b.toml", &first_failure),
            ("cases/t.toml", cases),
        ])
    };
    assert!(tables(&case("upstream", "OPT-011")).is_ok());
    for refused in [case("documented", "OPT-011"), case("upstream", "OPT-001")] {
        let errors = tables(&refused).unwrap_err();
        assert!(bad_case(&errors, "not a MAY clause"), "{errors:?}");
    }
}

/// The embedded contract is read from the JSON form of its tables (faster to read in every
/// test process) and not checked again; it must be exactly what reading their TOML text, with
/// every check, gives.
#[test]
fn the_json_form_of_the_tables_reads_as_their_text() {
    let from_toml = Spec::embedded_from_toml().expect("the tables load");
    // The embedded digest is made when first asked for; the one read from TOML at once.
    assert_eq!(Spec::embedded().digest(), from_toml.digest());
    assert_eq!(
        format!("{:?}", Spec::embedded()),
        format!("{from_toml:?}"),
        "the tables read from JSON differ from the tables read from TOML"
    );
}

#[test]
fn alternatives_name_existing_suite_choices() {
    let choice = r#"
[[clause]]
id = "OPT-002"
summary = "A choice."
origin = "reference-defined"
rationale = "r"
section = "s"
"#;
    let clauses = format!("{CLAUSE}{choice}");
    let case2 = r#"
[[case]]
name = "two"
clauses = ["OPT-002"]
scenario = { capability = "options" }
expect = { errors = [] }
"#;
    let cases = format!("{CASE}{case2}");
    let row = |id: &str, clause: &str| {
        format!(
            "[[alternative]]\nid = \"{id}\"\ncapabilities = [\"options\"]\nclauses = [\"{clause}\"]\nsummary = \"s\"\n"
        )
    };
    let good = row("another-way", "OPT-002");
    let spec = load(&[
        ("clauses/a.toml", &clauses),
        ("cases/t.toml", &cases),
        ("alternatives.toml", &good),
    ])
    .unwrap();
    assert_eq!(spec.alternatives().len(), 1);
    assert_eq!(spec.alternatives()[0].id, "another-way");
    let bad = [
        row("Bad_Name", "OPT-002"),
        row("x", "OPT-001"),
        row("y", "OPT-404"),
        format!("{good}{good}"),
    ];
    let why = [
        "lowercase words",
        "is documented",
        "does not exist",
        "listed twice",
    ];
    for (text, why) in bad.iter().zip(why) {
        let errors = load(&[
            ("clauses/a.toml", &clauses),
            ("cases/t.toml", &cases),
            ("alternatives.toml", text),
        ])
        .unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, LoadError::Alternative(m) if m.contains(why))),
            "{why}: {errors:?}"
        );
    }
}
