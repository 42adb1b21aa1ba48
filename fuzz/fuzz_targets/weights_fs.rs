//! Fuzz target `weights_fs`: the logic and its smoke test live in `ge_conformance::fuzz::weights_fs`;
//! in a build with `--features plant`, `GE_CONFORMANCE_FUZZ_PLANT` plants a fault in it for a
//! drill (`ge_conformance::fuzz::planted`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: ge_conformance_fuzz::init(),
    |data: &[u8]| -> libfuzzer_sys::Corpus {
        ge_conformance_fuzz::run("weights_fs", ge_conformance::fuzz::weights_fs, data)
    }
);
