//! `ge-dylib`: opens an engine built as a shared library against `include/ge_conformance.h` (the
//! C ABI), checks its ABI version, and calls its hello and answer functions, copying each buffer
//! the engine owns and handing it back to the engine's free function.
//!
//! This is the one crate of the workspace with unsafe code, kept to what calling a C ABI needs:
//! loading the library, resolving four symbols, the calls themselves, reading the engine's
//! buffers, and (on unix) what guards the process while it is inside an engine's function:
//!
//! - a crash (a fatal signal) prints a note naming the library, the function and the scenario
//!   before the process ends with the signal ([`Engine::set_crash_note`]; a crash outside any
//!   call, with an engine loaded, prints a note saying so);
//! - an `exit` from the engine ends the process with [`EXIT_STATUS`] after the same note (an
//!   `atexit` handler registered at [`Engine::open`]; a run's status 0 is never the engine's);
//! - a call that does not return within [`Engine::set_timeout`] ends it with
//!   [`TIMEOUT_STATUS`] after the note (one watchdog thread);
//! - the engine's standard output is pointed at standard error for the length of each call.
//!
//! Two helpers serve subprocess backends, whose process the harness starts: a session of their
//! own, with no descriptor but their standard three ([`apart`]), and, on Linux, a System V IPC
//! namespace of their own ([`own_ipc_namespace`]).
//!
//! Everything it returns is bytes or a typed error: what the JSON means is for the caller (the
//! harness) to judge.
//!
//! Calls into every engine of the process go through one lock, so an engine is never entered by
//! two threads at once (the header promises it).

use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

mod crash;
mod guard;
mod note;

pub use guard::{EXIT_STATUS, TIMEOUT_STATUS};

