//! The allowed-answer generator: the reference's answers changed at the points where the source
//! text is silent, at any combination of the alternatives `spec/tables/alternatives.toml` lists.
//! An [`Engine`] is one such combination, made the same way for every request it answers (a
//! session or a load is one answer, so it is consistent throughout); at level `documented` no
//! answer it gives may fail, whatever it combined. The rows are the data; [`Rewrite`] is the
//! code that makes each one, and the two are held equal by a test.

mod diagnostics;
mod files;
mod plans;
mod rewrite;

pub use files::pack_combined;

use std::collections::BTreeSet;
use std::path::Path;
use std::str::FromStr;

use ge_reference::Reference;
use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::options::{OptionsObservation, OptionsScenario};
use ge_spec::vocab::session::{SessionObservation, SessionScenario};
use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};
use ge_spec::{Answer, Backend, Capability, Diagnostic, Level, Profile, ShapeKind, Spec};

/// The code of one row of `alternatives.toml`: how an engine that made that choice answers.
/// Each variant's name is its row's `id` in `UpperCamelCase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rewrite {
    /// Diagnostics cite no clause.
    NoClauseCited,
    /// A diagnostic about an option cites that option's first clause.
    OptionClauseCited,
    /// One error per rejected key.
    OneErrorPerKey,
    /// No warning where only a suite choice calls for one.
    WarningsDropped,
    /// A warning only a suite choice calls for is an error for that setting instead.
    WarningsAsErrors,
    /// A request carrying a setting where its option does not take effect is refused whole.
    RefusedOverIneffectiveSetting,
    /// Numbers read as they spell, white space, signs and leading zeros included.
    LenientSpellings,
    /// An invalid value is ignored with a warning instead of rejecting its option.
    IgnoreInvalid,
    /// An index list with an index out of range is refused whole.
    RefuseListOutOfRange,
    /// No batch copy on a dynamic-shape graph.
    NoBatchOnDynamic,
    /// One intermediate tensor moved to fresh memory above the plan.
    WastefulPlanner,
    /// An intermediate tensor uses an unlisted output's bytes before the output is written.
    BorrowsUnlistedOutput,
    /// Aliases planned but not reported.
    AliasesUnreported,
    /// Every offset raised by the same amount.
    RaisedPlan,
    /// Shared pools kept for the session.
    PoolsKept,
    /// Pools follow GE_USE_STATIC_MEMORY too.
    FollowsEnvironment,
    /// Kept zero-copy areas given back when the session closes.
    IoKeptToTheEnd,
    /// A kept zero-copy area taken at the graph's first execution, not at its load.
    IoAreaAtFirstExecution,
    /// Scripts over 4096 events or executions refused as too large.
    LowerScriptCap,
    /// Mode-1 files named after another digest.
    OtherHash,
    /// The combined file without padding.
    PackedCombinedFile,
    /// No sharing of identical weights.
    OwnFilePerConstant,
    /// An empty combined file when mode 2 converts nothing.
    EmptyCombinedFile,
    /// A missing ge.externalWeightDir fails the load.
    MissingUserDirRefused,
    /// A missing ASCEND_WORK_PATH fails the load.
    MissingWorkPathRefused,
    /// An ASCEND_WORK_PATH that cannot be created is passed over.
    UncreatableWorkPathSkipped,
    /// A failed load's directory is left by unload.
    FailedLoadLeavesItsDir,
}

impl Rewrite {
    /// Every rewrite, in table order.
    pub const ALL: [Rewrite; 27] = [
        Rewrite::NoClauseCited,
        Rewrite::OptionClauseCited,
        Rewrite::OneErrorPerKey,
        Rewrite::WarningsDropped,
        Rewrite::WarningsAsErrors,
        Rewrite::RefusedOverIneffectiveSetting,
        Rewrite::LenientSpellings,
        Rewrite::IgnoreInvalid,
        Rewrite::RefuseListOutOfRange,
        Rewrite::NoBatchOnDynamic,
        Rewrite::WastefulPlanner,
        Rewrite::BorrowsUnlistedOutput,
        Rewrite::AliasesUnreported,
        Rewrite::RaisedPlan,
        Rewrite::PoolsKept,
        Rewrite::FollowsEnvironment,
        Rewrite::IoKeptToTheEnd,
        Rewrite::IoAreaAtFirstExecution,
        Rewrite::LowerScriptCap,
        Rewrite::OtherHash,
        Rewrite::PackedCombinedFile,
        Rewrite::OwnFilePerConstant,
        Rewrite::EmptyCombinedFile,
        Rewrite::MissingUserDirRefused,
        Rewrite::MissingWorkPathRefused,
        Rewrite::UncreatableWorkPathSkipped,
        Rewrite::FailedLoadLeavesItsDir,
    ];

