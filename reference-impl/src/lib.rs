//! The reference implementation of the GE memory-options contract: complete and simple, a
//! first-class backend that passes the whole suite and serves as the fuzzing oracle.
#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::path::Path;

use ge_spec::vocab::{
    Capability, MemoryObservation, MemoryScenario, OptionsObservation, OptionsScenario,
    SessionObservation, SessionScenario, TransferObservation, TransferScenario, WeightsObservation,
    WeightsScenario,
};
use ge_spec::{Answer, Backend};

pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;

/// The reference backend: implements every capability.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reference;

impl Backend for Reference {
    fn name(&self) -> &str {
        "ge-reference"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Capability::ALL.into_iter().collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        Ok(options::resolve(&scenario.options, options::Context::of(scenario)).observation)
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        transfer::plan(scenario)
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        memory::plan(scenario)
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        session::run(scenario)
    }

    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        weights::load(scenario, sandbox)
    }
}
