//! Where the library judges each clause: the functions that name its ID, found in the sources
//! when the crate is built (`build.rs`), so that `ge-conformance explain ID` leads from a clause
//! to its check in one hop and cannot point at a line that moved.

use ge_spec::OptionKey;

include!(concat!(env!("OUT_DIR"), "/check_sites.rs"));

/// One function of the library that judges a clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// The file, relative to the repository (`harness/src/oracle/weights.rs`).
    pub file: &'static str,
    /// The line the function is defined on.
    pub line: u32,
    /// The function's name (empty for an item outside any function).
    pub function: &'static str,
    /// True where the function charges an option's clause by its number (the options oracle's
    /// `clause(key, N)`) rather than by its ID.
    pub by_number: bool,
}

impl Site {
    /// `harness/src/oracle/weights.rs:1188`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// The number of an option's clause (`IRM-004` is 4), if `clause` is one.
fn option_clause_number(clause: &str) -> Option<u32> {
    let (prefix, number) = clause.split_once('-')?;
    OptionKey::ALL
        .iter()
        .any(|k| k.clause_prefix() == prefix)
        .then(|| number.parse().ok())
        .flatten()
}

/// Every function of the library that judges `clause`, in file and line order: those that name
/// it, then those that charge it by its number as an option's clause.
pub fn of(clause: &str) -> Vec<Site> {
    let by_number = option_clause_number(clause).map(|n| format!("@{n}"));
    let named = SITES
        .iter()
        .filter(|(id, ..)| *id == clause && !id.starts_with('#'));
    let numbered = SITES
        .iter()
        .filter(|(id, ..)| by_number.as_deref() == Some(*id));
    named
        .chain(numbered)
        .map(|(id, file, line, function)| Site {
            file,
            line: *line,
            function,
            by_number: id.starts_with('@'),
        })
        .collect()
}

/// Where the function `name` of the oracle file `file` (`harness/src/oracle/weights.rs`) is
/// defined, if it is one (the first of that name in the file).
pub fn function(file: &str, name: &str) -> Option<Site> {
    FUNCTIONS
        .iter()
        .find(|(f, _, n)| *f == file && *n == name)
        .map(|(file, line, function)| Site {
            file,
            line: *line,
            function,
            by_number: false,
        })
}

/// A judge that charges whatever clause a case or a comparison names, rather than clauses of
/// its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generic {
    /// Judges a table case's answer: its pattern, its oracle, its diagnostics.
    Cases,
    /// Matches a case's `expect` pattern against an answer.
    Pattern,
    /// Compares a generated scenario's answer with the reference's, after its oracle.
    Reference,
}

impl Generic {
    fn key(self) -> &'static str {
        match self {
            Generic::Cases => "#cases",
            Generic::Pattern => "#pattern",
            Generic::Reference => "#reference",
        }
    }
}

/// Where `judge` is defined (`build.rs` stops the build when it is not found).
pub fn generic(judge: Generic) -> Site {
    SITES
        .iter()
        .find(|(id, ..)| *id == judge.key())
        .map(|(_, file, line, function)| Site {
            file,
            line: *line,
            function,
            by_number: false,
        })
        .unwrap_or(Site {
            file: "",
            line: 0,
            function: "",
            by_number: false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line `site` points at, read from the sources.
    fn line_of(site: &Site) -> String {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(repo.join(site.file)).unwrap();
        text.lines().nth(site.line as usize - 1).unwrap().to_owned()
    }

    #[test]
    fn every_site_points_at_the_definition_of_its_function() {
        for (id, file, line, function) in SITES.iter().filter(|s| !s.3.is_empty()) {
            let site = Site {
                file,
                line: *line,
                function,
                by_number: false,
            };
            let text = line_of(&site);
            assert!(
                text.contains(&format!("fn {function}")),
                "{id} at {}: {text:?} does not define {function}",
                site.location()
            );
        }
    }

    #[test]
    fn a_clause_leads_to_the_functions_that_name_it_and_those_that_number_it() {
        let wgt = of("WGT-007");
        assert!(wgt
            .iter()
            .any(|s| s.file == "harness/src/oracle/weights.rs" && !s.by_number));
        let irm = of("IRM-004");
        assert!(irm
            .iter()
            .any(|s| s.file.starts_with("harness/src/oracle/options") && s.by_number));
        // Numbers apply to options' clauses only.
        assert!(of("MEM-004").iter().all(|s| !s.by_number));
        assert!(of("NOT-A-CLAUSE").is_empty());
    }

    #[test]
    fn the_generic_judges_are_found() {
        for (judge, name) in [
            (Generic::Cases, "judge_observation"),
            (Generic::Pattern, "check"),
            (Generic::Reference, "compare"),
        ] {
            let site = generic(judge);
            assert_eq!(site.function, name);
            assert!(line_of(&site).contains(&format!("fn {name}")));
        }
    }

    #[test]
    fn every_clause_is_named_by_a_function_or_judged_through_its_cases() {
        let spec = ge_spec::Spec::embedded();
        let lost: Vec<&str> = spec
            .clauses()
            .filter(|c| of(&c.id).is_empty() && spec.cases_for(&c.id).next().is_none())
            .map(|c| c.id.as_str())
            .collect();
        assert!(lost.is_empty(), "clauses no judge reaches: {lost:?}");
    }
}
