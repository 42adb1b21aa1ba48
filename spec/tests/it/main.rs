//! The integration tests of `ge-spec`, one module per area, linked into one binary.

mod loader;
mod local_cases;
mod schema;
