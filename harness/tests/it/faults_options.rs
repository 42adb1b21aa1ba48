//! Deliberately wrong options backends, each breaking one rule the source text or our clauses
//! set. Every one must be caught by the clause it breaks, and the reference by nothing.

use crate::common;

use std::collections::BTreeSet;

use ge_conformance::judging::Judging;
use ge_conformance::runner::caught_clauses;
use ge_reference::Reference;
use ge_spec::vocab::{Capability, Effective, OptionsObservation, OptionsScenario};
use ge_spec::{Answer, Backend, Diagnostic, Level, OptionKey, Profile, Source};
use rstest::rstest;

/// One way of being wrong.
#[derive(Debug, Clone)]
enum Fault {
    /// Accepts values that break `clause`, reporting them as in force as written. Where the
    /// clause is one of the suite's grammar choices (OPT-003, IRM-004, ...), a value in force
    /// that is no number, index list or pair list at all breaks the option's documented value
    /// clause as well, and the row is named after that (`choice_variants.rs` has the choice
    /// alone: a lenient spelling read into what it spells).
    Accept(&'static str),
    /// Never emits warnings of `clause`.
    Silence(&'static str),
    /// Lets `key` take effect at `level`, where the source text says it does not.
    Leak(OptionKey, Level),
    /// The widest level wins instead of the narrowest.
    WidestWins,
    /// Drops keys outside the twelve instead of passing them through.
    DropPassthrough,
    /// Reports a wrong default for `key`.
    WrongDefault(OptionKey, &'static str),
    /// Keeps out-of-range indexes of `key` in force, without a warning.
    KeepOutOfRange(&'static str),
    /// Reports list values in the order given instead of canonical order.
    NoCanonicalOrder,
    /// Treats an unmet restriction (run mode, shape, product, input count, companion option)
    /// as an error that rejects the option.
    RestrictionRejects,
    /// Drops the whole list of `key` when one of its indexes is out of range (warning kept).
    DropWholeList(&'static str),
    /// Reports every diagnostic without its subject: the text's checks are made, the form is not
    /// the vocabulary's.
    NoSubjects,
    /// Reads every number in the value of `key` into 32 bits (integer width): `4294967296` is 0.
    Width32(OptionKey),
    /// Keeps the first eight items of the list `key` and drops the rest (length).
    DropAfterEighth(OptionKey),
    /// Skips the check of `key` at `level`: a value there that the reference refuses is taken
    /// as not set (a check one level never exercises).
    SkipCheckAt(OptionKey, Level),
}

/// `value` with every run of digits read into 32 bits, as `uint32_t` would hold it.
fn width32(value: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if !digits.is_empty() {
            let n = digits.parse::<u128>().map_or(0, |n| n % (1u128 << 32));
            out.push_str(&n.to_string());
            digits.clear();
        }
    };
    for c in value.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out);
    out
}

#[derive(Debug)]
struct Faulty(Fault);

fn level_source(level: Level) -> Source {
    level.into()
}

impl Backend for Faulty {
    fn name(&self) -> &str {
        "faulty-options"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }

    // Long because: one arm per fault of the table above, each the fault it names, read on its own.
    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut s = scenario.clone();
        match &self.0 {
            Fault::Width32(key) => {
                for level in Level::ALL {
                    if let Some(v) = s.options.at_mut(level).get_mut(key.as_str()) {
                        *v = width32(v);
                    }
                }
            }
            Fault::DropAfterEighth(key) => {
                let sep = if *key == OptionKey::OutputReuseInputMemIndexes {
                    '|'
                } else {
                    ','
                };
                for level in Level::ALL {
                    if let Some(v) = s.options.at_mut(level).get_mut(key.as_str()) {
                        *v = v
                            .split(sep)
                            .take(8)
                            .collect::<Vec<_>>()
                            .join(&sep.to_string());
                    }
                }
            }
            Fault::SkipCheckAt(key, level) => {
                let k = key.as_str();
                let narrower = Level::ALL
                    .into_iter()
                    .any(|l| l > *level && s.options.at(l).contains_key(k));
                if let (Some(v), false) = (s.options.at(*level).get(k).cloned(), narrower) {
                    let mut alone = OptionsScenario {
                        options: Default::default(),
                        ..s.clone()
                    };
                    alone.options.at_mut(*level).insert(k.to_owned(), v.clone());
                    if !Reference.options(&alone)?.rejected.is_empty() {
                        // Unchecked, the value goes into force as it is.
                        s.options.at_mut(*level).remove(k);
                        let mut o = Reference.options(&s)?;
                        o.effective.insert(
                            k.to_owned(),
                            Effective {
                                value: v,
                                from: level_source(*level),
                            },
                        );
                        return Ok(o);
                    }
                }
            }
            Fault::Leak(key, level) => {
                // Pretend the setting was made at a level where the option takes effect.
                if let Some(v) = s.options.at_mut(*level).remove(key.as_str()) {
                    let row = ge_spec::Spec::embedded().option(*key);
                    let target = *row.levels.last().expect("a level");
                    s.options
                        .at_mut(target)
                        .entry(key.as_str().to_owned())
                        .or_insert(v);
                    let mut o = Reference.options(&s)?;
                    if let Some(e) = o.effective.get_mut(key.as_str()) {
                        if e.from == level_source(target) {
                            e.from = level_source(*level);
                        }
                    }
                    return Ok(o);
                }
            }
            Fault::WidestWins => {
                for key in OptionKey::ALL {
                    let k = key.as_str();
                    let row = ge_spec::Spec::embedded().option(key);
                    let widest = Level::ALL
                        .into_iter()
                        .find(|l| row.takes_effect_at(*l) && s.options.at(*l).contains_key(k));
                    if let Some(w) = widest {
                        let v = s.options.at(w)[k].clone();
                        for l in Level::ALL {
                            if row.takes_effect_at(l) && l > w {
                                s.options.at_mut(l).insert(k.to_owned(), v.clone());
                            }
                        }
                        let mut o = Reference.options(&s)?;
                        if let Some(e) = o.effective.get_mut(k) {
                            e.from = level_source(w);
                        }
                        return Ok(o);
                    }
                }
            }
            _ => {}
        }
        let mut o = Reference.options(&s)?;
        match &self.0 {
            Fault::Accept(clause) => {
                let accepted: Vec<_> = o
                    .errors
                    .iter()
                    .filter(|e| e.clause == *clause)
                    .cloned()
                    .collect();
                o.errors.retain(|e| e.clause != *clause);
                for e in accepted {
                    let key = e.key.clone().unwrap_or_default();
                    // Only a value refused for this clause alone: one that also drops items
                    // (a warning about the key) would put those in force as well.
                    let about_key = |x: &Diagnostic| x.key.as_deref() == Some(key.as_str());
                    if !o.errors.iter().any(about_key)
                        && !o.warnings.iter().any(about_key)
                        && (clause.ends_with("-003")
                            || indexes_in_range(&s, &key, e.value.as_deref().unwrap_or_default()))
                    {
                        o.rejected.retain(|k| *k != key);
                        o.effective.insert(
                            key,
                            Effective {
                                value: e.value.clone().unwrap_or_default(),
                                from: level_source(e.level.unwrap_or(Level::Graph)),
                            },
                        );
                    }
                }
            }
            Fault::Silence(clause) => o.warnings.retain(|w| w.clause != *clause),
            Fault::DropWholeList(clause) => {
                for w in o.warnings.iter().filter(|w| w.clause == *clause) {
                    if let Some(e) = w.key.as_ref().and_then(|k| o.effective.get_mut(k)) {
                        e.value.clear();
                    }
                }
            }
            Fault::NoSubjects => {
                for d in o.errors.iter_mut().chain(o.warnings.iter_mut()) {
                    d.subject = Default::default();
                }
            }
            Fault::DropPassthrough => o.passthrough.clear(),
            Fault::WrongDefault(key, value) => {
                if let Some(e) = o.effective.get_mut(key.as_str()) {
                    if e.from == Source::Default {
                        e.value = (*value).to_owned();
                    }
                }
            }
            Fault::KeepOutOfRange(clause) => {
                let dropped: Vec<_> = o
                    .warnings
                    .iter()
                    .filter(|w| w.clause == *clause)
                    .cloned()
                    .collect();
                o.warnings.retain(|w| w.clause != *clause);
                for w in dropped {
                    if let (Some(k), Some(v)) = (w.key, w.value) {
                        if let Some(e) = o.effective.get_mut(&k) {
                            e.value = v;
                        }
                    }
                }
            }
            Fault::NoCanonicalOrder => {
                for level in Level::ALL {
                    for (k, v) in s.options.at(level) {
                        let list = k.contains("ReuseMemIndexes") || k.contains("ReuseInputMem");
                        if let Some(e) = o.effective.get_mut(k).filter(|_| list) {
                            if e.from == level_source(level) {
                                e.value = in_written_order(&e.value, v);
                            }
                        }
                    }
                }
            }
            Fault::RestrictionRejects => {
                const RESTRICTIONS: [&str; 7] = [
                    "IFS-003", "IFS-004", "IBC-003", "IBC-004", "IBC-005", "FBR-003", "EWD-003",
                ];
                let moved: Vec<_> = o
                    .warnings
                    .iter()
                    .filter(|w| RESTRICTIONS.contains(&w.clause.as_str()))
                    .cloned()
                    .collect();
                o.warnings
                    .retain(|w| !RESTRICTIONS.contains(&w.clause.as_str()));
                for w in moved {
                    if let Some(k) = &w.key {
                        o.effective.remove(k);
                        o.rejected.push(k.clone());
                    }
                    o.errors.push(w);
                }
            }
            _ => {}
        }
        o.canonicalize();
        Ok(o)
    }
}

/// Whether every index `value` names (an index or pair list of `key`) is within the graph's
/// counts: a value accepted with an index out of range would put that in force too, which the
/// text rules out (IRM-003, ORM-003, ORI-003).
fn indexes_in_range(s: &OptionsScenario, key: &str, value: &str) -> bool {
    let (inputs, outputs) = (u64::from(s.graph.inputs), u64::from(s.graph.outputs));
    let numbers = |text: &str| -> Vec<u64> {
        text.split([',', '|'])
            .filter_map(|n| n.trim().parse().ok())
            .collect()
    };
    match key {
        "ge.exec.inputReuseMemIndexes" => numbers(value).iter().all(|n| *n < inputs),
        "ge.exec.outputReuseMemIndexes" => numbers(value).iter().all(|n| *n < outputs),
        "ge.exec.outputReuseInputMemIndexes" => value.split('|').all(|pair| {
            let n = numbers(pair);
            n.first().is_none_or(|i| *i < inputs) && n.get(1).is_none_or(|o| *o < outputs)
        }),
        _ => true,
    }
}

/// The items of the canonical list `canonical` (indexes, or pairs joined by `|`) in the order
/// `written` names them: the same set, spelled as the user wrote it.
fn in_written_order(canonical: &str, written: &str) -> String {
    let sep = if canonical.contains('|') || written.contains('|') {
        '|'
    } else {
        ','
    };
    let written: Vec<&str> = written.split(sep).collect();
    let mut items: Vec<&str> = canonical.split(sep).collect();
    items.sort_by_key(|i| written.iter().position(|w| w == i).unwrap_or(usize::MAX));
    items.join(&sep.to_string())
}

#[rstest]
#[case::acp_accepts_out_of_set(Fault::Accept("ACP-001"), "ACP-001")]
#[case::acp_graph_level_counts(Fault::Leak(OptionKey::AtomicCleanPolicy, Level::Graph), "ACP-002")]
#[case::drm_accepts_out_of_set(Fault::Accept("DRM-001"), "DRM-001")]
#[case::drm_wrong_default(Fault::WrongDefault(OptionKey::DisableReuseMemory, "1"), "OPT-006")]
#[case::ifs_range_off_by_one(Fault::Accept("IFS-001"), "IFS-001")]
#[case::ifs_lenient_numbers(Fault::Accept("OPT-003"), "IFS-001")]
#[case::ifs_sync_run_silent(Fault::Silence("IFS-003"), "OPT-008")]
#[case::ifs_dynamic_shape_silent(Fault::Silence("IFS-004"), "OPT-008")]
#[case::irm_keeps_out_of_range(Fault::KeepOutOfRange("IRM-003"), "IRM-003")]
#[case::irm_accepts_malformed(Fault::Accept("IRM-004"), "IRM-001")]
#[case::irm_session_level_counts(
    Fault::Leak(OptionKey::InputReuseMemIndexes, Level::Session),
    "IRM-002"
)]
#[case::rzc_accepts_out_of_set(Fault::Accept("RZC-001"), "RZC-001")]
#[case::rzc_wrong_default(Fault::WrongDefault(OptionKey::ReuseZeroCopyMemory, "1"), "OPT-006")]
#[case::smp_accepts_one(Fault::Accept("SMP-001"), "SMP-001")]
#[case::smp_graph_level_counts(Fault::Leak(OptionKey::StaticMemoryPolicy, Level::Graph), "SMP-002")]
#[case::ori_accepts_out_of_range(Fault::Accept("ORI-003"), "ORI-003")]
#[case::ori_accepts_output_twice(Fault::Accept("ORI-004"), "ORI-004")]
#[case::ori_accepts_input_twice(Fault::Accept("ORI-005"), "ORI-005")]
#[case::ori_accepts_malformed(Fault::Accept("ORI-006"), "ORI-001")]
#[case::orm_keeps_out_of_range(Fault::KeepOutOfRange("ORM-003"), "ORM-003")]
#[case::orm_global_level_counts(
    Fault::Leak(OptionKey::OutputReuseMemIndexes, Level::Global),
    "ORM-002"
)]
#[case::orm_accepts_malformed(Fault::Accept("ORM-004"), "ORM-001")]
#[case::exw_accepts_out_of_set(Fault::Accept("EXW-001"), "EXW-001")]
#[case::exw_graph_level_counts(Fault::Leak(OptionKey::ExternalWeight, Level::Graph), "EXW-002")]
#[case::ewd_silent_without_external_weight(Fault::Silence("EWD-003"), "OPT-008")]
#[case::ewd_graph_level_counts(Fault::Leak(OptionKey::ExternalWeightDir, Level::Graph), "EWD-002")]
#[case::ibc_accepts_out_of_set(Fault::Accept("IBC-001"), "IBC-001")]
#[case::ibc_single_input_silent(Fault::Silence("IBC-003"), "OPT-008")]
#[case::ibc_unlisted_product_silent(Fault::Silence("IBC-004"), "OPT-008")]
#[case::ibc_sync_run_silent(Fault::Silence("IBC-005"), "OPT-008")]
#[case::fbr_accepts_out_of_set(Fault::Accept("FBR-001"), "FBR-001")]
#[case::fbr_dynamic_shape_silent(Fault::Silence("FBR-003"), "OPT-008")]
#[case::widest_level_wins(Fault::WidestWins, "OPT-001")]
#[case::ineffective_level_silent(Fault::Silence("OPT-002"), "OPT-002")]
#[case::passthrough_dropped(Fault::DropPassthrough, "OPT-004")]
#[case::lists_not_canonical(Fault::NoCanonicalOrder, "OPT-007")]
#[case::restriction_rejects(Fault::RestrictionRejects, "OPT-008")]
#[case::ewd_accepts_nul(Fault::Accept("EWD-004"), "EWD-004")]
#[case::irm_drops_whole_list(Fault::DropWholeList("IRM-003"), "IRM-005")]
#[case::orm_drops_whole_list(Fault::DropWholeList("ORM-003"), "ORM-005")]
#[case::diagnostics_without_subject(Fault::NoSubjects, "OPT-012")]
fn fault_is_caught_by_its_clause(#[case] fault: Fault, #[case] clause: &str) {
    let caught = caught_clauses(
        &Judging::failing(Profile::Documented, clause),
        &Faulty(fault.clone()),
        Some(Capability::Options),
    );
    assert!(
        caught.contains_key(clause),
        "{fault:?} should be caught by {clause}; caught by {:?}",
        caught.keys().collect::<Vec<_>>()
    );
    common::assert_no_failure_at_documented_for_a_choice(
        &fault,
        &Faulty(fault.clone()),
        Capability::Options,
        Profile::Documented,
        clause,
    );
    println!(
        "{fault:?} -> {clause} ({} failing case(s), e.g. {})",
        caught[clause].len(),
        caught[clause][0]
    );
}

