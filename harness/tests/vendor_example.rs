//! The vendor example's workflow, run as its crate runs it: a copy of `examples/vendor-engine`
//! with one answer changed fails its snapshot trial against a copy of the example's committed
//! snapshots, with the diff of the two answers in its own failure, and leaves the new answer as a `.snap.new`
//! for review (nothing written under `CI=true`), while the unchanged engine passes; the bundle
//! of a `cargo test` run (`GE_CONFORMANCE_OUT`) verifies, partial when filtered; and a local
//! case table that breaks the loader's rules is a failing trial, never a panic; accepted, the
//! changed answer gets a deviation snapshot, which fails once the engine agrees again; and the
//! READMEs' samples of the example's `cargo test` output are what it prints.
//!
//! The test binary is its own vendor crate: run with `VENDOR_SNAPSHOTS_CHILD` set, its `main`
//! is the example's `tests/conformance.rs` over the changed (or unchanged) engine.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::docs;

use ge_conformance::libtest::Suite;
use ge_conformance::libtest::{Arguments, Failed, Trial};
use ge_spec::vocab::{OptionsObservation, OptionsScenario, TransferObservation, TransferScenario};
use ge_spec::{Answer, Backend, Capability};

/// Set in the child: `changed` or `unchanged`, with the snapshot directory in `VENDOR_SNAPSHOTS_DIR`.
const CHILD: &str = "VENDOR_SNAPSHOTS_CHILD";
const DIR: &str = "VENDOR_SNAPSHOTS_DIR";
/// The local case tables of the child, when not the example's.
const CASES: &str = "VENDOR_SNAPSHOTS_CASES";
/// Where the child writes its bundle, set in code with `Suite::with_bundle`.
const BUNDLE: &str = "VENDOR_SNAPSHOTS_BUNDLE";
/// The scenario whose answer changes, and its trial.
const CASE: &str = "transfer-examples/ten-inputs-threshold-0";
const TRIAL: &str = "snapshot/transfer-examples/ten-inputs-threshold-0";

/// The example engine with one kind of answer altered, as a vendor's own change or fault would
/// alter it.
#[derive(Debug)]
struct Altered {
    engine: vendor_engine::Engine,
    options: fn(&vendor_engine::Engine, &OptionsScenario) -> Answer<OptionsObservation>,
    transfer: fn(&vendor_engine::Engine, &TransferScenario) -> Answer<TransferObservation>,
    capabilities: fn(&vendor_engine::Engine) -> BTreeSet<Capability>,
}

impl Backend for Altered {
    fn name(&self) -> &str {
        self.engine.name()
    }
    fn version(&self) -> &str {
        self.engine.version()
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        (self.capabilities)(&self.engine)
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        (self.options)(&self.engine, s)
    }
    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        (self.transfer)(&self.engine, s)
    }
}

/// The example engine, except that with fusion off it sends input 9 in a batch of its own
/// instead of directly.
fn changed() -> Altered {
    Altered {
        engine: vendor_engine::Engine::default(),
        options: vendor_engine::Engine::options,
        transfer: |engine, s| {
            let mut o = engine.transfer(s)?;
            let off = s.options.session.get("ge.exec.input_fusion_size") == Some(&"0".to_owned());
            if off && s.inputs.len() == 10 {
                o.direct.retain(|i| *i != 9);
                o.batched = vec![9];
            }
            Ok(o)
        },
        capabilities: <vendor_engine::Engine as Backend>::capabilities,
    }
}

/// The example engine with the deliberate fault its README's "When something fails" shows: the
/// upper bound of the input fusion threshold checked one too high, so one past the options
/// table's maximum is taken as a threshold instead of being refused.
fn off_by_one() -> Altered {
    Altered {
        engine: vendor_engine::Engine::default(),
        options: |engine, s| {
            const KEY: &str = "ge.exec.input_fusion_size";
            // The largest threshold of the options table, and the one past it taken for it.
            let max = ge_conformance::gen::transfer::max_threshold();
            let (max, past_max) = (max.to_string(), (max + 1).to_string());
            let past_str = past_max.as_str();
            let mut taken = s.clone();
            let mut past = false;
            for map in [
                &mut taken.options.global,
                &mut taken.options.session,
                &mut taken.options.graph,
            ] {
                if map.get(KEY).map(String::as_str) == Some(past_str) {
                    map.insert(KEY.to_owned(), max.clone());
                    past = true;
                }
            }
            let mut o = engine.options(&taken)?;
            if past {
                // What the engine says of the value, it says of the value as given.
                if let Some(e) = o.effective.get_mut(KEY).filter(|e| e.value == max) {
                    e.value = past_max.clone();
                }
                for d in o.warnings.iter_mut().chain(o.errors.iter_mut()) {
                    if d.key.as_deref() == Some(KEY) && d.value.as_deref() == Some(max.as_str()) {
                        d.value = Some(past_max.clone());
                        d.message = d.message.replace(&max, &past_max);
                    }
                }
            }
            Ok(o)
        },
        transfer: vendor_engine::Engine::transfer,
        capabilities: <vendor_engine::Engine as Backend>::capabilities,
    }
}

/// The off-by-one engine, ending its process with status 0 (`exit`) on the scenario of `CASE`,
/// as an engine that gives up would.
fn exiting() -> Altered {
    Altered {
        transfer: |engine, s| {
            if fusion_off_with_ten_inputs(s) {
                std::process::exit(0);
            }
            engine.transfer(s)
        },
        ..off_by_one()
    }
}

/// The off-by-one engine, declaring only options where it sees that a listing judges ahead:
/// an engine that would have its transfer trials skipped under nextest by looking ignored there.
fn two_faced() -> Altered {
    Altered {
        capabilities: |engine| {
            let mut declared = engine.capabilities();
            if std::env::var_os("GE_CONFORMANCE_JUDGING_AHEAD").is_some() {
                declared.retain(|c| *c == Capability::Options);
            }
            declared
        },
        ..off_by_one()
    }
}

/// The off-by-one engine, printing a line of its own on standard output at every options
/// scenario, as an engine's debugging output would.
fn chatty() -> Altered {
    Altered {
        options: |engine, s| {
            println!("chatty engine: options asked");
            (off_by_one().options)(engine, s)
        },
        ..off_by_one()
    }
}

