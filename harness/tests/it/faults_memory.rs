//! Deliberately wrong memory planners: each wraps the reference with ONE fault the contract
//! forbids, and the memory cases with the oracle must catch it under the clause it breaks.

use crate::common;

use std::collections::BTreeSet;

use ge_conformance::judging::Judging;
use ge_conformance::runner::caught_clauses;
use ge_reference::Reference;
use ge_spec::vocab::memory::{aligned, MemoryObservation, MemoryScenario, Role};
use ge_spec::{Answer, Backend, Capability, Level, Profile};
use rstest::rstest;

/// The one thing each faulty planner gets wrong.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Puts every tensor at offset 0, live or not.
    OverlapLive,
    /// Plans as if `disableReuseMemory` were never set.
    IgnoreDisable,
    /// Reuses every input's memory, listed or not.
    TouchUnlistedInput,
    /// Plans listed inputs and outputs whatever their size, without the 32-byte error.
    AcceptMisaligned,
    /// Places each aliased output above everything instead of at its input's address.
    AliasApart,
    /// Under policy 0, plans memset outputs per operator and reports one group spanning them.
    ScatterMemset,
    /// Does not check the run's addresses of a pair.
    IgnoreRunMismatch,
    /// Checks a pair's run addresses against the output at the input's index, not the pair's
    /// own output: invisible while pairs are `i,i`.
    RunCheckAtInputIndex,
    /// Checks the run addresses of the first pair of outputReuseInputMemIndexes only.
    RunCheckFirstPairOnly,
    /// Drops the pairs of outputReuseInputMemIndexes when memory reuse is off.
    PairsDroppedWithReuseOff,
    /// Reads lifetimes as half-open: a tensor's memory is free during its last step.
    HalfOpenLifetimes,
    /// Reports a peak one alignment unit too high.
    MisreportPeak,
    /// Shifts every offset by 16 bytes.
    Misalign,
    /// Leaves the first tensor out of the plan.
    DropTensor,
    /// Raises no error on an invalid scenario.
    AcceptInvalid,
    /// Reports the 32-byte error but plans anyway.
    PlanDespiteError,
    /// Never reports reused inputs.
    HideReusedInputs,
    /// Never reports reused outputs.
    HideReusedOutputs,
    /// Under policy 1, reports one cleanup group for all memset outputs.
    MergeSeparateGroups,
    /// Under policy 0, cleans each memset operator's outputs on their own, as policy 1 does.
    SeparateUnderPolicy0,
    /// Under policy 1, reports each operator's cleanup region as its first output only.
    ShortSeparateRegions,
    /// With reuse off, still lets the memory of listed inputs and outputs be reused (where the
    /// graph has at most one tensor besides its inputs and outputs, so that nothing else can
    /// share: the fault is the lists' choice alone).
    ListsOverrideDisable,
    /// Plans listed outputs whatever their size, without the 32-byte error (inputs are checked).
    AcceptMisalignedOutputs,
}

#[derive(Debug)]
struct Faulty(Fault);

fn without(scenario: &MemoryScenario, key: &str) -> MemoryScenario {
    let mut s = scenario.clone();
    s.options.global.remove(key);
    s.options.session.remove(key);
    s.options.graph.remove(key);
    s
}

fn repeak(scenario: &MemoryScenario, obs: &mut MemoryObservation) {
    obs.peak_bytes = scenario
        .tensors
        .iter()
        .filter_map(|t| obs.offsets.get(&t.name).map(|o| o + t.size))
        .max()
        .unwrap_or(0);
}

