//! Benchmark of the C ABI routes: the time per scenario of the C++ example engine loaded
//! in-process (`dylib:`) and isolated (`serve-dylib` over the subprocess protocol), against the
//! Rust in-process backends that answer the same capabilities (`text-engine`, of which the C++
//! engine is a port, and the reference).
//!
//! The scenarios are every options and transfer scenario of the case tables, then those and the
//! boundary catalogue (lists of up to 1,024 items: each item's diagnostic repeats the whole value,
//! so the JSON grows with the square of the list), each asked in turn; a backend's figure is the median over `--runs` passes (5) of
//! the mean time per scenario. The engine is `GE_CONFORMANCE_DYLIB` when set, else
//! `examples/cpp-engine` is built here with `make` (without a C++ compiler the bench says so and
//! stops).
//!
//! Run with `cargo bench -p ge-conformance --bench cabi` (add `-- --runs N` for more passes).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ge_conformance::dylib::DylibBackend;
use ge_conformance::protocol::ExecBackend;
use ge_spec::{Backend, Capability, Profile, Scenario, Spec};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The engine's library: `GE_CONFORMANCE_DYLIB`, or `examples/cpp-engine` built now.
fn engine() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GE_CONFORMANCE_DYLIB") {
        return Some(PathBuf::from(path));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_owned();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cabi-bench");
    let built = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(repo.join("examples/cpp-engine"))
        .arg(format!("OUT={}", out.display()))
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("cabi bench: cannot build examples/cpp-engine (no make or C++ compiler?) and GE_CONFORMANCE_DYLIB is not set; nothing measured");
        return None;
    }
    Some(out.join("libcpp_engine.so"))
}

/// Mean time per scenario over one pass, asking `backend` every scenario once.
fn pass(backend: &dyn Backend, scenarios: &[Scenario]) -> Duration {
    let sandbox = Path::new(".");
    let start = Instant::now();
    for s in scenarios {
        let answer = backend.answer(s, sandbox);
        assert!(
            answer.is_ok(),
            "{} answers {}",
            backend.name(),
            s.capability()
        );
    }
    start.elapsed() / u32::try_from(scenarios.len()).unwrap_or(u32::MAX)
}

fn main() {
    let mut runs = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|n| *n > 0)
                .expect("--runs takes a positive number");
        }
    }
    let Some(library) = engine() else {
        return;
    };
    let spec = Spec::embedded();
    let wanted = [Capability::Options, Capability::Transfer];
    let cases: Vec<Scenario> = spec
        .cases()
        .iter()
        .map(|c| c.case.scenario.clone())
        .filter(|s| wanted.contains(&s.capability()))
        .collect();
    let mut all = cases.clone();
    for c in wanted {
        all.extend(ge_conformance::gen::boundary_scenarios(c));
    }
    let bin = env!("CARGO_BIN_EXE_ge-conformance");
    let dylib = DylibBackend::open(&library, "the cabi bench's engine crashed")
        .unwrap_or_else(|e| panic!("{e}"));
    let isolated = ExecBackend::new(
        &format!("{bin} serve-dylib {}", library.display()),
        ge_conformance::protocol::DEFAULT_TIMEOUT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    isolated.greet().unwrap_or_else(|e| panic!("{e}"));
    let text = text_engine::TextEngine;
    let reference = ge_reference::Reference::new(Profile::Documented);
    let backends: [(&str, &dyn Backend); 4] = [
        ("text-engine, Rust in-process", &text),
        ("reference, Rust in-process", &reference),
        ("cpp-engine, dylib: in-process", &dylib),
        ("cpp-engine, serve-dylib isolated", &isolated),
    ];
    println!("engine {}; median of {runs} passes", library.display());
    for (label, scenarios) in [
        ("the case tables", &cases),
        ("cases and boundary catalogue", &all),
    ] {
        println!(
            "\n{} options and transfer scenarios ({label}):\n",
            scenarios.len()
        );
        println!("| backend | per scenario |");
        println!("|---|---|");
        let mut medians = Vec::new();
        for (name, backend) in backends {
            pass(backend, scenarios); // warm-up
            let times: Vec<Duration> = (0..runs).map(|_| pass(backend, scenarios)).collect();
            let m = median(times);
            println!("| {name} | {:.1} µs |", m.as_secs_f64() * 1e6);
            medians.push(m);
        }
        let overhead = medians[2].as_secs_f64() - medians[0].as_secs_f64();
        println!(
            "\nin-process C ABI against text-engine: {:+.1} µs per scenario ({:.2}x)",
            overhead * 1e6,
            medians[2].as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}
