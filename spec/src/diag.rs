//! Diagnostics: the errors and warnings a backend reports, each citing the clause it is about,
//! with a typed subject saying what exactly it is about.
//!
//! # What is judged
//!
//! At level `documented` a diagnostic is judged by what it reports: its list (`errors` or
//! `warnings`), the option key, the level and the subject fields it carries. Which clause it
//! cites, or whether it cites one at all (`clause` may be empty), is the form, judged at level
//! `strict` only (clause `OPT-012`), and so is whether each offending item has a diagnostic of
//! its own. Nothing else is compared: not the `message`, which is for people and may be worded
//! any way, not the `value`, which repeats what the scenario says, and not a key, level or
//! subject field that the suite's own diagnostic does not have. Whether a diagnostic must be
//! there at all is decided by the clause that calls for it (the clause itself, or the one its
//! `reported_under` names), at the conformance level of that clause: most diagnostics are the
//! suite's own choices (reference-defined) and are judged at level `strict` only. The harness's
//! `oracle::diagnostics` and `docs/protocol.md` ("How a diagnostic is judged") give the rules.
//!
//! # Which clause a diagnostic cites (the form judged at level `strict`)
//!
//! | situation | list | clause | key, level | subject |
//! |---|---|---|---|---|
//! | a switch or mode (an option with a list of values) set to anything but one of its values, however spelled | errors | the option's value clause: `ACP-001`, `DRM-001`, `RZC-001`, `SMP-001`, `EXW-001`, `IBC-001`, `FBR-001` | yes | |
//! | a threshold (`ge.exec.input_fusion_size`) in plain decimal but out of range | errors | `IFS-001` | yes | |
//! | a threshold not in plain decimal (sign, space, leading zero, other characters), or an empty value of any option | errors | `OPT-003` | yes | |
//! | an index-list item that is empty, not a plain decimal, or repeated | errors | `IRM-004` / `ORM-004` | yes | `item` (the item verbatim, `""` when empty), or `index` when repeated |
//! | an index not below the input (output) count | warnings | `IRM-003` / `ORM-003` | yes | `index` |
//! | a pair that is not `input,output` in plain decimal | errors | `ORI-006` | yes | `pair` (the segment verbatim) |
//! | a pair with an index out of range | errors | `ORI-003` | yes | `pair` (the segment verbatim) |
//! | an output (input) named in two pairs | errors | `ORI-004` (`ORI-005`) | yes | `output` (`input`) |
//! | a directory path holding a NUL byte | errors | `EWD-004` | yes | |
//! | an option set at a level where it does not take effect | warnings | `OPT-002` | yes | |
//! | an option asking for something a condition outside the maps rules out | warnings | `IFS-003` (synchronous run), `IFS-004` (dynamic shapes), `IBC-003` (one input), `IBC-004` (product), `IBC-005` (synchronous run), `FBR-003` (dynamic shapes), `EWD-003` (`ge.externalWeight` off) | yes | |
//! | `ge.inputBatchCpy` set at the global or graph level (optional) | warnings | `IBC-006` | yes | |
//! | a memory scenario that describes no graph | errors | `MEM-001` | | `tensor`, `input`, `output` or `part` |
//! | a listed input (output) whose size is not a multiple of 32 | errors | `IRM-011` (`ORM-011`) | key | `input` (`output`) |
//! | a run passing the two halves of an alias pair at different addresses | errors | `ORI-011` | key | `input` and `output` |
//! | a transfer scenario with inputs sharing an index | errors | `TRF-002` | | `input` |
//! | session: a refresh refused | errors | `FBR-011`, `FBR-013` or `FBR-014` | key for `FBR-011`/`FBR-014` | `step` |
//! | session: an event about a graph in the wrong state | errors | `SES-012` | | `step` |
//! | session: a script past the caps | errors | `SES-020` | | `part` = `script` |
//! | weights: a scenario path outside the sandbox | errors | `WGT-001` | | `part` or `setup` |
//! | weights: a malformed model | errors | `WGT-002` | | `constant` or `part` |
//! | weights: a directory or file that cannot be made | errors | `WGT-008` | | `path` |
//!
//! In a session, a diagnostic about one load also carries `graph` (clause `SES-017`).

use std::cmp::Ordering;
use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::option::Level;

