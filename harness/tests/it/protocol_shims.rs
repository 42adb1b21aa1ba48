//! The protocol client survives misbehaving backends: each shim of `tests/shims/` fails only
//! the cases it misbehaves on, with a message saying what happened; the backend is restarted
//! and the run goes on to its report, with the backend's standard error kept. A backend that
//! never greets, however often it is started, is a set-up error with its reason.

use crate::common;
use common::{misbehave, shim};

use std::time::Duration;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::report::{Outcome, Report, Standing};
use ge_spec::{Profile, Spec};

/// What each request is given: a hang costs this much, an answer of the reference through a
/// shim takes milliseconds.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1000);

/// Certifies the options cases of the tables (not the property) through `exec:command`.
fn certify_cases(command: &str, timeout: Duration) -> (Report, String) {
    certify_cases_giving_up(command, timeout, backends::GiveUp::default())
}

/// [`certify_cases`], the backend declared dead as `give_up` says.
fn certify_cases_giving_up(
    command: &str,
    timeout: Duration,
    give_up: backends::GiveUp,
) -> (Report, String) {
    let arg = format!("exec:{command}");
    let handle = backends::open_giving_up(
        &arg,
        timeout,
        Profile::Documented,
        ge_conformance::confine::Confine::On,
        give_up,
    )
    .expect("the backend greets");
    let cfg = Config {
        cases: 8,
        filter: Some("options-".to_owned()),
        backend_arg: arg,
        ..Config::default()
    };
    let report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    (report, handle.stderr())
}

/// Opens `exec:command`, which must fail to ever greet: a set-up error, with its reason.
fn never_greets(command: &str) -> String {
    backends::open(
        &format!("exec:{command}"),
        Duration::from_secs(5),
        Profile::Documented,
    )
    .expect_err("a backend that never greets is a set-up error")
}

/// The table cases run by `certify_cases` (the options tables, under the documented profile)
/// whose scenario mentions `trigger`.
fn affected(trigger: &str) -> Vec<String> {
    Spec::embedded()
        .cases_in(Profile::Documented)
        .filter(|c| c.full_name().contains("options-"))
        .filter(|c| {
            serde_json::to_string(&c.case.scenario)
                .expect("scenarios serialise")
                .contains(trigger)
        })
        .map(|c| c.full_name())
        .collect()
}

/// Runs the misbehaving proxy in `mode` on requests mentioning `trigger` and checks that exactly
/// those cases fail, each with a message containing `says`.
fn check_misbehaviour(mode: &str, trigger: &str, says: &str, restarts: bool) {
    let hit = affected(trigger);
    assert!(
        !hit.is_empty() && hit.len() < 20,
        "{trigger}: pick a trigger that some, but few, cases mention ({} do)",
        hit.len()
    );
    let command = misbehave(&format!("{mode} {trigger}"));
    let (report, stderr) = certify_cases(&command, REQUEST_TIMEOUT);
    assert!(!report.trials.is_empty());
    for t in &report.trials {
        let message = t.message.clone().unwrap_or_default();
        if hit.contains(&t.name) {
            assert_eq!(t.outcome, Outcome::Fail, "{mode}: {} should fail", t.name);
            assert!(
                message.contains(says),
                "{mode}: {} says {message:?}, expected it to mention {says:?}",
                t.name
            );
        } else {
            assert_eq!(
                t.outcome,
                Outcome::Pass,
                "{mode}: {} should pass: {message}",
                t.name
            );
        }
    }
    assert_eq!(
        report.verdict,
        Standing::NotCertified,
        "{mode}: a failing run is not certified"
    );
    assert!(
        stderr.contains(&format!("misbehave: {mode} on purpose")),
        "{mode}: the backend's stderr is kept: {stderr:?}"
    );
    assert_eq!(
        stderr.contains("a further request starts it again"),
        restarts,
        "{mode}: restart notes in {stderr:?}"
    );
}

#[test]
fn a_crash_fails_only_its_cases() {
    check_misbehaviour(
        "crash",
        "ge.exec.atomicCleanPolicy",
        "closed its standard output (it exited: status 3)",
        true,
    );
}

#[test]
fn a_hang_times_out() {
    let says = format!("no answer within {} ms", REQUEST_TIMEOUT.as_millis());
    check_misbehaviour("hang", "dynamic", &says, true);
}

#[test]
fn garbage_is_reported() {
    check_misbehaviour(
        "garbage",
        "ge.featureBaseRefreshable",
        "not a protocol message",
        true,
    );
}

#[test]
fn a_line_past_the_cap_is_reported() {
    // The client's cap, read rather than restated: 16 MiB.
    let says = format!(
        "a line longer than {} bytes",
        ge_conformance::protocol::client::MAX_LINE
    );
    check_misbehaviour("huge-line", "ge.featureBaseRefreshable", &says, true);
}

