//! The libFuzzer dictionary every fuzz target is run with (`-dict=`), written from the options
//! table: the option keys, the values at and just past the edges of each option
//! ([`ge_spec::Edges`]), the powers of two at the width of each range and of the integer types
//! an engine parses into, the separators of the list grammars and the spellings of a decimal
//! that a parser may mishandle. libFuzzer splices these into inputs, so a campaign reaches an
//! engine's boundary compares without a hand-made seed.

use ge_spec::{Grammar, Spec};

/// The widths, in bits, of the integer types a C or C++ engine parses a decimal into: a value
/// at or just past `2^w` is where a narrowing or an overflow shows.
const TYPE_WIDTHS: [u32; 4] = [31, 32, 63, 64];

/// Spellings around a decimal that a parser may take or refuse wrongly: signs, blanks, a
/// leading zero, a fraction, an exponent, a hexadecimal prefix.
const SPELLINGS: [&str; 8] = ["+", "-", " ", "\t", "00", ".0", "e1", "0x"];

/// Pieces of a path: the separator, the parent and current directories.
const PATH_PIECES: [&str; 4] = ["/", "..", "./", "//"];

/// The dictionary's text, in libFuzzer's format: one quoted entry a line, comments naming where
/// each group comes from. Each value is given bare (for inputs read with `arbitrary`) and as a
/// JSON string (for the JSON seeds of the case tables).
pub fn dictionary(spec: &Spec) -> String {
    let mut d = Dict::default();
    d.comment(
        "ge-conformance fuzz dictionary, written from the options table by `ge-conformance corpus`",
    );
    for o in spec.options() {
        d.comment(o.key.as_str());
        d.entry(o.key.as_str());
        let edges = o.edges();
        for v in edges.accepted.iter().chain(&edges.refused) {
            d.value(v);
        }
        if let Some(bits) = o.range_bits() {
            d.power_of_two(bits);
        }
        for sep in o.grammar.separators() {
            d.entry(&sep.to_string());
        }
        if o.grammar == Grammar::Path {
            for piece in PATH_PIECES {
                d.entry(piece);
            }
        }
    }
    d.comment("the widths of the integer types an engine parses into");
    for bits in TYPE_WIDTHS {
        d.power_of_two(bits);
    }
    d.comment("spellings around a decimal");
    for s in SPELLINGS {
        d.entry(s);
    }
    d.text
}

/// A dictionary being written: its text and the entries it holds (each written once).
#[derive(Default)]
struct Dict {
    text: String,
    seen: std::collections::BTreeSet<String>,
}

impl Dict {
    fn comment(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// One entry, unless it is there already.
    fn entry(&mut self, token: &str) {
        if !self.seen.insert(token.to_owned()) {
            return;
        }
        self.text.push('"');
        for b in token.bytes() {
            match b {
                b'"' | b'\\' => {
                    self.text.push('\\');
                    self.text.push(char::from(b));
                }
                0x20..=0x7e => self.text.push(char::from(b)),
                _ => self.text.push_str(&format!("\\x{b:02X}")),
            }
        }
        self.text.push_str("\"\n");
    }

    /// A value bare and as a JSON string.
    fn value(&mut self, v: &str) {
        self.entry(v);
        self.entry(&format!("\"{v}\""));
    }

    /// `2^bits - 1` and `2^bits`, as decimals (`2^64` is past `u64`, so spelt from `u128`).
    fn power_of_two(&mut self, bits: u32) {
        let p = 1u128 << bits;
        self.value(&(p - 1).to_string());
        self.value(&p.to_string());
    }
}

/// The entries of a dictionary's text, unquoted and unescaped; `None` for a line that is not
/// a comment, a blank or a well-formed entry.
pub fn entries(text: &str) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let inner = line.strip_prefix('"')?.strip_suffix('"')?;
        let mut bytes = Vec::new();
        let mut rest = inner.bytes();
        while let Some(b) = rest.next() {
            match b {
                b'\\' => match rest.next()? {
                    b'x' => {
                        let hex = [rest.next()?, rest.next()?];
                        let hex = std::str::from_utf8(&hex).ok()?;
                        bytes.push(u8::from_str_radix(hex, 16).ok()?);
                    }
                    c @ (b'"' | b'\\') => bytes.push(c),
                    _ => return None,
                },
                b'"' => return None,
                _ => bytes.push(b),
            }
        }
        out.push(bytes);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(entries: &[Vec<u8>], token: &str) -> bool {
        entries.iter().any(|e| e == token.as_bytes())
    }

    #[test]
    fn every_bound_of_the_tables_is_an_entry_bare_and_quoted() {
        let spec = Spec::embedded();
        let all = entries(&dictionary(spec)).expect("well-formed");
        for o in spec.options() {
            assert!(has(&all, o.key.as_str()), "{}", o.key);
            let e = o.edges();
            for v in e.accepted.iter().chain(&e.refused) {
                assert!(has(&all, v), "{}: {v}", o.key);
                assert!(has(&all, &format!("\"{v}\"")), "{}: \"{v}\"", o.key);
            }
            for sep in o.grammar.separators() {
                assert!(has(&all, &sep.to_string()), "{}: {sep}", o.key);
            }
        }
        // The narrowing the C++ example's planted bug makes: 2^32 read into 32 bits.
        assert!(has(&all, "4294967296"));
        assert!(has(&all, "18446744073709551616"));
        assert!(has(&all, "\t"));
    }

    #[test]
    fn entries_are_unique_and_round_trip_through_the_escapes() {
        let text = dictionary(Spec::embedded());
        let all = entries(&text).expect("well-formed");
        let unique: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
        let mut d = Dict::default();
        d.entry("a\"b\\c\u{1}");
        assert_eq!(d.text, "\"a\\\"b\\\\c\\x01\"\n");
        assert_eq!(entries(&d.text), Some(vec![b"a\"b\\c\x01".to_vec()]));
        assert_eq!(entries("\"unterminated\n"), None);
        assert_eq!(entries("\"bad \\q escape\"\n"), None);
    }
}
