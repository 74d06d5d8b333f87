//! The WIT codec on the host: [`PropertyValue`] ⇄ the node table of `cairn:deploy/types.value`,
//! and the engine's request/result types ⇄ their WIT records.
//!
//! # Node tables
//!
//! The table format — its rules, reading it in place and encoding into it — is `cairn-wire`'s,
//! shared with the guest SDK; this module binds it to wasmtime's generated types
//! (`bind_wit!`), describes the engine's values to its encoder ([`Engine`]) and decodes what
//! a guest sends into the engine's values with the engine's limits. Lists of primitives lower
//! into the guest as plain copies, so moving a value costs three allocations and no per-node
//! work in wasmtime; an empty map is no nodes at all (nothing to allocate).
//!
//! Decoding distrusts the table (it comes from the guest). Before anything is built, the table
//! must be whole nodes, not empty, within [`MAX_VALUE_BYTES`] and pass `cairn-wire`'s
//! validation under the host's rules ([`MAX_DEPTH`] levels, keys hashed with a random key):
//! every index in range and after its parent, every node and extra used at most once (sharing
//! would let a small table expand into an exponentially large value), extras of their node's
//! kind, resource IDs text or unknown, archive members assets or archives, no duplicate key,
//! spans inside the `strings` buffer and valid UTF-8. A fault is a [`ValueError`] naming the
//! node in the engine's words — never a panic. Nodes nothing refers to are checked but
//! otherwise ignored. Decoding then builds the value iteratively (last node first), so a
//! hostile table cannot overflow the host's stack, and parses every URN with the engine's
//! parser.
//!
//! # What a decoded value may hold
//!
//! A well-formed table must also hold a value the engine can store: the decoder notes NaN and
//! ±Inf numbers, keys longer than [`MAX_KEY_BYTES`] and nesting deeper than
//! [`MAX_VALUE_DEPTH`] as it goes, and when it saw one, the value is refused with the property
//! path the engine's own check ([`limits::check_properties`]) names
//! (`outputs: property tags.cost: NaN is not a number JSON can store …`). The common case (a
//! clean value) costs one comparison per node.
//!
//! # Results and requests
//!
//! Everything else a guest sends is checked where it is converted: IDs (at most
//! [`MAX_ID_BYTES`], no control characters, not empty where a resource must be named), names,
//! type tokens and URNs (the engine's parsers and limits), property keys of dependencies,
//! lists of keys and paths (at most [`MAX_LIST_ENTRIES`] entries of bounded length), custom
//! timeouts (finite, 0 to [`MAX_TIMEOUT_SECONDS`]). Messages (errors, check failures) are
//! cut to [`limits::MAX_MESSAGE_BYTES`] and at most [`MAX_FAILURES`] check failures are kept, with a
//! note of what was dropped. A `create` or `update` whose resource exists but whose result
//! cannot be accepted becomes an [`Unrecorded`] carrying the partial state the engine can still
//! record.
//!
//! # Values are checked where they cross the wasm boundary
//!
//! Everything a provider or program sends is decoded with the engine's limits
//! (`cairn_engine::limits`): NaN/±Inf, over-long keys and over-deep values are refused with the
//! property path; IDs, names, keys, lists, timeouts and messages are bounded. A `create`/`update`
//! that succeeded but whose result cannot be accepted fails with partial state (its ID and the
//! outputs that can be kept), so the resource is recorded, never left pending; an ID that cannot
//! name a resource is refused loudly.

use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Members};
use cairn_engine::deploy::provider as p;
use cairn_engine::limits::{
    self, MAX_ID_BYTES, MAX_KEY_BYTES, MAX_NAME_BYTES, MAX_URN_BYTES, MAX_VALUE_DEPTH,
};
use cairn_engine::path::PropertyPath;
use cairn_engine::state::codec::SIG_KEY;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{
    OutputValue, PropertyDependencies, PropertyMap, PropertyValue, ResourceReference,
};
use cairn_wire::{
    AssetSourceRef, Columns, Extra, ExtraRef, IndexedSource, IndexedSourceRef, Node, Rules, Shape,
    Walk, WireError, WitExtra,
};

use crate::bindings::cairn::deploy::engine as we;
use crate::bindings::cairn::deploy::types as w;

pub use cairn_wire::{WORDS, kind};

cairn_wire::bind_wit!(crate::bindings::cairn::deploy::types);

/// The deepest table the decoder builds at all (as deep as serde_json accepts). Values are
/// refused well before that, beyond [`MAX_VALUE_DEPTH`] levels (with the property path); this
/// bound only stops a hostile table before it is built.
pub const MAX_DEPTH: usize = 128;

/// How the host reads a guest's tables: at most [`MAX_DEPTH`] levels; what nothing refers to
/// ignored (every node is decoded anyway); duplicate keys found through a randomly keyed hash,
/// since the guest chooses the keys.
const RULES: Rules = Rules {
    max_depth: MAX_DEPTH,
    ignore_unused: true,
    untrusted: true,
};
/// The most entries a guest may return in one list of keys or paths (a diff's `replace-keys`,
/// a program's `ignore-changes`, dependencies of one property, ...).
pub const MAX_LIST_ENTRIES: usize = 10_000;

/// The longest property path a guest may return (a detailed diff's path, `ignore-changes`).
pub const MAX_PATH_BYTES: usize = 16 * 1024;

/// The most check failures kept from one result; the rest are counted in a last failure.
pub const MAX_FAILURES: usize = 100;

/// The longest custom timeout a program may ask for (7 days), in seconds.
pub const MAX_TIMEOUT_SECONDS: f64 = 7.0 * 86400.0;

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

/// The engine's values as `cairn-wire`'s encoder walks them.
pub struct Engine;

impl Walk for Engine {
    type Value = PropertyValue;
    type Map = PropertyMap;
    type Urn = Urn;

    #[inline]
    fn shape(value: &PropertyValue) -> Shape<'_, Engine> {
        match value {
            PropertyValue::Null => Shape::Null,
            PropertyValue::Bool(b) => Shape::Bool(*b),
            PropertyValue::Number(n) => Shape::Number(*n),
            PropertyValue::String(s) => Shape::Text(s),
            PropertyValue::Computed => Shape::Unknown,
            PropertyValue::Array(items) => Shape::Array(items),
            PropertyValue::Object(map) => Shape::Object(map.as_ref()),
            PropertyValue::Secret(inner) => Shape::Secret(inner.as_ref()),
            PropertyValue::Asset(asset) => Shape::Asset(asset),
            PropertyValue::Archive(archive) => Shape::Archive(archive),
            PropertyValue::ResourceReference(r) => Shape::Reference {
                urn: r.urn.as_str(),
                id: r.id.as_deref(),
                package_version: r.package_version.as_ref(),
            },
            PropertyValue::Output(o) => Shape::Output {
                value: o.value.as_deref(),
                secret: o.secret,
                dependencies: &o.dependencies,
            },
        }
    }

    #[inline]
    fn urn(urn: &Urn) -> &str {
        urn.as_str()
    }

    #[inline]
    fn entries(map: &PropertyMap) -> impl ExactSizeIterator<Item = (&String, &PropertyValue)> {
        map.iter()
    }
}

/// Encodes a value; the root is node 0.
pub fn encode_value(value: &PropertyValue) -> w::Value {
    cairn_wire::encode::<Engine, _>(value)
}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> w::Value {
    if map.is_empty() {
        // No nodes is an empty map (see the WIT); it allocates nothing.
        return w::Value::empty();
    }
    cairn_wire::encode_map::<Engine, _>(map)
}

