//! The coverage callbacks a fuzzing build of an engine calls, as no-ops the command line exports,
//! so that one build of a C or C++ engine serves both routes: the `cabi` fuzz target, where
//! libFuzzer provides these symbols and counts coverage, and `certify --backend dylib:` or
//! `serve-dylib`, where these provide them and count nothing.
//!
//! clang's `-fsanitize=fuzzer-no-link` instruments a library with calls to libFuzzer's
//! `__sanitizer_cov_*` callbacks and a thread-local `__sancov_lowest_stack`, which it leaves
//! undefined for the program to provide. Without them the library does not load outside a
//! fuzz executable ("undefined symbol: __sancov_lowest_stack"). `build.rs` has the linker export
//! them from the binary, where a library the harness opens finds them. Only the binary holds
//! them: in the library they would clash with libFuzzer's own in the fuzz targets.
//!
//! The set is every callback clang's default fuzzing coverage emits (inline 8-bit counters, the
//! PC table, indirect calls, comparisons, stack depth) and the optional ones a vendor may turn
//! on (guards, boolean flags, divisions, GEPs).

// Exporting a symbol under a fixed name is `unsafe_code` to the compiler (two definitions of a
// name would clash); these names are libFuzzer's, which no other part of the binary defines.
#![allow(unsafe_code)]

// The thread-local that the stack-depth coverage (`-fsanitize-coverage=stack-depth`, on with
// `-fsanitize=fuzzer-no-link` on Linux) writes to. A thread-local cannot be `#[no_mangle]` on
// stable Rust, so it is defined in assembly: eight zeroed bytes in `.tbss`.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
std::arch::global_asm!(
    ".pushsection .tbss,\"awT\",%nobits",
    ".globl __sancov_lowest_stack",
    ".type __sancov_lowest_stack,%object",
    ".size __sancov_lowest_stack,8",
    ".p2align 3",
    "__sancov_lowest_stack:",
    ".zero 8",
    ".popsection",
);

/// Declares each callback as an exported function that does nothing.
macro_rules! no_op {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        /// A libFuzzer coverage callback; outside a fuzz executable it records nothing.
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) {
            $(let _ = $arg;)*
        }
    )*};
}

no_op! {
    __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8);
    __sanitizer_cov_bool_flag_init(start: *mut u8, end: *mut u8);
    __sanitizer_cov_pcs_init(start: *const usize, end: *const usize);
    __sanitizer_cov_trace_pc_guard_init(start: *mut u32, end: *mut u32);
    __sanitizer_cov_trace_pc_guard(guard: *mut u32);
    __sanitizer_cov_trace_pc_indir(callee: usize);
    __sanitizer_cov_trace_cmp1(a: u8, b: u8);
    __sanitizer_cov_trace_cmp2(a: u16, b: u16);
    __sanitizer_cov_trace_cmp4(a: u32, b: u32);
    __sanitizer_cov_trace_cmp8(a: u64, b: u64);
    __sanitizer_cov_trace_const_cmp1(a: u8, b: u8);
    __sanitizer_cov_trace_const_cmp2(a: u16, b: u16);
    __sanitizer_cov_trace_const_cmp4(a: u32, b: u32);
    __sanitizer_cov_trace_const_cmp8(a: u64, b: u64);
    __sanitizer_cov_trace_switch(value: u64, cases: *const u64);
    __sanitizer_cov_trace_div4(value: u32);
    __sanitizer_cov_trace_div8(value: u64);
    __sanitizer_cov_trace_gep(index: usize);
}
