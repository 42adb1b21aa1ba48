//! Fuzz target `allowed`: the allowed-answer generator. The reference answers one arbitrary
//! scenario as an engine that chose otherwise wherever the text is silent (a combination of
//! `spec/tables/alternatives.toml` the input picks), and the judge must not fail it at the
//! default level: a finding here is a judge that fails an answer the text allows.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| -> libfuzzer_sys::Corpus {
    ge_conformance_fuzz::corpus(ge_conformance::fuzz::allowed(data))
});
