//! The weights capability: constant weights written to files on a real filesystem, inside a
//! sandbox directory, and removed again at unload.
//!
//! Every path in a scenario or an observation is relative to the sandbox, with `/` separators,
//! so cases are portable: the harness creates a fresh sandbox per case and hands it to the
//! backend. `ge.externalWeightDir` is the one exception: it is the option's raw value, which the
//! engine resolves against the working directory (clause EWD-011).

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::vocab::OptionMaps;

/// The most weight bytes one scenario may hold in total (64 MiB): more is a scenario error, so a
/// generated or hostile scenario cannot exhaust memory or disk.
pub const MAX_WEIGHT_BYTES: u64 = 64 << 20;

/// The most constants one scenario may hold (WGT-002): more is a scenario error, refused as a
/// whole before any constant is read.
pub const MAX_CONSTANTS: usize = 10_000;

/// The type of a constant node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum NodeType {
    /// `Const`.
    Const,
    /// `Constant`.
    Constant,
    /// `FileConstant`: the weight lives in a file.
    FileConstant,
}

/// A run of one byte value, the compact spelling of a large weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Fill {
    /// The byte value.
    pub byte: u8,
    /// How many times it repeats.
    pub len: u64,
}

/// A constant node of the root graph. Its bytes are given by exactly one of `hex` and `fill`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct ConstNode {
    /// Node name, unique in the graph.
    pub name: String,
    /// `Const` or `Constant` (a `FileConstant` input is a scenario error).
    #[serde(rename = "type")]
    pub node_type: NodeType,
    /// The weight bytes in hexadecimal (either case, two digits per byte; `""` is an empty
    /// weight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
    /// The weight bytes as one byte repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Fill>,
}

/// Decodes hexadecimal text (two digits per byte, either case).
pub fn decode_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    let value = |d: u8| -> Result<u8, String> {
        (d as char)
            .to_digit(16)
            .map(|v| v as u8)
            .ok_or_else(|| format!("{:?} is not a hex digit", d as char))
    };
    digits
        .chunks(2)
        .map(|pair| Ok(value(pair[0])? << 4 | value(pair[1])?))
        .collect()
}

/// Encodes bytes as lowercase hexadecimal.
pub fn encode_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

impl ConstNode {
    /// The declared length of the weight, without decoding it (`None` when the node gives
    /// neither or both spellings).
    pub fn declared_len(&self) -> Option<u64> {
        match (&self.hex, &self.fill) {
            (Some(h), None) => Some(h.len() as u64 / 2),
            (None, Some(f)) => Some(f.len),
            _ => None,
        }
    }

    /// The weight bytes. Fails on bad hex, on neither or both spellings, and on a length above
    /// `limit`.
    pub fn bytes(&self, limit: u64) -> Result<Vec<u8>, String> {
        match (&self.hex, &self.fill) {
            (Some(h), None) => {
                if h.len() as u64 / 2 > limit {
                    return Err(format!("weight of {} bytes exceeds {limit}", h.len() / 2));
                }
                decode_hex(h)
            }
            (None, Some(f)) => Ok(vec![f.byte; fill_len(f, limit)?]),
            (Some(_), Some(_)) => Err("gives both `hex` and `fill`; give one".into()),
            (None, None) => Err("gives neither `hex` nor `fill`".into()),
        }
    }

    /// What [`ConstNode::bytes`] would answer, without making the bytes of a `fill` weight
    /// (up to `limit` of them, 64 MiB at the cap): for a load refused anyway.
    pub fn check(&self, limit: u64) -> Result<(), String> {
        match (&self.hex, &self.fill) {
            (None, Some(f)) => fill_len(f, limit).map(drop),
            _ => self.bytes(limit).map(drop),
        }
    }
}

/// How many bytes `fill` makes, or why it cannot within `limit`: the one rule
/// [`ConstNode::bytes`] and [`ConstNode::check`] share.
fn fill_len(fill: &Fill, limit: u64) -> Result<usize, String> {
    if fill.len > limit {
        return Err(format!("weight of {} bytes exceeds {limit}", fill.len));
    }
    usize::try_from(fill.len).map_err(|_| "weight too large".to_owned())
}

/// The `ASCEND_WORK_PATH` environment variable as the engine sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "state", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkPathEnv {
    /// Not set.
    #[default]
    Unset,
    /// Set to the empty string.
    Empty,
    /// Set to a directory; `path` is relative to the sandbox and stands for the absolute path
    /// the engine would see (`.` is the sandbox itself; `""` is a scenario error: use `empty`).
    Set {
        /// The path, relative to the sandbox.
        path: String,
    },
}

