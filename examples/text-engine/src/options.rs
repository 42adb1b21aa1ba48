//! The options layer: parses, validates and resolves the twelve memory options given at the
//! global, session and graph levels, as the documentation text describes them.
//!
//! Every other capability of the engine goes through [`resolve`] first, so that an option means
//! the same thing wherever it is used. The choices made where the text is silent are numbered in
//! `NOTES.md`; the comments below cite those numbers as `(N<k>)`.

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::diag::{Diagnostic, Subject};
use ge_spec::option::{Level, OptionKey, Product, RunMode, ShapeKind, Source};
use ge_spec::vocab::memory::Alias;
use ge_spec::vocab::{Effective, OptionMaps, OptionsObservation, OptionsScenario};

/// The largest value of `ge.exec.input_fusion_size`: 32 MB.
pub const FUSION_MAX: u64 = 33_554_432;

/// The default of `ge.exec.input_fusion_size`: 128 KB.
pub const FUSION_DEFAULT: u64 = 131_072;

/// The products the text lists for `ge.inputBatchCpy`.
pub const BATCH_COPY_PRODUCTS: [Product; 6] = [
    Product::Ascend950Pr,
    Product::Ascend950Dt,
    Product::AtlasA3Training,
    Product::AtlasA3Inference,
    Product::AtlasA2Training,
    Product::AtlasA2Inference,
];

/// What the engine knows about the context the options are used in. `None` means the scenario
/// does not say, and the checks that depend on it are not made (N12).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// Graph input count, for the range of input indexes (`None`: any index below `u32::MAX`).
    pub inputs: Option<u32>,
    /// Graph output count, for the range of output indexes (`None`: any index below `u32::MAX`).
    pub outputs: Option<u32>,
    /// Number of user inputs, for the batch-copy condition.
    pub user_inputs: Option<u32>,
    /// Static or dynamic shapes.
    pub shape: Option<ShapeKind>,
    /// Synchronous or asynchronous run.
    pub run_mode: Option<RunMode>,
    /// The product.
    pub product: Option<Product>,
}

impl Facts {
    /// Everything an options scenario states.
    pub fn of_scenario(s: &OptionsScenario) -> Self {
        Facts {
            inputs: Some(s.graph.inputs),
            outputs: Some(s.graph.outputs),
            user_inputs: Some(s.graph.inputs),
            shape: Some(s.graph.shape),
            run_mode: Some(s.run_mode),
            product: Some(s.product),
        }
    }
}

/// One item of an index list: a number, or the digits of one too large for 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Index {
    /// An index that fits in 64 bits.
    Small(u64),
    /// A plain decimal index too large for 64 bits: its digit count, then its digits.
    Big(usize, String),
}

impl Index {
    /// Reads a plain decimal item (the caller has checked the spelling).
    fn from_digits(digits: &str) -> Self {
        match digits.parse::<u64>() {
            Ok(n) => Index::Small(n),
            Err(_) => Index::Big(digits.len(), digits.to_owned()),
        }
    }

    /// The index as a `u32` when it is below `count`.
    pub fn below(&self, count: u32) -> Option<u32> {
        match self {
            Index::Small(n) => u32::try_from(*n).ok().filter(|n| *n < count),
            Index::Big(..) => None,
        }
    }

    /// The subject naming this index: `index`, or `item` when it does not fit in 64 bits.
    fn subject(&self) -> Subject {
        match self {
            Index::Small(n) => Subject::index(*n),
            Index::Big(_, digits) => Subject::item(digits.clone()),
        }
    }

    fn spelling(&self) -> String {
        match self {
            Index::Small(n) => n.to_string(),
            Index::Big(_, digits) => digits.clone(),
        }
    }
}

/// A parsed option value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A switch, a mode or a size.
    Number(u64),
    /// An index list (sorted, no repeats).
    Indexes(Vec<Index>),
    /// Output/input pairs (sorted by input).
    Pairs(Vec<Alias>),
    /// A path, verbatim.
    Text(String),
}

impl Value {
    /// The canonical spelling of the value (N5).
    pub fn canonical(&self) -> String {
        match self {
            Value::Number(n) => n.to_string(),
            Value::Indexes(items) => items
                .iter()
                .map(Index::spelling)
                .collect::<Vec<_>>()
                .join(","),
            Value::Pairs(pairs) => pairs
                .iter()
                .map(|a| format!("{},{}", a.input, a.output))
                .collect::<Vec<_>>()
                .join("|"),
            Value::Text(t) => t.clone(),
        }
    }
}

