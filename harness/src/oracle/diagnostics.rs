//! Judging lists of diagnostics: which are missing, which are extra, and which clause each of
//! those breaks. Diagnostics match on the clause, the key, the level and the subject fields the
//! clause defines (see `ge_spec::diag`); the message and the value are never compared.
//!
//! A missing diagnostic breaks the clause that calls for it (the clause it cites, or the one its
//! `reported_under` names) when nothing in the list cites that clause at all; when something
//! does, in another form (other subject, key or level, or one where the suite wants one per
//! item), the form is what differs, and that is OPT-012's. Likewise an extra diagnostic breaks
//! the clause that calls for its kind when nothing of its clause is expected (a warning given
//! where no condition calls for one, a run-time error where the addresses agree), and OPT-012
//! when it is another form of an expected one or cites no clause.

use ge_spec::{Diagnostic, Level, Spec, Subject};

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

/// The subject fields compared for diagnostics citing `clause`: those it defines, and in a
/// session the graph (SES-017).
fn fields(spec: &Spec, clause: &str, session: bool) -> Vec<String> {
    let mut f = spec
        .clause(clause)
        .map(|c| c.subject.clone())
        .unwrap_or_default();
    if session {
        f.push("graph".to_owned());
    }
    f
}

fn matches(spec: &Spec, e: &Expected, d: &Diagnostic, session: bool) -> bool {
    if e.clause != d.clause {
        return false;
    }
    if e.key.as_ref().is_some_and(|k| *k != d.key) {
        return false;
    }
    if e.level.is_some_and(|l| l != d.level) {
        return false;
    }
    match &e.subject {
        None => true,
        Some(s) => {
            let f = fields(spec, &e.clause, session);
            s.restricted_to(&f) == d.subject.restricted_to(&f)
        }
    }
}

/// The clause that calls for diagnostics citing `id`.
pub fn caller(spec: &Spec, id: &str) -> String {
    spec.clause(id)
        .and_then(|c| c.reported_under.clone())
        .unwrap_or_else(|| id.to_owned())
}

/// Compares the diagnostics found in list `list` (`errors` or `warnings`) with those expected,
/// and returns a violation for each missing or extra one, naming the clause it breaks.
pub fn compare(
    spec: &Spec,
    list: &str,
    expected: &[Expected],
    actual: &[Diagnostic],
    session: bool,
) -> Vec<Violation> {
    // Maximum matching (Kuhn), required entries first so that optional ones never take a
    // diagnostic a required one needs.
    let mut order: Vec<usize> = (0..expected.len()).collect();
    order.sort_by_key(|&i| expected[i].optional);
    let adjacent: Vec<Vec<usize>> = expected
        .iter()
        .map(|e| {
            (0..actual.len())
                .filter(|&j| matches(spec, e, &actual[j], session))
                .collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; actual.len()];
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
    let mut matched = vec![false; expected.len()];
    for &i in &order {
        let mut seen = vec![false; actual.len()];
        matched[i] = augment(i, &adjacent, &mut owner, &mut seen);
    }
    // `augment` may move an entry to another diagnostic but never unmatches it.
    let mut out = Vec::new();
    for (i, e) in expected.iter().enumerate() {
        if matched[i] || e.optional {
            continue;
        }
        let cited = actual.iter().any(|d| d.clause == e.clause);
        if cited {
            out.push(Violation::new(
                "OPT-012",
                format!(
                    "{list}: {} is reported in another form than the vocabulary's",
                    e.describe()
                ),
            ));
        } else {
            out.push(Violation::new(
                caller(spec, &e.clause),
                format!("missing {list}: {}", e.describe()),
            ));
        }
    }
    for (j, d) in actual.iter().enumerate() {
        if owner[j].is_some() {
            continue;
        }
        // Wholly uncalled for (nothing of its clause is expected here): the clause that calls
        // for such diagnostics also says when they are not given. Another form of an expected
        // one, or a clause that only permits, or none at all: the vocabulary's form (OPT-012).
        let known = spec.clause(&d.clause).is_some_and(|c| !c.permits_only());
        let variant = expected.iter().any(|e| e.clause == d.clause);
        let blame = if known && !variant {
            caller(spec, &d.clause)
        } else {
            "OPT-012".to_owned()
        };
        out.push(Violation::new(
            blame,
            format!("{list}: {d} is not called for"),
        ));
    }
    out
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
}
