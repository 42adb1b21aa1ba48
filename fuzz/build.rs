//! Build script of the fuzz targets:
//! - the `cabi` target exports the symbols an engine library compiled with
//!   `-fsanitize=fuzzer-no-link` and loaded at run time looks for in the executable: libFuzzer's
//!   coverage callbacks (`__sanitizer_cov_*`, `__sancov_lowest_stack`) and its interceptors of
//!   the comparison functions, so that the engine's `memcmp` is traced as the harness's is.
//!   Only those: exporting every symbol (`-rdynamic`) kept every function of every crate
//!   linked, whose 217,000 counters libFuzzer scans after each input, against 92,000 now (+3 to
//!   5% exec/s, `docs/fuzzing.md`). Under a sanitizer the runtime's own interface (`__asan_*`,
//!   its `malloc`) must reach the library too, so that build exports everything, as before;
//! - the targets' allocator is mimalloc (`cfg(fast_alloc)`), unless the build runs under a
//!   sanitizer (`cargo +nightly fuzz`, ClusterFuzzLite's AddressSanitizer build), whose checks
//!   live in the system allocator it intercepts.

/// The symbols the `cabi` target exports when no sanitizer runs (globs of the linker's
/// `--export-dynamic-symbol`): libFuzzer's callbacks and its interceptors.
const EXPORTED: &[&str] = &[
    "__sanitizer_*",
    "__sancov_*",
    "memcmp",
    "bcmp",
    "strcmp",
    "strncmp",
    "strcasecmp",
    "strncasecmp",
    "strstr",
    "strcasestr",
    "memmem",
];

fn main() {
    let sanitized = std::env::var_os("CARGO_CFG_SANITIZE").is_some();
    if sanitized {
        println!("cargo::rustc-link-arg-bin=cabi=-rdynamic");
    } else {
        for symbol in EXPORTED {
            println!("cargo::rustc-link-arg-bin=cabi=-Wl,--export-dynamic-symbol={symbol}");
        }
    }
    println!("cargo::rustc-check-cfg=cfg(fast_alloc)");
    if !sanitized {
        println!("cargo::rustc-cfg=fast_alloc");
    }
}
