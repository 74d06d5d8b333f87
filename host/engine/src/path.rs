//! Property paths (`root.array[0]["key"]`, `tags[*]`): parsing, canonical printing, and
//! evaluation (get, set, delete, reset) on [`PropertyValue`]s.
//!
//! Paths address properties for `ignoreChanges`, `replaceOnChanges`, detailed diffs and
//! `config set --path`. Grammar, as Pulumi accepts it:
//!
//! ```text
//! path    := first ( '.' key | '[' index ']' )*
//! first   := key | '[' index ']'
//! key     := one or more characters up to the next '.' or '['
//! index   := digits | '*' | '"' ( '\"' | '\\' | any other character but '"' )* '"'
//! ```
//!
//! `[*]`, `["*"]` and a bare `*` key are all wildcards: they match every element of an array and every value of
//! an object. Evaluation descends transparently through secrets and outputs with known values.
//!
//! # `[*]` and `["*"]`
//!
//! `[*]` and `["*"]` both parse to a wildcard (as Pulumi does); the canonical print is `[*]`.
//!
//! # One path grammar
//!
//! `config set --path` parses with `PropertyPath` too, but evaluates on the stored JSON (not
//! `PropertyValue`) so integers stay integers, `{secure: …}` leaves stay opaque, and an index may
//! only append; wildcards are refused there.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::PropertyValue;

/// Why a property path could not be parsed, or a value could not be set at it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("invalid property path: it is empty")]
    Empty,
    #[error(
        "invalid property path {path:?}: unexpected {found:?} at byte {offset}, expected {expected}"
    )]
    Unexpected {
        path: String,
        offset: usize,
        found: char,
        expected: &'static str,
    },
    #[error("invalid property path {path:?}: empty key after the '.' at byte {offset}")]
    EmptyKey { path: String, offset: usize },
    #[error(
        "invalid property path {path:?}: unterminated string starting at byte {offset} (missing closing '\"')"
    )]
    UnterminatedString { path: String, offset: usize },
    #[error("invalid property path {path:?}: missing ']' to close the '[' at byte {offset}")]
    MissingBracket { path: String, offset: usize },
    #[error("invalid property path {path:?}: invalid index {index:?} at byte {offset}: {reason}")]
    BadIndex {
        path: String,
        offset: usize,
        index: String,
        reason: &'static str,
    },
    #[error(
        "invalid property path {path:?}: unsupported escape '\\{found}' at byte {offset} (only '\\\"' and '\\\\' are allowed)"
    )]
    BadEscape {
        path: String,
        offset: usize,
        found: char,
    },
    #[error("cannot set property path {path:?}: expected {expected} at {at:?}, found {found}")]
    NotAContainer {
        path: String,
        /// The concrete prefix of the path holding the offending value (`<root>` for the root).
        at: String,
        expected: &'static str,
        found: &'static str,
    },
}

/// One step of a property path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathElement {
    /// An object property.
    Key(String),
    /// An array element.
    Index(usize),
    /// Every element of an array or every value of an object (`[*]` or `["*"]`).
    Wildcard,
}

/// A path to one (or, with wildcards, several) properties inside a value.
///
/// The empty path (`PropertyPath::default()`) addresses the root itself; it cannot be parsed and
/// prints as the empty string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PropertyPath(Vec<PathElement>);

impl PropertyPath {
    /// Parses a path such as `root.array[0]["key with a ."]`.
    pub fn parse(src: &str) -> Result<PropertyPath, PathError> {
        let bytes = src.as_bytes();
        let Some(&first) = bytes.first() else {
            return Err(PathError::Empty);
        };
        let mut elements = Vec::new();
        let mut pos = 0;
        match first {
            b'[' => {}
            b'.' => return Err(unexpected(src, 0, "a key or '['")),
            _ => {
                let end = bare_key_end(bytes, 0);
                elements.push(bare_element(&src[..end]));
                pos = end;
            }
        }
        while let Some(&byte) = bytes.get(pos) {
            match byte {
                b'.' => {
                    let start = pos + 1;
                    let end = bare_key_end(bytes, start);
                    if end == start {
                        return Err(PathError::EmptyKey {
                            path: src.to_owned(),
                            offset: pos,
                        });
                    }
                    elements.push(bare_element(&src[start..end]));
                    pos = end;
                }
                b'[' => {
                    let (element, next) = parse_bracket(src, pos)?;
                    elements.push(element);
                    pos = next;
                }
                // Bare keys swallow everything but '.' and '[', so this only follows a ']'.
                _ => return Err(unexpected(src, pos, "'.', '[' or the end of the path")),
            }
        }
        Ok(PropertyPath(elements))
    }

    /// A one-element path naming a top-level property.
    pub fn key(name: impl Into<String>) -> PropertyPath {
        PropertyPath(vec![PathElement::Key(name.into())])
    }

    /// The path's steps, outermost first.
    pub fn elements(&self) -> &[PathElement] {
        &self.0
    }

    /// Appends a step.
    pub fn push(&mut self, element: PathElement) {
        self.0.push(element);
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty path, which addresses the root.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when any step is a wildcard, so the path may match several properties.
    pub fn has_wildcard(&self) -> bool {
        has_wildcard(&self.0)
    }

    /// True when `self` is a prefix of (or equal to) `other`; a wildcard in `self` matches any
    /// key or index. Decides whether a changed property falls under an ignoreChanges path.
    pub fn contains(&self, other: &PropertyPath) -> bool {
        self.0.len() <= other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(mine, theirs)| *mine == PathElement::Wildcard || mine == theirs)
    }

