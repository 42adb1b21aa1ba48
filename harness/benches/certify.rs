//! Benchmark of a whole certification, and the size of the suite it runs.
//!
//! Prints, per profile: the clauses, cases and properties, the scenarios generated per run, and
//! the median wall time of `certify` against the reference in-process and through the
//! subprocess protocol (the `ge-conformance serve-reference` binary over JSON lines), over a few
//! runs each.
//!
//! Run with `cargo bench -p ge-conformance --bench certify` (add `-- --runs N` for more runs).

use std::time::{Duration, Instant};

use ge_conformance::backends;
use ge_conformance::certify::{self, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::{Report, TrialKind};
use ge_reference::Reference;
use ge_spec::tables::Origin;
use ge_spec::{Backend, Conformance, Profile, Spec};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn config(profile: Profile) -> Config {
    Config {
        judging: Judging::new(profile, Conformance::Documented),
        ..Config::default()
    }
}

/// Certifies `backend` `runs` times; the median time and the last report.
fn time(runs: usize, backend: &dyn Backend, profile: Profile) -> (Duration, Report) {
    let cfg = config(profile);
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let report =
            certify::certify(backend, &cfg, &mut |_, _, _| {}).expect("a runnable configuration");
        times.push(start.elapsed());
        last = Some(report);
    }
    (median(times), last.expect("at least one run"))
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
    let spec = Spec::embedded();
    let clauses = spec.clauses().count();
    let defined = spec
        .clauses()
        .filter(|c| c.origin == Origin::ReferenceDefined)
        .count();
    let divergent = spec.divergent_clauses().count();
    println!(
        "suite: {clauses} clauses ({defined} reference-defined, {divergent} divergent), {} cases in the tables",
        spec.cases().len()
    );
    println!(
        "certify, median of {runs} runs, {} generated scenarios per property",
        config(Profile::Documented).cases
    );
    println!(
        "{:<11} {:>6} {:>6} {:>10} {:>12} {:>12}",
        "profile", "cases", "props", "generated", "in-process", "protocol"
    );
    for profile in [Profile::Documented, Profile::Upstream] {
        let reference = Reference::new(profile);
        let (inproc, report) = time(runs, &reference, profile);
        assert!(
            report.certified,
            "the reference must certify under {profile:?}"
        );
        let server = format!(
            "exec:{} serve-reference --profile {profile}",
            env!("CARGO_BIN_EXE_ge-conformance")
        );
        let handle = backends::open(&server, Duration::from_secs(60), profile)
            .expect("the reference server starts");
        let (protocol, over_pipe) = time(runs, handle.backend(), profile);
        assert!(
            over_pipe.certified,
            "the served reference must certify under {profile:?}"
        );
        let count = |kind: TrialKind| report.trials.iter().filter(|t| t.kind == kind).count();
        let props = count(TrialKind::Property);
        println!(
            "{:<11} {:>6} {:>6} {:>10} {:>10.3} s {:>10.3} s",
            profile.to_string(),
            count(TrialKind::Case),
            props,
            props as u64 * u64::from(report.meta.case_budget),
            inproc.as_secs_f64(),
            protocol.as_secs_f64(),
        );
    }
}
