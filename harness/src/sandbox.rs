//! The weights sandbox, handled without trusting what a backend left in it: walked without
//! following links or opening anything but regular files, read with a size cap, and removed
//! without ever crossing into a file system mounted inside it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The environment variable that names the sandbox root instead of a private one: used as
/// it is, never swept nor removed (a test that hands a directory to a harness it starts).
pub const ROOT_VARIABLE: &str = "GE_CONFORMANCE_SANDBOX_ROOT";

/// What the private sandbox roots of runs are called: `ge-conformance-<pid>-<suffix>`.
const ROOT_PREFIX: &str = "ge-conformance-";

/// Where this run's sandboxes (and confined backends' own directories, `confine::Area`) are
/// made: a private directory of this process, `ge-conformance-<pid>-...`, which a confined
/// backend may write beneath and nothing else (`confine`). It is made under `$TMPDIR` when
/// that is set, else under `/dev/shm` when that exists (RAM-backed: creating and removing a
/// directory there costs microseconds, on a disk filesystem about a tenth of a millisecond,
/// which dominated the weights fuzz targets), else under the system's temporary directory.
/// Roots left by runs whose process is gone are removed when the next one is made. When
/// [`ROOT_VARIABLE`] is set, it is the root; when no private directory can be made, the base.
pub fn root() -> &'static Path {
    ROOT.get_or_init(|| {
        if let Some(dir) = std::env::var_os(ROOT_VARIABLE).filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        let shm = Path::new("/dev/shm");
        let base = if std::env::var_os("TMPDIR").is_none() && shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        sweep_stale_roots(&base);
        tempfile::Builder::new()
            .prefix(&format!("{ROOT_PREFIX}{}-", std::process::id()))
            .tempdir_in(&base)
            .map(tempfile::TempDir::keep)
            .unwrap_or(base)
    })
}

