//! The edges of each option's values, read from its row of the options table: the values at
//! the ends of a range or set and the ones just outside, the bit width of a range and the
//! separators of a grammar. Generators and fuzz dictionaries take their bounds from here, so a
//! changed bound in the tables moves them too.

use crate::tables::{Grammar, OptionSpec};

/// Values at the edges of what one option accepts, in canonical decimal spelling.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edges {
    /// Values the table accepts, at the ends of the range (the smallest, the one above it, the
    /// one below the largest, the largest) or every value of an enumeration.
    pub accepted: Vec<String>,
    /// Values just outside: one past each end of a range (below zero spelt `-1`), and the
    /// integers next to an enumeration's values that are not among them.
    pub refused: Vec<String>,
}

impl Grammar {
    /// The characters that separate the parts of a value of this grammar: `,` between the
    /// indexes of a list, `,` within and `|` between the pairs of a pair list; none for the
    /// single-valued grammars. (Separators of a path are the filesystem's, not the grammar's.)
    pub fn separators(self) -> &'static [char] {
        match self {
            Grammar::IndexList => &[','],
            Grammar::PairList => &[',', '|'],
            Grammar::Enumeration | Grammar::IntegerRange | Grammar::Path => &[],
        }
    }
}

impl OptionSpec {
    /// The edges of this option's values (see [`Edges`]); empty for the grammars whose valid
    /// values depend on more than the option's row (lists, paths).
    pub fn edges(&self) -> Edges {
        let mut edges = Edges::default();
        match self.grammar {
            Grammar::IntegerRange => {
                let (Some(min), Some(max)) = (self.min, self.max) else {
                    return edges;
                };
                for v in [Some(min), min.checked_add(1), max.checked_sub(1), Some(max)]
                    .into_iter()
                    .flatten()
                    .filter(|v| (min..=max).contains(v))
                {
                    push_new(&mut edges.accepted, v.to_string());
                }
                push_new(&mut edges.refused, below(min));
                if let Some(past) = max.checked_add(1) {
                    push_new(&mut edges.refused, past.to_string());
                }
            }
            Grammar::Enumeration => {
                for v in &self.values {
                    push_new(&mut edges.accepted, v.value.clone());
                }
                let numbers: Vec<u64> = self
                    .values
                    .iter()
                    .filter_map(|v| v.value.parse().ok())
                    .collect();
                for n in &numbers {
                    let next = [
                        n.checked_sub(1).map(|m| m.to_string()),
                        n.checked_add(1).map(|m| m.to_string()),
                    ];
                    for text in next.into_iter().flatten() {
                        if !self.values.iter().any(|v| v.value == text) {
                            push_new(&mut edges.refused, text);
                        }
                    }
                }
                if numbers.contains(&0) {
                    push_new(&mut edges.refused, "-1".to_owned());
                }
            }
            Grammar::IndexList | Grammar::PairList | Grammar::Path => {}
        }
        edges
    }

    /// The default as a number, when the option has one and it is a decimal (the range's
    /// default threshold, an enumeration's `0`).
    pub fn default_number(&self) -> Option<u64> {
        self.default.as_deref()?.parse().ok()
    }

    /// The number of bits the largest value of a range needs (a `max` of 2^25 needs 26); `None`
    /// for the other grammars.
    pub fn range_bits(&self) -> Option<u32> {
        match self.grammar {
            Grammar::IntegerRange => self.max.map(|m| u64::BITS - m.leading_zeros()),
            _ => None,
        }
    }
}

/// The integer just below `min`, spelt as a decimal (a minus sign below zero).
fn below(min: u64) -> String {
    match min.checked_sub(1) {
        Some(v) => v.to_string(),
        None => "-1".to_owned(),
    }
}

fn push_new(list: &mut Vec<String>, value: String) {
    if !list.contains(&value) {
        list.push(value);
    }
}

#[cfg(test)]
mod tests {
    use crate::{OptionKey, Spec};

    fn row(key: OptionKey) -> &'static crate::OptionSpec {
        Spec::embedded().option(key)
    }

    #[test]
    fn a_range_has_its_ends_and_the_values_past_them() {
        let o = row(OptionKey::InputFusionSize);
        let (min, max) = (o.min.unwrap(), o.max.unwrap());
        let e = o.edges();
        for v in [min, min + 1, max - 1, max] {
            assert!(e.accepted.contains(&v.to_string()), "{e:?}");
        }
        assert!(e.refused.contains(&(max + 1).to_string()), "{e:?}");
        assert!(e.refused.contains(&"-1".to_owned()), "{e:?}");
        assert_eq!(o.range_bits(), Some(u64::BITS - max.leading_zeros()));
        assert!(1u64 << o.range_bits().unwrap() > max);
    }

    #[test]
    fn an_enumeration_refuses_its_neighbours_that_are_not_values() {
        for o in Spec::embedded().options() {
            let e = o.edges();
            for v in &o.values {
                assert!(e.accepted.contains(&v.value));
                assert!(
                    !e.refused.contains(&v.value),
                    "{} refuses its own {}",
                    o.key,
                    v.value
                );
            }
            if o.grammar == crate::Grammar::Enumeration {
                assert!(!e.refused.is_empty(), "{}: nothing just outside", o.key);
            }
        }
    }

    #[test]
    fn list_grammars_name_their_separators() {
        assert_eq!(crate::Grammar::IndexList.separators(), &[',']);
        assert_eq!(crate::Grammar::PairList.separators(), &[',', '|']);
        assert!(row(OptionKey::InputReuseMemIndexes)
            .edges()
            .accepted
            .is_empty());
    }
}
