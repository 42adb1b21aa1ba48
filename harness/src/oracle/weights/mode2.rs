//! Mode 2's combined file: the order and offsets the constants are stored at, each weight stored once, and the bytes that placement implies.

use super::*;

/// Mode 2's checks: each converted constant's in turn, in the order the combined file stores
/// them ([`store_order`]), each against where the engine put the ones before it, then the
/// combined file's.
pub(super) fn judge_mode2(cx: &Loaded, files: &Written, dir: &str) -> Vec<Violation> {
    let root = &cx.scenario.root_graph;
    let path = combined_file(cx.profile, dir, root)
        .unwrap_or_else(|| in_dir(dir, &combined_name(cx.profile, root)));
    let planted = combined_base(cx.profile, cx.scenario, &path);
    let base = planted.len() as u64;
    let mut v = Vec::new();
    // Where the engine put each distinct content (EXW-020: stored once); where each lies by
    // what the engine says, in the order stored; where the next distinct content goes (EXW-015).
    let mut engine_at: BTreeMap<&[u8], Option<u64>> = BTreeMap::new();
    let mut placed: Vec<(&[u8], Option<u64>)> = Vec::new();
    let mut next = Some(base);
    for (name, _, bytes) in store_order(cx.profile, &files.converted) {
        let bytes = bytes.as_slice();
        let n = cx.node_of(name);
        let at = match placed.iter().find(|p| p.0 == bytes) {
            Some(p) => p.1,
            None => next,
        };
        let one = InCombined {
            name,
            bytes,
            n: &n,
            path: &path,
            at,
            stored: &engine_at,
        };
        crate::oracle::run_table(MODE2_CONSTANT, &one, &mut v);
        if !engine_at.contains_key(bytes) {
            engine_at.insert(bytes, n.offset);
            // A node reading another length than its content's says nothing of where the
            // content lies (WGT-011 judges it): the content is taken where the rules put it.
            let lies = match wrong_length(name, bytes, &n) {
                Some(_) => at,
                None => n.offset,
            };
            placed.push((bytes, lies));
            next = lies.and_then(|o| next_offset(base, o, bytes.len() as u64));
        }
    }
    if !files.converted.is_empty() {
        let implied = implied_file(cx.profile, planted, &placed);
        v.extend(combined_file_holds(files, &path, implied));
    }
    v
}

/// EXW-015 (and its upstream entry): the order the combined file stores the converted
/// constants in: graph order; upstream, by node name, bytewise (a stable sort; the names are
/// unique).
pub(super) fn store_order<'a>(profile: Profile, converted: &[&'a Weight]) -> Vec<&'a Weight> {
    let mut stored = converted.to_vec();
    if profile == Profile::Upstream {
        stored.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    }
    stored
}

/// EXW-015's upstream entry: upstream opens the combined file `path` for appending, so a file
/// the setup planted there (where the write lands, [`landing`]) stays, its bytes first and its
/// length the base of every offset; documented, and where nothing is planted, nothing.
pub(super) fn combined_base(profile: Profile, scenario: &WeightsScenario, path: &str) -> Vec<u8> {
    match profile {
        Profile::Upstream => {
            planted_file(scenario, &landing(profile, &scenario.setup, path)).unwrap_or_default()
        }
        Profile::Documented => Vec::new(),
    }
}

/// EXW-015: where the next distinct content goes in the combined file: the end of the content
/// before it (stored at `at`, `len` bytes long) rounded up to a multiple of [`ALIGN`] from the
/// base `base`; `None` past the offsets a file can have, or for content before the base.
pub(super) fn next_offset(base: u64, at: u64, len: u64) -> Option<u64> {
    let end = at.checked_add(len)?;
    base.checked_add(end.checked_sub(base)?.div_ceil(ALIGN).checked_mul(ALIGN)?)
}

