//! `PropertyValue` ⇄ `google.protobuf.Struct`/`Value`, as the plugin protocol encodes values.
//!
//! Plain values map to their protobuf kinds (numbers are doubles). Special values are objects
//! carrying the signature key [`SIG_KEY`]:
//!
//! | value | object |
//! |---|---|
//! | secret | `{sig: SECRET_SIG, value}` |
//! | asset | `{sig: ASSET_SIG, hash, text \| path \| uri}` |
//! | archive | `{sig: ARCHIVE_SIG, hash, assets \| path \| uri}` |
//! | resource reference | `{sig: RESOURCE_REFERENCE_SIG, urn, id, packageVersion}` |
//! | output | `{sig: OUTPUT_VALUE_SIG, value?, secret, dependencies}` |
//!
//! and an unknown value is the string [`UNKNOWN_SENTINEL`]. A peer that has not said it accepts
//! secrets, resource references or output values gets them downgraded ([`Marshal`]): a secret
//! becomes its plain value, a reference its ID (custom resources) or URN (components), an output
//! its value (secret-wrapped if secret and secrets are accepted) or the unknown sentinel.

use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Members};
use cairn_engine::limits::{
    MAX_ID_BYTES, MAX_KEY_BYTES, MAX_VALUE_DEPTH, Step, ValueProblem, check_len, format_path,
};
use cairn_engine::state::codec::{
    ARCHIVE_SIG, ASSET_SIG, OUTPUT_VALUE_SIG, RESOURCE_REFERENCE_SIG, SECRET_SIG, SIG_KEY,
    UNKNOWN_SENTINEL,
};
use cairn_engine::text::has_unsafe;
use cairn_engine::urn::Urn;
use cairn_engine::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};

/// A protobuf value that is not a valid property value; the message says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("property {path}: {reason}")]
pub struct ConvertError {
    /// A property path as the engine prints it (`tags.env`, `ports[0]`, `tags["a b"]`), or
    /// `(root)` for the whole value.
    pub path: String,
    pub reason: String,
}

/// What the peer accepts; anything else is downgraded on the way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marshal {
    pub secrets: bool,
    pub resources: bool,
    pub outputs: bool,
}

impl Marshal {
    /// A peer that accepts every kind.
    pub const ALL: Marshal = Marshal {
        secrets: true,
        resources: true,
        outputs: true,
    };

    /// A peer that accepts only plain values (and unknowns).
    pub const PLAIN: Marshal = Marshal {
        secrets: false,
        resources: false,
        outputs: false,
    };
}

