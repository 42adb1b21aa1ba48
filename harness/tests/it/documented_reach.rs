//! Every documented clause is reachable at level `documented`: for each clause of origin
//! `documented`, some deliberately wrong backend that breaks it fails the default certification
//! (level `documented`, seed 0). The rows of `docs/faults.md` caught at level documented count;
//! the faults below cover the documented clauses those rows do not name, each the reference
//! with one rule of that clause broken. A clause that only permits (a MAY) cannot be broken and
//! is left out, saying so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ge_conformance::certify::{self, Config};
use ge_conformance::expectations::Date;
use ge_conformance::report::Outcome;
use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::options::{OptionsObservation, OptionsScenario};
use ge_spec::vocab::session::{SessionObservation, SessionScenario};
use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};
use ge_spec::{Answer, Backend, Capability, Level, OptionKey, Origin, Product, Spec};
use rstest::rstest;

/// One documented rule broken.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// A value of `key` at `level`, a level where the text says it takes effect, is not read.
    IgnoredAt(OptionKey, Level),
    /// `key`, which takes effect at the graph level only, takes effect at the session level.
    SessionCounts(OptionKey),
    /// The indexes of `key` are counted from 1: index `n` names the text's `n - 1`.
    CountedFromOne(OptionKey),
    /// The weight files go to a directory beneath the one `ge.externalWeightDir` names.
    DirBeneath,
    /// A `ge.externalWeightDir` alone (ge.externalWeight at 0) flushes the weights as mode 1.
    DirWithoutExternalWeight,
    /// The temporary directory is named `tmp_weight_<sessionid>_<pid>`.
    TmpNameSwapped,
    /// Batch copy on a graph of one user input (its one host input batch-copied).
    BatchOneInput,
    /// Batch copy is never used on `product`, a product the text lists.
    NoBatchOn(Product),
    /// Every valid transfer scenario is refused with one error and nothing planned.
    RefusesTransfers,
    /// Every valid memory scenario that lists outputs for reuse is refused with one error and
    /// nothing planned (a 96-byte listed output, 32-byte aligned as the text asks, included).
    RefusesListedOutputs,
    /// Every load that would write weights is refused with one error and nothing written.
    RefusesLoads,
    /// A fusion threshold of 0 is taken as not set: the default threshold fuses.
    ZeroMeansDefault,
    /// ge.featureBaseRefreshable at 1 makes the feature base of dynamic-shape graphs
    /// refreshable too.
    DynamicFollowsOption,
}

impl Fault {
    fn capability(self) -> Capability {
        match self {
            Fault::IgnoredAt(..) | Fault::SessionCounts(_) | Fault::CountedFromOne(_) => {
                Capability::Options
            }
            Fault::DirBeneath
            | Fault::DirWithoutExternalWeight
            | Fault::TmpNameSwapped
            | Fault::RefusesLoads => Capability::Weights,
            Fault::DynamicFollowsOption => Capability::Session,
            Fault::RefusesListedOutputs => Capability::Memory,
            Fault::BatchOneInput
            | Fault::NoBatchOn(_)
            | Fault::RefusesTransfers
            | Fault::ZeroMeansDefault => Capability::Transfer,
        }
    }
}

#[derive(Debug)]
struct Faulty(Fault);

