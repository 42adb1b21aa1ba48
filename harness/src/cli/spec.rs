//! `ge-conformance spec`: the options table and the clause catalogue, as text or JSON, or the
//! clauses' coverage by cases and properties (`--coverage`).

use std::process::ExitCode;

use clap::ValueEnum;
use ge_spec::{Clause, OptionKey, OptionSpec, Spec};

use super::{properties_of, status, Usage};

/// The flags of `spec`.
#[derive(clap::Args, Debug)]
pub struct SpecArgs {
    /// Only this option (its row and its clauses).
    #[arg(long)]
    option: Option<String>,
    /// List every clause with its number of cases and properties; fail if one has none.
    #[arg(long)]
    coverage: bool,
    /// Print the reach table (Markdown): for every documented clause, the forbidden answers
    /// the certification's fixed scenarios make that the judge fails under that clause alone;
    /// fail if a clause is neither reached nor listed with where it is caught instead.
    #[arg(long, conflicts_with = "coverage")]
    reach: bool,
    /// Output format (text or json).
    #[arg(long, value_enum, default_value = "text")]
    format: SpecFormat,
}

/// What `spec` prints: only the formats it has.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum SpecFormat {
    Text,
    Json,
}

/// Prints the catalogue (of one option with `--option`), or its coverage.
pub fn run(args: SpecArgs) -> Result<ExitCode, Usage> {
    let spec = Spec::embedded();
    let key = match args.option {
        Some(k) => Some(k.parse::<OptionKey>().map_err(|e| Usage(e.to_string()))?),
        None => None,
    };
    let clauses: Vec<_> = spec
        .clauses()
        .filter(|c| key.is_none() || c.option == key)
        .collect();
    if args.reach {
        return Ok(reach());
    }
    if args.coverage {
        return Ok(coverage(spec, &clauses, args.format));
    }
    match args.format {
        SpecFormat::Json => json(spec, key, &clauses),
        SpecFormat::Text => text(spec, key, &clauses),
    }
    Ok(ExitCode::SUCCESS)
}

/// The options `--option` selects (all of them without it).
fn options(spec: &Spec, key: Option<OptionKey>) -> impl Iterator<Item = &OptionSpec> {
    spec.options()
        .filter(move |o| key.is_none_or(|k| o.key == k))
}

/// `--reach`: the reach table; status 1 when a documented clause that can be broken is not
/// reached.
fn reach() -> ExitCode {
    use ge_conformance::forbidden;
    let reach = forbidden::reach(&forbidden::fixed_scenarios());
    outn!("{}", forbidden::table(&reach));
    status(!forbidden::unreached(&reach).is_empty())
}

/// `--coverage`: each clause with its numbers of cases and properties; status 1 when a clause
/// has neither.
fn coverage(spec: &Spec, clauses: &[&Clause], format: SpecFormat) -> ExitCode {
    let mut uncovered = 0;
    let mut rows = Vec::new();
    for c in clauses {
        let cases = spec.cases_for(&c.id).count();
        let props = properties_of(&c.id).len();
        if cases + props == 0 {
            uncovered += 1;
        }
        rows.push((c.id.clone(), cases, props));
    }
    if format == SpecFormat::Json {
        let json: Vec<_> = rows
            .iter()
            .map(|(id, c, p)| serde_json::json!({"clause": id, "cases": c, "properties": p}))
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    } else {
        out!("{:<8} {:>5} {:>10}", "clause", "cases", "properties");
        for (id, c, p) in &rows {
            out!("{id:<8} {c:>5} {p:>10}");
        }
        out!(
            "{} clauses, {} without any case or property",
            rows.len(),
            uncovered
        );
    }
    status(uncovered != 0)
}

/// `--format json`: the digest, the options and the clauses.
fn json(spec: &Spec, key: Option<OptionKey>, clauses: &[&Clause]) {
    let options: Vec<_> = options(spec, key).collect();
    let json =
        serde_json::json!({ "digest": spec.digest(), "options": options, "clauses": clauses });
    out!(
        "{}",
        serde_json::to_string_pretty(&json).unwrap_or_default()
    );
}

/// The text form: the options table, then the clauses.
fn text(spec: &Spec, key: Option<OptionKey>, clauses: &[&Clause]) {
    out!(
        "Options ({} tables digest {})\n",
        spec.options().count(),
        &spec.digest()[..16]
    );
    for o in options(spec, key) {
        option_text(o);
    }
    out!("\nClauses ({})\n", clauses.len());
    for c in clauses {
        out!(
            "{}  {:<6} {:<17} {}",
            c.id,
            c.strength.map(|s| s.to_string()).unwrap_or_default(),
            c.origin.to_string(),
            c.summary
        );
    }
}

/// One option of the text form: its row, summary, values, range and restrictions.
fn option_text(o: &OptionSpec) {
    let levels: Vec<_> = o.levels.iter().map(|l| l.as_str()).collect();
    let grammar = serde_json::to_value(o.grammar)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    out!(
        "{}  ({grammar}; default {:?}; levels {}; {})",
        o.key,
        o.default.clone().unwrap_or_default(),
        levels.join(", "),
        if o.mandatory { "mandatory" } else { "optional" }
    );
    out!("    {}", o.summary);
    for v in &o.values {
        out!("    {} = {}", v.value, v.meaning);
    }
    if let (Some(min), Some(max)) = (o.min, o.max) {
        out!("    range {min}..={max}");
    }
    let r = serde_json::to_value(&o.restrictions).unwrap_or_default();
    if r.as_object().is_some_and(|m| !m.is_empty()) {
        out!("    restrictions {r}");
    }
}