/// This run's sandbox root, made on first use.
static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Removes this run's private sandbox root, if it made one (at the end of a command, or when
/// it is interrupted; a run that ends otherwise leaves it to the next run's sweep).
pub fn remove_root() {
    let Some(root) = ROOT.get() else {
        return;
    };
    let private = std::env::var_os(ROOT_VARIABLE).is_none()
        && root
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(ROOT_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .is_some_and(|pid| pid == std::process::id().to_string());
    if private {
        let _ = remove(root);
    }
}

/// Removes the private roots under `base` whose process is gone (Linux: no `/proc/<pid>`).
fn sweep_stale_roots(base: &Path) {
    let proc_fs = Path::new("/proc/self");
    if !proc_fs.exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(ROOT_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .filter(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let mine = fs::symlink_metadata(entry.path()).is_ok_and(|m| m.file_type().is_dir());
        if mine && !Path::new("/proc").join(pid).exists() {
            let _ = remove(&entry.path());
        }
    }
}

/// How a listing names what lies beside a backend's `$TMPDIR` and `$HOME`, in the directory
/// the harness made for them.
pub const BESIDE_OWN: &str = "$TMPDIR/..";

/// How a listing names what lies beneath the sandbox root, outside every directory the harness
/// made there.
pub const BENEATH_ROOT: &str = "$TMPDIR/../..";

/// True for an entry of a listing that lies in the backend's scratch area (its `$TMPDIR` or
/// `$HOME`), false for one beside it or elsewhere beneath the sandbox root, where a backend has
/// no business writing at all.
pub fn in_scratch(entry: &str) -> bool {
    !entry.starts_with(BESIDE_OWN)
}

/// The directories the harness made beneath a sandbox root and still holds (each sandbox's
/// private directory, each confined backend's own): anything else beneath the root was made by
/// a backend. Made, listed and removed under this lock, so a listing never sees one half-made.
static MADE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

fn made() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    MADE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Makes a directory with `make` and records it as the harness's own until [`remove_own`].
pub fn make_own(make: impl FnOnce() -> std::io::Result<PathBuf>) -> std::io::Result<PathBuf> {
    let mut made = made();
    let dir = make()?;
    made.insert(dir.clone());
    Ok(dir)
}

/// Removes a directory [`make_own`] made, as [`remove`] does, and forgets it.
pub fn remove_own(dir: &Path) -> Vec<String> {
    let mut made = made();
    let left = remove(dir);
    made.remove(dir);
    left
}

/// Adds to `out` every entry beneath this run's sandbox root that the harness did not make
/// ([`make_own`]), named `prefix/a/b`, as [`names`] does, up to `cap` entries in all. True
/// when it stopped at the cap. Nothing for a root handed over with [`ROOT_VARIABLE`].
pub fn strangers(prefix: &str, cap: usize, out: &mut BTreeSet<String>) -> bool {
    // A root handed over ([`ROOT_VARIABLE`]) is not this run's alone: what others keep there is
    // theirs, and not judged.
    if std::env::var_os(ROOT_VARIABLE).is_some() {
        return false;
    }
    let made = made();
    let Ok(read) = read_dir_restoring(root()) else {
        out.insert(format!(
            "{prefix} (the sandbox root, which cannot be listed)"
        ));
        return false;
    };
    for entry in read.flatten() {
        if made.contains(&entry.path()) {
            continue;
        }
        if out.len() >= cap {
            return true;
        }
        let name = format!("{prefix}/{}", entry.file_name().to_string_lossy());
        out.insert(name.clone());
        if names(&entry.path(), &name, cap, out) {
            return true;
        }
    }
    false
}

/// The bytes the files beneath this run's sandbox root take on disk (or in memory, under
/// `/dev/shm`), counted without following a link or crossing a mount; `None` when they cannot
/// all be counted: more than `cap` entries, a directory that cannot be listed, an entry that
/// cannot be looked at, or a tree deeper than [`MAX_DEPTH`].
pub fn bytes_beneath_root(cap: usize) -> Option<u64> {
    let mut seen = 0;
    let meta = fs::symlink_metadata(root()).ok()?;
    let bytes = bytes_in(root(), device(&meta), cap, &mut seen, 0)?;
    (seen < cap).then_some(bytes)
}

fn bytes_in(dir: &Path, dev: u64, cap: usize, seen: &mut usize, depth: usize) -> Option<u64> {
    if depth > MAX_DEPTH {
        return None;
    }
    let read = match read_dir_restoring(dir) {
        Ok(read) => read,
        // Gone meanwhile (a sandbox removed as its trial ended): nothing to count.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(0),
        Err(_) => return None,
    };
    let mut bytes = 0u64;
    for entry in read.flatten() {
        if *seen >= cap {
            break;
        }
        *seen += 1;
        let path = entry.path();
        // Only an entry gone meanwhile is passed over: one that cannot be looked at (a path
        // past the system's limit, round seven's M2) makes the whole uncountable.
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        };
        bytes = bytes.saturating_add(allocated(&meta));
        if meta.file_type().is_dir() && !is_mount(&path, &meta, dev) {
            bytes = bytes.saturating_add(bytes_in(&path, dev, cap, seen, depth + 1)?);
        }
    }
    Some(bytes)
}

/// The deepest directory, below where a count or listing starts, that [`bytes_beneath_root`]
/// counts and [`names`] lists. No engine nests its files this deep; a tree that does is not
/// walked further (each level deeper makes every path longer, so a chain as deep as the
/// system's path limit made each listing cost a second: round seven, M1). Past it the count
/// fails and the listing stops, as past their caps.
pub const MAX_DEPTH: usize = 64;

/// What a file takes on disk: its blocks (a sparse file takes what it wrote), else its length.
fn allocated(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.blocks().saturating_mul(512)
    }
    #[cfg(not(unix))]
    meta.len()
}

/// Writes outside a sandbox that a subprocess backend's watched directories showed, by the
/// sandbox's path, until the trial's judge takes them ([`Sandbox::written_outside`]).
static OUTSIDE: Mutex<BTreeMap<PathBuf, Vec<String>>> = Mutex::new(BTreeMap::new());

