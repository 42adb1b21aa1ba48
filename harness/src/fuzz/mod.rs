//! The logic behind every fuzz target. Each `fuzz/fuzz_targets/*.rs` is a few lines that call one
//! function here; the function decodes typed input with `arbitrary`, rejects input that is not
//! interesting (too big, or not of the shape the target wants) and panics only on a real bug:
//! a broken invariant or a disagreement with the reference. `smoke` tests feed seeded random
//! bytes so `cargo test` exercises every target.

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use ge_reference::options::{parse_value, resolve, Context};
use ge_spec::vocab::session::SessionEvent;
use ge_spec::vocab::{MemoryScenario, SessionScenario, TransferScenario, WeightsScenario};
use ge_spec::{Level, OptionKey, OptionMaps, Product, Profile, RunMode, ShapeKind, Spec};

use crate::judging::Judging;

mod dict;
pub use dict::{dictionary, entries as dictionary_entries};

/// The reference is held to every clause, its own choices included.
const STRICT: Judging = Judging::DEFAULT.strict();

/// What a fuzz target tells libFuzzer about one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Interesting: keep it in the corpus.
    Keep,
    /// Not interesting (too big, malformed for this target): do not add it to the corpus.
    Reject,
}

/// Caps on generated input so each execution stays fast: bytes per key or value.
pub const MAX_STRING: usize = 64;
/// At most this many entries per level: the cap at which drawing an option map stops
/// ([`ge_spec::vocab::DRAWN_MAX_ENTRIES`]), so a map drawn past it is rejected before the rest of
/// the input is drawn.
pub const MAX_ENTRIES: usize = ge_spec::vocab::DRAWN_MAX_ENTRIES;

/// One of the twelve options' keys seven times in eight; `None` the eighth (then any string).
fn known_key(u: &mut Unstructured<'_>) -> arbitrary::Result<Option<OptionKey>> {
    Ok(if u.ratio(7u8, 8u8)? {
        Some(OptionKey::arbitrary(u)?)
    } else {
        None
    })
}

/// `s` cut to at most [`MAX_STRING`] bytes on a character boundary, without copying.
fn capped(s: &str) -> &str {
    let mut end = s.len().min(MAX_STRING);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn value(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    Ok(capped(u.arbitrary()?).to_owned())
}

/// How option maps are drawn from raw bytes: at most `entries` entries a level, and for a key
/// of the twelve a value the table accepts at the edges of its range `accepted` times in four
/// (see [`value_of`]).
#[derive(Clone, Copy)]
struct Draw {
    entries: usize,
    accepted: u8,
}

/// The `options` target's maps: every entry the caps allow, values mostly outside the table.
const OPTIONS_DRAW: Draw = Draw {
    entries: MAX_ENTRIES,
    accepted: 1,
};

/// The edge values of each option ([`ge_spec::Edges`], in the order of [`OptionKey::ALL`]):
/// those the table accepts at the ends of its range, and those just outside.
fn edges() -> &'static [ge_spec::Edges] {
    static EDGES: std::sync::OnceLock<Vec<ge_spec::Edges>> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| {
        let spec = Spec::embedded();
        OptionKey::ALL
            .iter()
            .map(|k| spec.option(*k).edges())
            .collect()
    })
}

/// A value for `key`: `draw.accepted` times in four one the table accepts at the edges of its
/// range, else half the time one just outside them, else any string. So options are valid
/// often enough that the engine goes on with them, and the parser still meets anything.
fn value_of(u: &mut Unstructured<'_>, key: OptionKey, draw: Draw) -> arbitrary::Result<String> {
    let edges = &edges()[key as usize];
    if !edges.accepted.is_empty() && u.ratio(draw.accepted, 4u8)? {
        return Ok(u.choose(&edges.accepted)?.clone());
    }
    if !edges.refused.is_empty() && u.arbitrary()? {
        return Ok(u.choose(&edges.refused)?.clone());
    }
    value(u)
}

/// One level's map from raw bytes: up to `draw.entries` entries, each key one of the twelve
/// seven times in eight (with a value of [`value_of`]), else any string (with any value).
fn option_map(u: &mut Unstructured<'_>, draw: Draw) -> arbitrary::Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for _ in 0..u.int_in_range(0..=draw.entries)? {
        match known_key(u)? {
            Some(key) => map.insert(key.as_str().to_owned(), value_of(u, key, draw)?),
            None => map.insert(value(u)?, value(u)?),
        };
    }
    Ok(map)
}

/// Option maps at the three levels, from raw bytes ([`option_map`] each).
fn option_maps(u: &mut Unstructured<'_>, draw: Draw) -> arbitrary::Result<OptionMaps> {
    Ok(OptionMaps {
        global: option_map(u, draw)?,
        session: option_map(u, draw)?,
        graph: option_map(u, draw)?,
    })
}

fn context(u: &mut Unstructured<'_>) -> arbitrary::Result<Context> {
    Ok(Context {
        inputs: Some(u.int_in_range(0..=64)?),
        outputs: Some(u.int_in_range(0..=64)?),
        shape: ShapeKind::arbitrary(u)?,
        run_mode: RunMode::arbitrary(u)?,
        product: Product::arbitrary(u)?,
    })
}

/// True when `data` is a JSON seed (see [`decode`]).
fn is_json(data: &[u8]) -> bool {
    data.first() == Some(&b'{')
}

/// Decodes one input of a scenario target. Input that starts with `{` is read as the JSON of
/// the scenario (the form `ge-conformance corpus` writes from the case tables, so campaigns
/// start from every case); anything else is read with `arbitrary`.
pub fn decode<T: for<'a> Arbitrary<'a> + serde::de::DeserializeOwned>(data: &[u8]) -> Option<T> {
    if is_json(data) {
        serde_json::from_slice(data).ok()
    } else {
        T::arbitrary(&mut Unstructured::new(data)).ok()
    }
}

