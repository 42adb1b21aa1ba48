//! The C ABI (`include/ge_conformance.h`) end to end: the C++ example engine certifies at level
//! documented in-process (`dylib:`) and isolated (`serve-dylib`), its planted-bug variant fails
//! both; a C engine that segfaults fails that trial under serve-dylib while the run goes on, and
//! ends an in-process run with a note naming the isolated route; and every way a library can be
//! wrong (malformed JSON, a missing symbol, another ABI version, a null buffer, a bad hello) is
//! a typed error or a failed trial, never a panic.
//!
//! A build of the C++ engine for the `cabi` fuzz target (clang's `-fsanitize=fuzzer-no-link`)
//! certifies through the command line too.
//!
//! The engines are compiled here (`make` for the C++ engine, `cc` for the C one, clang++ for the
//! fuzzing build); without a compiler each test prints why and returns.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use ge_conformance::dylib::{DylibBackend, DylibError};
use ge_spec::{Profile, Scenario};

use common::docs;

const BIN: &str = env!("CARGO_BIN_EXE_ge-conformance");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness sits in the workspace")
        .to_owned()
}

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cabi")
}

/// True when `tool --version` runs.
fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The C++ engine and its planted variant, built once per test binary; `None` (with the reason
/// printed) when there is no C++ compiler or make.
fn cpp_engine() -> Option<&'static (PathBuf, PathBuf)> {
    static BUILT: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
            make_cpp_engine(&cxx, "cpp-engine", "")
        })
        .as_ref()
}

/// The same two libraries built as the `cabi` fuzz target needs them: clang++ with
/// `-fsanitize=fuzzer-no-link` (coverage callbacks left for the program to provide); `None`
/// (with the reason printed) without clang++.
fn cpp_engine_for_fuzzing() -> Option<&'static (PathBuf, PathBuf)> {
    static BUILT: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            make_cpp_engine(
                "clang++",
                "cpp-engine-fuzz",
                "EXTRA_CXXFLAGS=-fsanitize=fuzzer-no-link",
            )
        })
        .as_ref()
}

/// examples/cpp-engine built by `make` with `cxx` into the scratch directory `dir` (`extra`: one
/// more make variable, or empty); `None` without the compiler or make.
fn make_cpp_engine(cxx: &str, dir: &str, extra: &str) -> Option<(PathBuf, PathBuf)> {
    if !have(cxx) || !have("make") {
        eprintln!("skipped: no C++ compiler (`{cxx}`) or no make to build examples/cpp-engine");
        return None;
    }
    let out = scratch().join(dir);
    let status = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(repo().join("examples/cpp-engine"))
        .arg(format!("OUT={}", out.display()))
        .arg(format!("CXX={cxx}"))
        .args((!extra.is_empty()).then_some(extra))
        .status()
        .expect("make starts");
    assert!(
        status.success(),
        "examples/cpp-engine does not build with {cxx} {extra}"
    );
    Some((
        out.join("libcpp_engine.so"),
        out.join("libcpp_engine_planted.so"),
    ))
}

/// `harness/tests/cabi/engine.c` built with `-D<variant>`, once per test binary (tests run in
/// parallel and two of them load the crashing build); `None` (with the reason printed) when
/// there is no C compiler.
fn c_engine(variant: &str) -> Option<PathBuf> {
    static BUILT: Mutex<BTreeMap<String, Option<PathBuf>>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built
        .entry(variant.to_owned())
        .or_insert_with(|| build_c_engine(variant))
        .clone()
}

fn build_c_engine(variant: &str) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    if !have(&cc) {
        eprintln!("skipped: no C compiler (`{cc}`) to build the C test engine");
        return None;
    }
    let dir = scratch().join("c-engines");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let out = dir.join(format!("lib{}.so", variant.to_lowercase()));
    let status = Command::new(&cc)
        .args([
            "-std=c99",
            "-shared",
            "-fPIC",
            "-fvisibility=hidden",
            "-O1",
            "-pthread",
        ])
        .arg(format!("-D{variant}"))
        .arg("-I")
        .arg(repo().join("include"))
        .arg(repo().join("harness/tests/cabi/engine.c"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("the C compiler starts");
    assert!(
        status.success(),
        "the C test engine {variant} does not build"
    );
    Some(out)
}

fn certify(backend: &str, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["certify", "--format", "json", "--backend", backend])
        .args(extra)
        .output()
        .expect("ge-conformance starts")
}

