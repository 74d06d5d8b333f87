//! Deployment state: the checkpoint / deployment v3 model, its JSON codec and integrity check.
//!
//! One generic [`Resource`] describes a resource's recorded state. Instantiated with raw JSON
//! property maps it is the exact on-disk `Resource V3` shape ([`ResourceV3`]); instantiated with
//! [`PropertyMap`] it is the engine's view ([`ResourceState`]). The codec in [`codec`] converts
//! between the two, encrypting and decrypting secrets on the way.
//!
//! # Manifest magic
//!
//! Manifest magic is the hex SHA-256 of the manifest's `version`, as in the checkpoint format.
//!
//! # Stable encoding
//!
//! `encode(decode(x))` is a fixed point: numbers that are integers are written without a fraction,
//! key order is kept (serde_json `preserve_order`, `IndexMap`), unknown fields survive in `extra`,
//! and `CachingCrypter` re-emits the ciphertext a secret was read from.

pub mod codec;
pub mod edit;
pub mod graph;
pub mod integrity;
pub mod moves;
pub mod reader;
pub mod repair;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::urn::{TypeToken, Urn, UrnError};
use crate::value::{PropertyDependencies, PropertyMap};

pub use codec::{
    SecretsMode, StateError, ValueError, decode_deployment, decode_property_map,
    decode_untyped_deployment, encode_deployment, encode_deployment_json, encode_property_map,
    encode_resource,
};
pub use integrity::{
    IntegrityError, Violation, follow_renames, sort_dependencies_first, verify_integrity,
};
pub use reader::{
    DeploymentSummary, decode_checkpoint_json, decode_deployment_json, summarize_checkpoint_json,
};

/// The deployment schema version Cairn reads and writes.
pub const DEPLOYMENT_VERSION: u32 = 3;

/// Raw JSON object, as found in a state file.
pub type JsonMap = Map<String, Value>;

/// `{"version": 3, "deployment": {...}}`: what `stack export` prints and `stack import` reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UntypedDeployment {
    pub version: u32,
    pub deployment: Value,
}

/// The stack file: `{"version": 3, "checkpoint": {"stack", "config", "latest"}}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VersionedCheckpoint {
    pub version: u32,
    pub checkpoint: CheckpointV3,
}

/// `Deserialize` is written out in [`reader`] (a derived one would buffer the whole object).
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointV3 {
    /// The stack's qualified name, e.g. `organization/project/dev`.
    pub stack: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest: Option<DeploymentV3>,
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The wire form of a deployment: property maps are raw JSON, secrets still encrypted.
/// `Deserialize` is written out in [`reader`] (a derived one would buffer the whole object).
#[derive(Debug, Clone, Serialize)]
pub struct DeploymentV3 {
    pub manifest: Manifest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_providers: Option<SecretsProvider>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceV3>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_operations: Vec<Operation<JsonMap>>,
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The engine's form of a deployment: decoded values, decrypted secrets.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub manifest: Manifest,
    pub secrets_providers: Option<SecretsProvider>,
    pub resources: Vec<ResourceState>,
    pub pending_operations: Vec<Operation<PropertyMap>>,
    /// Deployment fields this version does not know, kept verbatim.
    pub extra: JsonMap,
}

impl Snapshot {
    /// An empty snapshot written by this engine now.
    pub fn empty(secrets_providers: Option<SecretsProvider>) -> Snapshot {
        Snapshot {
            manifest: Manifest::new(),
            secrets_providers,
            resources: Vec::new(),
            pending_operations: Vec::new(),
            extra: JsonMap::new(),
        }
    }
}

/// Meta-information about the deployment that wrote a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// RFC 3339 time at which the deployment started.
    pub time: String,
    /// Integrity cookie: hex SHA-256 of `version`.
    pub magic: String,
    /// The version of the engine that wrote the deployment.
    pub version: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<PluginInfo>,
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Manifest {
    /// A manifest for a deployment by this engine starting now.
    pub fn new() -> Manifest {
        let version = format!("cairn-{}", env!("CARGO_PKG_VERSION"));
        Manifest {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            magic: Manifest::magic_for(&version),
            version,
            plugins: Vec::new(),
            extra: JsonMap::new(),
        }
    }

    /// The magic cookie for an engine version, as the checkpoint format defines it.
    pub fn magic_for(version: &str) -> String {
        if version.is_empty() {
            return String::new();
        }
        hex::encode(Sha256::digest(version.as_bytes()))
    }
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest::new()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    pub name: String,
    #[serde(default)]
    pub path: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub version: String,
}

/// A stack's secrets provider: its type (e.g. `passphrase`) and provider-specific state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretsProvider {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

/// An operation that was in flight when the deployment stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(
    serialize = "Resource<P>: Serialize, P: IsEmptyMap",
    deserialize = "Resource<P>: Deserialize<'de>"
))]
pub struct Operation<P> {
    pub resource: Resource<P>,
    #[serde(rename = "type")]
    pub kind: OperationKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationKind {
    Creating,
    Updating,
    Deleting,
    Reading,
    Importing,
}

impl OperationKind {
    /// `creating`, `updating`, ...: as the checkpoint format names it.
    pub fn verb(self) -> &'static str {
        match self {
            OperationKind::Creating => "creating",
            OperationKind::Updating => "updating",
            OperationKind::Deleting => "deleting",
            OperationKind::Reading => "reading",
            OperationKind::Importing => "importing",
        }
    }

