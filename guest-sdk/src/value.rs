//! The guest's value type, [`Value`], mirroring the host's `PropertyValue` kind for kind.
//!
//! Values cross the component boundary as flat node lists (see [`crate::wire`]); providers only
//! ever see and build [`Value`]s and [`PropertyMap`]s.

use std::fmt;

use indexmap::IndexMap;

/// An object's properties, in a stable (insertion) order.
pub type PropertyMap = IndexMap<String, Value>;

/// A value of the type system.
///
/// Equality is deep and structural: `Secret(x) != x` and two unknowns are equal. Use
/// [`Value::same_as`] to compare contents while ignoring secret and output markers.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    /// An IEEE-754 double (integers included).
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(PropertyMap),
    Asset(Asset),
    Archive(Archive),
    ResourceReference(ResourceReference),
    /// A sensitive value; everything derived from it should stay secret.
    Secret(Box<Value>),
    /// A value not known yet (a preview, or an output of a resource not yet created).
    Unknown,
    /// A value with output metadata: contents (or unknown), secretness and dependencies.
    Output(OutputValue),
}

// Assets and archives are data both sides of the boundary share (`cairn-wire`).
pub use cairn_wire::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Members};

/// A reference to a resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceReference {
    pub urn: String,
    /// The ID (a string, or [`Value::Unknown`]); `None` for components.
    pub id: Option<Box<Value>>,
    pub package_version: Option<String>,
}

/// The metadata-carrying form of a value (`Output<T>` in the type system).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutputValue {
    /// The value, or `None` when it is unknown.
    pub value: Option<Box<Value>>,
    pub secret: bool,
    /// URNs of the resources the value depends on.
    pub dependencies: Vec<String>,
}

impl Value {
    /// Wraps `value` as a secret.
    pub fn secret(value: impl Into<Value>) -> Value {
        Value::Secret(Box::new(value.into()))
    }