/// The shape of an option's values.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// One of a few numbers.
    Choice(&'static [u64]),
    /// A number from 0 to the bound, inclusive.
    UpTo(u64),
    /// Comma-separated indexes.
    IndexList,
    /// `input,output` pairs separated by `|`.
    PairList,
    /// A directory path.
    Path,
}

/// What the text says about one option: where it takes effect, its default, its values.
#[derive(Debug, Clone, Copy)]
struct Spec {
    levels: &'static [Level],
    default: &'static str,
    kind: Kind,
}

const ALL_LEVELS: &[Level] = &[Level::Global, Level::Session, Level::Graph];
const GLOBAL_SESSION: &[Level] = &[Level::Global, Level::Session];
const SWITCH: Kind = Kind::Choice(&[0, 1]);

/// The "Effective level", default and parameter values of each option, as the text gives them.
fn spec(key: OptionKey) -> Spec {
    let (levels, default, kind) = match key {
        OptionKey::AtomicCleanPolicy => (&[Level::Session][..], "0", SWITCH),
        OptionKey::DisableReuseMemory => (ALL_LEVELS, "0", SWITCH),
        OptionKey::InputFusionSize => (ALL_LEVELS, "131072", Kind::UpTo(FUSION_MAX)),
        OptionKey::InputReuseMemIndexes => (&[Level::Graph][..], "", Kind::IndexList),
        OptionKey::ReuseZeroCopyMemory => (ALL_LEVELS, "0", SWITCH),
        OptionKey::StaticMemoryPolicy => (GLOBAL_SESSION, "0", Kind::Choice(&[0, 2, 3, 4])),
        OptionKey::OutputReuseInputMemIndexes => (&[Level::Graph][..], "", Kind::PairList),
        OptionKey::OutputReuseMemIndexes => (&[Level::Graph][..], "", Kind::IndexList),
        OptionKey::ExternalWeight => (GLOBAL_SESSION, "0", Kind::Choice(&[0, 1, 2])),
        OptionKey::ExternalWeightDir => (GLOBAL_SESSION, "", Kind::Path),
        OptionKey::InputBatchCpy => (ALL_LEVELS, "0", SWITCH),
        OptionKey::FeatureBaseRefreshable => (ALL_LEVELS, "0", SWITCH),
    };
    Spec {
        levels,
        default,
        kind,
    }
}

/// The default value of an option, parsed.
fn default_value(key: OptionKey) -> Value {
    let spec = spec(key);
    match spec.kind {
        Kind::Choice(_) | Kind::UpTo(_) => Value::Number(spec.default.parse().unwrap_or_default()),
        Kind::IndexList => Value::Indexes(Vec::new()),
        Kind::PairList => Value::Pairs(Vec::new()),
        Kind::Path => Value::Text(String::new()),
    }
}

/// True for a number spelled in plain decimal: ASCII digits only, at least one, and no leading
/// zero unless the number is `0` itself (N3).
pub fn plain_decimal(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

/// One setting being checked: the key, the level and the raw value, to build diagnostics from.
struct Setting<'a> {
    key: OptionKey,
    level: Level,
    raw: &'a str,
}

impl Setting<'_> {
    fn diag(&self, clause: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(clause, message)
            .key(self.key.as_str())
            .level(self.level)
            .value(self.raw)
    }

    fn clause(&self, number: &str) -> String {
        format!("{}-{number}", self.key.clause_prefix())
    }
}

/// The outcome of parsing one setting: the value and its warnings, or its errors.
type Parsed = Result<(Value, Vec<Diagnostic>), Vec<Diagnostic>>;

/// Parses and validates one setting at a level where it takes effect.
fn parse(setting: &Setting<'_>, kind: Kind, facts: &Facts) -> Parsed {
    match kind {
        Kind::Choice(allowed) => parse_number(setting, |n| allowed.contains(&n)),
        Kind::UpTo(max) => parse_number(setting, |n| n <= max),
        Kind::IndexList => {
            let count = match setting.key {
                OptionKey::InputReuseMemIndexes => facts.inputs,
                _ => facts.outputs,
            };
            parse_indexes(setting, count.unwrap_or(u32::MAX))
        }
        Kind::PairList => parse_pairs(
            setting,
            facts.inputs.unwrap_or(u32::MAX),
            facts.outputs.unwrap_or(u32::MAX),
        ),
        Kind::Path => {
            if setting.raw.contains('\0') {
                Err(vec![setting.diag(
                    setting.clause("004"),
                    "the directory path holds a NUL byte",
                )])
            } else {
                Ok((Value::Text(setting.raw.to_owned()), Vec::new()))
            }
        }
    }
}

