//! Build script of the fuzz targets:
//! - the `cabi` target exports its symbols dynamically, so that an engine library compiled with
//!   `-fsanitize=fuzzer-no-link` and loaded at run time finds libFuzzer's coverage callbacks
//!   (`__sanitizer_cov_*`) in the executable;
//! - the targets' allocator is mimalloc (`cfg(fast_alloc)`), unless the build runs under a
//!   sanitizer (`cargo +nightly fuzz`, ClusterFuzzLite's AddressSanitizer build), whose checks
//!   live in the system allocator it intercepts.
fn main() {
    println!("cargo::rustc-link-arg-bin=cabi=-rdynamic");
    println!("cargo::rustc-check-cfg=cfg(fast_alloc)");
    if std::env::var_os("CARGO_CFG_SANITIZE").is_none() {
        println!("cargo::rustc-cfg=fast_alloc");
    }
}
