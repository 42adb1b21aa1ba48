//! The client side of the protocol: [`ExecBackend`] runs an engine as a child process and asks it
//! questions over JSON lines, surviving a child that crashes, hangs, closes its pipe, prints
//! garbage or answers the wrong request.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ge_spec::{Answer, Backend, Capability, NotSupported, Observation, Profile, Scenario};

use super::messages::{
    BackendHello, BackendMessage, HarnessHello, HarnessMessage, Request, PROTOCOL_VERSION,
};

/// The per-request timeout when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The least time a backend is given to start and answer the hello unless the run sets the
/// hello's limit itself ([`GiveUp::hello`]): starting an engine (or an interpreter) can be much
/// slower than answering a request.
pub const MIN_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Failed handshakes in a row after which the backend is no longer restarted.
pub const MAX_HANDSHAKE_FAILURES: u32 = 3;

/// Requests in a row that cost the whole timeout (no answer, or a request it would not take),
/// after which the backend is declared dead: it is not restarted, and every further request
/// fails at once with the reason. A backend that never answers costs this many timeouts, not
/// one per trial ([`ExecBackend::give_up_after`] changes it; 0 never gives up).
pub const DEFAULT_GIVE_UP_AFTER: u32 = 5;

/// Requests in a row that crash the backend (it exits, or its answer is out of step, and it
/// must be restarted), after which it is declared dead as after [`DEFAULT_GIVE_UP_AFTER`]
/// timeouts ([`ExecBackend::giving_up`] changes it; 0 never gives up). Higher than
/// the timeouts' limit: a crash costs a restart, not a timeout, and an engine that crashes on
/// one kind of input still answers the others, so only a long streak says it answers nothing.
/// A backend that crashes on every request costs this many restarts, not one per trial.
pub const DEFAULT_GIVE_UP_AFTER_CRASHES: u32 = 20;

/// Restarts in the whole run (after timeouts and crashes alike, in a row or not), after which
/// the backend is declared dead as after a streak. The streaks end with any other outcome, so a
/// backend that breaks them on purpose (four timeouts, then one error, over and over) would
/// otherwise keep a run alive for hours; this bounds it: at most this many timeouts and
/// restarts in all ([`ExecBackend::giving_up`] changes it; 0 never gives up).
pub const DEFAULT_GIVE_UP_AFTER_RESTARTS: u32 = 60;

/// Seconds a whole run may last, after which the backend is declared dead as after a streak:
/// a backend that answers every request just inside its timeout, or greets just inside the
/// hello's limit before each crash, would otherwise keep a run alive for hours. An hour is
/// many times what a run of the suite takes on an engine that answers in milliseconds
/// ([`ExecBackend::giving_up`] changes it; 0 never gives up).
pub const DEFAULT_GIVE_UP_AFTER_SECS: u64 = 3600;

/// Bytes a confined backend's files may take beneath the sandbox root (`/dev/shm` by default:
/// memory), after which it is declared dead as after a streak: many times the largest
/// weights a scenario writes, and far less than a machine's memory.
pub const DEFAULT_GIVE_UP_AFTER_BYTES: u64 = 1 << 30;

/// How often the bytes beneath the sandbox root are counted for [`GiveUp::root_bytes`]:
/// counting walks the root, so it is done between requests twice a second, and every so many
/// requests for runs quicker than that.
const ROOT_BYTES_EVERY: Duration = Duration::from_millis(500);

/// The most entries beneath the sandbox root that are counted for [`GiveUp::root_bytes`]: more
/// cannot all be counted (each costs memory too), and declare the backend dead.
const ROOT_ENTRIES: usize = 100_000;

/// See [`ROOT_BYTES_EVERY`].
const ROOT_BYTES_EVERY_REQUESTS: u64 = 16;

/// When a subprocess backend is declared dead: after `timeouts` requests in a row that timed
/// out, `crashes` in a row that crashed it, `restarts` restarts in the whole run, or `seconds`
/// of the whole run (0: never on that count); and how long each hello may take.
///
/// A run therefore ends within `seconds`, plus one request's timeout and one hello's limit;
/// and, whatever `seconds` says, within `restarts` times (the timeout plus the hello's limit)
/// spent on failures, plus the time of the requests that were answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUp {
    /// Requests in a row that timed out ([`DEFAULT_GIVE_UP_AFTER`]).
    pub timeouts: u32,
    /// Requests in a row that crashed the backend ([`DEFAULT_GIVE_UP_AFTER_CRASHES`]).
    pub crashes: u32,
    /// Restarts in the whole run ([`DEFAULT_GIVE_UP_AFTER_RESTARTS`]).
    pub restarts: u32,
    /// Seconds of the whole run, from the backend's first start ([`DEFAULT_GIVE_UP_AFTER_SECS`]).
    pub seconds: u64,
    /// Bytes the files beneath the sandbox root may take, counted between requests of a
    /// confined backend ([`DEFAULT_GIVE_UP_AFTER_BYTES`]).
    pub root_bytes: u64,
    /// The limit of each hello; `None`: the request timeout, at least
    /// [`MIN_HANDSHAKE_TIMEOUT`]. A backend that has not greeted within it fails that handshake.
    pub hello: Option<Duration>,
}

impl Default for GiveUp {
    fn default() -> Self {
        GiveUp {
            timeouts: DEFAULT_GIVE_UP_AFTER,
            crashes: DEFAULT_GIVE_UP_AFTER_CRASHES,
            restarts: DEFAULT_GIVE_UP_AFTER_RESTARTS,
            seconds: DEFAULT_GIVE_UP_AFTER_SECS,
            root_bytes: DEFAULT_GIVE_UP_AFTER_BYTES,
            hello: None,
        }
    }
}

