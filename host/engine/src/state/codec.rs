//! The state-file JSON encoding of property values and deployments.
//!
//! Special values are JSON objects carrying the signature key [`SIG_KEY`]; unknowns are the
//! string [`UNKNOWN_SENTINEL`]. Secrets are written as `ciphertext` (encrypted JSON text of the
//! encoded value) or, when exporting with secrets shown, as `plaintext`.

use serde_json::{Map, Number, Value};

use super::{DeploymentV3, JsonMap, Operation, Resource, ResourceState, Snapshot};
use crate::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource};
use crate::path::{PathElement, PropertyPath};
use crate::secrets::{Crypter, SecretsError};
use crate::urn::Urn;
use crate::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};

/// The key whose value tells what kind of special value an object is.
pub const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
pub const ASSET_SIG: &str = "c44067f5952c0a294b673a41bacd8c17";
pub const ARCHIVE_SIG: &str = "0def7320c3a5731c473e5ecbe6d01bc7";
pub const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";
pub const RESOURCE_REFERENCE_SIG: &str = "5cf8f73096256a8f31e491e813e4eb8e";
pub const OUTPUT_VALUE_SIG: &str = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
/// The string that stands for an unknown (computed) value.
pub const UNKNOWN_SENTINEL: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/// Largest integer a double represents exactly; integral numbers up to it are written without
/// a fraction, as the checkpoint format does.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// How secrets are written.
#[derive(Clone, Copy)]
pub enum SecretsMode<'a> {
    /// As `ciphertext`, encrypted with the stack's secrets manager (the stored form).
    Encrypt(&'a dyn Crypter),
    /// As `plaintext` (`stack export --show-secrets`).
    Plaintext,
}

/// A value that could not be encoded or decoded, and where inside its property map.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", self.path())]
pub struct ValueError {
    /// Path elements from the failing value outwards (errors are built while unwinding).
    reversed_path: Vec<PathElement>,
    pub reason: ValueErrorReason,
}

#[derive(Debug, thiserror::Error)]
pub enum ValueErrorReason {
    #[error("{0}")]
    Invalid(String),
    #[error("the value is encrypted but no secrets manager is available to decrypt it")]
    NoDecrypter,
    #[error(transparent)]
    Secret(#[from] SecretsError),
}

impl ValueError {
    fn new(reason: ValueErrorReason) -> ValueError {
        ValueError {
            reversed_path: Vec::new(),
            reason,
        }
    }

    fn invalid(reason: impl Into<String>) -> ValueError {
        ValueError::new(ValueErrorReason::Invalid(reason.into()))
    }

    /// Records that the failing value sits under `element`.
    fn within(mut self, element: PathElement) -> ValueError {
        self.reversed_path.push(element);
        self
    }

    /// Where the value sits, e.g. `password` or `tags["a b"][0]`.
    pub fn path(&self) -> PropertyPath {
        PropertyPath::from(self.reversed_path.iter().rev().cloned().collect::<Vec<_>>())
    }
}

/// Why a deployment could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error(
        "unsupported deployment version {found}: this version of Cairn reads and writes version 3"
    )]
    UnsupportedVersion { found: u64 },
    #[error("malformed deployment: {0}")]
    Malformed(#[source] serde_json::Error),
    #[error("resource {urn}: {section}.{source}")]
    Resource {
        urn: Urn,
        section: &'static str,
        #[source]
        source: ValueError,
    },
    #[error("pending operation on {urn}: {section}.{source}")]
    PendingOperation {
        urn: Urn,
        section: &'static str,
        #[source]
        source: ValueError,
    },
}

/// Reads the `deployment` of a `{"version": 3, "deployment": ...}` document.
pub fn decode_untyped_deployment(
    untyped: super::UntypedDeployment,
) -> Result<DeploymentV3, StateError> {
    if untyped.version != super::DEPLOYMENT_VERSION {
        return Err(StateError::UnsupportedVersion {
            found: u64::from(untyped.version),
        });
    }
    serde_json::from_value(untyped.deployment).map_err(StateError::Malformed)
}

