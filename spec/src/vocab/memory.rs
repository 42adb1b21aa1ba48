//! The memory capability: the device memory plan of one graph (offsets in one arena, I/O reuse
//! and aliasing, memset cleanup groups, peak bytes).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::vocab::OptionMaps;

/// What a tensor is in the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAddresses {
    /// Address of input `i` at position `i`.
    #[serde(default)]
    pub inputs: Vec<u64>,
    /// Address of output `j` at position `j`.
    #[serde(default)]
    pub outputs: Vec<u64>,
}

/// Scenario of the memory capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

/// One cleanup of memset outputs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CleanupGroup {
    /// Start of the region cleaned.
    pub offset: u64,
    /// Length of the region cleaned.
    pub size: u64,
    /// The tensors it covers (sorted).
    pub tensors: Vec<String>,
}

/// An output placed at its paired input's address.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Alias {
    /// Input index.
    pub input: u32,
    /// Output index.
    pub output: u32,
}

/// Observation of the memory capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryObservation {
    /// Offset of every tensor in the arena, by name (empty when planning failed).
    #[serde(default)]
    pub offsets: BTreeMap<String, u64>,
    /// The cleanup groups of memset outputs.
    #[serde(default)]
    pub cleanup: Vec<CleanupGroup>,
    /// Inputs whose memory was reused by other tensors (sorted).
    #[serde(default)]
    pub reused_inputs: Vec<u32>,
    /// Outputs placed in memory freed by other tensors (sorted).
    #[serde(default)]
    pub reused_outputs: Vec<u32>,
    /// Output/input aliases in force (sorted).
    #[serde(default)]
    pub aliases: Vec<Alias>,
    /// Highest byte used in the arena.
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