/// The off-by-one engine, ending its process (`abort`) on the scenario of `CASE` (ten inputs,
/// fusion off), as a crashing engine would.
fn aborting() -> Altered {
    Altered {
        transfer: |engine, s| {
            if fusion_off_with_ten_inputs(s) {
                std::process::abort();
            }
            engine.transfer(s)
        },
        ..off_by_one()
    }
}

/// The off-by-one engine, never answering the scenario of `CASE`, as a hung engine would.
fn hanging() -> Altered {
    Altered {
        transfer: |engine, s| {
            while fusion_off_with_ten_inputs(s) {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            engine.transfer(s)
        },
        ..off_by_one()
    }
}

/// True for the scenario of `CASE`, and for any like it a property draws.
fn fusion_off_with_ten_inputs(s: &TransferScenario) -> bool {
    s.options.session.get("ge.exec.input_fusion_size") == Some(&"0".to_owned())
        && s.inputs.len() == 10
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/vendor-engine")
}

/// A copy of the example's snapshots, so the run never touches the committed ones.
fn copy_snapshots() -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("a temporary directory");
    for entry in std::fs::read_dir(example().join("snapshots")).expect("the example's snapshots") {
        let entry = entry.expect("a directory entry");
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).expect("copied");
    }
    copy
}

/// Runs this binary as the vendor's test binary over `engine`, on the snapshot trial alone.
fn run_child(engine: &str, dir: &Path, ci: bool) -> (bool, String) {
    child(engine, dir, ci, &["--exact", TRIAL], &[])
}

/// Runs this binary as the vendor's test binary over `engine` with libtest arguments `args`
/// and the environment `env` besides: whether it passed, and its output, both streams.
fn child(
    engine: &str,
    dir: &Path,
    ci: bool,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (bool, String) {
    let (ok, stdout, stderr) = child_streams(engine, dir, ci, args, env);
    (ok, format!("{stdout}{stderr}"))
}

/// [`child`], with standard output and standard error apart.
fn child_streams(
    engine: &str,
    dir: &Path,
    ci: bool,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (bool, String, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("this test binary"));
    cmd.args(args)
        .env(CHILD, engine)
        .env(DIR, dir)
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_OUTPUT")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("GE_CONFORMANCE_SNAPSHOTS")
        .env_remove("GE_CONFORMANCE_OUT")
        .env_remove("GE_CONFORMANCE_EXPECTATIONS")
        .env_remove("GE_CONFORMANCE_BASELINE")
        // When this test itself runs under nextest, the child is still a `cargo test` run.
        .env_remove("NEXTEST")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove(CASES)
        .env_remove(BUNDLE);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if ci {
        cmd.env("CI", "true");
    } else {
        cmd.env_remove("CI");
    }
    let out = cmd.output().expect("the child runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn a_changed_answer_fails_with_its_diff() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let pending = copy
        .path()
        .join(format!("{}.snap.new", CASE.replace('/', "__")));

    let (ok, text) = run_child("unchanged", copy.path(), true);
    if !ok {
        return Err(format!("the unchanged engine should pass {TRIAL}:\n{text}").into());
    }

    let (ok, text) = run_child("changed", copy.path(), true);
    if ok {
        return Err(format!("the changed answer passed {TRIAL}:\n{text}").into());
    }
    // The trial's own failure: the snapshot named, a unified diff (the old answer's line
    // removed, the new one added), and why no .snap.new was written. None of insta's wording
    // about the suite's source line or a stop on the first failure (every trial ran).
    for needle in [
        "snapshot changed: ",
        "transfer-examples__ten-inputs-threshold-0.snap no longer holds the answer",
        "--- accepted\n+++ now\n@@ ",
        "-  \"batched\": [],",
        "no .snap.new written (CI=true",
        TRIAL,
    ] {
        if !text.contains(needle) {
            return Err(format!("no `{needle}` in the output:\n{text}").into());
        }
    }
    for unwanted in [
        "Stopped on the first failure",
        "failed in line",
        "snapshot.rs",
    ] {
        if text.contains(unwanted) {
            return Err(format!("`{unwanted}` in the output:\n{text}").into());
        }
    }
    if pending.exists() {
        return Err(format!("CI=true wrote {}", pending.display()).into());
    }
    // The README shows the diff of the two answers, from its header to the last line it
    // keeps (`on_device`).
    let diff: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("--- accepted"))
        .collect();
    let end = diff
        .iter()
        .position(|l| l.contains("\"on_device\""))
        .map_or(diff.len(), |i| i + 1);
    docs::check(
        "examples/vendor-engine/README.md",
        "snapshot-diff",
        &diff[..end].join("\n"),
    )?;

    let (ok, text) = run_child("changed", copy.path(), false);
    let pending_deviation = copy
        .path()
        .join(format!("{}@deviation.snap.new", CASE.replace('/', "__")));
    if ok || !pending.exists() || !pending_deviation.exists() {
        return Err(format!(
            "outside CI the change should fail and wait in {} and {} for review:\n{text}",
            pending.display(),
            pending_deviation.display()
        )
        .into());
    }
    Ok(())
}

/// Accepted (`INSTA_UPDATE=always`), the changed answer leaves a deviation snapshot beside its
/// snapshot, naming what the suite finds wrong and each field that differs; once the engine
/// agrees with the reference again, the deviation snapshot left over fails the trial, which
/// names the file to delete.
fn a_deviation_snapshot_records_how_the_engine_departs() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let deviation = copy
        .path()
        .join(format!("{}@deviation.snap", CASE.replace('/', "__")));
    // One run writes both the new answer and its deviation snapshot.
    child(
        "changed",
        copy.path(),
        false,
        &["--exact", TRIAL],
        &[("INSTA_UPDATE", std::ffi::OsStr::new("always"))],
    );
    let text = std::fs::read_to_string(&deviation)
        .map_err(|e| format!("no deviation snapshot {}: {e}", deviation.display()))?;
    // The README shows the snapshot's body, after insta's header.
    let body = text.splitn(3, "---\n").nth(2).unwrap_or(&text);
    docs::check(
        "examples/vendor-engine/README.md",
        "deviation-snapshot",
        body,
    )?;
    for needle in [
        "failure [IBC-010] inputs [9] are batch-copied but batch copy is not enabled",
        "differences from the reference (wording left out):",
        "/batched: reference [], backend [9]",
    ] {
        if !text.contains(needle) {
            return Err(format!("no `{needle}` in the deviation snapshot:\n{text}").into());
        }
    }
    let (ok, text) = run_child("changed", copy.path(), true);
    if !ok {
        return Err(
            format!("the accepted answer and its deviation should pass now:\n{text}").into(),
        );
    }
    std::fs::copy(
        example()
            .join("snapshots")
            .join(format!("{}.snap", CASE.replace('/', "__"))),
        copy.path()
            .join(format!("{}.snap", CASE.replace('/', "__"))),
    )
    .map_err(|e| e.to_string())?;
    let (ok, text) = run_child("unchanged", copy.path(), true);
    if ok || !text.contains("as the reference does: delete") {
        return Err(
            format!("a deviation snapshot left over should fail the trial:\n{text}").into(),
        );
    }
    Ok(())
}

