//! Keeps `docs/faults.md`, the fault-detection table, in step with the deliberately wrong
//! backends of `faults_*.rs`: every named `#[case::...]` there is one row (capability, fault,
//! the clause that must catch it). Those tests prove each row; this one only checks that the
//! published table lists exactly them. Run with `UPDATE_FAULTS=1` to rewrite the table after
//! adding a fault, then review the diff. Each fault's class (integer width, length, ...) comes
//! from `fault_classes.toml`.

use std::collections::BTreeMap;
use std::path::Path;

use ge_conformance::judging::Judging;
use ge_spec::Profile;

/// One named fault case: the capability, the case name, the fault expression, the clauses.
#[derive(Debug)]
struct Row {
    capability: String,
    name: String,
    fault: String,
    clauses: Vec<String>,
}

/// Splits `Fault::X(..), "A-001", "B-002"` at top-level commas.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut cur) = (0i32, false, String::new());
    for ch in args.chars() {
        match ch {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(cur.trim().to_owned());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

fn rows(tests: &Path) -> Vec<Row> {
    let mut files: Vec<_> = std::fs::read_dir(tests)
        .expect("the tests directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("faults_") && n.ends_with(".rs"))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let stem = file.file_stem().and_then(|s| s.to_str()).expect("a name");
        let capability = stem.trim_start_matches("faults_").to_owned();
        let text = std::fs::read_to_string(&file).expect("a fault test file");
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(first) = line.trim().strip_prefix("#[case::") else {
                continue;
            };
            // An attribute rustfmt wrapped over several lines is joined back first.
            let mut rest = first.to_owned();
            while !rest.ends_with(")]") {
                let Some(more) = lines.next() else { break };
                rest.push_str(more.trim());
            }
            let Some((name, args)) = rest.split_once('(') else {
                continue;
            };
            let args = args.strip_suffix(")]").expect("a closed case attribute");
            let args = args.trim_end_matches(',');
            let mut parts = split_args(args).into_iter();
            let fault = parts.next().expect("a fault");
            let clauses = parts.map(|c| c.trim_matches('"').to_owned()).collect();
            out.push(Row {
                capability: capability.clone(),
                name: name.replace('_', " "),
                fault,
                clauses,
            });
        }
    }
    out
}

/// One class of realistic fault (`fault_classes.toml`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Class {
    name: String,
    what: String,
    faults: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Classes {
    class: Vec<Class>,
}

fn classes(tests: &Path) -> Vec<Class> {
    let text = std::fs::read_to_string(tests.join("fault_classes.toml")).expect("the classes");
    toml::from_str::<Classes>(&text)
        .expect("fault_classes.toml parses")
        .class
}

/// The class of each fault, `<capability>/<name>` -> class name.
fn class_of(classes: &[Class]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for c in classes {
        for f in &c.faults {
            let before = out.insert(f.clone(), c.name.clone());
            assert!(before.is_none(), "{f} is in two classes");
        }
    }
    out
}

fn markdown(rows: &[Row], classes: &[Class]) -> String {
    let class = class_of(classes);
    let class_of_row = |r: &Row| {
        class
            .get(&format!("{}/{}", r.capability, r.name))
            .map_or("rule", String::as_str)
    };
    let mut s = String::from(
        "# Fault-detection table\n\n\
         Written by `UPDATE_FAULTS=1 cargo test -p ge-conformance --test it fault_table::` from the\n\
         named cases of `harness/tests/faults_*.rs`. Each row is a deliberately wrong backend,\n\
         the reference with one rule broken, and the clause whose cases must fail it, at the\n\
         level that clause belongs to: `documented` for what the source text states (a failure\n\
         at the default level), `strict` for the suite's own choices (a deviation at level\n\
         documented, a failure at level strict). `cargo test -p ge-conformance --test\n\
         faults_<capability>` proves every row (the transfer rows also name the clause the\n\
         transfer oracle alone, without the cases' expectations, must report). The same tests\n\
         check that the reference itself fails nothing, even at level strict. The class says\n\
         what kind of engine bug the fault stands for (`harness/tests/fault_classes.toml`); a\n\
         fault of class `rule` breaks one rule of a clause.\n\n",
    );
    let mut caps: Vec<&str> = rows.iter().map(|r| r.capability.as_str()).collect();
    caps.dedup();
    let level = |r: &Row| {
        r.clauses
            .first()
            .map(|c| Judging::failing(Profile::Documented, c).level.as_str())
            .unwrap_or_default()
    };
    s.push_str("| capability | faults | caught at level documented | at level strict |\n|---|---:|---:|---:|\n");
    for cap in &caps {
        let of: Vec<&Row> = rows.iter().filter(|r| r.capability == *cap).collect();
        let doc = of.iter().filter(|r| level(r) == "documented").count();
        s.push_str(&format!(
            "| {cap} | {} | {doc} | {} |\n",
            of.len(),
            of.len() - doc
        ));
    }
    let doc = rows.iter().filter(|r| level(r) == "documented").count();
    s.push_str(&format!(
        "| **all** | **{}** | **{doc}** | **{}** |\n",
        rows.len(),
        rows.len() - doc
    ));
    s.push_str("\n| class | what | faults |\n|---|---|---:|\n");
    for c in classes {
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            c.name,
            c.what,
            c.faults.len()
        ));
    }
    let rules = rows.iter().filter(|r| class_of_row(r) == "rule").count();
    s.push_str(&format!(
        "| rule | one rule of a clause broken | {rules} |\n"
    ));
    for cap in caps {
        s.push_str(&format!(
            "\n## {cap}\n\n| fault | class | wrong backend | caught by | level |\n|---|---|---|---|---|\n"
        ));
        for r in rows.iter().filter(|r| r.capability == cap) {
            let clauses = r
                .clauses
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            s.push_str(&format!(
                "| {} | {} | `{}` | {clauses} | {} |\n",
                r.name,
                class_of_row(r),
                r.fault.replace('|', "\\|"),
                level(r)
            ));
        }
    }
    s
}

#[test]
fn the_fault_table_lists_every_named_fault() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = rows(&root.join("tests/it"));
    assert!(
        rows.len() >= 100,
        "only {} named faults found: is the parser still reading the attributes?",
        rows.len()
    );
    assert!(
        rows.iter().all(|r| !r.clauses.is_empty()),
        "every fault names the clause that catches it"
    );
    let classes = classes(&root.join("tests"));
    let names: Vec<String> = rows
        .iter()
        .map(|r| format!("{}/{}", r.capability, r.name))
        .collect();
    for c in &classes {
        assert!(!c.faults.is_empty(), "class {} has no fault", c.name);
        for f in &c.faults {
            assert!(names.contains(f), "class {}: no fault named {f}", c.name);
        }
    }
    let want = markdown(&rows, &classes);
    let path = root.join("../docs/faults.md");
    if std::env::var_os("UPDATE_FAULTS").is_some() {
        std::fs::write(&path, &want).expect("docs/faults.md written");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/faults.md is out of date; run `UPDATE_FAULTS=1 cargo test -p ge-conformance --test it fault_table::` and review the diff"
    );
}
