//! Glue shared by the fuzz targets: runs a target (or, for a drill, a fault planted in it) and
//! maps the harness's verdict onto libFuzzer's corpus decision.

use std::sync::OnceLock;

use ge_conformance::forbidden::{Engine, Mutation};
use ge_conformance::fuzz::{self, Target, Verdict};
use libfuzzer_sys::Corpus;

/// Keep interesting input in the corpus, reject the rest.
pub fn corpus(verdict: Verdict) -> Corpus {
    match verdict {
        Verdict::Keep => Corpus::Keep,
        Verdict::Reject => Corpus::Reject,
    }
}

/// The fault `GE_CONFORMANCE_FUZZ_PLANT` names ([`fuzz::PLANT_VAR`]), read once. A name that is
/// no mutation ends the run with status 2 and the list of names: a drill that plants nothing
/// must not pass for a campaign that found nothing.
fn plant() -> Option<&'static Engine> {
    static PLANT: OnceLock<Option<Engine>> = OnceLock::new();
    PLANT
        .get_or_init(|| {
            let name = std::env::var(fuzz::PLANT_VAR).ok()?;
            match name.parse::<Mutation>() {
                Ok(m) => {
                    eprintln!("{}: planted fault {name}", fuzz::PLANT_VAR);
                    Some(Engine::new(m))
                }
                Err(e) => {
                    eprintln!("{}: {e}", fuzz::PLANT_VAR);
                    std::process::exit(2);
                }
            }
        })
        .as_ref()
}

/// Runs the target called `name` on `data`: its own checks, or, when a fault is planted and
/// the target drives the reference, [`fuzz::planted`].
pub fn run(name: &str, data: &[u8]) -> Corpus {
    static TARGETS: OnceLock<Vec<&'static Target>> = OnceLock::new();
    let target = TARGETS
        .get_or_init(|| fuzz::TARGETS.iter().collect())
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("fuzz target {name} is not in ge_conformance::fuzz::TARGETS"));
    corpus(match plant() {
        Some(engine) if fuzz::plantable(target) => fuzz::planted(target, engine, data),
        _ => (target.run)(data),
    })
}

/// mimalloc, where no sanitizer intercepts the allocator (`build.rs` sets `fast_alloc`).
#[cfg(fast_alloc)]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
