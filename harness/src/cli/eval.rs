//! `ge-conformance eval`: one scenario (a file, standard input, or a table case's) put to a
//! backend, its observation printed, judged against the case and the reference when asked,
//! and drawn when asked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ge_conformance::backends::BackendHandle;
use ge_conformance::judging::Judging;
use ge_conformance::{certify, draw, input, runner};
use ge_spec::{Backend, Observation, Profile, Scenario, Spec, TableCase};

use super::{
    judging, load_local, open_backend, status, Exec, LevelArg, ProfileArg, Usage,
    DEFAULT_TIMEOUT_MS,
};

/// The flags of `eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
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
    /// Directory weights scenarios work in. When absent, a fresh one beneath this run's
    /// sandbox root, as `certify` makes: the one place a confined `exec:` backend may write. A
    /// directory given here is outside that grant unless it is beneath the root
    /// (`GE_CONFORMANCE_SANDBOX_ROOT`); use `--no-confine` to let a backend write elsewhere.
    #[arg(long)]
    sandbox: Option<PathBuf>,
    /// Also judge the answer against the reference (exit 1 when it differs).
    #[arg(long)]
    judge: bool,
    /// Milliseconds an `exec:` backend has to answer each request; a `dylib:` call past it
    /// ends the run (status 4).
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// Run an `exec:` backend with the harness's own environment and no write restriction
    /// (see docs/protocol.md, "Confinement"); writes outside the sandbox then go unseen.
    #[arg(long)]
    no_confine: bool,
    /// Refuse to run an `exec:` backend that Landlock cannot confine (a kernel without it, or
    /// a build without the `landlock` feature), instead of running it with only its own
    /// `$TMPDIR` and `$HOME` watched, where writes elsewhere go unseen.
    #[arg(long, conflicts_with = "no_confine")]
    require_confinement: bool,
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
}

/// Evaluates the scenario, prints the observation, judges and draws it; status 1 when it fails.
pub fn run(args: EvalArgs) -> Result<ExitCode, Usage> {
    let judging = judging(args.profile, args.level);
    let local = load_local(args.case.as_ref().and(args.cases_dir.as_deref()))?;
    let spec = local.as_ref().map_or(Spec::embedded(), |l| l.spec());
    let table_case = match &args.case {
        Some(name) => Some(find_case(spec, name, judging.profile)?),
        None => None,
    };
    let scenario: Scenario = match table_case {
        Some(c) => c.case.scenario.clone(),
        None => read_scenario(args.scenario.as_deref())?,
    };
    // Nothing to draw is said before the backend starts.
    if args.draw.is_some() && !draw::draws(scenario.capability()) {
        return Err(Usage(
            draw::DrawError::NothingToDraw(scenario.capability()).to_string(),
        ));
    }
    let handle = open_backend(
        &args.backend,
        Exec::new(args.timeout_ms, args.no_confine).requiring_confinement(args.require_confinement),
        judging.profile,
    )?;
    // A trap at a weight file's name goes where this backend names that file, as in `certify`.
    let table_case =
        table_case.map(|c| runner::following_case(judging.profile, handle.backend(), c));
    let scenario = match &table_case {
        Some(c) => c.case.scenario.clone(),
        None => runner::following(judging.profile, handle.backend(), &scenario),
    };
    let (dir, made) = sandbox(args.sandbox, &scenario)?;
    let observation = ask(&handle, &scenario, &dir)?;
    out!(
        "{}",
        serde_json::to_string_pretty(&observation).unwrap_or_default()
    );
    let drawn_observation = args.draw.as_ref().map(|_| observation.clone());
    let mut judged = Judged::default();
    if let Some(c) = &table_case {
        let verdict = match &made {
            Some(made) => {
                runner::judge_answer(&judging, handle.backend(), c, observation, Some(made))
            }
            None => runner::judge_answer_in_dir(&judging, handle.backend(), c, observation, &dir),
        };
        judged.against_case(judging.level, c, &verdict);
    }
    if args.judge {
        let draws = args.draw.is_some();
        judged.against_reference(&judging, handle.backend(), &scenario, &dir, draws)?;
    }
    if let (Some(file), Some(observation)) = (args.draw, drawn_observation) {
        let name = handle.backend().name().to_owned();
        let style = draw::Style {
            grid: args.grid,
            profile: judging.profile,
        };
        picture(&file, &scenario, (&name, &observation), &judged, style)?;
    }
    Ok(status(judged.failed))
}

/// The table case `name` (`table/case`), refused when it does not hold under `profile`.
fn find_case<'s>(spec: &'s Spec, name: &str, profile: Profile) -> Result<&'s TableCase, Usage> {
    let c = spec
        .cases()
        .iter()
        .find(|c| c.full_name() == *name)
        .ok_or_else(|| Usage(format!("no case {name}")))?;
    if !c.case.runs_in(profile) {
        return Err(Usage(format!(
            "case {} only holds under the {} profile; add `--profile {}`",
            c.full_name(),
            c.case.profile.unwrap_or_default(),
            c.case.profile.unwrap_or_default()
        )));
    }
    Ok(c)
}

