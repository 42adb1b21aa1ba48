//! The options oracle: the harness's own reading of the options table, written apart from the
//! reference so that a bug in the reference cannot hide from its judge.
//!
//! For the option maps of any scenario it works out, key by key:
//! - the **strict** outcome: what the suite's choices make of the maps (the reference-defined
//!   clauses: precedence OPT-001, levels OPT-002, spellings OPT-003, rejection OPT-005, dropped
//!   indexes IRM-005, ...), or under the upstream profile what GE does; with the errors and
//!   warnings those choices call for;
//! - the **permitted** outcomes: every outcome the source text allows (under the upstream
//!   profile only the strict one, GE's behaviour being a fact).
//!
//! The options capability is judged against both ([`judge`]): an outcome the text does not
//! permit breaks a documented clause; a permitted one that is not the strict one is a deviation
//! from the suite's choices. The other oracles take the values in force from here
//! ([`Reading::values`]) and, at level `documented`, try the permitted alternatives too
//! ([`Reading::alternatives`]) before blaming a documented clause.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::tables::{Grammar, OptionSpec};
use ge_spec::vocab::{Effective, OptionsObservation, OptionsScenario};
use ge_spec::{
    Diagnostic, Level, OptionKey, OptionMaps, Product, Profile, RunMode, ShapeKind, Source, Spec,
    Subject,
};

use super::diagnostics::{self, Expected};
use super::{Called, Entry, Phase, Violation};

/// What the options layer knows of the graph and the run. Counts a capability does not know are
/// `None`, and the range checks that need them are skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Number of graph inputs.
    pub inputs: Option<u32>,
    /// Number of graph outputs.
    pub outputs: Option<u32>,
    /// Static or dynamic shapes.
    pub shape: ShapeKind,
    /// How the graph is run.
    pub run_mode: RunMode,
    /// The product.
    pub product: Product,
}

impl Context {
    /// The context of a capability that knows no counts: a static-shape graph run
    /// asynchronously on the default product (memory, session and weights scenarios carry no
    /// run mode or product; the vocabulary fixes these).
    pub const fn plain() -> Self {
        Context {
            inputs: None,
            outputs: None,
            shape: ShapeKind::Static,
            run_mode: RunMode::Async,
            product: Product::Ascend950Pr,
        }
    }

    /// The context of an options scenario.
    pub fn of(scenario: &OptionsScenario) -> Self {
        Context {
            inputs: Some(scenario.graph.inputs),
            outputs: Some(scenario.graph.outputs),
            shape: scenario.graph.shape,
            run_mode: scenario.run_mode,
            product: scenario.product,
        }
    }
}

/// What a value means, whatever its spelling.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Meaning {
    /// A number (enumerations and ranges).
    Number(u64),
    /// A set of indexes.
    Indexes(BTreeSet<u64>),
    /// A set of (input, output) pairs.
    Pairs(BTreeSet<(u64, u64)>),
    /// A path, verbatim (the empty path: not set).
    Path(String),
}

impl Meaning {
    /// The canonical spelling (OPT-007).
    pub fn canonical(&self) -> String {
        match self {
            Meaning::Number(n) => n.to_string(),
            Meaning::Indexes(s) => s.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
            Meaning::Pairs(s) => s
                .iter()
                .map(|(i, o)| format!("{i},{o}"))
                .collect::<Vec<_>>()
                .join("|"),
            Meaning::Path(p) => p.clone(),
        }
    }
}

/// The outcome of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// In force with this meaning, taken from there.
    Accepted(Meaning, Source),
    /// Rejected: no value in force.
    Rejected,
}

/// How the text classes one value set at a level where the option takes effect.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Class {
    /// A value the text allows, spelled as the text spells values: it takes effect, with these
    /// meanings (more than one where the text leaves the reading open, the strict first).
    Valid(Vec<Meaning>),
    /// A spelling or form the text does not settle: any reading in `readings` (or any allowed
    /// value, for the options capability) may take effect, or none. `why` is the suite's clause
    /// that settles it.
    Gray { readings: Vec<Meaning>, why: String },
    /// A value the text rules out: it must not take effect.
    Invalid,
}

/// Everything the oracle knows of one key.
#[derive(Debug, Clone)]
pub struct KeyReading {
    /// The key.
    pub key: OptionKey,
    /// The outcome the suite's choices (or, upstream, GE) give.
    pub strict: Outcome,
    /// The suite's choices (clauses) that decided the strict outcome.
    pub strict_because: Vec<String>,
    /// The outcomes the text permits, the strict one included.
    permitted: Permitted,
    /// Per level set where the option takes effect, the suite's clause that settles a spelling
    /// or form the text leaves open there (`OPT-003`, `IRM-004`, ...).
    gray: BTreeMap<Level, String>,
    /// The suite's clause that keeps part of a value the text voids in part (`IRM-005`), or
    /// `OPT-005` where the suite rejects the whole (pairs).
    partial: Option<String>,
    /// The option is set at a level where it does not take effect.
    unlisted: bool,
    /// A condition outside the maps is not met (OPT-008): the value cannot take effect, so an
    /// engine may refuse it as well as keep it in force.
    restricted: bool,
}

/// The outcomes the text permits for one key.
#[derive(Debug, Clone)]
struct Permitted {
    /// Accepted meanings by level (a level may carry several readings).
    accepted: Vec<(Meaning, Source)>,
    /// Any allowed value may be in force from these levels (gray spellings).
    any_from: Vec<Level>,
    /// For index and pair lists: any subset of these readings may be in force from the level.
    subsets: Vec<(Meaning, Level)>,
    /// Rejection is permitted.
    rejected: bool,
    /// Only the strict outcome is permitted (the upstream profile).
    strict_only: bool,
}

/// The oracle's reading of the option maps of one scenario.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The profile read under.
    pub profile: Profile,
    /// Per key.
    pub keys: BTreeMap<OptionKey, KeyReading>,
    /// The strict errors.
    pub errors: Vec<Diagnostic>,
    /// Errors that may be given or not: upstream, the refusals after GE's first failing check
    /// (OPT-011's upstream entry).
    pub optional_errors: Vec<Diagnostic>,
    /// The strict warnings.
    pub warnings: Vec<Diagnostic>,
    /// Warnings a MAY clause permits (given or not).
    pub optional_warnings: Vec<Diagnostic>,
    /// Keys outside the twelve, sorted.
    pub passthrough: Vec<String>,
}