/// Starts `command` apart from the harness:
///
/// - in a session of its own (`setsid` in the child, before it runs the program): a process
///   group of its own, as `process_group(0)` gives, and no controlling terminal, so that what
///   the harness starts cannot open `/dev/tty` and push input into the user's shell
///   (`TIOCSTI`);
/// - with no file descriptor but its standard three: every other one the harness holds,
///   inherited from whoever started it (a CI job's `3>>log`, a jobserver's pipe), is closed at
///   `exec`. An open descriptor is no path, so confinement would not stop a write through it.
///
/// Unix only; elsewhere nothing changes.
pub fn apart(command: &mut std::process::Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        /// In the child between fork and exec: a new session, and every descriptor from 3 up
        /// closed at exec (the standard three are the pipes `Command` set up).
        fn in_child() -> std::io::Result<()> {
            // SAFETY: `setsid` takes nothing and is async-signal-safe.
            if unsafe { libc::setsid() } == -1 {
                return Err(std::io::Error::last_os_error());
            }
            close_at_exec_from(3);
            Ok(())
        }
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: `setsid`, `close_range`, `getrlimit` and `fcntl`
        // are system calls, and nothing is allocated.
        unsafe {
            command.pre_exec(in_child);
        }
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Marks every descriptor from `first` up close-on-exec: one `close_range` (Linux 5.11 and
/// up), else each descriptor below the soft limit on open files (at most 65,536 of them). Marked,
/// not closed: `Command`'s own pipe that reports a failed `exec` must stay open until the `exec`.
#[cfg(unix)]
fn close_at_exec_from(first: u32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `close_range` takes three integers and only changes descriptor flags.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if done == 0 {
            return;
        }
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable `rlimit`.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    let end = if known {
        limit.rlim_cur.min(65_536) as i32
    } else {
        1024
    };
    for fd in first as i32..end {
        // SAFETY: `fcntl` on a descriptor that may not be open fails with EBADF, harmlessly.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 {
            // SAFETY: as above; only the descriptor's flags change.
            unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        }
    }
}

/// Moves the calling thread into a System V IPC namespace of its own (`unshare(CLONE_NEWIPC)`),
/// so that what it starts from then on makes its shared memory segments, semaphores and message
/// queues there, and they go when the last process in it ends: a backend cannot leave a
/// segment that holds memory after the run. It needs `CAP_SYS_ADMIN` (a harness run as root);
/// otherwise the kernel's refusal is returned and nothing changes. Linux only.
#[cfg(target_os = "linux")]
pub fn own_ipc_namespace() -> std::io::Result<()> {
    use rustix::thread::{unshare_unsafe, UnshareFlags};
    // SAFETY: the one unsafety of `unshare` is `CLONE_FILES`, which would leave this thread
    // with a file table of its own; only the IPC namespace is unshared here.
    unsafe { unshare_unsafe(UnshareFlags::NEWIPC) }.map_err(std::io::Error::from)
}

/// While the returned guard lives, an `exit` (from any thread: a Rust engine's
/// `std::process::exit`, a C library's `exit`) ends the process with status 101 after printing
/// `note`, instead of with the status the caller chose: a test run whose engine exits midway
/// fails rather than ending green. `_exit` and `exit_group` skip every handler and are not
/// caught. Unix only; elsewhere nothing is registered.
pub fn exit_fails_while(note: &'static str) -> ExitFails {
    #[cfg(unix)]
    {
        use std::sync::Once;
        static ONCE: Once = Once::new();
        extern "C" fn on_exit() {
            if RUNNING.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some(note) = NOTE.get() {
                    eprintln!("{note}");
                }
                guard::end(101);
            }
        }
        let _ = NOTE.set(note);
        ONCE.call_once(|| {
            // SAFETY: `on_exit` is a plain function without arguments that lives as long as the
            // process; it does nothing unless a guard is alive.
            let _ = unsafe { libc::atexit(on_exit) };
        });
        RUNNING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    #[cfg(not(unix))]
    let _ = note;
    ExitFails
}

/// Whether an [`ExitFails`] guard is alive.
static RUNNING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The note of the guard.
static NOTE: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The guard of [`exit_fails_while`]: dropped, an `exit` ends the process as it asks again.
#[derive(Debug)]
pub struct ExitFails;

impl Drop for ExitFails {
    fn drop(&mut self) {
        RUNNING.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Ends the process with `status` at once, without `atexit` handlers or flushing C streams:
/// how a process that has an engine loaded ends when it is interrupted, since an engine's thread
/// may hold a lock an ordinary `exit` waits for.
pub fn end_process(status: i32) -> ! {
    guard::end(status)
}

/// At most this many bytes of a scenario are quoted in a note.
pub const NOTE_EXCERPT: usize = 1024;

/// The ABI version this crate speaks: `GE_CONFORMANCE_ABI_VERSION` of the header.
pub const ABI_VERSION: u32 = 1;

/// The largest hello or answer accepted from an engine: 16 MiB, the subprocess protocol's line
/// limit for what a backend writes. A longer buffer is handed back to the engine unread.
pub const MAX_BUFFER: usize = 16 << 20;

type AbiVersionFn = unsafe extern "C" fn() -> u32;
type HelloFn = unsafe extern "C" fn(*mut *mut c_char, *mut usize) -> i32;
type AnswerFn =
    unsafe extern "C" fn(*const c_char, usize, *const c_char, *mut *mut c_char, *mut usize) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_char, usize);

/// Why a library could not be opened as an engine.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The dynamic loader refused the file.
    #[error("cannot load `{path}` as a shared library: {source}")]
    Open {
        /// The library.
        path: PathBuf,
        /// The loader's reason.
        source: libloading::Error,
    },
    /// The library was built with clang's `-fsanitize=fuzzer-no-link` and needs libFuzzer's
    /// coverage callbacks, which only a fuzz executable and the `ge-conformance` binary provide.
    #[error("cannot load `{path}`: it was built for fuzzing (-fsanitize=fuzzer-no-link) and needs libFuzzer's coverage callbacks, which this program does not provide; certify it with the ge-conformance binary (`certify --backend dylib:...` or `exec:ge-conformance serve-dylib ...`), which does ({source})")]
    FuzzingBuild {
        /// The library.
        path: PathBuf,
        /// The loader's reason.
        source: libloading::Error,
    },
    /// One of the four functions of the header is not exported.
    #[error("`{path}` does not export `{symbol}` (see include/ge_conformance.h): {source}")]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The function missing.
        symbol: &'static str,
        /// The loader's reason.
        source: libloading::Error,
    },
    /// The library was built against another version of the header.
    #[error("`{path}` implements version {found} of the C ABI and this harness speaks version {expected}; rebuild it against this harness's include/ge_conformance.h")]
    AbiVersion {
        /// The library.
        path: PathBuf,
        /// What its `ge_conformance_abi_version` returned.
        found: u32,
        /// [`ABI_VERSION`].
        expected: u32,
    },
}

