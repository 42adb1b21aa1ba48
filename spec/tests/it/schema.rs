//! The JSON Schemas checked in under `spec/schema/` must be exactly what the Rust types generate:
//! this test fails when they drift apart. Run with `UPDATE_SCHEMA=1` to rewrite them after a
//! deliberate change, then review the diff.

use std::path::PathBuf;

#[test]
fn checked_in_schemas_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema");
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    let mut drifted = Vec::new();
    for (name, schema) in ge_spec::tables::schemas() {
        assert!(!schema.is_null(), "{name}: schema generation failed");
        let text = serde_json::to_string_pretty(&schema).expect("a JSON value serialises") + "\n";
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).expect("create spec/schema");
            std::fs::write(&path, &text).expect("write schema");
        } else {
            match std::fs::read_to_string(&path) {
                Ok(on_disk) if on_disk == text => {}
                _ => drifted.push(name),
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "schemas out of date: {drifted:?}; run `UPDATE_SCHEMA=1 cargo test -p ge-spec --test schema` and review the diff"
    );
}
