//! The house rules of the sources, checked on the files themselves: the harness's modules stack
//! in the layers the crate docs list (no arrow back up, no circle), and every function of the
//! workspace stays short enough to read or says why it is not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The harness's source directory.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The top-level module a library file belongs to (`oracle/weights.rs` is `oracle`), or `None`
/// for the crate root and the binary's files.
fn top_module(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (!["lib", "main", "cli"].contains(&name.as_str())).then_some(name)
}

/// A file's text without its unit-test module (tests may use whatever they test).
fn library_text(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    match text.find("#[cfg(test)]\nmod ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The top-level modules `text` names through `crate::` (in code and in doc links alike:
/// a link is an arrow a reader follows), grouped imports (`crate::{a, b}`) included.
fn named_modules(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `ge_spec_crate::`, not ours
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(
                inner
                    .split(',')
                    .map(|p| ident(p.trim()))
                    .filter(|m| !m.is_empty()),
            );
        } else {
            let m = ident(rest);
            if !m.is_empty() {
                out.insert(m);
            }
        }
    }
    out
}

/// The layers of the crate docs' table: module name to layer number.
fn layers() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut out = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//! | ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let Some(n) = cells[0]
            .split(' ')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        for name in cells[1].split(", ") {
            let name = name.trim().trim_matches('`').to_owned();
            assert!(
                out.insert(name.clone(), n).is_none(),
                "module `{name}` is in two layers of lib.rs's table"
            );
        }
    }
    out
}

/// Module to the modules it names, for every module of the library.
fn arrows() -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src()) {
        let Some(from) = top_module(&file) else {
            continue;
        };
        let named = named_modules(&library_text(&file));
        out.entry(from.clone())
            .or_default()
            .extend(named.into_iter().filter(|m| *m != from));
    }
    out
}

#[test]
fn every_module_of_the_library_is_in_exactly_one_layer() {
    let layers = layers();
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_owned())
        .collect();
    let listed: BTreeSet<String> = layers.keys().cloned().collect();
    assert_eq!(
        declared, listed,
        "lib.rs's modules and its layer table differ"
    );
}

