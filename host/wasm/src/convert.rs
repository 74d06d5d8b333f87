//! The WIT codec: [`PropertyValue`] ⇄ the flat node list of `cairn:deploy/types.value`, and
//! the engine's request/result types ⇄ their WIT records.
//!
//! # Node lists
//!
//! WIT has no recursive types, so a value is a list of nodes that refer to each other by index:
//! the root is node 0 and every index points to a node *later* in the list. Encoding writes a
//! node, then its children (pre-order), so that holds by construction. Text and object keys
//! are spans of the value's one `strings` buffer (UTF-8, concatenated), so lowering a value
//! into the guest costs a constant number of allocations rather than one per string.
//!
//! Decoding distrusts the list (it comes from the guest): an index that is out of range or
//! does not point forward, a node referenced twice (sharing would let a small list expand into
//! an exponentially large value), a resource ID that is neither text nor unknown, an archive
//! member that is neither an asset nor an archive, an invalid URN, a span outside the `strings`
//! buffer or whose bytes are not valid UTF-8 (e.g. cut mid-character), or nesting deeper than
//! [`MAX_DEPTH`] is a [`ValueError`] naming the node — never a panic. Decoding is iterative
//! (last node first), so a hostile list cannot overflow the host's stack. Nodes nothing refers
//! to are ignored.

use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource};
use cairn_engine::deploy::provider as p;
use cairn_engine::path::PropertyPath;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};
use indexmap::IndexMap;

use crate::bindings::cairn::deploy::engine as we;
use crate::bindings::cairn::deploy::types as w;

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

