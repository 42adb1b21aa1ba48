//! The `ge-conformance` command line: print the contract, evaluate one scenario, certify a
//! backend, verify a report bundle, explain a clause, seed the fuzzers and promote findings.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ge_conformance::backends::{self, BackendHandle};
use ge_conformance::certify::{self, Config};
use ge_conformance::confine::Confine;
use ge_conformance::expectations::Expectations;
use ge_conformance::judging::Judging;
use ge_conformance::report::Standing;
use ge_conformance::{bundle, protocol, runner};
use ge_spec::{Conformance, OptionKey, Profile, Scenario, Spec};

#[derive(Parser, Debug)]
#[command(
    name = "ge-conformance",
    version,
    about = "Conformance suite for the GE memory-management options"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Markdown,
    Junit,
}

/// The behaviour profile (see `ge_spec::Profile`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
enum ProfileArg {
    /// What the source text documents.
    #[default]
    Documented,
    /// What the open-source GE implementation does.
    Upstream,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Documented => Profile::Documented,
            ProfileArg::Upstream => Profile::Upstream,
        }
    }
}

/// The conformance level (see `ge_spec::Conformance`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
enum LevelArg {
    /// What the source text states; the suite's own choices are deviations, never failures.
    #[default]
    Documented,
    /// The suite's own choices (reference-defined clauses) bind as well.
    Strict,
}

impl From<LevelArg> for Conformance {
    fn from(l: LevelArg) -> Conformance {
        match l {
            LevelArg::Documented => Conformance::Documented,
            LevelArg::Strict => Conformance::Strict,
        }
    }
}

