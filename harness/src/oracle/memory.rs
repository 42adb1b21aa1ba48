//! The memory oracle: the invariants every memory observation must hold, whoever produced it.
//!
//! Many plans are right for one scenario, so the oracle never compares offsets with the
//! reference's. It works out what the scenario and its options demand (scenario validity, the
//! option layer's errors and warnings, misaligned reuse, run-time pair mismatches) and checks the
//! plan's geometry: every tensor placed and aligned, the peak consistent, no two tensors sharing a
//! byte unless the options allow it, aliases at one address, cleanup groups as the policy says,
//! and the reuse reports telling the truth. Each violation names the clause it breaks.
//!
//! Lifetimes (clauses DRM-011, IRM-012, ORM-012, ACP-010, ACP-011): a tensor uses the inclusive
//! steps `first..=last`. A listed input is live from step 0 to its last use; a listed output from
//! its first use to the end of the run (the largest `last` of any tensor); unlisted inputs and
//! outputs, alias pairs and the policy-0 memset region are reserved for the whole run; a
//! policy-1 memset operator's outputs are live from its first output's `first` to its last
//! output's `last`. Tensors of size 0 occupy no byte.

use std::collections::{BTreeMap, BTreeSet};

use ge_reference::options::{self, Values};
use ge_spec::vocab::memory::{
    aligned, Alias, MemoryObservation, MemoryScenario, Role, Tensor, ALIGNMENT,
};
use ge_spec::{Diagnostic, Profile};

use super::Violation;

/// At most this many byte-sharing violations are reported (the first ones say enough).
const MAX_SHARING_REPORTS: usize = 16;

/// Judges a memory observation.
pub fn judge(scenario: &MemoryScenario, observation: &MemoryObservation) -> Vec<Violation> {
    judge_in(Profile::Documented, scenario, observation)
}

/// [`judge`] under `profile`.
pub fn judge_in(
    profile: Profile,
    scenario: &MemoryScenario,
    observation: &MemoryObservation,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let invalid = scenario.validate();
    if !invalid.is_empty() {
        require_diagnostics(&invalid, &observation.errors, "error", &mut out);
        require_no_plan(observation, "the scenario is invalid", &mut out);
        return out;
    }
    let resolution = options::resolve_in(
        profile,
        &scenario.options,
        ge_reference::memory::context(scenario),
    );
    require_diagnostics(
        &resolution.observation.warnings,
        &observation.warnings,
        "warning",
        &mut out,
    );
    if resolution.rejected() {
        require_diagnostics(
            &resolution.observation.errors,
            &observation.errors,
            "error",
            &mut out,
        );
        require_no_plan(observation, "an option was rejected", &mut out);
        return out;
    }
    let values = resolution.values;
    let misaligned = misaligned_reuse(scenario, &values);
    require_diagnostics(&misaligned, &observation.errors, "error", &mut out);
    if !misaligned.is_empty() {
        require_no_plan(
            observation,
            "a listed input or output is misaligned",
            &mut out,
        );
        return out;
    }
    let run = run_mismatches(scenario, &values);
    require_diagnostics(&run, &observation.errors, "error", &mut out);
    for e in &observation.errors {
        if !run.contains(e) {
            out.push(Violation::new(
                e.clause.clone(),
                format!("the observation reports an error the scenario does not call for: {e}"),
            ));
        }
    }
    Plan::new(scenario, &values, observation, &mut out).check(&mut out);
    out
}

/// Every diagnostic of `wanted` must be among `got`.
fn require_diagnostics(
    wanted: &[Diagnostic],
    got: &[Diagnostic],
    what: &str,
    out: &mut Vec<Violation>,
) {
    for w in wanted {
        if !got.contains(w) {
            out.push(Violation::new(
                w.clause.clone(),
                format!("missing {what}: {w}"),
            ));
        }
    }
}

/// MEM-002: nothing is planned when planning failed.
fn require_no_plan(obs: &MemoryObservation, why: &str, out: &mut Vec<Violation>) {
    if !obs.offsets.is_empty() || !obs.cleanup.is_empty() || obs.peak_bytes != 0 {
        out.push(Violation::new(
            "MEM-002",
            format!(
                "{why}, yet the observation carries a plan (offsets, cleanup groups or a peak)"
            ),
        ));
    }
    if !obs.reused_inputs.is_empty() || !obs.reused_outputs.is_empty() || !obs.aliases.is_empty() {
        out.push(Violation::new(
            "MEM-002",
            format!("{why}, yet the observation reports reuse or aliases"),
        ));
    }
}

/// What IRM-011 and ORM-011 call for: the key, `input i` / `output j` and the size.
fn misaligned_reuse(scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let mut wanted = Vec::new();
    for &i in &values.input_reuse {
        if let Some(t) = scenario.input(i).filter(|t| t.size % ALIGNMENT != 0) {
            wanted.push(
                Diagnostic::new("IRM-011", "")
                    .key("ge.exec.inputReuseMemIndexes")
                    .subject(format!("input {i}"))
                    .value(t.size.to_string()),
            );
        }
    }
    for &j in &values.output_reuse {
        if let Some(t) = scenario.output(j).filter(|t| t.size % ALIGNMENT != 0) {
            wanted.push(
                Diagnostic::new("ORM-011", "")
                    .key("ge.exec.outputReuseMemIndexes")
                    .subject(format!("output {j}"))
                    .value(t.size.to_string()),
            );
        }
    }
    wanted
}

