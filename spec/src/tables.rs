//! The spec tables: the options table, the clause catalogue and the case tables, their typed
//! form, and the loader that checks them (see the crate docs for the format).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::conformance::Conformance;
use crate::option::{Level, OptionKey, Product, RunMode, ShapeKind};
use crate::profile::Profile;
use crate::vocab::{Capability, Scenario};

include!(concat!(env!("OUT_DIR"), "/tables.rs"));

/// The grammar of an option's value string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Grammar {
    /// One of a fixed set of values (`values`).
    Enumeration,
    /// A decimal integer in `min..=max`.
    IntegerRange,
    /// Comma-separated decimal indexes.
    IndexList,
    /// `in,out|in,out|...` pairs of decimal indexes.
    PairList,
    /// A filesystem path.
    Path,
}

/// One allowed value of an enumeration and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AllowedValue {
    /// The exact value string.
    pub value: String,
    /// What it means, in our words.
    pub meaning: String,
}

/// Conditions outside the option maps that an option depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Restrictions {
    /// The option only takes effect on this run mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_mode: Option<RunMode>,
    /// The option only takes effect on graphs of this shape kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<ShapeKind>,
    /// The option only takes effect on these products (empty: every product).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub products: Vec<Product>,
    /// The option only takes effect when this other option is set to a non-default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<OptionKey>,
    /// The option only takes effect when the graph has at least this many user inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_inputs: Option<u32>,
}

/// One row of the options table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OptionSpec {
    /// The option key.
    pub key: OptionKey,
    /// One line saying what the option does.
    pub summary: String,
    /// Grammar of the value string.
    pub grammar: Grammar,
    /// Allowed values (enumerations only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<AllowedValue>,
    /// Smallest value (integer ranges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// Largest value (integer ranges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// The default value, in canonical spelling; absent when the default is "not set".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Levels where the option takes effect, exactly as the source text lists them.
    pub levels: Vec<Level>,
    /// Whether the option must be given.
    pub mandatory: bool,
    /// Conditions outside the option maps.
    #[serde(default)]
    pub restrictions: Restrictions,
    /// The section of the source text the facts come from.
    pub section: String,
}

impl OptionSpec {
    /// True when the option takes effect at `level`.
    pub fn takes_effect_at(&self, level: Level) -> bool {
        self.levels.contains(&level)
    }
}

/// How binding a clause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub enum Strength {
    /// Required.
    #[serde(rename = "MUST")]
    Must,
    /// Recommended.
    #[serde(rename = "SHOULD")]
    Should,
    /// Permitted.
    #[serde(rename = "MAY")]
    May,
}

impl fmt::Display for Strength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strength::Must => "MUST",
            Strength::Should => "SHOULD",
            Strength::May => "MAY",
        })
    }
}

/// Where a clause comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// The source text says it.
    Documented,
    /// The source text is silent; the suite decided (the clause carries a rationale).
    ReferenceDefined,
    /// The vocabulary's own contract: what makes an answer a complete and true description of
    /// what the engine did (a plan places every tensor once, a trace balances, the files listed
    /// are the files on disk). Not a choice about GE's behaviour: without it no answer can be
    /// judged at all, so it binds at every level and under every profile (the clause carries a
    /// rationale saying why it is the vocabulary's).
    Vocabulary,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Documented => "documented",
            Origin::ReferenceDefined => "reference-defined",
            Origin::Vocabulary => "vocabulary",
        })
    }
}

/// One checkable statement, with a stable ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Clause {
    /// Stable ID: three capital letters, `-`, three digits (`IFS-003`).
    pub id: String,
    /// The option it belongs to; absent for cross-cutting clauses (prefix `OPT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<OptionKey>,
    /// The statement, in one line of our own words.
    pub summary: String,
    /// MUST, SHOULD or MAY, as the source text's own wording supports it: documented clauses
    /// only (a reference-defined clause binds at level `strict`, and nowhere else).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<Strength>,
    /// Documented, reference-defined or vocabulary.
    pub origin: Origin,
    /// Why the suite decided so, or why the rule is the vocabulary's (required for
    /// reference-defined and vocabulary clauses, refused for documented ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// The section of the source text it rests on.
    pub section: String,
    /// Where in the section the statement stands (the paragraph, list or note), so a reader can
    /// check it in one hop: required for documented clauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The fields of the subject (see [`crate::diag::Subject`]) that diagnostics citing this
    /// clause carry; only these are compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subject: Vec<String>,
    /// The clause that calls for the diagnostics citing this one, when it is not this clause
    /// itself: a rule about values says what is wrong, and `OPT-005` says that an error reports
    /// it. Whether such a diagnostic must be there is judged at that clause's level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_under: Option<String>,
    /// Documented clauses whose rules this one follows from: every answer that breaks it
    /// breaks one of them too (a worked example is its rules applied to one graph; a
    /// restriction can be another clause's rule seen from another option). The judge charges
    /// those; the reach of the certification counts an answer failed under them, on a case
    /// citing this clause, as reaching it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implied_by: Vec<String>,
    /// What the open-source GE implementation does instead, when it departs from this clause
    /// (absent when it agrees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
}

impl Clause {
    /// True when the upstream implementation departs from this clause.
    pub fn diverges(&self) -> bool {
        self.upstream.is_some()
    }

    /// True when the clause is the suite's own choice under `profile`: reference-defined, and
    /// not a fact of GE recorded by an `upstream` entry (under the upstream profile such an
    /// entry states what GE does, which binds like the text). A broken suite choice is a
    /// deviation at level `documented` and a failure at level `strict`.
    pub fn is_suite_choice(&self, profile: Profile) -> bool {
        self.origin == Origin::ReferenceDefined
            && !(profile == Profile::Upstream && self.diverges())
    }

    /// True when the clause binds at `level` under `profile`: breaking it is a failure.
    pub fn binds(&self, profile: Profile, level: Conformance) -> bool {
        level == Conformance::Strict || !self.is_suite_choice(profile)
    }

