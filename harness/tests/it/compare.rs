//! `compare OLD NEW` finds what changed between two bundles: the transition table of
//! `ge_conformance::compare`'s docs is what `compare()` does (on hand-built reports); between
//! bundles `certify --out` made from the reference and from deliberately wrong engines, every
//! regression one way is a fix the other way, waivers and scope compare as the rules say, a
//! bundle that does not verify is bad input (exit 2), the three formats print, and a bundle's
//! hostile strings never reach the terminal or the Markdown raw.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{cli, docs, text, OptionsOnly};
use ge_conformance::bundle;
use ge_conformance::certify::{certify, shell_quote, Config};
use ge_conformance::compare::{compare, Change, Comparison};
use ge_conformance::report::{Meta, Outcome, Report, TrialKind, TrialResult};
use ge_reference::Reference;
use ge_spec::vocab::Capability;
use ge_spec::{Backend, Conformance, Profile};

// ---------------------------------------------------------------------------------------------
// compare() on hand-built reports

fn meta() -> Meta {
    Meta {
        suite: "ge-conformance".into(),
        suite_version: "0".into(),
        spec_digest: "tables".into(),
        backend: "engine".into(),
        backend_version: "1".into(),
        capabilities: Capability::ALL.to_vec(),
        required: Vec::new(),
        profile: Profile::Documented,
        level: Conformance::Documented,
        seed: 0,
        case_budget: 1,
        filter: None,
        local_cases: None,
        upstream_source: None,
        confinement: None,
        started: None,
        host: None,
        micros: 0,
    }
}

/// A trial of `outcome`: a failure (waived or not) breaks `X-001`, a deviation departs from
/// `D-001`.
fn trial(name: &str, outcome: Outcome) -> TrialResult {
    let mut t = TrialResult::new(
        name.to_owned(),
        TrialKind::Case,
        Capability::Options,
        vec!["X-001".into()],
    );
    t.outcome = outcome;
    match outcome {
        Outcome::Fail | Outcome::Waived => t.broken = vec!["X-001".into()],
        Outcome::Deviation => t.deviations = vec!["D-001".into()],
        _ => {}
    }
    t
}

fn report(meta: Meta, trials: Vec<TrialResult>) -> Report {
    Report::new(meta, trials, Vec::new(), Vec::new())
}

/// The outcomes of the docs' table, by their names in it; `None` is `absent`.
fn outcome_named(name: &str) -> Option<Outcome> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

/// One cell of the docs' transition table: OLD's outcome, NEW's (`None`: absent), the change
/// the cell starts with (`None` for `unchanged`), and whether it is in bold (a regression).
type Cell = (Option<Outcome>, Option<Outcome>, Option<String>, bool);

/// The docs' transition table, every cell but absent → absent.
fn documented_table() -> Vec<Cell> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare/mod.rs");
    let source = std::fs::read_to_string(path).expect("compare's source");
    let rows: Vec<Vec<String>> = source
        .lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .map(|l| {
            l.trim_end_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect();
    let header = &rows[0];
    assert_eq!(header[0], "OLD \\ NEW", "{header:?}");
    let mut out = Vec::new();
    // The separator row has no blank after its first `|`: it is not read.
    for row in rows.iter().skip(1) {
        for (column, cell) in header.iter().zip(row).skip(1) {
            if cell.is_empty() {
                continue;
            }
            let bold = cell.starts_with("**");
            let first: String = cell
                .trim_start_matches('*')
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            let change = (first != "unchanged").then_some(first);
            out.push((outcome_named(&row[0]), outcome_named(column), change, bold));
        }
    }
    assert_eq!(out.len(), 7 * 7 - 1, "every cell of the table was read");
    out
}

/// The change of the trial `name` in `c`, by its name.
fn change_of(c: &Comparison, name: &str) -> Option<String> {
    c.trials
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.change.as_str().to_owned())
}

