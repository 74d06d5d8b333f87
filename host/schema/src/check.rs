//! Checking a package schema document: first against Cairn's metaschema (`metaschema.json`,
//! JSON Schema draft 2020-12, run by the `jsonschema` crate), then — when the shape is right —
//! the semantic rules a JSON Schema cannot state ([`crate::semantic`]). Every problem is
//! reported with the JSON path at fault and the rule broken, sorted and capped.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use serde_json::Value;
use thiserror::Error;

use crate::model::PackageSpec;
use crate::semantic::{self, Check};

/// Cairn's metaschema: the shape of a package schema.
pub const METASCHEMA: &str = include_str!("metaschema.json");

/// At most this many errors are listed; the count of the rest is kept.
pub const MAX_REPORTED_ERRORS: usize = 100;

/// The deepest nesting of arrays and objects a document may have (serde_json's own parsing
/// limit): deeper ones are refused before any recursive code walks them.
pub const MAX_DEPTH: usize = 128;

/// Keys and string values are cut to this many characters when shown.
const MAX_SHOWN_CHARS: usize = 80;

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Where in the document a problem is: keys and array indices from the root, shown as
/// `resources["random:index/randomString:RandomString"].inputProperties.length.type`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct JsonPath(pub Vec<Segment>);

impl JsonPath {
    pub fn root() -> JsonPath {
        JsonPath(Vec::new())
    }

    /// This path with a key appended.
    pub fn key(&self, key: &str) -> JsonPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        JsonPath(segments)
    }

    /// This path with an index appended.
    pub fn index(&self, index: usize) -> JsonPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        JsonPath(segments)
    }

    /// This path followed by `keys`.
    pub fn keys<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> JsonPath {
        let mut path = self.clone();
        for key in keys {
            path.0.push(Segment::Key(key.to_owned()));
        }
        path
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(document)");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) if is_identifier(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => write!(f, "[{}]", quote(key))?,
            }
        }
        Ok(())
    }
}

impl PartialOrd for Segment {
    fn partial_cmp(&self, other: &Segment) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Segment {
    fn cmp(&self, other: &Segment) -> Ordering {
        match (self, other) {
            (Segment::Key(a), Segment::Key(b)) => a.cmp(b),
            (Segment::Index(a), Segment::Index(b)) => a.cmp(b),
            (Segment::Index(_), Segment::Key(_)) => Ordering::Less,
            (Segment::Key(_), Segment::Index(_)) => Ordering::Greater,
        }
    }
}

/// A key printed bare after a dot: an identifier (`inputProperties`, `$ref`).
fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A string as a JSON string literal, cut when long. Every control character is escaped
/// (serde_json leaves DEL and the C1 range raw; a terminal would act on some of them).
pub(crate) fn quote(text: &str) -> String {
    let cut: String = text.chars().take(MAX_SHOWN_CHARS).collect();
    let json = serde_json::to_string(&cut).unwrap_or_else(|_| "\"?\"".to_owned());
    let quoted: String = json
        .chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{:04x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect();
    if cut.len() < text.len() {
        format!("{quoted}…")
    } else {
        quoted
    }
}

/// A JSON value as compact JSON, cut when long.
pub(crate) fn show(value: &Value) -> String {
    match value {
        Value::String(s) => quote(s),
        Value::Array(items) if !items.is_empty() => "[…]".to_owned(),
        Value::Object(map) if !map.is_empty() => "{…}".to_owned(),
        other => other.to_string(),
    }
}

/// The rule a problem breaks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// A keyword of the metaschema (`required`, `pattern`, `additionalProperties`, ...).
    Metaschema(String),
    /// The document nests deeper than [`MAX_DEPTH`].
    Depth,
    /// A rule of the semantic checks.
    Semantic(Check),
    /// The document has the metaschema's shape but not the model's (a field given twice
    /// under its two names, say).
    Model,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Metaschema(keyword) => write!(f, "metaschema: {keyword}"),
            Rule::Semantic(check) => write!(f, "{}", check.name()),
            Rule::Model => f.write_str("model"),
            Rule::Depth => f.write_str("depth"),
        }
    }
}

/// One problem of a package schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaError {
    pub path: JsonPath,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} [{}]", self.path, self.message, self.rule)
    }
}

impl SchemaError {
    pub(crate) fn semantic(path: JsonPath, check: Check, message: impl Into<String>) -> Self {
        SchemaError {
            path,
            rule: Rule::Semantic(check),
            message: message.into(),
        }
    }
}

