//! Invariant oracles: functions that take any backend's observation for a scenario and say which
//! clauses it breaks. Where many answers are right (memory plans, session traces), these judge;
//! where one is (options, transfer, weights), they work it out on their own reading of the
//! tables, never by asking the reference, so a bug in the reference cannot hide from its judge.
//!
//! An oracle reports every clause broken, documented or not; weighing them as failures or
//! deviations is the caller's ([`crate::judging::Judging`]). The oracles of the capabilities that
//! act on options try every reading of the options the text allows
//! ([`options::Reading::alternatives`]) before blaming what followed from one: an engine that
//! chose another precedence, or read a spelling the text does not settle, is judged on what it
//! did with its reading, and its reading is a departure from the suite's choices.

use ge_spec::{Observation, OptionKey, Scenario};

use crate::judging::Judging;
pub use crate::judging::Violation;

pub mod diagnostics;
pub mod memory;
pub mod options;
pub mod registry;
pub mod session;
pub mod sites;
pub mod transfer;
pub mod weights;

/// One check of an oracle's phase table: the clauses it charges (literally, so that `grep`
/// finds it), the function that judges them (where `explain` points), and how to run it on the
/// context of its phase. A driver runs a phase's table in order ([`run_table`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<F> {
    /// The clause IDs the check charges.
    pub clauses: &'static [&'static str],
    /// The function that judges them.
    pub name: &'static str,
    /// Runs the check on the phase's context.
    pub run: F,
}

/// A check of a phase whose context is `C`.
pub(crate) type Check<C> = Entry<fn(&C) -> Vec<Violation>>;

/// Runs the checks of `table` on `cx` in order, adding what each finds to `out`, at most
/// [`MAX_PER_CHECK`] of each check's ([`bounded`]).
pub(crate) fn run_table<C>(table: &[Check<C>], cx: &C, out: &mut Vec<Violation>) {
    for check in table {
        out.extend(bounded((check.run)(cx)));
    }
}

/// The most violations of one check kept for one answer, besides one of each other clause it
/// found and a note of how many were left out.
pub(crate) const MAX_PER_CHECK: usize = 64;

/// `found`, cut to its first [`MAX_PER_CHECK`] violations, the first of each clause found only
/// past them, and one more (of the first's clause) saying how many were left out: the clauses
/// broken stay the same, and an answer made up to break one check for each of 100,000 entries
/// no longer costs the judge a message for each (round seven: a session trace of 450,000
/// made-up entries took the harness to 675 MB, nearly all of it violations). Applied to each
/// check of a table, and to all an answer broke ([`judge`]): the diagnostics are compared by
/// the drivers themselves.
pub(crate) fn bounded(found: Vec<Violation>) -> Vec<Violation> {
    if found.len() <= MAX_PER_CHECK {
        return found;
    }
    let mut collected = Collected::default();
    collected.extend(found);
    collected.into_vec()
}

/// Violations kept as [`bounded`] keeps them, while they are found: a check that finds several
/// for each entry of an answer collects them here, and holds no more than it would keep (round
/// nine: 265,000 made-up trace entries, five violations each, held 1.3 million messages until
/// the check returned, 557 MB).
#[derive(Debug, Default)]
pub(crate) struct Collected {
    kept: Vec<Violation>,
    left: usize,
}

impl Collected {
    /// Keeps `v` if fewer than [`MAX_PER_CHECK`] are kept or its clause is new; counts it
    /// otherwise.
    pub(crate) fn push(&mut self, v: Violation) {
        if self.kept.len() < MAX_PER_CHECK || !self.kept.iter().any(|k| k.clause == v.clause) {
            self.kept.push(v);
        } else {
            self.left += 1;
        }
    }

    /// [`Collected::push`] for each of `found`.
    pub(crate) fn extend(&mut self, found: impl IntoIterator<Item = Violation>) {
        for v in found {
            self.push(v);
        }
    }

    /// What was kept, and one more (of the first's clause) saying how many were left out.
    pub(crate) fn into_vec(mut self) -> Vec<Violation> {
        if self.left > 0 {
            let clause = self.kept[0].clause.clone();
            let left = self.left;
            self.kept.push(Violation::new(
                clause,
                format_args!("and {left} more like these, left out"),
            ));
        }
        self.kept
    }
}

/// A check the driver calls itself rather than through a table (one that computes what the
/// phases after it read, or runs under a reading of the options): listed all the same, so that
/// the registry holds every check.
pub(crate) type Called = Entry<()>;

/// A phase of an oracle as the registry lists it: what the phase judges, whether its driver
/// runs it as a table (or calls its checks itself), and each check's clauses and function.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// What the phase judges ("a plan's fusion (documented)").
    pub name: &'static str,
    /// True when the driver runs the phase's table; false for [`Called`] checks.
    pub tabled: bool,
    /// Each check's clauses and function.
    pub checks: Vec<(&'static [&'static str], &'static str)>,
}

