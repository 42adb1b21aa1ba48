//! Judging lists of diagnostics: which are missing, which are extra, and which clause each of
//! those breaks. The message and the value are never compared.
//!
//! Matching goes in two rounds. First in the vocabulary's exact form: the clause, the key, the
//! level and the subject fields the clause defines (see `ge_spec::diag`). Then, among what is
//! left, by behaviour: same list, same key and level where the suite's diagnostic has them, and
//! the same values in every subject field both carry, whatever clause the engine cites or none.
//! A match of the second round is the right diagnostic labelled otherwise: that is the form,
//! OPT-012's (reference-defined, so a failure at level `strict` only). An engine that knows no
//! clause IDs, or maps its own errors to ours as well as it can, is judged at level
//! `documented` on what it reported, never on the ID it picked.
//!
//! A diagnostic still missing breaks the clause that calls for it (the clause itself, or the one
//! its `reported_under` names) when nothing in the list is about the same thing (its clause or
//! its key); when something is, the count or the form differs, which is OPT-012's. An extra
//! diagnostic that no expected one is about breaks the clause that calls for its kind (a
//! run-time error where the addresses agree, a restriction warning where the condition is met);
//! a warning, or an error that only reports what the observation shows elsewhere (the options
//! capability's), never breaks a documented clause that way (the text forbids no warning), and one
//! that cites no clause, a clause of no table, or a clause that only permits is OPT-012's. An
//! extra error that behaves like an expected warning (the same option, level and subject) is
//! that warning given as an error, and breaks what its clause breaks (for a setting where the
//! option does not take effect, OPT-002's choice), whatever clause the engine cites.

use ge_spec::{Diagnostic, Level, Origin, Spec, Subject};

use super::Violation;

/// One diagnostic a list is expected to hold. A field that is `None` is not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The clause it cites.
    pub clause: String,
    /// The key, when judged (`Some(None)`: no key).
    pub key: Option<Option<String>>,
    /// The level, when judged (`Some(None)`: no level).
    pub level: Option<Option<Level>>,
    /// The subject, when judged (only the fields the clause defines are compared).
    pub subject: Option<Subject>,
    /// May be there or not (a MAY clause permits it).
    pub optional: bool,
}

impl Expected {
    /// Exactly `d`, as far as diagnostics are judged.
    pub fn exact(d: &Diagnostic) -> Self {
        Expected {
            clause: d.clause.clone(),
            key: Some(d.key.clone()),
            level: Some(d.level),
            subject: Some(d.subject.clone()),
            optional: false,
        }
    }

    /// `d`, which may be there or not.
    pub fn optional(d: &Diagnostic) -> Self {
        Expected {
            optional: true,
            ..Expected::exact(d)
        }
    }

    fn describe(&self) -> String {
        let mut s = format!("[{}]", self.clause);
        if let Some(Some(k)) = &self.key {
            s.push_str(&format!(" {k}"));
        }
        if let Some(Some(l)) = &self.level {
            s.push_str(&format!(" at {l} level"));
        }
        if let Some(subject) = &self.subject {
            if !subject.is_empty() {
                s.push_str(&format!(" ({subject})"));
            }
        }
        s
    }
}

/// The subject fields compared for diagnostics citing `clause`: those it defines (in a
/// session, the graph is compared as well: SES-017).
fn defined<'s>(spec: &'s Spec, clause: &str) -> &'s [String] {
    spec.clause(clause)
        .map_or(&[][..], |c| c.subject.as_slice())
}

/// The key and the level agree where the suite's diagnostic has them. A key or level the suite's
/// diagnostic does not have is not judged: what an engine adds is ignored.
fn same_place(e: &Expected, d: &Diagnostic) -> bool {
    let key = match &e.key {
        Some(Some(k)) => d.key.as_deref() == Some(k.as_str()),
        _ => true,
    };
    let level = match e.level {
        Some(Some(l)) => d.level == Some(l),
        _ => true,
    };
    key && level
}

/// The exact form: the clause, the key, the level and the subject fields the clause defines
/// (`defined`). A session's `graph` is compared when the suite's diagnostic names one.
fn matches(e: &Expected, defined: &[String], d: &Diagnostic, session: bool) -> bool {
    if e.clause != d.clause || !same_place(e, d) {
        return false;
    }
    match &e.subject {
        None => true,
        Some(s) => {
            let graph = session && s.graph.is_some();
            s.agrees_on(&d.subject, defined) && (!graph || s.graph == d.subject.graph)
        }
    }
}

