//! Confinement of subprocess backends: each gets a temporary and a home directory of its own,
//! watched for what a weights trial leaves there, and, on Linux where the kernel has Landlock,
//! cannot write anywhere but this run's private sandbox root and a few device files
//! ([`DEVICES`]), nor (Landlock ABI 6 and up) signal the harness or any process outside its
//! own.
//!
//! What this sees and what it cannot:
//! - a file or directory created in the backend's `$TMPDIR` or `$HOME` during a weights trial,
//!   and still there after its answer, is a write outside the sandbox (WGT-007), found by
//!   comparing the two trees before and after the trial ([`Area::listing`]); one created beside
//!   them, or beneath the sandbox root outside every directory the harness made there, breaks
//!   the harness's safety rule as well, as a write beside the sandbox does;
//! - with Landlock, a write to any other place (an absolute path, the working directory, a
//!   link that points out) is refused by the kernel: nothing outside changes, and the backend
//!   sees the refusal as a permission error. A refused write is not itself reported: the
//!   backend's answer is judged as it comes;
//! - without Landlock (another system, an older kernel, `--no-confine`, or the library built
//!   without its default feature `landlock`), such a write succeeds and is not seen: the report
//!   says which of these held ([`Status`]);
//! - an in-process backend shares the harness's process: nothing here applies to it, and only
//!   the sandbox and the private directory around it are inspected.
//!
//! The working directory is left as it is, so relative paths in a command line keep working.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command};

use crate::sandbox::{BENEATH_ROOT, BESIDE_OWN};

/// Whether subprocess backends are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confine {
    /// Their own `$TMPDIR` and `$HOME`, watched, and Landlock where the kernel supports it.
    #[default]
    On,
    /// The harness's own environment and no restriction (`--no-confine`): for an engine that
    /// must write elsewhere, at the price of writes outside the sandbox going unseen.
    Off,
    /// As [`Confine::On`], and a backend that Landlock cannot confine is not run
    /// (`--require-confinement`): a gate that must not pass an engine whose writes outside the
    /// sandbox would go unseen, on a machine whose kernel lacks Landlock.
    Required,
}

impl Confine {
    /// `Ok` when a backend confined as `status` may run under this choice; otherwise why not.
    pub fn allows(self, status: &Status) -> Result<(), String> {
        match (self, status) {
            (Confine::Required, Status::Landlock(..)) | (Confine::On | Confine::Off, _) => Ok(()),
            (Confine::Required, other) => Err(format!(
                "confinement is required (--require-confinement) and this backend cannot be confined: {other}"
            )),
        }
    }
}

/// The most entries listed in a watched directory; past it the listing stops (a backend that
/// fills its temporary directory with millions of files costs bounded time and memory).
pub const MAX_WATCHED_ENTRIES: usize = 10_000;

/// The directories a confined backend gets as its own: `tmp` (its `$TMPDIR`) and `home` (its
/// `$HOME`), in a private directory under the sandbox root. Dropping it removes them with
/// [`crate::sandbox::remove`], never following a link or crossing a mount.
#[derive(Debug)]
pub struct Area {
    root: PathBuf,
}

impl Area {
    /// A new area under the sandbox root ([`crate::sandbox::root`]).
    pub fn new() -> std::io::Result<Area> {
        let root = crate::sandbox::make_own(|| {
            let root = tempfile::Builder::new()
                .prefix("ge-backend-")
                .tempdir_in(crate::sandbox::root())?;
            fs::create_dir(root.path().join("tmp"))?;
            fs::create_dir(root.path().join("home"))?;
            Ok(root.keep())
        })?;
        Ok(Area { root })
    }

