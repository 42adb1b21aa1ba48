//! A planted fault in every target that drives the reference, followed the way a finding goes:
//! the target's inputs reach it, the input is kept where libFuzzer keeps a crash
//! (`<artifacts>/<target>/crash-<hash>`), the kept file replays to the same failure, and
//! `promote` turns it into a case that cites the clause the fault breaks, which the reference
//! passes and the table loader accepts once the root cause is written. CI runs the same drill
//! through libFuzzer itself (`.ci/run`, "a planted fault in each capability's target").

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use ge_conformance::findings::{self, PromoteOptions};
use ge_conformance::forbidden::{Engine, Mutation};
use ge_conformance::fuzz::{self, Target, Verdict, PLANTS};
use ge_spec::Spec;
use sha2::{Digest, Sha256};

/// The inputs a campaign starts from: the empty input (libFuzzer runs it first), the target's
/// seeds, then seeded random bytes.
fn inputs(target: &Target) -> impl Iterator<Item = Vec<u8>> {
    let seeds = target.seeds(Spec::embedded()).into_iter().map(|(_, b)| b);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let random = (0..2_000usize).map(move |round| {
        (0..(round * 7) % 512)
            .map(|_| {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    });
    std::iter::once(Vec::new()).chain(seeds).chain(random)
}

/// What a run of `target` with `engine` on `data` panicked with, if it did. (The panic's
/// report goes to the test's captured output, shown only when the test fails.)
fn failure(target: &Target, engine: &Engine, data: &[u8]) -> Option<String> {
    let run = catch_unwind(AssertUnwindSafe(|| fuzz::planted(target, engine, data)));
    match run {
        Ok(Verdict::Keep | Verdict::Reject) => None,
        Err(payload) => Some(
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default(),
        ),
    }
}

/// Keeps `data` as libFuzzer keeps a crash: `<dir>/<target>/crash-<hash>`.
fn keep(dir: &Path, target: &str, data: &[u8]) -> PathBuf {
    let hash: String = Sha256::digest(data)
        .iter()
        .take(20)
        .map(|b| format!("{b:02x}"))
        .collect();
    let at = dir.join(target);
    std::fs::create_dir_all(&at).expect("artefact directory");
    let file = at.join(format!("crash-{hash}"));
    std::fs::write(&file, data).expect("artefact written");
    file
}

#[test]
fn a_planted_fault_in_every_reference_target_is_found_kept_replayed_and_promoted() {
    let planted: Vec<&str> = PLANTS.iter().map(|(t, _)| *t).collect();
    let expected: Vec<&str> = fuzz::TARGETS
        .iter()
        .filter(|t| fuzz::plantable(t))
        .map(|t| t.name)
        .collect();
    assert_eq!(
        planted, expected,
        "every plantable target has its plant here"
    );
    assert!(!fuzz::plantable(fuzz::target("cabi").expect("cabi")));

    let dir = tempfile::tempdir().expect("tempdir");
    let mut found = Vec::new();
    for (name, mutation) in PLANTS {
        let target = fuzz::target(name).expect("target");
        let engine = Engine::new(mutation.parse::<Mutation>().expect("mutation"));
        let hit = inputs(target).find_map(|d| failure(target, &engine, &d).map(|f| (d, f)));
        found.push((*name, *mutation, engine, hit));
    }

    for (name, mutation, engine, hit) in found {
        let target = fuzz::target(name).expect("target");
        let (data, message) =
            hit.unwrap_or_else(|| panic!("{name}: the planted {mutation} was never reached"));
        assert!(
            message.starts_with(&format!("forbidden[{mutation}] fails")),
            "{name}: {message}"
        );
        // Kept, then replayed from the file: the same failure.
        let artefact = keep(&dir.path().join("artifacts"), name, &data);
        let again = std::fs::read(&artefact).expect("artefact read");
        let replayed = failure(target, &engine, &again);
        assert_eq!(
            replayed.as_deref(),
            Some(message.as_str()),
            "{name}: replay"
        );
        // Promoted: the target comes from the artefact's directory, as for libFuzzer's.
        let table = dir.path().join(format!("{name}.toml"));
        let opts = PromoteOptions {
            table: table.clone(),
            ..PromoteOptions::default()
        };
        let p = findings::promote(&engine, &artefact, &opts)
            .unwrap_or_else(|e| panic!("{name}: promote refused: {e}"));
        assert!(
            p.failure.is_some(),
            "{name}: the planted engine still fails"
        );
        // The case cites what the finding named: the clauses the planted engine broke (and,
        // for a case bound to one profile, where the profiles diverge).
        let named: Vec<&str> = message
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix('['))
            .filter_map(|l| l.split_once(']'))
            .flat_map(|(ids, _)| ids.split(", "))
            .collect();
        assert!(
            !named.is_empty() && named.iter().all(|c| p.case.clauses.iter().any(|x| x == c)),
            "{name}: the case cites {:?}; the finding was\n{message}",
            p.case.clauses
        );
        // The promoted case loads once its root cause is written.
        crate::findings::load_with(&table);
    }
}

/// CI's drill plants what [`PLANTS`] says, through libFuzzer: `.ci/run`'s table is the same.
#[test]
fn ci_plants_the_same_faults() {
    let run = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/run"))
        .expect(".ci/run");
    let line = run
        .lines()
        .find_map(|l| l.strip_prefix("plants=\""))
        .expect(".ci/run has a plants=\"...\" line");
    let ci: Vec<(&str, &str)> = line
        .trim_end_matches('"')
        .split(' ')
        .map(|p| p.split_once(':').expect("target:mutation"))
        .collect();
    assert_eq!(ci, PLANTS);
}