fn string(s: impl Into<String>) -> Value {
    Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

fn object(fields: Vec<(&str, Value)>) -> Value {
    Value {
        kind: Some(Kind::StructValue(Struct {
            fields: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        })),
    }
}

fn null() -> Value {
    Value {
        kind: Some(Kind::NullValue(0)),
    }
}

/// Encodes a property map as a `Struct`.
pub fn to_struct(map: &PropertyMap, marshal: Marshal) -> Struct {
    Struct {
        fields: map
            .iter()
            .map(|(k, v)| (k.clone(), to_value(v, marshal)))
            .collect(),
    }
}

/// Encodes one property value.
pub fn to_value(value: &PropertyValue, marshal: Marshal) -> Value {
    match value {
        PropertyValue::Null => null(),
        PropertyValue::Bool(b) => Value {
            kind: Some(Kind::BoolValue(*b)),
        },
        PropertyValue::Number(n) => Value {
            kind: Some(Kind::NumberValue(*n)),
        },
        PropertyValue::String(s) => string(s.clone()),
        PropertyValue::Array(items) => Value {
            kind: Some(Kind::ListValue(ListValue {
                values: items.iter().map(|v| to_value(v, marshal)).collect(),
            })),
        },
        PropertyValue::Object(map) => Value {
            kind: Some(Kind::StructValue(to_struct(map, marshal))),
        },
        PropertyValue::Asset(asset) => asset_value(asset),
        PropertyValue::Archive(archive) => archive_value(archive),
        PropertyValue::ResourceReference(r) => {
            if marshal.resources {
                let mut fields = vec![
                    (SIG_KEY, string(RESOURCE_REFERENCE_SIG)),
                    ("urn", string(r.urn.as_str())),
                ];
                if let Some(id) = &r.id {
                    fields.push(("id", id_value(id)));
                }
                if let Some(version) = &r.package_version {
                    fields.push(("packageVersion", string(version.clone())));
                }
                object(fields)
            } else {
                // Downgraded: a custom resource's ID, a component's URN.
                match &r.id {
                    Some(id) => id_value(id),
                    None => string(r.urn.as_str()),
                }
            }
        }
        PropertyValue::Secret(inner) => {
            let inner = to_value(inner, marshal);
            if marshal.secrets {
                object(vec![(SIG_KEY, string(SECRET_SIG)), ("value", inner)])
            } else {
                inner
            }
        }
        PropertyValue::Computed => string(UNKNOWN_SENTINEL),
        PropertyValue::Output(o) => {
            if marshal.outputs {
                let mut fields = vec![(SIG_KEY, string(OUTPUT_VALUE_SIG))];
                if let Some(v) = &o.value {
                    fields.push(("value", to_value(v, marshal)));
                }
                if o.secret {
                    fields.push((
                        "secret",
                        Value {
                            kind: Some(Kind::BoolValue(true)),
                        },
                    ));
                }
                if !o.dependencies.is_empty() {
                    fields.push((
                        "dependencies",
                        Value {
                            kind: Some(Kind::ListValue(ListValue {
                                values: o.dependencies.iter().map(|u| string(u.as_str())).collect(),
                            })),
                        },
                    ));
                }
                object(fields)
            } else {
                let plain = match &o.value {
                    Some(v) => to_value(v, marshal),
                    None => string(UNKNOWN_SENTINEL),
                };
                if o.secret && marshal.secrets {
                    object(vec![(SIG_KEY, string(SECRET_SIG)), ("value", plain)])
                } else {
                    plain
                }
            }
        }
    }
}

/// A resource ID: a string, or the unknown sentinel.
fn id_value(id: &PropertyValue) -> Value {
    match id {
        PropertyValue::String(s) => string(s.clone()),
        _ => string(UNKNOWN_SENTINEL),
    }
}

fn asset_value(asset: &Asset) -> Value {
    let mut fields = vec![(SIG_KEY, string(ASSET_SIG))];
    if let Some(hash) = &asset.hash {
        fields.push(("hash", string(hash.clone())));
    }
    match &asset.source {
        AssetSource::Text(t) => fields.push(("text", string(t.clone()))),
        AssetSource::Path(p) => fields.push(("path", string(p.clone()))),
        AssetSource::Uri(u) => fields.push(("uri", string(u.clone()))),
        AssetSource::HashOnly => {}
    }
    object(fields)
}

fn archive_value(archive: &Archive) -> Value {
    let mut fields = vec![(SIG_KEY, string(ARCHIVE_SIG))];
    if let Some(hash) = &archive.hash {
        fields.push(("hash", string(hash.clone())));
    }
    match &archive.source {
        ArchiveSource::Assets(members) => fields.push((
            "assets",
            Value {
                kind: Some(Kind::StructValue(Struct {
                    fields: members
                        .iter()
                        .map(|(name, member)| {
                            let v = match member {
                                ArchiveMember::Asset(a) => asset_value(a),
                                ArchiveMember::Archive(a) => archive_value(a),
                            };
                            (name.clone(), v)
                        })
                        .collect(),
                })),
            },
        )),
        ArchiveSource::Path(p) => fields.push(("path", string(p.clone()))),
        ArchiveSource::Uri(u) => fields.push(("uri", string(u.clone()))),
        ArchiveSource::HashOnly => {}
    }
    object(fields)
}

/// A value as plain JSON (secrets revealed, special values as their protocol objects' plain
/// parts): for places the protocol takes text, such as configuration variables.
pub fn plain_json(value: &PropertyValue) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        PropertyValue::Null | PropertyValue::Computed => J::Null,
        PropertyValue::Bool(b) => J::Bool(*b),
        PropertyValue::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                J::from(*n as i64)
            } else {
                serde_json::Number::from_f64(*n).map_or(J::Null, J::Number)
            }
        }
        PropertyValue::String(s) => J::String(s.clone()),
        PropertyValue::Array(items) => J::Array(items.iter().map(plain_json).collect()),
        PropertyValue::Object(map) => J::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), plain_json(v)))
                .collect(),
        ),
        PropertyValue::Secret(inner) => plain_json(inner),
        PropertyValue::Output(o) => o.value.as_deref().map_or(J::Null, plain_json),
        PropertyValue::ResourceReference(r) => match r.id.as_deref() {
            Some(PropertyValue::String(id)) => J::String(id.clone()),
            _ => J::String(r.urn.to_string()),
        },
        PropertyValue::Asset(_) | PropertyValue::Archive(_) => J::Null,
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding.
//
// Everything decoded here came from a plugin or an SDK program, so it is checked as it is read:
// numbers must be finite (protobuf doubles carry NaN and infinities, which the state cannot
// store), keys and IDs within their limits, nesting within [`MAX_VALUE_DEPTH`], URNs valid.
// The path of the property being read is kept as borrowed steps and formatted only on error.