/// The longest line read from a backend: 16 MiB; a longer one is a protocol failure. The largest
/// answer to the suite's own scenarios takes 4.3 MB (1,016 warnings, each quoting a long index
/// list): an engine that quotes nearly four times as much still fits. What an answer costs the
/// judge per entry is bounded by [`MAX_ANSWER_ENTRIES`], and per byte by this (the judge holds
/// a few copies of the strings it quotes): with the line read ahead ([`LINE_QUEUE`]) a hostile
/// backend keeps the harness below 400 MB. At the 64 MiB it was, with four lines read ahead, a
/// plan of 1,300,000 made-up tensors took it to 708 MB (round five, L10); at 32 MiB, 65,000
/// extra errors quoting 480 bytes each, 373 MB (round eight, H1).
pub const MAX_LINE: usize = 16 << 20;

/// The most entries an answer may hold: the elements of its lists and the members of its
/// objects, at every depth, as [`Tally`] counts them; a session answer may hold
/// [`ENTRIES_PER_STEP`] more for each event and execution of its script (up to SES-020's cap of
/// 100,000), since a trace may follow each. The largest answer to the suite's own scenarios (the
/// reference's, over a whole `certify`) holds about 30,000. The judge holds a few kilobytes for
/// each entry of an answer made up to be judged badly (an empty diagnostic, `{}`, is one), so
/// past this an answer is refused unread: 250,000 empty diagnostics, a line of 750 KB, took the
/// harness to 637 MB (round seven, H1). Its diagnostics (`errors`, `warnings`) may hold this many
/// whatever the script.
pub const MAX_ANSWER_ENTRIES: usize = 1 << 17;

/// The entries a session answer may hold beyond [`MAX_ANSWER_ENTRIES`] for each event and each
/// execution of its script: a trace entry takes five (its four fields and the comma after it),
/// and an engine may allocate and free at each execution (SES-018 is the suite's choice), ten in
/// all; two more to spare.
pub const ENTRIES_PER_STEP: usize = 12;

/// The entries an answer to `scenario` may hold ([`MAX_ANSWER_ENTRIES`], [`ENTRIES_PER_STEP`]).
fn entry_bound(scenario: &Scenario) -> usize {
    let steps = match scenario {
        Scenario::Session(s) => (s.events.len() as u64)
            .saturating_add(s.executions())
            .min(ge_spec::vocab::session::MAX_SCRIPT),
        _ => 0,
    };
    MAX_ANSWER_ENTRIES + ENTRIES_PER_STEP * usize::try_from(steps).unwrap_or(usize::MAX / 32)
}

/// The entries of a JSON answer, counted without parsing it: each `{`, `[` and `,` outside a
/// string, as many as its elements and members or a few more; in all, and within the lists of
/// its observation's diagnostics.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    /// In the whole line.
    entries: usize,
    /// Within the observation's `errors` and `warnings`.
    diagnostics: usize,
}

impl Tally {
    fn of(line: &str) -> Tally {
        let mut tally = Tally::default();
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        // The last string seen inside the observation (a key, when a value follows), and the
        // depth at which the diagnostic list being counted opened.
        let (mut started, mut key, mut diagnostics_at) = (0, "", None);
        for (at, b) in line.bytes().enumerate() {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => {
                        in_string = false;
                        if depth == 2 {
                            key = &line[started..at];
                        }
                    }
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => {
                    in_string = true;
                    started = at + 1;
                    continue;
                }
                b'{' | b'[' => {
                    if depth == 2
                        && diagnostics_at.is_none()
                        && matches!(key, "errors" | "warnings")
                    {
                        diagnostics_at = Some(depth);
                    }
                    depth += 1;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if diagnostics_at == Some(depth) {
                        diagnostics_at = None;
                    }
                    continue;
                }
                b',' => {}
                _ => continue,
            }
            tally.entries += 1;
            if diagnostics_at.is_some() {
                tally.diagnostics += 1;
            }
        }
        tally
    }
}

/// The longest hello a backend may write: 64 KiB. A hello is a few hundred bytes; a larger one
/// is refused before it is parsed (a 66 MB hello took the harness to 633 MB: round seven, H2).
pub const MAX_HELLO: usize = 64 << 10;

/// The longest request line `serve-reference` and `serve-dylib` read: a scenario file's cap
/// ([`crate::input::MAX_SCENARIO`], 64 MiB).
pub const MAX_REQUEST_LINE: usize = crate::input::MAX_SCENARIO as usize;

/// How much of the backend's standard error is kept for the report.
pub const MAX_STDERR: usize = 1 << 20;

/// Blank lines a backend may write while one request is pending (or between two requests)
/// before it is a protocol violation: blank lines are tolerated, not an endless stream of them.
pub const MAX_BLANK_LINES: usize = 64;

/// Lines read ahead from the backend's output before the reader waits for the harness to take
/// them, so a backend that floods its output costs bounded memory (at most this many lines of
/// at most [`MAX_LINE`] bytes, and the one the reader holds). One is enough: the harness asks
/// one request at a time.
const LINE_QUEUE: usize = 1;

/// The process groups of the backends running now, so that an interrupted harness can stop
/// them ([`stop_all_backends`]). A group is listed from its start until just before its leader
/// is reaped, so a listed id is never another process's.
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> MutexGuard<'static, BTreeSet<u32>> {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills the process group of every backend running now. The command-line tool calls it when
/// it is interrupted (Ctrl-C, SIGTERM), so no backend outlives it.
pub fn stop_all_backends() {
    let live = live_groups();
    for &id in live.iter() {
        kill_group(id);
    }
    // A helper that left its backend's group is adopted only once the backend has died:
    // looked for any sooner, it would still be the backend's, and outlive the run.
    super::strays::await_exit(&live, std::time::Duration::from_secs(2));
    super::strays::reap(&live);
}

fn kill_group(id: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(id)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = id;
}

