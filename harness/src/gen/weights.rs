//! Proptest strategies that generate weights scenarios (used by property tests and the certify runner).
