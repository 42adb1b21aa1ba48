//! The sandbox check: the observation compared with what is really on disk after the load and after unload.

use super::*;

/// Checks what a weights backend says against what is really in `sandbox` after it answered:
/// the harness never takes a backend's word for the filesystem.
pub fn check_sandbox(
    judging: &Judging,
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
    sandbox: &Path,
) -> Vec<Violation> {
    let found = crate::sandbox::walk(sandbox);
    if found.capped {
        return vec![flooded(observation)];
    }
    let cx = Disk::new(
        judging.profile,
        scenario,
        observation,
        sandbox,
        found.entries,
    );
    let mut v = Vec::new();
    crate::oracle::run_table(DISK, &cx, &mut v);
    v
}

/// WGT-005: a sandbox of more entries than the harness reads ([`MAX_SANDBOX_ENTRIES`]) holds
/// more than any answer accounts for (a file a weight, its directories, and what the setup
/// planted): something is there that the observation does not list. The other checks are not
/// run: with part of the sandbox unread, what they would say of the rest could be false.
fn flooded(o: &WeightsObservation) -> Violation {
    use crate::sandbox::MAX_SANDBOX_ENTRIES;
    Violation::new(
        "WGT-005",
        format_args!(
            "the sandbox holds more than {MAX_SANDBOX_ENTRIES} entries, where the answer lists \
             {} files: the harness reads no further, and what the sandbox holds past that is \
             unlisted",
            o.files.len()
        ),
    )
}

/// A check of the phases whose context is [`Disk`].
pub(super) type DiskCheck = Check<fn(&Disk<'_>) -> Vec<Violation>>;

/// The checks of the sandbox after a weights backend answered, in order.
pub(super) const DISK: &[DiskCheck] = &[
    Check {
        clauses: &["WGT-005", "EWD-013"],
        name: "disk::reported_files_on_disk",
        run: reported_files_on_disk,
    },
    Check {
        clauses: &["WGT-011"],
        name: "disk::files_read_back",
        run: files_read_back,
    },
    Check {
        clauses: &["EXW-011", "EXW-014"],
        name: "disk::index_on_disk",
        run: |cx| index_on_disk(cx).into_iter().collect(),
    },
    Check {
        clauses: &[
            "WGT-004", "WGT-005", "WGT-007", "EXW-011", "EXW-015", "EXW-019", "EXW-021",
        ],
        name: "disk::unplanted_entries",
        run: unplanted_entries,
    },
    Check {
        clauses: &[
            "WGT-006", "WGT-007", "WGT-010", "EWD-013", "EXW-019", "EXW-021",
        ],
        name: "disk::planted_entries",
        run: planted_entries,
    },
    Check {
        clauses: &["WGT-007", "WGT-010"],
        name: "disk::removals",
        run: removals,
    },
];

/// WGT-004, WGT-005, WGT-007, EXW-011, EXW-015, EXW-019, EXW-021: each entry found in the
/// sandbox that the setup did not plant ([`unplanted_entry`]).
pub(super) fn unplanted_entries(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for (path, entry) in &cx.found {
        if !cx.plants.contains_key(path) {
            v.extend(unplanted_entry(cx, path, entry));
        }
    }
    v
}

/// WGT-006, WGT-007, WGT-010, EWD-013, EXW-019, EXW-021: each entry the setup planted
/// ([`planted_entry`]).
pub(super) fn planted_entries(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for (path, plant) in &cx.plants {
        v.extend(planted_entry(cx, path, plant));
    }
    v
}

/// WGT-010, WGT-007: each path unload says it removed is gone, and was inside the temporary
/// directory.
pub(super) fn removals(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for r in &cx.o.removed {
        v.extend(removed_still_there(cx, r));
        v.extend(removed_outside_temporary(cx, r));
    }
    v
}

/// What the sandbox checks read, worked out once from the scenario, the observation and the
/// sandbox as it is after the backend answered.
pub(super) struct Disk<'a> {
    pub(super) profile: Profile,
    pub(super) scenario: &'a WeightsScenario,
    pub(super) o: &'a WeightsObservation,
    /// The mode in force, by the strict reading of the options.
    pub(super) mode: u8,
    /// The model's constants, as the load reads them ([`constants`]).
    pub(super) weights: Vec<Weight>,
    /// What is on disk, walked without trusting it: links not followed, only regular files
    /// opened, no mount entered (crate::sandbox).
    pub(super) found: BTreeMap<String, Entry>,
    /// What the setup planted.
    pub(super) plants: BTreeMap<String, Entry>,
    /// The user's directory (`ge.externalWeightDir`), when it is the one chosen.
    pub(super) user_dir: Option<String>,
    /// The directory unload must empty and remove (only when the load chose one). A file or
    /// link planted where the temporary directory goes is not the session's to remove.
    pub(super) doomed: Option<String>,
    /// The clause of an unload that leaves what it must remove ([`unload_clause`]).
    pub(super) unloaded: &'static str,
    /// Link targets planted in the sandbox: removing them means a link was followed.
    pub(super) targets: Vec<String>,
    /// The files reported, by where each really lies ([`Disk::land`]).
    pub(super) reported: BTreeMap<String, &'a WrittenFile>,
    /// Upstream's index file, after a load that converted a constant and is not removed.
    pub(super) meta: Option<String>,
    /// The weight directory, where it really lies (after a load that goes ahead, modes 1, 2).
    pub(super) dir: Option<String>,
    /// Upstream, after a load that converted nothing.
    pub(super) nothing_converted: bool,
}