fn outside() -> std::sync::MutexGuard<'static, BTreeMap<PathBuf, Vec<String>>> {
    OUTSIDE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records that the trial working in `sandbox` left `what` outside it (names as the backend
/// sees them, `$TMPDIR/x`).
pub fn note_outside(sandbox: &Path, what: Vec<String>) {
    if !what.is_empty() {
        outside()
            .entry(sandbox.to_path_buf())
            .or_default()
            .extend(what);
    }
}

/// Adds to `out` the path of every entry under `dir`, as `prefix/a/b`, without following links
/// or entering a mount, until `out` holds `cap` entries, and no deeper than [`MAX_DEPTH`]. True
/// when it stopped at either with entries left unlisted.
pub fn names(dir: &Path, prefix: &str, cap: usize, out: &mut BTreeSet<String>) -> bool {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return false;
    };
    names_in(dir, prefix, device(&meta), cap, out, 0)
}

/// Lists `dir`; a directory whose owner cannot list it (a backend's `chmod`, to hide what it
/// holds) is given its owner's rights back first, as [`remove`] does: the harness runs as the
/// backend's user, or as root.
pub fn read_dir_restoring(dir: &Path) -> std::io::Result<fs::ReadDir> {
    match fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let meta = fs::symlink_metadata(dir)?;
                if meta.file_type().is_dir() {
                    let mode = meta.permissions().mode() | 0o700;
                    fs::set_permissions(dir, fs::Permissions::from_mode(mode))?;
                    return fs::read_dir(dir);
                }
            }
            Err(e)
        }
        other => other,
    }
}

fn names_in(
    dir: &Path,
    prefix: &str,
    dev: u64,
    cap: usize,
    out: &mut BTreeSet<String>,
    depth: usize,
) -> bool {
    let Ok(read) = read_dir_restoring(dir) else {
        return false;
    };
    for entry in read.flatten() {
        if out.len() >= cap || depth > MAX_DEPTH {
            return true;
        }
        let name = format!("{prefix}/{}", entry.file_name().to_string_lossy());
        let path = entry.path();
        let descend = fs::symlink_metadata(&path)
            .is_ok_and(|m| m.file_type().is_dir() && !is_mount(&path, &m, dev));
        out.insert(name.clone());
        if descend && names_in(&path, &name, dev, cap, out, depth + 1) {
            return true;
        }
    }
    false
}

/// The largest file read back from a sandbox: twice the weights a scenario may hold
/// ([`ge_spec::vocab::weights::MAX_WEIGHT_BYTES`]), room for any alignment padding. A larger
/// file is reported, not read.
pub const MAX_SANDBOX_FILE: u64 = 2 * ge_spec::vocab::weights::MAX_WEIGHT_BYTES;

/// One entry of the sandbox, as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A regular file and its bytes.
    File(Vec<u8>),
    /// A symbolic link and its target, not followed.
    Link(PathBuf),
    /// Something a sandbox must not hold, or the harness cannot inspect: what it is.
    Foreign(String),
}

/// True when `path` is the root of a mount (Linux's `statx` says so), or lies on another
/// device than `dev`: the harness neither looks nor deletes past it.
fn is_mount(path: &Path, meta: &fs::Metadata, dev: u64) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.dev() != dev {
            return true;
        }
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{statx, AtFlags, StatxAttributes, StatxFlags, CWD};
        if let Ok(r) = statx(
            CWD,
            path,
            AtFlags::NO_AUTOMOUNT | AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::empty(),
        ) {
            if r.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT)
                && r.stx_attributes.contains(StatxAttributes::MOUNT_ROOT)
            {
                return true;
            }
        }
    }
    let _ = (path, meta, dev);
    false
}

