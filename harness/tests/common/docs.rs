//! The output blocks of the project's Markdown files, and the one way a test checks one.
//!
//! Every fenced `text` block of a Markdown file shows output, and the line right above its
//! fence says how it is kept true:
//!
//! - `<!-- output: ID -->`: a test produces that output today and compares it with the block
//!   through [`check`] (`tests/it/docs.rs` holds every such ID to exactly one checking call);
//! - `<!-- measured -->`: the record of a run on the project's machine (a benchmark's figures,
//!   timings, a check made by hand on another toolchain), reproduced by the command shown above
//!   it and never compared, since it moves with the machine.
//!
//! A block compares as snapbox compares (backslashes kept as they are): `...` alone on a line
//! stands for any lines, `[..]` inside a line for any text, so what moves with the tables (counts,
//! digests, times) is either computed by the test or a wildcard in the doc. `UPDATE_DOCS=1`
//! rewrites a block that does not match with what was printed, unless the block skips lines with
//! `...`: such a block shows a selection of a long output and is edited by hand.

#![allow(dead_code)] // each test crate uses the helpers it needs

use std::path::{Path, PathBuf};

/// How an output block is kept true: the marker on the line above its fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// `<!-- output: ID -->`: checked by a test through [`check`].
    Output(String),
    /// `<!-- measured -->`: the record of a run, reproduced by its command, never compared.
    Measured,
}

/// One fenced block of a Markdown file.
#[derive(Debug, Clone)]
pub struct Block {
    /// The fence's info string (`text`, `sh`, ...).
    pub lang: String,
    /// The 1-based line of the opening fence.
    pub line: usize,
    /// The marker above the fence, if any.
    pub marker: Option<Marker>,
    /// The block's text, every line ending in a newline.
    pub text: String,
    /// Byte range of `text` in the file.
    pub range: std::ops::Range<usize>,
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness sits in the workspace")
        .to_path_buf()
}

/// Every Markdown file of the project (build output, fuzz corpora and snapshots aside), as
/// paths relative to the workspace root with `/` separators.
pub fn markdown_files() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = rel
                .is_empty()
                .then(|| name.clone())
                .unwrap_or(format!("{rel}/{name}"));
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skip = name.starts_with('.')
                    || matches!(
                        name.as_str(),
                        "target" | "corpus" | "artifacts" | "snapshots"
                    );
                if !skip {
                    walk(&entry.path(), &path, out);
                }
            } else if kind.is_file() && name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out.sort();
    out
}

/// The fenced blocks of `markdown`.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, Option<Marker>, usize)> = None;
    let mut previous = "";
    let mut offset = 0;
    for (n, line) in markdown.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        match &open {
            None => {
                if let Some(lang) = bare.strip_prefix("```") {
                    let marker = marker(previous);
                    open = Some((lang.trim().to_owned(), n + 1, marker, offset));
                }
            }
            Some(_) if bare == "```" => {
                let (lang, first, marker, from) = open.take().expect("an open block");
                out.push(Block {
                    lang,
                    line: first,
                    marker,
                    text: markdown[from..start].to_owned(),
                    range: from..start,
                });
            }
            Some(_) => {}
        }
        previous = bare;
    }
    out
}

fn marker(line: &str) -> Option<Marker> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    if inner == "measured" {
        return Some(Marker::Measured);
    }
    let id = inner.strip_prefix("output:")?.trim();
    (!id.is_empty()).then(|| Marker::Output(id.to_owned()))
}

/// Checks that the block of `doc` (relative to the workspace root) marked `<!-- output: id -->`
/// shows `actual`, wildcards allowed (see the module docs). With `UPDATE_DOCS` set, a block that
/// does not match is rewritten with `actual` instead.
pub fn check(doc: &str, id: &str, actual: &str) -> Result<(), String> {
    let path = root().join(doc);
    let markdown = std::fs::read_to_string(&path).map_err(|e| format!("{doc}: {e}"))?;
    let want = Some(Marker::Output(id.to_owned()));
    let found: Vec<Block> = blocks(&markdown)
        .into_iter()
        .filter(|b| b.marker == want)
        .collect();
    let [block] = found.as_slice() else {
        return Err(format!(
            "{doc}: {} blocks are marked `<!-- output: {id} -->`, one expected",
            found.len()
        ));
    };
    let mut actual = actual.to_owned();
    if !actual.ends_with('\n') {
        actual.push('\n');
    }
    // Backslashes are compared as they are: snapbox would turn the printed ones into `/` (a
    // Windows path's separators), and Markdown's escapes (`\[`) are printed on purpose.
    let verdict = snapbox::Assert::new()
        .action(snapbox::assert::Action::Verify)
        .normalize_paths(false)
        .try_eq(
            Some(&format!("{doc} `{id}`")),
            snapbox::Data::text(actual.clone()),
            snapbox::Data::text(block.text.clone()),
        );
    match verdict {
        Ok(()) => Ok(()),
        // A block that skips lines (`...`) shows a selection: it is edited by hand.
        Err(_) if std::env::var_os("UPDATE_DOCS").is_some() && !skips_lines(&block.text) => {
            let mut fresh = markdown.clone();
            fresh.replace_range(block.range.clone(), &actual);
            std::fs::write(&path, fresh).map_err(|e| format!("{doc}: {e}"))?;
            eprintln!(
                "UPDATE_DOCS: {doc} line {}: block `{id}` rewritten",
                block.line
            );
            Ok(())
        }
        Err(e) => Err(format!(
            "{doc} line {}: the block `{id}` is not what is printed today:\n{e}\n\
             `UPDATE_DOCS=1` rewrites it with what was printed; keep `[..]` and `...` where \
             the output moves",
            block.line
        )),
    }
}

fn skips_lines(block: &str) -> bool {
    block.lines().any(|l| l == "...")
}
