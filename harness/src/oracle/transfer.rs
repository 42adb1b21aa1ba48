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
use super::{Called, Entry, Phase, Violation};
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

/// The twins an unset option's default is judged with (OPT-006 and the option's value clause,
/// which states the default): for each option a plan acts on that no level where it takes
/// effect sets, the same scenario with that option set to its default at the first such
/// level. Setting an option to its default changes nothing the text fixes, so an engine whose
/// plan changes has another default than the text's; one answer alone cannot tell a wrong
/// default from a wrong plan ([`judge_default_twin`]). Documented profile only; none for a
/// scenario the options or the scenario itself make an error.
pub fn default_twins(
    profile: Profile,
    scenario: &TransferScenario,
) -> Vec<(OptionKey, TransferScenario)> {
    if profile != Profile::Documented {
        return Vec::new();
    }
    let reading = Reading::new(profile, &scenario.options, context(scenario));
    if reading.rejected() || !wanted_errors(scenario, &reading, false).is_empty() {
        return Vec::new();
    }
    let spec = Spec::embedded();
    KEYS.iter()
        .filter_map(|&key| {
            let row = spec.option(key);
            let set = row
                .levels
                .iter()
                .any(|l| scenario.options.at(*l).contains_key(key.as_str()));
            let (Some(default), Some(level), false) = (&row.default, row.levels.first(), set)
            else {
                return None;
            };
            let mut twin = scenario.clone();
            twin.options
                .at_mut(*level)
                .insert(key.as_str().to_owned(), default.clone());
            Some((key, twin))
        })
        .collect()
}

/// OPT-006 (an option not set has its default value; the value clauses IFS-001 and IBC-001
/// state the defaults): `unset`, a plan made with `key` unset, against `twin`, the same
/// engine's plan with `key` set to its default ([`default_twins`]). Where they differ, the
/// engine's default is not the text's, charged as the options oracle charges it. Answers with
/// errors are not compared: an engine may refuse a value a restriction keeps from taking
/// effect (OPT-008), and what an answer lacks is judged where it is answered.
pub fn judge_default_twin(
    key: OptionKey,
    unset: &TransferObservation,
    twin: &TransferObservation,
) -> Vec<Violation> {
    if !unset.errors.is_empty() || !twin.errors.is_empty() {
        return Vec::new();
    }
    let plan = |o: &TransferObservation| {
        let sorted = |v: &[u32]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v
        };
        (
            sorted(&o.fused),
            sorted(&o.direct),
            sorted(&o.batched),
            sorted(&o.on_device),
            o.fused_bytes,
        )
    };
    let (a, b) = (plan(unset), plan(twin));
    if a == b {
        return Vec::new();
    }
    let default = Spec::embedded()
        .option(key)
        .default
        .clone()
        .unwrap_or_default();
    let show = |p: &(Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>, u64)| {
        format!(
            "fused {} ({} bytes), direct {}, batched {}, on_device {}",
            list(&p.0),
            p.4,
            list(&p.1),
            list(&p.2),
            list(&p.3)
        )
    };
    // A wrong default is OPT-006's, as the options oracle charges it: one place for the clause.
    vec![Violation::new(
        "OPT-006",
        format_args!(
            "with {key} unset the plan is {}, but with it set to its default `{default}` the plan is {}: the engine's default is another",
            show(&a),
            show(&b)
        ),
    )]
}

