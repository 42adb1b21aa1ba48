//! The reference's answer to every scenario of the snapshot set, kept in `snapshots/reference/`
//! by the very snapshot trials a vendor runs (`Suite::with_snapshots`), so a change in what the
//! reference answers, its wording included, shows up in review as an insta diff.
//!
//! The older snapshots beside them in `snapshots/` that held a raw observation of a scenario of
//! the set (the three worked transfer examples, the configuration examples together) are gone:
//! these trials keep the same answers. The others stay, because they are other views rather
//! than the raw observation of a scenario of the set: session scripts rendered step by step,
//! every options message of the cases in one file (and the upstream one), memory plans and
//! weights layouts of scenarios built for reading (with and without reuse, both memset
//! policies, both naming modes); moving them would churn every one of those files for nothing.

use ge_conformance::libtest::Arguments;
use ge_conformance::libtest::Suite;

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots/reference");
    let suite = Suite::new(ge_reference::Reference::default()).with_snapshots(dir);
    ge_conformance::libtest::run(&Arguments::from_args(), suite.snapshot_trials()).exit();
}
