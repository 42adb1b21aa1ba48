//! `ge-conformance explain`: one clause in full, a section at a time: its heading, where it
//! comes from, what it says and why, how upstream GE departs from it, and the cases and
//! properties that check it, and where in the harness it is judged.

use std::process::ExitCode;

use ge_spec::{Clause, Spec};

use super::{properties_of, Usage};

/// The flags of `explain`.
#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// The clause ID, for example IFS-003.
    clause: String,
}

/// Prints every section of the clause `args.clause`.
pub fn run(args: ExplainArgs) -> Result<ExitCode, Usage> {
    let spec = Spec::embedded();
    let id = args.clause.as_str();
    if id == ge_conformance::judging::SANDBOX_RULE {
        // Not a clause of the contract: the harness's own rule, named in reports all the same.
        out!("{id}  the harness's safety rule (binds at every level and profile)");
        out!("");
        out!("{}", sandbox_rule_text());
        return Ok(ExitCode::SUCCESS);
    }
    let clause = spec
        .clause(id)
        .ok_or_else(|| Usage(format!("no clause {id}; `ge-conformance spec` lists them")))?;
    heading(clause);
    origin(clause);
    summary(clause);
    upstream(spec, clause);
    cases(spec, id);
    properties(clause);
    checks(spec, id);
    Ok(ExitCode::SUCCESS)
}

/// What `explain` says of [`ge_conformance::judging::SANDBOX_RULE`].
fn sandbox_rule_text() -> &'static str {
    "A backend writes nothing beside the sandbox it is given (through `..`, into the directory \
     holding it). It is no clause of the source text: a backend that writes where no directory \
     was given to it is unsafe to run, so such a write fails the trial at every level, beside \
     WGT-007 (the suite's clause for writes outside the chosen directory, a deviation at level \
     documented). What a confined backend leaves in its own $TMPDIR and $HOME, its scratch \
     area, is WGT-007's alone.\n\nChecked in: oracle::weights::plant::beside \
     (harness/src/oracle/weights/plant.rs)"
}

/// The clause's ID with its strength and origin.
fn heading(clause: &Clause) {
    match clause.strength {
        Some(strength) => out!("{}  {strength} ({})", clause.id, clause.origin),
        None => out!(
            "{}  ({}: binds at level strict only)",
            clause.id,
            clause.origin
        ),
    }
}

/// Where the clause sits: option, section, source, subject and the clause it is reported under.
fn origin(clause: &Clause) {
    out!(
        "option:  {}",
        clause.option.map_or("cross-cutting", |k| k.as_str())
    );
    out!("section: {}", clause.section);
    if let Some(source) = &clause.source {
        out!("source:  {source}");
    }
    if !clause.subject.is_empty() {
        out!("subject: {}", clause.subject.join(", "));
    }
    if let Some(r) = &clause.reported_under {
        out!("reported under: {r} (the clause that calls for its diagnostics)");
    }
    if !clause.implied_by.is_empty() {
        out!(
            "implied by: {} (an answer breaking it breaks those, and is charged to them)",
            clause.implied_by.join(", ")
        );
    }
}

/// What the clause says, and why the suite decided so when it did.
fn summary(clause: &Clause) {
    out!("\n{}", clause.summary);
    if let Some(r) = &clause.rationale {
        out!("\nWhy the suite decided so: {r}");
    }
}

/// How upstream GE departs from the clause, with the evidence, when it does.
fn upstream(spec: &Spec, clause: &Clause) {
    if let Some(u) = &clause.upstream {
        out!("\nUpstream GE departs from this: {}", u.behaviour);
        out!("Evidence at {}:", ge_conformance::divergence::pinned(spec));
        for e in &u.source {
            out!("  {e}");
        }
    }
}

/// The table cases that check the clause, with their profile and comment.
fn cases(spec: &Spec, id: &str) {
    let cases: Vec<_> = spec.cases_for(id).collect();
    out!("\nCases ({}):", cases.len());
    for c in cases {
        out!(
            "  {}{}{}",
            c.full_name(),
            c.case
                .profile
                .map(|p| format!(" [{p} only]"))
                .unwrap_or_default(),
            c.case
                .comment
                .as_ref()
                .map(|m| format!(" — {m}"))
                .unwrap_or_default()
        );
    }
}

/// The properties that check the clause, when there are any.
fn properties(clause: &Clause) {
    let props = properties_of(&clause.id);
    if !props.is_empty() {
        out!(
            "Properties: {}",
            props
                .iter()
                .map(|c| format!("property/{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Where the harness judges the clause: the checks of the registry that charge it (each with
/// its function's place, its oracle and the phase whose table runs it, or why its cases'
/// patterns judge it instead), the other functions that name it (the helpers those checks
/// call), and the judges its cases and properties go through.
fn checks(spec: &Spec, id: &str) {
    use ge_conformance::oracle::registry::{self, Kind};
    use ge_conformance::oracle::sites::{self, Generic};
    let named = sites::of(id);
    let registered = registry::of(id);
    let mut shown = Vec::new();
    out!("\nChecked in:");
    if registered.is_empty() && named.is_empty() {
        out!("  no oracle names it; its cases' `expect` patterns and the comparison with the reference judge it");
    }
    for check in &registered {
        let site = check.site();
        let (at, how) = match (check.kind, site) {
            (Kind::Patterns(why), _) => {
                out!("  no check function: its cases' `expect` patterns and the comparison with the reference judge it ({why})");
                continue;
            }
            (Kind::Table(phase), Some(s)) => {
                (s, format!("{} oracle, table of {phase}", check.capability))
            }
            (Kind::Called(by), Some(s)) => (s, format!("{} oracle, called {by}", check.capability)),
            (_, None) => continue,
        };
        let by_number = named
            .iter()
            .any(|s| s.by_number && s.file == at.file && s.function == at.function);
        let how = if by_number {
            format!("{how}; by its number")
        } else {
            how
        };
        out!("  {}  {}  ({how})", at.location(), check.name);
        shown.push((at.file, at.function));
    }
    let helpers: Vec<_> = named
        .iter()
        // The registry's own tables name every clause outside any function: left out.
        .filter(|s| !(s.function.is_empty() && s.file.starts_with("harness/src/oracle/")))
        .filter(|s| !shown.contains(&(s.file, s.function)))
        .collect();
    if !helpers.is_empty() {
        out!("  also named in:");
    }
    for s in helpers {
        let how = if s.by_number { " (by its number)" } else { "" };
        let function = if s.function.is_empty() {
            "(outside any function)"
        } else {
            s.function
        };
        out!("    {}  {function}{how}", s.location());
    }
    if spec.cases_for(id).next().is_some() {
        let cases = sites::generic(Generic::Cases);
        let pattern = sites::generic(Generic::Pattern);
        out!(
            "  cases judged by {} ({}), patterns by {} ({})",
            cases.function,
            cases.location(),
            pattern.function,
            pattern.location()
        );
    }
    if properties_of(id).is_empty() {
        return;
    }
    let reference = sites::generic(Generic::Reference);
    out!(
        "  generated scenarios compared with the reference by {} ({})",
        reference.function,
        reference.location()
    );
}
