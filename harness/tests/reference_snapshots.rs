//! The reference's answer to every scenario of the snapshot set, kept in `snapshots/reference/`
//! by the very snapshot trials a vendor runs (`Suite::with_snapshots`), so a change in what the
//! reference answers, its wording included, shows up in review as an insta diff.
//!
//! The older snapshots beside them in `snapshots/` stay as they are: they render plans and
//! traces for reading (session steps as text, the options messages of every case in one file)
//! rather than the raw observation, and the docs point at them.

use ge_conformance::libtest::Suite;
use libtest_mimic::Arguments;

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots/reference");
    let suite = Suite::new(ge_reference::Reference::default()).with_snapshots(dir);
    libtest_mimic::run(&Arguments::from_args(), suite.snapshot_trials()).exit();
}