/// Longest version string (a resource reference's `packageVersion`).
const MAX_VERSION_BYTES: usize = 256;

/// The path being decoded, as the engine's value checks print it (`tags["a b"][0]`).
struct Path<'a>(Vec<Step<'a>>);

impl<'a> Path<'a> {
    fn error(&self, reason: impl Into<String>) -> ConvertError {
        ConvertError {
            path: format_path(&self.0),
            reason: reason.into(),
        }
    }

    fn problem(&self, problem: ValueProblem) -> ConvertError {
        self.error(problem.to_string())
    }

    /// Runs `f` with `step` pushed.
    fn with<T>(&mut self, step: Step<'a>, f: impl FnOnce(&mut Self) -> T) -> T {
        self.0.push(step);
        let out = f(self);
        self.0.pop();
        out
    }
}

pub use cairn_engine::text::shown;

/// Decodes a `Struct` (a missing one is an empty map).
pub fn from_struct(s: Option<&Struct>) -> Result<PropertyMap, ConvertError> {
    let Some(s) = s else {
        return Ok(PropertyMap::new());
    };
    decode_fields(s, &mut Path(Vec::new()), 1)
}

/// Decodes what can be decoded of a `Struct`: the top-level properties that are valid, and an
/// error for each one that is not (dropped from the map). For a reply that must be recorded
/// even when part of it is unusable (the outputs of a resource that was created).
pub fn from_struct_lossy(s: Option<&Struct>) -> (PropertyMap, Vec<ConvertError>) {
    let mut errors = Vec::new();
    let Some(s) = s else {
        return (PropertyMap::new(), errors);
    };
    let mut map = PropertyMap::with_capacity(s.fields.len());
    let mut path = Path(Vec::new());
    for (key, value) in &s.fields {
        match path.with(Step::Key(key), |path| decode_field(key, value, path, 1)) {
            Ok(value) => {
                map.insert(key.clone(), value);
            }
            Err(e) => errors.push(e),
        }
    }
    (map, errors)
}

fn decode_fields<'a>(
    s: &'a Struct,
    path: &mut Path<'a>,
    depth: usize,
) -> Result<PropertyMap, ConvertError> {
    // `fields` is a BTreeMap: the keys come in a stable (sorted) order.
    let mut map = PropertyMap::with_capacity(s.fields.len());
    for (key, value) in &s.fields {
        let value = path.with(Step::Key(key), |path| decode_field(key, value, path, depth))?;
        map.insert(key.clone(), value);
    }
    Ok(map)
}

