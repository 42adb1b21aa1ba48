//! Invariant oracles: functions that take any backend's observation for a scenario and say which
//! clauses it breaks. Where many answers are right (memory plans, session traces), these judge.

use ge_spec::{Observation, Profile, Scenario};

pub mod memory;
pub mod session;
pub mod transfer;
pub mod weights;

/// One broken clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The clause broken.
    pub clause: String,
    /// What is wrong, for a person.
    pub message: String,
}

impl Violation {
    /// A violation of `clause`.
    pub fn new(clause: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            clause: clause.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.clause, self.message)
    }
}

/// Judges `observation` as an answer to `scenario` with the oracle of its capability. An
/// observation of another capability than the scenario's is itself a violation.
pub fn judge(scenario: &Scenario, observation: &Observation) -> Vec<Violation> {
    judge_in(Profile::Documented, scenario, observation)
}

/// [`judge`] under `profile`: the oracles resolve the options as that profile does.
pub fn judge_in(
    profile: Profile,
    scenario: &Scenario,
    observation: &Observation,
) -> Vec<Violation> {
    match (scenario, observation) {
        (Scenario::Options(_), Observation::Options(_)) => Vec::new(),
        (Scenario::Transfer(s), Observation::Transfer(o)) => transfer::judge_in(profile, s, o),
        (Scenario::Memory(s), Observation::Memory(o)) => memory::judge_in(profile, s, o),
        (Scenario::Session(s), Observation::Session(o)) => session::judge_in(profile, s, o),
        (Scenario::Weights(s), Observation::Weights(o)) => weights::judge_in(profile, s, o),
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