pub(crate) fn value_error(message: impl Into<String>) -> ValueError {
    ValueError {
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding (host → guest): the engine's values are trusted and finite.

/// Encodes a value; the root is node 0.
pub fn encode_value(value: &PropertyValue) -> w::Value {
    let mut encoder = Encoder {
        nodes: Vec::new(),
        strings: Vec::new(),
    };
    encoder.push(value);
    encoder.finish()
}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> w::Value {
    let mut encoder = Encoder {
        nodes: Vec::with_capacity(map.len() + 1),
        strings: Vec::new(),
    };
    encoder.push_object(map);
    encoder.finish()
}

struct Encoder {
    nodes: Vec<w::Node>,
    /// The text of every `text` node and object key, concatenated.
    strings: Vec<u8>,
}

impl Encoder {
    fn finish(self) -> w::Value {
        w::Value {
            nodes: self.nodes,
            strings: self.strings,
        }
    }

    /// Appends `s` to the string buffer. (Offsets beyond 4 GiB saturate, which the guest
    /// rejects; the engine never holds such a value.)
    fn span(&mut self, s: &str) -> w::Span {
        let offset = index(self.strings.len());
        self.strings.extend_from_slice(s.as_bytes());
        w::Span {
            offset,
            len: index(s.len()),
        }
    }

    fn reserve(&mut self) -> u32 {
        self.nodes.push(w::Node::Null);
        index(self.nodes.len() - 1)
    }

    fn set(&mut self, at: u32, node: w::Node) {
        self.nodes[at as usize] = node;
    }

    fn push_object(&mut self, map: &PropertyMap) -> u32 {
        let at = self.reserve();
        let entries = map
            .iter()
            .map(|(k, v)| (self.span(k), self.push(v)))
            .collect();
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
            PropertyValue::String(s) => w::Node::Text(self.span(s)),
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
    let w::Value { nodes, strings } = value;
    if nodes.is_empty() {
        return Err(value_error("the value has no nodes (the root is node 0)"));
    }
    let size: usize = nodes.iter().map(node_bytes).fold(0, usize::saturating_add);
    if size > MAX_VALUE_BYTES {
        return Err(value_error(format!(
            "the value is {:.1} MiB, more than the {} MiB limit on one value",
            size as f64 / (1024.0 * 1024.0),
            MAX_VALUE_BYTES / (1024 * 1024)
        )));
    }
    let mut decoder = Decoder::new(nodes.len());
    for (i, node) in nodes.into_iter().enumerate().rev() {
        decoder.decode(i, node, &strings)?;
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

    fn decode(&mut self, i: usize, node: w::Node, strings: &[u8]) -> Result<(), ValueError> {
        let mut depth = 0u16;
        let value = match node {
            w::Node::Null => PropertyValue::Null,
            w::Node::Boolean(b) => PropertyValue::Bool(b),
            w::Node::Number(n) => PropertyValue::Number(n),
            w::Node::Text(s) => PropertyValue::String(span_text(strings, i, &s)?.to_owned()),
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
                    let key = span_text(strings, i, &key)?;
                    let v = self.take(i, c, &mut depth)?;
                    if map.insert(key.to_owned(), v).is_some() {
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

/// The text of a span of the value's string buffer: in range and valid UTF-8 (which also rules
/// out a span that starts or ends inside a character).
fn span_text<'a>(strings: &'a [u8], node: usize, span: &w::Span) -> Result<&'a str, ValueError> {
    let start = span.offset as usize;
    let bytes = start
        .checked_add(span.len as usize)
        .and_then(|end| strings.get(start..end))
        .ok_or_else(|| {
            value_error(format!(
                "node {node}: the text span (offset {}, length {}) is outside the {}-byte string buffer",
                span.offset,
                span.len,
                strings.len()
            ))
        })?;
    std::str::from_utf8(bytes).map_err(|e| {
        value_error(format!(
            "node {node}: the text span (offset {}, length {}) is not valid UTF-8: {e}",
            span.offset, span.len
        ))
    })
}

/// Roughly what a node costs once decoded: its text plus a fixed overhead. (Spans are counted
/// as they will be copied, so many spans over the same bytes cannot inflate a small buffer.)
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
        w::Node::Text(t) => t.len as usize,
        w::Node::Array(items) => 4 * items.len(),
        w::Node::Object(entries) => entries.iter().map(|(k, _)| k.len as usize + 4).sum(),
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

pub(crate) fn field<T>(name: &str, r: Result<T, ValueError>) -> Result<T, ValueError> {
    r.map_err(|e| value_error(format!("{name}: {}", e.message)))
}

// ---------------------------------------------------------------------------------------------
// Requests (host → guest).

pub(crate) fn dependencies_to_wit(
    deps: &IndexMap<String, Vec<Urn>>,
) -> Vec<w::PropertyDependencies> {
    deps.iter()
        .map(|(property, urns)| w::PropertyDependencies {
            property: property.clone(),
            urns: urns.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

pub(crate) fn dependencies_from_wit(
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

    /// The string buffer hand-written test values share: `sp` finds a span in it.
    const POOL: &str = "k m x s n stray|not an asset";

    fn sp(s: &str) -> w::Span {
        let offset = POOL.find(s).expect("in the pool");
        w::Span {
            offset: offset as u32,
            len: s.len() as u32,
        }
    }

    fn pooled(nodes: Vec<w::Node>) -> w::Value {
        w::Value {
            nodes,
            strings: POOL.as_bytes().to_vec(),
        }
    }

    fn empty() -> w::Value {
        w::Value {
            nodes: vec![],
            strings: vec![],
        }
    }

    #[test]
    fn maps_encode_as_objects_rooted_at_zero() {
        let map = props! {"a" => 1i64, "b" => vec![PropertyValue::from(true)]};
        let encoded = encode_map(&map);
        let at = |offset| w::Span { offset, len: 1 };
        assert_eq!(encoded.strings, b"ab");
        assert_eq!(
            encoded.nodes,
            vec![
                w::Node::Object(vec![(at(0), 1), (at(1), 2)]),
                w::Node::Number(1.0),
                w::Node::Array(vec![3]),
                w::Node::Boolean(true),
            ]
        );
        assert_eq!(decode_map(encoded).unwrap(), map);
        assert_eq!(decode_map(empty()).unwrap(), PropertyMap::new());
        let encoded = encode_map(&PropertyMap::new());
        assert_eq!(encoded.nodes, vec![w::Node::Object(vec![])]);
        assert!(encoded.strings.is_empty());
    }

    #[test]
    fn guest_lists_are_decoded_from_hand_written_nodes() {
        // What a guest SDK might send: root object with a secret array.
        let nodes = vec![
            w::Node::Object(vec![(sp("s"), 1), (sp("n"), 4)]),
            w::Node::Secret(2),
            w::Node::Array(vec![3]),
            w::Node::Text(sp("x")),
            w::Node::Unknown,
        ];
        assert_eq!(
            decode_map(pooled(nodes)).unwrap(),
            props! {
                "s" => PropertyValue::secret(vec![PropertyValue::from("x")].into()),
                "n" => PropertyValue::Computed,
            }
        );
    }

    fn decode_err(nodes: Vec<w::Node>) -> String {
        decode_value(pooled(nodes)).unwrap_err().message
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
                vec![Object(vec![(sp("k"), 1), (sp("k"), 2)]), Null, Null],
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
                    Text(sp("not an asset")),
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
            (
                vec![Text(w::Span {
                    offset: 20,
                    len: 100,
                })],
                "node 0: the text span (offset 20, length 100) is outside the 28-byte string buffer",
            ),
            (
                vec![Text(w::Span {
                    offset: u32::MAX,
                    len: 1,
                })],
                "node 0: the text span (offset 4294967295, length 1) is outside",
            ),
            (
                vec![
                    Array(vec![1]),
                    Object(vec![(w::Span { offset: 28, len: 1 }, 2)]),
                    Null,
                ],
                "node 1: the text span (offset 28, length 1) is outside",
            ),
        ];
        for (nodes, expected) in cases {
            let err = decode_err(nodes);
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        let err = decode_map(pooled(vec![Text(sp("x"))])).unwrap_err();
        assert_eq!(err.message, "node 0: expected an object, found string");

        // Spans must cover valid UTF-8: not cut mid-character, not stray bytes.
        let utf8_err = |nodes: Vec<w::Node>, strings: &[u8]| {
            decode_value(w::Value {
                nodes,
                strings: strings.to_vec(),
            })
            .unwrap_err()
            .message
        };
        let span = |offset, len| w::Span { offset, len };
        for (nodes, strings, expected) in [
            (
                vec![Text(span(0, 1))],
                "é".as_bytes(),
                "node 0: the text span (offset 0, length 1) is not valid UTF-8",
            ),
            (
                vec![Text(span(1, 1))],
                "é".as_bytes(),
                "node 0: the text span (offset 1, length 1) is not valid UTF-8",
            ),
            (
                vec![Object(vec![(span(0, 2), 1)]), Null],
                &[0x61, 0xff][..],
                "node 0: the text span (offset 0, length 2) is not valid UTF-8",
            ),
        ] {
            let err = utf8_err(nodes, strings);
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        // Bytes no span covers are not checked; spans may overlap and come in any order.
        assert_eq!(
            decode_value(w::Value {
                nodes: vec![
                    Array(vec![1, 2, 3]),
                    Text(span(1, 2)),
                    Text(span(0, 3)),
                    Text(span(3, 0)),
                ],
                strings: vec![b'a', 0xc3, 0xa9, 0xff],
            })
            .unwrap(),
            PropertyValue::Array(vec!["é".into(), "aé".into(), "".into()])
        );
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
        decode_value(pooled(nodes)).unwrap();
    }

    #[test]
    fn oversized_values_are_refused() {
        let big = w::Span {
            offset: 0,
            len: MAX_VALUE_BYTES as u32,
        };
        let err = decode_value(w::Value {
            nodes: vec![w::Node::Text(big)],
            strings: vec![b'x'; MAX_VALUE_BYTES],
        })
        .unwrap_err()
        .message;
        assert!(
            err.starts_with("the value is 16.0 MiB, more than the 16 MiB limit"),
            "{err}"
        );
        // Many spans over the same few bytes count as what they would decode to.
        let whole = w::Span {
            offset: 0,
            len: 1024,
        };
        let n = MAX_VALUE_BYTES / 1024 + 1;
        let mut nodes = vec![w::Node::Array((1..=n as u32).collect())];
        nodes.extend((0..n).map(|_| w::Node::Text(whole)));
        let err = decode_value(w::Value {
            nodes,
            strings: vec![b'x'; 1024],
        })
        .unwrap_err()
        .message;
        assert!(err.contains("more than the 16 MiB limit"), "{err}");
    }

    #[test]
    fn unreferenced_nodes_are_ignored() {
        let nodes = vec![w::Node::Boolean(true), w::Node::Text(sp("stray"))];
        assert_eq!(
            decode_value(pooled(nodes)).unwrap(),
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
                strings: vec![],
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
