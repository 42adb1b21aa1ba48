//! Engines built as shared libraries against the C ABI (`include/ge_conformance.h`,
//! `docs/c-abi.md`): [`DylibBackend`] is the [`Backend`] over one, loaded in this process by
//! `ge-dylib`. It reads the engine's hello and answers, which are the subprocess protocol's JSON
//! without ids, and turns everything wrong with them into typed errors.
//!
//! `--backend dylib:PATH` uses it in-process (fast, for fuzzing and quick loops: a crash ends the
//! run); `ge-conformance serve-dylib PATH` serves it over the subprocess protocol, so that
//! `--backend 'exec:ge-conformance serve-dylib PATH'` isolates its crashes (for certification).

use std::collections::BTreeSet;
use std::path::Path;

use ge_spec::{Answer, Backend, Capability, NotSupported, Observation, Profile, Scenario};
use serde::Deserialize;

use crate::protocol::{BrokenBackend, PROTOCOL_VERSION};

mod answer;
use answer::DylibAnswer;

/// Why an engine cannot be used, or one of its answers cannot be judged.
#[derive(Debug, thiserror::Error)]
pub enum DylibError {
    /// The library cannot be opened as an engine (missing file or symbol, other ABI version).
    #[error(transparent)]
    Load(#[from] ge_dylib::LoadError),
    /// A call gave no buffer to read.
    #[error(transparent)]
    Call(#[from] ge_dylib::CallError),
    /// The hello is not the JSON the header describes.
    #[error("the engine's hello is not the JSON include/ge_conformance.h describes: {error}; it was: {text}")]
    BadHello {
        /// What the JSON parser said.
        error: String,
        /// The start of the hello as the engine wrote it.
        text: String,
    },
    /// The hello names another protocol version.
    #[error("the engine's hello speaks protocol version {found} and this harness speaks version {PROTOCOL_VERSION}; update one of them")]
    ProtocolVersion {
        /// The version in the hello.
        found: u32,
    },
    /// The engine does not declare the profile the run certifies against.
    #[error("the engine supports the {supported} profile(s) and this certification is against the {wanted} profile")]
    Profile {
        /// The profiles the hello lists.
        supported: String,
        /// The profile of the run.
        wanted: Profile,
    },
    /// An answer is not one of the three JSON objects the header describes.
    #[error("the engine answered JSON that is not an answer (include/ge_conformance.h): {error}; it was: {text}")]
    BadAnswer {
        /// What the JSON parser said.
        error: String,
        /// The start of the answer as the engine wrote it.
        text: String,
    },
    /// The observation is of another capability than the scenario.
    #[error("the engine answered a {found} observation to a {asked} scenario")]
    WrongCapability {
        /// The scenario's capability.
        asked: Capability,
        /// The observation's capability.
        found: Capability,
    },
    /// The engine answered `error`.
    #[error("the engine reported an error: {0}")]
    Engine(String),
    /// The scenario could not be written as JSON (cannot happen for the vocabulary's types).
    #[error("cannot write the scenario as JSON: {0}")]
    Scenario(String),
}

/// The hello of an engine, as `ge_conformance_hello` stores it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DylibHello {
    /// The protocol version of the JSON vocabulary ([`PROTOCOL_VERSION`]).
    pub protocol: u32,
    /// The engine's name, as reports print it.
    pub name: String,
    /// The engine's version, as reports print it.
    pub version: String,
    /// The capabilities the engine implements.
    pub capabilities: BTreeSet<Capability>,
    /// The profiles it can be certified against (empty: documented).
    #[serde(default)]
    pub profiles: Vec<Profile>,
}

impl DylibHello {
    /// The profiles the engine supports, `documented` when it names none.
    pub fn supported_profiles(&self) -> Vec<Profile> {
        if self.profiles.is_empty() {
            vec![Profile::Documented]
        } else {
            self.profiles.clone()
        }
    }
}

/// At most this many characters of a bad hello or answer are quoted in the error.
const QUOTED: usize = 300;

fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut quoted: String = text.chars().take(QUOTED).collect();
    if text.chars().count() > QUOTED {
        quoted.push_str("...");
    }
    quoted
}

/// An engine loaded in this process through the C ABI.
#[derive(Debug)]
pub struct DylibBackend {
    engine: ge_dylib::Engine,
    hello: DylibHello,
}

impl DylibBackend {
    /// Opens the engine at `path`, reads its hello, and checks that it speaks this protocol
    /// version. If the process ends inside a call (a crash, an `exit`, a timeout), `crash_note`
    /// is printed after the line naming the library, the function and the scenario (see
    /// [`ge_dylib::Engine::set_crash_note`], which installs the crash handler).
    pub fn open(path: &Path, crash_note: &str) -> Result<Self, DylibError> {
        let engine = ge_dylib::Engine::open(path)?;
        engine.set_crash_note(crash_note);
        Self::greet(engine)
    }