/// Decodes a stored deployment into the engine's snapshot, decrypting secrets. It takes the
/// deployment: each stored resource is dropped once decoded, so a large state is not held
/// twice, as JSON values and decoded, while it is read.
pub fn decode_deployment(
    deployment: DeploymentV3,
    decrypter: Option<&dyn Crypter>,
) -> Result<Snapshot, StateError> {
    let DeploymentV3 {
        manifest,
        secrets_providers,
        resources: stored,
        pending_operations: stored_operations,
        extra,
    } = deployment;
    let mut resources = Vec::with_capacity(stored.len());
    for resource in stored {
        resources.push(decode_owned_resource(resource, decrypter, false)?);
    }
    let pending_operations = stored_operations
        .into_iter()
        .map(|op| {
            Ok(Operation {
                resource: decode_owned_resource(op.resource, decrypter, true)?,
                kind: op.kind,
            })
        })
        .collect::<Result<_, StateError>>()?;
    Ok(Snapshot {
        manifest,
        secrets_providers,
        resources,
        pending_operations,
        extra,
    })
}

/// Decodes one stored resource it takes (of the state, or of a pending operation), naming it
/// and the section on failure.
pub(super) fn decode_owned_resource(
    resource: Resource<JsonMap>,
    decrypter: Option<&dyn Crypter>,
    pending: bool,
) -> Result<ResourceState, StateError> {
    let urn = resource.urn.clone();
    resource.try_into_properties(|map, section| {
        decode_property_map(&map, decrypter)
            .map_err(|source| failure(urn.clone(), section, source, pending))
    })
}

/// Encodes a snapshot for storage (or export), encrypting secrets as `mode` says.
pub fn encode_deployment(
    snapshot: &Snapshot,
    mode: SecretsMode<'_>,
) -> Result<DeploymentV3, StateError> {
    let (resources, pending_operations) =
        convert(&snapshot.resources, &snapshot.pending_operations, |map| {
            encode_property_map(map, mode)
        })?;
    Ok(DeploymentV3 {
        manifest: snapshot.manifest.clone(),
        secrets_providers: snapshot.secrets_providers.clone(),
        resources,
        pending_operations,
        extra: snapshot.extra.clone(),
    })
}

/// Encodes a snapshot for storage straight to JSON text (pretty-printed), the bytes
/// serializing [`encode_deployment`]'s result would give, without building that
/// [`DeploymentV3`]: each resource is encoded while it is written and dropped after, so saving
/// a 100,000-resource state does not hold a second whole copy of it as JSON values.
pub fn encode_deployment_json(
    snapshot: &Snapshot,
    mode: SecretsMode<'_>,
) -> Result<Vec<u8>, StateError> {
    use serde::Serialize;
    use std::cell::RefCell;

    /// The resources, each encoded as it is written; the first failure is kept typed.
    struct Streamed<'a> {
        resources: &'a [ResourceState],
        mode: SecretsMode<'a>,
        failure: &'a RefCell<Option<StateError>>,
    }
    impl Serialize for Streamed<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeSeq};
            let mut seq = serializer.serialize_seq(Some(self.resources.len()))?;
            for resource in self.resources {
                let encoded = encode_resource(resource, self.mode).map_err(|e| {
                    let message = e.to_string();
                    *self.failure.borrow_mut() = Some(e);
                    S::Error::custom(message)
                })?;
                seq.serialize_element(&encoded)?;
            }
            seq.end()
        }
    }
    /// [`DeploymentV3`]'s fields, in its order and with its rules for leaving them out.
    #[derive(Serialize)]
    struct Deployment<'a> {
        manifest: &'a super::Manifest,
        #[serde(skip_serializing_if = "Option::is_none")]
        secrets_providers: Option<&'a super::SecretsProvider>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resources: Option<Streamed<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pending_operations: Vec<Operation<JsonMap>>,
        #[serde(flatten)]
        extra: &'a JsonMap,
    }

    let (_, pending_operations) = convert(&[], &snapshot.pending_operations, |map| {
        encode_property_map(map, mode)
    })?;
    let failure = RefCell::new(None);
    let deployment = Deployment {
        manifest: &snapshot.manifest,
        secrets_providers: snapshot.secrets_providers.as_ref(),
        resources: (!snapshot.resources.is_empty()).then_some(Streamed {
            resources: &snapshot.resources,
            mode,
            failure: &failure,
        }),
        pending_operations,
        extra: &snapshot.extra,
    };
    serde_json::to_vec_pretty(&deployment)
        .map_err(|e| failure.take().unwrap_or(StateError::Malformed(e)))
}

