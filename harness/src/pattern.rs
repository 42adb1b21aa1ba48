//! Matching of `expect` patterns against observations (the rule is documented in ge-spec's
//! crate docs, "Matching"): tables by the keys the pattern names, arrays whole, scalars equal,
//! and the lists of diagnostics as sets, on the fields the pattern names. Every difference is
//! returned, each located by a JSON Pointer (RFC 6901), so keys holding dots read unambiguously.
//! `message` is never compared: patterns may not name it, and it is skipped where found.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use ge_spec::{Diagnostic, Level, Subject};

use crate::oracle::diagnostics::Expected;

/// Where and how an observation departs from a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON Pointer of the difference, for example `/fused/1` or
    /// `/effective/ge.exec.input_fusion_size/value`.
    pub path: String,
    /// What was expected there.
    pub expected: String,
    /// What was found there.
    pub found: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.path.is_empty() {
            "the top"
        } else {
            &self.path
        };
        write!(
            f,
            "at {at}: expected {}, found {}",
            self.expected, self.found
        )
    }
}

/// A list of diagnostics the pattern names, to be judged as a set (see
/// [`crate::oracle::diagnostics::compare`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticList {
    /// `errors` or `warnings`.
    pub list: String,
    /// What the pattern expects.
    pub expected: Vec<Expected>,
    /// What the observation holds.
    pub actual: Vec<Diagnostic>,
}

/// The result of matching: every difference outside the diagnostics, and the diagnostic lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matched {
    /// Differences outside the lists of diagnostics.
    pub mismatches: Vec<Mismatch>,
    /// The lists of diagnostics the pattern names.
    pub diagnostics: Vec<DiagnosticList>,
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(200).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// The elements of an array kept whole when [`observe`] cuts it short: enough for the first
/// 200 characters [`show`] prints of it (each element takes two at least, with its comma).
const KEPT_WHOLE: usize = 128;

/// An answer as matching reads it ([`observe`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The answer as JSON, with only what the pattern can look at.
    pub value: Value,
    /// The true length of each array cut short, by JSON Pointer.
    lengths: BTreeMap<String, usize>,
}

/// Reads `answer` as JSON for matching against `pattern`, keeping only what matching can look
/// at: of an object the pattern names as an object, the keys it names (at the top, a
/// diagnostic list whole); of an array the pattern names as an array of `n`, the first
/// `max(n, 128) + 1` elements, the first 128 whole, and its true length. Everything else is
/// kept whole. So an answer of 200,000 trace entries against a pattern of two costs 129
/// entries, not 200,000 maps (126 MB measured), and every mismatch reads as it would on the
/// whole answer.
pub fn observe<T: serde::Serialize>(pattern: &Value, answer: &T) -> Result<Observed, String> {
    let bytes = serde_json::to_vec(answer).map_err(|e| e.to_string())?;
    let mut lengths = BTreeMap::new();
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let value = Prune {
        pattern: Some(pattern),
        path: String::new(),
        top: true,
        lengths: &mut lengths,
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())?;
    Ok(Observed { value, lengths })
}

/// Reads one value for [`observe`], pruned by `pattern` (`None`: kept whole).
struct Prune<'p, 'l> {
    pattern: Option<&'p Value>,
    /// Its JSON Pointer.
    path: String,
    /// True for the answer itself, whose diagnostic lists are matched as sets, so kept whole.
    top: bool,
    lengths: &'l mut BTreeMap<String, usize>,
}

impl<'de> DeserializeSeed<'de> for Prune<'_, '_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.pattern {
            Some(Value::Object(_) | Value::Array(_)) => d.deserialize_any(self),
            _ => Value::deserialize(d),
        }
    }
}

