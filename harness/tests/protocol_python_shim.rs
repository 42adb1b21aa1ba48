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
    // The default budget, so the report is the one the READMEs show.
    let cfg = Config {
        backend_arg: arg,
        ..Config::default()
    };
    let mut report = certify::certify(handle.backend(), &cfg, &mut |_, _, _| {}).expect("a run");
    report.meta.confinement = handle.confinement();
    the_readmes_show_this_report(&report.to_text());
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

/// The report as the READMEs show it, up to its verdict line, with what moves without the
/// suite changing masked: the tables' digest and the machine's confinement.
fn shown(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = if let Some(rest) = line.strip_prefix("spec tables ") {
            format!(
                "spec tables [digest]{}",
                &rest[rest.find(' ').unwrap_or(rest.len())..]
            )
        } else if line.starts_with("confinement of the backend: ") {
            "confinement of the backend: [as the machine allows]".to_owned()
        } else {
            line.to_owned()
        };
        let last = line.starts_with("CERTIFIED") || line.starts_with("NOT CERTIFIED");
        out.push(line);
        if last {
            break;
        }
    }
    out
}

/// The python shim's README shows the whole report and the README its verdict line: both must
/// be what a run prints today, so the docs cannot drift from the suite. `UPDATE_DOCS=1`
/// rewrites them.
fn the_readmes_show_this_report(text: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let want = shown(text);
    let verdict = want.last().cloned().unwrap_or_default();
    for (path, shows_all) in [
        ("examples/python-shim/README.md", true),
        ("README.md", false),
    ] {
        let path = root.join(path);
        let doc = std::fs::read_to_string(&path).expect("the README");
        // The first text block that holds a verdict line is the one showing this report.
        let Some(start) = doc
            .match_indices("```text\n")
            .map(|(i, _)| i + "```text\n".len())
            .find(|&i| {
                doc[i..]
                    .split("```")
                    .next()
                    .is_some_and(|b| b.contains("CERTIFIED for options only"))
            })
        else {
            panic!("{} shows no report", path.display());
        };
        let end = start + doc[start..].find("```").expect("a closed block");
        let block = &doc[start..end];
        let fresh = if shows_all {
            let mut t: String = text.lines().take(want.len()).collect::<Vec<_>>().join("\n");
            t.push('\n');
            t
        } else {
            format!("{verdict}\n")
        };
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{fresh}{}", &doc[..start], &doc[end..]))
                .expect("the README rewritten");
            continue;
        }
        let have: Vec<String> = shown(block);
        let expected = if shows_all {
            want.clone()
        } else {
            vec![verdict.clone()]
        };
        assert_eq!(
            have,
            expected,
            "{} shows another report than the suite gives today; run `UPDATE_DOCS=1 cargo test -p ge-conformance --test protocol_python_shim` and review the diff",
            path.display()
        );
    }
}