    /// Whether the operation may have made a resource the state does not record, so that
    /// doing it again could make a second one.
    pub fn may_have_created(self) -> bool {
        matches!(self, OperationKind::Creating | OperationKind::Importing)
    }
}

/// Per-operation timeouts, in seconds (0 or absent means the provider's default).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CustomTimeouts {
    #[serde(default, skip_serializing_if = "is_zero", serialize_with = "seconds")]
    pub create: f64,
    #[serde(default, skip_serializing_if = "is_zero", serialize_with = "seconds")]
    pub update: f64,
    #[serde(default, skip_serializing_if = "is_zero", serialize_with = "seconds")]
    pub delete: f64,
    /// Recorded for Pulumi's `read` timeout option; Cairn's provider reads take no timeout.
    #[serde(default, skip_serializing_if = "is_zero", serialize_with = "seconds")]
    pub read: f64,
}

fn is_zero(n: &f64) -> bool {
    *n == 0.0
}

/// Whole seconds are written as integers (`300`, not `300.0`), as the checkpoint format does.
fn seconds<S: Serializer>(n: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        serializer.serialize_i64(*n as i64)
    } else {
        serializer.serialize_f64(*n)
    }
}

/// The on-disk form of a resource (`Resource V3`).
pub type ResourceV3 = Resource<JsonMap>;
/// The engine's form of a resource.
pub type ResourceState = Resource<PropertyMap>;

/// A resource's recorded state, generic over how property maps are held.
///
/// Field order is the serialization order of the checkpoint format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(
        serialize = "P: Serialize + IsEmptyMap",
        deserialize = "P: Deserialize<'de> + Default"
    )
)]
pub struct Resource<P> {
    pub urn: Urn,
    #[serde(default)]
    pub custom: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub delete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub resource_type: TypeToken,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub inputs: P,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub outputs: P,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Urn>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub protect: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub external: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Urn>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderReference>,
    #[serde(default, skip_serializing_if = "PropertyDependencies::is_empty")]
    pub property_dependencies: PropertyDependencies,
    #[serde(default, skip_serializing_if = "is_false")]
    pub pending_replacement: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_secret_outputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<Urn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_timeouts: Option<Box<CustomTimeouts>>,
    #[serde(default, rename = "importID", skip_serializing_if = "Option::is_none")]
    pub import_id: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub retain_on_delete: bool,
    /// Marked by `cairn state taint`: the next update replaces it (and the replacement is not
    /// tainted).
    #[serde(default, skip_serializing_if = "is_false")]
    pub taint: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_with: Option<Urn>,
    /// RFC 3339 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// RFC 3339 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_position: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_changes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replace_on_changes: Vec<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// Fields of a stored resource this version does not know, kept verbatim: read as a map, and
/// held as one word while there are none (nearly always, and a state holds one per resource).
#[derive(Clone, Default)]
pub struct ExtraFields(Option<Box<JsonMap>>);

impl std::ops::Deref for ExtraFields {
    type Target = JsonMap;

