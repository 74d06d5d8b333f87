//! Limits on what untrusted parties (providers, programs, plugins, state files) may send, and
//! the one check every boundary applies to property values.
//!
//! Each limit is far above what real infrastructure needs and low enough that a value within it
//! can always be stored, printed and read back: the state's JSON codec reads at most 128 levels
//! of nesting, so a value deeper than [`MAX_VALUE_DEPTH`] could be saved but never loaded again.

use std::fmt;

use crate::value::{PropertyMap, PropertyValue};

/// Longest resource name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;
/// Longest type token, in bytes.
pub const MAX_TYPE_BYTES: usize = 1024;
/// Longest URN, in bytes (a deep parent chain makes URNs long).
pub const MAX_URN_BYTES: usize = 16 * 1024;
/// Longest resource ID, in bytes.
pub const MAX_ID_BYTES: usize = 8 * 1024;
/// Longest property key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// Deepest nesting of a property value (objects, arrays, secrets, outputs).
pub const MAX_VALUE_DEPTH: usize = 64;
/// Longest message (a log line, an error, a check failure's reason) kept whole; longer ones are
/// cut with a note of how much was dropped.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Why a property value cannot be accepted, with the path of the offending property.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("property {path}: {problem}")]
pub struct ValueError {
    /// The property path (`tags["a b"][0]`), or `(root)` for the map itself.
    pub path: String,
    pub problem: ValueProblem,
}

/// What is wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueProblem {
    #[error("{0} is not a number JSON can store (NaN and infinities are refused)")]
    NotFinite(String),
    #[error("the key is {0} bytes long; keys may be at most {MAX_KEY_BYTES} bytes")]
    KeyTooLong(usize),
    #[error("the value is nested more than {MAX_VALUE_DEPTH} levels deep")]
    TooDeep,
    /// The key that marks special values (secrets, assets, ...) in state and protobuf: an
    /// object holding it as a plain key could be stored but not read back.
    #[error(
        "the key {} is reserved for special values (secrets, assets, resource references)",
        crate::state::codec::SIG_KEY
    )]
    ReservedKey,
}

/// Checks that every value in `map` can be stored: finite numbers, keys within
/// [`MAX_KEY_BYTES`] and not the signature key, nesting within [`MAX_VALUE_DEPTH`].
pub fn check_properties(map: &PropertyMap) -> Result<(), ValueError> {
    let mut path = Vec::new();
    check_map(map, &mut path, 1)
}

/// [`check_properties`] for one value.
pub fn check_value(value: &PropertyValue) -> Result<(), ValueError> {
    let mut path = Vec::new();
    check(value, &mut path, 0)
}

/// One step of a property path, kept while walking and formatted only on error (the codecs at
/// the edges use it too, so every boundary names properties alike).
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn check_map<'a>(
    map: &'a PropertyMap,
    path: &mut Vec<Step<'a>>,
    depth: usize,
) -> Result<(), ValueError> {
    for (key, value) in map {
        path.push(Step::Key(key));
        if key.len() > MAX_KEY_BYTES {
            return Err(fail(path, ValueProblem::KeyTooLong(key.len())));
        }
        if key == crate::state::codec::SIG_KEY {
            return Err(fail(path, ValueProblem::ReservedKey));
        }
        check(value, path, depth)?;
        path.pop();
    }
    Ok(())
}

fn check<'a>(
    value: &'a PropertyValue,
    path: &mut Vec<Step<'a>>,
    depth: usize,
) -> Result<(), ValueError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(fail(path, ValueProblem::TooDeep));
    }
    match value {
        PropertyValue::Number(n) if !n.is_finite() => {
            Err(fail(path, ValueProblem::NotFinite(n.to_string())))
        }
        PropertyValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                check(item, path, depth + 1)?;
                path.pop();
            }
            Ok(())
        }
        PropertyValue::Object(map) => check_map(map, path, depth + 1),
        PropertyValue::Secret(inner) => check(inner, path, depth + 1),
        PropertyValue::Output(output) => match &output.value {
            Some(inner) => check(inner, path, depth + 1),
            None => Ok(()),
        },
        PropertyValue::ResourceReference(reference) => match &reference.id {
            Some(id) => check(id, path, depth + 1),
            None => Ok(()),
        },
        PropertyValue::Archive(archive) => check_archive(archive, path, depth),
        _ => Ok(()),
    }
}

/// A literal archive nests in JSON two levels per level of members (the archive object, then
/// its `assets` map), so each counts twice against the depth.
fn check_archive(
    archive: &crate::asset::Archive,
    path: &mut Vec<Step<'_>>,
    depth: usize,
) -> Result<(), ValueError> {
    if depth + 2 > MAX_VALUE_DEPTH {
        return Err(fail(path, ValueProblem::TooDeep));
    }
    if let crate::asset::ArchiveSource::Assets(members) = &archive.source {
        for member in members.values() {
            if let crate::asset::ArchiveMember::Archive(inner) = member {
                check_archive(inner, path, depth + 2)?;
            }
        }
    }
    Ok(())
}