    /// True when the clause only permits (strength MAY): what it allows may be absent.
    pub fn permits_only(&self) -> bool {
        self.strength == Some(Strength::May)
    }
}

/// Where the open-source GE implementation departs from a clause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    /// What upstream does instead, in one line of our own words.
    pub behaviour: String,
    /// Where in GE's source, at the commit pinned in `upstream.toml`, the behaviour is decided:
    /// locations only, never GE's code. At least one; the loader refuses an entry without.
    #[serde(default)]
    pub source: Vec<Evidence>,
    /// The numbers upstream's behaviour turns on, by name, resting on the same `source` (for
    /// IFS-001, `clamp`: the largest fusion threshold GE's code keeps). The upstream reference
    /// and the judge read them here, so a fact about GE's code is never a literal beside the
    /// documented bound it happens to equal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub constants: BTreeMap<String, u64>,
}

/// One place in GE's source that an `upstream` entry rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The file, relative to the repository's root, for example
    /// `compiler/graph/build/memory/block_mem_assigner.cc`.
    pub file: String,
    /// The function (or, for a table of values, the variable) the lines belong to.
    pub function: String,
    /// The line range at the pinned commit: `N` or `N-M`, or several separated by `, `.
    pub lines: String,
}

impl Evidence {
    /// What is wrong with the location's form, if anything.
    fn problem(&self) -> Option<String> {
        let file = self.file.trim();
        if file.is_empty() || self.function.trim().is_empty() {
            return Some("names no file or no function".into());
        }
        if file.starts_with('/') || file.split('/').any(|part| part == ".." || part.is_empty()) {
            return Some(format!(
                "file `{}` is not a path inside the repository",
                self.file
            ));
        }
        let number =
            |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && !t.starts_with('0');
        let range = |r: &str| match r.split_once('-') {
            None => number(r),
            Some((a, b)) => {
                number(a) && number(b) && a.parse::<u64>().ok() <= b.parse::<u64>().ok()
            }
        };
        let ok = self.lines.split(", ").all(range);
        (!ok).then(|| {
            format!(
                "lines `{}` of {} are not `N` or `N-M` with N <= M (several separated by `, `)",
                self.lines, self.file
            )
        })
    }
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.lines, self.function)
    }
}

/// The GE source the upstream profile was checked against (`tables/upstream.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UpstreamPin {
    /// The repository, as `owner/name` on its forge.
    pub repository: String,
    /// The commit every `upstream` entry's `source` refers to: 40 hexadecimal digits.
    pub commit: String,
}

/// One conformance case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Name, unique within its file; the full name is `<file stem>/<name>`.
    pub name: String,
    /// The clauses this case checks (at least one).
    pub clauses: Vec<String>,
    /// Why the case exists, or the root cause of the bug it was promoted from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The question asked of the backend.
    pub scenario: Scenario,
    /// The expected observation, as a pattern (see the crate docs, "Matching").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    pub expect: Option<serde_json::Value>,
    /// Judge the observation with the invariant oracle of its capability as well.
    #[serde(default)]
    pub oracle: bool,
    /// The only profile the case holds under; absent: it holds under both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
}

impl Case {
    /// True when the case runs under `profile`.
    pub fn runs_in(&self, profile: Profile) -> bool {
        self.profile.is_none_or(|p| p == profile)
    }
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
struct OptionsFile {
    /// One row per option.
    option: Vec<OptionSpec>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
struct ClausesFile {
    /// One row per clause.
    clause: Vec<Clause>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
struct UpstreamFile {
    /// The pinned GE source.
    upstream: UpstreamPin,
}

/// One answer the source text allows where it is silent, other than the reference's: a row of
/// `alternatives.toml`. The allowed-answer generator of the harness makes a conforming answer
/// at random combinations of these, and such an answer must never fail at level `documented`.
/// A choice found later, that an engine made and nobody had listed, is one more row (and the
/// rewrite that makes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    /// Stable name: lowercase words joined by `-`.
    pub id: String,
    /// The capabilities whose answers it changes (at least one).
    pub capabilities: Vec<Capability>,
    /// The suite's choices it makes otherwise: reference-defined clauses, where the text is
    /// silent (at least one). At level `strict` the answer breaks them; at `documented` it is a
    /// deviation at most.
    pub clauses: Vec<String>,
    /// What the engine does, in one line.
    pub summary: String,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
struct AlternativesFile {
    /// One row per alternative.
    alternative: Vec<Alternative>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
struct CasesFile {
    /// One row per case.
    case: Vec<Case>,
}

/// A case with the name of the table it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct TableCase {
    /// The table (file stem), for example `options-levels`.
    pub table: String,
    /// The case, shared: a spec with a vendor's tables added ([`Spec::with_local_cases`])
    /// holds the contract's cases without copying them (some hold 65,536 constants).
    pub case: Arc<Case>,
}

impl TableCase {
    /// `<table>/<name>`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.table, self.case.name)
    }