/// The scenario of the file at `path`, or of standard input without one.
fn read_scenario(path: Option<&Path>) -> Result<Scenario, Usage> {
    let cap = input::MAX_SCENARIO;
    let data = match path {
        Some(path) => input::read_file(path, cap),
        None => input::read_capped(std::io::stdin().lock(), cap, "standard input"),
    }
    .map_err(|e| Usage(e.to_string()))?;
    serde_json::from_slice(&data).map_err(|e| Usage(format!("not a scenario: {e}")))
}

/// The directory the scenario works in: `--sandbox` (created), or the one `certify` would make
/// for it, returned with its guard so that it lives as long as the guard.
fn sandbox(
    dir: Option<PathBuf>,
    scenario: &Scenario,
) -> Result<(PathBuf, Option<ge_conformance::sandbox::Sandbox>), Usage> {
    match dir {
        Some(d) => {
            std::fs::create_dir_all(&d).map_err(|e| Usage(format!("{}: {e}", d.display())))?;
            Ok((d, None))
        }
        // The sandbox `certify` gives the same scenario: beneath this run's sandbox root, the
        // one place a confined backend may write, so the reproducer of a weights trial runs
        // under the confinement its certification ran under.
        None => {
            let made = runner::sandbox(scenario)
                .map_err(|e| Usage(format!("cannot create a sandbox: {e}")))?;
            Ok((runner::sandbox_path(&made).to_path_buf(), Some(made)))
        }
    }
}

/// The backend's observation of the scenario; its standard error joins a failure's message.
fn ask(handle: &BackendHandle, scenario: &Scenario, dir: &Path) -> Result<Observation, Usage> {
    certify::evaluate(handle.backend(), scenario, dir).map_err(|e| {
        let stderr = handle.stderr();
        if stderr.is_empty() {
            Usage(e)
        } else {
            Usage(format!("{e}\nbackend stderr:\n{stderr}"))
        }
    })
}

/// What judging found: whether the answer fails, the problems (for the picture) and the
/// reference's answer (drawn beside the backend's).
#[derive(Debug, Default)]
struct Judged {
    failed: bool,
    found: Vec<runner::Problem>,
    reference: Option<Observation>,
}

impl Judged {
    /// Takes the verdict on the table case `c` ([`runner::judge_answer`]: the case, the twins
    /// and the sandbox, as `certify` judges) and says it on standard error.
    fn against_case(
        &mut self,
        level: ge_spec::Conformance,
        c: &TableCase,
        verdict: &runner::Verdict,
    ) {
        self.found.extend(verdict.problems().iter().cloned());
        match verdict {
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
                self.failed = true;
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

    /// Judges the backend's answer against the reference's (`--judge`) and says how they
    /// differ; with `draws`, keeps the reference's answer for the picture.
    fn against_reference(
        &mut self,
        judging: &Judging,
        backend: &dyn Backend,
        scenario: &Scenario,
        dir: &Path,
        draws: bool,
    ) -> Result<(), Usage> {
        let level = judging.level;
        let problems = certify::compare(judging, backend, scenario);
        self.found.extend(problems.iter().cloned());
        if draws {
            let reference = ge_reference::Reference::new(judging.profile);
            let answer = certify::evaluate(&reference, scenario, dir)
                .map_err(|e| Usage(format!("the reference cannot answer: {e}")))?;
            self.reference = Some(answer);
        }
        if problems.is_empty() {
            eprintln!("agrees with the reference at level {level}");
            return Ok(());
        }
        self.failed |= problems.iter().any(|p| !p.deviation);
        let what = if self.failed {
            "FAILS"
        } else {
            "passes, with deviations from the suite's own choices,"
        };
        eprintln!("{what} at level {level} (profile {}):", judging.profile);
        for p in problems {
            eprintln!("  {p}");
        }
        Ok(())
    }
}

/// Draws the backend's answer (beside the reference's when judged) into `file`.
fn picture(
    file: &Path,
    scenario: &Scenario,
    answer: (&str, &Observation),
    judged: &Judged,
    style: draw::Style,
) -> Result<(), Usage> {
    let svg = draw::of_problems(
        scenario,
        answer,
        judged.reference.as_ref(),
        &judged.found,
        style,
    )
    .map_err(|e| Usage(e.to_string()))?;
    std::fs::write(file, svg).map_err(|e| Usage(format!("{}: {e}", file.display())))?;
    eprintln!("picture written to {}", file.display());
    Ok(())
}