fn device(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.dev()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

/// Reads a regular file without following a link or blocking, at most
/// [`MAX_SANDBOX_FILE`] bytes, and no more than `left` of the sandbox's budget (which it
/// lowers): the files of one sandbox are read up to [`MAX_SANDBOX_FILE`] bytes together, twice
/// what a scenario's weights can take, so sparse files cannot make the harness hold N times
/// that.
fn read_regular(path: &Path, left: &mut u64) -> Result<Vec<u8>, String> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("a file the harness cannot read ({e})"))?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file once opened".to_owned());
    }
    if meta.len() > MAX_SANDBOX_FILE {
        return Err(format!(
            "a file of {} bytes, more than any weight file can be ({MAX_SANDBOX_FILE})",
            meta.len()
        ));
    }
    if meta.len() > *left {
        return Err(format!(
            "a file of {} bytes past what the sandbox's files can hold together \
             ({MAX_SANDBOX_FILE} bytes, twice a scenario's weights)",
            meta.len()
        ));
    }
    let bytes = crate::input::read_capped(file, *left, "")
        .map_err(|_| format!("a file that grew past {} bytes while it was read", *left))?;
    *left -= bytes.len() as u64;
    Ok(bytes)
}

/// The most entries [`walk`] records of one sandbox. A weights answer writes a file a weight and
/// a few directories, and the harness plants a few more: a sandbox past this holds what its
/// answer cannot account for, and the rest is not read, so that a backend that makes a million
/// links costs the harness bounded memory (at most this many names and link targets, each one
/// path long, and [`MAX_SANDBOX_FILE`] bytes of files).
pub const MAX_SANDBOX_ENTRIES: usize = 10_000;

/// What [`walk`] found in a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Each entry, by sandbox-relative path (`a/b`).
    pub entries: std::collections::BTreeMap<String, Entry>,
    /// True when the sandbox held more than [`MAX_SANDBOX_ENTRIES`] entries: the walk stopped
    /// there, and `entries` is not all of it.
    pub capped: bool,
}

/// Every entry under `root`, by sandbox-relative path (`a/b`), without following links,
/// opening only regular files, and not entering a mount: at most [`MAX_SANDBOX_ENTRIES`].
pub fn walk(root: &Path) -> Found {
    let mut found = Found::default();
    if let Ok(meta) = fs::symlink_metadata(root) {
        let mut left = MAX_SANDBOX_FILE;
        found.capped = walk_in(root, "", device(&meta), &mut left, &mut found.entries);
    }
    found
}

/// [`walk`] beneath `dir`; true when it stopped at [`MAX_SANDBOX_ENTRIES`].
fn walk_in(
    dir: &Path,
    prefix: &str,
    dev: u64,
    left: &mut u64,
    out: &mut std::collections::BTreeMap<String, Entry>,
) -> bool {
    let Ok(read) = fs::read_dir(dir) else {
        return false;
    };
    for entry in read.flatten() {
        if out.len() >= MAX_SANDBOX_ENTRIES {
            return true;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let r = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        let found = if kind.is_symlink() {
            Entry::Link(fs::read_link(&path).unwrap_or_default())
        } else if kind.is_dir() {
            if is_mount(&path, &meta, dev) {
                Entry::Foreign("a mount point (another file system mounted in the sandbox)".into())
            } else if fs::read_dir(&path).is_err() {
                Entry::Foreign("a directory the harness cannot read".into())
            } else {
                out.insert(r.clone(), Entry::Dir);
                if walk_in(&path, &r, dev, left, out) {
                    return true;
                }
                continue;
            }
        } else if kind.is_file() {
            match read_regular(&path, left) {
                Ok(bytes) => Entry::File(bytes),
                Err(why) => Entry::Foreign(why),
            }
        } else {
            Entry::Foreign(special_kind(&kind).to_owned())
        };
        out.insert(r, found);
    }
    false
}

fn special_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device file";
        }
    }
    let _ = kind;
    "neither a file, a directory nor a link"
}

/// Removes `root` and everything under it that the harness may remove: links as links, never
/// what they point at; directories a backend made unreadable are opened up first (they are the
/// harness's own); a mount inside is left in place, never deleted through. Returns the
/// sandbox-relative paths left behind.
pub fn remove(root: &Path) -> Vec<String> {
    let mut left = Vec::new();
    if let Ok(meta) = fs::symlink_metadata(root) {
        if !meta.file_type().is_dir() {
            if fs::remove_file(root).is_err() {
                left.push(".".to_owned());
            }
            return left;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // A root its owner cannot list or enter (a backend's `chmod`) is given those back.
            if meta.permissions().mode() & 0o700 != 0o700 {
                let mode = meta.permissions().mode() | 0o700;
                let _ = fs::set_permissions(root, fs::Permissions::from_mode(mode));
            }
            deep::remove_tree(root, device(&meta), &mut left);
        }
        #[cfg(not(unix))]
        remove_in(root, "", device(&meta), &mut left);
    }
    left
}

