//! Writes outside the sandbox are seen or stopped: a subprocess backend gets a `$TMPDIR` and
//! `$HOME` of its own, whose leftovers after a weights trial are WGT-007 violations, and, where
//! the kernel has Landlock, cannot write anywhere else (an absolute path, or through a link it
//! makes in the sandbox and removes). Each test runs under a hard limit of its own.

use crate::common;
use common::{misbehave, reference_server, within};

use std::path::Path;
use std::time::Duration;

use ge_conformance::backends::{self, BackendHandle};
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::confine::Confine;
use ge_conformance::judging::{Judging, SANDBOX_RULE};
use ge_conformance::report::{Outcome, Report};
use ge_spec::{Conformance, Profile};

/// The weights cases that write a file, through `misbehave.py MODE` on every weights request.
fn weights_through(mode: &str, outside: Option<&Path>, level: Conformance) -> (Report, String) {
    let env = outside
        .map(|dir| {
            format!(
                "env MISBEHAVE_OUTSIDE={} ",
                shell_quote(&dir.to_string_lossy())
            )
        })
        .unwrap_or_default();
    weights_with(mode, &env, level)
}

/// [`weights_through`], the backend's command prefixed by `env` (`env NAME=value `).
fn weights_with(mode: &str, env: &str, level: Conformance) -> (Report, String) {
    let env = env.to_owned();
    let command = format!(
        "{env}{}",
        misbehave(&format!("{mode} '\"capability\":\"weights\"'"))
    );
    within(Duration::from_secs(120), move || {
        let arg = format!("exec:{command}");
        let handle: BackendHandle = backends::open_confined(
            &arg,
            Duration::from_secs(5),
            Profile::Documented,
            Confine::On,
        )
        .expect("the backend greets");
        let cfg = Config {
            judging: Judging::new(Profile::Documented, level),
            filter: Some("weights-modes/".to_owned()),
            backend_arg: arg,
            ..Config::default()
        };
        let report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
        let mut confinement = handle.confinement().unwrap_or_default();
        // What the backend said of its attempts, after the confinement (the signal test reads it).
        confinement.push('\n');
        confinement.push_str(&handle.stderr());
        (report, confinement)
    })
}

#[test]
fn a_file_left_in_the_backends_tmpdir_fails_wgt_007_at_strict() {
    let (report, _) = weights_through("write-tmpdir", None, Conformance::Strict);
    let failed: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .collect();
    assert!(!failed.is_empty(), "the stray files are seen");
    for t in &failed {
        let message = t.message.clone().unwrap_or_default();
        assert!(
            t.broken.contains(&"WGT-007".to_owned()),
            "{}: {:?}",
            t.name,
            t.broken
        );
        assert!(
            message.contains("$TMPDIR/stray-") && message.contains("outside the sandbox"),
            "{}: {message}",
            t.name
        );
    }
}

/// A backend that floods its `$TMPDIR` past the listing's cap cannot hide what it leaves among
/// the flood: every weights trial after the first fails WGT-007, the cap named in its message.
#[test]
fn leftovers_hidden_in_a_flooded_tmpdir_still_fail_wgt_007() {
    let (report, _) = weights_through("flood-tmpdir", None, Conformance::Strict);
    let capped = "more than 10000 entries of $TMPDIR and $HOME";
    let said = |t: &ge_conformance::report::TrialResult| {
        t.message.as_deref().unwrap_or("").contains(capped)
    };
    assert!(report.trials.iter().any(said), "the cap is reported");
    // The first trial's flood may land after the harness has looked (the shim writes once its
    // answer is out); every later trial finds the directories past the cap.
    let passed: Vec<_> = report
        .trials
        .iter()
        .skip(1)
        .filter(|t| t.outcome != Outcome::Fail)
        .map(|t| &t.name)
        .collect();
    assert!(passed.is_empty(), "leaking trials that passed: {passed:?}");
}

/// A backend that floods its sandbox with links past the walk's cap (round six, H1) costs the
/// harness bounded memory, and fails every weights trial WGT-005 (binding at every level): the
/// sandbox holds more than any answer lists.
#[test]
fn a_sandbox_flooded_past_the_walks_cap_fails_wgt_005() {
    let (report, said) = weights_through("flood-sandbox", None, Conformance::Documented);
    let trials: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome != Outcome::NotSupported)
        .collect();
    assert!(!trials.is_empty(), "{said}");
    for t in trials {
        let message = t.message.as_deref().unwrap_or("");
        assert_eq!(t.outcome, Outcome::Fail, "{}: {message}", t.name);
        assert_eq!(t.broken, ["WGT-005"], "{}: {message}", t.name);
        assert!(
            message.contains("more than 10000 entries"),
            "{}: {message}",
            t.name
        );
    }
}

