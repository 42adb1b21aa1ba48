//! GE's own parsing at the pinned commit, where the upstream profile departs from the text: index lists, pairs, the order GE reads levels in.

use super::*;

/// The upstream parse of one value (the `upstream` entries of the value clauses and of
/// OPT-003): the meaning and warnings, or the error.
pub(super) fn parse_upstream(
    row: &OptionSpec,
    level: Level,
    raw: &str,
    ctx: Context,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let key = row.key;
    let diag = |c: &str| {
        Diagnostic::new(c, "")
            .key(key.as_str())
            .level(level)
            .value(raw)
    };
    let switch = || Meaning::Number(u64::from(raw == "1"));
    match key {
        // ACP-001 and EXW-001 upstream: empty reads as 0, other values fail at compile (OPT-011).
        OptionKey::AtomicCleanPolicy => match raw {
            "" | "0" => Ok((Meaning::Number(0), Vec::new())),
            "1" => Ok((Meaning::Number(1), Vec::new())),
            _ => Err(diag("ACP-001")),
        },
        OptionKey::ExternalWeight => match raw {
            "" | "0" => Ok((Meaning::Number(0), Vec::new())),
            "1" => Ok((Meaning::Number(1), Vec::new())),
            "2" => Ok((Meaning::Number(2), Vec::new())),
            _ => Err(diag("EXW-001")),
        },
        // DRM-001 upstream: at compile the value found is checked; an empty graph value passes
        // as unset (reuse stays on).
        OptionKey::DisableReuseMemory if level == Level::Graph => match raw {
            "" | "0" => Ok((Meaning::Number(0), Vec::new())),
            "1" => Ok((Meaning::Number(1), Vec::new())),
            _ => Err(diag("DRM-001")),
        },
        // RZC-001, IBC-001 upstream: never validated, exactly `1` turns it on.
        OptionKey::ReuseZeroCopyMemory | OptionKey::InputBatchCpy => Ok((switch(), Vec::new())),
        // SMP-001 upstream: `1` is `2`, anything but 1 to 4 is 0.
        OptionKey::StaticMemoryPolicy => Ok((
            Meaning::Number(match raw {
                "1" | "2" => 2,
                "3" => 3,
                "4" => 4,
                _ => 0,
            }),
            Vec::new(),
        )),
        // IFS-001 upstream: never an error; clamped with a warning above the maximum.
        OptionKey::InputFusionSize => match strtol(raw) {
            None | Some((true, _)) => Ok((Meaning::Number(0), Vec::new())),
            Some((false, n)) if n > fusion_clamp() => {
                Ok((Meaning::Number(fusion_clamp()), vec![diag("IFS-001")]))
            }
            Some((false, n)) => Ok((Meaning::Number(n), Vec::new())),
        },
        // IRM-005 / ORM-005 upstream: a dynamic-shape graph never reads the list (its form is
        // still checked).
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes => {
            let read = ctx.shape == ShapeKind::Static;
            upstream_indexes(key, raw, count_of(key, ctx), read, diag)
        }
        OptionKey::OutputReuseInputMemIndexes => upstream_pairs(raw, ctx, level, diag),
        // OPT-003 and EWD-004 upstream: never validated (empty counts as not set, a NUL byte
        // is kept).
        OptionKey::ExternalWeightDir => Ok((Meaning::Path(raw.to_owned()), Vec::new())),
        _ => parse_strict(row, level, raw, ctx),
    }
}

/// IRM-004 / ORM-004 upstream: commas without trimming; each item a 32-bit integer whose
/// characters after the first are digits; negative or repeated indexes and empty items are
/// errors; an index not below the count is dropped with a warning.
pub(super) fn upstream_indexes(
    key: OptionKey,
    raw: &str,
    count: Option<u32>,
    read: bool,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let bad = || diag(&clause(key, 4));
    if raw.is_empty() {
        return Err(bad().subject(Subject::item("")));
    }
    let mut seen = BTreeSet::new();
    let mut kept = BTreeSet::new();
    let mut warnings = Vec::new();
    for item in raw.split(',') {
        let b = item.as_bytes();
        let Some((first, rest)) = b.split_first() else {
            return Err(bad().subject(Subject::item("")));
        };
        let shape_ok = rest.iter().all(u8::is_ascii_digit)
            && (first.is_ascii_digit() || c_space(*first) || *first == b'+' || *first == b'-');
        let value = strtol(item).and_then(|(neg, n)| {
            let v = i64::try_from(n).ok()?;
            let v = if neg { -v } else { v };
            i32::try_from(v).ok().map(i64::from)
        });
        let Some(v) = value.filter(|_| shape_ok) else {
            return Err(bad().subject(Subject::item(item)));
        };
        if v < 0 {
            return Err(bad().subject(Subject::item(item)));
        }
        let v = v.unsigned_abs();
        if !seen.insert(v) {
            return Err(bad().subject(Subject::index(v)));
        }
        if !read {
            continue;
        }
        if count.is_none_or(|c| v < u64::from(c)) {
            kept.insert(v);
        } else {
            warnings.push(diag(&clause(key, 3)).subject(Subject::index(v)));
        }
    }
    Ok((Meaning::Indexes(kept), warnings))
}

