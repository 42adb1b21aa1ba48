//! The vendor example's workflow, run as its crate runs it: a copy of `examples/vendor-engine`
//! with one answer changed fails its snapshot trial against a copy of the example's committed
//! snapshots, with insta's diff of the two answers, and leaves the new answer as a `.snap.new`
//! for review (nothing written under `CI=true`), while the unchanged engine passes; the bundle
//! of a `cargo test` run (`GE_CONFORMANCE_OUT`) verifies, partial when filtered; and a local
//! case table that breaks the loader's rules is a failing trial, never a panic; accepted, the
//! changed answer gets a deviation snapshot, which fails once the engine agrees again; and the
//! READMEs' samples of the example's `cargo test` output are what it prints.
//!
//! The test binary is its own vendor crate: run with `VENDOR_SNAPSHOTS_CHILD` set, its `main`
//! is the example's `tests/conformance.rs` over the changed (or unchanged) engine.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use ge_conformance::libtest::Suite;
use ge_spec::vocab::{OptionsObservation, OptionsScenario, TransferObservation, TransferScenario};
use ge_spec::{Answer, Backend, Capability};
use libtest_mimic::{Arguments, Failed, Trial};

/// Set in the child: `changed` or `unchanged`, with the snapshot directory in `VENDOR_SNAPSHOTS_DIR`.
const CHILD: &str = "VENDOR_SNAPSHOTS_CHILD";
const DIR: &str = "VENDOR_SNAPSHOTS_DIR";
/// The local case tables of the child, when not the example's.
const CASES: &str = "VENDOR_SNAPSHOTS_CASES";
/// The scenario whose answer changes, and its trial.
const CASE: &str = "transfer-examples/ten-inputs-threshold-0";
const TRIAL: &str = "snapshot/transfer-examples/ten-inputs-threshold-0";

/// The example engine, except that with fusion off it sends input 9 in a batch of its own
/// instead of directly.
#[derive(Debug)]
struct Changed(vendor_engine::Engine);