impl<'de> Visitor<'de> for Prune<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(Value::Object(pattern)) = self.pattern else {
            // Only an object pattern prunes; anything else read here is kept whole.
            return Value::deserialize(de::value::MapAccessDeserializer::new(map));
        };
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some(inner) = pattern.get(&key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let whole = self.top && (key == "errors" || key == "warnings");
            let value = map.next_value_seed(Prune {
                pattern: (!whole).then_some(inner),
                path: format!("{}/{}", self.path, pointer_token(&key)),
                top: false,
                lengths: self.lengths,
            })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let Some(Value::Array(pattern)) = self.pattern else {
            return Value::deserialize(de::value::SeqAccessDeserializer::new(seq));
        };
        let keep = pattern.len().max(KEPT_WHOLE) + 1;
        let mut out = Vec::new();
        while out.len() < keep {
            let i = out.len();
            let element = if i < KEPT_WHOLE {
                seq.next_element::<Value>()?
            } else {
                seq.next_element_seed(Prune {
                    pattern: pattern.get(i),
                    path: format!("{}/{i}", self.path),
                    top: false,
                    lengths: self.lengths,
                })?
            };
            match element {
                Some(element) => out.push(element),
                None => return Ok(Value::Array(out)),
            }
        }
        let mut length = out.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            length += 1;
        }
        if length > out.len() {
            self.lengths.insert(self.path, length);
        }
        Ok(Value::Array(out))
    }
}

/// One reference token of a JSON Pointer (`~` as `~0`, `/` as `~1`).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Matches `actual` against `pattern`: the diagnostic lists named at the top are set aside
/// for set matching, everything else is walked.
pub fn check(pattern: &Value, actual: &Value) -> Matched {
    check_with(pattern, actual, &BTreeMap::new())
}

/// [`check`] on what [`observe`] read of an answer.
pub fn check_observed(pattern: &Value, observed: &Observed) -> Matched {
    check_with(pattern, &observed.value, &observed.lengths)
}

/// [`check`], with the true lengths of the arrays [`observe`] cut short, by path.
fn check_with(pattern: &Value, actual: &Value, lengths: &BTreeMap<String, usize>) -> Matched {
    let mut out = Matched::default();
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, pv) in p {
                let path = format!("/{}", pointer_token(key));
                if (key == "errors" || key == "warnings") && pv.is_array() {
                    match diagnostic_list(key, pv, a.get(key)) {
                        Ok(list) => out.diagnostics.push(list),
                        Err(m) => out.mismatches.push(Mismatch { path, ..m }),
                    }
                    continue;
                }
                match a.get(key) {
                    Some(av) => walk(pv, av, &mut path.clone(), lengths, &mut out.mismatches),
                    None if pv.is_null() => {}
                    None => out.mismatches.push(Mismatch {
                        path,
                        expected: show(pv),
                        found: "nothing".into(),
                    }),
                }
            }
        }
        _ => walk(
            pattern,
            actual,
            &mut String::new(),
            lengths,
            &mut out.mismatches,
        ),
    }
    out
}

/// The expectations of a diagnostic pattern list and the diagnostics found.
fn diagnostic_list(
    list: &str,
    pattern: &Value,
    actual: Option<&Value>,
) -> Result<DiagnosticList, Mismatch> {
    let bad = |what: String| Mismatch {
        path: String::new(),
        expected: "a list of diagnostics".into(),
        found: what,
    };
    let expected = pattern
        .as_array()
        .map(|items| items.iter().map(expected_of).collect::<Result<Vec<_>, _>>())
        .unwrap_or_else(|| Ok(Vec::new()))
        .map_err(|e| Mismatch {
            path: String::new(),
            expected: e,
            found: "a pattern the loader should have refused".into(),
        })?;
    let actual: Vec<Diagnostic> = match actual {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| bad(e.to_string()))?,
    };
    Ok(DiagnosticList {
        list: list.to_owned(),
        expected,
        actual,
    })
}