    /// The value at this path, or `None` if it is absent or the path has a wildcard (see
    /// [`PropertyPath::get_all`]).
    pub fn get<'a>(&self, root: &'a PropertyValue) -> Option<&'a PropertyValue> {
        let mut node = root;
        for element in &self.0 {
            node = match (element, peel(node)) {
                (PathElement::Key(key), PropertyValue::Object(map)) => map.get(key)?,
                (PathElement::Index(index), PropertyValue::Array(items)) => items.get(*index)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Every value this path matches, with wildcards expanded into concrete paths, in document
    /// order (array index order, object insertion order).
    pub fn get_all<'a>(&self, root: &'a PropertyValue) -> Vec<(PropertyPath, &'a PropertyValue)> {
        let mut out = Vec::new();
        collect(&self.0, root, &mut Vec::new(), &mut out);
        out
    }

    /// Sets the value at this path, creating missing (or null) intermediate containers: an object
    /// for a key, an array for an index (padded with nulls up to the index). A wildcard sets every
    /// existing match. Nothing is changed when an error is returned.
    pub fn set(&self, root: &mut PropertyValue, value: PropertyValue) -> Result<(), PathError> {
        // Validate first so that a wildcard path failing on its second match leaves no half-set value.
        check_settable(&self.0, root, &mut Vec::new(), self)?;
        if self.has_wildcard() {
            set_in(&self.0, root, &mut |slot| *slot = value.clone());
        } else {
            // A wildcard-free path reaches exactly one slot, so the value moves instead of cloning.
            let mut value = Some(value);
            set_in(&self.0, root, &mut |slot| {
                if let Some(value) = value.take() {
                    *slot = value;
                }
            });
        }
        Ok(())
    }

    /// Removes the value at this path: an object key (keeping the other keys' order) or an array
    /// element (shifting later ones down). A wildcard removes every match. Returns whether
    /// anything was removed; the empty path removes nothing.
    pub fn delete(&self, root: &mut PropertyValue) -> bool {
        delete_in(&self.0, root)
    }

    /// The ignoreChanges operation: makes `new` hold `old`'s value at this path, or removes it from
    /// `new` when `old` has none. Wildcards apply per concrete match of either side. Matches that
    /// cannot be set (a non-container in the way in `new`) are skipped. Returns whether `new`
    /// changed.
    pub fn reset(&self, old: &PropertyValue, new: &mut PropertyValue) -> bool {
        let old_matches = self.get_all(old);
        let new_paths: Vec<PropertyPath> = self.get_all(new).into_iter().map(|(p, _)| p).collect();
        let mut changed = false;
        for (path, value) in &old_matches {
            if path.get(new) != Some(*value) && path.set(new, (*value).clone()).is_ok() {
                changed = true;
            }
        }
        // Reverse document order, so removing an array element never shifts an index still to be
        // removed.
        for path in new_paths.iter().rev() {
            if !old_matches.iter().any(|(old_path, _)| old_path == path) && path.delete(new) {
                changed = true;
            }
        }
        changed
    }
}

impl From<Vec<PathElement>> for PropertyPath {
    fn from(elements: Vec<PathElement>) -> Self {
        PropertyPath(elements)
    }
}

impl fmt::Display for PropertyPath {
    /// The canonical form: bare keys where possible (`a.b`), `["..."]` otherwise, `[n]`, `[*]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, element) in self.0.iter().enumerate() {
            match element {
                PathElement::Key(key) if is_bare_key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                PathElement::Key(key) => {
                    f.write_str("[\"")?;
                    for c in key.chars() {
                        if matches!(c, '"' | '\\') {
                            f.write_str("\\")?;
                        }
                        write!(f, "{c}")?;
                    }
                    f.write_str("\"]")?;
                }
                PathElement::Index(index) => write!(f, "[{index}]")?,
                PathElement::Wildcard => f.write_str("[*]")?,
            }
        }
        Ok(())
    }
}

impl FromStr for PropertyPath {
    type Err = PathError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PropertyPath::parse(s)
    }
}

impl Serialize for PropertyPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PropertyPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        PropertyPath::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// A key prints bare unless it would parse differently (or not at all) that way.
fn is_bare_key(key: &str) -> bool {
    !key.is_empty()
        && key != "*"
        && !key
            .chars()
            .any(|c| matches!(c, '.' | '[' | ']' | '"' | '\\') || c.is_whitespace())
}

/// A bare key: `*` is the wildcard there too (as in Pulumi, where a `"*"` step always is), so
/// that `a.*` prints as `a[*]` and parses back to the same path.
fn bare_element(key: &str) -> PathElement {
    if key == "*" {
        PathElement::Wildcard
    } else {
        PathElement::Key(key.to_owned())
    }
}

/// Where a bare key starting at `start` ends: the next '.' or '[', or the end of the path.
fn bare_key_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|b| matches!(b, b'.' | b'['))
        .map_or(bytes.len(), |i| start + i)
}

fn unexpected(src: &str, offset: usize, expected: &'static str) -> PathError {
    PathError::Unexpected {
        path: src.to_owned(),
        offset,
        found: src
            .get(offset..)
            .and_then(|rest| rest.chars().next())
            .unwrap_or_default(),
        expected,
    }
}

/// Parses the bracketed step whose '[' is at `open`; returns it and the offset after its ']'.
fn parse_bracket(src: &str, open: usize) -> Result<(PathElement, usize), PathError> {
    let bytes = src.as_bytes();
    if bytes.get(open + 1) == Some(&b'"') {
        let body = open + 2;
        let mut key = String::new();
        let mut chars = src[body..].char_indices();
        let close_quote = loop {
            match chars.next() {
                None => {
                    return Err(PathError::UnterminatedString {
                        path: src.to_owned(),
                        offset: open + 1,
                    });
                }
                Some((i, '"')) => break body + i,
                Some((i, '\\')) => match chars.next() {
                    Some((_, c @ ('"' | '\\'))) => key.push(c),
                    Some((_, c)) => {
                        return Err(PathError::BadEscape {
                            path: src.to_owned(),
                            offset: body + i,
                            found: c,
                        });
                    }
                    None => {
                        return Err(PathError::UnterminatedString {
                            path: src.to_owned(),
                            offset: open + 1,
                        });
                    }
                },
                Some((_, c)) => key.push(c),
            }
        };
        let after = close_quote + 1;
        match bytes.get(after) {
            Some(b']') => {}
            Some(_) => return Err(unexpected(src, after, "']' after the quoted key")),
            None => {
                return Err(PathError::MissingBracket {
                    path: src.to_owned(),
                    offset: open,
                });
            }
        }
        // Pulumi treats a quoted "*" as a wildcard too.
        let element = if key == "*" {
            PathElement::Wildcard
        } else {
            PathElement::Key(key)
        };
        return Ok((element, after + 1));
    }

    let Some(close) = src[open + 1..].find(']').map(|i| open + 1 + i) else {
        return Err(PathError::MissingBracket {
            path: src.to_owned(),
            offset: open,
        });
    };
    let segment = &src[open + 1..close];
    if segment == "*" {
        return Ok((PathElement::Wildcard, close + 1));
    }
    let bad_index = |reason| PathError::BadIndex {
        path: src.to_owned(),
        offset: open + 1,
        index: segment.to_owned(),
        reason,
    };
    // Digits only: `usize::from_str` would also accept a leading '+'.
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_index(
            "expected a non-negative integer, '*' or a quoted key",
        ));
    }
    let index = segment
        .parse::<usize>()
        .map_err(|_| bad_index("the index is too large"))?;
    Ok((PathElement::Index(index), close + 1))
}

