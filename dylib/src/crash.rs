//! The crash note: a fatal signal first prints a note on standard error, then gets the handling
//! it had before (Rust's own, or the default: the process ends with the signal). While the
//! harness is inside an engine's function (or copying its buffer) the note is the one armed for
//! that call ([`crate::note`]), with the signal's number; outside any call, with an engine
//! loaded, it says that an engine is loaded in-process and where it is.
//!
//! The handler does only async-signal-safe work: atomic loads, `write`, `sigaction` and
//! `raise`. Unix only; elsewhere nothing is installed.

#[cfg(unix)]
mod imp {
    use std::sync::OnceLock;

    /// The signals an engine's crash raises.
    const SIGNALS: [libc::c_int; 5] = [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
    ];

    /// The actions in place before ours, restored when a signal comes.
    static PREVIOUS: OnceLock<[libc::sigaction; SIGNALS.len()]> = OnceLock::new();

    extern "C" fn on_fatal(signal: libc::c_int) {
        let mut digits = [0u8; 20];
        let number = crate::note::decimal(u64::from(signal.unsigned_abs()), &mut digits);
        if !crate::note::write_armed(&[b"crashed (signal ", number, b")"]) {
            crate::note::write_outside();
        }
        if let (Some(previous), Some(i)) =
            (PREVIOUS.get(), SIGNALS.iter().position(|s| *s == signal))
        {
            // SAFETY: restoring a sigaction value the kernel handed us; async-signal-safe.
            unsafe { libc::sigaction(signal, &previous[i], std::ptr::null_mut()) };
        }
        // The signal is blocked while its handler runs, so this one is delivered, with the
        // restored action, as soon as the handler returns (a fault would also recur).
        // SAFETY: `raise` is async-signal-safe.
        unsafe { libc::raise(signal) };
    }

    /// Installs the handler for every signal in [`SIGNALS`], once per process.
    pub fn install() {
        PREVIOUS.get_or_init(|| {
            // SAFETY: an all-zero `sigaction` is a valid value of this plain C struct.
            let mut previous: [libc::sigaction; SIGNALS.len()] = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = on_fatal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // On the alternate stack Rust sets up per thread, so a stack overflow is noted too.
            action.sa_flags = libc::SA_ONSTACK;
            // SAFETY: `sa_mask` is a live, exclusively borrowed sigset_t.
            unsafe { libc::sigemptyset(&mut action.sa_mask) };
            for (signal, old) in SIGNALS.iter().zip(previous.iter_mut()) {
                // SAFETY: both pointers are live; the handler only does async-signal-safe work.
                unsafe { libc::sigaction(*signal, &action, old) };
            }
            previous
        });
    }
}

#[cfg(not(unix))]
mod imp {
    /// Nothing to install off unix.
    pub fn install() {}
}

pub use imp::install;