/// Why a schema is refused: its errors (sorted by path, at most [`MAX_REPORTED_ERRORS`]) and
/// how many there were in all.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct InvalidSchema {
    pub errors: Vec<SchemaError>,
    pub total: usize,
}

impl fmt::Display for InvalidSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.total == 1 { "error" } else { "errors" };
        write!(f, "the package schema has {} {noun}:", self.total)?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        if self.total > self.errors.len() {
            write!(f, "\n  … and {} more", self.total - self.errors.len())?;
        }
        Ok(())
    }
}

impl InvalidSchema {
    fn new(mut errors: Vec<SchemaError>) -> InvalidSchema {
        errors.sort_by(|a, b| {
            a.path
                .0
                .cmp(&b.path.0)
                .then_with(|| a.rule.cmp(&b.rule))
                .then_with(|| a.message.cmp(&b.message))
        });
        errors.dedup();
        let total = errors.len();
        errors.truncate(MAX_REPORTED_ERRORS);
        InvalidSchema { errors, total }
    }
}

/// What a valid schema holds, for a one-line summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub name: String,
    pub version: Option<String>,
    pub resources: usize,
    pub functions: usize,
    pub types: usize,
    pub config: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "{}{}: {}, {}, {}, {}",
            self.name,
            self.version
                .as_deref()
                .map(|v| format!("@{v}"))
                .unwrap_or_default(),
            count(self.resources, "resource", "resources"),
            count(self.functions, "function", "functions"),
            count(self.types, "type", "types"),
            count(self.config, "config variable", "config variables"),
        )
    }
}

impl Summary {
    pub fn of(spec: &PackageSpec) -> Summary {
        Summary {
            name: spec.name.clone(),
            version: spec.version.clone(),
            resources: spec.resources.len(),
            functions: spec.functions.len(),
            types: spec.types.len(),
            config: spec.config.variables.len(),
        }
    }
}

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let metaschema: Value =
        serde_json::from_str(METASCHEMA).expect("the embedded metaschema is JSON");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&metaschema)
        .expect("the embedded metaschema is a valid JSON Schema")
});

/// Checks a schema document: the metaschema, then (when its shape is right) the semantic
/// rules. Returns the typed schema when both pass.
pub fn check_schema(document: &Value) -> Result<PackageSpec, InvalidSchema> {
    if let Some(error) = depth_error(document) {
        return Err(InvalidSchema::new(vec![error]));
    }
    let errors = metaschema_errors(document);
    if !errors.is_empty() {
        return Err(InvalidSchema::new(errors));
    }
    let spec = PackageSpec::from_value(document.clone()).map_err(|e| {
        InvalidSchema::new(vec![SchemaError {
            path: JsonPath::root(),
            rule: Rule::Model,
            message: e.to_string(),
        }])
    })?;
    let required_key = match document.get("config").and_then(|c| c.get("defaults")) {
        Some(_) => "defaults",
        None => "required",
    };
    let errors = semantic::check(&spec, required_key);
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(InvalidSchema::new(errors))
    }
}

/// The first place where `document` nests deeper than [`MAX_DEPTH`], found without recursion.
fn depth_error(document: &Value) -> Option<SchemaError> {
    enum Children<'a> {
        Object(serde_json::map::Iter<'a>),
        Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
    }
    fn children(value: &Value) -> Option<Children<'_>> {
        match value {
            Value::Object(map) => Some(Children::Object(map.iter())),
            Value::Array(items) => Some(Children::Array(items.iter().enumerate())),
            _ => None,
        }
    }
    let mut stack: Vec<(Option<Segment>, Children<'_>)> = vec![(None, children(document)?)];
    while let Some((_, iter)) = stack.last_mut() {
        let next = match iter {
            Children::Object(entries) => entries
                .next()
                .map(|(key, value)| (Segment::Key(key.clone()), value)),
            Children::Array(items) => items
                .next()
                .map(|(index, value)| (Segment::Index(index), value)),
        };
        let Some((segment, value)) = next else {
            stack.pop();
            continue;
        };
        if let Some(grandchildren) = children(value) {
            stack.push((Some(segment), grandchildren));
            if stack.len() > MAX_DEPTH {
                let path = JsonPath(stack.iter().filter_map(|(s, _)| s.clone()).collect());
                return Some(SchemaError {
                    path,
                    rule: Rule::Depth,
                    message: format!("nested deeper than {MAX_DEPTH} levels"),
                });
            }
        }
    }
    None
}