/// A part of a scenario a diagnostic can be about, when no finer subject applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// A session script as a whole (`SES-020`).
    Script,
    /// The tensor sizes of a memory scenario taken together (`MEM-001`).
    Sizes,
    /// The run addresses of a memory scenario (`MEM-001`).
    Run,
    /// The constants of a weights scenario taken together (`WGT-002`).
    Constants,
    /// The root graph name of a weights scenario (`WGT-002`).
    RootGraph,
    /// The inputs chosen for fusion, taken together, when their sizes add up past 64 bits
    /// (`TRF-002`).
    FusedInputs,
    /// The working directory of a weights scenario (`WGT-001`).
    WorkDir,
    /// The `ASCEND_WORK_PATH` of a weights scenario (`WGT-001`).
    AscendWorkPath,
    /// The `ge.externalWeightDir` of a weights scenario, once resolved (`WGT-001`).
    ExternalWeightDir,
}

impl Part {
    /// The part's spelling in JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Part::Script => "script",
            Part::Sizes => "sizes",
            Part::Run => "run",
            Part::Constants => "constants",
            Part::RootGraph => "root-graph",
            Part::FusedInputs => "fused-inputs",
            Part::WorkDir => "work-dir",
            Part::AscendWorkPath => "ascend-work-path",
            Part::ExternalWeightDir => "external-weight-dir",
        }
    }
}

/// What a diagnostic is about beyond its key: typed fields, each present only where it applies,
/// written in JSON as an object such as `{"index": 3}`, `{"item": "x"}`, `{"pair": "0,1"}` or
/// `{"graph": 2, "step": 5}`. Which fields a diagnostic carries is fixed by the clause it cites
/// (see the module docs); only those are compared.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Subject {
    /// Session: the graph id of the load the diagnostic is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<u32>,
    /// Session: the index of the script event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// An index of an index list, as a number. An index too large for 64 bits is named by
    /// `item` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// An item of an index list, verbatim (`""` for an empty item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// A segment of a pair list, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<String>,
    /// A graph input, by index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u32>,
    /// A graph output, by index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u32>,
    /// A tensor of a memory scenario, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<String>,
    /// A constant of a weights scenario, by node name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<String>,
    /// A path relative to the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A setup step of a weights scenario, by position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<u32>,
    /// A part of the scenario taken as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
}

/// A field's value as [`Subject::agrees_on`] compares it.
#[derive(PartialEq)]
enum FieldValue<'a> {
    Number(u64),
    Text(&'a str),
    Part(Part),
}

/// The names of the fields of [`Subject`], as the clause tables list them.
pub const SUBJECT_FIELDS: [&str; 12] = [
    "graph", "step", "index", "item", "pair", "input", "output", "tensor", "constant", "path",
    "setup", "part",
];

