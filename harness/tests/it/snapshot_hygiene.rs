//! Snapshot hygiene without cargo-insta: every file in `snapshots/` is referenced by the test it
//! is named after (`it__<module>__<name>.snap` needs `"<name>"` or `fn <name>(` in `harness/tests/it/<module>.rs`), and
//! no unreviewed `.snap.new` is left behind there or in `snapshots/reference/` (whose files the
//! snapshot trials of `reference_snapshots` check themselves: `snapshot/unreferenced`).

use std::path::Path;

#[test]
fn every_snapshot_is_referenced_and_reviewed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("../snapshots");
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(dir.join("reference")).expect("snapshots/reference/ exists") {
        let name = entry
            .expect("directory entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !name.ends_with(".snap") {
            problems.push(format!(
                "reference/{name}: not a reviewed snapshot; review it with cargo insta review"
            ));
        }
    }
    for entry in std::fs::read_dir(&dir).expect("snapshots/ exists") {
        let name = entry
            .expect("directory entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name == "reference" {
            continue;
        }
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            problems.push(format!(
                "{name}: unreviewed snapshot; review it with cargo insta review"
            ));
            continue;
        }
        let Some(stem) = name.strip_suffix(".snap") else {
            problems.push(format!("{name}: not a snapshot"));
            continue;
        };
        // The test binary `it` is the first part of every module path.
        let Some((module, snap)) = stem
            .strip_prefix("it__")
            .and_then(|rest| rest.split_once("__"))
        else {
            problems.push(format!("{name}: not named it__<module>__<name>.snap"));
            continue;
        };
        let test = root.join("tests/it").join(format!("{module}.rs"));
        match std::fs::read_to_string(&test) {
            // Named snapshots carry their name as a string; unnamed ones are named after the test.
            Ok(text)
                if text.contains(&format!("\"{snap}\""))
                    || text.contains(&format!("fn {snap}(")) => {}
            Ok(_) => problems.push(format!(
                "{name}: no test in {module}.rs names \"{snap}\" (unreferenced)"
            )),
            Err(_) => problems.push(format!("{name}: no test file {module}.rs (unreferenced)")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
