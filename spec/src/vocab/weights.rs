//! The weights capability: constant weights written to files on a real filesystem, inside a
//! sandbox directory, and removed again at unload.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::vocab::OptionMaps;

/// The type of a constant node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum NodeType {
    /// `Const`.
    Const,
    /// `Constant`.
    Constant,
    /// `FileConstant`: the weight lives in a file.
    FileConstant,
}

/// A constant node of the root graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstNode {
    /// Node name.
    pub name: String,
    /// `Const` or `Constant`.
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// The weight bytes, in lowercase hexadecimal.
    pub hex: String,
}

/// The `ASCEND_WORK_PATH` environment variable as the engine sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkPathEnv {
    /// Not set.
    #[default]
    Unset,
    /// Set to the empty string.
    Empty,
    /// Set to a path relative to the sandbox.
    Set {
        /// The path, relative to the sandbox.
        path: String,
    },
}

/// Scenario of the weights capability. Every path is relative to the sandbox directory the
/// harness gives the backend.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightsScenario {
    /// The option maps.
    #[serde(default)]
    pub options: OptionMaps,
    /// Name of the root graph.
    pub root_graph: String,
    /// The constant nodes.
    pub constants: Vec<ConstNode>,
    /// `ASCEND_WORK_PATH`.
    #[serde(default)]
    pub ascend_work_path: WorkPathEnv,
    /// Process id.
    pub pid: u32,
    /// Session id.
    pub session_id: u64,
    /// The working directory, relative to the sandbox (default: the sandbox itself).
    #[serde(default)]
    pub work_dir: String,
    /// Whether the model is unloaded after loading.
    #[serde(default)]
    pub unload: bool,
}

/// A file the backend wrote, as found in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WrittenFile {
    /// Path relative to the sandbox, with `/` separators.
    pub path: String,
    /// Length in bytes.
    pub len: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
}

/// What became of one constant node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeConversion {
    /// Node name.
    pub name: String,
    /// Its type after loading.
    #[serde(rename = "type")]
    pub node_type: String,
    /// For a FileConstant: the file, relative to the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For a FileConstant: offset of the weight in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// For a FileConstant: length of the weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
}

/// Observation of the weights capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightsObservation {
    /// The directory chosen for weight files, relative to the sandbox (absent in mode 0).
    #[serde(default)]
    pub dir: Option<String>,
    /// Files written at load (sorted by path).
    #[serde(default)]
    pub files: Vec<WrittenFile>,
    /// Node conversions (sorted by name).
    #[serde(default)]
    pub nodes: Vec<NodeConversion>,
    /// Paths removed at unload, relative to the sandbox (sorted).
    #[serde(default)]
    pub removed: Vec<String>,
    /// Errors.
    #[serde(default)]
    pub errors: Vec<Diagnostic>,
    /// Warnings.
    #[serde(default)]
    pub warnings: Vec<Diagnostic>,
}

impl WeightsObservation {
    /// Sorts the unordered lists.
    pub fn canonicalize(&mut self) {
        self.files.sort();
        self.nodes.sort();
        self.removed.sort();
        self.errors.sort();
        self.warnings.sort();
    }
}