impl Subject {
    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == Subject::default()
    }

    /// `{"index": n}`.
    pub fn index(n: u64) -> Self {
        Subject {
            index: Some(n),
            ..Subject::default()
        }
    }

    /// `{"item": text}`.
    pub fn item(text: impl Into<String>) -> Self {
        Subject {
            item: Some(text.into()),
            ..Subject::default()
        }
    }

    /// `{"pair": segment}`.
    pub fn pair(segment: impl Into<String>) -> Self {
        Subject {
            pair: Some(segment.into()),
            ..Subject::default()
        }
    }

    /// `{"input": i}`.
    pub fn input(i: u32) -> Self {
        Subject {
            input: Some(i),
            ..Subject::default()
        }
    }

    /// `{"output": j}`.
    pub fn output(j: u32) -> Self {
        Subject {
            output: Some(j),
            ..Subject::default()
        }
    }

    /// `{"input": i, "output": j}`: one alias pair.
    pub fn alias(i: u32, j: u32) -> Self {
        Subject {
            input: Some(i),
            output: Some(j),
            ..Subject::default()
        }
    }

    /// `{"tensor": name}`.
    pub fn tensor(name: impl Into<String>) -> Self {
        Subject {
            tensor: Some(name.into()),
            ..Subject::default()
        }
    }

    /// `{"constant": name}`.
    pub fn constant(name: impl Into<String>) -> Self {
        Subject {
            constant: Some(name.into()),
            ..Subject::default()
        }
    }

    /// `{"path": path}`.
    pub fn path(path: impl Into<String>) -> Self {
        Subject {
            path: Some(path.into()),
            ..Subject::default()
        }
    }

    /// `{"setup": i}`.
    pub fn setup(i: u32) -> Self {
        Subject {
            setup: Some(i),
            ..Subject::default()
        }
    }

    /// `{"step": n}`.
    pub fn step(n: u32) -> Self {
        Subject {
            step: Some(n),
            ..Subject::default()
        }
    }

    /// `{"part": part}`.
    pub fn part(part: Part) -> Self {
        Subject {
            part: Some(part),
            ..Subject::default()
        }
    }

    /// The same subject, about the load of graph `id` as well.
    pub fn in_graph(mut self, id: u32) -> Self {
        self.graph = Some(id);
        self
    }

    /// The value of the field called `name` (a name of [`SUBJECT_FIELDS`]), `None` when it is
    /// not set or there is no such field.
    fn field(&self, name: &str) -> Option<FieldValue<'_>> {
        let num = |v: Option<u32>| v.map(|v| FieldValue::Number(u64::from(v)));
        fn text(v: &Option<String>) -> Option<FieldValue<'_>> {
            v.as_deref().map(FieldValue::Text)
        }
        match name {
            "graph" => num(self.graph),
            "step" => num(self.step),
            "index" => self.index.map(FieldValue::Number),
            "item" => text(&self.item),
            "pair" => text(&self.pair),
            "input" => num(self.input),
            "output" => num(self.output),
            "tensor" => text(&self.tensor),
            "constant" => text(&self.constant),
            "path" => text(&self.path),
            "setup" => num(self.setup),
            "part" => self.part.map(FieldValue::Part),
            _ => None,
        }
    }

    /// True when the field called `name` (a name of [`SUBJECT_FIELDS`]) is set.
    pub fn sets(&self, name: &str) -> bool {
        self.field(name).is_some()
    }

    /// True when `self` and `other` agree on every field named in `fields` (both unset, or
    /// both set to the same value); names that are not fields agree. The same as comparing
    /// both [`Subject::restricted_to`] `fields`, without building either.
    pub fn agrees_on(&self, other: &Subject, fields: &[String]) -> bool {
        fields.iter().all(|f| self.agrees_in(other, f))
    }

    /// True when `self` and `other` agree on the field called `name`, as [`Subject::agrees_on`].
    pub fn agrees_in(&self, other: &Subject, name: &str) -> bool {
        self.field(name) == other.field(name)
    }

    /// Only the fields named in `fields` (names of [`SUBJECT_FIELDS`]); the others cleared.
    pub fn restricted_to(&self, fields: &[String]) -> Subject {
        let keep = |name: &str| fields.iter().any(|f| f == name);
        Subject {
            graph: self.graph.filter(|_| keep("graph")),
            step: self.step.filter(|_| keep("step")),
            index: self.index.filter(|_| keep("index")),
            item: self.item.clone().filter(|_| keep("item")),
            pair: self.pair.clone().filter(|_| keep("pair")),
            input: self.input.filter(|_| keep("input")),
            output: self.output.filter(|_| keep("output")),
            tensor: self.tensor.clone().filter(|_| keep("tensor")),
            constant: self.constant.clone().filter(|_| keep("constant")),
            path: self.path.clone().filter(|_| keep("path")),
            setup: self.setup.filter(|_| keep("setup")),
            part: self.part.filter(|_| keep("part")),
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(v) = self.graph {
            parts.push(format!("graph {v}"));
        }
        if let Some(v) = self.step {
            parts.push(format!("step {v}"));
        }
        if let Some(v) = self.index {
            parts.push(format!("index {v}"));
        }
        if let Some(v) = &self.item {
            parts.push(format!("item {v:?}"));
        }
        if let Some(v) = &self.pair {
            parts.push(format!("pair {v:?}"));
        }
        if let Some(v) = self.input {
            parts.push(format!("input {v}"));
        }
        if let Some(v) = self.output {
            parts.push(format!("output {v}"));
        }
        if let Some(v) = &self.tensor {
            parts.push(format!("tensor {v}"));
        }
        if let Some(v) = &self.constant {
            parts.push(format!("constant {v}"));
        }
        if let Some(v) = &self.path {
            parts.push(format!("path {v}"));
        }
        if let Some(v) = self.setup {
            parts.push(format!("setup step {v}"));
        }
        if let Some(v) = self.part {
            parts.push(v.as_str().to_owned());
        }
        f.write_str(&parts.join(", "))
    }
}

