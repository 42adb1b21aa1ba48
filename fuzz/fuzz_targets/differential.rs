//! Fuzz target `differential`: the reference against a second, independent backend (the
//! vendor example engine), exactly as a vendor fuzzes their own engine: at the default level, a
//! failure is a finding and a deviation from the suite's own choices is not.
#![no_main]

use ge_conformance::judging::Judging;

libfuzzer_sys::fuzz_target!(|data: &[u8]| -> libfuzzer_sys::Corpus {
    let engine = vendor_engine::Engine::default();
    ge_conformance_fuzz::corpus(ge_conformance::fuzz::differential(
        &Judging::DEFAULT,
        &engine,
        data,
    ))
});