// Long because: one vendor route end to end (run, bundle, verify, tamper, verify again), each step
// checked where it happens.
fn the_bundle_of_a_cargo_test_run_verifies() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let out = tempfile::tempdir().expect("a temporary directory");
    let bundle = out.path().join("bundle");
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &[],
        &[("GE_CONFORMANCE_OUT", bundle.as_os_str())],
    );
    if !ok || !text.contains("report bundle written to") {
        return Err(format!("the whole run should pass and write its bundle:\n{text}").into());
    }
    let report = ge_conformance::bundle::verify(&bundle).map_err(|e| e.to_string())?;
    if report.verdict != ge_conformance::report::Standing::Certified {
        return Err(format!("{:?}: {}", report.verdict, report.verdict_line()).into());
    }
    // What the README shows of the run and of `ge-conformance verify`, where the bundle lies
    // and the tables' digests aside.
    let verified = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .arg("verify")
        .arg(&bundle)
        .output()
        .map_err(|e| e.to_string())?;
    let written = text
        .lines()
        .find(|l| l.starts_with("report bundle written to"))
        .unwrap_or_default()
        .replace(&*bundle.to_string_lossy(), "[..]");
    let verified = String::from_utf8_lossy(&verified.stdout)
        .replace(&report.meta.spec_digest, "[..]")
        .replace(
            report.meta.local_cases.as_deref().unwrap_or("(none)"),
            "[..]",
        );
    docs::check(
        "examples/vendor-engine/README.md",
        "bundle-verify",
        &format!("{written}\n{verified}"),
    )?;
    let local = report
        .trials
        .iter()
        .filter(|t| t.name.starts_with("vendor-models/"))
        .count();
    if local != 2 || report.meta.local_cases.is_none() {
        return Err(format!(
            "{local} local trials, local digest {:?}",
            report.meta.local_cases
        )
        .into());
    }
    // Trials of undeclared capabilities are in the report as not supported, as under certify.
    if !report.trials.iter().any(|t| {
        t.name == "property/memory" && t.outcome == ge_conformance::report::Outcome::NotSupported
    }) {
        return Err("property/memory is not reported as not supported".into());
    }
    // A second run replaces the bundle; a filtered one is a partial run, never certified.
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["transfer-examples/"],
        &[("GE_CONFORMANCE_OUT", bundle.as_os_str())],
    );
    let report = ge_conformance::bundle::verify(&bundle).map_err(|e| e.to_string())?;
    if !ok || report.verdict != ge_conformance::report::Standing::Partial {
        return Err(format!("{:?} after a filtered run:\n{text}", report.verdict).into());
    }
    // A run whose set-up failed (a waiver over everything, not marked broad) writes no bundle,
    // and the earlier one goes: no gate reads it as this run's.
    let waivers = out.path().join("waivers.toml");
    std::fs::write(
        &waivers,
        "[[waive]]\nmatch = \"*\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2099-01-01\"\n",
    )
    .map_err(|e| e.to_string())?;
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &[],
        &[
            ("GE_CONFORMANCE_OUT", bundle.as_os_str()),
            ("GE_CONFORMANCE_EXPECTATIONS", waivers.as_os_str()),
        ],
    );
    if ok
        || bundle.exists()
        || !text
            .contains("the report bundle was not written: the run's set-up failed (setup/waivers)")
    {
        return Err(format!(
            "a refused waiver should fail the run and leave no bundle ({}):\n{text}",
            bundle.exists()
        )
        .into());
    }
    // A failure is drawn into the bundle as under `certify --out`, and the bundle verifies.
    let (ok, text) = child(
        "changed",
        copy.path(),
        true,
        &["--exact", CASE],
        &[("GE_CONFORMANCE_OUT", bundle.as_os_str())],
    );
    let report = ge_conformance::bundle::verify(&bundle).map_err(|e| e.to_string())?;
    let drawn = report
        .trials
        .iter()
        .find(|t| t.name == CASE)
        .and_then(|t| t.picture.clone());
    match drawn {
        Some(p) if !ok && bundle.join(&p).is_file() => {}
        _ => {
            return Err(format!(
                "the changed engine's failure should be drawn in the bundle ({drawn:?}):\n{text}"
            )
            .into())
        }
    }
    // Its reproducer is the line that reruns it here: the command line cannot load a backend
    // linked into the test binary, and refuses `--backend <engine name>`.
    let reproducer = report
        .trials
        .iter()
        .find(|t| t.name == CASE)
        .and_then(|t| t.reproducer.clone())
        .unwrap_or_default();
    if !reproducer.starts_with(&format!(
        "cargo test --test vendor_example -- --exact {CASE}"
    )) || reproducer.contains("--backend")
    {
        return Err(format!("the bundle's reproducer for {CASE} is {reproducer:?}").into());
    }
    // Under nextest (one process per trial) no bundle is written: a one-trial bundle would
    // verify as if it were the run's.
    let nextest = out.path().join("nextest-bundle");
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "bundle/destination"],
        &[
            ("GE_CONFORMANCE_OUT", nextest.as_os_str()),
            ("NEXTEST", std::ffi::OsStr::new("1")),
        ],
    );
    if ok || !text.contains("nextest runs each trial") || nextest.exists() {
        return Err(format!("a bundle was asked for under nextest:\n{text}").into());
    }
    // A directory holding anything but a bundle is refused by a failing trial, not a panic.
    std::fs::write(bundle.join("notes.txt"), "mine").expect("written");
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "bundle/destination"],
        &[("GE_CONFORMANCE_OUT", bundle.as_os_str())],
    );
    if ok || !text.contains("bundle/destination") || !text.contains("notes.txt") {
        return Err(
            format!("a foreign file in the bundle directory was not refused:\n{text}").into(),
        );
    }
    Ok(())
}