    /// The backend's `$TMPDIR`.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The backend's `$HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// Every entry in the two directories, named as the backend sees them (`$TMPDIR/a/b`,
    /// `$HOME/.cache`), and every entry the harness did not make beside them (`$TMPDIR/../x`)
    /// and beneath the sandbox root (`$TMPDIR/../../x`, [`crate::sandbox::strangers`]): at most
    /// [`MAX_WATCHED_ENTRIES`] in all.
    pub fn listing(&self) -> Listing {
        let cap = MAX_WATCHED_ENTRIES;
        // What lies outside the scratch area first, with a cap of its own: a flood of the
        // scratch area cannot push it out of the listing.
        let mut entries = BTreeSet::new();
        let capped_outside = self.beside_own(cap, &mut entries)
            || crate::sandbox::strangers(BENEATH_ROOT, cap, &mut entries);
        let mut scratch = BTreeSet::new();
        let capped = crate::sandbox::names(&self.tmp(), "$TMPDIR", cap, &mut scratch)
            || crate::sandbox::names(&self.home(), "$HOME", cap, &mut scratch);
        entries.append(&mut scratch);
        Listing {
            entries,
            capped,
            capped_outside,
        }
    }

    /// The entries of the area's own directory besides `tmp` and `home`, as `$TMPDIR/../x`.
    fn beside_own(&self, cap: usize, out: &mut BTreeSet<String>) -> bool {
        let Ok(read) = crate::sandbox::read_dir_restoring(&self.root) else {
            out.insert(format!(
                "{BESIDE_OWN} (the backend's own directory, which cannot be listed)"
            ));
            return false;
        };
        for entry in read.flatten() {
            let name = entry.file_name();
            if name == "tmp" || name == "home" {
                continue;
            }
            if out.len() >= cap {
                return true;
            }
            let name = format!("{BESIDE_OWN}/{}", name.to_string_lossy());
            out.insert(name.clone());
            if crate::sandbox::names(&entry.path(), &name, cap, out) {
                return true;
            }
        }
        false
    }
}

/// What a backend's own directories held, as [`Area::listing`] found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The entries, named as the backend sees them.
    pub entries: BTreeSet<String>,
    /// True when the listing of the scratch area (`$TMPDIR`, `$HOME`) stopped at
    /// [`MAX_WATCHED_ENTRIES`] with entries unlisted: what a trial leaves among those goes unseen.
    pub capped: bool,
    /// The same for what lies beside the scratch area and beneath the sandbox root.
    pub capped_outside: bool,
}

impl Drop for Area {
    fn drop(&mut self) {
        let left = crate::sandbox::remove_own(&self.root);
        if !left.is_empty() {
            eprintln!(
                "[ge-conformance] the backend's directory {} keeps what the harness may not remove: {}",
                self.root.display(),
                left.join(", ")
            );
        }
    }
}

/// The device files a confined backend may write, besides its sandbox root: the ones every
/// process may need (`/dev/null` and its kind, its terminal) and an accelerator's (the
/// `davinci*` devices and the memory and channel devices of Ascend's driver). Nothing else of
/// `/dev` (not `/dev/shm`, where other runs' sandboxes may lie, nor a disk), nothing of
/// `/proc`. Reading and `ioctl` are never restricted.
pub const DEVICES: [&str; 9] = [
    "null",
    "zero",
    "full",
    "random",
    "urandom",
    "tty",
    "davinci_manager",
    "devmm_svm",
    "hisi_hdc",
];

/// The paths a confined backend may write beneath: this run's sandbox root, and the device
/// files of [`DEVICES`] and `/dev/davinci<N>` that exist (character devices only).
fn writable() -> Vec<PathBuf> {
    let mut allowed = vec![crate::sandbox::root().to_path_buf()];
    let Ok(dev) = fs::read_dir("/dev") else {
        return allowed;
    };
    for entry in dev.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let numbered = name
            .strip_prefix("davinci")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !(DEVICES.contains(&name.as_str()) || numbered) {
            continue;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            if fs::symlink_metadata(entry.path()).is_ok_and(|m| m.file_type().is_char_device()) {
                allowed.push(entry.path());
            }
        }
    }
    allowed
}