#[test]
fn no_module_names_one_of_a_higher_layer() {
    let layers = layers();
    let mut wrong = Vec::new();
    for (from, to) in arrows() {
        for t in to {
            let (Some(a), Some(b)) = (layers.get(&from), layers.get(&t)) else {
                wrong.push(format!("{from} -> {t}: not in the layer table"));
                continue;
            };
            if b > a {
                wrong.push(format!("{from} (layer {a}) -> {t} (layer {b})"));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows back up:\n{}", wrong.join("\n"));
}

#[test]
fn no_two_modules_name_each_other_through_any_path() {
    let arrows = arrows();
    // Depth-first search for a back edge; the path to it is the circle.
    fn visit(
        m: &str,
        arrows: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut circle = path[i..].to_vec();
            circle.push(m.to_owned());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for next in arrows.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, arrows, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for m in arrows.keys() {
        if let Some(circle) = visit(m, &arrows, &mut Vec::new(), &mut done) {
            panic!("a circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_arrow_reader_sees_code_links_and_groups() {
    let named = named_modules(
        "use crate::{certify, fuzz};\n/// see [`crate::runner::ask`]\nlet x = crate::input::MAX;\nge_crate::nope",
    );
    let want: BTreeSet<String> = ["certify", "fuzz", "runner", "input"]
        .map(String::from)
        .into();
    assert_eq!(named, want);
}

/// The repository: the workspace's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Rust sources of the whole workspace, the fuzz crate included: every member's `src`,
/// `tests`, `benches` and `examples`, its `build.rs`, and the fuzz targets.
fn workspace_files() -> Vec<PathBuf> {
    let root = repo();
    let crates = [
        "spec",
        "reference-impl",
        "dylib",
        "harness",
        "examples/vendor-engine",
        "examples/text-engine",
        "fuzz",
    ];
    let mut out = Vec::new();
    for c in crates {
        for dir in ["src", "tests", "benches", "examples", "fuzz_targets"] {
            let d = root.join(c).join(dir);
            if d.is_dir() {
                out.extend(rust_files(&d));
            }
        }
        let build = root.join(c).join("build.rs");
        if build.is_file() {
            out.push(build);
        }
    }
    out
}

/// Library code: what a vendor links or the command line runs (a crate's `src` and
/// `build.rs`), as opposed to tests, benches, the example engines and fuzz targets.
fn is_library(file: &str) -> bool {
    !file.starts_with("examples/") && (file.contains("/src/") || file.ends_with("build.rs"))
}

/// Every function of the workspace ([`workspace_files`]) as (file relative to the repository,
/// first line, name, length in lines), read with rustfmt's layout: a function ends at the first
/// `}` at its own indent.
fn functions() -> Vec<(String, usize, String, usize)> {
    let mut out = Vec::new();
    for file in workspace_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = line.len() - code.len();
            let Some(at) = code.find("fn ") else {
                continue;
            };
            let head_ok = code[..at].split_whitespace().all(|w| {
                w.starts_with("pub") || ["const", "unsafe", "async", "extern", "\"C\""].contains(&w)
            });
            let whole = line.trim_end();
            if !head_ok || whole.ends_with(';') || whole.ends_with('}') || code.starts_with("//") {
                continue;
            }
            let close = format!("{}}}", " ".repeat(indent));
            let Some(end) = lines[i..].iter().position(|l| *l == close) else {
                continue;
            };
            let name: String = code[at + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let rel = file.strip_prefix(repo()).unwrap().display().to_string();
            out.push((rel, i + 1, name, end + 1));
        }
    }
    out
}

/// The comment lines and attributes just above line `at` (1-based) of `file`.
fn said_above(file: &str, at: usize) -> String {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    lines[..at - 1]
        .iter()
        .rev()
        .take_while(|l| {
            let t = l.trim_start();
            t.starts_with("//") || t.starts_with("#[")
        })
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_oracle_file_stays_under_a_thousand_lines() {
    let oracle = src().join("oracle");
    let files = rust_files(&oracle);
    assert!(files.len() > 20, "the oracle has {} files", files.len());
    for file in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(
            lines <= 1000,
            "{} has {lines} lines: split it by family of clauses, as the oracle's other files are",
            file.strip_prefix(src()).unwrap().display()
        );
    }
}

#[test]
fn functions_are_short_or_say_why_they_are_not() {
    let all = functions();
    assert!(
        all.len() > 2000,
        "the reader found only {} functions",
        all.len()
    );
    for crate_dir in [
        "spec/",
        "reference-impl/",
        "harness/tests/",
        "fuzz/fuzz_targets/",
    ] {
        assert!(
            all.iter().any(|f| f.0.starts_with(crate_dir)),
            "the reader found no function in {crate_dir}"
        );
    }
    let over = |n: usize| -> Vec<&(String, usize, String, usize)> {
        all.iter().filter(|f| f.3 > n).collect()
    };
    let show = |fs: &[&(String, usize, String, usize)]| {
        fs.iter()
            .map(|(file, at, name, len)| format!("{file}:{at} {name}: {len} lines"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let library = |n: usize| -> Vec<&(String, usize, String, usize)> {
        over(n).into_iter().filter(|f| is_library(&f.0)).collect()
    };
    let huge = library(120);
    assert!(
        huge.is_empty(),
        "library code over 120 lines:\n{}",
        show(&huge)
    );
    let long = over(80);
    let long_library = library(80);
    assert!(
        long_library.len() <= 12,
        "more than 12 functions of library code over 80 lines:\n{}",
        show(&long_library)
    );
    let silent: Vec<_> = long
        .into_iter()
        .filter(|(file, at, ..)| !said_above(file, *at).contains("Long because"))
        .collect();
    assert!(
        silent.is_empty(),
        "over 80 lines without a `// Long because: ...` comment above:\n{}",
        show(&silent)
    );
}

/// The numbers the tables state that code must read from them, never restate, each with what it
/// is: every integer range's largest value, the ones beside it and its default, and every
/// upstream constant. Numbers under 1,000 are left out: they mean too many other things.
fn table_bounds() -> BTreeMap<u64, String> {
    let spec = ge_spec::Spec::embedded();
    let mut out = BTreeMap::new();
    for o in spec.options() {
        if let Some(max) = o.max {
            out.insert(max, format!("the largest {}", o.key));
            out.insert(max + 1, format!("one past the largest {}", o.key));
            out.insert(max - 1, format!("one below the largest {}", o.key));
        }
        if let (Some(_), Some(d)) = (o.max, o.default_number()) {
            out.insert(d, format!("the default {}", o.key));
        }
    }
    for c in spec.clauses() {
        for (name, v) in c.upstream.iter().flat_map(|u| &u.constants) {
            out.insert(*v, format!("{}'s upstream {name}", c.id));
        }
    }
    out.retain(|v, _| *v >= 1000);
    out
}

/// Where a number equal to a table bound stands for something else: (file, text on the line,
/// why).
const NOT_BOUNDS: &[(&str, &str, &str)] = &[
    (
        "reference-impl/src/memory.rs",
        "FEW_SWEEPS_FROM",
        "a count of tensors from which the planner sweeps less, not an option's value",
    ),
    (
        "harness/src/snapshot.rs",
        "(\"ge.exec.input_fusion_size\", \"131072\")",
        "the source text's configuration example, quoted as written (the text's, not the default)",
    ),
];

/// The decimal numbers on a line of code (underscores dropped, a type suffix allowed), outside
/// its `//` comment.
fn numbers_on(line: &str) -> Vec<u64> {
    let code = line.split("//").next().unwrap_or("");
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let mut digits = String::new();
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
            if bytes[i] != b'_' {
                digits.push(char::from(bytes[i]));
            }
            i += 1;
        }
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
    }
    out
}

/// A changed bound in the tables must move everything that depends on it: the reference, the
/// judge, the generators and the showcases read it from `ge-spec` (`OptionSpec::edges`,
/// `default_number`, `Spec::upstream_constant`). A literal equal to a bound in their code is
/// a copy a change would leave stale, silently (a stale generator only loses reach).
#[test]
fn no_source_restates_a_bound_of_the_tables() {
    let bounds = table_bounds();
    assert!(bounds.len() >= 4, "{bounds:?}");
    let root = repo();
    let mut found = Vec::new();
    // The suite's code and its tests; not the example engines, which are engines written from
    // the text (a changed bound changes them as it changes any vendor's).
    for dir in [
        "spec/src",
        "spec/tests",
        "harness/src",
        "harness/tests",
        "reference-impl/src",
        "reference-impl/tests",
    ] {
        for file in rust_files(&root.join(dir)) {
            let rel = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // This file: its exceptions and the reader's own test inputs.
            if rel == "harness/tests/it/house.rs" {
                continue;
            }
            for (n, line) in library_text(&file).lines().enumerate() {
                let waived = NOT_BOUNDS
                    .iter()
                    .any(|(f, text, _)| rel == *f && line.contains(text));
                for v in numbers_on(line) {
                    if let Some(what) = bounds.get(&v).filter(|_| !waived) {
                        found.push(format!("{rel}:{}: {v} ({what}): {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "read these from the tables (ge-spec) instead:\n{}",
        found.join("\n")
    );
    // Each exception still stands where it says.
    for (file, text, why) in NOT_BOUNDS {
        let body = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            body.contains(text),
            "{file} no longer holds `{text}` ({why})"
        );
    }
}

#[test]
fn the_number_reader_sees_literals_not_names_or_comments() {
    assert_eq!(
        numbers_on("let x = 33_554_432u64 + 7; // 131072"),
        [33_554_432, 7]
    );
    assert_eq!(numbers_on("v2 = \"131072\""), [131_072]);
    assert!(numbers_on("log2(x) a_1").is_empty());
}
