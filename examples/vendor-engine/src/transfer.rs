//! The transfer planner of the example engine: decides which host inputs are fused, batch-copied
//! or moved directly, from the resolved options and the inputs' sizes and placements.
//!
//! Written from the transfer clauses (`IFS-010`..`IFS-019`, `IBC-010`..`IBC-015`, `TRF-*`) and
//! their cases, not from any other implementation.

use std::collections::BTreeMap;

use ge_spec::vocab::transfer::Placement;
use ge_spec::vocab::{TransferObservation, TransferScenario};
use ge_spec::{Diagnostic, OptionKey, Product, RunMode, ShapeKind, Subject};

use crate::options::{self, Context};

/// The products batch copy is available on (`IBC-004`, `IBC-011`).
const BATCH_COPY_PRODUCTS: [Product; 6] = options::BATCH_COPY_PRODUCTS;

/// Plans the host-to-device movement of the scenario's inputs.
pub fn plan(scenario: &TransferScenario) -> TransferObservation {
    let mut obs = TransferObservation::default();

    // Every index names one input (TRF-002): one error per index used more than once.
    let mut uses: BTreeMap<u32, usize> = BTreeMap::new();
    for input in &scenario.inputs {
        *uses.entry(input.index).or_default() += 1;
    }
    for (index, _) in uses.iter().filter(|(_, n)| **n > 1) {
        let d = Diagnostic::new("TRF-002", "two inputs share this index; nothing is planned");
        obs.errors.push(d.subject(Subject::input(*index)));
    }
    // The input count must fit the 32-bit count of the options layer (TRF-002).
    let Ok(count) = u32::try_from(scenario.inputs.len()) else {
        let d = Diagnostic::new("TRF-002", "more inputs than a 32-bit count holds");
        obs.errors.push(d.subject(Subject::input(u32::MAX)));
        return obs;
    };

    // The options layer decides levels, precedence and warnings (TRF-004).
    let ctx = Context {
        inputs: u64::from(count),
        outputs: None,
        shape: scenario.shape,
        run_mode: scenario.run_mode,
        product: scenario.product,
    };
    let resolved = options::resolve(&scenario.options, &ctx);
    obs.warnings = resolved.warnings;
    obs.errors.extend(resolved.errors);
    if !obs.errors.is_empty() {
        obs.canonicalize();
        return obs;
    }
    let value = |key: OptionKey| {
        resolved
            .effective
            .get(key.as_str())
            .map_or("", |e| e.value.as_str())
    };
    let threshold: u64 = value(OptionKey::InputFusionSize).parse().unwrap_or(0);
    let batch_on = value(OptionKey::InputBatchCpy) == "1";

    // Inputs already on the device are not moved (TRF-003).
    let (host, device): (Vec<_>, Vec<_>) = scenario
        .inputs
        .iter()
        .partition(|i| i.placement == Placement::Host);
    obs.on_device = device.iter().map(|i| i.index).collect();

    // Fusion: asynchronous run, static shapes, threshold above 0 (IFS-003/004/010/012), and at
    // least two eligible inputs (IFS-016); sizes are compared exactly (IFS-019).
    let async_run = scenario.run_mode == RunMode::Async;
    let fusion_on = async_run && scenario.shape == ShapeKind::Static && threshold > 0;
    let (small, mut rest): (Vec<_>, Vec<_>) = host
        .into_iter()
        .partition(|i| fusion_on && i.size <= threshold);
    if small.len() >= 2 {
        obs.fused = small.iter().map(|i| i.index).collect();
        // The plain sum (IFS-018); each size is at most 32 MiB, so it cannot overflow, but
        // saturating keeps that a fact of arithmetic rather than of the threshold's range.
        obs.fused_bytes = small.iter().fold(0u64, |sum, i| sum.saturating_add(i.size));
    } else {
        rest.extend(small);
    }

    // Batch copy of what fusion leaves (IBC-011/012): listed product, asynchronous run, more than
    // one user input in the graph (IBC-014), and never a batch of one (IBC-013).
    let rest: Vec<u32> = rest.iter().map(|i| i.index).collect();
    let batch_on =
        batch_on && async_run && count > 1 && BATCH_COPY_PRODUCTS.contains(&scenario.product);
    if batch_on && rest.len() >= 2 {
        obs.batched = rest;
    } else {
        obs.direct = rest;
    }
    obs.canonicalize();
    obs
}
