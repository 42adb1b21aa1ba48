//! A verdict that depends on the seed is not a verdict. Faults that only a property catches (no
//! table case meets them) must be caught at every seed: the boundary catalogue, judged before
//! any random scenario and the same at every seed, must reach them. Each fault here is caught by
//! its property with one random scenario only, at seeds 0 to 19, at level `documented`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::report::Outcome;
use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::options::{OptionsObservation, OptionsScenario};
use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::{Answer, Backend, Capability, OptionKey};
use rstest::rstest;

/// The one thing a faulty backend gets wrong, now and then.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// The fusion planner leaves the last fused input out on every 50th call.
    EveryFiftiethFusion,
    /// The input and output reuse lists share one duplicate check: an index named in both is
    /// taken for a repeated index, and both lists are rejected.
    SharedDuplicateCheck,
    /// An input listed for reuse wins over its alias pair: the pair is dropped.
    ListedInputBeatsAlias,
}

#[derive(Debug)]
struct Faulty {
    fault: Fault,
    calls: AtomicU64,
}

fn indexes(v: Option<&String>) -> BTreeSet<&str> {
    v.map(|v| v.split(',').collect()).unwrap_or_default()
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "now-and-then"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        let c = match self.fault {
            Fault::EveryFiftiethFusion => Capability::Transfer,
            Fault::SharedDuplicateCheck => Capability::Options,
            Fault::ListedInputBeatsAlias => Capability::Memory,
        };
        [c].into_iter().collect()
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        let mut o = Reference.transfer(scenario)?;
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(50) {
            if let Some(last) = o.fused.pop() {
                let size = scenario
                    .inputs
                    .iter()
                    .find(|i| i.index == last)
                    .map_or(0, |i| i.size);
                o.fused_bytes = o.fused_bytes.saturating_sub(size);
                o.direct.push(last);
                o.canonicalize();
            }
        }
        Ok(o)
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = Reference.options(scenario)?;
        let graph = &scenario.options.graph;
        let ins = indexes(graph.get(OptionKey::InputReuseMemIndexes.as_str()));
        let outs = indexes(graph.get(OptionKey::OutputReuseMemIndexes.as_str()));
        if ins.intersection(&outs).next().is_some() {
            for key in [
                OptionKey::InputReuseMemIndexes,
                OptionKey::OutputReuseMemIndexes,
            ] {
                if o.effective.remove(key.as_str()).is_some() {
                    o.rejected.push(key.as_str().to_owned());
                    o.errors
                        .push(ge_spec::Diagnostic::new("", "index repeated").key(key.as_str()));
                }
            }
            o.rejected.sort();
        }
        Ok(o)
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        let graph = &scenario.options.graph;
        let listed = indexes(graph.get(OptionKey::InputReuseMemIndexes.as_str()));
        let key = OptionKey::OutputReuseInputMemIndexes.as_str();
        let mut s = scenario.clone();
        if let Some(pairs) = graph.get(key) {
            let kept: Vec<&str> = pairs
                .split('|')
                .filter(|p| !p.split(',').next().is_some_and(|i| listed.contains(i)))
                .collect();
            if kept.is_empty() {
                s.options.graph.remove(key);
            } else {
                s.options.graph.insert(key.to_owned(), kept.join("|"));
            }
        }
        Reference.memory(&s)
    }
}

#[rstest]
#[case::every_fiftieth_fusion(Fault::EveryFiftiethFusion)]
#[case::shared_duplicate_check(Fault::SharedDuplicateCheck)]
#[case::listed_input_beats_alias(Fault::ListedInputBeatsAlias)]
fn a_property_only_fault_is_caught_at_every_seed(#[case] fault: Fault) {
    for seed in 0..20 {
        let backend = Faulty {
            fault,
            calls: AtomicU64::new(0),
        };
        let cfg = Config {
            seed,
            cases: 1,
            filter: Some("property/".into()),
            today: Date(2026, 12, 1),
            ..Config::default()
        };
        let report = certify::certify(&backend, &cfg, &mut |_, _, _| {}).expect("a run");
        let failed: Vec<&str> = report
            .trials
            .iter()
            .filter(|t| t.outcome == Outcome::Fail)
            .flat_map(|t| t.broken.iter().map(String::as_str))
            .collect();
        assert!(
            !failed.is_empty(),
            "{fault:?} escapes the property at seed {seed}: the boundary catalogue must reach it"
        );
        if seed == 0 {
            println!("{fault:?}: caught at level documented on {failed:?}");
        }
    }
}
