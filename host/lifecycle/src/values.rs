//! Scenario values: YAML to `PropertyValue`, and a canonical JSON view of `PropertyValue` for
//! comparisons and readable diffs.
//!
//! In scenario files a secret is written `{$secret: value}` and an unknown `$unknown`; the
//! canonical JSON view uses the same spellings, so expected and actual values compare as JSON.

use cairn_engine::value::{PropertyMap, PropertyValue};
use serde_json::{Map, Value as Json};
use serde_yaml_ng::Value as Yaml;

pub const SECRET_KEY: &str = "$secret";
pub const UNKNOWN: &str = "$unknown";

/// A YAML value as a property value (no `${...}` references: see the program module).
pub fn from_yaml(value: &Yaml) -> Result<PropertyValue, String> {
    Ok(match value {
        Yaml::Null => PropertyValue::Null,
        Yaml::Bool(b) => PropertyValue::Bool(*b),
        Yaml::Number(n) => PropertyValue::Number(
            n.as_f64()
                .ok_or_else(|| format!("number {n} is not representable"))?,
        ),
        Yaml::String(s) if s == UNKNOWN => PropertyValue::Computed,
        Yaml::String(s) => PropertyValue::String(s.clone()),
        Yaml::Sequence(items) => {
            PropertyValue::Array(items.iter().map(from_yaml).collect::<Result<_, _>>()?)
        }
        Yaml::Mapping(map) => {
            if map.len() == 1
                && let Some(inner) = map.get(SECRET_KEY)
            {
                return Ok(PropertyValue::secret(from_yaml(inner)?));
            }
            PropertyValue::Object(Box::new(map_from_yaml(map)?))
        }
        Yaml::Tagged(tagged) => from_yaml(&tagged.value)?,
    })
}

pub fn map_from_yaml(map: &serde_yaml_ng::Mapping) -> Result<PropertyMap, String> {
    let mut out = PropertyMap::new();
    for (key, value) in map {
        let key = key
            .as_str()
            .ok_or_else(|| format!("object keys must be strings, found {key:?}"))?;
        out.insert(key.to_owned(), from_yaml(value)?);
    }
    Ok(out)
}

fn number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

fn secret(inner: Json) -> Json {
    let mut map = Map::new();
    map.insert(SECRET_KEY.to_owned(), inner);
    Json::Object(map)
}

/// The canonical JSON view of a property value.
pub fn canon(value: &PropertyValue) -> Json {
    match value {
        PropertyValue::Null => Json::Null,
        PropertyValue::Bool(b) => Json::Bool(*b),
        PropertyValue::Number(n) => number(*n),
        PropertyValue::String(s) => Json::String(s.clone()),
        PropertyValue::Array(items) => Json::Array(items.iter().map(canon).collect()),
        PropertyValue::Object(map) => canon_map(map.as_ref()),
        PropertyValue::Secret(inner) => secret(canon(inner)),
        PropertyValue::Computed => Json::String(UNKNOWN.to_owned()),
        PropertyValue::Output(output) => {
            let inner = match &output.value {
                Some(v) => canon(v),
                None => Json::String(UNKNOWN.to_owned()),
            };
            if output.secret { secret(inner) } else { inner }
        }
        other => Json::String(format!("$other:{other:?}")),
    }
}

/// Canonical JSON of a map: the engine's, or the test provider's own.
pub fn canon_map<'a>(map: impl IntoIterator<Item = (&'a String, &'a PropertyValue)>) -> Json {
    Json::Object(
        map.into_iter()
            .map(|(k, v)| (k.clone(), canon(v)))
            .collect(),
    )
}

/// Canonical JSON of a YAML value (via `PropertyValue`, so numbers and secrets compare equal).
pub fn canon_yaml(value: &Yaml) -> Result<Json, String> {
    from_yaml(value).map(|v| canon(&v))
}

/// Pretty JSON for failure messages.
pub fn show(value: &Json) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

/// Looks up a dotted path (`tags.env`, `ports.0`) in a property value; a value found inside a
/// secret is secret.
pub fn lookup(root: &PropertyValue, path: &[&str]) -> Option<PropertyValue> {
    let Some((first, rest)) = path.split_first() else {
        return Some(root.clone());
    };
    match root {
        PropertyValue::Secret(inner) => lookup(inner, path).map(|v| match v {
            PropertyValue::Secret(_) => v,
            other => PropertyValue::secret(other),
        }),
        PropertyValue::Output(o) => lookup(o.value.as_deref()?, path),
        PropertyValue::Object(map) => lookup(map.get(first)?, rest),
        PropertyValue::Array(items) => lookup(items.get(first.parse::<usize>().ok()?)?, rest),
        _ => None,
    }
}