/// Judges the observation with the options read as `values` (`rejected`: some option is): the
/// errors first, then, when the plan may plan, the checks of the plan one clause at a time.
fn judge_under(
    profile: Profile,
    scenario: &TransferScenario,
    observation: &TransferObservation,
    reading: &Reading,
    values: &Values,
    rejected: bool,
) -> Vec<Violation> {
    let obs = observation;
    let spec = Spec::embedded();
    let wanted_errors = wanted_errors(scenario, reading, rejected);
    let mut warnings = reading.expected_warnings();
    let refused = !obs.errors.is_empty() && planned_nothing(obs);
    // Only a refusal nothing calls for needs the setting's leave: an invalid scenario or a
    // rejected option already stops the request, and its errors are judged as such.
    let called_for = !wanted_errors.is_empty() || rejected;
    let allowed = (refused && !called_for)
        .then(|| reading.refusal_reason())
        .flatten();
    // The errors of a refusal the setting allows are that refusal's own, whatever they cite.
    let mut out = match allowed {
        Some(_) => Vec::new(),
        None => diagnostics::compare_beside(
            spec,
            "errors",
            &wanted_errors,
            &obs.errors,
            false,
            &warnings,
        ),
    };
    if !wanted_errors.is_empty() || (rejected && !obs.errors.is_empty()) || allowed.is_some() {
        let cx = Stopped {
            obs,
            warnings: &warnings,
        };
        super::run_table(STOPPED, &cx, &mut out);
        out.extend(allowed);
        return out;
    }
    // Errors no reading calls for: with a plan, they are reports, and the plan is judged as any
    // other (planning anyway is TRF-005's); without one, the request was refused for no reason
    // the text allows, and the empty plan is judged as the plan it is.
    if !obs.errors.is_empty() && !refused {
        out.extend(check_nothing_planned(obs));
    }
    let cx = Judged::new(scenario, obs, values);
    super::run_table(PLAN, &cx, &mut out);
    if profile == Profile::Upstream {
        // GE's plan is one answer: compare the groups, the span and the run's warnings.
        let (violations, run_warnings) = upstream::judge(scenario, obs, values);
        out.extend(violations);
        warnings.extend(run_warnings.iter().map(Expected::exact));
        out.extend(check_warnings(spec, &warnings, obs));
        return out;
    }
    super::run_table(FUSION, &cx, &mut out);
    super::run_table(BATCH_COPY, &cx, &mut out);
    out.extend(check_warnings(spec, &warnings, obs));
    out
}

/// A check of the plan ([`Judged`]).
type PlanCheck = Entry<fn(&Judged<'_>) -> Vec<Violation>>;

/// What the checks of an observation with errors read: it, and the warnings it must carry.
struct Stopped<'a> {
    obs: &'a TransferObservation,
    warnings: &'a [Expected],
}