#[cfg(not(unix))]
fn remove_in(path: &Path, rel: &str, dev: u64, left: &mut Vec<String>) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    if !meta.file_type().is_dir() {
        if fs::remove_file(path).is_err() {
            left.push(rel.to_owned());
        }
        return;
    }
    if !rel.is_empty() && is_mount(path, &meta, dev) {
        left.push(rel.to_owned());
        return;
    }
    if let Ok(read) = fs::read_dir(path) {
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            remove_in(&entry.path(), &child, dev, left);
        }
    }
    if fs::remove_dir(path).is_err() && !left.iter().any(|l| l.starts_with(rel)) {
        left.push(if rel.is_empty() {
            ".".into()
        } else {
            rel.to_owned()
        });
    }
}

/// Removing a tree of any depth: one directory open at a time, entered by name and left through
/// `..` (checked to be the directory it came from), so neither the path's length, nor the
/// stack, nor the open files bound the depth a backend can make.
#[cfg(unix)]
// The fields of `stat` have other integer types on other unixes: the casts are not idle there.
#[allow(clippy::unnecessary_cast)]
mod deep {
    use std::ffi::{CStr, CString};
    use std::path::Path;

    use rustix::fd::OwnedFd;
    use rustix::fs::{self, AtFlags, Mode, OFlags};

    /// One directory on the way down: its name in its parent, its inode, and the entries
    /// still to enter.
    struct Level {
        name: CString,
        ino: u64,
        pending: Vec<CString>,
    }

    fn open_dir(at: &OwnedFd, name: &CStr) -> rustix::io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        fs::openat(at, name, flags, Mode::empty())
    }

    /// The path of the level `names` lead to, for what is left.
    fn rel(stack: &[Level], last: Option<&CStr>) -> String {
        let parts = stack.iter().skip(1).map(|l| l.name.as_c_str()).chain(last);
        let names: Vec<String> = parts.map(|n| n.to_string_lossy().into_owned()).collect();
        if names.is_empty() {
            ".".to_owned()
        } else {
            names.join("/")
        }
    }

    /// Removes what `dir` holds but its subdirectories (on device `dev`, not a mount), which
    /// it returns to enter; what cannot be removed goes to `left`.
    fn clear(dir: &OwnedFd, stack: &[Level], dev: u64, left: &mut Vec<String>) -> Vec<CString> {
        let mut subdirs = Vec::new();
        let Ok(entries) = fs::Dir::read_from(dir) else {
            left.push(rel(stack, None));
            return subdirs;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let is_dir = fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(|st| {
                (
                    fs::FileType::from_raw_mode(st.st_mode) == fs::FileType::Directory,
                    st,
                )
            });
            match is_dir {
                Ok((true, st)) if st.st_dev as u64 == dev && !super::mount_root_at(dir, name) => {
                    // Only a directory its owner cannot list, enter or write needs it.
                    if st.st_mode & 0o700 != 0o700 {
                        let _ = fs::chmodat(dir, name, Mode::RWXU, AtFlags::empty());
                    }
                    subdirs.push(name.to_owned());
                }
                Ok((true, _)) => left.push(rel(stack, Some(name))),
                _ => {
                    if fs::unlinkat(dir, name, AtFlags::empty()).is_err() {
                        left.push(rel(stack, Some(name)));
                    }
                }
            }
        }
        subdirs
    }

    /// Removes `root` and everything beneath it on device `dev`, never entering a mount nor
    /// following a link; what could not be removed goes to `left`, named from `root`.
    pub fn remove_tree(root: &Path, dev: u64, left: &mut Vec<String>) {
        let Ok(mut cur) = fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            left.push(".".to_owned());
            return;
        };
        let ino = fs::fstat(&cur).map_or(0, |st| st.st_ino as u64);
        let mut stack = vec![Level {
            name: CString::default(),
            ino,
            pending: Vec::new(),
        }];
        stack[0].pending = clear(&cur, &stack, dev, left);
        while let Some(top) = stack.last_mut() {
            if let Some(name) = top.pending.pop() {
                match open_dir(&cur, &name) {
                    Ok(child) => {
                        let ino = fs::fstat(&child).map_or(0, |st| st.st_ino as u64);
                        cur = child;
                        stack.push(Level {
                            name,
                            ino,
                            pending: Vec::new(),
                        });
                        let pending = clear(&cur, &stack, dev, left);
                        if let Some(top) = stack.last_mut() {
                            top.pending = pending;
                        }
                    }
                    Err(_) => left.push(rel(&stack, Some(&name))),
                }
                continue;
            }
            let Some(done) = stack.pop() else { break };
            let Some(parent) = stack.last() else { break };
            // Back up through `..`, which must be the directory this one was entered from: a
            // tree moved meanwhile is left as it is.
            let up = open_dir(&cur, c"..").ok().filter(|fd| {
                fs::fstat(fd)
                    .is_ok_and(|st| st.st_ino as u64 == parent.ino && st.st_dev as u64 == dev)
            });
            let Some(up) = up else {
                left.push(rel(&stack, Some(&done.name)));
                return;
            };
            cur = up;
            if fs::unlinkat(&cur, &done.name, AtFlags::REMOVEDIR).is_err()
                && !left
                    .iter()
                    .any(|l| l.starts_with(&rel(&stack, Some(&done.name))))
            {
                left.push(rel(&stack, Some(&done.name)));
            }
        }
        drop(cur);
        if std::fs::remove_dir(root).is_err() && left.is_empty() {
            left.push(".".to_owned());
        }
    }
}

