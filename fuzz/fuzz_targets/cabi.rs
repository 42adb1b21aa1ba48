//! Fuzz target `cabi`: the differential target against an engine loaded through the C ABI
//! in-process (the library named by `GE_CONFORMANCE_DYLIB`), so libFuzzer's coverage reaches
//! into the engine's own C or C++ code when it is built with `-fsanitize=fuzzer-no-link`
//! (docs/c-abi.md). Judged at the default level, like `differential`.
#![no_main]

use std::sync::OnceLock;

use ge_conformance::dylib::DylibBackend;
use ge_conformance::judging::Judging;

/// The engine, opened on the first input. Without `GE_CONFORMANCE_DYLIB`, or with a library
/// that cannot be opened, the target says why once and rejects every input.
fn engine() -> Option<&'static DylibBackend> {
    static ENGINE: OnceLock<Option<DylibBackend>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let Some(path) = std::env::var_os("GE_CONFORMANCE_DYLIB") else {
                eprintln!("cabi: set GE_CONFORMANCE_DYLIB to the engine's shared library; every input is rejected");
                return None;
            };
            let path = std::path::PathBuf::from(path);
            let note = "cabi: the input that did it is the crash artefact";
            // No crash handler of the harness's own: this runs before libFuzzer installs its
            // handlers, which it does only for signals without one, and a handler here would
            // keep it from reporting a crash (a segfault, or a judged failure's abort) and
            // writing the artefact.
            DylibBackend::open_under_fuzzer(&path, note)
                .map_err(|e| eprintln!("cabi: {e}; every input is rejected"))
                .ok()
        })
        .as_ref()
}

libfuzzer_sys::fuzz_target!(
    // Opened before the fuzzer starts, so the engine's coverage counters are registered with
    // the executable's from the first input on.
    init: {
        engine();
    },
    |data: &[u8]| -> libfuzzer_sys::Corpus {
        let Some(engine) = engine() else {
            return libfuzzer_sys::Corpus::Reject;
        };
        ge_conformance_fuzz::corpus(ge_conformance::fuzz::differential(
            &Judging::DEFAULT,
            engine,
            data,
        ))
    }
);