    /// The row's `id`: the variant's name in lowercase words joined by `-`.
    pub fn id(self) -> String {
        words(&format!("{self:?}"))
    }

    /// The row of `alternatives.toml` this rewrite makes.
    ///
    /// # Panics
    /// When the embedded table has no such row: a test holds the table and [`Rewrite::ALL`]
    /// equal, so this is a build from tables that disagree with the code.
    pub fn row(self) -> &'static ge_spec::Alternative {
        let id = self.id();
        Spec::embedded()
            .alternatives()
            .iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("alternatives.toml has no row {id}"))
    }

    /// The capabilities whose answers it changes (its row's).
    pub fn capabilities(self) -> &'static [Capability] {
        &self.row().capabilities
    }
}

/// `UpperCamelCase` as lowercase words joined by `-`: how a row's id (and a forbidden
/// mutation's name) is spelled after its variant.
pub(crate) fn words(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// A name that is no row of `alternatives.toml`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an alternative of alternatives.toml; they are {ids}", ids = Rewrite::ALL.iter().map(|r| r.id()).collect::<Vec<_>>().join(", "))]
pub struct UnknownAlternative(pub String);

impl FromStr for Rewrite {
    type Err = UnknownAlternative;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rewrite::ALL
            .into_iter()
            .find(|r| r.id() == s)
            .ok_or_else(|| UnknownAlternative(s.to_owned()))
    }
}

/// The reference, with the choices of a set of [`Rewrite`]s made otherwise: an engine that does
/// what the text says and chose its own way wherever the text is silent.
#[derive(Debug, Clone)]
pub struct Engine {
    picks: BTreeSet<Rewrite>,
    /// Its name, spelled when first asked: the `allowed` fuzz target makes an engine per input
    /// and names it only in a finding.
    name: std::sync::OnceLock<String>,
}

impl Engine {
    /// The engine that makes `picks` (every other choice the reference's).
    pub fn new(picks: impl IntoIterator<Item = Rewrite>) -> Self {
        Engine {
            picks: picks.into_iter().collect(),
            name: std::sync::OnceLock::new(),
        }
    }

    /// The engine whose picks are the bits of `bits`, one per rewrite in [`Rewrite::ALL`]'s
    /// order (a fuzz input or a seed spells a combination this way).
    pub fn from_bits(bits: u64) -> Self {
        Engine::new(
            Rewrite::ALL
                .into_iter()
                .enumerate()
                .filter(|(i, _)| bits >> i & 1 == 1)
                .map(|(_, r)| r),
        )
    }

    /// Its choices.
    pub fn picks(&self) -> &BTreeSet<Rewrite> {
        &self.picks
    }

    fn has(&self, r: Rewrite) -> bool {
        self.picks.contains(&r)
    }

    fn reference() -> Reference {
        Reference::new(Profile::Documented)
    }

    /// What every answer gets last: the diagnostics as this engine gives them.
    fn diagnose(&self, errors: &mut Vec<Diagnostic>, warnings: &mut Vec<Diagnostic>) {
        diagnostics::finish(&self.picks, errors, warnings);
    }

    /// The refusal of a request that carries a setting where its option does not take effect,
    /// when this engine refuses such requests: one error per such setting.
    fn refusal(&self, readings: &[rewrite::Read]) -> Option<Vec<Diagnostic>> {
        if !self.has(Rewrite::RefusedOverIneffectiveSetting) {
            return None;
        }
        let errors: Vec<Diagnostic> = readings.iter().flat_map(rewrite::ineffective).collect();
        (!errors.is_empty()).then(|| self.refused(errors))
    }

    /// The errors of a request refused whole, as this engine gives its diagnostics.
    fn refused(&self, mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
        self.diagnose(&mut errors, &mut Vec::new());
        errors
    }
}

/// Engines are equal when they make the same picks, named yet or not.
impl PartialEq for Engine {
    fn eq(&self, other: &Self) -> bool {
        self.picks == other.picks
    }
}

impl Eq for Engine {}

impl Backend for Engine {
    fn name(&self) -> &str {
        self.name.get_or_init(|| {
            let ids: Vec<String> = self.picks.iter().map(|r| r.id()).collect();
            if ids.is_empty() {
                "allowed".to_owned()
            } else {
                format!("allowed[{}]", ids.join(","))
            }
        })
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        Capability::ALL.into_iter().collect()
    }