/// Decodes one stored resource.
pub fn decode_resource(
    resource: &Resource<JsonMap>,
    decrypter: Option<&dyn Crypter>,
) -> Result<ResourceState, StateError> {
    convert_resource(
        resource,
        &mut |map| decode_property_map(map, decrypter),
        false,
    )
}

/// Encodes one resource for storage.
pub fn encode_resource(
    resource: &ResourceState,
    mode: SecretsMode<'_>,
) -> Result<Resource<JsonMap>, StateError> {
    convert_resource(resource, &mut |map| encode_property_map(map, mode), false)
}

type Converted<Q> = (Vec<Resource<Q>>, Vec<Operation<Q>>);

/// Converts the property maps of every resource and pending operation.
fn convert<P, Q>(
    resources: &[Resource<P>],
    operations: &[Operation<P>],
    mut f: impl FnMut(&P) -> Result<Q, ValueError>,
) -> Result<Converted<Q>, StateError> {
    let resources = resources
        .iter()
        .map(|resource| convert_resource(resource, &mut f, false))
        .collect::<Result<_, _>>()?;
    let operations = operations
        .iter()
        .map(|op| {
            Ok(Operation {
                resource: convert_resource(&op.resource, &mut f, true)?,
                kind: op.kind,
            })
        })
        .collect::<Result<_, StateError>>()?;
    Ok((resources, operations))
}

/// Converts one resource's property maps, naming the resource (and section) on failure.
fn convert_resource<P, Q>(
    resource: &Resource<P>,
    f: &mut impl FnMut(&P) -> Result<Q, ValueError>,
    pending: bool,
) -> Result<Resource<Q>, StateError> {
    resource.try_map_properties(|map, section| {
        f(map).map_err(|source| failure(resource.urn.clone(), section, source, pending))
    })
}

/// The error for a resource's property map that does not convert.
fn failure(urn: Urn, section: &'static str, source: ValueError, pending: bool) -> StateError {
    if pending {
        StateError::PendingOperation {
            urn,
            section,
            source,
        }
    } else {
        StateError::Resource {
            urn,
            section,
            source,
        }
    }
}

/// Decodes a JSON property map.
pub fn decode_property_map(
    map: &JsonMap,
    decrypter: Option<&dyn Crypter>,
) -> Result<PropertyMap, ValueError> {
    // Sized exactly (collecting through `Result` would grow it by doubling): a state holds
    // these maps for the whole deployment.
    let mut decoded = PropertyMap::with_capacity(map.len());
    for (key, value) in map {
        let value =
            decode_value(value, decrypter).map_err(|e| e.within(PathElement::Key(key.clone())))?;
        decoded.insert(key.clone(), value);
    }
    Ok(decoded)
}

/// Encodes a property map as JSON.
pub fn encode_property_map(
    map: &PropertyMap,
    mode: SecretsMode<'_>,
) -> Result<JsonMap, ValueError> {
    map.iter()
        .map(|(key, value)| {
            encode_value(value, mode)
                .map(|v| (key.clone(), v))
                .map_err(|e| e.within(PathElement::Key(key.clone())))
        })
        .collect()
}

