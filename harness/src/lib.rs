//! The conformance harness: runs any [`ge_spec::Backend`] against the spec tables, judges its
//! answers with patterns and invariant oracles, and reports.
//!
//! # How the modules stack
//!
//! The modules form layers. A module uses modules of its own layer or of the layers below it,
//! never one above, and no two modules use each other (the `house` tests of `tests/it` read this
//! table and the sources, and fail on an arrow that runs back up or closes a circle). A type two
//! layers share lives in the lower one.
//!
//! | Layer | Modules | What it holds |
//! |---|---|---|
//! | 1 rules | `judging`, `input`, `divergence`, `clock` | the profile and level a verdict is made under, a broken clause ([`judging::Violation`]), capped reading of what a user hands over, the divergence map, calendar dates |
//! | 2 checks | `sandbox`, `oracle`, `pattern`, `gen`, `reduce` | the directories a trial's files are read back from, the oracles that say which clauses an observation breaks, `expect` patterns, scenario generators and shrinking |
//! | 3 trials | `confine`, `protocol`, `dylib`, `backends`, `allowed`, `runner` | running one scenario on one backend: confinement, the subprocess protocol, the C ABI, the backends the command line names, the engines that answer as the text allows where it is silent (the allowed-answer generator), and judging one answer |
//! | 4 certification | `report`, `expectations`, `local`, `certify`, `forbidden`, `snapshot`, `fuzz`, `findings` | the result of a run and its text renderers, waivers, a vendor's own tables, the run itself, the forbidden-answer generator and the reach it measures, snapshot trials, the fuzz targets' logic, corpus and promotion |
//! | 5 pictures, bundles and comparisons | `draw`, `html`, `bundle`, `compare`, `matrix` | SVG pictures of answers, the HTML report, bundles and their verification, two reports compared (regressions between runs), reports of several engines side by side (the results matrix) |
//! | 6 routes | `libtest` | the `cargo test` route (the command line, `src/main.rs` and `src/cli/`, sits above it) |
//!
//! A new clause needs a row in its table, a case and a check: the check is a function of the
//! oracle of its capability (`oracle/<capability>.rs`) whose doc comment starts with the
//! clause's ID, and it goes into that oracle's table of the phase it judges, an entry that
//! lists the clause's ID literally (the registry keyed by clause ID, `oracle::registry`, gathers
//! the tables; `oracle::judge` runs them). `ge-conformance explain <ID>` prints where it is. A
//! clause no function can judge is listed in the registry with why its cases' patterns do.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod allowed;
pub mod backends;
pub mod bundle;
pub mod certify;
pub mod clock;
pub mod compare;
pub mod confine;
pub mod divergence;
pub mod draw;
pub mod dylib;
pub mod expectations;
pub mod findings;
pub mod forbidden;
pub mod fuzz;
pub mod gen;
pub mod html;
pub mod input;
pub mod judging;
pub mod libtest;
pub mod local;
pub mod matrix;
pub mod oracle;
pub mod pattern;
pub mod protocol;
pub mod reduce;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod snapshot;
