//! The reference option layer: grammar and level tables (rstest), and properties (proptest):
//! nothing panics, every rejection names an existing clause, and valid settings render and parse
//! back to the same effective options.

use ge_reference::options::{resolve, Context};
use ge_spec::{Level, OptionKey, OptionMaps, Product, Profile, RunMode, ShapeKind, Source, Spec};
use proptest::prelude::*;
use rstest::rstest;

fn ctx(inputs: u32, outputs: u32) -> Context {
    Context {
        inputs: Some(inputs),
        outputs: Some(outputs),
        shape: ShapeKind::Static,
        run_mode: RunMode::Async,
        product: Product::Ascend950Pr,
    }
}

fn at(level: Level, key: OptionKey, value: &str) -> OptionMaps {
    let mut maps = OptionMaps::default();
    maps.at_mut(level)
        .insert(key.as_str().to_owned(), value.to_owned());
    maps
}

/// Resolves one value at graph level (or session level for options without graph level) and
/// returns the effective value or the clause of the first error.
fn one(key: OptionKey, value: &str) -> Result<String, String> {
    let level = *Spec::embedded()
        .option(key)
        .levels
        .last()
        .expect("every option has a level");
    let r = resolve(Profile::Documented, &at(level, key, value), ctx(4, 4));
    match r.observation.errors.first() {
        Some(e) => Err(e.clause.clone()),
        None => Ok(r.observation.effective[key.as_str()].value.clone()),
    }
}

/// The threshold's largest value, from the options table.
fn fusion_max() -> u64 {
    Spec::embedded()
        .option(OptionKey::InputFusionSize)
        .max
        .expect("a range")
}

#[test]
fn fusion_size_takes_its_maximum_and_refuses_one_more() {
    let max = fusion_max().to_string();
    assert_eq!(one(OptionKey::InputFusionSize, &max), Ok(max.clone()));
    let past = (fusion_max() + 1).to_string();
    assert_eq!(
        one(OptionKey::InputFusionSize, &past),
        Err("IFS-001".to_owned())
    );
}

#[rstest]
#[case::zero("0", Ok("0"))]
#[case::u64_overflow("184467440737095516160", Err("IFS-001"))]
#[case::sign("+1", Err("OPT-003"))]
#[case::space(" 1", Err("OPT-003"))]
#[case::leading_zero("007", Err("OPT-003"))]
#[case::empty("", Err("OPT-003"))]
#[case::unit("128KB", Err("OPT-003"))]
fn fusion_size_grammar(#[case] value: &str, #[case] expected: Result<&str, &str>) {
    let expected = expected.map(str::to_owned).map_err(str::to_owned);
    assert_eq!(one(OptionKey::InputFusionSize, value), expected);
}

#[rstest]
#[case::plain("0,1,2", Ok("0,1,2"))]
#[case::sorted("3,1", Ok("1,3"))]
#[case::out_of_range_dropped("1,4", Ok("1"))]
#[case::empty_item("1,,2", Err("IRM-004"))]
#[case::duplicate("2,2", Err("IRM-004"))]
#[case::negative("-0", Err("IRM-004"))]
#[case::space("1 ", Err("IRM-004"))]
#[case::empty("", Err("OPT-003"))]
fn index_list_grammar(#[case] value: &str, #[case] expected: Result<&str, &str>) {
    let expected = expected.map(str::to_owned).map_err(str::to_owned);
    assert_eq!(one(OptionKey::InputReuseMemIndexes, value), expected);
}

#[rstest]
#[case::one("0,1", Ok("0,1"))]
#[case::sorted("3,3|0,1", Ok("0,1|3,3"))]
#[case::range("4,0", Err("ORI-003"))]
#[case::output_twice("0,1|2,1", Err("ORI-004"))]
#[case::input_twice("0,1|0,2", Err("ORI-005"))]
#[case::dangling("0,1|", Err("ORI-006"))]
#[case::triple("0,1,2", Err("ORI-006"))]
#[case::empty("", Err("OPT-003"))]
fn pair_list_grammar(#[case] value: &str, #[case] expected: Result<&str, &str>) {
    let expected = expected.map(str::to_owned).map_err(str::to_owned);
    assert_eq!(one(OptionKey::OutputReuseInputMemIndexes, value), expected);
}

#[rstest]
fn level_rules(
    #[values(
        OptionKey::AtomicCleanPolicy,
        OptionKey::DisableReuseMemory,
        OptionKey::StaticMemoryPolicy,
        OptionKey::ExternalWeight,
        OptionKey::InputReuseMemIndexes,
        OptionKey::FeatureBaseRefreshable
    )]
    key: OptionKey,
    #[values(Level::Global, Level::Session, Level::Graph)] level: Level,
) {
    let row = Spec::embedded().option(key);
    // `1` is valid for each of these keys but staticMemoryPolicy, whose smallest non-zero value is 2.
    let value = if key == OptionKey::StaticMemoryPolicy {
        "2"
    } else {
        "1"
    };
    let r = resolve(Profile::Documented, &at(level, key, value), ctx(4, 4));
    let eff = &r.observation.effective[key.as_str()];
    if row.takes_effect_at(level) {
        assert_eq!(eff.from, Source::from(level));
        assert!(r.observation.warnings.is_empty());
    } else {
        assert_eq!(eff.from, Source::Default);
        assert_eq!(r.observation.warnings.len(), 1);
        assert_eq!(r.observation.warnings[0].clause, "OPT-002");
        assert_eq!(r.observation.warnings[0].level, Some(level));
    }
}

