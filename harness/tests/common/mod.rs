//! Shared test set-up: the one snapshot convention of the project. Every insta snapshot lives in
//! the workspace's `snapshots/` folder and is named `<module>__<name>.snap`.

pub mod chromium;
pub mod docs;
pub mod engines;

/// Runs `f` with the project's insta settings.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn with_snapshots<R>(f: impl FnOnce() -> R) -> R {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots"));
    settings.set_prepend_module_to_snapshot(true);
    settings.bind(f)
}

/// The path of a test shim under `tests/shims/`, quoted for an `exec:` command line.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn shim(name: &str) -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shims")
        .join(name);
    ge_conformance::certify::shell_quote(&path.to_string_lossy())
}

/// The Python interpreter the shims run under, quoted for a command line: the one `python3`
/// on `PATH` starts, asked once, with `-S`. A version manager's `python3` on `PATH` (pyenv's) is
/// a shell script that costs about 0.1 s of CPU on every start, and the shims start many times;
/// `-S` leaves out `site`, whose `.pth` files imported packages no shim uses (55 ms a start
/// here, against 16 ms for the rest). The shims and the engines use the standard library only.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .map_or_else(
                || "python3 -S".to_owned(),
                |s| format!("{} -S", ge_conformance::certify::shell_quote(&s)),
            )
    })
}

/// The command line of the misbehaving shim (`tests/shims/misbehave.py`) with `args` (its mode
/// and trigger) in front of the reference served over the protocol.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn misbehave(args: &str) -> String {
    format!(
        "{} {} {args} -- {}",
        python(),
        shim("misbehave.py"),
        reference_server()
    )
}

/// The command line that serves the reference over the protocol.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn reference_server() -> String {
    format!(
        "{} serve-reference",
        ge_conformance::certify::shell_quote(env!("CARGO_BIN_EXE_ge-conformance"))
    )
}

/// Runs `f` on a thread of its own and fails the test if it takes longer than `limit`: a
/// hostile backend or file must not hang the test run.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn within<T: Send + 'static>(
    limit: std::time::Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not end within {limit:?}: the harness blocked"))
}

/// The size of the counterexample that the property of `capability` at the default seed and
/// budget reports against `backend` for `clause`, judged at the level where `clause` binds,
/// with its boundary phase (`certify` as users run it) or without (the random phase and the
/// shrinking alone); `None` when the property does not fail on `clause`.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn counterexample_size(
    backend: &dyn ge_spec::Backend,
    capability: ge_spec::Capability,
    clause: &str,
    boundaries: bool,
) -> Option<ge_conformance::reduce::Size> {
    let cfg = ge_conformance::certify::Config {
        judging: ge_conformance::judging::Judging::failing(ge_spec::Profile::Documented, clause),
        boundaries,
        ..Default::default()
    };
    let trial = ge_conformance::certify::run_property(backend, capability, &cfg);
    let found = trial
        .counterexamples
        .iter()
        .find(|c| !c.deviation && c.clauses.iter().any(|c| c == clause))?;
    let scenario: ge_spec::Scenario = serde_json::from_value(found.scenario.clone()).ok()?;
    Some(ge_conformance::reduce::size(&scenario))
}

/// Prints, for each named fault, the size of its property counterexample on its clause with
/// and without the boundary phase ([`counterexample_size`]), then the two distributions of the
/// sizes (keys plus items, `size:count`).
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn print_counterexample_sizes(
    capability: ge_spec::Capability,
    faults: &[(&str, Box<dyn ge_spec::Backend>, &str)],
) {
    for boundaries in [true, false] {
        let phase = if boundaries {
            "with boundaries"
        } else {
            "random phase only"
        };
        let mut histogram: std::collections::BTreeMap<usize, usize> = Default::default();
        let mut missed = 0;
        for (name, backend, clause) in faults {
            match counterexample_size(backend.as_ref(), capability, clause, boundaries) {
                Some(size) => {
                    println!(
                        "{capability} ({phase}) {name} {clause}: {} keys, {} items",
                        size.keys, size.items
                    );
                    *histogram.entry(size.total()).or_default() += 1;
                }
                None => {
                    println!("{capability} ({phase}) {name} {clause}: not failed by the property");
                    missed += 1;
                }
            }
        }
        let shown: Vec<String> = histogram.iter().map(|(s, n)| format!("{s}:{n}")).collect();
        println!(
            "{capability} ({phase}): size:count {} ({missed} not failed by the property)",
            shown.join(" ")
        );
    }
}