/// A switch, mode or size: plain decimal (OPT-003), then an allowed value (`<prefix>-001`).
fn parse_number(setting: &Setting<'_>, allowed: impl Fn(u64) -> bool) -> Parsed {
    if !plain_decimal(setting.raw) {
        return Err(vec![setting.diag(
            "OPT-003",
            format!(
                "`{}` is not a number in plain decimal (digits only, no sign, space or leading zero)",
                setting.raw.escape_debug()
            ),
        )]);
    }
    match setting.raw.parse::<u64>().ok().filter(|n| allowed(*n)) {
        Some(n) => Ok((Value::Number(n), Vec::new())),
        None => Err(vec![setting.diag(
            setting.clause("001"),
            format!("{} is not an allowed value of {}", setting.raw, setting.key),
        )]),
    }
}

/// Comma-separated indexes. The empty string is the empty list (N6); an empty, malformed or
/// repeated item is an error (`<prefix>-004`); an index not below `count` is ignored with a
/// warning (`<prefix>-003`). Identical diagnostics are reported once (N7).
fn parse_indexes(setting: &Setting<'_>, count: u32) -> Parsed {
    if setting.raw.is_empty() {
        return Ok((Value::Indexes(Vec::new()), Vec::new()));
    }
    let mut errors = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for item in setting.raw.split(',') {
        if !plain_decimal(item) {
            errors.insert(
                setting
                    .diag(
                        setting.clause("004"),
                        format!(
                            "index-list item `{}` is not an index in plain decimal",
                            item.escape_debug()
                        ),
                    )
                    .subject(Subject::item(item)),
            );
            continue;
        }
        let index = Index::from_digits(item);
        if seen.contains(&index) {
            errors.insert(
                setting
                    .diag(
                        setting.clause("004"),
                        format!("index {item} is listed more than once"),
                    )
                    .subject(index.subject()),
            );
        } else {
            seen.insert(index);
        }
    }
    let errors: Vec<Diagnostic> = errors.into_iter().collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let warnings = seen
        .iter()
        .filter(|i| i.below(count).is_none())
        .map(|i| {
            setting
                .diag(
                    setting.clause("003"),
                    format!(
                        "index {} is not below the count {count}; it does not take effect",
                        i.spelling()
                    ),
                )
                .subject(i.subject())
        })
        .collect();
    // Only what takes effect is in force (N5, as revised): an index past the count is warned
    // about and left out of the value.
    let in_force = seen
        .into_iter()
        .filter(|i| i.below(count).is_some())
        .collect();
    Ok((Value::Indexes(in_force), warnings))
}

/// `input,output` pairs separated by `|` (N8, N9).
// Long because: an engine written from the text alone, kept as its author wrote it.
fn parse_pairs(setting: &Setting<'_>, inputs: u32, outputs: u32) -> Parsed {
    if setting.raw.is_empty() {
        return Ok((Value::Pairs(Vec::new()), Vec::new()));
    }
    let mut errors: BTreeSet<Diagnostic> = BTreeSet::new();
    let mut pairs: Vec<(Alias, &str)> = Vec::new();
    for segment in setting.raw.split('|') {
        let halves: Vec<&str> = segment.split(',').collect();
        let [input, output] = halves.as_slice() else {
            errors.insert(malformed_pair(setting, segment));
            continue;
        };
        if !plain_decimal(input) || !plain_decimal(output) {
            errors.insert(malformed_pair(setting, segment));
            continue;
        }
        let input = input
            .parse::<u64>()
            .ok()
            .and_then(|n| u32::try_from(n).ok());
        let output = output
            .parse::<u64>()
            .ok()
            .and_then(|n| u32::try_from(n).ok());
        match (
            input.filter(|i| *i < inputs),
            output.filter(|o| *o < outputs),
        ) {
            (Some(input), Some(output)) => pairs.push((Alias { input, output }, segment)),
            _ => {
                errors.insert(
                    setting
                        .diag(
                            setting.clause("003"),
                            format!(
                                "pair `{}` names an index out of range ({inputs} input(s), {outputs} output(s))",
                                segment.escape_debug()
                            ),
                        )
                        .subject(Subject::pair(segment)),
                );
            }
        }
    }
    let mut by_input: BTreeMap<u32, usize> = BTreeMap::new();
    let mut by_output: BTreeMap<u32, usize> = BTreeMap::new();
    for (alias, _) in &pairs {
        *by_input.entry(alias.input).or_default() += 1;
        *by_output.entry(alias.output).or_default() += 1;
    }
    for (output, n) in by_output {
        if n > 1 {
            errors.insert(
                setting
                    .diag(
                        setting.clause("004"),
                        format!("output {output} is named in {n} pairs"),
                    )
                    .subject(Subject::output(output)),
            );
        }
    }
    for (input, n) in by_input {
        if n > 1 {
            errors.insert(
                setting
                    .diag(
                        setting.clause("005"),
                        format!("input {input} is named in {n} pairs"),
                    )
                    .subject(Subject::input(input)),
            );
        }
    }
    if !errors.is_empty() {
        return Err(errors.into_iter().collect());
    }
    let mut aliases: Vec<Alias> = pairs.into_iter().map(|(a, _)| a).collect();
    aliases.sort();
    Ok((Value::Pairs(aliases), Vec::new()))
}