fn one_based(value: &str) -> String {
    value
        .split(',')
        .map(|item| match item.parse::<u64>() {
            Ok(n) if n > 0 => (n - 1).to_string(),
            _ => item.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "documented-fault"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [self.0.capability()].into_iter().collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut s = scenario.clone();
        match self.0 {
            Fault::IgnoredAt(key, level) => {
                s.options.at_mut(level).remove(key.as_str());
            }
            Fault::SessionCounts(key) => {
                if let Some(v) = s.options.session.remove(key.as_str()) {
                    s.options.graph.entry(key.as_str().to_owned()).or_insert(v);
                }
            }
            Fault::CountedFromOne(key) => {
                if let Some(v) = s.options.graph.get_mut(key.as_str()) {
                    *v = one_based(v);
                }
            }
            _ => {}
        }
        let mut o = Reference.options(&s)?;
        o.canonicalize();
        Ok(o)
    }

    fn transfer(&self, scenario: &TransferScenario) -> Answer<TransferObservation> {
        let mut s = scenario.clone();
        if let Fault::ZeroMeansDefault = self.0 {
            for level in Level::ALL {
                let map = s.options.at_mut(level);
                if map
                    .get(OptionKey::InputFusionSize.as_str())
                    .is_some_and(|v| v == "0")
                {
                    map.remove(OptionKey::InputFusionSize.as_str());
                }
            }
        }
        let mut o = Reference.transfer(&s)?;
        match self.0 {
            Fault::BatchOneInput if scenario.inputs.len() == 1 && o.direct.len() == 1 => {
                o.batched = std::mem::take(&mut o.direct);
            }
            Fault::NoBatchOn(p) if scenario.product == p => {
                o.direct.append(&mut o.batched);
            }
            Fault::RefusesTransfers if o.errors.is_empty() => {
                o = TransferObservation::default();
                o.errors
                    .push(ge_spec::Diagnostic::new("", "cannot plan this transfer"));
            }
            _ => {}
        }
        o.canonicalize();
        Ok(o)
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        let o = Reference.memory(scenario)?;
        let listed = Level::ALL.iter().any(|&l| {
            scenario
                .options
                .at(l)
                .contains_key(OptionKey::OutputReuseMemIndexes.as_str())
        });
        if let (Fault::RefusesListedOutputs, true, true) = (self.0, listed, o.errors.is_empty()) {
            let mut refused = MemoryObservation::default();
            refused
                .errors
                .push(ge_spec::Diagnostic::new("", "cannot plan this graph"));
            return Ok(refused);
        }
        Ok(o)
    }

    fn session(&self, scenario: &SessionScenario) -> Answer<SessionObservation> {
        let mut o = Reference.session(scenario)?;
        let key = OptionKey::FeatureBaseRefreshable.as_str();
        let on = Level::ALL
            .iter()
            .any(|&l| scenario.options.at(l).get(key).is_some_and(|v| v == "1"));
        if let (Fault::DynamicFollowsOption, true) = (self.0, on) {
            // The refreshes the reference refuses for the shape alone (FBR-014) go through.
            let steps: BTreeSet<u32> = o
                .errors
                .iter()
                .filter(|d| d.clause == "FBR-014")
                .filter_map(|d| d.subject.step)
                .collect();
            o.errors.retain(|d| d.clause != "FBR-014");
            for r in &mut o.refreshes {
                if steps.contains(&r.step) {
                    r.ok = true;
                }
            }
        }
        Ok(o)
    }

    fn weights(&self, scenario: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        let mut s = scenario.clone();
        let dir = OptionKey::ExternalWeightDir.as_str();
        let mode = OptionKey::ExternalWeight.as_str();
        match self.0 {
            Fault::DirBeneath => {
                for level in Level::ALL {
                    if let Some(v) = s.options.at_mut(level).get_mut(dir) {
                        if !v.is_empty() {
                            v.push_str("/w");
                        }
                    }
                }
            }
            Fault::DirWithoutExternalWeight => {
                let set = Level::ALL
                    .iter()
                    .any(|&l| s.options.at(l).get(dir).is_some_and(|v| !v.is_empty()));
                let off = Level::ALL
                    .iter()
                    .all(|&l| s.options.at(l).get(mode).is_none_or(|v| v == "0"));
                if set && off {
                    for level in Level::ALL {
                        s.options.at_mut(level).remove(mode);
                    }
                    s.options.session.insert(mode.to_owned(), "1".to_owned());
                }
            }
            Fault::TmpNameSwapped => {
                if let Ok(pid) = u32::try_from(s.session_id) {
                    s.session_id = u64::from(s.pid);
                    s.pid = pid;
                }
            }
            Fault::RefusesLoads => {
                let writes = [&s.options.session, &s.options.global]
                    .iter()
                    .find_map(|m| m.get(mode))
                    .is_some_and(|v| v == "1" || v == "2");
                if writes && !s.constants.is_empty() {
                    let mut refused = WeightsObservation::default();
                    refused
                        .errors
                        .push(ge_spec::Diagnostic::new("", "cannot load this model"));
                    return Ok(refused);
                }
            }
            _ => {}
        }
        Reference.weights(&s, sandbox)
    }
}

/// The documented clause each fault breaks.
#[rstest]
#[case::drm_ignored_at_graph_level(
    Fault::IgnoredAt(OptionKey::DisableReuseMemory, Level::Graph),
    "DRM-002"
)]
#[case::fbr_ignored_at_session_level(
    Fault::IgnoredAt(OptionKey::FeatureBaseRefreshable, Level::Session),
    "FBR-002"
)]
#[case::ibc_ignored_at_session_level(
    Fault::IgnoredAt(OptionKey::InputBatchCpy, Level::Session),
    "IBC-002"
)]
#[case::ifs_ignored_at_global_level(
    Fault::IgnoredAt(OptionKey::InputFusionSize, Level::Global),
    "IFS-002"
)]
#[case::rzc_ignored_at_graph_level(
    Fault::IgnoredAt(OptionKey::ReuseZeroCopyMemory, Level::Graph),
    "RZC-002"
)]
#[case::ori_session_level_counts(
    Fault::SessionCounts(OptionKey::OutputReuseInputMemIndexes),
    "ORI-002"
)]
#[case::irm_counted_from_one(Fault::CountedFromOne(OptionKey::InputReuseMemIndexes), "IRM-001")]
#[case::orm_counted_from_one(Fault::CountedFromOne(OptionKey::OutputReuseMemIndexes), "ORM-001")]
#[case::ewd_dir_beneath(Fault::DirBeneath, "EWD-001")]
#[case::ewd_dir_without_external_weight(Fault::DirWithoutExternalWeight, "EWD-003")]
#[case::exw_tmp_name_swapped(Fault::TmpNameSwapped, "EXW-017")]
#[case::ibc_batch_one_input(Fault::BatchOneInput, "IBC-003")]
#[case::ibc_no_batch_on_950dt(Fault::NoBatchOn(Product::Ascend950Dt), "IBC-011")]
#[case::ibc_no_batch_on_a2_inference(Fault::NoBatchOn(Product::AtlasA2Inference), "IBC-011")]
#[case::ifs_refuses_transfers(Fault::RefusesTransfers, "IFS-013")]
#[case::orm_refuses_listed_outputs(Fault::RefusesListedOutputs, "ORM-013")]
#[case::exw_refuses_loads(Fault::RefusesLoads, "EXW-011")]
#[case::ifs_zero_means_default(Fault::ZeroMeansDefault, "IFS-014")]
#[case::fbr_dynamic_follows_option(Fault::DynamicFollowsOption, "FBR-003")]
fn a_fault_breaking_a_documented_clause_fails_at_level_documented(
    #[case] fault: Fault,
    #[case] clause: &str,
) {
    let spec = Spec::embedded();
    assert_eq!(
        spec.clause(clause).map(|c| c.origin),
        Some(Origin::Documented),
        "{clause} is a documented clause"
    );
    let cfg = Config {
        today: Date(2026, 12, 1),
        ..Config::default()
    };
    let report = certify::certify(&Faulty(fault), &cfg, &mut |_, _, _| {}).expect("a run");
    let failed: BTreeMap<&str, &[String]> = report
        .trials
        .iter()
        .filter(|t| t.outcome == Outcome::Fail)
        .map(|t| (t.name.as_str(), t.broken.as_slice()))
        .collect();
    assert!(
        !report.certified && !failed.is_empty(),
        "{fault:?} breaks {clause} and must fail at level documented"
    );
    println!("{fault:?} ({clause}) fails: {failed:?}");
}