impl<'a> Disk<'a> {
    pub(super) fn new(
        profile: Profile,
        scenario: &'a WeightsScenario,
        o: &'a WeightsObservation,
        sandbox: &Path,
        found: BTreeMap<String, Entry>,
    ) -> Self {
        let reading = Reading::new(profile, &scenario.options, Context::plain());
        let values = reading.values();
        let mode = mode_of(&values);
        // The directory of a load that goes ahead (in modes 1 and 2).
        let place = match refusal(profile, scenario, &values, reading.rejected()) {
            Some(_) => None,
            None => flush_dir_with(profile, scenario, &values),
        };
        let (place_dir, tier) = (place.as_ref().map(|p| p.0.clone()), place.map(|p| p.1));
        let weights = constants(scenario);
        let converting = weights.iter().any(|w| converts(profile, &w.2));
        let plants = planted(scenario, sandbox);
        let temporary = matches!(tier, Some(t) if t != Tier::User);
        let user_dir = place_dir.clone().filter(|_| tier == Some(Tier::User));
        let doomed = place_dir.clone().filter(|d| {
            unload_removes(profile, scenario)
                && temporary
                && plants.get(d).is_none_or(|p| *p == Entry::Dir)
        });
        let targets = plants
            .values()
            .filter_map(|p| match p {
                Entry::Link(t) => t
                    .strip_prefix(sandbox)
                    .ok()
                    .map(|r| r.to_string_lossy().replace('\\', "/")),
                _ => None,
            })
            .collect();
        let land = |p: &str| landing(profile, &scenario.setup, p);
        let reported = o.files.iter().map(|f| (land(&f.path), f)).collect();
        let gone = |p: &str| doomed.as_deref().is_some_and(|d| under(p, d));
        let meta = place_dir
            .as_deref()
            .and_then(|d| meta_path(profile, d, mode, converting))
            .filter(|m| o.errors.is_empty() && tier != Some(Tier::WorkPathMissing) && !gone(m));
        let dir = place_dir.map(|d| land(&d));
        let nothing_converted = profile == Profile::Upstream && o.errors.is_empty() && !converting;
        Disk {
            found,
            unloaded: unload_clause(o),
            profile,
            scenario,
            o,
            mode,
            weights,
            plants,
            user_dir,
            doomed,
            targets,
            reported,
            meta,
            dir,
            nothing_converted,
        }
    }

    /// Whether `p` lies in the directory unload must remove.
    pub(super) fn gone(&self, p: &str) -> bool {
        self.doomed.as_deref().is_some_and(|d| under(p, d))
    }

    /// Where the path `p` the backend names really lies: upstream writes through the links the
    /// setup planted (WGT-007's and WGT-008's upstream entries).
    pub(super) fn land(&self, p: &str) -> String {
        landing(self.profile, &self.scenario.setup, p)
    }
}

