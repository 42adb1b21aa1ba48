//! Hostile backends never block the harness, nor make it grow without bound, nor outlive it:
//! a blank-line flood, a backend that stops reading its input, one that writes lines nobody
//! asked for, and one that leaves a helper process behind. Each test runs under a hard limit
//! of its own, so a regression fails fast instead of hanging the test run.

use crate::common;
use common::{misbehave, reference_server, shim, within};

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::protocol::{BrokenBackend, ExecBackend};
use ge_conformance::report::{Outcome, Report};
use ge_spec::vocab::OptionsScenario;
use ge_spec::{Backend, Profile};

/// Certifies the trials whose name contains `filter` through `exec:command`.
fn certify_through(command: &str, filter: &str, timeout: Duration) -> Report {
    let arg = format!("exec:{command}");
    let handle = backends::open(&arg, timeout, Profile::Documented).expect("the backend greets");
    let cfg = Config {
        cases: 16,
        filter: Some(filter.to_owned()),
        backend_arg: arg,
        ..Config::default()
    };
    certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run")
}

#[test]
fn a_blank_line_flood_fails_its_case_and_the_run_goes_on() {
    // Every options case mentioning the trigger gets an endless stream of blank lines.
    let command = misbehave("blank-flood ge.featureBaseRefreshable");
    let report = within(Duration::from_secs(120), move || {
        certify_through(&command, "options-", Duration::from_secs(2))
    });
    let flooded: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .collect();
    assert!(!flooded.is_empty());
    for t in flooded {
        let message = t.message.clone().unwrap_or_default();
        assert!(
            message.contains("blank lines instead of an answer"),
            "{}: {message}",
            t.name
        );
    }
    assert!(report.trials.iter().any(|t| t.outcome == Outcome::Pass));
}

#[test]
fn a_backend_that_stops_reading_cannot_block_a_write() {
    let timeout = Duration::from_millis(1500);
    let (elapsed, message) = within(Duration::from_secs(60), move || {
        let backend =
            ExecBackend::new(&format!("sh {}", shim("deaf.sh")), timeout).expect("a command line");
        backend.greet().expect("the deaf backend greets");
        // A request far larger than a pipe's buffer: writing it blocks until the child reads.
        let list = vec!["0"; 600_000].join(",");
        let scenario: OptionsScenario = serde_json::from_value(serde_json::json!({
            "options": { "graph": { "ge.exec.inputReuseMemIndexes": list } }
        }))
        .expect("a scenario");
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = backend.options(&scenario);
        }));
        let payload = outcome.expect_err("the request fails");
        let message = payload
            .downcast_ref::<BrokenBackend>()
            .map(|b| b.0.clone())
            .unwrap_or_default();
        (start.elapsed(), message)
    });
    assert!(
        message.contains("does not read its input"),
        "the failure says what happened: {message}"
    );
    assert!(
        elapsed < timeout + Duration::from_secs(3),
        "the request timeout covers writing it: {elapsed:?}"
    );
}

