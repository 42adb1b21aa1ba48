//! Behaviour profiles: which behaviour of GE the suite certifies against. `documented` is what
//! the source text says (with the suite's reference-defined choices where it is silent);
//! `upstream` is what the open-source GE implementation does where it departs from that text.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The behaviour a backend is certified against.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The behaviour the source text documents (the default).
    #[default]
    Documented,
    /// The behaviour of the open-source GE implementation, where it differs from its documentation.
    Upstream,
}

impl Profile {
    /// Both profiles, the default first.
    pub const ALL: [Profile; 2] = [Profile::Documented, Profile::Upstream];

    /// The profile's name as it appears in tables, JSON and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Profile::Documented => "documented",
            Profile::Upstream => "upstream",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a profile (expected `documented` or `upstream`)")]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "documented" => Ok(Profile::Documented),
            "upstream" => Ok(Profile::Upstream),
            other => Err(UnknownProfile(other.to_owned())),
        }
    }
}