// ---------------------------------------------------------------------------------------------
// Decoding (guest → host): validated, then built iteratively.

/// Decodes a node table into a value, refusing what the engine could not store (see the module
/// documentation).
pub fn decode_value(value: w::Value) -> Result<PropertyValue, ValueError> {
    let (root, suspect) = decode_table(value)?;
    if suspect {
        limits::check_value(&root).map_err(|e| value_error(e.to_string()))?;
    }
    Ok(root)
}

/// Decodes a node table whose root must be an object (or null / no nodes: an empty map),
/// refusing what the engine could not store.
pub fn decode_map(value: w::Value) -> Result<PropertyMap, ValueError> {
    let (map, suspect) = decode_map_unchecked(value)?;
    if suspect {
        limits::check_properties(&map).map_err(|e| value_error(e.to_string()))?;
    }
    Ok(map)
}

/// [`decode_map`] without the storability check: the map, and whether it may fail that check.
fn decode_map_unchecked(value: w::Value) -> Result<(PropertyMap, bool), ValueError> {
    if value.nodes.is_empty() {
        return Ok((PropertyMap::new(), false));
    }
    match decode_table(value)? {
        (PropertyValue::Object(map), suspect) => Ok((*map, suspect)),
        (PropertyValue::Null, _) => Ok((PropertyMap::new(), false)),
        (other, _) => Err(value_error(format!(
            "node 0: expected an object, found {}",
            other.kind()
        ))),
    }
}

/// Decodes a table structurally; the flag says whether the value may hold something the
/// engine cannot store (a non-finite number, a long key, deep nesting).
fn decode_table(mut value: w::Value) -> Result<(PropertyValue, bool), ValueError> {
    let len = cairn_wire::node_count(&value.nodes).map_err(|e| value_error(e.to_string()))?;
    if len == 0 {
        return Err(value_error("the value has no nodes (the root is node 0)"));
    }
    check_size(&value, len)?;
    let valid = cairn_wire::validate(&value, RULES).map_err(|e| fault(&value, e))?;
    let extras = std::mem::take(&mut value.extras);
    let mut decoder = Decoder {
        built: (0..len).map(|_| None).collect(),
        extras: extras.into_iter().map(Some).collect(),
        // A node's depth counts itself: a map's root object is one level above its values.
        suspect: valid.depth > MAX_VALUE_DEPTH + 1,
    };
    for i in (0..len).rev() {
        decoder.decode(Node::at(&value, i))?;
    }
    let root = decoder.built[0]
        .take()
        .ok_or_else(|| value_error("node 0: missing"))?;
    Ok((root, decoder.suspect))
}