    /// [`DylibBackend::open`] for a libFuzzer target: no crash handler is installed, so that
    /// libFuzzer, which installs its own only for signals that have none, reports a crash and
    /// writes its artefact (see [`ge_dylib::Engine::set_note`]). An `exit` inside a call still
    /// prints `note`.
    pub fn open_under_fuzzer(path: &Path, note: &str) -> Result<Self, DylibError> {
        let engine = ge_dylib::Engine::open(path)?;
        engine.set_note(note);
        Self::greet(engine)
    }

    /// Sets how long each call into the engine may take before the process ends with
    /// [`ge_dylib::TIMEOUT_STATUS`] (`None`: forever; see [`ge_dylib::Engine::set_timeout`]).
    pub fn set_timeout(&self, timeout: Option<std::time::Duration>) {
        self.engine.set_timeout(timeout);
    }

    /// Reads the engine's hello and checks its protocol version.
    fn greet(engine: ge_dylib::Engine) -> Result<Self, DylibError> {
        let bytes = engine.hello()?;
        let hello: DylibHello =
            serde_json::from_slice(&bytes).map_err(|e| DylibError::BadHello {
                error: e.to_string(),
                text: quote(&bytes),
            })?;
        if hello.protocol != PROTOCOL_VERSION {
            return Err(DylibError::ProtocolVersion {
                found: hello.protocol,
            });
        }
        Ok(DylibBackend { engine, hello })
    }

    /// Checks that the engine's hello lists `profile`, the profile of the run.
    pub fn require_profile(&self, profile: Profile) -> Result<(), DylibError> {
        let supported = self.hello.supported_profiles();
        if supported.contains(&profile) {
            return Ok(());
        }
        let names: Vec<&str> = supported.iter().map(|p| p.as_str()).collect();
        Err(DylibError::Profile {
            supported: names.join(" and "),
            wanted: profile,
        })
    }

    /// The engine's hello.
    pub fn hello(&self) -> &DylibHello {
        &self.hello
    }

    /// Asks the engine about `scenario`: its observation, its not-supported, or what was wrong.
    pub fn ask(
        &self,
        scenario: &Scenario,
        sandbox: &Path,
    ) -> Result<Answer<Observation>, DylibError> {
        let capability = scenario.capability();
        let json = serde_json::to_vec(scenario).map_err(|e| DylibError::Scenario(e.to_string()))?;
        let sandbox = (capability == Capability::Weights).then_some(sandbox);
        let bytes = self.engine.answer(&json, sandbox)?;
        let answer =
            DylibAnswer::read(&bytes, capability).map_err(|error| DylibError::BadAnswer {
                error,
                text: quote(&bytes),
            })?;
        match answer {
            DylibAnswer::Observation { observation } if observation.capability() == capability => {
                Ok(Ok(observation))
            }
            DylibAnswer::Observation { observation } => Err(DylibError::WrongCapability {
                asked: capability,
                found: observation.capability(),
            }),
            DylibAnswer::NotSupported { reason } => Ok(Err(NotSupported::new(capability, reason))),
            DylibAnswer::Error { message } => Err(DylibError::Engine(message)),
        }
    }
}

/// What is printed when the process ends inside a call of an engine loaded in-process at
/// `path` (after the line naming the library, the function and the scenario): the run is over,
/// and the isolated route would have kept it going.
pub fn in_process_crash_note(path: &Path) -> String {
    let quoted = quote_word(&path.display().to_string());
    format!(
        "ge-conformance: the engine was loaded in-process (--backend dylib:...): it took the harness down \
         and the run ends without a report. \
         Certify it isolated, where a crash, an exit or a hang fails one trial and the run goes on: \
         --backend 'exec:ge-conformance serve-dylib {quoted}'"
    )
}

/// `word` as one word of an `exec:` command line: as it is when that is safe, else in double
/// quotes (which [`crate::protocol::split_command_line`] reads back).
fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,=:@%".contains(c));
    if plain {
        return word.to_owned();
    }
    let escaped = word.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

impl Backend for DylibBackend {
    fn name(&self) -> &str {
        &self.hello.name
    }

    fn version(&self) -> &str {
        &self.hello.version
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        self.hello.capabilities.clone()
    }

    /// Asks the engine; anything wrong with its answer fails the trial with the reason (by
    /// unwinding with [`BrokenBackend`], as the subprocess client does).
    fn answer(&self, scenario: &Scenario, sandbox: &Path) -> Answer<Observation> {
        let capability = scenario.capability();
        if !self.hello.capabilities.contains(&capability) {
            return Err(NotSupported::new(
                capability,
                "not declared in the engine's hello",
            ));
        }
        match self.ask(scenario, sandbox) {
            Ok(answer) => answer,
            Err(why) => std::panic::resume_unwind(Box::new(BrokenBackend(why.to_string()))),
        }
    }

    fn options(
        &self,
        scenario: &ge_spec::vocab::OptionsScenario,
    ) -> Answer<ge_spec::vocab::OptionsObservation> {
        match self.answer(&Scenario::Options(scenario.clone()), Path::new("."))? {
            Observation::Options(o) => Ok(o),
            _ => Err(NotSupported::new(Capability::Options, "wrong capability")),
        }
    }