/// The same behaviour in another form: the key and the level agree, and every subject field
/// the suite's clause defines (`defined`) that the engine's diagnostic carries holds the same
/// value.
fn behaves_alike(e: &Expected, defined: &[String], d: &Diagnostic, session: bool) -> bool {
    if !same_place(e, d) {
        return false;
    }
    let Some(s) = &e.subject else { return true };
    let graph = session && s.graph.is_some();
    let alike = |f: &str| !d.subject.sets(f) || d.subject.agrees_in(s, f);
    defined.iter().all(|f| alike(f)) && (!graph || alike("graph"))
}

/// True when `d` is about what `e` is about: it cites `e`'s clause, or names `e`'s key.
fn about(e: &Expected, d: &Diagnostic) -> bool {
    d.clause == e.clause || matches!(&e.key, Some(Some(k)) if d.key.as_deref() == Some(k.as_str()))
}

/// The clause that calls for diagnostics citing `id`.
pub fn caller(spec: &Spec, id: &str) -> String {
    spec.clause(id)
        .and_then(|c| c.reported_under.clone())
        .unwrap_or_else(|| id.to_owned())
}

/// Compares the diagnostics found in list `list` (`errors` or `warnings`) with those expected,
/// and returns a violation for each missing, extra or otherwise labelled one, naming the clause
/// it breaks.
pub fn compare(
    spec: &Spec,
    list: &str,
    expected: &[Expected],
    actual: &[Diagnostic],
    session: bool,
) -> Vec<Violation> {
    compare_beside(spec, list, expected, actual, session, &[])
}

/// [`compare`] for the errors of an answer whose expected warnings are `warnings`: an extra
/// error that behaves like one of them (the same option, level and subject, whatever clause it
/// cites) is that warning given as an error, and breaks what the warning's clause breaks when
/// it is not given as one (OPT-002's choice for a setting where its option does not take
/// effect), never the clause it happens to cite.
pub fn compare_beside(
    spec: &Spec,
    list: &str,
    expected: &[Expected],
    actual: &[Diagnostic],
    session: bool,
    warnings: &[Expected],
) -> Vec<Violation> {
    compare_with(
        spec,
        list,
        expected,
        actual,
        session,
        list == "errors",
        warnings,
    )
}

/// [`compare`] for a list whose entries only report what the observation shows elsewhere (the
/// options capability's errors: the rejection itself is `rejected` and `effective`): an extra
/// entry there is the form, never a documented clause, as for warnings.
pub fn compare_reports(
    spec: &Spec,
    list: &str,
    expected: &[Expected],
    actual: &[Diagnostic],
    session: bool,
) -> Vec<Violation> {
    compare_with(spec, list, expected, actual, session, false, &[])
}

/// `refusals`: an entry of the list is itself behaviour (a run, a load or an event refused), so
/// an extra one breaks the documented clause that calls for its kind; `warnings`: see
/// [`compare_beside`].
fn compare_with(
    spec: &Spec,
    list: &str,
    expected: &[Expected],
    actual: &[Diagnostic],
    session: bool,
    refusals: bool,
    warnings: &[Expected],
) -> Vec<Violation> {
    // Looked up once per entry: every pair of an entry and a diagnostic is tried.
    let fields: Vec<&[String]> = expected.iter().map(|e| defined(spec, &e.clause)).collect();
    // The usual answer: the diagnostics expected, one for one (in the same order, or another,
    // an optional one left out). Every required entry then has its diagnostic and no diagnostic
    // is left over, which is what the matching below would find too, without trying every
    // pair: a boundary scenario has hundreds of diagnostics.
    if shortcut() && greedily_complete(expected, &fields, actual, session) {
        return Vec::new();
    }
    let mut owner: Vec<Option<usize>> = vec![None; actual.len()];
    let mut matched = vec![false; expected.len()];
    // Round one: the exact form.
    assign(expected, actual, &mut owner, &mut matched, |i, d| {
        matches(&expected[i], fields[i], d, session)
    });
    let mut out = Vec::new();
    // Round two: the same behaviour, labelled otherwise (OPT-012's).
    let exact = owner.clone();
    assign(expected, actual, &mut owner, &mut matched, |i, d| {
        behaves_alike(&expected[i], fields[i], d, session)
    });
    for (j, d) in actual.iter().enumerate() {
        if let (None, Some(i)) = (exact[j], owner[j]) {
            out.push(Violation::new(
                "OPT-012",
                format_args!(
                    "{list}: {} is reported as {d}, another form than the vocabulary's",
                    expected[i].describe()
                ),
            ));
        }
    }
    for (i, e) in expected.iter().enumerate() {
        if matched[i] || e.optional {
            continue;
        }
        if actual.iter().any(|d| about(e, d)) {
            out.push(Violation::new(
                "OPT-012",
                format_args!(
                    "{list}: {} is reported in another form than the vocabulary's",
                    e.describe()
                ),
            ));
        } else {
            out.push(Violation::new(
                caller(spec, &e.clause),
                format_args!("missing {list}: {}", e.describe()),
            ));
        }
    }
    for (j, d) in actual.iter().enumerate() {
        if owner[j].is_some() {
            continue;
        }
        out.push(extra(spec, list, refusals, expected, warnings, d, session));
    }
    out
}

