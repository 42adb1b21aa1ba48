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

fn plan(scenario: &TransferScenario, values: &Values) -> Plan {
    let key = OptionKey::InputBatchCpy.as_str();
    let stat = scenario.shape == ShapeKind::Static;
    let run_async = scenario.run_mode == RunMode::Async;
    let mut groups = BTreeMap::new();
    let mut warnings = Vec::new();
    // IFS-016 upstream: candidates by size, placement unknown at load; static async only.
    let within = |size: u64| values.fusion_size > 0 && size <= values.fusion_size;
    let candidates: Vec<u64> = scenario
        .inputs
        .iter()
        .filter(|i| stat && run_async && within(i.size))
        .map(|i| i.size)
        .collect();
    let merge = candidates.len() > 1;
    // At most 32 MiB each, a 32-bit count of them: the length fits.
    let fused_bytes = if merge {
        merged_length(candidates).unwrap_or(u64::MAX)
    } else {
        0
    };
    let mut batchable = Vec::new();
    for input in &scenario.inputs {
        // IFS-017 upstream: the static asynchronous run warns about every empty input, fused,
        // on the device or left over.
        if stat && run_async && input.size == 0 {
            warnings.push(Diagnostic::new("IFS-017", "").subject(Subject::input(input.index)));
        }
        let fused = merge && within(input.size);
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
        groups.insert(input.index, group);
    }
    let batch_runs = values.batch_copy && (!stat || run_async);
    if batch_runs {
        if stat && scenario.inputs.len() == 1 {
            warnings.push(Diagnostic::new("IBC-003", "").key(key));
            for i in &batchable {
                groups.insert(*i, (Group::Direct, "IBC-003"));
            }
        } else if batchable.len() == 1 {
            warnings.push(
                Diagnostic::new("IBC-013", "")
                    .key(key)
                    .subject(Subject::input(batchable[0])),
            );
            groups.insert(batchable[0], (Group::Direct, "IBC-013"));
        } else if batchable.len() > 1 {
            let supported = Spec::embedded()
                .option(OptionKey::InputBatchCpy)
                .restrictions
                .products
                .contains(&scenario.product);
            if !supported {
                warnings.push(Diagnostic::new("IBC-004", "").key(key));
            }
            for i in &batchable {
                let group = if supported {
                    (Group::Batched, "IBC-011")
                } else {
                    (Group::Direct, "IBC-004")
                };
                groups.insert(*i, group);
            }
        }
    } else if values.batch_copy {
        for i in &batchable {
            groups.insert(*i, (Group::Direct, "IBC-005"));
        }
    }
    Plan {
        groups,
        fused_bytes,
        warnings,
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
                format!(
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
            format!(
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
