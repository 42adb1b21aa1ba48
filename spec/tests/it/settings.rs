//! `OptionMaps::settings`: the same answer as looking each key up in each level's map, and the
//! same keys outside the twelve as parsing each key, for maps of known and unknown keys alike.

use ge_spec::{Level, OptionKey, OptionMaps};
use proptest::prelude::*;

/// A key: one of the twelve, a near miss of one, or anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(OptionKey::ALL.to_vec()).prop_map(|k| k.as_str().to_owned()),
        proptest::sample::select(OptionKey::ALL.to_vec()).prop_map(|k| format!("{k} ")),
        "[a-z.]{0,12}",
    ]
}

fn map() -> impl Strategy<Value = std::collections::BTreeMap<String, String>> {
    proptest::collection::btree_map(key(), "[0-9a-z,|]{0,6}", 0..8)
}

proptest! {
    #[test]
    fn settings_agree_with_the_maps(global in map(), session in map(), graph in map()) {
        let maps = OptionMaps { global, session, graph };
        let set = maps.settings();
        for key in OptionKey::ALL {
            for level in Level::ALL {
                prop_assert_eq!(
                    set.get(key, level),
                    maps.at(level).get(key.as_str()).map(String::as_str),
                    "{} at {}", key, level
                );
            }
        }
        let others: Vec<&str> = Level::ALL
            .iter()
            .flat_map(|l| maps.at(*l).keys())
            .filter(|k| k.parse::<OptionKey>().is_err())
            .map(String::as_str)
            .collect();
        prop_assert_eq!(set.others(), &others[..]);
    }
}
