//! The transfer layer: decides how the user inputs of one run move from host to device (input
//! fusion under `ge.exec.input_fusion_size`, batch copy under `ge.inputBatchCpy`, direct copies),
//! as the documentation text describes it.

use std::collections::BTreeMap;

use ge_spec::diag::{Diagnostic, Part, Subject};
use ge_spec::option::{OptionKey, RunMode, ShapeKind};
use ge_spec::vocab::transfer::Placement;
use ge_spec::vocab::{TransferObservation, TransferScenario};

use crate::options::{self, Facts, BATCH_COPY_PRODUCTS};

/// The transfer capability: resolves the options, checks the inputs, then plans.
///
/// Rules, in order (N13–N17): an input already on the device is not moved; when the run is
/// asynchronous, the graph static and the fusion threshold not 0, every host input of at most the
/// threshold is fused (the fused size is the plain sum of their sizes); when batch copy is on,
/// the product in the text's list, the run asynchronous and the run has more than one user input,
/// the host inputs left over are batch-copied if there are at least two of them; every other host
/// input is moved directly.
// Long because: an engine written from the text alone, kept as its author wrote it.
pub fn plan(scenario: &TransferScenario) -> TransferObservation {
    let user_inputs = u32::try_from(scenario.inputs.len()).unwrap_or(u32::MAX);
    let facts = Facts {
        // The index lists concern the graph's memory plan, which a transfer scenario does not
        // describe: their range is not judged here (N12).
        inputs: None,
        outputs: None,
        user_inputs: Some(user_inputs),
        shape: Some(scenario.shape),
        run_mode: Some(scenario.run_mode),
        product: Some(scenario.product),
    };
    let resolved = options::resolve(&scenario.options, &facts);
    let mut obs = TransferObservation {
        errors: resolved.observation.errors.clone(),
        warnings: resolved.observation.warnings.clone(),
        ..TransferObservation::default()
    };

    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for input in &scenario.inputs {
        *seen.entry(input.index).or_default() += 1;
    }
    for (index, n) in &seen {
        if *n > 1 {
            obs.errors.push(
                Diagnostic::new("TRF-002", format!("{n} inputs share the index {index}"))
                    .subject(Subject::input(*index)),
            );
        }
    }
    if !obs.errors.is_empty() {
        obs.canonicalize();
        return obs;
    }

    let threshold = resolved.number(OptionKey::InputFusionSize);
    let fusion =
        scenario.run_mode == RunMode::Async && scenario.shape == ShapeKind::Static && threshold > 0;
    let batch = resolved.number(OptionKey::InputBatchCpy) == 1
        && BATCH_COPY_PRODUCTS.contains(&scenario.product)
        && scenario.run_mode == RunMode::Async
        && user_inputs > 1;

    let mut fused_bytes: Option<u64> = Some(0);
    let mut rest = Vec::new();
    for input in &scenario.inputs {
        match input.placement {
            Placement::Device => obs.on_device.push(input.index),
            Placement::Host if fusion && input.size <= threshold => {
                obs.fused.push(input.index);
                fused_bytes = fused_bytes.and_then(|sum| sum.checked_add(input.size));
            }
            Placement::Host => rest.push(input.index),
        }
    }
    let Some(fused_bytes) = fused_bytes else {
        // Cannot happen with inputs of at most 32 MB each, but a u64 must not overflow.
        let mut failed = TransferObservation {
            warnings: obs.warnings,
            ..TransferObservation::default()
        };
        failed.errors.push(
            Diagnostic::new(
                "TRF-002",
                "the inputs chosen for fusion add up to more than 2^64 - 1 bytes",
            )
            .subject(Subject::part(Part::FusedInputs)),
        );
        failed.canonicalize();
        return failed;
    };
    obs.fused_bytes = fused_bytes;
    if batch && rest.len() >= 2 {
        obs.batched = rest;
    } else {
        obs.direct = rest;
    }
    obs.canonicalize();
    obs
}
