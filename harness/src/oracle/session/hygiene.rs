//! The trace's hygiene, whatever the script: entries well-formed and named, steps in order, every block balanced, nothing held at the end, unload in order.

use super::*;

/// What trace hygiene reads: the profile, the observation and the step of the script's end.
pub(super) struct Traced<'a> {
    pub(super) profile: Profile,
    pub(super) obs: &'a SessionObservation,
    pub(super) end: u64,
}

/// A check of the phases whose context is [`Traced`].
pub(super) type TracedCheck = Entry<fn(&Traced<'_>) -> Vec<Violation>>;

/// Trace hygiene that holds whatever the script: names, sizes, steps, balance, entry by entry,
/// then what is left at the end. Every name holds at most one block at a time, except
/// `static-pool` under the upstream profile, which may hold several, each freed with its own
/// bytes (SES-010's upstream entry).
pub(super) const HYGIENE: &[TracedCheck] = &[
    Entry {
        clauses: &["SES-014", "SES-015", "SES-013", "SES-010"],
        name: "hygiene::check_trace_entries",
        run: check_trace_entries,
    },
    Entry {
        clauses: &["SES-011"],
        name: "hygiene::check_nothing_held",
        run: |cx| {
            let mut out = Vec::new();
            check_nothing_held(held_at_end(cx), &mut out);
            out
        },
    },
    Entry {
        clauses: &["SES-011"],
        name: "hygiene::check_unload_order",
        run: |cx| {
            let mut out = Vec::new();
            check_unload_order(cx.obs, cx.end, &mut out);
            out
        },
    },
];

/// SES-014, SES-015, SES-013, SES-010: each trace entry in turn names a block of the contract,
/// of some bytes, at a step in order, and keeps its name's balance.
pub(super) fn check_trace_entries(cx: &Traced<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut last = 0u32;
    let mut held: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (i, e) in cx.obs.trace.iter().enumerate() {
        let what = format!(
            "trace entry {i} ({} {} {} bytes at step {})",
            action_text(e.action),
            e.pool,
            e.bytes,
            e.step
        );
        out.extend(check_block_name(&what, e));
        out.extend(check_block_size(&what, e));
        check_step_order(&what, e, cx.end, &mut last, &mut out);
        out.extend(check_balance(cx.profile, &what, e, &mut held));
    }
    out
}

/// What each block name holds after the last trace entry ([`check_balance`]'s bookkeeping).
pub(super) fn held_at_end<'o>(cx: &Traced<'o>) -> BTreeMap<&'o str, Vec<u64>> {
    let mut held = BTreeMap::new();
    for e in &cx.obs.trace {
        let _ = check_balance(cx.profile, "", e, &mut held);
    }
    held
}

/// Whether the block name `name` may hold several blocks at once (the upstream static pool,
/// SES-010's upstream entry).
pub(super) fn holds_several(profile: Profile, name: &str) -> bool {
    grows_by_blocks(profile, ShapeKind::Static) && name == pool_name(ShapeKind::Static)
}

/// SES-014: a trace entry names a block of the contract.
pub(super) fn check_block_name(what: &str, e: &TraceEntry) -> Option<Violation> {
    parse_block(&e.pool).is_none().then(|| {
        Violation::new(
            "SES-014",
            format!("{what}: `{}` is not a block name of the contract", e.pool),
        )
    })
}

/// SES-015: no block of zero bytes is recorded.
pub(super) fn check_block_size(what: &str, e: &TraceEntry) -> Option<Violation> {
    (e.bytes == 0).then(|| {
        Violation::new(
            "SES-015",
            format!("{what}: a block of zero bytes is recorded"),
        )
    })
}

/// SES-013: a trace entry's step is in the script (`end` events, the end of the script
/// included) and never before the step of an entry recorded earlier (`last`, which this
/// moves on).
pub(super) fn check_step_order(
    what: &str,
    e: &TraceEntry,
    end: u64,
    last: &mut u32,
    out: &mut Vec<Violation>,
) {
    if u64::from(e.step) > end {
        out.push(Violation::new(
            "SES-013",
            format!("{what}: the script has only {end} events"),
        ));
    }
    if e.step < *last {
        out.push(Violation::new(
            "SES-013",
            format!("{what}: step goes back from {last}"),
        ));
    }
    *last = (*last).max(e.step);
}

/// SES-010: every free releases a held block of exactly its bytes (the blocks of a name are a
/// multiset); SES-014: a name the naming gives one block is not allocated while it holds one. `held` is what each name holds
/// before the entry; this moves it on.
pub(super) fn check_balance<'o>(
    profile: Profile,
    what: &str,
    e: &'o TraceEntry,
    held: &mut BTreeMap<&'o str, Vec<u64>>,
) -> Option<Violation> {
    let several = holds_several(profile, &e.pool);
    let blocks = held.entry(&e.pool).or_default();
    match e.action {
        TraceAction::Alloc => {
            // A second block under a name the suite's naming gives one block is a naming
            // matter (SES-014): the blocks still balance one by one, so both are held.
            let named_twice = match (several, blocks.first()) {
                (false, Some(b)) => Some(Violation::new(
                    "SES-014",
                    format!(
                        "{what}: `{}` is already held ({b} bytes); the naming gives it one block",
                        e.pool
                    ),
                )),
                _ => None,
            };
            blocks.push(e.bytes);
            named_twice
        }
        TraceAction::Free => match blocks.iter().position(|&b| b == e.bytes) {
            Some(i) => {
                blocks.swap_remove(i);
                None
            }
            None if blocks.is_empty() => Some(Violation::new(
                "SES-010",
                format!("{what}: `{}` is not held", e.pool),
            )),
            None => {
                let sizes: Vec<String> = blocks.iter().map(u64::to_string).collect();
                let v = Violation::new(
                    "SES-010",
                    format!(
                        "{what}: `{}` was allocated with {} bytes",
                        e.pool,
                        sizes.join(" and ")
                    ),
                );
                // The one block of a name that holds one counts as released.
                if !several && blocks.len() == 1 {
                    blocks.clear();
                }
                Some(v)
            }
        },
    }
}

/// SES-011: nothing is held after the last trace entry (`held`: what each name holds then).
pub(super) fn check_nothing_held(held: BTreeMap<&str, Vec<u64>>, out: &mut Vec<Violation>) {
    for (name, blocks) in held {
        for bytes in blocks {
            out.push(Violation::new(
                "SES-011",
                format!("`{name}` ({bytes} bytes) is still held after the last trace entry"),
            ));
        }
    }
}

/// SES-011 fixes the one order within a step: at the end (step `end`) the graphs still loaded
/// are unloaded in ascending id order, so the graph blocks released there name non-decreasing
/// ids (a shared pool, released with its last user, names no graph).
pub(super) fn check_unload_order(obs: &SessionObservation, end: u64, out: &mut Vec<Violation>) {
    let mut unloaded: Option<u32> = None;
    for e in obs.trace.iter().filter(|e| u64::from(e.step) == end) {
        let (Some(Block::Feature(id) | Block::Io(id)), TraceAction::Free) =
            (parse_block(&e.pool), e.action)
        else {
            continue;
        };
        if let Some(before) = unloaded.filter(|before| *before > id) {
            out.push(Violation::new(
                "SES-011",
                format!(
                    "at the end graph {id} is unloaded after graph {before}: the session unloads in ascending id order"
                ),
            ));
        }
        unloaded = Some(unloaded.map_or(id, |b| b.max(id)));
    }
}
