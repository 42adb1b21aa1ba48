//! Fuzz target `weights_fs`: the logic and its smoke test live in `ge_conformance::fuzz::weights_fs`;
//! in a build with `--features plant`, `GE_CONFORMANCE_FUZZ_PLANT` plants a fault in it for a
//! drill (`ge_conformance::fuzz::planted`).
#![no_main]

ge_conformance_fuzz::reference_target!(weights_fs);