fn has_wildcard(elements: &[PathElement]) -> bool {
    elements.contains(&PathElement::Wildcard)
}

/// Looks through secrets and known outputs to the value they carry.
fn peel(mut value: &PropertyValue) -> &PropertyValue {
    loop {
        value = match value {
            PropertyValue::Secret(inner) => inner,
            PropertyValue::Output(output) => match &output.value {
                Some(inner) => inner,
                None => return value,
            },
            other => return other,
        };
    }
}

/// [`peel`] for mutation: the wrappers stay in place around the returned contents.
fn peel_mut(value: &mut PropertyValue) -> &mut PropertyValue {
    // An unknown output is returned as it is; the match below then only sees outputs with a
    // value (returning `value` from inside it would need a second borrow).
    if matches!(value, PropertyValue::Output(output) if output.value.is_none()) {
        return value;
    }
    match value {
        PropertyValue::Secret(inner) => peel_mut(inner),
        PropertyValue::Output(output) => match output.value.as_deref_mut() {
            Some(inner) => peel_mut(inner),
            None => unreachable!("an unknown output returned above"),
        },
        other => other,
    }
}

/// A value's kind for errors, telling an unknown output from a known one.
fn kind_of(value: &PropertyValue) -> &'static str {
    match value {
        PropertyValue::Output(output) if output.value.is_none() => "unknown",
        other => other.kind(),
    }
}

fn collect<'a>(
    elements: &[PathElement],
    node: &'a PropertyValue,
    prefix: &mut Vec<PathElement>,
    out: &mut Vec<(PropertyPath, &'a PropertyValue)>,
) {
    let Some((first, rest)) = elements.split_first() else {
        out.push((PropertyPath(prefix.clone()), node));
        return;
    };
    let mut visit = |element: PathElement, child: &'a PropertyValue| {
        prefix.push(element);
        collect(rest, child, prefix, out);
        prefix.pop();
    };
    match (first, peel(node)) {
        (PathElement::Key(key), PropertyValue::Object(map)) => {
            if let Some(child) = map.get(key) {
                visit(first.clone(), child);
            }
        }
        (PathElement::Index(index), PropertyValue::Array(items)) => {
            if let Some(child) = items.get(*index) {
                visit(first.clone(), child);
            }
        }
        (PathElement::Wildcard, PropertyValue::Object(map)) => {
            for (key, child) in map.iter() {
                visit(PathElement::Key(key.clone()), child);
            }
        }
        (PathElement::Wildcard, PropertyValue::Array(items)) => {
            for (index, child) in items.iter().enumerate() {
                visit(PathElement::Index(index), child);
            }
        }
        _ => {}
    }
}

/// Finds the first non-container in the way of [`set_in`]; missing and null values are fine
/// because `set_in` creates them (or, under a wildcard, they simply have no matches).
fn check_settable(
    elements: &[PathElement],
    node: &PropertyValue,
    prefix: &mut Vec<PathElement>,
    path: &PropertyPath,
) -> Result<(), PathError> {
    let Some((first, rest)) = elements.split_first() else {
        return Ok(());
    };
    let node = peel(node);
    let mut visit = |element: PathElement, child: &PropertyValue| {
        prefix.push(element);
        let result = check_settable(rest, child, prefix, path);
        prefix.pop();
        result
    };
    match (first, node) {
        (_, PropertyValue::Null) => Ok(()),
        (PathElement::Key(key), PropertyValue::Object(map)) => match map.get(key) {
            Some(child) => visit(first.clone(), child),
            None => Ok(()),
        },
        (PathElement::Index(index), PropertyValue::Array(items)) => match items.get(*index) {
            Some(child) => visit(first.clone(), child),
            None => Ok(()),
        },
        (PathElement::Wildcard, PropertyValue::Object(map)) => map
            .iter()
            .try_for_each(|(key, child)| visit(PathElement::Key(key.clone()), child)),
        (PathElement::Wildcard, PropertyValue::Array(items)) => items
            .iter()
            .enumerate()
            .try_for_each(|(index, child)| visit(PathElement::Index(index), child)),
        (_, other) => Err(PathError::NotAContainer {
            path: path.to_string(),
            at: if prefix.is_empty() {
                "<root>".to_owned()
            } else {
                PropertyPath(prefix.clone()).to_string()
            },
            expected: match first {
                PathElement::Key(_) => "an object",
                PathElement::Index(_) => "an array",
                PathElement::Wildcard => "an object or an array",
            },
            found: kind_of(other),
        }),
    }
}

/// Walks to every slot the path reaches, creating missing containers, and hands each to `write`.
/// Mismatched containers are skipped: [`check_settable`] has already rejected them.
fn set_in(
    elements: &[PathElement],
    node: &mut PropertyValue,
    write: &mut dyn FnMut(&mut PropertyValue),
) {
    let Some((first, rest)) = elements.split_first() else {
        write(node);
        return;
    };
    let node = peel_mut(node);
    if node.is_null() {
        // Under a wildcard there is nothing to match, so create nothing.
        if has_wildcard(elements) {
            return;
        }
        *node = match first {
            PathElement::Index(_) => PropertyValue::Array(Vec::new()),
            _ => PropertyValue::Object(Box::default()),
        };
    }
    match (first, node) {
        (PathElement::Key(key), PropertyValue::Object(map)) => {
            if !map.contains_key(key) && has_wildcard(rest) {
                return;
            }
            let child = map.entry(key.clone()).or_insert(PropertyValue::Null);
            set_in(rest, child, write);
        }
        (PathElement::Index(index), PropertyValue::Array(items)) => {
            if *index >= items.len() {
                if has_wildcard(rest) {
                    return;
                }
                items.resize(index + 1, PropertyValue::Null);
            }
            set_in(rest, &mut items[*index], write);
        }
        (PathElement::Wildcard, PropertyValue::Object(map)) => {
            for child in map.values_mut() {
                set_in(rest, child, write);
            }
        }
        (PathElement::Wildcard, PropertyValue::Array(items)) => {
            for child in items {
                set_in(rest, child, write);
            }
        }
        _ => {}
    }
}

