//! Wording is never judged: an engine that says everything the reference says, in other words,
//! is certified at both levels, passes the fuzz differential, and a real difference is never
//! reported as a difference of `message`.

use std::collections::BTreeSet;
use std::path::Path;

use ge_conformance::certify::{certify, compare, Config};
use ge_conformance::judging::Judging;
use ge_conformance::report::Standing;
use ge_reference::Reference;
use ge_spec::vocab::{
    Capability, MemoryObservation, MemoryScenario, OptionsObservation, OptionsScenario,
    SessionObservation, SessionScenario, TransferObservation, TransferScenario, WeightsObservation,
    WeightsScenario,
};
use ge_spec::{Answer, Backend, Conformance, Profile, Scenario};

/// Every `message` in `value`, at any depth, replaced by other words.
fn reword_value(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "message" && v.is_string() {
                    *v = serde_json::Value::String("the engine objects, in its own words".into());
                } else {
                    reword_value(v);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(reword_value),
        _ => {}
    }
}

fn reword<T: serde::Serialize + serde::de::DeserializeOwned>(t: T) -> T {
    let mut v = serde_json::to_value(&t).expect("an observation serialises");
    reword_value(&mut v);
    serde_json::from_value(v).expect("a reworded observation deserialises")
}

/// The reference in other words; with `drop_warning`, it also leaves out its first options
/// warning, a real difference.
struct Reworded {
    drop_warning: bool,
}

impl Backend for Reworded {
    fn name(&self) -> &str {
        "reworded"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Reference.capabilities()
    }

    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = reword(Reference.options(s)?);
        if self.drop_warning && !o.warnings.is_empty() {
            o.warnings.remove(0);
        }
        Ok(o)
    }

    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        Ok(reword(Reference.transfer(s)?))
    }

    fn memory(&self, s: &MemoryScenario) -> Answer<MemoryObservation> {
        Ok(reword(Reference.memory(s)?))
    }

    fn session(&self, s: &SessionScenario) -> Answer<SessionObservation> {
        Ok(reword(Reference.session(s)?))
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        Ok(reword(Reference.weights(s, sandbox)?))
    }
}

#[test]
fn other_words_are_certified_at_both_levels() {
    for level in [Conformance::Documented, Conformance::Strict] {
        let cfg = Config {
            judging: Judging::new(Profile::Documented, level),
            cases: 64,
            ..Config::default()
        };
        let backend = Reworded {
            drop_warning: false,
        };
        let report = certify(&backend, &cfg, &mut |_, _, _| {}).expect("a run");
        let not_passed: Vec<String> = report
            .trials
            .iter()
            .filter(|t| t.outcome != ge_conformance::report::Outcome::Pass)
            .map(|t| format!("{}: {:?}", t.name, t.message))
            .collect();
        assert!(not_passed.is_empty(), "{}", not_passed.join("\n"));
        assert_eq!(report.verdict, Standing::Certified, "{level}");
    }
}

#[test]
fn other_words_are_no_fuzz_finding() {
    // Deterministic pseudo-random inputs for the differential target.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let backend = Reworded {
        drop_warning: false,
    };
    let mut judged = 0;
    for len in 0..1500usize {
        let data: Vec<u8> = (0..(len % 300))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        // Panics, naming the clause, on any failure.
        let v = ge_conformance::fuzz::differential(&Judging::DEFAULT.strict(), &backend, &data);
        judged += usize::from(v == ge_conformance::fuzz::Verdict::Keep);
    }
    assert!(judged > 100, "only {judged} inputs made scenarios");
}

#[test]
fn a_real_difference_is_never_shown_as_one_of_message() {
    // `ge.exec.atomicCleanPolicy` at global level: a warning, which the backend leaves out.
    let s: Scenario = serde_json::from_str(
        r#"{"capability":"options","options":{"global":{"ge.exec.atomicCleanPolicy":"1"}}}"#,
    )
    .expect("a scenario");
    let backend = Reworded { drop_warning: true };
    let problems = compare(&Judging::DEFAULT.strict(), &backend, &s);
    assert!(!problems.is_empty(), "the missing warning is found");
    for p in &problems {
        let shown = p.to_string();
        assert!(!shown.contains("message"), "{shown}");
        assert!(!shown.contains("own words"), "{shown}");
    }
}