/// Beneath the sandbox root but outside the sandbox and the backend's own `$TMPDIR` and `$HOME`
/// (here `$TMPDIR/..`), Landlock lets a backend write; such a write is judged as one beside the
/// sandbox: the harness's safety rule, failed at every level, also when the backend takes the
/// read right from the directories to hide it, or floods its `$TMPDIR` past the listing's cap
/// first. (Elsewhere beneath the root,
/// shared by every backend of this test process, is `confine`'s unit test.)
#[rstest::rstest]
#[case::plainly("write-beside-tmpdir")]
#[case::hidden_by_a_chmod("hide-beside")]
#[case::behind_a_flood_of_its_tmpdir("flood-beside")]
fn a_file_written_beside_the_backends_tmpdir_breaks_the_safety_rule(#[case] mode: &str) {
    let (report, said) = weights_through(mode, None, Conformance::Documented);
    let failed: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .collect();
    assert!(!failed.is_empty(), "the stray files are seen: {said}");
    for t in &failed {
        let message = t.message.as_deref().unwrap_or("");
        assert!(
            message.contains("$TMPDIR/../stray-"),
            "{}: {message}",
            t.name
        );
        assert!(t.broken.contains(&SANDBOX_RULE.to_owned()), "{}", t.name);
    }
}

#[test]
fn a_file_left_in_the_backends_tmpdir_is_a_deviation_at_documented() {
    // WGT-007 is the suite's choice: at level documented it is reported, never a failure. The
    // backend's own $TMPDIR is its scratch area, so the harness's safety rule (SANDBOX-001,
    // writes beside the sandbox) is not broken.
    let (report, _) = weights_through("write-tmpdir", None, Conformance::Documented);
    assert!(report.trials.iter().all(|t| t.outcome != Outcome::Fail));
    assert!(report
        .trials
        .iter()
        .any(|t| t.deviations.contains(&"WGT-007".to_owned())));
    assert!(report
        .trials
        .iter()
        .all(|t| !t.broken.contains(&SANDBOX_RULE.to_owned())));
}

