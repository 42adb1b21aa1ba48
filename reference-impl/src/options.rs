//! The reference option layer: parses, validates and resolves the three option maps into typed
//! values, following the options table, level rules and precedence of the spec.
// Parse errors are `Diagnostic`s by design: they travel into observations unchanged.
#![allow(clippy::result_large_err)]

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::tables::{Grammar, OptionSpec};
use ge_spec::vocab::{Effective, OptionsObservation, OptionsScenario};
use ge_spec::{
    Diagnostic, Level, OptionKey, OptionMaps, Product, Profile, RunMode, ShapeKind, Source, Spec,
    Subject,
};

mod upstream;

pub use upstream::{check_point, CheckPoint};

/// What the options layer needs to know about the graph and the run. Counts that a capability
/// does not know are `None`, and the range checks that need them are skipped.
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

/// The typed option values in force. A rejected option holds its default here; callers check
/// [`Resolution::observation`]`.errors` before acting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    /// `ge.exec.atomicCleanPolicy == 1`: one cleanup per memset operator.
    pub separate_atomic_clean: bool,
    /// `ge.exec.disableReuseMemory == 1`.
    pub disable_reuse: bool,
    /// `ge.exec.input_fusion_size`, bytes.
    pub fusion_size: u64,
    /// `ge.exec.inputReuseMemIndexes` in force (ascending; out-of-range indexes dropped).
    pub input_reuse: Vec<u32>,
    /// `ge.exec.reuseZeroCopyMemory == 1`.
    pub reuse_zero_copy: bool,
    /// `ge.exec.staticMemoryPolicy` (0, 2, 3 or 4).
    pub static_memory_policy: u8,
    /// `ge.exec.outputReuseInputMemIndexes` as (input, output) pairs, ascending by input. Only
    /// pairs whose indexes fit 32 bits: under the upstream profile a value set at session or
    /// global level is not range-checked (ORI-002's upstream entry), and a pair beyond 32 bits
    /// names no tensor.
    pub output_reuse_input: Vec<(u32, u32)>,
    /// `ge.exec.outputReuseMemIndexes` in force (ascending; out-of-range indexes dropped).
    pub output_reuse: Vec<u32>,
    /// `ge.externalWeight` (0, 1 or 2).
    pub external_weight: u8,
    /// `ge.externalWeightDir`, verbatim.
    pub external_weight_dir: Option<String>,
    /// `ge.inputBatchCpy == 1`.
    pub batch_copy: bool,
    /// `ge.featureBaseRefreshable == 1`.
    pub feature_base_refreshable: bool,
}

impl Default for Values {
    fn default() -> Self {
        Values {
            separate_atomic_clean: false,
            disable_reuse: false,
            fusion_size: Spec::embedded()
                .option(OptionKey::InputFusionSize)
                .default_number()
                .unwrap_or(0),
            input_reuse: Vec::new(),
            reuse_zero_copy: false,
            static_memory_policy: 0,
            output_reuse_input: Vec::new(),
            output_reuse: Vec::new(),
            external_weight: 0,
            external_weight_dir: None,
            batch_copy: false,
            feature_base_refreshable: false,
        }
    }
}

/// The outcome of resolving the option maps: the observation a backend reports and the typed
/// values the other capabilities act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// What the options capability answers.
    pub observation: OptionsObservation,
    /// The typed values in force.
    pub values: Values,
}

impl Resolution {
    /// True when some option was rejected.
    pub fn rejected(&self) -> bool {
        !self.observation.errors.is_empty()
    }

    /// Where the value of `key` came from (`None` when it was rejected).
    pub fn source(&self, key: OptionKey) -> Option<Source> {
        self.observation.effective.get(key.as_str()).map(|e| e.from)
    }
}

/// A parsed option value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Parsed {
    Enum(String),
    Int(u64),
    Indexes(Vec<u32>),
    Pairs(Vec<(u64, u64)>),
    Path(String),
}

