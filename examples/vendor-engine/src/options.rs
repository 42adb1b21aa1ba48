//! The option layer of the example engine: parses the twelve memory options at each level, applies
//! the level rules and precedence, and warns about restrictions the context does not meet.
//!
//! Written from the spec tables (`options.toml`, the clause catalogue and the option cases), not
//! from any other implementation.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::vocab::{Effective, OptionsObservation};
use ge_spec::{
    Diagnostic, Level, OptionKey, OptionMaps, Product, RunMode, ShapeKind, Source, Subject,
};

use Level::{Global, Graph, Session};

/// The facts outside the option maps that option validation and restrictions depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Number of graph inputs.
    pub inputs: u64,
    /// Number of graph outputs, or `None` when the scenario does not give it (transfer: `TRF-004`
    /// names only the input count). Output indexes are then only checked to be 32-bit.
    pub outputs: Option<u64>,
    /// Static or dynamic shapes.
    pub shape: ShapeKind,
    /// Synchronous or asynchronous run.
    pub run_mode: RunMode,
    /// The product the graph runs on.
    pub product: Product,
}

/// How an option's value is spelled.
#[derive(Debug, Clone, Copy)]
enum Grammar {
    /// One of a fixed set of strings (clause `<prefix>-001` refuses anything else).
    OneOf(&'static [&'static str]),
    /// A strict decimal number from 0 up to the bound (`IFS-001`).
    UpTo(u64),
    /// Comma-separated graph input indexes (`IRM-*`).
    InputIndexes,
    /// Comma-separated graph output indexes (`ORM-*`).
    OutputIndexes,
    /// `in,out` pairs joined by `|` (`ORI-*`).
    Pairs,
    /// A directory path, used verbatim (`EWD-001`).
    Path,
}

/// What the engine knows of one option: its grammar, default and the levels where it takes effect.
fn row(key: OptionKey) -> (Grammar, &'static str, &'static [Level]) {
    const BOOL: Grammar = Grammar::OneOf(&["0", "1"]);
    const ALL: &[Level] = &[Global, Session, Graph];
    match key {
        OptionKey::AtomicCleanPolicy => (BOOL, "0", &[Session]),
        OptionKey::DisableReuseMemory => (BOOL, "0", ALL),
        OptionKey::InputFusionSize => (Grammar::UpTo(33_554_432), "131072", ALL),
        OptionKey::InputReuseMemIndexes => (Grammar::InputIndexes, "", &[Graph]),
        OptionKey::ReuseZeroCopyMemory => (BOOL, "0", ALL),
        OptionKey::StaticMemoryPolicy => (
            Grammar::OneOf(&["0", "2", "3", "4"]),
            "0",
            &[Global, Session],
        ),
        OptionKey::OutputReuseInputMemIndexes => (Grammar::Pairs, "", &[Graph]),
        OptionKey::OutputReuseMemIndexes => (Grammar::OutputIndexes, "", &[Graph]),
        OptionKey::ExternalWeight => (Grammar::OneOf(&["0", "1", "2"]), "0", &[Global, Session]),
        OptionKey::ExternalWeightDir => (Grammar::Path, "", &[Global, Session]),
        OptionKey::InputBatchCpy => (BOOL, "0", ALL),
        OptionKey::FeatureBaseRefreshable => (BOOL, "0", ALL),
    }
}

/// The products batch copy is available on (`IBC-004`).
pub(crate) const BATCH_COPY_PRODUCTS: [Product; 6] = [
    Product::Ascend950Pr,
    Product::Ascend950Dt,
    Product::AtlasA3Training,
    Product::AtlasA3Inference,
    Product::AtlasA2Training,
    Product::AtlasA2Inference,
];

/// A diagnostic for `clause` about `key` set to `value` at `level`.
fn diag(clause: &str, key: OptionKey, level: Level, value: &str, message: &str) -> Diagnostic {
    Diagnostic::new(clause, message)
        .key(key.as_str())
        .level(level)
        .value(value)
}