#[test]
fn lines_nobody_asked_for_fail_at_once_without_a_shrink_storm() {
    // Every answer comes twice: the second copy is a protocol violation, which fails the next
    // request and restarts the backend; a property does not shrink on it.
    let command = misbehave("extra-line request");
    let start = Instant::now();
    let report = within(Duration::from_secs(120), move || {
        certify_through(&command, "property/options", Duration::from_secs(2))
    });
    let property = report
        .trials
        .iter()
        .find(|t| t.name == "property/options")
        .expect("the property ran");
    assert_eq!(property.outcome, Outcome::Fail);
    let message = property.message.clone().unwrap_or_default();
    assert!(
        message.contains("nobody asked for") || message.contains("while request"),
        "{message}"
    );
    assert!(!message.contains("not reproducible"), "{message}");
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

/// Certifies a few options cases through `sh SHIM [how] PIDFILE reference-server`, whose
/// helper records its pid in PIDFILE, and asserts that the helper is gone soon after the run.
#[cfg(unix)]
fn helper_does_not_outlive_the_run(shim_name: &str, how: Option<&str>) {
    // Where a confined backend may write (ge_conformance::confine): under the sandbox root.
    let dir = common::OwnDir::new();
    let pidfile = dir.path().join("helper.pid");
    let command = format!(
        "sh {} {} {} {}",
        shim(shim_name),
        how.unwrap_or(""),
        shell_quote(&pidfile.to_string_lossy()),
        reference_server()
    );
    within(Duration::from_secs(60), move || {
        let report = certify_through(&command, "options-defaults/", Duration::from_secs(5));
        assert!(report.trials.iter().all(|t| t.outcome == Outcome::Pass));
    });
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the helper's pid")
        .trim()
        .parse()
        .expect("a pid");
    // Once the backend handle is gone, so is the helper within moments (reaped by whoever
    // adopted it: this process, for a helper that left the backend's group).
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let deadline = Instant::now() + Duration::from_secs(5);
    let alive = || {
        std::fs::read_to_string(proc_dir.join("stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false)
    };
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let outlived = alive();
    if outlived {
        // Not left behind by the test either.
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(!outlived, "the helper {pid} outlived the run");
}

#[cfg(unix)]
#[test]
fn a_helper_in_the_backends_process_group_does_not_outlive_the_run() {
    helper_does_not_outlive_the_run("with-helper.sh", None);
}

#[cfg(target_os = "linux")]
#[test]
fn a_helper_that_leaves_the_backends_process_group_does_not_outlive_the_run() {
    helper_does_not_outlive_the_run("escaping-helper.sh", Some("setpgid"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_helper_that_starts_a_session_of_its_own_does_not_outlive_the_run() {
    helper_does_not_outlive_the_run("escaping-helper.sh", Some("setsid"));
}

/// Interrupted while its backend hangs, the command line takes along the helper the backend
/// started in a session of its own: it kills the backend, waits for it to die (only then is the
/// helper handed to the harness), and kills what it adopted. Tried four times: the race it
/// closes lost about one try in two.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_run_takes_along_a_helper_in_a_session_of_its_own() {
    for attempt in 0..4 {
        // The run's sandbox root, handed to it, where its confined backend may write.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let pidfile = dir.path().join("helper.pid");
        let backend = format!(
            "exec:sh {} setsid {} {}",
            shim("escaping-helper.sh"),
            shell_quote(&pidfile.to_string_lossy()),
            misbehave("hang request")
        );
        let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
            .args([
                "certify",
                "--backend",
                &backend,
                "--filter",
                "options-values/",
            ])
            .env(ge_conformance::sandbox::ROOT_VARIABLE, dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("ge-conformance starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::read_to_string(&pidfile).map_or(true, |t| t.trim().is_empty())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Into the first request, which the backend never answers.
        std::thread::sleep(Duration::from_millis(300));
        let _ = std::process::Command::new("kill")
            .args(["-INT", &run.id().to_string()])
            .status();
        let status = run.wait().expect("the run ends");
        let pid = std::fs::read_to_string(&pidfile).expect("the helper's pid");
        let stat = PathBuf::from(format!("/proc/{}/stat", pid.trim()));
        let alive = std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z "));
        if alive {
            let _ = std::process::Command::new("kill")
                .args(["-9", pid.trim()])
                .status();
        }
        assert_eq!(status.code(), Some(130), "attempt {attempt}");
        assert!(
            !alive,
            "attempt {attempt}: the helper {} outlived the run",
            pid.trim()
        );
    }
}

/// A backend has no controlling terminal, even when the harness has one: it runs in a session of
/// its own, so it cannot open `/dev/tty` to push input into the user's shell (`TIOCSTI`). The
/// harness is run on a pseudo-terminal of its own (Python's `pty.fork`, which makes it the
/// terminal's session leader), as on a user's terminal.
#[cfg(target_os = "linux")]
#[test]
fn a_backend_cannot_reach_the_harness_s_terminal() {
    let backend = format!("exec:{}", misbehave("open-tty request"));
    let script = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
"#;
    let out = std::process::Command::new("python3")
        .args(["-S", "-c", script, env!("CARGO_BIN_EXE_ge-conformance")])
        .args([
            "certify",
            "--backend",
            &backend,
            "--filter",
            "options-values/acp-",
        ])
        .output()
        .expect("python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("misbehave: open-tty on purpose"), "{text}");
    assert!(!text.contains("open-tty went through"), "{text}");
    assert!(text.contains("misbehave: open-tty failed"), "{text}");
}

/// Runs the command line tool with `args`, standard input from `stdin` (a file), within a
/// hard limit; returns the exit status and standard error.
fn cli_within(args: &[&str], stdin: Option<&str>) -> (Option<i32>, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let stdin = stdin.map(str::to_owned);
    within(Duration::from_secs(60), move || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"));
        command.args(&args);
        if let Some(path) = stdin {
            command.stdin(std::fs::File::open(path).expect("the input file"));
        }
        let o = command.output().expect("run ge-conformance");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    })
}

#[cfg(unix)]
#[test]
fn endless_inputs_are_refused_by_their_cap() {
    // A scenario file, standard input, and a waiver file that never end.
    for (args, stdin) in [
        (vec!["eval", "--scenario", "/dev/zero"], None),
        (vec!["eval"], Some("/dev/zero")),
        (
            vec!["certify", "--cases", "1", "--expectations", "/dev/zero"],
            None,
        ),
    ] {
        let (code, err) = cli_within(&args, stdin);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("the most this input may hold"),
            "{args:?}: {err}"
        );
    }
    // The reference server ends its session on a line past the protocol's cap.
    let (code, _) = cli_within(&["serve-reference"], Some("/dev/zero"));
    assert_eq!(code, Some(0));
}

#[cfg(unix)]
#[test]
fn an_interrupted_harness_stops_its_backend() {
    // Where a confined backend may write (ge_conformance::confine): under the sandbox root.
    let dir = common::OwnDir::new();
    let pidfile = dir.path().join("backend.pid");
    // The backend hangs on every request, so the run is still going when it is interrupted.
    let backend = format!("exec:{}", misbehave("hang request"));
    let mut harness = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["certify", "--timeout-ms", "60000", "--backend", &backend])
        .env("MISBEHAVE_PIDFILE", &pidfile)
        // The harness's confined backend writes beneath the harness's sandbox root: this one.
        .env(
            ge_conformance::sandbox::ROOT_VARIABLE,
            ge_conformance::sandbox::root(),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the harness");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Past the hello: the first request is hanging now.
    std::thread::sleep(Duration::from_millis(500));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the backend started")
        .trim()
        .parse()
        .expect("a pid");
    let harness_pid = rustix::process::Pid::from_raw(harness.id() as i32).expect("a pid");
    rustix::process::kill_process(harness_pid, rustix::process::Signal::TERM)
        .expect("signal the harness");
    let status = within(Duration::from_secs(20), move || harness.wait()).expect("it ends");
    assert_eq!(status.code(), Some(130));
    let stat = PathBuf::from(format!("/proc/{pid}/stat"));
    let deadline = Instant::now() + Duration::from_secs(5);
    let alive = || {
        std::fs::read_to_string(&stat)
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
    };
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(),
        "the backend {pid} outlived the interrupted harness"
    );
}

#[cfg(unix)]
#[test]
fn an_interrupted_harness_removes_its_sandbox_root() {
    // The harness makes its private sandbox root under $TMPDIR: this directory.
    let base = tempfile::tempdir().expect("a temporary directory");
    let roots = {
        let base = base.path().to_path_buf();
        move || {
            std::fs::read_dir(&base)
                .map(|d| {
                    d.flatten()
                        .filter(|e| {
                            e.file_name()
                                .to_string_lossy()
                                .starts_with("ge-conformance-")
                        })
                        .count()
                })
                .unwrap_or(0)
        }
    };
    let backend = format!("exec:{}", misbehave("hang request"));
    let mut harness = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["certify", "--timeout-ms", "60000", "--backend", &backend])
        .env("TMPDIR", base.path())
        .env_remove(ge_conformance::sandbox::ROOT_VARIABLE)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the harness");
    let deadline = Instant::now() + Duration::from_secs(30);
    while roots() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(roots(), 1, "the run made its root");
    // Past the hello: the first request is hanging now.
    std::thread::sleep(Duration::from_millis(500));
    let harness_pid = rustix::process::Pid::from_raw(harness.id() as i32).expect("a pid");
    rustix::process::kill_process(harness_pid, rustix::process::Signal::INT)
        .expect("signal the harness");
    let status = within(Duration::from_secs(20), move || harness.wait()).expect("it ends");
    assert_eq!(status.code(), Some(130));
    assert_eq!(roots(), 0, "the interrupted run removed its root");
}

/// A hello past its 64 KiB cap is refused before it is parsed (round seven, H2: a 66 MB hello
/// was parsed whole, and took the harness to 633 MB).
#[test]
fn a_hello_past_its_cap_is_refused_unparsed() {
    let command = misbehave("fat-hello unused");
    let (greeted, log) = within(Duration::from_secs(60), move || {
        let backend =
            ExecBackend::new(&command, Duration::from_millis(2000)).expect("a command line");
        (backend.greeted(), backend.stderr_log().text())
    });
    assert!(!greeted, "{log}");
    assert!(log.contains("more than the 65536 a hello may"), "{log}");
}

/// `misbehave.py late-hello` in front of the reference, greeting after `delay` seconds.
fn late_greeter(delay: f64) -> String {
    format!(
        "env MISBEHAVE_DELAY={delay} {}",
        misbehave("late-hello unused")
    )
}

#[test]
fn a_late_hello_inside_the_handshake_window_is_taken() {
    // The handshake waits at least MIN_HANDSHAKE_TIMEOUT, whatever the request timeout: an
    // engine that loads slowly still greets, and its answers are not taken for the hello's.
    let command = late_greeter(1.5);
    let report = within(Duration::from_secs(60), move || {
        certify_through(&command, "options-values/", Duration::from_millis(500))
    });
    assert!(!report.trials.is_empty());
    assert!(
        report.trials.iter().all(|t| t.outcome == Outcome::Pass),
        "{:?}",
        report
            .trials
            .iter()
            .filter(|t| t.outcome != Outcome::Pass)
            .map(|t| (&t.name, &t.message))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_hello_later_than_the_handshake_window_fails_that_handshake_in_bounded_time() {
    // One handshake: creating the backend starts it and greets it once. That three failed
    // handshakes in a row end it is a_backend_that_never_greets_is_given_up_after_three_tries's.
    let window = ge_conformance::protocol::MIN_HANDSHAKE_TIMEOUT;
    let command = late_greeter(window.as_secs_f64() + 5.0);
    let start = Instant::now();
    let (greeted, log) = within(window * 3, move || {
        let backend =
            ExecBackend::new(&command, Duration::from_millis(500)).expect("a command line");
        (backend.greeted(), backend.stderr_log().text())
    });
    let elapsed = start.elapsed();
    assert!(!greeted, "a hello after the window is not taken");
    assert!(log.contains("no hello"), "{log}");
    assert!(
        elapsed >= window && elapsed < window + Duration::from_secs(4),
        "one handshake waits the window of {window:?}, whatever the request timeout: {elapsed:?}"
    );
}

/// The hello's limit is the run's to set (`--hello-timeout-ms`): a backend that greets later
/// than it fails that handshake within the limit, not the default window.
#[test]
fn the_hello_s_limit_follows_the_run_s_setting() {
    let command = late_greeter(3.0);
    let give_up = ge_conformance::backends::GiveUp {
        hello: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    let start = Instant::now();
    let (greeted, log) = within(Duration::from_secs(20), move || {
        let backend = ExecBackend::bounded(
            &command,
            Duration::from_millis(500),
            ge_spec::Profile::Documented,
            ge_conformance::confine::Confine::On,
            give_up,
        )
        .expect("a command line");
        (backend.greet().is_ok(), backend.stderr_log().text())
    });
    let elapsed = start.elapsed();
    assert!(!greeted, "a hello after the limit is not taken: {log}");
    assert!(log.contains("no hello"), "{log}");
    assert!(
        elapsed < Duration::from_secs(3),
        "three handshakes of 500 ms, not of the default window: {elapsed:?}"
    );
}

#[test]
fn a_slow_run_off_a_terminal_says_how_far_it_is() {
    // Seven requests the deaf backend never answers, a second each: past the five seconds
    // after which a CI log gets a progress line.
    let deaf = format!("exec:sh {}", shim("deaf.sh"));
    let (code, stderr) = cli_within(
        &[
            "certify",
            "--timeout-ms",
            "1000",
            "--give-up-after",
            "0",
            "--filter",
            "options-values/acp",
            "--backend",
            &deaf,
        ],
        None,
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("[ge-conformance] ") && l.contains("/7 trials after")),
        "{stderr}"
    );
}

#[test]
fn a_backend_that_never_answers_is_declared_dead_after_a_few_timeouts() {
    // Every options trial of the suite (some 190) against a backend that greets and then
    // never answers: a timeout each would take minutes; a dead backend costs five.
    let deaf = format!("exec:sh {}", shim("deaf.sh"));
    let start = Instant::now();
    let (code, stdout, stderr) = {
        let deaf = deaf.clone();
        within(Duration::from_secs(120), move || {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
                .args(["certify", "--timeout-ms", "300", "--format", "json"])
                .args(["--backend", &deaf])
                .output()
                .expect("run ge-conformance");
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        })
    };
    let elapsed = start.elapsed();
    assert_eq!(code, Some(1), "{stderr}");
    let report: Report = serde_json::from_str(&stdout).expect("a JSON report");
    let given = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER as usize;
    let said = |t: &ge_conformance::report::TrialResult, what: &str| {
        t.message.as_deref().unwrap_or("").contains(what)
    };
    let timed_out = report
        .trials
        .iter()
        .filter(|t| said(t, "no answer within") && !said(t, "declared dead after"))
        .count();
    let dead = report
        .trials
        .iter()
        .filter(|t| said(t, "declared dead after"))
        .count();
    assert!(report.trials.len() > 100, "{}", report.trials.len());
    assert!(
        report
            .trials
            .iter()
            .all(|t| t.outcome == Outcome::Fail || t.outcome == Outcome::NotSupported),
        "{stdout}"
    );
    assert!(timed_out < given, "{timed_out} trials timed out: {stdout}");
    assert!(
        dead > 100,
        "{dead} trials say the backend is dead: {stdout}"
    );
    assert!(
        elapsed < Duration::from_secs(60),
        "{given} timeouts of 0.3 s and a run that fails at once: {elapsed:?}"
    );
}
