//! Expectations (waivers): a TOML file listing cases or clauses known to fail, each with a
//! reason, a tracker reference and an expiry date. A waived failure is reported as waived; a
//! waived case that passes, or an expired entry, fails the run; an entry matching nothing is stale.
//! A pattern naming a trial waives that trial's failure whole; one naming a clause waives that
//! clause's failures wherever they occur, inside a property too, and nothing else: a trial that
//! also fails on a clause no waiver names still fails.
//!
//! ```toml
//! [[waive]]
//! match = "transfer/*-sync-*"      # a case name or a clause ID; `*` and `?` are globs
//! reason = "sync run still fuses"
//! tracker = "ENG-1234"
//! expires = "2027-03-31"
//! ```

use serde::{Deserialize, Serialize};

/// One waiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    /// Glob over full case names (`table/case`), property names or clause IDs.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Why the failure is accepted for now.
    pub reason: String,
    /// Where the fix is tracked.
    pub tracker: String,
    /// Last day the waiver holds, `YYYY-MM-DD`: a real calendar date, checked as the file is
    /// read, so an impossible one (`2099-02-31`, `0000-01-01`) is refused with its line.
    #[serde(deserialize_with = "calendar_date")]
    pub expires: String,
    /// Set when the pattern is meant to cover every case of a capability, or every clause of
    /// the suite: without it such a waiver is refused (`certify::check_waivers`), since it
    /// waives whatever that part of the engine gets wrong.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broad: bool,
    /// The pattern as the `glob` crate reads it, made on first use: each trial checks every
    /// waiver, and a file of many waivers made each check compile them all again.
    #[serde(skip)]
    compiled: Compiled,
}

/// A waiver's pattern, compiled once; no part of what a waiver is (equal whatever it holds).
#[derive(Debug, Clone, Default)]
struct Compiled(std::sync::OnceLock<Option<::glob::Pattern>>);

impl PartialEq for Compiled {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Compiled {}

impl Waiver {
    /// True when the pattern matches `text`, as [`glob`] says: a pattern without `*`, `?` or
    /// `[` only when it is `text`.
    pub fn matches(&self, text: &str) -> bool {
        if !self.is_glob() {
            return self.pattern == text;
        }
        self.compiled
            .0
            .get_or_init(|| ::glob::Pattern::new(&self.pattern).ok())
            .as_ref()
            .is_some_and(|p| p.matches_with(text, GLOB_OPTIONS))
    }

    /// True when the pattern is a glob (`*`, `?` or `[`) rather than one trial or clause: such a
    /// waiver accepts failures among the trials it covers and does not insist that each of
    /// them fails (see `certify::apply_waivers`).
    pub fn is_glob(&self) -> bool {
        self.pattern.contains(['*', '?', '['])
    }
}

/// Reads `expires`, refusing anything that is not a real date written `YYYY-MM-DD`.
fn calendar_date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text = String::deserialize(d)?;
    match Date::parse(&text) {
        Some(_) => Ok(text),
        None => Err(serde::de::Error::custom(format!(
            "`expires` must be a real date written YYYY-MM-DD (year 0001 to 9999), not {text:?}"
        ))),
    }
}

/// A parsed expectations file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The waivers.
    #[serde(default)]
    pub waive: Vec<Waiver>,
}

/// Something wrong with an expectations file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpectationsError {
    /// Not TOML, or not of the expected shape.
    #[error("expectations file: {0}")]
    Parse(String),
    /// An entry is incomplete or malformed.
    #[error("expectations entry {index} (`{pattern}`): {why}")]
    Entry {
        /// 1-based position in the file.
        index: usize,
        /// Its pattern.
        pattern: String,
        /// What is wrong.
        why: String,
    },
}

/// A calendar date, compared as (year, month, day).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date(pub u32, pub u32, pub u32);

impl Date {
    /// Parses `YYYY-MM-DD`: four digits, two and two, a day that exists in the proleptic
    /// Gregorian calendar, from year 1.
    pub fn parse(text: &str) -> Option<Date> {
        let b = text.as_bytes();
        let shaped = b.len() == 10
            && b.iter().enumerate().all(|(i, c)| {
                if i == 4 || i == 7 {
                    *c == b'-'
                } else {
                    c.is_ascii_digit()
                }
            });
        if !shaped {
            return None;
        }
        let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().ok();
        let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
        let last = crate::clock::days_in_month(i64::from(year), month);
        (year >= 1 && (1..=last).contains(&day)).then_some(Date(year, month, day))
    }

    /// Today (UTC), from the system clock.
    pub fn today() -> Date {
        let (year, month, day) = crate::clock::date_of(std::time::SystemTime::now());
        Date(u32::try_from(year).unwrap_or(1), month, day)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.0, self.1, self.2)
    }
}

/// Glob match of a waiver pattern (the `glob` crate's syntax: `*` any run, `?` one character,
/// `[...]` one of a set), across `/` too, so `transfer-*` covers every table that starts so. A
/// pattern the crate cannot read matches nothing ([`Expectations::parse`] refuses it first).
pub fn glob(pattern: &str, text: &str) -> bool {
    ::glob::Pattern::new(pattern).is_ok_and(|p| p.matches_with(text, GLOB_OPTIONS))
}

/// How waiver patterns match: case-sensitive, `*` across `/`, no special leading dot.
const GLOB_OPTIONS: ::glob::MatchOptions = ::glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

