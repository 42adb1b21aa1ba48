//! The forbidden-answer generator: the reference's answers changed in ways the text does not
//! allow, one [`Mutation`] at a time, and the reach of the certification measured with them.
//! A mutation is generic (move an input to another transfer list, place a live tensor over
//! another, drop a trace entry, flip a byte of a weight file, ...), not written for a clause:
//! which clause it breaks is what the judge says. An answer that the judge fails under exactly
//! one binding clause is a forbidden answer for that clause, and [`reach`] counts, for every
//! clause, the scenarios of the certification on which some mutation makes one. The fixed
//! scenarios (case tables, boundary catalogue) are in every certification whatever the seed, so
//! a clause reached there is reached at every seed.

mod mutate;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::options::{OptionsObservation, OptionsScenario};
use ge_spec::vocab::session::{SessionObservation, SessionScenario};
use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};
use ge_spec::{Answer, Backend, Capability, Profile, Scenario};

use crate::judging::Judging;

/// One way to change a conforming answer that the text does not allow. `k` picks which item
/// of the answer it changes (the `k`-th of those it can change, counted from 0); a mutation
/// that finds no such item leaves the answer as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutation {
    /// Options: a rejected key is in force after all, at the value and level it was set at.
    AcceptRejected(usize),
    /// Options: a key in force from a level is rejected instead, with an error.
    RejectAccepted(usize),
    /// Options: a key in force from a level has its default instead.
    DefaultInstead(usize),
    /// Options: a key at its default is in force at another value of its table, from graph level.
    SetWhereUnset(usize),
    /// Options: a number in force is one more than it is; a list in force loses its last item.
    ValueOff(usize),
    /// Transfer: a fused input is moved directly.
    FusedToDirect(usize),
    /// Transfer: an input moved directly is fused.
    DirectToFused(usize),
    /// Transfer: a batch-copied input is moved directly.
    BatchedToDirect(usize),
    /// Transfer: an input moved directly is batch-copied.
    DirectToBatched(usize),
    /// Transfer: two inputs moved directly, the `k`-th and the next, are batch-copied.
    DirectPairToBatched(usize),
    /// Any capability but options: the request is refused with one error, nothing planned,
    /// traced or written.
    Refused,
    /// Memory: the second of two tensors in use at the same time is placed at the first's
    /// offset.
    Overlap(usize),
    /// Memory: every tensor gets memory of its own, one after the other.
    NoReuse,
    /// Memory: two tensors never in use at the same time share an offset.
    ShareDisjoint(usize),
    /// Memory: the cleanup groups are one, or one per memset operator, the other way round.
    CleanupRegrouped,
    /// Memory: the run-time errors are dropped and the plan reported as if the run went well.
    RunErrorsDropped,
    /// Session: a trace entry is left out.
    EntryDropped(usize),
    /// Session: an allocation (and the free of that block) is half its size, rounded up to 32.
    AllocHalved(usize),
    /// Session: a refresh result says the opposite.
    RefreshFlipped(usize),
    /// Session: an execution allocates and frees a zero-copy area of 32 bytes more.
    ExtraIoArea(usize),
    /// Weights: one byte of a written file is flipped on disk, the answer reporting the new
    /// hash (the listing stays true, the bytes read back do not).
    ByteFlipped(usize),
    /// Weights: a FileConstant reads one byte further on.
    OffsetShifted(usize),
    /// Weights: unload removes nothing (the load is not unloaded).
    NotUnloaded,
    /// Weights: a converted constant is reported as kept as it was, reading no file.
    KeptConst(usize),
    /// Weights: a load that wrote nothing leaves an empty file `weight_stray` in the sandbox,
    /// listed.
    StrayFile,
    /// Weights: the directory the load wrote in is another, beside it (`<dir>_moved`), on disk
    /// and in the answer.
    OtherDir,
}

impl Mutation {
    /// Every mutation of `capability`, with `k` from 0 to 2.
    pub fn of(capability: Capability) -> Vec<Mutation> {
        let each = |f: fn(usize) -> Mutation| (0..3).map(f).collect::<Vec<_>>();
        let mut out = Vec::new();
        match capability {
            Capability::Options => {
                for f in [
                    Mutation::AcceptRejected as fn(usize) -> Mutation,
                    Mutation::RejectAccepted,
                    Mutation::DefaultInstead,
                    Mutation::SetWhereUnset,
                    Mutation::ValueOff,
                ] {
                    out.extend(each(f));
                }
            }
            Capability::Transfer => {
                for f in [
                    Mutation::FusedToDirect as fn(usize) -> Mutation,
                    Mutation::DirectToFused,
                    Mutation::BatchedToDirect,
                    Mutation::DirectToBatched,
                    Mutation::DirectPairToBatched,
                ] {
                    out.extend(each(f));
                }
                out.push(Mutation::Refused);
            }
            Capability::Memory => {
                out.extend(each(Mutation::Overlap));
                out.extend(each(Mutation::ShareDisjoint));
                out.extend([
                    Mutation::NoReuse,
                    Mutation::CleanupRegrouped,
                    Mutation::RunErrorsDropped,
                    Mutation::Refused,
                ]);
            }
            Capability::Session => {
                for f in [
                    Mutation::EntryDropped as fn(usize) -> Mutation,
                    Mutation::AllocHalved,
                    Mutation::RefreshFlipped,
                    Mutation::ExtraIoArea,
                ] {
                    out.extend(each(f));
                }
                out.push(Mutation::Refused);
            }
            Capability::Weights => {
                out.extend(each(Mutation::ByteFlipped));
                out.extend(each(Mutation::OffsetShifted));
                out.extend(each(Mutation::KeptConst));
                out.extend([
                    Mutation::NotUnloaded,
                    Mutation::StrayFile,
                    Mutation::OtherDir,
                ]);
            }
        }
        out
    }
}

