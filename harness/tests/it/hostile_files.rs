//! Report bundles are written and read without trusting the directory they are in: `--out`
//! never writes through a planted link nor over a user's files, concurrent runs never mix
//! their files, and `verify` reads a hostile bundle (FIFOs, links to devices) without hanging.

use crate::common;
use common::within;

use std::path::Path;
use std::time::Duration;

use ge_conformance::bundle::{self, BundleError};
use ge_conformance::certify::{certify, Config};
use ge_conformance::report::Report;
use ge_reference::Reference;

fn report() -> Report {
    let cfg = Config {
        cases: 1,
        filter: Some("options-defaults/".into()),
        ..Config::default()
    };
    certify(&Reference, &cfg, &mut |_, _, _| {}).expect("a run")
}

fn refusal(r: Result<(), BundleError>) -> String {
    r.expect_err("the destination is refused").to_string()
}

#[cfg(unix)]
#[test]
fn a_planted_link_is_never_written_through() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let victim = root.path().join("victim");
    std::fs::write(&victim, "precious").expect("write");
    let out = root.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    std::os::unix::fs::symlink(&victim, out.join("report.md")).expect("symlink");
    let why = refusal(bundle::write(&report(), &out, true));
    assert!(why.contains("not part of a report bundle"), "{why}");
    // The bundle directory itself a link: refused as well.
    let linked = root.path().join("linked");
    std::os::unix::fs::symlink(root.path(), &linked).expect("symlink");
    let why = refusal(bundle::write(&report(), &linked, true));
    assert!(why.contains("symbolic link"), "{why}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn a_users_files_are_never_overwritten() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let out = root.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    for force in [false, true] {
        let why = refusal(bundle::check_destination(&out, force));
        assert!(why.contains("`notes.txt`"), "{why}");
        let why = refusal(bundle::write(&report(), &out, force));
        assert!(why.contains("`notes.txt`"), "{why}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );

    // An earlier bundle is replaced whole with --force only.
    let earlier = root.path().join("earlier");
    bundle::write(&report(), &earlier, false).expect("a new directory");
    let why = refusal(bundle::write(&report(), &earlier, false));
    assert!(why.contains("--force"), "{why}");
    bundle::write(&report(), &earlier, true).expect("replaced");
    bundle::verify(&earlier).expect("the replacement verifies");
    // Nothing is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn concurrent_runs_never_mix_their_files() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let out = root.path().join("same");
    let report = report();
    let results: Vec<Result<(), BundleError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| bundle::write(&report, &out, false)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let written = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(written, 1, "{results:?}");
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        let why = r.to_string();
        assert!(
            why.contains("at the same time") || why.contains("--force"),
            "{why}"
        );
    }
    bundle::verify(&out).expect("the one bundle written verifies");
}

#[cfg(unix)]
fn plant(dir: &Path, name: &str, what: &str) {
    let path = dir.join(name);
    std::fs::remove_file(&path).expect("remove");
    match what {
        "fifo" => {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &path,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .expect("mkfifo");
        }
        target => std::os::unix::fs::symlink(target, &path).expect("symlink"),
    }
}

