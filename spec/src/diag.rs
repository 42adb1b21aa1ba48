//! Diagnostics: the errors and warnings a backend reports, each tied to the clause that calls for it.

use std::cmp::Ordering;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::option::Level;

/// One error or warning in an observation.
///
/// Equality and ordering deliberately ignore [`Diagnostic::message`]: the message is for people,
/// and two engines may word it differently. What is judged is the clause, the option key, the level,
/// the value and the subject (a short locator such as `input 3` or `pair 0,1`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Diagnostic {
    /// The clause ID that calls for this diagnostic, for example `IRM-003`.
    pub clause: String,
    /// The option key concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The level the offending setting was made at, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The offending value, verbatim, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What the diagnostic is about beyond the key: `input 3`, `pair 0,1`, a path, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A sentence a person understands. Not compared.
    #[serde(default)]
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic for `clause` with a message and nothing else set.
    pub fn new(clause: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            clause: clause.into(),
            key: None,
            level: None,
            value: None,
            subject: None,
            message: message.into(),
        }
    }

    /// Sets the option key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the level.
    pub fn level(mut self, level: Level) -> Self {
        self.level = Some(level);
        self
    }

    /// Sets the offending value.
    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Sets the subject.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    fn sort_key(
        &self,
    ) -> (
        &str,
        &Option<String>,
        &Option<Level>,
        &Option<String>,
        &Option<String>,
    ) {
        (
            &self.clause,
            &self.key,
            &self.level,
            &self.subject,
            &self.value,
        )
    }
}

impl PartialEq for Diagnostic {
    fn eq(&self, other: &Self) -> bool {
        self.sort_key() == other.sort_key()
    }
}

impl Eq for Diagnostic {}

impl PartialOrd for Diagnostic {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Diagnostic {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.clause)?;
        if let Some(key) = &self.key {
            write!(f, " {key}")?;
        }
        if let Some(level) = &self.level {
            write!(f, " at {level} level")?;
        }
        if let Some(value) = &self.value {
            write!(f, " = {value:?}")?;
        }
        if let Some(subject) = &self.subject {
            write!(f, " ({subject})")?;
        }
        write!(f, ": {}", self.message)
    }
}
