//! Basic vocabulary shared by every capability: option keys, levels, run modes, shapes and products.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! option_keys {
    ($( $(#[$doc:meta])* $variant:ident => $key:literal, $prefix:literal; )*) => {
        /// One of the twelve GE memory-management options this suite covers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(JsonSchema))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum OptionKey {
            $( $(#[$doc])* #[serde(rename = $key)] $variant, )*
        }

        impl OptionKey {
            /// Every option key, in the order of the source text.
            pub const ALL: [OptionKey; 12] = [$(OptionKey::$variant),*];

            /// The option string GE reads, for example `ge.exec.input_fusion_size`.
            pub const fn as_str(self) -> &'static str {
                match self { $(OptionKey::$variant => $key,)* }
            }

            /// The clause-ID prefix of this option, for example `IFS`.
            pub const fn clause_prefix(self) -> &'static str {
                match self { $(OptionKey::$variant => $prefix,)* }
            }
        }

        impl FromStr for OptionKey {
            type Err = UnknownOptionKey;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($key => Ok(OptionKey::$variant),)*
                    other => Err(UnknownOptionKey(other.to_owned())),
                }
            }
        }
    };
}

option_keys! {
    /// `ge.exec.atomicCleanPolicy`: collective or separate cleanup of memset outputs.
    AtomicCleanPolicy => "ge.exec.atomicCleanPolicy", "ACP";
    /// `ge.exec.disableReuseMemory`: turns memory reuse off.
    DisableReuseMemory => "ge.exec.disableReuseMemory", "DRM";
    /// `ge.exec.input_fusion_size`: threshold for fusing small host inputs.
    InputFusionSize => "ge.exec.input_fusion_size", "IFS";
    /// `ge.exec.inputReuseMemIndexes`: graph inputs whose memory may be reused.
    InputReuseMemIndexes => "ge.exec.inputReuseMemIndexes", "IRM";
    /// `ge.exec.reuseZeroCopyMemory`: keep the zero-copy I/O area across executions.
    ReuseZeroCopyMemory => "ge.exec.reuseZeroCopyMemory", "RZC";
    /// `ge.exec.staticMemoryPolicy`: memory allocation mode (pools and expansion).
    StaticMemoryPolicy => "ge.exec.staticMemoryPolicy", "SMP";
    /// `ge.exec.outputReuseInputMemIndexes`: output/input pairs that share one address.
    OutputReuseInputMemIndexes => "ge.exec.outputReuseInputMemIndexes", "ORI";
    /// `ge.exec.outputReuseMemIndexes`: graph outputs whose memory may be reused.
    OutputReuseMemIndexes => "ge.exec.outputReuseMemIndexes", "ORM";
    /// `ge.externalWeight`: write constant weights to files.
    ExternalWeight => "ge.externalWeight", "EXW";
    /// `ge.externalWeightDir`: where external weight files are written.
    ExternalWeightDir => "ge.externalWeightDir", "EWD";
    /// `ge.inputBatchCpy`: batch copy of host inputs.
    InputBatchCpy => "ge.inputBatchCpy", "IBC";
    /// `ge.featureBaseRefreshable`: whether the feature memory base may be refreshed.
    FeatureBaseRefreshable => "ge.featureBaseRefreshable", "FBR";
}

impl fmt::Display for OptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the twelve option keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not one of the twelve memory options")]
pub struct UnknownOptionKey(pub String);

/// The three levels at which GE takes options, from the widest to the narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Options given when GE is initialised.
    Global,
    /// Options given when a session is created.
    Session,
    /// Options given when a graph is added to a session.
    Graph,
}

impl Level {
    /// The three levels, widest first.
    pub const ALL: [Level; 3] = [Level::Global, Level::Session, Level::Graph];

    /// The level's name as it appears in tables and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Global => "global",
            Level::Session => "session",
            Level::Graph => "graph",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an effective option value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Nobody set the option where it takes effect; the table's default applies.
    Default,
    /// Set at the global level.
    Global,
    /// Set at the session level.
    Session,
    /// Set at the graph level.
    Graph,
}

impl From<Level> for Source {
    fn from(level: Level) -> Self {
        match level {
            Level::Global => Source::Global,
            Level::Session => Source::Session,
            Level::Graph => Source::Graph,
        }
    }
}

/// How a graph is run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    /// The synchronous run (`RunGraph`).
    Sync,
    /// The asynchronous run (`RunGraphAsync`).
    #[default]
    Async,
}

/// Whether a graph's shapes are fixed at build time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum ShapeKind {
    /// Every shape is known when the graph is built.
    #[default]
    Static,
    /// Some shape is only known at run time.
    Dynamic,
}

/// The accelerator product a scenario runs on.
///
/// The spelling is reference-defined (clause `OPT-009`): lowercase, words joined by `-`. The first
/// six are the products the source text lists for `ge.inputBatchCpy`; the rest stand for products
/// outside that list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "kebab-case")]
pub enum Product {
    /// Ascend 950PR.
    #[default]
    #[serde(rename = "ascend-950pr")]
    Ascend950Pr,
    /// Ascend 950DT.
    #[serde(rename = "ascend-950dt")]
    Ascend950Dt,
    /// Atlas A3 training products.
    AtlasA3Training,
    /// Atlas A3 inference products.
    AtlasA3Inference,
    /// Atlas A2 training products.
    AtlasA2Training,
    /// Atlas A2 inference products.
    AtlasA2Inference,
    /// Atlas training series (earlier generation; not in the batch-copy list).
    AtlasTraining,
    /// Atlas inference series (earlier generation; not in the batch-copy list).
    AtlasInference,
    /// Atlas 200I/500 A2 inference products (not in the batch-copy list).
    #[serde(rename = "atlas-200i-500-a2")]
    Atlas200I500A2,
}

impl Product {
    /// Every product a scenario may name.
    pub const ALL: [Product; 9] = [
        Product::Ascend950Pr,
        Product::Ascend950Dt,
        Product::AtlasA3Training,
        Product::AtlasA3Inference,
        Product::AtlasA2Training,
        Product::AtlasA2Inference,
        Product::AtlasTraining,
        Product::AtlasInference,
        Product::Atlas200I500A2,
    ];

    /// The product's spelling in scenarios and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Product::Ascend950Pr => "ascend-950pr",
            Product::Ascend950Dt => "ascend-950dt",
            Product::AtlasA3Training => "atlas-a3-training",
            Product::AtlasA3Inference => "atlas-a3-inference",
            Product::AtlasA2Training => "atlas-a2-training",
            Product::AtlasA2Inference => "atlas-a2-inference",
            Product::AtlasTraining => "atlas-training",
            Product::AtlasInference => "atlas-inference",
            Product::Atlas200I500A2 => "atlas-200i-500-a2",
        }
    }
}

impl fmt::Display for Product {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