/// The input of the `options` target: option maps and the context they are resolved in.
fn options_input(data: &[u8]) -> Option<(OptionMaps, Context)> {
    if is_json(data) {
        let s: ge_spec::vocab::OptionsScenario = serde_json::from_slice(data).ok()?;
        let ctx = Context::of(&s);
        return maps_small(&s.options).then_some((s.options, ctx));
    }
    let mut u = Unstructured::new(data);
    Some((
        option_maps(&mut u, OPTIONS_DRAW).ok()?,
        context(&mut u).ok()?,
    ))
}

/// The list options, in the order the `lists` target reads them from a JSON seed.
const LIST_KEYS: [OptionKey; 3] = [
    OptionKey::InputReuseMemIndexes,
    OptionKey::OutputReuseMemIndexes,
    OptionKey::OutputReuseInputMemIndexes,
];

/// The first value an options scenario sets for one of `keys` (graph level first), as
/// (key, level, text), within the string cap.
fn first_set(
    s: &ge_spec::vocab::OptionsScenario,
    keys: &[OptionKey],
) -> Option<(OptionKey, Level, String)> {
    [Level::Graph, Level::Session, Level::Global]
        .into_iter()
        .flat_map(|l| keys.iter().map(move |k| (l, *k)))
        .find_map(|(l, k)| s.options.at(l).get(k.as_str()).map(|v| (k, l, v.clone())))
        .filter(|(_, _, v)| v.len() <= MAX_STRING)
}

/// The input of the `lists` target: one list option, one text and a context. A JSON seed is an
/// options scenario; the option and text are the first list option it sets.
fn lists_input(data: &[u8]) -> Option<(OptionKey, String, Context)> {
    if is_json(data) {
        let s: ge_spec::vocab::OptionsScenario = serde_json::from_slice(data).ok()?;
        let (key, _, text) = first_set(&s, &LIST_KEYS)?;
        return Some((key, text, Context::of(&s)));
    }
    let mut u = Unstructured::new(data);
    let key = *u.choose(&LIST_KEYS).ok()?;
    Some((key, value(&mut u).ok()?, context(&mut u).ok()?))
}

/// The input of the `values` target: one option, one level, one text and a context. A JSON
/// seed is an options scenario; the value is the first of the twelve options it sets.
fn values_input(data: &[u8]) -> Option<(OptionKey, Level, String, Context)> {
    if is_json(data) {
        let s: ge_spec::vocab::OptionsScenario = serde_json::from_slice(data).ok()?;
        let (key, level, text) = first_set(&s, &OptionKey::ALL)?;
        return Some((key, level, text, Context::of(&s)));
    }
    let mut u = Unstructured::new(data);
    let key = OptionKey::arbitrary(&mut u).ok()?;
    let level = Level::arbitrary(&mut u).ok()?;
    Some((key, level, value(&mut u).ok()?, context(&mut u).ok()?))
}

/// Target `values`: the parser on its own, one arbitrary string as one option at one level.
/// Checks that a refusal names an existing clause and the option, that warnings name existing
/// clauses, and that the canonical spelling of an accepted value parses back to itself.
pub fn values(data: &[u8]) -> Verdict {
    let Some((key, level, text, ctx)) = values_input(data) else {
        return Verdict::Reject;
    };
    let spec = Spec::embedded();
    match parse_value(key, level, &text, ctx) {
        Err(d) => {
            assert!(
                spec.clause(&d.clause).is_some(),
                "refusal names no clause: {d}"
            );
            assert_eq!(
                d.key.as_deref(),
                Some(key.as_str()),
                "refusal of another key: {d}"
            );
        }
        Ok((canonical, warnings)) => {
            for w in &warnings {
                assert!(
                    spec.clause(&w.clause).is_some(),
                    "warning names no clause: {w}"
                );
            }
            // Empty is how a list whose every index was dropped (out of range) is reported:
            // nothing in force, not a value to set again.
            if canonical.is_empty() {
                return Verdict::Keep;
            }
            let again = parse_value(key, level, &canonical, ctx).map(|(v, _)| v);
            assert_eq!(
                again.as_ref(),
                Ok(&canonical),
                "{key} = {text:?}: canonical {canonical:?} does not parse back to itself"
            );
        }
    }
    Verdict::Keep
}

/// Target `options`: arbitrary strings at arbitrary levels through the option layer. Checks that
/// every diagnostic names an existing clause, that every key is either in force or rejected,
/// and that every value in force resolves to itself when set again.
pub fn options(data: &[u8]) -> Verdict {
    let Some((maps, ctx)) = options_input(data) else {
        return Verdict::Reject;
    };
    let r = resolve(Profile::Documented, &maps, ctx);
    let spec = Spec::embedded();
    let o = &r.observation;
    // The harness's own reading of the tables agrees with the reference's, choice for choice.
    let scenario = ge_spec::vocab::OptionsScenario {
        options: maps.clone(),
        graph: ge_spec::vocab::GraphFacts {
            inputs: ctx.inputs.unwrap_or(1),
            outputs: ctx.outputs.unwrap_or(1),
            shape: ctx.shape,
        },
        run_mode: ctx.run_mode,
        product: ctx.product,
    };
    if ctx.inputs.is_some() && ctx.outputs.is_some() {
        assert_no_violation(
            "options",
            &scenario,
            &crate::oracle::options::judge(Profile::Documented, &scenario, o),
        );
    }
    for d in o.errors.iter().chain(&o.warnings) {
        assert!(
            spec.clause(&d.clause).is_some(),
            "diagnostic names no clause: {d}"
        );
    }
    assert_eq!(
        o.effective.len() + o.rejected.len(),
        12,
        "every key is in force or rejected"
    );
    for (key, eff) in &o.effective {
        let level = match eff.from {
            ge_spec::Source::Default => continue,
            ge_spec::Source::Global => Level::Global,
            ge_spec::Source::Session => Level::Session,
            ge_spec::Source::Graph => Level::Graph,
        };
        if eff.value.is_empty() {
            continue;
        }
        let k: OptionKey = key.parse().expect("effective keys are option keys");
        let again = parse_value(k, level, &eff.value, ctx).map(|(v, _)| v);
        assert_eq!(
            again.as_ref(),
            Ok(&eff.value),
            "canonical value of {key} does not round-trip"
        );
    }
    Verdict::Keep
}

