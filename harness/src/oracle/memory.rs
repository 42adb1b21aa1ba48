//! The memory oracle: the invariants every memory observation must hold, whoever produced it.
//!
//! Many plans are right for one scenario, so the oracle never compares offsets with the
//! reference's. It works out what the scenario and its options demand (scenario validity, the
//! options' errors and warnings, misaligned reuse, run-time pair mismatches) on its own reading
//! of the tables ([`super::options`]), and checks the plan's geometry: every tensor placed and
//! aligned, the peak consistent, no two tensors sharing a byte unless the options allow it,
//! aliases at one address, cleanup groups as the policy says, and the reuse reports telling
//! the truth. Each violation names the clause it breaks.
//!
//! Lifetimes: a tensor is in use over the inclusive steps `first..=last`. Two tensors in use at
//! the same time never share a byte (DRM-011, documented); where they only meet at one step, one
//! ending as the other begins, the suite's inclusive reading (DRM-013) says they do not share
//! either. Beyond that the suite keeps memory longer (reference-defined): a listed input from
//! step 0 to its last use (IRM-012), a listed output from its first use to the end of the run
//! (ORM-012), unlisted inputs and outputs and alias pairs for the whole run (IRM-010, ORM-010,
//! ORI-010), the policy-0 memset region from step 0 to the death of its last memset output
//! (ACP-012), a policy-1 operator's region over its outputs' span (ACP-013). Tensors of size 0
//! occupy no byte.
//!
//! Reuse is also judged for being used: with reuse on, a plan that shares nothing where a tensor
//! of exactly a freed tensor's size follows it breaks DRM-014 (intermediates), IRM-013 (a listed
//! input) or ORM-013 (a listed output), and with tensors of one size the peak reaches the lower
//! bound (DRM-016, the suite's bar). DRM-015 compares two plans of one engine, so it is judged
//! where the backend is asked (`runner::reuse_twin_violations`), with
//! [`reuse_off_twin`] and [`judge_twin`].
//!
//! This file holds the judge, the plan's placement checks (offsets, alignment, peak) and its
//! tables; `sharing` holds the checks of shared bytes and reuse, `cleanup` those of the atomic
//! cleanup groups.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::memory::{
    aligned, Alias, MemoryObservation, MemoryScenario, Role, Tensor, ALIGNMENT,
};
use ge_spec::{Diagnostic, OptionKey, Profile, Spec, Subject};

use super::diagnostics::{self, Expected};
use super::options::{Context, Reading, Values};
use super::{Called, Entry, Phase, Violation};
use crate::judging::Judging;

mod cleanup;
mod sharing;

/// At most this many byte-sharing violations are reported (the first ones say enough).
const MAX_SHARING_REPORTS: usize = 16;

/// The options a memory plan acts on.
const KEYS: [OptionKey; 5] = [
    OptionKey::AtomicCleanPolicy,
    OptionKey::DisableReuseMemory,
    OptionKey::InputReuseMemIndexes,
    OptionKey::OutputReuseMemIndexes,
    OptionKey::OutputReuseInputMemIndexes,
];

/// The option context of a memory scenario: its counts, a static-shape graph run
/// asynchronously on the default product (the scenario names no run mode, shape or product).
pub fn context(scenario: &MemoryScenario) -> Context {
    Context {
        inputs: Some(scenario.inputs),
        outputs: Some(scenario.outputs),
        ..Context::plain()
    }
}

