//! Shared test set-up: the one snapshot convention of the project. Every insta snapshot lives in
//! the workspace's `snapshots/` folder and is named `<module>__<name>.snap`.

/// Runs `f` with the project's insta settings.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn with_snapshots<R>(f: impl FnOnce() -> R) -> R {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots"));
    settings.set_prepend_module_to_snapshot(true);
    settings.bind(f)
}

/// The path of a test shim under `tests/shims/`, quoted for an `exec:` command line.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn shim(name: &str) -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shims")
        .join(name);
    ge_conformance::certify::shell_quote(&path.to_string_lossy())
}

/// The command line that serves the reference over the protocol.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn reference_server() -> String {
    format!(
        "{} serve-reference",
        ge_conformance::certify::shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

/// Runs `f` on a thread of its own and fails the test if it takes longer than `limit`: a
/// hostile backend or file must not hang the test run.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn within<T: Send + 'static>(
    limit: std::time::Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not end within {limit:?}: the harness blocked"))
}
