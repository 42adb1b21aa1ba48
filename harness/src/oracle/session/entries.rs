//! The trace's entries against the replay: missing, extra or late entries, the refreshes and their decisions, the refusals.

use super::*;

/// SES-017 upstream: a refused load stops nothing; a backend that ran nothing at all when the
/// script calls for entries or refresh results stopped the whole script.
pub(super) fn check_nothing_ran(
    replay: &Replay<'_>,
    obs: &SessionObservation,
) -> Option<Violation> {
    let due_anything =
        replay.wants.iter().any(|w| !w.want.is_empty()) || !replay.refreshes.is_empty();
    let ran_nothing = obs.trace.is_empty() && obs.refreshes.is_empty();
    (replay.options_refused && due_anything && ran_nothing).then(|| {
        Violation::new(
            "SES-017",
            "GE refuses a load on its options by itself; the other events run, yet nothing ran",
        )
    })
}

/// The entries of each step against those the replay calls for, as multisets: counts per
/// (action, block, bytes). At each step: entries in another form ([`pair_by_form`]), then
/// entries missing, then entries not called for.
pub(super) fn check_entries(
    replay: &Replay<'_>,
    obs: &SessionObservation,
    out: &mut Vec<Violation>,
) {
    let mut by_step: BTreeMap<u32, BTreeMap<EntryKey<'_>, u64>> = BTreeMap::new();
    for e in &obs.trace {
        *by_step
            .entry(e.step)
            .or_default()
            .entry((e.action, e.pool.as_str(), e.bytes))
            .or_default() += 1;
    }
    // Entries due at an earlier step and not found there: (entry, times, clause, step due).
    let mut due_before: Vec<(EntryKey<'_>, u64, &'static str, u32)> = Vec::new();
    for wants in &replay.wants {
        let step = wants.step;
        let mut got = by_step.remove(&step).unwrap_or_default();
        if matches!(wants.kind, StepKind::End) {
            // Entries numbered past the end are the end's, misnumbered (SES-013, hygiene).
            for (_, later) in by_step.split_off(&step) {
                for (key, n) in later {
                    *got.entry(key).or_default() += n;
                }
            }
        }
        let mut missing = missing_entries(&wants.want, &mut got);
        found_late(step, &mut due_before, &mut got, out);
        out.extend(pair_by_form(step, &mut missing, &mut got));
        due_before.extend(missing.into_iter().map(|(k, n, c)| (k, n, c, step)));
        check_extra_entries(wants, &replay.model, got, out);
    }
    for (key, short, clause, step) in due_before {
        check_missing_entries(step, vec![(key, short, clause)], out);
    }
}

/// An entry due at an earlier step that the engine made later, at `step`, breaks the clause
/// that calls for it when it is due (the timing), never the clause of the step it landed in:
/// a zero-copy area kept across executions and taken at the first execution instead of at
/// load departs from RZC-013's choice of when, not from RZC-012's reuse. What it accounts for
/// leaves `due_before` and `got`.
pub(super) fn found_late<'a>(
    step: u32,
    due_before: &mut Vec<(EntryKey<'a>, u64, &'static str, u32)>,
    got: &mut BTreeMap<EntryKey<'a>, u64>,
    out: &mut Vec<Violation>,
) {
    for (key, short, clause, due) in due_before.iter_mut() {
        let Some(have) = got.get_mut(key) else {
            continue;
        };
        let n = (*have).min(*short);
        *have -= n;
        *short -= n;
        out.push(Violation::new(
            *clause,
            format_args!(
                "`{} {} {} bytes` is due at step {due} and made at step {step}",
                action_text(key.0),
                key.1,
                key.2
            ),
        ));
    }
    got.retain(|_, n| *n > 0);
    due_before.retain(|(_, short, _, _)| *short > 0);
}