/// Faults of the classes the random scenarios reach rarely: the default certification (its
/// table cases and the options property, whose boundary phase sets every option at every
/// level to the numbers around each integer width and the lists to every length of the
/// catalogue) fails each on the clause it breaks.
#[rstest]
#[case::ifs_read_into_32_bits(Fault::Width32(OptionKey::InputFusionSize), "IFS-001")]
#[case::irm_index_read_into_32_bits(Fault::Width32(OptionKey::InputReuseMemIndexes), "IRM-004")]
#[case::ori_index_read_into_32_bits(
    Fault::Width32(OptionKey::OutputReuseInputMemIndexes),
    "ORI-003"
)]
#[case::smp_read_into_32_bits(Fault::Width32(OptionKey::StaticMemoryPolicy), "SMP-001")]
#[case::irm_drops_items_after_the_eighth(
    Fault::DropAfterEighth(OptionKey::InputReuseMemIndexes),
    "IRM-003"
)]
#[case::ori_drops_pairs_after_the_eighth(
    Fault::DropAfterEighth(OptionKey::OutputReuseInputMemIndexes),
    "ORI-003"
)]
#[case::fbr_unchecked_at_session_level(
    Fault::SkipCheckAt(OptionKey::FeatureBaseRefreshable, Level::Session),
    "FBR-001"
)]
#[case::drm_unchecked_at_global_level(
    Fault::SkipCheckAt(OptionKey::DisableReuseMemory, Level::Global),
    "DRM-001"
)]
fn boundary_fault_is_caught_by_the_default_certification(
    #[case] fault: Fault,
    #[case] clause: &str,
) {
    common::assert_caught_in_certification(&fault, &Faulty(fault.clone()), "options", clause);
}

