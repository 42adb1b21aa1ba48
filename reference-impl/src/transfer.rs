//! The reference transfer capability: plans how the user inputs of one run move from the host to
//! the device (input fusion, direct copies, batch copy), following clauses IFS-010.., IBC-010..
//! and TRF-001..004.
//!
//! The plan is linear in the number of inputs, apart from sorting the output lists, which costs
//! linear time when the inputs come in index order (the usual case).

use ge_spec::tables::OptionSpec;
use ge_spec::vocab::transfer::{Placement, TransferInput, TransferObservation, TransferScenario};
use ge_spec::{Answer, Diagnostic, OptionKey, Part, Profile, Spec, Subject};

use crate::options::{self, Context};

mod upstream;

/// Plans the host-to-device transfer of the user inputs of one run, under `profile`.
pub fn plan(profile: Profile, scenario: &TransferScenario) -> Answer<TransferObservation> {
    Ok(plan_observation(profile, scenario))
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

/// Plans the transfer under `profile` and returns the observation directly (the reference always
/// answers).
// Long because: the text's order of the transfer rules (options, device inputs, fusion, batch
// copy), each a few lines, read top to bottom.
pub fn plan_observation(profile: Profile, scenario: &TransferScenario) -> TransferObservation {
    let mut obs = TransferObservation::default();
    let ctx = context(scenario);
    // IBC-014: the input count the options layer sees is the graph's, device inputs included.
    let count = ctx.inputs;
    // TRF-004: the options layer's diagnostics are the plan's.
    let resolution = options::resolve(profile, &scenario.options, ctx);
    obs.warnings = resolution.observation.warnings;
    obs.errors = resolution.observation.errors;
    if count.is_none() {
        obs.errors.push(
            Diagnostic::new(
                "TRF-002",
                format!(
                    "the scenario has {} inputs, more than a 32-bit count holds",
                    scenario.inputs.len()
                ),
            )
            .subject(Subject::input(u32::MAX)),
        );
    }
    check_unique_indexes(&scenario.inputs, &mut obs.errors);
    if !obs.errors.is_empty() {
        // TRF-001: nothing is planned when the observation carries errors.
        obs.canonicalize();
        return obs;
    }

    let values = &resolution.values;
    if profile == Profile::Upstream {
        upstream::plan(scenario, values, &mut obs);
        obs.canonicalize();
        return obs;
    }
    let spec = Spec::embedded();
    // IFS-003, IFS-004 (restrictions from the options table), IFS-012 (threshold 0).
    let fusion_on =
        restrictions_met(spec.option(OptionKey::InputFusionSize), &ctx) && values.fusion_size > 0;
    // IFS-010, IFS-017, IFS-019: exact byte sizes, zero-byte inputs included.
    let eligible = |input: &TransferInput| {
        fusion_on && input.placement == Placement::Host && input.size <= values.fusion_size
    };
    // One pass: eligible inputs are held as fusion candidates until we know there are two.
    let n = scenario.inputs.len();
    let mut candidates = Vec::with_capacity(n);
    let mut remaining = Vec::with_capacity(n);
    let mut fused_bytes: Option<u64> = Some(0);
    for input in &scenario.inputs {
        match input.placement {
            // TRF-003: nothing to move.
            Placement::Device => obs.on_device.push(input.index),
            Placement::Host if eligible(input) => {
                candidates.push(input.index);
                // IFS-018: the plain sum of the fused sizes.
                fused_bytes = fused_bytes.and_then(|sum| sum.checked_add(input.size));
            }
            Placement::Host => remaining.push(input.index),
        }
    }
    // IFS-016: one eligible input alone is not fused; it is moved like the others.
    if candidates.len() >= 2 {
        obs.fused = candidates;
    } else {
        remaining.extend(candidates);
        fused_bytes = Some(0);
    }
    let Some(fused_bytes) = fused_bytes else {
        // Unreachable with thresholds capped at the table's maximum and a 32-bit input count, but a sum that
        // does not fit must not wrap.
        obs.errors.push(
            Diagnostic::new(
                "TRF-002",
                "the sizes of the fused inputs add up to more than 2^64 - 1 bytes",
            )
            .subject(Subject::part(Part::FusedInputs)),
        );
        obs.fused.clear();
        obs.on_device.clear();
        obs.canonicalize();
        return obs;
    };
    obs.fused_bytes = fused_bytes;

    // IBC-010 (enabled), IBC-003/IBC-004/IBC-005 (restrictions from the options table),
    // IBC-014 (the count includes device inputs), IBC-015 (no shape condition).
    let batch_on = values.batch_copy
        && restrictions_met(spec.option(OptionKey::InputBatchCpy), &ctx)
        && count.is_some_and(|n| n > 1);
    // IBC-011, IBC-012 (only what fusion left), IBC-013 (never a batch of one).
    if batch_on && remaining.len() >= 2 {
        obs.batched = remaining;
    } else {
        obs.direct = remaining;
    }
    obs.canonicalize();
    obs
}

/// TRF-002: every index once. Inputs given in increasing index order (the usual case) are
/// checked in one pass; otherwise a sorted copy is.
fn check_unique_indexes(inputs: &[TransferInput], errors: &mut Vec<Diagnostic>) {
    if inputs.windows(2).all(|w| w[0].index < w[1].index) {
        return;
    }
    let mut indexes: Vec<u32> = inputs.iter().map(|i| i.index).collect();
    indexes.sort_unstable();
    let mut last_reported = None;
    for pair in indexes.windows(2) {
        if pair[0] == pair[1] && last_reported != Some(pair[0]) {
            last_reported = Some(pair[0]);
            errors.push(
                Diagnostic::new(
                    "TRF-002",
                    format!("two or more inputs have index {}", pair[0]),
                )
                .subject(Subject::input(pair[0])),
            );
        }
    }
}

/// True when the run meets the option row's run-mode, shape, product and input-count restrictions.
fn restrictions_met(row: &OptionSpec, ctx: &Context) -> bool {
    let r = &row.restrictions;
    r.run_mode.is_none_or(|mode| mode == ctx.run_mode)
        && r.shape.is_none_or(|shape| shape == ctx.shape)
        && (r.products.is_empty() || r.products.contains(&ctx.product))
        && match (r.min_inputs, ctx.inputs) {
            (Some(min), Some(n)) => n >= min,
            (Some(_), None) => false,
            (None, _) => true,
        }
}
