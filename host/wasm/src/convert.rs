//! The WIT codec: [`PropertyValue`] ⇄ the node table of `cairn:deploy/types.value`, and the
//! engine's request/result types ⇄ their WIT records.
//!
//! # Node tables
//!
//! WIT has no recursive types, so a value is a table of nodes that refer to each other by
//! index: five words per node in `nodes` (kind, two operands, key span), one `strings` buffer,
//! and `extras` for assets, archives, references and outputs (the table in `wit/provider.wit`
//! has every code). Lists of primitives lower into the guest as plain copies, so moving a value
//! costs three allocations and no per-node work in wasmtime.
//!
//! Encoding gives every container a block of consecutive nodes at the end of the table for its
//! children, so children always come after their parent.
//!
//! Decoding distrusts the table (it comes from the guest): a `nodes` list that is not whole
//! nodes, an
//! unknown kind, a child block that is out of range or does not point forward, a node or extra
//! used twice (sharing would let a small table expand into an exponentially large value), an
//! extra of the wrong kind, a resource ID that is neither text nor unknown, an archive member
//! that is neither an asset nor an archive, a duplicate key, an invalid URN, a span outside the
//! `strings` buffer or whose bytes are not valid UTF-8 (e.g. cut mid-character), or nesting
//! deeper than [`MAX_DEPTH`] is a [`ValueError`] naming the node — never a panic. Decoding is
//! iterative (last node first), so a hostile table cannot overflow the host's stack. Nodes
//! nothing refers to are ignored.
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

use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource};
use cairn_engine::deploy::provider as p;
use cairn_engine::limits::{
    self, MAX_ID_BYTES, MAX_KEY_BYTES, MAX_NAME_BYTES, MAX_URN_BYTES, MAX_VALUE_DEPTH,
};
use cairn_engine::path::PropertyPath;
use cairn_engine::state::codec::SIG_KEY;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};
use indexmap::IndexMap;

use crate::bindings::cairn::deploy::engine as we;
use crate::bindings::cairn::deploy::types as w;

/// The deepest table the decoder builds at all (as deep as serde_json accepts). Values are
/// refused well before that, beyond [`MAX_VALUE_DEPTH`] levels (with the property path); this
/// bound only stops a hostile table before it is built.
pub const MAX_DEPTH: usize = 128;

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

/// Node kind codes (a node's first word); see `wit/provider.wit`.
pub mod kind {
    pub const NULL: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const NUMBER: u32 = 2;
    pub const TEXT: u32 = 3;
    pub const ARRAY: u32 = 4;
    pub const OBJECT: u32 = 5;
    pub const SECRET: u32 = 6;
    pub const UNKNOWN: u32 = 7;
    pub const ASSET: u32 = 8;
    pub const ARCHIVE: u32 = 9;
    pub const REFERENCE: u32 = 10;
    pub const OUTPUT: u32 = 11;
}

/// Words per node in `nodes`: kind, `a`, `b`, key offset, key length.
pub const WORDS: usize = 5;

// ---------------------------------------------------------------------------------------------
// Encoding (host → guest): the engine's values are trusted and finite.

/// Encodes a value; the root is node 0.
pub fn encode_value(value: &PropertyValue) -> w::Value {
    let mut encoder = Encoder::with_capacity(1);
    encoder.reserve(1);
    encoder.fill(0, value);
    encoder.finish()
}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> w::Value {
    if map.is_empty() {
        // No nodes is an empty map (see the WIT); it allocates nothing.
        return w::Value {
            nodes: Vec::new(),
            strings: Vec::new(),
            extras: Vec::new(),
        };
    }
    // Columns sized at once, so encoding never grows (and copies) them.
    let mut size = Size { nodes: 1, bytes: 0 };
    size.object(map, SIZE_DEPTH);
    let mut encoder = Encoder::with_capacity(size.nodes);
    encoder.strings.reserve(size.bytes);
    encoder.reserve(1);
    encoder.object(0, map);
    encoder.finish()
}

