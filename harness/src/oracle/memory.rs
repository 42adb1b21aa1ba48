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

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::memory::{
    aligned, Alias, MemoryObservation, MemoryScenario, Role, Tensor, ALIGNMENT,
};
use ge_spec::{Diagnostic, OptionKey, Profile, Spec, Subject};

use super::diagnostics::{self, Expected};
use super::options::{Context, Reading, Values};
use super::{Called, Entry, Phase, Violation};
use crate::judging::Judging;

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
    let invalid = scenario.validate();
    if !invalid.is_empty() {
        let mut out = Vec::new();
        let expected: Vec<Expected> = invalid.iter().map(Expected::exact).collect();
        out.extend(diagnostics::compare(
            spec,
            "errors",
            &expected,
            &observation.errors,
            false,
        ));
        require_no_plan(observation, "the scenario is invalid", &mut out);
        return out;
    }
    let reading = Reading::new(judging.profile, &scenario.options, context(scenario));
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
            format!(
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
    out.extend(diagnostics::compare(
        spec,
        "warnings",
        &reading.expected_warnings(),
        &observation.warnings,
        false,
    ));
    let errors = |expected: &[Expected], out: &mut Vec<Violation>| {
        out.extend(diagnostics::compare(
            spec,
            "errors",
            expected,
            &observation.errors,
            false,
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
            format!(
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
            format!(
                "{why}, yet the observation carries a plan (offsets, cleanup groups or a peak)"
            ),
        ));
    }
    if !obs.reused_inputs.is_empty() || !obs.reused_outputs.is_empty() || !obs.aliases.is_empty() {
        out.push(Violation::new(
            "MEM-005",
            format!("{why}, yet the observation reports reuse or aliases"),
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
                format!("the plan places `{name}`, which is no tensor of the scenario"),
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
                format!("tensor `{}` has no offset", t.name),
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
        name: "check_sharing",
        run: |cx| cx.plan.check_sharing(&cx.offsets, &cx.ends),
    },
    Entry {
        clauses: &["DRM-014", "IRM-013", "ORM-013"],
        name: "check_reuse_used",
        run: |cx| collect(|out| cx.plan.check_reuse_used(&cx.shared, out)),
    },
    Entry {
        clauses: &["DRM-016"],
        name: "check_lower_bound",
        run: |cx| collect(|out| cx.plan.check_lower_bound(out)),
    },
    Entry {
        clauses: &["IRM-012", "ORM-012"],
        name: "check_reports",
        run: |cx| collect(|out| cx.plan.check_reports(&cx.shared, out)),
    },
    Entry {
        clauses: &["ORI-001", "ORI-010"],
        name: "check_aliases",
        run: |cx| collect(|out| cx.plan.check_aliases(&cx.offsets, out)),
    },
    Entry {
        clauses: &["ACP-010", "ACP-011"],
        name: "check_cleanup",
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
        name: "check_reuse_used",
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
                    format!(
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
                    format!("tensor `{}` at offset {o} ends beyond 2^64 - 1", t.name),
                ));
            }
            return;
        };
        let peak = ends.iter().copied().max().unwrap_or(0);
        if self.obs.peak_bytes != peak {
            out.push(Violation::new(
                "MEM-004",
                format!(
                    "peak_bytes is {} but the highest tensor ends at {peak}",
                    self.obs.peak_bytes
                ),
            ));
        }
    }

    /// Which tensors share bytes: per tensor, whether some tensor other than its alias partner
    /// shares one of its bytes, and the pairs that may not ([`Plan::check_sharing`]).
    fn sharing(&self, offsets: &[u64], ends: &[u64]) -> (Vec<bool>, Vec<Violation>) {
        let mut out = Vec::new();
        let mut order: Vec<usize> = (0..self.tensors.len())
            .filter(|&k| self.tensors[k].size > 0)
            .collect();
        order.sort_by_key(|&k| offsets[k]);
        let mut shared = vec![false; self.tensors.len()];
        let mut active: Vec<usize> = Vec::new();
        let mut reported = 0usize;
        for &k in &order {
            active.retain(|&a| ends[a] > offsets[k]);
            for &a in &active {
                if self.partner[k] == Some(a) {
                    continue;
                }
                shared[k] = true;
                shared[a] = true;
                if let Some(clause) = self.conflict(a, k) {
                    if reported < MAX_SHARING_REPORTS {
                        let (x, y) = (&self.tensors[a], &self.tensors[k]);
                        out.push(Violation::new(
                            clause,
                            format!(
                                "`{}` [{}, {}) steps {}..={} and `{}` [{}, {}) steps {}..={} share bytes",
                                x.name, offsets[a], ends[a], x.first, x.last,
                                y.name, offsets[k], ends[k], y.first, y.last
                            ),
                        ));
                    }
                    reported += 1;
                }
            }
            active.push(k);
        }
        if reported > MAX_SHARING_REPORTS {
            out.push(Violation::new(
                "DRM-011",
                format!(
                    "{} more pairs of tensors share bytes",
                    reported - MAX_SHARING_REPORTS
                ),
            ));
        }
        (shared, out)
    }

    /// DRM-010, DRM-011, IRM-010, IRM-012, ORM-010, ORM-012, ORI-010, ACP-010, ACP-011: no two
    /// tensors share a byte unless allowed ([`Plan::sharing`]).
    fn check_sharing(&self, offsets: &[u64], ends: &[u64]) -> Vec<Violation> {
        self.sharing(offsets, ends).1
    }

    /// The clause two tensors that share a byte break, if any: first what the text says (two
    /// tensors in use at once, reuse turned off), then the suite's readings of the lifetimes.
    fn conflict(&self, a: usize, b: usize) -> Option<&'static str> {
        let (x, y) = (&self.tensors[a], &self.tensors[b]);
        let kinds = [self.keep[a], self.keep[b]];
        let listed = kinds.contains(&Keep::ListedInput) || kinds.contains(&Keep::ListedOutput);
        if self.values.disable_reuse {
            // DRM-012: with reuse off the suite keeps listed inputs and outputs apart as well.
            return Some(if listed { "DRM-012" } else { "DRM-010" });
        }
        if x.first <= y.last && y.first <= x.last {
            // Only meeting at one step, one ending as the other begins: DRM-013's reading.
            let boundary = x.last == y.first || y.last == x.first;
            return Some(if boundary { "DRM-013" } else { "DRM-011" });
        }
        for (kind, clause) in [
            (Keep::UnlistedInput, "IRM-010"),
            (Keep::UnlistedOutput, "ORM-010"),
            (Keep::Aliased, "ORI-010"),
        ] {
            if kinds.contains(&kind) {
                return Some(clause);
            }
        }
        let (sa, sb) = (self.span[a], self.span[b]);
        let meets = |p: (u32, u32), q: (u32, u32)| p.0 <= q.1 && q.0 <= p.1;
        if meets(sa, sb) {
            // The overlap comes from a lifetime the suite extends: name the clause of the tensor
            // whose extension reaches the other's own steps.
            let extended = |k: usize| match self.keep[k] {
                Keep::ListedInput => "IRM-012",
                Keep::ListedOutput => "ORM-012",
                Keep::Collective => "ACP-012",
                Keep::Separate => "ACP-013",
                _ => "DRM-013",
            };
            let (own_a, own_b) = ((x.first, x.last), (y.first, y.last));
            return Some(if meets(own_a, sb) {
                extended(b)
            } else if meets(sa, own_b) {
                extended(a)
            } else {
                extended(a).min(extended(b))
            });
        }
        None
    }

    /// DRM-014, IRM-013, ORM-013: with reuse on, a plan in which no two tensors share a byte
    /// (alias pairs aside) while memory could plainly have been reused. "Plainly" is narrow on
    /// purpose, so that every planner that reuses memory at all shares something there: an
    /// intermediate tensor of exactly the size of a tensor whose memory is free before it begins
    /// (another intermediate that has ended, a listed input after its last use) or after it ends
    /// (a listed output before its first use). A planner may pass up any one chance to reuse; it
    /// may not pass up every one.
    fn check_reuse_used(&self, shared: &[bool], out: &mut Vec<Violation>) {
        if self.values.disable_reuse || shared.iter().any(|&s| s) {
            return;
        }
        let planned = self.offsets.iter().any(Option::is_some);
        let intermediates: Vec<&Tensor> = self
            .tensors
            .iter()
            .filter(|t| t.size > 0 && t.role == Role::Intermediate)
            .collect();
        for (k, x) in self.tensors.iter().enumerate() {
            if x.size == 0 || self.partner[k].is_some() {
                continue;
            }
            let (clause, what) = match (self.keep[k], &x.role) {
                (Keep::Own, Role::Intermediate) => ("DRM-014", "intermediate tensor"),
                (Keep::ListedInput, _) => ("IRM-013", "listed input"),
                (Keep::ListedOutput, _) => ("ORM-013", "listed output"),
                _ => continue,
            };
            let fits = intermediates.iter().find(|y| {
                y.size == x.size
                    && if clause == "ORM-013" {
                        y.last < x.first
                    } else {
                        x.last < y.first
                    }
            });
            if let Some(y) = fits {
                let when = if clause == "ORM-013" {
                    "before it is first used"
                } else {
                    "after it was last used"
                };
                let how = if planned {
                    "no two tensors share a byte"
                } else {
                    "the plan is refused"
                };
                out.push(Violation::new(
                    clause,
                    format!(
                        "memory reuse is on, yet {how}: `{}` ({} bytes, steps {}..={}) could take the memory of {what} `{}` (steps {}..={}), free {when}",
                        y.name, y.size, y.first, y.last, x.name, x.first, x.last
                    ),
                ));
            }
        }
    }

    /// DRM-016: with reuse on and tensors of one size (rounded up to 32 bytes), no memset output
    /// and no alias pair, the peak is at most that size times the most tensors whose kept spans
    /// meet at one step.
    fn check_lower_bound(&self, out: &mut Vec<Violation>) {
        if self.values.disable_reuse || self.partner.iter().any(Option::is_some) {
            return;
        }
        let mut size = None;
        let mut events: Vec<(u64, bool)> = Vec::new();
        for (k, t) in self.tensors.iter().enumerate() {
            if matches!(t.role, Role::Memset { .. }) {
                return;
            }
            if t.size == 0 {
                continue;
            }
            let Some(a) = aligned(t.size) else { return };
            if *size.get_or_insert(a) != a {
                return;
            }
            // Starts before ends at one step: the spans are inclusive.
            let (first, last) = self.span[k];
            events.push((u64::from(first) * 2, true));
            events.push((u64::from(last) * 2 + 1, false));
        }
        let Some(size) = size else { return };
        events.sort_unstable();
        let (mut live, mut most) = (0u64, 0u64);
        for (_, start) in events {
            if start {
                live += 1;
                most = most.max(live);
            } else {
                live -= 1;
            }
        }
        let bound = size.saturating_mul(most);
        if self.obs.peak_bytes > bound {
            out.push(Violation::new(
                "DRM-016",
                format!(
                    "every tensor takes {size} bytes rounded up and at most {most} are kept at one step, so a peak of {bound} is reachable, but the plan's peak is {}",
                    self.obs.peak_bytes
                ),
            ));
        }
    }

    /// IRM-012 / ORM-012: the reuse reports list exactly the listed inputs and outputs whose bytes
    /// another tensor shares.
    fn check_reports(&self, shared: &[bool], out: &mut Vec<Violation>) {
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for (k, t) in self.tensors.iter().enumerate() {
            if !shared[k] || self.partner[k].is_some() {
                continue;
            }
            match t.role {
                Role::Input { index } => inputs.push(index),
                Role::Output { index } => outputs.push(index),
                _ => {}
            }
        }
        inputs.sort_unstable();
        outputs.sort_unstable();
        let mut reported_in = self.obs.reused_inputs.clone();
        reported_in.sort_unstable();
        let mut reported_out = self.obs.reused_outputs.clone();
        reported_out.sort_unstable();
        if reported_in != inputs {
            out.push(Violation::new(
                "IRM-012",
                format!("reused_inputs is {reported_in:?} but the inputs whose bytes other tensors share are {inputs:?}"),
            ));
        }
        if reported_out != outputs {
            out.push(Violation::new(
                "ORM-012",
                format!("reused_outputs is {reported_out:?} but the outputs whose bytes other tensors share are {outputs:?}"),
            ));
        }
    }

    /// ORI-010: the pairs in force are reported, and each output sits at its input's offset.
    fn check_aliases(&self, offsets: &[u64], out: &mut Vec<Violation>) {
        let wanted: BTreeSet<Alias> = self
            .values
            .output_reuse_input
            .iter()
            .filter_map(|&(input, output)| {
                Some(Alias {
                    input: u32::try_from(input).ok()?,
                    output: u32::try_from(output).ok()?,
                })
            })
            .collect();
        let got: BTreeSet<Alias> = self.obs.aliases.iter().copied().collect();
        if wanted != got || self.obs.aliases.len() != got.len() {
            out.push(Violation::new(
                "ORI-010",
                format!(
                    "aliases are {:?} but the pairs in force are {wanted:?}",
                    self.obs.aliases
                ),
            ));
        }
        for (k, t) in self.tensors.iter().enumerate() {
            if let (Role::Input { index }, Some(p)) = (&t.role, self.partner[k]) {
                if offsets[k] != offsets[p] {
                    // ORI-001: the pair shares one address, as the text says.
                    out.push(Violation::new(
                        "ORI-001",
                        format!(
                            "input {index} (`{}`) is at {} but its paired output `{}` is at {}",
                            t.name, offsets[k], self.tensors[p].name, offsets[p]
                        ),
                    ));
                }
            }
        }
    }

    /// ACP-010 / ACP-011: the cleanup groups follow the policy, and each is one contiguous region.
    fn check_cleanup(&self, offsets: &[u64], ends: &[u64], out: &mut Vec<Violation>) {
        if self.check_cleanup_groups(out) {
            self.check_cleanup_regions(offsets, ends, out);
        }
    }

    /// ACP-010 / ACP-011: which outputs are cleaned together is the text's: all memset outputs
    /// at once under policy 0, one cleanup per memset operator under policy 1. Returns whether
    /// the groups are the policy's.
    fn check_cleanup_groups(&self, out: &mut Vec<Violation>) -> bool {
        let clause = if self.values.separate_atomic_clean {
            "ACP-011"
        } else {
            "ACP-010"
        };
        let want_sets = self.wanted_cleanup();
        let mut got_sets: Vec<Vec<&str>> = self
            .obs
            .cleanup
            .iter()
            .map(|g| {
                let mut names: Vec<&str> = g.tensors.iter().map(String::as_str).collect();
                names.sort_unstable();
                names
            })
            .collect();
        got_sets.sort();
        if want_sets != got_sets {
            let how = if self.values.separate_atomic_clean {
                "one cleanup per memset operator"
            } else {
                "one cleanup of all memset outputs"
            };
            out.push(Violation::new(
                clause,
                format!(
                    "the policy calls for {how}, {want_sets:?}, but the groups are {got_sets:?}"
                ),
            ));
            return false;
        }
        true
    }

    /// The cleanup groups the policy calls for (ACP-010, ACP-011): each a sorted list of
    /// names, the groups sorted.
    fn wanted_cleanup(&self) -> Vec<Vec<&str>> {
        let mut wanted: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, t) in self.tensors.iter().enumerate() {
            if let Role::Memset { op } = &t.role {
                let key = if self.values.separate_atomic_clean {
                    op.as_str()
                } else {
                    ""
                };
                wanted.entry(key).or_default().push(k);
            }
        }
        let mut want_sets: Vec<Vec<&str>> = wanted
            .values()
            .map(|g| {
                let mut names: Vec<&str> =
                    g.iter().map(|&k| self.tensors[k].name.as_str()).collect();
                names.sort_unstable();
                names
            })
            .collect();
        want_sets.sort();
        want_sets
    }

    /// ACP-012 / ACP-013: each cleanup group is one contiguous region, covering exactly its
    /// tensors' bytes (the suite's reading of the text, ACP-012 under policy 0, ACP-013 under
    /// policy 1).
    fn check_cleanup_regions(&self, offsets: &[u64], ends: &[u64], out: &mut Vec<Violation>) {
        let region = if self.values.separate_atomic_clean {
            "ACP-013"
        } else {
            "ACP-012"
        };
        let index: BTreeMap<&str, usize> = self
            .tensors
            .iter()
            .enumerate()
            .map(|(k, t)| (t.name.as_str(), k))
            .collect();
        for group in &self.obs.cleanup {
            let members: Vec<usize> = group
                .tensors
                .iter()
                .filter_map(|n| index.get(n.as_str()).copied())
                .collect();
            let start = members.iter().map(|&k| offsets[k]).min().unwrap_or(0);
            let stop = members.iter().map(|&k| ends[k]).max().unwrap_or(0);
            if group.offset != start || group.offset.checked_add(group.size) != Some(stop) {
                out.push(Violation::new(
                    region,
                    format!(
                        "cleanup group {:?} covers [{}, +{}) but its tensors span [{start}, {stop})",
                        group.tensors, group.offset, group.size
                    ),
                ));
                continue;
            }
            let room = members.iter().try_fold(0u64, |sum, &k| {
                sum.checked_add(aligned(self.tensors[k].size)?)
            });
            if room.is_some_and(|room| stop - start > room) {
                out.push(Violation::new(
                    region,
                    format!(
                        "cleanup group {:?} spans {} bytes, more than its tensors fill even when each is rounded up to {ALIGNMENT}: the region is not contiguous",
                        group.tensors,
                        stop - start
                    ),
                ));
            }
        }
    }
}
