//! The upstream profile of the transfer planner: how GE at the pinned commit moves a run's
//! inputs, where that departs from the documented clauses (the `upstream` entries of IFS-013,
//! IFS-016, IFS-017, IFS-018, IBC-003, IBC-004, IBC-005, IBC-011 and TRF-003).
//!
//! Fusion candidates are chosen by size alone, whatever their placement; the merged copy moves
//! the span of the candidates' padded slots; nothing is said when options are set, and the
//! run itself warns about a single input, a batch of one, a runtime without batch copy and each
//! empty input it skips.

use ge_spec::vocab::transfer::{Placement, TransferInput, TransferObservation, TransferScenario};
use ge_spec::{Diagnostic, OptionKey, RunMode, ShapeKind, Spec, Subject};

use crate::options::Values;

/// The padding GE adds to a tensor's size (the SoC's `padding_size`; 32 when it reports none,
/// the value the profile assumes).
const PADDING: u64 = 32;

/// The alignment of each input's slot in the model's input memory.
const SLOT_ALIGN: u64 = 512;

/// A tensor's padded size: the size rounded up to 32 bytes, plus the padding (IFS-018 upstream).
fn padded(size: u64) -> Option<u64> {
    Some(size.checked_add(32 + PADDING - 1)? / 32 * 32)
}

/// The bytes the merged copy moves: the candidates laid out by ascending size, each in a slot of
/// its padded size rounded up to 512 bytes, from the first slot's start to the end of the last
/// candidate's padded size. `None` past 2^64 - 1.
pub(crate) fn span(sizes: &mut [u64]) -> Option<u64> {
    sizes.sort_unstable();
    let (last, rest) = sizes.split_last()?;
    let mut total: u64 = 0;
    for &s in rest {
        let slot = padded(s)?.checked_next_multiple_of(SLOT_ALIGN)?;
        total = total.checked_add(slot)?;
    }
    total.checked_add(padded(*last)?)
}

/// Plans the transfer as upstream does, the options already resolved without errors.
// Long because: GE's planning path followed step by step as the cited code takes it, so each step
// can be checked against its lines.
pub(super) fn plan(scenario: &TransferScenario, values: &Values, obs: &mut TransferObservation) {
    let asynchronous = scenario.run_mode == RunMode::Async;
    let static_async = scenario.shape == ShapeKind::Static && asynchronous;
    let batch = OptionKey::InputBatchCpy.as_str();

    // Fusion is set up at load on the static asynchronous path only, from the inputs within the
    // threshold by size alone (IFS-016 upstream), device ones included (TRF-003 upstream).
    let threshold = values.fusion_size;
    let candidates: Vec<&TransferInput> = if static_async && threshold > 0 {
        scenario
            .inputs
            .iter()
            .filter(|i| i.size <= threshold)
            .collect()
    } else {
        Vec::new()
    };
    let merged = candidates.len() >= 2;
    if merged {
        let mut sizes: Vec<u64> = candidates.iter().map(|i| i.size).collect();
        // Candidates are at most GE's clamp (32 MiB) each and a 32-bit count of them: the span fits.
        obs.fused_bytes = span(&mut sizes).unwrap_or(u64::MAX);
    }
    // IFS-017 upstream: on the static asynchronous run every empty input is skipped with a
    // warning before its placement or its merge is looked at.
    for input in scenario
        .inputs
        .iter()
        .filter(|i| static_async && i.size == 0)
    {
        obs.warnings.push(
            Diagnostic::new(
                "IFS-017",
                format!("input {} holds no data: nothing is copied", input.index),
            )
            .subject(Subject::input(input.index)),
        );
    }
    let mut left = Vec::new();
    for input in &scenario.inputs {
        let candidate = merged && input.size <= threshold;
        match input.placement {
            Placement::Device => obs.on_device.push(input.index),
            Placement::Host if candidate => obs.fused.push(input.index),
            Placement::Host => left.push(input),
        }
    }

    // An empty input left over is never copied (IFS-017, IBC-011 upstream); the vocabulary has no
    // group for an input nothing is done for, so it is listed among the direct ones.
    let (empty, sized): (Vec<&TransferInput>, Vec<&TransferInput>) =
        left.into_iter().partition(|i| i.size == 0);
    obs.direct.extend(empty.iter().map(|i| i.index));
    let sized: Vec<u32> = sized.iter().map(|i| i.index).collect();

    // Batch copy: exactly `1` turns it on; the static path batches on the asynchronous run only
    // and turns it off for a model of one input (IBC-003, IBC-005 upstream); the dynamic path
    // batches on both runs with no input-count check.
    let batching = values.batch_copy
        && match scenario.shape {
            ShapeKind::Static => asynchronous,
            ShapeKind::Dynamic => true,
        };
    if !batching {
        obs.direct.extend(sized);
        return;
    }
    if scenario.shape == ShapeKind::Static && scenario.inputs.len() == 1 {
        obs.warnings.push(
            Diagnostic::new(
                "IBC-003",
                format!("{batch} is on but the model has one input: it is copied on its own"),
            )
            .key(batch),
        );
        obs.direct.extend(sized);
        return;
    }
    match sized.len() {
        0 => {}
        1 => {
            // IBC-013 upstream: the batch of one is a plain copy, with a warning.
            obs.warnings.push(
                Diagnostic::new(
                    "IBC-013",
                    format!(
                        "{batch} is on, but only host input {} is left to batch: it is copied on its own",
                        sized[0]
                    ),
                )
                .key(batch)
                .subject(Subject::input(sized[0])),
            );
            obs.direct.extend(sized);
        }
        _ => {
            let products = &Spec::embedded()
                .option(OptionKey::InputBatchCpy)
                .restrictions
                .products;
            if products.contains(&scenario.product) {
                obs.batched.extend(sized);
            } else {
                // IBC-004 upstream: no product gate in GE; a runtime without batch copy (the
                // products the text leaves out) refuses it, and GE copies each input alone.
                obs.warnings.push(
                    Diagnostic::new(
                        "IBC-004",
                        format!(
                            "batch copy is not supported on {}: each input is copied on its own",
                            scenario.product
                        ),
                    )
                    .key(batch),
                );
                obs.direct.extend(sized);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_counts_padded_slots() {
        // Sizes 4 and 1000: a 512-byte slot, then 1000 padded to 1056.
        assert_eq!(span(&mut [1000, 4]), Some(1568));
        // The text's ten-input example: 50 KiB, 50 KiB, 100 KiB, 100 KiB.
        assert_eq!(span(&mut [102_400, 51_200, 102_400, 51_200]), Some(308_768));
        assert_eq!(padded(0), Some(32));
        assert_eq!(span(&mut [0, 0]), Some(512 + 32));
        assert_eq!(span(&mut [u64::MAX, 1]), None);
        assert_eq!(span(&mut []), None);
    }
}
