//! The allowed-answer generator, run as a property: engines that each combine a random set of
//! the alternatives `spec/tables/alternatives.toml` lists (`ge_conformance::allowed`) answer
//! the boundary catalogue, the case tables' scenarios and generated ones, and no answer may
//! fail at level `documented`. Whole certifications of a few combinations judge the case path
//! (tables and twins) too. A failure names the engine's picks and the scenario, so it replays.

use ge_conformance::allowed::{Engine, Rewrite};
use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::gen;
use ge_conformance::judging::Judging;
use ge_conformance::report::Outcome;
use ge_spec::{Capability, Profile, Scenario, Spec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
use rstest::rstest;

/// How many answers each capability's property judges at least.
const ANSWERS: usize = 10_000;

/// splitmix64: the picks of engine `k` of a run.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The engine of combination `k`: the first two are no choice made otherwise and every choice
/// at once, the others a random half of the alternatives each.
fn engine(k: u64) -> Engine {
    match k {
        0 => Engine::from_bits(0),
        1 => Engine::from_bits(u64::MAX),
        k => Engine::from_bits(mix(k)),
    }
}

/// The fixed scenarios of `capability`: its boundary catalogue and its case tables' scenarios.
fn fixed(capability: Capability) -> Vec<Scenario> {
    let mut out = gen::boundary_scenarios(capability);
    out.extend(
        Spec::embedded()
            .cases_in(Profile::Documented)
            .filter(|c| c.capability() == capability)
            // The built cases of the caps (65,536 constants, 100,000 events) cost seconds each
            // and choose nothing an alternative changes.
            .filter(|c| !ge_spec::built::TABLES.contains(&c.table.as_str()))
            .map(|c| c.case.scenario.clone()),
    );
    out
}

#[rstest]
#[case::options(Capability::Options)]
#[case::transfer(Capability::Transfer)]
#[case::memory(Capability::Memory)]
#[case::session(Capability::Session)]
#[case::weights(Capability::Weights)]
fn combined_allowed_answers_never_fail_at_documented(#[case] capability: Capability) {
    let judging = Judging::DEFAULT;
    let fixed = fixed(capability);
    let strategy = gen::scenarios(capability).expect("a generator");
    let mut rng_bytes = [0u8; 32];
    rng_bytes[0] = capability as u8;
    let mut runner = TestRunner::new_with_rng(
        PtConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &rng_bytes),
    );
    let mut judged = 0usize;
    let mut failures = Vec::new();
    let mut k = 0u64;
    while judged < ANSWERS {
        let engine = engine(k);
        k += 1;
        let generated: Vec<Scenario> = (0..64)
            .map(|_| {
                strategy
                    .new_tree(&mut runner)
                    .expect("a scenario")
                    .current()
            })
            .collect();
        // Every engine answers the generated scenarios; the fixed ones go round the engines.
        let share = fixed.len().div_ceil(8).max(1);
        let start = (k as usize * share) % fixed.len().max(1);
        let scenarios = generated.iter().chain(
            fixed
                .iter()
                .cycle()
                .skip(start)
                .take(share.min(fixed.len())),
        );
        for scenario in scenarios {
            judged += 1;
            for p in certify::compare(&judging, &engine, scenario) {
                if !p.deviation && failures.len() < 5 {
                    failures.push(format!(
                        "{}: {:?} {}\n  scenario: {}",
                        engine_name(&engine),
                        p.clauses,
                        p.message,
                        serde_json::to_string(scenario).unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{judged} answers of {k} engines; failures at documented:\n{}",
        failures.join("\n")
    );
}

fn engine_name(engine: &Engine) -> String {
    ge_spec::Backend::name(engine).to_owned()
}

/// Whole certifications: the cases (tables, patterns, twins) and the properties at the
/// default budget, for the engine of every choice at once and a few random combinations.
#[rstest]
#[case::every_choice(1)]
#[case::combination_2(2)]
#[case::combination_3(3)]
#[case::combination_4(4)]
fn a_combination_certifies_at_documented(#[case] k: u64) {
    let engine = engine(k);
    let cfg = Config {
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    let report = certify::certify(&engine, &cfg, &mut |_, _, _| {}).expect("a run");
    let failed: Vec<String> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
        .collect();
    // What a vendor reads names values as values, never as Rust's `Some(..)` or `None`.
    for t in &report.trials {
        let message = t.message.as_deref().unwrap_or_default();
        assert!(
            !message.contains("Some(") && !message.contains("None"),
            "{}: {message}",
            t.name
        );
    }
    assert!(
        failed.is_empty() && report.certified,
        "{} must certify at level documented; failed:\n{}",
        engine_name(&engine),
        failed.join("\n")
    );
}

#[test]
fn every_alternative_is_picked_by_some_combination_and_left_by_another() {
    for r in Rewrite::ALL {
        let picked = (0..64).filter(|&k| engine(k).picks().contains(&r)).count();
        assert!(
            picked > 8 && picked < 56,
            "{} picked {picked} of 64",
            r.id()
        );
    }
}
