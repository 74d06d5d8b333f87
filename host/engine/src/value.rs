//! The engine's one value type, [`PropertyValue`], covering every kind in the type system.
//!
//! Codecs (state JSON, protobuf `Struct`, WIT node lists) live at the edges and convert to and
//! from this type; nothing in the engine works on encoded values.
//!
//! # Secrets survive providers
//!
//! What a provider returns — checked inputs, outputs, read inputs and outputs, refreshed state —
//! keeps the secretness of what it was given (`value::restore_secrets`, Pulumi's `annotateSecrets`
//! rule: objects key by key, anything else secret whole), for every provider, so a provider that
//! drops markers (acceptSecrets false) cannot put a program's secret into the state, the display or
//! the stack outputs in plain text. Beyond Pulumi, a returned text equal to a secret text the
//! provider was given, or containing one of 5+ characters, is secret too
//! (`value::mark_secret_copies`), whatever its key: a copy or a derivation under another name does
//! not leak. The e2e and lifecycle suites scan every checkpoint, journal line, history file and
//! output for known secret plaintexts.

use crate::asset::{Archive, Asset};
use crate::ordered_map::OrderedMap;
use crate::urn::Urn;

/// An object's properties, in a stable (insertion) order.
pub type PropertyMap = OrderedMap<PropertyValue>;

/// The resources each property's value came from, by property name.
pub type PropertyDependencies = OrderedMap<Vec<Urn>>;

/// A value of the type system.
///
/// Equality is deep and structural: `Secret(x) != x`, and two unknowns are equal. Numbers are IEEE
/// doubles, so `NaN != NaN` as in the spec's number type.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PropertyValue {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<PropertyValue>),
    /// Boxed, like every kind larger than a string: a value is then 32 bytes instead of 96,
    /// and a recorded state holds thousands of them.
    Object(Box<PropertyMap>),
    Asset(Box<Asset>),
    Archive(Box<Archive>),
    ResourceReference(Box<ResourceReference>),
    /// A value whose contents are sensitive; everything derived from it stays secret.
    Secret(Box<PropertyValue>),
    /// A value that is not known yet (a preview, or an output of a resource not yet created).
    Computed,
    /// An output value: a value or unknown, plus secretness and the resources it depends on.
    Output(Box<OutputValue>),
}

/// A reference to a resource, rehydrated by SDKs into a typed resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceReference {
    pub urn: Urn,
    /// The resource's ID; `None` for components. An unknown ID is [`PropertyValue::Computed`].
    pub id: Option<Box<PropertyValue>>,
    /// The version of the package that manages the resource, if known.
    pub package_version: Option<String>,
}

/// The metadata-carrying form of a value: `Output<T>` in the type system.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutputValue {
    /// The value, or `None` when it is unknown.
    pub value: Option<Box<PropertyValue>>,
    pub secret: bool,
    pub dependencies: Vec<Urn>,
}