/// Judges a memory observation under `judging`.
pub fn judge(
    judging: &Judging,
    scenario: &MemoryScenario,
    observation: &MemoryObservation,
) -> Vec<Violation> {
    let spec = Spec::embedded();
    let reading = Reading::new(judging.profile, &scenario.options, context(scenario));
    let invalid = scenario.validate();
    if !invalid.is_empty() {
        let mut out = Vec::new();
        let expected: Vec<Expected> = invalid.iter().map(Expected::exact).collect();
        // An error beside the scenario's own that behaves like a warning the options call for
        // (a setting where its option does not take effect, refused) is that warning given as
        // an error, as in a valid scenario.
        out.extend(diagnostics::compare_beside(
            spec,
            "errors",
            &expected,
            &observation.errors,
            false,
            &reading.expected_warnings(),
        ));
        require_no_plan(observation, "the scenario is invalid", &mut out);
        return out;
    }
    let planned = !observation.offsets.is_empty() || observation.peak_bytes != 0;
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

/// The same graph with memory reuse turned off at the graph level, the twin DRM-015 compares a
/// plan with; `None` when reuse is off already (or the options are rejected, so there is no
/// plan to compare), under the suite's reading of the options.
pub fn reuse_off_twin(profile: Profile, scenario: &MemoryScenario) -> Option<MemoryScenario> {
    if !scenario.validate().is_empty() {
        return None;
    }
    let reading = Reading::new(profile, &scenario.options, context(scenario));
    if reading.rejected() || reading.values().disable_reuse {
        return None;
    }
    let mut twin = scenario.clone();
    twin.options.graph.insert(
        OptionKey::DisableReuseMemory.as_str().to_owned(),
        "1".to_owned(),
    );
    Some(twin)
}

/// DRM-015: the peak of `on`, a plan made with reuse on, against the peak of `off`, the same
/// engine's plan of the [`reuse_off_twin`] graph. The engine's padding is its own business, so
/// `on` may exceed `off` by the padding of one tensor to the engine's alignment, read from its
/// two plans as the greatest common divisor of their non-zero offsets (a placement order that
/// puts another tensor on top changes the peak by at most that). Plans with errors, or none,
/// are not compared: what they lack is judged where they are answered.
pub fn judge_twin(
    scenario: &MemoryScenario,
    on: &MemoryObservation,
    off: &MemoryObservation,
) -> Vec<Violation> {
    let planned = |o: &MemoryObservation| o.errors.is_empty() && !o.offsets.is_empty();
    if !planned(on) || !planned(off) {
        return Vec::new();
    }
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let unit = on
        .offsets
        .values()
        .chain(off.offsets.values())
        .fold(0, |g, &o| gcd(g, o));
    let slack = if unit == 0 {
        0
    } else {
        scenario
            .tensors
            .iter()
            .filter(|t| t.size % unit != 0)
            .map(|t| unit - t.size % unit)
            .max()
            .unwrap_or(0)
    };
    if on.peak_bytes > off.peak_bytes.saturating_add(slack) {
        return vec![Violation::new(
            "DRM-015",
            format_args!(
                "with memory reuse on the peak is {} bytes, but the same graph with `ge.exec.disableReuseMemory` = 1 is planned in {} (padding to the plans' {unit}-byte unit allows {slack} more)",
                on.peak_bytes, off.peak_bytes
            ),
        )];
    }
    Vec::new()
}

/// Each of `wanted`, required exactly.
fn exact(wanted: &[Diagnostic]) -> Vec<Expected> {
    wanted.iter().map(Expected::exact).collect()
}

/// Judges the observation with the options read as `values` (`rejected`: some option is).
fn judge_under(
    profile: Profile,
    scenario: &MemoryScenario,
    observation: &MemoryObservation,
    reading: &Reading,
    values: &Values,
    rejected: bool,
) -> Vec<Violation> {
    let spec = Spec::embedded();
    let mut out = Vec::new();
    let warnings = reading.expected_warnings();
    out.extend(diagnostics::compare(
        spec,
        "warnings",
        &warnings,
        &observation.warnings,
        false,
    ));
    let errors = |expected: &[Expected], out: &mut Vec<Violation>| {
        out.extend(diagnostics::compare_beside(
            spec,
            "errors",
            expected,
            &observation.errors,
            false,
            &warnings,
        ));
    };
    if rejected {
        errors(&reading.expected_errors(), &mut out);
        require_no_plan(observation, "an option was rejected", &mut out);
        return out;
    }
    // IRM-011 / ORM-011 upstream: GE checks no size of a listed input or output.
    let misaligned = if profile == Profile::Upstream {
        Vec::new()
    } else {
        misaligned_reuse(scenario, values)
    };
    let planned = !observation.offsets.is_empty();
    if !misaligned.is_empty() && !planned {
        errors(&exact(&misaligned), &mut out);
        require_no_plan(
            observation,
            "a listed input or output is misaligned",
            &mut out,
        );
        return out;
    }
    let run = run_mismatches(profile, scenario, values);
    if !planned && !observation.errors.is_empty() {
        if let Some(v) = refusal(reading, &run, &errors) {
            out.extend(v);
            return out;
        }
    }
    for d in &misaligned {
        // IRM-011 / ORM-011: the suite refuses; the text leaves it to the user.
        out.push(Violation::new(
            d.clause.clone(),
            format_args!(
                "a listed {} is not a multiple of 32 bytes, yet a plan is made",
                d.subject
            ),
        ));
    }
    errors(&exact(&run), &mut out);
    Plan::new(profile, scenario, values, observation, &mut out).check(&mut out);
    out
}

/// A refusal (errors, nothing planned) no reading calls for, judged when something allows it:
/// a run refused at run time with its plan dropped (the plan is the suite's to keep, MEM-005),
/// or a setting at a level where its option does not take effect (OPT-002's choice departed
/// from). `None`: nothing allows it, and it is judged as the plan it is, one that gives no
/// tensor memory (MEM-002).
fn refusal(
    reading: &Reading,
    run: &[Diagnostic],
    errors: &dyn Fn(&[Expected], &mut Vec<Violation>),
) -> Option<Vec<Violation>> {
    let mut out = Vec::new();
    if !run.is_empty() {
        errors(&exact(run), &mut out);
        out.push(Violation::new(
            "MEM-005",
            "the run is refused at run time and the plan it follows is not reported",
        ));
        return Some(out);
    }
    out.push(reading.refusal_reason()?);
    Some(out)
}

/// MEM-005: nothing is planned when planning failed.
fn require_no_plan(obs: &MemoryObservation, why: &str, out: &mut Vec<Violation>) {
    if !obs.offsets.is_empty() || !obs.cleanup.is_empty() || obs.peak_bytes != 0 {
        out.push(Violation::new(
            "MEM-005",
            format_args!(
                "{why}, yet the observation carries a plan (offsets, cleanup groups or a peak)"
            ),
        ));
    }
    if !obs.reused_inputs.is_empty() || !obs.reused_outputs.is_empty() || !obs.aliases.is_empty() {
        out.push(Violation::new(
            "MEM-005",
            format_args!("{why}, yet the observation reports reuse or aliases"),
        ));
    }
}

/// What IRM-011 and ORM-011 call for: the key and `input i` / `output j`.
fn misaligned_reuse(scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let mut wanted = Vec::new();
    for &i in &values.input_reuse {
        let Ok(i) = u32::try_from(i) else { continue };
        if let Some(t) = scenario.input(i).filter(|t| t.size % ALIGNMENT != 0) {
            wanted.push(
                Diagnostic::new("IRM-011", "")
                    .key("ge.exec.inputReuseMemIndexes")
                    .subject(Subject::input(i))
                    .value(t.size.to_string()),
            );
        }
    }
    for &j in &values.output_reuse {
        let Ok(j) = u32::try_from(j) else { continue };
        if let Some(t) = scenario.output(j).filter(|t| t.size % ALIGNMENT != 0) {
            wanted.push(
                Diagnostic::new("ORM-011", "")
                    .key("ge.exec.outputReuseMemIndexes")
                    .subject(Subject::output(j))
                    .value(t.size.to_string()),
            );
        }
    }
    wanted
}

/// What ORI-011 calls for: one error per pair passed at two addresses.
fn run_mismatches(profile: Profile, scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let Some(run) = &scenario.run else {
        return Vec::new();
    };
    // ORI-011 upstream: GE checks nothing when the run passes no input or no output, and a
    // pair whose buffers are not both passed fails the run.
    if profile == Profile::Upstream && (run.inputs.is_empty() || run.outputs.is_empty()) {
        return Vec::new();
    }
    values
        .output_reuse_input
        .iter()
        .filter_map(|&(i, o)| Some((u32::try_from(i).ok()?, u32::try_from(o).ok()?)))
        .filter(|&(i, o)| {
            let (a, b) = (run.inputs.get(i as usize), run.outputs.get(o as usize));
            match profile {
                Profile::Documented => a != b,
                Profile::Upstream => a.is_none() || b.is_none() || a != b,
            }
        })
        .map(|(i, o)| {
            Diagnostic::new("ORI-011", "")
                .key("ge.exec.outputReuseInputMemIndexes")
                .subject(Subject::alias(i, o))
        })
        .collect()
}

/// How a tensor's memory must be kept, under the options in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Its own steps only.
    Own,
    /// A listed input: from step 0 (IRM-012).
    ListedInput,
    /// A listed output: to the end of the run (ORM-012).
    ListedOutput,
    /// An unlisted input: the whole run, no one else (IRM-010).
    UnlistedInput,
    /// An unlisted output: the whole run, no one else (ORM-010).
    UnlistedOutput,
    /// Half of an alias pair: the whole run, no one but its partner (ORI-010).
    Aliased,
    /// A memset output under policy 0: from step 0 to the last step of the last memset output
    /// (ACP-012).
    Collective,
    /// A memset output under policy 1: the steps of its operator (ACP-011).
    Separate,
}