/// Target `lists`: one arbitrary string as one of the list options (index lists and the pair
/// list) at graph level, with arbitrary counts. Checks that acceptance and canonical spelling agree with
/// a direct reading of the grammar.
pub fn lists(data: &[u8]) -> Verdict {
    let Some((key, text, ctx)) = lists_input(data) else {
        return Verdict::Reject;
    };
    let parsed = parse_value(key, Level::Graph, &text, ctx);
    let accepted = parsed.is_ok();
    let well_formed = !text.is_empty() && grammar_accepts(key, &text);
    if key != OptionKey::OutputReuseInputMemIndexes {
        assert_eq!(
            accepted, well_formed,
            "{key} = {text:?}: accepted {accepted}, grammar says {well_formed}"
        );
    } else if accepted {
        assert!(well_formed, "{key} = {text:?} accepted but malformed");
    }
    if let Ok((canonical, _)) = &parsed {
        assert!(
            canonical.is_empty()
                || canonical
                    .split([',', '|'])
                    .all(|p| p.parse::<u32>().is_ok()),
            "canonical value {canonical:?}"
        );
    }
    Verdict::Keep
}

fn strict(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s.len() == 1 || !s.starts_with('0'))
}

/// The list grammars, read directly from the clauses (IRM-004, ORM-004, ORI-006), without the
/// range rules.
fn grammar_accepts(key: OptionKey, text: &str) -> bool {
    match key {
        OptionKey::OutputReuseInputMemIndexes => text.split('|').all(|pair| {
            pair.split_once(',')
                .is_some_and(|(i, o)| strict(i) && strict(o) && !o.contains(','))
        }),
        _ => {
            let mut seen = std::collections::BTreeSet::new();
            text.split(',').all(|i| strict(i) && seen.insert(i))
        }
    }
}

/// Caps on scenario sizes, so one execution stays in the microseconds.
const MAX_ITEMS: usize = 64;

/// The largest seed written from a case. The cases past it (the built ones of
/// `ge_spec::built`, 0.6 to 4 MB each) are far over every target's item caps, so a target
/// would only reject them, and one such file would raise libFuzzer's default `-max_len` for
/// the whole campaign to its size. The table cases are all under 1 KB.
pub const MAX_SEED_BYTES: usize = 64 << 10;

fn maps_small(m: &OptionMaps) -> bool {
    Level::ALL.iter().all(|l| map_small(m.at(*l)))
}

/// One option map within [`MAX_ENTRIES`] entries of [`MAX_STRING`] characters.
fn map_small(m: &std::collections::BTreeMap<String, String>) -> bool {
    m.len() <= MAX_ENTRIES
        && m.iter()
            .all(|(k, v)| k.len() <= MAX_STRING && v.len() <= MAX_STRING)
}

fn assert_no_violation(
    what: &str,
    scenario: &impl std::fmt::Debug,
    violations: &[crate::oracle::Violation],
) {
    assert!(
        violations.is_empty(),
        "{what}: the reference breaks its own oracle on {scenario:?}: {violations:?}"
    );
}

/// Target `transfer`: arbitrary transfer scenarios through the reference planner, judged by the
/// transfer oracle.
pub fn transfer(data: &[u8]) -> Verdict {
    let Some(s) = decode::<TransferScenario>(data) else {
        return Verdict::Reject;
    };
    if s.inputs.len() > MAX_ITEMS || !maps_small(&s.options) {
        return Verdict::Reject;
    }
    let Ok(o) = ge_reference::transfer::plan(Profile::Documented, &s) else {
        panic!("the reference refused the transfer capability");
    };
    assert_no_violation(
        "transfer",
        &s,
        &crate::oracle::transfer::judge(&STRICT, &s, &o),
    );
    Verdict::Keep
}

/// Target `memory`: arbitrary memory scenarios through the reference planner, judged by the
/// memory oracle.
pub fn memory(data: &[u8]) -> Verdict {
    let Some(s) = decode::<MemoryScenario>(data) else {
        return Verdict::Reject;
    };
    if s.tensors.len() > MAX_ITEMS || s.inputs > 64 || s.outputs > 64 || !maps_small(&s.options) {
        return Verdict::Reject;
    }
    let Ok(o) = ge_reference::memory::plan(Profile::Documented, &s) else {
        panic!("the reference refused the memory capability");
    };
    assert_no_violation("memory", &s, &crate::oracle::memory::judge(&STRICT, &s, &o));
    Verdict::Keep
}

/// The most events a script of the `session` target holds. Longer scripts cost more per
/// execution than they add in coverage (measured in `docs/fuzzing.md`, "Throughput"); the
/// `differential` and `allowed` targets take scripts of up to [`MAX_ITEMS`] events, and the
/// session properties generate their own.
pub const SESSION_EVENTS: usize = 16;

