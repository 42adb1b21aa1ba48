//! How verdicts are made: the one value that carries the profile and the conformance level
//! through the harness ([`Judging`]), and the weighing of a broken clause as a failure or a
//! deviation.
//!
//! A clause binds when it is documented (the source text states it), when under the upstream
//! profile it records a fact of GE (an `upstream` entry), or at level `strict`; breaking a
//! binding clause is a failure. Breaking a clause that does not bind (a reference-defined
//! choice of the suite, at level `documented`) is a deviation: reported, never a failure.

use ge_spec::{Conformance, Profile, Spec};

/// The harness's own safety rule, not a clause of the contract: a backend writes nothing
/// beside the sandbox it is given (through `..`, into the directory holding it; its own
/// `$TMPDIR` and `$HOME` are its scratch area, where a leftover is WGT-007's alone). It names
/// no clause of the tables, so it binds at every level and
/// under every profile: whatever the text says of weights, a backend that writes where it was
/// not asked is unsafe to run. It is reported beside the contract's clause (WGT-007).
pub const SANDBOX_RULE: &str = "SANDBOX-001";

/// The profile and the level a verdict is made under: passed down once, everywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Judging {
    /// Which behaviour of GE is certified (which cases run, which reference is compared with).
    pub profile: Profile,
    /// How much of the contract binds.
    pub level: Conformance,
}

impl Judging {
    /// The default: the documented profile at level `documented`.
    pub const DEFAULT: Judging = Judging {
        profile: Profile::Documented,
        level: Conformance::Documented,
    };

    /// `profile` at level `documented`.
    pub const fn new(profile: Profile, level: Conformance) -> Self {
        Judging { profile, level }
    }

    /// The same profile at level `strict`.
    pub const fn strict(self) -> Self {
        Judging {
            level: Conformance::Strict,
            ..self
        }
    }

    /// True when breaking `clause` is a failure. Anything that names no clause of the tables
    /// (a scenario answered with another capability, a backend that broke down) always binds.
    pub fn binds(&self, clause: &str) -> bool {
        Spec::embedded()
            .clause(clause)
            .is_none_or(|c| c.binds(self.profile, self.level))
    }

    /// The judging under `profile` at the lowest level where breaking `clause` fails:
    /// `documented` when the clause binds there, `strict` otherwise. Fault tests prove a wrong
    /// backend is caught on the clause it breaks, at the level that clause belongs to.
    pub fn failing(profile: Profile, clause: &str) -> Self {
        let doc = Judging::new(profile, Conformance::Documented);
        if doc.binds(clause) {
            doc
        } else {
            doc.strict()
        }
    }

    /// True when some violation binds.
    pub fn any_binding(&self, violations: &[Violation]) -> bool {
        violations.iter().any(|v| self.binds(&v.clause))
    }
}

/// One broken clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The clause broken.
    pub clause: String,
    /// What is wrong, for a person.
    pub message: String,
}

/// The longest message a [`Violation`] keeps, in bytes; the rest is cut where made, marked
/// `…`. A message quotes what the backend answered, and a report shows 2,048 bytes of one at
/// most: 65,000 extra errors each quoting 300 escaped bytes took the harness to 554 MB before
/// (round eight, H1).
pub const MAX_MESSAGE: usize = 1024;