/// The plan under judgement, with what each tensor demands.
struct Plan<'a> {
    tensors: &'a [Tensor],
    obs: &'a MemoryObservation,
    values: &'a Values,
    /// Offsets by tensor index (complete once `new` returned without a MEM-002 violation).
    offsets: Vec<Option<u64>>,
    keep: Vec<Keep>,
    /// The lifetime each tensor's memory must be kept for.
    span: Vec<(u32, u32)>,
    /// Partner in an alias pair.
    partner: Vec<Option<usize>>,
}

/// MEM-002: the plan places every tensor of the scenario, and nothing else. Returns the offsets
/// by tensor index.
fn placed_offsets(
    tensors: &[Tensor],
    obs: &MemoryObservation,
    out: &mut Vec<Violation>,
) -> Vec<Option<u64>> {
    let names: BTreeSet<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    for name in obs.offsets.keys() {
        if !names.contains(name.as_str()) {
            out.push(Violation::new(
                "MEM-002",
                format_args!("the plan places `{name}`, which is no tensor of the scenario"),
            ));
        }
    }
    let offsets: Vec<Option<u64>> = tensors
        .iter()
        .map(|t| obs.offsets.get(&t.name).copied())
        .collect();
    for (t, o) in tensors.iter().zip(&offsets) {
        if o.is_none() {
            out.push(Violation::new(
                "MEM-002",
                format_args!("tensor `{}` has no offset", t.name),
            ));
        }
    }
    offsets
}