/// Runs `mode`, which writes into a directory outside the sandbox root, and returns what that
/// directory holds afterwards, with the confinement the report states.
fn outside_after(mode: &str) -> (Vec<String>, String, Report) {
    outside_in(mode, Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// [`outside_after`], the directory written into made under `base`.
fn outside_in(mode: &str, base: &Path) -> (Vec<String>, String, Report) {
    let outside = tempfile::tempdir_in(base).expect("a directory");
    let (report, confinement) =
        weights_through(mode, Some(outside.path()), Conformance::Documented);
    let mut left: Vec<String> = std::fs::read_dir(outside.path())
        .expect("readable")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    (left, confinement, report)
}

/// A confined backend cannot connect to a local TCP service (here a listener of the test's own)
/// where the kernel's Landlock has network rules.
#[test]
fn a_tcp_connection_is_refused_where_landlock_has_network_rules() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    let port = listener.local_addr().expect("its address").port();
    refused_where_landlock_has("connect-tcp", &format!("env MISBEHAVE_PORT={port} "), 4);
}

/// A backend run as root cannot make a device node, even in its own sandbox, where Landlock
/// runs: a node for a disk or the kernel log would let it write to the device.
#[test]
fn a_device_node_is_refused_where_landlock_runs() {
    refused_where_landlock_has("make-device", "", 1);
}

/// Runs `misbehave.py mode` (its command prefixed by `env`) and asserts that what it tried was
/// refused, where the kernel's Landlock is at least ABI `abi` (skipped, saying why, elsewhere).
fn refused_where_landlock_has(mode: &str, env: &str, abi: u32) {
    let (_, said) = weights_with(mode, env, Conformance::Documented);
    // The confinement line reads `Landlock (ABI N): ...`.
    let found: u32 = said
        .strip_prefix("Landlock")
        .and_then(|rest| rest.split_once("(ABI "))
        .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if found < abi {
        eprintln!("skipped: this machine's confinement does not refuse it ({said})");
        return;
    }
    assert!(
        said.contains(&format!("misbehave: {mode} failed")),
        "{said}"
    );
    assert!(!said.contains(&format!("{mode} went through")), "{said}");
}

#[test]
fn an_absolute_write_outside_is_refused_where_landlock_runs() {
    let (left, confinement, report) = outside_after("write-outside");
    assert!(!report.trials.is_empty());
    if !confinement.starts_with("Landlock") {
        eprintln!("skipped: writes outside are not refused on this machine ({confinement})");
        return;
    }
    assert_eq!(left, Vec::<String>::new(), "nothing was written outside");
}

#[test]
fn a_write_through_a_link_made_in_the_sandbox_is_refused_where_landlock_runs() {
    let (left, confinement, _) = outside_after("through-link");
    if !confinement.starts_with("Landlock") {
        eprintln!("skipped: writes outside are not refused on this machine ({confinement})");
        return;
    }
    assert_eq!(
        left,
        Vec::<String>::new(),
        "nothing was written through the link"
    );
}

#[test]
fn without_confinement_the_report_says_so_and_the_environment_is_the_harnesss() {
    let arg = format!("exec:{}", reference_server());
    let handle = backends::open_confined(
        &arg,
        Duration::from_secs(5),
        Profile::Documented,
        Confine::Off,
    )
    .expect("the backend greets");
    assert!(handle.confinement().unwrap_or_default().starts_with("off"));
    let reference = backends::open("reference", Duration::from_secs(5), Profile::Documented)
        .expect("the reference");
    assert_eq!(
        reference.confinement(),
        None,
        "in-process: nothing to state"
    );
}

#[test]
fn explain_says_what_the_harness_safety_rule_is() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["explain", SANDBOX_RULE])
        .output()
        .expect("run ge-conformance");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("binds at every level") && text.contains("WGT-007"),
        "{text}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_write_into_dev_shm_beside_this_runs_root_is_refused_where_landlock_runs() {
    // /dev/shm holds this run's private sandbox root; other runs' roots lie beside it.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || !ge_conformance::sandbox::root().starts_with(shm) {
        eprintln!("skipped: the sandbox root is not under /dev/shm here");
        return;
    }
    let (left, confinement, _) = outside_in("write-outside", shm);
    if !confinement.starts_with("Landlock") {
        eprintln!("skipped: writes outside are not refused on this machine ({confinement})");
        return;
    }
    assert_eq!(
        left,
        Vec::<String>::new(),
        "nothing was written beside the root"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn the_harness_is_neither_written_through_proc_nor_signalled() {
    let read = || std::fs::read_to_string("/proc/self/oom_score_adj").unwrap_or_default();
    let before = read();
    let (_, proc_log, _) = outside_after("write-proc");
    if !proc_log.starts_with("Landlock") {
        eprintln!("skipped: writes outside are not refused on this machine ({proc_log})");
        return;
    }
    assert_eq!(
        read(),
        before,
        "the harness's oom_score_adj is unchanged: {proc_log}"
    );
    let (_, signal_log, _) = outside_after("signal-harness");
    if signal_log.contains("signals to the harness are not refused") {
        eprintln!("skipped: the kernel's Landlock has no signal scoping ({signal_log})");
        return;
    }
    assert!(
        signal_log.contains("signals to the harness are refused"),
        "{signal_log}"
    );
    assert!(
        signal_log.contains("misbehave: signal-harness failed")
            && !signal_log.contains("misbehave: signal-harness went through"),
        "{signal_log}"
    );
}

/// A confined backend cannot set the harness's resource limits or its priority (round five,
/// M5): the kernel checks only the user for these, and Landlock has no rule for them, so a
/// seccomp filter refuses them. Each probe sets what the harness already has, so that a
/// regression changes nothing here.
#[cfg(all(target_os = "linux", feature = "landlock"))]
#[test]
fn the_harnesss_limits_and_priority_are_out_of_a_backends_reach() {
    for mode in ["limit-harness", "nice-harness"] {
        let (_, said) = weights_with(mode, "", Conformance::Documented);
        assert!(said.contains("out of reach (seccomp)"), "{said}");
        assert!(
            said.contains(&format!("misbehave: {mode} failed"))
                && !said.contains(&format!("{mode} went through")),
            "{said}"
        );
    }
}

/// A backend inherits no descriptor of the harness's but its three pipes (round six, M1): a
/// writable one the harness's caller left open (a CI job's `3>>log`) is no path, so Landlock
/// would not stop a write through it.
#[cfg(unix)]
#[test]
fn a_backend_inherits_no_descriptor_of_the_harnesss() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = dir.path().join("ci.log");
    std::fs::write(&log, "the job's log\n").expect("written");
    let backend = misbehave("write-inherited never");
    let o = within(Duration::from_secs(120), move || {
        std::process::Command::new("sh")
            .args([
                "-c",
                r#"exec 3>>"$1"; exec "$2" certify --backend "exec:$3" --filter options-values/ --cases 1"#,
                "sh",
            ])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_ge-conformance"))
            .arg(backend)
            .output()
            .expect("run ge-conformance")
    });
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ci.log")).unwrap_or_default(),
        "the job's log\n",
        "{said}"
    );
    assert!(!said.contains("write-inherited went through"), "{said}");
}