impl PropertyValue {
    /// The value's kind, for error messages ("expected a string, found a number").
    pub fn kind(&self) -> &'static str {
        match self {
            PropertyValue::Null => "null",
            PropertyValue::Bool(_) => "bool",
            PropertyValue::Number(_) => "number",
            PropertyValue::String(_) => "string",
            PropertyValue::Array(_) => "array",
            PropertyValue::Object(_) => "object",
            PropertyValue::Asset(_) => "asset",
            PropertyValue::Archive(_) => "archive",
            PropertyValue::ResourceReference(_) => "resource reference",
            PropertyValue::Secret(_) => "secret",
            PropertyValue::Computed => "unknown",
            PropertyValue::Output(_) => "output",
        }
    }

    pub fn secret(value: PropertyValue) -> PropertyValue {
        PropertyValue::Secret(Box::new(value))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, PropertyValue::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            PropertyValue::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            PropertyValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<f64> {
        match self {
            PropertyValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<PropertyValue>> {
        match self {
            PropertyValue::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&PropertyMap> {
        match self {
            PropertyValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// True when this value is, or contains, an unknown: `Computed` or an output without a value.
    pub fn contains_unknowns(&self) -> bool {
        self.any(&mut |v| match v {
            PropertyValue::Computed => true,
            PropertyValue::Output(o) => o.value.is_none(),
            PropertyValue::ResourceReference(r) => {
                r.id.as_deref()
                    .is_some_and(PropertyValue::contains_unknowns)
            }
            _ => false,
        })
    }

    /// True when this value is, or contains, a secret: `Secret` or a secret output.
    pub fn contains_secrets(&self) -> bool {
        self.any(&mut |v| match v {
            PropertyValue::Secret(_) => true,
            PropertyValue::Output(o) => o.secret,
            _ => false,
        })
    }

    /// True when this value is itself secret (not merely containing one).
    pub fn is_secret(&self) -> bool {
        match self {
            PropertyValue::Secret(_) => true,
            PropertyValue::Output(o) => o.secret,
            _ => false,
        }
    }

    /// Pre-order search: true when `pred` holds for this value or any value nested in it.
    pub fn any(&self, pred: &mut impl FnMut(&PropertyValue) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        match self {
            PropertyValue::Array(items) => items.iter().any(|v| v.any(pred)),
            PropertyValue::Object(map) => map.values().any(|v| v.any(pred)),
            PropertyValue::Secret(inner) => inner.any(pred),
            PropertyValue::Output(o) => o.value.as_deref().is_some_and(|v| v.any(pred)),
            _ => false,
        }
    }

    /// Rebuilds the value bottom-up: children are mapped first, then `f` sees the rebuilt node.
    pub fn map(self, f: &mut impl FnMut(PropertyValue) -> PropertyValue) -> PropertyValue {
        let rebuilt = match self {
            PropertyValue::Array(items) => {
                PropertyValue::Array(items.into_iter().map(|v| v.map(f)).collect())
            }
            PropertyValue::Object(map) => PropertyValue::from(
                map.into_iter()
                    .map(|(k, v)| (k, v.map(f)))
                    .collect::<PropertyMap>(),
            ),
            PropertyValue::Secret(inner) => PropertyValue::Secret(Box::new(inner.map(f))),
            PropertyValue::Output(mut o) => {
                o.value = o.value.map(|v| Box::new(v.map(f)));
                PropertyValue::Output(o)
            }
            other => other,
        };
        f(rebuilt)
    }

    /// Removes every secret marker (secret wrappers and output secret flags), keeping contents.
    pub fn unsecret(self) -> PropertyValue {
        self.map(&mut |v| match v {
            PropertyValue::Secret(inner) => *inner,
            PropertyValue::Output(mut o) => {
                o.secret = false;
                PropertyValue::Output(o)
            }
            other => other,
        })
    }
}

impl From<bool> for PropertyValue {
    fn from(b: bool) -> Self {
        PropertyValue::Bool(b)
    }
}

impl From<f64> for PropertyValue {
    fn from(n: f64) -> Self {
        PropertyValue::Number(n)
    }
}

impl From<i64> for PropertyValue {
    fn from(n: i64) -> Self {
        PropertyValue::Number(n as f64)
    }
}

impl From<&str> for PropertyValue {
    fn from(s: &str) -> Self {
        PropertyValue::String(s.to_owned())
    }
}

impl From<String> for PropertyValue {
    fn from(s: String) -> Self {
        PropertyValue::String(s)
    }
}

impl From<Vec<PropertyValue>> for PropertyValue {
    fn from(items: Vec<PropertyValue>) -> Self {
        PropertyValue::Array(items)
    }
}

impl From<PropertyMap> for PropertyValue {
    fn from(map: PropertyMap) -> Self {
        PropertyValue::Object(Box::new(map))
    }
}

/// Builds a [`PropertyMap`] from `key => value` pairs; values go through `PropertyValue::from`.
#[macro_export]
macro_rules! props {
    (@one $key:expr) => {
        ()
    };
    ($($key:expr => $value:expr),* $(,)?) => {{
        // Sized once: a map grown entry by entry reallocates its entries and its index.
        #[allow(unused_mut)]
        let mut map = $crate::value::PropertyMap::with_capacity(
            <[()]>::len(&[$($crate::props!(@one $key)),*]),
        );
        $(map.insert(::std::string::String::from($key), $crate::value::PropertyValue::from($value));)*
        map
    }};
}

/// Shorter secret texts are looked for only as whole values (`"1"` is in too many texts).
pub const MIN_CONTAINED_SECRET: usize = 5;

/// Marks as secret every text in `values` (not already inside a secret) that equals a secret
/// text of `reference`, or contains one of at least [`MIN_CONTAINED_SECRET`] characters: a
/// provider that copies a secret it was given into an output of another name, or builds one
/// from it (which [`restore_secrets`] cannot see), does not reveal it either. Over-marking a
/// value that happens to match a secret only masks it.
pub fn mark_secret_copies(values: &mut PropertyMap, reference: &PropertyMap) {
    fn collect<'a>(value: &'a PropertyValue, secret: bool, into: &mut Vec<&'a str>) {
        match value {
            PropertyValue::String(s) if secret && !s.is_empty() => into.push(s),
            PropertyValue::Array(items) => items.iter().for_each(|v| collect(v, secret, into)),
            PropertyValue::Object(map) => map.values().for_each(|v| collect(v, secret, into)),
            PropertyValue::Secret(inner) => collect(inner, true, into),
            PropertyValue::Output(o) => {
                if let Some(v) = &o.value {
                    collect(v, secret || o.secret, into)
                }
            }
            _ => {}
        }
    }
    fn mark(value: &mut PropertyValue, secrets: &std::collections::HashSet<&str>) {
        let reveals = |s: &str| {
            secrets.contains(s)
                || secrets
                    .iter()
                    .any(|secret| secret.len() >= MIN_CONTAINED_SECRET && s.contains(secret))
        };
        match value {
            PropertyValue::String(s) if reveals(s) => {
                *value = PropertyValue::secret(std::mem::take(value));
            }
            PropertyValue::Array(items) => items.iter_mut().for_each(|v| mark(v, secrets)),
            PropertyValue::Object(map) => map.values_mut().for_each(|v| mark(v, secrets)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for value in reference.values() {
        collect(value, false, &mut texts);
    }
    if texts.is_empty() {
        return;
    }
    let secrets: std::collections::HashSet<&str> = texts.into_iter().collect();
    for value in values.values_mut() {
        mark(value, &secrets);
    }
}

/// Carries the secretness of `reference` over to `values`, for what a provider hands back
/// (checked inputs, outputs, read state) that it received secret but returned in plain text
/// (providers that do not accept secrets, or simply drop the marker): where a key is in both,
/// two objects are compared key by key, and otherwise a reference value that is or contains a
/// secret makes the whole returned value secret. The same rule as Pulumi's engine applies to
/// providers that do not accept secrets; Cairn applies it to every provider, so no secret a
/// program marked can reach the state in plain text through a provider.
pub fn restore_secrets(values: &mut PropertyMap, reference: &PropertyMap) {
    for (key, wanted) in reference {
        let Some(value) = values.get_mut(key) else {
            continue;
        };
        match (value, wanted) {
            (PropertyValue::Object(value), PropertyValue::Object(wanted)) => {
                restore_secrets(value, wanted)
            }
            (value, wanted) => {
                if !value.is_secret() && wanted.contains_secrets() {
                    *value = PropertyValue::secret(std::mem::take(value));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded state holds thousands of values: each is as small as a string (the larger
    /// kinds are boxed), which took a 100,000-resource state from 303 MB to about 250 MB.
    #[test]
    fn a_value_is_as_small_as_a_string() {
        assert_eq!(std::mem::size_of::<PropertyValue>(), 32);
    }

    #[test]
    fn secretness_is_restored_from_what_the_provider_was_given() {
        let s = PropertyValue::secret;
        let obj = |m: PropertyMap| PropertyValue::Object(Box::new(m));
        // (returned, given, expected)
        let cases: Vec<(PropertyMap, PropertyMap, PropertyMap)> = vec![
            // A plain copy of a secret input becomes secret again.
            (
                props! {"pw" => "x"},
                props! {"pw" => s("x".into())},
                props! {"pw" => s("x".into())},
            ),
            // Objects are compared key by key: only the secret member is marked.
            (
                props! {"o" => obj(props! {"a" => "1", "b" => "2"})},
                props! {"o" => obj(props! {"a" => s("1".into()), "b" => "2"})},
                props! {"o" => obj(props! {"a" => s("1".into()), "b" => "2"})},
            ),
            // Anything else containing a secret makes the returned value secret whole.
            (
                props! {"l" => vec![PropertyValue::from("a"), "b".into()]},
                props! {"l" => vec![PropertyValue::from("a"), s("b".into())]},
                props! {"l" => s(vec![PropertyValue::from("a"), "b".into()].into())},
            ),
            (
                props! {"o" => obj(props! {"a" => "1"})},
                props! {"o" => s(obj(props! {"a" => "1"}))},
                props! {"o" => s(obj(props! {"a" => "1"}))},
            ),
            // Keys the provider did not return, or returned already secret, are left alone.
            (
                props! {"other" => "y"},
                props! {"pw" => s("x".into())},
                props! {"other" => "y"},
            ),
            (
                props! {"pw" => s("x".into())},
                props! {"pw" => s("x".into())},
                props! {"pw" => s("x".into())},
            ),
            (
                props! {"a" => "1"},
                props! {"a" => "1"},
                props! {"a" => "1"},
            ),
        ];
        for (mut returned, given, expected) in cases {
            let before = returned.clone();
            restore_secrets(&mut returned, &given);
            assert_eq!(returned, expected, "returned {before:?}, given {given:?}");
        }
    }

    #[test]
    fn copies_of_a_secret_under_other_names_are_secret() {
        let s = PropertyValue::secret;
        let given = props! {"pw" => s("hunter2".into()), "o" => s(PropertyValue::from(props! {"k" => "key-1"})), "plain" => "open"};
        let mut returned = props! {
            "echo" => "hunter2",
            "derived" => "copy-hunter2",
            "list" => vec![PropertyValue::from("key-1"), "other".into()],
            "plain" => "open",
            "already" => s("hunter2".into()),
        };
        mark_secret_copies(&mut returned, &given);
        assert_eq!(
            returned,
            props! {
                "echo" => s("hunter2".into()),
                "derived" => s("copy-hunter2".into()),
                "list" => vec![s("key-1".into()), "other".into()],
                "plain" => "open",
                "already" => s("hunter2".into()),
            }
        );
    }

    fn output(value: Option<PropertyValue>, secret: bool) -> PropertyValue {
        PropertyValue::Output(Box::new(OutputValue {
            value: value.map(Box::new),
            secret,
            dependencies: vec![],
        }))
    }

    #[test]
    fn unknowns_are_found_at_any_depth() {
        let cases = [
            (PropertyValue::Computed, true),
            (output(None, false), true),
            (output(Some("x".into()), false), false),
            (
                PropertyValue::from(
                    props! {"a" => vec![PropertyValue::Null, PropertyValue::Computed]},
                ),
                true,
            ),
            (PropertyValue::secret(PropertyValue::Computed), true),
            (PropertyValue::from(props! {"a" => 1i64, "b" => "x"}), false),
        ];
        for (value, expected) in cases {
            assert_eq!(value.contains_unknowns(), expected, "{value:?}");
        }
    }

    #[test]
    fn secrets_are_found_at_any_depth() {
        let cases = [
            (PropertyValue::secret("p".into()), true),
            (output(Some("x".into()), true), true),
            (output(None, false), false),
            (
                PropertyValue::Array(vec![PropertyValue::from(
                    props! {"k" => PropertyValue::secret(1i64.into())},
                )]),
                true,
            ),
            (PropertyValue::from(props! {"a" => "plain"}), false),
        ];
        for (value, expected) in cases {
            assert_eq!(value.contains_secrets(), expected, "{value:?}");
        }
    }

    #[test]
    fn equality_is_deep_and_secret_aware() {
        let a = PropertyValue::from(props! {"x" => vec![PropertyValue::from(1i64)]});
        let b = PropertyValue::from(props! {"x" => vec![PropertyValue::from(1.0)]});
        assert_eq!(a, b);
        assert_ne!(PropertyValue::secret("s".into()), PropertyValue::from("s"));
        assert_ne!(
            PropertyValue::from(props! {"x" => 1i64}),
            PropertyValue::from(props! {"x" => 2i64})
        );
    }

    #[test]
    fn map_rebuilds_bottom_up_and_unsecret_strips_markers() {
        let value = PropertyValue::from(props! {
            "a" => PropertyValue::secret(PropertyValue::from(2i64)),
            "b" => vec![PropertyValue::from(3i64)],
        });
        let doubled = value.clone().map(&mut |v| match v {
            PropertyValue::Number(n) => PropertyValue::Number(n * 2.0),
            other => other,
        });
        assert_eq!(
            doubled,
            PropertyValue::from(props! {
                "a" => PropertyValue::secret(PropertyValue::from(4i64)),
                "b" => vec![PropertyValue::from(6i64)],
            })
        );
        let plain = value.unsecret();
        assert!(!plain.contains_secrets());
        assert_eq!(plain.as_object().unwrap()["a"], PropertyValue::from(2i64));
    }

    #[test]
    fn object_keys_keep_insertion_order() {
        let map = props! {"zeta" => 1i64, "alpha" => 2i64, "mid" => 3i64};
        let keys: Vec<_> = map.keys().map(String::as_str).collect();
        assert_eq!(keys, ["zeta", "alpha", "mid"]);
    }
}
