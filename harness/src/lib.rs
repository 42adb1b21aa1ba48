//! The conformance harness: runs any [`ge_spec::Backend`] against the spec tables, judges its
//! answers with patterns and invariant oracles, and reports.
#![deny(missing_docs)]

pub mod backends;
pub mod bundle;
pub mod certify;
pub mod confine;
pub mod divergence;
pub mod draw;
pub mod dylib;
pub mod expectations;
pub mod findings;
pub mod fuzz;
pub mod gen;
pub mod html;
pub mod input;
pub mod judging;
pub mod libtest;
pub mod local;
pub mod oracle;
pub mod pattern;
pub mod protocol;
pub mod reduce;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod snapshot;
