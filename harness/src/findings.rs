//! From tables to fuzzers and back: `corpus` writes seed inputs for every fuzz target from the
//! case tables, and `promote` turns a finding (a crash file or a scenario) into a new case in a
//! regression table, with the clauses it breaks and a slot for its root cause.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use ge_reference::Reference;
use ge_spec::tables::{Case, ROOT_CAUSE_SLOT};
use ge_spec::{Backend, Capability, Clause, Observation, Profile, Scenario, Spec};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::judging::Judging;
use crate::{certify, fuzz, runner};

/// What went wrong while writing a corpus or promoting a finding.
#[derive(Debug, thiserror::Error)]
pub enum FindingError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// An input could not be read, or is larger than its cap.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// No fuzz target has this name.
    #[error("no fuzz target {0:?} (targets: {targets})", targets = target_names())]
    UnknownTarget(String),
    /// The input is not a scenario, and no target was named or found in its path.
    #[error("{0}: not a scenario's JSON; name the fuzz target it came from with --target")]
    NeedsTarget(PathBuf),
    /// The target cannot read the input (it would have rejected it too).
    #[error("{path}: fuzz target {target} does not read this input as a scenario")]
    Undecodable {
        /// The input file.
        path: PathBuf,
        /// The target.
        target: String,
    },
    /// Nothing fails on the scenario and no clause was named.
    #[error(
        "nothing fails on this scenario with backend {0}; if the bug is fixed already, name \
         the clauses it broke with --clause"
    )]
    NoClause(String),
    /// A named clause does not exist.
    #[error("clause {0} does not exist")]
    UnknownClause(String),
    /// The reference itself fails on the scenario, so it cannot give the expectation.
    #[error(
        "the reference itself fails on this scenario [{clauses}]: {message}\nfix the reference \
         first; the promoted case takes its expectation from it"
    )]
    ReferenceFails {
        /// The clauses the reference breaks.
        clauses: String,
        /// What is wrong.
        message: String,
    },
    /// The regression table already has a case of that name.
    #[error("{table}: a case named {name} exists already; choose another with --name")]
    DuplicateName {
        /// The table file.
        table: PathBuf,
        /// The name.
        name: String,
    },
    /// The new case cannot be written as TOML, or would not load.
    #[error("the promoted case does not make a valid table: {0}")]
    Invalid(String),
}

fn target_names() -> String {
    fuzz::TARGETS
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FindingError + '_ {
    move |source| FindingError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes the seeds of every target (or of `only`) under `out/<target>/`, one file per case,
/// and its dictionary as `out/<target>.dict` ([`fuzz::dictionary`]). Returns (target, number of seeds written).
pub fn write_corpus(
    spec: &Spec,
    out: &Path,
    only: Option<&str>,
) -> Result<Vec<(&'static str, usize)>, FindingError> {
    let targets: Vec<&fuzz::Target> = match only {
        Some(name) => {
            vec![fuzz::target(name).ok_or_else(|| FindingError::UnknownTarget(name.into()))?]
        }
        None => fuzz::TARGETS.iter().collect(),
    };
    let mut written = Vec::new();
    for t in targets {
        let dir = out.join(t.name);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let seeds = t.seeds(spec);
        for (name, bytes) in &seeds {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(io(&path))?;
        }
        // The dictionary beside the corpus, `<out>/<target>.dict`, as libFuzzer's `-dict=` and
        // ClusterFuzzLite (a `<target>.dict` beside the fuzzer in `$OUT`) take it.
        let dict = out.join(format!("{}.dict", t.name));
        std::fs::write(&dict, fuzz::dictionary(spec)).map_err(io(&dict))?;
        written.push((t.name, seeds.len()));
    }
    Ok(written)
}

/// How to promote a finding.
#[derive(Debug, Clone, Default)]
pub struct PromoteOptions {
    /// The fuzz target the input came from; found from the input's directory when absent
    /// (`fuzz/artifacts/<target>/crash-...`). Not needed for a scenario's JSON.
    pub target: Option<String>,
    /// The regression table to append to.
    pub table: PathBuf,
    /// The case name (default: `<target or capability>-<first 8 hex digits of the input's
    /// SHA-256>`).
    pub name: Option<String>,
    /// Clauses to cite besides (or, for a bug already fixed, instead of) those found failing.
    pub clauses: Vec<String>,
    /// The profile and level the backend is judged under: the clauses it breaks there are
    /// cited. The case runs under both profiles when the two references agree on it, and only
    /// under this one when they do not.
    pub judging: Judging,
}

/// A promoted finding.
#[derive(Debug, Clone)]
pub struct Promotion {
    /// The new case, as appended.
    pub case: Case,
    /// The table file it went to.
    pub table: PathBuf,
    /// What the backend did wrong, when it still fails.
    pub failure: Option<String>,
    /// The TOML text appended.
    pub text: String,
    /// True when the finding named no clause (a crash, a hang, a refusal to answer), so the
    /// case cites the value clauses of the options in force.
    pub cites_values_in_force: bool,
}

impl fmt::Display for Promotion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "promoted to {} as case {} [{}]",
            self.table.display(),
            self.case.name,
            self.case.clauses.join(", ")
        )?;
        if let Some(failure) = &self.failure {
            writeln!(f, "the backend fails it: {failure}")?;
        }
        if self.cites_values_in_force {
            writeln!(
                f,
                "the finding names no clause (a crash, a hang or no answer): the case cites the \
                 value clauses of the options in force, set or default, whose answer the \
                 reference gives; name the clause the bug breaks with --clause when you know it"
            )?;
        }
        write!(
            f,
            "write the root cause into its comment (replace {ROOT_CAUSE_SLOT:?}); the tables do \
             not load until then"
        )
    }
}

