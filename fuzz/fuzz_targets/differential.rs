//! Fuzz target `differential`: the reference against a second, independent backend (the
//! vendor example engine), exactly as a vendor fuzzes their own engine.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| -> libfuzzer_sys::Corpus {
    let engine = vendor_engine::Engine::default();
    ge_conformance_fuzz::corpus(ge_conformance::fuzz::differential(&engine, data))
});