fn report(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn isolated(library: &Path) -> String {
    format!("exec:{BIN} serve-dylib {}", library.display())
}

/// True when a run ended with `signal`: by the signal itself, or with status 128 plus its number
/// as the supervisor of an in-process run reports it (cli/supervise.rs).
#[cfg(unix)]
fn ended_by(status: &std::process::ExitStatus, signal: i32) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(signal) || status.code() == Some(128 + signal)
}

fn in_process(library: &Path) -> String {
    format!("dylib:{}", library.display())
}

#[test]
fn cpp_engine_certifies_in_process_and_isolated() {
    let Some((engine, _)) = cpp_engine() else {
        return;
    };
    for backend in [in_process(engine), isolated(engine)] {
        let out = certify(&backend, &[]);
        let r = report(&out);
        assert_eq!(r["verdict"], "certified", "{backend}: {}", r["totals"]);
        assert_eq!(r["meta"]["level"], "documented");
        assert_eq!(r["meta"]["backend"], "cpp-engine");
        assert!(out.status.success(), "{backend}: exit {:?}", out.status);
    }
}

#[test]
fn planted_integer_width_bug_fails_both_routes() {
    let Some((_, planted)) = cpp_engine() else {
        return;
    };
    for backend in [in_process(planted), isolated(planted)] {
        let out = certify(&backend, &[]);
        let r = report(&out);
        assert_eq!(r["verdict"], "not-certified", "{backend}: {}", r["totals"]);
        assert_eq!(out.status.code(), Some(1));
        let failed: Vec<&str> = r["trials"]
            .as_array()
            .expect("trials")
            .iter()
            .filter(|t| t["outcome"] == "fail")
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(failed, ["property/options"], "{backend}");
        let text = r.to_string();
        assert!(text.contains("4294967296"), "{backend}: the bug's index");
    }
}

/// One build for both routes: the C++ engine built for the `cabi` fuzz target certifies through
/// the command line in-process and isolated (the binary exports no-op coverage callbacks), and
/// its planted bug still fails. A program without those callbacks, such as this test binary,
/// cannot load it, and says why. What is proved here is the route: the runs judge every case
/// and the boundary catalogue (which finds the planted bug at any budget) but few generated
/// scenarios; the default budget is `cpp_engine_certifies_in_process_and_isolated`'s, on the
/// same source built without the fuzzing flags.
#[test]
fn a_library_built_for_fuzzing_certifies_through_the_command_line() {
    let Some((engine, planted)) = cpp_engine_for_fuzzing() else {
        return;
    };
    match open(engine) {
        Err(e @ DylibError::Load(ge_dylib::LoadError::FuzzingBuild { .. })) => {
            assert!(e.to_string().contains("ge-conformance binary"), "{e}")
        }
        other => panic!("expected a fuzzing build this program cannot load, got {other:?}"),
    }
    let budget = ["--cases", "16"];
    for backend in [in_process(engine), isolated(engine)] {
        let out = certify(&backend, &budget);
        let r = report(&out);
        assert_eq!(r["verdict"], "certified", "{backend}: {}", r["totals"]);
        assert!(out.status.success(), "{backend}: exit {:?}", out.status);
    }
    let out = certify(&in_process(planted), &budget);
    assert_eq!(report(&out)["verdict"], "not-certified");
    assert_eq!(out.status.code(), Some(1));
}

/// The trials of a report by name: (outcome, message).
fn trials(r: &serde_json::Value) -> Vec<(String, String, String)> {
    r["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                t["outcome"].as_str().unwrap_or_default().to_owned(),
                t.to_string(),
            )
        })
        .collect()
}