#[cfg(test)]
thread_local! {
    /// Off in a test that holds the shortcut to what the matching finds without it.
    static SHORTCUT: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether [`compare_with`] takes its shortcut (always, but in that test).
fn shortcut() -> bool {
    #[cfg(test)]
    return SHORTCUT.with(std::cell::Cell::get);
    #[cfg(not(test))]
    true
}

/// True when each diagnostic, in turn, taking an entry it matches in the exact form that none
/// took before (the entry at its own position when it can, so that diagnostics in the expected
/// order take one step each, else the first), leaves no diagnostic without an entry and no
/// required entry without a diagnostic. Such a matching is then perfect, so the maximum one
/// [`compare_with`] finds (required entries first) is as perfect and reports nothing either.
fn greedily_complete(
    expected: &[Expected],
    fields: &[&[String]],
    actual: &[Diagnostic],
    session: bool,
) -> bool {
    let mut taken = vec![false; expected.len()];
    for (at, d) in actual.iter().enumerate() {
        let fits = |i: &usize| !taken[*i] && matches(&expected[*i], fields[*i], d, session);
        let own = Some(at).filter(|i| *i < expected.len()).filter(fits);
        let Some(i) = own.or_else(|| (0..expected.len()).find(fits)) else {
            return false;
        };
        taken[i] = true;
    }
    expected.iter().zip(&taken).all(|(e, t)| *t || e.optional)
}

/// The violation of an extra diagnostic `d` of list `list`: a warning given as an error when it
/// behaves like one of `warnings` (see [`compare_beside`]), else not called for.
fn extra(
    spec: &Spec,
    list: &str,
    refusals: bool,
    expected: &[Expected],
    warnings: &[Expected],
    d: &Diagnostic,
    session: bool,
) -> Violation {
    let warned = warnings.iter().find(|w| {
        matches!(w.key, Some(Some(_))) && behaves_alike(w, defined(spec, &w.clause), d, session)
    });
    match warned {
        Some(w) => Violation::new(
            caller(spec, &w.clause),
            format_args!(
                "{list}: {d} is the warning {} given as an error",
                w.describe()
            ),
        ),
        None => Violation::new(
            extra_blame(spec, refusals, expected, d),
            format_args!("{list}: {d} is not called for"),
        ),
    }
}

/// The clause an extra diagnostic breaks: the one that calls for diagnostics of its kind, when
/// nothing expected is about the same thing; OPT-012 otherwise (see the module docs).
fn extra_blame(spec: &Spec, refusals: bool, expected: &[Expected], d: &Diagnostic) -> String {
    let known = spec.clause(&d.clause).is_some_and(|c| !c.permits_only());
    let variant = expected.iter().any(|e| about(e, d));
    if !known || variant {
        return "OPT-012".to_owned();
    }
    let blame = caller(spec, &d.clause);
    let documented = spec
        .clause(&blame)
        .is_some_and(|c| c.origin == Origin::Documented);
    if documented && !refusals {
        "OPT-012".to_owned()
    } else {
        blame
    }
}

/// Maximum matching (Kuhn) of the entries not matched yet with the diagnostics not owned yet,
/// required entries first so that optional ones never take a diagnostic a required one needs.
fn assign(
    expected: &[Expected],
    actual: &[Diagnostic],
    owner: &mut [Option<usize>],
    matched: &mut [bool],
    fits: impl Fn(usize, &Diagnostic) -> bool,
) {
    let taken: Vec<bool> = owner.iter().map(Option::is_some).collect();
    let mut order: Vec<usize> = (0..expected.len()).filter(|&i| !matched[i]).collect();
    order.sort_by_key(|&i| expected[i].optional);
    // Each entry keeps its first `order.len()` candidates at most: a maximum matching needs no
    // more (of an entry's first n candidates, the n - 1 other entries hold n - 1 at most, so one
    // is free for it), and an answer of 100,000 diagnostics that all fit 1,016 entries no longer
    // costs their product (round seven, H1: 889 MB).
    let adjacent: Vec<Vec<usize>> = (0..expected.len())
        .map(|i| {
            if matched[i] {
                return Vec::new();
            }
            (0..actual.len())
                .filter(|&j| !taken[j] && fits(i, &actual[j]))
                .take(order.len())
                .collect()
        })
        .collect();
    fn augment(
        i: usize,
        adjacent: &[Vec<usize>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for &j in &adjacent[i] {
            if seen[j] {
                continue;
            }
            seen[j] = true;
            if owner[j].is_none_or(|o| augment(o, adjacent, owner, seen)) {
                owner[j] = Some(i);
                return true;
            }
        }
        false
    }
    for &i in &order {
        let mut seen = vec![false; actual.len()];
        matched[i] = augment(i, &adjacent, owner, &mut seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> &'static Spec {
        Spec::embedded()
    }

    fn warn(clause: &str, subject: Subject) -> Diagnostic {
        Diagnostic::new(clause, "any words")
            .key("ge.exec.inputReuseMemIndexes")
            .level(Level::Graph)
            .subject(subject)
    }

    #[test]
    fn wording_and_values_are_never_compared() {
        let want = warn("IRM-003", Subject::index(4)).value("4");
        let got = Diagnostic {
            message: "other words".into(),
            value: Some("04".into()),
            ..want.clone()
        };
        assert!(compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false).is_empty());
    }

    #[test]
    fn subject_fields_the_clause_does_not_define_are_not_compared() {
        // OPT-002 defines no subject field.
        let want = Diagnostic::new("OPT-002", "").key("k").level(Level::Global);
        let got = want.clone().subject(Subject::index(9));
        assert!(compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false).is_empty());
        // IRM-003 defines `index`: another index is another diagnostic, in another form.
        let want = warn("IRM-003", Subject::index(4));
        let got = warn("IRM-003", Subject::index(5));
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false);
        assert_eq!(
            v.iter().map(|v| v.clause.as_str()).collect::<Vec<_>>(),
            ["OPT-012", "OPT-012"]
        );
    }

    #[test]
    fn a_missing_diagnostic_breaks_the_clause_that_calls_for_it() {
        // IRM-003's warning is called for by IRM-005.
        let want = warn("IRM-003", Subject::index(4));
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[], false);
        assert_eq!(v[0].clause, "IRM-005");
        // ORI-011 calls for its own error.
        let want = Diagnostic::new("ORI-011", "").subject(Subject::alias(0, 1));
        let v = compare(spec(), "errors", &[Expected::exact(&want)], &[], false);
        assert_eq!(v[0].clause, "ORI-011");
    }

    #[test]
    fn optional_diagnostics_may_be_there_or_not() {
        let may = Diagnostic::new("IBC-006", "")
            .key("ge.inputBatchCpy")
            .level(Level::Global);
        let exp = [Expected::optional(&may)];
        assert!(compare(spec(), "warnings", &exp, &[], false).is_empty());
        assert!(compare(spec(), "warnings", &exp, std::slice::from_ref(&may), false).is_empty());
        // Extra, and not permitted here: the suite's OPT-012.
        let v = compare(spec(), "warnings", &[], &[may], false);
        assert_eq!(v[0].clause, "OPT-012");
    }

    #[test]
    fn an_uncalled_for_diagnostic_breaks_the_clause_that_calls_for_its_kind() {
        // A run-time error where the addresses agree: ORI-011's own.
        let d = Diagnostic::new("ORI-011", "").subject(Subject::alias(0, 1));
        assert_eq!(
            compare(spec(), "errors", &[], &[d], false)[0].clause,
            "ORI-011"
        );
        // A restriction warning where the condition is met: OPT-008 calls for those.
        let w = Diagnostic::new("IBC-003", "").key("ge.inputBatchCpy");
        assert_eq!(
            compare(spec(), "warnings", &[], &[w], false)[0].clause,
            "OPT-008"
        );
        // A clause no table has: the vocabulary's form.
        let x = Diagnostic::new("XYZ-001", "");
        assert_eq!(
            compare(spec(), "warnings", &[], &[x], false)[0].clause,
            "OPT-012"
        );
    }

    #[test]
    fn matching_is_a_maximum_matching() {
        // The first expectation could take either diagnostic; the second only the first.
        let loose = Expected {
            clause: "IRM-003".into(),
            key: None,
            level: None,
            subject: None,
            optional: false,
        };
        let a = warn("IRM-003", Subject::index(1));
        let b = warn("IRM-003", Subject::index(2));
        let exp = [loose, Expected::exact(&a)];
        assert!(compare(spec(), "warnings", &exp, &[a, b], false).is_empty());
    }

    /// Lists for `the_shortcut_reports_what_the_matching_reports`: each diagnostic of `pool`
    /// expected exactly, optionally or not at all, and given as expected mostly; now and then
    /// missing, twice, or in another form; both lists shuffled.
    fn drawn_lists(
        pool: &[Diagnostic],
        next: &mut impl FnMut(usize) -> usize,
    ) -> (Vec<Expected>, Vec<Diagnostic>) {
        let mut expected: Vec<Expected> = Vec::new();
        let mut actual: Vec<Diagnostic> = Vec::new();
        for d in pool {
            let given = match next(3) {
                0 => false,
                1 => {
                    expected.push(Expected::optional(d));
                    next(2) == 0
                }
                _ => {
                    expected.push(Expected::exact(d));
                    next(12) != 0
                }
            };
            if given {
                actual.push(d.clone());
            }
            match next(24) {
                0 => actual.push(d.clone()),
                1 => actual.push(Diagnostic {
                    clause: "IRM-005".into(),
                    ..d.clone()
                }),
                _ => {}
            }
        }
        for i in (1..expected.len()).rev() {
            expected.swap(i, next(i + 1));
        }
        for i in (1..actual.len()).rev() {
            actual.swap(i, next(i + 1));
        }
        (expected, actual)
    }

    /// The shortcut of `compare_with` (the diagnostics matched greedily, one for one) reports
    /// exactly what the maximum matching reports: over lists drawn from a pool of
    /// diagnostics (entries exact or optional, in any order; diagnostics in any order, some
    /// of them another form of an entry, some extra), both ways, and the shortcut taken.
    #[test]
    fn the_shortcut_reports_what_the_matching_reports() {
        let pool: Vec<Diagnostic> = (0..4)
            .map(|i| warn("IRM-003", Subject::index(i)))
            .chain([
                warn("IRM-004", Subject::index(1)),
                Diagnostic::new("OPT-002", "")
                    .key("ge.inputBatchCpy")
                    .level(Level::Global),
                Diagnostic::new("IBC-006", "")
                    .key("ge.inputBatchCpy")
                    .level(Level::Session),
            ])
            .collect();
        use proptest::prelude::Rng;
        use proptest::test_runner::{RngAlgorithm, TestRng};
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut next = |n: usize| (rng.next_u64() % n as u64) as usize;
        let (mut greedy, mut empty, mut reported) = (0, 0, 0);
        for _ in 0..20_000 {
            let (expected, actual) = drawn_lists(&pool, &mut next);
            let describe = |v: Vec<Violation>| -> Vec<String> {
                v.into_iter()
                    .map(|v| format!("{}: {}", v.clause, v.message))
                    .collect()
            };
            let fast = describe(compare(spec(), "warnings", &expected, &actual, false));
            SHORTCUT.with(|s| s.set(false));
            let full = describe(compare(spec(), "warnings", &expected, &actual, false));
            SHORTCUT.with(|s| s.set(true));
            assert_eq!(fast, full, "{expected:?}\n{actual:?}");
            let fields: Vec<&[String]> = expected
                .iter()
                .map(|e| defined(spec(), &e.clause))
                .collect();
            greedy += usize::from(greedily_complete(&expected, &fields, &actual, false));
            if full.is_empty() {
                empty += 1;
            } else {
                reported += 1;
            }
        }
        eprintln!("matched greedily {greedy}, nothing reported {empty}, something {reported}");
        assert!(
            greedy > 1000 && empty > 1000 && reported > 1000,
            "{greedy} {empty} {reported}"
        );
    }

    fn clauses(v: &[Violation]) -> Vec<&str> {
        v.iter().map(|v| v.clause.as_str()).collect()
    }

    #[test]
    fn the_clause_an_engine_cites_is_only_the_form() {
        // The suite cites IRM-004 (reported under OPT-005) for a malformed item; an engine that
        // cites the option's grammar clause, or no clause at all, reported the same thing.
        let want = Diagnostic::new("IRM-004", "")
            .key("ge.exec.inputReuseMemIndexes")
            .level(Level::Graph)
            .subject(Subject::item("x"));
        for cited in ["IRM-001", "", "GE-E10001"] {
            let got = Diagnostic {
                clause: cited.into(),
                subject: Subject::default(),
                ..want.clone()
            };
            let v = compare(spec(), "errors", &[Expected::exact(&want)], &[got], false);
            assert_eq!(clauses(&v), ["OPT-012"], "citing {cited:?}: {v:?}");
        }
        // A value ignored where the option has no effect, warned about under the option's own
        // level clause instead of OPT-002.
        let want = Diagnostic::new("OPT-002", "")
            .key("ge.exec.inputReuseMemIndexes")
            .level(Level::Session);
        let got = Diagnostic {
            clause: "IRM-002".into(),
            ..want.clone()
        };
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false);
        assert_eq!(clauses(&v), ["OPT-012"]);
    }

    #[test]
    fn key_level_and_carried_subject_fields_are_behaviour() {
        let want = warn("IRM-003", Subject::index(4));
        // Another level: not the same warning, whatever it cites.
        let got = Diagnostic {
            level: Some(Level::Session),
            ..want.clone()
        };
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false);
        assert_eq!(clauses(&v), ["OPT-012", "OPT-012"], "{v:?}");
        // Another key, citing no clause: the warning is missing (IRM-005's) and the other one
        // uncalled for.
        let got = Diagnostic {
            key: Some("ge.exec.outputReuseMemIndexes".into()),
            clause: String::new(),
            ..want.clone()
        };
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false);
        assert_eq!(clauses(&v), ["IRM-005", "OPT-012"], "{v:?}");
        // No subject at all: the same warning, in another form.
        let got = Diagnostic {
            subject: Subject::default(),
            clause: String::new(),
            ..want.clone()
        };
        let v = compare(spec(), "warnings", &[Expected::exact(&want)], &[got], false);
        assert_eq!(clauses(&v), ["OPT-012"]);
    }

    #[test]
    fn what_an_engine_adds_beyond_the_vocabulary_is_ignored() {
        // A graph on a session error whose suite form names none, a level on ORI-011's error.
        let want = Diagnostic::new("SES-012", "").subject(Subject::step(3));
        let got = want.clone().subject(Subject::step(3).in_graph(1));
        assert!(compare(spec(), "errors", &[Expected::exact(&want)], &[got], true).is_empty());
        let want = Diagnostic::new("ORI-011", "")
            .key("ge.exec.outputReuseInputMemIndexes")
            .subject(Subject::alias(0, 1));
        let got = want.clone().level(Level::Graph);
        assert!(compare(spec(), "errors", &[Expected::exact(&want)], &[got], false).is_empty());
        // A graph the suite names is compared.
        let want = Diagnostic::new("SES-012", "").subject(Subject::step(3).in_graph(1));
        let got = want.clone().subject(Subject::step(3).in_graph(2));
        let v = compare(spec(), "errors", &[Expected::exact(&want)], &[got], true);
        assert_eq!(clauses(&v), ["OPT-012", "OPT-012"], "{v:?}");
    }

    #[test]
    fn one_diagnostic_for_several_items_is_the_form() {
        let a = Diagnostic::new("IRM-004", "")
            .key("ge.exec.inputReuseMemIndexes")
            .level(Level::Graph)
            .subject(Subject::item("x"));
        let b = a.clone().subject(Subject::item("y"));
        let one = Diagnostic::new("", "bad list")
            .key("ge.exec.inputReuseMemIndexes")
            .level(Level::Graph);
        let v = compare(
            spec(),
            "errors",
            &[Expected::exact(&a), Expected::exact(&b)],
            &[one],
            false,
        );
        assert_eq!(clauses(&v), ["OPT-012", "OPT-012"], "{v:?}");
    }

    #[test]
    fn an_extra_warning_never_breaks_a_documented_clause() {
        // The text forbids no warning: one citing a documented clause is the suite's form.
        let w = Diagnostic::new("IRM-001", "").key("ge.exec.inputReuseMemIndexes");
        let v = compare(spec(), "warnings", &[], std::slice::from_ref(&w), false);
        assert_eq!(clauses(&v), ["OPT-012"]);
        // The same as an error is a refusal the text's clause is about.
        let v = compare(spec(), "errors", &[], &[w], false);
        assert_eq!(clauses(&v), ["IRM-001"]);
    }
}