/// EXW-019, EXW-021: the clause of an unload that leaves what it must remove. EXW-019 is the
/// unload of a loaded model; after a load that failed there is none, and the directory's going
/// is the suite's reading (EXW-021).
pub(super) fn unload_clause(o: &WeightsObservation) -> &'static str {
    if o.errors.is_empty() {
        "EXW-019"
    } else {
        "EXW-021"
    }
}

/// Whether `path` lies in the user's weight directory.
pub(super) fn in_user_dir(cx: &Disk, path: &str) -> bool {
    cx.user_dir.as_deref().is_some_and(|d| under(path, d))
}

/// WGT-005, EWD-013: every reported file is really there, with the reported length and hash
/// (or removed by unload, the directory unload removes or as the answer reports it); one
/// missing from the user's directory after an unload is EWD-013's.
pub(super) fn reported_files_on_disk(cx: &Disk) -> Vec<Violation> {
    let mut v = Vec::new();
    for f in &cx.o.files {
        match cx.found.get(&cx.land(&f.path)) {
            _ if cx.gone(&f.path) => {}
            Some(Entry::File(bytes)) => {
                if bytes.len() as u64 != f.len || sha(bytes) != f.sha256 {
                    v.push(Violation::new(
                        "WGT-005",
                        format_args!(
                            "{} holds {} bytes with SHA-256 {}, not the {} bytes / {} reported",
                            f.path,
                            bytes.len(),
                            sha(bytes),
                            f.len,
                            f.sha256
                        ),
                    ));
                }
            }
            // The answer says unload removed it: whether it should have is judged where
            // removals are (WGT-007, EXW-019), and the listing is true.
            _ if cx.scenario.unload
                && !in_user_dir(cx, &f.path)
                && cx.o.removed.iter().any(|r| under(&f.path, r)) => {}
            _ => {
                let clause = if in_user_dir(cx, &f.path) && cx.scenario.unload {
                    "EWD-013"
                } else {
                    "WGT-005"
                };
                v.push(Violation::new(
                    clause,
                    format_args!(
                        "{} is reported written but is not a file in the sandbox",
                        f.path
                    ),
                ));
            }
        }
    }
    v
}

/// WGT-011: after a load that succeeded, reading the files back gives every constant byte for
/// byte.
pub(super) fn files_read_back(cx: &Disk) -> Vec<Violation> {
    let o = cx.o;
    let mut v = Vec::new();
    if !o.errors.is_empty() {
        return v;
    }
    // Either profile's name: the judge holds the names, this reads the bytes back. A name two
    // constants share is the first one's.
    let mut by_name: BTreeMap<String, &Weight> = BTreeMap::new();
    for w in cx.weights.iter() {
        for name in accepted_names(cx.profile, Naming::EitherProfile, cx.mode, &w.0, &w.2) {
            by_name.entry(name).or_insert(w);
        }
    }
    for n in &o.nodes {
        let (Some(file), Some(off), Some(len)) = (&n.file, n.offset, n.length) else {
            continue;
        };
        if cx.gone(file) {
            continue;
        }
        let Some(w) = by_name.get(&n.name) else {
            continue;
        };
        let back = match cx.found.get(&cx.land(file)) {
            Some(Entry::File(bytes)) => usize::try_from(off).ok().and_then(|a| {
                let b = a.checked_add(usize::try_from(len).ok()?)?;
                bytes.get(a..b)
            }),
            // Gone after an unload: what may go is the unload's clauses' to judge (EXW-019,
            // EWD-013), and the reported hashes stand in for the bytes (`read_back_reported`).
            None if cx.scenario.unload => continue,
            _ => None,
        };
        if back != Some(w.2.as_slice()) {
            v.push(Violation::new(
                "WGT-011",
                format_args!(
                    "{file} at offset {off}, length {len} does not hold the bytes of {}",
                    n.name
                ),
            ));
        }
    }
    v
}