/// Asserts that the default certification of `backend` (its trials whose names contain
/// `filter`, at the default seed and budget) catches `fault` on `clause`, judged at the level
/// `clause` binds, and so does the property's boundary catalogue with no random scenario (the
/// same at every seed) wherever no table case catches it: for faults that the generated
/// scenarios, not only a case, must reach.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn assert_caught_in_certification(
    fault: &dyn std::fmt::Debug,
    backend: &dyn ge_spec::Backend,
    filter: &str,
    clause: &str,
) {
    let caught = ge_conformance::certify::caught_in_certification(
        &ge_conformance::judging::Judging::failing(ge_spec::Profile::Documented, clause),
        backend,
        filter,
    );
    assert!(
        caught.contains(clause),
        "{fault:?} should be caught by {clause}; caught by {caught:?}"
    );
    // A verdict that depends on the seed is not a verdict: where no table case catches it, the
    // property's boundary catalogue must, with no random scenario at all. The catalogue is the
    // same at every seed (`gen::boundary_scenarios` takes none), so what it catches is caught
    // at every seed; `seed_independence` runs the whole property at seeds 0 to 19 for faults
    // of this kind.
    let judging = ge_conformance::judging::Judging::failing(ge_spec::Profile::Documented, clause);
    if ge_conformance::runner::caught_clauses(&judging, backend, None).contains_key(clause) {
        return;
    }
    let cfg = ge_conformance::certify::Config {
        judging,
        cases: 0,
        ..Default::default()
    };
    let caught: Vec<String> = backend
        .capabilities()
        .into_iter()
        .flat_map(|c| ge_conformance::certify::run_property(backend, c, &cfg).broken)
        .collect();
    assert!(
        caught.iter().any(|c| *c == clause),
        "{fault:?} escapes {clause} in the boundary catalogue, the one part of a property that does not depend on the seed; caught by {caught:?}"
    );
}

/// The other direction of a fault row: a fault whose clause is one of the suite's own choices
/// (it does not bind at level `documented` under `profile`) fails no case and no property
/// trial at that level. A
/// fault that does is either charged to the wrong clause or breaks something the text states
/// as well, and must be named after that.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn assert_no_failure_at_documented_for_a_choice(
    fault: &dyn std::fmt::Debug,
    backend: &dyn ge_spec::Backend,
    capability: ge_spec::Capability,
    profile: ge_spec::Profile,
    clause: &str,
) {
    let documented =
        ge_conformance::judging::Judging::new(profile, ge_spec::Conformance::Documented);
    if documented.binds(clause) {
        return;
    }
    let failing = ge_conformance::runner::caught_clauses(&documented, backend, Some(capability));
    let name = format!("{fault:?}");
    assert!(
        failing.is_empty(),
        "{name} breaks only the suite's choice {clause}, yet fails at level documented: {failing:#?}"
    );
    // The property too, at the default seed and budget (its boundary phase included).
    let cfg = ge_conformance::certify::Config {
        judging: documented,
        filter: Some(format!("property/{capability}")),
        ..Default::default()
    };
    let report = ge_conformance::certify::certify(backend, &cfg, &mut |_, _, _| {})
        .expect("a certification run");
    let failed: Vec<String> = report
        .trials
        .iter()
        .filter(|t| t.outcome == ge_conformance::report::Outcome::Fail)
        .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
        .collect();
    assert!(
        failed.is_empty(),
        "{name} breaks only the suite's choice {clause}, yet its property fails at level documented:\n{}",
        failed.join("\n")
    );
}

/// Runs the command line tool with `args` and waits for its output.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(args)
        .output()
        .expect("run ge-conformance")
}

/// The standard output and standard error of `o`, as text.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The reference, declaring the options capability only.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub struct OptionsOnly;

impl ge_spec::Backend for OptionsOnly {
    fn name(&self) -> &str {
        "options-only"
    }
    fn capabilities(&self) -> std::collections::BTreeSet<ge_spec::Capability> {
        [ge_spec::Capability::Options].into_iter().collect()
    }
    fn options(
        &self,
        s: &ge_spec::vocab::OptionsScenario,
    ) -> ge_spec::Answer<ge_spec::vocab::OptionsObservation> {
        ge_spec::Backend::options(&ge_reference::Reference, s)
    }
}

/// A directory of the test's own beneath the harness's sandbox root (where a confined backend may
/// write), registered as the harness's (`sandbox::make_own`), so that the backends of other
/// tests running at once do not take it for one of theirs left beneath the root; removed when
/// dropped.
#[allow(dead_code)] // each test crate uses the helpers it needs
pub struct OwnDir(std::path::PathBuf);

#[allow(dead_code)] // each test crate uses the helpers it needs
impl OwnDir {
    /// A new one.
    pub fn new() -> OwnDir {
        let dir = ge_conformance::sandbox::make_own(|| {
            Ok(tempfile::tempdir_in(ge_conformance::sandbox::root())?.keep())
        })
        .expect("a directory beneath the sandbox root");
        OwnDir(dir)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for OwnDir {
    fn drop(&mut self) {
        let _ = ge_conformance::sandbox::remove_own(&self.0);
    }
}
