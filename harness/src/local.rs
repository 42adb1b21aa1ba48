//! A vendor's own case tables: every `*.toml` file of one directory, read with the input caps
//! and added to the embedded contract by the spec's own loader ([`Spec::with_local_cases`]), so
//! they are checked by the same rules (clauses that exist, unique names, no table of the
//! contract's name) and run as trials like the contract's cases.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ge_spec::{LoadErrors, Spec};

/// The file `ge-conformance promote --into DIR` appends to in a directory of local tables.
pub const PROMOTED_TABLE: &str = "local-regressions.toml";

/// The contract with a vendor's case tables added, and the directory they came from.
#[derive(Debug, Clone)]
pub struct LocalCases {
    dir: PathBuf,
    spec: Arc<Spec>,
}

/// The most bytes the case tables of one `--cases-dir` may hold together: some thirteen times the
/// suite's own tables (about 0.6 MB), and loading costs some 45 times the text, so a directory
/// of huge tables is refused instead of exhausting memory.
pub const MAX_LOCAL_TABLES: u64 = 8 << 20;

/// Why a directory of local case tables cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LocalCasesError {
    /// The directory or one of its tables cannot be read.
    #[error("{path}: {message}")]
    Io {
        /// What could not be read.
        path: String,
        /// Why.
        message: String,
    },
    /// The directory holds no `*.toml` file: most likely the wrong directory.
    #[error("{0}: no case table (`<table>.toml`) in this directory")]
    Empty(String),
    /// The tables break the loader's rules.
    #[error("{dir}: {errors}")]
    Load {
        /// The directory.
        dir: String,
        /// Every problem found.
        errors: LoadErrors,
    },
}

impl LocalCases {
    /// Reads every `*.toml` regular file of `dir` (not its subdirectories; other files are left
    /// alone) and adds its cases to the embedded contract.
    pub fn load(dir: &Path) -> Result<LocalCases, LocalCasesError> {
        let io = |path: &Path, e: &dyn std::fmt::Display| LocalCasesError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let entries = std::fs::read_dir(dir).map_err(|e| io(dir, &e))?;
        let mut files = Vec::new();
        let mut used = 0u64;
        for entry in entries {
            let entry = entry.map_err(|e| io(dir, &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if !is_file || !name.ends_with(".toml") {
                continue;
            }
            // One budget for all the tables together: loading costs some 45 times the text.
            let left = MAX_LOCAL_TABLES - used;
            let text = crate::input::read_text(&entry.path(), left).map_err(|e| {
                let total = format!("{e} (the tables of a directory hold {MAX_LOCAL_TABLES} bytes at most together)");
                io(&entry.path(), &total)
            })?;
            used += text.len() as u64;
            files.push((name, text));
        }
        if files.is_empty() {
            return Err(LocalCasesError::Empty(dir.display().to_string()));
        }
        let spec = Spec::embedded()
            .with_local_cases(files.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .map_err(|errors| LocalCasesError::Load {
                dir: dir.display().to_string(),
                errors,
            })?;
        Ok(LocalCases {
            dir: dir.to_path_buf(),
            spec: Arc::new(spec),
        })
    }

    /// The directory the tables came from, as it was given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The contract with the local cases.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }
}