#[test]
fn the_transition_table_in_the_docs_is_what_compare_does() {
    let table = documented_table();
    let name = |o: Option<Outcome>, n: Option<Outcome>| {
        format!(
            "t/{}-to-{}",
            o.map_or("absent", Outcome::as_str),
            n.map_or("absent", Outcome::as_str)
        )
    };
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for &(o, n, ..) in &table {
        old.extend(o.map(|outcome| trial(&name(o, n), outcome)));
        new.extend(n.map(|outcome| trial(&name(o, n), outcome)));
    }
    let c = compare(&report(meta(), old.clone()), &report(meta(), new.clone()));
    for (o, n, change, bold) in &table {
        let trial = name(*o, *n);
        assert_eq!(change_of(&c, &trial), *change, "{trial}");
        if let Some(change) = change {
            let listed = c.trials.iter().find(|t| t.name == trial).expect("listed");
            assert_eq!(listed.regression, *bold, "{trial}: {change} bold");
            assert_eq!(listed.change.is_regression(), *bold, "{trial}");
        }
    }
    assert!(c.regressed);
    assert_eq!(c.regressions, c.regressed_trials().count());
    // A trial gone from a run of other tables or another profile went away; nothing else in the
    // table moves.
    let explained: [fn(&mut Meta); 3] = [
        |m| m.spec_digest = "other tables".into(),
        |m| m.local_cases = Some("the vendor's tables".into()),
        |m| m.profile = Profile::Upstream,
    ];
    for explain in explained {
        let mut m = meta();
        explain(&mut m);
        let c = compare(&report(meta(), old.clone()), &report(m, new.clone()));
        for (o, n, change, _) in &table {
            let want = match (o, n) {
                (Some(_), None) => Some("went-away".to_owned()),
                _ => change.clone(),
            };
            assert_eq!(change_of(&c, &name(*o, *n)), want, "{}", name(*o, *n));
        }
    }
    // A filter of NEW's explains nothing (round seven, M3): a run filtered to leave out what
    // would regress does not pass the gate. Every trial OLD judged and NEW lacks vanished.
    let mut filtered = meta();
    filtered.filter = Some("t/".into());
    let c = compare(&report(meta(), old.clone()), &report(filtered, new.clone()));
    for (o, n, change, _) in &table {
        assert_eq!(
            change_of(&c, &name(*o, *n)),
            change.clone(),
            "{}",
            name(*o, *n)
        );
    }
}

