//! Matching of `expect` patterns against observations (the rule is documented in ge-spec's
//! crate docs, "Matching"): tables by the keys the pattern names, arrays whole, scalars equal.

use serde_json::Value;

/// Where and how an observation departs from a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON path of the first difference, for example `$.fused[1]`.
    pub path: String,
    /// What was expected there.
    pub expected: String,
    /// What was found there.
    pub found: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at {}: expected {}, found {}",
            self.path, self.expected, self.found
        )
    }
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

/// Checks `actual` against `pattern`; the first difference found is returned.
pub fn check(pattern: &Value, actual: &Value) -> Result<(), Mismatch> {
    walk(pattern, actual, &mut String::from("$"))
}

fn walk(pattern: &Value, actual: &Value, path: &mut String) -> Result<(), Mismatch> {
    let mismatch = |path: &str, expected: String, found: String| Mismatch {
        path: path.to_owned(),
        expected,
        found,
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, pv) in p {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let r = match a.get(key) {
                    Some(av) => walk(pv, av, path),
                    None if pv.is_null() => Ok(()),
                    None => Err(mismatch(path, show(pv), "nothing".into())),
                };
                path.truncate(len);
                r?;
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(a)) => {
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let r = walk(pv, av, path);
                path.truncate(len);
                r?;
            }
            if p.len() != a.len() {
                return Err(mismatch(
                    path,
                    format!("{} element(s) {}", p.len(), show(pattern)),
                    format!("{} element(s) {}", a.len(), show(actual)),
                ));
            }
            Ok(())
        }
        (Value::Number(p), Value::Number(a)) => {
            // TOML integers arrive as i64, JSON ones as u64: compare by value.
            let same = match (p.as_u64(), a.as_u64(), p.as_i64(), a.as_i64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => p.as_f64() == a.as_f64(),
            };
            if same {
                Ok(())
            } else {
                Err(mismatch(path, show(pattern), show(actual)))
            }
        }
        (p, a) if p == a => Ok(()),
        (p, a) => Err(mismatch(path, show(p), show(a))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_match_by_named_keys() {
        assert!(check(&json!({"a": 1}), &json!({"a": 1, "b": 2})).is_ok());
        assert_eq!(
            check(&json!({"a": 1}), &json!({"a": 2})).unwrap_err().path,
            "$.a"
        );
        assert!(check(&json!({"a": null}), &json!({"b": 1})).is_ok());
        assert!(check(&json!({"a": null}), &json!({"a": 1})).is_err());
        assert!(check(&json!({"a": 1}), &json!({})).is_err());
    }

    #[test]
    fn arrays_match_whole() {
        assert!(check(&json!([1, 2]), &json!([1, 2])).is_ok());
        assert!(check(&json!([1]), &json!([1, 2])).is_err());
        assert!(check(&json!([1, 2]), &json!([1])).is_err());
        assert_eq!(
            check(&json!([{"k": 1}]), &json!([{"k": 2}]))
                .unwrap_err()
                .path,
            "$[0].k"
        );
        assert!(check(&json!([{"k": 1}]), &json!([{"k": 1, "m": "x"}])).is_ok());
    }

    #[test]
    fn scalars_match_exactly() {
        assert!(check(&json!("1"), &json!(1)).is_err());
        assert!(check(&json!(-1), &json!(-1)).is_ok());
        assert!(check(&json!(true), &json!(false)).is_err());
    }
}