/// A first run of the snapshot trials (an empty directory) prints one line per new snapshot
/// and a summary: no snapshot contents, no panic message, no backtrace.
fn a_first_run_prints_a_line_per_new_snapshot() -> Result<(), Failed> {
    let empty = tempfile::tempdir().expect("a temporary directory");
    let (ok, text) = child(
        "unchanged",
        empty.path(),
        false,
        &["snapshot/transfer-examples/"],
        &[("RUST_BACKTRACE", std::ffi::OsStr::new("1"))],
    );
    let written = std::fs::read_dir(empty.path())
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.ends_with(".snap.new") && !n.contains("@deviation")
                })
                .count()
        })
        .unwrap_or(0);
    let lines = text.matches("new snapshot, not yet reviewed: ").count();
    let quiet = !text.contains("Snapshot Contents")
        && !text.contains("panicked")
        && !text.contains("stack backtrace");
    let summary = text.contains(&format!("{written} new snapshot(s) written to"));
    let dir = empty.path().display().to_string();
    docs::check(
        "examples/vendor-engine/README.md",
        "first-run",
        &text.replace(&dir, "snapshots"),
    )?;
    if ok
        || written == 0
        || lines != written
        || !quiet
        || !summary
        || text.lines().count() > 12 * written + 40
    {
        return Err(format!(
            "a first run: {written} new snapshots, {lines} lines naming them, quiet {quiet}, summary {summary}, {} lines:\n{text}",
            text.lines().count()
        )
        .into());
    }
    Ok(())
}

fn a_broken_local_table_is_a_failing_trial() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let cases = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        cases.path().join("vendor-models.toml"),
        std::fs::read_to_string(example().join("cases/vendor-models.toml"))
            .expect("the example's table")
            .replace("IBC-011", "IBC-999"),
    )
    .expect("written");
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "cases/local"],
        &[(CASES, cases.path().as_os_str())],
    );
    if ok || !text.contains("IBC-999, which does not exist") || text.contains("panicked") {
        return Err(format!(
            "the broken table should fail `cases/local` with the loader's words:\n{text}"
        )
        .into());
    }
    // Its snapshots look unreferenced then; no advice to delete them.
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "snapshot/unreferenced"],
        &[(CASES, cases.path().as_os_str())],
    );
    if ok || text.contains("delete") || !text.contains("not checked") {
        return Err(format!(
            "with a broken table, snapshot/unreferenced says it did not check, never to delete:\n{text}"
        )
        .into());
    }
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "cases/local"],
        &[],
    );
    if !ok || !text.contains("0 passed") {
        return Err(format!(
            "the example's own tables load, so there is no `cases/local`:\n{text}"
        )
        .into());
    }
    Ok(())
}

/// Settings the environment gets wrong (a waiver file that is not there, a seed that is not a
/// number) never panic before the run: `--list` works, `setup/environment` fails naming each,
/// and the other trials run with the defaults.
fn a_bad_environment_is_a_failing_trial_not_a_panic() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let missing = copy.path().join("no-such-waivers.toml");
    let env = [
        ("GE_CONFORMANCE_EXPECTATIONS", missing.as_os_str()),
        ("GE_CONFORMANCE_SEED", std::ffi::OsStr::new("seven")),
        ("GE_CONFORMANCE_LIST_TIMEOUT_MS", std::ffi::OsStr::new("1m")),
    ];
    let (ok, text) = child("unchanged", copy.path(), true, &["--list"], &env);
    if !ok || !text.contains("setup/environment: test") || text.contains("panicked") {
        return Err(format!("--list under a bad environment:\n{text}").into());
    }
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "setup/environment"],
        &env,
    );
    if ok
        || !text.contains("GE_CONFORMANCE_SEED=seven is neither a number nor `random`")
        || !text.contains("no-such-waivers.toml")
        || !text.contains("GE_CONFORMANCE_LIST_TIMEOUT_MS=1m is not a number")
    {
        return Err(format!("setup/environment should fail naming all three:\n{text}").into());
    }
    let (ok, text) = child("unchanged", copy.path(), true, &["--exact", CASE], &env);
    if !ok || !text.contains("1 passed") {
        return Err(format!("the other trials run with the defaults:\n{text}").into());
    }
    // `random` is a seed: a fresh one, printed so that a failure replays.
    let random = [("GE_CONFORMANCE_SEED", std::ffi::OsStr::new("random"))];
    let (ok, text) = child(
        "unchanged",
        copy.path(),
        true,
        &["--exact", "property/options"],
        &random,
    );
    if !ok || !text.contains("(GE_CONFORMANCE_SEED=random; replay with GE_CONFORMANCE_SEED=") {
        return Err(
            format!("GE_CONFORMANCE_SEED=random should draw and print a seed:\n{text}").into(),
        );
    }
    Ok(())
}