/// What the decoded value will hold: text and keys as they will be copied (so many spans over
/// the same bytes cannot inflate a small buffer), plus per-node overhead, within
/// [`MAX_VALUE_BYTES`].
fn check_size(value: &w::Value, len: usize) -> Result<(), ValueError> {
    let mut size = 16usize.saturating_mul(len);
    for node in value.nodes.chunks_exact(WORDS) {
        size = size.saturating_add(node[4] as usize);
        if node[0] == kind::TEXT {
            size = size.saturating_add(node[2] as usize);
        }
    }
    size = value
        .extras
        .iter()
        .map(extra_bytes)
        .fold(size, usize::saturating_add);
    if size > MAX_VALUE_BYTES {
        return Err(value_error(format!(
            "the value is {:.1} MiB, more than the {} MiB limit on one value",
            size as f64 / (1024.0 * 1024.0),
            MAX_VALUE_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// Roughly what an extra costs once decoded: its strings.
fn extra_bytes(extra: &w::Extra) -> usize {
    let opt = |s: Option<&str>| s.map_or(0, str::len);
    match extra.view() {
        ExtraRef::Asset { hash, source } => {
            opt(hash)
                + match source {
                    AssetSourceRef::Text(t) | AssetSourceRef::Path(t) | AssetSourceRef::Uri(t) => {
                        t.len()
                    }
                    AssetSourceRef::HashOnly => 0,
                }
        }
        ExtraRef::Archive { hash, source } => {
            opt(hash)
                + match source {
                    IndexedSourceRef::Assets(m) => m.iter().map(|(k, _)| k.len() + 4).sum(),
                    IndexedSourceRef::Path(t) | IndexedSourceRef::Uri(t) => t.len(),
                    IndexedSourceRef::HashOnly => 0,
                }
        }
        ExtraRef::Reference {
            urn,
            package_version,
            ..
        } => urn.len() + opt(package_version),
        ExtraRef::Output { dependencies, .. } => dependencies.iter().map(String::len).sum(),
    }
}

/// A validation fault in the engine's words, naming the node at fault.
fn fault(table: &w::Value, e: WireError) -> ValueError {
    let len = table.nodes.len() / WORDS;
    let node = |n: u32| Node::at(table, n as usize);
    let message = match e {
        WireError::UnknownKind { node, kind } => format!("node {node}: unknown kind {kind}"),
        WireError::OutOfRange { node: n, index, .. }
        | WireError::NotAfterParent { node: n, index } => {
            let parent = node(n);
            match parent.kind() {
                kind::ARRAY | kind::OBJECT => {
                    let (first, count) = parent.operands();
                    format!(
                        "node {n}: its {count} children from node {first} are not after it in the table of {len} nodes"
                    )
                }
                _ => format!(
                    "node {n}: refers to node {index}, which is not after it in the table of {len} nodes"
                ),
            }
        }
        WireError::SharedNode { index } => {
            // Decoding last node first, the earlier of the two parents found it taken.
            let parent = cairn_wire::referrers(table, index).next().unwrap_or(0);
            format!("node {parent}: refers to node {index}, which another node already uses")
        }
        WireError::ExtraOutOfRange { node, index, len } => {
            format!("node {node}: refers to extra {index}, but there are only {len}")
        }
        WireError::SharedExtra { index } => {
            let user = cairn_wire::extra_referrers(table, index)
                .next()
                .unwrap_or(0);
            format!("node {user}: refers to extra {index}, which another node already uses")
        }
        WireError::WrongExtra {
            node,
            expected,
            found,
        } => {
            let article = if found.starts_with(['a', 'o']) {
                "an"
            } else {
                "a"
            };
            format!("node {node}: a {expected} node refers to {article} {found} extra")
        }
        WireError::BadReferenceId { node, kind } => {
            format!("node {node}: a resource reference's ID must be text or unknown, found {kind}")
        }
        WireError::DuplicateKey { node: n, key } => {
            if node(n).kind() == kind::ARCHIVE {
                format!("node {n}: archive member {key:?} appears twice")
            } else {
                format!("node {n}: key {key:?} appears twice")
            }
        }
        WireError::BadArchiveMember { node, key, kind } => format!(
            "node {node}: archive member {key:?} must be an asset or an archive, found {kind}"
        ),
        WireError::TooDeep { node, .. } => {
            format!("node {node}: the value is nested more than {MAX_VALUE_DEPTH} levels deep")
        }
        WireError::SpanOutOfRange {
            node: n,
            offset,
            len,
            buffer,
        } => format!(
            "node {n}: the {} span (offset {offset}, length {len}) is outside the {buffer}-byte string buffer",
            span_name(node(n), offset, len)
        ),
        WireError::InvalidUtf8 {
            node: n,
            offset,
            len,
        } => {
            let start = offset as usize;
            let bytes = table
                .strings
                .get(start..start + len as usize)
                .unwrap_or_default();
            let detail = std::str::from_utf8(bytes).err().map(|e| format!(": {e}"));
            format!(
                "node {n}: the {} span (offset {offset}, length {len}) is not valid UTF-8{}",
                span_name(node(n), offset, len),
                detail.unwrap_or_default()
            )
        }
        // Checked before validation (whole nodes, not empty) or not faults under the host's
        // rules (unused nodes and extras; a map's root, checked once decoded).
        other @ (WireError::Empty
        | WireError::WordCount { .. }
        | WireError::Unreferenced { .. }
        | WireError::UnusedExtra { .. }
        | WireError::NotAnObject { .. }) => other.to_string(),
    };
    value_error(message)
}

/// Which of a node's spans a span fault is about: its text, or its key in its parent.
fn span_name(node: Node<'_, w::Value>, offset: u32, len: u32) -> &'static str {
    if node.kind() == kind::TEXT && node.operands() == (offset, len) {
        "text"
    } else {
        "key"
    }
}

/// Decoded nodes waiting for their parents, and extras not yet claimed. The table was
/// validated: every child comes after its parent and is taken once, every extra once.
struct Decoder {
    built: Vec<Option<PropertyValue>>,
    extras: Vec<Option<w::Extra>>,
    /// Set on a non-finite number, a key longer than [`MAX_KEY_BYTES`] or nesting deeper than
    /// [`MAX_VALUE_DEPTH`]: the value is then checked whole, to name the property.
    suspect: bool,
}

impl Decoder {
    /// The decoded node `child` (validation guarantees it is there, and taken once).
    fn take(&mut self, child: usize) -> PropertyValue {
        self.built[child].take().unwrap_or(PropertyValue::Null)
    }

    fn decode(&mut self, node: Node<'_, w::Value>) -> Result<(), ValueError> {
        let i = node.index();
        let value = match node.kind() {
            kind::NULL => PropertyValue::Null,
            kind::BOOL => PropertyValue::Bool(node.flag()),
            kind::NUMBER => {
                let n = node.number();
                self.suspect |= !n.is_finite();
                PropertyValue::Number(n)
            }
            kind::TEXT => PropertyValue::String(node.text().to_owned()),
            kind::UNKNOWN => PropertyValue::Computed,
            kind::ARRAY => {
                PropertyValue::Array(node.children().map(|c| self.take(c.index())).collect())
            }
            kind::OBJECT => {
                let mut map = PropertyMap::with_capacity(node.children().len());
                for member in node.children() {
                    let key = member.key();
                    self.suspect |= key.len() > MAX_KEY_BYTES || key == SIG_KEY;
                    map.insert(key.to_owned(), self.take(member.index()));
                }
                PropertyValue::Object(Box::new(map))
            }
            kind::SECRET => PropertyValue::Secret(Box::new(self.take(node.operands().0 as usize))),
            _ => self.extra(i, node.operands().0)?,
        };
        self.built[i] = Some(value);
        Ok(())
    }

    /// An asset, archive, reference or output node, from its extra.
    fn extra(&mut self, i: usize, at: u32) -> Result<PropertyValue, ValueError> {
        let extra = self.extras.get_mut(at as usize).and_then(Option::take);
        let Some(extra) = extra else {
            return Err(value_error(format!(
                "node {i}: refers to extra {at}, which another node already uses"
            )));
        };
        Ok(match Extra::from(extra) {
            Extra::Asset(asset) => PropertyValue::Asset(Box::new(asset)),
            Extra::Archive { hash, source } => {
                let source = match source {
                    IndexedSource::Assets(members) => {
                        ArchiveSource::Assets(self.members(i, members)?)
                    }
                    IndexedSource::Path(p) => ArchiveSource::Path(p),
                    IndexedSource::Uri(u) => ArchiveSource::Uri(u),
                    IndexedSource::HashOnly => ArchiveSource::HashOnly,
                };
                PropertyValue::Archive(Box::new(Archive { hash, source }))
            }
            Extra::Reference {
                urn,
                id,
                package_version,
            } => PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: parse_urn(i, &urn)?,
                id: id.map(|c| Box::new(self.take(c as usize))),
                package_version,
            })),
            Extra::Output {
                value,
                secret,
                dependencies,
            } => PropertyValue::Output(Box::new(OutputValue {
                value: value.map(|c| Box::new(self.take(c as usize))),
                secret,
                dependencies: dependencies
                    .iter()
                    .map(|u| parse_urn(i, u))
                    .collect::<Result<_, _>>()?,
            })),
        })
    }

    /// A literal archive's members (validated: assets and archives, names unique).
    fn members(&mut self, i: usize, members: Vec<(String, u32)>) -> Result<Members, ValueError> {
        let mut map = Members::with_capacity_and_hasher(members.len(), Default::default());
        for (name, c) in members {
            let member = match self.take(c as usize) {
                PropertyValue::Asset(a) => ArchiveMember::Asset(*a),
                PropertyValue::Archive(a) => {
                    // Archives within archives count double against the depth limit
                    // (see `limits`): let the engine's check measure them.
                    self.suspect = true;
                    ArchiveMember::Archive(*a)
                }
                other => {
                    return Err(value_error(format!(
                        "node {i}: archive member {name:?} must be an asset or an archive, found {}",
                        other.kind()
                    )));
                }
            };
            map.insert(name, member);
        }
        Ok(map)
    }
}

fn parse_urn(node: usize, urn: &str) -> Result<Urn, ValueError> {
    Urn::parse(urn).map_err(|e| value_error(format!("node {node}: {e}")))
}

/// Parses a URN the guest sent in a result field (the engine's parser bounds its length and
/// refuses control characters).
pub(crate) fn result_urn(field: &str, urn: &str) -> Result<Urn, ValueError> {
    Urn::parse(urn).map_err(|e| value_error(format!("{field}: {e}")))
}

/// Parses a type token the guest sent.
pub(crate) fn type_token(field: &str, token: &str) -> Result<TypeToken, ValueError> {
    TypeToken::parse(token).map_err(|e| value_error(format!("{field}: invalid type token: {e}")))
}

pub(crate) fn field<T>(name: &str, r: Result<T, ValueError>) -> Result<T, ValueError> {
    r.map_err(|e| value_error(format!("{name}: {}", e.message)))
}

/// Untrusted text quoted in a message: cut to 128 bytes, control characters escaped.
pub(crate) fn quoted(text: &str) -> String {
    format!("{:?}", limits::cap_text(text, 128))
}

/// A message from a guest (an error, a check failure's reason), cut to
/// [`limits::MAX_MESSAGE_BYTES`]
/// with a note of what was dropped.
pub(crate) fn message(text: String) -> String {
    match limits::cap_message(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(cut) => cut,
    }
}

/// A name-like string the guest sent (a resource name, stack, project, package, version,
/// provider reference): at most `max` bytes, no control characters.
pub(crate) fn check_text(field: &str, text: &str, max: usize) -> Result<(), ValueError> {
    limits::check_len(field, text, max).map_err(|e| value_error(e.to_string()))?;
    if cairn_engine::text::has_unsafe(text) {
        return Err(value_error(format!(
            "the {field} {} contains control characters; it must be printable",
            quoted(text)
        )));
    }
    Ok(())
}

/// A resource ID the guest sent: at most [`MAX_ID_BYTES`], printable, and not empty when
/// `required` (a resource that exists must be named).
pub(crate) fn check_id(field: &str, id: &str, required: bool) -> Result<(), ValueError> {
    if required && id.is_empty() {
        return Err(value_error(format!("the {field} is empty")));
    }
    check_text(field, id, MAX_ID_BYTES)
}

/// A provider reference (`<provider URN>::<ID>`) the guest sent.
pub(crate) fn check_provider_ref(field: &str, reference: &str) -> Result<(), ValueError> {
    check_text(field, reference, MAX_URN_BYTES + 2 + MAX_ID_BYTES)
}

/// A list of keys or paths the guest sent: at most [`MAX_LIST_ENTRIES`] entries of at most
/// `max` bytes each.
pub(crate) fn check_keys(field: &str, keys: &[String], max: usize) -> Result<(), ValueError> {
    if keys.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "{field}: {} entries; at most {MAX_LIST_ENTRIES} are accepted",
            keys.len()
        )));
    }
    for (i, key) in keys.iter().enumerate() {
        limits::check_len("entry", key, max)
            .map_err(|e| value_error(format!("{field}[{i}]: {e}")))?;
    }
    Ok(())
}

