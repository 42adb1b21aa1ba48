//! Proptest strategies that generate transfer scenarios (used by property tests and the certify runner).
