//! Fuzz target `options`: the logic and its smoke test live in `ge_conformance::fuzz::options`;
//! in a build with `--features plant`, `GE_CONFORMANCE_FUZZ_PLANT` plants a fault in it for a
//! drill (`ge_conformance::fuzz::planted`).
#![no_main]

ge_conformance_fuzz::reference_target!(options);
