//! Fuzz target `transfer`: the logic and its smoke test live in `ge_conformance::fuzz::transfer`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| -> libfuzzer_sys::Corpus {
    ge_conformance_fuzz::corpus(ge_conformance::fuzz::transfer(data))
});