/// The entries `want` calls for that `got` lacks: each with how many times it is short and the
/// clause calling for it. What `got` holds beyond is left in it; what `want` accounts for, taken.
pub(super) fn missing_entries<'a>(
    want: &'a [Want],
    got: &mut BTreeMap<EntryKey<'a>, u64>,
) -> Vec<(EntryKey<'a>, u64, &'static str)> {
    let mut due: BTreeMap<EntryKey, (u64, &'static str)> = BTreeMap::new();
    for w in want {
        due.entry((w.action, w.name.as_str(), w.bytes))
            .or_insert((0, w.clause))
            .0 += 1;
    }
    let mut missing: Vec<(EntryKey, u64, &'static str)> = Vec::new();
    for ((a, n, b), (count, clause)) in due {
        let have = got.remove(&(a, n, b)).unwrap_or(0);
        if have < count {
            missing.push(((a, n, b), count - have, clause));
        } else if have > count {
            got.insert((a, n, b), have - count);
        }
    }
    missing
}

/// SMP-010..SMP-016, RZC-010..RZC-013, SES-011, SES-018: an entry due at `step` and not found
/// breaks the clause the replay calls for it under.
pub(super) fn check_missing_entries(
    step: u32,
    missing: Vec<(EntryKey<'_>, u64, &'static str)>,
    out: &mut Vec<Violation>,
) {
    for ((a, n, b), short, clause) in missing {
        out.push(Violation::new(
            clause,
            format_args!(
                "step {step}: `{} {n} {b} bytes` is due {short} more time(s) than found",
                action_text(a)
            ),
        ));
    }
}

/// SES-011..SES-018, SMP-010..SMP-016, RZC-010..RZC-013: an entry of a step, with a block name
/// of the contract, that the clauses do not call for breaks the clause that forbids it
/// ([`blame`]).
pub(super) fn check_extra_entries(
    wants: &StepWants,
    model: &Model,
    got: BTreeMap<EntryKey<'_>, u64>,
    out: &mut Vec<Violation>,
) {
    let step = wants.step;
    for ((a, n, b), count) in got {
        let Some(block) = parse_block(n) else {
            continue;
        };
        out.push(Violation::new(
            blame(wants.kind, block, model, &wants.known),
            format_args!(
                "step {step}: `{} {n} {b} bytes` ({count} time(s)) is not called for here",
                action_text(a)
            ),
        ));
    }
}

/// SES-019: one refresh result per refresh event, in order, naming its step and graph.
pub(super) fn check_refresh_order(
    replay: &Replay<'_>,
    obs: &SessionObservation,
) -> Option<Violation> {
    let got: Vec<(u32, u32)> = obs.refreshes.iter().map(|r| (r.step, r.graph)).collect();
    let due: Vec<(u32, u32)> = replay.refreshes.iter().map(|r| (r.0, r.1)).collect();
    (got != due).then(|| {
        Violation::new(
            "SES-019",
            format_args!("refresh results name (step, graph) {got:?}; the script's refresh events are {due:?}"),
        )
    })
}

/// SES-012, FBR-010..FBR-014: each refresh result (in the order of the events) is accepted or
/// refused as decided ([`refresh_decision`]), or breaks the deciding clause.
pub(super) fn check_refresh_decisions(
    replay: &Replay<'_>,
    obs: &SessionObservation,
    out: &mut Vec<Violation>,
) {
    if check_refresh_order(replay, obs).is_some() {
        // Results out of order ([`check_refresh_order`]) are not matched with the events.
        return;
    }
    for (r, (step, graph, ok, clause)) in obs.refreshes.iter().zip(&replay.refreshes) {
        if r.ok != *ok {
            out.push(Violation::new(
                *clause,
                format_args!(
                    "step {step}: the refresh of graph {graph} should be {}",
                    if *ok { "accepted" } else { "refused" }
                ),
            ));
        }
    }
}

/// SES-012, FBR-011, FBR-013, FBR-014, SES-017: the errors are the refusals the replay calls
/// for: each naming the deciding clause and the step (FBR-011's, under FBR-015, and FBR-014's
/// with the option's key), and upstream the options' refusals of the loads GE refuses (SES-017,
/// required or optional); none for accepted events.
pub(super) fn check_refusals(
    spec: &Spec,
    replay: &Replay<'_>,
    obs: &SessionObservation,
    warnings: &[Expected],
) -> Vec<Violation> {
    let mut expected: Vec<Expected> = replay
        .refusals
        .iter()
        .map(|(step, clause)| {
            let mut d = Diagnostic::new(*clause, "").subject(Subject::step(*step));
            if matches!(*clause, "FBR-011" | "FBR-014") {
                d = d.key(OptionKey::FeatureBaseRefreshable.as_str());
            }
            Expected::exact(&d)
        })
        .collect();
    let (mut required, mut optional) = replay.load_errors.clone();
    required.sort();
    required.dedup();
    optional.sort();
    optional.dedup();
    optional.retain(|d| !required.contains(d));
    expected.extend(required.iter().map(Expected::exact));
    expected.extend(optional.iter().map(Expected::optional));
    diagnostics::compare_beside(spec, "errors", &expected, &obs.errors, true, warnings)
}

/// A trace entry's action, block name and bytes.
pub(super) type EntryKey<'a> = (TraceAction, &'a str, u64);

/// Pairs, at one step, entries due but not found with entries found but not due that do the
/// same thing in another form, and charges the form to the suite's clause that fixes it: the
/// same block with other bytes (a pool's size, SMP-012; a free's bytes, SES-010), or the same
/// bytes under a name outside the contract (SES-014). What pairs leaves both lists; what the
/// text states (which blocks are allocated and freed at which event) is judged on the rest.
pub(super) fn pair_by_form(
    step: u32,
    missing: &mut Vec<(EntryKey<'_>, u64, &'static str)>,
    got: &mut BTreeMap<EntryKey<'_>, u64>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (key, short, _) in missing.iter_mut() {
        let (a, n, b) = *key;
        while *short > 0 {
            let other_bytes = got.keys().copied().find(|(ga, gn, _)| *ga == a && *gn == n);
            let other_name = || {
                got.keys()
                    .copied()
                    .find(|(ga, gn, gb)| *ga == a && *gb == b && parse_block(gn).is_none())
            };
            let Some(found) = other_bytes.or_else(other_name) else {
                break;
            };
            let clause = if found.1 != n {
                "SES-014"
            } else if matches!(parse_block(n), Some(Block::Pool(_))) {
                "SMP-012"
            } else if a == TraceAction::Free {
                "SES-010"
            } else {
                break;
            };
            out.push(Violation::new(
                clause,
                format_args!(
                    "step {step}: `{} {} {} bytes` found where `{} {n} {b} bytes` is due",
                    action_text(a),
                    found.1,
                    found.2,
                    action_text(a)
                ),
            ));
            *short -= 1;
            if let Some(c) = got.get_mut(&found) {
                *c -= 1;
                if *c == 0 {
                    got.remove(&found);
                }
            }
        }
    }
    missing.retain(|m| m.1 > 0);
    out
}

