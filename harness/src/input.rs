//! Reading what a user hands the harness (scenario files, standard input, waiver files, fuzz
//! findings, tables) with a size cap, so a huge or endless input (`/dev/zero`) is a clear error
//! instead of exhausting memory.

use std::io::Read;
use std::path::Path;

/// The largest scenario read by `eval` (a file or standard input) or promoted as a finding:
/// the same as the longest protocol line (a scenario travels on one line).
pub const MAX_SCENARIO: u64 = 64 << 20;

/// The largest waiver (expectations) file.
pub const MAX_EXPECTATIONS: u64 = 4 << 20;

/// The largest case table `promote` appends to.
pub const MAX_TABLE: u64 = 64 << 20;

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input could not be read.
    #[error("{what}: {source}")]
    Io {
        /// What was read (a path, or `standard input`).
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The input is larger than its cap.
    #[error("{what}: larger than {cap} bytes, the most this input may hold")]
    TooLarge {
        /// What was read.
        what: String,
        /// The cap, in bytes.
        cap: u64,
    },
}

/// Reads at most `cap` bytes of `reader`, named `what` in errors: more is an error.
pub fn read_capped(reader: impl Read, cap: u64, what: &str) -> Result<Vec<u8>, InputError> {
    let mut data = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|source| InputError::Io {
            what: what.to_owned(),
            source,
        })?;
    if data.len() as u64 > cap {
        return Err(InputError::TooLarge {
            what: what.to_owned(),
            cap,
        });
    }
    Ok(data)
}

/// Reads the file at `path`, at most `cap` bytes. A FIFO or a socket is refused: reading one
/// waits for a writer that may never come (it is opened without waiting, to be looked at).
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, InputError> {
    let what = path.display().to_string();
    let io = |source| InputError::Io {
        what: what.clone(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading would otherwise block until something writes to it.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = file.metadata().map_err(io)?.file_type();
        if kind.is_fifo() || kind.is_socket() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a FIFO or a socket, not a file: reading it could wait for ever",
            )));
        }
    }
    read_capped(file, cap, &what)
}

/// Reads the file at `path` as UTF-8 text, at most `cap` bytes.
pub fn read_text(path: &Path, cap: u64) -> Result<String, InputError> {
    let data = read_file(path, cap)?;
    String::from_utf8(data).map_err(|e| InputError::Io {
        what: path.display().to_string(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting() {
        let dir = tempfile::tempdir().expect("a directory");
        let fifo = dir.path().join("scenario.json");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("a FIFO");
        let err = read_text(&fifo, MAX_SCENARIO).expect_err("refused");
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    #[test]
    fn an_input_past_its_cap_is_refused() {
        assert_eq!(read_capped(&b"abcd"[..], 4, "x").unwrap(), b"abcd");
        let err = read_capped(std::io::repeat(0), 1024, "endless").unwrap_err();
        assert!(
            matches!(err, InputError::TooLarge { cap: 1024, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("endless"));
    }
}
