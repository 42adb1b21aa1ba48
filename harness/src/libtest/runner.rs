//! A test runner for `harness = false` test binaries that speaks libtest's command line and
//! prints its output, so `cargo test`, `cargo nextest` and IDEs drive the suite's trials as they
//! drive ordinary tests, and a vendor's test binary links no command-line parser to do it.
//!
//! What it understands is the part of libtest's command line those tools use: filters (a trial
//! runs when its name, `[kind] name` as `--list` prints it, contains any of them), `--exact`,
//! `--skip`, `--ignored`, `--include-ignored`, `--list`, `--format pretty|terse|json` (`-q`),
//! `--test-threads` (else `RUST_TEST_THREADS`, else one thread per core), `--logfile`,
//! `--color` and `-Z`; `--nocapture` and `--show-output` are accepted and change nothing, since
//! trials are never captured. Anything else is refused with a message, never a panic.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::io::{IsTerminal, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How a trial that did not fail ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// It ran to its end: a pass.
    Completed,
    /// It found, while running, that it does not apply: shown as ignored, with the reason.
    Ignored {
        /// Why, printed after `ignored`.
        reason: Option<String>,
    },
}

impl Completion {
    /// Ignored at run time, without a reason.
    pub fn ignored() -> Self {
        Self::Ignored { reason: None }
    }

    /// Ignored at run time, for `reason`.
    pub fn ignored_with(reason: impl fmt::Display) -> Self {
        Self::Ignored {
            reason: Some(reason.to_string()),
        }
    }
}

/// A trial's failure, and the message printed for it under `failures:`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failed {
    message: Option<String>,
}

impl Failed {
    /// A failure with nothing to say.
    pub fn without_message() -> Self {
        Self { message: None }
    }

    /// The failure's message.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl<M: fmt::Display> From<M> for Failed {
    fn from(message: M) -> Self {
        Self {
            message: Some(message.to_string()),
        }
    }
}

type Body = Box<dyn FnOnce() -> Result<Completion, Failed> + Send>;

/// One test: a name, an optional kind (printed as `[kind] ` before the name), whether it is
/// ignored unless asked for, and what it runs.
pub struct Trial {
    name: String,
    kind: String,
    ignored: bool,
    /// Why it is ignored, printed when it is not run.
    reason: Option<String>,
    body: Body,
}

impl fmt::Debug for Trial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trial")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("ignored", &self.ignored)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl Trial {
    /// A trial that passes when `body` returns `Ok` and fails when it returns `Err` or panics.
    pub fn test<F>(name: impl Into<String>, body: F) -> Self
    where
        F: FnOnce() -> Result<(), Failed> + Send + 'static,
    {
        Self::ignorable_test(name, move || body().map(|()| Completion::Completed))
    }

    /// A trial whose body may also find, while running, that it does not apply
    /// ([`Completion::Ignored`]).
    pub fn ignorable_test<F>(name: impl Into<String>, body: F) -> Self
    where
        F: FnOnce() -> Result<Completion, Failed> + Send + 'static,
    {
        Self {
            name: name.into(),
            kind: String::new(),
            ignored: false,
            reason: None,
            body: Box::new(body),
        }
    }

    /// The same trial, of kind `kind`.
    pub fn with_kind(self, kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            ..self
        }
    }

    /// The same trial, ignored unless `--ignored` or `--include-ignored` asks for it.
    pub fn with_ignored_flag(self, ignored: bool) -> Self {
        Self { ignored, ..self }
    }

    /// The same trial, ignored unless asked for, and shown as `ignored (reason)` when not run
    /// (libtest's `#[ignore = "reason"]`).
    pub fn with_ignored_reason(self, reason: impl Into<String>) -> Self {
        Self {
            ignored: true,
            reason: Some(reason.into()),
            ..self
        }
    }

    /// The trial's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The trial's kind (empty when it has none).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Whether the trial is ignored unless asked for.
    pub fn has_ignored_flag(&self) -> bool {
        self.ignored
    }

    /// The name `--list` prints: `[kind] name`, or the name alone.
    fn listed(&self) -> Cow<'_, str> {
        if self.kind.is_empty() {
            Cow::Borrowed(&self.name)
        } else {
            Cow::Owned(format!("[{}] {}", self.kind, self.name))
        }
    }
}