/// EXW-011, EXW-014 (upstream): after a load that converted a constant, GE's index file is a
/// regular file at the top of the directory (only its presence is judged).
pub(super) fn index_on_disk(cx: &Disk) -> Option<Violation> {
    let meta = cx.meta.as_ref()?;
    (!matches!(cx.found.get(&cx.land(meta)), Some(Entry::File(_)))).then(|| {
        Violation::new(
            if cx.mode == 1 { "EXW-011" } else { "EXW-014" },
            format_args!("{meta} is not a regular file in the sandbox: GE keeps its index there whenever it converts a constant"),
        )
    })
}

/// Something on disk the harness did not plant: the checks of it, in order, the first that
/// settles it ending them. Nothing may be there that the backend did not report.
pub(super) fn unplanted_entry(cx: &Disk, path: &str, entry: &Entry) -> Vec<Violation> {
    if let Entry::Foreign(what) = entry {
        return vec![foreign_entry(cx, path, what)];
    }
    let allowed_dir = matches!(entry, Entry::Dir)
        && cx
            .dir
            .as_deref()
            .is_some_and(|d| d == path || under(d, path));
    if let Some(created) = dir_without_conversion(cx, path, allowed_dir) {
        return vec![created];
    }
    if allowed_dir || cx.reported.contains_key(path) {
        return left_after_unload(cx, path).into_iter().collect();
    }
    if let Some(outside) = outside_weight_dir(cx, path) {
        return vec![outside];
    }
    // A file under a name no weight takes is a temporary left behind (the suite's choice of
    // how files are written, WGT-004); any other unlisted file breaks the listing (WGT-005).
    let mut v = vec![temporary_left(cx, path).unwrap_or_else(|| unreported(path))];
    v.extend(left_after_unload(cx, path));
    v
}

/// WGT-005, WGT-007: a backend leaves only weight files and directories: anything else is
/// charged to the listing inside the weight directory (WGT-005), to the write outside it
/// (WGT-007).
pub(super) fn foreign_entry(cx: &Disk, path: &str, what: &str) -> Violation {
    let inside = cx.dir.as_deref().is_some_and(|d| under(path, d));
    Violation::new(
        if inside { "WGT-005" } else { "WGT-007" },
        format_args!("{path} is {what}: a backend leaves only weight files and directories"),
    )
}

/// EXW-011, EXW-015 (upstream): with nothing to convert GE returns before it makes its weight
/// manager, so neither the directory nor ASCEND_WORK_PATH (nor a parent) is created.
/// `allowed_dir`: `path` is the weight directory or one of its parents.
pub(super) fn dir_without_conversion(
    cx: &Disk,
    path: &str,
    allowed_dir: bool,
) -> Option<Violation> {
    (allowed_dir && cx.nothing_converted).then(|| {
        Violation::new(
            if cx.mode == 1 { "EXW-011" } else { "EXW-015" },
            format_args!(
                "{path} was created, but GE creates no directory when it converts no constant"
            ),
        )
    })
}

/// EXW-019, EXW-021: unload leaves nothing in the directory it removes.
pub(super) fn left_after_unload(cx: &Disk, path: &str) -> Option<Violation> {
    cx.gone(path).then(|| {
        Violation::new(
            cx.unloaded,
            format_args!("{path} is still there after unload"),
        )
    })
}

