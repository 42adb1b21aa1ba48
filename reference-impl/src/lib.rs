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
use ge_spec::{Answer, Backend, Profile};

pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;

/// The reference backend: implements every capability, behaving per its [`Profile`].
///
/// The documented reference is also the constant [`Reference`](const@Reference), so
/// `&Reference` keeps working wherever a documented reference is wanted;
/// [`Reference::upstream`] behaves like the open-source GE implementation instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reference {
    profile: Profile,
}

/// The documented reference, usable as a value the way a unit struct is.
#[allow(non_upper_case_globals)]
pub const Reference: Reference = Reference::new(Profile::Documented);

impl Reference {
    /// The reference behaving per `profile`.
    pub const fn new(profile: Profile) -> Self {
        Reference { profile }
    }

    /// The reference behaving like the open-source GE implementation.
    pub const fn upstream() -> Self {
        Reference::new(Profile::Upstream)
    }

    /// The profile it behaves per.
    pub const fn profile(&self) -> Profile {
        self.profile
    }
}

impl Backend for Reference {
    fn name(&self) -> &str {
        match self.profile {
            Profile::Documented => "ge-reference",
            Profile::Upstream => "ge-reference-upstream",
        }
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Capability::ALL.into_iter().collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        Ok(options::resolve(
            self.profile,
            &scenario.options,
            options::Context::of(scenario),
        )
        .observation)
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        transfer::plan(self.profile, scenario)
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        memory::plan(self.profile, scenario)
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        session::run(self.profile, scenario)
    }

    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        weights::load(self.profile, scenario, sandbox)
    }
}
