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
