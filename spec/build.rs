//! Lists every table file under `tables/` so the crate embeds all of them: a new file is never
//! silently missed, and a changed one rebuilds the crate.

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    let tables = root.join("tables");
    println!("cargo::rerun-if-changed=tables");
    let mut files = Vec::new();
    collect(&tables, &mut files);
    let mut code = String::from("/// Every table file, as (path under `tables/`, contents).\n");
    code.push_str("pub(crate) static TABLE_FILES: &[(&str, &str)] = &[\n");
    for file in &files {
        let rel = file
            .strip_prefix(&tables)
            .expect("under tables/")
            .to_string_lossy()
            .replace('\\', "/");
        code.push_str(&format!(
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/tables/{rel}\"))),\n"
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this")).join("tables.rs");
    fs::write(out, code).expect("write generated table list");
}