/// The panic payload an [`ExecBackend`] unwinds with when a request fails for a reason that is
/// not the engine's answer (timeout, crash, garbage, ...). `runner::ask` turns it into a
/// failure carrying the message; it never reaches the panic hook (it is raised with
/// [`std::panic::resume_unwind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenBackend(pub String);

impl std::fmt::Display for BrokenBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `program`, or this harness's own executable when `program` is the bare word
/// `ge-conformance`, no program of that name is on `PATH`, and this process is the
/// `ge-conformance` binary: `exec:ge-conformance serve-dylib ...` and `exec:ge-conformance
/// serve-reference`, as the docs and the crash note write them, then work from a checkout
/// (`target/release/ge-conformance certify ...`) as they do once the binary is installed.
pub fn this_harness_if_named(program: &str) -> String {
    const NAME: &str = "ge-conformance";
    if program != NAME {
        return program.to_owned();
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(NAME).is_file()));
    let this = std::env::current_exe()
        .ok()
        .filter(|exe| exe.file_name().is_some_and(|n| n == NAME));
    match this {
        Some(exe) if !on_path => exe.to_string_lossy().into_owned(),
        _ => program.to_owned(),
    }
}

/// Splits a command line into words like a POSIX shell would, without running one (the
/// `shlex` crate): blanks separate words; `'...'` keeps everything literally; `"..."` keeps
/// everything but the escapes `\"`, `\\`, `\$` and `` \` ``; a backslash outside quotes
/// escapes the next character; a word starting with `#` starts a comment. No variables, globs,
/// pipes or redirections are interpreted.
pub fn split_command_line(line: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(line).ok_or_else(|| {
        format!("`{line}` is not a command line: a quote is not closed or it ends in a backslash")
    })?;
    if words.is_empty() {
        return Err("the command line is empty".to_owned());
    }
    Ok(words)
}

/// What the backend wrote to standard error, with the harness's own notes about restarts,
/// shared between the reader threads and the report.
#[derive(Debug, Clone, Default)]
pub struct StderrLog(Arc<Mutex<LogText>>);

#[derive(Debug, Default)]
struct LogText {
    text: String,
    dropped: usize,
}

impl StderrLog {
    fn lock(&self) -> MutexGuard<'_, LogText> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn append(&self, s: &str) {
        let mut log = self.lock();
        let room = MAX_STDERR.saturating_sub(log.text.len());
        if s.len() <= room {
            log.text.push_str(s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            log.text.push_str(&s[..cut]);
            log.dropped += s.len() - cut;
        }
    }

    /// Adds a line of the harness's own, marked `[ge-conformance]`.
    fn note(&self, s: &str) {
        let needs_newline = !self.lock().text.is_empty() && !self.lock().text.ends_with('\n');
        self.append(&format!(
            "{}[ge-conformance] {s}\n",
            if needs_newline { "\n" } else { "" }
        ));
    }

    /// Everything kept so far.
    pub fn text(&self) -> String {
        let log = self.lock();
        if log.dropped == 0 {
            log.text.clone()
        } else {
            format!("{}\n[... {} more bytes not kept]\n", log.text, log.dropped)
        }
    }
}

/// Who the backend said it is at its first successful handshake.
#[derive(Debug, Clone)]
struct Identity {
    name: String,
    version: String,
    capabilities: BTreeSet<Capability>,
}

/// A running child: its input, written by a thread of its own so that a write that never
/// completes (a backend that stops reading) cannot block the harness past its deadline, and
/// its output lines arriving from a reader thread.
#[derive(Debug)]
struct Running {
    child: Child,
    /// Lines for the writer thread; dropping it closes the child's standard input.
    writer: Option<Sender<Vec<u8>>>,
    /// The writer thread's result for each line, in order.
    written: Receiver<std::io::Result<()>>,
    lines: Receiver<Result<String, String>>,
}

impl Running {
    /// Sends one message, waiting at most until `deadline` for the child to take it.
    fn send(&mut self, message: &HarnessMessage, deadline: Instant) -> Result<(), String> {
        let mut line = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        line.push(b'\n');
        let size = line.len();
        let Some(writer) = &self.writer else {
            return Err("its standard input is closed".to_owned());
        };
        if writer.send(line).is_err() {
            return Err("its standard input is closed".to_owned());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match self.written.recv_timeout(left) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "it did not take the {size}-byte message within the timeout (it does not read its input)"
            )),
            Err(RecvTimeoutError::Disconnected) => Err("its standard input is closed".to_owned()),
        }
    }

    /// Takes what the child wrote since its last answer: blank lines are tolerated (up to
    /// [`MAX_BLANK_LINES`]), anything else is a line nobody asked for.
    fn drain_unsolicited(&mut self) -> Result<(), String> {
        let mut blanks = 0;
        loop {
            match self.lines.try_recv() {
                Ok(Ok(line)) if line.trim().is_empty() => {
                    blanks += 1;
                    if blanks > MAX_BLANK_LINES {
                        return Err(format!(
                            "the backend wrote more than {MAX_BLANK_LINES} blank lines between two requests"
                        ));
                    }
                }
                Ok(Ok(line)) => {
                    return Err(format!(
                        "the backend wrote a line nobody asked for after its last answer: {}",
                        excerpt(&line)
                    ))
                }
                Ok(Err(why)) => return Err(why),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return Ok(()),
            }
        }
    }
}

#[derive(Debug, Default)]
struct State {
    running: Option<Running>,
    next_id: u64,
    handshake_failures: u32,
    /// Requests in a row that cost the whole timeout.
    timeouts: u32,
    /// Requests in a row that crashed the backend, quicker than the timeout.
    crashes: u32,
    /// Restarts after a request, in the whole run.
    restarts: u32,
    given_up: Option<String>,
    /// When the bytes beneath the sandbox root were last counted.
    counted: Option<Instant>,
}

/// Why an exchange with the child failed, and whether the child must be restarted.
enum Failure {
    /// The child is out of step or gone: stop it, restart it for the next request.
    Restart(String),
    /// The child answered in step, but not usefully: the request fails, the child stays.
    Keep(String),
}