    /// The capability the case exercises.
    pub fn capability(&self) -> Capability {
        self.case.scenario.capability()
    }
}

/// The comment `ge-conformance promote` gives a new case. The loader refuses a case whose
/// comment still contains it, so a finding cannot land without its root cause written down.
pub const ROOT_CAUSE_SLOT: &str = "ROOT CAUSE: not written yet";

/// Something wrong with the tables.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// A file is not valid TOML or does not fit the schema (unknown fields included).
    #[error("{file}: {message}")]
    Parse {
        /// The table file.
        file: String,
        /// What the parser said.
        message: String,
    },
    /// A file sits where no table kind is expected.
    #[error("{file}: not a table file (expected options.toml, upstream.toml, alternatives.toml, clauses/*.toml or cases/*.toml)")]
    StrayFile {
        /// The file.
        file: String,
    },
    /// An option row is wrong or missing.
    #[error("options table: {0}")]
    Option(String),
    /// Two clauses share an ID.
    #[error("clause {id} is defined twice")]
    DuplicateClause {
        /// The ID.
        id: String,
    },
    /// A clause row is malformed.
    #[error("clause {id}: {why}")]
    BadClause {
        /// The ID.
        id: String,
        /// What is wrong.
        why: String,
    },
    /// Two cases share a full name.
    #[error("case {name} is defined twice")]
    DuplicateCase {
        /// The full name.
        name: String,
    },
    /// A case is malformed.
    #[error("case {name}: {why}")]
    BadCase {
        /// The full name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A case names a clause that does not exist.
    #[error("case {case} names clause {clause}, which does not exist")]
    UnknownClause {
        /// The case's full name.
        case: String,
        /// The missing clause ID.
        clause: String,
    },
    /// `upstream.toml` is wrong or missing.
    #[error("upstream.toml: {0}")]
    Upstream(String),
    /// A row of `alternatives.toml` is wrong.
    #[error("alternatives.toml: {0}")]
    Alternative(String),
    /// A clause no case checks.
    #[error("clause {id} has no case")]
    UncoveredClause {
        /// The ID.
        id: String,
    },
    /// A vendor's case table that cannot be added to the contract as it stands.
    #[error("{file}: {why}")]
    LocalTable {
        /// The file.
        file: String,
        /// What is wrong.
        why: String,
    },
    /// A clause no case checks under one profile.
    #[error("clause {id} has no case that runs under the {profile} profile")]
    UncoveredInProfile {
        /// The ID.
        id: String,
        /// The profile without a case.
        profile: Profile,
    },
}

/// Every problem found while loading, in file order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} problem(s) in the spec tables:\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
pub struct LoadErrors(pub Vec<LoadError>);

/// A table file's rows: from its JSON form when there is one, else from its TOML text.
fn read_table<T: serde::de::DeserializeOwned>(text: &str, json: Option<&str>) -> Result<T, String> {
    match json {
        Some(json) => serde_json::from_str(json).map_err(|e| e.to_string()),
        None => toml::from_str(text).map_err(|e| e.to_string()),
    }
}

/// The loaded, checked contract.
#[derive(Debug, Clone)]
pub struct Spec {
    /// One row per option, in the order of [`OptionKey::ALL`] (the keys' own order), so a
    /// lookup is an index: the option targets look options up hundreds of times per input.
    options: Vec<OptionSpec>,
    clauses: BTreeMap<String, Clause>,
    cases: Vec<TableCase>,
    upstream: Option<UpstreamPin>,
    alternatives: Vec<Alternative>,
    /// Made when the tables are read, except for the embedded ones: their digest is worked out
    /// the first time it is asked for ([`Spec::digest`]), as a process that only runs a trial
    /// never asks.
    digest: OnceLock<String>,
    /// The tables added by [`Spec::with_local_cases`], and the SHA-256 over their files.
    local: Option<LocalTables>,
}

/// The case tables a vendor added to the contract ([`Spec::with_local_cases`]).
#[derive(Debug, Clone)]
struct LocalTables {
    tables: BTreeSet<String>,
    digest: String,
}

fn valid_clause_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 7
        && b[..3].iter().all(u8::is_ascii_uppercase)
        && b[3] == b'-'
        && b[4..].iter().all(u8::is_ascii_digit)
}

fn valid_case_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl Spec {
    /// The tables embedded in this crate, loaded once, with the cases built in code (the
    /// tables of [`crate::built::TABLES`]: scenarios too large to write as rows).
    ///
    /// # Panics
    /// When the embedded tables do not load. They are checked by this crate's tests, so this
    /// means the crate was built from broken tables; no user input reaches this path.
    pub fn embedded() -> &'static Spec {
        static SPEC: OnceLock<Spec> = OnceLock::new();
        SPEC.get_or_init(|| {
            let json = TABLE_FILES
                .iter()
                .zip(TABLE_JSON)
                .filter(|(_, json)| !json.is_empty())
                .map(|((path, _), json)| (*path, *json))
                .collect();
            Spec::load(
                TABLE_FILES.iter().copied(),
                &json,
                crate::built::cases(),
                Trust::Embedded,
            )
            .unwrap_or_else(|e| panic!("the embedded spec tables are broken: {e}"))
        })
    }

