//! The session capability: several graphs over time in one session (memory pools, zero-copy I/O
//! areas, feature-base refreshes), observed as an allocation trace.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::option::ShapeKind;
use crate::vocab::OptionMaps;

/// The most events a session script may hold, and the most executions it may ask for in total
/// (SES-020): a larger script is refused and nothing runs.
pub const MAX_SCRIPT: u64 = 100_000;

/// One event of a session script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "event", rename_all = "lowercase", deny_unknown_fields)]
pub enum SessionEvent {
    /// Load (add and compile) a graph.
    Load {
        /// Graph id, unique among loaded graphs.
        graph: u32,
        /// Static or dynamic shapes.
        #[serde(default)]
        shape: ShapeKind,
        /// Feature (working) memory the graph needs, in bytes.
        feature_bytes: u64,
        /// Zero-copy I/O memory the graph needs, in bytes.
        #[serde(default)]
        io_bytes: u64,
        /// The graph-level option map given with this graph. When absent, the scenario's
        /// `options.graph` map is used (clause SES-016).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "arbitrary", arbitrary(with = super::drawn_optional_map))]
        options: Option<BTreeMap<String, String>>,
    },
    /// Execute a loaded graph `times` times.
    Execute {
        /// Graph id.
        graph: u32,
        /// Number of executions (default 1).
        #[serde(default = "one")]
        times: u32,
    },
    /// Refresh the feature memory base of a graph with a user buffer of `bytes`.
    Refresh {
        /// Graph id.
        graph: u32,
        /// Size of the new base.
        bytes: u64,
    },
    /// Unload a graph.
    Unload {
        /// Graph id.
        graph: u32,
    },
}

fn one() -> u32 {
    1
}

/// Scenario of the session capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct SessionScenario {
    /// The option maps. Global and session maps apply to every graph; `graph` is the graph-level
    /// map of every load that does not bring its own (clause SES-016).
    #[serde(default)]
    pub options: OptionMaps,
    /// The script.
    pub events: Vec<SessionEvent>,
    /// The `GE_USE_STATIC_MEMORY` environment variable as the engine sees it (absent: unset).
    /// Only the upstream profile reads it (clause SMP-016).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge_use_static_memory: Option<String>,
}

impl SessionScenario {
    /// Executions the script asks for in all (the sum of every `execute` event's `times`);
    /// SES-020 caps it.
    pub fn executions(&self) -> u64 {
        self.events
            .iter()
            .map(|e| match e {
                SessionEvent::Execute { times, .. } => u64::from(*times),
                _ => 0,
            })
            .sum()
    }
}

/// Allocation or release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum TraceAction {
    /// Memory obtained from the device.
    Alloc,
    /// Memory given back.
    Free,
}

/// One entry of the allocation trace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TraceEntry {
    /// Index of the script event that caused it; releases at the end of the script carry the
    /// number of events (clauses SES-011, SES-013).
    pub step: u32,
    /// Alloc or free.
    pub action: TraceAction,
    /// The pool or block: `graph-<id>/feature`, `graph-<id>/io`, `static-pool` or
    /// `dynamic-pool` (clause SES-014).
    pub pool: String,
    /// Bytes allocated or freed.
    pub bytes: u64,
}

/// The result of one refresh event.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct RefreshResult {
    /// Index of the script event.
    pub step: u32,
    /// Graph id.
    pub graph: u32,
    /// Whether the base was refreshed.
    pub ok: bool,
}

/// Observation of the session capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct SessionObservation {
    /// Allocations and frees, in the order they happened.
    #[serde(default)]
    pub trace: Vec<TraceEntry>,
    /// The result of every refresh event, in script order.
    #[serde(default)]
    pub refreshes: Vec<RefreshResult>,
    /// Errors.
    #[serde(default)]
    pub errors: Vec<Diagnostic>,
    /// Warnings.
    #[serde(default)]
    pub warnings: Vec<Diagnostic>,
}

impl SessionObservation {
    /// Sorts the unordered lists (the trace keeps its order: it is a history).
    pub fn canonicalize(&mut self) {
        self.errors.sort();
        self.warnings.sort();
    }
}