/// When the output is coloured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Color {
    /// When standard output is a terminal, no log file is written and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// How the run is printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// A line per trial.
    #[default]
    Pretty,
    /// A character per trial.
    Terse,
    /// A JSON object per line, as libtest's `--format json`.
    Json,
}

/// The command line of a test binary, as libtest reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arguments {
    /// `--help`: print the usage and run nothing.
    pub help: bool,
    /// `--list`: list the trials instead of running them.
    pub list: bool,
    /// `--ignored`: only the ignored trials, run.
    pub ignored: bool,
    /// `--include-ignored`: the ignored trials run too.
    pub include_ignored: bool,
    /// `--exact`: filters and skips match a whole name.
    pub exact: bool,
    /// `--bench`: run benchmarks only (this runner has none, so every trial is ignored).
    pub bench: bool,
    /// `--test`: run tests (the default).
    pub test: bool,
    /// `--nocapture`: accepted; trials are never captured.
    pub nocapture: bool,
    /// `--show-output`: accepted; trials are never captured.
    pub show_output: bool,
    /// `-q`, `--quiet`: the terse format.
    pub quiet: bool,
    /// `--test-threads N`.
    pub test_threads: Option<usize>,
    /// `--logfile PATH`: the output goes there instead of standard output.
    pub logfile: Option<PathBuf>,
    /// `--skip FILTER`, repeatable: trials matching any are left out.
    pub skip: Vec<String>,
    /// `--color auto|always|never`.
    pub color: Color,
    /// `--format pretty|terse|json`.
    pub format: Option<Format>,
    /// The positional filters: a trial runs when it matches any (all run when there are none).
    pub filters: Vec<String>,
}

/// A command line this runner cannot follow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentsError {
    /// An option it does not know.
    #[error("unknown option `{0}`")]
    Unknown(String),
    /// An option given without its value.
    #[error("option `{0}` needs a value")]
    MissingValue(String),
    /// A flag given a value.
    #[error("option `{0}` takes no value")]
    UnexpectedValue(String),
    /// A value the option does not accept.
    #[error("`{value}` is not a value of `{option}`: expected {expected}")]
    Invalid {
        /// The option.
        option: String,
        /// What was given.
        value: String,
        /// What it accepts.
        expected: &'static str,
    },
    /// An argument that is not valid UTF-8.
    #[error("argument {0:?} is not valid UTF-8")]
    NotUtf8(OsString),
}

/// The options that take a value.
const VALUED: [&str; 6] = [
    "--test-threads",
    "--logfile",
    "--skip",
    "--color",
    "--format",
    "-Z",
];

const USAGE: &str = "\
Usage: <test binary> [OPTIONS] [FILTERS...]

  FILTERS                 run the trials whose name ([kind] name) contains any of them
  --exact                 filters and skips match whole names
  --skip FILTER           leave out the trials matching FILTER (repeatable)
  --ignored               run the ignored trials only
  --include-ignored       run the ignored trials too
  --list                  list the trials instead of running them
  --format pretty|terse|json
  -q, --quiet             the terse format
  --test-threads N        trials run at once (default: RUST_TEST_THREADS, else one per core)
  --logfile PATH          write the output to PATH
  --color auto|always|never
  --nocapture, --show-output, --test, --bench, -Z FLAG   accepted as libtest does
  -h, --help              this text
";

impl Arguments {
    /// The arguments of this process. `--help` prints the usage and exits 0; a command line
    /// that cannot be followed prints why and exits 101, as libtest does.
    pub fn from_args() -> Self {
        match Self::parse(std::env::args_os().skip(1)) {
            Ok(args) if args.help => {
                print!("{USAGE}");
                std::process::exit(0)
            }
            Ok(args) => args,
            Err(e) => {
                eprintln!("error: {e}\n\n{USAGE}");
                std::process::exit(101)
            }
        }
    }