    fn deref(&self) -> &JsonMap {
        static NONE: std::sync::LazyLock<JsonMap> = std::sync::LazyLock::new(JsonMap::new);
        self.0.as_deref().unwrap_or(&NONE)
    }
}

impl std::ops::DerefMut for ExtraFields {
    fn deref_mut(&mut self) -> &mut JsonMap {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<JsonMap> for ExtraFields {
    fn from(fields: JsonMap) -> ExtraFields {
        ExtraFields((!fields.is_empty()).then(|| Box::new(fields)))
    }
}

impl PartialEq for ExtraFields {
    fn eq(&self, other: &ExtraFields) -> bool {
        **self == **other
    }
}

impl fmt::Debug for ExtraFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for ExtraFields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExtraFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ExtraFields, D::Error> {
        JsonMap::deserialize(deserializer).map(ExtraFields::from)
    }
}

impl<P: Default> Resource<P> {
    /// A resource with the given identity and every optional field empty.
    pub fn new(urn: Urn, resource_type: TypeToken, custom: bool) -> Resource<P> {
        Resource {
            urn,
            custom,
            delete: false,
            id: None,
            resource_type,
            inputs: P::default(),
            outputs: P::default(),
            parent: None,
            protect: false,
            external: false,
            dependencies: Vec::new(),
            init_errors: Vec::new(),
            provider: None,
            property_dependencies: PropertyDependencies::new(),
            pending_replacement: false,
            additional_secret_outputs: Vec::new(),
            aliases: Vec::new(),
            custom_timeouts: None,
            import_id: None,
            retain_on_delete: false,
            taint: false,
            deleted_with: None,
            created: None,
            modified: None,
            source_position: None,
            ignore_changes: Vec::new(),
            replace_on_changes: Vec::new(),
            extra: ExtraFields::default(),
        }
    }
}

impl<P> Resource<P> {
    /// The same resource with its property maps converted by `f` (inputs first, then outputs).
    pub fn try_map_properties<Q, E>(
        &self,
        mut f: impl FnMut(&P, &'static str) -> Result<Q, E>,
    ) -> Result<Resource<Q>, E> {
        let inputs = f(&self.inputs, "inputs")?;
        let outputs = f(&self.outputs, "outputs")?;
        Ok(Resource {
            urn: self.urn.clone(),
            custom: self.custom,
            delete: self.delete,
            id: self.id.clone(),
            resource_type: self.resource_type.clone(),
            inputs,
            outputs,
            parent: self.parent.clone(),
            protect: self.protect,
            external: self.external,
            dependencies: self.dependencies.clone(),
            init_errors: self.init_errors.clone(),
            provider: self.provider.clone(),
            property_dependencies: self.property_dependencies.clone(),
            pending_replacement: self.pending_replacement,
            additional_secret_outputs: self.additional_secret_outputs.clone(),
            aliases: self.aliases.clone(),
            custom_timeouts: self.custom_timeouts.clone(),
            import_id: self.import_id.clone(),
            retain_on_delete: self.retain_on_delete,
            taint: self.taint,
            deleted_with: self.deleted_with.clone(),
            created: self.created.clone(),
            modified: self.modified.clone(),
            source_position: self.source_position.clone(),
            ignore_changes: self.ignore_changes.clone(),
            replace_on_changes: self.replace_on_changes.clone(),
            extra: self.extra.clone(),
        })
    }

    /// [`Resource::try_map_properties`] taking the resource: its other fields are moved, not
    /// copied, and its maps are dropped as soon as they are converted.
    pub fn try_into_properties<Q, E>(
        self,
        mut f: impl FnMut(P, &'static str) -> Result<Q, E>,
    ) -> Result<Resource<Q>, E> {
        let inputs = f(self.inputs, "inputs")?;
        let outputs = f(self.outputs, "outputs")?;
        Ok(Resource {
            urn: self.urn,
            custom: self.custom,
            delete: self.delete,
            id: self.id,
            resource_type: self.resource_type,
            inputs,
            outputs,
            parent: self.parent,
            protect: self.protect,
            external: self.external,
            dependencies: self.dependencies,
            init_errors: self.init_errors,
            provider: self.provider,
            property_dependencies: self.property_dependencies,
            pending_replacement: self.pending_replacement,
            additional_secret_outputs: self.additional_secret_outputs,
            aliases: self.aliases,
            custom_timeouts: self.custom_timeouts,
            import_id: self.import_id,
            retain_on_delete: self.retain_on_delete,
            taint: self.taint,
            deleted_with: self.deleted_with,
            created: self.created,
            modified: self.modified,
            source_position: self.source_position,
            ignore_changes: self.ignore_changes,
            replace_on_changes: self.replace_on_changes,
            extra: self.extra,
        })
    }

    /// True for provider resources (`pulumi:providers:<package>`).
    pub fn is_provider(&self) -> bool {
        is_provider_type(&self.resource_type)
    }
}

/// True for the types of provider resources (`pulumi:providers:<package>`).
pub fn is_provider_type(token: &TypeToken) -> bool {
    token.package() == "pulumi" && token.module() == "providers"
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Lets `skip_serializing_if` work for both property-map representations.
pub trait IsEmptyMap {
    fn is_empty_map(&self) -> bool;
}

impl IsEmptyMap for JsonMap {
    fn is_empty_map(&self) -> bool {
        self.is_empty()
    }
}

impl IsEmptyMap for PropertyMap {
    fn is_empty_map(&self) -> bool {
        self.is_empty()
    }
}

fn is_empty_map<P: IsEmptyMap>(map: &P) -> bool {
    map.is_empty_map()
}

/// The ID that stands for "not known yet" in provider references and resource IDs.
pub const UNKNOWN_ID: &str = codec::UNKNOWN_SENTINEL;

/// A reference to a provider resource: `<provider urn>::<provider id>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProviderReference {
    pub urn: Urn,
    pub id: String,
}

/// Why a provider reference was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ProviderReferenceError {
    #[error("invalid provider reference {reference:?}: expected \"<provider urn>::<provider id>\"")]
    Shape { reference: String },
    #[error("invalid provider reference {reference:?}: {source}")]
    Urn {
        reference: String,
        #[source]
        source: UrnError,
    },
    #[error("invalid provider reference {reference:?}: {urn} is not a provider resource")]
    NotAProvider { reference: String, urn: Urn },
}

impl ProviderReference {
    pub fn parse(reference: &str) -> Result<ProviderReference, ProviderReferenceError> {
        // The ID follows the last "::" (URN names cannot contain "::", IDs are opaque).
        let Some((urn, id)) = reference.rsplit_once("::") else {
            return Err(ProviderReferenceError::Shape {
                reference: reference.to_owned(),
            });
        };
        let urn = Urn::parse(urn).map_err(|source| ProviderReferenceError::Urn {
            reference: reference.to_owned(),
            source,
        })?;
        let token = TypeToken::parse(urn.resource_type()).map_err(|source| {
            ProviderReferenceError::Urn {
                reference: reference.to_owned(),
                source: UrnError::BadType {
                    urn: urn.to_string(),
                    source,
                },
            }
        })?;
        if !is_provider_type(&token) {
            return Err(ProviderReferenceError::NotAProvider {
                reference: reference.to_owned(),
                urn,
            });
        }
        Ok(ProviderReference {
            urn,
            id: id.to_owned(),
        })
    }
}

impl fmt::Display for ProviderReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.urn, self.id)
    }
}

impl FromStr for ProviderReference {
    type Err = ProviderReferenceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderReference::parse(s)
    }
}

impl Serialize for ProviderReference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ProviderReference {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        ProviderReference::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for TypeToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TypeToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        TypeToken::parse(&s).map_err(serde::de::Error::custom)
    }
}
