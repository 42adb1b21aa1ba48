//! How an allowed engine words, labels and kinds its diagnostics: the kind of what only a suite
//! choice calls for, the clause cited, the message.

use std::collections::BTreeSet;

use ge_spec::vocab::options::OptionsObservation;
use ge_spec::{Diagnostic, Profile, Spec};

use super::Rewrite;

/// Whether only a suite choice calls for `d` (or nothing the tables know: an engine's own
/// warning), so that the text leaves its kind open.
fn called_for_by_a_choice(d: &Diagnostic) -> bool {
    let spec = Spec::embedded();
    if d.clause.is_empty() {
        return true;
    }
    let Some(clause) = spec.clause(&d.clause) else {
        return true;
    };
    let caller = clause
        .reported_under
        .as_deref()
        .and_then(|c| spec.clause(c))
        .unwrap_or(clause);
    caller.is_suite_choice(Profile::Documented)
}

/// The clauses of a warning about a setting that has no effect where it stands (a level where
/// its option does not take effect): an engine may as well call it an error for that setting,
/// the value in force staying what the other levels give. Other warnings only a choice calls
/// for report a value that partly or wholly took effect otherwise, and an error there would
/// say the option was rejected: [`Rewrite::WarningsDropped`] covers them, and
/// [`Rewrite::RefuseListOutOfRange`] the rejection.
const IGNORED_SETTING: [&str; 2] = ["OPT-002", "OPT-010"];

/// The first clause of the option `key`, its value grammar's.
fn first_clause_of(key: &str) -> Option<String> {
    Spec::embedded()
        .clauses()
        .find(|c| c.option.is_some_and(|o| o.as_str() == key))
        .map(|c| c.id.clone())
}

/// The diagnostics of an answer as an engine making `picks` gives them: the warnings only a
/// suite choice calls for dropped or made errors, then every clause cited and every message
/// as the engine has them.
pub(super) fn finish(
    picks: &BTreeSet<Rewrite>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    if picks.contains(&Rewrite::WarningsAsErrors) {
        let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(warnings)
            .into_iter()
            .partition(|d| IGNORED_SETTING.contains(&d.clause.as_str()));
        *warnings = kept;
        errors.extend(moved);
    } else if picks.contains(&Rewrite::WarningsDropped) {
        warnings.retain(|d| !called_for_by_a_choice(d));
    }
    for d in errors.iter_mut().chain(warnings.iter_mut()) {
        if picks.contains(&Rewrite::NoClauseCited) {
            d.clause.clear();
        } else if picks.contains(&Rewrite::OptionClauseCited) {
            if let Some(c) = d.key.as_deref().and_then(first_clause_of) {
                d.clause = c;
            }
        }
    }
}

/// Moves every index list the reference warned about (an index out of range, IRM-003 or
/// ORM-003) from `effective` to `rejected`, with one error about it instead of the warnings.
pub(super) fn refuse_out_of_range(o: &mut OptionsObservation) {
    let keys: BTreeSet<String> = o
        .warnings
        .iter()
        .filter(|w| w.clause == "IRM-003" || w.clause == "ORM-003")
        .filter_map(|w| w.key.clone())
        .collect();
    for key in keys {
        let level = o
            .warnings
            .iter()
            .find(|w| w.key.as_deref() == Some(key.as_str()))
            .and_then(|w| w.level);
        o.warnings
            .retain(|w| w.key.as_deref() != Some(key.as_str()));
        o.effective.remove(&key);
        o.rejected.push(key.clone());
        let mut e = Diagnostic::new("", "an index is out of range").key(key);
        e.level = level;
        o.errors.push(e);
    }
    o.rejected.sort();
}
