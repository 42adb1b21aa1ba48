//! The forbidden-answer generator: the reference's answers changed in ways the text does not
//! allow, one [`Mutation`] at a time, and the reach of the certification measured with them.
//! A mutation is generic (move an input to another transfer list, place a live tensor over
//! another, drop a trace entry, flip a byte of a weight file, ...), not written for a clause:
//! which clause it breaks is what the judge says. An answer that the judge fails under exactly
//! one binding clause is a forbidden answer for that clause, and [`reach`] counts, for every
//! clause, the scenarios of the certification on which some mutation makes one (for a clause
//! other clauses imply, an answer failed under those, on a case citing it). The fixed
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
    /// Options: the value a warning names is in force after all, as the key's whole value
    /// (the warning dropped): what the answer said does not take effect takes effect.
    WarnedValueInForce(usize),
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
    /// Transfer: a fused input is batch-copied as well (planned twice).
    FusedAlsoBatched(usize),
    /// Options, transfer, session: every graph is answered as if its shapes were static (the
    /// scenario changed before it is answered, so every answer of the engine agrees).
    ShapeIgnored,
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
    /// Session: an allocation (and the free of that block) is twice its size.
    AllocDoubled(usize),
    /// Session: two neighbouring entries of one step change places.
    EntriesSwapped(usize),
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
    /// Every mutation of every capability, each once.
    pub fn all() -> Vec<Mutation> {
        let mut all: Vec<Mutation> = Capability::ALL.into_iter().flat_map(Mutation::of).collect();
        all.sort();
        all.dedup();
        all
    }

    /// Its name: lowercase words joined by `-`, and `-k` for a mutation that picks an item
    /// (`byte-flipped-0`, `refused`).
    pub fn name(self) -> String {
        let debug = format!("{self:?}");
        let (word, k) = match debug.split_once('(') {
            Some((w, rest)) => (w.to_owned(), Some(rest.trim_end_matches(')').to_owned())),
            None => (debug, None),
        };
        let mut name = crate::allowed::words(&word);
        if let Some(k) = k {
            name.push('-');
            name.push_str(&k);
        }
        name
    }

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
                    Mutation::WarnedValueInForce,
                ] {
                    out.extend(each(f));
                }
                out.push(Mutation::ShapeIgnored);
            }
            Capability::Transfer => {
                for f in [
                    Mutation::FusedToDirect as fn(usize) -> Mutation,
                    Mutation::DirectToFused,
                    Mutation::BatchedToDirect,
                    Mutation::DirectToBatched,
                    Mutation::DirectPairToBatched,
                    Mutation::FusedAlsoBatched,
                ] {
                    out.extend(each(f));
                }
                out.extend([Mutation::Refused, Mutation::ShapeIgnored]);
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
                    Mutation::AllocDoubled,
                    Mutation::EntriesSwapped,
                    Mutation::RefreshFlipped,
                    Mutation::ExtraIoArea,
                ] {
                    out.extend(each(f));
                }
                out.extend([Mutation::Refused, Mutation::ShapeIgnored]);
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

/// A name that is no [`Mutation`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a mutation; the mutations are {names}", names = Mutation::all().iter().map(|m| m.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownMutation(pub String);

impl std::str::FromStr for Mutation {
    type Err = UnknownMutation;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mutation::all()
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMutation(s.to_owned()))
    }
}

/// The reference with one [`Mutation`] made in every answer it gives (the twins the judge asks
/// for included): an engine with one fault the text forbids.
#[derive(Debug, Clone)]
pub struct Engine {
    mutation: Mutation,
    name: String,
}

impl Engine {
    /// The reference with `mutation` made.
    pub fn new(mutation: Mutation) -> Self {
        Engine {
            mutation,
            name: format!("forbidden[{}]", mutation.name()),
        }
    }
}

fn reference() -> Reference {
    Reference::new(Profile::Documented)
}

impl Backend for Engine {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Capability::ALL.into_iter().collect()
    }

    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let s = &mutate::options_scenario(self.mutation, s);
        let mut o = reference().options(s)?;
        mutate::options(self.mutation, s, &mut o);
        Ok(o)
    }

    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        let s = &mutate::transfer_scenario(self.mutation, s);
        let mut o = reference().transfer(s)?;
        mutate::transfer(self.mutation, s, &mut o);
        Ok(o)
    }

    fn memory(&self, s: &MemoryScenario) -> Answer<MemoryObservation> {
        let mut o = reference().memory(s)?;
        mutate::memory(self.mutation, s, &mut o);
        Ok(o)
    }

    fn session(&self, s: &SessionScenario) -> Answer<SessionObservation> {
        let s = &mutate::session_scenario(self.mutation, s);
        let mut o = reference().session(s)?;
        mutate::session(self.mutation, s, &mut o);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        if self.mutation == Mutation::NotUnloaded && s.unload {
            let kept = WeightsScenario {
                unload: false,
                ..s.clone()
            };
            return reference().weights(&kept, sandbox);
        }
        let mut o = reference().weights(s, sandbox)?;
        mutate::weights(self.mutation, s, &mut o, sandbox);
        Ok(o)
    }
}

/// What the reach of one clause is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reached {
    /// How many (scenario, mutation) pairs make an answer the judge fails under this clause
    /// alone, or, for a clause other clauses imply (`implied_by`), under those (and it) on a
    /// case citing it.
    pub answers: usize,
    /// The first such pair: the scenario's name and the mutation.
    pub example: Option<(String, Mutation)>,
    /// The other clauses it was failed together with, by answers that failed several at once
    /// (what keeps a clause from being reached alone).
    pub together: BTreeSet<String>,
}

