//! The messages of the protocol, one JSON object per line, tagged by `type`: what the harness
//! sends ([`HarnessMessage`]) and what a backend answers ([`BackendMessage`]).

use std::path::PathBuf;

use ge_spec::{Capability, Observation, Profile, Scenario};
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the protocol this harness speaks. A backend that answers the hello with
/// another version is refused. Version 2: a diagnostic's `subject` is a table of typed fields
/// (`{"index": 3}`), no longer a string.
pub const PROTOCOL_VERSION: u32 = 2;

/// A line the harness writes to the backend's standard input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum HarnessMessage {
    /// The first line: the harness introduces itself and its protocol version.
    Hello(HarnessHello),
    /// One question; the backend answers it before the next one is sent.
    Request(Request),
}

/// The harness's hello.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HarnessHello {
    /// The protocol version the harness speaks ([`PROTOCOL_VERSION`]).
    pub protocol: u32,
    /// The harness's name (`ge-conformance`).
    pub harness: String,
    /// The harness's version.
    pub harness_version: String,
    /// The behaviour profile the harness certifies against (absent: `documented`).
    #[serde(default)]
    pub profile: Profile,
}

/// One question for the backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Request number, unique within one backend process; the response repeats it.
    pub id: u64,
    /// The capability asked about (the same as `scenario.capability`, repeated for easy
    /// dispatch).
    pub capability: Capability,
    /// The scenario, in the JSON that `ge-conformance eval` reads.
    pub scenario: Scenario,
    /// Weights requests only: an existing, empty directory the backend must do all its file
    /// work in and must not leave. Absent for the other capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<PathBuf>,
}

/// A line the backend writes to its standard output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum BackendMessage {
    /// The answer to the harness's hello: who the backend is and what it implements.
    Hello(BackendHello),
    /// The answer to a request: what the backend observed.
    Observation(ObservationResponse),
    /// The answer to a request: the backend does not implement this capability.
    NotSupported(NotSupportedResponse),
    /// The backend could not answer a request (`id` set), or refuses the handshake (`id`
    /// absent). The request's case fails with `message`.
    Error(ErrorResponse),
}

/// The backend's hello.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BackendHello {
    /// The protocol version the backend speaks; must equal the harness's.
    pub protocol: u32,
    /// The backend's name, as reports print it.
    pub name: String,
    /// The backend's version, as reports print it.
    pub version: String,
    /// The capabilities the backend implements; the others are reported as not supported
    /// without being asked.
    pub capabilities: Vec<Capability>,
    /// The behaviour profiles the backend can be certified against (absent or empty:
    /// `documented` only). The harness refuses a backend that lacks the profile it certifies
    /// against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<Profile>,
}

impl BackendHello {
    /// The profiles the backend supports, `documented` when it names none.
    pub fn supported_profiles(&self) -> Vec<Profile> {
        if self.profiles.is_empty() {
            vec![Profile::Documented]
        } else {
            self.profiles.clone()
        }
    }
}

/// An observation answering request `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ObservationResponse {
    /// The request answered.
    pub id: u64,
    /// The observation, in the JSON that `ge-conformance eval` prints; its `capability` must be
    /// the request's.
    pub observation: Observation,
}

/// A not-supported answer to request `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NotSupportedResponse {
    /// The request answered.
    pub id: u64,
    /// Why, in a few words.
    pub reason: String,
}

/// An error answering request `id`, or refusing the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ErrorResponse {
    /// The request that failed; absent when the error is about the handshake or a line the
    /// backend could not read at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// What went wrong.
    pub message: String,
}