fn malformed_pair(setting: &Setting<'_>, segment: &str) -> Diagnostic {
    setting
        .diag(
            setting.clause("006"),
            format!(
                "pair `{}` is not `input,output` in plain decimal",
                segment.escape_debug()
            ),
        )
        .subject(Subject::pair(segment))
}

/// The options after resolution: the observation the options capability reports, and the typed
/// effective values the other capabilities plan with.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// What the options capability reports.
    pub observation: OptionsObservation,
    /// The effective value of every option that was not rejected, with its source.
    pub values: BTreeMap<OptionKey, (Value, Source)>,
}

impl Resolved {
    /// The effective number of a switch, mode or size (its default when absent or rejected).
    pub fn number(&self, key: OptionKey) -> u64 {
        match self.values.get(&key) {
            Some((Value::Number(n), _)) => *n,
            _ => match default_value(key) {
                Value::Number(n) => n,
                _ => 0,
            },
        }
    }

    /// The effective index list of `ge.exec.inputReuseMemIndexes` or
    /// `ge.exec.outputReuseMemIndexes` (empty when absent or rejected).
    pub fn indexes(&self, key: OptionKey) -> &[Index] {
        match self.values.get(&key) {
            Some((Value::Indexes(items), _)) => items,
            _ => &[],
        }
    }

    /// The effective pairs of `ge.exec.outputReuseInputMemIndexes` (empty when absent or
    /// rejected).
    pub fn pairs(&self) -> &[Alias] {
        match self.values.get(&OptionKey::OutputReuseInputMemIndexes) {
            Some((Value::Pairs(pairs), _)) => pairs,
            _ => &[],
        }
    }

    /// Where the effective value of `key` came from, `None` when it was rejected.
    pub fn source(&self, key: OptionKey) -> Option<Source> {
        self.values.get(&key).map(|(_, s)| *s)
    }

    /// True when any option was rejected.
    pub fn has_errors(&self) -> bool {
        !self.observation.errors.is_empty()
    }
}

/// The level of a source that is not `default`.
fn level_of(source: Source) -> Option<Level> {
    match source {
        Source::Default => None,
        Source::Global => Some(Level::Global),
        Source::Session => Some(Level::Session),
        Source::Graph => Some(Level::Graph),
    }
}

/// Parses, validates and resolves the three option maps.
///
/// For each of the twelve options: a setting at a level where the option does not take effect
/// is ignored with an `OPT-002` warning (N2); every other setting is validated, and one that is
/// invalid rejects the option (N4); otherwise the narrowest level that sets it wins (N1), and
/// the default applies when none does. Keys outside the twelve are passed through.
pub fn resolve(maps: &OptionMaps, facts: &Facts) -> Resolved {
    let mut obs = OptionsObservation::default();
    let mut values = BTreeMap::new();
    for key in OptionKey::ALL {
        let spec = spec(key);
        let mut winner: Option<(Value, Source)> = None;
        let mut rejected = false;
        for level in Level::ALL {
            let Some(raw) = maps.at(level).get(key.as_str()) else {
                continue;
            };
            let setting = Setting { key, level, raw };
            if !spec.levels.contains(&level) {
                obs.warnings.push(setting.diag(
                    "OPT-002",
                    format!("{key} does not take effect at the {level} level; ignored"),
                ));
                continue;
            }
            match parse(&setting, spec.kind, facts) {
                Ok((value, warnings)) => {
                    obs.warnings.extend(warnings);
                    if key == OptionKey::InputBatchCpy && level != Level::Session {
                        obs.warnings.push(setting.diag(
                            "IBC-006",
                            format!(
                                "{key} is best set at the session level, not at the {level} level"
                            ),
                        ));
                    }
                    winner = Some((value, Source::from(level)));
                }
                Err(errors) => {
                    obs.errors.extend(errors);
                    rejected = true;
                }
            }
        }
        if rejected {
            obs.rejected.push(key.as_str().to_owned());
            continue;
        }
        let (value, from) = winner.unwrap_or_else(|| (default_value(key), Source::Default));
        obs.effective.insert(
            key.as_str().to_owned(),
            Effective {
                value: value.canonical(),
                from,
            },
        );
        values.insert(key, (value, from));
    }
    let passthrough: BTreeSet<&String> = Level::ALL
        .iter()
        .flat_map(|level| maps.at(*level).keys())
        .filter(|k| k.parse::<OptionKey>().is_err())
        .collect();
    obs.passthrough = passthrough.into_iter().cloned().collect();
    let mut resolved = Resolved {
        observation: obs,
        values,
    };
    let warnings = condition_warnings(&resolved, facts);
    resolved.observation.warnings.extend(warnings);
    resolved.observation.canonicalize();
    resolved
}

