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
//!
//! This file holds the reading's types, the judge and its check tables; one family lives in
//! each submodule: `grammar` (what a value is under the text's grammar), `upstream` (GE's own
//! parsing), `walk` (one key across the levels), `reading` (the outcomes a scenario permits)
//! and `answer` (an answer against them).

use std::collections::{BTreeMap, BTreeSet};

use ge_spec::tables::{Grammar, OptionSpec};
use ge_spec::vocab::{Effective, OptionsObservation, OptionsScenario};
use ge_spec::{
    Diagnostic, Level, OptionKey, OptionMaps, Product, Profile, RunMode, ShapeKind, Source, Spec,
    Subject,
};

use super::diagnostics::{self, Expected};
use super::{Called, Entry, Phase, Violation};

mod answer;
mod grammar;
mod reading;
mod upstream;
mod walk;
pub(super) use answer::phases;
use answer::*;
pub(super) use grammar::clause;
pub use grammar::read_reported;
pub(crate) use grammar::value_clause;
use grammar::*;
pub(super) use upstream::ge_step;
use upstream::*;
use walk::*;

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
    /// Per key, in key order ([`OptionKey::ALL`]).
    pub keys: Vec<KeyReading>,
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

/// The largest fusion threshold GE's code keeps, from IFS-001's upstream entry (see
/// [`Spec::upstream_constant`]): the judge reads the same fact the upstream reference does.
fn fusion_clamp() -> u64 {
    Spec::embedded()
        .upstream_constant("IFS-001", "clamp")
        .unwrap_or(u64::MAX)
}

/// At most this many alternatives are tried.
const MAX_ALTERNATIVES: usize = 64;

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
    for k in &reading.keys {
        let row = spec.option(k.key);
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
        name: "answer::reported_outcome",
        run: (),
    },
    Entry {
        clauses: &[
            "ACP-001", "DRM-001", "EWD-001", "EXW-001", "FBR-001", "IBC-001", "IFS-001", "IRM-001",
            "ORI-001", "ORM-001", "RZC-001", "SMP-001",
        ],
        name: "answer::read_effective",
        run: (),
    },
    Entry {
        clauses: &["OPT-007"],
        name: "answer::check_canonical",
        run: (),
    },
    Entry {
        clauses: &["OPT-001", "OPT-002", "OPT-005", "OPT-008"],
        name: "answer::judge_outcome",
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
        name: "answer::documented_rule",
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
        name: "grammar::strict_enumeration",
        run: (),
    },
    Entry {
        clauses: &["IFS-001", "OPT-003"],
        name: "grammar::strict_range",
        run: (),
    },
    Entry {
        clauses: &["IRM-003", "IRM-004", "ORM-003", "ORM-004"],
        name: "grammar::strict_indexes",
        run: (),
    },
    Entry {
        clauses: &["IRM-003", "IRM-004", "ORM-003", "ORM-004"],
        name: "upstream::upstream_indexes",
        run: (),
    },
    Entry {
        clauses: &["IRM-005", "OPT-005", "ORM-005"],
        name: "walk::valid",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "EWD-004"],
        name: "grammar::classify",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "IRM-004", "ORM-004"],
        name: "grammar::classify_indexes",
        run: (),
    },
    Entry {
        clauses: &["OPT-003", "ORI-004", "ORI-005", "ORI-006"],
        name: "grammar::classify_pairs",
        run: (),
    },
    Entry {
        clauses: &["OPT-003"],
        name: "grammar::parse_strict",
        run: (),
    },
    Entry {
        clauses: &["ORI-004", "ORI-005"],
        name: "grammar::strict_pairs",
        run: (),
    },
    Entry {
        clauses: &["ORI-003", "ORI-006"],
        name: "grammar::strict_pair",
        run: (),
    },
    Entry {
        clauses: &["EWD-004"],
        name: "grammar::strict_path",
        run: (),
    },
    Entry {
        clauses: &["ACP-001", "DRM-001", "EXW-001", "IFS-001", "OPT-003"],
        name: "upstream::parse_upstream",
        run: (),
    },
    Entry {
        clauses: &["ORI-003", "ORI-006"],
        name: "upstream::upstream_pairs",
        run: (),
    },
    Entry {
        clauses: &["OPT-002"],
        name: "walk::level_warning",
        run: (),
    },
    Entry {
        clauses: &["IBC-006"],
        name: "walk::batch_copy_advice",
        run: (),
    },
    Entry {
        clauses: &[
            "IFS-003", "IFS-004", "IBC-003", "IBC-004", "IBC-005", "FBR-003", "EWD-003",
        ],
        name: "reading::restriction_clause",
        run: (),
    },
];