/// What ORI-011 calls for: one error per pair passed at two addresses.
fn run_mismatches(scenario: &MemoryScenario, values: &Values) -> Vec<Diagnostic> {
    let Some(run) = &scenario.run else {
        return Vec::new();
    };
    values
        .output_reuse_input
        .iter()
        .filter(|&&(i, o)| run.inputs.get(i as usize) != run.outputs.get(o as usize))
        .map(|&(i, o)| {
            Diagnostic::new("ORI-011", "")
                .key("ge.exec.outputReuseInputMemIndexes")
                .subject(format!("pair {i},{o}"))
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
    /// A memset output under policy 0: the whole run, no one else (ACP-010).
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

impl<'a> Plan<'a> {
    fn new(
        scenario: &'a MemoryScenario,
        values: &'a Values,
        obs: &'a MemoryObservation,
        out: &mut Vec<Violation>,
    ) -> Self {
        let tensors = &scenario.tensors;
        let end = scenario.run_end();
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
        let mut partner = vec![None; tensors.len()];
        for &(i, o) in &values.output_reuse_input {
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
        let mut op_span: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
        for t in tensors {
            if let Role::Memset { op } = &t.role {
                let s = op_span.entry(op).or_insert((t.first, t.last));
                *s = (s.0.min(t.first), s.1.max(t.last));
            }
        }
        let mut keep = Vec::with_capacity(tensors.len());
        let mut span = Vec::with_capacity(tensors.len());
        for (k, t) in tensors.iter().enumerate() {
            let (kind, s) = match &t.role {
                _ if partner[k].is_some() => (Keep::Aliased, (0, end)),
                Role::Input { index } if values.input_reuse.contains(index) => {
                    (Keep::ListedInput, (0, t.last))
                }
                Role::Input { .. } => (Keep::UnlistedInput, (0, end)),
                Role::Output { index } if values.output_reuse.contains(index) => {
                    (Keep::ListedOutput, (t.first, end))
                }
                Role::Output { .. } => (Keep::UnlistedOutput, (0, end)),
                Role::Memset { .. } if !values.separate_atomic_clean => {
                    (Keep::Collective, (0, end))
                }
                Role::Memset { op } => (
                    Keep::Separate,
                    op_span
                        .get(op.as_str())
                        .copied()
                        .unwrap_or((t.first, t.last)),
                ),
                Role::Intermediate => (Keep::Own, (t.first, t.last)),
            };
            keep.push(kind);
            span.push(s);
        }
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
        if self.offsets.iter().any(Option::is_none) {
            return;
        }
        let offsets: Vec<u64> = self.offsets.iter().map(|o| o.unwrap_or(0)).collect();
        self.check_alignment(&offsets, out);
        let Some(ends) = self.check_peak(&offsets, out) else {
            return;
        };
        let shared = self.check_sharing(&offsets, &ends, out);
        self.check_reports(&shared, out);
        self.check_aliases(&offsets, out);
        self.check_cleanup(&offsets, &ends, out);
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

    /// MEM-004; returns the end of every tensor when none overflows.
    fn check_peak(&self, offsets: &[u64], out: &mut Vec<Violation>) -> Option<Vec<u64>> {
        let mut ends = Vec::with_capacity(offsets.len());
        for (t, &o) in self.tensors.iter().zip(offsets) {
            let Some(e) = o.checked_add(t.size) else {
                out.push(Violation::new(
                    "MEM-004",
                    format!("tensor `{}` at offset {o} ends beyond 2^64 - 1", t.name),
                ));
                return None;
            };
            ends.push(e);
        }
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
        Some(ends)
    }

    /// DRM-010, DRM-011, IRM-010, IRM-012, ORM-010, ORM-012, ORI-010, ACP-010, ACP-011: no two
    /// tensors share a byte unless allowed. Returns, per tensor, whether some tensor other than its
    /// alias partner shares one of its bytes.
    fn check_sharing(&self, offsets: &[u64], ends: &[u64], out: &mut Vec<Violation>) -> Vec<bool> {
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
        shared
    }

    /// The clause two tensors that share a byte break, if any.
    fn conflict(&self, a: usize, b: usize) -> Option<&'static str> {
        if self.values.disable_reuse {
            return Some("DRM-010");
        }
        let kinds = [self.keep[a], self.keep[b]];
        for (kind, clause) in [
            (Keep::UnlistedInput, "IRM-010"),
            (Keep::UnlistedOutput, "ORM-010"),
            (Keep::Aliased, "ORI-010"),
            (Keep::Collective, "ACP-010"),
        ] {
            if kinds.contains(&kind) {
                return Some(clause);
            }
        }
        let (x, y) = (&self.tensors[a], &self.tensors[b]);
        if x.first <= y.last && y.first <= x.last {
            return Some("DRM-011");
        }
        let (sa, sb) = (self.span[a], self.span[b]);
        if sa.0 <= sb.1 && sb.0 <= sa.1 {
            // The overlap comes from a lifetime the options extend; name that option's clause.
            for (kind, clause) in [
                (Keep::ListedInput, "IRM-012"),
                (Keep::ListedOutput, "ORM-012"),
                (Keep::Separate, "ACP-011"),
            ] {
                if kinds.contains(&kind) {
                    return Some(clause);
                }
            }
            return Some("DRM-011");
        }
        None
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
            .map(|&(input, output)| Alias { input, output })
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
                    out.push(Violation::new(
                        "ORI-010",
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
        let clause = if self.values.separate_atomic_clean {
            "ACP-011"
        } else {
            "ACP-010"
        };
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
            return;
        }
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
                    clause,
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
                    clause,
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