/// Warnings for options that ask for something a condition outside the maps rules out (N10).
/// Only an explicitly set value that asks for the function is warned about, at the level it
/// came from.
// Long because: an engine written from the text alone, kept as its author wrote it: one branch per
// restriction.
fn condition_warnings(resolved: &Resolved, facts: &Facts) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let asked = |key: OptionKey| -> Option<(Level, String)> {
        let (value, source) = resolved.values.get(&key)?;
        let level = level_of(*source)?;
        match value {
            Value::Number(0) => None,
            Value::Text(t) if t.is_empty() => None,
            other => Some((level, other.canonical())),
        }
    };
    let warn = |key: OptionKey, level: Level, value: &str, clause: &str, why: &str| {
        Diagnostic::new(clause, format!("{key} = {value} has no effect: {why}"))
            .key(key.as_str())
            .level(level)
            .value(value)
    };
    let sync = facts.run_mode == Some(RunMode::Sync);
    let dynamic = facts.shape == Some(ShapeKind::Dynamic);
    if let Some((level, value)) = asked(OptionKey::InputFusionSize) {
        let key = OptionKey::InputFusionSize;
        if sync {
            warnings.push(warn(
                key,
                level,
                &value,
                "IFS-003",
                "input fusion works only in the asynchronous run (RunGraphAsync)",
            ));
        }
        if dynamic {
            warnings.push(warn(
                key,
                level,
                &value,
                "IFS-004",
                "input fusion works only for static graphs",
            ));
        }
    }
    if let Some((level, value)) = asked(OptionKey::InputBatchCpy) {
        let key = OptionKey::InputBatchCpy;
        if facts.user_inputs.is_some_and(|n| n <= 1) {
            warnings.push(warn(
                key,
                level,
                &value,
                "IBC-003",
                "batch copy takes effect only with more than one user input",
            ));
        }
        if facts
            .product
            .is_some_and(|p| !BATCH_COPY_PRODUCTS.contains(&p))
        {
            warnings.push(warn(
                key,
                level,
                &value,
                "IBC-004",
                "batch copy is not available on this product",
            ));
        }
        if sync {
            warnings.push(warn(
                key,
                level,
                &value,
                "IBC-005",
                "batch copy is enabled only by the asynchronous run (RunGraphAsync)",
            ));
        }
    }
    if let Some((level, value)) = asked(OptionKey::FeatureBaseRefreshable) {
        if dynamic {
            warnings.push(warn(
                OptionKey::FeatureBaseRefreshable,
                level,
                &value,
                "FBR-003",
                "a refreshable feature base applies only to static-shape graphs",
            ));
        }
    }
    if let Some((level, value)) = asked(OptionKey::ExternalWeightDir) {
        if matches!(
            resolved.values.get(&OptionKey::ExternalWeight),
            Some((Value::Number(0), _))
        ) {
            warnings.push(warn(
                OptionKey::ExternalWeightDir,
                level,
                &value,
                "EWD-003",
                "ge.externalWeight is off, so no weight file is written",
            ));
        }
    }
    warnings
}

/// The options capability: resolves the maps of `scenario` with everything it states.
pub fn observe(scenario: &OptionsScenario) -> OptionsObservation {
    resolve(&scenario.options, &Facts::of_scenario(scenario)).observation
}