impl Reached {
    fn count(&mut self, name: &str, m: Mutation) {
        self.answers += 1;
        self.example.get_or_insert_with(|| (name.to_owned(), m));
    }
}

/// For every clause, the forbidden answers the mutations make on `scenarios` that the judge
/// fails under that clause alone, at level `documented` ([`crate::certify::compare`], as a
/// property judges). A clause that others imply (`implied_by`: a worked example, a restriction
/// another option's rule states) is reached by an answer failed, on a case citing it, under
/// nothing but those clauses and itself. A mutation that changes nothing, or an answer failed
/// under several clauses otherwise, counts for none.
pub fn reach(scenarios: &[(String, Scenario)]) -> BTreeMap<String, Reached> {
    let judging = Judging::DEFAULT;
    let spec = ge_spec::Spec::embedded();
    let cites: BTreeMap<String, &[String]> = spec
        .cases_in(Profile::Documented)
        .map(|c| (c.full_name(), c.case.clauses.as_slice()))
        .collect();
    let mut out: BTreeMap<String, Reached> = BTreeMap::new();
    for (name, scenario) in scenarios {
        let implied: Vec<&ge_spec::Clause> = cites
            .get(name)
            .into_iter()
            .flat_map(|ids| ids.iter())
            .filter_map(|id| spec.clause(id))
            .filter(|c| !c.implied_by.is_empty())
            .collect();
        for m in Mutation::of(scenario.capability()) {
            let broken: BTreeSet<String> =
                crate::certify::compare(&judging, &Engine::new(m), scenario)
                    .into_iter()
                    .filter(|p| !p.deviation)
                    .flat_map(|p| p.clauses)
                    .collect();
            for c in &implied {
                let by = |b: &String| *b == c.id || c.implied_by.contains(b);
                if !broken.is_empty() && broken.iter().all(by) {
                    out.entry(c.id.clone()).or_default().count(name, m);
                }
            }
            if broken.len() > 1 {
                for c in &broken {
                    let others = broken.iter().filter(|o| *o != c).cloned();
                    out.entry(c.clone()).or_default().together.extend(others);
                }
                continue;
            }
            if let Some(clause) = broken.into_iter().next() {
                let row = out.entry(clause.clone()).or_default();
                if !implied.iter().any(|c| c.id == clause) {
                    row.count(name, m);
                }
            }
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

/// The documented clauses that can be broken (not MAY) and that `reach` does not reach.
pub fn unreached(reach: &BTreeMap<String, Reached>) -> Vec<String> {
    ge_spec::Spec::embedded()
        .clauses()
        .filter(|c| c.origin == ge_spec::Origin::Documented && !c.permits_only())
        .filter(|c| reach.get(&c.id).is_none_or(|r| r.answers == 0))
        .map(|c| c.id.clone())
        .collect()
}

/// The reach table (`docs/reach.md`, `ge-conformance spec --reach`): for every documented
/// clause, the forbidden answers that reach it and the first of them, or why none does.
pub fn table(reach: &BTreeMap<String, Reached>) -> String {
    use std::fmt::Write as _;
    let spec = ge_spec::Spec::embedded();
    let mut out = String::from(
        "# Reach of the certification\n\n\
         Generated by `UPDATE_REACH=1 cargo test -p ge-conformance --test it reach::`; the test\n\
         fails when this file is stale.\n\n\
         For every documented clause: how many forbidden answers (the reference's answer on a\n\
         fixed scenario of the certification, changed by one generic mutation of\n\
         `harness/src/forbidden/`) the judge fails at level `documented` under that clause and\n\
         no other, and the first of them. A clause that others imply (`implied_by`: a worked\n\
         example, a restriction another option's rule states) cannot be broken alone: it is\n\
         reached by answers failed under those, on a case that cites it. The fixed scenarios are\n\
         the case tables and the boundary catalogue: every certification judges them whatever\n\
         its seed, so a clause reached here is reached at every seed. A clause only permitting\n\
         (MAY) cannot be broken.\n\n\
         | clause | strength | forbidden answers | first: scenario, mutation |\n|---|---|---|---|\n",
    );
    for c in spec
        .clauses()
        .filter(|c| c.origin == ge_spec::Origin::Documented)
    {
        let strength = c.strength.map(|s| s.to_string()).unwrap_or_default();
        match reach.get(&c.id).filter(|r| r.answers > 0) {
            Some(r) => {
                let (name, m) = r
                    .example
                    .as_ref()
                    .map(|(n, m)| (n.clone(), format!("{m:?}")))
                    .unwrap_or_default();
                let by = if c.implied_by.is_empty() {
                    String::new()
                } else {
                    format!(", failed under {}, which imply it", c.implied_by.join(", "))
                };
                let _ = writeln!(
                    out,
                    "| {} | {strength} | {} | `{name}`, {m}{by} |",
                    c.id, r.answers
                );
            }
            None => {
                let why = if c.permits_only() {
                    "only permits (MAY): no answer breaks it"
                } else {
                    "NOT REACHED"
                };
                let together = reach
                    .get(&c.id)
                    .map(|r| r.together.iter().cloned().collect::<Vec<_>>().join(", "))
                    .filter(|t| !t.is_empty())
                    .map_or(String::new(), |t| {
                        format!(" (broken only together with {t})")
                    });
                let _ = writeln!(out, "| {} | {strength} | 0 | {why}{together} |", c.id);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for m in Mutation::all() {
            assert_eq!(m.name().parse::<Mutation>(), Ok(m), "{m:?}");
        }
        assert_eq!(Mutation::ByteFlipped(0).name(), "byte-flipped-0");
        assert_eq!(Mutation::Refused.name(), "refused");
        assert!("no-such".parse::<Mutation>().is_err());
    }
}