#[cfg(unix)]
#[test]
fn verify_reads_a_hostile_bundle_without_hanging() {
    for (name, what) in [
        ("report.md", "fifo"),
        ("report.txt", "/dev/zero"),
        ("MANIFEST.sha256", "fifo"),
        ("report.json", "/dev/zero"),
    ] {
        let root = tempfile::tempdir().expect("a temporary directory");
        let out = root.path().join("b");
        bundle::write(&report(), &out, false).expect("written");
        plant(&out, name, what);
        let err = within(Duration::from_secs(30), move || {
            bundle::verify(&out).expect_err("a hostile bundle does not verify")
        });
        assert!(
            err.to_string().contains("not a regular file"),
            "{name} as {what}: {err}"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_out_directory_that_cannot_be_made_is_refused_before_the_run() {
    // /proc takes no new directory, not even from root.
    let why = refusal(bundle::check_destination(
        Path::new("/proc/no-such-run/bundle"),
        false,
    ));
    assert!(why.contains("does not take a new directory"), "{why}");
    // A directory that can be made is not refused, and nothing is left of the probe.
    let root = tempfile::tempdir().expect("a temporary directory");
    bundle::check_destination(&root.path().join("a/b"), false).expect("it can be made");
    assert_eq!(std::fs::read_dir(root.path()).expect("readable").count(), 0);
}

#[test]
fn verify_refuses_a_bundle_larger_than_its_cap_before_reading_it() {
    // Twenty sparse pictures of 60 MiB each (a few kilobytes on disk), each listed in the
    // manifest: each is under the per-file cap, together they are far past the bundle's.
    let root = tempfile::tempdir().expect("a temporary directory");
    let out = root.path().join("b");
    bundle::write(&report(), &out, false).expect("written");
    let mut manifest = std::fs::read_to_string(out.join(bundle::MANIFEST)).expect("the manifest");
    for n in 0..20 {
        let name = ge_conformance::report::picture_file(n);
        std::fs::File::create(out.join(&name))
            .and_then(|f| f.set_len(60 << 20))
            .expect("a sparse picture");
        manifest.push_str(&format!("{}  {name}\n", "0".repeat(64)));
    }
    std::fs::write(out.join(bundle::MANIFEST), manifest).expect("the manifest");
    let err = within(Duration::from_secs(30), move || {
        bundle::verify(&out).expect_err("too large")
    });
    assert!(
        err.to_string().contains(&format!(
            "more than the {} a bundle may hold",
            bundle::MAX_BUNDLE
        )),
        "{err}"
    );
}

/// The reference, but each weights answer leaves something foreign in the sandbox.
#[cfg(unix)]
struct Leaves(&'static str);

#[cfg(unix)]
impl ge_spec::Backend for Leaves {
    fn name(&self) -> &str {
        "leaves"
    }

    fn capabilities(&self) -> std::collections::BTreeSet<ge_spec::Capability> {
        [ge_spec::Capability::Weights].into_iter().collect()
    }

    fn weights(
        &self,
        scenario: &ge_spec::vocab::WeightsScenario,
        sandbox: &Path,
    ) -> ge_spec::Answer<ge_spec::vocab::WeightsObservation> {
        let o = Reference.weights(scenario, sandbox)?;
        let trap = sandbox.join("trap");
        match self.0 {
            "fifo" => {
                let _ = rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &trap,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o644),
                    0,
                );
            }
            "beside" => {
                let _ = std::fs::write(sandbox.join("../escaped"), b"x");
            }
            "sparse" => {
                if let Ok(f) = std::fs::File::create(&trap) {
                    let _ = f.set_len(3 << 30);
                }
            }
            _ => {}
        }
        Ok(o)
    }
}

#[cfg(unix)]
#[test]
fn foreign_files_in_or_beside_the_sandbox_are_reported_without_hanging() {
    use ge_conformance::report::Outcome;
    for what in ["fifo", "sparse", "beside"] {
        let report = within(Duration::from_secs(120), move || {
            let cfg = Config {
                cases: 2,
                filter: Some("weights-modes/".into()),
                ..Config::default()
            };
            certify(&Leaves(what), &cfg, &mut |_, _, _| {}).expect("a run")
        });
        // WGT-005 and WGT-007 are the suite's own clauses: a deviation at level documented.
        let failed: Vec<_> = report
            .trials
            .iter()
            .filter(|t| matches!(t.outcome, Outcome::Fail | Outcome::Deviation))
            .collect();
        assert!(!failed.is_empty(), "{what}");
        // A write beside the sandbox breaks the harness's safety rule: a failure at every level.
        if what == "beside" {
            assert!(
                failed.iter().any(|t| t.outcome == Outcome::Fail
                    && t.broken == vec![ge_conformance::judging::SANDBOX_RULE.to_owned()]
                    && t.deviations.contains(&"WGT-007".to_owned())),
                "beside: no trial failed on the safety rule"
            );
        }
        for t in failed {
            let m = t.message.clone().unwrap_or_default();
            assert!(
                m.contains("trap is a FIFO")
                    || m.contains("trap is a file of")
                    || m.contains("../escaped was written beside the sandbox"),
                "{what}: {}: {m}",
                t.name
            );
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_mount_in_the_sandbox_is_left_and_never_deleted_through() {
    let outside = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(outside.path().join("precious"), "keep me").expect("write");
    let root = tempfile::tempdir().expect("a temporary directory");
    let sandbox = ge_conformance::sandbox::Sandbox::new_in(root.path()).expect("a sandbox");
    let mnt = sandbox.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mounted = std::process::Command::new("mount")
        .args(["--bind"])
        .arg(outside.path())
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: this test needs to bind-mount a directory (root, and mount(8))");
        return;
    }
    let found = ge_conformance::sandbox::walk(sandbox.path()).entries;
    assert!(
        matches!(&found["mnt"], ge_conformance::sandbox::Entry::Foreign(w) if w.contains("mount")),
        "{found:?}"
    );
    assert!(!found.contains_key("mnt/precious"), "{found:?}");
    let left = ge_conformance::sandbox::remove(sandbox.path());
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    assert!(left.contains(&"mnt".to_owned()), "{left:?}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("precious")).expect("still there"),
        "keep me"
    );
}
