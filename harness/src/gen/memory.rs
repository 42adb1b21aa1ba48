//! Proptest strategies that generate memory scenarios (used by property tests and the certify runner).