/// The scenario a finding stands for, and the label used to name its case.
pub fn finding_scenario(
    input: &Path,
    data: &[u8],
    target: Option<&str>,
) -> Result<(Scenario, String), FindingError> {
    if let Ok(s) = serde_json::from_slice::<Scenario>(data) {
        let label = target.map_or_else(|| s.capability().to_string(), str::to_owned);
        return Ok((s, label));
    }
    let name = match target {
        Some(t) => t.to_owned(),
        None => input
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| fuzz::target(n).is_some())
            .ok_or_else(|| FindingError::NeedsTarget(input.to_path_buf()))?,
    };
    let t = fuzz::target(&name).ok_or_else(|| FindingError::UnknownTarget(name.clone()))?;
    let s = t.scenario(data).ok_or_else(|| FindingError::Undecodable {
        path: input.to_path_buf(),
        target: name.clone(),
    })?;
    Ok((s, name))
}

/// The expectation a promoted case carries: the reference's whole observation where the answer
/// is unique, only its diagnostics where many answers are right (the oracle judges the rest).
/// Diagnostics keep what is judged only: no message (wording is never judged), no value, and
/// only the subject fields their clause defines.
fn expectation(observation: &Observation) -> Result<serde_json::Value, FindingError> {
    let mut value =
        serde_json::to_value(observation).map_err(|e| FindingError::Invalid(e.to_string()))?;
    let session = matches!(observation, Observation::Session(_));
    if matches!(
        observation,
        Observation::Memory(_) | Observation::Session(_)
    ) {
        if let serde_json::Value::Object(map) = &mut value {
            map.retain(|k, _| k == "errors" || k == "warnings");
        }
    }
    if let serde_json::Value::Object(map) = &mut value {
        for list in ["errors", "warnings"] {
            if let Some(serde_json::Value::Array(items)) = map.get_mut(list) {
                for item in items {
                    judged_only(item, session);
                }
            }
        }
    }
    strip_nulls(&mut value);
    Ok(value)
}

/// Keeps of one diagnostic what is judged (see `ge_spec::diag`).
fn judged_only(item: &mut serde_json::Value, session: bool) {
    let serde_json::Value::Object(d) = item else {
        return;
    };
    d.remove("message");
    d.remove("value");
    let fields = d
        .get("clause")
        .and_then(|c| c.as_str())
        .and_then(|c| Spec::embedded().clause(c))
        .map(|c| c.subject.clone())
        .unwrap_or_default();
    if let Some(serde_json::Value::Object(subject)) = d.get_mut("subject") {
        subject.retain(|k, _| fields.iter().any(|f| f == k) || (session && k == "graph"));
        if subject.is_empty() {
            d.remove("subject");
        }
    }
}

/// TOML has no null: absent is how an unset optional field is written.
fn strip_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|_, x| !x.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

#[derive(Serialize)]
struct CaseFile<'a> {
    case: [&'a Case; 1],
}

