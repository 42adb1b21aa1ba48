//! The integration tests of `ge-spec`, one module per area, linked into one binary.

mod loader;
mod local_cases;
mod settings;
// Run where the `schema` feature is on: `cargo test --workspace` turns it on (through the
// harness's dev-dependency on itself), `cargo test -p ge-spec --features schema` does.
#[cfg(feature = "schema")]
mod schema;
