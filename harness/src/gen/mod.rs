//! Scenario generators (proptest strategies), one module per capability. Property tests and the
//! certify runner draw scenarios from here and compare any backend with the reference.

pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;

use ge_spec::{Capability, Scenario};
use proptest::strategy::{BoxedStrategy, Strategy};

/// The scenario generator of `capability`, or `None` when the suite has none yet.
pub fn scenarios(capability: Capability) -> Option<BoxedStrategy<Scenario>> {
    match capability {
        Capability::Options => Some(options::scenario().prop_map(Scenario::Options).boxed()),
        Capability::Session => Some(session::scenario().prop_map(Scenario::Session).boxed()),
        _ => None,
    }
}
