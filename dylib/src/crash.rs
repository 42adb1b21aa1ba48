//! The crash note: while the harness is inside an engine's function, a fatal signal (the engine
//! crashed) first prints the note armed for that call on standard error, then gets the handling
//! it had before (Rust's own, or the default: the process ends with the signal).
//!
//! The handler does only async-signal-safe work: two atomic loads, `write`, `sigaction` and
//! `raise`. Unix only; elsewhere arming does nothing.

#[cfg(unix)]
mod imp {
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::OnceLock;

    /// The signals an engine's crash raises.
    const SIGNALS: [libc::c_int; 5] = [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
    ];

    /// The note of the call in progress (null: no engine call, nothing to print).
    static NOTE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
    static NOTE_LEN: AtomicUsize = AtomicUsize::new(0);

    /// The actions in place before ours, restored when a signal comes.
    static PREVIOUS: OnceLock<[libc::sigaction; SIGNALS.len()]> = OnceLock::new();

    extern "C" fn on_fatal(signal: libc::c_int) {
        let note = NOTE.load(Ordering::SeqCst);
        let len = NOTE_LEN.load(Ordering::SeqCst);
        if !note.is_null() {
            // SAFETY: `note` and `len` describe a leaked, never freed byte slice (set by
            // `arm`); `write` is async-signal-safe. Its result is ignored: nothing can be done
            // about a failed write here.
            let _ = unsafe { libc::write(2, note.cast::<libc::c_void>(), len) };
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

    /// Arms `note` until the guard is dropped.
    pub fn arm(note: &'static [u8]) -> Armed {
        NOTE_LEN.store(note.len(), Ordering::SeqCst);
        NOTE.store(note.as_ptr().cast_mut(), Ordering::SeqCst);
        Armed
    }

    /// Disarms the note when dropped.
    #[derive(Debug)]
    pub struct Armed;

    impl Drop for Armed {
        fn drop(&mut self) {
            NOTE.store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

#[cfg(not(unix))]
mod imp {
    /// Nothing to install off unix.
    pub fn install() {}

    /// Nothing to arm off unix.
    pub fn arm(_note: &'static [u8]) -> Armed {
        Armed
    }

    /// A guard with nothing to disarm.
    #[derive(Debug)]
    pub struct Armed;
}

pub use imp::{arm, install};
