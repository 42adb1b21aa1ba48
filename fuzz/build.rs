//! Build script of the fuzz targets: the `cabi` target exports its symbols dynamically, so that
//! an engine library compiled with `-fsanitize=fuzzer-no-link` and loaded at run time finds
//! libFuzzer's coverage callbacks (`__sanitizer_cov_*`) in the executable.
fn main() {
    println!("cargo:rustc-link-arg-bin=cabi=-rdynamic");
}
