//! The integration tests of `ge-conformance`, one module per former test file, linked into one
//! binary: the suite and its dependencies are linked once instead of once per file. The
//! `harness = false` runners (`reference_snapshots`, `vendor_example`, `junit_schema`) stay
//! binaries of their own.

#[path = "../common/mod.rs"]
mod common;

mod allowed_answers;
mod cabi;
mod certify;
mod choice_variants;
mod cli_vendor;
mod compare;
mod docs;
mod documented_reach;
mod eval_draw;
mod fault_table;
mod faults_memory;
mod faults_options;
mod faults_session;
mod faults_transfer;
mod faults_weights;
mod findings;
mod forged_lines;
mod fuzz_plants;
mod fuzz_regressions;
mod gen_reach;
mod hostile_backends;
mod hostile_files;
mod hostile_writes;
mod house;
mod independent_js;
mod independent_js2;
mod independent_perl;
mod independent_py;
mod independent_py2;
mod judging;
mod matrix;
mod pictures;
mod profiles;
mod props_memory;
mod props_session;
mod props_transfer;
mod props_weights;
mod protocol_python_shim;
mod protocol_reference;
#[cfg(feature = "schema")]
mod protocol_schema;
mod protocol_shims;
mod reach;
mod reference_cases;
mod reference_plans;
mod report_html;
mod report_marks;
mod reproducers;
mod seed_independence;
mod snapshot_hygiene;
mod snapshots_memory;
mod snapshots_options;
mod snapshots_session;
mod snapshots_weights;
mod text_engine;
mod verdict;
mod wording;