/// Reads the observation: the bytes of the combined file that the placement observed implies,
/// `placed` (each distinct content where the engine's nodes say it lies, in the order stored,
/// [`store_order`]), after `base` (what a file planted at its path held, upstream:
/// [`combined_base`]): each content at its offset, zeros between, the file ending where the
/// last content stored does, upstream padded to a multiple of [`ALIGN`] from the base
/// (EXW-015's upstream entry). `None` when an offset is missing or puts a content past the
/// end a file laid out by the rules could reach (the base and each distinct content rounded up
/// to [`ALIGN`]): such a placement already broke EXW-015 at that offset, and the bytes built
/// stay within what the scenario holds, whatever offsets a backend reports.
pub(super) fn implied_file(
    profile: Profile,
    base: Vec<u8>,
    placed: &[(&[u8], Option<u64>)],
) -> Option<Vec<u8>> {
    let start = base.len() as u64;
    let cap = placed
        .iter()
        .try_fold(start, |end, (bytes, _)| {
            end.checked_add((bytes.len() as u64).div_ceil(ALIGN).checked_mul(ALIGN)?)
        })?
        .min(crate::sandbox::MAX_SANDBOX_FILE);
    let mut buffer = base;
    let mut end = start;
    for &(bytes, at) in placed {
        let at = at?;
        end = at.checked_add(bytes.len() as u64).filter(|&e| e <= cap)?;
        if (buffer.len() as u64) < end {
            buffer.resize(usize::try_from(end).ok()?, 0);
        }
        let from = usize::try_from(at).ok()?;
        buffer[from..from + bytes.len()].copy_from_slice(bytes);
    }
    if profile == Profile::Upstream {
        end = next_offset(start, end, 0).filter(|&e| e <= cap)?;
    }
    buffer.resize(usize::try_from(end).ok()?, 0);
    Some(buffer)
}

/// EXW-020: in mode 2 the same bytes are stored once: a constant holding the bytes of one
/// checked before sits where that one does (`engine_at`: where the engine put each content,
/// which `judge_mode2` fills as it goes).
pub(super) fn stored_once(
    engine_at: &BTreeMap<&[u8], Option<u64>>,
    name: &str,
    bytes: &[u8],
    n: &NodeConversion,
) -> Option<Violation> {
    match engine_at.get(bytes) {
        Some(seen) if *seen != n.offset => Some(Violation::new(
            "EXW-020",
            format_args!(
                "{name} holds the same bytes as another weight, stored again at offset {}, not at {}",
                shown(n.offset),
                shown(*seen)
            ),
        )),
        _ => None,
    }
}

/// EXW-014: in mode 2 a converted constant becomes a FileConstant in the combined file `path`.
pub(super) fn in_combined_file(name: &str, path: &str, n: &NodeConversion) -> Option<Violation> {
    (n.node_type != NodeType::FileConstant || n.file.as_deref() != Some(path)).then(|| {
        Violation::new(
            "EXW-014",
            format_args!("{name} must become a FileConstant in {path}"),
        )
    })
}

/// WGT-011, EXW-015: in mode 2 a constant's FileConstant reads its bytes' length
/// ([`wrong_length`]), at the offset `at` the rules give it after what the engine did before
/// it (unchecked when that is unknown: the offset missing before it is judged there).
pub(super) fn at_its_offset(
    name: &str,
    bytes: &[u8],
    at: Option<u64>,
    n: &NodeConversion,
) -> Option<Violation> {
    if let Some(wrong) = wrong_length(name, bytes, n) {
        return Some(wrong);
    }
    let misplaced = at.is_some_and(|at| n.offset != Some(at));
    (misplaced || n.length.is_none()).then(|| {
        Violation::new(
            "EXW-015",
            format_args!(
                "{name} must sit at offset {}, length {}; found offset {}, length {}",
                shown(at),
                bytes.len(),
                shown(n.offset),
                shown(n.length)
            ),
        )
    })
}

/// EXW-014, EXW-015: mode 2 reports the combined file `path` it writes (EXW-014), its length
/// and SHA-256 those of `implied`, the bytes the placement observed implies ([`implied_file`],
/// EXW-015).
pub(super) fn combined_file_holds(
    files: &Written,
    path: &str,
    implied: Option<Vec<u8>>,
) -> Option<Violation> {
    let Some(f) = files.by_path.get(path) else {
        return Some(Violation::new(
            "EXW-014",
            format_args!("mode 2 writes {path}, which is not reported"),
        ));
    };
    match implied {
        Some(b) if (f.len, f.sha256.as_str()) == (b.len() as u64, sha(&b).as_str()) => None,
        _ => Some(Violation::new(
            "EXW-015",
            format_args!(
                "{path} holds {} bytes, where the placement observed makes {}",
                f.len,
                shown(implied.map(|b| b.len()))
            ),
        )),
    }
}
