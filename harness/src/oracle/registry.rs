//! The registry of checks, keyed by clause ID: every check of every capability's oracle, with
//! the clauses it charges written out literally (so that `grep` for a clause ID in
//! `harness/src` finds its check), the phase whose table runs it, and where its function is
//! defined. [`super::judge`] runs these tables; `ge-conformance explain ID` prints
//! [`of`]`(ID)`.
//!
//! Some clauses no function judges: their cases' `expect` patterns and the comparison with the
//! reference do ([`Kind::Patterns`], each with its reason).

use ge_spec::Capability;

use super::sites::{self, Site};
use super::{memory, options, session, transfer, weights, Phase};

/// How a check is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// By its oracle's driver, in the table of the phase named ("a plan's fusion
    /// (documented)").
    Table(&'static str),
    /// Directly, where named ("by the driver", "by the reading of the options"): a check that
    /// computes what the phases after it read, stops its phase, or runs under a reading of the
    /// options.
    Called(&'static str),
    /// By no function: its cases' `expect` patterns and the comparison with the reference
    /// judge the clause, for the reason given.
    Patterns(&'static str),
}

/// One check of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// The clause IDs it charges.
    pub clauses: &'static [&'static str],
    /// The capability whose oracle holds it.
    pub capability: Capability,
    /// Its function, as a path under the oracle's module (`check_sharing`,
    /// `upstream::judge`); empty for [`Kind::Patterns`].
    pub name: &'static str,
    /// How it is run.
    pub kind: Kind,
}

impl Check {
    /// The file its function is in: `harness/src/oracle/<capability>.rs`, or
    /// `harness/src/oracle/<capability>/<module>.rs` for a name `module::function`.
    pub fn file(&self) -> String {
        match self.name.rsplit_once("::") {
            Some((module, _)) => format!(
                "harness/src/oracle/{}/{}.rs",
                self.capability,
                module.replace("::", "/")
            ),
            None => format!("harness/src/oracle/{}.rs", self.capability),
        }
    }

    /// Its function's own name (`judge` for `upstream::judge`).
    pub fn function(&self) -> &'static str {
        self.name.rsplit("::").next().unwrap_or(self.name)
    }

    /// Where its function is defined (`None` for [`Kind::Patterns`]).
    pub fn site(&self) -> Option<Site> {
        match self.kind {
            Kind::Patterns(_) => None,
            _ => sites::function(&self.file(), self.function()),
        }
    }
}

/// The clauses no function judges, with why: their cases' `expect` patterns and the comparison
/// of generated scenarios with the reference judge them.
const PATTERNS: &[(&str, Capability, &str)] = &[
    (
        "MEM-001",
        Capability::Memory,
        "the errors of an invalid scenario are the vocabulary's own validation, compared whole",
    ),
    (
        "OPT-009",
        Capability::Options,
        "the spelling of products is the vocabulary's: a scenario names one, no answer does",
    ),
    (
        "OPT-010",
        Capability::Options,
        "the index options at another level are judged as OPT-002's warning and ignored value",
    ),
    (
        "SES-016",
        Capability::Session,
        "which map applies to a graph is the replay's reading; the answer shows only its effect",
    ),
    (
        "TRF-004",
        Capability::Transfer,
        "the options layer's diagnostics are compared whole, each under its own clause",
    ),
    (
        "WGT-003",
        Capability::Weights,
        "a directory created or reused shows only as the files written in it",
    ),
    (
        "EWD-012",
        Capability::Weights,
        "a directory created with its parents shows only as the files written in it",
    ),
    (
        "FBR-015",
        Capability::Session,
        "the error's form (key, subject) is compared whole with the refusal FBR-011 calls for",
    ),
    (
        "IBC-014",
        Capability::Transfer,
        "the count of user inputs is the batch-copy checks' reading, judged as their clauses",
    ),
    (
        "IFS-013",
        Capability::Transfer,
        "a worked example: its case's plan, judged by the fusion checks it illustrates",
    ),
    (
        "IFS-014",
        Capability::Transfer,
        "a worked example: its case's plan, judged by the fusion checks it illustrates",
    ),
    (
        "IFS-015",
        Capability::Transfer,
        "the units of the source text: the cases' sizes are written in bytes by it",
    ),
    (
        "IFS-019",
        Capability::Transfer,
        "the exact comparison with the threshold is IFS-011's check, at its boundary cases",
    ),
    (
        "IFS-020",
        Capability::Transfer,
        "a threshold beyond 64 bits is IFS-001's rejection, made by the reading of the options",
    ),
];