/// Why one call into the engine gave no buffer to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The function returned a status other than 0.
    #[error("`{function}` returned status {status} (no buffer)")]
    Status {
        /// The function called.
        function: &'static str,
        /// Its return value.
        status: i32,
    },
    /// The function returned 0 but stored a null buffer.
    #[error("`{function}` returned status 0 but stored a null buffer")]
    NullBuffer {
        /// The function called.
        function: &'static str,
    },
    /// The buffer was longer than [`MAX_BUFFER`].
    #[error("`{function}` stored a buffer of {len} bytes, more than the {MAX_BUFFER}-byte limit")]
    TooLong {
        /// The function called.
        function: &'static str,
        /// The length it stored.
        len: usize,
    },
    /// The sandbox path cannot be passed as a C string.
    #[error("the sandbox path holds a NUL byte")]
    SandboxNul,
}

/// Every call into any engine of the process is made holding this lock (see the module docs).
static CALLS: Mutex<()> = Mutex::new(());

/// An engine loaded in this process.
pub struct Engine {
    path: PathBuf,
    abi_version: AbiVersionFn,
    hello: HelloFn,
    answer: AnswerFn,
    free: FreeFn,
    /// What every note adds after naming the call (the caller's advice), with its newline.
    crash_note: Mutex<Option<Vec<u8>>>,
    /// How long a call may take before the process ends ([`TIMEOUT_STATUS`]); `None`: forever.
    timeout: Mutex<Option<Duration>>,
    /// Kept open for as long as the function pointers above are used; dropped last.
    _library: libloading::Library,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("path", &self.path).finish()
    }
}

/// Resolves `name` (NUL-terminated) in `library` as a function of type `T`.
fn symbol<T: Copy>(
    library: &libloading::Library,
    path: &Path,
    name: &'static str,
) -> Result<T, LoadError> {
    let bytes = format!("{name}\0");
    // SAFETY: `T` is one of the function pointer types above, which are the signatures the
    // header declares for `name`; a library that exports `name` with another signature breaks
    // the header's contract, which no loader can detect. The pointer is copied out of the
    // `Symbol` and used only while `library` is kept open (it is stored in the same `Engine`).
    let found = unsafe { library.get::<T>(bytes.as_bytes()) };
    found
        .map(|s| *s)
        .map_err(|source| LoadError::MissingSymbol {
            path: path.to_owned(),
            symbol: name,
            source,
        })
}

impl Engine {
    /// Opens the shared library at `path`, resolves the four functions of the header and checks
    /// its ABI version. A path without a directory part is taken relative to the working
    /// directory, never searched for in the system's library directories.
    pub fn open(path: &Path) -> Result<Engine, LoadError> {
        let path = if path.components().count() == 1 && !path.is_absolute() {
            Path::new(".").join(path)
        } else {
            path.to_owned()
        };
        // SAFETY: loading a library runs its initialisers; the user named this library as the
        // engine to certify, and trusting it is the point of the in-process route (the header
        // documents that a misbehaving engine takes the process down).
        let library = unsafe { libloading::Library::new(&path) }.map_err(|source| {
            let path = path.clone();
            let text = source.to_string();
            if text.contains("__sanitizer_cov_") || text.contains("__sancov_") {
                LoadError::FuzzingBuild { path, source }
            } else {
                LoadError::Open { path, source }
            }
        })?;
        let abi_version: AbiVersionFn = symbol(&library, &path, "ge_conformance_abi_version")?;
        let hello: HelloFn = symbol(&library, &path, "ge_conformance_hello")?;
        let answer: AnswerFn = symbol(&library, &path, "ge_conformance_answer")?;
        let free: FreeFn = symbol(&library, &path, "ge_conformance_free")?;
        let engine = Engine {
            path,
            abi_version,
            hello,
            answer,
            free,
            crash_note: Mutex::new(None),
            timeout: Mutex::new(None),
            _library: library,
        };
        note::set_loaded(path_bytes(&engine.path).as_slice());
        guard::watch_exit();
        let found = engine.call("ge_conformance_abi_version", None, || {
            // SAFETY: the header declares this function without arguments, returning uint32_t.
            unsafe { (engine.abi_version)() }
        });
        if found != ABI_VERSION {
            return Err(LoadError::AbiVersion {
                path: engine.path,
                found,
                expected: ABI_VERSION,
            });
        }
        Ok(engine)
    }

