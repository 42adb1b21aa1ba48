//! The transfer capability: how the user inputs of one run move from host to device (input
//! fusion, direct copies, batch copy).

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::option::{Product, RunMode, ShapeKind};
use crate::vocab::OptionMaps;

/// Where a user input's data sits when the run starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// In host memory: it must be moved to the device.
    #[default]
    Host,
    /// Already in device memory: nothing is moved.
    Device,
}

/// One user input of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TransferInput {
    /// The input's index (unique within the scenario).
    pub index: u32,
    /// Its size in bytes.
    pub size: u64,
    /// Where its data sits (default `host`).
    #[serde(default)]
    pub placement: Placement,
}

/// Scenario of the transfer capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TransferScenario {
    /// The option maps, resolved through the options layer.
    #[serde(default)]
    pub options: OptionMaps,
    /// How the graph is run (default `async`).
    #[serde(default)]
    pub run_mode: RunMode,
    /// The product (default `ascend-950pr`).
    #[serde(default)]
    pub product: Product,
    /// Static or dynamic shapes (default `static`).
    #[serde(default)]
    pub shape: ShapeKind,
    /// The user inputs of the run.
    pub inputs: Vec<TransferInput>,
}

/// Observation of the transfer capability. Every input appears in exactly one of `fused`,
/// `direct`, `batched` and `on_device`, unless `errors` is not empty (then nothing is planned).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TransferObservation {
    /// Inputs fused into one buffer and moved together (sorted; the suite never fuses a single
    /// input, IFS-016, its own choice).
    #[serde(default)]
    pub fused: Vec<u32>,
    /// Size of the fused buffer in bytes: the suite counts the plain sum of the fused inputs'
    /// sizes (IFS-018, its own choice; the text's worked example gives the fused figure as that
    /// sum).
    #[serde(default)]
    pub fused_bytes: u64,
    /// Inputs moved one by one (sorted).
    #[serde(default)]
    pub direct: Vec<u32>,
    /// Inputs moved by one batch copy (sorted; never exactly one).
    #[serde(default)]
    pub batched: Vec<u32>,
    /// Inputs already on the device: not moved (sorted).
    #[serde(default)]
    pub on_device: Vec<u32>,
    /// Option rejections or scenario errors; when present nothing is planned.
    #[serde(default)]
    pub errors: Vec<Diagnostic>,
    /// Warnings, for example batch copy requested on a product outside the list.
    #[serde(default)]
    pub warnings: Vec<Diagnostic>,
}

impl TransferObservation {
    /// Sorts the unordered lists.
    pub fn canonicalize(&mut self) {
        self.fused.sort_unstable();
        self.direct.sort_unstable();
        self.batched.sort_unstable();
        self.on_device.sort_unstable();
        self.errors.sort();
        self.warnings.sort();
    }
}