/// Encodes one value.
pub fn encode_value(value: &PropertyValue, mode: SecretsMode<'_>) -> Result<Value, ValueError> {
    Ok(match value {
        PropertyValue::Null => Value::Null,
        PropertyValue::Bool(b) => Value::Bool(*b),
        PropertyValue::Number(n) => encode_number(*n)?,
        PropertyValue::String(s) => Value::String(s.clone()),
        PropertyValue::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| encode_value(v, mode).map_err(|e| e.within(PathElement::Index(i))))
                .collect::<Result<_, _>>()?,
        ),
        PropertyValue::Object(map) => Value::Object(encode_property_map(map, mode)?),
        PropertyValue::Asset(asset) => Value::Object(encode_asset(asset)),
        PropertyValue::Archive(archive) => Value::Object(encode_archive(archive)),
        PropertyValue::ResourceReference(reference) => {
            let mut object = signed(RESOURCE_REFERENCE_SIG);
            object.insert("urn".into(), Value::String(reference.urn.to_string()));
            // An empty ID reads back as none, so none is written: what is stored then reads
            // back as what was stored (decode → encode is a fixed point). The package version
            // is always written, empty when there is none, as Pulumi writes it.
            if let Some(id) = reference.id.as_deref().filter(|id| !is_empty_text(id)) {
                object.insert("id".into(), encode_value(id, mode)?);
            }
            let version = reference.package_version.clone().unwrap_or_default();
            object.insert("packageVersion".into(), Value::String(version));
            Value::Object(object)
        }
        PropertyValue::Secret(inner) => encode_secret(inner, mode)?,
        PropertyValue::Computed => Value::String(UNKNOWN_SENTINEL.into()),
        // State keeps no output metadata: dependencies live in `propertyDependencies`.
        PropertyValue::Output(output) => match &output.value {
            None => Value::String(UNKNOWN_SENTINEL.into()),
            Some(inner) if output.secret => encode_secret(inner, mode)?,
            Some(inner) => encode_value(inner, mode)?,
        },
    })
}

fn encode_number(n: f64) -> Result<Value, ValueError> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
        // Exact: |n| is an integer no larger than 2^53.
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| ValueError::invalid(format!("the number {n} cannot be stored in JSON")))
}

fn is_empty_text(value: &PropertyValue) -> bool {
    matches!(value, PropertyValue::String(s) if s.is_empty())
}

fn encode_secret(inner: &PropertyValue, mode: SecretsMode<'_>) -> Result<Value, ValueError> {
    // A secret inside a secret adds nothing, and decoding folds it into one: write one. An
    // output's metadata is not stored, so a known output inside is its value.
    let mut inner = inner;
    loop {
        inner = match inner {
            PropertyValue::Secret(x) => x,
            PropertyValue::Output(output) if output.value.is_some() => match &output.value {
                Some(x) => x,
                None => break,
            },
            _ => break,
        };
    }
    let plaintext = serde_json::to_string(&encode_value(inner, mode)?)
        .map_err(|e| ValueError::invalid(e.to_string()))?;
    let mut object = signed(SECRET_SIG);
    match mode {
        SecretsMode::Encrypt(crypter) => {
            let ciphertext = crypter
                .encrypt(&plaintext)
                .map_err(|e| ValueError::new(e.into()))?;
            object.insert("ciphertext".into(), Value::String(ciphertext));
        }
        SecretsMode::Plaintext => {
            object.insert("plaintext".into(), Value::String(plaintext));
        }
    }
    Ok(Value::Object(object))
}

fn signed(sig: &str) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert(SIG_KEY.into(), Value::String(sig.into()));
    object
}

fn encode_asset(asset: &Asset) -> Map<String, Value> {
    let mut object = signed(ASSET_SIG);
    if let Some(hash) = asset.hash.as_ref().filter(|h| !h.is_empty()) {
        object.insert("hash".into(), Value::String(hash.clone()));
    }
    match &asset.source {
        AssetSource::Text(text) => object.insert("text".into(), Value::String(text.clone())),
        AssetSource::Path(path) => object.insert("path".into(), Value::String(path.clone())),
        AssetSource::Uri(uri) => object.insert("uri".into(), Value::String(uri.clone())),
        AssetSource::HashOnly => None,
    };
    object
}