/// ORI-010: the alias partner of each tensor, by index, for the pairs in force.
fn partners(profile: Profile, tensors: &[Tensor], values: &Values) -> Vec<Option<usize>> {
    let mut partner = vec![None; tensors.len()];
    // ORI-010 upstream: GE's planners never read the pairs; each half is planned like any
    // other input or output, and the pair is only checked at run time.
    let planned_pairs = values
        .output_reuse_input
        .iter()
        .filter(|_| profile == Profile::Documented);
    for &(i, o) in planned_pairs {
        let (Ok(i), Ok(o)) = (u32::try_from(i), u32::try_from(o)) else {
            continue;
        };
        let a = tensors
            .iter()
            .position(|t| t.role == Role::Input { index: i });
        let b = tensors
            .iter()
            .position(|t| t.role == Role::Output { index: o });
        if let (Some(a), Some(b)) = (a, b) {
            partner[a] = Some(b);
            partner[b] = Some(a);
        }
    }
    partner
}

/// The steps the memset outputs take, which their kept spans are made of (ACP-012, ACP-013).
struct MemsetSpans<'a> {
    /// Per memset operator, the span of its outputs' steps.
    op: BTreeMap<&'a str, (u32, u32)>,
    /// The last step of any memset output.
    end: u32,
}

