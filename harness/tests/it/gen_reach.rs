//! The generators' reach follows the tables: at the default budget, the random draws of every
//! seed set the fusion threshold (the one integer range of the tables) to each of its bounds as
//! the options table states them. A generator left with a stale bound fails here, where
//! otherwise it would only lose reach, silently.

use std::collections::BTreeSet;

use ge_conformance::certify::{generator, seed_rng, DEFAULT_CASES};
use ge_spec::{Capability, Level, OptionKey, Spec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};

#[test]
fn every_seed_draws_each_bound_of_the_threshold() {
    let key = OptionKey::InputFusionSize;
    let row = Spec::embedded().option(key);
    let (min, max) = (row.min.unwrap(), row.max.unwrap());
    let default = row.default_number().unwrap();
    let wanted: Vec<String> = [min, default, max, max + 1]
        .iter()
        .map(u64::to_string)
        .collect();
    for capability in [Capability::Options, Capability::Transfer] {
        let strategy = generator(capability).expect("a generator");
        for seed in 0..8 {
            let mut runner =
                TestRunner::new_with_rng(Config::default(), seed_rng(seed, capability));
            let mut seen = BTreeSet::new();
            for _ in 0..DEFAULT_CASES {
                let scenario = strategy.new_tree(&mut runner).expect("a draw").current();
                for level in Level::ALL {
                    seen.extend(scenario.options().at(level).get(key.as_str()).cloned());
                }
            }
            let missing: Vec<&String> = wanted.iter().filter(|w| !seen.contains(*w)).collect();
            assert!(
                missing.is_empty(),
                "property/{capability} at seed {seed} never sets {key} to {missing:?} in {DEFAULT_CASES} draws"
            );
        }
    }
}
