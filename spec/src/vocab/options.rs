//! The options capability: which option values a backend accepts, where each effective value comes
//! from, and what it warns about.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::option::{Product, RunMode, ShapeKind, Source};
use crate::vocab::OptionMaps;

/// Facts about the graph that option validation depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct GraphFacts {
    /// Number of graph inputs (user inputs).
    #[serde(default = "one")]
    pub inputs: u32,
    /// Number of graph outputs.
    #[serde(default = "one")]
    pub outputs: u32,
    /// Static or dynamic shapes.
    #[serde(default)]
    pub shape: ShapeKind,
}

fn one() -> u32 {
    1
}

impl Default for GraphFacts {
    fn default() -> Self {
        GraphFacts {
            inputs: 1,
            outputs: 1,
            shape: ShapeKind::Static,
        }
    }
}

/// Scenario of the options capability: three option maps and the context they are used in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct OptionsScenario {
    /// The option maps, one per level.
    #[serde(default)]
    pub options: OptionMaps,
    /// Facts about the graph (default: one input, one output, static shapes).
    #[serde(default)]
    pub graph: GraphFacts,
    /// How the graph is run (default `async`).
    #[serde(default)]
    pub run_mode: RunMode,
    /// The product (default `ascend-950pr`).
    #[serde(default)]
    pub product: Product,
}

/// The effective value of one option and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Effective {
    /// The value in force, in canonical spelling (OPT-007): what takes effect, so an index or a
    /// pair that does not take effect (IRM-003, ORM-003, ORI-003) is not part of it. The empty
    /// string means "nothing set" for the list and path options.
    pub value: String,
    /// The level it was taken from, or `default`.
    pub from: Source,
}

/// Observation of the options capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct OptionsObservation {
    /// One entry per option key that was not rejected: all twelve when nothing is rejected.
    #[serde(default)]
    pub effective: BTreeMap<String, Effective>,
    /// Option keys that were rejected: they have no entry in `effective` (sorted). The suite
    /// validates only values set where the option takes effect (OPT-002, its own choice).
    #[serde(default)]
    pub rejected: Vec<String>,
    /// Keys outside the twelve, passed through untouched (sorted, each once).
    #[serde(default)]
    pub passthrough: Vec<String>,
    /// Rejections: each names key, value, level and clause.
    #[serde(default)]
    pub errors: Vec<Diagnostic>,
    /// Warnings: settings that have no effect, indexes ignored, restrictions not met.
    #[serde(default)]
    pub warnings: Vec<Diagnostic>,
}

impl OptionsObservation {
    /// Sorts the unordered lists.
    pub fn canonicalize(&mut self) {
        self.rejected.sort();
        self.rejected.dedup();
        self.passthrough.sort();
        self.passthrough.dedup();
        self.errors.sort();
        self.warnings.sort();
    }
}
