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
pub mod session;
pub mod sites;
pub mod transfer;
pub mod weights;

/// Judges `observation` as an answer to `scenario` with the oracle of its capability. An
/// observation of another capability than the scenario's is itself a violation.
pub fn judge(judging: &Judging, scenario: &Scenario, observation: &Observation) -> Vec<Violation> {
    match (scenario, observation) {
        (Scenario::Options(s), Observation::Options(o)) => options::judge(judging.profile, s, o),
        (Scenario::Transfer(s), Observation::Transfer(o)) => transfer::judge(judging, s, o),
        (Scenario::Memory(s), Observation::Memory(o)) => memory::judge(judging, s, o),
        (Scenario::Session(s), Observation::Session(o)) => session::judge(judging, s, o),
        (Scenario::Weights(s), Observation::Weights(o)) => weights::judge(judging, s, o),
        (s, o) => vec![Violation::new(
            "SCENARIO",
            format!(
                "a {} scenario was answered with a {} observation",
                s.capability(),
                o.capability()
            ),
        )],
    }
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
    let alternatives = reading.alternatives(keys, planned);
    let Some((strict, others)) = alternatives.split_first() else {
        return Vec::new();
    };
    let first = judge(&strict.values, strict.rejected);
    if !judging.any_binding(&first) {
        return first;
    }
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
