//! The transfer oracle under the upstream profile: GE's plan is a single answer, worked out here
//! from the `upstream` entries of the transfer clauses and compared group by group. Each
//! difference names the clause whose upstream rule decides that input's group.

use std::collections::BTreeMap;

use ge_spec::vocab::transfer::{Placement, TransferObservation, TransferScenario};
use ge_spec::{Diagnostic, OptionKey, RunMode, ShapeKind, Spec, Subject};

use super::super::options::Values;
use super::super::Violation;
use super::Group;

/// GE's padded size of a tensor (`padding_size` 32, the profile's assumption): whole 32-byte
/// units covering the size, and one unit more.
fn padded(size: u64) -> Option<u64> {
    size.div_ceil(32).checked_add(1)?.checked_mul(32)
}

/// The merged copy's length: the candidates placed one after the other by ascending size, each
/// slot starting on a 512-byte boundary, from the first slot to the last candidate's padded end.
fn merged_length(mut sizes: Vec<u64>) -> Option<u64> {
    sizes.sort_unstable();
    let mut offset: u64 = 0;
    let mut end: u64 = 0;
    for size in sizes {
        let start = offset;
        end = start.checked_add(padded(size)?)?;
        offset = end.div_ceil(512).checked_mul(512)?;
    }
    Some(end)
}