/// How a subprocess backend was confined, as reports state it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Landlock enforced the restriction (the ABI version the kernel offers), with signals to
    /// processes outside the backend's own refused or not (ABI 6 and up), and what else held.
    Landlock(i32, Signals, Hardening),
    /// Only the watched directories: Landlock could not be applied, for this reason; and what
    /// else held.
    WatchedOnly(String, Hardening),
    /// Not confined at all (`--no-confine`).
    Off,
}

/// What Landlock of `abi` refuses of the network, as a report states it: TCP from ABI 4,
/// abstract Unix sockets from ABI 6; Unix sockets named by a path and UDP it has no rule for.
fn sockets(abi: i32) -> &'static str {
    match abi {
        ..=3 => "sockets are not confined (the kernel's Landlock is older than ABI 4)",
        4 | 5 => "TCP connections and binds are refused; Unix sockets and UDP are not confined (Landlock has no rule for them before ABI 6)",
        _ => "TCP connections and binds and abstract Unix sockets outside its own processes are refused; Unix sockets named by a path and UDP are not confined (Landlock has no rule for them)",
    }
}

impl Status {
    /// `Ok` when a backend that started confined as `self` may run again confined as `now`:
    /// only as it was at its first start, which the report states and `--require-confinement`
    /// judged (round six, L1). Otherwise why it is not run.
    pub fn restart(&self, now: &Status) -> Result<(), String> {
        if self == now {
            return Ok(());
        }
        Err(format!(
            "the backend could not be confined as at its first start, so it is not run (first: \
             {self}; now: {now})"
        ))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Landlock(abi, signals, hardening) => write!(
                f,
                "Landlock (ABI {abi}): writes outside this run's sandbox root and a few devices are refused; {signals}; {}; {hardening}; $TMPDIR and $HOME are the backend's own, watched",
                sockets(*abi)
            ),
            Status::WatchedOnly(why, hardening) => write!(
                f,
                "not available ({why}): $TMPDIR and $HOME are the backend's own, watched; a write elsewhere is not seen; {hardening}"
            ),
            Status::Off => f.write_str("off (--no-confine): a write outside the sandbox and the directory around it is not seen"),
        }
    }
}

/// Whether a confined backend may signal processes outside its own (the harness among them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signals {
    /// Refused by Landlock's signal scoping.
    Scoped,
    /// Allowed: the kernel's Landlock has no signal scoping (ABI 6).
    NotScoped,
}

impl std::fmt::Display for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signals::Scoped => "signals to the harness are refused",
            Signals::NotScoped => {
                "signals to the harness are not refused (the kernel's Landlock is older than ABI 6)"
            }
        })
    }
}

/// Starts `command` in `area` (its `$TMPDIR` and `$HOME`), restricted by Landlock where the
/// kernel supports it, and says how it was confined.
///
/// The restriction is made on a thread of its own, which then starts the child: Landlock and
/// `no_new_privs` hold for the calling thread and everything it starts from then on, so the
/// harness's other threads are untouched, and nothing runs between `fork` and `exec`.
pub fn spawn(command: &mut Command, area: &Area) -> (std::io::Result<Child>, Status) {
    command.env("TMPDIR", area.tmp()).env("HOME", area.home());
    let allowed = writable();
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| {
            let status = restrict(&allowed);
            (command.spawn(), status)
        });
        handle.join().unwrap_or_else(|_| {
            (
                Err(std::io::Error::other(
                    "the thread starting the backend panicked",
                )),
                Status::WatchedOnly("the confining thread failed".into(), Hardening::default()),
            )
        })
    })
}

