//! The WIT codec: [`PropertyValue`] ⇄ the flat node list of `cairn:provider/types.value`, and
//! the engine's request/result types ⇄ their WIT records.
//!
//! # Node lists
//!
//! WIT has no recursive types, so a value is a list of nodes that refer to each other by index:
//! the root is node 0 and every index points to a node *later* in the list. Encoding writes a
//! node, then its children (pre-order), so that holds by construction.
//!
//! Decoding distrusts the list (it comes from the guest): an index that is out of range or
//! does not point forward, a node referenced twice (sharing would let a small list expand into
//! an exponentially large value), a resource ID that is neither text nor unknown, an archive
//! member that is neither an asset nor an archive, an invalid URN, or nesting deeper than
//! [`MAX_DEPTH`] is a [`ValueError`] naming the node — never a panic. Decoding is iterative
//! (last node first), so a hostile list cannot overflow the host's stack. Nodes nothing refers
//! to are ignored.

use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource};
use cairn_engine::deploy::provider as p;
use cairn_engine::path::PropertyPath;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};
use indexmap::IndexMap;

use crate::bindings::cairn::provider::engine as we;
use crate::bindings::cairn::provider::types as w;

/// The deepest nesting a guest may return (as deep as serde_json accepts).
pub const MAX_DEPTH: usize = 128;

/// The largest value a guest may return (strings, keys and per-node overhead), so a provider
/// cannot flood the state, the journal and the display with one result.
pub const MAX_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// A malformed value from the guest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValueError {
    pub message: String,
}