#[test]
fn a_new_clause_in_a_failing_trial_regresses_and_a_breakdown_names_none() {
    let with = |name: &str, outcome: Outcome, broken: &[&str]| {
        let mut t = trial(name, outcome);
        t.broken = broken.iter().map(|c| (*c).to_owned()).collect();
        t
    };
    let old = report(
        meta(),
        vec![
            with("a/more", Outcome::Fail, &["X-001"]),
            with("a/fewer", Outcome::Fail, &["X-001", "Y-001"]),
            with("a/waived-more", Outcome::Fail, &["X-001"]),
            with("a/was-breakdown", Outcome::Fail, &[]),
            with("a/now-breakdown", Outcome::Waived, &["X-001"]),
        ],
    );
    let new = report(
        meta(),
        vec![
            with("a/more", Outcome::Fail, &["X-001", "Y-001"]),
            with("a/fewer", Outcome::Fail, &["X-001"]),
            with("a/waived-more", Outcome::Waived, &["X-001", "Y-001"]),
            with("a/was-breakdown", Outcome::Fail, &["Y-001"]),
            with("a/now-breakdown", Outcome::Waived, &[]),
        ],
    );
    let c = compare(&old, &new);
    let find = |n: &str| c.trials.iter().find(|t| t.name == n).expect(n);
    assert_eq!(find("a/more").change, Change::ClauseRegressed);
    assert_eq!(find("a/more").newly_broken, ["Y-001"]);
    assert_eq!(find("a/fewer").change, Change::StillFailing);
    assert_eq!(find("a/fewer").no_longer_broken, ["Y-001"]);
    assert_eq!(find("a/waived-more").change, Change::ClauseRegressed);
    for n in ["a/was-breakdown", "a/now-breakdown"] {
        assert_eq!(find(n).change, Change::StillFailing, "{n}");
        assert!(find(n).newly_broken.is_empty() && find(n).no_longer_broken.is_empty());
    }
    assert_eq!(c.regressions, 2);
    // Clause by clause: Y-001 newly broken in two trials, no longer in one.
    let y = c
        .clauses
        .iter()
        .find(|k| k.clause == "Y-001")
        .expect("Y-001");
    assert_eq!(y.newly_broken, ["a/more", "a/waived-more"]);
    assert_eq!(y.no_longer_broken, ["a/fewer"]);
    // Deviations change without regressing.
    let dev = |name: &str, deviations: &[&str]| {
        let mut t = trial(name, Outcome::Deviation);
        t.deviations = deviations.iter().map(|c| (*c).to_owned()).collect();
        t
    };
    let c = compare(
        &report(
            meta(),
            vec![dev("d/more", &["D-1"]), dev("d/less", &["D-1", "D-2"])],
        ),
        &report(
            meta(),
            vec![dev("d/more", &["D-1", "D-2"]), dev("d/less", &["D-1"])],
        ),
    );
    assert_eq!(change_of(&c, "d/more").as_deref(), Some("new-deviation"));
    assert_eq!(
        change_of(&c, "d/less").as_deref(),
        Some("deviation-resolved")
    );
    assert!(!c.regressed, "{c:#?}");
}

#[test]
fn scope_expired_waivers_and_duplicates_are_compared_too() {
    let mut narrower = meta();
    narrower.capabilities = vec![Capability::Options];
    narrower.required = vec![Capability::Options, Capability::Memory];
    let old = report(meta(), vec![trial("s/t", Outcome::Pass)]);
    let new = Report::new(
        narrower,
        vec![trial("s/t", Outcome::Pass), trial("s/t", Outcome::Fail)],
        vec!["stale-one (reason)".into()],
        vec!["expired-one (reason)".into()],
    );
    let c = compare(&old, &new);
    assert_eq!(
        c.scope.removed,
        [
            Capability::Transfer,
            Capability::Memory,
            Capability::Session,
            Capability::Weights
        ]
    );
    assert_eq!(c.scope.newly_missing, [Capability::Memory]);
    assert_eq!(c.waivers.expired_added, ["expired-one (reason)"]);
    assert_eq!(c.waivers.stale_added, ["stale-one (reason)"]);
    assert_eq!(c.duplicates, ["new: s/t"], "the first one is compared");
    assert!(c.trials.is_empty(), "{:#?}", c.trials);
    assert_eq!(c.regressions, 4 + 1 + 1);
    let back = compare(&new, &old);
    assert_eq!(back.scope.added.len(), 4);
    assert_eq!(back.scope.no_longer_missing, [Capability::Memory]);
    assert_eq!(back.waivers.expired_removed.len(), 1);
    assert!(!back.regressed, "{back:#?}");
}

// ---------------------------------------------------------------------------------------------
// bundles made by `certify --out`

/// `certify --cases 1 ... --out DIR/name`: the bundle's directory (the run may fail; the bundle
/// must be there).
fn certify_out(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let path = out.to_string_lossy().into_owned();
    let mut args = vec!["certify", "--cases", "1"];
    args.extend_from_slice(extra);
    args.extend(["--out", &path]);
    let o = cli(&args);
    let (stdout, stderr) = text(&o);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {stdout}{stderr}"
    );
    assert!(out.join("report.json").is_file(), "{args:?}: {stderr}");
    out
}

