//! Glue shared by the fuzz targets: runs a target (or, for a drill, a fault planted in it) and
//! maps the harness's verdict onto libFuzzer's corpus decision.

use ge_conformance::fuzz::Verdict;
use libfuzzer_sys::Corpus;

/// Keep interesting input in the corpus, reject the rest.
pub fn corpus(verdict: Verdict) -> Corpus {
    match verdict {
        Verdict::Keep => Corpus::Keep,
        Verdict::Reject => Corpus::Reject,
    }
}

/// Reads `GE_CONFORMANCE_FUZZ_PLANT` ([`fuzz::PLANT_VAR`]) before the fuzzer starts (each target's
/// `init`). A name that is no mutation, or any name in a build without the feature `plant`,
/// ends the run with status 2 and says why: a drill that plants nothing must not pass for a
/// campaign that found nothing. Here, not in the first input, so that libFuzzer writes no
/// artefact for it.
pub fn init() {
    plant::read();
}

/// Runs the target called `name`, whose logic is `target`, on `data`: its own checks, or, in a
/// build with the feature `plant` when a fault is planted and the target drives the reference,
/// [`fuzz::planted`]. The targets call it through [`reference_target!`], which names both
/// from one identifier.
pub fn run(name: &str, target: fn(&[u8]) -> Verdict, data: &[u8]) -> Corpus {
    corpus(plant::planted(name, data).unwrap_or_else(|| target(data)))
}

/// The fuzz target `$name` of a target that drives the reference: `ge_conformance::fuzz::$name`
/// run by [`run`] under the name `$name`, with [`init`] before the fuzzer starts.
#[macro_export]
macro_rules! reference_target {
    ($name:ident) => {
        libfuzzer_sys::fuzz_target!(
            init: $crate::init(),
            |data: &[u8]| -> libfuzzer_sys::Corpus {
                $crate::run(stringify!($name), ge_conformance::fuzz::$name, data)
            }
        );
    };
}

/// The drill's fault. Only a build with the feature `plant` carries it: planting asks the
/// forbidden engine and judges as `differential` does, for every capability, and that code
/// linked into a campaign's binary is counters libFuzzer scans after each input (`session`
/// ran 5% slower with it, `docs/fuzzing.md`).
#[cfg(feature = "plant")]
mod plant {
    use std::sync::OnceLock;

    use ge_conformance::forbidden::{Engine, Mutation};
    use ge_conformance::fuzz::{self, Verdict};

    /// The fault the variable names, read once.
    pub(crate) fn read() -> Option<&'static Engine> {
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

    /// The verdict of target `name` with the fault planted, when one is and the target drives
    /// the reference.
    pub(crate) fn planted(name: &str, data: &[u8]) -> Option<Verdict> {
        let engine = read()?;
        let target = fuzz::target(name).unwrap_or_else(|| {
            panic!("fuzz target {name} is not in ge_conformance::fuzz::TARGETS")
        });
        fuzz::plantable(target).then(|| fuzz::planted(target, engine, data))
    }
}

/// A build without the feature `plant`: nothing to plant.
#[cfg(not(feature = "plant"))]
mod plant {
    use ge_conformance::fuzz::{self, Verdict};

    /// Refuses the variable.
    pub(crate) fn read() {
        if std::env::var_os(fuzz::PLANT_VAR).is_some() {
            eprintln!(
                "{}: this build plants nothing; build it with `--features plant`",
                fuzz::PLANT_VAR
            );
            std::process::exit(2);
        }
    }

    pub(crate) fn planted(_name: &str, _data: &[u8]) -> Option<Verdict> {
        None
    }
}

/// mimalloc, where no sanitizer intercepts the allocator (`build.rs` sets `fast_alloc`).
#[cfg(fast_alloc)]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