/// Something the harness plants in the sandbox before the backend runs, to set a trap or to
/// stand for what other processes left there. Paths are relative to the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "step", rename_all = "lowercase", deny_unknown_fields)]
pub enum SetupStep {
    /// A directory (with its missing parents).
    Dir {
        /// Where.
        path: String,
    },
    /// A regular file with the given contents (parents created).
    File {
        /// Where.
        path: String,
        /// Contents in hexadecimal.
        #[serde(default)]
        hex: String,
    },
    /// A symbolic link at `path` pointing at `target` (both sandbox-relative; the link holds the
    /// target's absolute path, so it resolves wherever it sits).
    Symlink {
        /// Where the link is.
        path: String,
        /// What it points at.
        target: String,
    },
}

impl SetupStep {
    /// The path the step creates.
    pub fn path(&self) -> &str {
        match self {
            SetupStep::Dir { path }
            | SetupStep::File { path, .. }
            | SetupStep::Symlink { path, .. } => path,
        }
    }
}

/// Scenario of the weights capability: load a model whose root graph holds `constants`, then,
/// when `unload` is set, unload it. Every path is relative to the sandbox directory the harness
/// gives the backend.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct WeightsScenario {
    /// The option maps.
    #[serde(default)]
    pub options: OptionMaps,
    /// Name of the root graph.
    pub root_graph: String,
    /// The constant nodes, in graph order (the order of the combined file under the documented
    /// profile; upstream stores them in name order, EXW-015).
    #[serde(default)]
    pub constants: Vec<ConstNode>,
    /// `ASCEND_WORK_PATH`.
    #[serde(default)]
    pub ascend_work_path: WorkPathEnv,
    /// Process id.
    pub pid: u32,
    /// Session id.
    pub session_id: u64,
    /// The working directory, relative to the sandbox (default `""`: the sandbox itself).
    #[serde(default)]
    pub work_dir: String,
    /// What the harness plants in the sandbox before the backend runs (in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<SetupStep>,
    /// Whether the model is unloaded after loading.
    #[serde(default)]
    pub unload: bool,
}

/// A file the backend wrote, as found in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct NodeConversion {
    /// Node name.
    pub name: String,
    /// Its type after loading.
    #[serde(rename = "type")]
    pub node_type: NodeType,
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct WeightsObservation {
    /// The directory chosen for weight files, relative to the sandbox (`.` for the sandbox
    /// itself); `""` when none was chosen (mode 0, or a load refused before choosing).
    #[serde(default)]
    pub dir: String,
    /// Files written at load, complete, under their final names (sorted by path).
    #[serde(default)]
    pub files: Vec<WrittenFile>,
    /// Node conversions (sorted by name); empty when the load failed.
    #[serde(default)]
    pub nodes: Vec<NodeConversion>,
    /// Paths removed at unload, relative to the sandbox (sorted): the temporary weight
    /// directory and every entry that was under it, links as links (WGT-010).
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

/// Resolves `rel` (a `/`-separated relative path) against `base` lexically; `None` when it is
/// absolute, holds a NUL byte or a backslash, or climbs out of the sandbox with `..` (WGT-001).
pub fn resolve_in_sandbox(base: &[String], rel: &str) -> Option<Vec<String>> {
    if rel.starts_with('/') || rel.contains('\0') || rel.contains('\\') {
        return None;
    }
    let mut out = base.to_vec();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p.to_owned()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn node(hex: Option<String>, fill: Option<(u8, u64)>) -> ConstNode {
        ConstNode {
            name: "c".into(),
            node_type: NodeType::Const,
            hex,
            fill: fill.map(|(byte, len)| Fill { byte, len }),
        }
    }

    proptest! {
        /// `check` answers as `bytes` does, errors word for word, on either spelling, both or
        /// neither, with lengths on both sides of the limit.
        #[test]
        fn check_answers_as_bytes(
            hex in proptest::option::of("[0-9a-fA-Fx]{0,9}"),
            fill in proptest::option::of((any::<u8>(), 0u64..40)),
            limit in 0u64..20,
        ) {
            let n = node(hex, fill);
            prop_assert_eq!(n.check(limit), n.bytes(limit).map(drop));
        }
    }

    #[test]
    fn check_of_a_fill_at_the_cap_makes_no_bytes() {
        // 2^40 bytes could not be made at all: `check` answers without trying.
        let n = node(None, Some((1, 1 << 40)));
        assert_eq!(n.check(1 << 40), Ok(()));
        assert!(n.check((1 << 40) - 1).is_err());
    }
}
