//! The logic behind every fuzz target. Each `fuzz/fuzz_targets/*.rs` is a few lines that call one
//! function here; the function decodes typed input with `arbitrary`, rejects input that is not
//! interesting (too big, or not of the shape the target wants) and panics only on a real bug:
//! a broken invariant or a disagreement with the reference. `smoke` tests feed seeded random
//! bytes so `cargo test` exercises every target.

use arbitrary::{Arbitrary, Unstructured};
use ge_reference::options::{resolve, Context};
use ge_spec::{Level, OptionKey, OptionMaps, Product, RunMode, ShapeKind, Spec};

/// What a fuzz target tells libFuzzer about one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Interesting: keep it in the corpus.
    Keep,
    /// Not interesting (too big, malformed for this target): do not add it to the corpus.
    Reject,
}

/// Caps on generated input so each execution stays fast.
pub const MAX_STRING: usize = 64;
/// At most this many entries per level.
pub const MAX_ENTRIES: usize = 8;

fn key_or_other(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    if u.ratio(7u8, 8u8)? {
        Ok(OptionKey::arbitrary(u)?.as_str().to_owned())
    } else {
        let s: &str = u.arbitrary()?;
        Ok(s.chars().take(MAX_STRING).collect())
    }
}

fn value(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let s: &str = u.arbitrary()?;
    Ok(s.chars().take(MAX_STRING).collect())
}

/// Option maps at the three levels, from raw bytes.
pub fn option_maps(u: &mut Unstructured<'_>) -> arbitrary::Result<OptionMaps> {
    let mut maps = OptionMaps::default();
    for level in Level::ALL {
        let n = u.int_in_range(0..=MAX_ENTRIES)?;
        for _ in 0..n {
            let k = key_or_other(u)?;
            let v = value(u)?;
            maps.at_mut(level).insert(k, v);
        }
    }
    Ok(maps)
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

/// Target `options`: arbitrary strings at arbitrary levels through the option layer. Checks that
/// every diagnostic names an existing clause, that every key is either in force or rejected,
/// and that every value in force resolves to itself when set again.
pub fn options(data: &[u8]) -> Verdict {
    let mut u = Unstructured::new(data);
    let (Ok(maps), Ok(ctx)) = (option_maps(&mut u), context(&mut u)) else {
        return Verdict::Reject;
    };
    let r = resolve(&maps, ctx);
    let spec = Spec::embedded();
    let o = &r.observation;
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
        if eff.from == ge_spec::Source::Default || eff.value.is_empty() {
            continue;
        }
        let k: OptionKey = key.parse().expect("effective keys are option keys");
        let level = *spec.option(k).levels.last().expect("a level");
        let mut again = OptionMaps::default();
        again.at_mut(level).insert(key.clone(), eff.value.clone());
        let r2 = resolve(&again, ctx);
        assert_eq!(
            r2.observation.effective.get(key).map(|e| &e.value),
            Some(&eff.value),
            "canonical value of {key} does not round-trip"
        );
    }
    Verdict::Keep
}

/// Target `lists`: one arbitrary string as each list option (index lists and the pair list) at
/// graph level, with arbitrary counts. Checks that acceptance and canonical spelling agree with
/// a direct reading of the grammar.
pub fn lists(data: &[u8]) -> Verdict {
    let mut u = Unstructured::new(data);
    let (Ok(text), Ok(ctx)) = (value(&mut u), context(&mut u)) else {
        return Verdict::Reject;
    };
    for key in [
        OptionKey::InputReuseMemIndexes,
        OptionKey::OutputReuseMemIndexes,
        OptionKey::OutputReuseInputMemIndexes,
    ] {
        let mut maps = OptionMaps::default();
        maps.graph.insert(key.as_str().to_owned(), text.clone());
        let o = resolve(&maps, ctx).observation;
        let accepted = o.effective.contains_key(key.as_str());
        let well_formed = !text.is_empty() && grammar_accepts(key, &text);
        if key != OptionKey::OutputReuseInputMemIndexes {
            assert_eq!(
                accepted, well_formed,
                "{key} = {text:?}: accepted {accepted}, grammar says {well_formed}"
            );
        } else if accepted {
            assert!(well_formed, "{key} = {text:?} accepted but malformed");
        }
        if let Some(eff) = o.effective.get(key.as_str()) {
            let parts: Vec<&str> = if eff.value.is_empty() {
                Vec::new()
            } else {
                eff.value.split([',', '|']).collect()
            };
            assert!(
                parts.iter().all(|p| p.parse::<u32>().is_ok()),
                "canonical value {:?}",
                eff.value
            );
        }
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
            let parts: Vec<_> = pair.split(',').collect();
            parts.len() == 2 && parts.iter().all(|p| strict(p))
        }),
        _ => {
            let items: Vec<_> = text.split(',').collect();
            let mut seen = std::collections::BTreeSet::new();
            items.iter().all(|i| strict(i) && seen.insert(*i))
        }
    }
}

/// Runs `target` on `rounds` inputs of seeded pseudo-random bytes (for `smoke` tests).
pub fn smoke(target: fn(&[u8]) -> Verdict, rounds: u32) {
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
        let _ = target(&buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke_options() {
        smoke(options, 2000);
    }

    #[test]
    fn smoke_lists() {
        smoke(lists, 2000);
    }
}