/// A check of the phases whose context is [`Stopped`].
type StoppedCheck = Entry<fn(&Stopped<'_>) -> Vec<Violation>>;

/// The checks of an observation with errors, in order.
const STOPPED: &[StoppedCheck] = &[
    Entry {
        clauses: &["TRF-004"],
        name: "check_warnings",
        run: |cx| check_warnings(Spec::embedded(), cx.warnings, cx.obs),
    },
    Entry {
        clauses: &["TRF-005"],
        name: "check_nothing_planned",
        run: |cx| check_nothing_planned(cx.obs).into_iter().collect(),
    },
];

/// The checks of a plan under both profiles, in order.
const PLAN: &[PlanCheck] = &[
    Entry {
        clauses: &["TRF-001", "IBC-012"],
        name: "check_partition",
        run: check_partition,
    },
    Entry {
        clauses: &["TRF-001"],
        name: "check_all_planned",
        run: |cx| check_all_planned(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["TRF-003"],
        name: "check_device_inputs",
        run: |cx| check_device_inputs(cx).into_iter().collect(),
    },
];

/// The fusion checks, in order (documented profile).
const FUSION: &[PlanCheck] = &[
    Entry {
        clauses: &["IFS-003"],
        name: "check_sync_fusion",
        run: |cx| check_sync_fusion(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-004"],
        name: "check_dynamic_fusion",
        run: |cx| check_dynamic_fusion(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-012"],
        name: "check_fusion_off",
        run: |cx| check_fusion_off(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-011"],
        name: "check_fused_within_threshold",
        run: |cx| check_fused_within_threshold(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-016"],
        name: "check_lone_fused",
        run: |cx| check_lone_fused(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-010"],
        name: "check_all_fused",
        run: |cx| check_all_fused(cx, Spec::embedded()).into_iter().collect(),
    },
    Entry {
        clauses: &["IFS-018"],
        name: "check_fused_bytes",
        run: |cx| check_fused_bytes(cx).into_iter().collect(),
    },
];

/// The batch-copy checks, in order (documented profile).
const BATCH_COPY: &[PlanCheck] = &[
    Entry {
        clauses: &["IBC-013"],
        name: "check_lone_batch",
        run: |cx| check_lone_batch(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-010"],
        name: "check_batch_enabled",
        run: |cx| check_batch_enabled(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-004"],
        name: "check_batch_product",
        run: |cx| check_batch_product(cx, ibc()).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-005"],
        name: "check_batch_async",
        run: |cx| check_batch_async(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-003"],
        name: "check_batch_inputs",
        run: |cx| check_batch_inputs(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-011", "IBC-015"],
        name: "check_batch_applied",
        run: |cx| check_batch_applied(cx).into_iter().collect(),
    },
    Entry {
        clauses: &["IBC-013"],
        name: "check_lone_left",
        run: |cx| check_lone_left(cx).into_iter().collect(),
    },
];

/// The checks the driver calls itself: the errors called for, and upstream, the comparison
/// with GE's one plan.
const CALLED: &[Called] = &[
    Entry {
        clauses: &["TRF-002", "TRF-004"],
        name: "wanted_errors",
        run: (),
    },
    Entry {
        clauses: &["OPT-006"],
        name: "judge_default_twin",
        run: (),
    },
    Entry {
        clauses: &[
            "TRF-003", "IFS-016", "IFS-017", "IFS-018", "IBC-003", "IBC-004", "IBC-005", "IBC-011",
            "IBC-013",
        ],
        name: "upstream::judge",
        run: (),
    },
    Entry {
        clauses: &["TRF-004"],
        name: "check_warnings",
        run: (),
    },
];

/// The checks of the transfer oracle, by phase, for the registry.
pub(super) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("an observation with errors", STOPPED),
        Phase::of("a plan", PLAN),
        Phase::of("a plan's fusion (documented)", FUSION),
        Phase::of("a plan's batch copy (documented)", BATCH_COPY),
        Phase::called("by the driver", CALLED),
    ]
}

/// The input batch-copy option's row.
fn ibc() -> &'static OptionSpec {
    Spec::embedded().option(OptionKey::InputBatchCpy)
}

/// Whether batch copy applies to the scenario: enabled, on a product of its list, within the
/// option's restrictions.
fn batch_on(cx: &Judged<'_>) -> bool {
    let (scenario, ibc) = (cx.scenario, ibc());
    cx.values.batch_copy
        && ibc.restrictions.products.contains(&scenario.product)
        && restrictions_met(
            ibc,
            scenario.run_mode,
            scenario.shape,
            scenario.inputs.len(),
        )
}

/// TRF-002, TRF-004: the errors the observation must carry: the options' when one is rejected
/// (TRF-004), then one per input index the graph cannot hold or that is used more than once
/// (TRF-002).
fn wanted_errors(scenario: &TransferScenario, reading: &Reading, rejected: bool) -> Vec<Expected> {
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
    if u32::try_from(scenario.inputs.len()).is_err() {
        wanted_errors.push(Expected::exact(
            &Diagnostic::new("TRF-002", "").subject(Subject::input(u32::MAX)),
        ));
    }
    for &i in &duplicates {
        wanted_errors.push(Expected::exact(
            &Diagnostic::new("TRF-002", "").subject(Subject::input(i)),
        ));
    }
    wanted_errors
}

/// TRF-004: the warnings the observation carries are the options' (and upstream, the run's).
fn check_warnings(spec: &Spec, wanted: &[Expected], obs: &TransferObservation) -> Vec<Violation> {
    diagnostics::compare(spec, "warnings", wanted, &obs.warnings, false)
}

/// True when the observation plans no input.
fn planned_nothing(obs: &TransferObservation) -> bool {
    obs.fused.is_empty()
        && obs.direct.is_empty()
        && obs.batched.is_empty()
        && obs.on_device.is_empty()
        && obs.fused_bytes == 0
}

/// TRF-005: nothing is planned when there are errors: the observation's, or those the request
/// calls for (a value the judge's reading refuses, an invalid scenario) when it reports none.
fn check_nothing_planned(obs: &TransferObservation) -> Option<Violation> {
    (!planned_nothing(obs)).then(|| {
        Violation::new(
            "TRF-005",
            if obs.errors.is_empty() {
                "inputs are planned, but the request calls for errors, and a request with errors plans nothing"
            } else {
                "the observation carries errors but plans inputs anyway"
            },
        )
    })
}

/// What the checks of a plan read: the scenario's inputs by index and the plan's groups by
/// input, built once.
struct Judged<'a> {
    scenario: &'a TransferScenario,
    obs: &'a TransferObservation,
    values: &'a Values,
    /// Each input's size and placement, by index.
    sizes: BTreeMap<u32, (u64, Placement)>,
    /// The groups each planned index is in, in the order of the plan's lists.
    groups_of: BTreeMap<u32, Vec<Group>>,
    /// The indexes planned as on the device.
    on_device: BTreeSet<u32>,
}

impl<'a> Judged<'a> {
    fn new(
        scenario: &'a TransferScenario,
        obs: &'a TransferObservation,
        values: &'a Values,
    ) -> Self {
        let sizes = scenario
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
        Judged {
            scenario,
            obs,
            values,
            sizes,
            groups_of,
            on_device: obs.on_device.iter().copied().collect(),
        }
    }

    fn size_of(&self, i: &u32) -> Option<u64> {
        self.sizes.get(i).map(|(s, _)| *s)
    }

    /// The indexes the plan fuses.
    fn fused(&self) -> BTreeSet<u32> {
        self.obs.fused.iter().copied().collect()
    }
}

/// TRF-001, IBC-012: every planned index is an input of the scenario, planned in one group only
/// (fused and batch-copied both: IBC-012).
fn check_partition(cx: &Judged<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    for (index, groups) in &cx.groups_of {
        if !cx.sizes.contains_key(index) {
            out.push(Violation::new(
                "TRF-001",
                format_args!("input {index} is planned but the scenario has no such input"),
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
                format_args!(
                    "input {index} appears {} times: in {}",
                    groups.len(),
                    crate::judging::Joined(&names, ", ")
                ),
            ));
        }
    }
    out
}

/// TRF-001: every input of the scenario is in some group of the plan.
fn check_all_planned(cx: &Judged<'_>) -> Option<Violation> {
    let missing: Vec<u32> = cx
        .sizes
        .keys()
        .filter(|i| !cx.groups_of.contains_key(i))
        .copied()
        .collect();
    (!missing.is_empty()).then(|| {
        Violation::new(
            "TRF-001",
            format_args!("inputs {} are in no group of the plan", list(&missing)),
        )
    })
}

/// TRF-003: exactly the device inputs are on_device, and nothing else moves them.
fn check_device_inputs(cx: &Judged<'_>) -> Option<Violation> {
    let device: BTreeSet<u32> = cx
        .sizes
        .iter()
        .filter(|(_, (_, p))| *p == Placement::Device)
        .map(|(i, _)| *i)
        .collect();
    if cx.on_device == device {
        return None;
    }
    let moved: Vec<u32> = device.difference(&cx.on_device).copied().collect();
    let wrong: Vec<u32> = cx.on_device.difference(&device).copied().collect();
    Some(Violation::new(
        "TRF-003",
        format_args!(
            "device inputs {} are planned for a move; host inputs {} are said to be on the device",
            list(&moved),
            list(&wrong)
        ),
    ))
}

/// IFS-003: a synchronous run fuses nothing.
fn check_sync_fusion(cx: &Judged<'_>) -> Option<Violation> {
    let fused = &cx.obs.fused;
    (!fused.is_empty() && cx.scenario.run_mode == RunMode::Sync).then(|| {
        Violation::new(
            "IFS-003",
            format_args!("the synchronous run fuses inputs {}", list(fused)),
        )
    })
}

/// IFS-004: a dynamic-shape graph fuses nothing.
fn check_dynamic_fusion(cx: &Judged<'_>) -> Option<Violation> {
    let fused = &cx.obs.fused;
    (!fused.is_empty() && cx.scenario.shape == ShapeKind::Dynamic).then(|| {
        Violation::new(
            "IFS-004",
            format_args!("a dynamic-shape graph fuses inputs {}", list(fused)),
        )
    })
}

/// IFS-012: threshold 0 turns fusion off.
fn check_fusion_off(cx: &Judged<'_>) -> Option<Violation> {
    let fused = &cx.obs.fused;
    (!fused.is_empty() && cx.values.fusion_size == 0).then(|| {
        Violation::new(
            "IFS-012",
            format_args!(
                "threshold 0 turns fusion off, yet inputs {} are fused",
                list(fused)
            ),
        )
    })
}

/// IFS-011: no input larger than the threshold is fused.
fn check_fused_within_threshold(cx: &Judged<'_>) -> Option<Violation> {
    let too_big: Vec<u32> = cx
        .obs
        .fused
        .iter()
        .filter(|i| cx.size_of(i).is_some_and(|s| s > cx.values.fusion_size))
        .copied()
        .collect();
    (!too_big.is_empty()).then(|| {
        Violation::new(
            "IFS-011",
            format_args!(
                "inputs {} are larger than the threshold {} but fused",
                list(&too_big),
                cx.values.fusion_size
            ),
        )
    })
}

/// IFS-016: no input is fused on its own.
fn check_lone_fused(cx: &Judged<'_>) -> Option<Violation> {
    (cx.obs.fused.len() == 1).then(|| {
        Violation::new(
            "IFS-016",
            format_args!("input {} is fused on its own", cx.obs.fused[0]),
        )
    })
}

/// IFS-010: where fusion applies, every host input within the threshold is fused, once two are.
fn check_all_fused(cx: &Judged<'_>, spec: &Spec) -> Option<Violation> {
    let (scenario, values) = (cx.scenario, cx.values);
    let fusion_on = restrictions_met(
        spec.option(OptionKey::InputFusionSize),
        scenario.run_mode,
        scenario.shape,
        scenario.inputs.len(),
    ) && values.fusion_size > 0;
    if !fusion_on {
        return None;
    }
    let eligible: Vec<u32> = cx
        .sizes
        .iter()
        .filter(|(_, (s, p))| *p == Placement::Host && *s <= values.fusion_size)
        .map(|(i, _)| *i)
        .collect();
    let fused = cx.fused();
    let unfused: Vec<u32> = eligible
        .iter()
        .filter(|i| !fused.contains(i))
        .copied()
        .collect();
    (eligible.len() >= 2 && !unfused.is_empty()).then(|| {
        Violation::new(
            "IFS-010",
            format_args!(
                "host inputs {} are within the threshold {} but not fused",
                list(&unfused),
                values.fusion_size
            ),
        )
    })
}

/// IFS-018: fused_bytes is the sum of the fused inputs' sizes.
fn check_fused_bytes(cx: &Judged<'_>) -> Option<Violation> {
    let obs = cx.obs;
    let sum = obs
        .fused
        .iter()
        .try_fold(0u64, |acc, i| acc.checked_add(cx.size_of(i).unwrap_or(0)));
    (sum != Some(obs.fused_bytes)).then(|| {
        Violation::new(
            "IFS-018",
            format_args!(
                "fused_bytes is {} but the fused inputs' sizes add up to {}",
                obs.fused_bytes,
                sum.map_or_else(|| "more than u64 holds".to_owned(), |s| s.to_string())
            ),
        )
    })
}

/// IBC-013: a batch copy holds more than one input.
fn check_lone_batch(cx: &Judged<'_>) -> Option<Violation> {
    (cx.obs.batched.len() == 1).then(|| {
        Violation::new(
            "IBC-013",
            format_args!("a batch copy holds the single input {}", cx.obs.batched[0]),
        )
    })
}

/// A violation of `clause` for batch-copying inputs though `why` (where `broken`); none when
/// nothing is batch-copied.
fn batched_though(cx: &Judged<'_>, clause: &str, broken: bool, why: String) -> Option<Violation> {
    (!cx.obs.batched.is_empty() && broken).then(|| {
        Violation::new(
            clause,
            format_args!(
                "inputs {} are batch-copied but {why}",
                list(&cx.obs.batched)
            ),
        )
    })
}

/// IBC-010: nothing is batch-copied unless batch copy is enabled.
fn check_batch_enabled(cx: &Judged<'_>) -> Option<Violation> {
    let why = "batch copy is not enabled".to_owned();
    batched_though(cx, "IBC-010", !cx.values.batch_copy, why)
}

/// IBC-004: nothing is batch-copied on a product out of the batch-copy list.
fn check_batch_product(cx: &Judged<'_>, ibc: &OptionSpec) -> Option<Violation> {
    let product = &cx.scenario.product;
    let why = format!("product {product} is not in the batch-copy list");
    batched_though(
        cx,
        "IBC-004",
        !ibc.restrictions.products.contains(product),
        why,
    )
}

/// IBC-005: a synchronous run batch-copies nothing.
fn check_batch_async(cx: &Judged<'_>) -> Option<Violation> {
    let why = "the run is synchronous".to_owned();
    batched_though(cx, "IBC-005", cx.scenario.run_mode == RunMode::Sync, why)
}

/// IBC-003: a graph of one user input batch-copies nothing.
fn check_batch_inputs(cx: &Judged<'_>) -> Option<Violation> {
    let n = cx.scenario.inputs.len();
    let why = format!("the graph has {n} user input(s)");
    batched_though(cx, "IBC-003", n <= 1, why)
}

/// The inputs left to move after fusion: the host inputs, and any device input the engine moves
/// as well (TRF-003, a suite choice, judges that; the rules of the text then count it like any
/// other input to move).
fn left_after_fusion(cx: &Judged<'_>) -> Vec<u32> {
    let fused = cx.fused();
    cx.sizes
        .iter()
        .filter(|(i, (_, p))| {
            (*p == Placement::Host || !cx.on_device.contains(i)) && !fused.contains(i)
        })
        .map(|(i, _)| *i)
        .collect()
}

/// IBC-011 (IBC-015 on a dynamic-shape graph): where batch copy applies and two or more inputs
/// are left after fusion, none goes directly.
fn check_batch_applied(cx: &Judged<'_>) -> Option<Violation> {
    if !batch_on(cx) {
        return None;
    }
    let left: &[u32] = &left_after_fusion(cx);
    let (scenario, obs) = (cx.scenario, cx.obs);
    if left.len() < 2 || obs.direct.is_empty() {
        return None;
    }
    // On a dynamic-shape graph, that batch copy applies at all is the suite's reading
    // (IBC-015): the text's shape restriction may be read as the batch's too.
    Some(Violation::new(
        if scenario.shape == ShapeKind::Dynamic {
            "IBC-015"
        } else {
            "IBC-011"
        },
        format_args!(
            "batch copy applies to the {} host inputs left after fusion, yet {} go directly",
            left.len(),
            list(&obs.direct)
        ),
    ))
}

/// IBC-013: where batch copy applies, the one input left after fusion is copied on its own.
fn check_lone_left(cx: &Judged<'_>) -> Option<Violation> {
    if !batch_on(cx) {
        return None;
    }
    let left: &[u32] = &left_after_fusion(cx);
    (left.len() == 1 && cx.obs.direct != left).then(|| {
        Violation::new(
            "IBC-013",
            format_args!(
                "the one host input left, {}, must be copied on its own",
                left[0]
            ),
        )
    })
}