fn decode_field<'a>(
    key: &str,
    value: &'a Value,
    path: &mut Path<'a>,
    depth: usize,
) -> Result<PropertyValue, ConvertError> {
    if key.len() > MAX_KEY_BYTES {
        return Err(path.problem(ValueProblem::KeyTooLong(key.len())));
    }
    // A plain object keyed by the signature could be stored but never read back.
    if key == cairn_engine::state::codec::SIG_KEY {
        return Err(path.problem(ValueProblem::ReservedKey));
    }
    decode(value, path, depth)
}

/// Decodes one value.
pub fn from_value(value: &Value) -> Result<PropertyValue, ConvertError> {
    decode(value, &mut Path(Vec::new()), 0)
}

fn decode<'a>(
    value: &'a Value,
    path: &mut Path<'a>,
    depth: usize,
) -> Result<PropertyValue, ConvertError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(path.problem(ValueProblem::TooDeep));
    }
    Ok(match &value.kind {
        None | Some(Kind::NullValue(_)) => PropertyValue::Null,
        Some(Kind::BoolValue(b)) => PropertyValue::Bool(*b),
        Some(Kind::NumberValue(n)) if !n.is_finite() => {
            return Err(path.problem(ValueProblem::NotFinite(n.to_string())));
        }
        Some(Kind::NumberValue(n)) => PropertyValue::Number(*n),
        Some(Kind::StringValue(s)) if is_unknown_sentinel(s) => PropertyValue::Computed,
        Some(Kind::StringValue(s)) => PropertyValue::String(s.clone()),
        Some(Kind::ListValue(list)) => {
            let mut items = Vec::with_capacity(list.values.len());
            for (i, item) in list.values.iter().enumerate() {
                items.push(path.with(Step::Index(i), |path| decode(item, path, depth + 1))?);
            }
            PropertyValue::Array(items)
        }
        Some(Kind::StructValue(s)) => match s.fields.get(SIG_KEY).and_then(as_str) {
            None => PropertyValue::Object(Box::new(decode_fields(s, path, depth + 1)?)),
            Some(sig) => decode_special(sig, s, path, depth)?,
        },
    })
}

/// The unknown sentinels of the protocol: the string one (what Cairn sends) and the typed ones
/// older engines and SDKs send for unknown bools, numbers, arrays, assets, archives and objects.
pub const UNKNOWN_SENTINELS: [&str; 7] = [
    UNKNOWN_SENTINEL,
    "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
    "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
    "030794c1-ac77-496b-92df-f27374a8bd58",
    "e48ece36-62e2-4504-bad9-02848725956a",
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
];

fn is_unknown_sentinel(s: &str) -> bool {
    s.len() == UNKNOWN_SENTINEL.len() && UNKNOWN_SENTINELS.contains(&s)
}

fn as_str(v: &Value) -> Option<&str> {
    match &v.kind {
        Some(Kind::StringValue(s)) => Some(s),
        _ => None,
    }
}

/// A string field of a special object; `what` names it in errors.
fn str_field<'a>(
    s: &'a Struct,
    key: &str,
    path: &Path<'_>,
) -> Result<Option<&'a str>, ConvertError> {
    match s.fields.get(key).map(|v| &v.kind) {
        None | Some(None) | Some(Some(Kind::NullValue(_))) => Ok(None),
        Some(Some(Kind::StringValue(v))) => Ok(Some(v)),
        Some(_) => Err(path.error(format!("the {key:?} field must be a string"))),
    }
}

fn urn_of(text: &str, what: &str, path: &Path<'_>) -> Result<Urn, ConvertError> {
    Urn::parse(text).map_err(|e| path.error(format!("{what}: {e}")))
}