/// One error or warning in an observation.
///
/// Equality and ordering deliberately ignore [`Diagnostic::message`]: the message is for people,
/// and two engines may word it differently. The harness judges a narrower identity still (see
/// the module docs): the clause, the key, the level and the subject fields the clause defines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct Diagnostic {
    /// The clause ID the diagnostic is about, for example `IRM-003`, or empty when the engine
    /// cites none (an adapter over an engine that knows no clause IDs). Which clause is cited
    /// is judged at level `strict` only: at level `documented` a diagnostic is judged by its
    /// list, key, level and the subject fields it carries.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub clause: String,
    /// The option key concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The level the offending setting was made at, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The offending value, verbatim, if any. Informative: not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What the diagnostic is about beyond the key (see [`Subject`]).
    #[serde(default, skip_serializing_if = "Subject::is_empty")]
    pub subject: Subject,
    /// A sentence a person understands. Never compared.
    #[serde(default)]
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic for `clause` with a message and nothing else set.
    pub fn new(clause: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            clause: clause.into(),
            key: None,
            level: None,
            value: None,
            subject: Subject::default(),
            message: message.into(),
        }
    }

    /// Sets the option key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the level.
    pub fn level(mut self, level: Level) -> Self {
        self.level = Some(level);
        self
    }

    /// Sets the offending value.
    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Sets the subject.
    pub fn subject(mut self, subject: Subject) -> Self {
        self.subject = subject;
        self
    }

    fn sort_key(
        &self,
    ) -> (
        &str,
        &Option<String>,
        &Option<Level>,
        &Subject,
        &Option<String>,
    ) {
        (
            &self.clause,
            &self.key,
            &self.level,
            &self.subject,
            &self.value,
        )
    }
}

impl PartialEq for Diagnostic {
    fn eq(&self, other: &Self) -> bool {
        self.sort_key() == other.sort_key()
    }
}

impl Eq for Diagnostic {}

impl PartialOrd for Diagnostic {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Diagnostic {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.clause.is_empty() {
            f.write_str("[no clause]")?;
        } else {
            write!(f, "[{}]", self.clause)?;
        }
        if let Some(key) = &self.key {
            write!(f, " {key}")?;
        }
        if let Some(level) = &self.level {
            write!(f, " at {level} level")?;
        }
        if let Some(value) = &self.value {
            write!(f, " = {value:?}")?;
        }
        if !self.subject.is_empty() {
            write!(f, " ({})", self.subject)?;
        }
        write!(f, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Subjects that set one field to one of two values, or nothing: every pair of them differs
    /// in at most two fields, which is what `agrees_on` must see.
    fn subjects() -> Vec<Subject> {
        let mut all = vec![Subject::default()];
        for n in [1u32, 2] {
            let part = if n == 1 { Part::Script } else { Part::Sizes };
            all.extend([
                Subject::default().in_graph(n),
                Subject::step(n),
                Subject::index(u64::from(n)),
                Subject::item(format!("i{n}")),
                Subject::pair(format!("p{n}")),
                Subject::input(n),
                Subject::output(n),
                Subject::tensor(format!("t{n}")),
                Subject::constant(format!("c{n}")),
                Subject::path(format!("f{n}")),
                Subject::setup(n),
                Subject::part(part),
            ]);
        }
        all
    }

    #[test]
    fn agreeing_on_fields_is_comparing_the_restricted_subjects() {
        let mut lists: Vec<Vec<String>> = vec![Vec::new(), vec!["no-such-field".to_owned()]];
        lists.extend(SUBJECT_FIELDS.iter().map(|f| vec![(*f).to_owned()]));
        lists.push(SUBJECT_FIELDS.iter().map(|f| (*f).to_owned()).collect());
        for a in subjects() {
            for b in subjects() {
                for fields in &lists {
                    assert_eq!(
                        a.agrees_on(&b, fields),
                        a.restricted_to(fields) == b.restricted_to(fields),
                        "{a:?} {b:?} on {fields:?}"
                    );
                }
                for f in SUBJECT_FIELDS {
                    assert_eq!(a.sets(f), !a.restricted_to(&[f.to_owned()]).is_empty());
                }
            }
        }
    }
}