fn any_maps() -> impl Strategy<Value = OptionMaps> {
    let key = prop_oneof![
        4 => proptest::sample::select(OptionKey::ALL.to_vec()).prop_map(|k| k.as_str().to_owned()),
        1 => ".{0,12}",
    ];
    let map = proptest::collection::btree_map(key, ".{0,12}|[0-9,|]{0,10}", 0..6);
    (map.clone(), map.clone(), map).prop_map(|(global, session, graph)| OptionMaps {
        global,
        session,
        graph,
    })
}

/// One valid value per option, rendered as a user would write it.
fn valid_value(key: OptionKey) -> BoxedStrategy<String> {
    match key {
        OptionKey::InputFusionSize => (0u64..=fusion_max()).prop_map(|n| n.to_string()).boxed(),
        OptionKey::InputReuseMemIndexes | OptionKey::OutputReuseMemIndexes => {
            proptest::collection::btree_set(0u32..8, 1..5)
                .prop_shuffle_set()
                .boxed()
        }
        OptionKey::OutputReuseInputMemIndexes => {
            proptest::collection::btree_map(0u32..8, 0u32..8, 1..4)
                .prop_map(|m| {
                    let mut outs = std::collections::BTreeSet::new();
                    m.into_iter()
                        .filter(|(_, o)| outs.insert(*o))
                        .map(|(i, o)| format!("{i},{o}"))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .boxed()
        }
        OptionKey::ExternalWeightDir => "[a-z][a-z/_]{0,10}".boxed(),
        _ => {
            let values: Vec<String> = Spec::embedded()
                .option(key)
                .values
                .iter()
                .map(|v| v.value.clone())
                .collect();
            proptest::sample::select(values).boxed()
        }
    }
}

trait ShuffleSet {
    fn prop_shuffle_set(self) -> BoxedStrategy<String>;
}

impl<S: Strategy<Value = std::collections::BTreeSet<u32>> + 'static> ShuffleSet for S {
    fn prop_shuffle_set(self) -> BoxedStrategy<String> {
        self.prop_map(|s| s.into_iter().collect::<Vec<_>>())
            .prop_shuffle()
            .prop_map(|v| v.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            .boxed()
    }
}

fn valid_maps() -> impl Strategy<Value = OptionMaps> {
    let entry = proptest::sample::select(OptionKey::ALL.to_vec()).prop_flat_map(|k| {
        (
            Just(k),
            valid_value(k),
            proptest::sample::select(Spec::embedded().option(k).levels.clone()),
        )
    });
    proptest::collection::vec(entry, 0..10).prop_map(|entries| {
        let mut maps = OptionMaps::default();
        for (key, value, level) in entries {
            maps.at_mut(level).insert(key.as_str().to_owned(), value);
        }
        maps
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_maps_never_panic_and_rejections_name_clauses(maps in any_maps(), inputs in 0u32..10, outputs in 0u32..10) {
        let r = resolve(Profile::Documented, &maps, ctx(inputs, outputs));
        let spec = Spec::embedded();
        for d in r.observation.errors.iter().chain(&r.observation.warnings) {
            prop_assert!(spec.clause(&d.clause).is_some(), "{} names no clause", d.clause);
            prop_assert!(!d.message.is_empty());
        }
        for e in &r.observation.errors {
            let key = e.key.as_deref().unwrap_or_default();
            prop_assert!(e.level.is_some() && e.value.is_some());
            prop_assert!(r.observation.rejected.iter().any(|k| k == key));
            prop_assert!(!r.observation.effective.contains_key(key));
        }
        prop_assert_eq!(r.observation.effective.len() + r.observation.rejected.len(), 12);
    }

    #[test]
    fn valid_maps_render_and_parse_back(maps in valid_maps()) {
        let first = resolve(Profile::Documented, &maps, ctx(8, 8));
        prop_assert!(first.observation.errors.is_empty(), "{:?}", first.observation.errors);
        // Render every effective value that came from a level at the graph level where it takes
        // effect there, else at the session level, and resolve again.
        let mut rendered = OptionMaps::default();
        for key in OptionKey::ALL {
            let eff = &first.observation.effective[key.as_str()];
            if eff.from == Source::Default {
                continue;
            }
            let level = *Spec::embedded().option(key).levels.last().expect("a level");
            rendered.at_mut(level).insert(key.as_str().to_owned(), eff.value.clone());
        }
        let second = resolve(Profile::Documented, &rendered, ctx(8, 8));
        for key in OptionKey::ALL {
            prop_assert_eq!(&first.observation.effective[key.as_str()].value, &second.observation.effective[key.as_str()].value);
        }
        prop_assert_eq!(first.values, second.values);
    }
}
