//! Fuzz target `empty`: does nothing; the baseline that throughput figures are measured against.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::hint::black_box(data);
});
