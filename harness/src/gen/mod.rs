//! Scenario generators (proptest strategies), one module per capability. Property tests and the
//! certify runner draw scenarios from here and compare any backend with the reference.

pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;
