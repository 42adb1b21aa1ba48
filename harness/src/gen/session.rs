//! Proptest strategies that generate session scenarios (used by property tests and the certify runner).