    /// The value's kind, for messages ("expected a string, found a number").
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Asset(_) => "asset",
            Value::Archive(_) => "archive",
            Value::ResourceReference(_) => "resource reference",
            Value::Secret(_) => "secret",
            Value::Unknown => "unknown",
            Value::Output(_) => "output",
        }
    }

    /// The contents with secret and known-output wrappers removed (recursively at the top).
    /// An unknown output reveals as [`Value::Unknown`].
    pub fn reveal(&self) -> &Value {
        let mut v = self;
        loop {
            match v {
                Value::Secret(inner) => v = inner,
                Value::Output(o) => match &o.value {
                    Some(inner) => v = inner,
                    None => return &Value::Unknown,
                },
                other => return other,
            }
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.reveal(), Value::Null)
    }

    /// True when this value (seen through secrets and outputs) is unknown at the top level.
    pub fn is_unknown(&self) -> bool {
        matches!(self.reveal(), Value::Unknown)
    }

    /// True when the value is a secret or a secret output at the top level.
    pub fn is_secret(&self) -> bool {
        match self {
            Value::Secret(_) => true,
            Value::Output(o) => o.secret || o.value.as_deref().is_some_and(Value::is_secret),
            _ => false,
        }
    }

    /// The string, seen through secrets and outputs.
    pub fn as_str(&self) -> Option<&str> {
        match self.reveal() {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, seen through secrets and outputs.
    pub fn as_bool(&self) -> Option<bool> {
        match self.reveal() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, seen through secrets and outputs.
    pub fn as_f64(&self) -> Option<f64> {
        match self.reveal() {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number if it is an integer that fits an `i64` exactly.
    pub fn as_i64(&self) -> Option<i64> {
        let n = self.as_f64()?;
        // -2^63 and 2^63 are exact doubles; the range is half-open like i64's.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        (n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n)).then_some(n as i64)
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self.reveal() {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&PropertyMap> {
        match self.reveal() {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// True when this value is, or contains, an unknown.
    pub fn contains_unknowns(&self) -> bool {
        self.any(&mut |v| match v {
            Value::Unknown => true,
            Value::Output(o) => o.value.is_none(),
            Value::ResourceReference(r) => r.id.as_deref().is_some_and(Value::contains_unknowns),
            _ => false,
        })
    }

    /// True when this value is, or contains, a secret.
    pub fn contains_secrets(&self) -> bool {
        self.any(&mut |v| match v {
            Value::Secret(_) => true,
            Value::Output(o) => o.secret,
            _ => false,
        })
    }

    /// Pre-order search: true when `pred` holds for this value or any value nested in it.
    pub fn any(&self, pred: &mut impl FnMut(&Value) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        match self {
            Value::Array(items) => items.iter().any(|v| v.any(pred)),
            Value::Object(map) => map.values().any(|v| v.any(pred)),
            Value::Secret(inner) => inner.any(pred),
            Value::Output(o) => o.value.as_deref().is_some_and(|v| v.any(pred)),
            _ => false,
        }
    }

    /// Equality of contents, ignoring secret wrappers and output metadata at every depth.
    /// Unknowns are never the same as anything (not even another unknown): their value may
    /// turn out to differ.
    pub fn same_as(&self, other: &Value) -> bool {
        match (self.reveal(), other.reveal()) {
            (Value::Unknown, _) | (_, Value::Unknown) => false,
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_as(y))
            }
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, x)| b.get(k).is_some_and(|y| x.same_as(y)))
            }
            (a, b) => a == b,
        }
    }

    /// Looks up a property path (`a.b`, `list[0]`, `tags["x.y"]`) in this value, seeing through
    /// secrets and outputs on the way. See [`Lookup`].
    pub fn lookup(&self, path: &str) -> Result<Lookup<'_>, PathError> {
        lookup_segments(self, &parse_path(path)?)
    }
}

/// The result of looking a property path up in a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup<'a> {
    /// Nothing there (or `null`).
    Missing,
    /// The value, or something on the way to it, is not known yet.
    Unknown,
    /// The value (possibly a secret or an output; see [`Value::reveal`]).
    Found(&'a Value),
}

/// A malformed property path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    pub path: String,
    pub reason: &'static str,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid property path {:?}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PathError {}

/// One step of a property path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// Parses `a.b[0]["c.d"]` into segments. A leading key may not be empty.
pub(crate) fn parse_path(path: &str) -> Result<Vec<Segment>, PathError> {
    let err = |reason| PathError {
        path: path.to_owned(),
        reason,
    };
    let bytes = path.as_bytes();
    let mut segments = Vec::new();
    let mut i = 0;
    let mut expect_key = true;
    while i < bytes.len() {
        match bytes[i] {
            b'[' => {
                let close = path[i..].find(']').ok_or_else(|| err("unclosed '['"))? + i;
                let inner = &path[i + 1..close];
                if let Some(quoted) = inner.strip_prefix('"') {
                    let key = quoted
                        .strip_suffix('"')
                        .ok_or_else(|| err("unterminated quoted key"))?;
                    segments.push(Segment::Key(key.to_owned()));
                } else {
                    let index = inner.parse().map_err(|_| err("index is not a number"))?;
                    segments.push(Segment::Index(index));
                }
                i = close + 1;
                expect_key = false;
            }
            b'.' if !expect_key => {
                i += 1;
                expect_key = true;
            }
            _ if expect_key => {
                let end = path[i..].find(['.', '[']).map_or(bytes.len(), |e| e + i);
                if end == i {
                    return Err(err("empty key"));
                }
                segments.push(Segment::Key(path[i..end].to_owned()));
                i = end;
                expect_key = false;
            }
            _ => return Err(err("expected '.' or '['")),
        }
    }
    if segments.is_empty() || (expect_key && path.ends_with('.')) {
        return Err(err("empty key"));
    }
    Ok(segments)
}

fn lookup_segments<'a>(root: &'a Value, segments: &[Segment]) -> Result<Lookup<'a>, PathError> {
    let mut current = root;
    for segment in segments {
        let next = match (current.reveal(), segment) {
            (Value::Unknown, _) => return Ok(Lookup::Unknown),
            (Value::Object(map), Segment::Key(k)) => map.get(k),
            (Value::Array(items), Segment::Index(i)) => items.get(*i),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => return Ok(Lookup::Missing),
        }
    }
    Ok(match current.reveal() {
        Value::Null => Lookup::Missing,
        Value::Unknown => Lookup::Unknown,
        _ => Lookup::Found(current),
    })
}