fn decode_special<'a>(
    sig: &str,
    s: &'a Struct,
    path: &mut Path<'a>,
    depth: usize,
) -> Result<PropertyValue, ConvertError> {
    match sig {
        SECRET_SIG => {
            let inner = match s.fields.get("value") {
                Some(v) => decode(v, path, depth + 1)?,
                None => PropertyValue::Null,
            };
            Ok(match inner {
                secret @ PropertyValue::Secret(_) => secret,
                plain => PropertyValue::secret(plain),
            })
        }
        ASSET_SIG => Ok(PropertyValue::Asset(Box::new(decode_asset(s, path)?))),
        ARCHIVE_SIG => Ok(PropertyValue::Archive(Box::new(decode_archive(
            s, path, depth,
        )?))),
        RESOURCE_REFERENCE_SIG => {
            let urn = str_field(s, "urn", path)?
                .ok_or_else(|| path.error("a resource reference needs a urn"))?;
            let id = match s.fields.get("id") {
                None => None,
                Some(v) => match &v.kind {
                    Some(Kind::StringValue(id)) if id.is_empty() => None,
                    Some(Kind::StringValue(id)) if id == UNKNOWN_SENTINEL => {
                        Some(Box::new(PropertyValue::Computed))
                    }
                    Some(Kind::StringValue(id)) => {
                        check_len("resource reference's ID", id, MAX_ID_BYTES)
                            .map_err(|e| path.error(e.to_string()))?;
                        Some(Box::new(PropertyValue::String(id.clone())))
                    }
                    None | Some(Kind::NullValue(_)) => None,
                    Some(_) => return Err(path.error("a resource reference's id must be a string")),
                },
            };
            let package_version = str_field(s, "packageVersion", path)?
                .filter(|v| !v.is_empty())
                .map(|v| {
                    if v.len() > MAX_VERSION_BYTES || has_unsafe(v) {
                        return Err(path.error(format!(
                            "a resource reference's packageVersion {:?} is not a version",
                            shown(v, 64)
                        )));
                    }
                    Ok(v.to_owned())
                })
                .transpose()?;
            Ok(PropertyValue::ResourceReference(Box::new(
                ResourceReference {
                    urn: urn_of(urn, "a resource reference's urn", path)?,
                    id,
                    package_version,
                },
            )))
        }
        OUTPUT_VALUE_SIG => {
            let value = match s.fields.get("value") {
                None => None,
                Some(v) => match decode(v, path, depth + 1)? {
                    PropertyValue::Computed => None,
                    other => Some(Box::new(other)),
                },
            };
            let secret = matches!(
                s.fields.get("secret").map(|v| &v.kind),
                Some(Some(Kind::BoolValue(true)))
            );
            let dependencies = match s.fields.get("dependencies").map(|v| &v.kind) {
                None | Some(None) | Some(Some(Kind::NullValue(_))) => Vec::new(),
                Some(Some(Kind::ListValue(list))) => list
                    .values
                    .iter()
                    .map(|v| {
                        as_str(v)
                            .ok_or_else(|| path.error("an output's dependencies must be URNs"))
                            .and_then(|u| urn_of(u, "an output's dependency", path))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(path.error("an output's dependencies must be a list")),
            };
            Ok(PropertyValue::Output(Box::new(OutputValue {
                value,
                secret,
                dependencies,
            })))
        }
        other => Err(path.error(format!("unknown signature {:?}", shown(other, 64)))),
    }
}

fn decode_asset(s: &Struct, path: &Path<'_>) -> Result<Asset, ConvertError> {
    let hash = str_field(s, "hash", path)?
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let source = if let Some(t) = str_field(s, "text", path)? {
        AssetSource::Text(t.to_owned())
    } else if let Some(p) = str_field(s, "path", path)?.filter(|p| !p.is_empty()) {
        AssetSource::Path(p.to_owned())
    } else if let Some(u) = str_field(s, "uri", path)?.filter(|u| !u.is_empty()) {
        AssetSource::Uri(u.to_owned())
    } else {
        AssetSource::HashOnly
    };
    Ok(Asset { hash, source })
}

fn decode_archive<'a>(
    s: &'a Struct,
    path: &mut Path<'a>,
    depth: usize,
) -> Result<Archive, ConvertError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(path.problem(ValueProblem::TooDeep));
    }
    let hash = str_field(s, "hash", path)?
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let source = if let Some(Some(Kind::StructValue(members))) =
        s.fields.get("assets").map(|v| &v.kind)
    {
        let mut out = Members::with_capacity_and_hasher(members.fields.len(), Default::default());
        for (name, member) in &members.fields {
            let member = path.with(Step::Key(name), |path| {
                if name.len() > MAX_KEY_BYTES {
                    return Err(path.problem(ValueProblem::KeyTooLong(name.len())));
                }
                let not_a_member = |path: &Path<'_>| {
                    path.error("an archive member must be an asset or an archive")
                };
                match &member.kind {
                    Some(Kind::StructValue(m)) => match m.fields.get(SIG_KEY).and_then(as_str) {
                        Some(ASSET_SIG) => Ok(ArchiveMember::Asset(decode_asset(m, path)?)),
                        Some(ARCHIVE_SIG) => {
                            Ok(ArchiveMember::Archive(decode_archive(m, path, depth + 1)?))
                        }
                        _ => Err(not_a_member(path)),
                    },
                    _ => Err(not_a_member(path)),
                }
            })?;
            out.insert(name.clone(), member);
        }
        ArchiveSource::Assets(out)
    } else if let Some(p) = str_field(s, "path", path)?.filter(|p| !p.is_empty()) {
        ArchiveSource::Path(p.to_owned())
    } else if let Some(u) = str_field(s, "uri", path)?.filter(|u| !u.is_empty()) {
        ArchiveSource::Uri(u.to_owned())
    } else {
        ArchiveSource::HashOnly
    };
    Ok(Archive { hash, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::aws:s3:Bucket::{name}")).unwrap()
    }

    /// One value of every kind the protocol carries, as the engine holds it.
    fn every_kind() -> PropertyMap {
        let mut members = Members::default();
        members.insert(
            "a.txt".to_owned(),
            ArchiveMember::Asset(Asset {
                hash: None,
                source: AssetSource::Text("hi".into()),
            }),
        );
        let mut map = PropertyMap::new();
        map.insert("null".into(), PropertyValue::Null);
        map.insert("bool".into(), PropertyValue::Bool(true));
        map.insert("number".into(), PropertyValue::Number(1.5));
        map.insert("string".into(), PropertyValue::String("text".into()));
        map.insert(
            "array".into(),
            PropertyValue::Array(vec![PropertyValue::Number(1.0), PropertyValue::Computed]),
        );
        map.insert(
            "secret".into(),
            PropertyValue::secret(PropertyValue::String("pw".into())),
        );
        map.insert(
            "asset".into(),
            PropertyValue::Asset(Box::new(Asset {
                hash: Some("ab".into()),
                source: AssetSource::Path("./f".into()),
            })),
        );
        map.insert(
            "archive".into(),
            PropertyValue::Archive(Box::new(Archive {
                hash: None,
                source: ArchiveSource::Assets(members),
            })),
        );
        map.insert(
            "custom".into(),
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn("b"),
                id: Some(Box::new(PropertyValue::String("b-123".into()))),
                package_version: Some("6.0.0".into()),
            })),
        );
        map.insert(
            "component".into(),
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn("c"),
                id: None,
                package_version: None,
            })),
        );
        map.insert(
            "output".into(),
            PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new(PropertyValue::String("o".into()))),
                secret: true,
                dependencies: vec![urn("b")],
            })),
        );
        map.insert(
            "unknownOutput".into(),
            PropertyValue::Output(Box::new(OutputValue {
                value: None,
                secret: false,
                dependencies: vec![urn("c")],
            })),
        );
        map.insert("unknown".into(), PropertyValue::Computed);
        map
    }

    fn sorted(map: PropertyMap) -> PropertyMap {
        let mut map = map;
        map.sort_keys();
        map
    }

    #[test]
    fn every_kind_round_trips_when_the_peer_accepts_everything() {
        let original = every_kind();
        let decoded = from_struct(Some(&to_struct(&original, Marshal::ALL))).unwrap();
        assert_eq!(decoded, sorted(original));
    }

    #[test]
    fn signatures_and_sentinels_are_the_protocol_s() {
        let encoded = to_struct(&every_kind(), Marshal::ALL);
        let field = |k: &str, f: &str| match &encoded.fields[k].kind {
            Some(Kind::StructValue(s)) => s.fields[f].clone(),
            other => panic!("{k}: {other:?}"),
        };
        assert_eq!(field("secret", SIG_KEY), string(SECRET_SIG));
        assert_eq!(field("secret", "value"), string("pw"));
        assert_eq!(field("asset", SIG_KEY), string(ASSET_SIG));
        assert_eq!(field("asset", "path"), string("./f"));
        assert_eq!(field("archive", SIG_KEY), string(ARCHIVE_SIG));
        assert_eq!(field("custom", SIG_KEY), string(RESOURCE_REFERENCE_SIG));
        assert_eq!(field("custom", "id"), string("b-123"));
        assert_eq!(field("output", SIG_KEY), string(OUTPUT_VALUE_SIG));
        assert_eq!(encoded.fields["unknown"], string(UNKNOWN_SENTINEL));
    }

    #[test]
    fn downgrades_for_peers_that_do_not_accept_kinds() {
        let plain = from_struct(Some(&to_struct(&every_kind(), Marshal::PLAIN))).unwrap();
        assert_eq!(plain["secret"], PropertyValue::String("pw".into()));
        assert_eq!(
            plain["custom"],
            PropertyValue::String("b-123".into()),
            "a custom resource's ID"
        );
        assert_eq!(
            plain["component"],
            PropertyValue::String(urn("c").as_str().to_owned()),
            "a component's URN"
        );
        assert_eq!(plain["output"], PropertyValue::String("o".into()));
        assert_eq!(plain["unknownOutput"], PropertyValue::Computed);

        let secrets_only = Marshal {
            secrets: true,
            ..Marshal::PLAIN
        };
        let decoded = from_struct(Some(&to_struct(&every_kind(), secrets_only))).unwrap();
        assert_eq!(
            decoded["output"],
            PropertyValue::secret(PropertyValue::String("o".into())),
            "a secret output stays secret when secrets are accepted"
        );
    }

    #[test]
    fn every_unknown_sentinel_decodes_as_unknown() {
        for sentinel in UNKNOWN_SENTINELS {
            assert_eq!(
                from_value(&string(sentinel)).unwrap(),
                PropertyValue::Computed,
                "{sentinel}"
            );
        }
        assert_eq!(
            from_value(&string("04da6b54-80e4-46f7-96ec-b56ff0331ba8")).unwrap(),
            PropertyValue::String("04da6b54-80e4-46f7-96ec-b56ff0331ba8".into()),
            "only the exact sentinels"
        );
    }

    #[test]
    fn unknown_ids_and_outputs_decode_as_unknown() {
        let reference = object(vec![
            (SIG_KEY, string(RESOURCE_REFERENCE_SIG)),
            ("urn", string(urn("x").as_str())),
            ("id", string(UNKNOWN_SENTINEL)),
        ]);
        match from_value(&reference).unwrap() {
            PropertyValue::ResourceReference(r) => {
                assert_eq!(r.id.as_deref(), Some(&PropertyValue::Computed));
            }
            other => panic!("{other:?}"),
        }
        let output = object(vec![
            (SIG_KEY, string(OUTPUT_VALUE_SIG)),
            ("value", string(UNKNOWN_SENTINEL)),
        ]);
        assert_eq!(
            from_value(&output).unwrap(),
            PropertyValue::Output(Box::default())
        );
    }

    #[test]
    fn malformed_values_name_their_path() {
        let bad = Struct {
            fields: [(
                "tags".to_owned(),
                object(vec![("ref", object(vec![(SIG_KEY, string("nope"))]))]),
            )]
            .into_iter()
            .collect(),
        };
        let err = from_struct(Some(&bad)).unwrap_err();
        assert_eq!(err.path, "tags.ref");
        assert!(err.reason.contains("unknown signature"), "{err}");

        let bad_urn = object(vec![
            (SIG_KEY, string(RESOURCE_REFERENCE_SIG)),
            ("urn", string("not-a-urn")),
        ]);
        assert!(
            from_value(&bad_urn)
                .unwrap_err()
                .reason
                .contains("invalid URN")
        );
    }

    fn number(n: f64) -> Value {
        Value {
            kind: Some(Kind::NumberValue(n)),
        }
    }

    fn list(values: Vec<Value>) -> Value {
        Value {
            kind: Some(Kind::ListValue(ListValue { values })),
        }
    }

    fn fields(entries: Vec<(&str, Value)>) -> Struct {
        Struct {
            fields: entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        }
    }

    #[test]
    fn values_that_cannot_be_stored_are_refused_with_their_path() {
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        let nested = |levels: usize| {
            let mut v = number(1.0);
            for _ in 0..levels {
                v = list(vec![v]);
            }
            v
        };
        let secret = |v: Value| object(vec![(SIG_KEY, string(SECRET_SIG)), ("value", v)]);
        let cases: Vec<(Struct, &str)> = vec![
            (
                fields(vec![("n", number(f64::NAN))]),
                "property n: NaN is not a number JSON can store",
            ),
            (
                fields(vec![(
                    "tags",
                    object(vec![(
                        "a b",
                        list(vec![number(0.0), number(f64::INFINITY)]),
                    )]),
                )]),
                "property tags[\"a b\"][1]: inf is not a number",
            ),
            (
                fields(vec![("pw", secret(number(f64::NEG_INFINITY)))]),
                "property pw: -inf is not a number",
            ),
            (
                fields(vec![(
                    "o",
                    object(vec![
                        (SIG_KEY, string(OUTPUT_VALUE_SIG)),
                        ("value", number(f64::NAN)),
                    ]),
                )]),
                "property o: NaN is not a number",
            ),
            (
                fields(vec![("m", object(vec![(long.as_str(), number(1.0))]))]),
                "the key is 1025 bytes long; keys may be at most 1024 bytes",
            ),
            (
                fields(vec![("deep", nested(MAX_VALUE_DEPTH))]),
                "is nested more than 64 levels deep",
            ),
            (
                fields(vec![("esc\x1b[2J", number(f64::NAN))]),
                "property [\"esc\\\\x1b[2J\"]: NaN",
            ),
            (
                fields(vec![(
                    "ref",
                    object(vec![
                        (SIG_KEY, string(RESOURCE_REFERENCE_SIG)),
                        ("urn", string(urn("b").as_str())),
                        ("id", string("i".repeat(MAX_ID_BYTES + 1))),
                    ]),
                )]),
                "property ref: the resource reference's ID is 8193 bytes long",
            ),
            (
                fields(vec![(
                    "ref",
                    object(vec![
                        (SIG_KEY, string(RESOURCE_REFERENCE_SIG)),
                        ("urn", string(urn("b").as_str())),
                        ("packageVersion", string("1.0\x1b[2J")),
                    ]),
                )]),
                "property ref: a resource reference's packageVersion \"1.0\\\\x1b[2J\" is not a version",
            ),
        ];
        for (value, expected) in cases {
            let error = from_struct(Some(&value)).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}\nexpected: {expected}");
        }
        // Just within the limit.
        from_struct(Some(&fields(vec![("deep", nested(MAX_VALUE_DEPTH - 1))]))).unwrap();
        from_struct(Some(&fields(vec![(&long[1..], number(1e308))]))).unwrap();
    }

    #[test]
    fn lossy_decoding_keeps_the_valid_properties() {
        let value = fields(vec![
            ("a", number(1.0)),
            ("b", number(f64::NAN)),
            ("c", string("kept")),
            ("d", list(vec![number(f64::INFINITY)])),
        ]);
        let (kept, errors) = from_struct_lossy(Some(&value));
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["a", "c"]);
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                "property b: NaN is not a number JSON can store (NaN and infinities are refused)",
                "property d[0]: inf is not a number JSON can store (NaN and infinities are refused)",
            ]
        );
    }
}
