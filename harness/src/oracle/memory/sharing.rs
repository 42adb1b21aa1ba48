//! The memory oracle's sharing checks: which tensors may share bytes, whether reuse was used where it must be, the lower bound on the plan's peak, and the reports and aliases of shared memory.

use super::*;

impl Plan<'_> {
    /// Which tensors share bytes: per tensor, whether some tensor other than its alias partner
    /// shares one of its bytes, and the pairs that may not ([`Plan::check_sharing`]).
    pub(super) fn sharing(&self, offsets: &[u64], ends: &[u64]) -> (Vec<bool>, Vec<Violation>) {
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
                            format_args!(
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
                format_args!(
                    "{} more pairs of tensors share bytes",
                    reported - MAX_SHARING_REPORTS
                ),
            ));
        }
        (shared, out)
    }

    /// DRM-010, DRM-011, IRM-010, IRM-012, ORM-010, ORM-012, ORI-010, ACP-010, ACP-011: no two
    /// tensors share a byte unless allowed ([`Plan::sharing`]).
    pub(super) fn check_sharing(&self, offsets: &[u64], ends: &[u64]) -> Vec<Violation> {
        self.sharing(offsets, ends).1
    }

    /// The clause two tensors that share a byte break, if any: first what the text says (two
    /// tensors in use at once, reuse turned off), then the suite's readings of the lifetimes.
    pub(super) fn conflict(&self, a: usize, b: usize) -> Option<&'static str> {
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
    pub(super) fn check_reuse_used(&self, shared: &[bool], out: &mut Vec<Violation>) {
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
                    format_args!(
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
    pub(super) fn check_lower_bound(&self, out: &mut Vec<Violation>) {
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
                format_args!(
                    "every tensor takes {size} bytes rounded up and at most {most} are kept at one step, so a peak of {bound} is reachable, but the plan's peak is {}",
                    self.obs.peak_bytes
                ),
            ));
        }
    }

    /// IRM-012 / ORM-012: the reuse reports list exactly the listed inputs and outputs whose bytes
    /// another tensor shares.
    pub(super) fn check_reports(&self, shared: &[bool], out: &mut Vec<Violation>) {
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
                format_args!("reused_inputs is {reported_in:?} but the inputs whose bytes other tensors share are {inputs:?}"),
            ));
        }
        if reported_out != outputs {
            out.push(Violation::new(
                "ORM-012",
                format_args!("reused_outputs is {reported_out:?} but the outputs whose bytes other tensors share are {outputs:?}"),
            ));
        }
    }

    /// ORI-010: the pairs in force are reported, and each output sits at its input's offset.
    pub(super) fn check_aliases(&self, offsets: &[u64], out: &mut Vec<Violation>) {
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
                format_args!(
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
                        format_args!(
                            "input {index} (`{}`) is at {} but its paired output `{}` is at {}",
                            t.name, offsets[k], self.tensors[p].name, offsets[p]
                        ),
                    ));
                }
            }
        }
    }
}