/// Restricts the calling thread's writes to `allowed` (and what lies beneath), and hardens it
/// ([`Hardening`]).
#[cfg(all(target_os = "linux", feature = "landlock"))]
fn restrict(allowed: &[PathBuf]) -> Status {
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, LandlockStatus, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };
    // Writing, creating, removing, linking and truncating; never reading or executing, and not
    // ioctl on devices (an accelerator's driver needs it). Signals are scoped where the kernel
    // can (best effort: an older kernel enforces the rest). Device nodes are handled and never
    // granted, beneath the allowed directories either: a backend run as root could otherwise
    // make a node for a disk or the kernel log inside its sandbox and write to the device.
    let access = AccessFs::from_write(ABI::V3);
    let granted = access & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    // No network: TCP connections and binds are handled and granted nowhere (Landlock ABI 4
    // and up), and abstract Unix sockets are scoped (ABI 6): an engine has no daemon to talk
    // to. Best effort, as the rest: an older kernel enforces what it has.
    // A System V IPC namespace first: making one needs the capabilities dropped last.
    let own_ipc = ge_dylib::own_ipc_namespace().is_ok();
    let made = Ruleset::default()
        .handle_access(access)
        .and_then(|r| r.handle_access(AccessNet::from_all(ABI::V4)))
        .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(allowed, granted)))
        .and_then(|r| r.restrict_self());
    let hardening = Hardening {
        own_ipc,
        others_out_of_reach: refuse_others().is_ok(),
        no_capabilities: drop_capabilities().is_ok(),
    };
    match made {
        Ok(status) => match status.ruleset {
            RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => {
                let abi = match status.landlock {
                    LandlockStatus::Available {
                        effective_abi,
                        kernel_abi,
                    } => kernel_abi.unwrap_or(effective_abi as i32),
                    _ => 0,
                };
                let signals = if abi >= 6 {
                    Signals::Scoped
                } else {
                    Signals::NotScoped
                };
                Status::Landlock(abi, signals, hardening)
            }
            RulesetStatus::NotEnforced => {
                Status::WatchedOnly("the kernel does not enforce Landlock".into(), hardening)
            }
        },
        Err(e) => Status::WatchedOnly(format!("Landlock refused: {e}"), hardening),
    }
}

#[cfg(not(target_os = "linux"))]
fn restrict(_allowed: &[PathBuf]) -> Status {
    Status::WatchedOnly("Landlock exists on Linux only".into(), Hardening::default())
}

#[cfg(all(target_os = "linux", not(feature = "landlock")))]
fn restrict(_allowed: &[PathBuf]) -> Status {
    Status::WatchedOnly(
        "built without the `landlock` feature".into(),
        Hardening::default(),
    )
}

/// What confines a backend besides its directories and Landlock (Linux, the default feature
/// `landlock`). Each part is made on the thread that starts the backend, and holds for the
/// backend and everything it starts; each is reported, held or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hardening {
    /// It runs without capabilities: the thread that starts it gave up all of its own, so a
    /// backend started by a harness run as root holds none (no `CAP_SYS_ADMIN`,
    /// `CAP_NET_ADMIN`, `CAP_SYS_MODULE`, `CAP_SYS_BOOT`, ...).
    pub no_capabilities: bool,
    /// A seccomp filter refuses it (`EPERM`) the resource limits of any process but its own,
    /// and the scheduling priority, CPU affinity and I/O priority of the harness's process, its
    /// process group and its user's processes.
    pub others_out_of_reach: bool,
    /// Its System V shared memory, semaphores and message queues live in a namespace of its
    /// own and go with it. Only a harness run as root can make one; otherwise a segment a
    /// backend makes outlives it, as the kernel keeps it.
    pub own_ipc: bool,
}

impl std::fmt::Display for Hardening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.no_capabilities {
            "no capabilities"
        } else {
            "its capabilities kept (they could not be dropped)"
        })?;
        f.write_str(if self.others_out_of_reach {
            "; other processes' limits and the harness's priority and CPUs are out of reach (seccomp)"
        } else {
            "; other processes' limits and the harness's priority are within reach (no seccomp filter)"
        })?;
        f.write_str(if self.own_ipc {
            "; System V IPC of its own"
        } else {
            "; System V IPC shared with the machine (a namespace of its own needs a harness run as root)"
        })
    }
}