impl<'a> MemsetSpans<'a> {
    /// ACP-012 / ACP-013: the span of each memset operator's outputs, and the last step of any.
    fn of(tensors: &'a [Tensor]) -> Self {
        let mut op_span: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
        let mut memset_end = 0;
        for t in tensors {
            if let Role::Memset { op } = &t.role {
                let s = op_span.entry(op).or_insert((t.first, t.last));
                *s = (s.0.min(t.first), s.1.max(t.last));
                memset_end = memset_end.max(t.last);
            }
        }
        MemsetSpans {
            op: op_span,
            end: memset_end,
        }
    }
}

/// IRM-010, IRM-012, ORM-010, ORM-012, ORI-010, ACP-012, ACP-013: how `t`'s memory must be kept
/// under `values` (`aliased`: it is half of a pair in force), and over which steps; `end` is
/// the last step of the run.
fn kept(
    t: &Tensor,
    aliased: bool,
    values: &Values,
    end: u32,
    memset: &MemsetSpans,
) -> (Keep, (u32, u32)) {
    match &t.role {
        _ if aliased => (Keep::Aliased, (0, end)),
        Role::Input { index } if values.input_reuse.contains(&u64::from(*index)) => {
            (Keep::ListedInput, (0, t.last))
        }
        Role::Input { .. } => (Keep::UnlistedInput, (0, end)),
        Role::Output { index } if values.output_reuse.contains(&u64::from(*index)) => {
            (Keep::ListedOutput, (t.first, end))
        }
        Role::Output { .. } => (Keep::UnlistedOutput, (0, end)),
        Role::Memset { .. } if !values.separate_atomic_clean => (Keep::Collective, (0, memset.end)),
        Role::Memset { op } => (
            Keep::Separate,
            memset
                .op
                .get(op.as_str())
                .copied()
                .unwrap_or((t.first, t.last)),
        ),
        Role::Intermediate => (Keep::Own, (t.first, t.last)),
    }
}

/// What the checks of a complete plan read: the plan, every tensor's offset, and once no
/// tensor overflows ([`Plan::ends`]), their ends and which share bytes ([`Plan::sharing`]).
struct Placed<'p, 'a> {
    plan: &'p Plan<'a>,
    offsets: Vec<u64>,
    ends: Vec<u64>,
    shared: Vec<bool>,
}

/// A check of a complete plan.
type PlanCheck = Entry<fn(&Placed<'_, '_>) -> Vec<Violation>>;

/// Runs a check that adds to a list.
fn collect(check: impl FnOnce(&mut Vec<Violation>)) -> Vec<Violation> {
    let mut out = Vec::new();
    check(&mut out);
    out
}

/// The checks of a plan that places every tensor, in order; the plan's ends follow them.
const PLACED: &[PlanCheck] = &[
    Entry {
        clauses: &["MEM-003"],
        name: "check_alignment",
        run: |cx| collect(|out| cx.plan.check_alignment(&cx.offsets, out)),
    },
    Entry {
        clauses: &["MEM-004"],
        name: "check_peak",
        run: |cx| collect(|out| cx.plan.check_peak(&cx.offsets, out)),
    },
];