#[test]
fn the_reference_is_caught_by_nothing() {
    assert!(caught_clauses(&Judging::DEFAULT.strict(), &Reference, None).is_empty());
}

/// An upstream engine that stops at one refusal, as GE does, but not at GE's first: it keeps the
/// last refusal of the documented list (OPT-011's upstream entry fixes which one comes first).
#[derive(Debug)]
struct StopsAtTheWrongRefusal;

impl Backend for StopsAtTheWrongRefusal {
    fn name(&self) -> &str {
        "stops-at-the-wrong-refusal"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        [Capability::Options].into_iter().collect()
    }

    fn options(&self, scenario: &OptionsScenario) -> Answer<OptionsObservation> {
        let mut o = Reference::upstream().options(scenario)?;
        let documented = Reference.options(scenario)?;
        if documented.errors.len() > 1 {
            o.errors = documented.errors.last().cloned().into_iter().collect();
        }
        Ok(o)
    }
}

#[test]
fn an_upstream_engine_stopping_at_the_wrong_refusal_is_caught() {
    let caught = caught_clauses(
        &Judging::new(Profile::Upstream, ge_spec::Conformance::Documented),
        &StopsAtTheWrongRefusal,
        Some(Capability::Options),
    );
    // The graph's featureBaseRefreshable is checked before its index lists: reporting the
    // list's refusal alone misses the one GE gives.
    let order = caught.get("OPT-011").cloned().unwrap_or_default();
    assert!(
        order
            .iter()
            .any(|c| c
                .ends_with("first-failure-graph-addition-checks-fbr-before-the-lists-upstream")),
        "caught by {caught:?}"
    );
    // The reference under the upstream profile stops at the right one.
    assert!(caught_clauses(
        &Judging::new(Profile::Upstream, ge_spec::Conformance::Strict),
        &Reference::upstream(),
        Some(Capability::Options),
    )
    .is_empty());
}

