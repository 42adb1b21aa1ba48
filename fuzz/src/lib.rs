//! Glue shared by the fuzz targets: maps the harness's verdict onto libFuzzer's corpus decision.

use ge_conformance::fuzz::Verdict;
use libfuzzer_sys::Corpus;

/// Keep interesting input in the corpus, reject the rest.
pub fn corpus(verdict: Verdict) -> Corpus {
    match verdict {
        Verdict::Keep => Corpus::Keep,
        Verdict::Reject => Corpus::Reject,
    }
}
