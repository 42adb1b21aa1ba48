//! The memory capability: the device memory plan of one graph (offsets in one arena, I/O reuse
//! and aliasing, memset cleanup groups, peak bytes).

use std::collections::{BTreeMap, BTreeSet, HashSet};

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, Part, Subject};
use crate::vocab::OptionMaps;

/// What a tensor is in the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Role {
    /// Graph input number `index`.
    Input {
        /// The input's index.
        index: u32,
    },
    /// Graph output number `index`.
    Output {
        /// The output's index.
        index: u32,
    },
    /// A tensor produced and consumed inside the graph.
    Intermediate,
    /// The output of a memset operator (cleared before use).
    Memset {
        /// The memset operator's name; one operator may have several outputs.
        op: String,
    },
}

/// One tensor to place in the arena.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Tensor {
    /// Unique name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// First step that uses it (inclusive).
    pub first: u32,
    /// Last step that uses it (inclusive).
    pub last: u32,
    /// Its role.
    pub role: Role,
}

/// Device addresses the user passes at run time, by input and output index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct RunAddresses {
    /// Address of input `i` at position `i`.
    #[serde(default)]
    pub inputs: Vec<u64>,
    /// Address of output `j` at position `j`.
    #[serde(default)]
    pub outputs: Vec<u64>,
}

/// The alignment of every offset in the arena, in bytes (clause MEM-003).
pub const ALIGNMENT: u64 = 32;

/// `size` rounded up to [`ALIGNMENT`], or `None` when that does not fit in a `u64`.
pub fn aligned(size: u64) -> Option<u64> {
    size.checked_add(ALIGNMENT - 1)
        .map(|s| s / ALIGNMENT * ALIGNMENT)
}

/// Scenario of the memory capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct MemoryScenario {
    /// The option maps.
    #[serde(default)]
    pub options: OptionMaps,
    /// Number of graph inputs.
    pub inputs: u32,
    /// Number of graph outputs.
    pub outputs: u32,
    /// The tensors.
    pub tensors: Vec<Tensor>,
    /// Addresses passed at run time, if the scenario includes a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunAddresses>,
}

impl MemoryScenario {
    /// The last step of the run: the largest `last` of any tensor (0 without tensors). Where
    /// memory is kept "for the whole run" (the suite keeps unlisted inputs and outputs and alias
    /// pairs so, IRM-010, ORM-010, ORI-010, and listed outputs from their first use, ORM-012),
    /// it is kept from step 0 up to this step.
    pub fn run_end(&self) -> u32 {
        self.tensors.iter().map(|t| t.last).max().unwrap_or(0)
    }

    /// The tensor of graph input `index`, if any.
    pub fn input(&self, index: u32) -> Option<&Tensor> {
        self.tensors
            .iter()
            .find(|t| t.role == Role::Input { index })
    }

    /// The tensor of graph output `index`, if any.
    pub fn output(&self, index: u32) -> Option<&Tensor> {
        self.tensors
            .iter()
            .find(|t| t.role == Role::Output { index })
    }