impl Violation {
    /// A violation of `clause`, its message cut to [`MAX_MESSAGE`] bytes. The message is written
    /// until it passes the cut and no further, so a check may quote a whole list of the backend's
    /// (`format_args!("... {list:?}")`) without building it whole: one string of 16 MiB quoted
    /// with `{:?}` was a message of about 96 MiB, for a moment, before it was cut (round ten).
    pub fn new(clause: impl Into<String>, message: impl std::fmt::Display) -> Self {
        let mut capped = Capped(String::new());
        // An error here is the writer's own stop at the cut (or a `Display` that failed): what
        // was written stays.
        let _ = std::fmt::write(&mut capped, format_args!("{message}"));
        let mut message = capped.0;
        if message.len() > MAX_MESSAGE {
            let mut end = MAX_MESSAGE - '…'.len_utf8();
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        message.shrink_to_fit();
        Violation {
            clause: clause.into(),
            message,
        }
    }
}

/// `items` written one after another with `sep` between them, in a [`Violation`]'s message: the
/// writing stops at the message's cut, so a backend's whole list is never joined first.
pub(crate) struct Joined<'a, T>(pub &'a [T], pub &'a str);

impl<T: std::fmt::Display> std::fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// A message being written: it takes text up to a few bytes past [`MAX_MESSAGE`] (so that a cut
/// message is longer than the cap, and [`Violation::new`] marks it), then stops the writing.
struct Capped(String);

impl std::fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = (MAX_MESSAGE + 4).saturating_sub(self.0.len());
        if s.len() <= room {
            self.0.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        // `end` falls short of `room` by less than a character (at most 3 bytes): the message
        // is now past the cap, and marked as cut.
        self.0.push_str(&s[..end]);
        Err(std::fmt::Error)
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.clause, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_choices_bind_only_at_strict() {
        let doc = Judging::DEFAULT;
        assert!(doc.binds("ACP-001"), "documented");
        assert!(!doc.binds("OPT-001"), "reference-defined");
        assert!(doc.strict().binds("OPT-001"));
        assert!(doc.binds("SCENARIO") && doc.binds("no-such-clause"));
        // Under the upstream profile an `upstream` entry is a fact of GE: ORI-004 is the
        // suite's choice, but what GE does instead binds.
        let up = Judging::new(Profile::Upstream, Conformance::Documented);
        assert!(!doc.binds("ORI-004"));
        assert!(up.binds("ORI-004"));
        assert!(!up.binds("OPT-005"));
    }

    /// Writes `chunk` `times` times, counting the writes that were taken.
    struct Flood<'a> {
        chunk: &'a str,
        times: usize,
        taken: std::cell::Cell<usize>,
    }

    impl std::fmt::Display for Flood<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            for _ in 0..self.times {
                f.write_str(self.chunk)?;
                self.taken.set(self.taken.get() + 1);
            }
            Ok(())
        }
    }

    #[test]
    fn a_message_is_written_up_to_its_cut_and_no_further() {
        // 10 MB asked for, in chunks of 10 bytes: the writing stops just past the cap.
        let flood = Flood {
            chunk: "0123456789",
            times: 1_000_000,
            taken: 0.into(),
        };
        let v = Violation::new("X-001", &flood);
        assert_eq!(
            v.message.len(),
            MAX_MESSAGE - 3 + '…'.len_utf8(),
            "{}",
            v.message.len()
        );
        assert!(v.message.ends_with("…") && v.message.starts_with("0123456789"));
        assert!(
            flood.taken.get() <= MAX_MESSAGE / 10 + 1,
            "{} writes taken",
            flood.taken.get()
        );
        // One write larger than the cap is cut on a character boundary.
        let wide = "é".repeat(MAX_MESSAGE);
        let v = Violation::new("X-001", format_args!("{wide:?}"));
        assert!(v.message.len() <= MAX_MESSAGE && v.message.ends_with('…'));
        assert!(v.message.starts_with("\"éé"));
    }

    #[test]
    fn a_list_is_joined_as_it_is_written() {
        let few = ["a", "b", "c"];
        assert_eq!(
            Violation::new("X-001", Joined(&few, ", ")).message,
            "a, b, c"
        );
        let none: [&str; 0] = [];
        assert_eq!(Violation::new("X-001", Joined(&none, ", ")).message, "");
        // A million paths: the message stops at its cut.
        let many = vec!["/some/path".to_owned(); 1_000_000];
        let v = Violation::new("X-001", format_args!("reported {}", Joined(&many, ", ")));
        assert!(v.message.len() <= MAX_MESSAGE && v.message.ends_with('…'));
        assert!(v.message.starts_with("reported /some/path, /some/path"));
    }

    #[test]
    fn a_message_within_the_cap_is_kept_whole() {
        let exact = "a".repeat(MAX_MESSAGE);
        assert_eq!(Violation::new("X-001", &exact).message, exact);
        let over = "a".repeat(MAX_MESSAGE + 1);
        let cut = Violation::new("X-001", &over).message;
        assert_eq!(cut.len(), MAX_MESSAGE - 3 + '…'.len_utf8());
        assert!(cut.ends_with('…'));
        let v = Violation::new("X-001", format_args!("{} of {:?}", 2, ["a", "b"]));
        assert_eq!(v.message, "2 of [\"a\", \"b\"]");
        assert_eq!(v.clause, "X-001");
    }
}