/// `ge-conformance certify`, `eval --judge` and `promote` against the engine served as
/// `examples/vendor-engine/examples/serve.rs` serves it (this binary with the argument `serve`).
fn the_command_line_certifies_judges_and_promotes_a_served_engine() -> Result<(), Failed> {
    let exe = std::env::current_exe().expect("this test binary");
    let backend = format!(
        "exec:{} serve",
        ge_conformance::certify::shell_quote(&exe.to_string_lossy())
    );
    let cli = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ge-conformance"));
        cmd.args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("the command line runs");
        if let Some(text) = stdin {
            use std::io::Write as _;
            let mut input = child.stdin.take().expect("a pipe");
            input.write_all(text.as_bytes()).expect("written");
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("it ends");
        (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (code, text) = cli(
        &[
            "certify",
            "--backend",
            &backend,
            "--filter",
            "transfer-examples/",
        ],
        None,
    );
    if code != Some(0) || !text.contains("PARTIAL RUN") || !text.contains("vendor-engine") {
        return Err(format!("certify against the served engine:\n{text}").into());
    }
    // The whole run, whose verdict the README shows.
    let (code, text) = cli(&["certify", "--backend", &backend], None);
    let verdict = text.lines().find(|l| l.starts_with("CERTIFIED"));
    if code != Some(0) {
        return Err(format!("certify against the served engine:\n{text}").into());
    }
    docs::check(
        "examples/vendor-engine/README.md",
        "served-certify",
        verdict.unwrap_or("(no verdict line)"),
    )?;
    let scenario = r#"{"capability":"transfer","options":{"session":{"ge.exec.input_fusion_size":"0"}},"inputs":[{"index":0,"size":64}]}"#;
    let (code, text) = cli(&["eval", "--judge", "--backend", &backend], Some(scenario));
    if code != Some(0) || !text.contains("agrees with the reference") {
        return Err(format!("eval --judge against the served engine:\n{text}").into());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let finding = dir.path().join("finding.json");
    std::fs::write(&finding, scenario).expect("written");
    let into = dir.path().join("cases");
    let (code, text) = cli(
        &[
            "promote",
            &finding.to_string_lossy(),
            "--backend",
            &backend,
            "--into",
            &into.to_string_lossy(),
            "--clause",
            "IFS-013",
        ],
        None,
    );
    if code != Some(0) || !into.join("local-regressions.toml").exists() {
        return Err(format!("promote against the served engine:\n{text}").into());
    }
    Ok(())
}

/// libtest's output as the READMEs show it: the padding before `... ok` (it follows the longest
/// name of the run) and the run's time left out. The counts are kept: they are computed anew
/// with each run, and `UPDATE_DOCS=1` brings the READMEs up to date when the tables grow.
fn shown(out: &str) -> Vec<String> {
    out.lines()
        .map(|line| {
            let line = match line.split_once("; finished in ") {
                Some((head, _)) => format!("{head}; finished in [..]"),
                None => line.to_owned(),
            };
            match line.split_once(" ... ") {
                Some((name, result)) if line.starts_with("test ") => {
                    format!("{} ... {result}", name.trim_end())
                }
                _ => line,
            }
        })
        .collect()
}

/// The lines of libtest's output from the first one starting with `from` to the summary.
fn section(out: &str, from: &str) -> String {
    let lines = shown(out);
    let first = lines.iter().position(|l| l.starts_with(from));
    let last = lines.iter().position(|l| l.starts_with("test result:"));
    match (first, last) {
        (Some(a), Some(b)) if a <= b => lines[a..=b].join("\n"),
        _ => format!("(no `{from}` before the summary in:)\n{out}"),
    }
}

// Long because: five runs of the example, each checked against its README block, every wrong
// block reported in the same run.
/// The outputs the READMEs show for the example's `cargo test` runs are what it prints. Its
/// trials run on one thread, as the READMEs say, so their order is fixed.
fn the_readme_outputs_are_what_the_example_prints() -> Result<(), Failed> {
    // Every block is checked, and every wrong one reported, in one run.
    let mut wrong: Vec<String> = Vec::new();
    let copy = copy_snapshots();
    let one = ["--test-threads", "1"];
    let (_, out) = child("unchanged", copy.path(), true, &one, &[]);
    // Both READMEs show a selection of the whole run (`...` skips lines).
    let run = section(&out, "running ");
    wrong.extend(docs::check("examples/vendor-engine/README.md", "cargo-test-tail", &run).err());
    wrong.extend(
        docs::check(
            "README.md",
            "vendor-cargo-test-tail",
            &format!("$ cargo test -p vendor-engine --test conformance -- --test-threads 1\n{run}"),
        )
        .err(),
    );
    let (_, out) = child(
        "unchanged",
        copy.path(),
        true,
        &["transfer-examples/", "--test-threads", "1"],
        &[],
    );
    wrong.extend(
        docs::check(
            "examples/vendor-engine/README.md",
            "cargo-test-filtered",
            &section(&out, "running "),
        )
        .err(),
    );
    let waivers = example().join("waivers.toml");
    let (_, out) = child(
        "unchanged",
        copy.path(),
        true,
        &[
            "transfer-examples/ten-inputs-threshold-0",
            "--test-threads",
            "1",
        ],
        &[("GE_CONFORMANCE_EXPECTATIONS", waivers.as_os_str())],
    );
    wrong.extend(
        docs::check(
            "examples/vendor-engine/README.md",
            "waived-pass-fails",
            &section(&out, "---- "),
        )
        .err(),
    );
    // The failure of a deliberate fault, as "When something fails" shows it: the property's
    // report, up to the blank line that ends it.
    let (ok, out) = child(
        "off-by-one",
        copy.path(),
        true,
        &["--exact", "property/options"],
        &[],
    );
    if ok {
        return Err(format!("the off-by-one engine passed property/options:\n{out}").into());
    }
    let report: Vec<String> = shown(&out)
        .into_iter()
        .skip_while(|l| !l.starts_with("---- property/options"))
        .take_while(|l| !l.is_empty())
        .collect();
    wrong.extend(
        docs::check(
            "examples/vendor-engine/README.md",
            "property-failure",
            &report.join("\n"),
        )
        .err(),
    );
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n\n").into())
    }
}

/// The names a `--list --format terse` output lists (`[kind] name`), or `None` when a line is
/// not a listed trial.
fn listed(text: &str) -> Option<Vec<&str>> {
    text.lines().map(|l| l.strip_suffix(": test")).collect()
}

/// nextest's protocol, as it drives the example: `--list --format terse` and the same with
/// `--ignored` to list, then one process per trial, `--exact <listed name> --nocapture` (and
/// `--ignored` for an ignored one), whose exit status is the verdict.
fn nextest_lists_the_trials_and_runs_each_in_a_process() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let nextest = [("NEXTEST", std::ffi::OsStr::new("1"))];
    let run = |engine: &str, args: &[&str]| child(engine, copy.path(), true, args, &nextest);
    let (ok, text) = run("unchanged", &["--list", "--format", "terse"]);
    let all = listed(&text).filter(|all| ok && all.len() > 500);
    let Some(all) = all else {
        return Err(format!("the list nextest reads:\n{text}").into());
    };
    let (ok, text) = run("unchanged", &["--list", "--format", "terse", "--ignored"]);
    let ignored =
        listed(&text).filter(|i| ok && !i.is_empty() && i.iter().all(|n| all.contains(n)));
    let Some(ignored) = ignored else {
        return Err(format!("the ignored trials nextest reads:\n{text}").into());
    };
    let trial = "[property] property/options";
    if !all.contains(&trial) || ignored.contains(&trial) {
        return Err(format!("`{trial}` is not listed to run").into());
    }
    let tally = format!(
        "1 passed; 0 failed; 0 ignored; 0 measured; {} filtered out",
        all.len() - 1
    );
    let (ok, text) = run("unchanged", &["--exact", trial, "--nocapture"]);
    if !ok || !text.contains(&tally) {
        return Err(format!("`{trial}` alone, expected `{tally}`:\n{text}").into());
    }
    let (ok, text) = run("off-by-one", &["--exact", trial, "--nocapture"]);
    if ok || !text.contains("0 passed; 1 failed;") {
        return Err(format!("`{trial}` of a wrong engine must fail its process:\n{text}").into());
    }
    // An ignored trial run anyway judges nothing: it fails rather than pass.
    let (ok, text) = run(
        "unchanged",
        &["--exact", ignored[0], "--nocapture", "--ignored"],
    );
    if ok || !text.contains("not supported") {
        return Err(format!("`{}` run with --ignored:\n{text}", ignored[0]).into());
    }
    Ok(())
}

/// A waiver file for the tests below: each pattern waived until a date far ahead.
fn waivers(dir: &Path, patterns: &[&str]) -> PathBuf {
    let path = dir.join("waivers.toml");
    let text: String = patterns
        .iter()
        .map(|p| {
            format!(
                "[[waive]]\nmatch = \"{p}\"\nreason = \"known\"\ntracker = \"ENG-1\"\nexpires = \"9999-12-31\"\n"
            )
        })
        .collect();
    std::fs::write(&path, text).expect("the waiver file is written");
    path
}

/// Under nextest a waived failure is skipped, never passed: nextest's second listing call
/// (`--ignored`) lists the trials whose every failure a waiver waives, which libtest shows as
/// ignored once run. Trial and clause waivers alike; a trial with a failure no waiver names,
/// or an exact waiver's trial that passes, is listed to run and fails. Run anyway, a waived
/// trial fails its process under nextest and shows as ignored under `cargo test`. What the
/// engine prints while the trials are judged ahead never reaches the list.
// Long because: one vendor route end to end under nextest (list, run, waive), each step checked
// where it happens.
fn nextest_skips_a_waived_failure() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let options_case = "[options] options-numbers/ifs-rejects-max-plus-one";
    let property = "[property] property/options";
    let transfer_case = format!("[transfer] {CASE}");
    // The off-by-one engine breaks IFS-001 alone in two trials, and passes `CASE`.
    let file = waivers(dir.path(), &["IFS-001", CASE]);
    let env = |nextest: bool| {
        let mut env = vec![("GE_CONFORMANCE_EXPECTATIONS", file.as_os_str())];
        if nextest {
            env.push(("NEXTEST", std::ffi::OsStr::new("1")));
        }
        env
    };
    let run = |engine: &str, args: &[&str], nextest: bool| {
        child(engine, copy.path(), true, args, &env(nextest))
    };
    // A bundle set in code is written by no listing, nor by the child that judges ahead.
    let bundle = dir.path().join("bundle");
    let mut listing = env(true);
    listing.push((BUNDLE, bundle.as_os_str()));
    let args = ["--list", "--format", "terse", "--ignored"];
    let (ok, text, _) = child_streams("chatty", copy.path(), true, &args, &listing);
    if bundle.exists() {
        return Err("the listing wrote a report bundle".into());
    }
    let listed = listed(&text).filter(|_| ok).unwrap_or_default();
    if !listed.contains(&options_case)
        || !listed.contains(&property)
        || listed.contains(&transfer_case.as_str())
        || text.contains("chatty engine")
    {
        return Err(format!(
            "nextest's list of ignored trials, waived by IFS-001 and {CASE}:\n{text}"
        )
        .into());
    }
    let (ok, text) = run("off-by-one", &["--list", "--format", "terse"], true);
    if !ok || !text.contains(&format!("{options_case}: test")) {
        return Err(format!("the whole list must still hold every trial:\n{text}").into());
    }
    // Run anyway: nextest can only pass or fail it, and it is not a pass.
    let (ok, text) = run(
        "off-by-one",
        &["--exact", property, "--nocapture", "--ignored"],
        true,
    );
    let once = text.matches("waived: IFS-001").count() == 1;
    if ok || !text.contains("run under nextest") || !text.contains("[IFS-001]") || !once {
        return Err(format!("a waived trial run anyway under nextest:\n{text}").into());
    }
    // The same under `cargo test`: ignored, with the waiver, and listed after the summary.
    let (ok, text) = run(
        "off-by-one",
        &["--exact", "property/options", "--ignored"],
        false,
    );
    if !ok || !text.contains("ignored (waived: IFS-001") || !text.contains("failed as waived") {
        return Err(format!("a waived trial run with --ignored under cargo test:\n{text}").into());
    }
    // A trial citing IFS-001 that passes stays a pass under both runners: the clause waiver
    // waives the clause's failures and insists on nothing.
    for nextest in [true, false] {
        let passing = "[options] options-numbers/ifs-accepts-max";
        let name = if nextest {
            passing
        } else {
            "options-numbers/ifs-accepts-max"
        };
        let (ok, text) = run("off-by-one", &["--exact", name], nextest);
        if !ok || !text.contains("1 passed; 0 failed;") {
            return Err(format!(
                "a passing trial citing a waived clause (nextest: {nextest}):\n{text}"
            )
            .into());
        }
    }
    // An exact waiver's trial that passes is listed to run, and fails as an unexpected pass;
    // run with --ignored too (a listing that judged otherwise), it runs and fails.
    for ignored in [false, true] {
        let mut args = vec!["--exact", &transfer_case, "--nocapture"];
        args.extend(ignored.then_some("--ignored"));
        let (ok, text) = run("off-by-one", &args, true);
        if ok || !text.contains("0 passed; 1 failed;") {
            return Err(format!("{CASE}, waived and passing, under nextest:\n{text}").into());
        }
    }
    // The changed engine breaks IBC-010 and IBC-013 in `CASE`: waiving one leaves it to run.
    let file = waivers(dir.path(), &["IBC-010"]);
    let env = [
        ("GE_CONFORMANCE_EXPECTATIONS", file.as_os_str()),
        ("NEXTEST", std::ffi::OsStr::new("1")),
    ];
    let args = [
        "--list",
        "--format",
        "terse",
        "--ignored",
        "transfer-examples/",
    ];
    let (ok, text) = child("changed", copy.path(), true, &args, &env);
    if !ok || text.contains(CASE) {
        return Err(
            format!("{CASE}, one of its two clauses waived, was listed ignored:\n{text}").into(),
        );
    }
    let args = ["--exact", &transfer_case, "--nocapture"];
    let (ok, text) = child("changed", copy.path(), true, &args, &env);
    if ok || !text.contains("fails on clauses no waiver names") {
        return Err(
            format!("{CASE}, one of its two clauses waived, under nextest:\n{text}").into(),
        );
    }
    Ok(())
}