/// An answer of more entries than an answer may hold is refused unread (round seven, H1: the
/// judge held kilobytes for each).
#[test]
fn an_answer_of_too_many_entries_is_refused_unread() {
    let says = format!(
        "more than the {} an answer to this scenario may hold",
        ge_conformance::protocol::client::MAX_ANSWER_ENTRIES
    );
    check_misbehaviour("many-entries", "ge.featureBaseRefreshable", &says, false);
}

/// A line that is not UTF-8 is a protocol failure (round seven, H3: replacing each bad byte made
/// a line three times its size).
#[test]
fn a_line_that_is_not_utf8_is_reported() {
    check_misbehaviour("not-utf8", "ge.featureBaseRefreshable", "not UTF-8", true);
}

#[test]
fn a_wrong_id_is_reported() {
    check_misbehaviour(
        "wrong-id",
        "ge.featureBaseRefreshable",
        "while request",
        true,
    );
}

#[test]
fn a_closed_stdout_is_reported() {
    check_misbehaviour(
        "close-stdout",
        "ge.exec.atomicCleanPolicy",
        "closed its standard output",
        true,
    );
}

#[test]
fn an_error_answer_fails_its_case_without_restart() {
    check_misbehaviour(
        "error",
        "ge.featureBaseRefreshable",
        "the backend reported an error: misbehave: refused",
        false,
    );
}

#[test]
fn another_protocol_version_is_refused_once() {
    let err = never_greets(&format!("sh {}", shim("wrong-version.sh")));
    assert!(
        err.contains("the backend speaks protocol version 99 and this harness speaks version 2"),
        "{err}"
    );
    // One message, not one per start.
    assert_eq!(err.matches("protocol version 99").count(), 1, "{err}");
}

#[test]
fn a_backend_that_never_greets_is_given_up_after_three_tries() {
    // Where a confined backend may write (ge_conformance::confine): under the sandbox root.
    let dir = common::OwnDir::new();
    let starts = dir.path().join("starts");
    let err = never_greets(&format!(
        "sh {} {}",
        shim("garbage-hello.sh"),
        shell_quote(&starts.to_string_lossy())
    ));
    assert!(err.contains("the hello is not JSON"), "{err}");
    assert!(err.contains("3 failed handshakes in a row"), "{err}");
    let count = std::fs::read_to_string(&starts)
        .expect("the shim counted its starts")
        .lines()
        .count();
    assert_eq!(count, 3, "{err}");
}

#[test]
fn a_missing_program_is_a_set_up_error() {
    let err = never_greets("/nonexistent/ge-backend --flag");
    assert!(
        err.contains("cannot run `/nonexistent/ge-backend`"),
        "{err}"
    );
}

#[test]
fn an_unsplittable_command_line_is_refused_up_front() {
    let err = backends::open(
        "exec:python3 'unterminated",
        Duration::from_secs(5),
        Profile::Documented,
    )
    .expect_err("refused");
    assert!(err.contains("a quote is not closed"), "{err}");
}

/// True while `pid` is a live process (a zombie, waiting to be reaped, is not).
#[cfg(target_os = "linux")]
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_owned())
        })
        .is_some_and(|state| !state.starts_with('Z') && !state.starts_with('X'))
}

/// A backend started through a shell that stays its parent: when the client gives up on a
/// hung request it must stop the hung process too, not only the shell (which would leave the
/// hung process running for good, one more per timeout).
#[cfg(target_os = "linux")]
#[test]
fn a_hung_backend_behind_a_shell_is_stopped_with_it() {
    // Where a confined backend may write (ge_conformance::confine): under the sandbox root.
    let dir = common::OwnDir::new();
    let pids = dir.path().join("pids");
    let inner = format!(
        "MISBEHAVE_PIDFILE={} {}; :",
        shell_quote(&pids.to_string_lossy()),
        misbehave("hang dynamic")
    );
    let command = format!("sh -c {}", shell_quote(&inner));
    let (report, _) = certify_cases(&command, REQUEST_TIMEOUT);
    assert!(
        report.trials.iter().any(|t| t.outcome == Outcome::Fail),
        "the hang was reached"
    );
    let started = std::fs::read_to_string(&pids).expect("the shim wrote its pids");
    let started: Vec<&str> = started.lines().collect();
    assert!(started.len() >= 2, "the backend was restarted after a hang");
    // Killed processes are gone at once; give the system a moment to reap them.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut left: Vec<&str> = started.clone();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(|p| alive(p));
    }
    assert!(left.is_empty(), "still running after the run: {left:?}");
}

