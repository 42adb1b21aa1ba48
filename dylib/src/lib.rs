//! `ge-dylib`: opens an engine built as a shared library against `include/ge_conformance.h` (the
//! C ABI), checks its ABI version, and calls its hello and answer functions, copying each buffer
//! the engine owns and handing it back to the engine's free function.
//!
//! This is the one crate of the workspace with unsafe code, kept to what calling a C ABI needs:
//! loading the library, resolving four symbols, the calls themselves, reading the engine's
//! buffers, and (on unix) a handler that names the library when it crashes in-process
//! ([`Engine::set_crash_note`]). Everything it returns is bytes or a typed error: what the JSON
//! means is for the caller (the harness) to judge.
//!
//! Calls into every engine of the process go through one lock, so an engine is never entered by
//! two threads at once (the header promises it).

use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod crash;

/// The ABI version this crate speaks: `GE_CONFORMANCE_ABI_VERSION` of the header.
pub const ABI_VERSION: u32 = 1;

/// The largest hello or answer accepted from an engine: 64 MiB, the subprocess protocol's line
/// limit. A longer buffer is handed back to the engine unread.
pub const MAX_BUFFER: usize = 64 << 20;

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
    /// What the crash handler prints when the engine crashes inside a call (leaked on purpose:
    /// a signal handler may read it at any time, so it must never be freed).
    crash_note: Mutex<Option<&'static [u8]>>,
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
        let library =
            unsafe { libloading::Library::new(&path) }.map_err(|source| LoadError::Open {
                path: path.clone(),
                source,
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
            _library: library,
        };
        let found = engine.call(|| {
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

    /// Sets what is printed on standard error if the engine crashes (a fatal signal: SIGSEGV,
    /// SIGBUS, SIGILL, SIGFPE, SIGABRT) while the harness is inside one of its functions; the
    /// process then ends as the signal says. Unix only; elsewhere nothing is printed.
    pub fn set_crash_note(&self, note: &str) {
        let mut text = note.as_bytes().to_vec();
        text.push(b'\n');
        let leaked: &'static [u8] = Box::leak(text.into_boxed_slice());
        crash::install();
        *self.crash_note.lock().unwrap_or_else(|e| e.into_inner()) = Some(leaked);
    }

    /// Runs `f` holding the lock every call takes, with the crash note armed.
    fn call<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = CALLS.lock().unwrap_or_else(|e| e.into_inner());
        let note = *self.crash_note.lock().unwrap_or_else(|e| e.into_inner());
        let _armed = note.map(crash::arm);
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
            // SAFETY: the header makes the engine store the address and length of a buffer it
            // owns and keeps valid until it is handed to `ge_conformance_free`, which happens
            // only below, after this copy; the pointer is not null and the length is bounded.
            let bytes = unsafe { std::slice::from_raw_parts(buffer.cast::<u8>(), len) };
            Ok(bytes.to_vec())
        };
        self.call(|| {
            // SAFETY: `buffer` and `len` are exactly what the engine stored, handed back once.
            unsafe { (self.free)(buffer, len) }
        });
        copied
    }

    /// Calls `ge_conformance_hello` and returns its JSON, unparsed.
    pub fn hello(&self) -> Result<Vec<u8>, CallError> {
        let mut buffer: *mut c_char = std::ptr::null_mut();
        let mut len = 0usize;
        let status = self.call(|| {
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
        let status = self.call(|| {
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

/// The path as a C string, `None` when it holds a NUL byte.
fn path_to_c(path: &Path) -> Option<CString> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    CString::new(bytes).ok()
}