/// A backend that runs as a child process speaking the protocol (see `docs/protocol.md`).
///
/// The child is started (and the handshake made) when the backend is created, and restarted
/// after any failure that leaves it out of step. Each request is given `timeout` to be answered.
/// A failed request makes the [`Backend`] method unwind with a [`BrokenBackend`] payload, which
/// `runner::ask` reports as that case's failure. After [`MAX_HANDSHAKE_FAILURES`] failed
/// handshakes in a row, or one refusal of the protocol version, the child is not started any
/// more and every further request fails at once with the recorded reason.
#[derive(Debug)]
pub struct ExecBackend {
    profile: Profile,
    argv: Vec<String>,
    command_line: String,
    timeout: Duration,
    give_up: GiveUp,
    identity: OnceLock<Identity>,
    state: Mutex<State>,
    log: StderrLog,
    /// The backend's own `$TMPDIR` and `$HOME` when it is confined ([`crate::confine`]).
    area: Option<crate::confine::Area>,
    /// How the child was confined, from its first start on.
    confinement: OnceLock<crate::confine::Status>,
    /// When the backend was created: the start of the run [`GiveUp::seconds`] bounds.
    created: Instant,
}

impl ExecBackend {
    /// Starts `command_line` (split with [`split_command_line`], no shell) and makes the
    /// handshake. Only a command line that cannot be split is an error: a child that fails to
    /// start or to greet is recorded, and its requests fail with the reason.
    pub fn new(command_line: &str, timeout: Duration) -> Result<Self, String> {
        Self::with_profile(command_line, timeout, Profile::Documented)
    }

    /// [`ExecBackend::new`] for a certification against `profile`: the hello names it, and a
    /// backend whose hello does not list it is refused.
    pub fn with_profile(
        command_line: &str,
        timeout: Duration,
        profile: Profile,
    ) -> Result<Self, String> {
        Self::with_confinement(command_line, timeout, profile, crate::confine::Confine::On)
    }

    /// [`ExecBackend::with_profile`], confined as `confine` says ([`crate::confine`]): by
    /// default the child gets a `$TMPDIR` and `$HOME` of its own, watched during weights
    /// trials, and Landlock where the kernel has it.
    pub fn with_confinement(
        command_line: &str,
        timeout: Duration,
        profile: Profile,
        confine: crate::confine::Confine,
    ) -> Result<Self, String> {
        Self::bounded(command_line, timeout, profile, confine, GiveUp::default())
    }

    /// [`ExecBackend::with_confinement`], declared dead as `give_up` says from its first start
    /// on (its first hello included, which [`ExecBackend::giving_up`] comes too late for).
    pub fn bounded(
        command_line: &str,
        timeout: Duration,
        profile: Profile,
        confine: crate::confine::Confine,
        give_up: GiveUp,
    ) -> Result<Self, String> {
        let mut argv = split_command_line(command_line)?;
        if let Some(program) = argv.first_mut() {
            *program = this_harness_if_named(program);
        }
        let log = StderrLog::default();
        let confinement = OnceLock::new();
        let area = match confine {
            crate::confine::Confine::Off => {
                let _ = confinement.set(crate::confine::Status::Off);
                None
            }
            crate::confine::Confine::On | crate::confine::Confine::Required => {
                match crate::confine::Area::new() {
                    Ok(area) => Some(area),
                    Err(e) => {
                        let why = format!("the backend's own directories cannot be made: {e}");
                        log.note(&why);
                        let _ = confinement.set(crate::confine::Status::WatchedOnly(
                            why,
                            crate::confine::Hardening::default(),
                        ));
                        None
                    }
                }
            }
        };
        let backend = ExecBackend {
            profile,
            argv,
            command_line: command_line.to_owned(),
            timeout,
            give_up,
            identity: OnceLock::new(),
            state: Mutex::new(State::default()),
            log,
            area,
            confinement,
            created: Instant::now(),
        };
        {
            let mut state = backend.lock();
            let _ = backend.ensure_running(&mut state);
        }
        // Known once the first start has tried to confine it (or failed to make its
        // directories); a backend that could not even start is left to the trials to report.
        if let Some(status) = backend.confinement.get() {
            confine.allows(status)?;
        }
        Ok(backend)
    }

    /// Declares the backend dead after `n` requests in a row that cost the whole timeout
    /// (0: never), instead of [`DEFAULT_GIVE_UP_AFTER`].
    pub fn give_up_after(mut self, n: u32) -> Self {
        self.give_up.timeouts = n;
        self
    }

    /// Declares the backend dead as `give_up` says, instead of [`GiveUp::default`], from now
    /// on (the first start is over: [`ExecBackend::bounded`] bounds that one too).
    pub fn giving_up(mut self, give_up: GiveUp) -> Self {
        self.give_up = give_up;
        self
    }

    /// How the child is confined, as reports state it ([`crate::confine::Status`]); `None`
    /// before it was first started.
    pub fn confinement(&self) -> Option<String> {
        self.confinement.get().map(ToString::to_string)
    }

    /// The standard error of the child(ren) so far, with the harness's notes.
    pub fn stderr_log(&self) -> StderrLog {
        self.log.clone()
    }

    /// True when the first handshake (or a later one) succeeded.
    pub fn greeted(&self) -> bool {
        self.identity.get().is_some()
    }