/// The typed values in force (a rejected key holds its default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    /// `ge.exec.atomicCleanPolicy == 1`.
    pub separate_atomic_clean: bool,
    /// `ge.exec.disableReuseMemory == 1`.
    pub disable_reuse: bool,
    /// `ge.exec.input_fusion_size`, bytes.
    pub fusion_size: u64,
    /// `ge.exec.inputReuseMemIndexes` in force.
    pub input_reuse: BTreeSet<u64>,
    /// `ge.exec.reuseZeroCopyMemory == 1`.
    pub reuse_zero_copy: bool,
    /// `ge.exec.staticMemoryPolicy`.
    pub static_memory_policy: u64,
    /// `ge.exec.outputReuseInputMemIndexes` in force.
    pub output_reuse_input: BTreeSet<(u64, u64)>,
    /// `ge.exec.outputReuseMemIndexes` in force.
    pub output_reuse: BTreeSet<u64>,
    /// `ge.externalWeight`.
    pub external_weight: u64,
    /// `ge.externalWeightDir` (`None`: not set).
    pub external_weight_dir: Option<String>,
    /// `ge.inputBatchCpy == 1`.
    pub batch_copy: bool,
    /// `ge.featureBaseRefreshable == 1`.
    pub feature_base_refreshable: bool,
}

/// One way of reading the options the text allows, for the oracles of the other capabilities.
#[derive(Debug, Clone)]
pub struct Alternative {
    /// The values in force.
    pub values: Values,
    /// True when some key is rejected in this reading.
    pub rejected: bool,
    /// The suite's choices this reading departs from (empty for the strict reading).
    pub departs: Vec<String>,
}

/// One outcome tried for a key (`None`: rejected), with the suite's choices it departs from.
type Choice = (Option<Meaning>, Vec<String>);

/// The largest fusion threshold.
const MAX_FUSION: u64 = 33_554_432;

/// At most this many alternatives are tried.
const MAX_ALTERNATIVES: usize = 64;

/// C's `isspace` in the "C" locale.
fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A plain decimal number as the text spells values: digits only, no leading zero but `0`.
/// `Some(None)`: well-formed but past 64 bits.
fn plain(text: &str) -> Option<Option<u64>> {
    let b = text.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    Some(text.parse().ok())
}

