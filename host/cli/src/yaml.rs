//! A fast nesting check of the YAML files Cairn reads (`Pulumi.yaml`, `Pulumi.<stack>.yaml`,
//! `PulumiPlugin.yaml`), made before they are parsed.
//!
//! The YAML parser takes time quadratic in the depth of flow collections (`[[[[…`: a second for
//! 5,000 levels, minutes for a megabyte), and its reader refuses more than 128 levels only after
//! that. [`check_nesting`] bounds the depth in one linear pass over the text, so a deep file is
//! refused at once, naming the file, the line and the limit.
//!
//! The bound is never below the depth the parser would see: block collections are counted by
//! indentation and by the `- ` / `? ` / `: ` indicators that open a collection on the same line;
//! flow collections by their brackets, outside quoted scalars and comments, where a value may
//! start (in block context a `[` inside plain text opens nothing); block scalars (`|`, `>`) are
//! skipped. It may exceed the parser's depth by a level or two, far below the limit for any
//! real file.

use anyhow::{Result, bail};

/// The deepest nesting accepted: the YAML reader's own limit, so the check refuses nothing the
/// reader would accept.
pub const MAX_YAML_DEPTH: usize = 128;

/// Fails, naming `file`, the line and the limit, if `text` nests deeper than [`MAX_YAML_DEPTH`].
pub fn check_nesting(text: &str, file: &str) -> Result<()> {
    if let Some(line) = too_deep(text, MAX_YAML_DEPTH) {
        bail!(
            "{file}: line {line} is nested more than {MAX_YAML_DEPTH} levels deep; YAML files are \
             limited to {MAX_YAML_DEPTH} levels of nesting"
        );
    }
    Ok(())
}

/// The first line (1-based) where the depth bound passes `limit`, if any.
fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut scanner = Scanner::default();
    for (number, line) in text.split('\n').enumerate() {
        if scanner.line(line.strip_suffix('\r').unwrap_or(line)) > limit {
            return Some(number + 1);
        }
    }
    None
}

/// The scanner's state between lines.
#[derive(Default)]
struct Scanner {
    /// Indentation of the open block collections, innermost last.
    indents: Vec<usize>,
    /// Depth of open flow collections (`[`, `{`), which may span lines.
    flow: usize,
    /// Inside a quoted scalar that continues on the next line (its quote character).
    quote: Option<u8>,
    /// Inside a block scalar (`|`, `>`) whose parent line had this indentation.
    block_scalar: Option<usize>,
}

impl Scanner {
    /// Scans one line; returns the deepest nesting bound reached on it.
    fn line(&mut self, line: &str) -> usize {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let blank = bytes[indent..]
            .iter()
            .all(|&b| b == b' ' || b == b'\t' || b == b'\r');
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return 0;
            }
            self.block_scalar = None;
        }
        let mut at = 0;
        let mut base = self.indents.len();
        if self.quote.is_none() && self.flow == 0 {
            if blank || bytes[indent] == b'#' {
                return 0;
            }
            if line.starts_with("---") || line.starts_with("...") || line.starts_with('%') {
                self.indents.clear();
                return 0;
            }
            // Block structure: siblings share an indentation; a deeper one opens a collection.
            while self.indents.last().is_some_and(|&i| i > indent) {
                self.indents.pop();
            }
            if self.indents.last() != Some(&indent) {
                self.indents.push(indent);
            }
            base = self.indents.len();
            at = indent;
        }
        let mut deepest = base + self.flow;
        // Where a value (and so a flow collection or a quoted scalar) may start.
        let mut value_start = self.quote.is_none() && self.flow == 0;
        while at < bytes.len() {
            let b = bytes[at];
            if let Some(q) = self.quote {
                at = self.skip_quoted(bytes, at, q);
                continue;
            }
            if self.flow > 0 {
                match b {
                    b'[' | b'{' => {
                        self.flow += 1;
                        deepest = deepest.max(base + self.flow);
                    }
                    b']' | b'}' => self.flow = self.flow.saturating_sub(1),
                    b'\'' | b'"' if starts_token(bytes, at) => self.quote = Some(b),
                    b'#' if at == 0 || bytes[at - 1] == b' ' || bytes[at - 1] == b'\t' => break,
                    _ => {}
                }
                at += 1;
                if self.flow == 0 {
                    value_start = false;
                }
                continue;
            }
            // Block context.
            if value_start {
                match b {
                    b' ' | b'\t' => {}
                    // `- `, `? `, `: ` open a collection (or an entry of one) on this line.
                    b'-' | b'?' | b':' if is_blank_at(bytes, at + 1) => {
                        base += 1;
                        deepest = deepest.max(base);
                    }
                    // Properties before a value: a tag or an anchor.
                    b'!' | b'&' => {
                        while at < bytes.len() && bytes[at] != b' ' {
                            at += 1;
                        }
                        continue;
                    }
                    b'[' | b'{' => {
                        self.flow = 1;
                        deepest = deepest.max(base + self.flow);
                    }
                    b'\'' | b'"' => {
                        self.quote = Some(b);
                        value_start = false;
                    }
                    b'|' | b'>' if block_scalar_header(&bytes[at + 1..]) => {
                        self.block_scalar = Some(indent);
                        break;
                    }
                    b'#' => break,
                    _ => value_start = false,
                }
                at += 1;
                continue;
            }
            match b {
                // `key: value`: a value starts after the indicator.
                b':' if is_blank_at(bytes, at + 1) => value_start = true,
                b'#' if bytes[at - 1] == b' ' || bytes[at - 1] == b'\t' => break,
                _ => {}
            }
            at += 1;
        }
        deepest
    }

    /// Skips through a quoted scalar from `at` (just after its opening quote, or at the start of
    /// a continuation line); returns where scanning resumes.
    fn skip_quoted(&mut self, bytes: &[u8], mut at: usize, quote: u8) -> usize {
        while at < bytes.len() {
            let b = bytes[at];
            if quote == b'"' && b == b'\\' {
                at += 2;
                continue;
            }
            if b == quote {
                if quote == b'\'' && bytes.get(at + 1) == Some(&b'\'') {
                    at += 2;
                    continue;
                }
                self.quote = None;
                return at + 1;
            }
            at += 1;
        }
        at
    }
}