/// Measures shrinking: the size of each fault's property counterexample on its clause (option
/// keys and items), then their distribution, for `docs/benchmarks.md`. Run with
/// `cargo test --release -p ge-conformance --test it -- --ignored --nocapture faults_options::counterexample_sizes`.
// Long because: a list of every fault with its clause, one row each; the measuring is the last
// lines.
#[test]
#[ignore = "a measurement for docs/benchmarks.md; the regression it guards is held by the shrinking tests"]
fn counterexample_sizes() {
    let faults: Vec<(&str, Box<dyn Backend>, &str)> = vec![
        (
            "acp_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("ACP-001"))),
            "ACP-001",
        ),
        (
            "acp_graph_level_counts",
            Box::new(Faulty(Fault::Leak(
                OptionKey::AtomicCleanPolicy,
                Level::Graph,
            ))),
            "ACP-002",
        ),
        (
            "drm_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("DRM-001"))),
            "DRM-001",
        ),
        (
            "drm_wrong_default",
            Box::new(Faulty(Fault::WrongDefault(
                OptionKey::DisableReuseMemory,
                "1",
            ))),
            "OPT-006",
        ),
        (
            "ifs_range_off_by_one",
            Box::new(Faulty(Fault::Accept("IFS-001"))),
            "IFS-001",
        ),
        (
            "ifs_lenient_numbers",
            Box::new(Faulty(Fault::Accept("OPT-003"))),
            "OPT-003",
        ),
        (
            "ifs_sync_run_silent",
            Box::new(Faulty(Fault::Silence("IFS-003"))),
            "OPT-008",
        ),
        (
            "ifs_dynamic_shape_silent",
            Box::new(Faulty(Fault::Silence("IFS-004"))),
            "OPT-008",
        ),
        (
            "irm_keeps_out_of_range",
            Box::new(Faulty(Fault::KeepOutOfRange("IRM-003"))),
            "IRM-003",
        ),
        (
            "irm_accepts_malformed",
            Box::new(Faulty(Fault::Accept("IRM-004"))),
            "IRM-004",
        ),
        (
            "irm_session_level_counts",
            Box::new(Faulty(Fault::Leak(
                OptionKey::InputReuseMemIndexes,
                Level::Session,
            ))),
            "IRM-002",
        ),
        (
            "rzc_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("RZC-001"))),
            "RZC-001",
        ),
        (
            "rzc_wrong_default",
            Box::new(Faulty(Fault::WrongDefault(
                OptionKey::ReuseZeroCopyMemory,
                "1",
            ))),
            "OPT-006",
        ),
        (
            "smp_accepts_one",
            Box::new(Faulty(Fault::Accept("SMP-001"))),
            "SMP-001",
        ),
        (
            "smp_graph_level_counts",
            Box::new(Faulty(Fault::Leak(
                OptionKey::StaticMemoryPolicy,
                Level::Graph,
            ))),
            "SMP-002",
        ),
        (
            "ori_accepts_out_of_range",
            Box::new(Faulty(Fault::Accept("ORI-003"))),
            "ORI-003",
        ),
        (
            "ori_accepts_output_twice",
            Box::new(Faulty(Fault::Accept("ORI-004"))),
            "ORI-004",
        ),
        (
            "ori_accepts_input_twice",
            Box::new(Faulty(Fault::Accept("ORI-005"))),
            "ORI-005",
        ),
        (
            "ori_accepts_malformed",
            Box::new(Faulty(Fault::Accept("ORI-006"))),
            "ORI-006",
        ),
        (
            "orm_keeps_out_of_range",
            Box::new(Faulty(Fault::KeepOutOfRange("ORM-003"))),
            "ORM-003",
        ),
        (
            "orm_global_level_counts",
            Box::new(Faulty(Fault::Leak(
                OptionKey::OutputReuseMemIndexes,
                Level::Global,
            ))),
            "ORM-002",
        ),
        (
            "orm_accepts_malformed",
            Box::new(Faulty(Fault::Accept("ORM-004"))),
            "ORM-004",
        ),
        (
            "exw_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("EXW-001"))),
            "EXW-001",
        ),
        (
            "exw_graph_level_counts",
            Box::new(Faulty(Fault::Leak(OptionKey::ExternalWeight, Level::Graph))),
            "EXW-002",
        ),
        (
            "ewd_silent_without_external_weight",
            Box::new(Faulty(Fault::Silence("EWD-003"))),
            "OPT-008",
        ),
        (
            "ewd_graph_level_counts",
            Box::new(Faulty(Fault::Leak(
                OptionKey::ExternalWeightDir,
                Level::Graph,
            ))),
            "EWD-002",
        ),
        (
            "ibc_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("IBC-001"))),
            "IBC-001",
        ),
        (
            "ibc_single_input_silent",
            Box::new(Faulty(Fault::Silence("IBC-003"))),
            "OPT-008",
        ),
        (
            "ibc_unlisted_product_silent",
            Box::new(Faulty(Fault::Silence("IBC-004"))),
            "OPT-008",
        ),
        (
            "ibc_sync_run_silent",
            Box::new(Faulty(Fault::Silence("IBC-005"))),
            "OPT-008",
        ),
        (
            "fbr_accepts_out_of_set",
            Box::new(Faulty(Fault::Accept("FBR-001"))),
            "FBR-001",
        ),
        (
            "fbr_dynamic_shape_silent",
            Box::new(Faulty(Fault::Silence("FBR-003"))),
            "OPT-008",
        ),
        (
            "widest_level_wins",
            Box::new(Faulty(Fault::WidestWins)),
            "OPT-001",
        ),
        (
            "ineffective_level_silent",
            Box::new(Faulty(Fault::Silence("OPT-002"))),
            "OPT-002",
        ),
        (
            "passthrough_dropped",
            Box::new(Faulty(Fault::DropPassthrough)),
            "OPT-004",
        ),
        (
            "lists_not_canonical",
            Box::new(Faulty(Fault::NoCanonicalOrder)),
            "OPT-007",
        ),
        (
            "restriction_rejects",
            Box::new(Faulty(Fault::RestrictionRejects)),
            "OPT-008",
        ),
        (
            "ewd_accepts_nul",
            Box::new(Faulty(Fault::Accept("EWD-004"))),
            "EWD-004",
        ),
        (
            "irm_drops_whole_list",
            Box::new(Faulty(Fault::DropWholeList("IRM-003"))),
            "IRM-005",
        ),
        (
            "orm_drops_whole_list",
            Box::new(Faulty(Fault::DropWholeList("ORM-003"))),
            "ORM-005",
        ),
        (
            "diagnostics_without_subject",
            Box::new(Faulty(Fault::NoSubjects)),
            "OPT-012",
        ),
        (
            "ifs_read_into_32_bits",
            Box::new(Faulty(Fault::Width32(OptionKey::InputFusionSize))),
            "IFS-001",
        ),
        (
            "irm_index_read_into_32_bits",
            Box::new(Faulty(Fault::Width32(OptionKey::InputReuseMemIndexes))),
            "IRM-004",
        ),
        (
            "ori_index_read_into_32_bits",
            Box::new(Faulty(Fault::Width32(
                OptionKey::OutputReuseInputMemIndexes,
            ))),
            "ORI-003",
        ),
        (
            "smp_read_into_32_bits",
            Box::new(Faulty(Fault::Width32(OptionKey::StaticMemoryPolicy))),
            "SMP-001",
        ),
        (
            "irm_drops_items_after_the_eighth",
            Box::new(Faulty(Fault::DropAfterEighth(
                OptionKey::InputReuseMemIndexes,
            ))),
            "IRM-003",
        ),
        (
            "ori_drops_pairs_after_the_eighth",
            Box::new(Faulty(Fault::DropAfterEighth(
                OptionKey::OutputReuseInputMemIndexes,
            ))),
            "ORI-003",
        ),
        (
            "fbr_unchecked_at_session_level",
            Box::new(Faulty(Fault::SkipCheckAt(
                OptionKey::FeatureBaseRefreshable,
                Level::Session,
            ))),
            "FBR-001",
        ),
        (
            "drm_unchecked_at_global_level",
            Box::new(Faulty(Fault::SkipCheckAt(
                OptionKey::DisableReuseMemory,
                Level::Global,
            ))),
            "DRM-001",
        ),
    ];
    common::print_counterexample_sizes(Capability::Options, &faults);
}

/// Shrinking finds the cause: a value out of range accepted (one rule, one option) is reported
/// by the random phase alone with exactly that option and nothing else, whatever else the
/// scenario that first showed it carried.
#[test]
fn a_one_rule_fault_shrinks_to_its_one_option() {
    for (fault, clause) in [
        (Fault::Accept("IFS-001"), "IFS-001"),
        (Fault::Accept("SMP-001"), "SMP-001"),
    ] {
        let size = common::counterexample_size(&Faulty(fault), Capability::Options, clause, false);
        assert_eq!(
            size,
            Some(ge_conformance::reduce::Size { keys: 1, items: 0 }),
            "{clause}"
        );
    }
}