/// True when the entry `name` of the directory `dir` is the root of a mount (Linux's statx
/// says so; elsewhere a device change is the only sign).
#[cfg(unix)]
fn mount_root_at(dir: &rustix::fd::OwnedFd, name: &std::ffi::CStr) -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{statx, AtFlags, StatxAttributes, StatxFlags};
        if let Ok(r) = statx(
            dir,
            name,
            AtFlags::NO_AUTOMOUNT | AtFlags::SYMLINK_NOFOLLOW,
            StatxFlags::empty(),
        ) {
            return r.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT)
                && r.stx_attributes.contains(StatxAttributes::MOUNT_ROOT);
        }
    }
    let _ = (dir, name);
    false
}

/// The name of the sandbox inside the private directory that holds it.
const SANDBOX_NAME: &str = "sandbox";

/// A sandbox directory for one weights trial, alone in a private directory of its own, so that
/// a write beside it (`<sandbox>/../x`) is seen ([`Sandbox::written_beside`]). Dropping it
/// removes both with [`remove`], never crossing into a mount; what could not be removed is
/// left, and named on standard error.
#[derive(Debug, Default)]
pub struct Sandbox {
    /// The private directory; the sandbox is its only entry.
    outer: Option<PathBuf>,
    /// `outer/sandbox`.
    dir: Option<PathBuf>,
}

impl Sandbox {
    /// A new, empty sandbox directory under `root` (or the system's temporary directory).
    pub fn new_in(root: &Path) -> std::io::Result<Sandbox> {
        let outer = make_own(|| {
            let outer = tempfile::Builder::new()
                .prefix("ge-sandbox-")
                .tempdir_in(root)
                .or_else(|_| tempfile::tempdir())?;
            fs::create_dir(outer.path().join(SANDBOX_NAME))?;
            Ok(outer.keep())
        })?;
        Ok(Sandbox {
            dir: Some(outer.join(SANDBOX_NAME)),
            outer: Some(outer),
        })
    }

    /// No sandbox: the capabilities that never touch a file system.
    pub fn none() -> Sandbox {
        Sandbox::default()
    }

    /// Its path; the empty path stands for "no sandbox".
    pub fn path(&self) -> &Path {
        self.dir.as_deref().unwrap_or(Path::new(""))
    }

