//! Certifies the example engine: one test per case of the spec tables and of the engine's own
//! tables (`cases/`), one per property, and one snapshot trial per scenario of the snapshot set
//! (`snapshots/`). Capabilities the engine does not declare show as ignored; the two it must
//! cover are required, so dropping one from `capabilities()` by mistake fails the test.

use ge_spec::Capability;

fn main() {
    ge_conformance::libtest::Suite::new(vendor_engine::Engine::default())
        .require([Capability::Options, Capability::Transfer])
        .with_cases("cases")
        .with_snapshots("snapshots")
        .run_and_exit();
}