    /// The embedded table files, as (path under `tables/`, contents).
    pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
        TABLE_FILES
    }

    /// Loads tables from (path, contents) pairs: `options.toml`, `clauses/*.toml`, `cases/*.toml`.
    pub fn from_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Spec, LoadErrors> {
        Spec::load(files, &BTreeMap::new(), Vec::new(), Trust::Checked)
    }

    /// The embedded tables read from their TOML text, as [`Spec::from_files`] reads any tables,
    /// with the built cases: what [`Spec::embedded`] reads from the JSON form must equal it.
    #[doc(hidden)]
    pub fn embedded_from_toml() -> Result<Spec, LoadErrors> {
        Spec::load(
            TABLE_FILES.iter().copied(),
            &BTreeMap::new(),
            crate::built::cases(),
            Trust::Checked,
        )
    }

    /// [`Spec::from_files`] plus cases built in code, checked and digested like the others. A
    /// file with an entry in `json` is read from that JSON form of its text (the digest is
    /// still made of the text).
    fn load<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
        json: &BTreeMap<&str, &str>,
        built: Vec<TableCase>,
        trust: Trust,
    ) -> Result<Spec, LoadErrors> {
        let mut errors = Vec::new();
        let mut files: Vec<(&str, &str)> = files.into_iter().collect();
        files.sort();
        let digest = OnceLock::new();
        if trust == Trust::Checked {
            let _ = digest.set(digest_of(&files, !built.is_empty()));
        }
        let mut read = Read::default();
        for (path, text) in &files {
            read.file(path, text, json.get(path).copied(), &mut errors);
        }
        let Read {
            options,
            clauses,
            mut cases,
            seen_options_file,
            upstream,
            alternatives,
        } = read;
        cases.extend(built);
        if !seen_options_file {
            errors.push(LoadError::Option("options.toml is missing".into()));
        }
        for key in OptionKey::ALL {
            if !options.contains_key(&key) && seen_options_file {
                errors.push(LoadError::Option(format!("{key} has no row")));
            }
        }
        if trust == Trust::Checked {
            check_tables(&clauses, &cases, &mut errors);
            check_alternatives(&clauses, &alternatives, &mut errors);
        }
        if upstream.is_none() && clauses.values().any(Clause::diverges) {
            errors.push(LoadError::Upstream(
                "clauses have `upstream` entries but no upstream.toml pins the GE commit their sources refer to".into(),
            ));
        }
        if errors.is_empty() {
            Ok(Spec {
                options: options.into_values().collect(),
                clauses,
                cases,
                upstream,
                alternatives,
                digest,
                local: None,
            })
        } else {
            Err(LoadErrors(errors))
        }
    }

    /// This contract with a vendor's own case tables added: (file name, contents) pairs, each
    /// `<table>.toml` in the format of `cases/*.toml` (see the crate docs). Every case is checked
    /// by the same rules as the embedded ones (unknown fields, valid and unique names, clauses
    /// that exist, something to judge, pattern and profile rules); the coverage rules of the
    /// tables as a whole are the embedded tables' business and are not asked of local ones. A
    /// local table may not reuse the name of a table of the contract (its cases would read as
    /// the suite's own), and two local files may not make the same table.
    ///
    /// The options, clauses and [`Spec::digest`] stay those of the contract; the local files
    /// have a digest of their own ([`Spec::local_digest`]). Adding tables to a spec that already
    /// has local ones replaces them.
    pub fn with_local_cases<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Spec, LoadErrors> {
        let mut errors = Vec::new();
        let mut files: Vec<(&str, &str)> = files.into_iter().collect();
        files.sort();
        let own: BTreeSet<&str> = self
            .cases
            .iter()
            .filter(|c| !self.is_local(c))
            .map(|c| c.table.as_str())
            .collect();
        let mut hasher = Sha256::new();
        let mut tables = BTreeSet::new();
        let mut cases = Vec::new();
        for (file, text) in &files {
            hasher.update((file.len() as u64).to_le_bytes());
            hasher.update(file.as_bytes());
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
            let bad = |why: String| LoadError::LocalTable {
                file: (*file).to_owned(),
                why,
            };
            let Some(table) = file.strip_suffix(".toml") else {
                errors.push(bad("a case table is a `<table>.toml` file".into()));
                continue;
            };
            if !valid_case_name(table) {
                errors.push(bad(
                    "table names use lowercase letters, digits, `-` and `_` only".into(),
                ));
                continue;
            }
            if own.contains(table) {
                errors.push(bad(format!(
                    "`{table}` is a table of the contract; name local tables apart (for example `local-{table}`)"
                )));
                continue;
            }
            if !tables.insert(table.to_owned()) {
                errors.push(bad(format!("a second file for the table `{table}`")));
                continue;
            }
            match toml::from_str::<CasesFile>(text) {
                Ok(parsed) => cases.extend(parsed.case.into_iter().map(|case| TableCase {
                    table: table.to_owned(),
                    case: Arc::new(case),
                })),
                Err(e) => errors.push(LoadError::Parse {
                    file: (*file).to_owned(),
                    message: e.to_string().trim_end().to_owned(),
                }),
            }
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        let mut covered = BTreeSet::new();
        check_cases(&self.clauses, &cases, &mut names, &mut covered, &mut errors);
        if !errors.is_empty() {
            return Err(LoadErrors(errors));
        }
        let mut spec = self.clone();
        spec.cases.retain(|c| !self.is_local(c));
        spec.cases.extend(cases);
        spec.local = Some(LocalTables {
            tables,
            digest: hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        });
        Ok(spec)
    }

    /// SHA-256 over the local case tables ([`Spec::with_local_cases`]: file names and
    /// contents), lowercase hex; `None` for the contract alone.
    pub fn local_digest(&self) -> Option<&str> {
        self.local.as_ref().map(|l| l.digest.as_str())
    }

    /// The names of the local case tables, in order (none for the contract alone).
    pub fn local_tables(&self) -> impl Iterator<Item = &str> {
        self.local
            .iter()
            .flat_map(|l| l.tables.iter().map(String::as_str))
    }

    /// True when `case` comes from a local table rather than from the contract.
    pub fn is_local(&self, case: &TableCase) -> bool {
        self.local
            .as_ref()
            .is_some_and(|l| l.tables.contains(&case.table))
    }

    /// The row of one option.
    pub fn option(&self, key: OptionKey) -> &OptionSpec {
        // Every key has a row: `from_files` refuses tables where one is missing.
        &self.options[key as usize]
    }

    /// Every option row, in key order.
    pub fn options(&self) -> impl Iterator<Item = &OptionSpec> {
        self.options.iter()
    }

    /// One clause by ID.
    pub fn clause(&self, id: &str) -> Option<&Clause> {
        self.clauses.get(id)
    }

    /// The number `name` of the upstream entry of clause `id` ([`Upstream::constants`]).
    pub fn upstream_constant(&self, id: &str, name: &str) -> Option<u64> {
        self.clause(id)?
            .upstream
            .as_ref()?
            .constants
            .get(name)
            .copied()
    }

    /// Every clause, by ID.
    pub fn clauses(&self) -> impl Iterator<Item = &Clause> {
        self.clauses.values()
    }

    /// Every case, in table order.
    pub fn cases(&self) -> &[TableCase] {
        &self.cases
    }

    /// The cases that run under `profile`, in table order.
    pub fn cases_in(&self, profile: Profile) -> impl Iterator<Item = &TableCase> {
        self.cases.iter().filter(move |c| c.case.runs_in(profile))
    }

    /// The clauses where the upstream implementation departs from the documented behaviour.
    pub fn divergent_clauses(&self) -> impl Iterator<Item = &Clause> {
        self.clauses.values().filter(|c| c.diverges())
    }

    /// The GE commit the `upstream` entries were checked against, when the tables pin one (they
    /// must whenever a clause has an `upstream` entry).
    pub fn upstream_pin(&self) -> Option<&UpstreamPin> {
        self.upstream.as_ref()
    }

    /// The answers the text allows where it is silent, other than the reference's
    /// (`alternatives.toml`), in table order.
    pub fn alternatives(&self) -> &[Alternative] {
        &self.alternatives
    }

    /// The cases that check `clause`.
    pub fn cases_for(&self, clause: &str) -> impl Iterator<Item = &TableCase> {
        let clause = clause.to_owned();
        self.cases
            .iter()
            .filter(move |c| c.case.clauses.contains(&clause))
    }

    /// SHA-256 over every table file (path and contents), lowercase hex. Reports carry it so a
    /// third party can tell which contract a verdict was made against.
    pub fn digest(&self) -> &str {
        // Only the embedded tables leave it to be made here (`Spec::load`).
        self.digest.get_or_init(|| {
            let mut files = TABLE_FILES.to_vec();
            files.sort();
            digest_of(&files, true)
        })
    }
}