/// A confined backend holds no capability (round five, M9), even started by a harness run as
/// root (as CI runs): no `CAP_SYS_ADMIN`, `CAP_SYS_BOOT`, `CAP_NET_ADMIN` or any other, and
/// nothing in its bounding set where the harness could empty it.
#[cfg(all(target_os = "linux", feature = "landlock"))]
#[test]
fn a_confined_backend_holds_no_capabilities() {
    let (_, said) = weights_with("capabilities", "", Conformance::Documented);
    assert!(said.contains("no capabilities"), "{said}");
    let held = |name: &str| -> u64 {
        let line = said
            .lines()
            .find(|l| l.starts_with("misbehave: capabilities Cap"))
            .unwrap_or_else(|| panic!("the backend said which it holds: {said}"));
        let field = line
            .split_whitespace()
            .skip_while(|w| *w != format!("{name}:"))
            .nth(1)
            .unwrap_or_else(|| panic!("{name} in {line}"));
        u64::from_str_radix(field, 16).expect("hexadecimal")
    };
    assert_eq!(held("CapEff"), 0, "{said}");
    assert_eq!(held("CapPrm"), 0, "{said}");
    let ours = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if ours
        .lines()
        .any(|l| l.starts_with("CapEff:") && !l.ends_with("0000000000000000"))
    {
        assert_eq!(
            held("CapBnd"),
            0,
            "run as root, the bounding set is emptied: {said}"
        );
    }
}

/// A System V shared memory segment a confined backend makes goes with it (round five, M7),
/// where the harness may give it an IPC namespace of its own (run as root, as CI runs).
#[cfg(all(target_os = "linux", feature = "landlock"))]
#[test]
fn a_sysv_segment_a_backend_leaves_goes_with_it() {
    let key = 0x6765_0000 + (std::process::id() & 0xffff);
    let (_, said) = weights_with(
        "sysv-shm",
        &format!("env MISBEHAVE_KEY={key} "),
        Conformance::Documented,
    );
    assert!(said.contains("misbehave: sysv-shm went through"), "{said}");
    let here = std::fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default();
    let left = here
        .lines()
        .any(|l| l.split_whitespace().next() == Some(&key.to_string()));
    if left {
        // Removed whatever the outcome, so that a failure leaves no memory held.
        let _ = std::process::Command::new("ipcrm")
            .args(["-M", &key.to_string()])
            .status();
    }
    if !said.contains("System V IPC of its own") {
        eprintln!("skipped: the harness cannot give a backend its own IPC namespace ({said})");
        return;
    }
    assert!(
        !left,
        "the segment of key {key} outlived the backend: {said}"
    );
}

/// `--require-confinement` fails closed (round five, L15): only a backend Landlock confines
/// runs; one that could only be watched, or was not confined at all, is refused, and so is an
/// in-process engine, which nothing confines.
#[test]
fn required_confinement_runs_only_what_landlock_confines() {
    use ge_conformance::confine::Hardening;
    use ge_conformance::confine::{Signals, Status};
    let landlock = Status::Landlock(6, Signals::Scoped, Hardening::default());
    let watched = Status::WatchedOnly(
        "the kernel does not enforce Landlock".into(),
        Hardening::default(),
    );
    assert_eq!(Confine::Required.allows(&landlock), Ok(()));
    let refused = Confine::Required
        .allows(&watched)
        .expect_err("watched only");
    assert!(
        refused.contains("--require-confinement") && refused.contains("does not enforce"),
        "{refused}"
    );
    assert!(Confine::Required.allows(&Status::Off).is_err());
    assert_eq!(Confine::On.allows(&watched), Ok(()), "the default runs it");

    let Err(in_process) = backends::open_giving_up(
        "dylib:/nonexistent/libengine.so",
        Duration::from_secs(5),
        Profile::Documented,
        Confine::Required,
        backends::GiveUp::default(),
    ) else {
        panic!("an in-process engine is refused before it is loaded");
    };
    assert!(in_process.contains("serve-dylib"), "{in_process}");

    // Where the kernel has Landlock, a confined backend runs as it would without the flag.
    let arg = format!("exec:{}", reference_server());
    let opened = backends::open_giving_up(
        &arg,
        Duration::from_secs(5),
        Profile::Documented,
        Confine::Required,
        backends::GiveUp::default(),
    );
    let on = backends::open_confined(
        &arg,
        Duration::from_secs(5),
        Profile::Documented,
        Confine::On,
    )
    .expect("the backend greets");
    match on.confinement().unwrap_or_default() {
        c if c.starts_with("Landlock") => {
            assert!(opened.is_ok(), "{:?}", opened.err());
        }
        c => assert!(opened.is_err(), "ran under {c}"),
    }
}

#[test]
fn required_confinement_and_no_confinement_cannot_both_be_asked() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args([
            "certify",
            "--backend",
            "reference",
            "--no-confine",
            "--require-confinement",
        ])
        .output()
        .expect("run ge-conformance");
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(text.contains("cannot be used with"), "{text}");
}
