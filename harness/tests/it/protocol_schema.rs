//! The harness's JSON Schemas checked in under `spec/schema/` (the protocol messages and the JSON
//! report) must be exactly what the types generate: this test fails when they drift apart. Run with
//! `UPDATE_SCHEMA=1` to rewrite them after a deliberate change, then review the diff.

use std::path::PathBuf;

#[test]
fn checked_in_protocol_schemas_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec/schema");
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    let mut drifted = Vec::new();
    let all = ge_conformance::protocol::schemas()
        .into_iter()
        .chain(ge_conformance::report::schemas());
    for (name, schema) in all {
        assert!(!schema.is_null(), "{name}: schema generation failed");
        let text = serde_json::to_string_pretty(&schema).expect("a JSON value serialises") + "\n";
        let path = dir.join(name);
        if update {
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
        "harness schemas out of date: {drifted:?}; run `UPDATE_SCHEMA=1 cargo test -p ge-conformance --test it protocol_schema::` and review the diff"
    );
}