/// ORI-003 / ORI-006 upstream: segments without a comma are skipped silently; a side holding
/// `-`, or a pair that does not read as two 64-bit numbers (`std::stoul`), is skipped with a
/// warning; duplicates stay; at graph level an index of a pair that survives out of range is an
/// error (other levels are only checked at run time, ORI-002's upstream entry).
pub(super) fn upstream_pairs(
    raw: &str,
    ctx: Context,
    level: Level,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let mut warnings = Vec::new();
    let mut pairs = Vec::new();
    for seg in raw.split('|') {
        let Some((left, right)) = seg.split_once(',') else {
            continue;
        };
        if left.contains('-') || right.contains('-') {
            warnings.push(diag("ORI-006").subject(Subject::pair(seg)));
            continue;
        }
        // stoul: whitespace, an optional sign (a `-` never gets here), digits; past 2^64 - 1
        // it throws. `strtol` saturates, so an overflow is told by the digits' own value.
        let read = |side: &str| match strtol(side) {
            Some((false, n)) if n < u64::MAX || fits_u64(side) => Some(n),
            _ => None,
        };
        let (Some(a), Some(b)) = (read(left), read(right)) else {
            warnings.push(diag("ORI-006").subject(Subject::pair(seg)));
            continue;
        };
        pairs.push((a, b, seg));
    }
    for &(a, b, seg) in pairs.iter().filter(|_| level == Level::Graph) {
        let outside = ctx.inputs.is_some_and(|c| a >= u64::from(c))
            || ctx.outputs.is_some_and(|c| b >= u64::from(c));
        if outside {
            return Err(diag("ORI-003").subject(Subject::pair(seg)));
        }
    }
    Ok((
        Meaning::Pairs(pairs.into_iter().map(|(a, b, _)| (a, b)).collect()),
        warnings,
    ))
}

/// Whether the digits of `side` (after whitespace and a sign) spell a number below 2^64.
pub(super) fn fits_u64(side: &str) -> bool {
    let digits: String = side
        .trim_start_matches(|c: char| c.is_ascii() && c_space(c as u8))
        .trim_start_matches('+')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse::<u64>().is_ok()
}

/// Where GE refuses the value `d` names, as (step, rank): the step is initialisation (0),
/// session creation (1), graph addition (2), compilation (3) or build (4); the rank orders the
/// checks across all steps (OPT-011's upstream entry). Session creation checks the session value
/// over the global one; compilation and build check the value their lookup finds.
pub(super) fn ge_order(d: &Diagnostic) -> (u8, u8) {
    use OptionKey::*;
    let Some(key) = d.key.as_deref().and_then(|k| k.parse::<OptionKey>().ok()) else {
        return (u8::MAX, u8::MAX);
    };
    match (key, d.level) {
        (FeatureBaseRefreshable, Some(Level::Global)) => (0, 0),
        (DisableReuseMemory, Some(Level::Global | Level::Session)) => (1, 1),
        (FeatureBaseRefreshable, Some(Level::Session)) => (1, 2),
        (FeatureBaseRefreshable, _) => (2, 3),
        (InputReuseMemIndexes, _) => (2, 4),
        (OutputReuseMemIndexes, _) => (2, 5),
        (OutputReuseInputMemIndexes, _) => (2, 6),
        (DisableReuseMemory, _) => (3, 7),
        (AtomicCleanPolicy, _) => (3, 8),
        _ => (4, 9),
    }
}

/// The step at which GE refuses the value `d` names ([`ge_order`]): 0 and 1 before any graph
/// (initialisation, session creation), 2 at the graph's addition, 3 and 4 at its compilation and
/// build (SES-017's upstream entry).
pub(in crate::oracle) fn ge_step(d: &Diagnostic) -> u8 {
    ge_order(d).0
}

/// The step that gives the level warnings (OPT-002) of values set at `level`, before its own
/// checks: the global list at initialisation, the session list at session creation, the graph
/// list at graph addition.
pub(super) fn step_of_level(level: Level) -> u8 {
    match level {
        Level::Global => 0,
        Level::Session => 1,
        Level::Graph => 2,
    }
}

/// Under the upstream profile, whether a value set where the documentation does not list it is
/// used anyway (OPT-002's upstream entry): all but the two index lists, which only the graph's
/// own map feeds (OPT-010's upstream entry; the pairs are read through the context).
pub(super) fn upstream_uses(key: OptionKey) -> bool {
    !matches!(
        key,
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes
    )
}

/// Under the upstream profile, whether a value is read at all: for atomicCleanPolicy and
/// externalWeight only the one GE's lookup finds (graph, then session, then global); for
/// disableReuseMemory a global value under a session one is never checked (ACP-001, EXW-001,
/// DRM-001's upstream entries).
pub(super) fn upstream_reads(key: OptionKey, level: Level, maps: &OptionMaps) -> bool {
    let set = |l: Level| maps.at(l).contains_key(key.as_str());
    match key {
        OptionKey::AtomicCleanPolicy | OptionKey::ExternalWeight => match level {
            Level::Global => !set(Level::Session) && !set(Level::Graph),
            Level::Session => !set(Level::Graph),
            Level::Graph => true,
        },
        OptionKey::DisableReuseMemory => level != Level::Global || !set(Level::Session),
        _ => true,
    }
}