/// Every check of the registry: each capability's phases in the order their drivers run them,
/// then the checks they call directly, then the clauses judged by patterns only.
pub fn all() -> impl Iterator<Item = Check> {
    let phases: [(Capability, Vec<Phase>); 5] = [
        (Capability::Options, options::phases()),
        (Capability::Transfer, transfer::phases()),
        (Capability::Memory, memory::phases()),
        (Capability::Session, session::phases()),
        (Capability::Weights, weights::phases()),
    ];
    let checks = phases.into_iter().flat_map(|(capability, phases)| {
        phases.into_iter().flat_map(move |phase| {
            let kind = if phase.tabled {
                Kind::Table(phase.name)
            } else {
                Kind::Called(phase.name)
            };
            phase.checks.into_iter().map(move |(clauses, name)| Check {
                clauses,
                capability,
                name,
                kind,
            })
        })
    });
    let patterns = PATTERNS.iter().map(|(clause, capability, why)| Check {
        clauses: std::slice::from_ref(clause),
        capability: *capability,
        name: "",
        kind: Kind::Patterns(why),
    });
    checks.chain(patterns)
}

/// The checks that charge `clause`, in the order of [`all`].
pub fn of(clause: &str) -> Vec<Check> {
    all().filter(|c| c.clauses.contains(&clause)).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use ge_spec::tables::Grammar;
    use ge_spec::{OptionKey, Spec};

    use super::*;

    /// The sources of the oracles and of this registry, each line with its file.
    fn oracle_sources() -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/oracle");
        let mut text = String::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    text.push_str(&std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        text
    }

    #[test]
    fn every_clause_of_the_spec_is_in_the_registry_literally() {
        let sources = oracle_sources();
        let spec = Spec::embedded();
        let missing: Vec<&str> = spec
            .clauses()
            .map(|c| c.id.as_str())
            .filter(|id| of(id).is_empty() || !sources.contains(&format!("\"{id}\"")))
            .collect();
        assert!(
            missing.is_empty(),
            "clauses no registry entry names: {missing:?}"
        );
        // And the registry names no clause the spec lacks.
        let unknown: Vec<&str> = all()
            .flat_map(|c| c.clauses.iter().copied())
            .filter(|id| spec.clause(id).is_none())
            .collect();
        assert!(unknown.is_empty(), "no such clauses: {unknown:?}");
    }

    #[test]
    fn every_check_resolves_to_the_definition_of_its_function() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for check in all().filter(|c| !matches!(c.kind, Kind::Patterns(_))) {
            let site = check
                .site()
                .unwrap_or_else(|| panic!("{} in {}: no such function", check.name, check.file()));
            let text = std::fs::read_to_string(repo.join(site.file)).unwrap();
            let line = text.lines().nth(site.line as usize - 1).unwrap();
            assert!(
                line.contains(&format!("fn {}", check.function())),
                "{check:?}: {line}"
            );
        }
    }

    #[test]
    fn a_check_lists_every_clause_its_function_names() {
        let mut unlisted_all = Vec::new();
        for check in all().filter(|c| !matches!(c.kind, Kind::Patterns(_))) {
            let file = check.file();
            let named: BTreeSet<&str> = sites::SITES
                .iter()
                .filter(|(id, f, _, n)| {
                    *f == file && *n == check.function() && !id.starts_with(['@', '#'])
                })
                .map(|(id, ..)| *id)
                .collect();
            let listed: BTreeSet<&str> = check.clauses.iter().copied().collect();
            let unlisted: Vec<&&str> = named.difference(&listed).collect();
            if !unlisted.is_empty() {
                unlisted_all.push(format!("{} names {unlisted:?}", check.name));
            }
        }
        assert!(
            unlisted_all.is_empty(),
            "clauses named but not listed: {unlisted_all:#?}"
        );
    }

    /// The clause `clause(key, n)` makes.
    fn numbered(key: OptionKey, n: u32) -> String {
        format!("{}-{n:03}", key.clause_prefix())
    }

    /// What the options oracle's function `name` can charge by number: `clause(key, N)` for
    /// the keys it applies to and the numbers it uses, and the numbers it uses.
    fn producible(name: &str) -> (BTreeSet<String>, Vec<u32>) {
        let spec = Spec::embedded();
        let grammar = |g: Grammar| move |k: &OptionKey| spec.option(*k).grammar == g;
        let keys = |f: &dyn Fn(&OptionKey) -> bool| -> Vec<OptionKey> {
            OptionKey::ALL.iter().copied().filter(|k| f(k)).collect()
        };
        let make = |ks: Vec<OptionKey>, ns: &[u32]| -> BTreeSet<String> {
            ks.iter()
                .flat_map(|k| ns.iter().map(move |n| numbered(*k, *n)))
                .collect()
        };
        match name {
            "read_effective" => (make(keys(&|_| true), &[1]), vec![1]),
            "strict_enumeration" => (make(keys(&grammar(Grammar::Enumeration)), &[1]), vec![1]),
            "strict_range" => (make(keys(&grammar(Grammar::IntegerRange)), &[1]), vec![1]),
            "classify_indexes" => (make(keys(&grammar(Grammar::IndexList)), &[4]), vec![4]),
            "strict_indexes" | "upstream_indexes" => (
                make(keys(&grammar(Grammar::IndexList)), &[3, 4]),
                vec![3, 4],
            ),
            "valid" => (make(keys(&grammar(Grammar::IndexList)), &[5]), vec![5]),
            "documented_rule" => {
                // The value clause and clause 2 of any key, clause 3 of the two index lists,
                // and upstream the first of clauses 1 to 6 that records GE's behaviour.
                let mut all = make(keys(&|_| true), &[1, 2]);
                all.extend(make(keys(&grammar(Grammar::IndexList)), &[3]));
                for k in OptionKey::ALL {
                    for n in 1..=6 {
                        let id = numbered(k, n);
                        if spec.clause(&id).is_some_and(|c| c.diverges()) {
                            all.insert(id);
                        }
                    }
                }
                (all, vec![1, 2, 3, 4, 5, 6])
            }
            _ => (BTreeSet::new(), Vec::new()),
        }
    }

    #[test]
    fn the_clauses_charged_by_number_are_listed_exactly() {
        let options = |f: &str| {
            f == "harness/src/oracle/options.rs" || f.starts_with("harness/src/oracle/options/")
        };
        let prefixes: BTreeSet<&str> = OptionKey::ALL.iter().map(|k| k.clause_prefix()).collect();
        let by_number: BTreeSet<&str> = sites::SITES
            .iter()
            .filter(|(id, f, ..)| id.starts_with('@') && options(f))
            .map(|(.., n)| *n)
            .collect();
        let checks: Vec<Check> = all()
            .filter(|c| c.capability == Capability::Options && by_number.contains(c.function()))
            .collect();
        let registered: BTreeSet<&str> = checks.iter().map(|c| c.function()).collect();
        // `value_clause` is `clause(key, 1)` itself, charged where it is called.
        let charging: BTreeSet<&str> = by_number
            .into_iter()
            .filter(|n| *n != "value_clause")
            .collect();
        assert_eq!(
            registered, charging,
            "every function charging by number is registered"
        );
        for check in checks {
            let (want, numbers) = producible(check.function());
            let used: Vec<u32> = sites::SITES
                .iter()
                .filter(|(id, f, _, n)| {
                    *f == check.file() && *n == check.function() && id.starts_with('@')
                })
                .filter_map(|(id, ..)| id[1..].parse().ok())
                .collect();
            assert!(
                used.iter().all(|n| numbers.contains(n)),
                "{} charges clause numbers {used:?}; the test knows {numbers:?}",
                check.name
            );
            let listed: BTreeSet<String> = check
                .clauses
                .iter()
                .filter(|id| prefixes.contains(&id[..3]))
                .map(|id| id.to_string())
                .collect();
            assert_eq!(
                listed, want,
                "{}: the listed clauses charged by number",
                check.name
            );
        }
        assert!(of("IRM-003")
            .iter()
            .any(|c| c.function() == "strict_indexes"));
    }

    #[test]
    fn the_clauses_judged_by_patterns_say_why() {
        let spec = Spec::embedded();
        for (id, capability, why) in PATTERNS {
            assert!(spec.clause(id).is_some(), "{id}");
            assert!(!why.is_empty() && !why.contains('\n'), "{id}: one line");
            assert!(of(id).iter().any(|c| c.capability == *capability));
        }
        assert_eq!(PATTERNS.len(), 14);
    }
}
