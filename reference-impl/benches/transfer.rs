//! Scaling benchmark of the reference transfer planner: plans 10^4, 10^5 and 10^6 inputs and
//! prints the median time per input at each size; a linear planner keeps that figure flat
//! (apart from cache effects: 10^6 inputs no longer fit in the caches).
//!
//! Run with `cargo bench -p ge-reference --bench transfer`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ge_reference::transfer::plan_observation;
use ge_spec::vocab::transfer::{Placement, TransferInput, TransferScenario};
use ge_spec::{OptionMaps, Product, Profile};

/// SplitMix64: a tiny fixed-seed generator, so every run plans the same inputs.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` inputs in index order: half within the 64 KiB threshold, half above it up to 1 MiB,
/// one in ten already on the device; batch copy on, on a listed product, asynchronous run.
fn scenario(n: u32, seed: u64) -> TransferScenario {
    let mut rng = SplitMix64(seed);
    let inputs = (0..n)
        .map(|index| {
            let r = rng.next();
            let size = if r & 1 == 0 {
                (r >> 8) % 65_537
            } else {
                65_537 + (r >> 8) % (1 << 20)
            };
            let placement = if (r >> 4).is_multiple_of(10) {
                Placement::Device
            } else {
                Placement::Host
            };
            TransferInput {
                index,
                size,
                placement,
            }
        })
        .collect();
    let mut options = OptionMaps::default();
    options
        .session
        .insert("ge.exec.input_fusion_size".into(), "65536".into());
    options
        .session
        .insert("ge.inputBatchCpy".into(), "1".into());
    TransferScenario {
        options,
        product: Product::AtlasA2Training,
        inputs,
        ..TransferScenario::default()
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() {
    // `--once N`: plan one scenario of N inputs once, for an instruction count with
    // `valgrind --tool=callgrind --toggle-collect='*plan_observation*'` (repeatable, unlike time).
    let args: Vec<String> = std::env::args().collect();
    if let Some(n) = args
        .iter()
        .position(|a| a == "--once")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<u32>().ok())
    {
        let s = scenario(n, 0x5eed_0000 + u64::from(n));
        // Load the embedded spec tables first, so the count is the planner's alone.
        black_box(ge_spec::Spec::embedded());
        black_box(plan_observation(Profile::Documented, black_box(&s)));
        return;
    }
    const REPETITIONS: usize = 11;
    // Every sample plans 10^6 inputs in all (100 plans of 10^4, 10 of 10^5, 1 of 10^6), so the
    // samples last alike and suffer alike from whatever else the machine runs.
    const INPUTS_PER_SAMPLE: u32 = 1_000_000;
    println!("transfer planner: median of {REPETITIONS} samples of {INPUTS_PER_SAMPLE} planned inputs, fixed seed");
    println!(
        "{:>10} {:>8} {:>14} {:>14}",
        "inputs", "plans", "median sample", "ns/input"
    );
    let mut per_input = Vec::new();
    for n in [10_000u32, 100_000, 1_000_000] {
        let s = scenario(n, 0x5eed_0000 + u64::from(n));
        let plans = INPUTS_PER_SAMPLE / n;
        // One warm-up plan, then the measured samples.
        black_box(plan_observation(Profile::Documented, black_box(&s)));
        let samples: Vec<Duration> = (0..REPETITIONS)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..plans {
                    black_box(plan_observation(Profile::Documented, black_box(&s)));
                }
                start.elapsed()
            })
            .collect();
        let m = median(samples);
        let ns = m.as_nanos() as f64 / f64::from(INPUTS_PER_SAMPLE);
        per_input.push(ns);
        println!("{n:>10} {plans:>8} {:>14.3?} {ns:>14.2}", m);
    }
    let (first, last) = (per_input[0], per_input[per_input.len() - 1]);
    println!(
        "time per input at 10^6 / at 10^4: {:.2} (1.00 is perfectly linear)",
        last / first
    );
}
