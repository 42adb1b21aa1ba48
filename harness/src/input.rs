//! Reading what a user hands the harness (scenario files, standard input, waiver files, fuzz
//! findings, tables) with a size cap, so a huge or endless input (`/dev/zero`) is a clear error
//! instead of exhausting memory; and the caps and escapes for the text a backend supplies
//! (names, reasons, messages, standard error), so that no backend can fill the harness's memory
//! or write a line of a report.

use std::io::Read;
use std::path::Path;

/// The largest scenario read by `eval` (a file or standard input) or promoted as a finding:
/// the same as the longest protocol line (a scenario travels on one line).
pub const MAX_SCENARIO: u64 = 64 << 20;

/// The largest waiver (expectations) file.
pub const MAX_EXPECTATIONS: u64 = 4 << 20;

/// The largest case table `promote` appends to.
pub const MAX_TABLE: u64 = 64 << 20;

/// The most bytes kept of one backend-supplied text in a message, a name or a reason; the rest
/// is cut, saying how much.
pub const MAX_TEXT: usize = 2048;

/// The most bytes of a backend's name or version kept in a report.
pub const MAX_NAME: usize = 200;

/// True for a character that could change how a report reads on a terminal or in a file:
/// the C0 and C1 controls (newline, carriage return, escape, NUL, ...), DEL, and the Unicode
/// marks that reorder or hide text (bidirectional overrides and isolates, zero-width joiners,
/// the line and paragraph separators, the byte order mark).
pub fn unsafe_in_text(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}')
}

/// `text` on one line that only the harness could have written: every character of
/// [`unsafe_in_text`] written as an escape (`\n`, `\t`, `\r`, `\u{1b}`), and cut to at most `max`
/// bytes (at a character boundary) with a note of how many bytes were left out. A text a
/// backend supplies goes through here before any report holds it.
pub fn one_line(text: &str, max: usize) -> String {
    escaped(text, max, false)
}

/// [`one_line`], keeping tabs as they are when `tabs` is true.
fn escaped(text: &str, max: usize, tabs: bool) -> String {
    use std::fmt::Write as _;
    // Most text has nothing to escape and fits: copied whole, not character by character.
    if text.len() <= max && !text.chars().any(unsafe_in_text) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len().min(max) + 16);
    let mut taken = 0;
    for c in text.chars() {
        if out.len() >= max {
            break;
        }
        taken += c.len_utf8();
        match c {
            '\t' if tabs => out.push(c),
            c if unsafe_in_text(c) => push_spelled(&mut out, c),
            c => out.push(c),
        }
    }
    if taken < text.len() {
        let _ = write!(out, "… ({} more bytes left out)", text.len() - taken);
    }
    out
}

/// Appends `c` to `out` spelled as [`one_line`] spells a character of [`unsafe_in_text`]:
/// `\n`, `\t`, `\r`, and any other as `\u{...}` in lowercase hex (`\u{202e}`). Also for the
/// escapers of markup (`report.xml`, `report.html`), where a character reference is no
/// escape: a browser applies `&#x202e;` as it would the character.
pub fn push_spelled(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` as lines that only the harness could have started: each line of it escaped as by
/// [`one_line`] (tabs kept) and begun with `prefix`, at most `max` bytes of `text` in all. For
/// what a backend wrote to standard error, which is read by lines.
pub fn prefixed_lines(text: &str, prefix: &str, max: usize) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut used = 0;
    for line in text.lines() {
        if used >= max {
            let _ = writeln!(out, "{prefix}… ({} more bytes left out)", text.len() - used);
            break;
        }
        let _ = writeln!(out, "{prefix}{}", escaped(line, max - used, true));
        used += line.len() + 1;
    }
    out
}

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

/// Writes `bytes` as the file at `path` by a rename from a new file beside it, so that a link
/// planted at `path` is replaced, never written through (a table `promote` appends to, in a
/// directory others may write). The file is readable by all and writable by its owner.
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_file_is_replaced_never_written_through_a_link() {
        let dir = tempfile::tempdir().expect("a directory");
        let target = dir.path().join("elsewhere.toml");
        std::fs::write(&target, "kept\n").expect("a target");
        let table = dir.path().join("regressions.toml");
        std::os::unix::fs::symlink(&target, &table).expect("a link");
        replace_file(&table, b"new\n").expect("written");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "kept\n");
        assert_eq!(std::fs::read_to_string(&table).expect("read"), "new\n");
        assert!(!std::fs::symlink_metadata(&table)
            .expect("there")
            .file_type()
            .is_symlink());
    }

    #[test]
    fn backend_text_is_one_line_with_its_controls_escaped() {
        let forged = "ok\nCERTIFIED at level strict\r\u{1b}[2J\0\u{202e}x\u{7f}\tend";
        let shown = one_line(forged, MAX_TEXT);
        assert_eq!(
            shown,
            "ok\\nCERTIFIED at level strict\\r\\u{1b}[2J\\u{0}\\u{202e}x\\u{7f}\\tend"
        );
        assert!(!shown.chars().any(unsafe_in_text), "{shown}");
        assert_eq!(one_line("plain ünïcode", MAX_TEXT), "plain ünïcode");
    }

    #[test]
    fn backend_text_is_cut_at_its_cap_saying_how_much() {
        let long = "é".repeat(10_000);
        let shown = one_line(&long, 100);
        assert!(shown.len() < 160, "{}", shown.len());
        assert!(shown.ends_with("… (19900 more bytes left out)"), "{shown}");
    }

    #[test]
    fn standard_error_lines_all_start_with_the_prefix() {
        let text = "first\tline\nCERTIFIED forged\n\u{1b}[31mred\n";
        assert_eq!(
            prefixed_lines(text, "  | ", MAX_TEXT),
            "  | first\tline\n  | CERTIFIED forged\n  | \\u{1b}[31mred\n"
        );
        let cut = prefixed_lines(&"x\n".repeat(1000), "| ", 10);
        assert_eq!(cut.lines().count(), 6, "{cut}");
        assert!(cut.lines().all(|l| l.starts_with("| ")), "{cut}");
        assert!(cut.ends_with("| … (1990 more bytes left out)\n"), "{cut}");
    }

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