// Long because: one sequence (decode the finding, ask the backend and the reference, name the
// clauses, a crash's included, write the case) over values each step hands on.
/// Promotes the finding in `input` (a crash file of a fuzz target, or a scenario's JSON):
/// asks `backend` and the reference, collects the clauses the backend breaks, and appends a
/// case to the regression table whose expectation comes from the reference.
pub fn promote(
    backend: &dyn Backend,
    input: &Path,
    opts: &PromoteOptions,
) -> Result<Promotion, FindingError> {
    let data = crate::input::read_file(input, crate::input::MAX_SCENARIO)?;
    let (scenario, label) = finding_scenario(input, &data, opts.target.as_deref())?;
    let spec = Spec::embedded();

    let mut clauses = opts.clauses.clone();
    let problems: Vec<_> = certify::compare(&opts.judging, backend, &scenario)
        .into_iter()
        .filter(|p| !p.deviation)
        .collect();
    let failure = (!problems.is_empty()).then(|| {
        problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    });
    let crashed = problems.iter().any(|p| p.clauses.is_empty());
    clauses.extend(problems.into_iter().flat_map(|p| p.clauses));
    let cites_values_in_force = clauses.is_empty() && crashed;
    if cites_values_in_force {
        // A crash, a hang or a refusal to answer names no clause: the case holds the engine to
        // the values in force (their value clauses, which state the defaults too), which the
        // reference's answer shows.
        clauses = in_force_value_clauses(spec, &scenario);
    }
    clauses.sort();
    clauses.dedup();
    if clauses.is_empty() {
        return Err(FindingError::NoClause(backend.name().to_owned()));
    }
    if let Some(missing) = clauses.iter().find(|c| spec.clause(c).is_none()) {
        return Err(FindingError::UnknownClause(missing.clone()));
    }
    let profile = opts.judging.profile;
    let reference = Reference::new(profile);
    // The reference is held to every clause, its own choices included.
    let theirs = certify::compare(&opts.judging.strict(), &reference, &scenario);
    if let Some(p) = theirs.first() {
        return Err(FindingError::ReferenceFails {
            clauses: p.clauses.join(", "),
            message: p.message.clone(),
        });
    }
    let expect = expectation(&observe(&reference, &scenario)?)?;
    let shared = bind_profile(spec, &opts.judging, &scenario, &expect, &mut clauses)?;

    let digest = hex8(&data);
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-{digest}", label.replace('_', "-")));
    let case = Case {
        name,
        clauses,
        comment: Some(ROOT_CAUSE_SLOT.to_owned()),
        scenario: scenario.clone(),
        expect: Some(expect),
        oracle: scenario.capability() != Capability::Options,
        profile: (!shared).then_some(profile),
    };

    let existing = match crate::input::read_text(&opts.table, crate::input::MAX_TABLE) {
        Ok(text) => text,
        Err(crate::input::InputError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            String::new()
        }
        Err(e) => return Err(e.into()),
    };
    let body = toml::to_string(&CaseFile { case: [&case] })
        .map_err(|e| FindingError::Invalid(e.to_string()))?;
    let header = if existing.is_empty() {
        "# Regressions: findings of the fuzzers and of certification runs, promoted with\n\
         # `ge-conformance promote`. Each case says in its comment what the root cause was.\n"
    } else {
        ""
    };
    let source = input
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let text = format!(
        "{header}\n# Promoted from {source} (target {label}, input SHA-256 {digest}...).\n{body}"
    );
    check_table(&opts.table, &existing, &text, &case.name)?;

    let mut all = existing;
    all.push_str(&text);
    if let Some(dir) = opts.table.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    // A link planted at the table's name is replaced, never appended through.
    crate::input::replace_file(&opts.table, all.as_bytes()).map_err(io(&opts.table))?;
    Ok(Promotion {
        case,
        table: opts.table.clone(),
        failure,
        text,
        cites_values_in_force,
    })
}

/// Whether a case of `scenario` holds under both profiles: the other profile's reference gives
/// the same `expect`. When it does not, the case is bound to `judging`'s profile and the
/// clauses where the profiles diverge are added to `clauses` ([`add_divergent`]).
fn bind_profile(
    spec: &Spec,
    judging: &Judging,
    scenario: &Scenario,
    expect: &serde_json::Value,
    clauses: &mut Vec<String>,
) -> Result<bool, FindingError> {
    let other = match judging.profile {
        Profile::Documented => Profile::Upstream,
        Profile::Upstream => Profile::Documented,
    };
    let theirs = expectation(&observe(&Reference::new(other), scenario)?)?;
    let shared = &theirs == expect;
    if !shared {
        add_divergent(spec, judging, other, scenario, [expect, &theirs], clauses);
    }
    Ok(shared)
}

