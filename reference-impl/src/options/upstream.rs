//! The upstream profile of the option parser: how the open-source GE implementation reads a
//! value where that departs from the documented grammar (lenient numbers, switches that only
//! look for an exact `1`, values never validated). Each rule cites the clause whose `upstream`
//! entry describes it.

use ge_spec::{Diagnostic, Level, OptionKey, ShapeKind, Subject};

use super::{Parsed, Parser};

/// The largest fusion threshold GE's code keeps: larger ones are clamped to it. A fact about
/// GE's code, read from IFS-001's upstream entry (`constants.clamp`); without one, nothing is
/// clamped, and the upstream cases above the maximum fail.
fn fusion_clamp() -> u64 {
    ge_spec::Spec::embedded()
        .upstream_constant(
            &format!("{}-001", OptionKey::InputFusionSize.clause_prefix()),
            "clamp",
        )
        .unwrap_or(u64::MAX)
}

/// A switch that upstream never validates: only the exact string `1` turns it on.
fn switch(raw: &str) -> Parsed {
    Parsed::Enum(if raw == "1" { "1" } else { "0" }.to_owned())
}

/// C's `isspace` in the "C" locale: what upstream's number readers skip before a number.
fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A lenient number, read the way C's `strtol` family reads one: leading whitespace skipped,
/// an optional sign, then as many digits as there are; whatever follows is ignored. `None` when
/// no digit follows; the magnitude saturates at `u64::MAX`.
fn lenient(text: &str) -> Option<(bool, u64)> {
    let bytes = text.as_bytes();
    let mut i = bytes.iter().take_while(|b| c_space(**b)).count();
    let negative = match bytes.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits: Vec<u8> = bytes[i..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    if digits.is_empty() {
        return None;
    }
    let magnitude = digits.iter().fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Some((negative, magnitude))
}

/// A pair side read as C++'s `std::stoul` reads it (64-bit `unsigned long`): leading whitespace,
/// an optional `+`, then the digits there are; trailing text is ignored. `None` when no digit
/// follows or the number is past 2^64 - 1 (GE catches the exception and skips the pair).
fn unsigned_long(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let mut i = bytes.iter().take_while(|b| c_space(**b)).count();
    if bytes.get(i) == Some(&b'+') {
        i += 1;
    }
    let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit());
    let mut any = false;
    let mut n: u64 = 0;
    for d in digits {
        any = true;
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    any.then_some(n)
}

/// An index-list item under upstream's rule: a 32-bit integer whose characters after the first
/// are all digits (so the first may be a space, a sign or a digit). `Err` when it is not one.
fn index_item(item: &str) -> Result<i64, ()> {
    let bytes = item.as_bytes();
    let (first, rest) = bytes.split_first().ok_or(())?;
    if !rest.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    if !(first.is_ascii_digit() || c_space(*first) || *first == b'+' || *first == b'-') {
        return Err(());
    }
    match lenient(item) {
        Some((negative, n)) => {
            let value = if negative {
                -i64::try_from(n).map_err(|_| ())?
            } else {
                i64::try_from(n).map_err(|_| ())?
            };
            if i32::try_from(value).is_ok() {
                Ok(value)
            } else {
                Err(())
            }
        }
        None => Err(()),
    }
}

/// Where GE makes the check that refuses a value, as (step, order): initialisation (0),
/// session creation (1), graph addition (2), compilation (3) and build (4), and the order of
/// the checks across them (OPT-011's upstream entry). GE returns at the first failing check.
fn check_order(key: OptionKey, level: Level) -> (u8, u8) {
    match (key, level) {
        (OptionKey::FeatureBaseRefreshable, Level::Global) => (0, 0),
        (OptionKey::DisableReuseMemory, Level::Global | Level::Session) => (1, 1),
        (OptionKey::FeatureBaseRefreshable, Level::Session) => (1, 2),
        (OptionKey::FeatureBaseRefreshable, Level::Graph) => (2, 3),
        (OptionKey::InputReuseMemIndexes, _) => (2, 4),
        (OptionKey::OutputReuseMemIndexes, _) => (2, 5),
        (OptionKey::OutputReuseInputMemIndexes, _) => (2, 6),
        (OptionKey::DisableReuseMemory, Level::Graph) => (3, 7),
        (OptionKey::AtomicCleanPolicy, _) => (3, 8),
        _ => (4, 9),
    }
}

/// The point at which GE makes the check refusing the value `d` names (OPT-011's upstream
/// entry, SES-017's): before any graph (initialisation or session creation), or with one graph
/// (its addition, compilation or build).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckPoint {
    /// Initialisation or session creation: nothing runs.
    Session,
    /// The graph's addition: the graph is never added.
    Addition,
    /// The graph's compilation or build: the graph stays added, unbuilt.
    Compilation,
}

/// Where GE refuses the value `d` names ([`CheckPoint`]); a diagnostic naming no option of the
/// twelve is taken as refused at the graph's build, the last step.
pub fn check_point(d: &Diagnostic) -> CheckPoint {
    let key = d.key.as_deref().and_then(|k| k.parse::<OptionKey>().ok());
    let step = match (key, d.level) {
        (Some(key), Some(level)) => check_order(key, level).0,
        _ => 4,
    };
    match step {
        0 | 1 => CheckPoint::Session,
        2 => CheckPoint::Addition,
        _ => CheckPoint::Compilation,
    }
}

