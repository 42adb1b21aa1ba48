//! An answer judged against the reading: the outcome reported, the values in force, the first failure, the diagnostics and the keys passed through.

use super::*;

/// The checks of the options oracle, by phase, for the registry.
pub(in crate::oracle) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("the answer as a whole, after each key's", ANSWER),
        Phase::called("by the driver, key by key", CALLED),
        Phase::called("by the reading of the options", READING),
    ]
}

/// What the checks of the answer as a whole read: the reading and the observation.
pub(super) struct Answer<'a> {
    pub(super) reading: &'a Reading,
    pub(super) obs: &'a OptionsObservation,
}

/// A check of the phases whose context is [`Answer`].
pub(super) type AnswerCheck = Entry<fn(&Answer<'_>) -> Vec<Violation>>;

/// The checks of the answer as a whole, after each key's, in order.
pub(super) const ANSWER: &[AnswerCheck] = &[
    Entry {
        clauses: &["OPT-011"],
        name: "answer::check_first_failure",
        run: |cx| check_first_failure(cx.reading, cx.obs),
    },
    Entry {
        clauses: &["OPT-012"],
        name: "answer::check_diagnostics",
        run: |cx| check_diagnostics(Spec::embedded(), cx.reading, cx.obs),
    },
    Entry {
        clauses: &["OPT-004"],
        name: "answer::check_passthrough",
        run: |cx| check_passthrough(cx.reading, cx.obs),
    },
];

/// OPT-005 and OPT-006: what the engine reports of `k`'s key is one outcome, never both in
/// force and rejected (then read as rejected), never neither (`None`: nothing to judge further).
pub(super) fn reported_outcome(
    k: &KeyReading,
    row: &OptionSpec,
    obs: &OptionsObservation,
    rejected: &BTreeSet<&str>,
    out: &mut Vec<Violation>,
) -> Option<Outcome> {
    let name = k.key.as_str();
    match (obs.effective.get(name), rejected.contains(name)) {
        (Some(e), false) => read_effective(k, row, e, out),
        (None, true) => Some(Outcome::Rejected),
        (Some(_), true) => {
            out.push(Violation::new(
                "OPT-005",
                format_args!("{name} is reported both rejected and in force"),
            ));
            Some(Outcome::Rejected)
        }
        (None, false) => {
            out.push(Violation::new(
                "OPT-006",
                format_args!("{name} is neither in force nor rejected: every option has a value"),
            ));
            None
        }
    }
}

/// ACP-001, IRM-001, ... (the value clause of `k`'s key): the effective value reads as a
/// value of the option (`None`: it does not); then its spelling ([`check_canonical`]).
pub(super) fn read_effective(
    k: &KeyReading,
    row: &OptionSpec,
    e: &Effective,
    out: &mut Vec<Violation>,
) -> Option<Outcome> {
    let key = k.key;
    let name = key.as_str();
    let Some(m) = read_reported(row.grammar, &e.value) else {
        out.push(Violation::new(
            value_clause(key),
            format_args!(
                "{name}: the effective value {:?} cannot be read as a value of the option",
                e.value
            ),
        ));
        return None;
    };
    check_canonical(k, &m, e, out);
    Some(Outcome::Accepted(m, e.from))
}

/// OPT-007: the strict value in force, reported from the strict level, is spelled canonically.
pub(super) fn check_canonical(
    k: &KeyReading,
    m: &Meaning,
    e: &Effective,
    out: &mut Vec<Violation>,
) {
    if let Outcome::Accepted(sm, sf) = &k.strict {
        if sm == m && *sf == e.from && sm.canonical() != e.value {
            out.push(Violation::new(
                "OPT-007",
                format_args!(
                    "{}: the effective value is spelled {:?}; canonically it is {:?}",
                    k.key.as_str(),
                    e.value,
                    sm.canonical()
                ),
            ));
        }
    }
}

/// OPT-001, OPT-002, OPT-005, OPT-008 and the key's own clauses, as [`KeyReading::departures`]
/// and [`documented_rule`] name them: an outcome other than the strict one departs from the
/// suite's choices where the text permits it, and otherwise breaks a documented rule.
pub(super) fn judge_outcome(
    reading: &Reading,
    maps: &OptionMaps,
    k: &KeyReading,
    row: &OptionSpec,
    got: &Outcome,
    out: &mut Vec<Violation>,
) {
    let name = k.key.as_str();
    if *got == k.strict {
        return;
    }
    if k.permits(row, got) {
        for c in k.departures(got) {
            out.push(Violation::new(
                c,
                format_args!(
                    "{name}: {} where the suite's choice is {}",
                    show(got),
                    show(&k.strict)
                ),
            ));
        }
        return;
    }
    // Not permitted by the text: name the documented rule it breaks.
    let broken = documented_rule(k.key, row, maps, got, reading.profile, &k.strict_because);
    out.push(Violation::new(
        broken,
        format_args!(
            "{name}: {} is not what the text allows (expected {})",
            show(got),
            show(&k.strict)
        ),
    ));
}

/// OPT-011 upstream: which refusal GE gives is a fact of its check order. An engine that
/// reports refusals, none of them the first GE makes, stops where GE does not.
pub(super) fn check_first_failure(reading: &Reading, obs: &OptionsObservation) -> Vec<Violation> {
    let mut out = Vec::new();
    if let (Profile::Upstream, Some(first), false) = (
        reading.profile,
        reading.errors.first(),
        obs.errors.is_empty(),
    ) {
        // Which check refused is told by the key and the level, not by the clause cited.
        let same = |d: &&Diagnostic| d.key == first.key && d.level == first.level;
        if !obs.errors.iter().any(|d| same(&d)) {
            out.push(Violation::new(
                "OPT-011",
                format_args!(
                    "GE's first failing check refuses {} at {} level; the refusals reported are of checks it never reaches",
                    first.key.as_deref().unwrap_or("?"),
                    first.level.map_or("?".to_owned(), |l| l.to_string())
                ),
            ));
        }
    }
    out
}

/// OPT-012 and each diagnostic's own clause: the errors and warnings are the strict lists,
/// with the MAY-permitted ones optional.
pub(super) fn check_diagnostics(
    spec: &Spec,
    reading: &Reading,
    obs: &OptionsObservation,
) -> Vec<Violation> {
    let mut out = diagnostics::compare_reports(
        spec,
        "errors",
        &reading.expected_errors(),
        &obs.errors,
        false,
    );
    out.extend(diagnostics::compare(
        spec,
        "warnings",
        &reading.expected_warnings(),
        &obs.warnings,
        false,
    ));
    out
}

/// OPT-004: the keys outside the twelve pass through, each once.
pub(super) fn check_passthrough(reading: &Reading, obs: &OptionsObservation) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut passthrough = obs.passthrough.clone();
    passthrough.sort();
    passthrough.dedup();
    if passthrough != reading.passthrough {
        out.push(Violation::new(
            "OPT-004",
            format_args!(
                "keys outside the twelve are {passthrough:?}, expected {:?}",
                reading.passthrough
            ),
        ));
    }
    out
}