impl Parsed {
    fn canonical(&self) -> String {
        match self {
            Parsed::Enum(v) | Parsed::Path(v) => v.clone(),
            Parsed::Int(n) => n.to_string(),
            Parsed::Indexes(list) => list
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
            Parsed::Pairs(pairs) => pairs
                .iter()
                .map(|(i, o)| format!("{i},{o}"))
                .collect::<Vec<_>>()
                .join("|"),
        }
    }
}

/// The subject naming an index as written: `{"index": n}`, or `{"item": text}` when it does not
/// fit 64 bits (IRM-005).
fn index_subject(item: &str) -> Subject {
    match item.parse::<u64>() {
        Ok(n) => Subject::index(n),
        Err(_) => Subject::item(item),
    }
}

/// Parses a strict decimal number (OPT-003): digits only, no leading zero except `0` itself.
/// `Ok(None)` means well-formed but too large for `u64`.
fn strict_decimal(text: &str) -> Result<Option<u64>, ()> {
    let bytes = text.as_bytes();
    if bytes.is_empty()
        || !bytes.iter().all(u8::is_ascii_digit)
        || (bytes.len() > 1 && bytes[0] == b'0')
    {
        return Err(());
    }
    Ok(text.parse::<u64>().ok())
}

struct Parser<'a> {
    spec: &'a OptionSpec,
    level: Level,
    raw: &'a str,
    ctx: Context,
    warnings: Vec<Diagnostic>,
}

