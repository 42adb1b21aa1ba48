//! The note of the call in progress: what is printed on standard error when the process ends
//! while the harness is inside an engine's function (a crash, an `exit`, a timeout) or copying
//! one of its buffers, and the note for a crash outside any call while an engine is loaded.
//!
//! The note is written into a fixed buffer of atomic bytes when a call starts (under the lock
//! every call takes), so that a signal handler, an `atexit` handler or the watchdog thread can
//! print it at any time without allocating, locking or reading memory that may be freed: every
//! read is an atomic load and every write a plain `write(2)`. Unix only; elsewhere nothing is
//! armed and nothing printed.

#[cfg(unix)]
mod imp {
    use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

    /// The most bytes a note holds; a longer one is cut, still ending with a newline.
    pub const CAPACITY: usize = 4096;

    /// The note of the call in progress: `TEXT[..SPLIT]` comes before what happened,
    /// `TEXT[SPLIT..LEN]` after it.
    static TEXT: [AtomicU8; CAPACITY] = [const { AtomicU8::new(0) }; CAPACITY];
    static LEN: AtomicUsize = AtomicUsize::new(0);
    static SPLIT: AtomicUsize = AtomicUsize::new(0);
    /// True while the harness is inside an engine's function or copying its buffer.
    static ARMED: AtomicBool = AtomicBool::new(false);

    /// The path of the engine loaded last (a leaked, never freed slice; null: none loaded).
    static LOADED: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
    static LOADED_LEN: AtomicUsize = AtomicUsize::new(0);

    /// Records that the engine at `path` (bytes) is loaded in this process.
    pub fn set_loaded(path: &[u8]) {
        let leaked: &'static [u8] = Box::leak(path.to_vec().into_boxed_slice());
        LOADED_LEN.store(leaked.len(), Ordering::SeqCst);
        LOADED.store(leaked.as_ptr().cast_mut(), Ordering::SeqCst);
    }

    /// Arms the note `head` + (what happened) + `tail` until the guard is dropped. Called under
    /// the lock every call takes, so two notes are never written at once.
    pub fn arm(head: &[u8], tail: &[u8]) -> Armed {
        ARMED.store(false, Ordering::SeqCst);
        let mut len = 0;
        for byte in head.iter().chain(tail).take(CAPACITY) {
            TEXT[len].store(*byte, Ordering::Relaxed);
            len += 1;
        }
        if len == CAPACITY {
            TEXT[CAPACITY - 1].store(b'\n', Ordering::Relaxed);
        }
        SPLIT.store(head.len().min(len), Ordering::SeqCst);
        LEN.store(len, Ordering::SeqCst);
        ARMED.store(true, Ordering::SeqCst);
        Armed
    }

    /// Disarms the note when dropped.
    #[derive(Debug)]
    pub struct Armed;

    impl Drop for Armed {
        fn drop(&mut self) {
            ARMED.store(false, Ordering::SeqCst);
        }
    }

    /// Whether the harness is inside an engine's function (or copying its buffer).
    pub fn armed() -> bool {
        ARMED.load(Ordering::SeqCst)
    }

    /// Writes the armed note with `event` (its parts, one after the other) where what happened
    /// goes; false, writing nothing, when no note is armed. Async-signal-safe.
    pub fn write_armed(event: &[&[u8]]) -> bool {
        if !armed() {
            return false;
        }
        let split = SPLIT.load(Ordering::SeqCst);
        let len = LEN.load(Ordering::SeqCst);
        write_text(0, split);
        for part in event {
            write_all(part);
        }
        write_text(split, len);
        true
    }

    /// Writes the note for a crash outside any engine call, when an engine is loaded; false,
    /// writing nothing, when none is. Async-signal-safe.
    pub fn write_outside() -> bool {
        let path = LOADED.load(Ordering::SeqCst);
        if path.is_null() {
            return false;
        }
        let len = LOADED_LEN.load(Ordering::SeqCst);
        // SAFETY: `path` and `len` describe a leaked, never freed slice (`set_loaded` stores
        // the length before the pointer, and never changes a slice once stored).
        let path = unsafe { std::slice::from_raw_parts(path, len) };
        write_all(
            b"ge-conformance: crashed outside an engine call; an engine is loaded in-process: ",
        );
        write_all(path);
        write_all(b"\n");
        true
    }

    /// Writes `TEXT[from..to]` through a small stack buffer.
    fn write_text(from: usize, to: usize) {
        let mut chunk = [0u8; 256];
        let mut at = from;
        while at < to.min(CAPACITY) {
            let n = (to.min(CAPACITY) - at).min(chunk.len());
            for (i, byte) in chunk[..n].iter_mut().enumerate() {
                *byte = TEXT[at + i].load(Ordering::Relaxed);
            }
            write_all(&chunk[..n]);
            at += n;
        }
    }

    /// Writes all of `bytes` on standard error (giving up on an error). Async-signal-safe.
    pub fn write_all(mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // SAFETY: `bytes` is a live slice of `bytes.len()` bytes; `write` is
            // async-signal-safe and reads nothing beyond them.
            let n = unsafe { libc::write(2, bytes.as_ptr().cast::<libc::c_void>(), bytes.len()) };
            if n <= 0 {
                return;
            }
            bytes = &bytes[n.unsigned_abs().min(bytes.len())..];
        }
    }

    /// `n` in decimal, in `buffer`. Async-signal-safe.
    pub fn decimal(mut n: u64, buffer: &mut [u8; 20]) -> &[u8] {
        let mut at = buffer.len();
        loop {
            at -= 1;
            buffer[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                return &buffer[at..];
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn decimal_writes_every_digit() {
            let mut buffer = [0u8; 20];
            assert_eq!(decimal(0, &mut buffer), b"0");
            assert_eq!(decimal(11, &mut buffer), b"11");
            assert_eq!(decimal(u64::MAX, &mut buffer), b"18446744073709551615");
        }

        #[test]
        fn arming_cuts_a_long_note_and_disarms_on_drop() {
            let long = vec![b'x'; CAPACITY * 2];
            {
                let _armed = arm(b"head ", &long);
                assert!(armed());
                assert_eq!(LEN.load(std::sync::atomic::Ordering::SeqCst), CAPACITY);
            }
            assert!(!armed());
            assert!(!write_armed(&[b"nothing"]));
        }
    }
}

#[cfg(not(unix))]
mod imp {
    /// Nothing is recorded off unix.
    pub fn set_loaded(_path: &[u8]) {}

    /// Nothing to arm off unix.
    pub fn arm(_head: &[u8], _tail: &[u8]) -> Armed {
        Armed
    }

    /// A guard with nothing to disarm.
    #[derive(Debug)]
    pub struct Armed;
}

pub use imp::*;