/// The reference with one [`Mutation`] made in every answer it gives (the twins the judge asks
/// for included): an engine with one fault the text forbids.
#[derive(Debug, Clone, Copy)]
pub struct Engine(pub Mutation);

fn reference() -> Reference {
    Reference::new(Profile::Documented)
}

impl Backend for Engine {
    fn name(&self) -> &str {
        "forbidden"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Capability::ALL.into_iter().collect()
    }

    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = reference().options(s)?;
        mutate::options(self.0, s, &mut o);
        Ok(o)
    }

    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        let mut o = reference().transfer(s)?;
        mutate::transfer(self.0, s, &mut o);
        Ok(o)
    }

    fn memory(&self, s: &MemoryScenario) -> Answer<MemoryObservation> {
        let mut o = reference().memory(s)?;
        mutate::memory(self.0, s, &mut o);
        Ok(o)
    }

    fn session(&self, s: &SessionScenario) -> Answer<SessionObservation> {
        let mut o = reference().session(s)?;
        mutate::session(self.0, s, &mut o);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        if self.0 == Mutation::NotUnloaded && s.unload {
            let kept = WeightsScenario {
                unload: false,
                ..s.clone()
            };
            return reference().weights(&kept, sandbox);
        }
        let mut o = reference().weights(s, sandbox)?;
        mutate::weights(self.0, s, &mut o, sandbox);
        Ok(o)
    }
}

/// What the reach of one clause is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reached {
    /// How many (scenario, mutation) pairs make an answer the judge fails under this clause
    /// alone.
    pub answers: usize,
    /// The first such pair: the scenario's name and the mutation.
    pub example: Option<(String, Mutation)>,
    /// The other clauses it was failed together with, by answers that failed several at once
    /// (what keeps a clause from being reached alone).
    pub together: BTreeSet<String>,
}

/// For every clause, the forbidden answers the mutations make on `scenarios` that the judge
/// fails under that clause alone, at level `documented` ([`crate::certify::compare`], as a
/// property judges). A mutation that changes nothing, or an answer failed under several
/// clauses, counts for none.
pub fn reach(scenarios: &[(String, Scenario)]) -> BTreeMap<String, Reached> {
    let judging = Judging::DEFAULT;
    let mut out: BTreeMap<String, Reached> = BTreeMap::new();
    for (name, scenario) in scenarios {
        for m in Mutation::of(scenario.capability()) {
            let broken: BTreeSet<String> = crate::certify::compare(&judging, &Engine(m), scenario)
                .into_iter()
                .filter(|p| !p.deviation)
                .flat_map(|p| p.clauses)
                .collect();
            if broken.len() > 1 {
                for c in &broken {
                    let others = broken.iter().filter(|o| *o != c).cloned();
                    out.entry(c.clone()).or_default().together.extend(others);
                }
                continue;
            }
            let Some(clause) = broken.into_iter().next() else {
                continue;
            };
            let row = out.entry(clause).or_default();
            row.answers += 1;
            row.example.get_or_insert_with(|| (name.clone(), m));
        }
    }
    out
}

/// The fixed scenarios of every certification under the documented profile: each case of the
/// tables (the built cases of the caps aside: they choose nothing a mutation changes and cost
/// seconds each) and the boundary catalogue, named `<table>/<case>` and
/// `boundary/<capability>-<n>`.
pub fn fixed_scenarios() -> Vec<(String, Scenario)> {
    let spec = ge_spec::Spec::embedded();
    let mut out: Vec<(String, Scenario)> = spec
        .cases_in(Profile::Documented)
        .filter(|c| !ge_spec::built::TABLES.contains(&c.table.as_str()))
        .map(|c| (c.full_name(), c.case.scenario.clone()))
        .collect();
    for c in Capability::ALL {
        for (i, s) in crate::gen::boundary_scenarios(c).into_iter().enumerate() {
            out.push((format!("boundary/{c}-{i}"), s));
        }
    }
    out
}