impl Parser<'_> {
    fn diag(&self, clause: String, message: String) -> Diagnostic {
        Diagnostic::new(clause, message)
            .key(self.spec.key.as_str())
            .level(self.level)
            .value(self.raw)
    }

    fn clause(&self, n: u32) -> String {
        format!("{}-{n:03}", self.spec.key.clause_prefix())
    }

    fn parse(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        if self.raw.is_empty() {
            return Err(self.diag("OPT-003".into(), format!("{key} is set to an empty string at {} level; give a value or leave the option out", self.level)));
        }
        match self.spec.grammar {
            Grammar::Enumeration => {
                if self.spec.values.iter().any(|v| v.value == self.raw) {
                    Ok(Parsed::Enum(self.raw.to_owned()))
                } else {
                    let allowed: Vec<_> =
                        self.spec.values.iter().map(|v| v.value.as_str()).collect();
                    Err(self.diag(
                        self.clause(1),
                        format!(
                            "{key} = {:?} at {} level is not one of {}",
                            self.raw,
                            self.level,
                            allowed.join(", ")
                        ),
                    ))
                }
            }
            Grammar::IntegerRange => {
                let (min, max) = (
                    self.spec.min.unwrap_or(0),
                    self.spec.max.unwrap_or(u64::MAX),
                );
                match strict_decimal(self.raw) {
                    Err(()) => Err(self.diag("OPT-003".into(), format!("{key} = {:?} at {} level is not a plain decimal number (digits only, no sign, spaces or leading zeros)", self.raw, self.level))),
                    Ok(Some(n)) if (min..=max).contains(&n) => Ok(Parsed::Int(n)),
                    Ok(_) => Err(self.diag(self.clause(1), format!("{key} = {} at {} level is outside {min}..={max}", self.raw, self.level))),
                }
            }
            Grammar::IndexList => self.parse_indexes(),
            Grammar::PairList => self.parse_pairs(),
            Grammar::Path => {
                if self.raw.contains('\0') {
                    // EWD-004: no path holds a NUL byte.
                    Err(self.diag(
                        self.clause(4),
                        format!(
                            "{key} at {} level contains a NUL byte, which no path can hold",
                            self.level
                        ),
                    ))
                } else {
                    Ok(Parsed::Path(self.raw.to_owned()))
                }
            }
        }
    }

    fn parse_indexes(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        let (count, what) = match key {
            OptionKey::InputReuseMemIndexes => (self.ctx.inputs, "input"),
            _ => (self.ctx.outputs, "output"),
        };
        let mut seen = BTreeSet::new();
        let mut kept = Vec::new();
        for item in self.raw.split(',') {
            if item.is_empty() {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key} = {:?} has an empty item", self.raw),
                    )
                    .subject(Subject::item("")));
            }
            let index = match strict_decimal(item) {
                Ok(n) => n,
                Err(()) => {
                    return Err(self
                        .diag(
                            self.clause(4),
                            format!("{key}: item {item:?} is not a plain decimal index"),
                        )
                        .subject(Subject::item(item)));
                }
            };
            if !seen.insert(item) {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key}: index {item} is listed twice"),
                    )
                    .subject(index_subject(item)));
            }
            let in_range = match (index, count) {
                (Some(i), Some(c)) => i < u64::from(c),
                (Some(_), None) => true,
                (None, _) => false,
            };
            if in_range {
                // In range of a u32 count, or no count known: the u32 conversion only fails for
                // indexes beyond u32, which are then out of range of any graph.
                match index.and_then(|i| u32::try_from(i).ok()) {
                    Some(i) => kept.push(i),
                    None => self.warn_out_of_range(item, count, what),
                }
            } else {
                self.warn_out_of_range(item, count, what);
            }
        }
        kept.sort_unstable();
        Ok(Parsed::Indexes(kept))
    }

    fn warn_out_of_range(&mut self, item: &str, count: Option<u32>, what: &str) {
        let count = count.map_or_else(|| "unknown".to_owned(), |c| c.to_string());
        let d = self
            .diag(self.clause(3), format!("{}: {what} index {item} is not below the {what} count {count}; it is ignored and the other indexes stay in force", self.spec.key))
            .subject(index_subject(item));
        self.warnings.push(d);
    }

    fn parse_pairs(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        let mut pairs = Vec::new();
        let mut outputs = BTreeSet::new();
        let mut inputs = BTreeSet::new();
        for segment in self.raw.split('|') {
            let parts: Vec<&str> = segment.split(',').collect();
            let numbers = if parts.len() == 2 {
                match (strict_decimal(parts[0]), strict_decimal(parts[1])) {
                    (Ok(a), Ok(b)) => Some((a, b)),
                    _ => None,
                }
            } else {
                None
            };
            let Some((input, output)) = numbers else {
                return Err(self.diag(self.clause(6), format!("{key}: pair {segment:?} is not `input,output` with two plain decimal indexes")).subject(Subject::pair(segment)));
            };
            let fits = |n: Option<u64>, count: Option<u32>| match (n, count) {
                (Some(n), Some(c)) => n < u64::from(c),
                (Some(n), None) => u32::try_from(n).is_ok(),
                (None, _) => false,
            };
            if !fits(input, self.ctx.inputs) || !fits(output, self.ctx.outputs) {
                let counts = format!(
                    "{} input(s), {} output(s)",
                    self.ctx.inputs.map_or("?".into(), |c| c.to_string()),
                    self.ctx.outputs.map_or("?".into(), |c| c.to_string())
                );
                return Err(self
                    .diag(
                        self.clause(3),
                        format!(
                            "{key}: pair {segment} names an index outside the graph's {counts}"
                        ),
                    )
                    .subject(Subject::pair(segment)));
            }
            // Both fit a u32 count here.
            let (input, output) = (input.unwrap_or_default(), output.unwrap_or_default());
            if !outputs.insert(output) {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key}: output {output} is named in two pairs"),
                    )
                    .subject(Subject::output(output as u32)));
            }
            if !inputs.insert(input) {
                return Err(self
                    .diag(
                        self.clause(5),
                        format!("{key}: input {input} is named in two pairs"),
                    )
                    .subject(Subject::input(input as u32)));
            }
            pairs.push((input, output));
        }
        pairs.sort_unstable();
        Ok(Parsed::Pairs(pairs))
    }
}

/// One value set for `key` at `level`, parsed on its own against the embedded tables: the
/// canonical spelling and any warnings on success, the diagnostic on failure. Level rules,
/// precedence and restrictions are not applied (see [`resolve`]); this is the unit the parser
/// fuzz target drives.
pub fn parse_value(
    key: OptionKey,
    level: Level,
    raw: &str,
    ctx: Context,
) -> Result<(String, Vec<Diagnostic>), Diagnostic> {
    let mut parser = Parser {
        spec: Spec::embedded().option(key),
        level,
        raw,
        ctx,
        warnings: Vec::new(),
    };
    parser.parse().map(|v| (v.canonical(), parser.warnings))
}