/// How far [`Spec::load`] checks what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// Tables from anywhere: every rule is checked and the digest made at once.
    Checked,
    /// The tables built into the crate: read only. The same files and built cases pass every
    /// rule when read as [`Trust::Checked`] ([`Spec::embedded_from_toml`], which this crate's
    /// tests load, and which must equal what this reads), and their digest is made when it is
    /// first asked for, so that a process running one trial does neither.
    Embedded,
}

/// SHA-256 over the table files `files` (in path order: each path and text behind its length)
/// and, when there are `built` cases, the code that builds them, which stands for them.
fn digest_of(files: &[(&str, &str)], built: bool) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in files {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    if built {
        hasher.update((crate::built::SOURCE.len() as u64).to_le_bytes());
        hasher.update(crate::built::SOURCE.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The rules of `alternatives.toml`: unique names of lowercase words, at least one capability,
/// and clauses that exist and are the suite's choices (the text is silent there).
fn check_alternatives(
    clauses: &BTreeMap<String, Clause>,
    alternatives: &[Alternative],
    errors: &mut Vec<LoadError>,
) {
    let mut seen = BTreeSet::new();
    for a in alternatives {
        let mut wrong =
            |why: String| errors.push(LoadError::Alternative(format!("{}: {why}", a.id)));
        if !valid_case_name(&a.id) || a.id.contains('_') {
            wrong("the name is not lowercase words joined by `-`".into());
        }
        if !seen.insert(a.id.as_str()) {
            wrong("listed twice".into());
        }
        if a.capabilities.is_empty() {
            wrong("names no capability".into());
        }
        if a.clauses.is_empty() {
            wrong("names no clause".into());
        }
        for id in &a.clauses {
            match clauses.get(id) {
                None => wrong(format!("clause {id} does not exist")),
                Some(c) if c.origin != Origin::ReferenceDefined => wrong(format!(
                    "clause {id} is {}: an alternative makes a choice where the text is silent",
                    c.origin
                )),
                Some(_) => {}
            }
        }
    }
}

/// The rules the tables obey as a whole and case by case: valid, unique case names, clauses
/// that exist and are each covered by a case, the profile and reporting rules.
fn check_tables(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    errors: &mut Vec<LoadError>,
) {
    let mut names = BTreeSet::new();
    let mut covered = BTreeSet::new();
    check_cases(clauses, cases, &mut names, &mut covered, errors);
    for id in clauses.keys() {
        if !covered.contains(id) {
            errors.push(LoadError::UncoveredClause { id: id.clone() });
        }
    }
    check_profiles(clauses, cases, errors);
    check_reporting(clauses, cases, errors);
}

/// The rules every case obeys on its own, wherever it comes from (the embedded tables or a
/// vendor's, [`Spec::with_local_cases`]): a full name not taken yet (`names`), a valid name, at
/// least one clause and every one of them defined (recorded in `covered`), something to judge,
/// a root cause written down, a table as `expect` whose pattern names no message and only what
/// a diagnostic pattern may name, and a `profile` only on a case citing a divergent clause.
fn check_cases(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    names: &mut BTreeSet<String>,
    covered: &mut BTreeSet<String>,
    errors: &mut Vec<LoadError>,
) {
    for tc in cases {
        let full = tc.full_name();
        if !names.insert(full.clone()) {
            errors.push(LoadError::DuplicateCase { name: full.clone() });
        }
        if !valid_case_name(&tc.case.name) {
            errors.push(LoadError::BadCase {
                name: full.clone(),
                why: "names use lowercase letters, digits, `-` and `_` only".into(),
            });
        }
        if tc.case.clauses.is_empty() {
            errors.push(LoadError::BadCase {
                name: full.clone(),
                why: "names no clause".into(),
            });
        }
        if tc.case.expect.is_none() && !tc.case.oracle {
            errors.push(LoadError::BadCase {
                name: full.clone(),
                why: "has neither `expect` nor `oracle = true`: it could never fail".into(),
            });
        }
        if tc
            .case
            .comment
            .as_deref()
            .is_some_and(|c| c.contains(ROOT_CAUSE_SLOT))
        {
            errors.push(LoadError::BadCase {
                name: full.clone(),
                why: "was promoted from a finding and its comment still waits for the root cause"
                    .into(),
            });
        }
        if let Some(expect) = &tc.case.expect {
            if !expect.is_object() {
                errors.push(LoadError::BadCase {
                    name: full.clone(),
                    why: "`expect` must be a table".into(),
                });
            }
        }
        for clause in &tc.case.clauses {
            if clauses.contains_key(clause) {
                covered.insert(clause.clone());
            } else {
                errors.push(LoadError::UnknownClause {
                    case: full.clone(),
                    clause: clause.clone(),
                });
            }
        }
    }
    check_case_profiles(clauses, cases, errors);
    check_case_patterns(clauses, cases, errors);
}

/// The profile rule of one case: a case bound to one profile cites a clause where the profiles
/// diverge.
fn check_case_profiles(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    errors: &mut Vec<LoadError>,
) {
    let divergent = |id: &String| clauses.get(id).is_some_and(Clause::diverges);
    for tc in cases {
        if let Some(profile) = tc.case.profile {
            if !tc.case.clauses.iter().any(divergent) {
                errors.push(LoadError::BadCase {
                    name: tc.full_name(),
                    why: format!(
                        "holds under the {profile} profile only, but cites no clause with an `upstream` entry"
                    ),
                });
            }
        }
    }
}

/// The profile rules of the tables: every divergent clause has an upstream-only case; every
/// clause is checked under each profile.
fn check_profiles(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    errors: &mut Vec<LoadError>,
) {
    let index = citing_index(cases);
    for (id, clause) in clauses {
        let citing = || index.get(id.as_str()).into_iter().flatten().copied();
        if citing().next().is_none() {
            // Reported as UncoveredClause already.
            continue;
        }
        if clause.diverges() && !citing().any(|c| c.case.profile == Some(Profile::Upstream)) {
            errors.push(LoadError::BadClause {
                id: id.clone(),
                why: "has an `upstream` entry but no case with `profile = \"upstream\"`".into(),
            });
        }
        for profile in Profile::ALL {
            if !citing().any(|c| c.case.runs_in(profile)) {
                errors.push(LoadError::UncoveredInProfile {
                    id: id.clone(),
                    profile,
                });
            }
        }
        if let Some(up) = &clause.upstream {
            if up.behaviour.trim().is_empty() {
                errors.push(LoadError::BadClause {
                    id: id.clone(),
                    why: "the upstream behaviour is empty".into(),
                });
            }
            if up.source.is_empty() {
                errors.push(LoadError::BadClause {
                    id: id.clone(),
                    why: "the upstream entry cites no `source` in GE's code".into(),
                });
            }
            for problem in up.source.iter().filter_map(Evidence::problem) {
                errors.push(LoadError::BadClause {
                    id: id.clone(),
                    why: format!("upstream source: {problem}"),
                });
            }
        }
    }
}

/// The cases citing each clause, in table order: built once, since every process that loads the
/// contract runs the checks that read it (one per trial under nextest).
fn citing_index(cases: &[TableCase]) -> BTreeMap<&str, Vec<&TableCase>> {
    let mut index: BTreeMap<&str, Vec<&TableCase>> = BTreeMap::new();
    for c in cases {
        for id in &c.case.clauses {
            let cited = index.entry(id.as_str()).or_default();
            // A case citing a clause twice is refused elsewhere; here it counts once.
            if !cited.last().is_some_and(|last| std::ptr::eq(*last, c)) {
                cited.push(c);
            }
        }
    }
    index
}

/// The pattern rules of each case's `expect` (see [`check_reporting`]).
fn check_case_patterns(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    errors: &mut Vec<LoadError>,
) {
    for tc in cases {
        if let Some(expect) = &tc.case.expect {
            let mut problems = Vec::new();
            // SES-017: in a session every diagnostic about one load names its graph.
            let session = tc.capability() == Capability::Session;
            // OPT-011 upstream: after GE's first failing check, a later refusal may be absent.
            let first_failure = tc.case.profile == Some(Profile::Upstream)
                && tc.case.clauses.iter().any(|c| c == "OPT-011");
            let ctx = PatternContext {
                session,
                first_failure,
            };
            check_pattern(expect, clauses, ctx, "", &mut problems);
            for why in problems {
                errors.push(LoadError::BadCase {
                    name: tc.full_name(),
                    why,
                });
            }
        }
    }
}

/// What the table files read so far hold.
#[derive(Default)]
struct Read {
    options: BTreeMap<OptionKey, OptionSpec>,
    clauses: BTreeMap<String, Clause>,
    cases: Vec<TableCase>,
    seen_options_file: bool,
    upstream: Option<UpstreamPin>,
    alternatives: Vec<Alternative>,
}

impl Read {
    /// Reads the table file `path` (its TOML `text`, or `json` when the build converted it),
    /// each row checked on its own; what is wrong goes to `errors`.
    fn file(&mut self, path: &str, text: &str, json: Option<&str>, errors: &mut Vec<LoadError>) {
        let parse_err = |message: String| LoadError::Parse {
            file: path.to_owned(),
            message: message.trim_end().to_owned(),
        };
        if path == "options.toml" {
            self.seen_options_file = true;
            match read_table::<OptionsFile>(text, json) {
                Ok(file) => {
                    for row in file.option {
                        check_option(&row, errors);
                        if self.options.insert(row.key, row.clone()).is_some() {
                            errors.push(LoadError::Option(format!("{} is listed twice", row.key)));
                        }
                    }
                }
                Err(e) => errors.push(parse_err(e)),
            }
        } else if path == "upstream.toml" {
            match read_table::<UpstreamFile>(text, json) {
                Ok(file) => {
                    let commit = &file.upstream.commit;
                    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                        errors.push(LoadError::Upstream(format!(
                            "commit `{commit}` is not 40 hexadecimal digits"
                        )));
                    }
                    self.upstream = Some(file.upstream);
                }
                Err(e) => errors.push(parse_err(e)),
            }
        } else if path == "alternatives.toml" {
            match read_table::<AlternativesFile>(text, json) {
                Ok(file) => self.alternatives = file.alternative,
                Err(e) => errors.push(parse_err(e)),
            }
        } else if let Some(rest) = path.strip_prefix("clauses/") {
            let _ = rest;
            match read_table::<ClausesFile>(text, json) {
                Ok(file) => {
                    for clause in file.clause {
                        check_clause(&clause, errors);
                        if self.clauses.contains_key(&clause.id) {
                            errors.push(LoadError::DuplicateClause { id: clause.id });
                        } else {
                            self.clauses.insert(clause.id.clone(), clause);
                        }
                    }
                }
                Err(e) => errors.push(parse_err(e)),
            }
        } else if let Some(rest) = path.strip_prefix("cases/") {
            let table = rest.strip_suffix(".toml").unwrap_or(rest).replace('/', "-");
            match read_table::<CasesFile>(text, json) {
                Ok(file) => {
                    for case in file.case {
                        self.cases.push(TableCase {
                            table: table.clone(),
                            case: Arc::new(case),
                        });
                    }
                }
                Err(e) => errors.push(parse_err(e)),
            }
        } else {
            errors.push(LoadError::StrayFile {
                file: path.to_owned(),
            });
        }
    }
}

/// The rules that tie diagnostics and levels together: `reported_under` names a clause that
/// exists; an `expect` pattern never names a `message` (wording is never judged), spells its
/// diagnostics with the fields a diagnostic has, names only the subject fields the cited clause
/// defines, and marks optional only what a MAY clause permits; and every clause that binds at
/// level `documented` has a case that binds there too (every clause it cites binds), under each
/// profile where it binds, so that breaking it fails a certification at the default level.
fn check_reporting(
    clauses: &BTreeMap<String, Clause>,
    cases: &[TableCase],
    errors: &mut Vec<LoadError>,
) {
    for (id, clause) in clauses {
        if let Some(target) = &clause.reported_under {
            if !clauses.contains_key(target) {
                errors.push(LoadError::BadClause {
                    id: id.clone(),
                    why: format!("`reported_under` names {target}, which does not exist"),
                });
            }
        }
        for target in &clause.implied_by {
            let why = match clauses.get(target) {
                None => format!("`implied_by` names {target}, which does not exist"),
                Some(_) if target == id => "`implied_by` names the clause itself".to_owned(),
                Some(c)
                    if c.origin != Origin::Documented || clause.origin != Origin::Documented =>
                {
                    format!("`implied_by` ties {id} to {target}: both must be documented")
                }
                Some(c) if !c.implied_by.is_empty() => {
                    format!("`implied_by` names {target}, which is implied itself: name what implies it")
                }
                Some(_) => continue,
            };
            errors.push(LoadError::BadClause {
                id: id.clone(),
                why,
            });
        }
    }
    let index = citing_index(cases);
    for profile in Profile::ALL {
        // A clause that does not exist is reported on its own (UnknownClause).
        let binds = |id: &String| {
            clauses
                .get(id)
                .is_none_or(|c| c.binds(profile, Conformance::Documented))
        };
        for (id, clause) in clauses {
            if !clause.binds(profile, Conformance::Documented) {
                continue;
            }
            let citing = index
                .get(id.as_str())
                .into_iter()
                .flatten()
                .filter(|c| c.case.runs_in(profile));
            let mut any = false;
            let mut pure = false;
            for c in citing {
                any = true;
                pure |= c.case.clauses.iter().all(binds);
            }
            if any && !pure {
                errors.push(LoadError::BadClause {
                    id: id.clone(),
                    why: format!(
                        "binds at level documented under the {profile} profile, but every case citing it also cites a suite choice: add a case that cites only binding clauses, so breaking it fails at the default level"
                    ),
                });
            }
        }
    }
}

/// The fields a diagnostic pattern may name.
const DIAGNOSTIC_PATTERN_FIELDS: [&str; 6] =
    ["clause", "key", "level", "value", "subject", "optional"];

/// What decides which diagnostic patterns a case may hold.
#[derive(Clone, Copy)]
struct PatternContext {
    /// A session case: a diagnostic may name its graph (SES-017).
    session: bool,
    /// An upstream case citing OPT-011: a refusal or warning after GE's first failing check may
    /// be optional.
    first_failure: bool,
}

fn check_pattern(
    pattern: &serde_json::Value,
    clauses: &BTreeMap<String, Clause>,
    ctx: PatternContext,
    path: &str,
    problems: &mut Vec<String>,
) {
    use serde_json::Value;
    match pattern {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{path}/{key}");
                if key == "message" {
                    problems.push(format!(
                        "`expect` names a message at {here}: wording is never judged"
                    ));
                    continue;
                }
                if key == "errors" || key == "warnings" {
                    if let Value::Array(items) = value {
                        for (i, item) in items.iter().enumerate() {
                            check_diagnostic_pattern(
                                item,
                                clauses,
                                ctx,
                                &format!("{here}/{i}"),
                                problems,
                            );
                        }
                        continue;
                    }
                }
                check_pattern(value, clauses, ctx, &here, problems);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_pattern(item, clauses, ctx, &format!("{path}/{i}"), problems);
            }
        }
        _ => {}
    }
}

