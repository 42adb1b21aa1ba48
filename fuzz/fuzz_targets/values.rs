//! Fuzz target `values`: the logic and its smoke test live in `ge_conformance::fuzz::values`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| -> libfuzzer_sys::Corpus {
    ge_conformance_fuzz::corpus(ge_conformance::fuzz::values(data))
});