/// The checks of a plan whose tensors all end within 2^64, in order.
const LAID: &[PlanCheck] = &[
    Entry {
        clauses: &[
            "DRM-010", "DRM-011", "DRM-012", "DRM-013", "IRM-010", "IRM-012", "ORM-010", "ORM-012",
            "ORI-010", "ACP-010", "ACP-011", "ACP-012", "ACP-013",
        ],
        name: "sharing::check_sharing",
        run: |cx| cx.plan.check_sharing(&cx.offsets, &cx.ends),
    },
    Entry {
        clauses: &["DRM-014", "IRM-013", "ORM-013"],
        name: "sharing::check_reuse_used",
        run: |cx| collect(|out| cx.plan.check_reuse_used(&cx.shared, out)),
    },
    Entry {
        clauses: &["DRM-016"],
        name: "sharing::check_lower_bound",
        run: |cx| collect(|out| cx.plan.check_lower_bound(out)),
    },
    Entry {
        clauses: &["IRM-012", "ORM-012"],
        name: "sharing::check_reports",
        run: |cx| collect(|out| cx.plan.check_reports(&cx.shared, out)),
    },
    Entry {
        clauses: &["ORI-001", "ORI-010"],
        name: "sharing::check_aliases",
        run: |cx| collect(|out| cx.plan.check_aliases(&cx.offsets, out)),
    },
    Entry {
        clauses: &["ACP-010", "ACP-011"],
        name: "cleanup::check_cleanup",
        run: |cx| collect(|out| cx.plan.check_cleanup(&cx.offsets, &cx.ends, out)),
    },
];

/// The checks the drivers call themselves: those of a scenario or options that stop the plan,
/// those that compute what the plan's checks read, and a refused plan's.
const CALLED: &[Called] = &[
    Entry {
        clauses: &["MEM-005"],
        name: "require_no_plan",
        run: (),
    },
    Entry {
        clauses: &["IRM-011", "ORM-011"],
        name: "misaligned_reuse",
        run: (),
    },
    Entry {
        clauses: &["ORI-011"],
        name: "run_mismatches",
        run: (),
    },
    Entry {
        clauses: &["MEM-002"],
        name: "placed_offsets",
        run: (),
    },
    Entry {
        clauses: &["DRM-014", "IRM-013", "ORM-013"],
        name: "sharing::check_reuse_used",
        run: (),
    },
    Entry {
        clauses: &["DRM-015"],
        name: "judge_twin",
        run: (),
    },
];

/// The checks of the memory oracle, by phase, for the registry.
pub(super) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("a plan that places every tensor", PLACED),
        Phase::of("a plan whose tensors end within 2^64", LAID),
        Phase::called("by the driver", CALLED),
    ]
}

impl<'a> Plan<'a> {
    fn new(
        profile: Profile,
        scenario: &'a MemoryScenario,
        values: &'a Values,
        obs: &'a MemoryObservation,
        out: &mut Vec<Violation>,
    ) -> Self {
        let tensors = &scenario.tensors;
        let offsets = placed_offsets(tensors, obs, out);
        let partner = partners(profile, tensors, values);
        let memset = MemsetSpans::of(tensors);
        let end = scenario.run_end();
        let (keep, span) = tensors
            .iter()
            .enumerate()
            .map(|(k, t)| kept(t, partner[k].is_some(), values, end, &memset))
            .unzip();
        Plan {
            tensors,
            obs,
            values,
            offsets,
            keep,
            span,
            partner,
        }
    }

    fn check(&self, out: &mut Vec<Violation>) {
        // A valid scenario refused: it shares nothing, so where the text says memory is plainly
        // reused (DRM-014, IRM-013, ORM-013) the refusal breaks that too, whatever clause its
        // error cites. Not where any input or output is off the 32-byte alignment the text asks
        // of reused memory: an engine may read that as its reason to refuse.
        let aligned = self.tensors.iter().all(|t| {
            !matches!(t.role, Role::Input { .. } | Role::Output { .. }) || t.size % ALIGNMENT == 0
        });
        if self.offsets.iter().all(Option::is_none) && !self.obs.errors.is_empty() {
            if aligned {
                self.check_reuse_used(&vec![false; self.tensors.len()], out);
            }
            return;
        }
        if self.offsets.iter().any(Option::is_none) {
            return;
        }
        let offsets: Vec<u64> = self.offsets.iter().map(|o| o.unwrap_or(0)).collect();
        let placed = Placed {
            plan: self,
            offsets,
            ends: Vec::new(),
            shared: Vec::new(),
        };
        super::run_table(PLACED, &placed, out);
        let Some(ends) = self.ends(&placed.offsets) else {
            return;
        };
        let shared = self.sharing(&placed.offsets, &ends).0;
        let laid = Placed {
            ends,
            shared,
            ..placed
        };
        super::run_table(LAID, &laid, out);
    }

