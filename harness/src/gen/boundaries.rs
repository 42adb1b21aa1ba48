//! The boundary catalogue: deterministic scenarios at the edges of what the vocabulary's numbers
//! and lists hold, judged before any random scenario of a property and written into the fuzz
//! corpus, so a region the random generators reach rarely is reached on every run.
//!
//! Today it covers the options capability, which every other capability reads its options
//! through: every option set at every level to each of its interesting values and to the
//! numbers around 2^8, 2^16, 2^31, 2^32, 2^53, 2^63 and 2^64 (each minus one, itself, plus one),
//! and the three list options at the lengths 0, 1, 8, 9, 64 and 1,024.

use ge_spec::vocab::{GraphFacts, OptionsScenario};
use ge_spec::{Level, OptionKey, OptionMaps, Product, RunMode, ShapeKind};

use super::options::interesting_values;

/// The powers of two whose neighbourhoods are tried: the widths integers are read into.
pub const POWERS: [u32; 7] = [8, 16, 31, 32, 53, 63, 64];

/// The list lengths tried: empty, one, around eight (a fixed-size buffer), and long.
pub const LIST_LENGTHS: [usize; 6] = [0, 1, 8, 9, 64, 1024];

/// The decimal numbers around each power of [`POWERS`] (2^k - 1, 2^k, 2^k + 1), ascending.
pub fn numbers() -> Vec<String> {
    let mut out = Vec::new();
    for k in POWERS {
        let p = 1u128 << k;
        for n in [p - 1, p, p + 1] {
            out.push(n.to_string());
        }
    }
    out
}

/// A list value of `key` with `n` entries, each naming index `i` (pairs name input and output
/// `i`): every entry is in range for a graph of `n` inputs and outputs.
fn list_of(key: OptionKey, n: usize) -> String {
    let items = (0..n).map(|i| match key {
        OptionKey::OutputReuseInputMemIndexes => format!("{i},{i}"),
        _ => i.to_string(),
    });
    let sep = if key == OptionKey::OutputReuseInputMemIndexes {
        "|"
    } else {
        ","
    };
    items.collect::<Vec<_>>().join(sep)
}

/// One options scenario setting `key` to `value` at `level` alone, for a static graph of
/// `count` inputs and outputs, run asynchronously on the default product.
fn single(key: OptionKey, level: Level, value: &str, count: u32) -> OptionsScenario {
    let mut options = OptionMaps::default();
    let map = match level {
        Level::Global => &mut options.global,
        Level::Session => &mut options.session,
        Level::Graph => &mut options.graph,
    };
    map.insert(key.as_str().to_owned(), value.to_owned());
    OptionsScenario {
        options,
        graph: GraphFacts {
            inputs: count,
            outputs: count,
            shape: ShapeKind::Static,
        },
        run_mode: RunMode::Async,
        product: Product::default(),
    }
}

/// The options catalogue: for every option and level, each interesting value and each boundary
/// number alone (a number is also tried as the index and as either side of a pair), then each
/// list option at every length of [`LIST_LENGTHS`], once with every entry in range and once
/// on a graph of eight inputs and outputs, where the entries from the ninth on are not.
pub fn options() -> Vec<OptionsScenario> {
    let numbers = numbers();
    let mut out = Vec::new();
    for key in OptionKey::ALL {
        let mut values: Vec<String> = interesting_values(key)
            .into_iter()
            .map(str::to_owned)
            .collect();
        for n in &numbers {
            if key == OptionKey::OutputReuseInputMemIndexes {
                values.push(format!("{n},0"));
                values.push(format!("0,{n}"));
            } else {
                values.push(n.clone());
            }
        }
        for level in Level::ALL {
            for v in &values {
                out.push(single(key, level, v, 2));
            }
        }
    }
    for key in [
        OptionKey::InputReuseMemIndexes,
        OptionKey::OutputReuseMemIndexes,
        OptionKey::OutputReuseInputMemIndexes,
    ] {
        for n in LIST_LENGTHS {
            let value = list_of(key, n);
            let all_in_range = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
            for level in Level::ALL {
                out.push(single(key, level, &value, all_in_range));
                out.push(single(key, level, &value, 8));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_straddle_every_width() {
        let n = numbers();
        assert_eq!(n.len(), 3 * POWERS.len());
        for s in [
            "255",
            "256",
            "257",
            "2147483648",
            "4294967295",
            "4294967296",
            "4294967297",
        ] {
            assert!(n.iter().any(|x| x == s), "{s}");
        }
        assert_eq!(n.last().map(String::as_str), Some("18446744073709551617"));
    }

    #[test]
    fn every_option_is_tried_at_every_level_and_lists_at_every_length() {
        let all = options();
        for key in OptionKey::ALL {
            for level in Level::ALL {
                assert!(
                    all.iter().any(|s| s
                        .options
                        .at(level)
                        .get(key.as_str())
                        .is_some_and(|v| v == "4294967296" || v == "4294967296,0")),
                    "{key} at {level}"
                );
            }
        }
        for n in LIST_LENGTHS {
            let value = list_of(OptionKey::InputReuseMemIndexes, n);
            let items = if value.is_empty() {
                0
            } else {
                value.split(',').count()
            };
            assert_eq!(items, n);
            assert!(all
                .iter()
                .any(|s| s.options.graph.get("ge.exec.inputReuseMemIndexes") == Some(&value)));
        }
        assert_eq!(list_of(OptionKey::OutputReuseInputMemIndexes, 2), "0,0|1,1");
    }
}