fn fail(path: &[Step<'_>], problem: ValueProblem) -> ValueError {
    ValueError {
        path: format_path(path),
        problem,
    }
}

/// A property path as errors print it: `tags["a b"][0]`, or `(root)`; keys that are not plain
/// identifiers are quoted with control characters made visible and cut to 64 characters.
pub fn format_path(path: &[Step<'_>]) -> String {
    if path.is_empty() {
        return "(root)".to_owned();
    }
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if is_identifier(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Key(key) => out.push_str(&format!("[{:?}]", crate::text::shown(key, 64))),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn is_identifier(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit())
}

/// A length check for a name-like string an untrusted party sent: `what` (such as "resource
/// name") names it in the error.
pub fn check_len(what: &str, value: &str, max: usize) -> Result<(), LengthError> {
    if value.len() > max {
        return Err(LengthError {
            what: what.to_owned(),
            len: value.len(),
            max,
        });
    }
    Ok(())
}

/// A string longer than its limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LengthError {
    pub what: String,
    pub len: usize,
    pub max: usize,
}

impl fmt::Display for LengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} is {} bytes long; at most {} bytes are allowed",
            self.what, self.len, self.max
        )
    }
}

/// `message` cut to at most [`MAX_MESSAGE_BYTES`] (at a character boundary), with a note of
/// how much was dropped.
pub fn cap_message(message: &str) -> std::borrow::Cow<'_, str> {
    cap_text(message, MAX_MESSAGE_BYTES)
}

/// `text` cut to at most `max` bytes (at a character boundary), with a note of how much was
/// dropped.
pub fn cap_text(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… [{} more bytes dropped]",
        &text[..end],
        text.len() - end
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::OutputValue;

    fn map(entries: Vec<(&str, PropertyValue)>) -> PropertyMap {
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
    }

    #[test]
    fn non_finite_numbers_are_refused_with_their_path() {
        let cases = [
            (
                map(vec![("n", PropertyValue::Number(f64::NAN))]),
                "property n: NaN is not a number",
            ),
            (
                map(vec![(
                    "tags",
                    PropertyValue::Object(Box::new(map(vec![(
                        "a b",
                        PropertyValue::Array(vec![
                            PropertyValue::Null,
                            PropertyValue::Number(f64::INFINITY),
                        ]),
                    )]))),
                )]),
                "property tags[\"a b\"][1]: inf is not",
            ),
            (
                map(vec![(
                    "s",
                    PropertyValue::secret(PropertyValue::Number(f64::NEG_INFINITY)),
                )]),
                "property s: -inf is not",
            ),
            (
                map(vec![(
                    "o",
                    PropertyValue::Output(Box::new(OutputValue {
                        value: Some(Box::new(PropertyValue::Number(f64::NAN))),
                        secret: false,
                        dependencies: vec![],
                    })),
                )]),
                "property o: NaN",
            ),
        ];
        for (value, expected) in cases {
            let error = check_properties(&value).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}");
        }
        let fine = map(vec![
            ("n", PropertyValue::Number(1e308)),
            ("m", PropertyValue::Number(-0.0)),
        ]);
        check_properties(&fine).unwrap();
    }

    #[test]
    fn long_keys_and_deep_values_are_refused() {
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        let error = check_properties(&map(vec![(&long, PropertyValue::Null)])).unwrap_err();
        assert_eq!(error.problem, ValueProblem::KeyTooLong(MAX_KEY_BYTES + 1));
        check_properties(&map(vec![(&long[1..], PropertyValue::Null)])).unwrap();

        let nest = |levels: usize| {
            let mut value = PropertyValue::Null;
            for _ in 0..levels {
                value = PropertyValue::Array(vec![value]);
            }
            map(vec![("deep", value)])
        };
        check_properties(&nest(MAX_VALUE_DEPTH - 1)).unwrap();
        let error = check_properties(&nest(MAX_VALUE_DEPTH + 1)).unwrap_err();
        assert_eq!(error.problem, ValueProblem::TooDeep);
    }

    /// Found by fuzzing (`cairn-fuzz`, wit_value and grpc_struct): an object keyed by the
    /// signature key was accepted from a provider, stored, and then made the state unreadable.
    #[test]
    fn the_signature_key_is_refused_as_a_plain_key() {
        let sig = crate::state::codec::SIG_KEY;
        let inner = PropertyValue::Object(Box::new(map(vec![(sig, PropertyValue::Null)])));
        let error = check_properties(&map(vec![("tags", inner)])).unwrap_err();
        assert_eq!(error.problem, ValueProblem::ReservedKey);
        assert_eq!(error.path, format!("tags[{sig:?}]"));
        let error = check_properties(&map(vec![(sig, PropertyValue::from("x"))])).unwrap_err();
        assert!(error.to_string().contains("is reserved"), "{error}");
    }

    #[test]
    fn archives_nested_too_deep_are_refused() {
        use crate::asset::{Archive, ArchiveMember, ArchiveSource};
        let nest = |levels: usize| {
            let mut archive = Archive {
                hash: None,
                source: ArchiveSource::Assets(Default::default()),
            };
            for _ in 0..levels {
                archive = Archive {
                    hash: None,
                    source: ArchiveSource::Assets(
                        [("inner".to_owned(), ArchiveMember::Archive(archive))]
                            .into_iter()
                            .collect(),
                    ),
                };
            }
            map(vec![("a", PropertyValue::Archive(Box::new(archive)))])
        };
        check_properties(&nest(10)).unwrap();
        let error = check_properties(&nest(MAX_VALUE_DEPTH)).unwrap_err();
        assert_eq!(error.problem, ValueProblem::TooDeep);
    }

    #[test]
    fn messages_are_capped_at_a_character_boundary() {
        let text = "é".repeat(MAX_MESSAGE_BYTES);
        let capped = cap_message(&text);
        assert!(capped.len() < MAX_MESSAGE_BYTES + 64);
        assert!(capped.ends_with(&format!("[{} more bytes dropped]", MAX_MESSAGE_BYTES)));
        assert_eq!(cap_message("short"), "short");
    }
}