/// Resolves `maps` in `ctx` against the embedded spec tables, under `profile`.
pub fn resolve(profile: Profile, maps: &OptionMaps, ctx: Context) -> Resolution {
    resolve_with(Spec::embedded(), profile, maps, ctx)
}

/// The option keys in the order of their names (the order of the observation's map).
fn keys_by_name() -> [OptionKey; 12] {
    static SORTED: std::sync::OnceLock<[OptionKey; 12]> = std::sync::OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut keys = OptionKey::ALL;
        keys.sort_by_key(|k| k.as_str());
        keys
    })
}

/// Under the upstream profile, whether a value set at `level`, where the documentation does not
/// list it, is used anyway (OPT-002's upstream entry). The two index lists are read from the
/// graph's own map only, so elsewhere they stay ignored; the pairs are read through the context
/// at every level (OPT-010's upstream entry).
fn upstream_uses(key: OptionKey) -> bool {
    !matches!(
        key,
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes
    )
}

/// Under the upstream profile, whether an ignored value set at `level` draws the level warning:
/// GE's session list names the two index lists, so a session value is ignored silently
/// (OPT-010's upstream entry).
fn upstream_warns_ignored(key: OptionKey, level: Level) -> bool {
    !(level == Level::Session
        && matches!(
            key,
            OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes
        ))
}

/// Under the upstream profile, whether the value set at `level` is validated at all: GE checks
/// only the value its lookup finds for atomicCleanPolicy and externalWeight (graph, then session,
/// then global), and for disableReuseMemory the session check sees the session value over the
/// global one (ACP-001, EXW-001 and DRM-001's upstream entries). A masked value is never read.
fn upstream_reads(key: OptionKey, level: Level, maps: &OptionMaps) -> bool {
    let set = |l: Level| maps.at(l).contains_key(key.as_str());
    match key {
        OptionKey::AtomicCleanPolicy | OptionKey::ExternalWeight => Level::ALL
            .into_iter()
            .filter(|l| *l > level)
            .all(|l| !set(l)),
        OptionKey::DisableReuseMemory => !(level == Level::Global && set(Level::Session)),
        _ => true,
    }
}

/// Resolves `maps` in `ctx` against `spec`, under `profile`.
// Long because: the walk over levels for one key, in the order OPT-001 resolves them, with each
// profile's departure at the step where it happens.
pub fn resolve_with(spec: &Spec, profile: Profile, maps: &OptionMaps, ctx: Context) -> Resolution {
    let upstream = profile == Profile::Upstream;
    let mut obs = OptionsObservation::default();
    let mut parsed: BTreeMap<OptionKey, (Parsed, Level)> = BTreeMap::new();
    let set = maps.settings();
    obs.passthrough = set.others().iter().map(|k| (*k).to_owned()).collect();
    // Built as a sorted list and collected once: far fewer key comparisons than twelve
    // inserts, which matters under fuzzing instrumentation (every comparison is traced).
    let mut effective: Vec<(OptionKey, Effective)> = Vec::with_capacity(OptionKey::ALL.len());
    for key in keys_by_name() {
        let row = spec.option(key);
        let mut winner: Option<(Parsed, Level, Vec<Diagnostic>)> = None;
        let mut rejected = false;
        for level in Level::ALL {
            let Some(raw) = set.get(key, level) else {
                continue;
            };
            if !level_used(row, key, level, raw, upstream, &mut obs) {
                continue;
            }
            if upstream && !upstream_reads(key, level, maps) {
                continue;
            }
            let mut parser = Parser {
                spec: row,
                level,
                raw,
                ctx,
                warnings: Vec::new(),
            };
            let parsed = if upstream {
                parser.parse_upstream()
            } else {
                parser.parse()
            };
            match parsed {
                Ok(value) => winner = Some((value, level, parser.warnings)),
                Err(error) => {
                    obs.errors.push(error);
                    rejected = true;
                }
            }
        }
        if rejected {
            obs.rejected.push(key.as_str().to_owned());
            continue;
        }
        let (value, from) = match winner {
            Some((value, level, warnings)) => {
                obs.warnings.extend(warnings);
                let canonical = value.canonical();
                parsed.insert(key, (value, level));
                (canonical, level.into())
            }
            None => (row.default.clone().unwrap_or_default(), Source::Default),
        };
        effective.push((key, Effective { value, from }));
    }
    if !upstream {
        // OPT-008's upstream entry: GE gives none of these warnings when options are set.
        restriction_warnings(spec, &effective, ctx, &mut obs.warnings);
    }
    obs.effective = effective
        .into_iter()
        .map(|(key, eff)| (key.as_str().to_owned(), eff))
        .collect();
    if upstream {
        upstream::stop_at_first_failure(&mut obs.errors, &mut obs.warnings);
    }
    let values = typed_values(&parsed);
    obs.canonicalize();
    Resolution {
        observation: obs,
        values,
    }
}

