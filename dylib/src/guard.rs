//! What surrounds each engine call besides the crash note: an `exit` from inside a call ends the
//! process with [`EXIT_STATUS`] after the call's note, a call that outlives its deadline ends it
//! with [`TIMEOUT_STATUS`] (one watchdog thread per process), and the engine's standard output
//! is pointed at standard error for the length of the call. Unix only; elsewhere none of this is
//! done.

/// The exit status of a process in which an engine called `exit` inside one of its functions.
pub const EXIT_STATUS: i32 = 3;

/// The exit status of a process in which an engine's function did not return within its
/// timeout ([`crate::Engine::set_timeout`]).
pub const TIMEOUT_STATUS: i32 = 4;

#[cfg(unix)]
mod imp {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Once, OnceLock};
    use std::time::{Duration, Instant};

    use super::{flush_c_stdout, EXIT_STATUS, TIMEOUT_STATUS};
    use crate::note;

    /// Ends the process with `status` at once: no `atexit` handler, no flushing of Rust's
    /// buffers (the report is not printed) nor of C streams (whose locks an engine's thread may
    /// hold).
    pub fn end(status: i32) -> ! {
        // SAFETY: `_exit` is async-signal-safe and takes no pointer.
        unsafe { libc::_exit(status) }
    }

    extern "C" fn at_exit() {
        if note::armed() {
            // What the engine printed before its `exit` is not lost.
            flush_c_stdout();
            if note::write_armed(&[b"called exit()"]) {
                end(EXIT_STATUS);
            }
        }
    }

    /// Registers the `atexit` handler, once per process.
    pub fn watch_exit() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: `at_exit` is a plain function without arguments that lives as long as
            // the process; it does nothing unless the harness is inside an engine call.
            let _ = unsafe { libc::atexit(at_exit) };
        });
    }

    /// The deadline of the call in progress, in milliseconds since [`base`] (0: none).
    static DEADLINE: AtomicU64 = AtomicU64::new(0);
    /// The timeout of the call in progress, in milliseconds, for the note.
    static TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

    fn base() -> Instant {
        static BASE: OnceLock<Instant> = OnceLock::new();
        *BASE.get_or_init(Instant::now)
    }

    fn now_ms() -> u64 {
        u64::try_from(base().elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The watchdog thread: waits for a deadline, and past it writes the call's note and ends
    /// the process. Started on the first call with a timeout.
    fn watchdog() -> &'static std::thread::Thread {
        static THREAD: OnceLock<std::thread::Thread> = OnceLock::new();
        THREAD.get_or_init(|| {
            base();
            std::thread::Builder::new()
                .name("ge-dylib-watchdog".to_owned())
                .spawn(watch)
                .map(|h| h.thread().clone())
                .unwrap_or_else(|_| std::thread::current())
        })
    }

    fn watch() {
        loop {
            let deadline = DEADLINE.load(Ordering::SeqCst);
            if deadline == 0 {
                std::thread::park();
                continue;
            }
            let now = now_ms();
            if now < deadline {
                std::thread::sleep(Duration::from_millis((deadline - now).min(100)));
                continue;
            }
            // Still the same call (a new call has a later deadline), still inside it.
            if DEADLINE.load(Ordering::SeqCst) == deadline {
                let mut digits = [0u8; 20];
                let ms = note::decimal(TIMEOUT_MS.load(Ordering::SeqCst), &mut digits);
                if note::write_armed(&[b"did not return within ", ms, b" ms"]) {
                    end(TIMEOUT_STATUS);
                }
            }
            std::thread::yield_now();
        }
    }

    /// Sets the deadline of a call starting now, until the guard is dropped.
    pub fn deadline(timeout: Duration) -> Deadline {
        let ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let thread = watchdog();
        TIMEOUT_MS.store(ms, Ordering::SeqCst);
        DEADLINE.store(now_ms().saturating_add(ms).max(1), Ordering::SeqCst);
        thread.unpark();
        Deadline
    }

    /// Clears the deadline when dropped.
    #[derive(Debug)]
    pub struct Deadline;

    impl Drop for Deadline {
        fn drop(&mut self) {
            DEADLINE.store(0, Ordering::SeqCst);
        }
    }

    /// Points standard output at standard error until the guard is dropped; Rust's buffered
    /// standard output is flushed first, so nothing the harness wrote lands on standard error.
    pub fn stdout_to_stderr() -> Redirected {
        let _ = std::io::stdout().flush();
        let saved = rustix::io::dup(rustix::stdio::stdout()).ok();
        if saved.is_some() {
            let _ = rustix::stdio::dup2_stdout(rustix::stdio::stderr());
        }
        Redirected { saved }
    }

    /// Flushes the C streams, then puts standard output back, when dropped.
    #[derive(Debug)]
    pub struct Redirected {
        saved: Option<rustix::fd::OwnedFd>,
    }

    impl Drop for Redirected {
        fn drop(&mut self) {
            // What the engine printed lands on standard error, not in the harness's output
            // once it is restored.
            flush_c_stdout();
            if let Some(saved) = self.saved.take() {
                let _ = rustix::stdio::dup2_stdout(&saved);
            }
        }
    }
}

/// Flushes C's `stdout` unless another thread holds its lock (an engine's thread that called
/// `flockfile` and never lets go would otherwise hang the harness outside any call, where no
/// deadline runs). What stays in its buffer is the engine's to lose.
#[cfg(target_os = "linux")]
fn flush_c_stdout() {
    extern "C" {
        static stdout: *mut libc::FILE;
        fn ftrylockfile(stream: *mut libc::FILE) -> libc::c_int;
        fn funlockfile(stream: *mut libc::FILE);
    }
    // SAFETY: `stdout` is C's standard output stream, set up before `main`; it is read, not
    // referenced.
    let stream = unsafe { stdout };
    if stream.is_null() {
        return;
    }
    // SAFETY: a valid stream; the lock is taken without waiting.
    if unsafe { ftrylockfile(stream) } != 0 {
        return;
    }
    // SAFETY: the lock is this thread's now (it is recursive for its owner).
    unsafe { libc::fflush(stream) };
    // SAFETY: releases the lock taken above.
    unsafe { funlockfile(stream) };
}

/// Flushes every C stream (other unixes have no portable `stdout` symbol).
#[cfg(all(unix, not(target_os = "linux")))]
fn flush_c_stdout() {
    // SAFETY: flushing every C stream (a null argument).
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

#[cfg(not(unix))]
mod imp {
    /// Nothing is registered off unix.
    pub fn watch_exit() {}

    /// No watchdog off unix.
    pub fn deadline(_timeout: std::time::Duration) -> Deadline {
        Deadline
    }

    /// A guard with nothing to clear.
    #[derive(Debug)]
    pub struct Deadline;

    /// Standard output is left alone off unix.
    pub fn stdout_to_stderr() -> Redirected {
        Redirected
    }

    /// A guard with nothing to restore.
    #[derive(Debug)]
    pub struct Redirected;

    /// Ends the process with `status`.
    pub fn end(status: i32) -> ! {
        std::process::exit(status)
    }
}

pub use imp::{deadline, end, stdout_to_stderr, watch_exit};
