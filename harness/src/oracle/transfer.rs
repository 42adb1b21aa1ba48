//! The transfer oracle: the invariants every transfer observation must hold, whoever produced it.
//! Each violation names the clause it breaks (IFS-0xx, IBC-0xx, TRF-0xx).
//!
//! The option values in force come from the oracle's own reading of the tables
//! ([`super::options`]); its errors and warnings are the ones the plan must carry (TRF-004).

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::tables::OptionSpec;
use ge_spec::vocab::transfer::{Placement, TransferObservation, TransferScenario};
use ge_spec::{Diagnostic, OptionKey, Profile, RunMode, ShapeKind, Spec, Subject};

use super::diagnostics::{self, Expected};
use super::options::{Context, Reading, Values};
use super::Violation;
use crate::judging::Judging;

mod upstream;

/// Which group of a plan an input was put in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Fused,
    Direct,
    Batched,
    OnDevice,
}

impl Group {
    fn name(self) -> &'static str {
        match self {
            Group::Fused => "fused",
            Group::Direct => "direct",
            Group::Batched => "batched",
            Group::OnDevice => "on_device",
        }
    }
}

fn list(indexes: &[u32]) -> String {
    let shown: Vec<String> = indexes.iter().take(8).map(u32::to_string).collect();
    if indexes.len() > 8 {
        format!("[{}, ... ({} in all)]", shown.join(", "), indexes.len())
    } else {
        format!("[{}]", shown.join(", "))
    }
}

fn restrictions_met(row: &OptionSpec, run_mode: RunMode, shape: ShapeKind, inputs: usize) -> bool {
    let r = &row.restrictions;
    r.run_mode.is_none_or(|m| m == run_mode)
        && r.shape.is_none_or(|s| s == shape)
        && r.min_inputs
            .is_none_or(|min| u64::try_from(inputs).is_ok_and(|n| n >= u64::from(min)))
}

/// The option context of a transfer scenario (TRF-004): the graph's input count, device inputs
/// included (IBC-014), its shape, the run mode and the product; the output count is unknown.
pub fn context(scenario: &TransferScenario) -> Context {
    Context {
        inputs: u32::try_from(scenario.inputs.len()).ok(),
        outputs: None,
        shape: scenario.shape,
        run_mode: scenario.run_mode,
        product: scenario.product,
    }
}

/// The options a transfer plan acts on.
const KEYS: [OptionKey; 2] = [OptionKey::InputFusionSize, OptionKey::InputBatchCpy];

/// Judges a transfer observation under `judging`.
pub fn judge(
    judging: &Judging,
    scenario: &TransferScenario,
    observation: &TransferObservation,
) -> Vec<Violation> {
    let reading = Reading::new(judging.profile, &scenario.options, context(scenario));
    let o = observation;
    let planned = !(o.fused.is_empty()
        && o.direct.is_empty()
        && o.batched.is_empty()
        && o.on_device.is_empty());
    super::under_readings(judging, &reading, &KEYS, planned, |values, rejected| {
        judge_under(
            judging.profile,
            scenario,
            observation,
            &reading,
            values,
            rejected,
        )
    })
}