/// A diagnostic pattern as an expectation: the fields it names are judged.
fn expected_of(item: &Value) -> Result<Expected, String> {
    let map = item
        .as_object()
        .ok_or_else(|| format!("a diagnostic pattern, not {item}"))?;
    let clause = map
        .get("clause")
        .and_then(Value::as_str)
        .ok_or("a diagnostic pattern names its clause")?
        .to_owned();
    let key = match map.get("key") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(other) => return Err(format!("a key, not {other}")),
    };
    let level = match map.get("level") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(
            serde_json::from_value::<Level>(v.clone()).map_err(|e| e.to_string())?,
        )),
    };
    let subject = match map.get("subject") {
        None => None,
        Some(v) => Some(serde_json::from_value::<Subject>(v.clone()).map_err(|e| e.to_string())?),
    };
    let optional = map
        .get("optional")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Expected {
        clause,
        key,
        level,
        subject,
        optional,
    })
}

fn walk(
    pattern: &Value,
    actual: &Value,
    path: &mut String,
    lengths: &BTreeMap<String, usize>,
    out: &mut Vec<Mismatch>,
) {
    let mismatch = |path: &str, expected: String, found: String| Mismatch {
        path: path.to_owned(),
        expected,
        found,
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, pv) in p {
                if key == "message" {
                    continue;
                }
                let len = path.len();
                path.push('/');
                path.push_str(&pointer_token(key));
                match a.get(key) {
                    Some(av) => walk(pv, av, path, lengths, out),
                    None if pv.is_null() => {}
                    None => out.push(mismatch(path, show(pv), "nothing".into())),
                }
                path.truncate(len);
            }
        }
        (Value::Array(p), Value::Array(a)) => {
            if p.len() != a.len() {
                // An array `observe` cut short still differs in length, and says its own.
                let found = lengths.get(path.as_str()).copied().unwrap_or(a.len());
                out.push(mismatch(
                    path,
                    format!("{} element(s) {}", p.len(), show(pattern)),
                    format!("{found} element(s) {}", show(actual)),
                ));
                return;
            }
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                walk(pv, av, path, lengths, out);
                path.truncate(len);
            }
        }
        (Value::Number(p), Value::Number(a)) => {
            // TOML integers arrive as i64, JSON ones as u64: compare by value.
            let same = match (p.as_u64(), a.as_u64(), p.as_i64(), a.as_i64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => p.as_f64() == a.as_f64(),
            };
            if !same {
                out.push(mismatch(path, show(pattern), show(actual)));
            }
        }
        (p, a) if p == a => {}
        (p, a) => out.push(mismatch(path, show(p), show(a))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(p: Value, a: Value) -> Vec<String> {
        check(&p, &a)
            .mismatches
            .into_iter()
            .map(|m| m.path)
            .collect()
    }

    #[test]
    fn tables_match_by_named_keys() {
        assert!(paths(json!({"a": 1}), json!({"a": 1, "b": 2})).is_empty());
        assert_eq!(paths(json!({"a": 1}), json!({"a": 2})), ["/a"]);
        assert!(paths(json!({"a": null}), json!({"b": 1})).is_empty());
        assert_eq!(paths(json!({"a": null}), json!({"a": 1})), ["/a"]);
        assert_eq!(paths(json!({"a": 1}), json!({})), ["/a"]);
    }

    #[test]
    fn every_difference_is_reported_at_a_json_pointer() {
        let p = json!({"effective": {"ge.exec.input_fusion_size": {"value": "1", "from": "graph"}}, "x/y": 1, "a~b": 2});
        let a = json!({"effective": {"ge.exec.input_fusion_size": {"value": "2", "from": "session"}}, "x/y": 3, "a~b": 4});
        assert_eq!(
            paths(p, a),
            [
                "/a~0b",
                "/effective/ge.exec.input_fusion_size/from",
                "/effective/ge.exec.input_fusion_size/value",
                "/x~1y"
            ]
        );
    }

    #[test]
    fn arrays_match_whole() {
        assert!(paths(json!({"l": [1, 2]}), json!({"l": [1, 2]})).is_empty());
        assert_eq!(paths(json!({"l": [1]}), json!({"l": [1, 2]})), ["/l"]);
        assert_eq!(
            paths(json!({"l": [{"k": 1}]}), json!({"l": [{"k": 2}]})),
            ["/l/0/k"]
        );
        assert!(paths(json!({"l": [{}]}), json!({"l": [{"k": 9}]})).is_empty());
    }

    #[test]
    fn scalars_match_exactly() {
        assert_eq!(paths(json!({"s": "1"}), json!({"s": 1})), ["/s"]);
        assert!(paths(json!({"n": -1}), json!({"n": -1})).is_empty());
        assert_eq!(paths(json!({"b": true}), json!({"b": false})), ["/b"]);
    }

    #[test]
    fn diagnostics_are_set_aside_and_messages_never_compared() {
        let p = json!({"errors": [{"clause": "ACP-001", "key": "k"}], "warnings": []});
        let a = json!({"errors": [{"clause": "ACP-001", "key": "k", "message": "anything"}], "warnings": []});
        let m = check(&p, &a);
        assert!(m.mismatches.is_empty());
        assert_eq!(m.diagnostics.len(), 2);
        assert_eq!(m.diagnostics[0].expected[0].clause, "ACP-001");
        assert_eq!(m.diagnostics[0].expected[0].level, None);
        // A message found inside some other table is skipped too.
        assert!(paths(
            json!({"t": {"message": "x"}}),
            json!({"t": {"message": "y"}})
        )
        .is_empty());
    }

    /// What matching the whole answer finds, and what matching what `observe` kept finds.
    fn both_ways(pattern: &Value, answer: &Value) -> (Matched, Matched) {
        let observed = observe(pattern, answer).expect("a value reads back");
        (check(pattern, answer), check_observed(pattern, &observed))
    }

    #[test]
    fn a_huge_list_is_read_as_far_as_its_pattern_can_look() {
        let entry = json!({"action": "alloc", "pool": "graph-1/feature", "bytes": 64, "step": 0});
        let answer = json!({
            "trace": vec![entry.clone(); 200_000],
            "refreshes": vec![json!({"ok": true}); 1000],
            "warnings": vec![json!({"clause": "SES-001", "level": "warning"}); 300],
        });
        let pattern = json!({"trace": [entry.clone(), entry], "warnings": []});
        let observed = observe(&pattern, &answer).unwrap();
        assert_eq!(
            observed.value["trace"].as_array().unwrap().len(),
            KEPT_WHOLE + 1
        );
        assert!(observed.value.get("refreshes").is_none());
        // Diagnostic lists are matched as sets: kept whole.
        assert_eq!(observed.value["warnings"].as_array().unwrap().len(), 300);
        let (whole, kept) = both_ways(&pattern, &answer);
        assert_eq!(whole, kept);
        assert!(kept.mismatches[0].found.starts_with("200000 element(s) [{"));
    }

    #[test]
    fn lists_at_and_around_the_cut_read_the_same() {
        for n in [0, 1, 2, 127, 128, 129, 130, 131, 300] {
            for m in [0, 1, 2, 127, 128, 129, 130, 131, 300] {
                let answer =
                    json!({"a": (0..m).map(|i| json!({"i": i, "x": [i]})).collect::<Vec<_>>()});
                let pattern =
                    json!({"a": (0..n).map(|i| json!({"i": i % 7, "x": [i]})).collect::<Vec<_>>()});
                let (whole, kept) = both_ways(&pattern, &answer);
                assert_eq!(whole, kept, "pattern of {n}, answer of {m}");
            }
        }
    }

    /// Small JSON values, from an alphabet small enough that patterns and answers overlap.
    fn small_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0u64..4).prop_map(Value::from),
            (-2i64..0).prop_map(Value::from),
            prop::sample::select(vec!["a", "b", "message"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "errors", "warnings", "message", "x/y"]),
                    inner,
                    0..5,
                )
                .prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever the pattern and the answer, matching what `observe` kept finds what
        /// matching the whole answer does.
        #[test]
        fn observing_never_changes_what_matching_finds(pattern in small_json(), answer in small_json()) {
            let (whole, kept) = both_ways(&pattern, &answer);
            proptest::prop_assert_eq!(whole, kept);
        }
    }
}