/// A timeout in seconds the guest sent: finite, 0 (the default) to [`MAX_TIMEOUT_SECONDS`].
pub(crate) fn check_timeout(field: &str, seconds: f64) -> Result<(), ValueError> {
    if seconds.is_finite() && (0.0..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
        Ok(())
    } else {
        Err(value_error(format!(
            "{field}: {seconds:?} is not a usable timeout (expected a number of seconds from 0, the default, to {MAX_TIMEOUT_SECONDS})"
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// Requests (host → guest).

pub(crate) fn dependencies_to_wit(deps: &PropertyDependencies) -> Vec<w::PropertyDependencies> {
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
) -> Result<PropertyDependencies, ValueError> {
    if deps.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "{name}: {} properties; at most {MAX_LIST_ENTRIES} are accepted",
            deps.len()
        )));
    }
    deps.into_iter()
        .map(|d| {
            limits::check_len("property key", &d.property, MAX_KEY_BYTES)
                .map_err(|e| value_error(format!("{name}: {e}")))?;
            let at = format!("{name}.{}", quoted(&d.property));
            if d.urns.len() > MAX_LIST_ENTRIES {
                return Err(value_error(format!(
                    "{at}: {} URNs; at most {MAX_LIST_ENTRIES} are accepted",
                    d.urns.len()
                )));
            }
            let urns = d
                .urns
                .iter()
                .map(|u| result_urn(&at, u))
                .collect::<Result<_, _>>()?;
            Ok((d.property, urns))
        })
        .collect()
}

fn paths(paths: &[PropertyPath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

pub(crate) fn check_request(r: p::CheckRequest<'_>) -> w::CheckRequest {
    w::CheckRequest {
        urn: r.urn.to_string(),
        olds: encode_map(r.olds),
        news: encode_map(r.news),
        random_seed: r.random_seed.to_vec(),
    }
}

pub(crate) fn diff_request(r: p::DiffRequest<'_>) -> w::DiffRequest {
    w::DiffRequest {
        urn: r.urn.to_string(),
        id: r.id.to_owned(),
        old_inputs: encode_map(r.old_inputs),
        old_outputs: encode_map(r.old_outputs),
        news: encode_map(r.news),
        ignore_changes: paths(r.ignore_changes),
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

/// Check failures: each reason cut to [`limits::MAX_MESSAGE_BYTES`], each property path to
/// [`MAX_PATH_BYTES`]; at most [`MAX_FAILURES`] kept, then one failure counting the rest.
pub(crate) fn failures(f: Vec<w::CheckFailure>) -> Vec<p::CheckFailure> {
    let total = f.len();
    let mut kept: Vec<p::CheckFailure> = f
        .into_iter()
        .take(MAX_FAILURES)
        .map(|f| p::CheckFailure {
            property: limits::cap_text(&f.property, MAX_PATH_BYTES).into_owned(),
            reason: message(f.reason),
        })
        .collect();
    if total > MAX_FAILURES {
        kept.push(p::CheckFailure {
            property: String::new(),
            reason: format!(
                "… and {} more failures (at most {MAX_FAILURES} are kept)",
                total - MAX_FAILURES
            ),
        });
    }
    kept
}

/// `check`'s result. Providers mostly return the news they were sent: when the guest sends back
/// exactly the table it was given, `news` (the map that table was encoded from) is the result
/// and nothing is decoded.
pub(crate) fn check_result(
    r: w::CheckResult,
    sent: &w::Value,
    news: &PropertyMap,
) -> Result<p::CheckResult, ValueError> {
    // News returned unchanged (most checks) are copied, not decoded.
    let inputs = if same_table(&r.inputs, sent) {
        news.clone()
    } else {
        field("inputs", decode_map(r.inputs))?
    };
    Ok(p::CheckResult {
        inputs,
        failures: failures(r.failures),
    })
}

/// A map the guest returned as `name`: `original` when the guest sent back exactly the table
/// `sent` (encoded from `original`), else the returned table decoded.
fn unless_sent(
    name: &str,
    returned: w::Value,
    sent: &w::Value,
    original: PropertyMap,
) -> Result<PropertyMap, ValueError> {
    if same_table(&returned, sent) {
        Ok(original)
    } else {
        field(name, decode_map(returned))
    }
}

/// Whether two tables are identical (compared column by column; tables with extras are rare
/// and never compared).
fn same_table(a: &w::Value, b: &w::Value) -> bool {
    a.extras.is_empty() && b.extras.is_empty() && a.nodes == b.nodes && a.strings == b.strings
}

pub(crate) fn diff_result(r: w::DiffResult) -> Result<p::DiffResult, ValueError> {
    check_keys("replace-keys", &r.replace_keys, MAX_KEY_BYTES)?;
    check_keys("changed-keys", &r.changed_keys, MAX_KEY_BYTES)?;
    check_keys("stable-keys", &r.stable_keys, MAX_PATH_BYTES)?;
    if let Some(entries) = &r.detailed_diff {
        if entries.len() > MAX_LIST_ENTRIES {
            return Err(value_error(format!(
                "detailed-diff: {} entries; at most {MAX_LIST_ENTRIES} are accepted",
                entries.len()
            )));
        }
        for (i, d) in entries.iter().enumerate() {
            limits::check_len("path", &d.path, MAX_PATH_BYTES)
                .map_err(|e| value_error(format!("detailed-diff[{i}]: {e}")))?;
        }
    }
    let detailed_diff = r.detailed_diff.map(|entries| {
        entries
            .into_iter()
            .map(|d| {
                (
                    d.path,
                    p::PropertyDiff {
                        kind: d.kind.into(),
                        input_diff: d.input_diff,
                    },
                )
            })
            .collect()
    });
    Ok(p::DiffResult {
        changes: r.changes.into(),
        replace_keys: r.replace_keys,
        stable_keys: r.stable_keys,
        changed_keys: r.changed_keys,
        detailed_diff,
        delete_before_replace: r.delete_before_replace,
    })
}

/// A `create` or `update` whose resource exists (or may exist) but whose result cannot be
/// accepted whole: why, and what the engine can still record (`None` when the resource cannot
/// be named, e.g. an empty or unprintable ID).
#[derive(Debug)]
pub(crate) struct Unrecorded {
    pub error: ValueError,
    pub partial: Option<Box<p::PartialState>>,
}

/// Properties a guest returned for a resource that exists: all of them, or — when some cannot
/// be stored — the error and the top-level properties that can.
fn outputs_of_existing(value: w::Value) -> Result<PropertyMap, (ValueError, PropertyMap)> {
    let (map, suspect) = match decode_map_unchecked(value) {
        Ok(decoded) => decoded,
        // A malformed table: nothing in it can be trusted.
        Err(e) => return Err((e, PropertyMap::new())),
    };
    if !suspect {
        return Ok(map);
    }
    let problem = match limits::check_properties(&map) {
        Err(e) => value_error(e.to_string()),
        Ok(()) => return Ok(map),
    };
    let kept = map
        .into_iter()
        .filter(|(key, value)| key.len() <= MAX_KEY_BYTES && limits::check_value(value).is_ok())
        .collect();
    Err((problem, kept))
}

fn field_error(name: &str, e: ValueError) -> ValueError {
    value_error(format!("{name}: {}", e.message))
}

/// `create`'s result. Outside a preview the ID must name the resource; outputs that cannot be
/// stored make it [`Unrecorded`] with the ID and the outputs that can be kept.
pub(crate) fn create_result(
    r: w::CreateResult,
    preview: bool,
) -> Result<p::CreateResult, Unrecorded> {
    // A preview creates nothing; its ID is ignored, but must still be printable if set.
    check_id("ID", &r.id, !preview).map_err(|e| Unrecorded {
        error: value_error(if preview {
            format!("id: {}", e.message)
        } else {
            format!(
                "id: {} (Cairn cannot track a resource it cannot name: if the provider created it, delete it by hand)",
                e.message
            )
        }),
        partial: None,
    })?;
    match outputs_of_existing(r.outputs) {
        Ok(outputs) => Ok(p::CreateResult { id: r.id, outputs }),
        Err((error, kept)) => Err(Unrecorded {
            error: field_error("outputs", error),
            partial: (!preview).then(|| {
                Box::new(p::PartialState {
                    id: r.id,
                    outputs: kept,
                    ..p::PartialState::default()
                })
            }),
        }),
    }
}

/// `read`'s result. A provider that finds nothing changed (and the SDK's default `read`)
/// returns the tables it was sent: then the request's own maps are the result.
pub(crate) fn read_result(
    r: w::ReadResult,
    sent: &w::ReadRequest,
    request: p::ReadRequest,
) -> Result<p::ReadResult, ValueError> {
    // An empty ID says the resource is gone.
    field("id", check_id("ID", &r.id, false))?;
    Ok(p::ReadResult {
        id: r.id,
        inputs: unless_sent("inputs", r.inputs, &sent.inputs, request.inputs)?,
        outputs: unless_sent("outputs", r.outputs, &sent.state, request.state)?,
    })
}

/// `update`'s result for the resource `id`: outputs that cannot be stored make it
/// [`Unrecorded`] with the outputs that can be kept (outside a preview).
pub(crate) fn update_result(
    r: w::UpdateResult,
    id: &str,
    preview: bool,
) -> Result<p::UpdateResult, Unrecorded> {
    match outputs_of_existing(r.outputs) {
        Ok(outputs) => Ok(p::UpdateResult { outputs }),
        Err((error, kept)) => Err(Unrecorded {
            error: field_error("outputs", error),
            partial: (!preview).then(|| {
                Box::new(p::PartialState {
                    id: id.to_owned(),
                    outputs: kept,
                    ..p::PartialState::default()
                })
            }),
        }),
    }
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

/// What a failed operation left behind, as the guest describes it: the partial state the
/// engine can record (the ID when usable, with the inputs and outputs that can be stored), and
/// what could not be taken, if anything.
pub(crate) fn partial_state(s: w::PartialState) -> (Option<p::PartialState>, Option<String>) {
    if let Err(e) = check_id("ID", &s.id, true) {
        return (
            None,
            Some(format!(
                "{}; the resource it left behind cannot be recorded",
                e.message
            )),
        );
    }
    let mut problems = Vec::new();
    let mut keep = |name: &str, value: w::Value| match outputs_of_existing(value) {
        Ok(map) => map,
        Err((e, kept)) => {
            problems.push(format!("partial {name}: {}", e.message));
            kept
        }
    };
    let inputs = keep("inputs", s.inputs);
    let outputs = keep("outputs", s.outputs);
    let problem = (!problems.is_empty()).then(|| {
        format!(
            "{}; the resource is recorded with ID {} and the properties that could be kept",
            problems.join("; "),
            quoted(&s.id)
        )
    });
    (
        Some(p::PartialState {
            id: s.id,
            inputs,
            outputs,
            reasons: vec![],
        }),
        problem,
    )
}

// ---------------------------------------------------------------------------------------------
// Engine callbacks (guest → host → guest).

/// A guest's `register-resource` request as the monitor's request.
pub(crate) fn register_resource_request(
    r: we::RegisterResourceRequest,
) -> Result<cairn_engine::deploy::program::RegisterResourceRequest, ValueError> {
    use cairn_engine::deploy::program::{RegisterResourceRequest, ResourceOptions};
    let resource_type = type_token("resource-type", &r.resource_type)?;
    check_text("resource name", &r.name, MAX_NAME_BYTES)?;
    if let Some(provider) = &r.provider {
        check_provider_ref("provider reference", provider)?;
    }
    if r.dependencies.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "dependencies: {} URNs; at most {MAX_LIST_ENTRIES} are accepted",
            r.dependencies.len()
        )));
    }
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
    use cairn_engine::asset::{Asset, AssetSource};
    use cairn_engine::props;

    use super::*;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::random:index:Thing::{name}")).unwrap()
    }

    /// One value of every kind, nested.
    fn every_kind() -> PropertyValue {
        let mut members = Members::default();
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
        PropertyValue::from(props! {
            "null" => PropertyValue::Null,
            "bool" => true,
            "number" => 1.5,
            "string" => "text",
            "array" => vec![PropertyValue::from(1i64), PropertyValue::from("two")],
            "object" => PropertyValue::from(props! {"inner" => false}),
            "asset_path" => PropertyValue::Asset(Box::new(Asset { hash: None, source: AssetSource::Path("f".into()) })),
            "asset_uri" => PropertyValue::Asset(Box::new(Asset { hash: None, source: AssetSource::Uri("https://x/y".into()) })),
            "asset_hash" => PropertyValue::Asset(Box::new(Asset { hash: Some("ab".into()), source: AssetSource::HashOnly })),
            "archive" => PropertyValue::Archive(Box::new(Archive { hash: None, source: ArchiveSource::Assets(members) })),
            "archive_uri" => PropertyValue::Archive(Box::new(Archive { hash: Some("cd".into()), source: ArchiveSource::Uri("file:///a.tgz".into()) })),
            "archive_hash" => PropertyValue::Archive(Box::new(Archive { hash: Some("ef".into()), source: ArchiveSource::HashOnly })),
            "ref" => PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn("a"),
                id: Some(Box::new(PropertyValue::from("id-1"))),
                package_version: Some("1.2.3".into()),
            })),
            "ref_unknown_id" => PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn("b"),
                id: Some(Box::new(PropertyValue::Computed)),
                package_version: None,
            })),
            "component_ref" => PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn("c"),
                id: None,
                package_version: None,
            })),
            "secret" => PropertyValue::secret(PropertyValue::from(props! {"pw" => "hunter2"})),
            "unknown" => PropertyValue::Computed,
            "output" => PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new(PropertyValue::from("v"))),
                secret: true,
                dependencies: vec![urn("a"), urn("b")],
            })),
            "unknown_output" => PropertyValue::Output(Box::new(OutputValue {
                value: None,
                secret: false,
                dependencies: vec![],
            })),
        })
    }

    #[test]
    fn every_kind_round_trips() {
        let value = every_kind();
        let encoded = encode_value(&value);
        assert_eq!(encoded.nodes.len() % WORDS, 0);
        assert_eq!(decode_value(encoded.clone()).unwrap(), value);
        // Every index points forward.
        let forward = |i: usize, c: u32| assert!(c as usize > i, "node {i} refers to {c}");
        for (i, node) in encoded.nodes.chunks(WORDS).enumerate() {
            let (a, b) = (node[1], node[2]);
            match node[0] {
                kind::ARRAY | kind::OBJECT if b > 0 => forward(i, a),
                kind::SECRET => forward(i, a),
                kind::ARCHIVE | kind::REFERENCE | kind::OUTPUT => {
                    match &encoded.extras[a as usize] {
                        w::Extra::Archive(w::Archive {
                            source: w::ArchiveSource::Assets(m),
                            ..
                        }) => m.iter().for_each(|(_, c)| forward(i, *c)),
                        w::Extra::ResourceReference(r) => {
                            r.id.into_iter().for_each(|c| forward(i, c))
                        }
                        w::Extra::Output(o) => o.value.into_iter().for_each(|c| forward(i, c)),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// The string buffer hand-written test values share: `sp` finds a span in it.
    const POOL: &str = "k m x s n stray|not an asset";

    fn sp(s: &str) -> (u32, u32) {
        let offset = POOL.find(s).expect("in the pool");
        (offset as u32, s.len() as u32)
    }

    /// A hand-written node: kind, `a`, `b` and its key (offset, length).
    #[derive(Clone, Copy)]
    struct N(u32, u32, u32, (u32, u32));

    fn null() -> N {
        N(kind::NULL, 0, 0, (0, 0))
    }
    fn text(s: &str) -> N {
        let (offset, len) = sp(s);
        N(kind::TEXT, offset, len, (0, 0))
    }
    fn node(kind: u32, a: u32, b: u32) -> N {
        N(kind, a, b, (0, 0))
    }
    impl N {
        fn key(self, key: &str) -> N {
            N(self.0, self.1, self.2, sp(key))
        }
        fn raw_key(self, offset: u32, len: u32) -> N {
            N(self.0, self.1, self.2, (offset, len))
        }
    }

    fn table(nodes: &[N], strings: &[u8], extras: Vec<w::Extra>) -> w::Value {
        w::Value {
            nodes: nodes
                .iter()
                .flat_map(|n| [n.0, n.1, n.2, n.3.0, n.3.1])
                .collect(),
            strings: strings.to_vec(),
            extras,
        }
    }

    fn pooled(nodes: &[N]) -> w::Value {
        table(nodes, POOL.as_bytes(), vec![])
    }

    fn empty() -> w::Value {
        table(&[], &[], vec![])
    }

    #[test]
    fn tables_returned_unchanged_are_not_decoded() {
        let sent_map = props! {"a" => "b"};
        // The engine's own map stands for the sent table: when it comes back unchanged the
        // result is that map (told apart here by giving a different one), else it is decoded.
        let engine_map = props! {"reused" => true};
        let urn = Urn::parse("urn:pulumi:s::p::t:index:T::n").unwrap();
        let no_olds = PropertyMap::new();
        let check = p::CheckRequest {
            urn: &urn,
            olds: &no_olds,
            news: &sent_map,
            random_seed: &[],
        };
        let sent = check_request(check);
        let back = |inputs| w::CheckResult {
            inputs,
            failures: vec![],
        };
        let same = check_result(back(sent.news.clone()), &sent.news, &engine_map);
        assert_eq!(same.unwrap().inputs, engine_map);
        let changed = encode_map(&props! {"a" => "c"});
        let decoded = check_result(back(changed), &sent.news, &engine_map);
        assert_eq!(decoded.unwrap().inputs, props! {"a" => "c"});

        let read = |inputs: PropertyMap, state: PropertyMap| p::ReadRequest {
            urn: urn.clone(),
            id: "i".into(),
            inputs,
            state,
        };
        let sent = read_request(&read(sent_map.clone(), sent_map.clone()));
        let result = w::ReadResult {
            id: "i".into(),
            inputs: sent.inputs.clone(),
            outputs: encode_map(&props! {"drifted" => 1}),
        };
        let r = read_result(result, &sent, read(engine_map.clone(), engine_map.clone())).unwrap();
        assert_eq!(r.inputs, engine_map);
        assert_eq!(r.outputs, props! {"drifted" => 1});
    }

    #[test]
    fn maps_encode_as_objects_rooted_at_zero() {
        // The table's layout is cairn-wire's (tested there); the host's part is the root and
        // the empty map.
        let map = props! {"a" => 1i64, "b" => vec![PropertyValue::from(true)]};
        let encoded = encode_map(&map);
        assert_eq!(&encoded.nodes[..3], [kind::OBJECT, 1, 2]);
        assert!(encoded.extras.is_empty());
        assert_eq!(decode_map(encoded).unwrap(), map);
        assert_eq!(decode_map(empty()).unwrap(), PropertyMap::new());
        // An empty map is no nodes at all (nothing to allocate).
        assert_eq!(encode_map(&PropertyMap::new()), empty());
    }

    #[test]
    fn guest_tables_are_decoded_from_hand_written_nodes() {
        // What a guest SDK might send: root object with a secret array.
        let nodes = [
            node(kind::OBJECT, 1, 2),
            node(kind::SECRET, 3, 0).key("s"),
            node(kind::UNKNOWN, 0, 0).key("n"),
            node(kind::ARRAY, 4, 1),
            text("x"),
        ];
        assert_eq!(
            decode_map(pooled(&nodes)).unwrap(),
            props! {
                "s" => PropertyValue::secret(vec![PropertyValue::from("x")].into()),
                "n" => PropertyValue::Computed,
            }
        );
    }

    fn decode_err(value: w::Value) -> String {
        decode_value(value).unwrap_err().message
    }

    #[test]
    fn malformed_tables_are_errors_not_panics() {
        let reference = |id| {
            w::Extra::ResourceReference(w::ResourceReference {
                urn: "urn:pulumi:s::p::t:m:T::n".into(),
                id,
                package_version: None,
            })
        };
        let cases: Vec<(w::Value, &str)> = vec![
            (empty(), "the value has no nodes"),
            (
                w::Value {
                    nodes: vec![0; 7],
                    ..pooled(&[null()])
                },
                "the value has 7 words, which is not a whole number of nodes (5 words each)",
            ),
            (pooled(&[node(42, 0, 0)]), "node 0: unknown kind 42"),
            (
                pooled(&[node(kind::ARRAY, 5, 1)]),
                "node 0: its 1 children from node 5 are not after it in the table of 1 nodes",
            ),
            (
                pooled(&[node(kind::ARRAY, 0, 1)]),
                "node 0: its 1 children from node 0 are not after it",
            ),
            (
                pooled(&[null(), node(kind::ARRAY, 0, 1)]),
                "node 1: its 1 children from node 0 are not after it",
            ),
            (
                pooled(&[node(kind::ARRAY, 1, u32::MAX), null()]),
                "node 0: its 4294967295 children from node 1 are not after it",
            ),
            (
                pooled(&[node(kind::ARRAY, 1, 2), node(kind::SECRET, 2, 0), null()]),
                "node 0: refers to node 2, which another node already uses",
            ),
            (
                pooled(&[node(kind::SECRET, u32::MAX, 0)]),
                "node 0: refers to node 4294967295",
            ),
            (
                pooled(&[node(kind::OBJECT, 1, 2), null().key("k"), null().key("k")]),
                "node 0: key \"k\" appears twice",
            ),
            (
                pooled(&[node(kind::ASSET, 0, 0)]),
                "node 0: refers to extra 0, but there are only 0",
            ),
            (
                table(
                    &[
                        node(kind::ARRAY, 1, 2),
                        node(kind::REFERENCE, 0, 0),
                        node(kind::REFERENCE, 0, 0),
                    ],
                    POOL.as_bytes(),
                    vec![reference(None)],
                ),
                "node 1: refers to extra 0, which another node already uses",
            ),
            (
                table(&[node(kind::OUTPUT, 0, 0)], &[], vec![reference(None)]),
                "node 0: a output node refers to a resource reference extra",
            ),
            (
                table(
                    &[node(kind::REFERENCE, 0, 0)],
                    &[],
                    vec![w::Extra::ResourceReference(w::ResourceReference {
                        urn: "nope".into(),
                        id: None,
                        package_version: None,
                    })],
                ),
                "node 0: invalid URN \"nope\"",
            ),
            (
                table(
                    &[node(kind::REFERENCE, 0, 0), node(kind::NUMBER, 0, 0)],
                    &[],
                    vec![reference(Some(1))],
                ),
                "node 0: a resource reference's ID must be text or unknown, found number",
            ),
            (
                table(
                    &[node(kind::ARCHIVE, 0, 0), text("not an asset")],
                    POOL.as_bytes(),
                    vec![w::Extra::Archive(w::Archive {
                        hash: None,
                        source: w::ArchiveSource::Assets(vec![("m".into(), 1)]),
                    })],
                ),
                "node 0: archive member \"m\" must be an asset or an archive, found string",
            ),
            (
                table(
                    &[node(kind::OUTPUT, 0, 0)],
                    &[],
                    vec![w::Extra::Output(w::OutputValue {
                        value: None,
                        secret: false,
                        dependencies: vec!["x".into()],
                    })],
                ),
                "node 0: invalid URN \"x\"",
            ),
            (
                pooled(&[node(kind::TEXT, 20, 100)]),
                "node 0: the text span (offset 20, length 100) is outside the 28-byte string buffer",
            ),
            (
                pooled(&[node(kind::TEXT, u32::MAX, 1)]),
                "node 0: the text span (offset 4294967295, length 1) is outside",
            ),
            (
                pooled(&[
                    node(kind::ARRAY, 1, 1),
                    node(kind::OBJECT, 2, 1),
                    null().raw_key(28, 1),
                ]),
                "node 2: the key span (offset 28, length 1) is outside",
            ),
        ];
        for (value, expected) in cases {
            let err = decode_err(value);
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        let err = decode_map(pooled(&[text("x")])).unwrap_err();
        assert_eq!(err.message, "node 0: expected an object, found string");

        // Spans must cover valid UTF-8: not cut mid-character, not stray bytes.
        for (nodes, strings, expected) in [
            (
                vec![node(kind::TEXT, 0, 1)],
                "é".as_bytes(),
                "node 0: the text span (offset 0, length 1) is not valid UTF-8",
            ),
            (
                vec![node(kind::TEXT, 1, 1)],
                "é".as_bytes(),
                "node 0: the text span (offset 1, length 1) is not valid UTF-8",
            ),
            (
                vec![node(kind::OBJECT, 1, 1), null().raw_key(0, 2)],
                &[0x61, 0xff][..],
                "node 1: the key span (offset 0, length 2) is not valid UTF-8",
            ),
        ] {
            let err = decode_err(table(&nodes, strings, vec![]));
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        // Bytes no span covers are not checked; spans may overlap and come in any order.
        assert_eq!(
            decode_value(table(
                &[
                    node(kind::ARRAY, 1, 3),
                    node(kind::TEXT, 1, 2),
                    node(kind::TEXT, 0, 3),
                    node(kind::TEXT, 3, 0),
                ],
                &[b'a', 0xc3, 0xa9, 0xff],
                vec![],
            ))
            .unwrap(),
            PropertyValue::Array(vec!["é".into(), "aé".into(), "".into()])
        );
    }

    #[test]
    fn sharing_cannot_blow_up_and_depth_is_bounded() {
        // A chain 100,000 deep decodes without recursion and is refused by the depth limit.
        let chain = |n: u32| {
            let mut nodes: Vec<N> = (0..n - 1).map(|i| node(kind::ARRAY, i + 1, 1)).collect();
            nodes.push(null());
            pooled(&nodes)
        };
        let err = decode_err(chain(100_000));
        assert!(err.contains("nested more than 64 levels deep"), "{err}");
        // Within MAX_DEPTH the value is built and refused with its path; exactly the engine's
        // limit is fine (64 arrays around a null: the null is 64 levels deep).
        let err = decode_err(chain(MAX_VALUE_DEPTH as u32 + 2));
        assert_eq!(
            err,
            format!(
                "property {}: the value is nested more than 64 levels deep",
                "[0]".repeat(MAX_VALUE_DEPTH + 1)
            )
        );
        decode_value(chain(MAX_VALUE_DEPTH as u32 + 1)).unwrap();
        // In a map the root object is the first level.
        let object_chain = |n: u32| {
            let mut nodes = vec![node(kind::OBJECT, 1, 1)];
            nodes.extend((1..n).map(|i| node(kind::ARRAY, i + 1, 1)));
            nodes[1] = nodes[1].key("k");
            nodes.push(null());
            pooled(&nodes)
        };
        decode_map(object_chain(MAX_VALUE_DEPTH as u32)).unwrap();
        let err = decode_map(object_chain(MAX_VALUE_DEPTH as u32 + 1))
            .unwrap_err()
            .message;
        assert_eq!(
            err,
            format!(
                "property k{}: the value is nested more than 64 levels deep",
                "[0]".repeat(MAX_VALUE_DEPTH)
            )
        );
    }

    #[test]
    fn values_the_engine_cannot_store_are_refused_with_their_path() {
        let number = |n: f64| {
            let bits = n.to_bits();
            node(kind::NUMBER, bits as u32, (bits >> 32) as u32)
        };
        let cases = [
            (
                vec![node(kind::OBJECT, 1, 1), number(f64::NAN).key("n")],
                "property n: NaN is not a number JSON can store (NaN and infinities are refused)",
            ),
            (
                vec![
                    node(kind::OBJECT, 1, 1),
                    node(kind::SECRET, 2, 0).key("s"),
                    node(kind::ARRAY, 3, 2),
                    null(),
                    number(f64::NEG_INFINITY),
                ],
                "property s[1]: -inf is not a number JSON can store (NaN and infinities are refused)",
            ),
        ];
        for (nodes, expected) in cases {
            assert_eq!(decode_map(pooled(&nodes)).unwrap_err().message, expected);
        }
        // A long key.
        let key = "k".repeat(MAX_KEY_BYTES + 1);
        let value = table(
            &[
                node(kind::OBJECT, 1, 1),
                null().raw_key(0, key.len() as u32),
            ],
            key.as_bytes(),
            vec![],
        );
        assert_eq!(
            decode_map(value).unwrap_err().message,
            format!(
                "property [\"{}…\"]: the key is 1025 bytes long; keys may be at most 1024 bytes",
                "k".repeat(64)
            )
        );
        // Finite numbers and keys at the limit are fine.
        let key = "k".repeat(MAX_KEY_BYTES);
        let value = table(
            &[
                node(kind::OBJECT, 1, 1),
                number(f64::MAX).raw_key(0, key.len() as u32),
            ],
            key.as_bytes(),
            vec![],
        );
        assert_eq!(decode_map(value).unwrap().len(), 1);
        // Archives within archives count as levels too.
        let mut archive = Archive {
            hash: None,
            source: ArchiveSource::HashOnly,
        };
        for _ in 0..MAX_VALUE_DEPTH + 1 {
            let mut members = Members::default();
            members.insert("a".to_owned(), ArchiveMember::Archive(archive));
            archive = Archive {
                hash: None,
                source: ArchiveSource::Assets(members),
            };
        }
        let err = decode_value(encode_value(&PropertyValue::Archive(Box::new(archive))))
            .unwrap_err()
            .message;
        assert_eq!(
            err,
            "property (root): the value is nested more than 64 levels deep"
        );
    }

    #[test]
    fn results_are_checked_and_created_resources_salvaged() {
        let nan = encode_map(&props! {"ok" => 1i64, "bad" => f64::NAN});
        // create: a usable ID with bad outputs keeps the ID and the good outputs.
        let err = create_result(
            w::CreateResult {
                id: "i-1".into(),
                outputs: nan.clone(),
            },
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.error.message,
            "outputs: property bad: NaN is not a number JSON can store (NaN and infinities are refused)"
        );
        let partial = err.partial.unwrap();
        assert_eq!(
            (partial.id.as_str(), partial.outputs),
            ("i-1", props! {"ok" => 1i64})
        );
        // In a preview, nothing was created.
        let err = create_result(
            w::CreateResult {
                id: String::new(),
                outputs: nan.clone(),
            },
            true,
        )
        .unwrap_err();
        assert!(err.partial.is_none());
        // An unusable ID: nothing can be recorded.
        for (id, expected) in [
            ("", "id: the ID is empty"),
            (
                "a\u{7}",
                "id: the ID \"a\\u{7}\" contains control characters",
            ),
        ] {
            let err = create_result(
                w::CreateResult {
                    id: id.into(),
                    outputs: empty(),
                },
                false,
            )
            .unwrap_err();
            assert!(
                err.error.message.starts_with(expected),
                "{}",
                err.error.message
            );
            assert!(err.partial.is_none());
        }
        // update: the request's ID.
        let err = update_result(w::UpdateResult { outputs: nan }, "i-2", false).unwrap_err();
        assert_eq!(err.partial.unwrap().id, "i-2");

        // Check failures are cut.
        let many: Vec<w::CheckFailure> = (0..MAX_FAILURES + 5)
            .map(|i| w::CheckFailure {
                property: "p".repeat(MAX_PATH_BYTES + 1),
                reason: format!("r{i}"),
            })
            .collect();
        let kept = failures(many);
        assert_eq!(kept.len(), MAX_FAILURES + 1);
        assert!(kept[0].property.ends_with("… [1 more bytes dropped]"));
        assert_eq!(
            kept[MAX_FAILURES].reason,
            "… and 5 more failures (at most 100 are kept)"
        );
    }

    #[test]
    fn engine_callback_requests_are_checked() {
        let good = we::RegisterResourceRequest {
            resource_type: "random:index:Thing".into(),
            name: "child".into(),
            custom: true,
            parent: None,
            inputs: empty(),
            property_dependencies: vec![],
            dependencies: vec![],
            provider: None,
            protect: false,
        };
        let cases = [
            (
                we::RegisterResourceRequest {
                    name: "\u{1b}[2J".into(),
                    ..good.clone()
                },
                "the resource name \"\\u{1b}[2J\" contains control characters; it must be printable",
            ),
            (
                we::RegisterResourceRequest {
                    name: "n".repeat(MAX_NAME_BYTES + 1),
                    ..good.clone()
                },
                "the resource name is 1025 bytes long; at most 1024 bytes are allowed",
            ),
            (
                we::RegisterResourceRequest {
                    provider: Some("p\n".into()),
                    ..good.clone()
                },
                "the provider reference \"p\\n\" contains control characters; it must be printable",
            ),
            (
                we::RegisterResourceRequest {
                    inputs: encode_map(&props! {"x" => f64::INFINITY}),
                    ..good.clone()
                },
                "inputs: property x: inf is not a number JSON can store (NaN and infinities are refused)",
            ),
            (
                we::RegisterResourceRequest {
                    property_dependencies: vec![w::PropertyDependencies {
                        property: "k".repeat(MAX_KEY_BYTES + 1),
                        urns: vec![],
                    }],
                    ..good.clone()
                },
                "property-dependencies: the property key is 1025 bytes long; at most 1024 bytes are allowed",
            ),
            (
                we::RegisterResourceRequest {
                    dependencies: vec!["urn:pulumi:s::p::t:m:T::\u{1b}x".into()],
                    ..good.clone()
                },
                "dependencies: invalid URN",
            ),
        ];
        for (request, expected) in cases {
            let err = register_resource_request(request).unwrap_err().message;
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
        register_resource_request(good).unwrap();
    }

    #[test]
    fn oversized_values_are_refused() {
        let err = decode_err(table(
            &[node(kind::TEXT, 0, MAX_VALUE_BYTES as u32)],
            &vec![b'x'; MAX_VALUE_BYTES],
            vec![],
        ));
        assert!(
            err.starts_with("the value is 16.0 MiB, more than the 16 MiB limit"),
            "{err}"
        );
        // Many spans over the same few bytes count as what they would decode to.
        let n = MAX_VALUE_BYTES / 1024 + 1;
        let mut nodes = vec![node(kind::ARRAY, 1, n as u32)];
        nodes.extend((0..n).map(|_| node(kind::TEXT, 0, 1024)));
        let err = decode_err(table(&nodes, &[b'x'; 1024], vec![]));
        assert!(err.contains("more than the 16 MiB limit"), "{err}");
    }

    #[test]
    fn unreferenced_nodes_are_ignored() {
        let nodes = [node(kind::BOOL, 1, 0), text("stray")];
        assert_eq!(
            decode_value(pooled(&nodes)).unwrap(),
            PropertyValue::Bool(true)
        );
    }

    #[test]
    fn columns_are_sized_before_encoding() {
        let map = props! {
            "name" => "a-name",
            "tags" => props! {"env" => "dev", "team" => PropertyValue::Secret(Box::new("x".into()))},
            "ports" => PropertyValue::Array(vec![80.0.into(), "eighty".into()]),
        };
        let value = encode_map(&map);
        // Allocated once at their final size: nothing grew (and was copied) while encoding.
        assert_eq!(value.nodes.capacity(), value.nodes.len());
        assert_eq!(value.strings.capacity(), value.strings.len());
        assert_eq!(decode_map(value).unwrap(), map);
    }

    #[test]
    fn requests_and_results_convert() {
        let req = p::DiffRequest {
            urn: &urn("a"),
            id: "id",
            old_inputs: &props! {"x" => 1i64},
            old_outputs: &props! {},
            news: &props! {"x" => 2i64},
            ignore_changes: &[PropertyPath::parse("tags.env").unwrap()],
        };
        let w = diff_request(req);
        assert_eq!(w.urn, req.urn.to_string());
        assert_eq!(w.ignore_changes, ["tags.env"]);
        assert_eq!(&decode_map(w.news).unwrap(), req.news);

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

        let err = create_result(
            w::CreateResult {
                id: "i".into(),
                outputs: pooled(&[node(kind::SECRET, 0, 0)]),
            },
            false,
        )
        .unwrap_err();
        assert!(
            err.error
                .message
                .starts_with("outputs: node 0: refers to node 0"),
            "{}",
            err.error.message
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

        // Any type a URN can hold passes here (the engine asks a custom resource's type to
        // name its package); one a URN cannot hold is refused at the boundary.
        let bad = we::RegisterResourceRequest {
            resource_type: "my:mod$x:Thing".into(),
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
