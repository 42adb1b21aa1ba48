//! The files of a load in modes 0 and 1: constants left alone, the files written and listed, one file per weight named after its hash.

use super::*;

/// EXW-010: mode 0 chooses no directory, writes and removes nothing, and every constant stays
/// a node of its own type without a file.
pub(super) fn mode0_leaves_all(cx: &Loaded) -> Vec<Violation> {
    let o = cx.o;
    let mut v = Vec::new();
    if !o.dir.is_empty() || !o.files.is_empty() || !o.removed.is_empty() {
        v.push(Violation::new(
            "EXW-010",
            "mode 0 chooses no directory, writes and removes nothing",
        ));
    }
    for (name, ty, _) in cx.weights {
        if cx.node(name).is_some_and(|n| altered(n, *ty)) {
            v.push(Violation::new(
                "EXW-010",
                format_args!("{name} must stay a {ty:?} without a file"),
            ));
        }
    }
    v
}

/// EXW-011, EXW-014 (the mode's clause): a constant the profile leaves as it is (upstream's
/// empty tensors) keeps its type and has no file.
pub(super) fn empty_tensors_stay(cx: &Loaded) -> Vec<Violation> {
    let mut v = Vec::new();
    for (name, ty, bytes) in cx.weights {
        if !converts(cx.profile, bytes) && cx.node(name).is_some_and(|n| altered(n, *ty)) {
            v.push(Violation::new(
                mode_clause(cx.mode),
                format_args!(
                    "{name} holds an empty tensor, so it must stay a {ty:?} without a file"
                ),
            ));
        }
    }
    v
}

/// The files a load that went ahead lists and the constants it converts, sorted out once for
/// the checks that read them.
pub(super) struct Written<'a> {
    /// The constants the profile converts, in graph order.
    pub(super) converted: Vec<&'a Weight>,
    /// Upstream's index file, where the load must leave one: listed like every file written
    /// (WGT-005) but holding no weight, it is set apart, and only its presence is judged (its
    /// content is GE's own).
    pub(super) meta: Option<String>,
    /// The files listed, the index set apart.
    pub(super) listed: Vec<&'a WrittenFile>,
    /// `listed` by path.
    pub(super) by_path: BTreeMap<&'a str, &'a WrittenFile>,
    /// The files some node reads.
    pub(super) pointed: BTreeSet<&'a str>,
    /// The files of `listed` some node reads.
    pub(super) read: Vec<&'a WrittenFile>,
}

impl<'a> Written<'a> {
    /// Sorts out the files of the load `cx` in its weight directory `dir`.
    pub(super) fn of(cx: &Loaded<'a>, dir: &str) -> Self {
        let (profile, o) = (cx.profile, cx.o);
        let converted: Vec<&Weight> = cx
            .weights
            .iter()
            .filter(|w| converts(profile, &w.2))
            .collect();
        let meta = meta_path(profile, dir, cx.mode, !converted.is_empty());
        let listed: Vec<&WrittenFile> = o
            .files
            .iter()
            .filter(|f| meta.as_deref() != Some(f.path.as_str()))
            .collect();
        let by_path = listed.iter().map(|&f| (f.path.as_str(), f)).collect();
        let pointed: BTreeSet<&str> = o.nodes.iter().filter_map(|n| n.file.as_deref()).collect();
        let read = listed
            .iter()
            .copied()
            .filter(|f| pointed.contains(f.path.as_str()))
            .collect();
        Written {
            converted,
            meta,
            listed,
            by_path,
            pointed,
            read,
        }
    }
}

/// WGT-005: upstream's index file is listed beside the weights. Listing it is the
/// vocabulary's rule; that it is on disk is GE's, judged by `check_sandbox` under the mode's
/// clause.
pub(super) fn index_listed(files: &Written, o: &WeightsObservation) -> Option<Violation> {
    let meta = files.meta.as_ref()?;
    (files.listed.len() == o.files.len()).then(|| {
        Violation::new(
            "WGT-005",
            format_args!(
                "{meta} must be listed beside the weights: GE keeps its index there whenever it converts a constant"
            ),
        )
    })
}