/// Installs, on the calling thread, the seccomp filter of [`Hardening::others_out_of_reach`]:
/// what a backend may not do to another process that its user owns, and that Landlock does not
/// cover (the kernel checks only the user for these). It may still set its own limits
/// (`setrlimit`, `prlimit` with pid 0) and the priority and CPUs of its own threads, which a
/// thread pool does; another thread of the harness than the first is not told apart from its
/// own, and its priority stays within reach. A system call of another architecture than the
/// harness's (a 32-bit call on x86-64) ends the backend.
#[cfg(all(target_os = "linux", feature = "landlock"))]
fn refuse_others() -> Result<(), String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    use std::collections::BTreeMap;
    // What `setpriority` and `ioprio_set` take as their first argument.
    const PROCESS: u64 = 0;
    const GROUP: u64 = 1;
    const USER: u64 = 2;
    let harness = u64::from(std::process::id());
    let when = |conditions: &[(u8, SeccompCmpOp, u64)]| {
        let conditions = conditions
            .iter()
            .map(|(arg, op, value)| {
                SeccompCondition::new(*arg, SeccompCmpArgLen::Dword, op.clone(), *value)
            })
            .collect::<Result<Vec<_>, _>>()?;
        SeccompRule::new(conditions)
    };
    let build = || -> Result<seccompiler::BpfProgram, seccompiler::BackendError> {
        use SeccompCmpOp::{Eq, Ne};
        let harness_pid = when(&[(0, Eq, harness)])?;
        // `which` of setpriority is PRIO_PROCESS 0, PRIO_PGRP 1, PRIO_USER 2; of ioprio_set,
        // IOPRIO_WHO_PROCESS 1, IOPRIO_WHO_PGRP 2, IOPRIO_WHO_USER 3: the same three, shifted.
        let by_who = |shift: u64| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
            Ok(vec![
                when(&[(0, Eq, PROCESS + shift), (1, Eq, harness)])?,
                when(&[(0, Eq, GROUP + shift), (1, Ne, 0)])?,
                when(&[(0, Eq, USER + shift)])?,
            ])
        };
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        rules.insert(libc::SYS_prlimit64, vec![when(&[(0, Ne, 0)])?]);
        rules.insert(libc::SYS_setpriority, by_who(0)?);
        rules.insert(libc::SYS_ioprio_set, by_who(1)?);
        for call in [
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
        ] {
            rules.insert(call, vec![harness_pid.clone()]);
        }
        // The x32 numbers of the same calls (the 64-bit architecture, bit 30 set), refused
        // outright: an x32 call would otherwise slip past the numbers above.
        #[cfg(target_arch = "x86_64")]
        for call in rules.keys().copied().collect::<Vec<_>>() {
            rules.insert(call | 0x4000_0000, Vec::new());
        }
        let arch = std::env::consts::ARCH.try_into()?;
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )?
        .try_into()
    };
    let program = build().map_err(|e| e.to_string())?;
    // A filter needs `no_new_privs` (Landlock has set it already where it ran).
    rustix::thread::set_no_new_privs(true).map_err(|e| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// Gives up every capability of the calling thread (and so of what it starts, which under
/// `no_new_privs` gains none at `exec`, root or not): the bounding set emptied where the thread
/// may (`CAP_SETPCAP`), the ambient set cleared, the effective, permitted and inheritable sets
/// emptied.
#[cfg(all(target_os = "linux", feature = "landlock"))]
fn drop_capabilities() -> std::io::Result<()> {
    use rustix::thread::{self, CapabilitySet, CapabilitySets};
    let held = thread::capabilities(None)?;
    if held.effective.contains(CapabilitySet::SETPCAP) {
        for bit in 0..64 {
            // Past the kernel's last capability the call fails; nothing is left to drop.
            let _ = thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(
                1 << bit,
            ));
        }
    }
    // Fails only on a kernel without ambient capabilities (before 4.3), where none are held.
    let _ = thread::clear_ambient_capability_set();
    thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )?;
    Ok(())
}