/// True for a strict decimal number: ASCII digits only, no leading zero except `0` (`OPT-003`).
fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// The number a strict decimal string spells, or `None` when it does not fit in a `u64` (such a
/// number is beyond every bound and every count).
fn number(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// The bound on indexes when a count is unknown: indexes are 32-bit, so any index up to
/// `u32::MAX` might exist and larger ones never do.
const ANY_COUNT: u64 = 1 << 32;

/// A value that failed validation: the clause it breaks and its subject.
type Refusal = (String, Subject);

/// A value that passed: its canonical spelling and warnings about parts that were ignored.
type Accepted = (String, Vec<(String, Subject)>);

/// Validates `raw` for `key` and returns its canonical spelling, or the clause it breaks.
fn validate(
    key: OptionKey,
    grammar: Grammar,
    raw: &str,
    ctx: &Context,
) -> Result<Accepted, Refusal> {
    let prefix = key.clause_prefix();
    if raw.is_empty() {
        return Err(("OPT-003".into(), Subject::default()));
    }
    match grammar {
        Grammar::OneOf(values) if values.contains(&raw) => Ok((raw.to_owned(), Vec::new())),
        Grammar::OneOf(_) => Err((format!("{prefix}-001"), Subject::default())),
        Grammar::UpTo(_) if !is_decimal(raw) => Err(("OPT-003".into(), Subject::default())),
        Grammar::UpTo(max) => match number(raw) {
            Some(n) if n <= max => Ok((n.to_string(), Vec::new())),
            _ => Err((format!("{prefix}-001"), Subject::default())),
        },
        Grammar::InputIndexes => index_list(prefix, raw, Some(ctx.inputs)),
        Grammar::OutputIndexes => index_list(prefix, raw, ctx.outputs),
        Grammar::Pairs => pair_list(raw, ctx),
        Grammar::Path if raw.contains('\0') => Err((format!("{prefix}-004"), Subject::default())),
        Grammar::Path => Ok((raw.to_owned(), Vec::new())),
    }
}

/// An index list (`IRM`/`ORM`): strict items (`-004`), indexes at or beyond `count` (when known)
/// ignored with a warning (`-003`), canonical order ascending (`OPT-007`).
fn index_list(prefix: &str, raw: &str, count: Option<u64>) -> Result<Accepted, Refusal> {
    let strict = format!("{prefix}-004");
    let (mut seen, mut kept, mut ignored) = (BTreeSet::new(), Vec::new(), Vec::new());
    for item in raw.split(',') {
        if item.is_empty() {
            return Err((strict, Subject::item("")));
        }
        if !is_decimal(item) {
            return Err((strict, Subject::item(item)));
        }
        let subject = match item.parse::<u64>() {
            Ok(n) => Subject::index(n),
            Err(_) => Subject::item(item),
        };
        if !seen.insert(item) {
            return Err((strict, subject));
        }
        match number(item) {
            Some(i) if i < count.unwrap_or(ANY_COUNT) => kept.push(i),
            _ => ignored.push((format!("{prefix}-003"), subject)),
        }
    }
    kept.sort_unstable();
    let canonical: Vec<String> = kept.iter().map(u64::to_string).collect();
    Ok((canonical.join(","), ignored))
}

/// A pair list (`ORI`): strict `in,out` pairs (`ORI-006`), indexes in range (`ORI-003`), no output
/// or input twice (`ORI-004`, `ORI-005`), canonical order by input (`OPT-007`).
fn pair_list(raw: &str, ctx: &Context) -> Result<Accepted, Refusal> {
    let (mut ins, mut outs, mut pairs) = (BTreeSet::new(), BTreeSet::new(), Vec::new());
    for pair in raw.split('|') {
        let refuse = |clause: &str| Err((clause.to_owned(), Subject::pair(pair)));
        let Some((input, output)) = pair.split_once(',') else {
            return refuse("ORI-006");
        };
        if !is_decimal(input) || !is_decimal(output) {
            return refuse("ORI-006");
        }
        let (i, o) = match (number(input), number(output)) {
            (Some(i), Some(o)) if i < ctx.inputs && o < ctx.outputs.unwrap_or(ANY_COUNT) => (i, o),
            _ => return refuse("ORI-003"),
        };
        if !outs.insert(o) {
            return Err(("ORI-004".into(), Subject::output(o as u32)));
        }
        if !ins.insert(i) {
            return Err(("ORI-005".into(), Subject::input(i as u32)));
        }
        pairs.push((i, o));
    }
    pairs.sort_unstable();
    let canonical: Vec<String> = pairs.iter().map(|(i, o)| format!("{i},{o}")).collect();
    Ok((canonical.join("|"), Vec::new()))
}

/// Resolves the option maps in `ctx`: one effective value per option that was not rejected,
/// errors for invalid values, warnings for ignored settings and unmet restrictions.
pub fn resolve(maps: &OptionMaps, ctx: &Context) -> OptionsObservation {
    let mut obs = OptionsObservation::default();
    let mut passthrough = BTreeSet::new();
    for level in Level::ALL {
        for key in maps.at(level).keys() {
            if key.parse::<OptionKey>().is_err() {
                passthrough.insert(key.clone());
            }
        }
    }
    obs.passthrough = passthrough.into_iter().collect();

    for key in OptionKey::ALL {
        let (grammar, default, levels) = row(key);
        let mut chosen = None;
        let mut errors = Vec::new();
        for level in Level::ALL {
            let Some(raw) = maps.at(level).get(key.as_str()) else {
                continue;
            };
            if !levels.contains(&level) {
                let why = "the option does not take effect at this level; the setting is ignored";
                obs.warnings.push(diag("OPT-002", key, level, raw, why));
                continue;
            }
            match validate(key, grammar, raw, ctx) {
                // A narrower level overrides a wider one (OPT-001).
                Ok((value, ignored)) => chosen = Some((level, raw, value, ignored)),
                Err((clause, subject)) => {
                    let mut d = diag(
                        &clause,
                        key,
                        level,
                        raw,
                        "invalid value; the option is rejected",
                    );
                    d.subject = subject;
                    errors.push(d);
                }
            }
        }
        if !errors.is_empty() {
            // An invalid value where the option takes effect rejects it (OPT-005).
            obs.rejected.push(key.as_str().to_owned());
            obs.errors.extend(errors);
            continue;
        }
        let effective = match chosen {
            Some((level, raw, value, ignored)) => {
                for (clause, subject) in ignored {
                    let why = "index out of range; ignored";
                    obs.warnings
                        .push(diag(&clause, key, level, raw, why).subject(subject));
                }
                Effective {
                    value,
                    from: Source::from(level),
                }
            }
            None => Effective {
                value: default.to_owned(),
                from: Source::Default,
            },
        };
        obs.effective.insert(key.as_str().to_owned(), effective);
    }
    obs.warnings.extend(restrictions(&obs.effective, ctx));
    obs.canonicalize();
    obs
}

/// The level an effective value was set at, or `None` for a default.
fn level_of(from: Source) -> Option<Level> {
    match from {
        Source::Default => None,
        Source::Global => Some(Global),
        Source::Session => Some(Session),
        Source::Graph => Some(Graph),
    }
}

/// Warnings for explicitly set values whose conditions the context does not meet (`OPT-008`).
// Long because: one branch per restriction of the documentation, each the condition it states.
fn restrictions(effective: &BTreeMap<String, Effective>, ctx: &Context) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let set = |key: OptionKey| {
        let e = effective.get(key.as_str())?;
        Some((level_of(e.from)?, e.value.as_str()))
    };
    let mut warn = |clause: &str, key: OptionKey, (level, value): (Level, &str), why: &str| {
        out.push(diag(clause, key, level, value, why));
    };
    // Like the reference, a value equal to the default draws no restriction warning: it asks for
    // nothing the context could fail to provide. (IFS-003/IFS-004 say "set explicitly".)
    if let Some(s) = set(OptionKey::InputFusionSize).filter(|(_, v)| *v != "131072") {
        if ctx.run_mode == RunMode::Sync {
            warn(
                "IFS-003",
                OptionKey::InputFusionSize,
                s,
                "fusion only applies to asynchronous runs",
            );
        }
        if ctx.shape == ShapeKind::Dynamic {
            warn(
                "IFS-004",
                OptionKey::InputFusionSize,
                s,
                "fusion only applies to static shapes",
            );
        }
    }
    if let Some(s @ (_, "1")) = set(OptionKey::InputBatchCpy) {
        if ctx.inputs < 2 {
            warn(
                "IBC-003",
                OptionKey::InputBatchCpy,
                s,
                "batch copy needs more than one input",
            );
        }
        if !BATCH_COPY_PRODUCTS.contains(&ctx.product) {
            warn(
                "IBC-004",
                OptionKey::InputBatchCpy,
                s,
                "batch copy is not available on this product",
            );
        }
        if ctx.run_mode == RunMode::Sync {
            warn(
                "IBC-005",
                OptionKey::InputBatchCpy,
                s,
                "batch copy only applies to asynchronous runs",
            );
        }
    }
    if let Some(s @ (_, "1")) = set(OptionKey::FeatureBaseRefreshable) {
        if ctx.shape == ShapeKind::Dynamic {
            warn(
                "FBR-003",
                OptionKey::FeatureBaseRefreshable,
                s,
                "refresh only applies to static shapes",
            );
        }
    }
    // The directory needs ge.externalWeight set to 1 or 2; a rejected ge.externalWeight has no
    // value to judge, so it draws no warning (its error says enough).
    let weights_off = effective
        .get(OptionKey::ExternalWeight.as_str())
        .is_some_and(|e| e.value == "0");
    if let Some(s) = set(OptionKey::ExternalWeightDir) {
        if weights_off {
            warn(
                "EWD-003",
                OptionKey::ExternalWeightDir,
                s,
                "no effect without ge.externalWeight",
            );
        }
    }
    out
}