/// WGT-011: the listed files hold nothing but the weights, so each file that holds anything is
/// some weight's file. An empty file holds nothing else either: mode 2 with nothing to convert
/// may write its combined file empty as well as not at all (EXW-015 says which the suite does).
pub(super) fn idle_files(files: &Written) -> Option<Violation> {
    let idle: Vec<&str> = files
        .listed
        .iter()
        .filter(|f| f.len > 0)
        .map(|f| f.path.as_str())
        .filter(|p| !files.pointed.contains(p))
        .collect();
    (!idle.is_empty()).then(|| {
        Violation::new(
            "WGT-011",
            format_args!(
                "the listed files hold nothing but the weights, yet no FileConstant reads {idle:?}"
            ),
        )
    })
}

// What the text states is judged under its documented clauses (EXW-011, EXW-014: the kind of
// node, the file's directory and name pattern; WGT-011: the bytes read back, against the
// reported hashes where the files are gone); the suite's rules of layout (the hash, sharing,
// offsets and padding) only under the suite's clauses (EXW-012, EXW-013, EXW-015), applied to
// what was observed and compared as contents so that one choice is not blamed under another.

/// Mode 1's checks: each converted constant's in turn, then the files'.
pub(super) fn judge_mode1(cx: &Loaded, files: &Written, dir: &str) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut holder: BTreeMap<String, &[u8]> = BTreeMap::new();
    for &(name, _, bytes) in &files.converted {
        let n = cx.node_of(name);
        let one = OwnFile {
            profile: cx.profile,
            name,
            bytes,
            n: &n,
            dir,
            seen: &holder,
        };
        crate::oracle::run_table(MODE1_CONSTANT, &one, &mut v);
        if let Some(f) = n.file.clone() {
            holder.entry(f).or_insert(bytes);
        }
    }
    v.extend(one_file_per_weight(files));
    v
}

/// What the checks of one converted constant in mode 1 read: its name, bytes and node, the
/// profile and directory, and the bytes each file holds by what the constants before it say
/// (`seen`).
pub(super) struct OwnFile<'c, 'b> {
    pub(super) profile: Profile,
    pub(super) name: &'c str,
    pub(super) bytes: &'b [u8],
    pub(super) n: &'c NodeConversion,
    pub(super) dir: &'c str,
    pub(super) seen: &'c BTreeMap<String, &'b [u8]>,
}

/// A check of one converted constant in mode 1.
pub(super) type OwnFileCheck = Check<fn(&OwnFile<'_, '_>) -> Vec<Violation>>;