    /// Makes sure the backend has greeted, starting it again as a run would (up to the limit of
    /// failed handshakes in a row): the error says why it never did. A backend that cannot be
    /// started at all is a set-up error, not a list of failed trials.
    pub fn greet(&self) -> Result<(), String> {
        let mut state = self.lock();
        loop {
            if self.ensure_running(&mut state).is_ok() {
                return Ok(());
            }
            if let Some(all) = &state.given_up {
                return Err(all.clone());
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts the child and greets it unless it already runs.
    fn ensure_running(&self, state: &mut State) -> Result<(), String> {
        if state.running.is_some() {
            return Ok(());
        }
        if let Some(why) = &state.given_up {
            return Err(format!("the backend is not started any more: {why}"));
        }
        match self.start() {
            Ok((running, hello)) => {
                state.handshake_failures = 0;
                let _ = self.identity.set(Identity {
                    name: hello.name,
                    version: hello.version,
                    capabilities: hello.capabilities.into_iter().collect(),
                });
                state.running = Some(running);
                Ok(())
            }
            Err((why, refused)) => {
                state.handshake_failures += 1;
                let why = format!("the backend could not be started: {why}");
                if refused {
                    state.given_up = Some(why.clone());
                    self.log.note(&format!("{why}; it will not be restarted"));
                } else if state.handshake_failures >= MAX_HANDSHAKE_FAILURES {
                    let all = format!(
                        "{why} ({} failed handshakes in a row)",
                        state.handshake_failures
                    );
                    state.given_up = Some(all.clone());
                    self.log.note(&format!("{all}; it will not be restarted"));
                } else {
                    self.log.note(&why);
                }
                Err(why)
            }
        }
    }

    /// Spawns the child and makes the handshake. The error says whether the backend refused
    /// (restarting cannot help).
    fn start(&self) -> Result<(Running, BackendHello), (String, bool)> {
        let (program, args) = self
            .argv
            .split_first()
            .ok_or_else(|| ("the command line is empty".to_owned(), true))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A session of its own: a process group of its own, so that stopping the backend stops
        // what it started too (what leaves the group is adopted here and known by the variable,
        // `strays`), and no controlling terminal to push input into (`TIOCSTI`); and no
        // descriptor of the harness's but the three pipes (a writable one would pass
        // confinement by).
        ge_dylib::apart(&mut command);
        command.env(super::strays::HARNESS_VAR, std::process::id().to_string());
        super::strays::adopt_orphans();
        // Started and listed under the lock, so that no sweep for strays sees it unlisted.
        let mut live = live_groups();
        let spawned = match &self.area {
            Some(area) => {
                let (spawned, status) = crate::confine::spawn(&mut command, area);
                let first = self.confinement.get_or_init(|| status.clone());
                if let Err(why) = first.restart(&status) {
                    drop(live);
                    if let Ok(mut child) = spawned {
                        kill(&mut child);
                    }
                    return Err((why, false));
                }
                spawned
            }
            None => command.spawn(),
        };
        let mut child = spawned.map_err(|e| (format!("cannot run `{program}`: {e}"), false))?;
        live.insert(child.id());
        drop(live);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill(&mut child);
            return Err(("the child's pipes are missing".to_owned(), false));
        };
        let (tx, rx) = mpsc::sync_channel(LINE_QUEUE);
        std::thread::spawn(move || read_lines(stdout, &tx));
        let log = self.log.clone();
        std::thread::spawn(move || copy_stderr(stderr, &log));
        let (writer, to_write) = mpsc::channel();
        let (done, written) = mpsc::channel();
        std::thread::spawn(move || write_lines(stdin, &to_write, &done));
        let mut running = Running {
            child,
            writer: Some(writer),
            written,
            lines: rx,
        };
        match self.handshake(&mut running) {
            Ok(hello) => Ok((running, hello)),
            Err(e) => {
                stop(&mut running);
                Err(e)
            }
        }
    }

    /// How long a hello may take: [`GiveUp::hello`], or the request timeout but at least
    /// [`MIN_HANDSHAKE_TIMEOUT`].
    fn hello_limit(&self) -> Duration {
        self.give_up
            .hello
            .unwrap_or_else(|| self.timeout.max(MIN_HANDSHAKE_TIMEOUT))
    }

    /// Declares the backend dead once the whole run has lasted [`GiveUp::seconds`], or (counted
    /// as often as [`ROOT_BYTES_EVERY`] says) once the files beneath the sandbox root of a
    /// confined backend take more than [`GiveUp::root_bytes`]: from then on every request fails
    /// at once, whatever the backend would answer.
    fn check_run_bound(&self, state: &mut State) {
        let bound = self.give_up.seconds;
        if bound > 0 && self.created.elapsed() >= Duration::from_secs(bound) {
            self.declare_dead(
                state,
                format!(
                    "declared dead after {bound} s, the bound of a whole run (`certify --give-up-after-secs`)"
                ),
            );
        }
        let bytes = self.give_up.root_bytes;
        let due = state
            .counted
            .is_none_or(|t| t.elapsed() >= ROOT_BYTES_EVERY)
            || state.next_id.is_multiple_of(ROOT_BYTES_EVERY_REQUESTS);
        if bytes > 0 && self.area.is_some() && due {
            state.counted = Some(Instant::now());
            match crate::sandbox::bytes_beneath_root(ROOT_ENTRIES) {
                Some(taken) if taken <= bytes => {}
                Some(taken) => self.declare_dead(
                    state,
                    format!(
                        "declared dead: its files beneath the sandbox root take {taken} bytes, past the bound of {bytes} (in memory under /dev/shm)"
                    ),
                ),
                None => self.declare_dead(
                    state,
                    format!(
                        "declared dead: the files beneath the sandbox root cannot all be counted (more than {ROOT_ENTRIES} entries, a directory that cannot be listed, an entry that cannot be looked at, or a tree more than {} levels deep), so their bound of {bytes} bytes cannot be held", crate::sandbox::MAX_DEPTH
                    ),
                ),
            }
        }
    }

    /// Stops the backend for good, with `why`, unless it already is.
    fn declare_dead(&self, state: &mut State, why: String) {
        if state.given_up.is_some() {
            return;
        }
        if let Some(mut running) = state.running.take() {
            stop(&mut running);
        }
        self.log.note(&format!(
            "{why}; it will not be restarted, and every further request fails at once"
        ));
        state.given_up = Some(why);
    }

    fn handshake(&self, running: &mut Running) -> Result<BackendHello, (String, bool)> {
        let hello = HarnessMessage::Hello(HarnessHello {
            protocol: PROTOCOL_VERSION,
            harness: "ge-conformance".to_owned(),
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            profile: self.profile,
        });
        let limit = self.hello_limit();
        let deadline = Instant::now() + limit;
        if let Err(e) = running.send(&hello, deadline) {
            return Err((
                format!(
                    "cannot send the hello: {e}{}",
                    exit_note(&mut running.child)
                ),
                false,
            ));
        }
        let line = match receive(running, deadline, limit) {
            Ok(line) => line,
            Err(Failure::Restart(why) | Failure::Keep(why)) => {
                return Err((format!("no hello: {why}"), false))
            }
        };
        let value = hello_value(&line)?;
        match value.get("type").and_then(|t| t.as_str()) {
            Some("hello") => {}
            Some("error") => {
                let why = value
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or("no reason given");
                return Err((format!("the backend refused the handshake: {why}"), true));
            }
            _ => return Err((format!("expected a hello, got: {}", excerpt(&line)), false)),
        }
        if let Some(version) = value.get("protocol").and_then(|p| p.as_u64()) {
            if version != u64::from(PROTOCOL_VERSION) {
                return Err((
                    format!(
                        "the backend speaks protocol version {version} and this harness speaks version {PROTOCOL_VERSION}; update one of them (see docs/protocol.md)"
                    ),
                    true,
                ));
            }
        }
        match serde_json::from_value::<BackendMessage>(value) {
            Ok(BackendMessage::Hello(hello)) => {
                let supported = hello.supported_profiles();
                if supported.contains(&self.profile) {
                    Ok(hello)
                } else {
                    let names: Vec<&str> = supported.iter().map(|p| p.as_str()).collect();
                    Err((
                        format!(
                            "the backend supports the {} profile(s) and this certification is against the {} profile; pick a profile it declares, or declare `profiles` in its hello (see docs/protocol.md)",
                            names.join(" and "),
                            self.profile
                        ),
                        true,
                    ))
                }
            }
            Ok(_) => Err((format!("expected a hello, got: {}", excerpt(&line)), false)),
            Err(e) => Err((
                format!("the hello is malformed ({e}): {}", excerpt(&line)),
                false,
            )),
        }
    }

    /// The streak or the whole-run count that declares the backend dead, if one reached its
    /// limit: how many requests, and what they did.
    fn dead_after(&self, state: &State) -> Option<(u32, &'static str)> {
        let GiveUp {
            timeouts,
            crashes,
            restarts,
            ..
        } = self.give_up;
        if timeouts > 0 && state.timeouts >= timeouts {
            Some((state.timeouts, "requests in a row that timed out"))
        } else if crashes > 0 && state.crashes >= crashes {
            Some((
                state.crashes,
                "requests in a row that crashed the backend (it exited, or answered out of step, and was restarted)",
            ))
        } else if restarts > 0 && state.restarts >= restarts {
            Some((
                state.restarts,
                "requests in this run that timed out or crashed the backend (the bound of a whole run, in a row or not)",
            ))
        } else {
            None
        }
    }

    /// Sends one request and waits for its answer.
    fn exchange(&self, scenario: &Scenario, sandbox: &Path) -> Result<Answer<Observation>, String> {
        let mut state = self.lock();
        self.check_run_bound(&mut state);
        self.ensure_running(&mut state)?;
        state.next_id += 1;
        let id = state.next_id;
        let capability = scenario.capability();
        let request = HarnessMessage::Request(Request {
            id,
            capability,
            scenario: scenario.clone(),
            sandbox: (capability == Capability::Weights).then(|| sandbox.to_path_buf()),
        });
        let Some(running) = state.running.as_mut() else {
            return Err("the backend is not running".to_owned());
        };
        // What a weights trial leaves in the backend's own directories is a write outside
        // its sandbox; the listing before the request is the baseline.
        let watched = self
            .area
            .as_ref()
            .filter(|_| capability == Capability::Weights)
            .map(|area| (area, area.listing()));
        // The timeout covers sending the request as well as answering it.
        let began = Instant::now();
        let deadline = began + self.timeout;
        let result = match running.drain_unsolicited() {
            Err(why) => Err(Failure::Restart(why)),
            Ok(()) => match running.send(&request, deadline) {
                Err(e) => Err(Failure::Restart(format!(
                    "cannot send request {id}: {e}{}",
                    exit_note(&mut running.child)
                ))),
                Ok(()) => receive(running, deadline, self.timeout)
                    .and_then(|line| interpret(&line, id, scenario)),
            },
        };
        if let Some((area, before)) = watched {
            let left = crate::confine::left_behind(&before, &area.listing());
            crate::sandbox::note_outside(sandbox, left);
        }
        // A request that cost the whole timeout counts toward declaring the backend dead, and
        // so does one that crashed it; each streak ends with any other outcome.
        let restart = matches!(result, Err(Failure::Restart(_)));
        let timed_out = restart && began.elapsed() >= self.timeout;
        state.timeouts = if timed_out { state.timeouts + 1 } else { 0 };
        state.crashes = if restart && !timed_out {
            state.crashes + 1
        } else {
            0
        };
        state.restarts += u32::from(restart);
        match result {
            Ok(answer) => Ok(answer),
            Err(Failure::Keep(why)) => Err(format!("request {id}: {why}")),
            Err(Failure::Restart(why)) => {
                if let Some(mut running) = state.running.take() {
                    stop(&mut running);
                }
                let why = if let Some((n, what)) = self.dead_after(&state) {
                    let dead =
                        format!("declared dead after {n} {what} (the last: request {id}: {why})");
                    state.given_up = Some(dead.clone());
                    format!(
                        "{dead}; it will not be restarted, and every further request fails at once"
                    )
                } else {
                    format!("request {id}: {why}; the backend was stopped (a further request starts it again)")
                };
                self.log.note(&why);
                Err(why)
            }
        }
    }
}

impl Drop for ExecBackend {
    fn drop(&mut self) {
        let state = self
            .state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(mut running) = state.running.take() {
            // Closing standard input is the polite way to end the session.
            running.writer = None;
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline && !has_exited(&running.child) {
                std::thread::sleep(Duration::from_millis(5));
            }
            // Whatever else it started in its process group goes with it: a helper left
            // running would outlive the run.
            kill(&mut running.child);
        }
    }
}

impl Backend for ExecBackend {
    fn name(&self) -> &str {
        self.identity
            .get()
            .map_or(self.command_line.as_str(), |i| i.name.as_str())
    }

    fn version(&self) -> &str {
        self.identity
            .get()
            .map_or("unknown", |i| i.version.as_str())
    }

    /// The capabilities of the hello. A backend that never greeted is taken to claim them all,
    /// so that every trial fails with the reason instead of passing as not supported.
    fn capabilities(&self) -> BTreeSet<Capability> {
        self.identity.get().map_or_else(
            || Capability::ALL.into_iter().collect(),
            |i| i.capabilities.clone(),
        )
    }

    fn answer(&self, scenario: &Scenario, sandbox: &Path) -> Answer<Observation> {
        let capability = scenario.capability();
        if !self.capabilities().contains(&capability) {
            return Err(NotSupported::new(
                capability,
                "not declared in the backend's hello",
            ));
        }
        // The lock is released before unwinding, so the state is never poisoned.
        match self.exchange(scenario, sandbox) {
            Ok(answer) => answer,
            Err(why) => std::panic::resume_unwind(Box::new(BrokenBackend(why))),
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

/// The hello `line` as a JSON value. A hello names the backend, its version, capabilities and
/// profiles: a few hundred bytes. Past [`MAX_HELLO`] it is refused before it is parsed, which
/// holds many times its size.
fn hello_value(line: &str) -> Result<serde_json::Value, (String, bool)> {
    if line.len() > MAX_HELLO {
        return Err((
            format!(
                "the hello takes {} bytes, more than the {MAX_HELLO} a hello may: {}",
                line.len(),
                excerpt(line)
            ),
            false,
        ));
    }
    serde_json::from_str(line).map_err(|e| {
        (
            format!("the hello is not JSON ({e}): {}", excerpt(line)),
            false,
        )
    })
}

/// Turns the answer line to request `id` into an answer, or says what is wrong with it.
fn interpret(line: &str, id: u64, scenario: &Scenario) -> Result<Answer<Observation>, Failure> {
    let capability = scenario.capability();
    let (held, bound) = (Tally::of(line), entry_bound(scenario));
    if held.entries > bound || held.diagnostics > MAX_ANSWER_ENTRIES {
        return Err(Failure::Keep(format!(
            "the backend answered a line of {} entries ({} in its diagnostics), more than the \
             {bound} an answer to this scenario may hold ({MAX_ANSWER_ENTRIES} in its \
             diagnostics): it is not read",
            held.entries, held.diagnostics
        )));
    }
    let message: BackendMessage = serde_json::from_str(line).map_err(|e| {
        Failure::Restart(format!(
            "the backend answered a line that is not a protocol message ({e}): {}",
            excerpt(line)
        ))
    })?;
    let answered = match &message {
        BackendMessage::Hello(_) => {
            return Err(Failure::Restart(
                "the backend answered with a hello in the middle of the session".to_owned(),
            ))
        }
        BackendMessage::Observation(o) => Some(o.id),
        BackendMessage::NotSupported(n) => Some(n.id),
        BackendMessage::Error(e) => e.id,
    };
    if let Some(other) = answered.filter(|a| *a != id) {
        return Err(Failure::Restart(format!(
            "the backend answered request {other} while request {id} was pending"
        )));
    }
    match message {
        BackendMessage::Observation(o) if o.observation.capability() != capability => {
            Err(Failure::Keep(format!(
                "the backend answered a `{}` observation to a `{capability}` request",
                o.observation.capability()
            )))
        }
        BackendMessage::Observation(o) => Ok(Ok(o.observation)),
        BackendMessage::NotSupported(n) => Ok(Err(NotSupported::new(capability, n.reason))),
        BackendMessage::Error(e) => Err(Failure::Keep(format!(
            "the backend reported an error: {}",
            e.message
        ))),
        BackendMessage::Hello(_) => Err(Failure::Restart("unexpected hello".to_owned())),
    }
}

/// Waits until `deadline` for the next non-blank line of the child. Blank lines are skipped,
/// up to [`MAX_BLANK_LINES`]; the deadline holds however many lines arrive.
fn receive(running: &mut Running, deadline: Instant, timeout: Duration) -> Result<String, Failure> {
    let mut blanks = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timed_out = || {
            Failure::Restart(format!(
                "no answer within {} ms (the timeout)",
                timeout.as_millis()
            ))
        };
        if left.is_zero() {
            return Err(timed_out());
        }
        match running.lines.recv_timeout(left) {
            Ok(Ok(line)) if line.trim().is_empty() => {
                blanks += 1;
                if blanks > MAX_BLANK_LINES {
                    return Err(Failure::Restart(format!(
                        "the backend wrote more than {MAX_BLANK_LINES} blank lines instead of an answer"
                    )));
                }
            }
            Ok(Ok(line)) => return Ok(line),
            Ok(Err(why)) => return Err(Failure::Restart(why)),
            Err(RecvTimeoutError::Timeout) => return Err(timed_out()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure::Restart(format!(
                    "the backend closed its standard output{}",
                    exit_note(&mut running.child)
                )))
            }
        }
    }
}

/// Says how the child ended, waiting a little for it to do so.
fn exit_note(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return format!(" (it exited: {})", describe(status)),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => return " (it is still running)".to_owned(),
        }
    }
}

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("status {code}"),
        None => status.to_string(),
    }
}