fn value_error(message: impl Into<String>) -> ValueError {
    ValueError {
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding (host → guest): the engine's values are trusted and finite.

/// Encodes a value; the root is node 0.
pub fn encode_value(value: &PropertyValue) -> w::Value {
    let mut encoder = Encoder { nodes: Vec::new() };
    encoder.push(value);
    w::Value {
        nodes: encoder.nodes,
    }
}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> w::Value {
    let mut encoder = Encoder {
        nodes: Vec::with_capacity(map.len() + 1),
    };
    encoder.push_object(map);
    w::Value {
        nodes: encoder.nodes,
    }
}

struct Encoder {
    nodes: Vec<w::Node>,
}

impl Encoder {
    fn reserve(&mut self) -> u32 {
        self.nodes.push(w::Node::Null);
        index(self.nodes.len() - 1)
    }

    fn set(&mut self, at: u32, node: w::Node) {
        self.nodes[at as usize] = node;
    }

    fn push_object(&mut self, map: &PropertyMap) -> u32 {
        let at = self.reserve();
        let entries = map.iter().map(|(k, v)| (k.clone(), self.push(v))).collect();
        self.set(at, w::Node::Object(entries));
        at
    }

    fn push(&mut self, value: &PropertyValue) -> u32 {
        if let PropertyValue::Object(map) = value {
            return self.push_object(map);
        }
        let at = self.reserve();
        let node = match value {
            PropertyValue::Null => w::Node::Null,
            PropertyValue::Bool(b) => w::Node::Boolean(*b),
            PropertyValue::Number(n) => w::Node::Number(*n),
            PropertyValue::String(s) => w::Node::Text(s.clone()),
            PropertyValue::Array(items) => {
                w::Node::Array(items.iter().map(|v| self.push(v)).collect())
            }
            PropertyValue::Object(_) => unreachable!("handled above"),
            PropertyValue::Asset(asset) => w::Node::Asset(encode_asset(asset)),
            PropertyValue::Archive(archive) => w::Node::Archive(self.archive(archive)),
            PropertyValue::ResourceReference(r) => {
                w::Node::ResourceReference(w::ResourceReference {
                    urn: r.urn.to_string(),
                    id: r.id.as_deref().map(|id| self.push(id)),
                    package_version: r.package_version.clone(),
                })
            }
            PropertyValue::Secret(inner) => w::Node::Secret(self.push(inner)),
            PropertyValue::Computed => w::Node::Unknown,
            PropertyValue::Output(o) => w::Node::Output(w::OutputValue {
                value: o.value.as_deref().map(|v| self.push(v)),
                secret: o.secret,
                dependencies: o.dependencies.iter().map(ToString::to_string).collect(),
            }),
        };
        self.set(at, node);
        at
    }

    fn archive(&mut self, archive: &Archive) -> w::Archive {
        let source = match &archive.source {
            ArchiveSource::Assets(members) => w::ArchiveSource::Assets(
                members
                    .iter()
                    .map(|(name, member)| {
                        let at = self.reserve();
                        let node = match member {
                            ArchiveMember::Asset(a) => w::Node::Asset(encode_asset(a)),
                            ArchiveMember::Archive(a) => w::Node::Archive(self.archive(a)),
                        };
                        self.set(at, node);
                        (name.clone(), at)
                    })
                    .collect(),
            ),
            ArchiveSource::Path(p) => w::ArchiveSource::Path(p.clone()),
            ArchiveSource::Uri(u) => w::ArchiveSource::Uri(u.clone()),
            ArchiveSource::HashOnly => w::ArchiveSource::HashOnly,
        };
        w::Archive {
            hash: archive.hash.clone(),
            source,
        }
    }
}

fn index(i: usize) -> u32 {
    // A host value with more than 4 billion nodes cannot be built in memory first.
    u32::try_from(i).unwrap_or(u32::MAX)
}

fn encode_asset(asset: &Asset) -> w::Asset {
    w::Asset {
        hash: asset.hash.clone(),
        source: match &asset.source {
            AssetSource::Text(t) => w::AssetSource::Text(t.clone()),
            AssetSource::Path(p) => w::AssetSource::Path(p.clone()),
            AssetSource::Uri(u) => w::AssetSource::Uri(u.clone()),
            AssetSource::HashOnly => w::AssetSource::HashOnly,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding (guest → host): validated, iterative.

/// Decodes a node list into a value.
pub fn decode_value(value: w::Value) -> Result<PropertyValue, ValueError> {
    if value.nodes.is_empty() {
        return Err(value_error("the value has no nodes (the root is node 0)"));
    }
    let size: usize = value
        .nodes
        .iter()
        .map(node_bytes)
        .fold(0, usize::saturating_add);
    if size > MAX_VALUE_BYTES {
        return Err(value_error(format!(
            "the value is {:.1} MiB, more than the {} MiB limit on one value",
            size as f64 / (1024.0 * 1024.0),
            MAX_VALUE_BYTES / (1024 * 1024)
        )));
    }
    let mut decoder = Decoder::new(value.nodes.len());
    for (i, node) in value.nodes.into_iter().enumerate().rev() {
        decoder.decode(i, node)?;
    }
    decoder.take_root()
}

/// Decodes a node list whose root must be an object (or null / no nodes: an empty map).
pub fn decode_map(value: w::Value) -> Result<PropertyMap, ValueError> {
    if value.nodes.is_empty() {
        return Ok(PropertyMap::new());
    }
    match decode_value(value)? {
        PropertyValue::Object(map) => Ok(map),
        PropertyValue::Null => Ok(PropertyMap::new()),
        other => Err(value_error(format!(
            "node 0: expected an object, found {}",
            other.kind()
        ))),
    }
}

/// A decoded node still waiting for its parent: an ordinary value, or an archive member
/// (assets and archives are both values, so members are just values of those kinds).
struct Decoder {
    built: Vec<Option<PropertyValue>>,
    depth: Vec<u16>,
}

impl Decoder {
    fn new(len: usize) -> Decoder {
        Decoder {
            built: (0..len).map(|_| None).collect(),
            depth: vec![0; len],
        }
    }

    /// Takes the child at `child` for the node at `parent`, checking it points forward and is
    /// used once.
    fn take(
        &mut self,
        parent: usize,
        child: u32,
        depth: &mut u16,
    ) -> Result<PropertyValue, ValueError> {
        let c = child as usize;
        if c <= parent || c >= self.built.len() {
            return Err(value_error(format!(
                "node {parent}: refers to node {child}, which is not after it in the list of {} nodes",
                self.built.len()
            )));
        }
        let value = self.built[c].take().ok_or_else(|| {
            value_error(format!(
                "node {parent}: refers to node {child}, which another node already uses"
            ))
        })?;
        *depth = (*depth).max(self.depth[c]);
        Ok(value)
    }

    fn decode(&mut self, i: usize, node: w::Node) -> Result<(), ValueError> {
        let mut depth = 0u16;
        let value = match node {
            w::Node::Null => PropertyValue::Null,
            w::Node::Boolean(b) => PropertyValue::Bool(b),
            w::Node::Number(n) => PropertyValue::Number(n),
            w::Node::Text(s) => PropertyValue::String(s),
            w::Node::Unknown => PropertyValue::Computed,
            w::Node::Array(items) => PropertyValue::Array(
                items
                    .into_iter()
                    .map(|c| self.take(i, c, &mut depth))
                    .collect::<Result<_, _>>()?,
            ),
            w::Node::Object(entries) => {
                let mut map = PropertyMap::with_capacity(entries.len());
                for (key, c) in entries {
                    let v = self.take(i, c, &mut depth)?;
                    if map.insert(key.clone(), v).is_some() {
                        return Err(value_error(format!("node {i}: key {key:?} appears twice")));
                    }
                }
                PropertyValue::Object(map)
            }
            w::Node::Asset(a) => PropertyValue::Asset(decode_asset(a)),
            w::Node::Archive(a) => PropertyValue::Archive(self.archive(i, a, &mut depth)?),
            w::Node::ResourceReference(r) => {
                let urn = parse_urn(i, &r.urn)?;
                let id = match r.id {
                    None => None,
                    Some(c) => match self.take(i, c, &mut depth)? {
                        v @ (PropertyValue::String(_) | PropertyValue::Computed) => {
                            Some(Box::new(v))
                        }
                        other => {
                            return Err(value_error(format!(
                                "node {i}: a resource reference's ID must be text or unknown, found {}",
                                other.kind()
                            )));
                        }
                    },
                };
                PropertyValue::ResourceReference(ResourceReference {
                    urn,
                    id,
                    package_version: r.package_version,
                })
            }
            w::Node::Secret(c) => PropertyValue::Secret(Box::new(self.take(i, c, &mut depth)?)),
            w::Node::Output(o) => PropertyValue::Output(OutputValue {
                value: match o.value {
                    Some(c) => Some(Box::new(self.take(i, c, &mut depth)?)),
                    None => None,
                },
                secret: o.secret,
                dependencies: o
                    .dependencies
                    .iter()
                    .map(|u| parse_urn(i, u))
                    .collect::<Result<_, _>>()?,
            }),
        };
        let depth = depth + 1;
        if usize::from(depth) > MAX_DEPTH {
            return Err(value_error(format!(
                "node {i}: the value is nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth[i] = depth;
        self.built[i] = Some(value);
        Ok(())
    }

    fn archive(
        &mut self,
        i: usize,
        archive: w::Archive,
        depth: &mut u16,
    ) -> Result<Archive, ValueError> {
        let source = match archive.source {
            w::ArchiveSource::Assets(members) => {
                let mut map = IndexMap::with_capacity(members.len());
                for (name, c) in members {
                    let member = match self.take(i, c, depth)? {
                        PropertyValue::Asset(a) => ArchiveMember::Asset(a),
                        PropertyValue::Archive(a) => ArchiveMember::Archive(a),
                        other => {
                            return Err(value_error(format!(
                                "node {i}: archive member {name:?} must be an asset or an archive, found {}",
                                other.kind()
                            )));
                        }
                    };
                    if map.insert(name.clone(), member).is_some() {
                        return Err(value_error(format!(
                            "node {i}: archive member {name:?} appears twice"
                        )));
                    }
                }
                ArchiveSource::Assets(map)
            }
            w::ArchiveSource::Path(p) => ArchiveSource::Path(p),
            w::ArchiveSource::Uri(u) => ArchiveSource::Uri(u),
            w::ArchiveSource::HashOnly => ArchiveSource::HashOnly,
        };
        Ok(Archive {
            hash: archive.hash,
            source,
        })
    }

    fn take_root(mut self) -> Result<PropertyValue, ValueError> {
        self.built[0]
            .take()
            .ok_or_else(|| value_error("node 0: missing"))
    }
}

/// Roughly what a node costs once decoded: its text plus a fixed overhead.
fn node_bytes(node: &w::Node) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let asset = |a: &w::Asset| {
        opt(&a.hash)
            + match &a.source {
                w::AssetSource::Text(t) | w::AssetSource::Path(t) | w::AssetSource::Uri(t) => {
                    t.len()
                }
                w::AssetSource::HashOnly => 0,
            }
    };
    16 + match node {
        w::Node::Text(t) => t.len(),
        w::Node::Array(items) => 4 * items.len(),
        w::Node::Object(entries) => entries.iter().map(|(k, _)| k.len() + 4).sum(),
        w::Node::Asset(a) => asset(a),
        w::Node::Archive(a) => {
            opt(&a.hash)
                + match &a.source {
                    w::ArchiveSource::Assets(m) => m.iter().map(|(k, _)| k.len() + 4).sum(),
                    w::ArchiveSource::Path(t) | w::ArchiveSource::Uri(t) => t.len(),
                    w::ArchiveSource::HashOnly => 0,
                }
        }
        w::Node::ResourceReference(r) => r.urn.len() + opt(&r.package_version),
        w::Node::Output(o) => o.dependencies.iter().map(String::len).sum(),
        _ => 0,
    }
}

fn decode_asset(asset: w::Asset) -> Asset {
    Asset {
        hash: asset.hash,
        source: match asset.source {
            w::AssetSource::Text(t) => AssetSource::Text(t),
            w::AssetSource::Path(p) => AssetSource::Path(p),
            w::AssetSource::Uri(u) => AssetSource::Uri(u),
            w::AssetSource::HashOnly => AssetSource::HashOnly,
        },
    }
}

fn parse_urn(node: usize, urn: &str) -> Result<Urn, ValueError> {
    Urn::parse(urn).map_err(|e| value_error(format!("node {node}: invalid URN {urn:?}: {e}")))
}

/// Parses a URN the guest sent in a result field.
pub(crate) fn result_urn(field: &str, urn: &str) -> Result<Urn, ValueError> {
    Urn::parse(urn).map_err(|e| value_error(format!("{field}: invalid URN {urn:?}: {e}")))
}

fn field<T>(name: &str, r: Result<T, ValueError>) -> Result<T, ValueError> {
    r.map_err(|e| value_error(format!("{name}: {}", e.message)))
}

// ---------------------------------------------------------------------------------------------
// Requests (host → guest).

fn dependencies_to_wit(deps: &IndexMap<String, Vec<Urn>>) -> Vec<w::PropertyDependencies> {
    deps.iter()
        .map(|(property, urns)| w::PropertyDependencies {
            property: property.clone(),
            urns: urns.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

fn dependencies_from_wit(
    name: &str,
    deps: Vec<w::PropertyDependencies>,
) -> Result<IndexMap<String, Vec<Urn>>, ValueError> {
    deps.into_iter()
        .map(|d| {
            let urns = d
                .urns
                .iter()
                .map(|u| result_urn(&format!("{name}.{}", d.property), u))
                .collect::<Result<_, _>>()?;
            Ok((d.property, urns))
        })
        .collect()
}

fn paths(paths: &[PropertyPath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

pub(crate) fn check_request(r: &p::CheckRequest) -> w::CheckRequest {
    w::CheckRequest {
        urn: r.urn.to_string(),
        olds: encode_map(&r.olds),
        news: encode_map(&r.news),
        random_seed: r.random_seed.clone(),
    }
}

pub(crate) fn diff_request(r: &p::DiffRequest) -> w::DiffRequest {
    w::DiffRequest {
        urn: r.urn.to_string(),
        id: r.id.clone(),
        old_inputs: encode_map(&r.old_inputs),
        old_outputs: encode_map(&r.old_outputs),
        news: encode_map(&r.news),
        ignore_changes: paths(&r.ignore_changes),
    }
}

pub(crate) fn create_request(r: &p::CreateRequest) -> w::CreateRequest {
    w::CreateRequest {
        urn: r.urn.to_string(),
        properties: encode_map(&r.properties),
        timeout: r.timeout,
        preview: r.preview,
    }
}

pub(crate) fn read_request(r: &p::ReadRequest) -> w::ReadRequest {
    w::ReadRequest {
        urn: r.urn.to_string(),
        id: r.id.clone(),
        inputs: encode_map(&r.inputs),
        state: encode_map(&r.state),
    }
}

pub(crate) fn update_request(r: &p::UpdateRequest) -> w::UpdateRequest {
    w::UpdateRequest {
        urn: r.urn.to_string(),
        id: r.id.clone(),
        old_inputs: encode_map(&r.old_inputs),
        old_outputs: encode_map(&r.old_outputs),
        news: encode_map(&r.news),
        timeout: r.timeout,
        ignore_changes: paths(&r.ignore_changes),
        preview: r.preview,
    }
}

pub(crate) fn delete_request(r: &p::DeleteRequest) -> w::DeleteRequest {
    w::DeleteRequest {
        urn: r.urn.to_string(),
        id: r.id.clone(),
        inputs: encode_map(&r.inputs),
        outputs: encode_map(&r.outputs),
        timeout: r.timeout,
    }
}

pub(crate) fn invoke_request(r: &p::InvokeRequest) -> w::InvokeRequest {
    w::InvokeRequest {
        token: r.token.clone(),
        args: encode_map(&r.args),
    }
}

pub(crate) fn call_request(r: &p::CallRequest) -> w::CallRequest {
    w::CallRequest {
        token: r.token.clone(),
        args: encode_map(&r.args),
        arg_dependencies: dependencies_to_wit(&r.arg_dependencies),
        project: r.project.clone(),
        stack: r.stack.clone(),
        dry_run: r.dry_run,
    }
}

pub(crate) fn construct_request(r: &p::ConstructRequest) -> w::ConstructRequest {
    w::ConstructRequest {
        project: r.project.clone(),
        stack: r.stack.clone(),
        resource_type: r.resource_type.clone(),
        name: r.name.clone(),
        parent: r.parent.as_ref().map(ToString::to_string),
        inputs: encode_map(&r.inputs),
        input_dependencies: dependencies_to_wit(&r.input_dependencies),
        dependencies: r.dependencies.iter().map(ToString::to_string).collect(),
        protect: r.protect,
        providers: r
            .providers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        dry_run: r.dry_run,
    }
}

// ---------------------------------------------------------------------------------------------
// Results (guest → host).

fn failures(f: Vec<w::CheckFailure>) -> Vec<p::CheckFailure> {
    f.into_iter()
        .map(|f| p::CheckFailure {
            property: f.property,
            reason: f.reason,
        })
        .collect()
}

pub(crate) fn check_result(r: w::CheckResult) -> Result<p::CheckResult, ValueError> {
    Ok(p::CheckResult {
        inputs: field("inputs", decode_map(r.inputs))?,
        failures: failures(r.failures),
    })
}

pub(crate) fn diff_result(r: w::DiffResult) -> Result<p::DiffResult, ValueError> {
    let detailed_diff = r.detailed_diff.map(|entries| {
        entries
            .into_iter()
            .map(|d| {
                let kind = match d.kind {
                    w::DiffKind::Add => p::DiffKind::Add,
                    w::DiffKind::AddReplace => p::DiffKind::AddReplace,
                    w::DiffKind::Delete => p::DiffKind::Delete,
                    w::DiffKind::DeleteReplace => p::DiffKind::DeleteReplace,
                    w::DiffKind::Update => p::DiffKind::Update,
                    w::DiffKind::UpdateReplace => p::DiffKind::UpdateReplace,
                };
                (
                    d.path,
                    p::PropertyDiff {
                        kind,
                        input_diff: d.input_diff,
                    },
                )
            })
            .collect()
    });
    Ok(p::DiffResult {
        changes: match r.changes {
            w::DiffChanges::Unknown => p::DiffChanges::Unknown,
            w::DiffChanges::None => p::DiffChanges::None,
            w::DiffChanges::Some => p::DiffChanges::Some,
        },
        replace_keys: r.replace_keys,
        stable_keys: r.stable_keys,
        changed_keys: r.changed_keys,
        detailed_diff,
        delete_before_replace: r.delete_before_replace,
    })
}

pub(crate) fn create_result(r: w::CreateResult) -> Result<p::CreateResult, ValueError> {
    Ok(p::CreateResult {
        id: r.id,
        outputs: field("outputs", decode_map(r.outputs))?,
    })
}

pub(crate) fn read_result(r: w::ReadResult) -> Result<p::ReadResult, ValueError> {
    Ok(p::ReadResult {
        id: r.id,
        inputs: field("inputs", decode_map(r.inputs))?,
        outputs: field("outputs", decode_map(r.outputs))?,
    })
}

pub(crate) fn update_result(r: w::UpdateResult) -> Result<p::UpdateResult, ValueError> {
    Ok(p::UpdateResult {
        outputs: field("outputs", decode_map(r.outputs))?,
    })
}

pub(crate) fn invoke_result(r: w::InvokeResult) -> Result<p::InvokeResult, ValueError> {
    Ok(p::InvokeResult {
        outputs: field("outputs", decode_map(r.outputs))?,
        failures: failures(r.failures),
    })
}

pub(crate) fn call_result(r: w::CallResult) -> Result<p::CallResult, ValueError> {
    Ok(p::CallResult {
        outputs: field("outputs", decode_map(r.outputs))?,
        output_dependencies: dependencies_from_wit("output-dependencies", r.output_dependencies)?,
        failures: failures(r.failures),
    })
}

pub(crate) fn construct_result(r: w::ConstructResult) -> Result<p::ConstructResult, ValueError> {
    Ok(p::ConstructResult {
        urn: r.urn.as_deref().map(|u| result_urn("urn", u)).transpose()?,
        state: field("state", decode_map(r.state))?,
        state_dependencies: dependencies_from_wit("state-dependencies", r.state_dependencies)?,
    })
}

pub(crate) fn partial_state(s: w::PartialState) -> Result<p::PartialState, ValueError> {
    Ok(p::PartialState {
        id: s.id,
        inputs: field("partial inputs", decode_map(s.inputs))?,
        outputs: field("partial outputs", decode_map(s.outputs))?,
    })
}

// ---------------------------------------------------------------------------------------------
// Engine callbacks (guest → host → guest).

/// A guest's `register-resource` request as the monitor's request.
pub(crate) fn register_resource_request(
    r: we::RegisterResourceRequest,
) -> Result<cairn_engine::deploy::program::RegisterResourceRequest, ValueError> {
    use cairn_engine::deploy::program::{RegisterResourceRequest, ResourceOptions};
    let resource_type = TypeToken::parse(&r.resource_type).map_err(|e| {
        value_error(format!(
            "resource-type: invalid type token {:?}: {e}",
            r.resource_type
        ))
    })?;
    Ok(RegisterResourceRequest {
        resource_type,
        name: r.name,
        custom: r.custom,
        remote: false,
        parent: r
            .parent
            .as_deref()
            .map(|u| result_urn("parent", u))
            .transpose()?,
        inputs: field("inputs", decode_map(r.inputs))?,
        property_dependencies: dependencies_from_wit(
            "property-dependencies",
            r.property_dependencies,
        )?,
        options: ResourceOptions {
            protect: r.protect,
            depends_on: r
                .dependencies
                .iter()
                .map(|u| result_urn("dependencies", u))
                .collect::<Result<_, _>>()?,
            provider: r.provider,
            ..ResourceOptions::default()
        },
    })
}

pub(crate) fn register_resource_response(
    r: cairn_engine::deploy::program::RegisterResourceResponse,
) -> we::RegisterResourceResponse {
    we::RegisterResourceResponse {
        urn: r.urn.to_string(),
        id: r.id,
        outputs: encode_map(&r.outputs),
    }
}

#[cfg(test)]
mod tests {
    use cairn_engine::props;

    use super::*;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::random:index:Thing::{name}")).unwrap()
    }

    /// One value of every kind, nested.
    fn every_kind() -> PropertyValue {
        let mut members = IndexMap::new();
        members.insert(
            "a.txt".to_string(),
            ArchiveMember::Asset(Asset {
                hash: Some("00ff".into()),
                source: AssetSource::Text("hi".into()),
            }),
        );
        members.insert(
            "nested".to_string(),
            ArchiveMember::Archive(Archive {
                hash: None,
                source: ArchiveSource::Path("./dir".into()),
            }),
        );
        PropertyValue::Object(props! {
            "null" => PropertyValue::Null,
            "bool" => true,
            "number" => 1.5,
            "string" => "text",
            "array" => vec![PropertyValue::from(1i64), PropertyValue::from("two")],
            "object" => PropertyValue::Object(props! {"inner" => false}),
            "asset_path" => PropertyValue::Asset(Asset { hash: None, source: AssetSource::Path("f".into()) }),
            "asset_uri" => PropertyValue::Asset(Asset { hash: None, source: AssetSource::Uri("https://x/y".into()) }),
            "asset_hash" => PropertyValue::Asset(Asset { hash: Some("ab".into()), source: AssetSource::HashOnly }),
            "archive" => PropertyValue::Archive(Archive { hash: None, source: ArchiveSource::Assets(members) }),
            "archive_uri" => PropertyValue::Archive(Archive { hash: Some("cd".into()), source: ArchiveSource::Uri("file:///a.tgz".into()) }),
            "archive_hash" => PropertyValue::Archive(Archive { hash: Some("ef".into()), source: ArchiveSource::HashOnly }),
            "ref" => PropertyValue::ResourceReference(ResourceReference {
                urn: urn("a"),
                id: Some(Box::new(PropertyValue::from("id-1"))),
                package_version: Some("1.2.3".into()),
            }),
            "ref_unknown_id" => PropertyValue::ResourceReference(ResourceReference {
                urn: urn("b"),
                id: Some(Box::new(PropertyValue::Computed)),
                package_version: None,
            }),
            "component_ref" => PropertyValue::ResourceReference(ResourceReference {
                urn: urn("c"),
                id: None,
                package_version: None,
            }),
            "secret" => PropertyValue::secret(PropertyValue::Object(props! {"pw" => "hunter2"})),
            "unknown" => PropertyValue::Computed,
            "output" => PropertyValue::Output(OutputValue {
                value: Some(Box::new(PropertyValue::from("v"))),
                secret: true,
                dependencies: vec![urn("a"), urn("b")],
            }),
            "unknown_output" => PropertyValue::Output(OutputValue {
                value: None,
                secret: false,
                dependencies: vec![],
            }),
        })
    }

    #[test]
    fn every_kind_round_trips() {
        let value = every_kind();
        let encoded = encode_value(&value);
        assert_eq!(decode_value(encoded.clone()).unwrap(), value);
        // Every index points forward.
        for (i, node) in encoded.nodes.iter().enumerate() {
            let children: Vec<u32> = match node {
                w::Node::Array(c) => c.clone(),
                w::Node::Object(e) => e.iter().map(|(_, c)| *c).collect(),
                w::Node::Secret(c) => vec![*c],
                w::Node::Output(o) => o.value.into_iter().collect(),
                w::Node::ResourceReference(r) => r.id.into_iter().collect(),
                w::Node::Archive(w::Archive {
                    source: w::ArchiveSource::Assets(m),
                    ..
                }) => m.iter().map(|(_, c)| *c).collect(),
                _ => vec![],
            };
            assert!(
                children.iter().all(|c| *c as usize > i),
                "node {i}: {node:?}"
            );
        }
    }

    #[test]
    fn maps_encode_as_objects_rooted_at_zero() {
        let map = props! {"a" => 1i64, "b" => vec![PropertyValue::from(true)]};
        let encoded = encode_map(&map);
        assert_eq!(
            encoded.nodes,
            vec![
                w::Node::Object(vec![("a".into(), 1), ("b".into(), 2)]),
                w::Node::Number(1.0),
                w::Node::Array(vec![3]),
                w::Node::Boolean(true),
            ]
        );
        assert_eq!(decode_map(encoded).unwrap(), map);
        assert_eq!(
            decode_map(w::Value { nodes: vec![] }).unwrap(),
            PropertyMap::new()
        );
        assert_eq!(
            encode_map(&PropertyMap::new()).nodes,
            vec![w::Node::Object(vec![])]
        );
    }

    #[test]
    fn guest_lists_are_decoded_from_hand_written_nodes() {
        // What a guest SDK might send: root object with a secret array.
        let nodes = vec![
            w::Node::Object(vec![("s".into(), 1), ("n".into(), 4)]),
            w::Node::Secret(2),
            w::Node::Array(vec![3]),
            w::Node::Text("x".into()),
            w::Node::Unknown,
        ];
        assert_eq!(
            decode_map(w::Value { nodes }).unwrap(),
            props! {
                "s" => PropertyValue::secret(vec![PropertyValue::from("x")].into()),
                "n" => PropertyValue::Computed,
            }
        );
    }

    fn decode_err(nodes: Vec<w::Node>) -> String {
        decode_value(w::Value { nodes }).unwrap_err().message
    }

    #[test]
    fn malformed_lists_are_errors_not_panics() {
        use w::Node::*;
        let cases: Vec<(Vec<w::Node>, &str)> = vec![
            (vec![], "the value has no nodes"),
            (
                vec![Array(vec![5])],
                "node 0: refers to node 5, which is not after it in the list of 1 nodes",
            ),
            (
                vec![Array(vec![0])],
                "node 0: refers to node 0, which is not after it",
            ),
            (
                vec![Null, Array(vec![0])],
                "node 1: refers to node 0, which is not after it",
            ),
            (
                vec![Array(vec![1, 1]), Null],
                "node 0: refers to node 1, which another node already uses",
            ),
            (
                vec![Array(vec![1, 2]), Secret(3), Secret(3), Null],
                "node 1: refers to node 3, which another node already uses",
            ),
            (vec![Secret(u32::MAX)], "node 0: refers to node 4294967295"),
            (
                vec![Object(vec![("k".into(), 1), ("k".into(), 2)]), Null, Null],
                "node 0: key \"k\" appears twice",
            ),
            (
                vec![ResourceReference(w::ResourceReference {
                    urn: "nope".into(),
                    id: None,
                    package_version: None,
                })],
                "node 0: invalid URN \"nope\"",
            ),
            (
                vec![
                    ResourceReference(w::ResourceReference {
                        urn: "urn:pulumi:s::p::t:m:T::n".into(),
                        id: Some(1),
                        package_version: None,
                    }),
                    Number(1.0),
                ],
                "node 0: a resource reference's ID must be text or unknown, found number",
            ),
            (
                vec![
                    Archive(w::Archive {
                        hash: None,
                        source: w::ArchiveSource::Assets(vec![("m".into(), 1)]),
                    }),
                    Text("not an asset".into()),
                ],
                "node 0: archive member \"m\" must be an asset or an archive, found string",
            ),
            (
                vec![Output(w::OutputValue {
                    value: None,
                    secret: false,
                    dependencies: vec!["x".into()],
                })],
                "node 0: invalid URN \"x\"",
            ),
        ];
        for (nodes, expected) in cases {
            let err = decode_err(nodes);
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        let err = decode_map(w::Value {
            nodes: vec![Text("x".into())],
        })
        .unwrap_err();
        assert_eq!(err.message, "node 0: expected an object, found string");
    }

    #[test]
    fn sharing_cannot_blow_up_and_depth_is_bounded() {
        // A chain 100,000 deep decodes without recursion and is refused by the depth limit.
        let n = 100_000u32;
        let mut nodes: Vec<w::Node> = (0..n - 1).map(|i| w::Node::Array(vec![i + 1])).collect();
        nodes.push(w::Node::Null);
        let err = decode_err(nodes);
        assert!(err.contains("nested deeper than 128 levels"), "{err}");

        // Exactly the limit is fine.
        let depth = MAX_DEPTH as u32;
        let mut nodes: Vec<w::Node> = (0..depth - 1)
            .map(|i| w::Node::Array(vec![i + 1]))
            .collect();
        nodes.push(w::Node::Null);
        decode_value(w::Value { nodes }).unwrap();
    }

    #[test]
    fn oversized_values_are_refused() {
        let big = "x".repeat(MAX_VALUE_BYTES);
        let err = decode_err(vec![w::Node::Text(big)]);
        assert!(
            err.starts_with("the value is 16.0 MiB, more than the 16 MiB limit"),
            "{err}"
        );
    }

    #[test]
    fn unreferenced_nodes_are_ignored() {
        let nodes = vec![w::Node::Boolean(true), w::Node::Text("stray".into())];
        assert_eq!(
            decode_value(w::Value { nodes }).unwrap(),
            PropertyValue::Bool(true)
        );
    }

    #[test]
    fn requests_and_results_convert() {
        let req = p::DiffRequest {
            urn: urn("a"),
            id: "id".into(),
            old_inputs: props! {"x" => 1i64},
            old_outputs: props! {},
            news: props! {"x" => 2i64},
            ignore_changes: vec![PropertyPath::parse("tags.env").unwrap()],
        };
        let w = diff_request(&req);
        assert_eq!(w.urn, req.urn.to_string());
        assert_eq!(w.ignore_changes, ["tags.env"]);
        assert_eq!(decode_map(w.news).unwrap(), req.news);

        let result = diff_result(w::DiffResult {
            changes: w::DiffChanges::Some,
            replace_keys: vec!["x".into()],
            stable_keys: vec![],
            changed_keys: vec!["x".into()],
            detailed_diff: Some(vec![w::PropertyDiff {
                path: "x".into(),
                kind: w::DiffKind::UpdateReplace,
                input_diff: true,
            }]),
            delete_before_replace: true,
        })
        .unwrap();
        assert_eq!(result.changes, p::DiffChanges::Some);
        assert!(result.requires_replacement());
        assert_eq!(
            result.detailed_diff.unwrap()["x"],
            p::PropertyDiff {
                kind: p::DiffKind::UpdateReplace,
                input_diff: true
            }
        );

        let err = construct_result(w::ConstructResult {
            urn: Some("bad".into()),
            state: encode_map(&props! {}),
            state_dependencies: vec![],
        })
        .unwrap_err();
        assert!(
            err.message.starts_with("urn: invalid URN \"bad\""),
            "{}",
            err.message
        );

        let err = create_result(w::CreateResult {
            id: "i".into(),
            outputs: w::Value {
                nodes: vec![w::Node::Secret(0)],
            },
        })
        .unwrap_err();
        assert!(
            err.message.starts_with("outputs: node 0: refers to node 0"),
            "{}",
            err.message
        );
    }

    #[test]
    fn register_resource_requests_are_validated() {
        let req = we::RegisterResourceRequest {
            resource_type: "random:index:Thing".into(),
            name: "child".into(),
            custom: true,
            parent: Some(urn("p").to_string()),
            inputs: encode_map(&props! {"len" => 3i64}),
            property_dependencies: vec![w::PropertyDependencies {
                property: "len".into(),
                urns: vec![urn("d").to_string()],
            }],
            dependencies: vec![urn("d").to_string()],
            provider: None,
            protect: true,
        };
        let r = register_resource_request(req.clone()).unwrap();
        assert_eq!(r.resource_type.as_str(), "random:index:Thing");
        assert_eq!(r.parent, Some(urn("p")));
        assert_eq!(r.property_dependencies["len"], vec![urn("d")]);
        assert_eq!(r.options.depends_on, vec![urn("d")]);
        assert!(r.options.protect);

        let bad = we::RegisterResourceRequest {
            resource_type: "no".into(),
            ..req
        };
        assert!(
            register_resource_request(bad)
                .unwrap_err()
                .message
                .starts_with("resource-type: invalid type token")
        );
    }
}
