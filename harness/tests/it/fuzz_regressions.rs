//! Replays every input under `fuzz/regressions/<target>/` through its target: each file is a
//! finding that was fixed, kept so it never comes back. A new finding is added by copying the
//! crash file there (and, when it is a backend's behaviour, promoting it to a case with
//! `ge-conformance promote`).

use std::path::Path;

use ge_conformance::fuzz;

fn regressions() -> Vec<(String, std::path::PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).expect("fuzz/regressions exists") {
        let dir = dir.expect("readable").path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for file in std::fs::read_dir(&dir).expect("readable") {
            out.push((name.clone(), file.expect("readable").path()));
        }
    }
    out.sort();
    out
}

#[test]
fn every_regression_input_passes_its_target() {
    let all = regressions();
    assert!(!all.is_empty(), "no regression inputs found");
    for (target, file) in all {
        let t = fuzz::target(&target)
            .unwrap_or_else(|| panic!("fuzz/regressions/{target}: no such target"));
        let data = std::fs::read(&file).expect("readable");
        // A panic here is the finding coming back.
        (t.run)(&data);
    }
}

/// The first finding of the CI campaign: a setup that planted a link and then a directory at
/// the same path. The directory "went through" the link, so the oracle's record of the plants
/// (last step wins) disagreed with the disk and blamed the reference for WGT-007. Overlapping
/// setup steps are now refused before the backend is asked.
#[test]
fn overlapping_setup_steps_are_refused() {
    let data = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/regressions/weights_fs/crash-6f4fb56bbb7cf57cb3f4cc6139ca8e1a32ea7025"),
    )
    .expect("the regression input exists");
    let scenario = fuzz::target("weights_fs")
        .and_then(|t| t.scenario(&data))
        .expect("decodes");
    let dir = tempfile::tempdir().expect("tempdir");
    let answer = ge_conformance::runner::ask(&ge_reference::Reference, &scenario, dir.path());
    let err = answer.expect_err("the setup cannot be planted");
    assert!(err.contains("overlaps an earlier step"), "{err}");
}
