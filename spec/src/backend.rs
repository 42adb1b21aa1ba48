//! The `Backend` trait: the narrow adapter every engine implements. It answers questions; the
//! harness judges the answers.

use std::collections::BTreeSet;
use std::path::Path;

use crate::vocab::{
    Capability, MemoryObservation, MemoryScenario, Observation, OptionsObservation,
    OptionsScenario, Scenario, SessionObservation, SessionScenario, TransferObservation,
    TransferScenario, WeightsObservation, WeightsScenario,
};

/// A backend's answer that it does not implement a capability.
///
/// Declaring a capability in [`Backend::capabilities`] and then answering `NotSupported` for it
/// is a failure; an undeclared capability is reported as not supported and not judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("capability `{capability}` is not supported: {reason}")]
pub struct NotSupported {
    /// The capability asked for.
    pub capability: Capability,
    /// Why, in a few words.
    pub reason: String,
}

impl NotSupported {
    /// `NotSupported` for `capability` with a reason.
    pub fn new(capability: Capability, reason: impl Into<String>) -> Self {
        NotSupported {
            capability,
            reason: reason.into(),
        }
    }
}

/// What a backend method returns.
pub type Answer<T> = Result<T, NotSupported>;

/// An engine under test. One method per capability; each default answers [`NotSupported`].
///
/// Implementors only answer; comparison and judging live in the harness. A backend must not
/// panic, but the harness survives one that does.
pub trait Backend {
    /// The backend's name, as reports print it.
    fn name(&self) -> &str;

    /// The backend's version, as reports print it.
    fn version(&self) -> &str {
        "unknown"
    }

    /// The capabilities the backend claims to implement.
    fn capabilities(&self) -> BTreeSet<Capability>;

    /// Options: parse, validate and resolve the option maps.
    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let _ = scenario;
        Err(NotSupported::new(Capability::Options, "not implemented"))
    }

    /// Transfer: plan the host-to-device movement of the user inputs.
    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        let _ = scenario;
        Err(NotSupported::new(Capability::Transfer, "not implemented"))
    }

    /// Memory: plan the device memory of one graph.
    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        let _ = scenario;
        Err(NotSupported::new(Capability::Memory, "not implemented"))
    }

    /// Session: run a script of loads, executions, refreshes and unloads.
    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        let _ = scenario;
        Err(NotSupported::new(Capability::Session, "not implemented"))
    }

    /// Weights: load (and maybe unload) a model with external weights inside `sandbox`, an
    /// existing directory the backend may write in and must not leave.
    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let _ = (scenario, sandbox);
        Err(NotSupported::new(Capability::Weights, "not implemented"))
    }

    /// Dispatches `scenario` to the method of its capability. `sandbox` is only used by the
    /// weights capability.
    fn answer(&self, scenario: &Scenario, sandbox: &Path) -> Answer<Observation> {
        Ok(match scenario {
            Scenario::Options(s) => Observation::Options(self.options(s)?),
            Scenario::Transfer(s) => Observation::Transfer(self.transfer(s)?),
            Scenario::Memory(s) => Observation::Memory(self.memory(s)?),
            Scenario::Session(s) => Observation::Session(self.session(s)?),
            Scenario::Weights(s) => Observation::Weights(self.weights(s, sandbox)?),
        })
    }
}