    /// What appeared beside the sandbox, in the private directory that holds it: a backend
    /// that wrote outside the sandbox through `..`.
    pub fn written_beside(&self) -> Vec<String> {
        let Some(outer) = &self.outer else {
            return Vec::new();
        };
        let mut beside: Vec<String> = read_dir_restoring(outer)
            .map(|read| {
                read.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != SANDBOX_NAME)
                    .collect()
            })
            .unwrap_or_else(|_| {
                vec![". (the directory holding the sandbox, which cannot be listed)".to_owned()]
            });
        beside.sort();
        beside
    }

    /// Empties the sandbox for another trial in the same place, as fresh as a new one: what is
    /// in it removed as [`remove`] removes it, the directory made again. False, and the
    /// sandbox not fit to be used again (drop it), when something could not be removed or
    /// anything lies beside it.
    pub fn reset(&self) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        remove(dir).is_empty() && fs::create_dir(dir).is_ok() && self.written_beside().is_empty()
    }

    /// What the backend left outside the sandbox in the directories the harness watches for it
    /// (a confined subprocess backend's `$TMPDIR` and `$HOME`, `confine`), taken once.
    pub fn written_outside(&self) -> Vec<String> {
        self.dir
            .as_ref()
            .and_then(|dir| outside().remove(dir))
            .unwrap_or_default()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            outside().remove(&dir);
        }
        if let Some(dir) = self.outer.take() {
            let left = remove_own(&dir);
            if !left.is_empty() {
                eprintln!(
                    "[ge-conformance] the sandbox {} keeps what the harness may not remove: {}",
                    dir.display(),
                    left.join(", ")
                );
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// 5,000 levels of `dd/` (15,000 bytes of path, past what a path may name), made one
    /// directory at a time through descriptors, with a file at the bottom: removed whole.
    #[test]
    fn a_tree_deeper_than_a_path_can_name_is_removed() {
        use rustix::fs::{mkdirat, openat, Mode, OFlags};
        let root = tempfile::tempdir().unwrap().keep();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut here = openat(rustix::fs::CWD, &root, flags, Mode::empty()).unwrap();
        for _ in 0..5000 {
            mkdirat(&here, "dd", Mode::RWXU).unwrap();
            here = openat(&here, "dd", flags, Mode::empty()).unwrap();
        }
        let leaf = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
        drop(openat(&here, "leaf", leaf, Mode::RUSR).unwrap());
        drop(here);
        let left = remove(&root);
        assert!(left.is_empty(), "{left:?}");
        assert!(!root.exists());
    }

    /// Sparse files cost the disk nothing; read back, each would cost its length. The files of
    /// one sandbox are read up to the budget together, and a file past it is reported, unread.
    #[test]
    fn the_files_of_a_sandbox_are_read_within_one_budget() {
        let dir = tempfile::tempdir().unwrap();
        let third = MAX_SANDBOX_FILE / 3 + 1;
        for name in ["a", "b", "c"] {
            let f = fs::File::create(dir.path().join(name)).unwrap();
            f.set_len(third).unwrap();
        }
        let entries = walk(dir.path()).entries;
        let read = entries
            .values()
            .filter(|e| matches!(e, Entry::File(b) if b.len() as u64 == third))
            .count();
        let refused: Vec<&String> = entries
            .values()
            .filter_map(|e| match e {
                Entry::Foreign(why) => Some(why),
                _ => None,
            })
            .collect();
        assert_eq!(read, 2, "two files fit the budget: {:?}", entries.keys());
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].contains("past what the sandbox's files can hold together"),
            "{}",
            refused[0]
        );
    }

    /// Round seven, M1 and M2: a chain of directories deeper than [`MAX_DEPTH`] is listed no
    /// further (and the listing says it stopped), and cannot be counted, so that what lies at
    /// its end is neither slow to list nor left out of the bytes a backend keeps.
    #[test]
    fn a_tree_past_the_deepest_is_neither_listed_nor_counted_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for _ in 0..=MAX_DEPTH + 1 {
            deep.push("d");
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("hidden"), vec![1u8; 4096]).unwrap();
        let mut listed = BTreeSet::new();
        assert!(
            names(dir.path(), "$TMPDIR", 1_000, &mut listed),
            "{listed:?}"
        );
        assert!(listed.len() <= MAX_DEPTH + 1, "{}", listed.len());
        let dev = device(&fs::symlink_metadata(dir.path()).unwrap());
        assert_eq!(bytes_in(dir.path(), dev, 1_000, &mut 0, 0), None);
        // As deep as the bound, it is listed and counted whole.
        let shallow = tempfile::tempdir().unwrap();
        let mut path = shallow.path().to_path_buf();
        for _ in 0..MAX_DEPTH {
            path.push("d");
        }
        fs::create_dir_all(&path).unwrap();
        let mut listed = BTreeSet::new();
        assert!(!names(shallow.path(), "$TMPDIR", 1_000, &mut listed));
        assert_eq!(listed.len(), MAX_DEPTH);
        let dev = device(&fs::symlink_metadata(shallow.path()).unwrap());
        assert!(bytes_in(shallow.path(), dev, 1_000, &mut 0, 0).is_some());
    }

    /// Round six, H1: a sandbox of more links than the cap is walked to the cap and no further,
    /// and says so.
    #[test]
    fn a_flooded_sandbox_is_walked_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        for i in 0..=MAX_SANDBOX_ENTRIES {
            std::os::unix::fs::symlink("/nowhere", dir.path().join(format!("d/{i}"))).unwrap();
        }
        let found = walk(dir.path());
        assert!(found.capped);
        assert_eq!(found.entries.len(), MAX_SANDBOX_ENTRIES);
        fs::remove_file(dir.path().join("d/0")).unwrap();
        fs::remove_file(dir.path().join("d/1")).unwrap();
        let found = walk(dir.path());
        assert!(!found.capped, "the cap itself is not past it");
        assert_eq!(found.entries.len(), MAX_SANDBOX_ENTRIES);
    }

    #[test]
    fn foreign_entries_are_named_and_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        let sparse = fs::File::create(dir.path().join("sparse")).unwrap();
        sparse.set_len(MAX_SANDBOX_FILE + 1).unwrap();
        fs::write(dir.path().join("small"), b"abc").unwrap();
        let found = walk(dir.path()).entries;
        assert_eq!(found["fifo"], Entry::Foreign("a FIFO".into()));
        assert_eq!(found["zero"], Entry::Link("/dev/zero".into()));
        assert!(matches!(&found["sparse"], Entry::Foreign(w) if w.contains("bytes")));
        assert_eq!(found["small"], Entry::File(b"abc".to_vec()));
    }

    #[test]
    fn a_locked_directory_is_reported_and_still_removed() {
        let root = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new_in(root.path()).unwrap();
        let locked = sandbox.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::write(locked.join("inside"), b"x").unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        let path = sandbox.path().to_path_buf();
        // As root every directory is readable; otherwise the walk names it.
        if fs::read_dir(&locked).is_err() {
            assert!(matches!(&walk(&path).entries["locked"], Entry::Foreign(_)));
        }
        drop(sandbox);
        assert!(!path.exists(), "the sandbox is gone");
    }

    #[test]
    fn a_reset_sandbox_is_empty_and_one_with_something_beside_is_not_reused() {
        let root = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new_in(root.path()).unwrap();
        let path = sandbox.path().to_path_buf();
        let locked = path.join("a/b");
        fs::create_dir_all(&locked).unwrap();
        fs::write(locked.join("w"), b"x").unwrap();
        std::os::unix::fs::symlink("/", path.join("up")).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        assert!(sandbox.reset());
        assert_eq!(sandbox.path(), path, "the same place");
        assert_eq!(fs::read_dir(&path).unwrap().count(), 0, "empty");
        assert!(Path::new("/").exists(), "a link is removed, never followed");
        fs::write(path.join("../beside"), b"x").unwrap();
        assert!(
            !sandbox.reset(),
            "a write beside the sandbox is not reset away"
        );
        assert!(!Sandbox::none().reset());
    }
}