/// The most executions, all `Execute` events together, of a script of the `session` target.
pub const SESSION_RUNS: u64 = 256;

/// Target `session`: arbitrary session scripts through the reference, judged by the session
/// oracle: at most [`SESSION_EVENTS`] events and [`SESSION_RUNS`] executions, each option map
/// (the scenario's and each load's own) within the caps of the option targets.
pub fn session(data: &[u8]) -> Verdict {
    let Some(s) = session_input(data) else {
        return Verdict::Reject;
    };
    let runs = s.executions();
    if s.events.len() > SESSION_EVENTS
        || runs > SESSION_RUNS
        || !maps_small(&s.options)
        || !loads_small(&s)
    {
        return Verdict::Reject;
    }
    let Ok(o) = ge_reference::session::run(Profile::Documented, &s) else {
        panic!("the reference refused the session capability");
    };
    assert_no_violation(
        "session",
        &s,
        &crate::oracle::session::judge(&STRICT, &s, &o),
    );
    Verdict::Keep
}

/// The input of the `session` target: the JSON of a session scenario, or a script drawn from
/// raw bytes by [`script`].
fn session_input(data: &[u8]) -> Option<SessionScenario> {
    if is_json(data) {
        serde_json::from_slice(data).ok()
    } else {
        script(&mut Unstructured::new(data)).ok()
    }
}

/// A session script from raw bytes, drawn for what the target is for rather than derived: up
/// to [`SESSION_EVENTS`] events first (so that short input is a script, not only option maps),
/// over graph ids that mostly meet (0 to 3, else any), each load with its own graph map half
/// the time, each execution repeated up to 32 times; then the option maps. A few entries a
/// level, with values the table accepts three times in four ([`value_of`]): the parser has
/// targets of its own, and a script refused over its options says little about pools and
/// refreshes.
fn script(u: &mut Unstructured<'_>) -> arbitrary::Result<SessionScenario> {
    const EDGES: Draw = Draw {
        entries: 3,
        accepted: 3,
    };
    let mut events = Vec::new();
    for _ in 0..u.int_in_range(0..=SESSION_EVENTS)? {
        let graph = if u.ratio(3u8, 4u8)? {
            u.int_in_range(0..=3)?
        } else {
            u.arbitrary()?
        };
        events.push(match u.int_in_range(0..=3u8)? {
            0 => SessionEvent::Load {
                graph,
                shape: u.arbitrary()?,
                feature_bytes: u.arbitrary()?,
                io_bytes: u.arbitrary()?,
                options: if u.arbitrary()? {
                    Some(option_map(u, EDGES)?)
                } else {
                    None
                },
            },
            1 => SessionEvent::Execute {
                graph,
                times: u.int_in_range(0..=32)?,
            },
            2 => SessionEvent::Refresh {
                graph,
                bytes: u.arbitrary()?,
            },
            _ => SessionEvent::Unload { graph },
        });
    }
    let options = option_maps(u, EDGES)?;
    let ge_use_static_memory = if u.ratio(1u8, 8u8)? {
        Some(value(u)?)
    } else {
        None
    };
    Ok(SessionScenario {
        options,
        events,
        ge_use_static_memory,
    })
}

/// True when every load's own option map is within the caps of [`maps_small`].
fn loads_small(s: &SessionScenario) -> bool {
    s.events.iter().all(|e| match e {
        SessionEvent::Load {
            options: Some(m), ..
        } => map_small(m),
        _ => true,
    })
}

fn weights_small(s: &WeightsScenario) -> bool {
    s.constants.len() <= 16
        && s.setup.len() <= 8
        && s.constants.iter().all(|c| {
            c.hex.as_ref().is_none_or(|h| h.len() <= 256)
                && c.fill.as_ref().is_none_or(|f| f.len <= 4096)
        })
        && maps_small(&s.options)
}

