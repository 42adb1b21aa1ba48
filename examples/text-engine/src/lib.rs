//! `text-engine`: a graph engine option layer written from the documentation text of the GE
//! memory-management options and the suite's vocabulary alone, kept apart from the suite's
//! reference implementation, tables and oracles.
//!
//! It offers three capabilities — options, transfer and memory — and answers under the
//! documented profile only. Every place where the text left a choice is numbered in `NOTES.md`.

use std::collections::BTreeSet;

use ge_spec::vocab::{
    Capability, MemoryObservation, MemoryScenario, OptionsObservation, OptionsScenario,
    TransferObservation, TransferScenario,
};
use ge_spec::{Answer, Backend};

pub mod memory;
pub mod options;
pub mod transfer;

#[cfg(test)]
mod tests;

/// The engine. It holds no state: every answer depends on its scenario alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextEngine;

impl Backend for TextEngine {
    fn name(&self) -> &str {
        "text-engine"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [
            Capability::Options,
            Capability::Transfer,
            Capability::Memory,
        ]
        .into_iter()
        .collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        Ok(options::observe(scenario))
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        Ok(transfer::plan(scenario))
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        Ok(memory::plan(scenario))
    }
}
