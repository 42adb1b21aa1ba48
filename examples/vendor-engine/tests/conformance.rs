//! Certifies the example engine: one test per case of the spec tables and one per property.
//! Capabilities the engine does not declare show as ignored.

fn main() {
    ge_conformance::libtest::Suite::new(vendor_engine::Engine::default()).run_and_exit();
}