/// OPT-002 and its upstream entry: whether the value set for `key` at `level` is read on, with
/// the warning in `obs` that a level where it does not take effect draws.
fn level_used(
    row: &OptionSpec,
    key: OptionKey,
    level: Level,
    raw: &str,
    upstream: bool,
    obs: &mut OptionsObservation,
) -> bool {
    let listed = row.takes_effect_at(level);
    // OPT-002: documented, an unlisted level is ignored; upstream uses it anyway, except
    // for the index options (OPT-010).
    let used_anyway = upstream && upstream_uses(key);
    let ignored = !(listed || used_anyway);
    // Upstream warns about unlisted levels too, except for atomicCleanPolicy, which it
    // takes at every level (ACP-002), and always about externalWeightDir (EWD-002).
    let upstream_warns = upstream
        && !ignored
        && ((!listed && key != OptionKey::AtomicCleanPolicy)
            || key == OptionKey::ExternalWeightDir);
    let levels: Vec<_> = row.levels.iter().map(|l| l.as_str()).collect();
    if ignored && upstream && !upstream_warns_ignored(key, level) {
        return false;
    }
    if ignored {
        obs.warnings.push(
            Diagnostic::new("OPT-002", format!("{key} takes effect at {} level(s) only; the value set at {level} level is ignored", levels.join(" and ")))
                .key(key.as_str())
                .level(level)
                .value(raw),
        );
        return false;
    }
    if upstream_warns {
        let why = if key == OptionKey::ExternalWeightDir {
            // EWD-002 upstream: in no level's list, so every level draws the warning.
            format!("upstream lists {key} at no level and warns wherever it is set; the value set at {level} level is used anyway")
        } else {
            format!("{key} is documented for {} level(s) only; the value set at {level} level is used anyway", levels.join(" and "))
        };
        obs.warnings.push(
            Diagnostic::new("OPT-002", why)
                .key(key.as_str())
                .level(level)
                .value(raw),
        );
    }
    true
}