/// The documented clauses the rows above cover, read back from this file (an attribute rustfmt
/// wrapped over several lines is joined first).
fn rows_here() -> BTreeSet<String> {
    let text = include_str!("documented_reach.rs");
    let mut out = BTreeSet::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(first) = line.trim().strip_prefix("#[case::") else {
            continue;
        };
        let mut attr = first.to_owned();
        while !attr.ends_with(")]") {
            let Some(more) = lines.next() else { break };
            attr.push_str(more.trim());
        }
        if let Some(clause) = attr.rsplit('"').nth(1) {
            out.insert(clause.to_owned());
        }
    }
    out
}

/// The clauses of `docs/faults.md` rows caught at level documented.
fn rows_of_the_fault_table() -> BTreeSet<String> {
    let text = include_str!("../../../docs/faults.md");
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() > 5 && cells[cells.len() - 2] == "documented" {
            let caught = cells[cells.len() - 3].trim_matches('`');
            out.extend(caught.split(", ").map(|c| c.trim_matches('`').to_owned()));
        }
    }
    out
}

#[test]
fn every_documented_clause_has_a_fault_that_fails_at_level_documented() {
    let spec = Spec::embedded();
    let covered: BTreeSet<String> = rows_here()
        .union(&rows_of_the_fault_table())
        .cloned()
        .collect();
    let missing: Vec<&str> = spec
        .clauses()
        .filter(|c| c.origin == Origin::Documented)
        // A MAY clause only permits: there is nothing an engine can do that breaks it.
        .filter(|c| !c.permits_only())
        .map(|c| c.id.as_str())
        .filter(|id| !covered.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "documented clauses no fault breaks at level documented: {missing:?}"
    );
}