fn encode_archive(archive: &Archive) -> Map<String, Value> {
    let mut object = signed(ARCHIVE_SIG);
    if let Some(hash) = archive.hash.as_ref().filter(|h| !h.is_empty()) {
        object.insert("hash".into(), Value::String(hash.clone()));
    }
    match &archive.source {
        ArchiveSource::Assets(members) => {
            let assets = members
                .iter()
                .map(|(name, member)| {
                    let encoded = match member {
                        ArchiveMember::Asset(asset) => encode_asset(asset),
                        ArchiveMember::Archive(archive) => encode_archive(archive),
                    };
                    (name.clone(), Value::Object(encoded))
                })
                .collect();
            object.insert("assets".into(), Value::Object(assets));
        }
        ArchiveSource::Path(path) => {
            object.insert("path".into(), Value::String(path.clone()));
        }
        ArchiveSource::Uri(uri) => {
            object.insert("uri".into(), Value::String(uri.clone()));
        }
        ArchiveSource::HashOnly => {}
    }
    object
}

/// Decodes one value.
pub fn decode_value(
    value: &Value,
    decrypter: Option<&dyn Crypter>,
) -> Result<PropertyValue, ValueError> {
    Ok(match value {
        Value::Null => PropertyValue::Null,
        Value::Bool(b) => PropertyValue::Bool(*b),
        Value::Number(n) => PropertyValue::Number(
            n.as_f64()
                .ok_or_else(|| ValueError::invalid(format!("the number {n} is out of range")))?,
        ),
        Value::String(s) if s == UNKNOWN_SENTINEL => PropertyValue::Computed,
        Value::String(s) => PropertyValue::String(s.clone()),
        Value::Array(items) => PropertyValue::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    decode_value(v, decrypter).map_err(|e| e.within(PathElement::Index(i)))
                })
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(object) => match object.get(SIG_KEY) {
            None => PropertyValue::Object(Box::new(decode_property_map(object, decrypter)?)),
            Some(Value::String(sig)) => decode_signed(sig, object, decrypter)?,
            Some(other) => {
                return Err(ValueError::invalid(format!(
                    "the signature {SIG_KEY} must be a string, found {other}"
                )));
            }
        },
    })
}

fn decode_signed(
    sig: &str,
    object: &JsonMap,
    decrypter: Option<&dyn Crypter>,
) -> Result<PropertyValue, ValueError> {
    match sig {
        ASSET_SIG => Ok(PropertyValue::Asset(Box::new(decode_asset(object)?))),
        ARCHIVE_SIG => Ok(PropertyValue::Archive(Box::new(decode_archive(object)?))),
        SECRET_SIG => {
            let plaintext = match (
                string_field(object, "ciphertext")?,
                string_field(object, "plaintext")?,
            ) {
                (Some(ciphertext), _) => {
                    let crypter =
                        decrypter.ok_or_else(|| ValueError::new(ValueErrorReason::NoDecrypter))?;
                    crypter
                        .decrypt(ciphertext)
                        .map_err(|e| ValueError::new(e.into()))?
                }
                (None, Some(plaintext)) => plaintext.to_owned(),
                (None, None) => {
                    return Err(ValueError::invalid(
                        "a secret needs a \"ciphertext\" or \"plaintext\" field",
                    ));
                }
            };
            let inner: Value = serde_json::from_str(&plaintext).map_err(|e| {
                ValueError::invalid(format!("the secret's contents are not valid JSON: {e}"))
            })?;
            Ok(match decode_value(&inner, decrypter)? {
                // A secret inside a secret adds nothing.
                secret @ PropertyValue::Secret(_) => secret,
                plain => PropertyValue::secret(plain),
            })
        }
        RESOURCE_REFERENCE_SIG => {
            let urn = string_field(object, "urn")?
                .ok_or_else(|| ValueError::invalid("a resource reference needs a \"urn\""))?;
            let urn = Urn::parse(urn).map_err(|e| ValueError::invalid(e.to_string()))?;
            let id = match object.get("id") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) if id.is_empty() => None,
                Some(id) => Some(Box::new(decode_value(id, decrypter)?)),
            };
            let package_version = string_field(object, "packageVersion")?
                .filter(|v| !v.is_empty())
                .map(str::to_owned);
            Ok(PropertyValue::ResourceReference(Box::new(
                ResourceReference {
                    urn,
                    id,
                    package_version,
                },
            )))
        }
        OUTPUT_VALUE_SIG => {
            let value = match object.get("value") {
                None => None,
                Some(v) => Some(Box::new(decode_value(v, decrypter)?)),
            };
            let secret = matches!(object.get("secret"), Some(Value::Bool(true)));
            let dependencies = match object.get("dependencies") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .ok_or_else(|| {
                                ValueError::invalid("output dependencies must be URN strings")
                            })
                            .and_then(|s| {
                                Urn::parse(s).map_err(|e| ValueError::invalid(e.to_string()))
                            })
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(ValueError::invalid("output dependencies must be an array")),
            };
            Ok(PropertyValue::Output(Box::new(OutputValue {
                value,
                secret,
                dependencies,
            })))
        }
        other => Err(ValueError::invalid(format!(
            "unknown value signature {other:?}"
        ))),
    }
}