/// What `after` holds that `before` did not: the entries a trial left. A listing after the trial
/// that stopped at its cap counts as something left too (the directories hold more than the
/// harness lists, and what the trial left among the rest cannot be told apart), so a backend
/// cannot hide its leftovers by flooding its directories first.
pub fn left_behind(before: &Listing, after: &Listing) -> Vec<String> {
    let mut left: Vec<String> = after.entries.difference(&before.entries).cloned().collect();
    if after.capped_outside {
        left.push(format!(
            "{BESIDE_OWN} and the sandbox root: more than {MAX_WATCHED_ENTRIES} entries (the \
             listing stops there, so what this trial left there is unseen)"
        ));
    }
    if after.capped {
        left.push(format!(
            "something among more than {MAX_WATCHED_ENTRIES} entries of $TMPDIR and $HOME (the \
             listing stops at {MAX_WATCHED_ENTRIES}, so what this trial left there is unseen)"
        ));
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_runs_only_as_confined_as_the_first_start() {
        let hardened = Hardening {
            no_capabilities: true,
            others_out_of_reach: true,
            own_ipc: true,
        };
        let first = Status::Landlock(7, Signals::Scoped, hardened);
        assert_eq!(first.restart(&first.clone()), Ok(()));
        let weaker = [
            Status::WatchedOnly("Landlock refused: out of memory".into(), hardened),
            Status::Landlock(7, Signals::Scoped, Hardening::default()),
            Status::Off,
        ];
        for now in weaker {
            let why = first.restart(&now).expect_err("not run");
            assert!(
                why.contains("not run") && why.contains(&now.to_string()),
                "{why}"
            );
        }
    }

    #[test]
    fn what_a_trial_leaves_is_named_as_the_backend_sees_it() {
        let area = Area::new().unwrap();
        fs::write(area.tmp().join("old"), b"x").unwrap();
        let before = area.listing();
        fs::create_dir(area.tmp().join("index")).unwrap();
        fs::write(area.tmp().join("index/a.bin"), b"x").unwrap();
        fs::write(area.home().join(".cache"), b"x").unwrap();
        let after = area.listing();
        assert_eq!(
            left_behind(&before, &after),
            ["$HOME/.cache", "$TMPDIR/index", "$TMPDIR/index/a.bin"]
        );
        let root = area.root.clone();
        drop(area);
        assert!(!root.exists(), "the area is removed with its contents");
    }

    #[test]
    fn what_lies_beside_the_area_or_beneath_the_root_is_listed_apart() {
        let area = Area::new().unwrap();
        let before = area.listing();
        fs::write(area.root.join("beside"), b"x").unwrap();
        let stranger = crate::sandbox::root().join(format!("stranger-{}", std::process::id()));
        fs::create_dir(&stranger).unwrap();
        fs::write(stranger.join("inside"), b"x").unwrap();
        let left = left_behind(&before, &area.listing());
        let _ = crate::sandbox::remove(&stranger);
        let name = format!("{BENEATH_ROOT}/stranger-{}", std::process::id());
        assert!(left.contains(&format!("{BESIDE_OWN}/beside")), "{left:?}");
        assert!(left.contains(&name), "{left:?}");
        assert!(left.contains(&format!("{name}/inside")), "{left:?}");
        assert!(
            left.iter().all(|e| !crate::sandbox::in_scratch(e)),
            "{left:?}"
        );
    }

    #[test]
    fn a_listing_at_its_cap_counts_as_something_left_in_every_trial() {
        let area = Area::new().unwrap();
        for i in 0..=MAX_WATCHED_ENTRIES {
            fs::write(area.tmp().join(format!("flood-{i}")), b"").unwrap();
        }
        let before = area.listing();
        assert!(before.capped);
        assert_eq!(before.entries.len(), MAX_WATCHED_ENTRIES);
        // Nothing new, and still the trial after the flood is not clean.
        let left = left_behind(&before, &area.listing());
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].contains("more than 10000 entries"), "{left:?}");
    }
}