    /// Parses `args` (without the program's name).
    pub fn parse<I, S>(args: I) -> Result<Self, ArgumentsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut out = Self::default();
        let mut args = args
            .into_iter()
            .map(|a| a.into().into_string().map_err(ArgumentsError::NotUtf8));
        let mut positional_only = false;
        while let Some(arg) = args.next() {
            let arg = arg?;
            if positional_only || !arg.starts_with('-') || arg == "-" {
                out.filters.push(arg);
                continue;
            }
            if arg == "--" {
                positional_only = true;
                continue;
            }
            // `--name=value`, `--name value`, `-Zvalue`, `-Z value`.
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
                _ if arg.starts_with("-Z") && arg.len() > 2 => {
                    ("-Z".to_owned(), Some(arg[2..].to_owned()))
                }
                _ => (arg.clone(), None),
            };
            if let Some(flag) = out.flag(&name) {
                if inline.is_some() {
                    return Err(ArgumentsError::UnexpectedValue(name));
                }
                *flag = true;
                continue;
            }
            if !VALUED.contains(&name.as_str()) {
                return Err(ArgumentsError::Unknown(arg));
            }
            let value = match inline {
                Some(v) => v,
                None => args
                    .next()
                    .ok_or_else(|| ArgumentsError::MissingValue(name.clone()))??,
            };
            out.set(&name, value)?;
        }
        Ok(out)
    }

    /// The switch `name` sets, if it is one.
    fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "-h" | "--help" => &mut self.help,
            "--list" => &mut self.list,
            "--ignored" => &mut self.ignored,
            "--include-ignored" => &mut self.include_ignored,
            "--exact" => &mut self.exact,
            "--bench" => &mut self.bench,
            "--test" => &mut self.test,
            "--nocapture" => &mut self.nocapture,
            "--show-output" => &mut self.show_output,
            "-q" | "--quiet" => &mut self.quiet,
            _ => return None,
        })
    }

    /// Sets option `name` (one of [`VALUED`]) to `value`.
    fn set(&mut self, name: &str, value: String) -> Result<(), ArgumentsError> {
        let invalid = |value: String, expected| ArgumentsError::Invalid {
            option: name.to_owned(),
            value,
            expected,
        };
        match name {
            "--test-threads" => match value.parse::<usize>() {
                Ok(n) if n > 0 => self.test_threads = Some(n),
                _ => return Err(invalid(value, "a number of threads, at least 1")),
            },
            "--logfile" => self.logfile = Some(PathBuf::from(value)),
            "--skip" => self.skip.push(value),
            "--color" => {
                self.color = match value.as_str() {
                    "auto" => Color::Auto,
                    "always" => Color::Always,
                    "never" => Color::Never,
                    _ => return Err(invalid(value, "auto, always or never")),
                }
            }
            "--format" => {
                self.format = Some(match value.as_str() {
                    "pretty" => Format::Pretty,
                    "terse" => Format::Terse,
                    "json" => Format::Json,
                    _ => return Err(invalid(value, "pretty, terse or json")),
                })
            }
            // libtest's unstable switch (`-Z unstable-options`, which `--format json` asks
            // for): nothing here is unstable.
            _ => {}
        }
        Ok(())
    }

    /// Whether `trial` is selected: it matches a filter (or there are none), no skip, and
    /// with `--ignored` it is ignored.
    fn selects(&self, trial: &Trial) -> bool {
        self.filters_select(trial) && (!self.ignored || trial.ignored)
    }

    /// Whether the filters and skips select `trial`, ignored or not.
    pub fn filters_select(&self, trial: &Trial) -> bool {
        let listed = trial.listed();
        let matches = |f: &String| {
            if self.exact {
                trial.name == *f || listed == f.as_str()
            } else {
                listed.contains(f.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
    }

    /// Whether a selected `trial` is shown as ignored instead of run.
    fn skips(&self, trial: &Trial) -> bool {
        (trial.ignored && !self.ignored && !self.include_ignored) || self.bench
    }

    fn threads(&self) -> usize {
        self.test_threads
            .or_else(|| {
                std::env::var("RUST_TEST_THREADS")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n: &usize| n > 0)
            })
            .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
            .unwrap_or(1)
    }

    fn format(&self) -> Format {
        if self.quiet {
            Format::Terse
        } else {
            self.format.unwrap_or_default()
        }
    }
}

/// What a run counted, libtest's way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conclusion {
    /// Trials left out by the filters, skips or `--ignored`.
    pub num_filtered_out: u64,
    /// Trials that passed.
    pub num_passed: u64,
    /// Trials that failed (a run whose output could not be opened counts one).
    pub num_failed: u64,
    /// Trials ignored, before or while running.
    pub num_ignored: u64,
    /// Benchmarks measured: always 0 here.
    pub num_measured: u64,
}