/// How deep [`Size`] looks: deeper containers (rare) grow the columns as they are encoded.
const SIZE_DEPTH: u32 = 8;

/// The nodes and string bytes a value takes, to size the columns before encoding.
struct Size {
    nodes: usize,
    bytes: usize,
}

impl Size {
    fn object(&mut self, map: &PropertyMap, depth: u32) {
        self.nodes += map.len();
        for (key, value) in map {
            self.bytes += key.len();
            self.value(value, depth);
        }
    }

    fn value(&mut self, value: &PropertyValue, depth: u32) {
        match value {
            PropertyValue::String(s) => self.bytes += s.len(),
            _ if depth == 0 => {}
            PropertyValue::Object(map) => self.object(map, depth - 1),
            PropertyValue::Array(items) => {
                self.nodes += items.len();
                for item in items {
                    self.value(item, depth - 1);
                }
            }
            PropertyValue::Secret(inner) => {
                self.nodes += 1;
                self.value(inner, depth - 1);
            }
            _ => {}
        }
    }
}

/// A node whose contents are still to be written, and where.
enum Pending<'a> {
    Value(&'a PropertyValue),
    Member(&'a ArchiveMember),
}

struct Encoder<'a> {
    nodes: Vec<u32>,
    /// The text of every `text` node and object key, concatenated.
    strings: Vec<u8>,
    extras: Vec<w::Extra>,
    pending: Vec<(u32, Pending<'a>)>,
}

impl<'a> Encoder<'a> {
    fn with_capacity(nodes: usize) -> Encoder<'a> {
        Encoder {
            nodes: Vec::with_capacity(nodes * WORDS),
            strings: Vec::new(),
            extras: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn finish(mut self) -> w::Value {
        while let Some((at, item)) = self.pending.pop() {
            match item {
                Pending::Value(v) => self.fill(at, v),
                Pending::Member(ArchiveMember::Asset(a)) => {
                    let extra = self.extra(w::Extra::Asset(encode_asset(a)));
                    self.set(at, kind::ASSET, extra, 0);
                }
                Pending::Member(ArchiveMember::Archive(a)) => self.archive(at, a),
            }
        }
        w::Value {
            nodes: self.nodes,
            strings: self.strings,
            extras: self.extras,
        }
    }

    /// Appends `count` null nodes; returns the first one's index.
    fn reserve(&mut self, count: usize) -> u32 {
        let first = self.nodes.len() / WORDS;
        // Zeroed words are null nodes with no key.
        self.nodes.resize((first + count) * WORDS, 0);
        index(first)
    }

    fn set(&mut self, at: u32, kind: u32, a: u32, b: u32) {
        let at = at as usize * WORDS;
        self.nodes[at..at + 3].copy_from_slice(&[kind, a, b]);
    }

    /// Appends `s` to the string buffer; returns its span. (Offsets beyond 4 GiB saturate,
    /// which the guest rejects; the engine never holds such a value.)
    fn span(&mut self, s: &str) -> (u32, u32) {
        let offset = index(self.strings.len());
        self.strings.extend_from_slice(s.as_bytes());
        (offset, index(s.len()))
    }

    fn extra(&mut self, extra: w::Extra) -> u32 {
        self.extras.push(extra);
        index(self.extras.len() - 1)
    }

    fn object(&mut self, at: u32, map: &'a PropertyMap) {
        let first = self.reserve(map.len());
        self.set(at, kind::OBJECT, first, index(map.len()));
        for (i, (key, value)) in map.iter().enumerate() {
            let member = first + index(i);
            let (offset, len) = self.span(key);
            let slot = member as usize * WORDS;
            self.nodes[slot + 3] = offset;
            self.nodes[slot + 4] = len;
            self.scalar_or_later(member, value);
        }
    }

    /// Reserves one node for `value` (the only child of a secret, reference or output) and
    /// fills it; returns its index.
    fn child(&mut self, value: &'a PropertyValue) -> u32 {
        let child = self.reserve(1);
        self.scalar_or_later(child, value);
        child
    }

    /// Writes scalars at once (the common case) and queues containers.
    fn scalar_or_later(&mut self, at: u32, value: &'a PropertyValue) {
        match value {
            PropertyValue::Null => {}
            PropertyValue::Bool(b) => self.set(at, kind::BOOL, u32::from(*b), 0),
            PropertyValue::Number(n) => self.number(at, *n),
            PropertyValue::String(s) => self.text(at, s),
            PropertyValue::Computed => self.set(at, kind::UNKNOWN, 0, 0),
            _ => self.pending.push((at, Pending::Value(value))),
        }
    }

    fn number(&mut self, at: u32, n: f64) {
        let bits = n.to_bits();
        self.set(at, kind::NUMBER, bits as u32, (bits >> 32) as u32);
    }

    fn text(&mut self, at: u32, s: &str) {
        let (offset, len) = self.span(s);
        self.set(at, kind::TEXT, offset, len);
    }

    fn fill(&mut self, at: u32, value: &'a PropertyValue) {
        match value {
            PropertyValue::Null => self.set(at, kind::NULL, 0, 0),
            PropertyValue::Bool(b) => self.set(at, kind::BOOL, u32::from(*b), 0),
            PropertyValue::Number(n) => self.number(at, *n),
            PropertyValue::String(s) => self.text(at, s),
            PropertyValue::Computed => self.set(at, kind::UNKNOWN, 0, 0),
            PropertyValue::Object(map) => self.object(at, map),
            PropertyValue::Array(items) => {
                let first = self.reserve(items.len());
                self.set(at, kind::ARRAY, first, index(items.len()));
                for (i, item) in items.iter().enumerate() {
                    self.scalar_or_later(first + index(i), item);
                }
            }
            PropertyValue::Secret(inner) => {
                let child = self.child(inner);
                self.set(at, kind::SECRET, child, 0);
            }
            PropertyValue::Asset(asset) => {
                let extra = self.extra(w::Extra::Asset(encode_asset(asset)));
                self.set(at, kind::ASSET, extra, 0);
            }
            PropertyValue::Archive(archive) => self.archive(at, archive),
            PropertyValue::ResourceReference(r) => {
                let id = r.id.as_deref().map(|id| self.child(id));
                let extra = self.extra(w::Extra::ResourceReference(w::ResourceReference {
                    urn: r.urn.to_string(),
                    id,
                    package_version: r.package_version.clone(),
                }));
                self.set(at, kind::REFERENCE, extra, 0);
            }
            PropertyValue::Output(o) => {
                let value = o.value.as_deref().map(|v| self.child(v));
                let extra = self.extra(w::Extra::Output(w::OutputValue {
                    value,
                    secret: o.secret,
                    dependencies: o.dependencies.iter().map(ToString::to_string).collect(),
                }));
                self.set(at, kind::OUTPUT, extra, 0);
            }
        }
    }

    fn archive(&mut self, at: u32, archive: &'a Archive) {
        let source = match &archive.source {
            ArchiveSource::Assets(members) => {
                let first = self.reserve(members.len());
                let mut named = Vec::with_capacity(members.len());
                for (i, (name, member)) in members.iter().enumerate() {
                    let node = first + index(i);
                    self.pending.push((node, Pending::Member(member)));
                    named.push((name.clone(), node));
                }
                w::ArchiveSource::Assets(named)
            }
            ArchiveSource::Path(p) => w::ArchiveSource::Path(p.clone()),
            ArchiveSource::Uri(u) => w::ArchiveSource::Uri(u.clone()),
            ArchiveSource::HashOnly => w::ArchiveSource::HashOnly,
        };
        let extra = self.extra(w::Extra::Archive(w::Archive {
            hash: archive.hash.clone(),
            source,
        }));
        self.set(at, kind::ARCHIVE, extra, 0);
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
        (PropertyValue::Object(map), suspect) => Ok((map, suspect)),
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
    let extras = std::mem::take(&mut value.extras);
    let table = Table::new(&value, &extras)?;
    let mut decoder = Decoder {
        built: (0..table.len).map(|_| None).collect(),
        depth: vec![0; table.len],
        extras: extras.into_iter().map(Some).collect(),
        suspect: false,
    };
    for i in (0..table.len).rev() {
        decoder.decode(&table, i)?;
    }
    let root = decoder.built[0]
        .take()
        .ok_or_else(|| value_error("node 0: missing"))?;
    Ok((root, decoder.suspect))
}

/// The columns of a value, checked for consistent lengths and size.
struct Table<'v> {
    len: usize,
    nodes: &'v [u32],
    strings: &'v [u8],
}

impl<'v> Table<'v> {
    fn new(value: &'v w::Value, extras: &[w::Extra]) -> Result<Table<'v>, ValueError> {
        let len = value.nodes.len() / WORDS;
        if !value.nodes.len().is_multiple_of(WORDS) {
            return Err(value_error(format!(
                "the value has {} words, which is not a whole number of nodes ({WORDS} words each)",
                value.nodes.len()
            )));
        }
        if len == 0 {
            return Err(value_error("the value has no nodes (the root is node 0)"));
        }
        let table = Table {
            len,
            nodes: &value.nodes,
            strings: &value.strings,
        };
        // What the decoded value will hold: text and keys as they will be copied (so many
        // spans over the same bytes cannot inflate a small buffer), plus per-node overhead.
        let mut size = 16usize.saturating_mul(len);
        for i in 0..len {
            let (code, _, b, _, key_len) = table.node(i);
            size = size.saturating_add(key_len as usize);
            if code == kind::TEXT {
                size = size.saturating_add(b as usize);
            }
        }
        size = extras
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
        Ok(table)
    }

    /// Node `i`: kind, `a`, `b`, key offset, key length.
    fn node(&self, i: usize) -> (u32, u32, u32, u32, u32) {
        let w = &self.nodes[i * WORDS..i * WORDS + WORDS];
        (w[0], w[1], w[2], w[3], w[4])
    }

    /// The text of a span of the string buffer: in range and valid UTF-8 (which also rules out
    /// a span that starts or ends inside a character).
    fn text(&self, node: usize, what: &str, offset: u32, len: u32) -> Result<&'v str, ValueError> {
        let start = offset as usize;
        let bytes = start
            .checked_add(len as usize)
            .and_then(|end| self.strings.get(start..end))
            .ok_or_else(|| {
                value_error(format!(
                    "node {node}: the {what} span (offset {offset}, length {len}) is outside the {}-byte string buffer",
                    self.strings.len()
                ))
            })?;
        std::str::from_utf8(bytes).map_err(|e| {
            value_error(format!(
                "node {node}: the {what} span (offset {offset}, length {len}) is not valid UTF-8: {e}"
            ))
        })
    }
}

/// Decoded nodes waiting for their parents, and extras not yet claimed.
struct Decoder {
    built: Vec<Option<PropertyValue>>,
    depth: Vec<u16>,
    extras: Vec<Option<w::Extra>>,
    /// Set on a non-finite number, a key longer than [`MAX_KEY_BYTES`] or nesting deeper than
    /// [`MAX_VALUE_DEPTH`]: the value is then checked whole, to name the property.
    suspect: bool,
}

impl Decoder {
    /// Takes the node at `child` for the node at `parent`, checking it points forward and is
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
                "node {parent}: refers to node {child}, which is not after it in the table of {} nodes",
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

    /// Checks a child block `[first, first + count)` lies after `parent` within the table.
    fn block(&self, parent: usize, first: u32, count: u32) -> Result<usize, ValueError> {
        let start = first as usize;
        let fits = start > parent
            && start
                .checked_add(count as usize)
                .is_some_and(|end| end <= self.built.len());
        if !fits && count > 0 {
            return Err(value_error(format!(
                "node {parent}: its {count} children from node {first} are not after it in the table of {} nodes",
                self.built.len()
            )));
        }
        Ok(start)
    }

    fn extra(&mut self, node: usize, at: u32) -> Result<w::Extra, ValueError> {
        let len = self.extras.len();
        match self.extras.get_mut(at as usize) {
            None => Err(value_error(format!(
                "node {node}: refers to extra {at}, but there are only {len}"
            ))),
            Some(slot) => slot.take().ok_or_else(|| {
                value_error(format!(
                    "node {node}: refers to extra {at}, which another node already uses"
                ))
            }),
        }
    }

    fn decode(&mut self, table: &Table<'_>, i: usize) -> Result<(), ValueError> {
        let (code, a, b, _, _) = table.node(i);
        let mut depth = 0u16;
        let value = match code {
            kind::NULL => PropertyValue::Null,
            kind::BOOL => PropertyValue::Bool(a != 0),
            kind::NUMBER => {
                let n = f64::from_bits(u64::from(a) | (u64::from(b) << 32));
                self.suspect |= !n.is_finite();
                PropertyValue::Number(n)
            }
            kind::TEXT => PropertyValue::String(table.text(i, "text", a, b)?.to_owned()),
            kind::UNKNOWN => PropertyValue::Computed,
            kind::ARRAY => {
                let first = self.block(i, a, b)?;
                let mut items = Vec::with_capacity(b as usize);
                for c in first..first + b as usize {
                    items.push(self.take(i, index(c), &mut depth)?);
                }
                PropertyValue::Array(items)
            }
            kind::OBJECT => {
                let first = self.block(i, a, b)?;
                let mut map = PropertyMap::with_capacity(b as usize);
                for c in first..first + b as usize {
                    let (_, _, _, key_offset, key_len) = table.node(c);
                    let key = table.text(c, "key", key_offset, key_len)?;
                    self.suspect |= key.len() > MAX_KEY_BYTES || key == SIG_KEY;
                    let v = self.take(i, index(c), &mut depth)?;
                    if map.insert(key.to_owned(), v).is_some() {
                        return Err(value_error(format!("node {i}: key {key:?} appears twice")));
                    }
                }
                PropertyValue::Object(map)
            }
            kind::SECRET => PropertyValue::Secret(Box::new(self.take(i, a, &mut depth)?)),
            kind::ASSET => match self.extra(i, a)? {
                w::Extra::Asset(asset) => PropertyValue::Asset(decode_asset(asset)),
                other => return Err(wrong_extra(i, "asset", &other)),
            },
            kind::ARCHIVE => match self.extra(i, a)? {
                w::Extra::Archive(archive) => {
                    PropertyValue::Archive(self.archive(i, archive, &mut depth)?)
                }
                other => return Err(wrong_extra(i, "archive", &other)),
            },
            kind::REFERENCE => match self.extra(i, a)? {
                w::Extra::ResourceReference(r) => self.reference(i, r, &mut depth)?,
                other => return Err(wrong_extra(i, "resource reference", &other)),
            },
            kind::OUTPUT => match self.extra(i, a)? {
                w::Extra::Output(o) => PropertyValue::Output(OutputValue {
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
                other => return Err(wrong_extra(i, "output", &other)),
            },
            other => {
                return Err(value_error(format!("node {i}: unknown kind {other}")));
            }
        };
        let depth = depth + 1;
        if usize::from(depth) > MAX_DEPTH {
            return Err(value_error(format!(
                "node {i}: the value is nested more than {MAX_VALUE_DEPTH} levels deep"
            )));
        }
        // A node's depth counts itself: a map's root object is one level above its values.
        self.suspect |= usize::from(depth) > MAX_VALUE_DEPTH + 1;
        self.depth[i] = depth;
        self.built[i] = Some(value);
        Ok(())
    }

    fn reference(
        &mut self,
        i: usize,
        r: w::ResourceReference,
        depth: &mut u16,
    ) -> Result<PropertyValue, ValueError> {
        let urn = parse_urn(i, &r.urn)?;
        let id = match r.id {
            None => None,
            Some(c) => match self.take(i, c, depth)? {
                v @ (PropertyValue::String(_) | PropertyValue::Computed) => Some(Box::new(v)),
                other => {
                    return Err(value_error(format!(
                        "node {i}: a resource reference's ID must be text or unknown, found {}",
                        other.kind()
                    )));
                }
            },
        };
        Ok(PropertyValue::ResourceReference(ResourceReference {
            urn,
            id,
            package_version: r.package_version,
        }))
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
                        PropertyValue::Archive(a) => {
                            // Archives within archives count double against the depth limit
                            // (see `limits`): let the engine's check measure them.
                            self.suspect = true;
                            ArchiveMember::Archive(a)
                        }
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
}

fn wrong_extra(node: usize, expected: &str, found: &w::Extra) -> ValueError {
    let found = match found {
        w::Extra::Asset(_) => "an asset",
        w::Extra::Archive(_) => "an archive",
        w::Extra::ResourceReference(_) => "a resource reference",
        w::Extra::Output(_) => "an output",
    };
    value_error(format!(
        "node {node}: a {expected} node refers to {found} extra"
    ))
}

/// Roughly what an extra costs once decoded: its strings.
fn extra_bytes(extra: &w::Extra) -> usize {
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
    match extra {
        w::Extra::Asset(a) => asset(a),
        w::Extra::Archive(a) => {
            opt(&a.hash)
                + match &a.source {
                    w::ArchiveSource::Assets(m) => m.iter().map(|(k, _)| k.len() + 4).sum(),
                    w::ArchiveSource::Path(t) | w::ArchiveSource::Uri(t) => t.len(),
                    w::ArchiveSource::HashOnly => 0,
                }
        }
        w::Extra::ResourceReference(r) => r.urn.len() + opt(&r.package_version),
        w::Extra::Output(o) => o.dependencies.iter().map(String::len).sum(),
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

pub(crate) fn check_request(r: &p::CheckRequest) -> w::CheckRequest {
    w::CheckRequest {
        urn: r.urn.to_string(),
        olds: encode_map(&r.olds),
        news: encode_map(&r.news),
        random_seed: r.random_seed.clone(),
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
    news: PropertyMap,
) -> Result<p::CheckResult, ValueError> {
    Ok(p::CheckResult {
        inputs: unless_sent("inputs", r.inputs, sent, news)?,
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
                    inputs: PropertyMap::new(),
                    outputs: kept,
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
                    inputs: PropertyMap::new(),
                    outputs: kept,
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
        let check = p::CheckRequest {
            urn: urn.clone(),
            olds: PropertyMap::new(),
            news: sent_map.clone(),
            random_seed: vec![],
        };
        let sent = check_request(&check);
        let back = |inputs| w::CheckResult {
            inputs,
            failures: vec![],
        };
        let same = check_result(back(sent.news.clone()), &sent.news, engine_map.clone());
        assert_eq!(same.unwrap().inputs, engine_map);
        let changed = encode_map(&props! {"a" => "c"});
        let decoded = check_result(back(changed), &sent.news, engine_map.clone());
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
        let map = props! {"a" => 1i64, "b" => vec![PropertyValue::from(true)]};
        let encoded = encode_map(&map);
        assert_eq!(encoded.strings, b"ab");
        let one = 1f64.to_bits();
        #[rustfmt::skip]
        assert_eq!(encoded.nodes, [
            kind::OBJECT, 1, 2, 0, 0, // the root: members 1 and 2
            kind::NUMBER, one as u32, (one >> 32) as u32, 0, 1, // "a": 1
            kind::ARRAY, 3, 1, 1, 1, // "b": the array at 3
            kind::BOOL, 1, 0, 0, 0, // true
        ]);
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
            let mut members = IndexMap::new();
            members.insert("a".to_owned(), ArchiveMember::Archive(archive));
            archive = Archive {
                hash: None,
                source: ArchiveSource::Assets(members),
            };
        }
        let err = decode_value(encode_value(&PropertyValue::Archive(archive)))
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
