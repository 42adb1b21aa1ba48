//! Finds where the library judges each clause, so that `ge-conformance explain ID` can say it:
//! every function of `src/` (the command line and unit tests left out) that names a clause ID
//! in code, and in the options oracle the functions that charge an option's clause by its
//! number (`clause(key, 4)`, `value_clause(key)`). Written to `$OUT_DIR/check_sites.rs` as
//! (clause or `@N`, file in the repository, line of the function, function name), with every
//! function of the oracles (file, line, name), where the registry's checks are looked up.
//! It also has the linker export the binary's no-op coverage callbacks (`src/cli/sancov.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file of the library under `dir`, sorted.
fn collect(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(root).expect("under src");
        if rel == Path::new("main.rs") || rel.starts_with("cli") {
            continue;
        }
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the function a line defines, if it defines one.
fn defined_fn(line: &str) -> Option<&str> {
    let code = line.trim_start();
    let at = code.find("fn ")?;
    let before = &code[..at];
    let words_ok = before.split_whitespace().all(|w| {
        w.starts_with("pub") || ["const", "unsafe", "async", "extern", "\"C\""].contains(&w)
    });
    if !words_ok {
        return None;
    }
    let rest = &code[at + 3..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The clause IDs (`ABC-123`) quoted in a line of code.
fn quoted_ids(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len().saturating_sub(8) {
        let w = &b[i..i + 9];
        if w[0] == b'"'
            && w[1..4].iter().all(u8::is_ascii_uppercase)
            && w[4] == b'-'
            && w[5..8].iter().all(u8::is_ascii_digit)
            && w[8] == b'"'
        {
            out.push(line[i + 1..i + 8].to_owned());
        }
    }
    out
}

/// The option clause numbers a line charges by number: `clause(key, N)` and `value_clause(`.
fn numbered(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    if line.contains("value_clause(") && defined_fn(line).is_none() {
        out.push("@1".to_owned());
    }
    for (i, _) in line.match_indices("clause(key, ") {
        if line[..i].ends_with("value_") || line[..i].ends_with("fn ") {
            continue;
        }
        let digits: String = line[i + "clause(key, ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse::<u32>() {
            out.push(format!("@{n}"));
        }
    }
    out
}

/// The judges that charge any clause a case or a comparison names, by key (`#cases`,
/// `#pattern`, `#reference`): (key, file under `src/`, function). A function renamed or moved
/// stops the build here, so `explain` never points at one that is gone.
const GENERIC: [(&str, &str, &str); 3] = [
    ("#cases", "runner.rs", "judge_observation"),
    ("#pattern", "pattern.rs", "check"),
    ("#reference", "certify.rs", "compare"),
];

/// Has the linker export the command line's no-op coverage callbacks (`src/cli/sancov.rs`) from
/// the binary, where an engine built with clang's `-fsanitize=fuzzer-no-link` and opened by
/// `certify --backend dylib:` or `serve-dylib` finds them. Linux only, as are the callbacks.
fn export_coverage_callbacks() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    for symbol in ["__sanitizer_cov_*", "__sancov_lowest_stack"] {
        println!("cargo::rustc-link-arg-bin=ge-conformance=-Wl,--export-dynamic-symbol={symbol}");
    }
}

// Long because: one pass over the sources that collects the clause sites, the generic judges and
// the oracle's functions together, then writes them.
fn main() {
    export_coverage_callbacks();
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    let src = root.join("src");
    println!("cargo::rerun-if-changed=src");
    let mut files = Vec::new();
    collect(&src, &src, &mut files);
    let mut sites = BTreeSet::new();
    let mut generic = BTreeSet::new();
    let mut functions = BTreeSet::new();
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(&file).expect("a source file");
        // The functions the line is in, innermost last: (indent, line, name), each closed by
        // a `}` at its own indent (rustfmt's layout).
        let mut open: Vec<(usize, usize, String)> = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("#[cfg(test)]")
                && lines.get(i + 1).is_some_and(|l| l.starts_with("mod "))
            {
                break;
            }
            let indent = line.len() - line.trim_start().len();
            if line.trim() == "}" {
                open.retain(|(at, _, _)| *at < indent);
            }
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(name) = defined_fn(line) {
                if rel.starts_with("oracle/") {
                    functions.insert((format!("harness/src/{rel}"), i + 1, name.to_owned()));
                }
                if let Some((key, ..)) = GENERIC.iter().find(|(_, f, n)| *f == rel && *n == name) {
                    generic.insert((
                        key.to_string(),
                        format!("harness/src/{rel}"),
                        i + 1,
                        name.to_owned(),
                    ));
                }
                let whole = line.trim_end();
                if !(whole.ends_with(';') || whole.ends_with('}')) {
                    open.push((indent, i + 1, name.to_owned()));
                }
            }
            let (at, name) = match open.last() {
                Some((_, at, name)) => (*at, name.clone()),
                None => (i + 1, String::new()),
            };
            let numbers = if rel == "oracle/options.rs" || rel.starts_with("oracle/options/") {
                numbered(line)
            } else {
                Vec::new()
            };
            for id in quoted_ids(line).into_iter().chain(numbers) {
                sites.insert((id, format!("harness/src/{rel}"), at, name.clone()));
            }
        }
    }
    for (key, file, name) in GENERIC {
        assert!(
            generic.iter().any(|(k, ..)| k == key),
            "build.rs: no function {name} in src/{file} (GENERIC lists it as the {key} judge)"
        );
    }
    sites.extend(generic);
    let mut code = String::from(
        "/// Where the library names each clause: (clause ID, `@N` for an option's clause N\n\
         /// charged by number, or `#...` for a generic judge; file in the repository; line of the function; the function).\n\
         pub(crate) static SITES: &[(&str, &str, u32, &str)] = &[\n",
    );
    for (id, file, line, name) in sites {
        code.push_str(&format!("    ({id:?}, {file:?}, {line}, {name:?}),\n"));
    }
    code.push_str("];\n");
    code.push_str(
        "/// Every function of the oracles (file in the repository, line, name), where the\n\
         /// registry's checks are found by name.\n\
         pub(crate) static FUNCTIONS: &[(&str, u32, &str)] = &[\n",
    );
    for (file, line, name) in functions {
        code.push_str(&format!("    ({file:?}, {line}, {name:?}),\n"));
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this")).join("check_sites.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