impl Backend for Changed {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn version(&self) -> &str {
        self.0.version()
    }
    fn capabilities(&self) -> BTreeSet<Capability> {
        self.0.capabilities()
    }
    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        self.0.options(s)
    }
    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        let mut o = self.0.transfer(s)?;
        let off = s.options.session.get("ge.exec.input_fusion_size") == Some(&"0".to_owned());
        if off && s.inputs.len() == 10 {
            o.direct.retain(|i| *i != 9);
            o.batched = vec![9];
        }
        Ok(o)
    }
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
/// and the environment `env` besides.
fn child(
    engine: &str,
    dir: &Path,
    ci: bool,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("this test binary"));
    cmd.args(args)
        .env(CHILD, engine)
        .env(DIR, dir)
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_OUTPUT")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("GE_CONFORMANCE_SNAPSHOTS")
        .env_remove("GE_CONFORMANCE_OUT")
        .env_remove(CASES);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if ci {
        cmd.env("CI", "true");
    } else {
        cmd.env_remove("CI");
    }
    let out = cmd.output().expect("the child runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn a_changed_answer_fails_with_the_insta_diff() -> Result<(), Failed> {
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
    // insta's diff: the old answer's line removed, the new one added, and the assertion named.
    for needle in [
        "-old snapshot",
        "+new results",
        "snapshot assertion for 'transfer-examples__ten-inputs-threshold-0' failed",
        TRIAL,
    ] {
        if !text.contains(needle) {
            return Err(format!("no `{needle}` in the output:\n{text}").into());
        }
    }
    if pending.exists() {
        return Err(format!("CI=true wrote {}", pending.display()).into());
    }

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

/// The `text` blocks of `markdown` that hold a libtest summary line.
fn summaries(markdown: &str) -> Vec<String> {
    markdown
        .split("```text\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .filter(|b| b.contains("test result:"))
        .map(str::to_owned)
        .collect()
}

/// A line of libtest's output without what changes from run to run: the time, the padding that
/// depends on the longest name of the run, and in the counting lines (`running N tests`, the
/// summary) the counts, which grow with the tables.
fn normal(line: &str) -> String {
    let line = line.split("; finished in").next().unwrap_or(line);
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.starts_with("test result:") || line.starts_with("running ") {
        let mut masked = String::new();
        for c in line.chars() {
            if !c.is_ascii_digit() {
                masked.push(c);
            } else if !masked.ends_with('#') {
                masked.push('#');
            }
        }
        masked
    } else {
        line
    }
}

/// The outputs the READMEs show for the example's `cargo test` runs are what it prints: every
/// test line they show is in the output of the same run, and so is the summary, its outcome and
/// its words (counts, times and padding aside: they move with the tables and the machine).
fn the_readme_outputs_are_what_the_example_prints() -> Result<(), Failed> {
    let copy = copy_snapshots();
    let waivers = example().join("waivers.toml");
    let mut blocks = Vec::new();
    for readme in [
        example().join("README.md"),
        example().join("../../README.md"),
    ] {
        let text = std::fs::read_to_string(&readme).map_err(|e| e.to_string())?;
        blocks.extend(summaries(&text).into_iter().map(|b| (readme.clone(), b)));
    }
    if blocks.len() != 4 {
        return Err(format!(
            "{} README blocks with a libtest summary, 4 expected",
            blocks.len()
        )
        .into());
    }
    for (readme, block) in blocks {
        let (args, env): (Vec<&str>, Vec<(&str, &std::ffi::OsStr)>) =
            if block.contains("waived as failing") {
                (
                    vec!["transfer-examples/ten-inputs-threshold-0"],
                    vec![("GE_CONFORMANCE_EXPECTATIONS", waivers.as_os_str())],
                )
            } else if block.contains("running 8 tests") {
                (vec!["transfer-examples/"], Vec::new())
            } else {
                (Vec::new(), Vec::new())
            };
        let (_, out) = child("unchanged", copy.path(), true, &args, &env);
        let printed: BTreeSet<String> = out.lines().map(normal).collect();
        for line in block.lines().filter(|l| {
            l.starts_with("test ") || l.starts_with("running ") || l.starts_with("passed, but")
        }) {
            if !printed.contains(&normal(line)) {
                return Err(format!(
                    "{}: `{line}` is not what `cargo test -- {}` prints:\n{out}",
                    readme.display(),
                    args.join(" ")
                )
                .into());
            }
        }
    }
    Ok(())
}

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
        if engine == "changed" {
            Suite::new(Changed(vendor_engine::Engine::default()))
                .with_cases(cases)
                .with_snapshots(dir)
                .run_and_exit();
        }
        Suite::new(vendor_engine::Engine::default())
            .with_cases(cases)
            .with_snapshots(dir)
            .run_and_exit();
    }
    let trials = vec![
        Trial::test(
            "a_changed_answer_fails_its_snapshot_trial_with_the_insta_diff",
            a_changed_answer_fails_with_the_insta_diff,
        ),
        Trial::test(
            "the_readme_outputs_are_what_the_example_prints",
            the_readme_outputs_are_what_the_example_prints,
        ),
        Trial::test(
            "a_deviation_snapshot_records_how_the_engine_departs",
            a_deviation_snapshot_records_how_the_engine_departs,
        ),
        Trial::test(
            "the_bundle_of_a_cargo_test_run_verifies",
            the_bundle_of_a_cargo_test_run_verifies,
        ),
        Trial::test(
            "a_broken_local_table_is_a_failing_trial",
            a_broken_local_table_is_a_failing_trial,
        ),
        Trial::test(
            "the_command_line_certifies_judges_and_promotes_a_served_engine",
            the_command_line_certifies_judges_and_promotes_a_served_engine,
        ),
    ];
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}
