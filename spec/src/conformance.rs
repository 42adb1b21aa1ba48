//! Conformance levels: how much of the contract a verdict rests on. `documented` judges what the
//! source text states (the clauses of origin `documented`, and under the upstream profile the
//! facts of GE that the `upstream` entries record); `strict` judges the suite's own choices as
//! well (the `reference-defined` clauses), the place where the text is silent.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The conformance level a verdict is made at.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Conformance {
    /// What the source text states (the default). A broken reference-defined clause is a
    /// deviation: reported, never a failure.
    #[default]
    Documented,
    /// What the source text states and every choice the suite made where it is silent.
    Strict,
}

impl Conformance {
    /// Both levels, the default first.
    pub const ALL: [Conformance; 2] = [Conformance::Documented, Conformance::Strict];

    /// The level's name in reports, JSON and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Conformance::Documented => "documented",
            Conformance::Strict => "strict",
        }
    }
}

impl fmt::Display for Conformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no conformance level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a conformance level (expected `documented` or `strict`)")]
pub struct UnknownConformance(pub String);

impl FromStr for Conformance {
    type Err = UnknownConformance;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "documented" => Ok(Conformance::Documented),
            "strict" => Ok(Conformance::Strict),
            other => Err(UnknownConformance(other.to_owned())),
        }
    }
}
