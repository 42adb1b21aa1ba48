//! The subprocess protocol that certifies engines written in any language: JSON lines over the
//! child's standard input and output (documented in `docs/protocol.md`, with JSON Schemas under
//! `spec/schema/protocol-*.schema.json`).
//!
//! - [`messages`]: what travels, one JSON object per line, tagged by `type`;
//! - [`client`]: [`ExecBackend`], the harness's side, robust to backends that misbehave;
//! - [`serve()`]: the backend's side for any Rust [`ge_spec::Backend`] (`serve-reference`).

pub mod client;
pub mod messages;
mod serve;
pub mod strays;

pub use client::{
    split_command_line, stop_all_backends, BrokenBackend, ExecBackend, GiveUp, StderrLog,
    DEFAULT_GIVE_UP_AFTER, DEFAULT_GIVE_UP_AFTER_CRASHES, DEFAULT_GIVE_UP_AFTER_RESTARTS,
    DEFAULT_GIVE_UP_AFTER_SECS, DEFAULT_TIMEOUT, MAX_HANDSHAKE_FAILURES, MIN_HANDSHAKE_TIMEOUT,
};
pub use messages::{BackendMessage, HarnessMessage, PROTOCOL_VERSION};
pub use serve::{answer, serve, serve_profiles};

/// The JSON Schemas of the protocol's messages, by the file name they have under
/// `spec/schema/`.
#[cfg(feature = "schema")]
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    fn one<T: schemars::JsonSchema>() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Null)
    }
    vec![
        (
            "protocol-harness-message.schema.json",
            one::<HarnessMessage>(),
        ),
        (
            "protocol-backend-message.schema.json",
            one::<BackendMessage>(),
        ),
    ]
}