impl Phase {
    /// The phase `name`, run as `table`.
    pub(crate) fn of<F>(name: &'static str, table: &[Entry<F>]) -> Phase {
        Phase {
            name,
            tabled: true,
            checks: table.iter().map(|e| (e.clauses, e.name)).collect(),
        }
    }

    /// The checks called directly, by the driver or by what it calls (`name`: where, "by the
    /// driver").
    pub(crate) fn called(name: &'static str, table: &[Called]) -> Phase {
        Phase {
            name,
            tabled: false,
            checks: table.iter().map(|e| (e.clauses, e.name)).collect(),
        }
    }
}

/// Judges `observation` as an answer to `scenario` with the oracle of its capability. An
/// observation of another capability than the scenario's is itself a violation.
pub fn judge(judging: &Judging, scenario: &Scenario, observation: &Observation) -> Vec<Violation> {
    bounded(match (scenario, observation) {
        (Scenario::Options(s), Observation::Options(o)) => options::judge(judging.profile, s, o),
        (Scenario::Transfer(s), Observation::Transfer(o)) => transfer::judge(judging, s, o),
        (Scenario::Memory(s), Observation::Memory(o)) => memory::judge(judging, s, o),
        (Scenario::Session(s), Observation::Session(o)) => session::judge(judging, s, o),
        (Scenario::Weights(s), Observation::Weights(o)) => weights::judge(judging, s, o),
        (s, o) => vec![Violation::new(
            "SCENARIO",
            format_args!(
                "a {} scenario was answered with a {} observation",
                s.capability(),
                o.capability()
            ),
        )],
    })
}

/// Judges with the strict reading of the options, and when that finds a binding violation, with
/// every other reading the text allows of the options in `keys`: the first reading under which
/// nothing binding is broken is the one the engine is judged by, and the suite's choices it
/// departs from are added as violations (deviations at level `documented`; failures at level
/// `strict`, named after the reading rather than what followed from it). `planned`: the
/// observation acted on the options (readings that reject a key are not tried then).
pub fn under_readings(
    judging: &Judging,
    reading: &options::Reading,
    keys: &[OptionKey],
    planned: bool,
    judge: impl Fn(&options::Values, bool) -> Vec<Violation>,
) -> Vec<Violation> {
    let strict = reading.strict();
    let first = judge(&strict.values, strict.rejected);
    if !judging.any_binding(&first) {
        return first;
    }
    let alternatives = reading.alternatives(keys, planned);
    let others = alternatives.get(1..).unwrap_or_default();
    // The engine's reading: one under which nothing binding is broken; failing that (level
    // strict, an engine with other choices too), one under which nothing the text states is,
    // where the strict reading breaks the text, so that a failure is named after the choices
    // departed from, never after a documented clause the strict reading alone makes out broken.
    let text = Judging::new(judging.profile, ge_spec::Conformance::Documented);
    let first_breaks_text = text.any_binding(&first);
    let mut fallback = None;
    for alt in others {
        let v = judge(&alt.values, alt.rejected);
        if !judging.any_binding(&v) {
            return with_departures(v, alt);
        }
        if fallback.is_none() && first_breaks_text && !text.any_binding(&v) {
            fallback = Some((v, alt));
        }
    }
    match fallback {
        Some((v, alt)) => with_departures(v, alt),
        None => first,
    }
}

/// `v`, the violations under the reading `alt`, with the suite's choices that reading departs
/// from (deviations at level `documented`, failures at level `strict`).
fn with_departures(mut v: Vec<Violation>, alt: &options::Alternative) -> Vec<Violation> {
    for clause in &alt.departs {
        v.push(Violation::new(
            clause.clone(),
            "the answer follows another reading of the options than the suite's, one the text allows",
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_keeps_its_first_violations_every_clause_and_a_count() {
        let mut found: Vec<Violation> = (0..1000)
            .map(|i| Violation::new("SES-010", format_args!("entry {i}")))
            .collect();
        found.push(Violation::new("SES-013", "late"));
        let kept = bounded(found);
        assert_eq!(kept.len(), MAX_PER_CHECK + 2);
        assert!(kept.iter().any(|v| v.clause == "SES-013"));
        let last = kept.last().expect("a count");
        assert_eq!(last.clause, "SES-010");
        assert_eq!(
            last.message,
            format!("and {} more like these, left out", 1001 - MAX_PER_CHECK - 1)
        );
        let few: Vec<Violation> = (0..MAX_PER_CHECK)
            .map(|i| Violation::new("X", i.to_string()))
            .collect();
        assert_eq!(bounded(few.clone()), few);
    }
}