    fn options(&self, s: &OptionsScenario) -> Answer<OptionsObservation> {
        let (s, added) = rewrite::scenario(&self.picks, s);
        let mut o = Engine::reference().options(&s)?;
        o.warnings.extend(added);
        if self.has(Rewrite::OneErrorPerKey) {
            let mut seen = BTreeSet::new();
            o.errors.retain(|d| seen.insert(d.key.clone()));
        }
        if self.has(Rewrite::RefuseListOutOfRange) {
            diagnostics::refuse_out_of_range(&mut o);
        }
        self.diagnose(&mut o.errors, &mut o.warnings);
        Ok(o)
    }

    fn transfer(&self, s: &TransferScenario) -> Answer<TransferObservation> {
        if let Some(errors) = self.refusal(&[rewrite::Read::of_transfer(s)]) {
            return Ok(TransferObservation {
                errors,
                ..TransferObservation::default()
            });
        }
        let (s, added) = rewrite::scenario(&self.picks, s);
        let mut o = Engine::reference().transfer(&s)?;
        o.warnings.extend(added);
        if self.has(Rewrite::NoBatchOnDynamic) && s.shape == ShapeKind::Dynamic {
            o.direct.append(&mut o.batched);
            o.direct.sort_unstable();
        }
        self.diagnose(&mut o.errors, &mut o.warnings);
        Ok(o)
    }

    fn memory(&self, s: &MemoryScenario) -> Answer<MemoryObservation> {
        if let Some(errors) = self.refusal(&[rewrite::Read::plain(&s.options)]) {
            return Ok(MemoryObservation {
                errors,
                ..MemoryObservation::default()
            });
        }
        let (s, added) = rewrite::scenario(&self.picks, s);
        let mut o = Engine::reference().memory(&s)?;
        o.warnings.extend(added);
        plans::memory(&self.picks, &s, &mut o);
        self.diagnose(&mut o.errors, &mut o.warnings);
        Ok(o)
    }

    fn session(&self, s: &SessionScenario) -> Answer<SessionObservation> {
        let large = s.events.len() > SCRIPT_CAP || s.executions() > SCRIPT_CAP as u64;
        let refused = self.refusal(&rewrite::Read::of_session(s)).or_else(|| {
            (self.has(Rewrite::LowerScriptCap) && large).then(|| {
                self.refused(vec![Diagnostic::new(
                    "",
                    "the script is too large for this engine",
                )
                .subject(ge_spec::Subject::part(ge_spec::Part::Script))])
            })
        });
        if let Some(errors) = refused {
            return Ok(SessionObservation {
                errors,
                ..SessionObservation::default()
            });
        }
        let (mut s, added) = rewrite::scenario(&self.picks, s);
        if self.has(Rewrite::FollowsEnvironment) {
            rewrite::follow_environment(&mut s);
        }
        let mut o = Engine::reference().session(&s)?;
        o.warnings.extend(added);
        plans::session(&self.picks, &s, &mut o);
        self.diagnose(&mut o.errors, &mut o.warnings);
        Ok(o)
    }

    fn weights(&self, s: &WeightsScenario, sandbox: &Path) -> Answer<WeightsObservation> {
        if let Some(errors) = self.refusal(&[rewrite::Read::plain(&s.options)]) {
            return Ok(WeightsObservation {
                errors,
                ..WeightsObservation::default()
            });
        }
        let (s, added) = rewrite::scenario(&self.picks, s);
        let mut o = files::load(&self.picks, &s, sandbox)?;
        o.warnings.extend(added);
        self.diagnose(&mut o.errors, &mut o.warnings);
        Ok(o)
    }
}

/// The most events, or executions in all, of a script [`Rewrite::LowerScriptCap`] runs.
const SCRIPT_CAP: usize = 4096;

/// The levels, for the rewrites that walk every map.
const LEVELS: [Level; 3] = Level::ALL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_rewrites_are_the_same_list() {
        let table: Vec<&str> = Spec::embedded()
            .alternatives()
            .iter()
            .map(|a| a.id.as_str())
            .collect();
        let code: Vec<String> = Rewrite::ALL.iter().map(|r| r.id()).collect();
        assert_eq!(
            table, code,
            "alternatives.toml and Rewrite::ALL, in the same order"
        );
        for r in Rewrite::ALL {
            assert_eq!(r.id().parse::<Rewrite>(), Ok(r));
        }
        assert!("no-such-choice".parse::<Rewrite>().is_err());
    }

    #[test]
    fn bits_spell_a_combination() {
        assert!(Engine::from_bits(0).picks().is_empty());
        let all = Engine::from_bits(u64::MAX);
        assert_eq!(all.picks().len(), Rewrite::ALL.len());
        assert_eq!(
            Engine::from_bits(0b101)
                .picks()
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            vec![Rewrite::NoClauseCited, Rewrite::OneErrorPerKey]
        );
    }
}