/// SES-017 upstream: whether GE refuses the load of graph `id` on its options (`reading`, the
/// load's), adding the refusals it reports, naming the graph, to `errors` (required, optional).
///
/// A graph added and left unbuilt fails again: the addition checks of its new map are made
/// (their refusals reported), then the compilation runs on the map it was added with and fails
/// with no new error. Otherwise the load is refused when its reading rejects a value; refused at
/// compilation or build (step 3 or 4), the graph stays added and unbuilt, unless a loaded graph
/// holds the id.
pub(super) fn refused_by_options(
    id: u32,
    reading: Option<&Reading>,
    model: &Model,
    unbuilt: &mut BTreeSet<u32>,
    errors: &mut (Vec<Diagnostic>, Vec<Diagnostic>),
) -> bool {
    let Some(r) = reading else {
        return unbuilt.contains(&id);
    };
    let mark = |d: &Diagnostic| Diagnostic {
        subject: d.subject.clone().in_graph(id),
        ..d.clone()
    };
    if unbuilt.contains(&id) {
        let at_addition = |d: &&Diagnostic| ge_step(d) == 2;
        errors
            .0
            .extend(r.errors.iter().filter(at_addition).map(mark));
        errors
            .1
            .extend(r.optional_errors.iter().filter(at_addition).map(mark));
        return true;
    }
    let Some(first) = r.errors.iter().map(ge_step).min() else {
        return false;
    };
    errors.0.extend(r.errors.iter().map(mark));
    errors.1.extend(r.optional_errors.iter().map(mark));
    if first >= 3 && !model.graphs.contains_key(&id) {
        unbuilt.insert(id);
    }
    true
}
