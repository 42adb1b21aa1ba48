//! The typed vocabulary: one scenario and one observation type per capability, and the JSON
//! envelope (`{"capability": "...", ...}`) that carries them through tables, CLI and protocol.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::option::{Level, OptionKey};

pub mod memory;
pub mod options;
pub mod session;
pub mod transfer;
pub mod weights;

pub use memory::{MemoryObservation, MemoryScenario};
pub use options::{Effective, GraphFacts, OptionsObservation, OptionsScenario};
pub use session::{SessionObservation, SessionScenario};
pub use transfer::{TransferObservation, TransferScenario};
pub use weights::{WeightsObservation, WeightsScenario};

/// The option maps a scenario passes to GE, one per level. Keys and values are raw strings:
/// parsing them is the backend's job, and part of what is judged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct OptionMaps {
    /// Options given at initialisation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = drawn_map))]
    pub global: BTreeMap<String, String>,
    /// Options given at session creation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = drawn_map))]
    pub session: BTreeMap<String, String>,
    /// Options given when the graph is added.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = drawn_map))]
    pub graph: BTreeMap<String, String>,
}

/// The most entries an option map drawn by [`arbitrary`] holds: drawing stops with an error
/// at the entry past it.
#[cfg(feature = "arbitrary")]
pub const DRAWN_MAX_ENTRIES: usize = 8;

/// One option map of [`OptionMaps`], drawn as `BTreeMap`'s own `Arbitrary` draws it (an entry
/// while a drawn flag says so, a later key's value over an earlier one's) up to
/// [`DRAWN_MAX_ENTRIES`] keys; a map that would hold more is an error, found at the first key
/// past the cap instead of after the rest of the input is drawn and sorted.
#[cfg(feature = "arbitrary")]
fn drawn_map(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for entry in u.arbitrary_iter::<(String, String)>()? {
        let (key, value) = entry?;
        map.insert(key, value);
        if map.len() > DRAWN_MAX_ENTRIES {
            return Err(arbitrary::Error::IncorrectFormat);
        }
    }
    Ok(map)
}

/// A load's own option map ([`session::SessionEvent::Load`]), drawn as `Option`'s own
/// `Arbitrary` draws one (a flag, then the map) with the map drawn as [`OptionMaps`]' are: the
/// same cap as every other option map, found at the first key past it.
#[cfg(feature = "arbitrary")]
pub fn drawn_optional_map(
    u: &mut arbitrary::Unstructured<'_>,
) -> arbitrary::Result<Option<BTreeMap<String, String>>> {
    Ok(if u.arbitrary::<bool>()? {
        Some(drawn_map(u)?)
    } else {
        None
    })
}

impl OptionMaps {
    /// The map of one level.
    pub fn at(&self, level: Level) -> &BTreeMap<String, String> {
        match level {
            Level::Global => &self.global,
            Level::Session => &self.session,
            Level::Graph => &self.graph,
        }
    }

    /// The map of one level, mutably.
    pub fn at_mut(&mut self, level: Level) -> &mut BTreeMap<String, String> {
        match level {
            Level::Global => &mut self.global,
            Level::Session => &mut self.session,
            Level::Graph => &mut self.graph,
        }
    }

    /// True when no level sets anything.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.session.is_empty() && self.graph.is_empty()
    }

    /// What each of the twelve options is set to at each level, and the keys outside the
    /// twelve, read in one pass over the maps: looking a key up is then an index instead of
    /// string comparisons (which matter under fuzzing instrumentation, where each is traced).
    pub fn settings(&self) -> Settings<'_> {
        let mut set = [[None; 3]; OptionKey::ALL.len()];
        let mut others = Vec::new();
        for level in Level::ALL {
            for (key, value) in self.at(level) {
                match key.parse::<OptionKey>() {
                    Ok(key) => set[key as usize][level as usize] = Some(value.as_str()),
                    Err(_) => others.push(key.as_str()),
                }
            }
        }
        Settings { set, others }
    }
}