impl Expectations {
    /// Parses and checks an expectations file.
    pub fn parse(text: &str) -> Result<Expectations, ExpectationsError> {
        let parsed: Expectations = toml::from_str(text)
            .map_err(|e| ExpectationsError::Parse(e.to_string().trim_end().to_owned()))?;
        for (i, w) in parsed.waive.iter().enumerate() {
            let bad = |why: &str| ExpectationsError::Entry {
                index: i + 1,
                pattern: w.pattern.clone(),
                why: why.to_owned(),
            };
            if w.pattern.trim().is_empty() {
                return Err(bad("`match` is empty"));
            }
            if w.reason.trim().is_empty() {
                return Err(bad("every waiver needs a reason"));
            }
            if w.tracker.trim().is_empty() {
                return Err(bad("every waiver needs a tracker reference"));
            }
            if let Err(e) = ::glob::Pattern::new(&w.pattern) {
                return Err(bad(&format!("`match` is not a glob pattern: {e}")));
            }
        }
        Ok(parsed)
    }

    /// The waivers that match a trial with this name and these clauses.
    pub fn matching<'a>(
        &'a self,
        name: &'a str,
        clauses: &'a [String],
    ) -> impl Iterator<Item = (usize, &'a Waiver)> + 'a {
        self.waive
            .iter()
            .enumerate()
            .filter(move |(_, w)| w.matches(name) || clauses.iter().any(|c| w.matches(c)))
    }

    /// The waivers whose pattern matches the trial name `name` itself.
    pub fn naming_trial<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Waiver> + 'a {
        self.waive.iter().filter(move |w| w.matches(name))
    }

    /// The first waiver whose pattern matches the clause ID `clause`.
    pub fn for_clause(&self, clause: &str) -> Option<&Waiver> {
        self.waive.iter().find(|w| w.matches(clause))
    }

    /// The waivers whose expiry date is before `today`.
    pub fn expired(&self, today: Date) -> Vec<&Waiver> {
        self.waive
            .iter()
            .filter(|w| Date::parse(&w.expires).is_some_and(|d| d < today))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let parsed = Expectations::parse(
            "[[waive]]\nmatch = \"IFS-01?\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2099-01-01\"\n\
             [[waive]]\nmatch = \"transfer-examples/x\"\nreason = \"r\"\ntracker = \"T\"\nexpires = \"2099-01-01\"\n",
        )
        .expect("parses");
        for text in [
            "IFS-010",
            "IFS-0100",
            "transfer-examples/x",
            "transfer-examples/xy",
            "",
        ] {
            for w in &parsed.waive {
                assert_eq!(
                    w.matches(text),
                    glob(&w.pattern, text),
                    "{} on {text}",
                    w.pattern
                );
                // Compiled once, the same answer again.
                assert_eq!(
                    w.matches(text),
                    glob(&w.pattern, text),
                    "{} on {text}",
                    w.pattern
                );
            }
        }
        assert!(glob("transfer/*", "transfer/a-b"));
        assert!(glob("IFS-01?", "IFS-010"));
        assert!(!glob("IFS-01?", "IFS-0100"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(glob(
            "options-*/ibc-*",
            "options-levels/ibc-at-graph-takes-effect"
        ));
        assert!(glob("IFS-00[12]", "IFS-002"));
        assert!(!glob("IFS-00[12]", "IFS-003"));
        // `*` crosses `/`: a table's glob covers its cases.
        assert!(glob("*/acp-*", "options-values/acp-rejects-1"));
    }

    #[test]
    fn a_pattern_that_is_no_glob_is_refused_with_its_entry() {
        let file = "[[waive]]\nmatch = \"options-[values/*\"\nreason = \"r\"\ntracker = \"T-1\"\nexpires = \"2099-01-01\"\n";
        match Expectations::parse(file) {
            Err(e @ ExpectationsError::Entry { index: 1, .. }) => {
                assert!(e.to_string().contains("not a glob pattern"), "{e}")
            }
            other => panic!("expected the entry refused, got {other:?}"),
        }
    }

    #[test]
    fn dates() {
        assert_eq!(Date::parse("2027-01-31"), Some(Date(2027, 1, 31)));
        assert_eq!(Date::parse("2027-13-01"), None);
        assert_eq!(Date::parse("27-01-31"), None);
        for impossible in [
            "2099-02-31",
            "2027-02-29",
            "1900-02-29",
            "0000-01-01",
            "2027-04-31",
        ] {
            assert_eq!(Date::parse(impossible), None, "{impossible}");
        }
        for real in ["2028-02-29", "2000-02-29", "0001-01-01", "9999-12-31"] {
            assert!(Date::parse(real).is_some(), "{real}");
        }
        assert!(Date::today() > Date(2024, 1, 1));
    }

    #[test]
    fn entries_need_reason_tracker_and_date() {
        let ok = "[[waive]]\nmatch = \"a/*\"\nreason = \"r\"\ntracker = \"T-1\"\nexpires = \"2030-01-01\"\n";
        assert_eq!(Expectations::parse(ok).unwrap().waive.len(), 1);
        for (from, to) in [
            ("reason = \"r\"", "reason = \"\""),
            ("tracker = \"T-1\"", "tracker = \" \""),
        ] {
            assert!(matches!(
                Expectations::parse(&ok.replace(from, to)),
                Err(ExpectationsError::Entry { .. })
            ));
        }
        // A date is checked as the file is read, so the error names its line.
        assert!(matches!(
            Expectations::parse(&ok.replace("2030-01-01", "soon")),
            Err(ExpectationsError::Parse(e)) if e.contains("line 5")
        ));
        assert!(matches!(
            Expectations::parse("[[waive]]\nmatch = 1\n"),
            Err(ExpectationsError::Parse(_))
        ));
        assert!(matches!(
            Expectations::parse(&ok.replace("match", "mtch")),
            Err(ExpectationsError::Parse(_))
        ));
    }
}