/// Target `weights_paths`: the pure decisions of the weights capability (which tier, which
/// directory, the sandbox confinement of relative paths, the mode-2 layout) on arbitrary input.
pub fn weights_paths(data: &[u8]) -> Verdict {
    // The arbitrary form carries a sandbox-confinement probe after the scenario; a JSON seed
    // has none.
    let (s, mut u) = if is_json(data) {
        (serde_json::from_slice(data).ok(), Unstructured::new(&[]))
    } else {
        let mut u = Unstructured::new(data);
        (WeightsScenario::arbitrary(&mut u).ok(), u)
    };
    let Some(s) = s.filter(weights_small) else {
        return Verdict::Reject;
    };
    if let Some((dir, _)) = crate::oracle::weights::flush_dir(Profile::Documented, &s) {
        assert!(
            !dir.starts_with('/') && !dir.split('/').any(|p| p == ".."),
            "directory {dir:?} escapes the sandbox"
        );
    }
    if let (false, Ok(base)) = (u.is_empty(), <Vec<String>>::arbitrary(&mut u)) {
        let rel: String = u
            .arbitrary::<&str>()
            .unwrap_or_default()
            .chars()
            .take(MAX_STRING)
            .collect();
        if let Some(parts) = ge_spec::vocab::weights::resolve_in_sandbox(&base, &rel) {
            assert!(
                parts
                    .iter()
                    .all(|p| p != ".." && p != "." && !p.is_empty() || base.contains(p)),
                "{parts:?}"
            );
        }
    }
    let blobs: Vec<(&str, Vec<u8>)> = s
        .constants
        .iter()
        .filter_map(|c| {
            c.hex
                .as_deref()
                .and_then(|h| ge_spec::vocab::weights::decode_hex(h).ok())
                .map(|b| (c.name.as_str(), b))
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = blobs.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    for profile in Profile::ALL {
        if let Some((offsets, end)) = ge_reference::weights::combined_layout(profile, &refs) {
            for ((_, w), at) in refs.iter().zip(&offsets) {
                assert_eq!(at % 512, 0, "unaligned offset");
                assert!(
                    at + w.len() as u64 <= end,
                    "weight past the end of the file"
                );
            }
        }
    }
    Verdict::Keep
}

thread_local! {
    /// The sandbox the last `weights_fs` input ran in, emptied for the next one.
    static SANDBOX: std::cell::RefCell<Option<crate::sandbox::Sandbox>> =
        const { std::cell::RefCell::new(None) };
}

/// Target `weights_fs`: arbitrary small weights scenarios run for real by the reference in an
/// empty sandbox, then the sandbox is inspected independently. The sandbox is made once and
/// emptied between inputs ([`crate::sandbox::Sandbox::reset`]): the reference and the oracle
/// see an empty directory either way, and a sandbox that cannot be emptied is replaced.
pub fn weights_fs(data: &[u8]) -> Verdict {
    let Some(s) = decode::<WeightsScenario>(data) else {
        return Verdict::Reject;
    };
    if !weights_small(&s) {
        return Verdict::Reject;
    }
    let scenario = ge_spec::Scenario::Weights(s.clone());
    let kept = SANDBOX.with_borrow_mut(Option::take);
    let Some(dir) = kept.map_or_else(|| crate::runner::sandbox(&scenario).ok(), Some) else {
        return Verdict::Reject;
    };
    let verdict = weights_fs_in(&s, &scenario, &dir);
    if dir.reset() {
        SANDBOX.with_borrow_mut(|kept| *kept = Some(dir));
    }
    verdict
}

/// [`weights_fs`] in the empty sandbox `dir`.
fn weights_fs_in(
    s: &WeightsScenario,
    scenario: &ge_spec::Scenario,
    dir: &crate::sandbox::Sandbox,
) -> Verdict {
    let Ok(Ok(ge_spec::Observation::Weights(o))) =
        crate::runner::ask(&ge_reference::Reference, scenario, dir.path())
    else {
        // Setup steps that cannot be planted make the input uninteresting.
        return Verdict::Reject;
    };
    let mut v = crate::oracle::weights::judge(&STRICT, s, &o);
    v.extend(crate::oracle::weights::check_sandbox(
        &STRICT,
        s,
        &o,
        dir.path(),
    ));
    assert_no_violation("weights", s, &v);
    Verdict::Keep
}

/// Any scenario, with the size caps of the capability targets.
pub fn scenario(data: &[u8]) -> Option<ge_spec::Scenario> {
    decode::<ge_spec::Scenario>(data).filter(small)
}

/// True when `s` is within the size caps of the capability targets.
fn small(s: &ge_spec::Scenario) -> bool {
    use ge_spec::Scenario;
    match s {
        Scenario::Options(o) => maps_small(&o.options),
        Scenario::Transfer(t) => t.inputs.len() <= MAX_ITEMS && maps_small(&t.options),
        Scenario::Memory(m) => {
            m.tensors.len() <= MAX_ITEMS
                && m.inputs <= 64
                && m.outputs <= 64
                && maps_small(&m.options)
        }
        Scenario::Session(x) => {
            x.events.len() <= MAX_ITEMS
                && x.events
                    .iter()
                    .all(|e| !matches!(e, SessionEvent::Execute { times, .. } if *times > 64))
                && maps_small(&x.options)
        }
        Scenario::Weights(w) => weights_small(w),
    }
}

/// The differential target vendors reuse: one arbitrary scenario, asked of `backend` and of the
/// reference, judged exactly as `certify` judges properties under `judging`. Panics (a finding)
/// on a failure, naming the clause broken, with the scenario as JSON so it can be promoted to a
/// case; a deviation from the suite's choices at level `documented` is no finding. Under the
/// upstream profile the engine is held to what the open-source GE implementation does.
///
/// ```ignore
/// // fuzz/fuzz_targets/my_engine.rs
/// #![no_main]
/// use ge_conformance::judging::Judging;
/// libfuzzer_sys::fuzz_target!(|data: &[u8]| {
///     ge_conformance::fuzz::differential(&Judging::DEFAULT, &my_engine::Engine::default(), data);
/// });
/// ```
pub fn differential(judging: &Judging, backend: &dyn ge_spec::Backend, data: &[u8]) -> Verdict {
    match scenario(data) {
        Some(s) => differential_on(judging, backend, &s),
        None => Verdict::Reject,
    }
}

/// [`differential`] on a scenario already decoded.
fn differential_on(
    judging: &Judging,
    backend: &dyn ge_spec::Backend,
    s: &ge_spec::Scenario,
) -> Verdict {
    if !backend.capabilities().contains(&s.capability()) {
        return Verdict::Reject;
    }
    let failures: Vec<_> = crate::certify::compare(judging, backend, s)
        .into_iter()
        .filter(|p| !p.deviation)
        .collect();
    if !failures.is_empty() {
        panic!(
            "{} fails at level {} (profile {}):\n{}\nscenario: {}",
            backend.name(),
            judging.level,
            judging.profile,
            failures
                .iter()
                .map(|p| format!("  {p}"))
                .collect::<Vec<_>>()
                .join("\n"),
            serde_json::to_string(s).unwrap_or_default()
        );
    }
    Verdict::Keep
}

/// The allowed-answer target: one arbitrary scenario, answered by the reference with a
/// combination of the alternatives of `alternatives.toml` ([`crate::allowed::Engine`]) that the
/// input's bytes pick (a hash of them, so a seed scenario stays a readable JSON file), judged
/// at level `documented` as `certify` judges properties. Any failure is a finding against the
/// judge: it fails an answer the text allows. Panics naming the engine, the clause and the
/// scenario.
pub fn allowed(data: &[u8]) -> Verdict {
    let engine = crate::allowed::Engine::from_bits(picks_of(data));
    differential(&Judging::DEFAULT, &engine, data)
}

/// The variable that plants a fault in the fuzz binaries of the targets that drive the
/// reference (every target but `differential`, `allowed` and `cabi`): the name of a forbidden
/// mutation ([`crate::forbidden::Mutation`], `byte-flipped-0`, `entry-dropped-0`, ...). Set, the
/// target asks the reference with that fault made instead, through [`planted`]: a drill of the
/// way a finding goes (found, its artefact written and replayed, promoted to a case).
pub const PLANT_VAR: &str = "GE_CONFORMANCE_FUZZ_PLANT";

/// The fault the drill plants in each target that drives the reference (target, mutation):
/// reached by the target's seeds, so libFuzzer finds it as it loads them. CI's drill
/// (`.ci/run`) and `harness/tests/it/fuzz_plants.rs` run these.
pub const PLANTS: &[(&str, &str)] = &[
    ("options", "value-off-0"),
    ("values", "value-off-0"),
    ("lists", "value-off-0"),
    ("transfer", "fused-to-direct-0"),
    ("memory", "overlap-0"),
    ("session", "entry-dropped-0"),
    ("weights_paths", "byte-flipped-0"),
    ("weights_fs", "byte-flipped-0"),
];

/// The targets a fault can be planted in: those that drive the reference.
pub fn plantable(target: &Target) -> bool {
    !matches!(target.name, "differential" | "allowed" | "cabi")
}

/// Target `target` with a planted fault: the scenario its input stands for
/// ([`Target::scenario`], within the size caps), asked of `engine` (the reference with one
/// forbidden mutation made) and judged as [`differential`] judges at the default level. The
/// fault is a finding when the input reaches it: a panic naming the engine, the clause and the
/// scenario, which libFuzzer keeps as a crash artefact, and which `ge-conformance promote
/// --target <target> --backend 'exec:ge-conformance serve-reference --mutation <name>'`
/// turns into a case.
pub fn planted(target: &Target, engine: &crate::forbidden::Engine, data: &[u8]) -> Verdict {
    match target.scenario(data).filter(small) {
        Some(s) => differential_on(&Judging::DEFAULT, engine, &s),
        None => Verdict::Reject,
    }
}

/// 64 bits from `data` (FNV-1a): which alternatives an [`allowed`] input combines.
fn picks_of(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One target of the `fuzz/` project, as the `corpus` and `promote` commands and the
/// regression replay see it.
#[derive(Debug)]
pub struct Target {
    /// The name of the target (its file under `fuzz/fuzz_targets/`).
    pub name: &'static str,
    /// The function the target calls. For `differential` and `cabi` this pairs the reference
    /// with itself; the fuzz binaries pair it with the example vendor engine and with the engine
    /// loaded through the C ABI.
    pub run: fn(&[u8]) -> Verdict,
    /// The capability whose cases seed the target, or `None` for every case.
    pub seeded_by: Option<ge_spec::Capability>,
}

fn differential_reference(data: &[u8]) -> Verdict {
    differential(&STRICT, &ge_reference::Reference, data)
}

/// Every target that reads input (`empty` and `floor`, the throughput baselines, do not).
pub const TARGETS: &[Target] = &[
    Target {
        name: "options",
        run: options,
        seeded_by: Some(ge_spec::Capability::Options),
    },
    Target {
        name: "values",
        run: values,
        seeded_by: Some(ge_spec::Capability::Options),
    },
    Target {
        name: "lists",
        run: lists,
        seeded_by: Some(ge_spec::Capability::Options),
    },
    Target {
        name: "transfer",
        run: transfer,
        seeded_by: Some(ge_spec::Capability::Transfer),
    },
    Target {
        name: "memory",
        run: memory,
        seeded_by: Some(ge_spec::Capability::Memory),
    },
    Target {
        name: "session",
        run: session,
        seeded_by: Some(ge_spec::Capability::Session),
    },
    Target {
        name: "weights_paths",
        run: weights_paths,
        seeded_by: Some(ge_spec::Capability::Weights),
    },
    Target {
        name: "weights_fs",
        run: weights_fs,
        seeded_by: Some(ge_spec::Capability::Weights),
    },
    Target {
        name: "differential",
        run: differential_reference,
        seeded_by: None,
    },
    Target {
        name: "allowed",
        run: allowed,
        seeded_by: None,
    },
    // The differential target over an engine behind the C ABI (`fuzz/fuzz_targets/cabi.rs`):
    // the same inputs and seeds.
    Target {
        name: "cabi",
        run: differential_reference,
        seeded_by: None,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

impl Target {
    /// Seed inputs from the case tables and the boundary catalogue ([`crate::gen::boundaries`]):
    /// (file name, JSON bytes), one per scenario the target can read, cases in table order first. Scenario targets get the capability's scenario; `differential`
    /// gets every case with its `capability` tag; `lists` only the option cases that set a
    /// list option. Cases whose scenario is over [`MAX_SEED_BYTES`] are left out.
    pub fn seeds(&self, spec: &Spec) -> Vec<(String, Vec<u8>)> {
        use ge_spec::Scenario;
        let mut out = Vec::new();
        let cases = spec.cases().iter().map(|case| {
            (
                format!("{}__{}", case.table, case.case.name),
                case.case.scenario.clone(),
            )
        });
        // Then the boundary catalogue of every capability (`boundary__<capability>-<n>`).
        let boundaries = ge_spec::Capability::ALL.into_iter().flat_map(|c| {
            crate::gen::boundary_scenarios(c)
                .into_iter()
                .enumerate()
                .map(move |(i, s)| (format!("boundary__{c}-{i:04}"), s))
        });
        for (name, scenario) in cases.chain(boundaries) {
            let s = &scenario;
            let json = match (self.seeded_by, s) {
                (None, _) => serde_json::to_vec(s),
                (Some(c), _) if c != s.capability() => continue,
                (_, Scenario::Options(o)) => {
                    let keys: &[OptionKey] = match self.name {
                        "lists" => &LIST_KEYS,
                        "values" => &OptionKey::ALL,
                        _ => &[],
                    };
                    if !keys.is_empty() && first_set(o, keys).is_none() {
                        continue;
                    }
                    serde_json::to_vec(o)
                }
                (_, Scenario::Transfer(t)) => serde_json::to_vec(t),
                (_, Scenario::Memory(m)) => serde_json::to_vec(m),
                (_, Scenario::Session(x)) => serde_json::to_vec(x),
                (_, Scenario::Weights(w)) => serde_json::to_vec(w),
            };
            match json {
                // A boundary scenario past what the target decodes (a list longer than its
                // string cap) is left to the targets that read it.
                Ok(bytes)
                    if bytes.len() <= MAX_SEED_BYTES
                        && (!name.starts_with("boundary__") || self.scenario(&bytes).is_some()) =>
                {
                    out.push((format!("{name}.json"), bytes))
                }
                _ => {}
            }
        }
        out
    }

    /// The scenario an input of this target stands for, so a finding can become a case. An
    /// `options` input becomes the options scenario it resolves; `values` and `lists` inputs
    /// become an options scenario setting their one value.
    pub fn scenario(&self, data: &[u8]) -> Option<ge_spec::Scenario> {
        use ge_spec::vocab::{GraphFacts, OptionsScenario};
        use ge_spec::Scenario;
        let options_scenario = |options: OptionMaps, ctx: Context| {
            Scenario::Options(OptionsScenario {
                options,
                graph: GraphFacts {
                    inputs: ctx.inputs.unwrap_or(1),
                    outputs: ctx.outputs.unwrap_or(1),
                    shape: ctx.shape,
                },
                run_mode: ctx.run_mode,
                product: ctx.product,
            })
        };
        Some(match self.name {
            "options" => {
                let (maps, ctx) = options_input(data)?;
                options_scenario(maps, ctx)
            }
            "lists" => {
                let (key, text, ctx) = lists_input(data)?;
                let mut maps = OptionMaps::default();
                maps.graph.insert(key.as_str().to_owned(), text);
                options_scenario(maps, ctx)
            }
            "values" => {
                let (key, level, text, ctx) = values_input(data)?;
                let mut maps = OptionMaps::default();
                maps.at_mut(level).insert(key.as_str().to_owned(), text);
                options_scenario(maps, ctx)
            }
            "transfer" => Scenario::Transfer(decode(data)?),
            "memory" => Scenario::Memory(decode(data)?),
            "session" => Scenario::Session(session_input(data)?),
            "weights_paths" | "weights_fs" => {
                if is_json(data) {
                    Scenario::Weights(serde_json::from_slice(data).ok()?)
                } else {
                    Scenario::Weights(
                        WeightsScenario::arbitrary(&mut Unstructured::new(data)).ok()?,
                    )
                }
            }
            _ => decode(data)?,
        })
    }
}

/// Runs `target` on `rounds` inputs of seeded pseudo-random bytes (for `smoke` tests) and
/// returns how many it kept.
pub fn smoke(target: impl Fn(&[u8]) -> Verdict, rounds: u32) -> u32 {
    let mut kept = 0;
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut buf = Vec::new();
    for round in 0..rounds {
        buf.clear();
        let len = (round as usize * 7) % 512;
        for _ in 0..len {
            // xorshift64*: deterministic, good enough to spread bytes.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            buf.push((state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8);
        }
        if target(&buf) == Verdict::Keep {
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_reads_the_seeds_written_for_it() {
        let spec = Spec::embedded();
        for t in TARGETS {
            let seeds = t.seeds(spec);
            assert!(!seeds.is_empty(), "{} has no seeds", t.name);
            let kept = seeds
                .iter()
                .filter(|(_, bytes)| (t.run)(bytes) == Verdict::Keep)
                .count();
            // Some cases are bigger than the targets' caps; most must get through.
            assert!(
                kept * 2 > seeds.len(),
                "{}: only {kept} of {} seeds kept",
                t.name,
                seeds.len()
            );
            for (name, bytes) in &seeds {
                assert!(
                    t.scenario(bytes).is_some(),
                    "{}: seed {name} does not decode to a scenario",
                    t.name
                );
            }
        }
    }

    /// Option maps decode as `BTreeMap`'s own `Arbitrary` decodes them, three in a row, when
    /// each holds at most [`MAX_ENTRIES`] keys (the same maps, and the same bytes left for the
    /// fields after them); an input whose maps that decoding would take past the cap, or that
    /// it refuses, is refused. A load's own map decodes as `Option<BTreeMap>`'s `Arbitrary`
    /// does, under the same cap. Over 20,000 inputs of mostly small bytes (short strings, a
    /// third of the inputs with flags that keep every map going), maps within the cap and past
    /// it are both met, for both.
    #[test]
    fn option_maps_draw_as_btreemaps_do_up_to_the_cap() {
        use proptest::prelude::Rng;
        use proptest::test_runner::{RngAlgorithm, TestRng};
        use std::collections::BTreeMap;
        type Map = BTreeMap<String, String>;
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut next = || rng.next_u64();
        let (mut same, mut past_cap, mut refused) = (0, 0, 0);
        let mut loads = [0, 0];
        for _ in 0..20_000 {
            let len = (next() % 400) as usize;
            // A third of the inputs small odd bytes: every flag keeps its map going, and
            // the lengths (drawn from the end) stay short.
            let odd = next() % 3 == 0;
            let data: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    _ if odd => (next() % 8) as u8 | 1,
                    0 => next() as u8,
                    1 => (next() % 128) as u8,
                    _ => (next() % 10) as u8,
                })
                .collect();
            let mut u_old = Unstructured::new(&data);
            let old = (|| -> arbitrary::Result<[Map; 3]> {
                Ok([
                    Map::arbitrary(&mut u_old)?,
                    Map::arbitrary(&mut u_old)?,
                    Map::arbitrary(&mut u_old)?,
                ])
            })();
            let mut u_new = Unstructured::new(&data);
            let new = OptionMaps::arbitrary(&mut u_new);
            // A load's own map: `Option`'s draw, its map as the three above.
            let mut u_load_old = Unstructured::new(&data);
            let load_old = Option::<Map>::arbitrary(&mut u_load_old);
            let mut u_load = Unstructured::new(&data);
            match (load_old, ge_spec::vocab::drawn_optional_map(&mut u_load)) {
                (Ok(old), new) if old.as_ref().is_none_or(|m| m.len() <= MAX_ENTRIES) => {
                    assert_eq!(new.ok(), Some(old), "a load's map within the cap decodes");
                    assert_eq!(u_load.len(), u_load_old.len(), "the same bytes are left");
                    loads[0] += 1;
                }
                (Ok(_), new) => {
                    assert!(new.is_err(), "a load's map past the cap is refused");
                    loads[1] += 1;
                }
                (Err(_), new) => assert!(new.is_err()),
            }
            match old {
                Ok(maps) if maps.iter().all(|m| m.len() <= MAX_ENTRIES) => {
                    let new = new.expect("maps within the cap decode");
                    assert_eq!([new.global, new.session, new.graph], maps);
                    assert_eq!(u_new.len(), u_old.len(), "the same bytes are left");
                    same += 1;
                }
                Ok(_) => {
                    assert!(new.is_err(), "a map past the cap is refused");
                    past_cap += 1;
                }
                Err(_) => {
                    assert!(new.is_err());
                    refused += 1;
                }
            }
        }
        eprintln!("within the cap {same}, past it {past_cap}, refused {refused}; loads {loads:?}");
        assert!(
            same > 1000 && past_cap > 1000 && loads[0] > 1000 && loads[1] > 1000,
            "{same} {past_cap} {refused} {loads:?}"
        );
    }

    #[test]
    fn smoke_options() {
        let kept = smoke(options, 2000);
        eprintln!("options: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_values() {
        let kept = smoke(values, 2000);
        eprintln!("values: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_lists() {
        let kept = smoke(lists, 2000);
        eprintln!("lists: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_transfer() {
        let kept = smoke(transfer, 2000);
        eprintln!("transfer: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_memory() {
        let kept = smoke(memory, 2000);
        eprintln!("memory: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_session() {
        let kept = smoke(session, 2000);
        eprintln!("session: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    /// The session target's scripts often run with one of the twelve options set: the values
    /// drawn at the options' edges keep most scripts from being refused over their options.
    #[test]
    fn session_scripts_often_run_with_options_set() {
        let (drawn, ran) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        smoke(
            |data| {
                let Some(s) = session_input(data) else {
                    return Verdict::Reject;
                };
                drawn.set(drawn.get() + 1);
                let set =
                    |m: &BTreeMap<String, String>| m.keys().any(|k| k.parse::<OptionKey>().is_ok());
                let sets = Level::ALL.iter().any(|l| set(s.options.at(*l)))
                    || s.events.iter().any(
                        |e| matches!(e, SessionEvent::Load { options: Some(m), .. } if set(m)),
                    );
                let runs = ge_reference::session::run(Profile::Documented, &s)
                    .is_ok_and(|o| !o.trace.is_empty());
                if sets && runs {
                    ran.set(ran.get() + 1);
                }
                Verdict::Keep
            },
            2000,
        );
        eprintln!(
            "session: {} of {} scripts ran with options set",
            ran.get(),
            drawn.get()
        );
        assert!(
            ran.get() * 10 > drawn.get(),
            "{} of {}",
            ran.get(),
            drawn.get()
        );
    }

    #[test]
    fn smoke_weights_paths() {
        let kept = smoke(weights_paths, 2000);
        eprintln!("weights_paths: kept {kept} of 2000");
        assert!(kept > 2000 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_weights_fs() {
        let kept = smoke(weights_fs, 300);
        eprintln!("weights_fs: kept {kept} of 300");
        assert!(kept > 300 / 50, "the target rejects almost everything");
    }

    #[test]
    fn smoke_allowed() {
        let kept = smoke(allowed, 500);
        eprintln!("allowed: kept {kept} of 500");
        assert!(kept > 25, "the target rejects almost everything");
    }

    #[test]
    fn smoke_differential() {
        let kept = smoke(|d| differential(&STRICT, &ge_reference::Reference, d), 500);
        eprintln!("differential: kept {kept} of 500");
        assert!(kept > 25, "the target rejects almost everything");
    }
}