/// A case that holds under one profile only must cite a clause where the profiles diverge:
/// when `clauses` has none, the ones the `other` profile's reference breaks on `scenario` (where
/// they do diverge) are added, or else those that the diagnostics of one of the two references'
/// `expectations` name and the other's do not (the profiles may report one refusal under
/// different clauses, a difference the judge takes for a deviation, OPT-012).
fn add_divergent(
    spec: &Spec,
    judging: &Judging,
    other: Profile,
    scenario: &Scenario,
    expectations: [&serde_json::Value; 2],
    clauses: &mut Vec<String>,
) {
    let divergent = |c: &String| spec.clause(c).is_some_and(Clause::diverges);
    if clauses.iter().any(divergent) {
        return;
    }
    let mut found: Vec<String> = certify::compare(judging, &Reference::new(other), scenario)
        .into_iter()
        .flat_map(|p| p.clauses)
        .filter(divergent)
        .collect();
    if found.is_empty() {
        let [ours, theirs] = expectations.map(diagnostic_clauses);
        found = ours.symmetric_difference(&theirs).cloned().collect();
        found.retain(divergent);
    }
    clauses.extend(found);
    clauses.sort();
    clauses.dedup();
}

/// The clauses the errors and warnings of an [`expectation`] name.
fn diagnostic_clauses(expectation: &serde_json::Value) -> std::collections::BTreeSet<String> {
    ["errors", "warnings"]
        .iter()
        .filter_map(|list| expectation.get(list)?.as_array())
        .flatten()
        .filter_map(|d| Some(d.get("clause")?.as_str()?.to_owned()))
        .collect()
}

/// What a case made of a crash holds the engine to: the value clauses of the options the
/// scenario sets ([`set_value_clauses`]) or, when it sets none, those of every option the
/// cases of its capability cite (their defaults are in force, and each value clause states its
/// option's default).
fn in_force_value_clauses(spec: &Spec, scenario: &Scenario) -> Vec<String> {
    let set = set_value_clauses(scenario);
    if !set.is_empty() {
        return set;
    }
    let capability = scenario.capability();
    let mut out: Vec<String> = spec
        .cases()
        .iter()
        .filter(|c| c.case.scenario.capability() == capability)
        .flat_map(|c| &c.case.clauses)
        .filter_map(|id| spec.clause(id)?.option)
        .map(crate::oracle::options::value_clause)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The value clause (`<PREFIX>-001`) of every option the scenario sets, at any level or in a
/// session's load.
fn set_value_clauses(scenario: &Scenario) -> Vec<String> {
    let mut maps: Vec<&std::collections::BTreeMap<String, String>> = ge_spec::Level::ALL
        .iter()
        .map(|&l| scenario.options().at(l))
        .collect();
    if let Scenario::Session(s) = scenario {
        for e in &s.events {
            if let ge_spec::vocab::session::SessionEvent::Load {
                options: Some(m), ..
            } = e
            {
                maps.push(m);
            }
        }
    }
    let mut out: Vec<String> = maps
        .into_iter()
        .flat_map(|m| m.keys())
        .filter_map(|k| k.parse::<ge_spec::OptionKey>().ok())
        .map(crate::oracle::options::value_clause)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The reference's canonical observation of `scenario`, in a fresh sandbox.
fn observe(reference: &Reference, scenario: &Scenario) -> Result<Observation, FindingError> {
    let sandbox = runner::sandbox(scenario).map_err(io(Path::new("sandbox")))?;
    match runner::ask(reference, scenario, runner::sandbox_path(&sandbox)) {
        Ok(Ok(mut o)) => {
            o.canonicalize();
            Ok(o)
        }
        Ok(Err(ns)) => Err(FindingError::Invalid(ns.reason)),
        Err(e) => Err(FindingError::Invalid(e)),
    }
}

fn hex8(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Loads the embedded tables with the regression table as it will be (the root-cause slot
/// filled with a stand-in), so a promoted case that would not load is never written.
fn check_table(
    table: &Path,
    existing: &str,
    appended: &str,
    name: &str,
) -> Result<(), FindingError> {
    let stem = table
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key = format!("cases/{stem}.toml");
    let content = format!("{existing}{appended}").replace(ROOT_CAUSE_SLOT, "(root cause)");
    if existing.contains(&format!("name = {name:?}")) {
        return Err(FindingError::DuplicateName {
            table: table.to_path_buf(),
            name: name.to_owned(),
        });
    }
    let mut files: BTreeMap<String, String> = Spec::embedded_files()
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    files.insert(key, content);
    Spec::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
        .map(|_| ())
        .map_err(|e| FindingError::Invalid(e.to_string()))
}