fn check_diagnostic_pattern(
    item: &serde_json::Value,
    clauses: &BTreeMap<String, Clause>,
    ctx: PatternContext,
    path: &str,
    problems: &mut Vec<String>,
) {
    use serde_json::Value;
    let Value::Object(map) = item else {
        problems.push(format!("the diagnostic at {path} is not a table"));
        return;
    };
    for key in map.keys() {
        if key == "message" {
            problems.push(format!(
                "`expect` names a message at {path}/message: wording is never judged"
            ));
        } else if !DIAGNOSTIC_PATTERN_FIELDS.contains(&key.as_str()) {
            problems.push(format!(
                "the diagnostic at {path} names `{key}`, which is no field of a diagnostic pattern"
            ));
        }
    }
    let clause = map
        .get("clause")
        .and_then(Value::as_str)
        .and_then(|id| clauses.get(id));
    let Some(clause) = clause else {
        problems.push(format!(
            "the diagnostic at {path} names no clause of the tables"
        ));
        return;
    };
    match map.get("subject") {
        None => {}
        Some(Value::Object(subject)) => {
            for field in subject.keys() {
                let defined = clause.subject.iter().any(|f| f == field);
                if !(defined || ctx.session && field == "graph") {
                    problems.push(format!(
                        "the diagnostic at {path} names subject field `{field}`, which {} does not define (it defines: {})",
                        clause.id,
                        if clause.subject.is_empty() { "none".to_owned() } else { clause.subject.join(", ") }
                    ));
                }
            }
        }
        Some(_) => problems.push(format!(
            "the subject at {path}/subject is not a table of typed fields"
        )),
    }
    match map.get("optional") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) if clause.permits_only() || ctx.first_failure => {}
        Some(Value::Bool(true)) => problems.push(format!(
            "the diagnostic at {path} is optional, but {} is not a MAY clause: only what a clause permits may be absent",
            clause.id
        )),
        Some(_) => problems.push(format!("`optional` at {path} is not true or false")),
    }
}