impl Conclusion {
    /// Whether any trial failed.
    pub fn has_failed(&self) -> bool {
        self.num_failed > 0
    }

    /// libtest's exit status: 101 when a trial failed, else 0.
    pub fn exit_code(&self) -> ExitCode {
        if self.has_failed() {
            ExitCode::from(101)
        } else {
            ExitCode::SUCCESS
        }
    }

    /// Exits with libtest's status.
    pub fn exit(&self) -> ! {
        self.exit_if_failed();
        std::process::exit(0)
    }

    /// Exits with 101 when a trial failed; returns otherwise.
    pub fn exit_if_failed(&self) {
        if self.has_failed() {
            std::process::exit(101)
        }
    }
}

/// How one trial ended.
#[derive(Debug)]
enum Outcome {
    Passed,
    Failed(Option<String>),
    Ignored(Option<String>),
}

/// Runs `body`; a panic is a failure with the panic's message.
fn run_one(body: Body) -> Outcome {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(Completion::Completed)) => Outcome::Passed,
        Ok(Ok(Completion::Ignored { reason })) => Outcome::Ignored(reason),
        Ok(Err(failed)) => Outcome::Failed(failed.message),
        Err(payload) => {
            let text = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied());
            Outcome::Failed(Some(match text {
                Some(text) => format!("test panicked: {text}"),
                None => "test panicked".to_owned(),
            }))
        }
    }
}

/// Where and how the run is printed. Write errors are dropped: a closed pipe ends the output,
/// not the run.
struct Printer {
    out: Box<dyn Write>,
    format: Format,
    color: bool,
    name_width: usize,
    kind_width: usize,
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

impl Printer {
    fn open(args: &Arguments, trials: &[Trial]) -> std::io::Result<Self> {
        let (out, terminal): (Box<dyn Write>, bool) = match &args.logfile {
            Some(path) => (Box::new(std::fs::File::create(path)?), false),
            None => (Box::new(std::io::stdout()), std::io::stdout().is_terminal()),
        };
        let color = match args.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => terminal && std::env::var_os("NO_COLOR").is_none(),
        };
        Ok(Self {
            out,
            format: args.format(),
            color,
            name_width: trials
                .iter()
                .map(|t| t.name.chars().count())
                .max()
                .unwrap_or(0),
            kind_width: trials
                .iter()
                .map(|t| match t.kind.chars().count() {
                    0 => 0,
                    n => n + 3,
                })
                .max()
                .unwrap_or(0),
        })
    }