/// The `--backend` of the reference served with one forbidden mutation: a wrong engine.
fn mutant(mutation: &str) -> String {
    format!(
        "exec:{} serve-reference --mutation {mutation}",
        shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

/// `compare --format json OLD NEW`: the exit status and the comparison.
fn compare_json(old: &Path, new: &Path) -> (Option<i32>, Comparison) {
    let o = cli(&[
        "compare",
        "--format",
        "json",
        &old.to_string_lossy(),
        &new.to_string_lossy(),
    ]);
    let (out, err) = text(&o);
    let c = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (o.status.code(), c)
}

fn names<'c>(
    trials: impl Iterator<Item = &'c ge_conformance::compare::TrialChange>,
) -> BTreeSet<String> {
    trials.map(|t| t.name.clone()).collect()
}

/// The trials `new` fails (unwaived) that `old` passed, read from the reports themselves.
fn passed_then_failed(old: &Report, new: &Report) -> BTreeSet<String> {
    new.trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .filter(|t| {
            old.trials.iter().any(|o| {
                o.name == t.name && matches!(o.outcome, Outcome::Pass | Outcome::Deviation)
            })
        })
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn every_regression_one_way_is_a_fix_the_other_way() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let reference = certify_out(dir.path(), "reference", &[]);
    let flipped = certify_out(
        dir.path(),
        "flipped",
        &["--backend", &mutant("byte-flipped-0")],
    );
    let overlap = certify_out(dir.path(), "overlap", &["--backend", &mutant("overlap-0")]);
    let report = |d: &Path| bundle::verify(d).expect("the bundle verifies");
    let (r, f, o) = (report(&reference), report(&flipped), report(&overlap));
    for (a, b, ra, rb) in [
        (&reference, &overlap, &r, &o),
        (&reference, &flipped, &r, &f),
        (&flipped, &overlap, &f, &o),
    ] {
        let (code, ab) = compare_json(a, b);
        let (back_code, ba) = compare_json(b, a);
        let regressed = names(ab.regressed_trials());
        assert!(!regressed.is_empty(), "{a:?} -> {b:?}");
        assert_eq!(
            regressed,
            passed_then_failed(ra, rb),
            "every regression found"
        );
        assert_eq!(names(ab.of(Change::Regressed)), regressed);
        assert_eq!(
            names(ba.of(Change::Fixed)),
            regressed,
            "and fixed the other way"
        );
        assert_eq!(names(ba.regressed_trials()), names(ab.of(Change::Fixed)));
        assert_eq!(code, Some(1));
        assert_eq!(back_code, Some(if ba.regressed { 1 } else { 0 }));
        // Clause by clause: each clause a regressed trial breaks in NEW is newly broken in it.
        for t in rb.trials.iter().filter(|t| regressed.contains(&t.name)) {
            for clause in &t.broken {
                let k = ab
                    .clauses
                    .iter()
                    .find(|k| &k.clause == clause)
                    .expect(clause);
                assert!(k.newly_broken.contains(&t.name), "{clause} in {}", t.name);
            }
        }
    }
    // The reference fixes everything: nothing regressed from a wrong engine to it.
    let (code, back) = compare_json(&overlap, &reference);
    assert_eq!(code, Some(0), "{back:#?}");
    assert!(back.regressed_trials().next().is_none());
    // The README's example is this comparison.
    let o = cli(&[
        "compare",
        &reference.to_string_lossy(),
        &overlap.to_string_lossy(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let shown = format!("$ ge-conformance compare baseline new\n{out}");
    docs::check("README.md", "compare-regression", &shown).unwrap_or_else(|e| panic!("{e}"));
}

/// A waivers file for `certify --expectations`, in `dir`.
fn waivers(dir: &Path, name: &str, pattern: &str) -> String {
    let path = dir.join(name);
    let toml = format!(
        "[[waive]]\nmatch = \"{pattern}\"\nreason = \"being fixed\"\ntracker = \"T-1\"\nexpires = \"2099-01-01\"\n"
    );
    std::fs::write(&path, toml).expect("write the waivers");
    path.to_string_lossy().into_owned()
}

#[test]
fn waivers_in_bundles_compare_as_the_rules_say() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let backend = mutant("overlap-0");
    let glob = waivers(dir.path(), "glob.toml", "memory-plans/*");
    let one = waivers(
        dir.path(),
        "one.toml",
        "memory-plans/last-step-meets-first-step",
    );
    let reference = certify_out(dir.path(), "reference", &[]);
    let plain = certify_out(dir.path(), "plain", &["--backend", &backend]);
    let waived = certify_out(
        dir.path(),
        "waived",
        &["--backend", &backend, "--expectations", &glob],
    );
    let stale = certify_out(dir.path(), "stale", &["--expectations", &one]);
    let failing: BTreeSet<String> = bundle::verify(&plain)
        .expect("verifies")
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .map(|t| t.name.clone())
        .collect();
    let (in_glob, outside): (BTreeSet<String>, BTreeSet<String>) = failing
        .iter()
        .cloned()
        .partition(|n| n.starts_with("memory-plans/"));
    assert!(!in_glob.is_empty() && !outside.is_empty(), "{failing:?}");
    // A failure waived is still a failure: not a fix, not a regression.
    let (code, c) = compare_json(&plain, &waived);
    assert_eq!(code, Some(0), "{c:#?}");
    assert_eq!(names(c.of(Change::NowWaived)), in_glob);
    assert_eq!(names(c.of(Change::StillFailing)), outside);
    assert_eq!(
        c.waivers
            .newly_waived
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        in_glob
    );
    // The waiver gone, its failures regress.
    let (code, c) = compare_json(&waived, &plain);
    assert_eq!(code, Some(1));
    assert_eq!(names(c.regressed_trials()), in_glob);
    assert_eq!(names(c.of(Change::WaiverLost)), in_glob);
    // From the reference, a waiver does not hide a regression.
    let (code, c) = compare_json(&reference, &waived);
    assert_eq!(code, Some(1));
    assert_eq!(names(c.of(Change::NewlyWaived)), in_glob);
    assert_eq!(names(c.of(Change::Regressed)), outside);
    // A waiver naming a passing trial fails the run: a regression; removed, a fix.
    let (code, c) = compare_json(&reference, &stale);
    assert_eq!(code, Some(1));
    assert_eq!(
        names(c.regressed_trials()),
        BTreeSet::from(["memory-plans/last-step-meets-first-step".to_owned()])
    );
    assert_eq!(
        c.regressed_trials().next().map(|t| t.change),
        Some(Change::UnexpectedPass)
    );
    let (code, c) = compare_json(&stale, &reference);
    assert_eq!(code, Some(0));
    assert_eq!(c.fixes, 1);
}

/// The bundle of `backend`'s run, written into `dir`.
fn bundle_of(backend: &dyn Backend, dir: &Path) -> Report {
    let cfg = Config {
        cases: 1,
        ..Config::default()
    };
    let report = certify(backend, &cfg, &mut |_, _, _| {}).expect("a run");
    bundle::write(&report, dir, false).expect("written");
    report
}

#[test]
fn a_dropped_capability_is_a_regression_of_the_scope() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (all, options) = (dir.path().join("all"), dir.path().join("options"));
    let r = bundle_of(&Reference, &all);
    bundle_of(&OptionsOnly, &options);
    let others: BTreeSet<String> = r
        .trials
        .iter()
        .filter(|t| t.capability != Capability::Options)
        .map(|t| t.name.clone())
        .collect();
    let (code, c) = compare_json(&all, &options);
    assert_eq!(code, Some(1));
    assert_eq!(c.scope.removed.len(), 4, "{:?}", c.scope);
    assert_eq!(names(c.of(Change::NoLongerJudged)), others);
    assert_eq!(names(c.regressed_trials()), others);
    let (code, c) = compare_json(&options, &all);
    assert_eq!(code, Some(0), "{:?}", c.scope);
    assert_eq!(c.scope.added.len(), 4);
    assert_eq!(names(c.of(Change::NewlyJudged)), others);
}

/// Rewrites `report.json` with `edit` and recomputes its digest in the manifest, as a forger
/// would.
pub(crate) fn forge(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    use sha2::Digest;
    let path = dir.join("report.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("report.json")).expect("JSON");
    edit(&mut v);
    let text = serde_json::to_string_pretty(&v).expect("JSON");
    std::fs::write(&path, &text).expect("write");
    let digest: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let manifest = std::fs::read_to_string(dir.join(bundle::MANIFEST)).expect("manifest");
    let fixed: String = manifest
        .lines()
        .map(|l| match l.strip_suffix("  report.json") {
            Some(_) => format!("{digest}  report.json\n"),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.join(bundle::MANIFEST), fixed).expect("write");
}

/// A copy of the bundle in `from`, at `to`.
pub(crate) fn copy(from: &Path, to: &Path) -> PathBuf {
    std::fs::create_dir(to).expect("a directory");
    for entry in std::fs::read_dir(from).expect("the bundle").flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copied");
    }
    to.to_path_buf()
}

/// `verify` names what it found in a bundle safely for a terminal: a file slipped into it with
/// escapes and a forged verdict in its name is printed escaped, one line.
#[test]
fn verify_prints_a_hostile_file_name_escaped() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = certify_out(dir.path(), "good", &["--filter", "options-defaults/"]);
    let name = "x\u{1b}[2J\nbundle intact: CERTIFIED\u{202e}";
    std::fs::write(good.join(name), "mine").expect("written");
    let o = cli(&["verify", &good.to_string_lossy()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    for bad in ['\u{1b}', '\u{202e}'] {
        assert!(!err.contains(bad), "raw {bad:?}: {err}");
    }
    assert!(
        !err.lines().any(|l| l.starts_with("bundle intact")),
        "{err}"
    );
}

#[test]
fn a_bundle_that_does_not_verify_is_bad_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = certify_out(dir.path(), "good", &["--filter", "options-defaults/"]);
    let tampered = copy(&good, &dir.path().join("tampered"));
    let mut txt = std::fs::read(tampered.join("report.txt")).expect("report.txt");
    txt.push(b'\n');
    std::fs::write(tampered.join("report.txt"), txt).expect("write");
    let other = copy(&good, &dir.path().join("other-tables"));
    forge(&other, |v| v["meta"]["spec_digest"] = "0123abcd".into());
    let missing = dir.path().join("missing");
    let g = good.to_string_lossy().into_owned();
    let cases: [(Vec<String>, &str); 6] = [
        (
            vec![g.clone(), tampered.to_string_lossy().into()],
            "NEW bundle",
        ),
        (
            vec![tampered.to_string_lossy().into(), g.clone()],
            "OLD bundle",
        ),
        (
            vec![g.clone(), other.to_string_lossy().into()],
            "made against spec tables 0123abcd",
        ),
        (
            vec![missing.to_string_lossy().into(), g.clone()],
            "OLD bundle",
        ),
        (vec![g.clone()], "NEW"),
        (
            vec!["--format".into(), "junit".into(), g.clone(), g.clone()],
            "junit",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["compare"];
        all.extend(args.iter().map(String::as_str));
        let o = cli(&all);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "nothing compared: {out}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let o = cli(&["compare", &g, &tampered.to_string_lossy()]);
    assert!(
        text(&o).1.contains("report.txt was changed"),
        "{}",
        text(&o).1
    );
    // Intact, a bundle compared with itself: nothing changed, exit 0, in every format.
    for format in ["text", "json", "markdown"] {
        let o = cli(&["compare", "--format", format, &g, &g]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{format}: {out}{err}");
        if format == "json" {
            let c: Comparison = serde_json::from_str(&out).expect("JSON");
            assert!(!c.regressed && c.trials.is_empty() && c.regressions == 0);
        } else {
            assert!(
                out.contains("NO REGRESSION: 0 regressions, 0 fixes"),
                "{out}"
            );
        }
    }
}

#[test]
fn markdown_has_the_tables_and_json_the_lists() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let backend = mutant("overlap-0");
    let filter = ["--filter", "memory-plans/"];
    let reference = certify_out(dir.path(), "reference", &filter);
    let overlap = certify_out(
        dir.path(),
        "overlap",
        &["--filter", "memory-plans/", "--backend", &backend],
    );
    let (r, o) = (reference.to_string_lossy(), overlap.to_string_lossy());
    let md = cli(&["compare", "--format", "markdown", &r, &o]);
    let (out, err) = text(&md);
    assert_eq!(md.status.code(), Some(1), "{out}{err}");
    for needle in [
        "# ge-conformance comparison",
        "| | old | new |",
        "| trial | capability | old | new | change | clauses |",
        "| ` memory-plans/overlapping-lifetimes-never-share ` | memory | pass | fail | **regressed** | newly breaks DRM-011 |",
        "| clause | newly broken in | no longer broken in | newly deviating in | no longer deviating in |",
        "**REGRESSED: ",
    ] {
        assert!(out.contains(needle), "{needle}\n{out}");
    }
    let (_, c) = compare_json(&reference, &overlap);
    let json: serde_json::Value =
        serde_json::from_str(&c.to_json()).expect("the comparison's JSON parses");
    assert_eq!(json["regressed"], true);
    assert!(json["trials"].as_array().is_some_and(|t| t
        .iter()
        .any(|t| t["change"] == "regressed" && t["old"] == "pass")));
    assert!(json["clauses"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["clause"] == "DRM-011")));
}

#[test]
fn a_bundles_strings_are_printed_safely() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cfg = Config {
        cases: 1,
        filter: Some("options-defaults/".into()),
        ..Config::default()
    };
    let plain = certify(&Reference, &cfg, &mut |_, _, _| {}).expect("a run");
    let mut meta = plain.meta.clone();
    meta.backend = "evil\u{1b}]0;owned\u{7}\u{1b}[31m".into();
    let mut trials = plain.trials.clone();
    let hostile = "options-defaults/\u{1b}[2J|`x`\n[FORGED] NO REGRESSION\u{202e}";
    trials.push(trial(hostile, Outcome::Fail));
    let evil = Report::new(
        meta,
        trials,
        vec!["\u{1b}[31mstale | *w*".into()],
        Vec::new(),
    );
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    bundle::write(&plain, &old, false).expect("written");
    bundle::write(&evil, &new, false).expect("written");
    let args = |format: &'static str| {
        let o = cli(&[
            "compare",
            "--format",
            format,
            &old.to_string_lossy(),
            &new.to_string_lossy(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{format}: the failure appeared");
        text(&o).0
    };
    for format in ["text", "json", "markdown"] {
        let out = args(format);
        for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!out.contains(bad), "{format} prints {bad:?} raw:\n{out}");
        }
        assert!(
            !out.lines().any(|l| l.starts_with("[FORGED]")),
            "{format}: a line of the bundle's:\n{out}"
        );
    }
    let out = args("text");
    assert!(
        out.contains("options-defaults/\\u{1b}[2J|`x`\\n[FORGED]"),
        "{out}"
    );
    assert!(out.contains("backend evil\\u{1b}]0;owned\\u{7}"), "{out}");
    let out = args("markdown");
    assert!(
        out.contains("\\|`x`\\n[FORGED]"),
        "the cell's `|` is escaped:\n{out}"
    );
    assert!(out.contains("\\\\u{1b}\\[31mstale \\| \\*w\\*"), "{out}");
}