fn stop(running: &mut Running) {
    running.writer = None;
    kill(&mut running.child);
}

/// True when the child has ended, without reaping it: while it is not reaped its process id,
/// and so its process group's id, cannot be given to another process, and [`kill`] can still
/// signal the group safely.
fn has_exited(child: &Child) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
        let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
            return true;
        };
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG;
        // An error (ECHILD: already reaped) means there is nothing left to wait for.
        waitid(WaitId::Pid(pid), options).map_or(true, |status| status.is_some())
    }
    #[cfg(not(unix))]
    {
        let _ = child;
        false
    }
}

/// Kills the backend and every process still in its process group (on unix it was started as
/// the leader of a group of its own), then reaps it. A backend started through a shell
/// wrapper would otherwise leave the real engine running when the shell is killed: hung for
/// good after a timeout, one more at each restart. The group is signalled before the leader is
/// reaped, while its id cannot have been reused. A helper that had left the group is adopted
/// here once the backend is gone, and killed then ([`super::strays`]).
fn kill(child: &mut Child) {
    // Killed here, so no longer the interrupt handler's to kill; unlisted before it is reaped.
    live_groups().remove(&child.id());
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    // The helpers that left its group, now adopted here.
    super::strays::reap(&live_groups());
}

/// Writes each line it is given to the child's standard input, reporting each result, until
/// the harness drops its end (which closes the child's input) or a write fails.
fn write_lines(
    mut stdin: ChildStdin,
    lines: &Receiver<Vec<u8>>,
    done: &Sender<std::io::Result<()>>,
) {
    for line in lines {
        let result = stdin.write_all(&line).and_then(|()| stdin.flush());
        let failed = result.is_err();
        if done.send(result).is_err() || failed {
            return;
        }
    }
}