fn string_field<'a>(object: &'a JsonMap, field: &str) -> Result<Option<&'a str>, ValueError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ValueError::invalid(format!(
            "the field {field:?} must be a string, found {other}"
        ))),
    }
}

fn decode_asset(object: &JsonMap) -> Result<Asset, ValueError> {
    let hash = string_field(object, "hash")?
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let source = if let Some(text) = string_field(object, "text")? {
        AssetSource::Text(text.to_owned())
    } else if let Some(path) = string_field(object, "path")? {
        AssetSource::Path(path.to_owned())
    } else if let Some(uri) = string_field(object, "uri")? {
        AssetSource::Uri(uri.to_owned())
    } else {
        AssetSource::HashOnly
    };
    Ok(Asset { hash, source })
}

fn decode_archive(object: &JsonMap) -> Result<Archive, ValueError> {
    let hash = string_field(object, "hash")?
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let source = if let Some(assets) = object.get("assets").filter(|v| !v.is_null()) {
        let Value::Object(assets) = assets else {
            return Err(ValueError::invalid(
                "an archive's \"assets\" must be an object",
            ));
        };
        let members = assets
            .iter()
            .map(|(name, member)| {
                decode_archive_member(member)
                    .map(|m| (name.clone(), m))
                    .map_err(|e| e.within(PathElement::Key(name.clone())))
            })
            .collect::<Result<_, _>>()?;
        ArchiveSource::Assets(members)
    } else if let Some(path) = string_field(object, "path")? {
        ArchiveSource::Path(path.to_owned())
    } else if let Some(uri) = string_field(object, "uri")? {
        ArchiveSource::Uri(uri.to_owned())
    } else {
        ArchiveSource::HashOnly
    };
    Ok(Archive { hash, source })
}

fn decode_archive_member(value: &Value) -> Result<ArchiveMember, ValueError> {
    let not_a_member = || ValueError::invalid("an archive member must be an asset or an archive");
    let object = value.as_object().ok_or_else(not_a_member)?;
    match object.get(SIG_KEY).and_then(Value::as_str) {
        Some(ASSET_SIG) => Ok(ArchiveMember::Asset(decode_asset(object)?)),
        Some(ARCHIVE_SIG) => Ok(ArchiveMember::Archive(decode_archive(object)?)),
        _ => Err(not_a_member()),
    }
}

/// True when a stored deployment holds encrypted secrets (so reading it needs the secrets
/// manager that wrote it).
pub fn contains_ciphertext(deployment: &DeploymentV3) -> bool {
    fn in_value(value: &Value) -> bool {
        match value {
            Value::Array(items) => items.iter().any(in_value),
            Value::Object(object) => {
                (object.get(SIG_KEY).and_then(Value::as_str) == Some(SECRET_SIG)
                    && object.contains_key("ciphertext"))
                    || object.values().any(in_value)
            }
            _ => false,
        }
    }
    let in_resource =
        |r: &Resource<JsonMap>| r.inputs.values().chain(r.outputs.values()).any(in_value);
    deployment.resources.iter().any(in_resource)
        || deployment
            .pending_operations
            .iter()
            .any(|op| in_resource(&op.resource))
}