/// An optional value as a message shows it: the value itself, or `none`, never Rust's
/// `Some(..)` / `None`.
pub(super) fn shown(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// WGT-007: nothing appears outside the weight directory.
pub(super) fn outside_weight_dir(cx: &Disk, path: &str) -> Option<Violation> {
    let dir = &cx.dir;
    dir.as_deref().is_none_or(|d| !under(path, d)).then(|| {
        Violation::new(
            "WGT-007",
            format_args!(
                "{path} appeared outside the weight directory ({})",
                shown(dir.as_deref())
            ),
        )
    })
}

/// WGT-005: every file the backend leaves in the weight directory is reported.
pub(super) fn unreported(path: &str) -> Violation {
    Violation::new(
        "WGT-005",
        format_args!("{path} is in the sandbox but not reported"),
    )
}

/// WGT-004: no temporary file is left behind: an unreported file in the weight directory bears
/// a final name (a weight file's, the combined file's, upstream's index).
pub(super) fn temporary_left(cx: &Disk, path: &str) -> Option<Violation> {
    let profile = cx.profile;
    let name = path.rsplit('/').next().unwrap_or(path);
    let final_name = (name.starts_with("weight_") && name.len() == 71)
        || name.strip_prefix("weight_").is_some_and(|h| {
            profile == Profile::Upstream
                && (32..=64).contains(&h.len())
                && h.bytes().all(|b| b.is_ascii_hexdigit())
        })
        || name == combined_name(profile, &cx.scenario.root_graph)
        || (profile == Profile::Upstream
            && cx.dir.as_deref().is_some_and(|d| path == in_dir(d, META)));
    (!final_name).then(|| {
        Violation::new(
            "WGT-004",
            format_args!("{path} looks like a temporary file left behind"),
        )
    })
}

/// Something the harness planted: the checks of it, in order. Everything planted survives,
/// unless it sat in the directory unload removes.
pub(super) fn planted_entry(cx: &Disk, path: &str, plant: &Entry) -> Vec<Violation> {
    if cx.gone(path) {
        let mut v: Vec<Violation> = plant_left_after_unload(cx, path).into_iter().collect();
        v.extend(removal_unreported(cx, path));
        return v;
    }
    if cx.reported.contains_key(path) {
        return Vec::new(); // replaced by a weight file of the same name, as reported
    }
    if cx.meta.as_deref().is_some_and(|m| cx.land(m) == path) {
        return Vec::new(); // upstream's index, GE's to rewrite (listing it is WGT-005's)
    }
    plant_changed(cx, path, plant).into_iter().collect()
}

/// EXW-019, EXW-021: unload leaves nothing planted in the temporary directory.
pub(super) fn plant_left_after_unload(cx: &Disk, path: &str) -> Option<Violation> {
    cx.found.contains_key(path).then(|| {
        Violation::new(
            cx.unloaded,
            format_args!("{path} was in the temporary directory and is still there after unload"),
        )
    })
}

/// WGT-010: what unload removed from the temporary directory, planted there, is reported.
pub(super) fn removal_unreported(cx: &Disk, path: &str) -> Option<Violation> {
    (!cx.found.contains_key(path) && !cx.o.removed.iter().any(|r| r == path)).then(|| {
        Violation::new(
            "WGT-010",
            format_args!("{path} was removed but not reported"),
        )
    })
}

/// WGT-006, EWD-013, WGT-007: what the setup planted is left as it was: a change is charged to
/// following a link (WGT-006) under a planted link's target, to the user's directory (EWD-013)
/// inside it, to a write outside the weight directory (WGT-007) elsewhere.
pub(super) fn plant_changed(cx: &Disk, path: &str, plant: &Entry) -> Option<Violation> {
    let same = match (plant, cx.found.get(path)) {
        (Entry::Dir, Some(Entry::Dir)) => true,
        (Entry::File(a), Some(Entry::File(b))) => a == b,
        (Entry::Link(a), Some(Entry::Link(b))) => a == b,
        _ => false,
    };
    if same {
        return None;
    }
    let clause = if cx.targets.iter().any(|t| under(path, t)) {
        "WGT-006"
    } else if cx.user_dir.as_deref().is_some_and(|d| under(path, d)) {
        "EWD-013"
    } else {
        "WGT-007"
    };
    Some(Violation::new(
        clause,
        format_args!("{path}, planted before the load, was changed or removed"),
    ))
}

/// WGT-010: what unload says it removed is gone.
pub(super) fn removed_still_there(cx: &Disk, r: &str) -> Option<Violation> {
    cx.found.contains_key(r).then(|| {
        Violation::new(
            "WGT-010",
            format_args!("{r} is reported removed but is still there"),
        )
    })
}

/// WGT-007: what unload says it removed was inside the temporary directory.
pub(super) fn removed_outside_temporary(cx: &Disk, r: &str) -> Option<Violation> {
    (!cx.doomed.as_deref().is_some_and(|d| under(r, d))).then(|| {
        Violation::new(
            "WGT-007",
            format_args!("{r} is outside the temporary weight directory"),
        )
    })
}
