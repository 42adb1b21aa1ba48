//! The server side of the protocol: answers the harness's hello and requests with any
//! [`Backend`], one JSON line per message (what `ge-conformance serve-reference` runs).

use std::io::{self, BufRead, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ge_spec::{Backend, Capability, Profile};

use super::messages::{
    BackendHello, BackendMessage, ErrorResponse, HarnessMessage, NotSupportedResponse,
    ObservationResponse, Request, PROTOCOL_VERSION,
};

fn send(output: &mut impl Write, message: &BackendMessage) -> io::Result<()> {
    let line = serde_json::to_string(message).map_err(io::Error::other)?;
    output.write_all(line.as_bytes())?;
    output.write_all(b"\n")?;
    output.flush()
}

fn error(id: Option<u64>, message: impl Into<String>) -> BackendMessage {
    BackendMessage::Error(ErrorResponse {
        id,
        message: message.into(),
    })
}

/// Answers one request with `backend`, turning a panic into an error response.
pub fn answer(backend: &dyn Backend, request: &Request) -> BackendMessage {
    let id = request.id;
    if request.capability != request.scenario.capability() {
        return error(
            Some(id),
            format!(
                "the request names capability `{}` but carries a `{}` scenario",
                request.capability,
                request.scenario.capability()
            ),
        );
    }
    let sandbox = match (&request.sandbox, request.capability) {
        (Some(dir), _) => dir.as_path(),
        (None, Capability::Weights) => {
            return error(
                Some(id),
                "a weights request must name its sandbox directory",
            )
        }
        // The other capabilities never touch the sandbox.
        (None, _) => Path::new("."),
    };
    match catch_unwind(AssertUnwindSafe(|| {
        backend.answer(&request.scenario, sandbox)
    })) {
        Ok(Ok(observation)) => BackendMessage::Observation(ObservationResponse { id, observation }),
        Ok(Err(ns)) => BackendMessage::NotSupported(NotSupportedResponse {
            id,
            reason: ns.reason,
        }),
        // A backend that knows what went wrong (an engine behind the C ABI) unwinds with it.
        Err(payload) => match payload.downcast_ref::<super::BrokenBackend>() {
            Some(broken) => error(Some(id), broken.0.clone()),
            None => error(Some(id), "the backend panicked while answering"),
        },
    }
}

/// Serves `backend` over the protocol: reads the harness's lines from `input`, writes one answer
/// per line to `output` (flushed after each), and returns when `input` ends.
///
/// A hello offering another protocol version is answered with an error and ends the session; a
/// line that is not a message is answered with an error naming the request when it can.
pub fn serve(backend: &dyn Backend, input: impl BufRead, output: impl Write) -> io::Result<()> {
    serve_profiles(backend, &[Profile::Documented], input, output)
}

// Long because: one request loop whose arms (hello, each request, end, errors) share the
// session's state; not yet split into one function per message.
/// [`serve`] for a backend that behaves per `profiles` (declared in its hello). A hello asking
/// for another profile is answered with an error and ends the session.
pub fn serve_profiles(
    backend: &dyn Backend,
    profiles: &[Profile],
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut greeted = false;
    let mut input = input;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let limit = super::client::MAX_REQUEST_LINE as u64 + 1;
        if (&mut input).take(limit).read_until(b'\n', &mut raw)? == 0 {
            return Ok(());
        }
        if raw.len() > super::client::MAX_REQUEST_LINE {
            // The rest of the line cannot be skipped without reading it: end the session.
            let why = format!(
                "a line longer than {} bytes; this backend stops here",
                super::client::MAX_REQUEST_LINE
            );
            return send(&mut output, &error(None, why));
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let message: HarnessMessage = match serde_json::from_str(line) {
            Ok(m) => m,
            Err(e) => {
                let value: Option<serde_json::Value> = serde_json::from_str(line).ok();
                let offered = value
                    .as_ref()
                    .filter(|v| v.get("type").and_then(|t| t.as_str()) == Some("hello"))
                    .and_then(|v| v.get("protocol"))
                    .and_then(serde_json::Value::as_u64);
                if let Some(version) = offered.filter(|v| *v != u64::from(PROTOCOL_VERSION)) {
                    let why = format!("this backend speaks protocol version {PROTOCOL_VERSION}, the harness offered version {version}");
                    return send(&mut output, &error(None, why));
                }
                let id = value
                    .as_ref()
                    .and_then(|v| v.get("id"))
                    .and_then(serde_json::Value::as_u64);
                send(
                    &mut output,
                    &error(id, format!("cannot read the message: {e}")),
                )?;
                continue;
            }
        };
        match message {
            HarnessMessage::Hello(hello) => {
                if hello.protocol != PROTOCOL_VERSION {
                    let why = format!(
                        "this backend speaks protocol version {PROTOCOL_VERSION}, the harness offered version {}",
                        hello.protocol
                    );
                    return send(&mut output, &error(None, why));
                }
                if !profiles.contains(&hello.profile) {
                    let offered: Vec<&str> = profiles.iter().map(|p| p.as_str()).collect();
                    let why = format!(
                        "this backend behaves per the {} profile(s), the harness certifies against the {} profile",
                        offered.join(" and "),
                        hello.profile
                    );
                    return send(&mut output, &error(None, why));
                }
                greeted = true;
                let hello = BackendHello {
                    protocol: PROTOCOL_VERSION,
                    name: backend.name().to_owned(),
                    version: backend.version().to_owned(),
                    capabilities: backend.capabilities().into_iter().collect(),
                    profiles: profiles.to_vec(),
                };
                send(&mut output, &BackendMessage::Hello(hello))?;
            }
            HarnessMessage::Request(request) if !greeted => send(
                &mut output,
                &error(Some(request.id), "the handshake (hello) must come first"),
            )?,
            HarnessMessage::Request(request) => send(&mut output, &answer(backend, &request))?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_reference::Reference;

    fn session(input: &str) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        serve(&Reference, input.as_bytes(), &mut out).expect("in-memory I/O");
        String::from_utf8(out)
            .expect("UTF-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("every answer is JSON"))
            .collect()
    }

    const HELLO: &str = r#"{"type":"hello","protocol":2,"harness":"t","harness_version":"0"}"#;

    #[test]
    fn answers_hello_then_requests() {
        let input = format!(
            "{HELLO}\n\n{}\n{}\n",
            r#"{"type":"request","id":4,"capability":"options","scenario":{"capability":"options"}}"#,
            r#"{"type":"request","id":5,"capability":"weights","scenario":{"capability":"options"}}"#
        );
        let out = session(&input);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["type"], "hello");
        assert_eq!(out[0]["protocol"], PROTOCOL_VERSION);
        assert_eq!(out[1]["type"], "observation");
        assert_eq!(out[1]["id"], 4);
        assert_eq!(out[2]["type"], "error");
        assert_eq!(out[2]["id"], 5);
    }

    #[test]
    fn refuses_another_version_and_stops() {
        let out = session(&format!(
            "{}\n{HELLO}\n",
            r#"{"type":"hello","protocol":3,"harness":"t","harness_version":"0","new":1}"#
        ));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["type"], "error");
        assert!(out[0].get("id").is_none());
        assert!(out[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("version 3"));
    }

    #[test]
    fn garbage_and_requests_before_hello_get_errors() {
        let out = session(&format!(
            "{}\nnot json\n{}\n",
            r#"{"type":"request","id":1,"capability":"options","scenario":{"capability":"options"}}"#,
            r#"{"type":"request","id":2,"capability":"options","scenario":{"capability":"nope"}}"#
        ));
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|m| m["type"] == "error"));
        assert_eq!(out[0]["id"], 1);
        assert!(out[1].get("id").is_none());
        assert_eq!(out[2]["id"], 2);
    }

    #[test]
    fn weights_need_a_sandbox() {
        let request = Request {
            id: 1,
            capability: Capability::Weights,
            scenario: serde_json::from_str(r#"{"capability":"weights"}"#)
                .unwrap_or_else(|_| ge_spec::Scenario::Options(Default::default())),
            sandbox: None,
        };
        match answer(&Reference, &request) {
            BackendMessage::Error(e) => {
                assert!(e.message.contains("sandbox") || e.message.contains("carries"))
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}