    fn paint(&self, colour: &str, text: &str) -> String {
        if self.color {
            format!("{colour}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }

    fn list(&mut self, trials: &[Trial]) {
        for t in trials {
            let _ = writeln!(self.out, "{}: test", t.listed());
        }
    }

    fn title(&mut self, count: usize) {
        let _ = match self.format {
            Format::Json => writeln!(
                self.out,
                r#"{{ "type": "suite", "event": "started", "test_count": {count} }}"#
            ),
            _ => writeln!(
                self.out,
                "\nrunning {count} test{}",
                if count == 1 { "" } else { "s" }
            ),
        };
    }

    fn started(&mut self, name: &str, kind: &str) {
        match self.format {
            Format::Pretty => {
                let kind = match kind {
                    "" => String::new(),
                    k => format!("[{k}] "),
                };
                let _ = write!(
                    self.out,
                    "test {kind:<kw$}{name:<nw$} ... ",
                    kw = self.kind_width,
                    nw = self.name_width
                );
                let _ = self.out.flush();
            }
            Format::Terse => {}
            Format::Json => {
                let _ = writeln!(
                    self.out,
                    r#"{{ "type": "test", "event": "started", "name": {} }}"#,
                    json_string(name)
                );
            }
        }
    }

    fn word(&self, outcome: &Outcome) -> String {
        match outcome {
            Outcome::Passed => self.paint(GREEN, "ok"),
            Outcome::Failed(_) => self.paint(RED, "FAILED"),
            Outcome::Ignored(None) => self.paint(YELLOW, "ignored"),
            Outcome::Ignored(Some(why)) => self.paint(YELLOW, &format!("ignored ({why})")),
        }
    }

    fn ended(&mut self, name: &str, outcome: &Outcome) {
        match self.format {
            Format::Pretty => {
                let word = self.word(outcome);
                let _ = writeln!(self.out, "{word}");
            }
            Format::Terse => {
                let c = match outcome {
                    Outcome::Passed => self.paint(GREEN, "."),
                    Outcome::Failed(_) => self.paint(RED, "F"),
                    Outcome::Ignored(_) => self.paint(YELLOW, "i"),
                };
                let _ = write!(self.out, "{c}");
                let _ = self.out.flush();
            }
            Format::Json => {
                let (event, extra) = match outcome {
                    Outcome::Passed => ("ok", String::new()),
                    Outcome::Ignored(None) => ("ignored", String::new()),
                    Outcome::Ignored(Some(why)) => {
                        ("ignored", format!(r#", "message": {}"#, json_string(why)))
                    }
                    Outcome::Failed(None) => ("failed", String::new()),
                    Outcome::Failed(Some(m)) => (
                        "failed",
                        format!(r#", "stdout": {}"#, json_string(&format!("Error: {m:?}\n"))),
                    ),
                };
                let _ = writeln!(
                    self.out,
                    r#"{{ "type": "test", "name": {}, "event": "{event}"{extra} }}"#,
                    json_string(name)
                );
            }
        }
    }

    fn failures(&mut self, failed: &[(String, Option<String>)]) {
        if failed.is_empty() || self.format == Format::Json {
            return;
        }
        let _ = writeln!(self.out, "\nfailures:\n");
        for (name, message) in failed {
            let _ = writeln!(self.out, "---- {name} ----");
            if let Some(m) = message {
                let _ = writeln!(self.out, "{m}");
            }
            let _ = writeln!(self.out);
        }
        let _ = writeln!(self.out, "\nfailures:");
        for (name, _) in failed {
            let _ = writeln!(self.out, "    {name}");
        }
    }

    fn summary(&mut self, c: &Conclusion, took: Duration) {
        let _ = match self.format {
            Format::Json => writeln!(
                self.out,
                r#"{{ "type": "suite", "event": "{}", "passed": {}, "failed": {}, "ignored": {}, "measured": {}, "filtered_out": {}, "exec_time": {} }}"#,
                if c.has_failed() { "failed" } else { "ok" },
                c.num_passed,
                c.num_failed,
                c.num_ignored,
                c.num_measured,
                c.num_filtered_out,
                took.as_secs_f64()
            ),
            _ => {
                let word = if c.has_failed() {
                    self.paint(RED, "FAILED")
                } else {
                    self.paint(GREEN, "ok")
                };
                writeln!(
                    self.out,
                    "\ntest result: {word}. {} passed; {} failed; {} ignored; {} measured; \
                     {} filtered out; finished in {:.2}s\n",
                    c.num_passed,
                    c.num_failed,
                    c.num_ignored,
                    c.num_measured,
                    c.num_filtered_out,
                    took.as_secs_f64()
                )
            }
        };
        let _ = self.out.flush();
    }
}

/// `text` as a JSON string, quotes included.
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Runs `trials` on `threads` threads and hands each one's (name, kind, outcome) to `done`, on
/// this thread, as they end.
fn run_parallel(
    args: &Arguments,
    trials: Vec<Trial>,
    threads: usize,
    mut done: impl FnMut(String, String, Outcome),
) {
    let total = trials.len();
    let queue = Mutex::new(trials.into_iter());
    let (send, receive) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(total) {
            let (queue, send) = (&queue, send.clone());
            scope.spawn(move || loop {
                let next = match queue.lock() {
                    Ok(mut q) => q.next(),
                    Err(poisoned) => poisoned.into_inner().next(),
                };
                let Some(t) = next else { break };
                let outcome = if args.skips(&t) {
                    Outcome::Ignored(t.reason)
                } else {
                    run_one(t.body)
                };
                if send.send((t.name, t.kind, outcome)).is_err() {
                    break;
                }
            });
        }
        drop(send);
        for (name, kind, outcome) in receive.iter() {
            done(name, kind, outcome);
        }
    });
}

/// Runs the `trials` that `args` selects, prints the run as libtest would, and returns the
/// counts (`--list` lists them and returns an empty count).
pub fn run(args: &Arguments, mut trials: Vec<Trial>) -> Conclusion {
    let started = Instant::now();
    let mut conclusion = Conclusion::default();
    let before = trials.len();
    trials.retain(|t| args.selects(t));
    conclusion.num_filtered_out = (before - trials.len()) as u64;
    let mut printer = match Printer::open(args, &trials) {
        Ok(p) => p,
        Err(e) => {
            let path = args.logfile.as_deref().unwrap_or("-".as_ref());
            eprintln!(
                "error: the log file {} cannot be written: {e}",
                path.display()
            );
            return Conclusion {
                num_failed: 1,
                ..Conclusion::default()
            };
        }
    };
    if args.list {
        printer.list(&trials);
        return Conclusion::default();
    }
    printer.title(trials.len());
    let mut failed = Vec::new();
    let mut count = |outcome: &Outcome, name: &str| match outcome {
        Outcome::Passed => conclusion.num_passed += 1,
        Outcome::Ignored(_) => conclusion.num_ignored += 1,
        Outcome::Failed(m) => {
            conclusion.num_failed += 1;
            failed.push((name.to_owned(), m.clone()));
        }
    };
    let threads = args.threads();
    if threads == 1 {
        for t in trials {
            printer.started(&t.name, &t.kind);
            let outcome = if args.skips(&t) {
                Outcome::Ignored(t.reason)
            } else {
                run_one(t.body)
            };
            printer.ended(&t.name, &outcome);
            count(&outcome, &t.name);
        }
    } else {
        run_parallel(args, trials, threads, |name, kind, outcome| {
            printer.started(&name, &kind);
            printer.ended(&name, &outcome);
            count(&outcome, &name);
        });
    }
    printer.failures(&failed);
    printer.summary(&conclusion, started.elapsed());
    conclusion
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Arguments, ArgumentsError> {
        Arguments::parse(args.iter().copied())
    }

    #[test]
    fn parses_what_cargo_test_and_nextest_pass() {
        let a = parse(&["--list", "--format", "terse", "--ignored"]).unwrap();
        assert!(a.list && a.ignored);
        assert_eq!(a.format, Some(Format::Terse));
        let a = parse(&[
            "--exact",
            "[options] a/b",
            "--nocapture",
            "--include-ignored",
        ])
        .unwrap();
        assert!(a.exact && a.nocapture && a.include_ignored);
        assert_eq!(a.filters, ["[options] a/b"]);
        let a = parse(&[
            "--test-threads=3",
            "--skip",
            "x",
            "--skip=y",
            "-q",
            "f",
            "g",
        ])
        .unwrap();
        assert_eq!(a.test_threads, Some(3));
        assert_eq!(a.skip, ["x", "y"]);
        assert!(a.quiet);
        assert_eq!(a.filters, ["f", "g"]);
        let a = parse(&[
            "-Z",
            "unstable-options",
            "--format=json",
            "--color",
            "never",
        ])
        .unwrap();
        assert_eq!((a.format, a.color), (Some(Format::Json), Color::Never));
        let a = parse(&["-Zunstable-options", "--", "--list"]).unwrap();
        assert!(!a.list);
        assert_eq!(a.filters, ["--list"]);
        assert!(parse(&["-h"]).unwrap().help);
    }

    #[test]
    fn refuses_what_it_cannot_follow_with_a_reason() {
        assert_eq!(
            parse(&["--frobnicate"]),
            Err(ArgumentsError::Unknown("--frobnicate".into()))
        );
        assert_eq!(
            parse(&["--test-threads"]),
            Err(ArgumentsError::MissingValue("--test-threads".into()))
        );
        for bad in [["--test-threads", "0"], ["--test-threads", "many"]] {
            assert!(matches!(parse(&bad), Err(ArgumentsError::Invalid { .. })));
        }
        assert!(matches!(
            parse(&["--format", "xml"]),
            Err(ArgumentsError::Invalid { .. })
        ));
        assert!(matches!(
            parse(&["--color=sometimes"]),
            Err(ArgumentsError::Invalid { .. })
        ));
        assert_eq!(
            parse(&["--list=yes"]),
            Err(ArgumentsError::UnexpectedValue("--list".into()))
        );
    }

    /// Runs `trials` with `args` on `threads`, the output into a file; returns the counts and
    /// the output.
    fn run_logged(args: &[&str], trials: Vec<Trial>) -> (Conclusion, String) {
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut args = parse(args).unwrap();
        args.logfile = Some(log.path().to_owned());
        let c = run(&args, trials);
        (c, std::fs::read_to_string(log.path()).unwrap())
    }

    fn sample() -> Vec<Trial> {
        vec![
            Trial::test("a/pass", || Ok(())).with_kind("options"),
            Trial::test("a/fail", || Err("broke A-1".into())).with_kind("options"),
            Trial::test("b/panic", || panic!("boom")),
            Trial::test("b/ignored", || Err("must not run".into())).with_ignored_flag(true),
            Trial::ignorable_test("c/runtime", || Ok(Completion::ignored_with("waived"))),
        ]
    }

    #[test]
    fn counts_every_outcome_on_one_thread_and_on_several() {
        for threads in ["1", "4"] {
            let (c, out) = run_logged(&["--test-threads", threads], sample());
            let want = Conclusion {
                num_passed: 1,
                num_failed: 2,
                num_ignored: 2,
                ..Conclusion::default()
            };
            assert_eq!(c, want, "{out}");
            for shown in [
                "\nrunning 5 tests\n",
                "test [options] a/pass    ... ok\n",
                "test           b/panic   ... FAILED\n",
                "... FAILED\n",
                "... ignored (waived)\n",
                "---- a/fail ----\nbroke A-1\n",
                "---- b/panic ----\ntest panicked: boom\n",
                "\nfailures:\n    ",
                "test result: FAILED. 1 passed; 2 failed; 2 ignored; 0 measured; \
                 0 filtered out; finished in ",
            ] {
                assert!(out.contains(shown), "{shown:?} in:\n{out}");
            }
            assert!(!out.contains('\x1b'), "no colour in a log file: {out}");
        }
    }

    #[test]
    fn filters_match_the_listed_name_and_exact_matches_the_whole_name() {
        let (c, _) = run_logged(&["a/"], sample());
        assert_eq!((c.num_passed, c.num_failed, c.num_filtered_out), (1, 1, 3));
        let (c, _) = run_logged(&["[options] a/p"], sample());
        assert_eq!((c.num_passed, c.num_filtered_out), (1, 4));
        for exact in ["a/pass", "[options] a/pass"] {
            let (c, _) = run_logged(&["--exact", exact], sample());
            assert_eq!((c.num_passed, c.num_filtered_out), (1, 4), "{exact}");
        }
        let (c, _) = run_logged(&["--exact", "a/pas"], sample());
        assert_eq!(c.num_filtered_out, 5);
        let (c, _) = run_logged(&["--skip", "b/", "--skip", "a/fail"], sample());
        assert_eq!((c.num_passed, c.num_failed, c.num_ignored), (1, 0, 1));
        let (c, _) = run_logged(&["a/pass", "b/panic"], sample());
        assert_eq!((c.num_passed, c.num_failed, c.num_filtered_out), (1, 1, 3));
    }

    #[test]
    fn ignored_trials_run_only_when_asked() {
        let (c, out) = run_logged(&["--ignored"], sample());
        assert_eq!((c.num_failed, c.num_filtered_out), (1, 4), "{out}");
        assert!(out.contains("must not run"), "{out}");
        let (c, _) = run_logged(&["--include-ignored"], sample());
        assert_eq!((c.num_failed, c.num_ignored), (3, 1));
        let (c, _) = run_logged(&["--bench"], sample());
        assert_eq!((c.num_ignored, c.num_passed, c.num_failed), (5, 0, 0));
    }

    #[test]
    fn an_ignored_trial_not_run_shows_its_reason() {
        let reasoned = || {
            vec![Trial::test("w/stale", || Err("must not run".into()))
                .with_ignored_reason("matches nothing")]
        };
        let (c, out) = run_logged(&[], reasoned());
        assert_eq!((c.num_ignored, c.num_failed), (1, 0), "{out}");
        assert!(
            out.contains("w/stale ... ignored (matches nothing)"),
            "{out}"
        );
        let (_, out) = run_logged(&["--list", "--ignored"], reasoned());
        assert!(out.contains("w/stale: test"), "{out}");
        // Asked for, it runs (and here fails).
        let (c, out) = run_logged(&["--ignored"], reasoned());
        assert_eq!((c.num_failed, c.num_ignored), (1, 0), "{out}");
    }

    #[test]
    fn lists_as_nextest_reads_them() {
        let (c, out) = run_logged(&["--list", "--format", "terse"], sample());
        assert_eq!(c, Conclusion::default());
        assert_eq!(
            out,
            "[options] a/pass: test\n[options] a/fail: test\nb/panic: test\n\
             b/ignored: test\nc/runtime: test\n"
        );
        let (_, out) = run_logged(&["--list", "--format", "terse", "--ignored"], sample());
        assert_eq!(out, "b/ignored: test\n");
    }

    #[test]
    fn json_lines_parse_and_terse_prints_a_character_per_trial() {
        let (_, out) = run_logged(&["--format", "json", "--test-threads", "1"], sample());
        let events: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(events.len(), 1 + 2 * 5 + 1, "{out}");
        assert_eq!(events[0]["test_count"], 5);
        assert_eq!(events[4]["event"], "failed");
        assert_eq!(events[11]["failed"], 2);
        let (_, out) = run_logged(&["-q", "--test-threads", "1"], sample());
        assert!(out.contains("\n.FFii\n"), "{out}");
    }

    #[test]
    fn a_log_file_that_cannot_be_written_fails_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let args = Arguments {
            logfile: Some(dir.path().join("no/such/dir/log")),
            ..Arguments::default()
        };
        assert!(run(&args, sample()).has_failed());
    }

    #[test]
    fn colour_is_asked_for_or_left_out() {
        let (_, out) = run_logged(&["--color", "always", "--test-threads", "1"], sample());
        assert!(out.contains("\x1b[32mok\x1b[0m"), "{out}");
        assert!(out.contains("\x1b[31mFAILED\x1b[0m"), "{out}");
    }
}