/// The step whose entry check gives the level warnings (OPT-002) of `level`: the global list
/// at initialisation, the session list at session creation, the graph list at graph addition,
/// each before that step's own checks.
fn warning_step(level: Level) -> u8 {
    match level {
        Level::Global => 0,
        Level::Session => 1,
        Level::Graph => 2,
    }
}

/// OPT-011 upstream: GE stops at its first failing check. Of `errors` only the first in GE's
/// order is reported; of `warnings` only the level warnings of the steps GE reaches (the
/// reference gives no other warning once a check fails: the profile judges none of them). The
/// values refused later stay rejected: each is refused once the earlier one is mended.
pub(super) fn stop_at_first_failure(errors: &mut Vec<Diagnostic>, warnings: &mut Vec<Diagnostic>) {
    let order = |d: &Diagnostic| {
        let key = d.key.as_deref().and_then(|k| k.parse::<OptionKey>().ok());
        match (key, d.level) {
            (Some(key), Some(level)) => check_order(key, level),
            _ => (u8::MAX, u8::MAX),
        }
    };
    let Some(first) = errors.iter().min_by_key(|d| order(d)).cloned() else {
        return;
    };
    let reached = order(&first).0;
    *errors = vec![first];
    warnings
        .retain(|w| w.clause == "OPT-002" && w.level.is_some_and(|l| warning_step(l) <= reached));
}