/// The pairs of the graph-level `ge.exec.outputReuseInputMemIndexes`, as (input, output), in
/// their order; items that are not two numbers are left out.
fn graph_pairs(s: &MemoryScenario) -> Vec<(usize, usize)> {
    let list = s
        .options
        .graph
        .get("ge.exec.outputReuseInputMemIndexes")
        .map(String::as_str)
        .unwrap_or_default();
    list.split('|')
        .filter_map(|p| p.split_once(','))
        .filter_map(|(i, j)| Some((i.parse().ok()?, j.parse().ok()?)))
        .collect()
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "faulty-memory"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Memory].into_iter().collect()
    }

    // Long because: one arm per fault of the table above, each the fault it names, read on its own.
    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        let reference = |s: &MemoryScenario| Reference.memory(s);
        match self.0 {
            Fault::OverlapLive => {
                let mut obs = reference(scenario)?;
                for offset in obs.offsets.values_mut() {
                    *offset = 0;
                }
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Fault::IgnoreDisable => reference(&without(scenario, "ge.exec.disableReuseMemory")),
            Fault::TouchUnlistedInput => {
                let mut s = scenario.clone();
                // Every input the 32-byte rule lets be reused, besides those listed: refusing a
                // misaligned input the user never listed is another fault (a refusal no reading
                // calls for, MEM-002).
                let misaligned = |i: u32| {
                    s.tensors
                        .iter()
                        .any(|t| t.role == Role::Input { index: i } && t.size % 32 != 0)
                };
                let key = "ge.exec.inputReuseMemIndexes";
                let listed = s.options.graph.get(key).cloned().unwrap_or_default();
                let listed: Vec<&str> = listed.split(',').filter(|i| !i.is_empty()).collect();
                let mut all: Vec<String> = listed.iter().map(|i| (*i).to_owned()).collect();
                all.extend(
                    (0..s.inputs)
                        .map(|i| i.to_string())
                        .filter(|i| !listed.contains(&i.as_str()))
                        .filter(|i| !misaligned(i.parse().unwrap_or(0))),
                );
                if !all.is_empty() {
                    s.options.graph.insert(key.into(), all.join(","));
                }
                reference(&s)
            }
            Fault::AcceptMisaligned => {
                let mut s = scenario.clone();
                for t in &mut s.tensors {
                    if matches!(t.role, Role::Input { .. } | Role::Output { .. }) {
                        t.size = aligned(t.size).unwrap_or(t.size);
                    }
                }
                let mut obs = reference(&s)?;
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Fault::RunCheckAtInputIndex => {
                let mut s = scenario.clone();
                let pairs = graph_pairs(&s);
                if let Some(run) = &mut s.run {
                    let outputs = run.outputs.clone();
                    for (i, j) in pairs {
                        if let (Some(&at), Some(slot)) = (outputs.get(i), run.outputs.get_mut(j)) {
                            *slot = at;
                        }
                    }
                }
                reference(&s)
            }
            Fault::RunCheckFirstPairOnly => {
                let mut s = scenario.clone();
                let pairs = graph_pairs(&s);
                if let Some(run) = &mut s.run {
                    // Every pair past the first is taken as agreeing: its output is put at its
                    // input's address before the reference looks.
                    for (i, j) in pairs.into_iter().skip(1) {
                        if let (Some(&at), Some(slot)) = (run.inputs.get(i), run.outputs.get_mut(j))
                        {
                            *slot = at;
                        }
                    }
                }
                reference(&s)
            }
            Fault::PairsDroppedWithReuseOff => {
                let off = scenario
                    .options
                    .graph
                    .get("ge.exec.disableReuseMemory")
                    .is_some_and(|v| v == "1");
                if off {
                    reference(&without(scenario, "ge.exec.outputReuseInputMemIndexes"))
                } else {
                    reference(scenario)
                }
            }
            Fault::AliasApart => {
                let mut obs = reference(scenario)?;
                for alias in obs.aliases.clone() {
                    let top = aligned(obs.peak_bytes).unwrap_or(0);
                    if let Some(t) = scenario.output(alias.output) {
                        obs.offsets.insert(t.name.clone(), top);
                        obs.peak_bytes = top + t.size;
                    }
                }
                Ok(obs)
            }
            // Under policy 1 the groups are the operators' own (ACP-011, documented): the
            // fault is the collective region of policy 0 only.
            Fault::ScatterMemset
                if scenario
                    .options
                    .session
                    .get("ge.exec.atomicCleanPolicy")
                    .is_some_and(|v| v == "1") =>
            {
                reference(scenario)
            }
            Fault::ScatterMemset => {
                let mut s = without(scenario, "ge.exec.atomicCleanPolicy");
                s.options
                    .session
                    .insert("ge.exec.atomicCleanPolicy".into(), "1".into());
                let mut obs = reference(&s)?;
                if obs.cleanup.len() > 1 {
                    let start = obs.cleanup.iter().map(|g| g.offset).min().unwrap_or(0);
                    let stop = obs
                        .cleanup
                        .iter()
                        .map(|g| g.offset + g.size)
                        .max()
                        .unwrap_or(0);
                    let tensors = obs.cleanup.iter().flat_map(|g| g.tensors.clone()).collect();
                    obs.cleanup = vec![ge_spec::vocab::memory::CleanupGroup {
                        offset: start,
                        size: stop - start,
                        tensors,
                    }];
                }
                // The policy-0 answer of the reference for the warnings the scenario calls for.
                obs.warnings = reference(scenario)?.warnings;
                Ok(obs)
            }
            Fault::HalfOpenLifetimes => {
                let mut s = scenario.clone();
                for t in &mut s.tensors {
                    if t.last > t.first {
                        t.last -= 1;
                    }
                }
                let mut obs = reference(&s)?;
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Fault::MisreportPeak => {
                let mut obs = reference(scenario)?;
                if !obs.offsets.is_empty() {
                    obs.peak_bytes += 32;
                }
                Ok(obs)
            }
            Fault::Misalign => {
                let mut obs = reference(scenario)?;
                for offset in obs.offsets.values_mut() {
                    *offset += 16;
                }
                for group in &mut obs.cleanup {
                    group.offset += 16;
                }
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Fault::DropTensor => {
                let mut obs = reference(scenario)?;
                if let Some(t) = scenario.tensors.first() {
                    obs.offsets.remove(&t.name);
                }
                Ok(obs)
            }
            Fault::AcceptInvalid => {
                let mut obs = reference(scenario)?;
                obs.errors.retain(|e| e.clause != "MEM-001");
                Ok(obs)
            }
            // Not with a pair list: a pair planned at two addresses is a run-time error the
            // text states (ORI-011), which the fault would hide as well.
            Fault::PlanDespiteError
                if !scenario
                    .options
                    .at(Level::Graph)
                    .contains_key("ge.exec.outputReuseInputMemIndexes") =>
            {
                let obs = reference(scenario)?;
                let mut planned = Faulty(Fault::AcceptMisaligned).memory(scenario)?;
                planned.errors = obs.errors;
                Ok(planned)
            }
            Fault::PlanDespiteError => reference(scenario),
            Fault::HideReusedInputs => {
                let mut obs = reference(scenario)?;
                obs.reused_inputs.clear();
                Ok(obs)
            }
            Fault::HideReusedOutputs => {
                let mut obs = reference(scenario)?;
                obs.reused_outputs.clear();
                Ok(obs)
            }
            Fault::MergeSeparateGroups => {
                let mut obs = reference(scenario)?;
                if obs.cleanup.len() > 1 {
                    let mut all = obs.cleanup[0].clone();
                    for g in &obs.cleanup[1..] {
                        let stop = (all.offset + all.size).max(g.offset + g.size);
                        all.offset = all.offset.min(g.offset);
                        all.size = stop - all.offset;
                        all.tensors.extend(g.tensors.iter().cloned());
                    }
                    obs.cleanup = vec![all];
                }
                Ok(obs)
            }
            Fault::SeparateUnderPolicy0 => {
                let mut s = without(scenario, "ge.exec.atomicCleanPolicy");
                s.options
                    .session
                    .insert("ge.exec.atomicCleanPolicy".into(), "1".into());
                let mut obs = reference(&s)?;
                obs.warnings = reference(scenario)?.warnings;
                Ok(obs)
            }
            Fault::ShortSeparateRegions => {
                let mut obs = reference(scenario)?;
                let separate = obs.cleanup.len() > 1;
                for group in obs
                    .cleanup
                    .iter_mut()
                    .filter(|g| separate && g.tensors.len() > 1)
                {
                    let first = scenario.tensors.iter().find(|t| t.name == group.tensors[0]);
                    if let (Some(t), Some(&at)) = (first, obs.offsets.get(&group.tensors[0])) {
                        group.offset = at;
                        group.size = t.size;
                    }
                }
                Ok(obs)
            }
            Fault::ListsOverrideDisable => {
                let listed = [
                    "ge.exec.inputReuseMemIndexes",
                    "ge.exec.outputReuseMemIndexes",
                ]
                .iter()
                .any(|k| scenario.options.graph.contains_key(*k));
                // Only where the plan with reuse on can share nothing but the listed memory:
                // two intermediates sharing bytes would break DRM-010 itself.
                let others = scenario
                    .tensors
                    .iter()
                    .filter(|t| !matches!(t.role, Role::Input { .. } | Role::Output { .. }))
                    .count();
                if listed && others <= 1 {
                    let mut obs = reference(&without(scenario, "ge.exec.disableReuseMemory"))?;
                    obs.warnings = reference(scenario)?.warnings;
                    Ok(obs)
                } else {
                    reference(scenario)
                }
            }
            Fault::AcceptMisalignedOutputs => {
                let mut s = scenario.clone();
                for t in &mut s.tensors {
                    if matches!(t.role, Role::Output { .. }) {
                        t.size = aligned(t.size).unwrap_or(t.size);
                    }
                }
                let mut obs = reference(&s)?;
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Fault::IgnoreRunMismatch => {
                let mut obs = reference(scenario)?;
                obs.errors.retain(|e| e.clause != "ORI-011");
                Ok(obs)
            }
        }
    }
}

#[rstest]
#[case::overlap_live(Fault::OverlapLive, "DRM-011")]
#[case::ignore_disable(Fault::IgnoreDisable, "DRM-010")]
#[case::touch_unlisted_input(Fault::TouchUnlistedInput, "IRM-010")]
#[case::accept_misaligned(Fault::AcceptMisaligned, "IRM-011")]
#[case::alias_apart(Fault::AliasApart, "ORI-001")]
#[case::scatter_memset(Fault::ScatterMemset, "ACP-012")]
#[case::ignore_run_mismatch(Fault::IgnoreRunMismatch, "ORI-011")]
#[case::run_check_at_input_index(Fault::RunCheckAtInputIndex, "ORI-011")]
#[case::run_check_first_pair_only(Fault::RunCheckFirstPairOnly, "ORI-011")]
#[case::pairs_dropped_with_reuse_off(Fault::PairsDroppedWithReuseOff, "ORI-001")]
#[case::half_open_lifetimes(Fault::HalfOpenLifetimes, "DRM-013")]
#[case::misreport_peak(Fault::MisreportPeak, "MEM-004")]
#[case::misalign(Fault::Misalign, "MEM-003")]
#[case::drop_tensor(Fault::DropTensor, "MEM-002")]
#[case::accept_invalid(Fault::AcceptInvalid, "MEM-001")]
#[case::plan_despite_error(Fault::PlanDespiteError, "MEM-005")]
#[case::hide_reused_inputs(Fault::HideReusedInputs, "IRM-012")]
#[case::hide_reused_outputs(Fault::HideReusedOutputs, "ORM-012")]
#[case::merge_separate_groups(Fault::MergeSeparateGroups, "ACP-011")]
#[case::separate_under_policy_0(Fault::SeparateUnderPolicy0, "ACP-010")]
#[case::short_separate_regions(Fault::ShortSeparateRegions, "ACP-013")]
#[case::lists_override_disable(Fault::ListsOverrideDisable, "DRM-012")]
#[case::accept_misaligned_outputs(Fault::AcceptMisalignedOutputs, "ORM-011")]
fn each_fault_is_caught_by_its_clause(#[case] fault: Fault, #[case] clause: &str) {
    let caught = caught_clauses(
        &Judging::failing(Profile::Documented, clause),
        &Faulty(fault),
        Some(Capability::Memory),
    );
    assert!(
        caught.contains_key(clause),
        "{fault:?} should break {clause}; caught: {caught:#?}"
    );
    common::assert_no_failure_at_documented_for_a_choice(
        &fault,
        &Faulty(fault),
        Capability::Memory,
        Profile::Documented,
        clause,
    );
}

#[test]
fn the_reference_is_caught_by_nothing() {
    let caught = caught_clauses(
        &Judging::DEFAULT.strict(),
        &Reference,
        Some(Capability::Memory),
    );
    assert!(caught.is_empty(), "{caught:#?}");
}

/// Faults the default certification must fail, each a wrapper around the reference: some the
/// random plans reach rarely (the boundary phase plans tensors of every width and residue),
/// some that only what a plan is for shows (reuse never used, a list ignored, a peak raised),
/// which the DRM-015 twin of the cases and the memory property catches. Each is failed on the
/// clause it breaks.
#[derive(Debug, Clone, Copy)]
enum Rare {
    /// Keeps offsets in 32 bits (integer width): a tensor past 4 GiB lands back at the bottom.
    Offsets32,
    /// Checks a listed input's size against 16 bytes instead of 32 (residue): a 48-byte input
    /// is planned without the error.
    ResidueSixteen,
    /// Never reuses memory (no reuse): with reuse on it plans as if it were off.
    NeverReuse,
    /// Ignores `ge.exec.inputReuseMemIndexes` when planning (ignored index list): listed inputs
    /// are kept for the whole run, though the options' answer still reads the list.
    IgnoreInputReuse,
    /// Ignores `ge.exec.outputReuseMemIndexes` when planning, as `IgnoreInputReuse` does inputs.
    IgnoreOutputReuse,
    /// Plans with reuse on by stacking tensors in an order that pads every one to 4 KiB, while
    /// its plan with reuse off packs them (reuse raises the peak).
    PaddedReuse,
}

/// The reference's plan of `planned` in place of its plan of `scenario`, when both plan: the
/// diagnostics stay those of `scenario`, so only the placement is wrong.
fn planned_as(scenario: &MemoryScenario, planned: &MemoryScenario) -> Answer<MemoryObservation> {
    let obs = Reference.memory(scenario)?;
    if !obs.errors.is_empty() || obs.offsets.is_empty() {
        return Ok(obs);
    }
    let mut other = Reference.memory(planned)?;
    if !other.errors.is_empty() || other.offsets.is_empty() {
        return Ok(obs);
    }
    other.warnings = obs.warnings;
    other.errors = obs.errors;
    other.aliases = obs.aliases;
    Ok(other)
}

/// Whether the options leave reuse on: no level sets `ge.exec.disableReuseMemory` to `1`.
fn reuse_on(scenario: &MemoryScenario) -> bool {
    let key = "ge.exec.disableReuseMemory";
    let maps = &scenario.options;
    [&maps.global, &maps.session, &maps.graph]
        .iter()
        .all(|m| m.get(key).map(String::as_str) != Some("1"))
}

#[derive(Debug)]
struct RareFault(Rare);

impl Backend for RareFault {
    fn name(&self) -> &str {
        "rare-memory-fault"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Memory].into_iter().collect()
    }

    fn memory(&self, scenario: &MemoryScenario) -> Answer<MemoryObservation> {
        match self.0 {
            Rare::Offsets32 => {
                let mut obs = Reference.memory(scenario)?;
                for offset in obs.offsets.values_mut() {
                    *offset %= 1 << 32;
                }
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Rare::ResidueSixteen => {
                let mut s = scenario.clone();
                for t in &mut s.tensors {
                    if matches!(t.role, Role::Input { .. } | Role::Output { .. })
                        && t.size % 16 == 0
                    {
                        t.size = aligned(t.size).unwrap_or(t.size);
                    }
                }
                let mut obs = Reference.memory(&s)?;
                repeak(scenario, &mut obs);
                Ok(obs)
            }
            Rare::NeverReuse => {
                let mut s = scenario.clone();
                s.options
                    .graph
                    .insert("ge.exec.disableReuseMemory".into(), "1".into());
                planned_as(scenario, &s)
            }
            Rare::IgnoreInputReuse => {
                planned_as(scenario, &without(scenario, "ge.exec.inputReuseMemIndexes"))
            }
            Rare::IgnoreOutputReuse => planned_as(
                scenario,
                &without(scenario, "ge.exec.outputReuseMemIndexes"),
            ),
            Rare::PaddedReuse => {
                let mut obs = Reference.memory(scenario)?;
                if !reuse_on(scenario) || !obs.errors.is_empty() || obs.offsets.is_empty() {
                    return Ok(obs);
                }
                // Every tensor on a 4 KiB slot of its own, in name order: safe, never shared.
                let mut base = 0u64;
                for t in &scenario.tensors {
                    obs.offsets.insert(t.name.clone(), base);
                    base += aligned(t.size).unwrap_or(t.size).div_ceil(4096).max(1) * 4096;
                }
                repeak(scenario, &mut obs);
                obs.reused_inputs.clear();
                obs.reused_outputs.clear();
                Ok(obs)
            }
        }
    }
}

#[rstest]
#[case::offsets_kept_in_32_bits(Rare::Offsets32, "DRM-011")]
#[case::reuse_size_checked_at_16_bytes(Rare::ResidueSixteen, "IRM-011")]
#[case::never_reuse(Rare::NeverReuse, "DRM-014")]
#[case::ignore_input_reuse(Rare::IgnoreInputReuse, "IRM-013")]
#[case::ignore_output_reuse(Rare::IgnoreOutputReuse, "ORM-013")]
#[case::padded_reuse(Rare::PaddedReuse, "DRM-015")]
fn rare_fault_is_caught_by_the_default_certification(#[case] fault: Rare, #[case] clause: &str) {
    common::assert_caught_in_certification(&fault, &RareFault(fault), "memory", clause);
}

/// A memory fault's counterexample keeps only the graph inputs and outputs its rule needs: a
/// graph port goes with its tensor and the list items naming it (`reduce::Removal::Port`), so
/// an alias kept apart shrinks to its pair (one input, one output, the one option) whatever
/// else the generated graph had.
#[test]
fn a_memory_fault_shrinks_to_the_ports_its_rule_needs() {
    for boundaries in [true, false] {
        let size = common::counterexample_size(
            &Faulty(Fault::AliasApart),
            Capability::Memory,
            "ORI-001",
            boundaries,
        );
        assert_eq!(
            size,
            Some(ge_conformance::reduce::Size { keys: 1, items: 2 }),
            "boundaries: {boundaries}"
        );
    }
}

/// Measures shrinking: the size of each fault's property counterexample on its clause (option
/// keys and items), then their distribution, for `docs/benchmarks.md`. Run with
/// `cargo test --release -p ge-conformance --test it -- --ignored --nocapture faults_memory::counterexample_sizes`.
// Long because: a list of every fault with its clause, one row each; the measuring is the last
// lines.
#[test]
#[ignore = "a measurement for docs/benchmarks.md; the regression it guards is held by the shrinking tests"]
fn counterexample_sizes() {
    let faults: Vec<(&str, Box<dyn Backend>, &str)> = vec![
        (
            "overlap_live",
            Box::new(Faulty(Fault::OverlapLive)),
            "DRM-011",
        ),
        (
            "ignore_disable",
            Box::new(Faulty(Fault::IgnoreDisable)),
            "DRM-010",
        ),
        (
            "touch_unlisted_input",
            Box::new(Faulty(Fault::TouchUnlistedInput)),
            "IRM-010",
        ),
        (
            "accept_misaligned",
            Box::new(Faulty(Fault::AcceptMisaligned)),
            "IRM-011",
        ),
        (
            "alias_apart",
            Box::new(Faulty(Fault::AliasApart)),
            "ORI-001",
        ),
        (
            "scatter_memset",
            Box::new(Faulty(Fault::ScatterMemset)),
            "ACP-012",
        ),
        (
            "ignore_run_mismatch",
            Box::new(Faulty(Fault::IgnoreRunMismatch)),
            "ORI-011",
        ),
        (
            "half_open_lifetimes",
            Box::new(Faulty(Fault::HalfOpenLifetimes)),
            "DRM-013",
        ),
        (
            "misreport_peak",
            Box::new(Faulty(Fault::MisreportPeak)),
            "MEM-004",
        ),
        ("misalign", Box::new(Faulty(Fault::Misalign)), "MEM-003"),
        (
            "drop_tensor",
            Box::new(Faulty(Fault::DropTensor)),
            "MEM-002",
        ),
        (
            "accept_invalid",
            Box::new(Faulty(Fault::AcceptInvalid)),
            "MEM-001",
        ),
        (
            "plan_despite_error",
            Box::new(Faulty(Fault::PlanDespiteError)),
            "MEM-002",
        ),
        (
            "hide_reused_inputs",
            Box::new(Faulty(Fault::HideReusedInputs)),
            "IRM-012",
        ),
        (
            "hide_reused_outputs",
            Box::new(Faulty(Fault::HideReusedOutputs)),
            "ORM-012",
        ),
        (
            "merge_separate_groups",
            Box::new(Faulty(Fault::MergeSeparateGroups)),
            "ACP-011",
        ),
        (
            "separate_under_policy_0",
            Box::new(Faulty(Fault::SeparateUnderPolicy0)),
            "ACP-010",
        ),
        (
            "short_separate_regions",
            Box::new(Faulty(Fault::ShortSeparateRegions)),
            "ACP-013",
        ),
        (
            "lists_override_disable",
            Box::new(Faulty(Fault::ListsOverrideDisable)),
            "DRM-012",
        ),
        (
            "accept_misaligned_outputs",
            Box::new(Faulty(Fault::AcceptMisalignedOutputs)),
            "ORM-011",
        ),
        (
            "offsets_kept_in_32_bits",
            Box::new(RareFault(Rare::Offsets32)),
            "DRM-011",
        ),
        (
            "reuse_size_checked_at_16_bytes",
            Box::new(RareFault(Rare::ResidueSixteen)),
            "IRM-011",
        ),
        (
            "never_reuse",
            Box::new(RareFault(Rare::NeverReuse)),
            "DRM-014",
        ),
        (
            "ignore_input_reuse",
            Box::new(RareFault(Rare::IgnoreInputReuse)),
            "IRM-013",
        ),
        (
            "ignore_output_reuse",
            Box::new(RareFault(Rare::IgnoreOutputReuse)),
            "ORM-013",
        ),
        (
            "padded_reuse",
            Box::new(RareFault(Rare::PaddedReuse)),
            "DRM-015",
        ),
    ];
    common::print_counterexample_sizes(Capability::Memory, &faults);
}