fn delete_in(elements: &[PathElement], node: &mut PropertyValue) -> bool {
    let Some((first, rest)) = elements.split_first() else {
        return false;
    };
    let node = peel_mut(node);
    if rest.is_empty() {
        return match (first, node) {
            // shift_remove keeps the remaining keys in order.
            (PathElement::Key(key), PropertyValue::Object(map)) => map.shift_remove(key).is_some(),
            (PathElement::Index(index), PropertyValue::Array(items)) if *index < items.len() => {
                items.remove(*index);
                true
            }
            (PathElement::Wildcard, PropertyValue::Object(map)) => {
                let had_any = !map.is_empty();
                map.clear();
                had_any
            }
            (PathElement::Wildcard, PropertyValue::Array(items)) => {
                let had_any = !items.is_empty();
                items.clear();
                had_any
            }
            _ => false,
        };
    }
    match (first, node) {
        (PathElement::Key(key), PropertyValue::Object(map)) => {
            map.get_mut(key).is_some_and(|child| delete_in(rest, child))
        }
        (PathElement::Index(index), PropertyValue::Array(items)) => items
            .get_mut(*index)
            .is_some_and(|child| delete_in(rest, child)),
        // Non-short-circuiting: every match must be visited.
        (PathElement::Wildcard, PropertyValue::Object(map)) => map
            .values_mut()
            .fold(false, |any, child| delete_in(rest, child) | any),
        (PathElement::Wildcard, PropertyValue::Array(items)) => items
            .iter_mut()
            .fold(false, |any, child| delete_in(rest, child) | any),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::PathElement::{Index, Key, Wildcard};
    use super::*;
    use crate::props;
    use crate::urn::Urn;
    use crate::value::{OutputValue, PropertyMap};

    fn k(name: &str) -> PathElement {
        Key(name.to_owned())
    }

    fn p(src: &str) -> PropertyPath {
        PropertyPath::parse(src).unwrap()
    }

    fn obj(map: PropertyMap) -> PropertyValue {
        PropertyValue::Object(Box::new(map))
    }

    fn arr(items: Vec<PropertyValue>) -> PropertyValue {
        PropertyValue::Array(items)
    }

    fn num(n: i64) -> PropertyValue {
        PropertyValue::from(n)
    }

    fn output(value: Option<PropertyValue>, secret: bool) -> PropertyValue {
        PropertyValue::Output(Box::new(OutputValue {
            value: value.map(Box::new),
            secret,
            dependencies: vec![],
        }))
    }

    /// The spec's examples: source, canonical form, elements.
    fn examples() -> Vec<(&'static str, &'static str, Vec<PathElement>)> {
        vec![
            ("root", "root", vec![k("root")]),
            ("root.nested", "root.nested", vec![k("root"), k("nested")]),
            (
                r#"root["nested"]"#,
                "root.nested",
                vec![k("root"), k("nested")],
            ),
            (
                "root.double.nest",
                "root.double.nest",
                vec![k("root"), k("double"), k("nest")],
            ),
            (
                r#"root["double"].nest"#,
                "root.double.nest",
                vec![k("root"), k("double"), k("nest")],
            ),
            (
                r#"root["double"]["nest"]"#,
                "root.double.nest",
                vec![k("root"), k("double"), k("nest")],
            ),
            (
                "root.array[0]",
                "root.array[0]",
                vec![k("root"), k("array"), Index(0)],
            ),
            (
                "root.array[100]",
                "root.array[100]",
                vec![k("root"), k("array"), Index(100)],
            ),
            (
                "root.array[0].nested",
                "root.array[0].nested",
                vec![k("root"), k("array"), Index(0), k("nested")],
            ),
            (
                "root.array[0][1].nested",
                "root.array[0][1].nested",
                vec![k("root"), k("array"), Index(0), Index(1), k("nested")],
            ),
            (
                "root.nested.array[0].double[1]",
                "root.nested.array[0].double[1]",
                vec![
                    k("root"),
                    k("nested"),
                    k("array"),
                    Index(0),
                    k("double"),
                    Index(1),
                ],
            ),
            (
                r#"root["key with \"escaped\" quotes"]"#,
                r#"root["key with \"escaped\" quotes"]"#,
                vec![k("root"), k(r#"key with "escaped" quotes"#)],
            ),
            (
                r#"root["key with a ."]"#,
                r#"root["key with a ."]"#,
                vec![k("root"), k("key with a .")],
            ),
            (
                r#"["root key with \"escaped\" quotes"].nested"#,
                r#"["root key with \"escaped\" quotes"].nested"#,
                vec![k(r#"root key with "escaped" quotes"#), k("nested")],
            ),
            (
                r#"["root key with a ."][100]"#,
                r#"["root key with a ."][100]"#,
                vec![k("root key with a ."), Index(100)],
            ),
            (
                "root.array[*].field",
                "root.array[*].field",
                vec![k("root"), k("array"), Wildcard, k("field")],
            ),
            (
                r#"root.array["*"].field"#,
                "root.array[*].field",
                vec![k("root"), k("array"), Wildcard, k("field")],
            ),
        ]
    }

    /// Builds a value holding `leaf` at `elements`, independently of `set`: indexes are padded
    /// with nulls, and a wildcard becomes a two-element array.
    fn build(elements: &[PathElement], leaf: PropertyValue) -> PropertyValue {
        match elements.split_first() {
            None => leaf,
            Some((Key(key), rest)) => obj(props! {key.as_str() => build(rest, leaf)}),
            Some((Index(index), rest)) => {
                let mut items = vec![PropertyValue::Null; *index];
                items.push(build(rest, leaf));
                arr(items)
            }
            Some((Wildcard, rest)) => arr(vec![build(rest, leaf.clone()), build(rest, leaf)]),
        }
    }

    #[test]
    fn examples_parse_print_and_round_trip() {
        let examples = examples();
        assert_eq!(examples.len(), 17);
        for (src, canonical, elements) in examples {
            let path = PropertyPath::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert_eq!(path.elements(), elements.as_slice(), "{src}");
            assert_eq!(path.to_string(), canonical, "{src}");
            assert_eq!(p(&path.to_string()), path, "{src} round trip");
            assert_eq!(src.parse::<PropertyPath>().unwrap(), path, "{src} FromStr");
        }
    }

    #[test]
    fn examples_evaluate_against_values_containing_them() {
        for (i, (src, _, elements)) in examples().into_iter().enumerate() {
            let path = p(src);
            let leaf = PropertyValue::from(format!("leaf {i}"));
            let doc = build(&elements, leaf.clone());
            let matches = path.get_all(&doc);
            if path.has_wildcard() {
                assert_eq!(path.get(&doc), None, "{src}: get does not expand wildcards");
                let concrete: Vec<String> = matches.iter().map(|(p, _)| p.to_string()).collect();
                assert_eq!(
                    concrete,
                    ["root.array[0].field", "root.array[1].field"],
                    "{src}"
                );
                assert!(matches.iter().all(|(_, v)| **v == leaf), "{src}");
            } else {
                assert_eq!(path.get(&doc), Some(&leaf), "{src}");
                assert_eq!(matches, vec![(path.clone(), &leaf)], "{src}");
                // set on an empty object builds the same document, padding included.
                let mut built = obj(PropertyMap::new());
                path.set(&mut built, leaf.clone()).unwrap();
                assert_eq!(built, doc, "{src}: set");
                assert!(path.delete(&mut built), "{src}: delete");
                assert_eq!(path.get(&built), None, "{src}: deleted");
            }
        }
    }

    #[test]
    fn get_walks_a_hand_written_document() {
        let doc = obj(props! {
            "root" => obj(props! {
                "nested" => obj(props! {"array" => vec![obj(props! {"double" => vec![num(10), num(11)]})]}),
                "array" => vec![arr(vec![obj(props! {"x" => 1i64}), obj(props! {"nested" => "n"})])],
                "key with a ." => 5i64,
                "s" => "text",
            }),
        });
        let cases: &[(&str, Option<PropertyValue>)] = &[
            ("root.nested.array[0].double[1]", Some(num(11))),
            ("root.array[0][1].nested", Some("n".into())),
            (r#"root["key with a ."]"#, Some(num(5))),
            (r#"root["array"][0][0]["x"]"#, Some(num(1))),
            ("root.nested[0]", None),   // index into an object
            ("root.array.x", None),     // key into an array
            ("root.array[0][5]", None), // out of range
            ("root.nested.array[0].double[2]", None),
            ("root.s.length", None), // key into a string
            ("root.array[*]", None), // wildcards need get_all
            ("missing", None),
        ];
        for (src, expected) in cases {
            assert_eq!(p(src).get(&doc), expected.as_ref(), "{src}");
        }
        assert_eq!(
            PropertyPath::default().get(&doc),
            Some(&doc),
            "the empty path is the root"
        );
    }

    #[test]
    fn get_descends_through_secrets_and_known_outputs() {
        let doc = obj(props! {
            "s" => PropertyValue::secret(obj(props! {"a" => vec![num(1), PropertyValue::secret(num(2))]})),
            "o" => output(Some(obj(props! {"b" => 3i64})), true),
            "u" => output(None, false),
            "c" => PropertyValue::Computed,
        });
        assert_eq!(p("s.a[0]").get(&doc), Some(&num(1)));
        // The wrapper at the leaf itself is part of the value.
        assert_eq!(p("s.a[1]").get(&doc), Some(&PropertyValue::secret(num(2))));
        assert!(matches!(p("s").get(&doc), Some(PropertyValue::Secret(_))));
        assert_eq!(p("o.b").get(&doc), Some(&num(3)));
        assert_eq!(p("u.b").get(&doc), None);
        assert_eq!(p("c.b").get(&doc), None);
        let all: Vec<String> = p("s.a[*]")
            .get_all(&doc)
            .iter()
            .map(|(p, _)| p.to_string())
            .collect();
        assert_eq!(all, ["s.a[0]", "s.a[1]"]);
        // A secret root works too.
        let root = PropertyValue::secret(obj(props! {"k" => "v"}));
        assert_eq!(p("k").get(&root), Some(&PropertyValue::from("v")));
    }

    #[test]
    fn get_all_expands_wildcards_in_document_order() {
        let doc = obj(props! {
            "z" => obj(props! {"v" => 1i64}),
            "a" => obj(props! {"v" => 2i64}),
            "m" => obj(props! {"w" => 0i64}),
            "l" => vec![
                obj(props! {"t" => vec![PropertyValue::from("a"), PropertyValue::from("b")]}),
                obj(props! {"t" => PropertyValue::Array(vec![])}),
                obj(props! {"t" => vec![PropertyValue::from("c")]}),
            ],
        });
        let render = |src: &str| -> Vec<(String, PropertyValue)> {
            p(src)
                .get_all(&doc)
                .into_iter()
                .map(|(p, v)| (p.to_string(), v.clone()))
                .collect()
        };
        assert_eq!(
            render("[*].v"),
            [("z.v".to_owned(), num(1)), ("a.v".to_owned(), num(2))]
        );
        assert_eq!(
            render("l[*].t[*]"),
            [
                ("l[0].t[0]".to_owned(), "a".into()),
                ("l[0].t[1]".to_owned(), "b".into()),
                ("l[2].t[0]".to_owned(), "c".into()),
            ]
        );
        let top: Vec<String> = render("[*]").into_iter().map(|(p, _)| p).collect();
        assert_eq!(top, ["z", "a", "m", "l"]);
        assert!(render("l[*].missing").is_empty());
        assert!(
            render("z.v[*]").is_empty(),
            "a wildcard over a number matches nothing"
        );
    }

    #[test]
    fn set_creates_pads_overwrites_and_applies_wildcards() {
        let secret_out = |v| {
            PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new(v)),
                secret: true,
                dependencies: vec![Urn::parse("urn:pulumi:dev::proj::aws:s3:Bucket::b").unwrap()],
            }))
        };
        // (start, path, value, expected)
        let cases: Vec<(PropertyValue, &str, PropertyValue, PropertyValue)> = vec![
            (
                obj(props! {}),
                "a.b[2].c",
                num(1),
                obj(props! {"a" => obj(props! {"b" => vec![
                    PropertyValue::Null, PropertyValue::Null, obj(props! {"c" => 1i64}),
                ]})}),
            ),
            (
                obj(props! {"a" => vec![num(1)]}),
                "a[3]",
                num(4),
                obj(props! {"a" => vec![num(1), PropertyValue::Null, PropertyValue::Null, num(4)]}),
            ),
            (
                obj(props! {"x" => 1i64, "y" => 2i64, "z" => 3i64}),
                "y",
                num(20),
                obj(props! {"x" => 1i64, "y" => 20i64, "z" => 3i64}),
            ),
            (
                obj(props! {"a" => PropertyValue::Null}),
                "a.b",
                num(1),
                obj(props! {"a" => obj(props! {"b" => 1i64})}),
            ),
            (
                PropertyValue::Null,
                r#"["k k"]"#,
                num(1),
                obj(props! {"k k" => 1i64}),
            ),
            (
                obj(
                    props! {"l" => vec![obj(props! {"x" => 1i64}), obj(props! {"y" => 2i64}), PropertyValue::Null]},
                ),
                "l[*].x",
                num(0),
                obj(props! {"l" => vec![
                    obj(props! {"x" => 0i64}),
                    obj(props! {"y" => 2i64, "x" => 0i64}),
                    obj(props! {"x" => 0i64}),
                ]}),
            ),
            (
                obj(props! {"m" => obj(props! {"a" => 1i64, "b" => 2i64})}),
                "m[*]",
                "s".into(),
                obj(props! {"m" => obj(props! {"a" => "s", "b" => "s"})}),
            ),
            // A wildcard over nothing matches nothing, so nothing is created.
            (obj(props! {}), "l[*].x", num(0), obj(props! {})),
            (
                obj(props! {"l" => PropertyValue::Null}),
                "l[*]",
                num(0),
                obj(props! {"l" => PropertyValue::Null}),
            ),
            (
                obj(props! {"l" => vec![num(1)]}),
                "l[3][*]",
                num(0),
                obj(props! {"l" => vec![num(1)]}),
            ),
            // Secrets and known outputs keep their wrapper around the updated contents.
            (
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 1i64}))}),
                "s.b",
                num(2),
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 1i64, "b" => 2i64}))}),
            ),
            (
                obj(props! {"s" => PropertyValue::secret(PropertyValue::Null)}),
                "s[1]",
                num(2),
                obj(props! {"s" => PropertyValue::secret(arr(vec![PropertyValue::Null, num(2)]))}),
            ),
            (
                obj(props! {"o" => secret_out(obj(props! {"a" => 1i64}))}),
                "o.a",
                num(2),
                obj(props! {"o" => secret_out(obj(props! {"a" => 2i64}))}),
            ),
            // Setting the wrapper's own path replaces it.
            (
                obj(props! {"s" => PropertyValue::secret(num(1))}),
                "s",
                num(3),
                obj(props! {"s" => 3i64}),
            ),
        ];
        for (mut value, src, new, expected) in cases {
            p(src)
                .set(&mut value, new)
                .unwrap_or_else(|e| panic!("{src}: {e}"));
            assert_eq!(value, expected, "{src}");
        }
        let keys: Vec<String> = {
            let mut v = obj(props! {"x" => 1i64, "y" => 2i64, "z" => 3i64});
            p("y").set(&mut v, num(0)).unwrap();
            v.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(
            keys,
            ["x", "y", "z"],
            "overwriting keeps the key's position"
        );
        let mut root = num(1);
        PropertyPath::default().set(&mut root, "r".into()).unwrap();
        assert_eq!(
            root,
            PropertyValue::from("r"),
            "the empty path sets the root"
        );
    }

    #[test]
    fn set_through_a_non_container_fails_and_changes_nothing() {
        // (start, path, message fragments)
        let cases: Vec<(PropertyValue, &str, &[&str])> = vec![
            (
                obj(props! {"a" => "str"}),
                "a.b",
                &[r#""a.b""#, r#"expected an object at "a""#, "found string"],
            ),
            (
                obj(props! {"a" => "str"}),
                "a[0]",
                &[r#"expected an array at "a""#, "found string"],
            ),
            (
                obj(props! {"a" => obj(props! {"b" => 1i64})}),
                "a[0]",
                &["expected an array", "found object"],
            ),
            (
                obj(props! {"a" => vec![num(1)]}),
                "a.b",
                &["expected an object", "found array"],
            ),
            (
                obj(props! {"a" => 5i64}),
                "a[*]",
                &["expected an object or an array", "found number"],
            ),
            (
                obj(props! {"a" => PropertyValue::Computed}),
                "a.b",
                &["found unknown"],
            ),
            (
                obj(props! {"a" => output(None, false)}),
                "a.b",
                &["found unknown"],
            ),
            (
                obj(props! {"a" => PropertyValue::secret("x".into())}),
                "a.b",
                &["found string"],
            ),
            (
                obj(props! {"a" => vec![num(1), num(2)]}),
                "a[1].b.c",
                &[r#"at "a[1]""#, "found number"],
            ),
            // The first match is fine, the second is not: no half-applied wildcard.
            (
                obj(props! {"l" => vec![obj(props! {"x" => 1i64}), "s".into()]}),
                "l[*].x",
                &[r#""l[*].x""#, r#"at "l[1]""#, "found string"],
            ),
            (num(1), "a", &[r#"at "<root>""#, "found number"]),
        ];
        for (start, src, fragments) in cases {
            let mut value = start.clone();
            let err = p(src).set(&mut value, num(9)).unwrap_err();
            assert!(
                matches!(err, PathError::NotAContainer { .. }),
                "{src}: {err:?}"
            );
            let message = err.to_string();
            for fragment in fragments {
                assert!(
                    message.contains(fragment),
                    "{src}: {message:?} lacks {fragment:?}"
                );
            }
            assert_eq!(value, start, "{src}: unchanged");
        }
    }

    #[test]
    fn delete_removes_keys_elements_and_wildcard_matches() {
        // (start, path, removed?, expected)
        let cases: Vec<(PropertyValue, &str, bool, PropertyValue)> = vec![
            (
                obj(props! {"x" => 1i64, "y" => 2i64, "z" => 3i64}),
                "y",
                true,
                obj(props! {"x" => 1i64, "z" => 3i64}),
            ),
            (
                obj(props! {"a" => vec![num(1), num(2), num(3)]}),
                "a[1]",
                true,
                obj(props! {"a" => vec![num(1), num(3)]}),
            ),
            (
                obj(props! {"a" => vec![num(1)]}),
                "a[5]",
                false,
                obj(props! {"a" => vec![num(1)]}),
            ),
            (
                obj(props! {"a" => vec![num(1)]}),
                "a.b",
                false,
                obj(props! {"a" => vec![num(1)]}),
            ),
            (
                obj(props! {"a" => 1i64}),
                "q",
                false,
                obj(props! {"a" => 1i64}),
            ),
            (
                obj(props! {"a" => 1i64}),
                "a.b",
                false,
                obj(props! {"a" => 1i64}),
            ),
            (
                obj(props! {"a" => obj(props! {"b" => obj(props! {"c" => 1i64, "d" => 2i64})})}),
                "a.b.c",
                true,
                obj(props! {"a" => obj(props! {"b" => obj(props! {"d" => 2i64})})}),
            ),
            (
                obj(props! {"l" => vec![
                    obj(props! {"x" => 1i64, "y" => 1i64}), obj(props! {"y" => 2i64}), obj(props! {"x" => 3i64}),
                ]}),
                "l[*].x",
                true,
                obj(
                    props! {"l" => vec![obj(props! {"y" => 1i64}), obj(props! {"y" => 2i64}), obj(props! {})]},
                ),
            ),
            (
                obj(props! {"l" => vec![obj(props! {"y" => 1i64})]}),
                "l[*].x",
                false,
                obj(props! {"l" => vec![obj(props! {"y" => 1i64})]}),
            ),
            (
                obj(props! {"m" => obj(props! {
                    "a" => obj(props! {"x" => 1i64}), "b" => obj(props! {"y" => 2i64}), "c" => obj(props! {"x" => 3i64}),
                })}),
                "m[*].x",
                true,
                obj(
                    props! {"m" => obj(props! {"a" => obj(props! {}), "b" => obj(props! {"y" => 2i64}), "c" => obj(props! {})})},
                ),
            ),
            (
                obj(props! {"m" => obj(props! {"a" => 1i64})}),
                "m[*]",
                true,
                obj(props! {"m" => obj(props! {})}),
            ),
            (
                obj(props! {"m" => obj(props! {})}),
                "m[*]",
                false,
                obj(props! {"m" => obj(props! {})}),
            ),
            (
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 1i64, "b" => 2i64}))}),
                "s.a",
                true,
                obj(props! {"s" => PropertyValue::secret(obj(props! {"b" => 2i64}))}),
            ),
        ];
        for (mut value, src, removed, expected) in cases {
            assert_eq!(p(src).delete(&mut value), removed, "{src}");
            assert_eq!(value, expected, "{src}");
        }
        // Value equality ignores key order, so check the order explicitly.
        let mut value = obj(props! {"w" => 0i64, "x" => 1i64, "y" => 2i64, "z" => 3i64});
        assert!(p("x").delete(&mut value));
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["w", "y", "z"], "the other keys keep their order");
        let mut root = obj(props! {"a" => 1i64});
        assert!(!PropertyPath::default().delete(&mut root));
        assert_eq!(root, obj(props! {"a" => 1i64}));
    }

    #[test]
    fn reset_restores_old_values_per_match() {
        // (old, new, path, expected new, changed?)
        let cases: Vec<(PropertyValue, PropertyValue, &str, PropertyValue, bool)> = vec![
            (
                obj(props! {"a" => 1i64, "b" => 1i64}),
                obj(props! {"a" => 2i64, "b" => 2i64}),
                "a",
                obj(props! {"a" => 1i64, "b" => 2i64}),
                true,
            ),
            (
                obj(props! {"b" => 1i64}),
                obj(props! {"a" => 2i64, "b" => 2i64}),
                "a",
                obj(props! {"b" => 2i64}),
                true,
            ),
            (
                obj(props! {"a" => 1i64}),
                obj(props! {"a" => 1i64, "b" => 2i64}),
                "a",
                obj(props! {"a" => 1i64, "b" => 2i64}),
                false,
            ),
            (obj(props! {}), obj(props! {}), "a", obj(props! {}), false),
            (
                obj(
                    props! {"a" => obj(props! {"b" => obj(props! {"c" => 1i64}), "other" => 0i64})},
                ),
                obj(props! {"x" => 0i64}),
                "a.b.c",
                obj(props! {"x" => 0i64, "a" => obj(props! {"b" => obj(props! {"c" => 1i64})})}),
                true,
            ),
            (
                obj(props! {"tags" => obj(props! {"a" => "1", "b" => "2"})}),
                obj(props! {"tags" => obj(props! {"a" => "9", "c" => "3"})}),
                "tags[*]",
                obj(props! {"tags" => obj(props! {"a" => "1", "b" => "2"})}),
                true,
            ),
            (
                obj(props! {"l" => vec![obj(props! {"x" => 1i64, "k" => "o0"})]}),
                obj(props! {"l" => vec![
                    obj(props! {"x" => 5i64, "k" => "n0"}), obj(props! {"x" => 6i64}), obj(props! {"x" => 7i64}),
                ]}),
                "l[*].x",
                obj(
                    props! {"l" => vec![obj(props! {"x" => 1i64, "k" => "n0"}), obj(props! {}), obj(props! {})]},
                ),
                true,
            ),
            // New array longer: surplus elements go, last first so indexes stay valid.
            (
                obj(props! {"l" => vec![num(1)]}),
                obj(props! {"l" => vec![num(7), num(8), num(9)]}),
                "l[*]",
                obj(props! {"l" => vec![num(1)]}),
                true,
            ),
            (
                obj(props! {"l" => vec![num(1), num(2), num(3)]}),
                obj(props! {"l" => vec![num(9)]}),
                "l[*]",
                obj(props! {"l" => vec![num(1), num(2), num(3)]}),
                true,
            ),
            (
                obj(props! {"l" => vec![num(1), num(2)]}),
                obj(props! {"l" => vec![num(1), num(2)]}),
                "l[*]",
                obj(props! {"l" => vec![num(1), num(2)]}),
                false,
            ),
            (
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 1i64}))}),
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 2i64, "b" => 3i64}))}),
                "s.a",
                obj(props! {"s" => PropertyValue::secret(obj(props! {"a" => 1i64, "b" => 3i64}))}),
                true,
            ),
            // Nowhere to put the old value: left alone.
            (
                obj(props! {"a" => obj(props! {"b" => 1i64})}),
                obj(props! {"a" => "str"}),
                "a.b",
                obj(props! {"a" => "str"}),
                false,
            ),
        ];
        for (old, mut new, src, expected, changed) in cases {
            assert_eq!(p(src).reset(&old, &mut new), changed, "{src}");
            assert_eq!(new, expected, "{src}");
        }
    }

    #[test]
    fn contains_is_prefix_matching_with_wildcards() {
        let cases = [
            ("a", "a", true),
            ("a", "a.b[0]", true),
            ("a.b", "a", false),
            ("a.b", "a.c", false),
            ("a.b", "ab", false),
            ("a[*]", "a[3].x", true),
            ("a[*]", "a.k", true),
            ("[*].x", "q.x.y", true),
            ("a[*].x", "a[0].y", false),
            ("a[0]", "a[*]", false),
            ("a[0]", r#"a["0"]"#, false),
        ];
        for (outer, inner, expected) in cases {
            assert_eq!(
                p(outer).contains(&p(inner)),
                expected,
                "{outer} contains {inner}"
            );
        }
        assert!(PropertyPath::default().contains(&p("anything")));
    }

    #[test]
    fn malformed_paths_are_rejected_with_position() {
        // (source, message fragments)
        let cases: &[(&str, &[&str])] = &[
            (".a", &["unexpected '.' at byte 0", "expected a key or '['"]),
            ("a..b", &["empty key after the '.' at byte 1"]),
            ("a.", &["empty key after the '.' at byte 1"]),
            ("a.[0]", &["empty key after the '.' at byte 1"]),
            ("é.", &["empty key after the '.' at byte 2"]),
            ("a[", &["missing ']' to close the '[' at byte 1"]),
            ("a[0", &["missing ']' to close the '[' at byte 1"]),
            (r#"a["x""#, &["missing ']' to close the '[' at byte 1"]),
            (
                "a[x]",
                &[r#"invalid index "x" at byte 2"#, "non-negative integer"],
            ),
            ("a[-1]", &[r#"invalid index "-1""#]),
            ("a[+1]", &[r#"invalid index "+1""#]),
            ("a[]", &[r#"invalid index """#, "non-negative integer"]),
            ("a[ 0 ]", &[r#"invalid index " 0 ""#]),
            ("a[99999999999999999999999]", &["too large"]),
            (r#"a["x"#, &["unterminated string starting at byte 2"]),
            (r#"a["x\""#, &["unterminated string starting at byte 2"]),
            (r#"a["x\"#, &["unterminated string starting at byte 2"]),
            (
                r#"a["x"y]"#,
                &["unexpected 'y' at byte 5", "']' after the quoted key"],
            ),
            (r#"a["\n"]"#, &[r"unsupported escape '\n' at byte 3"]),
            (
                "a[0]b",
                &["unexpected 'b' at byte 4", "expected '.', '[' or the end"],
            ),
            ("a[0]]", &["unexpected ']' at byte 4"]),
            ("a[0]é", &["unexpected 'é' at byte 4"]),
            (r#"["a"]x"#, &["unexpected 'x' at byte 5"]),
        ];
        for (src, fragments) in cases {
            let err = PropertyPath::parse(src).unwrap_err();
            let message = err.to_string();
            let quoted = format!("{src:?}");
            assert!(
                message.contains(&quoted),
                "{message:?} should quote the path"
            );
            for fragment in *fragments {
                assert!(
                    message.contains(fragment),
                    "{src}: {message:?} lacks {fragment:?}"
                );
            }
        }
        assert_eq!(PropertyPath::parse(""), Err(PathError::Empty));
        assert!(PathError::Empty.to_string().contains("empty"));
    }

    #[test]
    fn keys_print_bare_only_when_that_parses_back() {
        let path = PropertyPath::from(vec![
            k(""),
            k("a b"),
            k(r"back\slash"),
            k("x]y"),
            k("tab\t"),
            k("ünï"),
            k("0"),
            Index(3),
            Wildcard,
            k("a*b"),
        ]);
        let printed = path.to_string();
        assert_eq!(
            printed,
            r#"[""]["a b"]["back\\slash"]["x]y"]["tab	"].ünï.0[3][*].a*b"#
        );
        assert_eq!(p(&printed), path);
        // First-position bare keys print without a dot, even digit-like ones.
        assert_eq!(PropertyPath::from(vec![k("0"), k("a")]).to_string(), "0.a");
        assert_eq!(p("0.a").elements(), [k("0"), k("a")]);
        // Lenient bare keys (Pulumi's grammar) are quoted when printed.
        assert_eq!(p("a]b").elements(), [k("a]b")]);
        assert_eq!(p("a]b").to_string(), r#"["a]b"]"#);
        // A literal "*" key is indistinguishable from a wildcard, as in Pulumi.
        assert_eq!(PropertyPath::key("*").to_string(), r#"["*"]"#);
        assert_eq!(p(r#"["*"]"#).elements(), [Wildcard]);
        // So is a bare "*": it prints as [*] and parses back to the same path (found by fuzzing:
        // `a.*` used to parse as a key that printed as a wildcard).
        for src in ["a.*", "*", "*.b", "a.*[0]"] {
            let path = p(src);
            assert!(path.has_wildcard(), "{src}");
            assert_eq!(p(&path.to_string()), path, "{src}");
        }
        assert_eq!(p("a.*").to_string(), "a[*]");
    }

    #[test]
    fn serde_uses_the_string_form() {
        let path = p(r#"root["a b"][0]"#);
        let json = serde_json::to_string(&path).unwrap();
        assert_eq!(json, r#""root[\"a b\"][0]""#);
        assert_eq!(serde_json::from_str::<PropertyPath>(&json).unwrap(), path);
        assert_eq!(
            serde_json::from_str::<PropertyPath>(r#""a[\"x\"].y""#).unwrap(),
            p("a.x.y")
        );
        let err = serde_json::from_str::<PropertyPath>(r#""a[""#).unwrap_err();
        assert!(err.to_string().contains("missing ']'"), "{err}");
        assert!(serde_json::from_str::<PropertyPath>("3").is_err());
    }

    #[test]
    fn convenience_constructors() {
        let mut path = PropertyPath::key("x");
        assert_eq!((path.len(), path.is_empty()), (1, false));
        path.push(Index(1));
        path.push(Wildcard);
        assert_eq!(path.to_string(), "x[1][*]");
        assert_eq!(path.elements(), [k("x"), Index(1), Wildcard]);
        assert!(path.has_wildcard());
        assert!(!p("x[1]").has_wildcard());
        let empty = PropertyPath::default();
        assert_eq!(
            (empty.len(), empty.is_empty(), empty.to_string()),
            (0, true, String::new())
        );
    }
}