/// A number in a spelling the text does not use but a reader may take: surrounding ASCII white
/// space, a `+`, leading zeros (or a `-` before zeros only). `Some(None)`: past 64 bits.
fn loose(text: &str) -> Option<Option<u64>> {
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
fn strtol(text: &str) -> Option<(bool, u64)> {
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
fn default_meaning(row: &OptionSpec) -> Meaning {
    let d = row.default.clone().unwrap_or_default();
    read_reported(row.grammar, &d).unwrap_or(Meaning::Path(d))
}

/// Whether `m` is a value the text allows for `row` (ranges, value sets; lists always).
fn allowed(row: &OptionSpec, m: &Meaning) -> bool {
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
pub(super) fn clause(key: OptionKey, n: u32) -> String {
    format!("{}-{n:03}", key.clause_prefix())
}

/// The clause whose rule says which values `key` takes (`ACP-001`, `IRM-001`, ...).
pub(crate) fn value_clause(key: OptionKey) -> String {
    clause(key, 1)
}

/// The count an index list of `key` is checked against.
fn count_of(key: OptionKey, ctx: Context) -> Option<u32> {
    match key {
        OptionKey::InputReuseMemIndexes => ctx.inputs,
        _ => ctx.outputs,
    }
}

/// The documented class of `raw` for `row` in `ctx`.
fn classify(row: &OptionSpec, raw: &str, ctx: Context) -> Class {
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

fn classify_indexes(key: OptionKey, raw: &str, count: Option<u32>) -> Class {
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

fn classify_pairs(raw: &str, ctx: Context) -> Class {
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
fn parse_strict(
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
fn strict_enumeration(
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
fn strict_range(
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
fn strict_indexes(
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
fn strict_pairs(
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
fn strict_pair(
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
fn strict_path(
    raw: &str,
    diag: impl Fn(&str) -> Diagnostic,
) -> Result<(Meaning, Vec<Diagnostic>), Diagnostic> {
    if raw.contains('\0') {
        Err(diag("EWD-004"))
    } else {
        Ok((Meaning::Path(raw.to_owned()), Vec::new()))
    }
}

fn index_subject(item: &str) -> Subject {
    match item.parse::<u64>() {
        Ok(n) => Subject::index(n),
        Err(_) => Subject::item(item),
    }
}

/// The upstream parse of one value (the `upstream` entries of the value clauses and of
/// OPT-003): the meaning and warnings, or the error.
fn parse_upstream(
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
            Some((false, n)) if n > MAX_FUSION => {
                Ok((Meaning::Number(MAX_FUSION), vec![diag("IFS-001")]))
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
fn upstream_indexes(
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
fn upstream_pairs(
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
fn fits_u64(side: &str) -> bool {
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
fn ge_order(d: &Diagnostic) -> (u8, u8) {
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
pub(super) fn ge_step(d: &Diagnostic) -> u8 {
    ge_order(d).0
}

/// The step that gives the level warnings (OPT-002) of values set at `level`, before its own
/// checks: the global list at initialisation, the session list at session creation, the graph
/// list at graph addition.
fn step_of_level(level: Level) -> u8 {
    match level {
        Level::Global => 0,
        Level::Session => 1,
        Level::Graph => 2,
    }
}

/// Under the upstream profile, whether a value set where the documentation does not list it is
/// used anyway (OPT-002's upstream entry): all but the two index lists, which only the graph's
/// own map feeds (OPT-010's upstream entry; the pairs are read through the context).
fn upstream_uses(key: OptionKey) -> bool {
    !matches!(
        key,
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes
    )
}

/// Under the upstream profile, whether a value is read at all: for atomicCleanPolicy and
/// externalWeight only the one GE's lookup finds (graph, then session, then global); for
/// disableReuseMemory a global value under a session one is never checked (ACP-001, EXW-001,
/// DRM-001's upstream entries).
fn upstream_reads(key: OptionKey, level: Level, maps: &OptionMaps) -> bool {
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

/// OPT-004: the keys outside the twelve, at any level, sorted and each once: they pass through.
fn passthrough(maps: &OptionMaps) -> Vec<String> {
    let mut passthrough: BTreeSet<String> = BTreeSet::new();
    for level in Level::ALL {
        for key in maps.at(level).keys() {
            if key.parse::<OptionKey>().is_err() {
                passthrough.insert(key.clone());
            }
        }
    }
    passthrough.into_iter().collect()
}

/// OPT-002: the warning for a value set at a level where it has no effect (or, upstream, where
/// GE's lists leave it out).
fn level_warning(key: OptionKey, level: Level, raw: &str) -> Diagnostic {
    Diagnostic::new("OPT-002", "")
        .key(key.as_str())
        .level(level)
        .value(raw)
}

/// What [`Reading::new`] gathers of one key, walking its levels from global to graph: the
/// makings of the strict outcome, what the text permits, and the key's diagnostics in the order
/// they are found.
struct KeyWalk<'a> {
    /// The key's row.
    row: &'a OptionSpec,
    /// Read under the upstream profile.
    upstream: bool,
    /// The suite's choices that decide the strict outcome.
    strict_because: Vec<String>,
    /// The value of the last level read without an error: meaning, level, warnings.
    winner: Option<(Meaning, Level, Vec<Diagnostic>)>,
    /// Some level's value was refused.
    rejected: bool,
    /// How many levels set the option where it is used.
    listed_set: usize,
    /// The outcomes the text permits.
    permitted: Permitted,
    /// Some level where the option is used holds a value the text allows whole.
    any_valid_listed: bool,
    /// See [`KeyReading::gray`].
    gray: BTreeMap<Level, String>,
    /// See [`KeyReading::partial`].
    partial: Option<String>,
    /// See [`KeyReading::unlisted`].
    unlisted: bool,
    /// The strict errors.
    errors: Vec<Diagnostic>,
    /// The strict warnings.
    warnings: Vec<Diagnostic>,
    /// The warnings a MAY clause permits.
    optional_warnings: Vec<Diagnostic>,
}

impl<'a> KeyWalk<'a> {
    fn new(row: &'a OptionSpec, upstream: bool) -> Self {
        KeyWalk {
            row,
            upstream,
            strict_because: Vec::new(),
            winner: None,
            rejected: false,
            listed_set: 0,
            permitted: Permitted {
                accepted: Vec::new(),
                any_from: Vec::new(),
                subsets: Vec::new(),
                rejected: false,
                strict_only: upstream,
            },
            any_valid_listed: false,
            gray: BTreeMap::new(),
            partial: None,
            unlisted: false,
            errors: Vec::new(),
            warnings: Vec::new(),
            optional_warnings: Vec::new(),
        }
    }

    /// The value `raw` set at `level`, through each step in turn: the level advice, whether the
    /// level uses it, how the text classes it, how the suite (or GE) reads it.
    fn level(&mut self, level: Level, raw: &str, maps: &OptionMaps, ctx: Context) {
        self.batch_copy_advice(level);
        if !self.used_at(level, raw) {
            return;
        }
        self.listed_set += 1;
        match classify(self.row, raw, ctx) {
            Class::Valid(meanings) => self.valid(level, meanings),
            Class::Gray { readings, why } => self.gray(level, readings, why),
            Class::Invalid => self.invalid(),
        }
        self.parse(level, raw, maps, ctx);
    }

    /// IBC-006: the text advises against setting inputBatchCpy at the global or graph level;
    /// an engine may say so (an optional warning).
    fn batch_copy_advice(&mut self, level: Level) {
        let key = self.row.key;
        if key == OptionKey::InputBatchCpy && level != Level::Session {
            self.optional_warnings.push(
                Diagnostic::new("IBC-006", "")
                    .key(key.as_str())
                    .level(level),
            );
        }
    }

    /// OPT-002 and OPT-010's upstream entry: a value set where the option does not take effect
    /// is ignored with a warning (upstream: used with one, but for the two index lists, whose
    /// session value GE drops without a word). Returns whether the value goes on to be read.
    fn used_at(&mut self, level: Level, raw: &str) -> bool {
        let key = self.row.key;
        let listed = self.row.takes_effect_at(level);
        let used = listed || (self.upstream && upstream_uses(key));
        let warns_upstream = self.upstream
            && used
            && ((!listed && key != OptionKey::AtomicCleanPolicy)
                || key == OptionKey::ExternalWeightDir);
        if !used && self.upstream && level == Level::Session {
            // OPT-010 upstream: GE's session list names the two index lists, so a
            // session value is dropped without a word.
            return false;
        }
        if !used {
            // OPT-002: ignored, with a warning; the text only says it has no effect.
            self.warnings.push(level_warning(key, level, raw));
            self.strict_because.push("OPT-002".into());
            self.permitted.rejected = true;
            self.unlisted = true;
            return false;
        }
        if warns_upstream {
            self.warnings.push(level_warning(key, level, raw));
        }
        true
    }

    /// IRM-005 / ORM-005, and OPT-005 for pairs: a value the text allows takes effect. Where the
    /// text voids some indexes or pairs, the suite drops only them (IRM-005, ORM-005) or, for
    /// pairs, rejects the option (OPT-005).
    fn valid(&mut self, level: Level, meanings: Vec<Meaning>) {
        let key = self.row.key;
        // A value the text voids in part may be ignored whole, like one it voids (the next
        // level's value or the default then in force).
        self.any_valid_listed |= meanings.len() == 1;
        if meanings.len() > 1 {
            let why = match self.row.grammar {
                Grammar::IndexList => clause(key, 5),
                _ => "OPT-005".to_owned(),
            };
            self.strict_because.push(why.clone());
            // Whether the index alone or the whole option goes is not said by the text
            // (IRM-005, ORM-005): refusing the list is allowed too.
            if self.row.grammar == Grammar::IndexList {
                self.permitted.rejected = true;
            }
            self.partial = Some(why);
        }
        for m in meanings {
            self.permitted.accepted.push((m, level.into()));
        }
    }

    /// OPT-005 and the clause `why` that settles a spelling or form the text leaves open
    /// (OPT-003, IRM-004, ORI-004, EWD-004, ...): any of `readings` may take effect (any subset
    /// of a list's, any allowed value of another grammar), or none.
    fn gray(&mut self, level: Level, readings: Vec<Meaning>, why: String) {
        self.gray.insert(level, why.clone());
        self.strict_because.push(why);
        self.strict_because.push("OPT-005".into());
        self.permitted.rejected = true;
        match self.row.grammar {
            Grammar::IndexList | Grammar::PairList => {
                if let Some(all) = readings.first() {
                    self.permitted.subsets.push((all.clone(), level));
                }
            }
            _ => self.permitted.any_from.push(level),
        }
        for m in readings {
            self.permitted.accepted.push((m, level.into()));
        }
    }

    /// OPT-005: a value the text rules out rejects the option.
    fn invalid(&mut self) {
        self.strict_because.push("OPT-005".into());
        self.permitted.rejected = true;
    }

    /// OPT-003, the value clauses (ACP-001, ...) and the list clauses (IRM-003, IRM-004,
    /// ORI-003, ...), as [`parse_strict`] reads them (upstream [`parse_upstream`], for a value GE
    /// reads at all): a value read wins over an earlier level's; a refused one is an error and
    /// rejects the key.
    fn parse(&mut self, level: Level, raw: &str, maps: &OptionMaps, ctx: Context) {
        if self.upstream && !upstream_reads(self.row.key, level, maps) {
            return;
        }
        let parsed = if self.upstream {
            parse_upstream(self.row, level, raw, ctx)
        } else {
            parse_strict(self.row, level, raw, ctx)
        };
        match parsed {
            Ok((m, w)) => self.winner = Some((m, level, w)),
            Err(e) => {
                self.errors.push(e);
                self.rejected = true;
            }
        }
    }

    /// The key's reading once every level is walked; its diagnostics are added to `reading`'s.
    fn finish(mut self, reading: &mut Reading) -> KeyReading {
        self.precedence();
        self.default_permitted();
        let strict = self.strict_outcome();
        self.canonical_because();
        reading.errors.append(&mut self.errors);
        reading.warnings.append(&mut self.warnings);
        reading
            .optional_warnings
            .append(&mut self.optional_warnings);
        KeyReading {
            key: self.row.key,
            strict,
            strict_because: self.strict_because,
            permitted: self.permitted,
            gray: self.gray,
            partial: self.partial,
            unlisted: self.unlisted,
            restricted: false,
        }
    }

    /// OPT-001: where more than one level sets the option where it is used, precedence decides.
    fn precedence(&mut self) {
        if self.listed_set > 1 {
            self.strict_because.push("OPT-001".into());
        }
    }

    /// OPT-006: unless some level holds a value the text allows whole, the default may be in
    /// force (every value set may be ignored).
    fn default_permitted(&mut self) {
        if !self.any_valid_listed {
            self.permitted
                .accepted
                .push((default_meaning(self.row), Source::Default));
        }
    }

    /// OPT-005 and OPT-006: the strict outcome: rejected when some value was refused; else the
    /// value of the last level read, whose warnings are given; else the default.
    fn strict_outcome(&mut self) -> Outcome {
        if self.rejected {
            return Outcome::Rejected;
        }
        match self.winner.take() {
            Some((m, level, w)) => {
                self.warnings.extend(w);
                Outcome::Accepted(m, level.into())
            }
            None => Outcome::Accepted(default_meaning(self.row), Source::Default),
        }
    }

    /// OPT-007: the canonical spelling is a choice behind every strict outcome; the choices
    /// sorted, each once.
    fn canonical_because(&mut self) {
        self.strict_because.push("OPT-007".into());
        self.strict_because.sort_unstable();
        self.strict_because.dedup();
    }
}

impl Reading {
    /// Reads `maps` in `ctx` under `profile` against the embedded tables.
    pub fn new(profile: Profile, maps: &OptionMaps, ctx: Context) -> Reading {
        let spec = Spec::embedded();
        let upstream = profile == Profile::Upstream;
        let mut reading = Reading {
            profile,
            keys: BTreeMap::new(),
            errors: Vec::new(),
            optional_errors: Vec::new(),
            warnings: Vec::new(),
            optional_warnings: Vec::new(),
            passthrough: passthrough(maps),
        };
        for key in OptionKey::ALL {
            let mut walk = KeyWalk::new(spec.option(key), upstream);
            for level in Level::ALL {
                if let Some(raw) = maps.at(level).get(key.as_str()) {
                    walk.level(level, raw, maps, ctx);
                }
            }
            let k = walk.finish(&mut reading);
            reading.keys.insert(key, k);
        }
        if upstream {
            reading.first_failure();
        } else {
            // OPT-008 upstream: GE gives none of these warnings when options are set.
            reading.restriction_warnings(spec, ctx);
        }
        reading.errors.sort();
        reading.warnings.sort();
        reading
    }

    /// The errors a backend is expected to give: the strict ones, and those it may give.
    pub fn expected_errors(&self) -> Vec<Expected> {
        let mut e: Vec<Expected> = self.errors.iter().map(Expected::exact).collect();
        e.extend(self.optional_errors.iter().map(Expected::optional));
        e
    }

    /// The warnings a backend is expected to give: the strict ones, and those it may give.
    pub fn expected_warnings(&self) -> Vec<Expected> {
        let mut e: Vec<Expected> = self.warnings.iter().map(Expected::exact).collect();
        e.extend(self.optional_warnings.iter().map(Expected::optional));
        e
    }

    /// OPT-011 upstream: GE checks in a fixed order and returns at the first failure. The first
    /// refusal in that order is required; the later ones may be given (each is a refusal GE
    /// makes once the earlier value is mended); a level warning (OPT-002) is required only when
    /// GE reaches the step that gives it; any other warning comes after every check and may be
    /// given or not.
    fn first_failure(&mut self) {
        let Some(first) = self.errors.iter().map(ge_order).min() else {
            return;
        };
        let mut errors = std::mem::take(&mut self.errors);
        errors.sort_by_key(ge_order);
        let later = errors.split_off(1);
        self.errors = errors;
        self.optional_errors = later;
        let (keep, optional): (Vec<_>, Vec<_>) = std::mem::take(&mut self.warnings)
            .into_iter()
            .partition(|w| {
                w.clause == "OPT-002" && w.level.is_some_and(|l| step_of_level(l) <= first.0)
            });
        self.warnings = keep;
        self.optional_warnings.extend(optional);
    }

    /// OPT-008: an explicitly set value other than the default, whose condition outside the
    /// maps is not met, stays in force and draws a warning citing the restriction's clause.
    /// The text says only that the value does not take effect there, so refusing it is
    /// permitted too (a departure from OPT-008).
    fn restriction_warnings(&mut self, spec: &Spec, ctx: Context) {
        let mut out: Vec<Diagnostic> = Vec::new();
        for (key, k) in &self.keys {
            let row = spec.option(*key);
            let Outcome::Accepted(m, from) = &k.strict else {
                continue;
            };
            let level = match from {
                Source::Default => continue,
                Source::Global => Level::Global,
                Source::Session => Level::Session,
                Source::Graph => Level::Graph,
            };
            if *m == default_meaning(row) {
                continue;
            }
            for what in self.unmet_restrictions(spec, row, ctx) {
                let Some(clause) = restriction_clause(*key, what) else {
                    continue;
                };
                out.push(
                    Diagnostic::new(clause, "")
                        .key(key.as_str())
                        .level(level)
                        .value(m.canonical()),
                );
            }
        }
        self.mark_restricted(&out);
        self.warnings.extend(out);
    }

    /// OPT-008: the restrictions of `row` outside the maps that `ctx` (or, for a companion
    /// option, the strict reading) does not meet, by field name.
    fn unmet_restrictions(&self, spec: &Spec, row: &OptionSpec, ctx: Context) -> Vec<&'static str> {
        let r = &row.restrictions;
        let mut unmet = Vec::new();
        if r.run_mode.is_some_and(|mode| mode != ctx.run_mode) {
            unmet.push("run_mode");
        }
        if r.shape.is_some_and(|shape| shape != ctx.shape) {
            unmet.push("shape");
        }
        if !r.products.is_empty() && !r.products.contains(&ctx.product) {
            unmet.push("products");
        }
        if let (Some(min), Some(inputs)) = (r.min_inputs, ctx.inputs) {
            if inputs < min {
                unmet.push("min_inputs");
            }
        }
        if let Some(dep) = r.depends_on {
            if let Some(Outcome::Accepted(dm, _)) = self.keys.get(&dep).map(|d| &d.strict) {
                if *dm == default_meaning(spec.option(dep)) {
                    unmet.push("depends_on");
                }
            }
        }
        unmet
    }

    /// OPT-008: a key whose value drew a restriction warning in `out` may be refused as well
    /// as kept in force.
    fn mark_restricted(&mut self, out: &[Diagnostic]) {
        for w in out {
            let key = w.key.as_deref().and_then(|k| k.parse::<OptionKey>().ok());
            if let Some(k) = key.and_then(|k| self.keys.get_mut(&k)) {
                k.restricted = true;
                k.permitted.rejected = true;
                k.strict_because.push("OPT-008".into());
                k.strict_because.sort_unstable();
                k.strict_because.dedup();
            }
        }
    }

    /// The suite's choice a refusal of the whole request departs from, when the text leaves the
    /// request open to one: some option is set at a level where it does not take effect. The
    /// text says where each option takes effect and nothing of what a setting elsewhere does to
    /// the request; the suite ignores it with a warning (OPT-002), and an engine may as well
    /// refuse the plan, the trace or the load that carries it. `None` under the upstream profile
    /// (GE's behaviour is one answer) and when every setting is where its option takes effect:
    /// a refusal there has no reason the text allows, and is judged as the empty answer it is.
    /// Every capability that allows a refusal takes its departure from here.
    pub fn refusal_reason(&self) -> Option<Violation> {
        (self.profile == Profile::Documented && self.keys.values().any(|k| k.unlisted)).then(|| {
            Violation::new(
                "OPT-002",
                "the request is refused over a setting at a level where its option does not take effect",
            )
        })
    }

    /// True when some key is rejected in the strict reading.
    pub fn rejected(&self) -> bool {
        self.keys.values().any(|k| k.strict == Outcome::Rejected)
    }

    /// The strict values in force.
    pub fn values(&self) -> Values {
        values_of(&self.strict_outcomes())
    }

    /// The strict outcome of every key as a meaning (`None`: rejected).
    fn strict_outcomes(&self) -> BTreeMap<OptionKey, Option<Meaning>> {
        self.keys
            .iter()
            .map(|(k, r)| (*k, r.strict_meaning()))
            .collect()
    }

    /// The readings of the options the text allows, the strict one first, each with the suite's
    /// choices it departs from: every combination of the permitted outcomes of `keys` (the keys
    /// a capability acts on), up to a cap. With `planned` (the observation acted on the
    /// options), readings that reject a key are left out: a rejection explains no plan.
    pub fn alternatives(&self, keys: &[OptionKey], planned: bool) -> Vec<Alternative> {
        let strict = Alternative {
            values: self.values(),
            rejected: self.rejected(),
            departs: Vec::new(),
        };
        if self.profile == Profile::Upstream {
            return vec![strict];
        }
        // Per key: the outcomes to try, each with what it departs from.
        let choices: Vec<(OptionKey, Vec<Choice>)> = keys
            .iter()
            .filter_map(|key| Some((*key, self.keys.get(key)?.choices(planned))))
            .collect();
        let strict_outcomes = self.strict_outcomes();
        let mut out = vec![strict];
        for combo in combinations(&choices) {
            if combo.iter().all(|&i| i == 0) {
                continue;
            }
            let Some(alt) = alternative(strict_outcomes.clone(), &choices, &combo, planned) else {
                continue;
            };
            out.push(alt);
            if out.len() >= MAX_ALTERNATIVES {
                break;
            }
        }
        out
    }
}

/// Every combination of one choice per key (indexes into each key's choices), the strict
/// choices first, up to a cap.
fn combinations(choices: &[(OptionKey, Vec<Choice>)]) -> Vec<Vec<usize>> {
    let mut combos: Vec<Vec<usize>> = vec![vec![]];
    for (_, opts) in choices {
        let mut next = Vec::new();
        for c in &combos {
            for i in 0..opts.len() {
                let mut c = c.clone();
                c.push(i);
                next.push(c);
                if next.len() > MAX_ALTERNATIVES {
                    break;
                }
            }
        }
        combos = next;
    }
    combos
}

/// OPT-005 (a reading that rejects a key explains no plan): the reading `combo` picks from
/// `choices`, on top of the strict `outcomes`, with the suite's choices it departs from
/// (`None`: it rejects a key, and the observation is `planned`).
fn alternative(
    mut outcomes: BTreeMap<OptionKey, Option<Meaning>>,
    choices: &[(OptionKey, Vec<Choice>)],
    combo: &[usize],
    planned: bool,
) -> Option<Alternative> {
    let mut departs = Vec::new();
    for ((key, opts), &i) in choices.iter().zip(combo) {
        let (m, d) = &opts[i];
        outcomes.insert(*key, m.clone());
        departs.extend(d.iter().cloned());
    }
    departs.sort_unstable();
    departs.dedup();
    let rejected = outcomes.values().any(Option::is_none);
    if planned && rejected {
        return None;
    }
    Some(Alternative {
        values: values_of(&outcomes),
        rejected,
        departs,
    })
}

/// IFS-003, IFS-004, IBC-003, IBC-004, IBC-005, FBR-003, EWD-003: the clause of `key`'s
/// restriction `what` (a field of its row's restrictions), if the tables name one.
fn restriction_clause(key: OptionKey, what: &str) -> Option<&'static str> {
    Some(match (key, what) {
        (OptionKey::InputFusionSize, "run_mode") => "IFS-003",
        (OptionKey::InputFusionSize, "shape") => "IFS-004",
        (OptionKey::InputBatchCpy, "min_inputs") => "IBC-003",
        (OptionKey::InputBatchCpy, "products") => "IBC-004",
        (OptionKey::InputBatchCpy, "run_mode") => "IBC-005",
        (OptionKey::FeatureBaseRefreshable, "shape") => "FBR-003",
        (OptionKey::ExternalWeightDir, "depends_on") => "EWD-003",
        _ => return None,
    })
}

/// Typed values from meanings (`None`: rejected, the default holds).
fn values_of(outcomes: &BTreeMap<OptionKey, Option<Meaning>>) -> Values {
    let num = |k: OptionKey, d: u64| match outcomes.get(&k) {
        Some(Some(Meaning::Number(n))) => *n,
        _ => d,
    };
    let set = |k: OptionKey| match outcomes.get(&k) {
        Some(Some(Meaning::Indexes(s))) => s.clone(),
        _ => BTreeSet::new(),
    };
    Values {
        separate_atomic_clean: num(OptionKey::AtomicCleanPolicy, 0) == 1,
        disable_reuse: num(OptionKey::DisableReuseMemory, 0) == 1,
        fusion_size: num(OptionKey::InputFusionSize, 131_072),
        input_reuse: set(OptionKey::InputReuseMemIndexes),
        reuse_zero_copy: num(OptionKey::ReuseZeroCopyMemory, 0) == 1,
        static_memory_policy: num(OptionKey::StaticMemoryPolicy, 0),
        // A pair past 32 bits names no tensor (only upstream, where session and global values
        // are not range-checked, keeps one).
        output_reuse_input: match outcomes.get(&OptionKey::OutputReuseInputMemIndexes) {
            Some(Some(Meaning::Pairs(p))) => p
                .iter()
                .filter(|(i, o)| u32::try_from(*i).is_ok() && u32::try_from(*o).is_ok())
                .copied()
                .collect(),
            _ => BTreeSet::new(),
        },
        output_reuse: set(OptionKey::OutputReuseMemIndexes),
        external_weight: num(OptionKey::ExternalWeight, 0),
        // The system sees a path up to its first NUL byte (kept only upstream, EWD-004).
        external_weight_dir: match outcomes.get(&OptionKey::ExternalWeightDir) {
            Some(Some(Meaning::Path(p))) => {
                let p = p.split('\0').next().unwrap_or_default();
                (!p.is_empty()).then(|| p.to_owned())
            }
            _ => None,
        },
        batch_copy: num(OptionKey::InputBatchCpy, 0) == 1,
        feature_base_refreshable: num(OptionKey::FeatureBaseRefreshable, 0) == 1,
    }
}

impl KeyReading {
    /// The strict outcome as a meaning (`None`: rejected).
    fn strict_meaning(&self) -> Option<Meaning> {
        match &self.strict {
            Outcome::Accepted(m, _) => Some(m.clone()),
            Outcome::Rejected => None,
        }
    }

    /// OPT-005 (a rejection the text permits) and the suite's other choices that decided the
    /// strict outcome (`strict_because`, OPT-007 aside): the outcomes to try for this key, the
    /// strict one first, then each other permitted meaning and, unless `planned`, a permitted
    /// rejection, each departing from those choices.
    fn choices(&self, planned: bool) -> Vec<Choice> {
        let strict_m = self.strict_meaning();
        let mut opts: Vec<Choice> = vec![(strict_m.clone(), Vec::new())];
        let departs: Vec<String> = self
            .strict_because
            .iter()
            .filter(|c| *c != "OPT-007")
            .cloned()
            .collect();
        for (m, _) in &self.permitted.accepted {
            if Some(m) != strict_m.as_ref() && !opts.iter().any(|(o, _)| o.as_ref() == Some(m)) {
                opts.push((Some(m.clone()), departs.clone()));
            }
        }
        if !planned && self.permitted.rejected && strict_m.is_some() {
            opts.push((None, departs.clone()));
        }
        opts
    }

    /// The suite's choices an outcome the text permits departs from, the strict one being `self`.
    fn departures(&self, got: &Outcome) -> Vec<String> {
        let level_of = |s: &Source| match s {
            Source::Default => None,
            Source::Global => Some(Level::Global),
            Source::Session => Some(Level::Session),
            Source::Graph => Some(Level::Graph),
        };
        let gray = |s: &Source| level_of(s).and_then(|l| self.gray.get(&l).cloned());
        let mut out: Vec<String> = Vec::new();
        match (&self.strict, got) {
            (Outcome::Accepted(ms, fs), Outcome::Accepted(mg, fg)) => {
                if fs != fg {
                    // Another level won: precedence (OPT-001), or a fallback past a value the
                    // suite refuses.
                    out.push(if *fg == Source::Default {
                        "OPT-005".into()
                    } else {
                        "OPT-001".into()
                    });
                    out.extend(gray(fg));
                } else if ms != mg {
                    out.extend(gray(fg));
                    out.extend(self.partial.clone());
                }
            }
            (Outcome::Rejected, Outcome::Accepted(_, fg)) => {
                out.push("OPT-005".into());
                out.extend(gray(fg));
            }
            (Outcome::Accepted(..), Outcome::Rejected) => {
                if self.unlisted {
                    out.push("OPT-002".into());
                }
                if self.restricted {
                    out.push("OPT-008".into());
                }
                out.extend(self.partial.clone());
                out.extend(self.gray.values().cloned());
            }
            (Outcome::Rejected, Outcome::Rejected) => {}
        }
        if out.is_empty() {
            out.push("OPT-005".into());
        }
        out.sort();
        out.dedup();
        out
    }

    /// True when the text permits `outcome` for this key.
    fn permits(&self, row: &OptionSpec, outcome: &Outcome) -> bool {
        if *outcome == self.strict {
            return true;
        }
        let p = &self.permitted;
        if p.strict_only {
            return false;
        }
        match outcome {
            Outcome::Rejected => p.rejected,
            Outcome::Accepted(m, from) => {
                if p.accepted.iter().any(|(pm, pf)| pm == m && pf == from) {
                    return true;
                }
                let level = match from {
                    Source::Default => return false,
                    Source::Global => Level::Global,
                    Source::Session => Level::Session,
                    Source::Graph => Level::Graph,
                };
                if p.any_from.contains(&level) && allowed(row, m) {
                    return true;
                }
                p.subsets.iter().any(|(all, l)| {
                    *l == level
                        && match (all, m) {
                            (Meaning::Indexes(a), Meaning::Indexes(s)) => s.is_subset(a),
                            (Meaning::Pairs(a), Meaning::Pairs(s)) => s.is_subset(a),
                            _ => false,
                        }
                })
            }
        }
    }
}

/// Judges an options observation: each key's outcome against what the text permits (documented
/// clauses) and against the strict reading (the suite's choices), then the diagnostics and the
/// pass-through keys.
pub fn judge(
    profile: Profile,
    scenario: &OptionsScenario,
    obs: &OptionsObservation,
) -> Vec<Violation> {
    let reading = Reading::new(profile, &scenario.options, Context::of(scenario));
    judge_reading(&reading, &scenario.options, obs)
}

/// [`judge`] with the reading made already.
pub fn judge_reading(
    reading: &Reading,
    maps: &OptionMaps,
    obs: &OptionsObservation,
) -> Vec<Violation> {
    let spec = Spec::embedded();
    let mut out = Vec::new();
    let rejected: BTreeSet<&str> = obs.rejected.iter().map(String::as_str).collect();
    for (key, k) in &reading.keys {
        let row = spec.option(*key);
        let Some(got) = reported_outcome(k, row, obs, &rejected, &mut out) else {
            continue;
        };
        judge_outcome(reading, maps, k, row, &got, &mut out);
    }
    super::run_table(ANSWER, &Answer { reading, obs }, &mut out);
    out
}

/// The checks the driver calls itself, key by key (what one reports decides whether the next
/// runs). Those that charge an option's clause by its number (`clause(key, N)`), here and in
/// [`READING`], list literally every clause they can charge (the registry's tests hold the
/// lists to what `clause` makes of the keys each applies to).
const CALLED: &[Called] = &[
    Entry {
        clauses: &["OPT-005", "OPT-006"],
        name: "reported_outcome",
        run: (),
    },
    Entry {
        clauses: &[
            "ACP-001", "DRM-001", "EWD-001", "EXW-001", "FBR-001", "IBC-001", "IFS-001", "IRM-001",
            "ORI-001", "ORM-001", "RZC-001", "SMP-001",
        ],
        name: "read_effective",
        run: (),
    },
    Entry {
        clauses: &["OPT-007"],
        name: "check_canonical",
        run: (),
    },
    Entry {
        clauses: &["OPT-001", "OPT-002", "OPT-005", "OPT-008"],
        name: "judge_outcome",
        run: (),
    },
    Entry {
        clauses: &[
            "ACP-001", "ACP-002", "DRM-001", "DRM-002", "EWD-001", "EWD-002", "EWD-003", "EWD-004",
            "EXW-001", "EXW-002", "FBR-001", "FBR-002", "IBC-001", "IBC-002", "IBC-003", "IBC-004",
            "IBC-005", "IFS-001", "IFS-002", "IRM-001", "IRM-002", "IRM-003", "IRM-004", "IRM-005",
            "OPT-006", "ORI-001", "ORI-002", "ORI-003", "ORI-004", "ORI-005", "ORI-006", "ORM-001",
            "ORM-002", "ORM-003", "ORM-004", "ORM-005", "RZC-001", "RZC-002", "SMP-001", "SMP-002",
        ],
        name: "documented_rule",
        run: (),
    },
];

/// The functions of the reading of the options that name a clause its diagnostics or choices
/// charge: what they make is what the checks compare the answer with.
const READING: &[Called] = &[
    Entry {
        clauses: &[
            "ACP-001", "DRM-001", "EXW-001", "FBR-001", "IBC-001", "RZC-001", "SMP-001",
        ],
        name: "strict_enumeration",
        run: (),
    },
    Entry {
        clauses: &["IFS-001", "OPT-003"],
        name: "strict_range",
        run: (),
    },
    Entry {
        clauses: &["IRM-003", "IRM-004", "ORM-003", "ORM-004"],
        name: "strict_indexes",
        run: (),
    },
    Entry {
        clauses: &["IRM-003", "IRM-004", "ORM-003", "ORM-004"],
        name: "upstream_indexes",
        run: (),
    },
    Entry {
        clauses: &["IRM-005", "OPT-005", "ORM-005"],
        name: "valid",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "EWD-004"],
        name: "classify",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "IRM-004", "ORM-004"],
        name: "classify_indexes",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "ORI-004", "ORI-005", "ORI-006"],
        name: "classify_pairs",
        run: (),
    },
    Entry {
        clauses: &["OPT-003"],
        name: "parse_strict",
        run: (),
    },
    Entry {
        clauses: &["ORI-004", "ORI-005"],
        name: "strict_pairs",
        run: (),
    },
    Entry {
        clauses: &["ORI-003", "ORI-006"],
        name: "strict_pair",
        run: (),
    },
    Entry {
        clauses: &["EWD-004"],
        name: "strict_path",
        run: (),
    },
    Entry {
        clauses: &["ACP-001", "DRM-001", "EXW-001", "IFS-001", "OPT-003"],
        name: "parse_upstream",
        run: (),
    },
    Entry {
        clauses: &["ORI-003", "ORI-006"],
        name: "upstream_pairs",
        run: (),
    },
    Entry {
        clauses: &["OPT-002"],
        name: "level_warning",
        run: (),
    },
    Entry {
        clauses: &["IBC-006"],
        name: "batch_copy_advice",
        run: (),
    },
    Entry {
        clauses: &[
            "IFS-003", "IFS-004", "IBC-003", "IBC-004", "IBC-005", "FBR-003", "EWD-003",
        ],
        name: "restriction_clause",
        run: (),
    },
];

/// The checks of the options oracle, by phase, for the registry.
pub(super) fn phases() -> Vec<Phase> {
    vec![
        Phase::of("the answer as a whole, after each key's", ANSWER),
        Phase::called("by the driver, key by key", CALLED),
        Phase::called("by the reading of the options", READING),
    ]
}

/// What the checks of the answer as a whole read: the reading and the observation.
struct Answer<'a> {
    reading: &'a Reading,
    obs: &'a OptionsObservation,
}

/// A check of the phases whose context is [`Answer`].
type AnswerCheck = Entry<fn(&Answer<'_>) -> Vec<Violation>>;

/// The checks of the answer as a whole, after each key's, in order.
const ANSWER: &[AnswerCheck] = &[
    Entry {
        clauses: &["OPT-011"],
        name: "check_first_failure",
        run: |cx| check_first_failure(cx.reading, cx.obs),
    },
    Entry {
        clauses: &["OPT-012"],
        name: "check_diagnostics",
        run: |cx| check_diagnostics(Spec::embedded(), cx.reading, cx.obs),
    },
    Entry {
        clauses: &["OPT-004"],
        name: "check_passthrough",
        run: |cx| check_passthrough(cx.reading, cx.obs),
    },
];

/// OPT-005 and OPT-006: what the engine reports of `k`'s key is one outcome, never both in
/// force and rejected (then read as rejected), never neither (`None`: nothing to judge further).
fn reported_outcome(
    k: &KeyReading,
    row: &OptionSpec,
    obs: &OptionsObservation,
    rejected: &BTreeSet<&str>,
    out: &mut Vec<Violation>,
) -> Option<Outcome> {
    let name = k.key.as_str();
    match (obs.effective.get(name), rejected.contains(name)) {
        (Some(e), false) => read_effective(k, row, e, out),
        (None, true) => Some(Outcome::Rejected),
        (Some(_), true) => {
            out.push(Violation::new(
                "OPT-005",
                format!("{name} is reported both rejected and in force"),
            ));
            Some(Outcome::Rejected)
        }
        (None, false) => {
            out.push(Violation::new(
                "OPT-006",
                format!("{name} is neither in force nor rejected: every option has a value"),
            ));
            None
        }
    }
}

/// ACP-001, IRM-001, ... (the value clause of `k`'s key): the effective value reads as a
/// value of the option (`None`: it does not); then its spelling ([`check_canonical`]).
fn read_effective(
    k: &KeyReading,
    row: &OptionSpec,
    e: &Effective,
    out: &mut Vec<Violation>,
) -> Option<Outcome> {
    let key = k.key;
    let name = key.as_str();
    let Some(m) = read_reported(row.grammar, &e.value) else {
        out.push(Violation::new(
            value_clause(key),
            format!(
                "{name}: the effective value {:?} cannot be read as a value of the option",
                e.value
            ),
        ));
        return None;
    };
    check_canonical(k, &m, e, out);
    Some(Outcome::Accepted(m, e.from))
}

/// OPT-007: the strict value in force, reported from the strict level, is spelled canonically.
fn check_canonical(k: &KeyReading, m: &Meaning, e: &Effective, out: &mut Vec<Violation>) {
    if let Outcome::Accepted(sm, sf) = &k.strict {
        if sm == m && *sf == e.from && sm.canonical() != e.value {
            out.push(Violation::new(
                "OPT-007",
                format!(
                    "{}: the effective value is spelled {:?}; canonically it is {:?}",
                    k.key.as_str(),
                    e.value,
                    sm.canonical()
                ),
            ));
        }
    }
}

/// OPT-001, OPT-002, OPT-005, OPT-008 and the key's own clauses, as [`KeyReading::departures`]
/// and [`documented_rule`] name them: an outcome other than the strict one departs from the
/// suite's choices where the text permits it, and otherwise breaks a documented rule.
fn judge_outcome(
    reading: &Reading,
    maps: &OptionMaps,
    k: &KeyReading,
    row: &OptionSpec,
    got: &Outcome,
    out: &mut Vec<Violation>,
) {
    let name = k.key.as_str();
    if *got == k.strict {
        return;
    }
    if k.permits(row, got) {
        for c in k.departures(got) {
            out.push(Violation::new(
                c,
                format!(
                    "{name}: {} where the suite's choice is {}",
                    show(got),
                    show(&k.strict)
                ),
            ));
        }
        return;
    }
    // Not permitted by the text: name the documented rule it breaks.
    let broken = documented_rule(k.key, row, maps, got, reading.profile, &k.strict_because);
    out.push(Violation::new(
        broken,
        format!(
            "{name}: {} is not what the text allows (expected {})",
            show(got),
            show(&k.strict)
        ),
    ));
}

/// OPT-011 upstream: which refusal GE gives is a fact of its check order. An engine that
/// reports refusals, none of them the first GE makes, stops where GE does not.
fn check_first_failure(reading: &Reading, obs: &OptionsObservation) -> Vec<Violation> {
    let mut out = Vec::new();
    if let (Profile::Upstream, Some(first), false) = (
        reading.profile,
        reading.errors.first(),
        obs.errors.is_empty(),
    ) {
        // Which check refused is told by the key and the level, not by the clause cited.
        let same = |d: &&Diagnostic| d.key == first.key && d.level == first.level;
        if !obs.errors.iter().any(|d| same(&d)) {
            out.push(Violation::new(
                "OPT-011",
                format!(
                    "GE's first failing check refuses {} at {} level; the refusals reported are of checks it never reaches",
                    first.key.as_deref().unwrap_or("?"),
                    first.level.map_or("?".to_owned(), |l| l.to_string())
                ),
            ));
        }
    }
    out
}

/// OPT-012 and each diagnostic's own clause: the errors and warnings are the strict lists,
/// with the MAY-permitted ones optional.
fn check_diagnostics(spec: &Spec, reading: &Reading, obs: &OptionsObservation) -> Vec<Violation> {
    let mut out = diagnostics::compare_reports(
        spec,
        "errors",
        &reading.expected_errors(),
        &obs.errors,
        false,
    );
    out.extend(diagnostics::compare(
        spec,
        "warnings",
        &reading.expected_warnings(),
        &obs.warnings,
        false,
    ));
    out
}

/// OPT-004: the keys outside the twelve pass through, each once.
fn check_passthrough(reading: &Reading, obs: &OptionsObservation) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut passthrough = obs.passthrough.clone();
    passthrough.sort();
    passthrough.dedup();
    if passthrough != reading.passthrough {
        out.push(Violation::new(
            "OPT-004",
            format!(
                "keys outside the twelve are {passthrough:?}, expected {:?}",
                reading.passthrough
            ),
        ));
    }
    out
}

fn show(o: &Outcome) -> String {
    match o {
        Outcome::Rejected => "rejected".to_owned(),
        Outcome::Accepted(m, from) => format!(
            "{:?} from {}",
            m.canonical(),
            serde_json::to_value(from)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
    }
}

/// The documented rule an outcome the text does not permit breaks.
fn documented_rule(
    key: OptionKey,
    row: &OptionSpec,
    maps: &OptionMaps,
    got: &Outcome,
    profile: Profile,
    strict_because: &[String],
) -> String {
    if profile == Profile::Upstream {
        // GE's behaviour: blame the first of the key's clauses that records it.
        let spec = Spec::embedded();
        for n in [1, 2, 3, 4, 5, 6] {
            let id = clause(key, n);
            if spec.clause(&id).is_some_and(|c| c.diverges()) {
                return id;
            }
        }
        for id in strict_because {
            if spec.clause(id).is_some_and(|c| c.diverges()) {
                return id.clone();
            }
        }
        return value_clause(key);
    }
    match got {
        Outcome::Rejected => value_clause(key),
        Outcome::Accepted(m, from) => {
            let level = match from {
                Source::Default => {
                    // A valid setting where the option takes effect was ignored.
                    return if row
                        .levels
                        .iter()
                        .any(|l| maps.at(*l).contains_key(key.as_str()))
                    {
                        clause(key, 2)
                    } else {
                        // Nothing set where the option takes effect: the default is OPT-006's.
                        "OPT-006".into()
                    };
                }
                Source::Global => Level::Global,
                Source::Session => Level::Session,
                Source::Graph => Level::Graph,
            };
            if !maps.at(level).contains_key(key.as_str()) {
                return "OPT-006".into();
            }
            if !row.takes_effect_at(level) {
                return clause(key, 2);
            }
            match (key, m) {
                (OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes, _) => {
                    clause(key, 3)
                }
                (OptionKey::OutputReuseInputMemIndexes, _) => "ORI-003".into(),
                _ => value_clause(key),
            }
        }
    }
}