/// The clause a restriction of an option belongs to.
fn restriction_clause(key: OptionKey, restriction: &str) -> Option<&'static str> {
    Some(match (key, restriction) {
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

/// OPT-008: a restriction that the context does not meet leaves an explicitly set, non-default
/// value in force and draws a warning.
// Long because: one branch per kind of restriction the options table has (run mode, shape,
// products, input count, a dependency; OPT-008), each the condition the table states.
fn restriction_warnings(
    spec: &Spec,
    effective: &[(OptionKey, Effective)],
    ctx: Context,
    warnings: &mut Vec<Diagnostic>,
) {
    // By key, not by name: each name looked up is string comparisons, traced under fuzzing.
    let effective_of = |key: OptionKey| effective.iter().find(|(k, _)| *k == key).map(|(_, e)| e);
    for (key, eff) in effective {
        let key = *key;
        let row = spec.option(key);
        let level = match eff.from {
            Source::Default => continue,
            Source::Global => Level::Global,
            Source::Session => Level::Session,
            Source::Graph => Level::Graph,
        };
        if Some(&eff.value) == row.default.as_ref() {
            continue;
        }
        let value = eff.value.clone();
        let r = &row.restrictions;
        let mut unmet: Vec<(&str, String)> = Vec::new();
        if let Some(mode) = r.run_mode {
            if mode != ctx.run_mode {
                unmet.push((
                    "run_mode",
                    format!(
                        "it only takes effect on the {} run",
                        if mode == RunMode::Async {
                            "asynchronous"
                        } else {
                            "synchronous"
                        }
                    ),
                ));
            }
        }
        if let Some(shape) = r.shape {
            if shape != ctx.shape {
                unmet.push((
                    "shape",
                    format!(
                        "it only applies to {} graphs",
                        if shape == ShapeKind::Static {
                            "static-shape"
                        } else {
                            "dynamic-shape"
                        }
                    ),
                ));
            }
        }
        if !r.products.is_empty() && !r.products.contains(&ctx.product) {
            unmet.push((
                "products",
                format!(
                    "product {} is not one of those it is available on",
                    ctx.product
                ),
            ));
        }
        if let (Some(min), Some(inputs)) = (r.min_inputs, ctx.inputs) {
            if inputs < min {
                unmet.push((
                    "min_inputs",
                    format!("the graph has {inputs} user input(s) and it needs at least {min}"),
                ));
            }
        }
        if let Some(dep) = r.depends_on {
            let dep_row = spec.option(dep);
            if let Some(dep_eff) = effective_of(dep) {
                if Some(&dep_eff.value) == dep_row.default.as_ref() {
                    unmet.push(("depends_on", format!("{dep} is not enabled")));
                }
            }
        }
        for (restriction, why) in unmet {
            if let Some(clause) = restriction_clause(key, restriction) {
                warnings.push(
                    Diagnostic::new(clause, format!("{key} = {value} has no effect here: {why}"))
                        .key(key.as_str())
                        .level(level)
                        .value(value.clone()),
                );
            }
        }
    }
}

fn typed_values(parsed: &BTreeMap<OptionKey, (Parsed, Level)>) -> Values {
    let mut v = Values::default();
    for (key, (value, _)) in parsed {
        match (key, value) {
            (OptionKey::AtomicCleanPolicy, Parsed::Enum(s)) => v.separate_atomic_clean = s == "1",
            (OptionKey::DisableReuseMemory, Parsed::Enum(s)) => v.disable_reuse = s == "1",
            (OptionKey::InputFusionSize, Parsed::Int(n)) => v.fusion_size = *n,
            (OptionKey::InputReuseMemIndexes, Parsed::Indexes(l)) => v.input_reuse = l.clone(),
            (OptionKey::ReuseZeroCopyMemory, Parsed::Enum(s)) => v.reuse_zero_copy = s == "1",
            (OptionKey::StaticMemoryPolicy, Parsed::Enum(s)) => {
                v.static_memory_policy = s.parse().unwrap_or(0)
            }
            (OptionKey::OutputReuseInputMemIndexes, Parsed::Pairs(p)) => {
                v.output_reuse_input = p
                    .iter()
                    .filter_map(|&(i, o)| Some((u32::try_from(i).ok()?, u32::try_from(o).ok()?)))
                    .collect()
            }
            (OptionKey::OutputReuseMemIndexes, Parsed::Indexes(l)) => v.output_reuse = l.clone(),
            (OptionKey::ExternalWeight, Parsed::Enum(s)) => {
                v.external_weight = s.parse().unwrap_or(0)
            }
            (OptionKey::ExternalWeightDir, Parsed::Path(p)) => {
                // An empty directory (upstream accepts one) is the same as none. A NUL byte
                // (upstream keeps one, EWD-004's entry) ends the path the system sees.
                let p = p.split('\0').next().unwrap_or_default();
                v.external_weight_dir = (!p.is_empty()).then(|| p.to_owned())
            }
            (OptionKey::InputBatchCpy, Parsed::Enum(s)) => v.batch_copy = s == "1",
            (OptionKey::FeatureBaseRefreshable, Parsed::Enum(s)) => {
                v.feature_base_refreshable = s == "1"
            }
            // The grammar of each key is fixed by the table; other combinations cannot occur.
            _ => {}
        }
    }
    v
}