/// The listing judges ahead in a child process, a trial at a time: an engine that ends its
/// process, or never answers (past `GE_CONFORMANCE_LIST_TIMEOUT_MS`), in one trial costs that
/// trial's mark only. The listing completes, the waived trials judged after it are still
/// listed as ignored, and the trial itself is listed to run, where it fails in its own process.
fn a_listing_survives_an_engine_that_aborts_or_hangs() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let dir = tempfile::tempdir().expect("a temporary directory");
    // CASE passes under the off-by-one engine: only the abort or the hang fails it.
    let file = waivers(dir.path(), &["IFS-001"]);
    let env = [
        ("GE_CONFORMANCE_EXPECTATIONS", file.as_os_str()),
        (
            "GE_CONFORMANCE_LIST_TIMEOUT_MS",
            std::ffi::OsStr::new("1500"),
        ),
        ("NEXTEST", std::ffi::OsStr::new("1")),
    ];
    let list = ["--list", "--format", "terse", "--ignored"];
    for engine in ["aborting", "hanging"] {
        let started = std::time::Instant::now();
        let (ok, text, _) = child_streams(engine, copy.path(), true, &list, &env);
        let listed = listed(&text).filter(|_| ok).unwrap_or_default();
        if !listed.contains(&"[property] property/options")
            || listed.iter().any(|l| l.ends_with(CASE))
        {
            return Err(format!(
                "the {engine} engine's listing, in {:?}:\n{text}",
                started.elapsed()
            )
            .into());
        }
    }
    let trial = format!("[transfer] {CASE}");
    let (ok, text) = child("aborting", copy.path(), true, &["--exact", &trial], &env);
    if ok {
        return Err(format!("{CASE} of the aborting engine, run:\n{text}").into());
    }
    Ok(())
}

