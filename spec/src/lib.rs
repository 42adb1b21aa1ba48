//! The GE memory-options contract: spec tables, typed vocabulary and the [`Backend`] trait.
//!
//! This crate is the data and the contract; it knows nothing of any implementation. The tables
//! are embedded (see [`Spec::embedded`]), so a vendor depends on this crate, never on paths.
//!
//! # Format
//!
//! The tables live in `tables/` and are TOML. Every file starts with a `#` comment saying what it
//! covers. Unknown fields are load errors everywhere.
//!
//! ## `options.toml`: one `[[option]]` per option, all twelve
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `key` | yes | the option key, e.g. `ge.exec.input_fusion_size` |
//! | `summary` | yes | one line, our words |
//! | `grammar` | yes | `enumeration`, `integer-range`, `index-list`, `pair-list` or `path` |
//! | `values` | enumerations | `[{ value, meaning }]`, the allowed value strings |
//! | `min`, `max` | integer ranges | inclusive bounds |
//! | `default` | no | the default in canonical spelling; absent means "not set" |
//! | `levels` | yes | where the option takes effect: `global`, `session`, `graph`, widest first |
//! | `mandatory` | yes | whether it must be given |
//! | `restrictions` | no | `run_mode`, `shape`, `products`, `depends_on`, `min_inputs` |
//! | `section` | yes | the section of the source text |
//!
//! ## `upstream.toml`: the GE source the upstream profile rests on
//!
//! One `[upstream]` table: `repository` (`owner/name`) and `commit` (40 hexadecimal digits). Every
//! `source` of an `upstream` entry refers to lines at that commit; required whenever a clause has
//! an `upstream` entry.
//!
//! ## `clauses/*.toml`: one `[[clause]]` per checkable statement
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `id` | yes | stable, `AAA-000`; the prefix is the option's (`IFS`) or `OPT` for cross-cutting rules |
//! | `option` | for option prefixes | the option key |
//! | `summary` | yes | one line, our words (never the source text's sentences) |
//! | `origin` | yes | `documented` (the source text states it), `reference-defined` (the text is silent and the suite decided) or `vocabulary` (what makes an answer a true and complete account of what the engine did, whatever it chose) |
//! | `strength` | documented only | `MUST`, `SHOULD` or `MAY`, as the text's own wording supports it; a reference-defined clause has none (it binds at level `strict` only) |
//! | `source` | documented only | where in the section the statement stands (paragraph, list or note), so it can be checked in one hop |
//! | `rationale` | reference-defined and vocabulary only | why the suite decided so, or why the rule is the vocabulary's |
//! | `section` | yes | the section of the source text it rests on |
//! | `subject` | no | the subject fields (see [`diag::Subject`]) that diagnostics citing the clause carry; only these are compared |
//! | `reported_under` | no | the clause that calls for the diagnostics citing this one, when another does (a value rule is reported under `OPT-005`) |
//! | `implied_by` | no | documented clauses whose rules this documented one follows from (a worked example, a restriction that another option's rule already states): every answer breaking it breaks one of them, and the judge charges those |
//! | `upstream` | no | `{ behaviour, source, constants }`: what the open-source GE implementation does instead, on clauses where it departs from this one; `source` lists the places in GE's code that show it, `[{ file, function, lines }]` at the commit `upstream.toml` pins (at least one); `constants` (optional) names the numbers that behaviour turns on (`{ clamp = 33554432 }`), which the upstream reference and the judge read from here |
//!
//! ## Conformance levels
//!
//! A verdict is made at a [`Conformance`] level. At `documented` (the default) a broken
//! reference-defined clause is a *deviation*: reported, never a failure; at `strict` it fails
//! like the rest. Under the upstream profile a clause with an `upstream` entry records a fact of
//! GE and binds at both levels ([`Clause::is_suite_choice`]). A vocabulary clause binds at
//! both levels under both profiles: it is no choice about GE.
//!
//! ## `cases/*.toml`: one `[[case]]` per case
//!
//! The full name of a case is `<file stem>/<name>`.
//!
//! A few cases are built in code because their scenarios are too large for a row: the caps of
//! WGT-002 (10,000 constants) and SES-020 (100,000 events), at the cap and one past it.
//! [`Spec::embedded`] loads them as the tables `weights-limits` and `session-limits`
//! ([`built::TABLES`]), checked like the rest; [`Spec::from_files`] reads files only.
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `name` | yes | lowercase letters, digits, `-`, `_`; unique in its file |
//! | `clauses` | yes | the clause IDs the case checks (at least one) |
//! | `comment` | no | why the case exists; for promoted findings, the root cause |
//! | `scenario` | yes | the scenario, tagged by `capability` (the same JSON as everywhere) |
//! | `expect` | one of the two | the expected observation, as a pattern |
//! | `oracle` | one of the two | `true`: the capability's invariant oracle judges the answer too |
//! | `profile` | no | `documented` or `upstream`: the only [`Profile`] the case holds under; absent: both |
//!
//! ### Matching
//!
//! An `expect` pattern matches an observation when every field it names matches: tables match
//! key by key (fields the pattern leaves out are not judged, and a `null` requires the field to
//! be absent or null), arrays match element by element and must have the same length, scalars
//! must be equal. Observations are canonicalised first ([`Observation::canonicalize`]), so
//! unordered lists are compared sorted.
//!
//! The lists of diagnostics (`errors`, `warnings`) match as sets instead: every diagnostic of
//! the pattern must be found, and every diagnostic found must be in the pattern, each compared on
//! the fields the pattern names among `clause`, `key`, `level` and `subject` (only the subject
//! fields its clause defines). A pattern entry with `optional = true` may be found or not; only
//! a MAY clause can be optional. `message` is never named: wording is never judged.
//!
//! Under the upstream profile, a weights observation's `meta.json` at the top of its directory
//! is left out of the `files` a pattern is matched against, and out of the pattern's `files`
//! too: GE keeps its own index there whenever it converts a constant (the upstream entries of
//! EXW-011, EXW-014 and WGT-011), and the weights oracle requires it then (on disk under the
//! mode's clause, listed under WGT-005) and judges only its presence. So a case that runs under
//! both profiles lists the weight files alone, and an upstream case may name the path (by
//! `path` only: its length and hash are GE's business) to say so to a reader.
//!
//! A mismatch is judged by the clause it breaks: a missing or extra diagnostic by the clause that
//! calls for it, anything else by the case's clauses. When every clause a case cites binds at the
//! level in force, a mismatch is a failure; otherwise it is a deviation from the suite's choices
//! among them (at level `documented`). The oracle of the capability judges every case as well.
//!
//! ## Load errors
//!
//! Unknown fields, duplicate option rows, clause IDs or case names, a case naming a missing
//! clause, a clause no case checks, a reference-defined clause without a rationale, and a case
//! with nothing to judge are all load errors ([`LoadErrors`] lists every one). So are the
//! profile rules: a case with a `profile` must cite a clause with an `upstream` entry, every
//! clause with an `upstream` entry needs a `profile = "upstream"` case, and every clause needs a
//! case that runs under each profile. And the level rules: a documented clause needs a strength
//! and a source, a reference-defined or vocabulary one neither; patterns never name a `message`; and every
//! clause that binds at level `documented` needs a case citing binding clauses only.
#![deny(missing_docs)]

pub mod backend;
pub mod built;
pub mod conformance;
pub mod diag;
pub mod edges;
pub mod option;
pub mod profile;
pub mod tables;
pub mod vocab;

pub use backend::{Answer, Backend, NotSupported};
pub use conformance::Conformance;
pub use diag::{Diagnostic, Part, Subject};
pub use edges::Edges;
pub use option::{Level, OptionKey, Product, RunMode, ShapeKind, Source};
pub use profile::Profile;
pub use tables::{
    Alternative, Case, Clause, Evidence, Grammar, LoadError, LoadErrors, OptionSpec, Origin, Spec,
    Strength, TableCase, Upstream, UpstreamPin,
};
pub use vocab::{Capability, Observation, OptionMaps, Scenario};
