//! The divergence map: one row per clause where the open-source GE implementation departs from
//! the documented behaviour, built from the `upstream` entries of the clause catalogue, in
//! Markdown for people and JSON for tools (`ge-conformance divergence`).

use ge_spec::{Evidence, Spec};
use serde::Serialize;

/// One clause where the profiles differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The clause ID.
    pub clause: String,
    /// The option key, or `cross-cutting`.
    pub option: String,
    /// What the clause says (the documented profile).
    pub documented: String,
    /// What upstream does instead.
    pub upstream: String,
    /// How many cases check the clause under the upstream profile only.
    pub upstream_cases: usize,
    /// Where GE's source shows the upstream behaviour, at the pinned commit.
    pub source: Vec<Evidence>,
}

/// The pinned GE source as `owner/name@commit`, or `unpinned` for tables without a pin.
pub fn pinned(spec: &Spec) -> String {
    spec.upstream_pin().map_or_else(
        || "unpinned".to_owned(),
        |p| format!("{}@{}", p.repository, p.commit),
    )
}

/// The rows of the map, by clause ID.
pub fn rows(spec: &Spec) -> Vec<Row> {
    spec.divergent_clauses()
        .map(|c| Row {
            clause: c.id.clone(),
            option: c
                .option
                .map_or_else(|| "cross-cutting".to_owned(), |k| k.as_str().to_owned()),
            documented: c.summary.clone(),
            upstream: c
                .upstream
                .as_ref()
                .map(|u| u.behaviour.clone())
                .unwrap_or_default(),
            upstream_cases: spec
                .cases_for(&c.id)
                .filter(|tc| tc.case.profile == Some(ge_spec::Profile::Upstream))
                .count(),
            source: c
                .upstream
                .as_ref()
                .map(|u| u.source.clone())
                .unwrap_or_default(),
        })
        .collect()
}

/// Escapes a table cell: pipes would end the cell, newlines the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The map as a Markdown table.
pub fn markdown(spec: &Spec) -> String {
    let rows = rows(spec);
    let mut out = String::new();
    out.push_str("# Where upstream GE departs from its documentation\n\n");
    out.push_str(&format!(
        "{} clause(s) diverge. Checked against {}: the evidence column gives the file, lines \
         and function at that commit.\n\n",
        rows.len(),
        pinned(spec)
    ));
    out.push_str("| clause | option | documented | upstream | evidence |\n|---|---|---|---|---|\n");
    for r in &rows {
        let evidence: Vec<String> = r.source.iter().map(|e| cell(&e.to_string())).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.clause,
            cell(&r.option),
            cell(&r.documented),
            cell(&r.upstream),
            evidence.join("<br>")
        ));
    }
    out
}

/// The map as pretty-printed JSON: `{ "upstream": { repository, commit }, "clauses": [rows] }`.
pub fn json(spec: &Spec) -> String {
    let map = serde_json::json!({
        "upstream": spec.upstream_pin(),
        "clauses": rows(spec),
    });
    serde_json::to_string_pretty(&map).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_both_behaviours_and_an_upstream_case() {
        let rows = rows(Spec::embedded());
        assert!(!rows.is_empty());
        for r in rows {
            assert!(!r.documented.is_empty() && !r.upstream.is_empty(), "{r:?}");
            assert!(r.upstream_cases > 0, "{r:?}");
            assert!(!r.source.is_empty(), "{r:?}");
        }
    }

    #[test]
    fn both_forms_name_the_pinned_commit_and_the_evidence() {
        let spec = Spec::embedded();
        let commit = &spec.upstream_pin().expect("pinned").commit;
        let md = markdown(spec);
        assert!(md.contains(commit.as_str()), "{md}");
        let first = &rows(spec)[0].source[0];
        assert!(md.contains(&cell(&first.to_string())), "{md}");
        let json: serde_json::Value = serde_json::from_str(&json(spec)).expect("JSON");
        assert_eq!(json["upstream"]["commit"], commit.as_str());
        assert_eq!(json["clauses"][0]["source"][0]["file"], first.file.as_str());
    }

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