/// Only a waiver's ignoring counts when a listing judges ahead: an engine that declares fewer
/// capabilities there has its other trials listed to run (where they are decided), not skipped.
/// And the marker of a child judging ahead, set by hand beside `GE_CONFORMANCE_OUT`, is ignored
/// with a note: the run writes its bundle.
fn judging_ahead_cannot_be_turned_to_skip_trials() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = waivers(dir.path(), &["IFS-001"]);
    let env = [
        ("GE_CONFORMANCE_EXPECTATIONS", file.as_os_str()),
        ("NEXTEST", std::ffi::OsStr::new("1")),
    ];
    let list = ["--list", "--format", "terse", "--ignored"];
    let (ok, text, _) = child_streams("two-faced", copy.path(), true, &list, &env);
    let listed = listed(&text).filter(|_| ok).unwrap_or_default();
    if !listed.contains(&"[property] property/options")
        || listed.iter().any(|l| l.starts_with("[transfer]"))
    {
        return Err(format!("the two-faced engine's list of ignored trials:\n{text}").into());
    }
    let bundle = dir.path().join("bundle");
    let env = [
        ("GE_CONFORMANCE_JUDGING_AHEAD", std::ffi::OsStr::new("1")),
        ("GE_CONFORMANCE_OUT", bundle.as_os_str()),
    ];
    let (_, text) = child("unchanged", copy.path(), true, &["options-values/"], &env);
    if !bundle.join("report.json").exists()
        || !text.contains("GE_CONFORMANCE_JUDGING_AHEAD is set, but")
    {
        return Err(format!("a forged marker beside a bundle to write:\n{text}").into());
    }
    Ok(())
}