/// What `spec` prints: only the formats it has.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SpecFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum MapFormat {
    Markdown,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the options table and the clause catalogue.
    Spec {
        /// Only this option (its row and its clauses).
        #[arg(long)]
        option: Option<String>,
        /// List every clause with its number of cases and properties; fail if one has none.
        #[arg(long)]
        coverage: bool,
        /// Output format (text or json).
        #[arg(long, value_enum, default_value = "text")]
        format: SpecFormat,
    },
    /// Read one scenario as JSON (a file, or standard input) and print the backend's observation.
    Eval {
        /// The scenario file; standard input when absent.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// Take the scenario of this table case (`table/case`) and judge the answer against it.
        #[arg(long, conflicts_with = "scenario")]
        case: Option<String>,
        /// A directory of your own case tables (`<table>.toml`, the format of the suite's
        /// `cases/*.toml`), where `--case` is looked up besides the suite's cases.
        #[arg(long, requires = "case")]
        cases_dir: Option<PathBuf>,
        /// The backend: `reference`, `dylib:<path>` (in-process, C ABI) or `exec:<command line>`.
        #[arg(long, default_value = "reference")]
        backend: String,
        /// Directory weights scenarios work in (a temporary one when absent).
        #[arg(long)]
        sandbox: Option<PathBuf>,
        /// Also judge the answer against the reference (exit 1 when it differs).
        #[arg(long)]
        judge: bool,
        /// Milliseconds an `exec:` backend has to answer each request.
        #[arg(long, default_value_t = DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
        timeout_ms: u64,
        /// Run an `exec:` backend with the harness's own environment and no write restriction
        /// (see docs/protocol.md, "Confinement"); writes outside the sandbox then go unseen.
        #[arg(long)]
        no_confine: bool,
        /// The behaviour profile: the reference `--judge` compares with, and the one a case
        /// must run under.
        #[arg(long, value_enum, default_value = "documented")]
        profile: ProfileArg,
        /// The conformance level the answer is judged at (`--case`, `--judge`).
        #[arg(long, value_enum, default_value = "documented")]
        level: LevelArg,
        /// Write a picture of the answer (SVG) to this file: memory, session and transfer
        /// scenarios. With `--judge` the backend's answer is drawn beside the reference's, what
        /// is wrong highlighted and its clauses named.
        #[arg(long, value_name = "FILE.svg")]
        draw: Option<PathBuf>,
        /// With `--draw`, the 32-byte alignment grid behind a memory plan.
        #[arg(long, requires = "draw")]
        grid: bool,
    },
    /// Certify a backend against the whole suite and print the report.
    Certify {
        /// The backend: `reference`, `dylib:<path>` (in-process, C ABI) or `exec:<command line>`.
        #[arg(long, default_value = "reference")]
        backend: String,
        /// Generated scenarios per property.
        #[arg(long, default_value_t = certify::DEFAULT_CASES)]
        cases: u32,
        /// Seed of the generated scenarios: a number, or `random` for a fresh one, printed (and
        /// recorded in the report) so that a failure can be replayed with `--seed N`.
        #[arg(long, default_value = "0", value_parser = parse_seed)]
        seed: u64,
        /// Waivers (TOML): known failures with reason, tracker and expiry.
        #[arg(long)]
        expectations: Option<PathBuf>,
        /// Write the report bundle (reports plus a SHA-256 manifest) into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the earlier bundle in the `--out` directory (without it, a directory that
        /// is not new or empty is refused before the run).
        #[arg(long, requires = "out")]
        force: bool,
        /// Format of the report printed on standard output.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Only trials whose name contains this text.
        #[arg(long)]
        filter: Option<String>,
        /// A directory of your own case tables (`<table>.toml`, the format of the suite's
        /// `cases/*.toml`), run beside the suite's cases after the same checks.
        #[arg(long)]
        cases_dir: Option<PathBuf>,
        /// Record the backend's observation of every scenario of the snapshot set as an insta
        /// snapshot in this directory (with a deviation snapshot where it differs from the
        /// reference); a new or changed snapshot makes the exit status 1, never the verdict.
        #[arg(long)]
        snapshots: Option<PathBuf>,
        /// Milliseconds an `exec:` backend has to answer each request; past it, the request
        /// fails and the backend is restarted.
        #[arg(long, default_value_t = DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
        timeout_ms: u64,
        /// Run an `exec:` backend with the harness's own environment and no write restriction
        /// (see docs/protocol.md, "Confinement"); writes outside the sandbox then go unseen.
        #[arg(long)]
        no_confine: bool,
        /// The behaviour profile certified against: which cases run and which reference the
        /// properties compare with.
        #[arg(long, value_enum, default_value = "documented")]
        profile: ProfileArg,
        /// The conformance level certified at: `documented` judges what the source text states
        /// (the suite's own choices are reported as deviations), `strict` judges those too.
        #[arg(long, value_enum, default_value = "documented")]
        level: LevelArg,
    },
    /// Serve the reference backend over the subprocess protocol on standard input and output
    /// (see docs/protocol.md); `certify --backend 'exec:ge-conformance serve-reference'` uses it.
    ServeReference {
        /// The profile the served reference behaves per (and declares in its hello).
        #[arg(long, value_enum, default_value = "documented")]
        profile: ProfileArg,
    },
    /// Serve an engine built as a shared library against the C ABI (include/ge_conformance.h)
    /// over the subprocess protocol, so that `certify --backend 'exec:ge-conformance serve-dylib
    /// PATH'` isolates its crashes (see docs/c-abi.md).
    ServeDylib {
        /// The engine's shared library.
        path: PathBuf,
    },
    /// Print the divergence map: every clause where the open-source GE implementation departs
    /// from the documented behaviour, with what each does.
    Divergence {
        /// Output format.
        #[arg(long, value_enum, default_value = "markdown")]
        format: MapFormat,
    },
    /// Check a report bundle offline: digests, missing or extra files, spec tables; exit 0 only
    /// when it is intact and its verdict is CERTIFIED (the gate a CI job can use).
    Verify {
        /// The bundle directory.
        dir: PathBuf,
        /// Check integrity only: exit 0 for an intact bundle whatever its verdict.
        #[arg(long)]
        integrity_only: bool,
    },
    /// Write seed inputs for every fuzz target from the case tables (one file per case).
    Corpus {
        /// The corpus root; each target's seeds go to `<out>/<target>/`.
        #[arg(long, default_value = "fuzz/corpus")]
        out: PathBuf,
        /// Only this target.
        #[arg(long)]
        target: Option<String>,
    },
    /// Turn a finding (a fuzz target's crash file, or a scenario's JSON) into a new case of a
    /// regression table, with the clauses it breaks and a slot for its root cause.
    Promote {
        /// The crash file or scenario JSON.
        input: PathBuf,
        /// The fuzz target the input came from (found from its directory when absent).
        #[arg(long)]
        target: Option<String>,
        /// The backend the finding is about: `reference` or `exec:<command line>`.
        #[arg(long, default_value = "reference")]
        backend: String,
        /// The regression table to append to.
        #[arg(
            long,
            default_value = "spec/tables/cases/regressions.toml",
            conflicts_with = "into"
        )]
        table: PathBuf,
        /// A directory of your own case tables: the case goes to its `local-regressions.toml`
        /// (created with the directory when missing), which `certify --cases-dir` and
        /// `Suite::with_cases` read.
        #[arg(long)]
        into: Option<PathBuf>,
        /// The case name.
        #[arg(long)]
        name: Option<String>,
        /// A clause the finding breaks (repeatable); needed when the bug is already fixed.
        #[arg(long = "clause")]
        clauses: Vec<String>,
        /// The profile the backend is judged under.
        #[arg(long, value_enum, default_value_t = ProfileArg::Documented)]
        profile: ProfileArg,
        /// The level the backend is judged at: the clauses it breaks there are cited.
        #[arg(long, value_enum, default_value_t = LevelArg::Documented)]
        level: LevelArg,
    },
    /// Explain one clause: summary, origin, rationale and cases.
    Explain {
        /// The clause ID, for example IFS-003.
        clause: String,
    },
}