fn check_option(row: &OptionSpec, errors: &mut Vec<LoadError>) {
    let mut bad = |why: &str| errors.push(LoadError::Option(format!("{}: {why}", row.key)));
    if row.levels.is_empty() {
        bad("lists no level");
    }
    let mut levels = row.levels.clone();
    levels.dedup();
    if levels.len() != row.levels.len() || !row.levels.windows(2).all(|w| w[0] < w[1]) {
        bad("levels must be listed once each, widest first");
    }
    match row.grammar {
        Grammar::Enumeration => {
            if row.values.is_empty() {
                bad("an enumeration needs `values`");
            }
            match &row.default {
                Some(d) if row.values.iter().any(|v| &v.value == d) => {}
                _ => bad("the default of an enumeration must be one of its values"),
            }
        }
        Grammar::IntegerRange => match (row.min, row.max, row.default.as_deref()) {
            (Some(min), Some(max), Some(d)) if min <= max => match d.parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => {}
                _ => bad("the default must be an integer within min..=max"),
            },
            _ => bad("an integer range needs min <= max and a default"),
        },
        Grammar::IndexList | Grammar::PairList | Grammar::Path => {
            if !row.values.is_empty() || row.min.is_some() || row.max.is_some() {
                bad("only enumerations have `values` and only ranges have `min`/`max`");
            }
        }
    }
}