    /// The end of every tensor (its offset plus its size), when none overflows.
    fn ends(&self, offsets: &[u64]) -> Option<Vec<u64>> {
        self.tensors
            .iter()
            .zip(offsets)
            .map(|(t, &o)| o.checked_add(t.size))
            .collect()
    }

    /// MEM-003.
    fn check_alignment(&self, offsets: &[u64], out: &mut Vec<Violation>) {
        for (t, &o) in self.tensors.iter().zip(offsets) {
            if o % ALIGNMENT != 0 {
                out.push(Violation::new(
                    "MEM-003",
                    format_args!(
                        "tensor `{}` sits at offset {o}, not a multiple of {ALIGNMENT}",
                        t.name
                    ),
                ));
            }
        }
    }

    /// MEM-004: no tensor ends beyond 2^64 - 1, and the peak is where the highest one ends.
    fn check_peak(&self, offsets: &[u64], out: &mut Vec<Violation>) {
        let Some(ends) = self.ends(offsets) else {
            let overflow = self
                .tensors
                .iter()
                .zip(offsets)
                .find(|(t, &o)| o.checked_add(t.size).is_none());
            if let Some((t, o)) = overflow {
                out.push(Violation::new(
                    "MEM-004",
                    format_args!("tensor `{}` at offset {o} ends beyond 2^64 - 1", t.name),
                ));
            }
            return;
        };
        let peak = ends.iter().copied().max().unwrap_or(0);
        if self.obs.peak_bytes != peak {
            out.push(Violation::new(
                "MEM-004",
                format_args!(
                    "peak_bytes is {} but the highest tensor ends at {peak}",
                    self.obs.peak_bytes
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_spec::{Diagnostic, Level};

    /// A scenario that is itself invalid (graph input 0 is no tensor: MEM-001), which sets
    /// `ge.exec.outputReuseInputMemIndexes` at session level, where it does not take effect,
    /// and at graph level, where it does.
    fn invalid_with_settings() -> MemoryScenario {
        let mut s: MemoryScenario = serde_json::from_value(serde_json::json!({
            "inputs": 1, "outputs": 0, "tensors": []
        }))
        .expect("a memory scenario");
        for level in [Level::Session, Level::Graph] {
            s.options.at_mut(level).insert(
                "ge.exec.outputReuseInputMemIndexes".to_owned(),
                "0,0".to_owned(),
            );
        }
        s
    }

    /// The scenario's own errors, and one more citing the option's first clause about its
    /// setting at `level`.
    fn refused_at(s: &MemoryScenario, level: Level) -> MemoryObservation {
        let mut errors = s.validate();
        errors.push(
            Diagnostic::new("ORI-001", "this option cannot be set at this level")
                .key("ge.exec.outputReuseInputMemIndexes")
                .level(level)
                .value("0,0"),
        );
        MemoryObservation {
            errors,
            ..MemoryObservation::default()
        }
    }

    #[test]
    fn an_invalid_scenarios_refusal_over_an_ineffective_setting_is_the_suites_choice_only() {
        let s = invalid_with_settings();
        assert!(!s.validate().is_empty(), "the scenario is invalid");
        let judging = Judging::DEFAULT;
        // Refused over the setting where the option does not take effect: the warning OPT-002
        // calls for, given as an error. OPT-002 is the suite's choice: nothing binds.
        let v = judge(&judging, &s, &refused_at(&s, Level::Session));
        assert!(v.iter().all(|v| v.clause == "OPT-002"), "{v:?}");
        assert!(!v.is_empty() && !judging.any_binding(&v), "{v:?}");
        // The same error about the setting where the option does take effect is no warning
        // given as an error: a wrong backend, failed on the clause it cites.
        let v = judge(&judging, &s, &refused_at(&s, Level::Graph));
        assert!(judging.any_binding(&v), "{v:?}");
        assert!(v.iter().any(|v| v.clause == "ORI-001"), "{v:?}");
    }
}