/// The value each option is set to at each level of some [`OptionMaps`], and the keys outside
/// the twelve ([`OptionMaps::settings`]).
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    set: [[Option<&'a str>; 3]; OptionKey::ALL.len()],
    others: Vec<&'a str>,
}

impl<'a> Settings<'a> {
    /// The raw value `key` is set to at `level`, if any.
    pub fn get(&self, key: OptionKey, level: Level) -> Option<&'a str> {
        self.set[key as usize][level as usize]
    }

    /// The keys that are none of the twelve, level by level from the widest, each level's in
    /// key order (a key set at two levels is here twice).
    pub fn others(&self) -> &[&'a str] {
        &self.others
    }
}

/// The capabilities a backend may offer; each has one method on [`crate::Backend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// Option parsing, validation, level rules and precedence.
    Options,
    /// Host-to-device transfer: input fusion and batch copy.
    Transfer,
    /// Device memory plan of one graph.
    Memory,
    /// Several graphs over time in one session: pools, zero-copy areas, refreshes.
    Session,
    /// External weight files on a real filesystem.
    Weights,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 5] = [
        Capability::Options,
        Capability::Transfer,
        Capability::Memory,
        Capability::Session,
        Capability::Weights,
    ];

    /// The capability's name in JSON and tables.
    pub const fn as_str(self) -> &'static str {
        match self {
            Capability::Options => "options",
            Capability::Transfer => "transfer",
            Capability::Memory => "memory",
            Capability::Session => "session",
            Capability::Weights => "weights",
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Capability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Capability::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("unknown capability `{s}` (expected one of options, transfer, memory, session, weights)"))
    }
}

/// One question for a backend, tagged by capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "capability", rename_all = "lowercase")]
pub enum Scenario {
    /// See [`OptionsScenario`].
    Options(OptionsScenario),
    /// See [`TransferScenario`].
    Transfer(TransferScenario),
    /// See [`MemoryScenario`].
    Memory(MemoryScenario),
    /// See [`SessionScenario`].
    Session(SessionScenario),
    /// See [`WeightsScenario`].
    Weights(WeightsScenario),
}

impl Scenario {
    /// The capability this scenario exercises.
    pub fn capability(&self) -> Capability {
        match self {
            Scenario::Options(_) => Capability::Options,
            Scenario::Transfer(_) => Capability::Transfer,
            Scenario::Memory(_) => Capability::Memory,
            Scenario::Session(_) => Capability::Session,
            Scenario::Weights(_) => Capability::Weights,
        }
    }

    /// The option maps of the scenario.
    pub fn options(&self) -> &OptionMaps {
        match self {
            Scenario::Options(s) => &s.options,
            Scenario::Transfer(s) => &s.options,
            Scenario::Memory(s) => &s.options,
            Scenario::Session(s) => &s.options,
            Scenario::Weights(s) => &s.options,
        }
    }
}

/// One answer of a backend, tagged by capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(tag = "capability", rename_all = "lowercase")]
pub enum Observation {
    /// See [`OptionsObservation`].
    Options(OptionsObservation),
    /// See [`TransferObservation`].
    Transfer(TransferObservation),
    /// See [`MemoryObservation`].
    Memory(MemoryObservation),
    /// See [`SessionObservation`].
    Session(SessionObservation),
    /// See [`WeightsObservation`].
    Weights(WeightsObservation),
}

impl Observation {
    /// The capability this observation answers.
    pub fn capability(&self) -> Capability {
        match self {
            Observation::Options(_) => Capability::Options,
            Observation::Transfer(_) => Capability::Transfer,
            Observation::Memory(_) => Capability::Memory,
            Observation::Session(_) => Capability::Session,
            Observation::Weights(_) => Capability::Weights,
        }
    }

    /// Puts every list whose order carries no meaning into its canonical order, so that two
    /// observations that say the same thing compare equal.
    pub fn canonicalize(&mut self) {
        match self {
            Observation::Options(o) => o.canonicalize(),
            Observation::Transfer(o) => o.canonicalize(),
            Observation::Memory(o) => o.canonicalize(),
            Observation::Session(o) => o.canonicalize(),
            Observation::Weights(o) => o.canonicalize(),
        }
    }
}