/// The metaschema's errors for `document`, unsorted.
pub fn metaschema_errors(document: &Value) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    for error in VALIDATOR.iter_errors(document) {
        let path = JsonPath(
            error
                .instance_path()
                .iter()
                .map(|segment| match segment {
                    LocationSegment::Property(key) => Segment::Key(key.into_owned()),
                    LocationSegment::Index(index) => Segment::Index(index),
                })
                .collect(),
        );
        let keyword = error.kind().keyword().to_owned();
        let rule = Rule::Metaschema(keyword);
        let instance = error.instance();
        match error.kind() {
            // One error per unknown field, at the field.
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    errors.push(SchemaError {
                        path: path.key(key),
                        rule: rule.clone(),
                        message: "unknown field".to_owned(),
                    });
                }
            }
            // The key at fault, not the map holding it.
            ValidationErrorKind::PropertyNames { error: inner } => {
                let key = inner.instance().as_str().unwrap_or_default().to_owned();
                errors.push(SchemaError {
                    path: path.key(&key),
                    rule,
                    message: format!("the key {}", describe(inner.kind(), inner.instance())),
                });
            }
            kind => errors.push(SchemaError {
                path,
                rule,
                message: describe(kind, instance),
            }),
        }
    }
    errors
}

/// A message for one metaschema failure of `instance`.
fn describe(kind: &ValidationErrorKind, instance: &Value) -> String {
    match kind {
        ValidationErrorKind::Required { property } => {
            format!("the required field {} is missing", show(property))
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("expected {expected}, found {}", json_type(instance))
        }
        ValidationErrorKind::Enum { options } => {
            let allowed = match options.as_ref() {
                Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
                other => show(other),
            };
            format!("{} is not one of {allowed}", show(instance))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected {}, found {}", show(expected_value), show(instance))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{} is not {}", show(instance), pattern_meaning(pattern))
        }
        ValidationErrorKind::FalseSchema => {
            "this field is not allowed in this kind of type (a type is a $ref, a oneOf, an array with items, a map with additionalProperties, or a primitive)".to_owned()
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("needs at least {limit} items")
        }
        ValidationErrorKind::MinLength { .. } => "must not be empty".to_owned(),
        ValidationErrorKind::Format { format } => {
            format!("{} is not a valid {format}", show(instance))
        }
        other => {
            // Anything else the metaschema might say, in the crate's words, made printable.
            let text = format!("{other:?}");
            quote(&text).trim_matches('"').to_owned()
        }
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What a metaschema pattern asks for, in words.
fn pattern_meaning(pattern: &str) -> String {
    static DEFS: LazyLock<Vec<(String, &'static str)>> = LazyLock::new(|| {
        let metaschema: Value = serde_json::from_str(METASCHEMA).unwrap_or_default();
        [
            ("token", "a token: PACKAGE:MODULE:NAME (a letter first in the package; module and name not starting with a digit; letters, digits, `.`, `_`, `/`, and `-` outside the name)"),
            ("functionToken", "a function token: PACKAGE:MODULE:NAME (a letter first in the package; module and name not starting with a digit; letters, digits, `.`, `_`, `/` and `-`)"),
            ("packageName", "a package name: a letter, then letters, digits, `-` or `_`"),
            ("semver", "a semantic version (MAJOR.MINOR.PATCH, optionally -PRERELEASE and +BUILD; a leading `v` tolerated)"),
        ]
        .into_iter()
        .filter_map(|(def, meaning)| {
            let pattern = metaschema["$defs"][def]["pattern"].as_str()?.to_owned();
            Some((pattern, meaning))
        })
        .collect()
    });
    DEFS.iter()
        .find(|(known, _)| known == pattern)
        .map(|(_, meaning)| (*meaning).to_owned())
        .unwrap_or_else(|| format!("matched by {}", quote(pattern)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `testdata/cases.json`: schemas and the (path, rule) of every error each must report.
    #[test]
    fn every_case_reports_exactly_its_errors() {
        let cases: Vec<Value> =
            serde_json::from_str(include_str!("../testdata/cases.json")).unwrap();
        let mut failures = Vec::new();
        for case in &cases {
            let name = case["case"].as_str().unwrap();
            let mut expected: Vec<(String, String)> = case["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (e[0].as_str().unwrap().into(), e[1].as_str().unwrap().into()))
                .collect();
            expected.sort();
            let mut found: Vec<(String, String)> = match check_schema(&case["schema"]) {
                Ok(_) => vec![],
                Err(invalid) => invalid
                    .errors
                    .iter()
                    .map(|e| (e.path.to_string(), e.rule.to_string()))
                    .collect(),
            };
            found.sort();
            if found != expected {
                let detail = check_schema(&case["schema"])
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                failures.push(format!(
                    "{name}:\n  expected {expected:?}\n  found    {found:?}\n  {detail}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Cairn's own provider schemas pass (their `name` filled from the manifest, as served).
    #[test]
    fn our_own_schemas_pass() {
        for manifest in [
            include_str!("../../../examples/providers/hello/cairn.json"),
            include_str!("../../../examples/providers/file/cairn.json"),
            include_str!("../../wasm/tests/guest/cairn.json"),
            include_str!("../../../tests/guests/testprovider/cairn.json"),
            include_str!("../../../tests/guests/lifecycle-test/cairn.json"),
        ] {
            let manifest: Value = serde_json::from_str(manifest).unwrap();
            let mut schema = manifest["schema"].clone();
            if schema.get("name").is_none() {
                schema["name"] = manifest["name"].clone();
            }
            if let Err(e) = check_schema(&schema) {
                panic!("{}: {e}", manifest["name"]);
            }
        }
    }

    #[test]
    fn errors_show_control_characters_escaped_and_long_keys_cut() {
        let key = format!("a\u{1b}[2J\u{9b}{}", "x".repeat(500));
        let schema = serde_json::json!({"name": "p", "resources": {"p:index:R": {
            "properties": {key.clone(): {"type": "string"}}}}});
        let invalid = check_schema(&schema).unwrap_err();
        let text = invalid.to_string();
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
        assert!(
            text.contains(r#"properties["a\u001b[2J\u009bxxx"#),
            "{text}"
        );
        assert!(text.contains("…"), "{text}");
        assert!(text.len() < 600, "{text}");
        // A value quoted in a message is escaped too.
        let schema = serde_json::json!({"name": "p\u{7}"});
        let text = check_schema(&schema).unwrap_err().to_string();
        assert!(
            text.contains(r#""p\u0007" is not a package name"#),
            "{text}"
        );
    }

    /// Types nested as deep as a parsed document can be validate; deeper ones (built in
    /// memory) are refused before anything recursive walks them.
    #[test]
    fn deep_nesting_is_checked_or_refused_without_overflow() {
        let nested = |levels: usize| {
            let mut ty = serde_json::json!({"type": "string"});
            for _ in 0..levels {
                // By hand: `json!` would serialize `ty` again, recursively.
                let mut array = serde_json::Map::new();
                array.insert("type".into(), Value::from("array"));
                array.insert("items".into(), ty);
                ty = Value::Object(array);
            }
            let mut variables = serde_json::Map::new();
            variables.insert("a".into(), ty);
            let mut schema = serde_json::json!({"name": "p", "config": {}});
            schema["config"]["variables"] = Value::Object(variables);
            schema
        };
        check_schema(&nested(100)).unwrap();
        let mut deep = nested(100_000);
        let invalid = check_schema(&deep).unwrap_err();
        assert_eq!(invalid.errors.len(), 1);
        assert_eq!(invalid.errors[0].rule, Rule::Depth);
        assert!(
            invalid.errors[0]
                .path
                .to_string()
                .starts_with("config.variables.a.items.items")
        );
        // Dropping a deep value recurses in serde_json: unwind it by hand.
        let mut next = deep["config"]["variables"]["a"].take();
        while let Some(items) = next.get_mut("items") {
            next = items.take();
        }
    }

    #[test]
    fn a_huge_document_reports_a_capped_sorted_list_and_the_total() {
        let mut resources = serde_json::Map::new();
        for i in 0..5000 {
            resources.insert(
                format!("p:index:R{i:05}"),
                serde_json::json!({"inputProperties": {"a": {"type": "float"}}}),
            );
        }
        let schema = serde_json::json!({"name": "p", "resources": resources});
        let invalid = check_schema(&schema).unwrap_err();
        assert_eq!(invalid.total, 5000);
        assert_eq!(invalid.errors.len(), MAX_REPORTED_ERRORS);
        assert_eq!(
            invalid.errors[0].path.to_string(),
            r#"resources["p:index:R00000"].inputProperties.a.type"#
        );
        assert!(invalid.to_string().ends_with("… and 4900 more"));
    }

    #[test]
    fn a_valid_schema_summarises_in_one_line() {
        let spec = check_schema(&serde_json::json!({"name": "p", "version": "1.0.0",
            "resources": {"p:index:R": {}}, "config": {"variables": {"a": {"type": "string"}}}}))
        .unwrap();
        assert_eq!(
            Summary::of(&spec).to_string(),
            "p@1.0.0: 1 resource, 0 functions, 0 types, 1 config variable"
        );
    }
}
