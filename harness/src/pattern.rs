//! Matching of `expect` patterns against observations (the rule is documented in ge-spec's
//! crate docs, "Matching"): tables by the keys the pattern names, arrays whole, scalars equal,
//! and the lists of diagnostics as sets, on the fields the pattern names. Every difference is
//! returned, each located by a JSON Pointer (RFC 6901), so keys holding dots read unambiguously.
//! `message` is never compared: patterns may not name it, and it is skipped where found.

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

/// One reference token of a JSON Pointer (`~` as `~0`, `/` as `~1`).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Matches `actual` against `pattern`: the diagnostic lists named at the top are set aside
/// for set matching, everything else is walked.
pub fn check(pattern: &Value, actual: &Value) -> Matched {
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
                    Some(av) => walk(pv, av, &mut path.clone(), &mut out.mismatches),
                    None if pv.is_null() => {}
                    None => out.mismatches.push(Mismatch {
                        path,
                        expected: show(pv),
                        found: "nothing".into(),
                    }),
                }
            }
        }
        _ => walk(pattern, actual, &mut String::new(), &mut out.mismatches),
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

fn walk(pattern: &Value, actual: &Value, path: &mut String, out: &mut Vec<Mismatch>) {
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
                    Some(av) => walk(pv, av, path, out),
                    None if pv.is_null() => {}
                    None => out.push(mismatch(path, show(pv), "nothing".into())),
                }
                path.truncate(len);
            }
        }
        (Value::Array(p), Value::Array(a)) => {
            if p.len() != a.len() {
                out.push(mismatch(
                    path,
                    format!("{} element(s) {}", p.len(), show(pattern)),
                    format!("{} element(s) {}", a.len(), show(actual)),
                ));
                return;
            }
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                walk(pv, av, path, out);
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
}
