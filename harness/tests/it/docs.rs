//! Docs that cannot go stale: every output block of every Markdown file of the project is either
//! checked by a test against what is printed today or marked as a measurement, and every checked
//! block has exactly one test checking it (`tests/common/docs.rs` says how blocks are marked and
//! compared).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::docs::{self, Marker};

/// The calls `docs::check("FILE", "ID", ...)` in the test sources: (file, id) -> where.
fn checking_calls() -> BTreeMap<(String, String), Vec<String>> {
    let tests = docs::root().join("harness/tests");
    let mut sources = Vec::new();
    for dir in [tests.clone(), tests.join("it"), tests.join("common")] {
        for entry in std::fs::read_dir(&dir)
            .expect("the tests directory")
            .flatten()
        {
            let path = entry.path();
            // This file and the helper name the call without making it.
            if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("docs.rs") {
                sources.push(path);
            }
        }
    }
    let mut calls: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for path in sources {
        let text = std::fs::read_to_string(&path).expect("a test source");
        // The call, with its two string literals, may be wrapped by rustfmt over lines.
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for (i, _) in flat.match_indices("docs::check(") {
            let rest = &flat[i + "docs::check(".len()..];
            let mut literals = rest.split('"').skip(1).step_by(2);
            let (Some(file), Some(id)) = (literals.next(), literals.next()) else {
                continue;
            };
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            calls
                .entry((file.to_owned(), id.to_owned()))
                .or_default()
                .push(name.unwrap_or_default());
        }
    }
    calls
}

#[test]
fn every_output_block_is_checked_or_measured() {
    let mut problems = Vec::new();
    let mut marked = BTreeSet::new();
    let files = docs::markdown_files();
    assert!(
        files.iter().any(|f| f == "README.md") && files.iter().any(|f| f.starts_with("docs/")),
        "the Markdown files were found: {files:?}"
    );
    for file in &files {
        let text = std::fs::read_to_string(docs::root().join(file)).expect("a Markdown file");
        for block in docs::blocks(&text) {
            match (&block.marker, block.lang.as_str()) {
                (Some(Marker::Output(id)), _) => {
                    if !marked.insert((file.clone(), id.clone())) {
                        problems.push(format!("{file}:{}: `{id}` marks two blocks", block.line));
                    }
                }
                (Some(Marker::Measured), _) => {}
                (None, "text" | "console") => problems.push(format!(
                    "{file}:{}: an output block with no marker: put `<!-- output: ID -->` \
                     above it and check it with docs::check, or `<!-- measured -->` if it is a \
                     measurement",
                    block.line
                )),
                (None, _) => {}
            }
        }
    }
    let calls = checking_calls();
    for (key, tests) in &calls {
        if !marked.contains(key) {
            problems.push(format!(
                "{tests:?} check `{}` in {}, which marks no such block",
                key.1, key.0
            ));
        } else if tests.len() > 1 {
            problems.push(format!("`{}` in {} is checked by {tests:?}", key.1, key.0));
        }
    }
    for key in &marked {
        if !calls.contains_key(key) {
            problems.push(format!(
                "{}: the block `{}` is marked as checked, but no test calls docs::check for it",
                key.0, key.1
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The parser the rule rests on: markers are read from the line right above the fence only.
#[test]
fn markers_are_read_from_the_line_above_the_fence() {
    let md = "<!-- output: a -->\n```text\nx\n```\n\n<!-- measured -->\n```text\ny\n```\n\
              <!-- output: b -->\n\n```text\nz\n```\n```sh\nls\n```\n";
    let blocks = docs::blocks(md);
    let seen: Vec<(String, Option<Marker>, String)> = blocks
        .into_iter()
        .map(|b| (b.lang, b.marker, b.text))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "text".into(),
                Some(Marker::Output("a".into())),
                "x\n".into()
            ),
            ("text".into(), Some(Marker::Measured), "y\n".into()),
            ("text".into(), None, "z\n".into()),
            ("sh".into(), None, "ls\n".into()),
        ]
    );
}