/// The start of a line, for messages.
fn excerpt(line: &str) -> String {
    const MAX: usize = 200;
    if line.len() <= MAX {
        format!("{line:?}")
    } else {
        let mut cut = MAX;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{:?}... ({} bytes)", &line[..cut], line.len())
    }
}

/// Reads the child's standard output line by line into `tx` until it ends.
fn read_lines(stdout: impl Read, tx: &SyncSender<Result<String, String>>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = MAX_LINE as u64 + 1;
        match (&mut reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) if line.len() > MAX_LINE => {
                let _ = tx.send(Err(format!(
                    "the backend wrote a line longer than {MAX_LINE} bytes"
                )));
                return;
            }
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                // Handed over, not copied: the reader keeps no buffer of a long line's size. A
                // line that is not UTF-8 is a protocol failure, not a line three times its size
                // once each bad byte is replaced (round seven, H3).
                let Ok(text) = String::from_utf8(std::mem::take(&mut line)) else {
                    let _ = tx.send(Err("the backend wrote a line that is not UTF-8".to_owned()));
                    return;
                };
                if tx.send(Ok(text)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(format!("cannot read the backend's output: {e}")));
                return;
            }
        }
    }
}

/// Copies the child's standard error into the log until it ends.
fn copy_stderr(mut stderr: impl Read, log: &StderrLog) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => log.append(&String::from_utf8_lossy(&buf[..n])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_counted_outside_strings_and_apart_in_diagnostics() {
        // `{`, `[`, the two commas of the list, `{}`, the comma between the members.
        let t = Tally::of(r#"{"a":[1,2,{}],"b":"{[,\"]}"}"#);
        assert_eq!(t.entries, 6);
        let answer = r#"{"type":"observation","observation":{"capability":"options","errors":[{},{}],"warnings":[],"trace":[{}]}}"#;
        // Within `errors`: its `[`, two `{`, one comma; within `warnings`: its `[`.
        assert_eq!(Tally::of(answer).diagnostics, 5);
        let many = format!("[{}]", vec!["{}"; MAX_ANSWER_ENTRIES].join(","));
        assert!(Tally::of(&many).entries > MAX_ANSWER_ENTRIES);
    }

    #[test]
    fn a_session_answer_may_hold_more_for_each_step_of_its_script() {
        use ge_spec::vocab::session::{SessionEvent, SessionScenario};
        let script = |times| {
            Scenario::Session(SessionScenario {
                events: vec![SessionEvent::Execute { graph: 1, times }],
                ..SessionScenario::default()
            })
        };
        assert_eq!(
            entry_bound(&script(1000)),
            MAX_ANSWER_ENTRIES + ENTRIES_PER_STEP * 1001
        );
        assert_eq!(
            entry_bound(&script(u32::MAX)),
            entry_bound(&script(
                u32::try_from(ge_spec::vocab::session::MAX_SCRIPT).unwrap()
            ))
        );
    }

    #[test]
    fn splits_like_a_shell() {
        let cases: [(&str, &[&str]); 7] = [
            ("a b  c", &["a", "b", "c"]),
            (
                "python3 'my shim.py' --x",
                &["python3", "my shim.py", "--x"],
            ),
            (r#"a "b \"c\" \d" e"#, &["a", r#"b "c" \d"#, "e"]),
            (r"a\ b c", &["a b", "c"]),
            ("''", &[""]),
            ("x'y'\"z\"", &["xyz"]),
            ("  lead trail  ", &["lead", "trail"]),
        ];
        for (line, words) in cases {
            let expected: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            assert_eq!(split_command_line(line), Ok(expected), "{line}");
        }
    }

    #[test]
    fn refuses_broken_command_lines() {
        for line in ["", "   ", "a 'b", "a \"b", "a\\"] {
            assert!(split_command_line(line).is_err(), "{line:?}");
        }
    }
}