/// Prints a line on standard output; a closed pipe (`| head`) is not an error worth a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Prints on standard output without a newline, ignoring a closed pipe.
macro_rules! outn {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout().lock(), $($t)*);
    }};
}

/// A failure of set-up or usage: exit status 2.
struct Usage(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Interrupted (Ctrl-C, SIGTERM, SIGHUP), the harness stops every backend it started with
    // it: they run in process groups of their own, which the terminal's signal does not reach.
    let _ = ctrlc::set_handler(|| {
        protocol::stop_all_backends();
        eprintln!("interrupted: every backend was stopped");
        std::process::exit(130);
    });
    match run(cli) {
        Ok(code) => code,
        Err(Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Usage> {
    match cli.command {
        Command::Spec {
            option,
            coverage,
            format,
        } => spec(option, coverage, format),
        Command::Eval {
            scenario,
            case,
            cases_dir,
            backend,
            sandbox,
            judge,
            timeout_ms,
            no_confine,
            profile,
            level,
            draw,
            grid,
        } => eval(
            scenario,
            case.map(|c| (c, cases_dir)),
            &backend,
            sandbox,
            judge,
            Exec::new(timeout_ms, no_confine),
            Judging::new(profile.into(), level.into()),
            draw.map(|file| (file, grid)),
        ),
        Command::Certify {
            backend,
            cases,
            seed,
            expectations,
            out,
            force,
            format,
            filter,
            cases_dir,
            snapshots,
            timeout_ms,
            no_confine,
            profile,
            level,
        } => certify_cmd(
            &backend,
            cases,
            seed,
            expectations,
            out.map(|dir| (dir, force)),
            format,
            filter,
            Extra {
                cases_dir,
                snapshots,
            },
            Exec::new(timeout_ms, no_confine),
            Judging::new(profile.into(), level.into()),
        ),
        Command::Divergence { format } => {
            match format {
                MapFormat::Markdown => {
                    outn!("{}", ge_conformance::divergence::markdown(Spec::embedded()))
                }
                MapFormat::Json => out!("{}", ge_conformance::divergence::json(Spec::embedded())),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::ServeReference { profile } => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let profile: Profile = profile.into();
            let reference = ge_reference::Reference::new(profile);
            match protocol::serve_profiles(&reference, &[profile], stdin, stdout) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("serve-reference: {e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::ServeDylib { path } => {
            let stdin = std::io::stdin().lock();
            match ge_conformance::dylib::serve(&path, stdin) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("{e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Verify {
            dir,
            integrity_only,
        } => match bundle::verify(&dir) {
            Ok(report) => {
                out!(
                    "bundle verifies: backend {} {}, {} at level {} (profile {}; {} passed, {} failed, {} deviations), spec tables {}{}",
                    report.meta.backend,
                    report.meta.backend_version,
                    report.verdict.as_str(),
                    report.meta.level,
                    report.meta.profile,
                    report.totals.passed,
                    report.totals.failed,
                    report.totals.deviations,
                    report.meta.spec_digest,
                    report
                        .meta
                        .local_cases
                        .as_ref()
                        .map(|d| format!(", with the vendor's own case tables {d}"))
                        .unwrap_or_default()
                );
                if integrity_only || report.certified {
                    Ok(ExitCode::SUCCESS)
                } else {
                    eprintln!(
                        "the bundle is intact but its verdict is not CERTIFIED (--integrity-only checks integrity alone)"
                    );
                    Ok(ExitCode::from(1))
                }
            }
            Err(e) => {
                eprintln!("{e}");
                Ok(ExitCode::from(1))
            }
        },
        Command::Explain { clause } => explain(&clause),
        Command::Corpus { out, target } => {
            let written =
                ge_conformance::findings::write_corpus(Spec::embedded(), &out, target.as_deref())
                    .map_err(|e| Usage(e.to_string()))?;
            for (target, n) in written {
                out!("{target}: {n} seeds in {}", out.join(target).display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Promote {
            input,
            target,
            backend,
            table,
            into,
            name,
            clauses,
            profile,
            level,
        } => {
            let judging = Judging::new(profile.into(), level.into());
            let table = match into {
                Some(dir) => {
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| Usage(format!("{}: {e}", dir.display())))?;
                    dir.join(ge_conformance::local::PROMOTED_TABLE)
                }
                None => table,
            };
            let handle = open_backend(&backend, Exec::new(10_000, false), judging.profile)?;
            let opts = ge_conformance::findings::PromoteOptions {
                target,
                table,
                name,
                clauses,
                judging,
            };
            let promotion = ge_conformance::findings::promote(handle.backend(), &input, &opts)
                .map_err(|e| Usage(e.to_string()))?;
            out!("{}", promotion.text.trim_end());
            eprintln!("{promotion}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn spec(option: Option<String>, coverage: bool, format: SpecFormat) -> Result<ExitCode, Usage> {
    let spec = Spec::embedded();
    let key = match option {
        Some(k) => Some(k.parse::<OptionKey>().map_err(|e| Usage(e.to_string()))?),
        None => None,
    };
    let clauses: Vec<_> = spec
        .clauses()
        .filter(|c| key.is_none() || c.option == key)
        .collect();
    if coverage {
        let mut uncovered = 0;
        let mut rows = Vec::new();
        for c in &clauses {
            let cases = spec.cases_for(&c.id).count();
            let props = ge_spec::Capability::ALL
                .iter()
                .filter(|cap| certify::property_clauses(Profile::Documented, **cap).contains(&c.id))
                .count();
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
        return Ok(if uncovered == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if format == SpecFormat::Json {
        let options: Vec<_> = spec
            .options()
            .filter(|o| key.is_none_or(|k| o.key == k))
            .collect();
        let json =
            serde_json::json!({ "digest": spec.digest(), "options": options, "clauses": clauses });
        out!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    out!(
        "Options ({} tables digest {})\n",
        spec.options().count(),
        &spec.digest()[..16]
    );
    for o in spec.options().filter(|o| key.is_none_or(|k| o.key == k)) {
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
    Ok(ExitCode::SUCCESS)
}

fn explain(id: &str) -> Result<ExitCode, Usage> {
    let spec = Spec::embedded();
    let clause = spec
        .clause(id)
        .ok_or_else(|| Usage(format!("no clause {id}; `ge-conformance spec` lists them")))?;
    match clause.strength {
        Some(strength) => out!("{}  {strength} ({})", clause.id, clause.origin),
        None => out!(
            "{}  ({}: binds at level strict only)",
            clause.id,
            clause.origin
        ),
    }
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
    out!("\n{}", clause.summary);
    if let Some(r) = &clause.rationale {
        out!("\nWhy the suite decided so: {r}");
    }
    if let Some(u) = &clause.upstream {
        out!("\nUpstream GE departs from this: {}", u.behaviour);
        out!("Evidence at {}:", ge_conformance::divergence::pinned(spec));
        for e in &u.source {
            out!("  {e}");
        }
    }
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
    let props: Vec<_> = ge_spec::Capability::ALL
        .iter()
        .filter(|cap| certify::property_clauses(Profile::Documented, **cap).contains(&clause.id))
        .collect();
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
    Ok(ExitCode::SUCCESS)
}

/// What `certify` runs besides the suite: the vendor's case tables and the snapshot directory.
#[derive(Debug, Default)]
struct Extra {
    cases_dir: Option<PathBuf>,
    snapshots: Option<PathBuf>,
}

/// How often a run off a terminal says how far it is.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The default of `--timeout-ms`.
const DEFAULT_TIMEOUT_MS: u64 = protocol::DEFAULT_TIMEOUT.as_millis() as u64;

/// How an `exec:` backend is run: `--timeout-ms` and `--no-confine`.
#[derive(Debug, Clone, Copy)]
struct Exec {
    timeout: std::time::Duration,
    confine: Confine,
}

impl Exec {
    fn new(timeout_ms: u64, no_confine: bool) -> Exec {
        Exec {
            timeout: std::time::Duration::from_millis(timeout_ms),
            confine: if no_confine {
                Confine::Off
            } else {
                Confine::On
            },
        }
    }
}

fn open_backend(arg: &str, exec: Exec, profile: Profile) -> Result<BackendHandle, Usage> {
    backends::open_confined(arg, exec.timeout, profile, exec.confine).map_err(Usage)
}

// One argument per command-line flag; a struct would only repeat the clap definition.
#[allow(clippy::too_many_arguments)]
fn eval(
    scenario: Option<PathBuf>,
    case: Option<(String, Option<PathBuf>)>,
    backend: &str,
    sandbox: Option<PathBuf>,
    judge: bool,
    exec: Exec,
    judging: Judging,
    draw: Option<(PathBuf, bool)>,
) -> Result<ExitCode, Usage> {
    let profile = judging.profile;
    let local = match case.as_ref().and_then(|(_, dir)| dir.as_ref()) {
        Some(dir) => {
            Some(ge_conformance::local::LocalCases::load(dir).map_err(|e| Usage(e.to_string()))?)
        }
        None => None,
    };
    let spec = match &local {
        Some(l) => l.spec(),
        None => Spec::embedded(),
    };
    let table_case = match case.as_ref().map(|(name, _)| name) {
        Some(name) => Some(
            spec.cases()
                .iter()
                .find(|c| c.full_name() == *name)
                .ok_or_else(|| Usage(format!("no case {name}")))?,
        ),
        None => None,
    };
    if let Some(c) = table_case.filter(|c| !c.case.runs_in(profile)) {
        return Err(Usage(format!(
            "case {} only holds under the {} profile; add `--profile {}`",
            c.full_name(),
            c.case.profile.unwrap_or_default(),
            c.case.profile.unwrap_or_default()
        )));
    }
    let scenario: Scenario = match table_case {
        Some(c) => c.case.scenario.clone(),
        None => {
            let cap = ge_conformance::input::MAX_SCENARIO;
            let data = match &scenario {
                Some(path) => ge_conformance::input::read_file(path, cap),
                None => ge_conformance::input::read_capped(
                    std::io::stdin().lock(),
                    cap,
                    "standard input",
                ),
            }
            .map_err(|e| Usage(e.to_string()))?;
            serde_json::from_slice(&data).map_err(|e| Usage(format!("not a scenario: {e}")))?
        }
    };
    // Nothing to draw is said before the backend starts.
    if draw.is_some() && !ge_conformance::draw::draws(scenario.capability()) {
        return Err(Usage(
            ge_conformance::draw::DrawError::NothingToDraw(scenario.capability()).to_string(),
        ));
    }
    let handle = open_backend(backend, exec, profile)?;
    let temp;
    let dir = match sandbox {
        Some(d) => {
            std::fs::create_dir_all(&d).map_err(|e| Usage(format!("{}: {e}", d.display())))?;
            d
        }
        None => {
            temp =
                tempfile::tempdir().map_err(|e| Usage(format!("cannot create a sandbox: {e}")))?;
            temp.path().to_path_buf()
        }
    };
    let observation = certify::evaluate(handle.backend(), &scenario, &dir).map_err(|e| {
        let stderr = handle.stderr();
        if stderr.is_empty() {
            Usage(e)
        } else {
            Usage(format!("{e}\nbackend stderr:\n{stderr}"))
        }
    })?;
    out!(
        "{}",
        serde_json::to_string_pretty(&observation).unwrap_or_default()
    );
    let mut failed = false;
    let level = judging.level;
    // The problems found, for the picture.
    let mut found: Vec<runner::Problem> = Vec::new();
    let drawn_observation = draw.as_ref().map(|_| observation.clone());
    if let Some(c) = table_case {
        let verdict = runner::judge_observation(&judging, c, observation);
        found.extend(verdict.problems().iter().cloned());
        match &verdict {
            runner::Verdict::Pass => eprintln!("{}: pass at level {level}", c.full_name()),
            runner::Verdict::Deviates(problems) => {
                eprintln!(
                    "{}: pass at level {level}, with deviations from the suite's own choices {:?}",
                    c.full_name(),
                    verdict.deviated_clauses()
                );
                for p in problems {
                    eprintln!("  {p}");
                }
            }
            runner::Verdict::Fail(problems) => {
                failed = true;
                eprintln!(
                    "{}: FAIL at level {level} {:?}",
                    c.full_name(),
                    verdict.broken_clauses()
                );
                for p in problems {
                    eprintln!("  {p}");
                }
            }
            runner::Verdict::NotSupported(why) => {
                eprintln!("{}: not supported: {why}", c.full_name())
            }
        }
    }
    let mut reference = None;
    if judge {
        let problems = certify::compare(&judging, handle.backend(), &scenario);
        found.extend(problems.iter().cloned());
        if draw.is_some() {
            let answer = certify::evaluate(&ge_reference::Reference::new(profile), &scenario, &dir)
                .map_err(|e| Usage(format!("the reference cannot answer: {e}")))?;
            reference = Some(answer);
        }
        if problems.is_empty() {
            eprintln!("agrees with the reference at level {level}");
        } else {
            failed |= problems.iter().any(|p| !p.deviation);
            let what = if failed {
                "FAILS"
            } else {
                "passes, with deviations from the suite's own choices,"
            };
            eprintln!("{what} at level {level} (profile {}):", judging.profile);
            for p in problems {
                eprintln!("  {p}");
            }
        }
    }
    if let (Some((file, grid)), Some(observation)) = (draw, drawn_observation) {
        let style = ge_conformance::draw::Style { grid, profile };
        let name = handle.backend().name().to_owned();
        let svg = ge_conformance::draw::of_problems(
            &scenario,
            (&name, &observation),
            reference.as_ref(),
            &found,
            style,
        )
        .map_err(|e| Usage(e.to_string()))?;
        std::fs::write(&file, svg).map_err(|e| Usage(format!("{}: {e}", file.display())))?;
        eprintln!("picture written to {}", file.display());
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A seed: a decimal `u64`, or `random` for a fresh one (printed on standard error).
fn parse_seed(text: &str) -> Result<u64, String> {
    if text == "random" {
        use std::hash::{BuildHasher, Hasher};
        // The standard library's per-process random keys, mixed with the clock: fresh on
        // every run without a random-number crate.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let seed = h.finish();
        eprintln!("seed {seed} (random; replay with --seed {seed})");
        return Ok(seed);
    }
    text.parse::<u64>()
        .map_err(|_| format!("{text:?} is neither a number from 0 to 2^64-1 nor `random`"))
}

// One argument per command-line flag; a struct would only repeat the clap definition.
#[allow(clippy::too_many_arguments)]
fn certify_cmd(
    backend: &str,
    cases: u32,
    seed: u64,
    expectations: Option<PathBuf>,
    out: Option<(PathBuf, bool)>,
    format: Format,
    filter: Option<String>,
    extra: Extra,
    exec: Exec,
    judging: Judging,
) -> Result<ExitCode, Usage> {
    // A bundle directory that would be refused is refused before a long run, not after it.
    if let Some((dir, force)) = &out {
        bundle::check_destination(dir, *force).map_err(|e| Usage(e.to_string()))?;
    }
    let local = match &extra.cases_dir {
        Some(dir) => {
            Some(ge_conformance::local::LocalCases::load(dir).map_err(|e| Usage(e.to_string()))?)
        }
        None => None,
    };
    let snapshots = extra.snapshots.as_ref().map(|dir| {
        // Set before any backend thread runs. insta finds its settings beside the snapshots,
        // not in a checkout of the suite; and a report in a machine format on standard output
        // is not interleaved with insta's diffs unless INSTA_OUTPUT asks for them.
        let snapshots = ge_conformance::snapshot::Snapshots::new(dir);
        if std::env::var_os("INSTA_WORKSPACE_ROOT").is_none() {
            std::env::set_var("INSTA_WORKSPACE_ROOT", snapshots.dir());
        }
        if format != Format::Text && std::env::var_os("INSTA_OUTPUT").is_none() {
            std::env::set_var("INSTA_OUTPUT", "none");
        }
        snapshots
    });
    let expectations = match expectations {
        Some(path) => {
            let text =
                ge_conformance::input::read_text(&path, ge_conformance::input::MAX_EXPECTATIONS)
                    .map_err(|e| Usage(e.to_string()))?;
            Expectations::parse(&text).map_err(|e| Usage(format!("{}: {e}", path.display())))?
        }
        None => Expectations::default(),
    };
    let cfg = Config {
        judging,
        seed,
        cases,
        expectations,
        backend_arg: backend.to_owned(),
        filter,
        local,
        ..Config::default()
    };
    // Usage first: a run that could judge nothing never starts the backend.
    certify::check(&cfg).map_err(|e| Usage(e.to_string()))?;
    let handle = open_backend(backend, exec, judging.profile)?;
    // On a terminal, indicatif's bar. Off one (a CI log) indicatif draws nothing by design, so a
    // line every few seconds says the run is alive, and each trial that did not pass is named.
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "[{bar:30}] {pos}/{len} {elapsed_precise} {wide_msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("#>-"),
        );
        bar
    });
    let started = std::time::Instant::now();
    let mut said = started;
    let mut progress = move |done: usize, total: usize, r: &ge_conformance::report::TrialResult| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(r.name.clone());
            if r.outcome != ge_conformance::report::Outcome::Pass {
                bar.println(format!("{} {}", r.outcome.as_str(), r.name));
            }
            if done == total {
                bar.finish_and_clear();
            }
            return;
        }
        let mut err = std::io::stderr().lock();
        if r.outcome != ge_conformance::report::Outcome::Pass {
            let _ = writeln!(err, "{} {}", r.outcome.as_str(), r.name);
        }
        if said.elapsed() >= PROGRESS_EVERY && done < total {
            said = std::time::Instant::now();
            let _ = writeln!(
                err,
                "[ge-conformance] {done}/{total} trials after {} s",
                started.elapsed().as_secs()
            );
        }
    };
    let mut report = certify::certify(handle.backend(), &cfg, &mut progress)
        .map_err(|e| Usage(e.to_string()))?;
    if out.is_some() {
        // The bundle draws its failures: the backend is asked each failing scenario again.
        ge_conformance::draw::attach_pictures(&mut report, handle.backend());
    }
    report.backend_stderr = handle.stderr();
    report.meta.confinement = handle.confinement();
    let text = match format {
        Format::Text => report.to_text(),
        Format::Json => report.to_json(),
        Format::Markdown => report.to_markdown(),
        Format::Junit => report.to_junit(),
    };
    outn!("{text}");
    if let Some((dir, force)) = out {
        bundle::write(&report, &dir, force).map_err(|e| Usage(e.to_string()))?;
        eprintln!("report bundle written to {}", dir.display());
    }
    // Snapshots say what changed, never whether it is right: they come after the verdict and
    // change only the exit status.
    let mut snapshots_changed = false;
    if let Some(snapshots) = snapshots {
        let entries: Vec<_> = ge_conformance::snapshot::set(cfg.spec(), judging.profile)
            .into_iter()
            .filter(|e| cfg.filter.as_deref().is_none_or(|f| e.name.contains(f)))
            .collect();
        let summary = snapshots.check_all(&judging, handle.backend(), cfg.spec(), &entries);
        for c in &summary.changed {
            eprintln!("snapshot {c}");
        }
        for u in &summary.unreferenced {
            eprintln!("snapshot file {u} belongs to no scenario of the set: delete it");
        }
        snapshots_changed = !summary.changed.is_empty() || !summary.unreferenced.is_empty();
        eprintln!(
            "snapshots in {}: {} checked, {} new or changed, {} unreferenced{}",
            snapshots.dir().display(),
            summary.checked,
            summary.changed.len(),
            summary.unreferenced.len(),
            if snapshots_changed {
                " (review the .snap.new files: cargo insta review, or INSTA_UPDATE=always to accept)"
            } else {
                ""
            }
        );
    }
    Ok(match report.verdict {
        _ if snapshots_changed => ExitCode::from(1),
        Standing::Certified | Standing::Partial => ExitCode::SUCCESS,
        Standing::NotCertified | Standing::NothingToCertify => ExitCode::from(1),
    })
}