    fn transfer(
        &self,
        scenario: &ge_spec::vocab::TransferScenario,
    ) -> Answer<ge_spec::vocab::TransferObservation> {
        match self.answer(&Scenario::Transfer(scenario.clone()), Path::new("."))? {
            Observation::Transfer(o) => Ok(o),
            _ => Err(NotSupported::new(Capability::Transfer, "wrong capability")),
        }
    }

    fn memory(
        &self,
        scenario: &ge_spec::vocab::MemoryScenario,
    ) -> Answer<ge_spec::vocab::MemoryObservation> {
        match self.answer(&Scenario::Memory(scenario.clone()), Path::new("."))? {
            Observation::Memory(o) => Ok(o),
            _ => Err(NotSupported::new(Capability::Memory, "wrong capability")),
        }
    }

    fn session(
        &self,
        scenario: &ge_spec::vocab::SessionScenario,
    ) -> Answer<ge_spec::vocab::SessionObservation> {
        match self.answer(&Scenario::Session(scenario.clone()), Path::new("."))? {
            Observation::Session(o) => Ok(o),
            _ => Err(NotSupported::new(Capability::Session, "wrong capability")),
        }
    }

    fn weights(
        &self,
        scenario: &ge_spec::vocab::WeightsScenario,
        sandbox: &Path,
    ) -> Answer<ge_spec::vocab::WeightsObservation> {
        match self.answer(&Scenario::Weights(scenario.clone()), sandbox)? {
            Observation::Weights(o) => Ok(o),
            _ => Err(NotSupported::new(Capability::Weights, "wrong capability")),
        }
    }
}

/// What `serve-dylib` prints when it ends inside an engine call (after the line naming the
/// library, the function and the scenario): the harness on the other side of the protocol fails
/// the trial and starts a new server.
const SERVED_CRASH_NOTE: &str = "ge-conformance serve-dylib: this server ends, the trial fails \
     and the harness starts a new server for the next one";

/// The default of `serve-dylib --memory-limit-mib`.
pub const DEFAULT_MEMORY_LIMIT_MIB: u64 = 8192;

/// Limits the address space of this process to `mib` MiB (RLIMIT_AS; 0: no limit), so that an
/// engine served here that allocates past it fails (its allocations fail, or it dies) and the
/// machine does not. Unix only; elsewhere nothing is limited.
pub fn limit_memory(mib: u64) -> Result<(), String> {
    if mib == 0 {
        return Ok(());
    }
    #[cfg(unix)]
    {
        let bytes = mib.saturating_mul(1 << 20);
        let maximum = rustix::process::getrlimit(rustix::process::Resource::As).maximum;
        // The hard limit too (never above the present one, which only a privileged process
        // could raise): an engine can raise its soft limit up to the hard one, never past it.
        let limit = maximum.map_or(bytes, |m| bytes.min(m));
        let limit = rustix::process::Rlimit {
            current: Some(limit),
            maximum: Some(limit),
        };
        rustix::process::setrlimit(rustix::process::Resource::As, limit).map_err(|e| {
            format!("serve-dylib: cannot limit the address space to {mib} MiB: {e}")
        })?;
    }
    Ok(())
}

/// `ge-conformance serve-dylib PATH`: serves the engine at `path` over the subprocess protocol
/// on `input` and standard output, declaring the profiles of its hello. The engine's own writes
/// to standard output are sent to standard error (unix), so they cannot break the protocol. An
/// engine that cannot be opened is reported with one protocol error line (which refuses the
/// handshake) and the returned error. No call is timed here: the harness on the other side of
/// the protocol has its own `--timeout-ms`.
pub fn serve(path: &Path, input: impl std::io::BufRead) -> Result<(), String> {
    let output = protocol_output().map_err(|e| format!("serve-dylib: {e}"))?;
    let mut output = std::io::BufWriter::new(output);
    let backend = match DylibBackend::open(path, SERVED_CRASH_NOTE) {
        Ok(b) => b,
        Err(e) => {
            let why = format!("serve-dylib: {e}");
            let refusal =
                crate::protocol::BackendMessage::Error(crate::protocol::messages::ErrorResponse {
                    id: None,
                    message: why.clone(),
                });
            if let Ok(line) = serde_json::to_string(&refusal) {
                use std::io::Write;
                // The refusal is a courtesy: the error is returned either way.
                let _ = writeln!(output, "{line}").and_then(|()| output.flush());
            }
            return Err(why);
        }
    };
    let profiles = backend.hello().supported_profiles();
    crate::protocol::serve_profiles(&backend, &profiles, input, output)
        .map_err(|e| format!("serve-dylib: {e}"))
}

/// Where the protocol's lines go: a copy of standard output, which itself is pointed at standard
/// error, so an engine's stray `printf` lands in the log instead of the protocol.
#[cfg(unix)]
fn protocol_output() -> std::io::Result<std::fs::File> {
    let protocol = rustix::io::dup(rustix::stdio::stdout())?;
    rustix::stdio::dup2_stdout(rustix::stdio::stderr())?;
    Ok(std::fs::File::from(protocol))
}

/// Elsewhere the protocol keeps standard output, shared with the engine.
#[cfg(not(unix))]
fn protocol_output() -> std::io::Result<std::io::Stdout> {
    Ok(std::io::stdout())
}