/// Judges the observation with the options read as `values` (`rejected`: some option is).
fn judge_under(
    profile: Profile,
    scenario: &TransferScenario,
    observation: &TransferObservation,
    reading: &Reading,
    values: &Values,
    rejected: bool,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let obs = observation;
    let spec = Spec::embedded();
    let count = u32::try_from(scenario.inputs.len()).ok();

    // TRF-002: one error per index used more than once; TRF-004: the options' errors when one
    // is rejected.
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for input in &scenario.inputs {
        *seen.entry(input.index).or_default() += 1;
    }
    let duplicates: Vec<u32> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(i, _)| *i)
        .collect();
    let mut wanted_errors: Vec<Expected> = if rejected {
        reading.expected_errors()
    } else {
        Vec::new()
    };
    if count.is_none() {
        wanted_errors.push(Expected::exact(
            &Diagnostic::new("TRF-002", "").subject(Subject::input(u32::MAX)),
        ));
    }
    for &i in &duplicates {
        wanted_errors.push(Expected::exact(
            &Diagnostic::new("TRF-002", "").subject(Subject::input(i)),
        ));
    }
    out.extend(diagnostics::compare(
        spec,
        "errors",
        &wanted_errors,
        &obs.errors,
        false,
    ));
    let mut warnings = reading.expected_warnings();
    let compare_warnings =
        |wanted: &[Expected]| diagnostics::compare(spec, "warnings", wanted, &obs.warnings, false);

    // TRF-001: nothing is planned when there are errors.
    if !wanted_errors.is_empty() || !obs.errors.is_empty() {
        out.extend(compare_warnings(&warnings));
        if !(obs.fused.is_empty()
            && obs.direct.is_empty()
            && obs.batched.is_empty()
            && obs.on_device.is_empty()
            && obs.fused_bytes == 0)
        {
            out.push(Violation::new(
                "TRF-001",
                "the observation carries errors but plans inputs anyway",
            ));
        }
        return out;
    }

    // TRF-001: a partition of the scenario's inputs.
    let sizes: BTreeMap<u32, (u64, Placement)> = scenario
        .inputs
        .iter()
        .map(|i| (i.index, (i.size, i.placement)))
        .collect();
    let mut groups_of: BTreeMap<u32, Vec<Group>> = BTreeMap::new();
    for (group, indexes) in [
        (Group::Fused, &obs.fused),
        (Group::Direct, &obs.direct),
        (Group::Batched, &obs.batched),
        (Group::OnDevice, &obs.on_device),
    ] {
        for &index in indexes {
            groups_of.entry(index).or_default().push(group);
        }
    }
    for (index, groups) in &groups_of {
        if !sizes.contains_key(index) {
            out.push(Violation::new(
                "TRF-001",
                format!("input {index} is planned but the scenario has no such input"),
            ));
        } else if groups.len() > 1 {
            let names: Vec<&str> = groups.iter().map(|g| g.name()).collect();
            let clause = if groups.contains(&Group::Fused) && groups.contains(&Group::Batched) {
                "IBC-012"
            } else {
                "TRF-001"
            };
            out.push(Violation::new(
                clause,
                format!(
                    "input {index} appears {} times: in {}",
                    groups.len(),
                    names.join(", ")
                ),
            ));
        }
    }
    let missing: Vec<u32> = sizes
        .keys()
        .filter(|i| !groups_of.contains_key(i))
        .copied()
        .collect();
    if !missing.is_empty() {
        out.push(Violation::new(
            "TRF-001",
            format!("inputs {} are in no group of the plan", list(&missing)),
        ));
    }

    // TRF-003: exactly the device inputs are on_device, and nothing else moves them.
    let device: BTreeSet<u32> = sizes
        .iter()
        .filter(|(_, (_, p))| *p == Placement::Device)
        .map(|(i, _)| *i)
        .collect();
    let on_device: BTreeSet<u32> = obs.on_device.iter().copied().collect();
    if on_device != device {
        let moved: Vec<u32> = device.difference(&on_device).copied().collect();
        let wrong: Vec<u32> = on_device.difference(&device).copied().collect();
        out.push(Violation::new(
            "TRF-003",
            format!(
                "device inputs {} are planned for a move; host inputs {} are said to be on the device",
                list(&moved),
                list(&wrong)
            ),
        ));
    }

    if profile == Profile::Upstream {
        // GE's plan is one answer: compare the groups, the span and the run's warnings.
        let (violations, run_warnings) = upstream::judge(scenario, obs, values);
        out.extend(violations);
        warnings.extend(run_warnings.iter().map(Expected::exact));
        out.extend(compare_warnings(&warnings));
        return out;
    }

    let size_of = |i: &u32| sizes.get(i).map(|(s, _)| *s);

    // Fusion.
    if !obs.fused.is_empty() {
        if scenario.run_mode == RunMode::Sync {
            out.push(Violation::new(
                "IFS-003",
                format!("the synchronous run fuses inputs {}", list(&obs.fused)),
            ));
        }
        if scenario.shape == ShapeKind::Dynamic {
            out.push(Violation::new(
                "IFS-004",
                format!("a dynamic-shape graph fuses inputs {}", list(&obs.fused)),
            ));
        }
        if values.fusion_size == 0 {
            out.push(Violation::new(
                "IFS-012",
                format!(
                    "threshold 0 turns fusion off, yet inputs {} are fused",
                    list(&obs.fused)
                ),
            ));
        }
    }
    let too_big: Vec<u32> = obs
        .fused
        .iter()
        .filter(|i| size_of(i).is_some_and(|s| s > values.fusion_size))
        .copied()
        .collect();
    if !too_big.is_empty() {
        out.push(Violation::new(
            "IFS-011",
            format!(
                "inputs {} are larger than the threshold {} but fused",
                list(&too_big),
                values.fusion_size
            ),
        ));
    }
    if obs.fused.len() == 1 {
        out.push(Violation::new(
            "IFS-016",
            format!("input {} is fused on its own", obs.fused[0]),
        ));
    }
    let fusion_on = restrictions_met(
        spec.option(OptionKey::InputFusionSize),
        scenario.run_mode,
        scenario.shape,
        scenario.inputs.len(),
    ) && values.fusion_size > 0;
    if fusion_on {
        let eligible: Vec<u32> = sizes
            .iter()
            .filter(|(_, (s, p))| *p == Placement::Host && *s <= values.fusion_size)
            .map(|(i, _)| *i)
            .collect();
        let fused: BTreeSet<u32> = obs.fused.iter().copied().collect();
        let unfused: Vec<u32> = eligible
            .iter()
            .filter(|i| !fused.contains(i))
            .copied()
            .collect();
        if eligible.len() >= 2 && !unfused.is_empty() {
            out.push(Violation::new(
                "IFS-010",
                format!(
                    "host inputs {} are within the threshold {} but not fused",
                    list(&unfused),
                    values.fusion_size
                ),
            ));
        }
    }
    let sum = obs
        .fused
        .iter()
        .try_fold(0u64, |acc, i| acc.checked_add(size_of(i).unwrap_or(0)));
    if sum != Some(obs.fused_bytes) {
        out.push(Violation::new(
            "IFS-018",
            format!(
                "fused_bytes is {} but the fused inputs' sizes add up to {}",
                obs.fused_bytes,
                sum.map_or_else(|| "more than u64 holds".to_owned(), |s| s.to_string())
            ),
        ));
    }

    // Batch copy.
    if obs.batched.len() == 1 {
        out.push(Violation::new(
            "IBC-013",
            format!("a batch copy holds the single input {}", obs.batched[0]),
        ));
    }
    let ibc = spec.option(OptionKey::InputBatchCpy);
    if !obs.batched.is_empty() {
        let mut why_not = Vec::new();
        if !values.batch_copy {
            why_not.push(("IBC-010", "batch copy is not enabled".to_owned()));
        }
        if !ibc.restrictions.products.contains(&scenario.product) {
            why_not.push((
                "IBC-004",
                format!("product {} is not in the batch-copy list", scenario.product),
            ));
        }
        if scenario.run_mode == RunMode::Sync {
            why_not.push(("IBC-005", "the run is synchronous".to_owned()));
        }
        if scenario.inputs.len() <= 1 {
            why_not.push((
                "IBC-003",
                format!("the graph has {} user input(s)", scenario.inputs.len()),
            ));
        }
        for (clause, why) in why_not {
            out.push(Violation::new(
                clause,
                format!("inputs {} are batch-copied but {why}", list(&obs.batched)),
            ));
        }
    }
    let batch_on = values.batch_copy
        && ibc.restrictions.products.contains(&scenario.product)
        && restrictions_met(
            ibc,
            scenario.run_mode,
            scenario.shape,
            scenario.inputs.len(),
        );
    if batch_on {
        // The inputs left to move after fusion: the host inputs, and any device input the
        // engine moves as well (TRF-003, a suite choice, judges that; the rules of the text
        // then count it like any other input to move).
        let fused: BTreeSet<u32> = obs.fused.iter().copied().collect();
        let left: Vec<u32> = sizes
            .iter()
            .filter(|(i, (_, p))| {
                (*p == Placement::Host || !on_device.contains(i)) && !fused.contains(i)
            })
            .map(|(i, _)| *i)
            .collect();
        if left.len() >= 2 && !obs.direct.is_empty() {
            // On a dynamic-shape graph, that batch copy applies at all is the suite's reading
            // (IBC-015): the text's shape restriction may be read as the batch's too.
            out.push(Violation::new(
                if scenario.shape == ShapeKind::Dynamic {
                    "IBC-015"
                } else {
                    "IBC-011"
                },
                format!(
                    "batch copy applies to the {} host inputs left after fusion, yet {} go directly",
                    left.len(),
                    list(&obs.direct)
                ),
            ));
        }
        if left.len() == 1 && obs.direct != left {
            out.push(Violation::new(
                "IBC-013",
                format!(
                    "the one host input left, {}, must be copied on its own",
                    left[0]
                ),
            ));
        }
    }
    out.extend(compare_warnings(&warnings));
    out
}
