//! Benchmark of the reference memory planner: 10^4, 10^5 and 10^6 intermediate tensors with
//! random sizes and short random lifetimes. Reports the median time, the time per n·log2(n) (flat
//! when the planner grows no faster than n log n) and the peak divided by the lower bound; then
//! that quotient's mean and worst over 12 workloads at each of 300 to 30,000 tensors.
//!
//! Run with `cargo bench -p ge-reference --bench memory`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ge_reference::memory::{lower_bound, observe};
use ge_spec::vocab::memory::{MemoryScenario, Role, Tensor};
use ge_spec::Profile;

/// SplitMix64: a fixed-seed generator, so every run plans the same workloads.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` tensors over `n / 4` steps, each live for 1 to 16 steps, 32 B to 128 KiB in 32-byte units.
fn workload(n: u32, seed: u64) -> MemoryScenario {
    let mut state = seed;
    let steps = u64::from((n / 4).max(1));
    let tensors = (0..n)
        .map(|i| {
            let first = (next(&mut state) % steps) as u32;
            let len = (next(&mut state) % 16) as u32;
            Tensor {
                name: format!("t{i}"),
                size: 32 * (1 + next(&mut state) % 4096),
                first,
                last: first + len,
                role: Role::Intermediate,
            }
        })
        .collect();
    MemoryScenario {
        tensors,
        ..MemoryScenario::default()
    }
}

fn main() {
    println!(
        "{:>9} {:>5} {:>12} {:>16} {:>14}",
        "tensors", "reps", "median", "ns / n·log2(n)", "peak / bound"
    );
    for (n, reps) in [(10_000u32, 9usize), (100_000, 5), (1_000_000, 3)] {
        let scenario = workload(n, 0x5EED ^ u64::from(n));
        let bound = lower_bound(&scenario);
        let mut times: Vec<Duration> = Vec::with_capacity(reps);
        let mut peak = 0;
        for _ in 0..reps {
            let start = Instant::now();
            let obs = black_box(observe(Profile::Documented, black_box(&scenario)));
            times.push(start.elapsed());
            assert!(obs.errors.is_empty(), "{:?}", obs.errors);
            peak = obs.peak_bytes;
        }
        times.sort();
        let median = times[reps / 2];
        let nlogn = f64::from(n) * f64::from(n).log2();
        println!(
            "{n:>9} {reps:>5} {:>10.1}ms {:>16.1} {:>14.4}",
            median.as_secs_f64() * 1e3,
            median.as_nanos() as f64 / nlogn,
            peak as f64 / bound as f64
        );
    }
    println!();
    println!(
        "{:>9} {:>9} {:>15} {:>12}",
        "tensors", "workloads", "mean peak/bound", "worst"
    );
    for n in [300u32, 3_000, 10_000, 30_000] {
        let quotients: Vec<f64> = (0..12u64)
            .map(|seed| {
                let scenario = workload(n, seed * 7919 + 1);
                let obs = observe(Profile::Documented, &scenario);
                assert!(obs.errors.is_empty(), "{:?}", obs.errors);
                obs.peak_bytes as f64 / lower_bound(&scenario) as f64
            })
            .collect();
        let mean = quotients.iter().sum::<f64>() / quotients.len() as f64;
        let worst = quotients.iter().copied().fold(1.0, f64::max);
        println!("{n:>9} {:>9} {mean:>15.4} {worst:>12.4}", quotients.len());
    }
}