/// Path lookups on a property map (the object at the root of inputs and outputs).
pub(crate) fn lookup_in<'a>(map: &'a PropertyMap, path: &str) -> Result<Lookup<'a>, PathError> {
    let segments = parse_path(path)?;
    let (first, rest) = match segments.split_first() {
        Some((Segment::Key(k), rest)) => (k, rest),
        _ => {
            return Err(PathError {
                path: path.to_owned(),
                reason: "a path into an object must start with a key",
            });
        }
    };
    match map.get(first) {
        None => Ok(Lookup::Missing),
        Some(v) => lookup_segments(v, rest),
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Number(n)
    }
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            /// Integers become numbers; beyond 2^53 they lose precision, as in the type system.
            fn from(n: $t) -> Self {
                Value::Number(n as f64)
            }
        }
    )*};
}
from_integer!(i32, i64, u32, u64, usize);

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::String(s.clone())
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::Array(items)
    }
}

impl From<PropertyMap> for Value {
    fn from(map: PropertyMap) -> Self {
        Value::Object(map)
    }
}

impl From<Asset> for Value {
    fn from(asset: Asset) -> Self {
        Value::Asset(asset)
    }
}

impl From<Archive> for Value {
    fn from(archive: Archive) -> Self {
        Value::Archive(archive)
    }
}

impl From<ResourceReference> for Value {
    fn from(r: ResourceReference) -> Self {
        Value::ResourceReference(r)
    }
}

impl From<OutputValue> for Value {
    fn from(o: OutputValue) -> Self {
        Value::Output(o)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// `None` is [`Value::Null`].
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Wraps a value as a secret: `props! { "password" => secret(p) }`.
pub fn secret(value: impl Into<Value>) -> Value {
    Value::secret(value)
}

/// Builds a [`PropertyMap`] from `key => value` pairs; values go through `Value::from`.
///
/// ```
/// use cairn_sdk::{props, secret, Value};
/// let map = props! { "length" => 16, "special" => false, "result" => secret("s3cr3t") };
/// assert_eq!(map["length"], Value::Number(16.0));
/// ```
#[macro_export]
macro_rules! props {
    ($($key:expr => $value:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut map = $crate::PropertyMap::new();
        $(map.insert(::std::string::String::from($key), $crate::Value::from($value));)*
        map
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reveal_sees_through_secrets_and_outputs() {
        let v = Value::secret(Value::Output(OutputValue {
            value: Some(Box::new("x".into())),
            secret: false,
            dependencies: vec![],
        }));
        assert_eq!(v.as_str(), Some("x"));
        assert!(v.is_secret());
        let unknown = Value::Output(OutputValue::default());
        assert!(unknown.is_unknown());
        assert!(unknown.contains_unknowns());
    }

    #[test]
    fn integers_are_checked() {
        assert_eq!(Value::from(3).as_i64(), Some(3));
        assert_eq!(Value::from(3.5).as_i64(), None);
        assert_eq!(Value::from(1e300).as_i64(), None);
        assert_eq!(Value::from(-1).as_i64(), Some(-1));
    }

    #[test]
    fn same_as_ignores_secrets_but_not_unknowns() {
        let a = Value::Object(props! {"k" => vec![Value::from(1)]});
        let b = Value::Object(props! {"k" => vec![Value::secret(1.0)]});
        assert!(a.same_as(&b));
        assert_ne!(a, b);
        assert!(!Value::Unknown.same_as(&Value::Unknown));
        assert!(!a.same_as(&Value::Object(props! {"k" => vec![Value::from(2)]})));
    }

    #[test]
    fn paths_parse_and_look_up() {
        let map = props! {
            "tags" => props! {"a.b" => "dotted", "env" => "prod"},
            "ports" => vec![Value::from(80), Value::Unknown],
            "nothing" => Value::Null,
            "hidden" => secret(props! {"x" => 1}),
        };
        let found = |p| match lookup_in(&map, p).unwrap() {
            Lookup::Found(v) => Some(v.clone()),
            _ => None,
        };
        assert_eq!(found("tags.env"), Some("prod".into()));
        assert_eq!(found("tags[\"a.b\"]"), Some("dotted".into()));
        assert_eq!(found("ports[0]"), Some(80.into()));
        assert_eq!(found("hidden.x"), Some(1.into()));
        assert_eq!(lookup_in(&map, "ports[1]").unwrap(), Lookup::Unknown);
        assert_eq!(lookup_in(&map, "ports[9]").unwrap(), Lookup::Missing);
        assert_eq!(lookup_in(&map, "nothing").unwrap(), Lookup::Missing);
        assert_eq!(lookup_in(&map, "absent.deeper").unwrap(), Lookup::Missing);
        for bad in ["", "a.", "a..b", "a[", "a[x]", "[0]", "a[\"x]"] {
            assert!(lookup_in(&map, bad).is_err(), "{bad:?}");
        }
    }
}
