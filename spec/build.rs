//! Lists every table file under `tables/` so the crate embeds all of them: a new file is never
//! silently missed, and a changed one rebuilds the crate. Each is embedded as written and as
//! JSON, the faster form to read at run time.

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
    // The same tables as JSON, which the embedded contract is read from: reading JSON costs a
    // fraction of reading TOML, and every process of a vendor's suite under nextest (one per
    // trial) reads the whole contract. The TOML text stays what the digest is made of and what
    // `Spec::embedded_files` gives; a test holds the two readings equal.
    code.push_str("/// The table files of [`TABLE_FILES`] as JSON, in the same order.\n");
    code.push_str("pub(crate) static TABLE_JSON: &[&str] = &[\n");
    for file in &files {
        let text = fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        // A table that is not TOML is left to the loader, which says where it is broken.
        let json = toml::from_str::<toml::Value>(&text)
            .ok()
            .and_then(|v| serde_json::to_string(&v).ok())
            .unwrap_or_default();
        code.push_str(&format!("    {json:?},\n"));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this")).join("tables.rs");
    fs::write(out, code).expect("write generated table list");
}