    /// The library's path, as opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets what is printed on standard error, after the line naming the library, the function
    /// and the scenario, if the process ends inside a call (a crash, an `exit`, a timeout), and
    /// installs the crash handler: a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
    /// prints the note, then the process ends as the signal says. Unix only; elsewhere nothing
    /// is printed. Under libFuzzer, use [`Engine::set_note`] instead (see there).
    pub fn set_crash_note(&self, note: &str) {
        self.set_note(note);
        crash::install();
    }

    /// Sets the note as [`Engine::set_crash_note`] does, without installing the crash handler:
    /// an `exit` or a timeout inside a call still prints it, a crash does not. For a process
    /// whose crashes something else reports, such as a libFuzzer target: libFuzzer installs its
    /// handlers only for signals that have none yet, and the target opens its engine before
    /// that, so a handler installed here would keep libFuzzer from writing crash artefacts.
    pub fn set_note(&self, note: &str) {
        let mut text = note.as_bytes().to_vec();
        text.push(b'\n');
        *self.crash_note.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
    }

    /// Sets how long each call into the engine may take (`None`: forever, the default). A call
    /// that has not returned by then ends the process with [`TIMEOUT_STATUS`], after the note
    /// naming the library and the scenario. Unix only; elsewhere calls are not timed.
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        *self.timeout.lock().unwrap_or_else(|e| e.into_inner()) = timeout;
    }

    /// The first part of every note: the library.
    fn note_head(&self) -> Vec<u8> {
        let mut head = b"ge-conformance: the engine `".to_vec();
        head.extend(path_bytes(&self.path));
        head.extend(b"` ");
        head
    }

    /// The rest of a note: `doing`, the scenario's excerpt and the caller's advice.
    fn note_tail(&self, doing: &str, scenario: Option<&[u8]>) -> Vec<u8> {
        let mut tail = format!(" {doing}").into_bytes();
        if let Some(scenario) = scenario {
            tail.extend(b"; the scenario: ");
            tail.extend(excerpt(scenario));
            if scenario.len() > NOTE_EXCERPT {
                tail.extend(format!("... ({} bytes)", scenario.len()).as_bytes());
            }
        }
        tail.push(b'\n');
        if let Some(advice) = &*self.crash_note.lock().unwrap_or_else(|e| e.into_inner()) {
            tail.extend(advice);
        }
        tail
    }

    /// Runs `f`, a call of the engine's `function` (with `scenario`, for the answer), holding
    /// the lock every call takes, with the note armed, the deadline set and standard output
    /// pointed at standard error.
    fn call<R>(&self, function: &'static str, scenario: Option<&[u8]>, f: impl FnOnce() -> R) -> R {
        let _held = CALLS.lock().unwrap_or_else(|e| e.into_inner());
        let tail = self.note_tail(&format!("in {function}"), scenario);
        let timeout = *self.timeout.lock().unwrap_or_else(|e| e.into_inner());
        // Dropped in reverse: the deadline cleared, the output back (the engine's C streams
        // flushed), then the note disarmed; neither flush is timed (a slow reader of standard
        // output or error is not the engine's hang).
        let _armed = note::arm(&self.note_head(), &tail);
        let _redirected = guard::stdout_to_stderr();
        let _deadline = timeout.map(guard::deadline);
        f()
    }

    /// Copies the buffer an engine function stored, then hands it back to the engine.
    fn take(
        &self,
        function: &'static str,
        status: i32,
        buffer: *mut c_char,
        len: usize,
    ) -> Result<Vec<u8>, CallError> {
        if status != 0 {
            return Err(CallError::Status { function, status });
        }
        if buffer.is_null() {
            return Err(CallError::NullBuffer { function });
        }
        let copied = if len > MAX_BUFFER {
            Err(CallError::TooLong { function, len })
        } else {
            let _held = CALLS.lock().unwrap_or_else(|e| e.into_inner());
            // Two steps, each with its own note: the allocator stopping the process while the
            // harness allocates is a heap the engine corrupted, not a short buffer.
            let doing = format!(
                "while the harness allocated {len} bytes for the answer of {function}: the \
                 allocator found the process's heap corrupted, by the engine (a write past a \
                 buffer or after a free, perhaps from one of its threads)"
            );
            let armed = note::arm(&self.note_head(), &self.note_tail(&doing, None));
            let mut copy = Vec::with_capacity(len);
            drop(armed);
            let doing = format!(
                "while the harness copied the buffer from {function}: the engine's buffer from \
                 {function} is shorter than the length it reported ({len} bytes), or the engine \
                 freed or overwrote it before the harness handed it back"
            );
            let _armed = note::arm(&self.note_head(), &self.note_tail(&doing, None));
            // SAFETY: the header makes the engine store the address and length of a buffer it
            // owns and keeps valid until it is handed to `ge_conformance_free`, which happens
            // only below, after this copy; the pointer is not null and the length is bounded.
            // An engine that lies about the length makes this read fault: the note says so.
            let bytes = unsafe { std::slice::from_raw_parts(buffer.cast::<u8>(), len) };
            copy.extend_from_slice(bytes);
            Ok(copy)
        };
        self.call("ge_conformance_free", None, || {
            // SAFETY: `buffer` and `len` are exactly what the engine stored, handed back once.
            unsafe { (self.free)(buffer, len) }
        });
        copied
    }

    /// Calls `ge_conformance_hello` and returns its JSON, unparsed.
    pub fn hello(&self) -> Result<Vec<u8>, CallError> {
        let mut buffer: *mut c_char = std::ptr::null_mut();
        let mut len = 0usize;
        let status = self.call("ge_conformance_hello", None, || {
            // SAFETY: both out-pointers point at live locals of the right types, as the header
            // declares them.
            unsafe { (self.hello)(&mut buffer, &mut len) }
        });
        self.take("ge_conformance_hello", status, buffer, len)
    }

    /// Calls `ge_conformance_answer` with `scenario` (JSON bytes) and, for the weights
    /// capability, the sandbox directory; returns the answer's JSON, unparsed.
    pub fn answer(&self, scenario: &[u8], sandbox: Option<&Path>) -> Result<Vec<u8>, CallError> {
        let sandbox = match sandbox {
            Some(dir) => Some(path_to_c(dir).ok_or(CallError::SandboxNul)?),
            None => None,
        };
        let sandbox_ptr = sandbox.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        let mut buffer: *mut c_char = std::ptr::null_mut();
        let mut len = 0usize;
        let status = self.call("ge_conformance_answer", Some(scenario), || {
            // SAFETY: `scenario` is a live slice of `scenario.len()` bytes; `sandbox_ptr` is
            // null or a NUL-terminated string that outlives the call; the out-pointers point at
            // live locals. The header forbids the engine to keep any of them past the call.
            unsafe {
                (self.answer)(
                    scenario.as_ptr().cast::<c_char>(),
                    scenario.len(),
                    sandbox_ptr,
                    &mut buffer,
                    &mut len,
                )
            }
        });
        self.take("ge_conformance_answer", status, buffer, len)
    }
}

/// The path's bytes (lossy off unix).
fn path_bytes(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    bytes
}

/// The path as a C string, `None` when it holds a NUL byte.
fn path_to_c(path: &Path) -> Option<CString> {
    CString::new(path_bytes(path)).ok()
}

/// The first [`NOTE_EXCERPT`] bytes of `scenario`, cut at a character boundary when it is
/// UTF-8, with line breaks shown as spaces so the note stays one line.
fn excerpt(scenario: &[u8]) -> Vec<u8> {
    let mut end = scenario.len().min(NOTE_EXCERPT);
    if let Ok(text) = std::str::from_utf8(scenario) {
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    scenario[..end]
        .iter()
        .map(|b| if matches!(b, b'\n' | b'\r') { b' ' } else { *b })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_bounded_and_one_line() {
        let long = format!("{{\"a\":\n\"{}\"}}", "é".repeat(NOTE_EXCERPT));
        let cut = excerpt(long.as_bytes());
        assert!(cut.len() <= NOTE_EXCERPT && cut.len() >= NOTE_EXCERPT - 1);
        let text = String::from_utf8(cut).expect("cut at a character boundary");
        assert!(text.starts_with("{\"a\": \""), "{text}");
    }
}