impl Parser<'_> {
    /// Parses the value as upstream does; falls back to the documented grammar for the options
    /// where upstream checks exactly what the documentation says.
    pub(super) fn parse_upstream(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        let raw = self.raw;
        match key {
            OptionKey::AtomicCleanPolicy => match raw {
                "" | "0" => Ok(Parsed::Enum("0".into())),
                "1" => Ok(Parsed::Enum("1".into())),
                _ => Err(self.diag(
                    self.clause(1),
                    format!(
                        "{key} = {raw:?} at {} level is not empty, `0` or `1`; compiling the graph fails",
                        self.level
                    ),
                )),
            },
            // DRM-001 upstream: at compile FE checks the value it finds; an empty graph value
            // passes as unset and leaves reuse on.
            OptionKey::DisableReuseMemory if self.level == Level::Graph => match raw {
                "" | "0" => Ok(Parsed::Enum("0".into())),
                "1" => Ok(Parsed::Enum("1".into())),
                _ => Err(self.diag(
                    self.clause(1),
                    format!(
                        "{key} = {raw:?} at graph level is not empty, `0` or `1`; compiling the graph fails"
                    ),
                )),
            },
            OptionKey::ReuseZeroCopyMemory | OptionKey::InputBatchCpy => Ok(switch(raw)),
            OptionKey::StaticMemoryPolicy => Ok(Parsed::Enum(
                match raw {
                    "1" | "2" => "2",
                    "3" => "3",
                    "4" => "4",
                    _ => "0",
                }
                .to_owned(),
            )),
            OptionKey::InputFusionSize => Ok(Parsed::Int(self.upstream_fusion_size())),
            OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes => {
                self.upstream_indexes()
            }
            OptionKey::OutputReuseInputMemIndexes => self.upstream_pairs(),
            OptionKey::ExternalWeight => match raw {
                "" | "0" => Ok(Parsed::Enum("0".into())),
                "1" | "2" => Ok(Parsed::Enum(raw.to_owned())),
                _ => Err(self.diag(
                    self.clause(1),
                    format!(
                        "{key} = {raw:?} at {} level is not empty, `0`, `1` or `2`; compiling the graph fails",
                        self.level
                    ),
                )),
            },
            // EWD-004 upstream: never validated; a NUL byte is kept (the system sees the text
            // before it).
            OptionKey::ExternalWeightDir => Ok(Parsed::Path(raw.to_owned())),
            _ => self.parse(),
        }
    }

    /// IFS upstream: never an error. No number (or a negative one) is 0; above the maximum is
    /// clamped with a warning; leading whitespace and trailing junk are accepted.
    fn upstream_fusion_size(&mut self) -> u64 {
        let clamp = fusion_clamp();
        match lenient(self.raw) {
            None | Some((true, _)) => 0,
            Some((false, n)) if n > clamp => {
                let d = self.diag(
                    self.clause(1),
                    format!(
                        "{} = {:?} at {} level is above {clamp}; {clamp} is used",
                        self.spec.key, self.raw, self.level
                    ),
                );
                self.warnings.push(d);
                clamp
            }
            Some((false, n)) => n,
        }
    }

    /// IRM/ORM upstream: split on commas without trimming; each item a 32-bit integer whose
    /// characters after the first are digits; negative or repeated indexes are errors; an index
    /// not below the count is ignored with a warning.
    fn upstream_indexes(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        let (count, what) = match key {
            OptionKey::InputReuseMemIndexes => (self.ctx.inputs, "input"),
            _ => (self.ctx.outputs, "output"),
        };
        if self.raw.is_empty() {
            return Err(self
                .diag(self.clause(4), format!("{key} is empty"))
                .subject(Subject::item("")));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut kept = Vec::new();
        for item in self.raw.split(',') {
            if item.is_empty() {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key} = {:?} has an empty item", self.raw),
                    )
                    .subject(Subject::item("")));
            }
            let Ok(index) = index_item(item) else {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key}: item {item:?} is not a 32-bit integer with digits after its first character"),
                    )
                    .subject(Subject::item(item)));
            };
            if index < 0 {
                return Err(self
                    .diag(self.clause(4), format!("{key}: index {item} is negative"))
                    .subject(Subject::item(item)));
            }
            if !seen.insert(index) {
                return Err(self
                    .diag(
                        self.clause(4),
                        format!("{key}: index {index} is listed twice"),
                    )
                    .subject(Subject::index(index.unsigned_abs())));
            }
            // Non-negative and within i32 here, so it fits a u32.
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            if self.ctx.shape == ShapeKind::Dynamic {
                // IRM-005 / ORM-005 upstream: on a dynamic-shape graph the list is checked for
                // form only and never read: no index takes effect, none is warned about.
                continue;
            }
            if count.is_none_or(|c| index < c) {
                kept.push(index);
            } else {
                self.warn_out_of_range(&index.to_string(), count, what);
            }
        }
        kept.sort_unstable();
        Ok(Parsed::Indexes(kept))
    }

    /// ORI upstream: lenient. Empty segments and segments without a comma are skipped silently;
    /// a side with `-`, an unreadable pair or one past 64 bits is skipped with a warning;
    /// duplicates are kept; an index of a surviving pair out of range rejects the option, but
    /// only at graph level (ORI-002's upstream entry: other levels are checked at run time).
    fn upstream_pairs(&mut self) -> Result<Parsed, Diagnostic> {
        let key = self.spec.key;
        let mut pairs = Vec::new();
        for segment in self.raw.split('|') {
            let Some((left, right)) = segment.split_once(',') else {
                continue;
            };
            let skip = |parser: &mut Self, why: &str| {
                let d = parser
                    .diag(
                        parser.clause(6),
                        format!("{key}: pair {segment:?} {why}; it is skipped"),
                    )
                    .subject(Subject::pair(segment));
                parser.warnings.push(d);
            };
            if left.contains('-') || right.contains('-') {
                skip(self, "has a side with `-`");
                continue;
            }
            let (Some(input), Some(output)) = (unsigned_long(left), unsigned_long(right)) else {
                skip(self, "is not two readable 64-bit numbers");
                continue;
            };
            pairs.push((input, output, segment));
        }
        for (input, output, segment) in pairs.iter().filter(|_| self.level == Level::Graph) {
            let outside = self.ctx.inputs.is_some_and(|c| *input >= u64::from(c))
                || self.ctx.outputs.is_some_and(|c| *output >= u64::from(c));
            if outside {
                let counts = format!(
                    "{} input(s), {} output(s)",
                    self.ctx.inputs.map_or("?".into(), |c| c.to_string()),
                    self.ctx.outputs.map_or("?".into(), |c| c.to_string())
                );
                return Err(self
                    .diag(
                        self.clause(3),
                        format!("{key}: pair {input},{output} names an index outside the graph's {counts}"),
                    )
                    .subject(Subject::pair(*segment)));
            }
        }
        let mut pairs: Vec<(u64, u64)> = pairs.into_iter().map(|(i, o, _)| (i, o)).collect();
        pairs.sort_unstable();
        // GE keeps a pair given twice twice, but checks each the same way on every run, so it
        // means the pair once: one spelling (OPT-007).
        pairs.dedup();
        Ok(Parsed::Pairs(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_numbers_read_like_strtol() {
        assert_eq!(lenient("100KB"), Some((false, 100)));
        assert_eq!(lenient("  +7"), Some((false, 7)));
        assert_eq!(lenient("-5"), Some((true, 5)));
        assert_eq!(lenient("abc"), None);
        assert_eq!(lenient(""), None);
        assert_eq!(lenient("99999999999999999999999"), Some((false, u64::MAX)));
    }

    #[test]
    fn index_items_follow_the_digit_rule() {
        for ok in ["+1", "-0", "01", " 1", "7"] {
            assert!(index_item(ok).is_ok(), "{ok:?}");
        }
        for bad in ["1 ", "0x1", "1a", "a", "+", " ", "2147483648"] {
            assert!(index_item(bad).is_err(), "{bad:?}");
        }
        assert_eq!(index_item("-3"), Ok(-3));
    }

    #[test]
    fn pair_sides_read_like_stoul() {
        assert_eq!(unsigned_long("2147483648"), Some(2_147_483_648));
        assert_eq!(unsigned_long(" +7x"), Some(7));
        assert_eq!(unsigned_long("18446744073709551615"), Some(u64::MAX));
        assert_eq!(unsigned_long("18446744073709551616"), None);
        assert_eq!(unsigned_long("x1"), None);
        assert_eq!(unsigned_long(""), None);
    }
}