/// A backend that crashes on some requests and answers the others never makes a streak; the
/// bound of the whole run declares it dead all the same, after that many restarts in all.
#[test]
fn a_backend_that_breaks_its_streaks_is_declared_dead_by_the_whole_run_bound() {
    let give_up = backends::GiveUp {
        restarts: 4,
        ..Default::default()
    };
    let (report, stderr) = certify_cases_giving_up(
        &misbehave("crash atomicCleanPolicy"),
        REQUEST_TIMEOUT,
        give_up,
    );
    let said = |t: &ge_conformance::report::TrialResult, what: &str| {
        t.message.as_deref().unwrap_or("").contains(what)
    };
    // The crashes are apart: other requests were answered between them.
    assert!(report.trials.iter().any(|t| t.outcome == Outcome::Pass));
    let bound = "declared dead after 4 requests in this run that timed out or crashed the backend";
    assert!(report.trials.iter().any(|t| said(t, bound)), "{stderr}");
    let crashed = report
        .trials
        .iter()
        .filter(|t| said(t, "(it exited: status 3)") && !said(t, "declared dead"))
        .count();
    assert_eq!(crashed, 3, "restarted three times before the bound");
}

/// A backend that answers every request, each just inside its timeout, breaks no streak and
/// crashes nothing; the whole run's bound in time declares it dead all the same.
#[test]
fn a_backend_that_answers_slowly_is_declared_dead_by_the_run_s_bound_in_time() {
    let give_up = backends::GiveUp {
        seconds: 2,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let (report, stderr) = certify_cases_giving_up(
        &format!("env MISBEHAVE_DELAY=0.3 {}", misbehave("slow request")),
        REQUEST_TIMEOUT,
        give_up,
    );
    let elapsed = started.elapsed();
    let said = |t: &ge_conformance::report::TrialResult, what: &str| {
        t.message.as_deref().unwrap_or("").contains(what)
    };
    assert!(report.trials.iter().any(|t| t.outcome == Outcome::Pass));
    let bound = "declared dead after 2 s, the bound of a whole run";
    assert!(report.trials.iter().any(|t| said(t, bound)), "{stderr}");
    assert!(stderr.contains(bound), "{stderr}");
    assert!(
        elapsed < Duration::from_secs(2) + REQUEST_TIMEOUT * 3,
        "the bound, one request and the run's own time: {elapsed:?}"
    );
}

/// A confined backend whose files beneath the sandbox root grow past the bound is declared dead
/// (they are memory under /dev/shm): the bound is counted between requests.
#[test]
fn a_backend_that_fills_the_sandbox_root_is_declared_dead() {
    let give_up = backends::GiveUp {
        root_bytes: 4 << 20,
        ..Default::default()
    };
    let (report, stderr) = certify_cases_giving_up(
        &format!(
            "env MISBEHAVE_BYTES=2097152 {}",
            misbehave("fill-tmpdir request")
        ),
        REQUEST_TIMEOUT,
        give_up,
    );
    let bound = "past the bound of 4194304";
    let said = |t: &ge_conformance::report::TrialResult| {
        t.message.as_deref().unwrap_or("").contains(bound)
    };
    assert!(report.trials.iter().any(said), "{stderr}");
    assert!(
        stderr.contains("its files beneath the sandbox root take"),
        "{stderr}"
    );
}

#[test]
fn a_backend_that_crashes_on_every_request_is_declared_dead_after_a_streak() {
    // Every request crashes the backend: a restart each would cost one per trial; the streak
    // of DEFAULT_GIVE_UP_AFTER_CRASHES ends it, and every later trial fails at once.
    let command = misbehave("crash request");
    let (report, stderr) = certify_cases(&command, REQUEST_TIMEOUT);
    let streak = ge_conformance::protocol::DEFAULT_GIVE_UP_AFTER_CRASHES as usize;
    let said = |t: &ge_conformance::report::TrialResult, what: &str| {
        t.message.as_deref().unwrap_or("").contains(what)
    };
    let crashed = report
        .trials
        .iter()
        .filter(|t| said(t, "(it exited: status 3)") && !said(t, "declared dead"))
        .count();
    let dead = report
        .trials
        .iter()
        .filter(|t| said(t, "declared dead after") || said(t, "not started any more"))
        .count();
    assert!(report.trials.len() > streak * 2, "{}", report.trials.len());
    assert!(
        report.trials.iter().all(|t| t.outcome == Outcome::Fail),
        "every trial fails"
    );
    assert_eq!(crashed, streak - 1, "restarted before the streak ended");
    assert_eq!(dead, report.trials.len() - crashed, "the rest fail as dead");
    assert!(
        stderr.contains(&format!(
            "declared dead after {streak} requests in a row that crashed the backend"
        )),
        "{stderr}"
    );
}