/// Mode 1's checks of each converted constant, in order.
pub(super) const MODE1_CONSTANT: &[OwnFileCheck] = &[
    Check {
        clauses: &["EXW-011"],
        name: "mode1::mode1_file_constant",
        run: |c| mode1_file_constant(c.name, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011", "EXW-013"],
        name: "mode1::alone_at_zero",
        run: |c| alone_at_zero(c.name, c.bytes, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-012", "EXW-011"],
        name: "mode1::mode1_file_name",
        run: |c| mode1_file_name(c).into_iter().collect(),
    },
    Check {
        clauses: &["EXW-011"],
        name: "mode1::own_file",
        run: |c| own_file(c.seen, c.bytes, c.n).into_iter().collect(),
    },
];

/// What the checks of one converted constant in mode 2 read: its name, bytes and node, the
/// combined file's path ([`combined_file`]), and what the constants stored before it say:
/// where the engine put each content (`stored`), and so where this one must sit (`at`: the
/// offset of its content if stored before, else where the content before it ends, rounded up
/// ([`next_offset`]); `None` when an offset before it is missing, which is judged there).
pub(super) struct InCombined<'c, 'b> {
    pub(super) name: &'c str,
    pub(super) bytes: &'b [u8],
    pub(super) n: &'c NodeConversion,
    pub(super) path: &'c str,
    pub(super) at: Option<u64>,
    pub(super) stored: &'c BTreeMap<&'b [u8], Option<u64>>,
}

/// A check of one converted constant in mode 2.
pub(super) type InCombinedCheck = Check<fn(&InCombined<'_, '_>) -> Vec<Violation>>;

/// Mode 2's checks of each converted constant, in order.
pub(super) const MODE2_CONSTANT: &[InCombinedCheck] = &[
    Check {
        clauses: &["EXW-020"],
        name: "mode2::stored_once",
        run: |c| {
            stored_once(c.stored, c.name, c.bytes, c.n)
                .into_iter()
                .collect()
        },
    },
    Check {
        clauses: &["EXW-014"],
        name: "mode2::in_combined_file",
        run: |c| in_combined_file(c.name, c.path, c.n).into_iter().collect(),
    },
    Check {
        clauses: &["WGT-011", "EXW-015"],
        name: "mode2::at_its_offset",
        run: |c| {
            at_its_offset(c.name, c.bytes, c.at, c.n)
                .into_iter()
                .collect()
        },
    },
];

/// EXW-011: in mode 1 a converted constant becomes a FileConstant.
pub(super) fn mode1_file_constant(name: &str, n: &NodeConversion) -> Option<Violation> {
    (n.node_type != NodeType::FileConstant)
        .then(|| Violation::new("EXW-011", format_args!("{name} must become a FileConstant")))
}

/// WGT-011, EXW-013: in mode 1 a constant's FileConstant reads its bytes' length
/// ([`wrong_length`]), at offset 0, its file holding its weight alone.
pub(super) fn alone_at_zero(name: &str, bytes: &[u8], n: &NodeConversion) -> Option<Violation> {
    if let Some(wrong) = wrong_length(name, bytes, n) {
        return Some(wrong);
    }
    (n.offset != Some(0) || n.length.is_none()).then(|| {
        Violation::new(
            "EXW-013",
            format_args!(
                "{name}'s file holds its weight alone, at offset 0; found offset {}, length {}",
                shown(n.offset),
                shown(n.length)
            ),
        )
    })
}

/// EXW-011, EXW-012: in mode 1 the file a constant's node reads is a file `weight_<hash>` of
/// the directory (EXW-011), the hash that of the bytes of the weight it holds, spelled per
/// profile ([`weight_hash`], EXW-012).
pub(super) fn mode1_file_name(c: &OwnFile) -> Option<Violation> {
    let (name, dir) = (c.name, c.dir);
    let hash = weight_hash(c.profile, c.bytes);
    match c.n.file.as_deref() {
        Some(f) if is_weight_file(dir, f) => {
            let found = f.strip_prefix(&in_dir(dir, "weight_")).unwrap_or_default();
            (found != hash).then(|| {
                Violation::new(
                    "EXW-012",
                    format_args!(
                        "{name} must point at {} (the SHA-256 of its bytes), found {f}",
                        in_dir(dir, &format!("weight_{hash}"))
                    ),
                )
            })
        }
        other => Some(Violation::new(
            "EXW-011",
            format_args!(
                "{name} must point at a file weight_<hash> in {dir}, found {}",
                shown(other)
            ),
        )),
    }
}

/// EXW-011: in mode 1 each weight has its own file: no file is two different weights' (`holder`:
/// the bytes of the first weight seen in each file, which `judge_mode1` fills as it goes).
pub(super) fn own_file(
    holder: &BTreeMap<String, &[u8]>,
    bytes: &[u8],
    n: &NodeConversion,
) -> Option<Violation> {
    let f = n.file.clone()?;
    match holder.get(&f) {
        Some(held) if *held != bytes => Some(Violation::new(
            "EXW-011",
            format_args!("{f} is the file of two different weights; each weight has its own"),
        )),
        _ => None,
    }
}

/// EXW-013: one file per distinct weight in mode 1: the files the nodes read (`files.read`),
/// each listed once, hold between them each distinct weight the converted nodes hold, one
/// each (compared as contents, length and SHA-256, whatever the files' names).
pub(super) fn one_file_per_weight(files: &Written) -> Option<Violation> {
    let distinct: BTreeSet<&[u8]> = files.converted.iter().map(|w| w.2.as_slice()).collect();
    let mut held: Vec<(u64, String)> = distinct.iter().map(|b| (b.len() as u64, sha(b))).collect();
    held.sort();
    let paths: BTreeSet<&str> = files.read.iter().map(|f| f.path.as_str()).collect();
    let mut read: Vec<(u64, String)> = files
        .read
        .iter()
        .map(|f| (f.len, f.sha256.clone()))
        .collect();
    read.sort();
    (paths.len() != files.read.len() || read != held).then(|| {
        Violation::new(
            "EXW-013",
            format_args!(
                "{} distinct weight(s) need {} file(s), one each; {} reported",
                distinct.len(),
                distinct.len(),
                files.read.len()
            ),
        )
    })
}
