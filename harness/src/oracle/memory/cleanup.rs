//! The memory oracle's cleanup checks: the atomic cleanup groups a policy calls for and the regions each group clears.

use super::*;

impl Plan<'_> {
    /// ACP-010 / ACP-011: the cleanup groups follow the policy, and each is one contiguous region.
    pub(super) fn check_cleanup(&self, offsets: &[u64], ends: &[u64], out: &mut Vec<Violation>) {
        if self.check_cleanup_groups(out) {
            self.check_cleanup_regions(offsets, ends, out);
        }
    }

    /// ACP-010 / ACP-011: which outputs are cleaned together is the text's: all memset outputs
    /// at once under policy 0, one cleanup per memset operator under policy 1. Returns whether
    /// the groups are the policy's.
    pub(super) fn check_cleanup_groups(&self, out: &mut Vec<Violation>) -> bool {
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
                format_args!(
                    "the policy calls for {how}, {want_sets:?}, but the groups are {got_sets:?}"
                ),
            ));
            return false;
        }
        true
    }

    /// The cleanup groups the policy calls for (ACP-010, ACP-011): each a sorted list of
    /// names, the groups sorted.
    pub(super) fn wanted_cleanup(&self) -> Vec<Vec<&str>> {
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
    pub(super) fn check_cleanup_regions(
        &self,
        offsets: &[u64],
        ends: &[u64],
        out: &mut Vec<Violation>,
    ) {
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
                    format_args!(
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
                    format_args!(
                        "cleanup group {:?} spans {} bytes, more than its tensors fill even when each is rounded up to {ALIGNMENT}: the region is not contiguous",
                        group.tensors,
                        stop - start
                    ),
                ));
            }
        }
    }
}
