//! Scenario generators (proptest strategies), one module per capability. Property tests and the
//! certify runner draw scenarios from here and compare any backend with the reference.

pub mod boundaries;
pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;

use ge_spec::{Capability, Scenario};
use proptest::prelude::any;
use proptest::prop_oneof;
use proptest::strategy::{BoxedStrategy, Strategy};

/// A number of at most `max_bits` bits (at most 64), drawn log-uniformly: a bit width `w`
/// uniformly from `0..=max_bits`, then a number of exactly `w` significant bits (0 for width 0).
/// Every width is as likely as every other, so the generators reach 2^32 and 2^63 as often as
/// 2^8, where a value read into too few bits goes wrong. It shrinks towards narrower widths and
/// towards the power of two of its width. The generators mix it with the small values that make
/// realistic scenarios; each says with what weight.
pub fn log_uniform(max_bits: u32) -> impl Strategy<Value = u64> + Clone {
    let max_bits = max_bits.min(64);
    (0..=max_bits, any::<u64>()).prop_map(|(width, bits)| match width {
        0 => 0,
        w => {
            let top = 1u64 << (w - 1);
            top | (bits & (top - 1))
        }
    })
}

/// The boundary scenarios of `capability` ([`boundaries`]), judged before the random ones.
pub fn boundary_scenarios(capability: Capability) -> Vec<Scenario> {
    match capability {
        Capability::Options => boundaries::options()
            .into_iter()
            .map(Scenario::Options)
            .collect(),
        Capability::Transfer => boundaries::transfer()
            .into_iter()
            .map(Scenario::Transfer)
            .collect(),
        Capability::Memory => boundaries::memory()
            .into_iter()
            .map(Scenario::Memory)
            .collect(),
        Capability::Weights => boundaries::weights()
            .into_iter()
            .map(Scenario::Weights)
            .collect(),
        Capability::Session => boundaries::session()
            .into_iter()
            .map(Scenario::Session)
            .collect(),
    }
}

/// The scenario generator of `capability` (`None` is kept for capabilities added later).
pub fn scenarios(capability: Capability) -> Option<BoxedStrategy<Scenario>> {
    match capability {
        Capability::Options => Some(options::scenario().prop_map(Scenario::Options).boxed()),
        Capability::Transfer => Some(
            prop_oneof![
                3 => transfer::scenario(24),
                1 => transfer::any_scenario(24),
            ]
            .prop_map(Scenario::Transfer)
            .boxed(),
        ),
        Capability::Memory => Some(memory::scenario().prop_map(Scenario::Memory).boxed()),
        Capability::Session => Some(session::scenario().prop_map(Scenario::Session).boxed()),
        Capability::Weights => Some(
            prop_oneof![
                3 => weights::scenario(),
                1 => weights::hostile_scenario(),
            ]
            .prop_map(Scenario::Weights)
            .boxed(),
        ),
    }
}