/// What GE does with each input, the merged copy's length and the warnings its run gives.
struct Plan {
    groups: BTreeMap<u32, (Group, &'static str)>,
    fused_bytes: u64,
    warnings: Vec<Diagnostic>,
}

/// GE's plan: the fusion (IFS-016), each input's group and the empty inputs' warnings (TRF-003,
/// IFS-016, IFS-017, IBC-011), then what batch copy makes of the inputs left (IBC-003, IBC-004,
/// IBC-005, IBC-011, IBC-013).
fn plan(scenario: &TransferScenario, values: &Values) -> Plan {
    let (merge, fused_bytes) = fusion(scenario, values);
    let mut plan = Plan {
        groups: BTreeMap::new(),
        fused_bytes,
        warnings: Vec::new(),
    };
    let batchable = place_inputs(scenario, values, merge, &mut plan);
    batch_copy(scenario, values, &batchable, &mut plan);
    plan
}

/// Whether the run is of a static-shape graph, asynchronous: the one fusion happens in.
fn static_async(scenario: &TransferScenario) -> bool {
    scenario.shape == ShapeKind::Static && scenario.run_mode == RunMode::Async
}

/// Whether an input of `size` is within the fusion threshold (none is at threshold 0).
fn within(values: &Values, size: u64) -> bool {
    values.fusion_size > 0 && size <= values.fusion_size
}

/// IFS-016 upstream: the candidates go by size, placement unknown at load, static asynchronous
/// runs only; whether they merge (two or more), and the merged copy's length.
fn fusion(scenario: &TransferScenario, values: &Values) -> (bool, u64) {
    let candidates: Vec<u64> = scenario
        .inputs
        .iter()
        .filter(|i| static_async(scenario) && within(values, i.size))
        .map(|i| i.size)
        .collect();
    let merge = candidates.len() > 1;
    // At most 32 MiB each, a 32-bit count of them: the length fits.
    let fused_bytes = if merge {
        merged_length(candidates).unwrap_or(u64::MAX)
    } else {
        0
    };
    (merge, fused_bytes)
}

/// TRF-003, IFS-016, IFS-017, IBC-011 upstream: each input's group before batch copy (device
/// inputs on the device, candidates fused when they merge, empty inputs direct and never
/// copied), and the IFS-017 warning of every empty input of a static asynchronous run, fused, on
/// the device or left over. Returns the inputs batch copy may take, in input order.
fn place_inputs(
    scenario: &TransferScenario,
    values: &Values,
    merge: bool,
    plan: &mut Plan,
) -> Vec<u32> {
    let mut batchable = Vec::new();
    for input in &scenario.inputs {
        if static_async(scenario) && input.size == 0 {
            plan.warnings
                .push(Diagnostic::new("IFS-017", "").subject(Subject::input(input.index)));
        }
        let fused = merge && within(values, input.size);
        let group = match (input.placement, fused) {
            (Placement::Device, _) => (Group::OnDevice, "TRF-003"),
            (Placement::Host, true) => (Group::Fused, "IFS-016"),
            // IFS-017 upstream: never copied; listed among the direct ones.
            (Placement::Host, false) if input.size == 0 => (Group::Direct, "IFS-017"),
            (Placement::Host, false) => {
                batchable.push(input.index);
                (Group::Direct, "IBC-011")
            }
        };
        plan.groups.insert(input.index, group);
    }
    batchable
}
/// What batch copy makes of the `batchable` inputs: it runs on dynamic-shape graphs and
/// asynchronous runs (IBC-005 otherwise), then one of IBC-003, IBC-013 and IBC-004/IBC-011
/// decides.
fn batch_copy(scenario: &TransferScenario, values: &Values, batchable: &[u32], plan: &mut Plan) {
    let stat = scenario.shape == ShapeKind::Static;
    let batch_runs = values.batch_copy && (!stat || scenario.run_mode == RunMode::Async);
    if batch_runs {
        if stat && scenario.inputs.len() == 1 {
            batch_one_input(batchable, plan);
        } else if batchable.len() == 1 {
            batch_one_left(batchable[0], plan);
        } else if batchable.len() > 1 {
            batch_by_product(scenario, batchable, plan);
        }
    } else if values.batch_copy {
        batch_sync(batchable, plan);
    }
}

/// IBC-003 upstream: a static-shape graph of one input warns and copies it directly.
fn batch_one_input(batchable: &[u32], plan: &mut Plan) {
    plan.warnings
        .push(Diagnostic::new("IBC-003", "").key(OptionKey::InputBatchCpy.as_str()));
    for i in batchable {
        plan.groups.insert(*i, (Group::Direct, "IBC-003"));
    }
}

/// IBC-013 upstream: the one input left warns, naming it, and is copied directly.
fn batch_one_left(input: u32, plan: &mut Plan) {
    plan.warnings.push(
        Diagnostic::new("IBC-013", "")
            .key(OptionKey::InputBatchCpy.as_str())
            .subject(Subject::input(input)),
    );
    plan.groups.insert(input, (Group::Direct, "IBC-013"));
}

/// IBC-011, IBC-004 upstream: the inputs left are batch-copied on a product of the batch-copy
/// list; on another, a warning and direct copies.
fn batch_by_product(scenario: &TransferScenario, batchable: &[u32], plan: &mut Plan) {
    let supported = Spec::embedded()
        .option(OptionKey::InputBatchCpy)
        .restrictions
        .products
        .contains(&scenario.product);
    if !supported {
        plan.warnings
            .push(Diagnostic::new("IBC-004", "").key(OptionKey::InputBatchCpy.as_str()));
    }
    for i in batchable {
        let group = if supported {
            (Group::Batched, "IBC-011")
        } else {
            (Group::Direct, "IBC-004")
        };
        plan.groups.insert(*i, group);
    }
}

/// IBC-005 upstream: batch copy enabled on a static-shape synchronous run copies directly.
fn batch_sync(batchable: &[u32], plan: &mut Plan) {
    for i in batchable {
        plan.groups.insert(*i, (Group::Direct, "IBC-005"));
    }
}

/// Compares the plan `obs` with GE's; returns the violations and the warnings GE's run gives
/// (the caller compares all warnings at once).
pub(super) fn judge(
    scenario: &TransferScenario,
    obs: &TransferObservation,
    values: &Values,
) -> (Vec<Violation>, Vec<Diagnostic>) {
    let want = plan(scenario, values);
    let mut out = Vec::new();
    let mut got: BTreeMap<u32, Group> = BTreeMap::new();
    for (group, list) in [
        (Group::Fused, &obs.fused),
        (Group::Direct, &obs.direct),
        (Group::Batched, &obs.batched),
        (Group::OnDevice, &obs.on_device),
    ] {
        for &i in list {
            got.insert(i, group);
        }
    }
    for (index, (group, clause)) in &want.groups {
        match got.get(index) {
            Some(g) if g == group => {}
            // A device input out of on_device is TRF-003's; the partition check reports it.
            _ if *group == Group::OnDevice => {}
            Some(g) => out.push(Violation::new(
                *clause,
                format_args!(
                    "input {index} is in {} but upstream puts it in {}",
                    g.name(),
                    group.name()
                ),
            )),
            None => {}
        }
    }
    if want.fused_bytes != obs.fused_bytes {
        out.push(Violation::new(
            "IFS-018",
            format_args!(
                "fused_bytes is {} but upstream's merged copy moves {} bytes",
                obs.fused_bytes, want.fused_bytes
            ),
        ));
    }
    (out, want.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_lengths_follow_the_slot_layout() {
        assert_eq!(merged_length(vec![4, 1000]), Some(1568));
        assert_eq!(
            merged_length(vec![51_200, 51_200, 102_400, 102_400]),
            Some(308_768)
        );
        assert_eq!(merged_length(vec![0, 0]), Some(544));
        assert_eq!(merged_length(vec![1, u64::MAX]), None);
    }
}