    /// Checks that the scenario describes a graph at all (clause MEM-001) and returns one error
    /// per problem, empty when it is valid. A valid scenario has unique tensor names, `first <=
    /// last` for every tensor, exactly one tensor per graph input and per graph output (indexes
    /// below the counts), sizes whose sum, each rounded up to [`ALIGNMENT`], fits in a `u64`,
    /// and, when run addresses are given, exactly one address per input and per output.
    // Long because: one check after another, each a rule of MEM-001's list above, in the order the
    // doc gives them.
    pub fn validate(&self) -> Vec<Diagnostic> {
        let mut errors = Vec::new();
        let bad = |subject: Subject, message: String| {
            Diagnostic::new("MEM-001", message).subject(subject)
        };
        // Hashed: a million names are checked in a fraction of the time a tree takes.
        let mut names = HashSet::with_capacity(self.tensors.len());
        let mut inputs = BTreeSet::new();
        let mut outputs = BTreeSet::new();
        let mut total: Option<u64> = Some(0);
        for t in &self.tensors {
            // Made only for an error: most tensors have none.
            let subject = || Subject::tensor(t.name.clone());
            if !names.insert(t.name.as_str()) {
                errors.push(bad(
                    subject(),
                    format!("two tensors are named `{}`", t.name),
                ));
            }
            if t.first > t.last {
                errors.push(bad(
                    subject(),
                    format!(
                        "tensor `{}` is first used at step {} but last used at step {}",
                        t.name, t.first, t.last
                    ),
                ));
            }
            let (index, count, seen, what) = match &t.role {
                Role::Input { index } => (*index, self.inputs, &mut inputs, "input"),
                Role::Output { index } => (*index, self.outputs, &mut outputs, "output"),
                Role::Intermediate | Role::Memset { .. } => (0, 1, &mut BTreeSet::new(), ""),
            };
            if !what.is_empty() {
                if index >= count {
                    errors.push(bad(
                        subject(),
                        format!(
                            "tensor `{}` is {what} {index} but the graph has {count} {what}(s)",
                            t.name
                        ),
                    ));
                } else if !seen.insert(index) {
                    errors.push(bad(
                        subject(),
                        format!(
                            "tensor `{}` is {what} {index}, which another tensor already is",
                            t.name
                        ),
                    ));
                }
            }
            total = total.and_then(|sum| aligned(t.size).and_then(|a| sum.checked_add(a)));
        }
        for (count, seen, what) in [
            (self.inputs, &inputs, "input"),
            (self.outputs, &outputs, "output"),
        ] {
            if let Some(missing) = (0..count).find(|i| !seen.contains(i)) {
                let subject = if what == "input" {
                    Subject::input(missing)
                } else {
                    Subject::output(missing)
                };
                errors.push(bad(subject, format!("no tensor is graph {what} {missing}")));
            }
        }
        if total.is_none() {
            errors.push(bad(
                Subject::part(Part::Sizes),
                "the tensor sizes, each rounded up to 32 bytes, add up to more than 2^64 - 1 bytes"
                    .to_owned(),
            ));
        }
        if let Some(run) = &self.run {
            if run.inputs.len() != self.inputs as usize
                || run.outputs.len() != self.outputs as usize
            {
                errors.push(bad(
                    Subject::part(Part::Run),
                    format!(
                        "the run gives {} input and {} output address(es) for a graph of {} input(s) and {} output(s)",
                        run.inputs.len(), run.outputs.len(), self.inputs, self.outputs
                    ),
                ));
            }
        }
        errors
    }
}

/// One cleanup of memset outputs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct CleanupGroup {
    /// Start of the region cleaned: the lowest offset of its tensors.
    pub offset: u64,
    /// Length of the region cleaned: up to the end of its highest tensor (`offset + size`, the
    /// size unrounded).
    pub size: u64,
    /// The tensors it covers (sorted).
    pub tensors: Vec<String>,
}

/// An output placed at its paired input's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Alias {
    /// Input index.
    pub input: u32,
    /// Output index.
    pub output: u32,
}

/// Observation of the memory capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct MemoryObservation {
    /// Offset of every tensor in the arena, by name (empty when planning failed).
    #[serde(default)]
    pub offsets: BTreeMap<String, u64>,
    /// The cleanup groups of memset outputs.
    #[serde(default)]
    pub cleanup: Vec<CleanupGroup>,
    /// Inputs whose bytes some other tensor (not its alias partner) also occupies (sorted). A
    /// tensor's bytes are `offset..offset + size`, its size unrounded.
    #[serde(default)]
    pub reused_inputs: Vec<u32>,
    /// Outputs whose bytes some other tensor (not its alias partner) also occupies (sorted).
    #[serde(default)]
    pub reused_outputs: Vec<u32>,
    /// Output/input aliases in force (sorted).
    #[serde(default)]
    pub aliases: Vec<Alias>,
    /// The end of the highest tensor: the largest `offset + size` of any tensor (0 when nothing
    /// is planned), clause MEM-004.
    #[serde(default)]
    pub peak_bytes: u64,
    /// Errors (planning or run time).
    #[serde(default)]
    pub errors: Vec<Diagnostic>,
    /// Warnings.
    #[serde(default)]
    pub warnings: Vec<Diagnostic>,
}

impl MemoryObservation {
    /// Sorts the unordered lists.
    pub fn canonicalize(&mut self) {
        for group in &mut self.cleanup {
            group.tensors.sort();
        }
        self.cleanup.sort();
        self.reused_inputs.sort_unstable();
        self.reused_outputs.sort_unstable();
        self.aliases.sort();
        self.errors.sort();
        self.warnings.sort();
    }
}
