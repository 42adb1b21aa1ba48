//! The example Python shim (`examples/python-shim/`) passes every options case and the options
//! property through `exec:`, and is reported not supported, never passed, for the rest.

use std::path::PathBuf;
use std::process::Command;

use ge_conformance::backends;
use ge_conformance::certify::{self, shell_quote, Config};
use ge_conformance::report::Outcome;
use ge_spec::Capability;

#[test]
fn the_python_shim_passes_the_options_capability() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("spec.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ge-conformance"))
        .args(["spec", "--format", "json"])
        .output()
        .expect("run ge-conformance spec");
    assert!(out.status.success());
    std::fs::write(&spec, &out.stdout).expect("write spec.json");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/python-shim/ge_shim.py");
    let arg = format!(
        "exec:python3 {} --spec {}",
        shell_quote(&script.to_string_lossy()),
        shell_quote(&spec.to_string_lossy())
    );
    let handle = backends::open(
        &arg,
        std::time::Duration::from_secs(30),
        ge_spec::Profile::Documented,
    )
    .expect("exec");
    let cfg = Config {
        cases: 64,
        backend_arg: arg,
        ..Config::default()
    };
    let report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    assert_eq!(report.meta.backend, "python-shim", "{}", handle.stderr());
    let mut options = 0;
    for t in &report.trials {
        let expected = if t.capability == Capability::Options {
            options += 1;
            Outcome::Pass
        } else {
            Outcome::NotSupported
        };
        assert_eq!(t.outcome, expected, "{}: {:?}", t.name, t.message);
    }
    assert!(options > 1, "the options cases and property ran");
    assert!(
        report.certified,
        "a partial backend with no failure certifies what it claims"
    );
}