fn check_clause(clause: &Clause, errors: &mut Vec<LoadError>) {
    let mut bad = |why: String| {
        errors.push(LoadError::BadClause {
            id: clause.id.clone(),
            why,
        })
    };
    if !valid_clause_id(&clause.id) {
        bad("IDs are three capital letters, `-`, three digits".into());
    }
    let prefix = clause.id.get(..3).unwrap_or("");
    match clause.option {
        Some(key) if key.clause_prefix() != prefix => bad(format!(
            "belongs to {key}, whose clauses start with {}",
            key.clause_prefix()
        )),
        None if OptionKey::ALL.iter().any(|k| k.clause_prefix() == prefix) => bad(format!(
            "prefix {prefix} belongs to an option; set `option`"
        )),
        _ => {}
    }
    match (clause.origin, &clause.rationale) {
        (Origin::ReferenceDefined | Origin::Vocabulary, None) => bad(format!(
            "{} clauses need a rationale",
            clause.origin
        )),
        (Origin::ReferenceDefined | Origin::Vocabulary, Some(r)) if r.trim().is_empty() => bad(
            format!("{} clauses need a rationale", clause.origin),
        ),
        (Origin::Documented, Some(_)) => bad(
            "documented clauses rest on the source text; a rationale is for reference-defined and vocabulary ones"
                .into(),
        ),
        _ => {}
    }
    match (clause.origin, clause.strength, &clause.source) {
        (Origin::Documented, None, _) => bad(
            "documented clauses need a strength (MUST, SHOULD or MAY, as the text's wording supports)"
                .into(),
        ),
        (Origin::Documented, _, None) => bad(
            "documented clauses need a `source`: where in the section the statement stands".into(),
        ),
        (Origin::Documented, _, Some(s)) if s.trim().is_empty() => {
            bad("the `source` is empty".into())
        }
        (Origin::ReferenceDefined, Some(_), _) => bad(
            "a strength is for documented clauses: the text's own wording sets it, and a reference-defined clause binds at level strict only"
                .into(),
        ),
        (Origin::Vocabulary, Some(_), _) => bad(
            "a strength is for documented clauses: the text's own wording sets it, and a vocabulary clause binds whatever the text says"
                .into(),
        ),
        _ => {}
    }
    for field in &clause.subject {
        if !crate::diag::SUBJECT_FIELDS.contains(&field.as_str()) {
            bad(format!(
                "`subject` names `{field}`, which is no field of a subject ({})",
                crate::diag::SUBJECT_FIELDS.join(", ")
            ));
        }
    }
    if clause.reported_under.as_deref() == Some(clause.id.as_str()) {
        bad("`reported_under` names the clause itself; leave it out instead".into());
    }
    if clause.summary.trim().is_empty() {
        bad("the summary is empty".into());
    }
}

/// The JSON Schemas this crate publishes under `spec/schema/`, as (file name, schema): the three
/// table kinds, and the scenario and observation JSON that travels through CLI and protocol.
#[cfg(feature = "schema")]
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    fn one<T: JsonSchema>() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Null)
    }
    vec![
        ("options-table.schema.json", one::<OptionsFile>()),
        ("clauses-table.schema.json", one::<ClausesFile>()),
        ("cases-table.schema.json", one::<CasesFile>()),
        ("upstream-table.schema.json", one::<UpstreamFile>()),
        ("alternatives-table.schema.json", one::<AlternativesFile>()),
        ("scenario.schema.json", one::<Scenario>()),
        (
            "observation.schema.json",
            one::<crate::vocab::Observation>(),
        ),
    ]
}