#[test]
fn a_crash_under_serve_dylib_fails_that_trial_and_the_run_goes_on() {
    let Some(crash) = c_engine("GE_TEST_CRASH") else {
        return;
    };
    let out = certify(&isolated(&crash), &["--filter", "options-values/acp-"]);
    let r = report(&out);
    assert_eq!(out.status.code(), Some(1), "a report, with failures");
    // Every trial whose scenario holds the trigger crashed the server, and failed saying so;
    // every other one was answered by the engine, after a crash too (a new server).
    let trials = trials(&r);
    let trigger = r#""ge.exec.atomicCleanPolicy":"1""#;
    let mut crashes = 0;
    let mut answered_after_a_crash = 0;
    for (name, outcome, text) in &trials {
        assert_eq!(outcome, "fail", "{name}");
        if text.contains(trigger) {
            crashes += 1;
            assert!(
                text.contains("closed its standard output") && text.contains("signal 11"),
                "{name}: the crash is named: {text}"
            );
        } else {
            assert!(
                text.contains("this engine answers nothing"),
                "{name} was answered by the engine: {text}"
            );
            if crashes > 0 {
                answered_after_a_crash += 1;
            }
        }
    }
    assert!(crashes > 0, "the trigger was met");
    assert!(answered_after_a_crash > 0, "the run went on: {trials:?}");
    let stderr = r.to_string();
    assert!(
        stderr.contains("crashed (signal 11) in ge_conformance_answer; the scenario: "),
        "the server's note"
    );
}

#[test]
#[cfg(unix)]
fn a_crash_in_process_ends_the_run_naming_the_isolated_route() {
    let Some(crash) = c_engine("GE_TEST_CRASH") else {
        return;
    };
    // Run where the library is `target/libengine.so`, the path docs/c-abi.md shows.
    let place = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(place.path().join("target")).expect("created");
    std::fs::copy(&crash, place.path().join("target/libengine.so")).expect("copied");
    let out = Command::new(BIN)
        .current_dir(place.path())
        .args([
            "certify",
            "--format",
            "json",
            "--backend",
            "dylib:target/libengine.so",
        ])
        .args(["--filter", "options-values/acp-"])
        .output()
        .expect("ge-conformance starts");
    assert!(
        ended_by(&out.status, 11),
        "ended by SIGSEGV: {:?}",
        out.status
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("crashed (signal 11) in ge_conformance_answer"))
        .unwrap_or_else(|| panic!("no note in: {stderr}"));
    let note = lines[at..(at + 2).min(lines.len())].join("\n");
    if let Err(e) = docs::check("docs/c-abi.md", "in-process-crash-note", &note) {
        panic!("{e}");
    }
    assert!(
        note.contains("serve-dylib target/libengine.so"),
        "the note names the isolated route: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no report");
}

/// Runs the command line with `args`, killed (and the test failed) after `limit`.
fn run_bounded(args: &[&str], limit: std::time::Duration) -> (Output, std::time::Duration) {
    run_bounded_with(args, &[], limit, |_| {})
}

/// [`run_bounded`] with `envs` set, calling `meanwhile` with the process once it started; both
/// outputs are drained as the process writes them, so a long report cannot fill a pipe.
fn run_bounded_with(
    args: &[&str],
    envs: &[(&str, &Path)],
    limit: std::time::Duration,
    meanwhile: impl FnOnce(&std::process::Child),
) -> (Output, std::time::Duration) {
    use std::io::Read;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ge-conformance starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    meanwhile(&child);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waited") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&stderr.join().expect("drained"))
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let out = Output {
        status,
        stdout: stdout.join().expect("drained"),
        stderr: stderr.join().expect("drained"),
    };
    (out, elapsed)
}

