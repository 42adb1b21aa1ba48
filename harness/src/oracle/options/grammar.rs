//! The text's grammar of values: how a value is classified (plain, loose, out of range, malformed) and the documented checks of enumerations, ranges, index lists, pairs and paths.

use super::*;

/// C's `isspace` in the "C" locale.
pub(super) fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A plain decimal number as the text spells values: digits only, no leading zero but `0`.
/// `Some(None)`: well-formed but past 64 bits.
pub(super) fn plain(text: &str) -> Option<Option<u64>> {
    let b = text.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    Some(text.parse().ok())
}

/// A number in a spelling the text does not use but a reader may take: surrounding ASCII white
/// space, a `+`, leading zeros (or a `-` before zeros only). `Some(None)`: past 64 bits.
pub(super) fn loose(text: &str) -> Option<Option<u64>> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'+') => (1, &t[1..]),
        Some(b'-') => (-1, &t[1..]),
        _ => (0, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if sign < 0 && digits.bytes().any(|b| b != b'0') {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.is_empty() {
        return Some(Some(0));
    }
    Some(trimmed.parse().ok())
}

/// C's `strtol` family: leading white space, a sign, as many digits as follow (saturating);
/// whatever comes after is ignored. `None` without a digit.
pub(super) fn strtol(text: &str) -> Option<(bool, u64)> {
    let b = text.as_bytes();
    let mut i = b.iter().take_while(|c| c_space(**c)).count();
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = b[i..].iter().take_while(|c| c.is_ascii_digit());
    let mut n: Option<u64> = None;
    for d in digits {
        n = Some(
            n.unwrap_or(0)
                .saturating_mul(10)
                .saturating_add(u64::from(d - b'0')),
        );
    }
    n.map(|n| (negative, n))
}

/// Reads a value an engine reported, leniently, into its meaning (`None`: unreadable).
pub fn read_reported(grammar: Grammar, text: &str) -> Option<Meaning> {
    match grammar {
        Grammar::Enumeration | Grammar::IntegerRange => loose(text).flatten().map(Meaning::Number),
        Grammar::IndexList => {
            let mut set = BTreeSet::new();
            if !text.trim().is_empty() {
                for item in text.split(',') {
                    set.insert(loose(item).flatten()?);
                }
            }
            Some(Meaning::Indexes(set))
        }
        Grammar::PairList => {
            let mut set = BTreeSet::new();
            if !text.trim().is_empty() {
                for seg in text.split('|') {
                    let (a, b) = seg.split_once(',')?;
                    set.insert((loose(a).flatten()?, loose(b).flatten()?));
                }
            }
            Some(Meaning::Pairs(set))
        }
        Grammar::Path => Some(Meaning::Path(text.to_owned())),
    }
}

/// The default of a row as a meaning.
pub(super) fn default_meaning(row: &OptionSpec) -> Meaning {
    let d = row.default.clone().unwrap_or_default();
    read_reported(row.grammar, &d).unwrap_or(Meaning::Path(d))
}

/// Whether `m` is a value the text allows for `row` (ranges, value sets; lists always).
pub(super) fn allowed(row: &OptionSpec, m: &Meaning) -> bool {
    match (row.grammar, m) {
        (Grammar::Enumeration, Meaning::Number(n)) => {
            row.values.iter().any(|v| v.value == n.to_string())
        }
        (Grammar::IntegerRange, Meaning::Number(n)) => {
            row.min.is_none_or(|min| *n >= min) && row.max.is_none_or(|max| *n <= max)
        }
        (Grammar::IndexList, Meaning::Indexes(_))
        | (Grammar::PairList, Meaning::Pairs(_))
        | (Grammar::Path, Meaning::Path(_)) => true,
        _ => false,
    }
}

/// The clause of `key` numbered `n` (`IFS-001`).
pub(in crate::oracle) fn clause(key: OptionKey, n: u32) -> String {
    format!("{}-{n:03}", key.clause_prefix())
}

/// The clause whose rule says which values `key` takes (`ACP-001`, `IRM-001`, ...).
pub(crate) fn value_clause(key: OptionKey) -> String {
    clause(key, 1)
}

/// The count an index list of `key` is checked against.
pub(super) fn count_of(key: OptionKey, ctx: Context) -> Option<u32> {
    match key {
        OptionKey::InputReuseMemIndexes => ctx.inputs,
        _ => ctx.outputs,
    }
}

/// The documented class of `raw` for `row` in `ctx`.
pub(super) fn classify(row: &OptionSpec, raw: &str, ctx: Context) -> Class {
    let key = row.key;
    match row.grammar {
        Grammar::Enumeration | Grammar::IntegerRange => {
            if raw.is_empty() {
                return Class::Gray {
                    readings: Vec::new(),
                    why: "OPT-003".into(),
                };
            }
            if let Some(n) = plain(raw) {
                return match n {
                    Some(n) if allowed(row, &Meaning::Number(n)) => {
                        Class::Valid(vec![Meaning::Number(n)])
                    }
                    _ => Class::Invalid,
                };
            }
            // A spelling the text does not use (spaces, a sign, leading zeros) of a number it
            // allows may be read either way; a value that is no number, or one it does not
            // allow, must not take effect.
            match loose(raw) {
                Some(Some(n)) if allowed(row, &Meaning::Number(n)) => Class::Gray {
                    readings: vec![Meaning::Number(n)],
                    why: "OPT-003".into(),
                },
                _ => Class::Invalid,
            }
        }
        Grammar::IndexList => classify_indexes(key, raw, count_of(key, ctx)),
        Grammar::PairList => classify_pairs(raw, ctx),
        Grammar::Path => {
            if raw.contains('\0') {
                let cut = raw.split('\0').next().unwrap_or("").to_owned();
                Class::Gray {
                    readings: vec![Meaning::Path(raw.to_owned()), Meaning::Path(cut)],
                    why: "EWD-004".into(),
                }
            } else if raw.is_empty() {
                Class::Gray {
                    readings: vec![Meaning::Path(String::new())],
                    why: "OPT-003".into(),
                }
            } else {
                Class::Valid(vec![Meaning::Path(raw.to_owned())])
            }
        }
    }
}

pub(super) fn classify_indexes(key: OptionKey, raw: &str, count: Option<u32>) -> Class {
    let list_clause = clause(key, 4);
    if raw.is_empty() {
        return Class::Gray {
            readings: vec![Meaning::Indexes(BTreeSet::new())],
            why: "OPT-003".into(),
        };
    }
    let mut gray = false;
    let mut seen = BTreeSet::new();
    let mut all = BTreeSet::new();
    for item in raw.split(',') {
        if item.is_empty() {
            gray = true;
            continue;
        }
        let n = match plain(item) {
            Some(n) => n,
            None => match loose(item) {
                Some(n) => {
                    gray = true;
                    n
                }
                None => {
                    // Not an index at all: nothing in the text says how the list reads.
                    gray = true;
                    continue;
                }
            },
        };
        // An index past 64 bits is out of range of any graph.
        if let Some(n) = n {
            if !seen.insert(n) {
                gray = true;
            }
            all.insert(n);
        }
    }
    let in_range: BTreeSet<u64> = all
        .iter()
        .copied()
        .filter(|&i| count.is_none_or(|c| i < u64::from(c)))
        .collect();
    let dropped = in_range.len() != all.len() || raw.split(',').any(|i| plain(i) == Some(None));
    if gray {
        Class::Gray {
            readings: vec![
                Meaning::Indexes(in_range),
                Meaning::Indexes(BTreeSet::new()),
            ],
            why: list_clause,
        }
    } else if dropped {
        // IRM-003: the invalid indexes do not take effect; whether the others do is open
        // (IRM-005 keeps them).
        Class::Valid(vec![
            Meaning::Indexes(in_range),
            Meaning::Indexes(BTreeSet::new()),
        ])
    } else {
        Class::Valid(vec![Meaning::Indexes(in_range)])
    }
}

pub(super) fn classify_pairs(raw: &str, ctx: Context) -> Class {
    if raw.is_empty() {
        return Class::Gray {
            readings: vec![Meaning::Pairs(BTreeSet::new())],
            why: "OPT-003".into(),
        };
    }
    let mut gray: Option<&'static str> = None;
    let mut all = BTreeSet::new();
    let mut outputs = BTreeSet::new();
    let mut inputs = BTreeSet::new();
    let mut out_of_range = false;
    for seg in raw.split('|') {
        let parts: Vec<&str> = seg.split(',').collect();
        let strict = parts.len() == 2 && plain(parts[0]).is_some() && plain(parts[1]).is_some();
        let read = if parts.len() >= 2 {
            match (loose(parts[0]), loose(parts[1])) {
                (Some(a), Some(b)) => Some((a, b)),
                _ => None,
            }
        } else {
            None
        };
        if !strict {
            gray.get_or_insert("ORI-006");
        }
        let Some((a, b)) = read else { continue };
        let (Some(a), Some(b)) = (a, b) else {
            out_of_range = true;
            continue;
        };
        let fits = |n: u64, c: Option<u32>| c.is_none_or(|c| n < u64::from(c));
        if !fits(a, ctx.inputs) || !fits(b, ctx.outputs) {
            out_of_range = true;
            continue;
        }
        if !all.insert((a, b)) {
            gray.get_or_insert("ORI-004");
            continue;
        }
        if !outputs.insert(b) {
            gray.get_or_insert("ORI-004");
        }
        if !inputs.insert(a) {
            gray.get_or_insert("ORI-005");
        }
    }
    match gray {
        Some(why) => Class::Gray {
            readings: vec![Meaning::Pairs(all), Meaning::Pairs(BTreeSet::new())],
            why: why.into(),
        },
        // ORI-003: a pair out of range does not take effect; the others may.
        None if out_of_range => {
            Class::Valid(vec![Meaning::Pairs(all), Meaning::Pairs(BTreeSet::new())])
        }
        None => Class::Valid(vec![Meaning::Pairs(all)]),
    }
}

/// The strict parse of one value, as the suite's choices read it (documented profile):
/// the meaning and warnings, or the error.
pub(super) fn parse_strict(
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
    if raw.is_empty() {
        return Err(diag("OPT-003"));
    }
    match row.grammar {
        Grammar::Enumeration => strict_enumeration(row, raw, diag),
        Grammar::IntegerRange => strict_range(row, raw, diag),
        Grammar::IndexList => strict_indexes(key, raw, count_of(key, ctx), diag),
        Grammar::PairList => strict_pairs(raw, ctx, diag),
        Grammar::Path => strict_path(raw, diag),
    }
}

/// ACP-001, DRM-001, ... (the value clause of an enumeration): the value is one of the
/// option's values, spelled as the table spells it.
pub(super) fn strict_enumeration(
    row: &OptionSpec,
    raw: &str,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let key = row.key;
    if row.values.iter().any(|v| v.value == raw) {
        Ok((
            read_reported(row.grammar, raw).unwrap_or(Meaning::Number(0)),
            Vec::new(),
        ))
    } else {
        Err(diag(&value_clause(key)))
    }
}

/// OPT-003 and IFS-001 (the value clause of a range): a plain decimal number, within the
/// option's range.
pub(super) fn strict_range(
    row: &OptionSpec,
    raw: &str,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let key = row.key;
    match plain(raw) {
        None => Err(diag("OPT-003")),
        Some(Some(n)) if allowed(row, &Meaning::Number(n)) => Ok((Meaning::Number(n), Vec::new())),
        Some(_) => Err(diag(&value_clause(key))),
    }
}

/// IRM-004 / ORM-004 and IRM-003 / ORM-003: an index list is plain, non-empty, distinct
/// indexes (else an error); an index at or beyond the count is dropped with a warning.
pub(super) fn strict_indexes(
    key: OptionKey,
    raw: &str,
    count: Option<u32>,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let mut seen = BTreeSet::new();
    let mut kept = BTreeSet::new();
    let mut warnings = Vec::new();
    for item in raw.split(',') {
        if item.is_empty() {
            return Err(diag(&clause(key, 4)).subject(Subject::item("")));
        }
        let Some(n) = plain(item) else {
            return Err(diag(&clause(key, 4)).subject(Subject::item(item)));
        };
        if !seen.insert(item) {
            return Err(diag(&clause(key, 4)).subject(index_subject(item)));
        }
        match n {
            Some(i) if count.is_none_or(|c| i < u64::from(c)) && i <= u64::from(u32::MAX) => {
                kept.insert(i);
            }
            _ => warnings.push(diag(&clause(key, 3)).subject(index_subject(item))),
        }
    }
    Ok((Meaning::Indexes(kept), warnings))
}

/// ORI-004 / ORI-005: no two pairs share an output or an input (each pair read by
/// [`strict_pair`], ORI-006 and ORI-003).
pub(super) fn strict_pairs(
    raw: &str,
    ctx: Context,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    let mut pairs = BTreeSet::new();
    let mut outputs = BTreeSet::new();
    let mut inputs = BTreeSet::new();
    for seg in raw.split('|') {
        let (a, b) = strict_pair(seg, ctx, &diag)?;
        if !outputs.insert(b) {
            return Err(diag("ORI-004").subject(Subject::output(b as u32)));
        }
        if !inputs.insert(a) {
            return Err(diag("ORI-005").subject(Subject::input(a as u32)));
        }
        pairs.insert((a, b));
    }
    Ok((Meaning::Pairs(pairs), Vec::new()))
}

/// ORI-006 and ORI-003: one segment of a pair list is two plain numbers, separated by a
/// comma, each in range of the graph's inputs or outputs.
pub(super) fn strict_pair(
    seg: &str,
    ctx: Context,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(u64, u64), Diagnostic> {
    let parts: Vec<&str> = seg.split(',').collect();
    let nums = if parts.len() == 2 {
        match (plain(parts[0]), plain(parts[1])) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        }
    } else {
        None
    };
    let Some((a, b)) = nums else {
        return Err(diag("ORI-006").subject(Subject::pair(seg)));
    };
    let fits = |n: Option<u64>, c: Option<u32>| match (n, c) {
        (Some(n), Some(c)) => n < u64::from(c),
        (Some(n), None) => n <= u64::from(u32::MAX),
        (None, _) => false,
    };
    if !fits(a, ctx.inputs) || !fits(b, ctx.outputs) {
        return Err(diag("ORI-003").subject(Subject::pair(seg)));
    }
    Ok((a.unwrap_or(0), b.unwrap_or(0)))
}

/// EWD-004: a path holding a NUL byte is refused.
pub(super) fn strict_path(
    raw: &str,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    if raw.contains('\0') {
        Err(diag("EWD-004"))
    } else {
        Ok((Meaning::Path(raw.to_owned()), Vec::new()))
    }
}

pub(super) fn index_subject(item: &str) -> Subject {
    match item.parse::<u64>() {
        Ok(n) => Subject::index(n),
        Err(_) => Subject::item(item),
    }
}
