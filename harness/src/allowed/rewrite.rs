//! How an allowed engine reads a scenario before it answers: lenient spellings, invalid values
//! ignored, pools following the environment, and the settings a refusal names.

use std::collections::BTreeSet;

use ge_spec::vocab::session::{SessionEvent, SessionScenario};
use ge_spec::{Diagnostic, Grammar, Level, OptionKey, OptionMaps, Profile, Spec};

use super::{Rewrite, LEVELS};
use crate::oracle::options::{read_reported, Context, Reading};

/// A scenario whose option maps an engine reads its own way.
pub(super) trait WithOptions: Clone {
    /// Its option maps.
    fn maps(&mut self) -> &mut OptionMaps;
    /// What the options layer knows of the graph and the run.
    fn context(&self) -> Context {
        Context::plain()
    }
}

macro_rules! with_options {
    ($($t:ty),*) => {$(
        impl WithOptions for $t {
            fn maps(&mut self) -> &mut OptionMaps {
                &mut self.options
            }
        }
    )*};
}

with_options!(
    ge_spec::vocab::memory::MemoryScenario,
    SessionScenario,
    ge_spec::vocab::weights::WeightsScenario
);

impl WithOptions for ge_spec::vocab::options::OptionsScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        Context::of(self)
    }
}

impl WithOptions for ge_spec::vocab::transfer::TransferScenario {
    fn maps(&mut self) -> &mut OptionMaps {
        &mut self.options
    }
    fn context(&self) -> Context {
        crate::oracle::transfer::context(self)
    }
}

/// The scenario the reference is asked for an engine making `picks` (its options respelled or
/// cleaned as the engine reads them), and the warnings the engine adds.
pub(super) fn scenario<S: WithOptions>(picks: &BTreeSet<Rewrite>, s: &S) -> (S, Vec<Diagnostic>) {
    let mut s = s.clone();
    let ctx = s.context();
    if picks.contains(&Rewrite::LenientSpellings) {
        read_leniently(s.maps());
    }
    let warnings = if picks.contains(&Rewrite::IgnoreInvalid) {
        ignore_invalid(s.maps(), ctx)
    } else {
        Vec::new()
    };
    (s, warnings)
}

/// Takes out of `maps` every value the options layer refuses, returning a warning for each:
/// the engine ignores an invalid value instead of rejecting its option.
fn ignore_invalid(maps: &mut OptionMaps, ctx: Context) -> Vec<Diagnostic> {
    let reading = Reading::new(Profile::Documented, maps, ctx);
    let mut warnings = Vec::new();
    for e in &reading.errors {
        let (Some(key), Some(level)) = (e.key.as_deref(), e.level) else {
            continue;
        };
        if let Some(value) = maps.at_mut(level).remove(key) {
            warnings.push(
                Diagnostic::new("", "an invalid value is ignored")
                    .key(key)
                    .level(level)
                    .value(value),
            );
        }
    }
    warnings
}

/// Respells, at every level, each value of the twelve options that the reference would refuse
/// for its spelling alone but that reads as a number (or a list of numbers): the engine takes
/// ` 1`, `+1`, `05` or `1, 2` for what it spells.
fn read_leniently(maps: &mut OptionMaps) {
    let spec = Spec::embedded();
    for level in LEVELS {
        for (key, raw) in maps.at_mut(level).iter_mut() {
            let Ok(key) = key.parse::<OptionKey>() else {
                continue;
            };
            let grammar = spec.option(key).grammar;
            if grammar == Grammar::Path {
                continue;
            }
            if let Some(m) = read_reported(grammar, raw) {
                *raw = m.canonical();
            }
        }
    }
}

/// Sets the session's staticMemoryPolicy to what it and GE_USE_STATIC_MEMORY say together, as
/// upstream combines them (`1`, `2` or `4` pool static shapes, `3` or `4` dynamic ones).
pub(super) fn follow_environment(s: &mut SessionScenario) {
    let key = "ge.exec.staticMemoryPolicy";
    let Some(env) = s.ge_use_static_memory.clone() else {
        return;
    };
    let set = s
        .options
        .session
        .get(key)
        .or_else(|| s.options.global.get(key));
    let own: u8 = match set.map(|v| v.parse::<u8>()) {
        None => 0,
        Some(Ok(p)) if p <= 4 => p,
        Some(_) => return,
    };
    let said = |values: &[&str]| values.contains(&env.as_str());
    let statics = matches!(own, 2 | 4) || said(&["1", "2", "4"]);
    let dynamics = matches!(own, 3 | 4) || said(&["3", "4"]);
    let combined = match (statics, dynamics) {
        (true, true) => 4,
        (true, false) => 2,
        (false, true) => 3,
        (false, false) => own,
    };
    if combined != own {
        s.options.session.insert(key.into(), combined.to_string());
    }
}

/// One set of option maps a request is read with (a session reads one per load).
pub(super) struct Read<'a> {
    maps: &'a OptionMaps,
    /// A load's own graph-level map, standing in for `maps.graph`.
    graph: Option<&'a std::collections::BTreeMap<String, String>>,
}

impl<'a> Read<'a> {
    /// The maps as they are.
    pub(super) fn plain(maps: &'a OptionMaps) -> Self {
        Read { maps, graph: None }
    }

    /// A transfer scenario's maps.
    pub(super) fn of_transfer(s: &'a ge_spec::vocab::transfer::TransferScenario) -> Self {
        Read::plain(&s.options)
    }

    /// A session's global and session maps, then each load's maps with the graph-level map it
    /// is read with (SES-016: its own, else the scenario's `options.graph`). The scenario's
    /// graph-level map is a setting of the loads that take it, not of the session: a script
    /// whose every load brings its own map carries none of it.
    pub(super) fn of_session(s: &'a SessionScenario) -> Vec<Self> {
        static NO_GRAPH_MAP: std::collections::BTreeMap<String, String> =
            std::collections::BTreeMap::new();
        let mut out = vec![Read {
            maps: &s.options,
            graph: Some(&NO_GRAPH_MAP),
        }];
        for e in &s.events {
            if let SessionEvent::Load { options, .. } = e {
                out.push(Read {
                    maps: &s.options,
                    graph: Some(options.as_ref().unwrap_or(&s.options.graph)),
                });
            }
        }
        out
    }
}

/// An error for every setting of one of the twelve options at a level where it does not take
/// effect.
pub(super) fn ineffective(read: &Read<'_>) -> Vec<Diagnostic> {
    let spec = Spec::embedded();
    let mut out = Vec::new();
    for level in LEVELS {
        let map = match (level, read.graph) {
            (Level::Graph, Some(graph)) => graph,
            _ => read.maps.at(level),
        };
        for (key, value) in map {
            let Ok(option) = key.parse::<OptionKey>() else {
                continue;
            };
            if !spec.option(option).takes_effect_at(level) {
                out.push(
                    Diagnostic::new("", "this option cannot be set at this level")
                        .key(key.as_str())
                        .level(level)
                        .value(value.as_str()),
                );
            }
        }
    }
    out
}
