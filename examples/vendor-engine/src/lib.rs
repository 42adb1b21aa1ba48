//! `vendor-engine`: a worked example of a GE-compatible engine certified with `ge-conformance`.
//!
//! It is a second, deliberately small implementation of the contract, written from the spec
//! tables alone: it shares no code with the reference and agrees with it only through the
//! contract. It implements the options and transfer capabilities and declares nothing else, so
//! the suite runs their cases and properties and shows the other capabilities as ignored.
#![deny(missing_docs)]

pub mod options;
pub mod transfer;

use std::collections::BTreeSet;

use ge_spec::vocab::{OptionsObservation, OptionsScenario, TransferObservation, TransferScenario};
use ge_spec::{Answer, Backend, Capability};

/// The example engine. It holds no state: every answer depends on the scenario alone.
///
/// Build it with `Engine::default()`; it is `non_exhaustive` so settings can be added later
/// without breaking callers.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Engine;

impl Backend for Engine {
    fn name(&self) -> &str {
        "vendor-engine"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        BTreeSet::from([Capability::Options, Capability::Transfer])
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let ctx = options::Context {
            inputs: u64::from(scenario.graph.inputs),
            outputs: Some(u64::from(scenario.graph.outputs)),
            shape: scenario.graph.shape,
            run_mode: scenario.run_mode,
            product: scenario.product,
        };
        Ok(options::resolve(&scenario.options, &ctx))
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        Ok(transfer::plan(scenario))
    }
}