/// A baseline bundle gates a crate on "nothing got worse": the off-by-one engine's own bundle
/// makes its known failures ignored (`cargo test` passes, and nextest's listing skips them); the
/// changed engine, judged against it, fails on its new failure and lists the trials it fixed;
/// a baseline that does not verify is a failing trial.
// Long because: one vendor route end to end (make the baseline, pass, regress, list, refuse).
fn a_baseline_bundle_gates_on_regressions_only() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let baseline = dir.path().join("baseline");
    let out = [("GE_CONFORMANCE_OUT", baseline.as_os_str())];
    let (ok, text) = child("off-by-one", copy.path(), true, &[], &out);
    if ok || !text.contains("report bundle written to") {
        return Err(format!("the off-by-one engine's baseline run:\n{text}").into());
    }
    let against = [("GE_CONFORMANCE_BASELINE", baseline.as_os_str())];
    let known = "options-numbers/ifs-rejects-max-plus-one";
    // Snapshots are accepted as insta accepts them, not by a baseline: skipped here.
    let skip = ["--skip", "snapshot/"];
    let (ok, text) = child("off-by-one", copy.path(), true, &skip, &against);
    if !ok
        || !text.contains("failed as in the baseline")
        || !text.contains(&format!("known {known}"))
    {
        return Err(format!("the same engine against its own baseline:\n{text}").into());
    }
    let (ok, text) = child("changed", copy.path(), true, &skip, &against);
    let new = text.contains("new since the baseline") && text.contains(CASE);
    if ok || !new || !text.contains(&format!("fixed {known}")) {
        return Err(format!("the changed engine against the off-by-one baseline:\n{text}").into());
    }
    let mut listing = against.to_vec();
    listing.push(("NEXTEST", std::ffi::OsStr::new("1")));
    let list = ["--list", "--format", "terse", "--ignored"];
    let (ok, text, _) = child_streams("off-by-one", copy.path(), true, &list, &listing);
    let listed = listed(&text).filter(|_| ok).unwrap_or_default();
    if !listed.contains(&format!("[options] {known}").as_str()) {
        return Err(format!("nextest's list of ignored trials, with a baseline:\n{text}").into());
    }
    std::fs::write(baseline.join("report.json"), "{}").map_err(|e| e.to_string())?;
    let (ok, text) = child("off-by-one", copy.path(), true, &[], &against);
    if ok || !text.contains("setup/baseline") {
        return Err(format!("a baseline that does not verify:\n{text}").into());
    }
    Ok(())
}

/// An engine that calls `exit(0)` in the middle of a `cargo test` run fails the run: status 101
/// and a note, never the engine's status 0 (it would end a CI job green).
fn an_engine_that_exits_midway_fails_the_run() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let (ok, text) = child("exiting", copy.path(), true, &["transfer-examples/"], &[]);
    if ok || !text.contains("asked to exit (by the engine?) before the trials finished") {
        return Err(format!("an engine's exit(0) midway:\n{text}").into());
    }
    Ok(())
}

/// The example's `tests/conformance.rs` over `engine`, with a bundle written in code (not
/// through `GE_CONFORMANCE_OUT`) when `BUNDLE` names one.
fn vendor_suite<B: Backend + Send + Sync + 'static>(
    engine: B,
    cases: PathBuf,
    snapshots: std::ffi::OsString,
) -> ! {
    let suite = Suite::new(engine)
        .require([Capability::Options, Capability::Transfer])
        .with_cases(cases)
        .with_snapshots(snapshots);
    match std::env::var_os(BUNDLE) {
        Some(dir) => suite.with_bundle(dir).run_and_exit(),
        None => suite.run_and_exit(),
    }
}

/// One test of this binary.
type Test = fn() -> Result<(), Failed>;

/// The tests of this binary, each its own trial.
const TESTS: [(&str, Test); 14] = [
    (
        "an_engine_that_exits_midway_fails_the_run",
        an_engine_that_exits_midway_fails_the_run,
    ),
    (
        "a_changed_answer_fails_its_snapshot_trial_with_its_diff",
        a_changed_answer_fails_with_its_diff,
    ),
    (
        "the_readme_outputs_are_what_the_example_prints",
        the_readme_outputs_are_what_the_example_prints,
    ),
    (
        "a_deviation_snapshot_records_how_the_engine_departs",
        a_deviation_snapshot_records_how_the_engine_departs,
    ),
    (
        "the_bundle_of_a_cargo_test_run_verifies",
        the_bundle_of_a_cargo_test_run_verifies,
    ),
    (
        "a_first_run_prints_a_line_per_new_snapshot",
        a_first_run_prints_a_line_per_new_snapshot,
    ),
    (
        "a_broken_local_table_is_a_failing_trial",
        a_broken_local_table_is_a_failing_trial,
    ),
    (
        "a_bad_environment_is_a_failing_trial_not_a_panic",
        a_bad_environment_is_a_failing_trial_not_a_panic,
    ),
    (
        "nextest_lists_the_trials_and_runs_each_in_a_process",
        nextest_lists_the_trials_and_runs_each_in_a_process,
    ),
    (
        "nextest_skips_a_waived_failure",
        nextest_skips_a_waived_failure,
    ),
    (
        "a_listing_survives_an_engine_that_aborts_or_hangs",
        a_listing_survives_an_engine_that_aborts_or_hangs,
    ),
    (
        "a_baseline_bundle_gates_on_regressions_only",
        a_baseline_bundle_gates_on_regressions_only,
    ),
    (
        "judging_ahead_cannot_be_turned_to_skip_trials",
        judging_ahead_cannot_be_turned_to_skip_trials,
    ),
    (
        "the_command_line_certifies_judges_and_promotes_a_served_engine",
        the_command_line_certifies_judges_and_promotes_a_served_engine,
    ),
];

fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        // The one line of examples/vendor-engine/examples/serve.rs.
        let engine = vendor_engine::Engine::default();
        let served = ge_conformance::protocol::serve(
            &engine,
            std::io::stdin().lock(),
            std::io::stdout().lock(),
        );
        std::process::exit(i32::from(served.is_err()));
    }
    if let Ok(engine) = std::env::var(CHILD) {
        let dir = std::env::var_os(DIR).expect("the child is given its snapshot directory");
        let cases = std::env::var_os(CASES).map_or_else(|| example().join("cases"), PathBuf::from);
        let altered = match engine.as_str() {
            "changed" => Some(changed()),
            "off-by-one" => Some(off_by_one()),
            "chatty" => Some(chatty()),
            "aborting" => Some(aborting()),
            "hanging" => Some(hanging()),
            "two-faced" => Some(two_faced()),
            "exiting" => Some(exiting()),
            _ => None,
        };
        if let Some(altered) = altered {
            vendor_suite(altered, cases, dir);
        }
        vendor_suite(vendor_engine::Engine::default(), cases, dir);
    }
    let trials = TESTS
        .into_iter()
        .map(|(name, test)| Trial::test(name, test))
        .collect();
    ge_conformance::libtest::run(&Arguments::from_args(), trials).exit();
}