/// Whether position `at` is the end of the line or a blank.
fn is_blank_at(bytes: &[u8], at: usize) -> bool {
    matches!(bytes.get(at), None | Some(b' ' | b'\t' | b'\r'))
}

/// Whether a quote at `at` starts a quoted scalar in flow context (rather than sitting inside a
/// plain one): the previous non-blank character is a flow indicator, or there is none.
fn starts_token(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .find(|&&b| b != b' ' && b != b'\t')
        .is_none_or(|&b| matches!(b, b'[' | b'{' | b',' | b':' | b'?'))
}

/// Whether what follows `|` or `>` is a block scalar header: indentation and chomping
/// indicators, then a blank, a comment or the end of the line.
fn block_scalar_header(rest: &[u8]) -> bool {
    let indicators = rest
        .iter()
        .take_while(|&&b| b.is_ascii_digit() || b == b'+' || b == b'-')
        .count();
    is_blank_at(rest, indicators)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depth serde_yaml_ng sees: collections nested in the parsed document.
    fn parsed_depth(text: &str) -> usize {
        fn depth(v: &serde_yaml_ng::Value) -> usize {
            match v {
                serde_yaml_ng::Value::Mapping(m) => {
                    1 + m
                        .iter()
                        .map(|(k, v)| depth(k).max(depth(v)))
                        .max()
                        .unwrap_or(0)
                }
                serde_yaml_ng::Value::Sequence(s) => 1 + s.iter().map(depth).max().unwrap_or(0),
                serde_yaml_ng::Value::Tagged(t) => depth(&t.value),
                _ => 0,
            }
        }
        depth(&serde_yaml_ng::from_str(text).unwrap())
    }

    fn bound(text: &str) -> usize {
        let mut scanner = Scanner::default();
        text.split('\n').map(|l| scanner.line(l)).max().unwrap_or(0)
    }

    #[test]
    fn the_bound_is_never_below_the_parsed_depth_and_close_to_it() {
        let cases = [
            "name: web\nruntime: wasm\n",
            "config:\n  web:a: 1\n  web:b:\n    c:\n      - 1\n      - [2, {d: [3]}]\n",
            "- - - - x\n",
            "- a: 1\n  b:\n    - c: [1, [2, [3]]]\n",
            "a: {b: {c: {d: [1, 2, {e: f}]}}}\n",
            "a: &x [1, [2]]\nb: !tag {c: [1]}\n",
            "a: |\n  [[[[[[[[\n  {{{{{{\nb: >-\n  [[[[\n",
            "a: \"[[[[ \\\" [[[\"\nb: '[[['' [[['\nc: x [[[[ y\n",
            "a: [1, \"]]]]\", [2]]\n",
            "a: [1,\n  [2,\n    [3]]]\n",
            "a: \"multi\n  line [[[ \"\nb: [1]\n",
            "? [a, b]\n: [c, [d]]\n",
            "a: x # [[[[ comment\nb: 'it''s' # {{{{\n",
            "---\na: [1]\n",
            "config:\n  ? web:long\n  : v\n",
            "a:\n  - - - [b]\n",
        ];
        for text in cases {
            let (bound, parsed) = (bound(text), parsed_depth(text));
            assert!(bound >= parsed, "{text:?}: bound {bound} < depth {parsed}");
            assert!(
                bound <= parsed + 2,
                "{text:?}: bound {bound} ≫ depth {parsed}"
            );
        }
    }

    #[test]
    fn deep_files_are_refused_at_once_naming_the_line() {
        let flow = format!("a: {}{}\n", "[".repeat(1_000_000), "]".repeat(1_000_000));
        let started = std::time::Instant::now();
        let err = check_nesting(&flow, "Pulumi.dev.yaml")
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(
            err,
            "Pulumi.dev.yaml: line 1 is nested more than 128 levels deep; YAML files are limited \
             to 128 levels of nesting"
        );
        let block: String = (0..200)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert!(
            check_nesting(&block, "Pulumi.yaml")
                .unwrap_err()
                .to_string()
                .contains("line 129")
        );
        let compact = format!("x:\n{}y\n", "- ".repeat(300));
        assert!(check_nesting(&compact, "Pulumi.yaml").is_err());
        // A bracket hidden by a quote opened inside a plain scalar is still counted.
        let hidden = format!("a: [b'{}\n", "[".repeat(200));
        assert!(check_nesting(&hidden, "Pulumi.yaml").is_err());
        // Brackets inside quoted scalars and block scalars nest nothing.
        let quoted = format!("a: \"{}\"\nb: |\n  {}\n", "[".repeat(500), "{".repeat(500));
        check_nesting(&quoted, "Pulumi.yaml").unwrap();
        let exactly = format!("a: {}{}\n", "[".repeat(127), "]".repeat(127));
        check_nesting(&exactly, "Pulumi.yaml").unwrap();
    }
}