#[test]
fn an_exit_in_process_ends_with_status_3_and_a_note_naming_the_library() {
    let Some(exit) = c_engine("GE_TEST_EXIT") else {
        return;
    };
    let backend = in_process(&exit);
    let (out, _) = run_bounded(
        &["certify", "--format", "json", "--backend", &backend],
        std::time::Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let named = format!("the engine `{}` called exit() in ge_conformance_answer; the scenario: {{\"capability\":\"options\"", exit.display());
    assert!(stderr.contains(&named), "{stderr}");
    assert!(
        stderr.contains("serve-dylib"),
        "the isolated route: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no report");
}

/// No way an in-process engine ends the process ends the run green: `_exit(0)` inside a call, an
/// `atexit` handler of its own turning an `exit(1)` into status 0, an `exit(0)` from a thread
/// outside any call, a fork whose parent exits. The run is supervised (cli/supervise.rs): each
/// ends with status 3 and the note naming the isolated route, never with the engine's status 0.
#[test]
#[cfg(unix)]
fn no_exit_of_an_in_process_engine_ends_the_run_green() {
    for variant in [
        "GE_TEST_QUIET_EXIT",
        "GE_TEST_ATEXIT",
        "GE_TEST_THREAD_EXIT",
        "GE_TEST_FORK_EXIT",
    ] {
        let Some(engine) = c_engine(variant) else {
            return;
        };
        let backend = in_process(&engine);
        let mut args = vec!["certify", "--format", "json", "--backend", &backend];
        // The thread's exit comes 5 ms after the first call: the whole run lasts longer.
        if variant != "GE_TEST_THREAD_EXIT" {
            args.extend(["--filter", "options-values/acp-"]);
        }
        let (out, _) = run_bounded(&args, std::time::Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{variant}: {stderr}");
        let note = format!(
            "the engine `{}` loaded in-process ended the process (status 0) before the run finished",
            engine.display()
        );
        // The thread's exit may land while the harness is inside an engine call, or copying
        // its answer: then the harness's own `atexit` note (`called exit()`) ends the run with
        // the same status 3 before the supervisor's.
        let own_note = variant == "GE_TEST_THREAD_EXIT" && stderr.contains("called exit()");
        assert!(stderr.contains(&note) || own_note, "{variant}: {stderr}");
        assert!(stderr.contains("serve-dylib"), "{variant}: {stderr}");
    }
}

/// An engine's thread that holds C stdout's lock for ever cannot hang the run outside a call:
/// the harness flushes C's standard output after each call only when it can take the lock.
#[test]
#[cfg(target_os = "linux")]
fn an_engine_thread_holding_stdout_does_not_hang_the_run() {
    let Some(engine) = c_engine("GE_TEST_HOLD_STDOUT") else {
        return;
    };
    let backend = in_process(&engine);
    let args = [
        "certify",
        "--backend",
        &backend,
        "--filter",
        "options-values/acp-",
    ];
    let (out, _) = run_bounded(&args, std::time::Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a report, with failures: {stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NOT CERTIFIED"),
        "{stderr}"
    );
}

/// An engine loaded in-process that changes the working directory moves neither the bundle
/// nor the snapshots: a relative `--out` is fixed before the engine is loaded.
#[test]
#[cfg(unix)]
fn a_chdir_in_process_does_not_move_the_bundle() {
    let Some(engine) = c_engine("GE_TEST_CHDIR") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a scratch directory");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("made");
    let out = Command::new(BIN)
        .args([
            "certify",
            "--backend",
            &in_process(&engine),
            "--out",
            "bundle",
        ])
        .args(["--filter", "options-values/acp-"])
        .current_dir(&work)
        .output()
        .expect("ge-conformance runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(work.join("bundle/report.json").is_file(), "{stderr}");
    assert!(
        !dir.path().join("bundle").exists(),
        "moved by the engine's chdir"
    );
}

/// The process id `GE_TEST_IGNORE_TERM` wrote into `file`, once it has.
fn pid_written(file: &Path, within: std::time::Duration) -> Option<i32> {
    let started = std::time::Instant::now();
    while started.elapsed() < within {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return Some(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// True while a process `pid` exists (a zombie counts as gone).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
}

/// SIGTERM to a run whose in-process engine ignores it: the supervisor passes it on, and kills
/// the child once the grace has passed; the run ends with status 130 and leaves no process.
#[test]
#[cfg(target_os = "linux")]
fn an_engine_that_ignores_sigterm_is_stopped_with_its_run() {
    let Some(engine) = c_engine("GE_TEST_IGNORE_TERM") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a scratch directory");
    let pidfile = dir.path().join("pid");
    let backend = in_process(&engine);
    let mut child_pid = None;
    let (out, elapsed) = run_bounded_with(
        &["certify", "--backend", &backend],
        &[("GE_TEST_PIDFILE", &pidfile)],
        std::time::Duration::from_secs(60),
        |run| {
            child_pid = pid_written(&pidfile, std::time::Duration::from_secs(20));
            let _ = Command::new("kill")
                .args(["-TERM", &run.id().to_string()])
                .status();
        },
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let child_pid = child_pid.expect("the engine was called");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(elapsed < std::time::Duration::from_secs(30), "{elapsed:?}");
    assert!(
        !running(child_pid),
        "the run's child {child_pid} outlived it"
    );
}

/// A run in-process past its whole-run bound and as much again is ended by the supervisor:
/// status 4 and a note naming the bound and the isolated route.
#[test]
#[cfg(target_os = "linux")]
fn an_in_process_run_past_its_bound_ends_with_status_4() {
    let Some(engine) = c_engine("GE_TEST_IGNORE_TERM") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a scratch directory");
    let backend = in_process(&engine);
    let (out, elapsed) = run_bounded_with(
        &[
            "certify",
            "--backend",
            &backend,
            "--give-up-after-secs",
            "1",
        ],
        &[("GE_TEST_PIDFILE", &dir.path().join("pid"))],
        std::time::Duration::from_secs(60),
        |_| {},
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("past its bound (--give-up-after-secs)"),
        "{stderr}"
    );
    assert!(stderr.contains("serve-dylib"), "{stderr}");
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
}

#[test]
fn an_exit_under_serve_dylib_fails_that_trial_and_the_run_goes_on() {
    let Some(exit) = c_engine("GE_TEST_EXIT") else {
        return;
    };
    let out = certify(&isolated(&exit), &["--filter", "options-values/acp-"]);
    let r = report(&out);
    assert_eq!(out.status.code(), Some(1), "a report, with failures");
    let trigger = r#""ge.exec.atomicCleanPolicy":"1""#;
    let (exited, answered): (Vec<_>, Vec<_>) = trials(&r)
        .into_iter()
        .partition(|(_, _, t)| t.contains(trigger));
    assert!(
        !exited.is_empty() && !answered.is_empty(),
        "{exited:?} {answered:?}"
    );
    for (name, outcome, text) in &exited {
        assert_eq!(outcome, "fail", "{name}");
        assert!(
            text.contains("it exited: status 3"),
            "{name}: the exit is named: {text}"
        );
    }
    for (name, _, text) in &answered {
        assert!(
            text.contains("this engine answers nothing"),
            "{name}: {text}"
        );
    }
    assert!(
        r.to_string()
            .contains("called exit() in ge_conformance_answer; the scenario: "),
        "the server's note"
    );
}

#[test]
fn a_hang_in_process_ends_with_status_4_after_the_timeout() {
    let Some(hang) = c_engine("GE_TEST_HANG") else {
        return;
    };
    let backend = in_process(&hang);
    let (out, elapsed) = run_bounded(
        &[
            "certify",
            "--format",
            "json",
            "--timeout-ms",
            "500",
            "--backend",
            &backend,
        ],
        std::time::Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(elapsed < std::time::Duration::from_secs(15), "{elapsed:?}");
    let named = format!(
        "the engine `{}` did not return within 500 ms in ge_conformance_answer; the scenario: {{\"capability\":",
        hang.display()
    );
    assert!(stderr.contains(&named), "{stderr}");
    assert!(out.stdout.is_empty(), "no report");
}

#[test]
fn what_an_engine_prints_in_process_stays_out_of_the_report() {
    let Some(stdout) = c_engine("GE_TEST_STDOUT") else {
        return;
    };
    let out = certify(&in_process(&stdout), &["--filter", "options-values/acp-"]);
    let r = report(&out);
    assert_eq!(r["meta"]["backend"], "c-test-engine");
    assert_eq!(
        out.status.code(),
        Some(1),
        "declared and not supported: failed"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("junk from the engine"),
        "on standard error: {stderr}"
    );
}

#[test]
#[cfg(unix)]
fn a_length_longer_than_the_buffer_is_noted_as_the_engines() {
    let Some(long) = c_engine("GE_TEST_LONG_LEN") else {
        return;
    };
    let out = certify(
        &in_process(&long),
        &["--filter", "options-values/acp-accepts-0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ended_by(&out.status, 11), "{stderr}");
    assert!(
        stderr.contains(
            "the engine's buffer from ge_conformance_answer is shorter than the length it reported"
        ),
        "{stderr}"
    );
    assert!(stderr.contains(&long.display().to_string()), "{stderr}");
}

/// A heap the engine corrupted, found by the allocator when the harness allocates the copy of
/// its answer: the note says so, and does not blame the buffer's length.
#[test]
#[cfg(all(unix, target_env = "gnu"))]
fn a_heap_the_engine_corrupted_is_noted_as_such() {
    let Some(corrupt) = c_engine("GE_TEST_HEAP_CORRUPT") else {
        return;
    };
    let out = certify(
        &in_process(&corrupt),
        &["--filter", "options-values/acp-accepts-0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ended_by(&out.status, 6), "{stderr}");
    assert!(
        stderr.contains("while the harness allocated 100000 bytes for the answer of ge_conformance_answer: the allocator found the process's heap corrupted"),
        "{stderr}"
    );
    assert!(!stderr.contains("shorter than the length"), "{stderr}");
}

#[test]
#[cfg(unix)]
fn a_crash_in_the_free_function_is_named_so() {
    let Some(double) = c_engine("GE_TEST_DOUBLE_FREE") else {
        return;
    };
    let out = certify(
        &in_process(&double),
        &["--filter", "options-values/acp-accepts-0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ended_by(&out.status, 6), "glibc aborts: {stderr}");
    assert!(
        stderr.contains("crashed (signal 6) in ge_conformance_free"),
        "{stderr}"
    );
}

#[test]
fn a_greedy_engine_under_serve_dylib_fails_its_trial_within_the_memory_limit() {
    // The second raises its soft limit to the hard one first: the hard limit is set too.
    for variant in ["GE_TEST_GREEDY", "GE_TEST_GREEDY_RAISE"] {
        greedy_fails_within_the_limit(variant);
    }
}

fn greedy_fails_within_the_limit(variant: &str) {
    let Some(greedy) = c_engine(variant) else {
        return;
    };
    let backend = format!(
        "exec:{BIN} serve-dylib --memory-limit-mib 512 {}",
        greedy.display()
    );
    let out = certify(&backend, &["--filter", "options-values/acp-"]);
    let r = report(&out);
    assert_eq!(out.status.code(), Some(1), "a report, with failures");
    let trigger = r#""ge.exec.atomicCleanPolicy":"1""#;
    let (greedy, answered): (Vec<_>, Vec<_>) = trials(&r)
        .into_iter()
        .partition(|(_, _, t)| t.contains(trigger));
    assert!(
        !greedy.is_empty() && !answered.is_empty(),
        "{greedy:?} {answered:?}"
    );
    for (name, outcome, text) in &greedy {
        assert_eq!(outcome, "fail", "{name}");
        assert!(text.contains("out of memory after"), "{name}: {text}");
    }
    for (name, _, text) in &answered {
        assert!(
            text.contains("this engine answers nothing"),
            "{name}: {text}"
        );
    }
}

/// Run as a child by `a_crash_outside_any_call_names_the_loaded_engine`: opens the engine named
/// by `GE_TEST_CHILD_ENGINE`, then aborts while no call is in progress.
#[test]
#[ignore = "run as a child process by a_crash_outside_any_call_names_the_loaded_engine"]
fn child_aborts_outside_any_call() {
    let Some(path) = std::env::var_os("GE_TEST_CHILD_ENGINE") else {
        return;
    };
    let _backend = open(Path::new(&path)).expect("the engine opens");
    std::process::abort();
}

#[test]
#[cfg(unix)]
fn a_crash_outside_any_call_names_the_loaded_engine() {
    let Some(engine) = c_engine("GE_TEST_STDOUT") else {
        return;
    };
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "cabi::child_aborts_outside_any_call"])
        .args(["--ignored", "--nocapture", "--test-threads=1"])
        .env("GE_TEST_CHILD_ENGINE", &engine)
        .output()
        .expect("the test binary starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ended_by(&out.status, 6), "{stderr}");
    let note = format!(
        "ge-conformance: crashed outside an engine call; an engine is loaded in-process: {}",
        engine.display()
    );
    assert!(stderr.contains(&note), "{stderr}");
    assert!(
        !stderr.contains("test engine crashed"),
        "no call's note: {stderr}"
    );
}

fn open(library: &Path) -> Result<DylibBackend, DylibError> {
    DylibBackend::open(library, "test engine crashed")
}

fn options_scenario() -> Scenario {
    serde_json::from_str(r#"{"capability":"options"}"#).expect("a scenario")
}

#[test]
fn a_library_that_breaks_the_abi_is_a_typed_error() {
    let Some(no_free) = c_engine("GE_TEST_NO_FREE") else {
        return;
    };
    match open(&no_free) {
        Err(DylibError::Load(ge_dylib::LoadError::MissingSymbol { symbol, .. })) => {
            assert_eq!(symbol, "ge_conformance_free")
        }
        other => panic!("expected a missing symbol, got {other:?}"),
    }
    let abi = c_engine("GE_TEST_ABI_2").expect("built like the one above");
    match open(&abi) {
        Err(DylibError::Load(ge_dylib::LoadError::AbiVersion {
            found, expected, ..
        })) => assert_eq!((found, expected), (2, ge_dylib::ABI_VERSION)),
        other => panic!("expected another ABI version, got {other:?}"),
    }
    let hello = c_engine("GE_TEST_BAD_HELLO").expect("built like the one above");
    match open(&hello) {
        Err(e @ DylibError::BadHello { .. }) => assert!(e.to_string().contains("name")),
        other => panic!("expected a bad hello, got {other:?}"),
    }
    match open(Path::new("/nonexistent/libengine.so")) {
        Err(DylibError::Load(ge_dylib::LoadError::Open { .. })) => {}
        other => panic!("expected a load error, got {other:?}"),
    }
    // And the command line reports it as a set-up error (exit 2, no report), not a panic.
    let out = certify(&in_process(&abi), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("version 2 of the C ABI"));
    let out = certify(&isolated(&abi), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("version 2 of the C ABI"));
}

#[test]
fn a_bad_answer_is_a_typed_error_and_a_failed_trial() {
    let Some(bad_json) = c_engine("GE_TEST_BAD_JSON") else {
        return;
    };
    let null = c_engine("GE_TEST_NULL_BUFFER").expect("built like the one above");
    let sandbox = Path::new(".");
    let backend = open(&bad_json).expect("the hello is fine");
    match backend.ask(&options_scenario(), sandbox) {
        Err(DylibError::BadAnswer { text, .. }) => assert!(text.contains("observation")),
        other => panic!("expected a malformed answer, got {other:?}"),
    }
    let message = ge_conformance::runner::ask(&backend, &options_scenario(), sandbox)
        .expect_err("the trial fails");
    assert!(message.contains("not an answer"), "{message}");
    let backend = open(&null).expect("the hello is fine");
    match backend.ask(&options_scenario(), sandbox) {
        Err(DylibError::Call(ge_dylib::CallError::NullBuffer { function })) => {
            assert_eq!(function, "ge_conformance_answer")
        }
        other => panic!("expected a null buffer, got {other:?}"),
    }
    // Through serve-dylib the same answers are protocol errors naming the reason.
    for (library, why) in [(&bad_json, "not an answer"), (&null, "null buffer")] {
        let out = certify(
            &isolated(library),
            &["--filter", "options-values/acp-accepts-0"],
        );
        let r = report(&out);
        assert_eq!(r["totals"]["failed"], 1, "{}", library.display());
        assert!(
            r["trials"].to_string().contains(why),
            "{why}: {}",
            r["trials"]
        );
    }
}

#[test]
fn the_profile_must_be_in_the_hello() {
    let Some((engine, _)) = cpp_engine() else {
        return;
    };
    let backend = open(engine).expect("the C++ engine opens");
    assert!(backend.require_profile(Profile::Documented).is_ok());
    match backend.require_profile(Profile::Upstream) {
        Err(DylibError::Profile { wanted, .. }) => assert_eq!(wanted, Profile::Upstream),
        other => panic!("expected a profile refusal, got {other:?}"),
    }
}