pub(super) fn show(o: &Outcome) -> String {
    match o {
        Outcome::Rejected => "rejected".to_owned(),
        Outcome::Accepted(m, from) => format!(
            "{:?} from {}",
            m.canonical(),
            serde_json::to_value(from)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
    }
}

/// The documented rule an outcome the text does not permit breaks.
pub(super) fn documented_rule(
    key: OptionKey,
    row: &OptionSpec,
    maps: &OptionMaps,
    got: &Outcome,
    profile: Profile,
    strict_because: &[String],
) -> String {
    if profile == Profile::Upstream {
        // GE's behaviour: blame the first of the key's clauses that records it.
        let spec = Spec::embedded();
        for n in [1, 2, 3, 4, 5, 6] {
            let id = clause(key, n);
            if spec.clause(&id).is_some_and(|c| c.diverges()) {
                return id;
            }
        }
        for id in strict_because {
            if spec.clause(id).is_some_and(|c| c.diverges()) {
                return id.clone();
            }
        }
        return value_clause(key);
    }
    match got {
        Outcome::Rejected => value_clause(key),
        Outcome::Accepted(m, from) => {
            let level = match from {
                Source::Default => {
                    // A valid setting where the option takes effect was ignored.
                    return if row
                        .levels
                        .iter()
                        .any(|l| maps.at(*l).contains_key(key.as_str()))
                    {
                        clause(key, 2)
                    } else {
                        // Nothing set where the option takes effect: the default is OPT-006's.
                        "OPT-006".into()
                    };
                }
                Source::Global => Level::Global,
                Source::Session => Level::Session,
                Source::Graph => Level::Graph,
            };
            if !maps.at(level).contains_key(key.as_str()) {
                return "OPT-006".into();
            }
            if !row.takes_effect_at(level) {
                return clause(key, 2);
            }
            match (key, m) {
                (OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes, _) => {
                    clause(key, 3)
                }
                (OptionKey::OutputReuseInputMemIndexes, _) => "ORI-003".into(),
                _ => value_clause(key),
            }
        }
    }
}
