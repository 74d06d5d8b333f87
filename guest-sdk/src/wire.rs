//! The WIT encoding of values: a table of nodes (five words per node in `nodes`: kind, two
//! operands and a key span; one `strings` buffer; and `extras` for assets, archives, references
//! and outputs; `wit/provider.wit` has the code table). Node 0 is the root; an array's
//! elements and an object's members are consecutive nodes after their parent, each member
//! carrying its key.
//!
//! Tables from the host are read in place through [`Node`]s: a [`Table`] is one validated up
//! front; request properties ([`Properties`](crate::Properties)) keep the table as it came,
//! validate it when first read, decode it into [`Value`]s only if read, and send it back as
//! it came if returned unchanged.
//!
//! Encoding never fails. Validation reports malformed tables as [`WireError`]s (never panics):
//! a `nodes` list that is not whole nodes, unknown kinds, indices out of range or not after
//! their parent (which also rules out cycles), nodes or extras used twice or not at all, extras of the wrong
//! kind, duplicate keys, archive members that are not assets or archives, resource IDs that are
//! not text or unknown, spans outside the string buffer or not valid UTF-8 (e.g. cut
//! mid-character), and nesting deeper than [`MAX_DEPTH`]. Validation and encoding are
//! iterative; decoding a validated table recurses at most [`MAX_DEPTH`] levels.

use std::fmt;

use crate::bindings::cairn::deploy::types as wit;
use crate::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, OutputValue, PropertyMap,
    ResourceReference, Value,
};

/// The deepest value accepted from the host (the root counts as depth 1).
pub const MAX_DEPTH: usize = 512;

/// Node kind codes (a node's first word).
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

    /// The kind's name, for messages.
    pub fn name(kind: u32) -> &'static str {
        match kind {
            NULL => "null",
            BOOL => "bool",
            NUMBER => "number",
            TEXT => "string",
            ARRAY => "array",
            OBJECT => "object",
            SECRET => "secret",
            UNKNOWN => "unknown",
            ASSET => "asset",
            ARCHIVE => "archive",
            REFERENCE => "resource reference",
            OUTPUT => "output",
            _ => "unknown kind",
        }
    }
}

/// Words per node: kind, `a`, `b`, key offset, key length.
pub const WORDS: usize = 5;

/// Why a table from the host is not a valid value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The table has no nodes where a single value was expected.
    Empty,
    /// The `nodes` list is not a whole number of nodes ([`WORDS`] words each).
    WordCount { words: usize },
    /// A node's kind code is not one of [`kind`]'s.
    UnknownKind { node: u32, kind: u32 },
    /// A node refers to an index past the end of the table.
    OutOfRange { node: u32, index: u32, len: usize },
    /// A node refers to itself or an earlier node (this is how cycles show up).
    NotAfterParent { node: u32, index: u32 },
    /// Two references to the same node.
    SharedNode { index: u32 },
    /// A node nothing refers to.
    Unreferenced { index: u32 },
    /// A node refers to an extra past the end of `extras`.
    ExtraOutOfRange { node: u32, index: u32, len: usize },
    /// Two nodes refer to the same extra.
    SharedExtra { index: u32 },
    /// An extra no node refers to.
    UnusedExtra { index: u32 },
    /// A node's extra is of another kind.
    WrongExtra {
        node: u32,
        expected: &'static str,
        found: &'static str,
    },
    /// A resource reference whose ID is neither text nor unknown.
    BadReferenceId { node: u32, kind: &'static str },
    /// An object or archive with the same key twice.
    DuplicateKey { node: u32, key: String },
    /// An archive member that is neither an asset nor an archive.
    BadArchiveMember {
        node: u32,
        key: String,
        kind: &'static str,
    },
    /// The value nests deeper than [`MAX_DEPTH`].
    TooDeep { node: u32 },
    /// A property map's root is not an object.
    NotAnObject { kind: &'static str },
    /// A text or key span reaches past the end of the string buffer.
    SpanOutOfRange {
        node: u32,
        offset: u32,
        len: u32,
        buffer: usize,
    },
    /// A text or key span's bytes are not valid UTF-8 (or cut a character in two).
    InvalidUtf8 { node: u32, offset: u32, len: u32 },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Empty => write!(f, "the value has no nodes"),
            WireError::WordCount { words } => write!(
                f,
                "the value has {words} words, which is not a whole number of nodes ({WORDS} words each)"
            ),
            WireError::UnknownKind { node, kind } => {
                write!(f, "node {node} has unknown kind {kind}")
            }
            WireError::OutOfRange { node, index, len } => {
                write!(
                    f,
                    "node {node} refers to node {index}, but there are only {len}"
                )
            }
            WireError::NotAfterParent { node, index } => {
                write!(
                    f,
                    "node {node} refers to node {index}, which is not after it"
                )
            }
            WireError::SharedNode { index } => write!(f, "node {index} is referenced twice"),
            WireError::Unreferenced { index } => write!(f, "node {index} is not referenced"),
            WireError::ExtraOutOfRange { node, index, len } => write!(
                f,
                "node {node} refers to extra {index}, but there are only {len}"
            ),
            WireError::SharedExtra { index } => write!(f, "extra {index} is referenced twice"),
            WireError::UnusedExtra { index } => write!(f, "extra {index} is not referenced"),
            WireError::WrongExtra {
                node,
                expected,
                found,
            } => write!(
                f,
                "node {node} ({expected}) refers to an extra of kind {found}"
            ),
            WireError::BadReferenceId { node, kind } => write!(
                f,
                "node {node}: a resource reference's ID must be text or unknown, found {kind}"
            ),
            WireError::DuplicateKey { node, key } => {
                write!(f, "node {node} has the key {key:?} twice")
            }
            WireError::BadArchiveMember { node, key, kind } => write!(
                f,
                "archive node {node}: member {key:?} is a {kind}, not an asset or archive"
            ),
            WireError::TooDeep { node } => {
                write!(f, "node {node} nests deeper than {MAX_DEPTH} levels")
            }
            WireError::NotAnObject { kind } => {
                write!(f, "expected an object of properties, found a {kind}")
            }
            WireError::SpanOutOfRange {
                node,
                offset,
                len,
                buffer,
            } => write!(
                f,
                "node {node}: text span (offset {offset}, length {len}) is outside the \
                 {buffer}-byte string buffer"
            ),
            WireError::InvalidUtf8 { node, offset, len } => write!(
                f,
                "node {node}: text span (offset {offset}, length {len}) is not valid UTF-8"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> wit::Value {
    let mut enc = Encoder::with_capacity(map.len() + 1);
    enc.reserve(1);
    enc.object(0, map);
    enc.finish()
}

/// Encodes any value.
pub fn encode(value: &Value) -> wit::Value {
    let mut enc = Encoder::with_capacity(1);
    enc.reserve(1);
    enc.fill(0, value);
    enc.finish()
}

/// Decodes a property map: an object root, or no nodes / a `null` root for an empty map.
pub fn decode_map(value: wit::Value) -> Result<PropertyMap, WireError> {
    Table::new(value)?.to_map()
}

/// Decodes one value.
pub fn decode(value: wit::Value) -> Result<Value, WireError> {
    let table = Table::new(value)?;
    table.root().map(Node::to_value).ok_or(WireError::Empty)
}

/// Validates a table meant as a property map: an object root, or no nodes / a `null` root.
pub(crate) fn validate_map(value: &wit::Value) -> Result<(), WireError> {
    validate(value)?;
    object_root(value)
}

fn object_root(value: &wit::Value) -> Result<(), WireError> {
    match value.nodes.first() {
        None | Some(&kind::OBJECT) | Some(&kind::NULL) => Ok(()),
        Some(&other) => Err(WireError::NotAnObject {
            kind: kind::name(other),
        }),
    }
}

/// The root of a validated table, unless it is empty.
fn root(value: &wit::Value) -> Option<Node<'_>> {
    (!value.nodes.is_empty()).then_some(Node { value, index: 0 })
}

/// The object at the root of a table that passed [`validate_map`] (`None` when the map is
/// empty: no nodes or a `null` root).
pub(crate) fn object(value: &wit::Value) -> Option<Node<'_>> {
    root(value).filter(|r| r.kind() == kind::OBJECT)
}

/// Byte-slice equality eight bytes at a time: in wasm, `memcmp` is a byte-by-byte loop, and
/// comparing texts is most of what a default `diff` does.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or_default());
    x.by_ref().zip(y.by_ref()).all(|(p, q)| word(p) == word(q)) && x.remainder() == y.remainder()
}

/// [`same_bytes`] for `u32` columns, two words at a time.
fn same_words(a: &[u32], b: &[u32]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(2), b.chunks_exact(2));
    let pair = |c: &[u32]| u64::from(c[0]) | (u64::from(c[1]) << 32);
    x.by_ref().zip(y.by_ref()).all(|(p, q)| pair(p) == pair(q)) && x.remainder() == y.remainder()
}

/// Whether two tables are identical column by column and hold no unknown: then they decode to
/// the same value, which [`Node::same_as`] would find equal member by member (an unknown is
/// never the same as anything, so a table with one must be compared node by node). Tables with
/// extras are rare and never taken as identical.
pub(crate) fn same_known(a: &wit::Value, b: &wit::Value) -> bool {
    a.extras.is_empty()
        && b.extras.is_empty()
        && same_words(&a.nodes, &b.nodes)
        && a.nodes.iter().step_by(WORDS).all(|&k| k != kind::UNKNOWN)
        && same_bytes(&a.strings, &b.strings)
}

/// A node index; tables never approach `u32::MAX` nodes (guest memory is 32-bit).
fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// A value from the host, validated; read in place through [`Node`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    value: wit::Value,
}

impl Table {
    /// Validates `value` (see the module docs). No nodes is a valid, empty table.
    pub fn new(value: wit::Value) -> Result<Table, WireError> {
        validate(&value)?;
        Ok(Table { value })
    }

    /// The root, unless the table is empty.
    pub fn root(&self) -> Option<Node<'_>> {
        root(&self.value)
    }

    /// Decodes a property map: an object root, or an empty table / a `null` root.
    pub fn to_map(&self) -> Result<PropertyMap, WireError> {
        object_root(&self.value)?;
        Ok(object(&self.value).map(Node::to_map).unwrap_or_default())
    }
}

/// One node of a validated [`Table`].
#[derive(Clone, Copy)]
pub struct Node<'t> {
    value: &'t wit::Value,
    index: usize,
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {} ({})", self.index, kind::name(self.kind()))
    }
}

impl<'t> Node<'t> {
    pub fn kind(self) -> u32 {
        self.value.nodes[self.index * WORDS]
    }

    fn word(self, w: usize) -> u32 {
        self.value.nodes[self.index * WORDS + 1 + w]
    }

    fn at(self, index: u32) -> Node<'t> {
        Node {
            value: self.value,
            index: index as usize,
        }
    }

    fn span(self, offset: u32, len: u32) -> &'t [u8] {
        let start = offset as usize;
        &self.value.strings[start..start + len as usize]
    }

    /// Validated as UTF-8 when the table was built.
    fn str(self, offset: u32, len: u32) -> &'t str {
        std::str::from_utf8(self.span(offset, len)).unwrap_or_default()
    }

    /// The key of an object member.
    pub fn key(self) -> &'t str {
        self.str(self.word(2), self.word(3))
    }

    /// The key of an object member, as bytes (no UTF-8 check).
    pub fn key_bytes(self) -> &'t [u8] {
        self.span(self.word(2), self.word(3))
    }

    /// The elements of an array or the members of an object (nothing for other kinds).
    pub fn children(self) -> impl ExactSizeIterator<Item = Node<'t>> {
        let (first, count) = match self.kind() {
            kind::ARRAY | kind::OBJECT => (self.word(0) as usize, self.word(1) as usize),
            _ => (0, 0),
        };
        let value = self.value;
        (first..first + count).map(move |index| Node { value, index })
    }

    /// An object's member named `key`. Members are usually looked up in the order they
    /// come, so `hint` (a position) is tried first.
    pub fn member(self, key: &str, hint: usize) -> Option<Node<'t>> {
        self.member_bytes(key.as_bytes(), hint)
    }

    /// [`Node::member`] by the key's bytes.
    pub fn member_bytes(self, key: &[u8], hint: usize) -> Option<Node<'t>> {
        if self.kind() != kind::OBJECT {
            return None;
        }
        let named = |m: &Node<'_>| same_bytes(m.key_bytes(), key);
        self.children()
            .nth(hint)
            .filter(named)
            .or_else(|| self.children().find(named))
    }

    fn extra(self) -> &'t wit::Extra {
        &self.value.extras[self.word(0) as usize]
    }

    /// The contents with secret and output wrappers removed; `None` for an unknown output.
    pub fn reveal(self) -> Option<Node<'t>> {
        let mut node = self;
        loop {
            match node.kind() {
                kind::SECRET => node = node.at(node.word(0)),
                kind::OUTPUT => match node.extra() {
                    wit::Extra::Output(o) => node = node.at(o.value?),
                    _ => return Some(node),
                },
                _ => return Some(node),
            }
        }
    }

    /// [`Value::same_as`] without decoding: equal contents, ignoring secret and output
    /// markers; unknowns are never the same as anything.
    pub fn same_as(self, other: Node<'_>) -> bool {
        let (Some(a), Some(b)) = (self.reveal(), other.reveal()) else {
            return false;
        };
        match (a.kind(), b.kind()) {
            (kind::UNKNOWN, _) | (_, kind::UNKNOWN) => false,
            (x, y) if x != y => false,
            (kind::NULL, _) => true,
            (kind::BOOL, _) => (a.word(0) != 0) == (b.word(0) != 0),
            (kind::NUMBER, _) => a.number() == b.number(),
            (kind::TEXT, _) => {
                same_bytes(a.span(a.word(0), a.word(1)), b.span(b.word(0), b.word(1)))
            }
            (kind::ARRAY, _) => {
                a.word(1) == b.word(1) && a.children().zip(b.children()).all(|(x, y)| x.same_as(y))
            }
            (kind::OBJECT, _) => {
                a.word(1) == b.word(1)
                    && a.children().enumerate().all(|(i, x)| {
                        b.member_bytes(x.key_bytes(), i)
                            .is_some_and(|y| x.same_as(y))
                    })
            }
            // Assets, archives and references are rare: compare them decoded.
            _ => a.to_value() == b.to_value(),
        }
    }

    fn number(self) -> f64 {
        f64::from_bits(u64::from(self.word(0)) | (u64::from(self.word(1)) << 32))
    }

    /// Decodes this node's object members.
    pub(crate) fn to_map(self) -> PropertyMap {
        self.children()
            .map(|m| (m.key().to_owned(), m.to_value()))
            .collect()
    }

    /// Decodes the node.
    pub fn to_value(self) -> Value {
        match self.kind() {
            kind::BOOL => Value::Bool(self.word(0) != 0),
            kind::NUMBER => Value::Number(self.number()),
            kind::TEXT => Value::String(self.str(self.word(0), self.word(1)).to_owned()),
            kind::ARRAY => Value::Array(self.children().map(Node::to_value).collect()),
            kind::OBJECT => Value::Object(self.to_map()),
            kind::SECRET => Value::Secret(Box::new(self.at(self.word(0)).to_value())),
            kind::UNKNOWN => Value::Unknown,
            kind::ASSET | kind::ARCHIVE | kind::REFERENCE | kind::OUTPUT => self.extra_value(),
            _ => Value::Null,
        }
    }

    fn extra_value(self) -> Value {
        match self.extra() {
            wit::Extra::Asset(a) => Value::Asset(from_wit_asset(a)),
            wit::Extra::Archive(a) => Value::Archive(self.archive(a)),
            wit::Extra::ResourceReference(r) => Value::ResourceReference(ResourceReference {
                urn: r.urn.clone(),
                id: r.id.map(|c| Box::new(self.at(c).to_value())),
                package_version: r.package_version.clone(),
            }),
            wit::Extra::Output(o) => Value::Output(OutputValue {
                value: o.value.map(|c| Box::new(self.at(c).to_value())),
                secret: o.secret,
                dependencies: o.dependencies.clone(),
            }),
        }
    }

    fn archive(self, a: &wit::Archive) -> Archive {
        let source = match &a.source {
            wit::ArchiveSource::Assets(members) => ArchiveSource::Assets(
                members
                    .iter()
                    .map(|(name, c)| {
                        let member = match self.at(*c).to_value() {
                            Value::Archive(a) => ArchiveMember::Archive(a),
                            Value::Asset(a) => ArchiveMember::Asset(a),
                            // Validation admits only assets and archives.
                            _ => ArchiveMember::Asset(Asset {
                                hash: None,
                                source: AssetSource::HashOnly,
                            }),
                        };
                        (name.clone(), member)
                    })
                    .collect(),
            ),
            wit::ArchiveSource::Path(p) => ArchiveSource::Path(p.clone()),
            wit::ArchiveSource::Uri(u) => ArchiveSource::Uri(u.clone()),
            wit::ArchiveSource::HashOnly => ArchiveSource::HashOnly,
        };
        Archive {
            hash: a.hash.clone(),
            source,
        }
    }
}

fn from_wit_asset(a: &wit::Asset) -> Asset {
    Asset {
        hash: a.hash.clone(),
        source: match &a.source {
            wit::AssetSource::Text(t) => AssetSource::Text(t.clone()),
            wit::AssetSource::Path(p) => AssetSource::Path(p.clone()),
            wit::AssetSource::Uri(u) => AssetSource::Uri(u.clone()),
            wit::AssetSource::HashOnly => AssetSource::HashOnly,
        },
    }
}

/// Checks every rule of the module docs in one forward pass (parents come before children, so
/// a node's depth and whether it is referenced are known when the pass reaches it).
fn validate(value: &wit::Value) -> Result<(), WireError> {
    let len = value.nodes.len() / WORDS;
    if !value.nodes.len().is_multiple_of(WORDS) {
        return Err(WireError::WordCount {
            words: value.nodes.len(),
        });
    }
    if len == 0 {
        if value.extras.is_empty() {
            return Ok(());
        }
        return Err(WireError::UnusedExtra { index: 0 });
    }
    let mut v = Validator {
        value,
        utf8: std::str::from_utf8(&value.strings).is_ok(),
        depth: vec![0; len],
        extra_used: vec![false; value.extras.len()],
    };
    v.depth[0] = 1;
    for i in 0..len {
        v.node(i)?;
    }
    if let Some(i) = v.extra_used.iter().position(|used| !used) {
        return Err(WireError::UnusedExtra { index: idx(i) });
    }
    Ok(())
}

struct Validator<'v> {
    value: &'v wit::Value,
    /// The whole string buffer is valid UTF-8 (the usual case: no span needs decoding).
    utf8: bool,
    /// Each node's depth (the root's is 1); 0 while nothing refers to it.
    depth: Vec<u16>,
    extra_used: Vec<bool>,
}

impl<'v> Validator<'v> {
    /// Node `i`'s operands and key span.
    fn words(&self, i: usize) -> (u32, u32, u32, u32) {
        let w = &self.value.nodes[i * WORDS + 1..i * WORDS + WORDS];
        (w[0], w[1], w[2], w[3])
    }

    fn kind(&self, i: usize) -> u32 {
        self.value.nodes[i * WORDS]
    }

    /// Records that `parent` refers to `child`.
    fn refer(&mut self, parent: usize, child: u32) -> Result<(), WireError> {
        let len = self.depth.len();
        let c = child as usize;
        if c >= len {
            return Err(WireError::OutOfRange {
                node: idx(parent),
                index: child,
                len,
            });
        }
        if c <= parent {
            return Err(WireError::NotAfterParent {
                node: idx(parent),
                index: child,
            });
        }
        if self.depth[c] != 0 {
            return Err(WireError::SharedNode { index: child });
        }
        self.depth[c] = self.depth[parent] + 1;
        Ok(())
    }

    fn text(&self, node: usize, offset: u32, len: u32) -> Result<&'v [u8], WireError> {
        let strings = &self.value.strings;
        let start = offset as usize;
        let bytes = start
            .checked_add(len as usize)
            .and_then(|end| strings.get(start..end))
            .ok_or_else(|| WireError::SpanOutOfRange {
                node: idx(node),
                offset,
                len,
                buffer: strings.len(),
            })?;
        // Within a buffer that is valid UTF-8 as a whole (checked once), a span is valid when
        // it starts and ends on character boundaries.
        let valid = if self.utf8 {
            let boundary = |at: usize| strings.get(at).is_none_or(|b| (*b as i8) >= -0x40);
            boundary(start) && boundary(start + bytes.len())
        } else {
            std::str::from_utf8(bytes).is_ok()
        };
        if !valid {
            return Err(WireError::InvalidUtf8 {
                node: idx(node),
                offset,
                len,
            });
        }
        Ok(bytes)
    }

    fn extra(&mut self, node: usize, at: u32) -> Result<&'v wit::Extra, WireError> {
        let len = self.extra_used.len();
        match self.extra_used.get_mut(at as usize) {
            None => Err(WireError::ExtraOutOfRange {
                node: idx(node),
                index: at,
                len,
            }),
            Some(true) => Err(WireError::SharedExtra { index: at }),
            Some(used) => {
                *used = true;
                Ok(&self.value.extras[at as usize])
            }
        }
    }

    fn node(&mut self, i: usize) -> Result<(), WireError> {
        let depth = self.depth[i];
        if depth == 0 {
            return Err(WireError::Unreferenced { index: idx(i) });
        }
        if usize::from(depth) > MAX_DEPTH {
            return Err(WireError::TooDeep { node: idx(i) });
        }
        let (a, b, _, _) = self.words(i);
        match self.kind(i) {
            kind::NULL | kind::BOOL | kind::NUMBER | kind::UNKNOWN => {}
            kind::TEXT => {
                self.text(i, a, b)?;
            }
            k @ (kind::ARRAY | kind::OBJECT) => {
                let len = self.depth.len();
                if b > 0 && a as usize + b as usize > len {
                    let last = (u64::from(a) + u64::from(b) - 1).min(u64::from(u32::MAX));
                    return Err(WireError::OutOfRange {
                        node: idx(i),
                        index: last as u32,
                        len,
                    });
                }
                for c in a..a.saturating_add(b) {
                    self.refer(i, c)?;
                }
                if k == kind::OBJECT {
                    self.keys(i, a, b)?;
                }
            }
            kind::SECRET => self.refer(i, a)?,
            k @ (kind::ASSET | kind::ARCHIVE | kind::REFERENCE | kind::OUTPUT) => {
                let extra = self.extra(i, a)?;
                self.extra_node(i, k, extra)?;
            }
            other => {
                return Err(WireError::UnknownKind {
                    node: idx(i),
                    kind: other,
                });
            }
        }
        Ok(())
    }

    /// Checks an object's member keys: valid spans, no duplicates.
    fn keys(&self, i: usize, first: u32, count: u32) -> Result<(), WireError> {
        for c in first..first + count {
            let (_, _, offset, len) = self.words(c as usize);
            self.text(c as usize, offset, len)?;
        }
        let strings = &self.value.strings;
        let key = |c: u32| {
            let (_, _, offset, len) = self.words(c as usize);
            &strings[offset as usize..offset as usize + len as usize]
        };
        duplicate(i, (first..first + count).map(key))
    }

    fn extra_node(&mut self, i: usize, k: u32, extra: &'v wit::Extra) -> Result<(), WireError> {
        let found = match extra {
            wit::Extra::Asset(_) => kind::ASSET,
            wit::Extra::Archive(_) => kind::ARCHIVE,
            wit::Extra::ResourceReference(_) => kind::REFERENCE,
            wit::Extra::Output(_) => kind::OUTPUT,
        };
        if found != k {
            return Err(WireError::WrongExtra {
                node: idx(i),
                expected: kind::name(k),
                found: kind::name(found),
            });
        }
        match extra {
            wit::Extra::Asset(_) => {}
            wit::Extra::Archive(a) => {
                if let wit::ArchiveSource::Assets(members) = &a.source {
                    for (name, c) in members {
                        self.refer(i, *c)?;
                        let member = self.kind(*c as usize);
                        if member != kind::ASSET && member != kind::ARCHIVE {
                            return Err(WireError::BadArchiveMember {
                                node: idx(i),
                                key: name.clone(),
                                kind: kind::name(member),
                            });
                        }
                    }
                    duplicate(i, members.iter().map(|(name, _)| name.as_bytes()))?;
                }
            }
            wit::Extra::ResourceReference(r) => {
                if let Some(c) = r.id {
                    self.refer(i, c)?;
                    let id = self.kind(c as usize);
                    if id != kind::TEXT && id != kind::UNKNOWN {
                        return Err(WireError::BadReferenceId {
                            node: idx(i),
                            kind: kind::name(id),
                        });
                    }
                }
            }
            wit::Extra::Output(o) => {
                if let Some(c) = o.value {
                    self.refer(i, c)?;
                }
            }
        }
        Ok(())
    }
}

/// Fails on the first key that appears twice. Keys are hashed and the hashes sorted, so only
/// keys with equal hashes are compared (comparing keys pairwise is quadratic, and keys often
/// share long prefixes).
fn duplicate<'k>(
    node: usize,
    keys: impl ExactSizeIterator<Item = &'k [u8]> + Clone,
) -> Result<(), WireError> {
    if keys.len() < 2 {
        return Ok(());
    }
    let mut hashes: Vec<(u64, u32)> = keys
        .clone()
        .enumerate()
        .map(|(i, key)| (hash(key), idx(i)))
        .collect();
    hashes.sort_unstable();
    let key = |i: u32| keys.clone().nth(i as usize).unwrap_or_default();
    for run in hashes
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
    {
        for (n, a) in run.iter().enumerate() {
            if run[..n].iter().any(|b| key(b.1) == key(a.1)) {
                return Err(WireError::DuplicateKey {
                    node: idx(node),
                    key: String::from_utf8_lossy(key(a.1)).into_owned(),
                });
            }
        }
    }
    Ok(())
}

/// FNV-1a over 8-byte words: cheap, and only used to find candidate duplicates.
fn hash(key: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x0100_0000_01b3);
    }
    for b in chunks.remainder() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A node whose contents are still to be written, and where.
enum Pending<'a> {
    Value(&'a Value),
    Member(&'a ArchiveMember),
}

/// Builds a table: each container reserves a block of consecutive nodes at the end for its
/// children (so they come after it) and queues those that are containers themselves.
struct Encoder<'a> {
    nodes: Vec<u32>,
    /// The text of every `text` node and object key, concatenated.
    strings: Vec<u8>,
    extras: Vec<wit::Extra>,
    pending: Vec<(u32, Pending<'a>)>,
}

impl<'a> Encoder<'a> {
    fn with_capacity(nodes: usize) -> Encoder<'a> {
        Encoder {
            nodes: Vec::with_capacity(nodes * WORDS),
            strings: Vec::with_capacity(nodes * 24),
            extras: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn finish(mut self) -> wit::Value {
        while let Some((at, item)) = self.pending.pop() {
            match item {
                Pending::Value(v) => self.fill(at, v),
                Pending::Member(ArchiveMember::Asset(a)) => {
                    let extra = self.extra(wit::Extra::Asset(to_wit_asset(a)));
                    self.set(at, kind::ASSET, extra, 0);
                }
                Pending::Member(ArchiveMember::Archive(a)) => self.archive(at, a),
            }
        }
        wit::Value {
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
        idx(first)
    }

    fn set(&mut self, at: u32, kind: u32, a: u32, b: u32) {
        let at = at as usize * WORDS;
        self.nodes[at..at + 3].copy_from_slice(&[kind, a, b]);
    }

    /// Appends `s` to the string buffer; returns its span.
    fn span(&mut self, s: &str) -> (u32, u32) {
        let offset = idx(self.strings.len());
        self.strings.extend_from_slice(s.as_bytes());
        (offset, idx(s.len()))
    }

    fn extra(&mut self, extra: wit::Extra) -> u32 {
        self.extras.push(extra);
        idx(self.extras.len() - 1)
    }

    fn object(&mut self, at: u32, map: &'a PropertyMap) {
        let first = self.reserve(map.len());
        self.set(at, kind::OBJECT, first, idx(map.len()));
        for (i, (key, value)) in map.iter().enumerate() {
            let member = first + idx(i);
            let (offset, len) = self.span(key);
            let slot = member as usize * WORDS;
            self.nodes[slot + 3] = offset;
            self.nodes[slot + 4] = len;
            self.scalar_or_later(member, value);
        }
    }

    /// Reserves one node for `value` (the only child of a secret, reference or output) and
    /// fills it; returns its index.
    fn child(&mut self, value: &'a Value) -> u32 {
        let child = self.reserve(1);
        self.scalar_or_later(child, value);
        child
    }

    /// Writes scalars at once (the common case) and queues the rest.
    fn scalar_or_later(&mut self, at: u32, value: &'a Value) {
        match value {
            Value::Null => {}
            Value::Bool(b) => self.set(at, kind::BOOL, u32::from(*b), 0),
            Value::Number(n) => self.number(at, *n),
            Value::String(s) => self.text(at, s),
            Value::Unknown => self.set(at, kind::UNKNOWN, 0, 0),
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

    fn fill(&mut self, at: u32, value: &'a Value) {
        match value {
            Value::Null => self.set(at, kind::NULL, 0, 0),
            Value::Bool(b) => self.set(at, kind::BOOL, u32::from(*b), 0),
            Value::Number(n) => self.number(at, *n),
            Value::String(s) => self.text(at, s),
            Value::Unknown => self.set(at, kind::UNKNOWN, 0, 0),
            Value::Object(map) => self.object(at, map),
            Value::Array(items) => {
                let first = self.reserve(items.len());
                self.set(at, kind::ARRAY, first, idx(items.len()));
                for (i, item) in items.iter().enumerate() {
                    self.scalar_or_later(first + idx(i), item);
                }
            }
            Value::Secret(inner) => {
                let child = self.child(inner);
                self.set(at, kind::SECRET, child, 0);
            }
            Value::Asset(a) => {
                let extra = self.extra(wit::Extra::Asset(to_wit_asset(a)));
                self.set(at, kind::ASSET, extra, 0);
            }
            Value::Archive(a) => self.archive(at, a),
            Value::ResourceReference(r) => {
                let id = r.id.as_deref().map(|id| self.child(id));
                let extra = self.extra(wit::Extra::ResourceReference(wit::ResourceReference {
                    urn: r.urn.clone(),
                    id,
                    package_version: r.package_version.clone(),
                }));
                self.set(at, kind::REFERENCE, extra, 0);
            }
            Value::Output(o) => {
                let value = o.value.as_deref().map(|v| self.child(v));
                let extra = self.extra(wit::Extra::Output(wit::OutputValue {
                    value,
                    secret: o.secret,
                    dependencies: o.dependencies.clone(),
                }));
                self.set(at, kind::OUTPUT, extra, 0);
            }
        }
    }

    fn archive(&mut self, at: u32, a: &'a Archive) {
        let source = match &a.source {
            ArchiveSource::Assets(members) => {
                let first = self.reserve(members.len());
                let mut named = Vec::with_capacity(members.len());
                for (i, (name, member)) in members.iter().enumerate() {
                    let node = first + idx(i);
                    self.pending.push((node, Pending::Member(member)));
                    named.push((name.clone(), node));
                }
                wit::ArchiveSource::Assets(named)
            }
            ArchiveSource::Path(p) => wit::ArchiveSource::Path(p.clone()),
            ArchiveSource::Uri(u) => wit::ArchiveSource::Uri(u.clone()),
            ArchiveSource::HashOnly => wit::ArchiveSource::HashOnly,
        };
        let extra = self.extra(wit::Extra::Archive(wit::Archive {
            hash: a.hash.clone(),
            source,
        }));
        self.set(at, kind::ARCHIVE, extra, 0);
    }
}

fn to_wit_asset(a: &Asset) -> wit::Asset {
    wit::Asset {
        hash: a.hash.clone(),
        source: match &a.source {
            AssetSource::Text(t) => wit::AssetSource::Text(t.clone()),
            AssetSource::Path(p) => wit::AssetSource::Path(p.clone()),
            AssetSource::Uri(u) => wit::AssetSource::Uri(u.clone()),
            AssetSource::HashOnly => wit::AssetSource::HashOnly,
        },
    }
}

#[cfg(test)]
mod tests {
    use indexmap::IndexMap;

    use super::*;
    use crate::{props, secret};

    fn every_kind() -> Value {
        let asset = Asset {
            hash: Some("ab".repeat(32)),
            source: AssetSource::Text("hello".into()),
        };
        let nested = Archive {
            hash: None,
            source: ArchiveSource::Assets(IndexMap::from([(
                "inner.txt".to_owned(),
                ArchiveMember::Asset(Asset {
                    hash: None,
                    source: AssetSource::Path("./inner.txt".into()),
                }),
            )])),
        };
        let archive = Archive {
            hash: Some("cd".repeat(32)),
            source: ArchiveSource::Assets(IndexMap::from([
                ("z.txt".to_owned(), ArchiveMember::Asset(asset.clone())),
                ("a".to_owned(), ArchiveMember::Archive(nested)),
            ])),
        };
        Value::Object(props! {
            "null" => Value::Null,
            "bool" => true,
            "number" => 1.5,
            "nan-free negative" => -0.25,
            "string" => "héllo",
            "array" => vec![Value::from(1), Value::from("two"), Value::Array(vec![])],
            "object" => props! {"z" => 1, "a" => 2, "m" => props!{}},
            "asset" => asset,
            "uri asset" => Asset { hash: None, source: AssetSource::Uri("https://x/y".into()) },
            "hash-only asset" => Asset { hash: Some("00".into()), source: AssetSource::HashOnly },
            "archive" => archive,
            "path archive" => Archive { hash: None, source: ArchiveSource::Path("dir".into()) },
            "uri archive" => Archive { hash: None, source: ArchiveSource::Uri("file:///a.tgz".into()) },
            "hash-only archive" => Archive { hash: Some("11".into()), source: ArchiveSource::HashOnly },
            "reference" => ResourceReference {
                urn: "urn:pulumi:s::p::random:index:RandomPet::pet".into(),
                id: Some(Box::new("brave-ant".into())),
                package_version: Some("1.2.3".into()),
            },
            "component reference" => ResourceReference {
                urn: "urn:pulumi:s::p::my:index:Comp::c".into(),
                id: None,
                package_version: None,
            },
            "unknown-id reference" => ResourceReference {
                urn: "urn:pulumi:s::p::a:b:C::c".into(),
                id: Some(Box::new(Value::Unknown)),
                package_version: None,
            },
            "secret" => secret(props! {"password" => "hunter2"}),
            "unknown" => Value::Unknown,
            "output" => OutputValue {
                value: Some(Box::new(secret(3))),
                secret: true,
                dependencies: vec!["urn:a".into(), "urn:b".into()],
            },
            "unknown output" => OutputValue { value: None, secret: false, dependencies: vec![] },
        })
    }

    #[test]
    fn every_kind_round_trips() {
        let v = every_kind();
        let wire = encode(&v);
        assert_eq!(decode(wire).unwrap(), v);
        let Value::Object(map) = v else {
            unreachable!()
        };
        assert_eq!(decode_map(encode_map(&map)).unwrap(), map);
    }

    #[test]
    fn scalars_round_trip_at_the_root() {
        for v in [
            Value::Null,
            Value::Bool(false),
            Value::Number(f64::MAX),
            Value::Number(-0.0),
            Value::String(String::new()),
            Value::Unknown,
            Value::secret(Value::Unknown),
        ] {
            assert_eq!(decode(encode(&v)).unwrap(), v);
        }
    }

    #[test]
    fn order_is_preserved() {
        let keys: Vec<String> = (0..200).rev().map(|i| format!("k{i}")).collect();
        let map: PropertyMap = keys.iter().map(|k| (k.clone(), Value::from(k))).collect();
        let back = decode_map(encode_map(&map)).unwrap();
        assert_eq!(back.keys().cloned().collect::<Vec<_>>(), keys);
        let items: Vec<Value> = (0..100).map(Value::from).collect();
        assert_eq!(
            decode(encode(&Value::Array(items.clone()))).unwrap(),
            Value::Array(items)
        );
    }

    #[test]
    fn encoding_puts_children_after_parents() {
        let wire = encode(&every_kind());
        assert_eq!(wire.nodes.len() % WORDS, 0);
        let forward = |i: usize, c: u32| assert!(c as usize > i, "node {i} refers to {c}");
        for (i, node) in wire.nodes.chunks(WORDS).enumerate() {
            let (a, b) = (node[1], node[2]);
            match node[0] {
                kind::ARRAY | kind::OBJECT if b > 0 => forward(i, a),
                kind::SECRET => forward(i, a),
                kind::ARCHIVE | kind::REFERENCE | kind::OUTPUT => match &wire.extras[a as usize] {
                    wit::Extra::Archive(wit::Archive {
                        source: wit::ArchiveSource::Assets(m),
                        ..
                    }) => m.iter().for_each(|(_, c)| forward(i, *c)),
                    wit::Extra::ResourceReference(r) => {
                        r.id.into_iter().for_each(|c| forward(i, c))
                    }
                    wit::Extra::Output(o) => o.value.into_iter().for_each(|c| forward(i, c)),
                    _ => {}
                },
                _ => {}
            }
        }
        // What validation accepts, it reads back identically in place.
        let table = Table::new(wire).unwrap();
        assert_eq!(table.root().unwrap().to_value(), every_kind());
    }

    #[test]
    fn deep_nesting_round_trips_up_to_the_limit() {
        let mut v = Value::from("leaf");
        for i in 0..MAX_DEPTH - 1 {
            v = if i % 3 == 0 {
                Value::Array(vec![v])
            } else if i % 3 == 1 {
                Value::Object(props! {"k" => v})
            } else {
                Value::secret(v)
            };
        }
        let wire = encode(&v);
        assert_eq!(wire.nodes.len(), MAX_DEPTH * WORDS);
        assert_eq!(decode(wire).unwrap(), v);

        let deeper = Value::Array(vec![v]);
        assert_eq!(
            decode(encode(&deeper)),
            Err(WireError::TooDeep {
                node: idx(MAX_DEPTH)
            })
        );
    }

    #[test]
    fn a_very_deep_table_is_rejected_without_exhausting_the_stack() {
        let n = 200_000u32;
        let nodes: Vec<N> = (0..n)
            .map(|i| {
                if i + 1 < n {
                    node(kind::SECRET, i + 1, 0)
                } else {
                    null()
                }
            })
            .collect();
        assert!(matches!(
            decode(table(&nodes, b"", vec![])),
            Err(WireError::TooDeep { .. })
        ));
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

    fn table(nodes: &[N], strings: &[u8], extras: Vec<wit::Extra>) -> wit::Value {
        wit::Value {
            nodes: nodes
                .iter()
                .flat_map(|n| [n.0, n.1, n.2, n.3.0, n.3.1])
                .collect(),
            strings: strings.to_vec(),
            extras,
        }
    }

    /// The string buffer hand-written test values share: `sp` finds a span in it.
    const POOL: &str = "a x|not an asset";

    fn sp(s: &str) -> (u32, u32) {
        let offset = POOL.find(s).expect("in the pool");
        (idx(offset), idx(s.len()))
    }

    fn pooled(nodes: &[N]) -> wit::Value {
        table(nodes, POOL.as_bytes(), vec![])
    }

    fn bad(nodes: &[N]) -> WireError {
        decode(pooled(nodes)).unwrap_err()
    }

    #[test]
    fn spans_are_checked() {
        assert_eq!(
            bad(&[node(kind::TEXT, 10, 7)]),
            WireError::SpanOutOfRange {
                node: 0,
                offset: 10,
                len: 7,
                buffer: 16
            }
        );
        assert_eq!(
            bad(&[node(kind::TEXT, u32::MAX, u32::MAX)]),
            WireError::SpanOutOfRange {
                node: 0,
                offset: u32::MAX,
                len: u32::MAX,
                buffer: 16
            }
        );
        assert_eq!(
            bad(&[
                node(kind::ARRAY, 1, 1),
                node(kind::OBJECT, 2, 1),
                null().raw_key(16, 1)
            ]),
            WireError::SpanOutOfRange {
                node: 2,
                offset: 16,
                len: 1,
                buffer: 16
            }
        );
        // Cut mid-character, at either end, and stray bytes.
        for (offset, len) in [(0, 1), (1, 1), (1, 2)] {
            assert_eq!(
                decode(table(
                    &[node(kind::TEXT, offset, len)],
                    "é!".as_bytes(),
                    vec![]
                )),
                Err(WireError::InvalidUtf8 {
                    node: 0,
                    offset,
                    len
                })
            );
        }
        assert_eq!(
            decode(table(
                &[node(kind::OBJECT, 1, 1), null().raw_key(0, 2)],
                &[b'a', 0xff],
                vec![]
            )),
            Err(WireError::InvalidUtf8 {
                node: 1,
                offset: 0,
                len: 2
            })
        );
        // Spans may overlap and come in any order; bytes no span covers are not checked.
        assert_eq!(
            decode(table(
                &[
                    node(kind::OBJECT, 1, 2),
                    node(kind::TEXT, 3, 0).raw_key(1, 2),
                    node(kind::TEXT, 1, 2).raw_key(0, 3),
                ],
                &[b'a', 0xc3, 0xa9, 0xff],
                vec![]
            )),
            Ok(Value::Object(props! {"é" => "", "aé" => "é"}))
        );
        assert_eq!(
            bad(&[node(kind::TEXT, 1, 200)]).to_string(),
            "node 0: text span (offset 1, length 200) is outside the 16-byte string buffer"
        );
    }

    #[test]
    fn malformed_tables_are_rejected() {
        let reference = |id| {
            wit::Extra::ResourceReference(wit::ResourceReference {
                urn: "urn:pulumi:s::p::t:m:T::n".into(),
                id,
                package_version: None,
            })
        };
        let cases: Vec<(wit::Value, WireError)> = vec![
            (pooled(&[]), WireError::Empty),
            (
                wit::Value {
                    nodes: vec![0; 4],
                    ..pooled(&[null()])
                },
                WireError::WordCount { words: 4 },
            ),
            (
                pooled(&[node(99, 0, 0)]),
                WireError::UnknownKind { node: 0, kind: 99 },
            ),
            (
                pooled(&[node(kind::ARRAY, 1, 5), null()]),
                WireError::OutOfRange {
                    node: 0,
                    index: 5,
                    len: 2,
                },
            ),
            (
                pooled(&[node(kind::ARRAY, 1, u32::MAX), null()]),
                WireError::OutOfRange {
                    node: 0,
                    index: u32::MAX,
                    len: 2,
                },
            ),
            // A self-reference and a cycle both point backwards somewhere.
            (
                pooled(&[node(kind::SECRET, 0, 0)]),
                WireError::NotAfterParent { node: 0, index: 0 },
            ),
            (
                pooled(&[node(kind::ARRAY, 1, 1), node(kind::ARRAY, 0, 1)]),
                WireError::NotAfterParent { node: 1, index: 0 },
            ),
            (
                pooled(&[node(kind::ARRAY, 1, 2), node(kind::SECRET, 2, 0), null()]),
                WireError::SharedNode { index: 2 },
            ),
            (
                pooled(&[
                    node(kind::ARRAY, 1, 1),
                    node(kind::SECRET, 2, 0),
                    null(),
                    null(),
                ]),
                WireError::Unreferenced { index: 3 },
            ),
            (
                pooled(&[node(kind::OBJECT, 1, 2), null().key("a"), null().key("a")]),
                WireError::DuplicateKey {
                    node: 0,
                    key: "a".into(),
                },
            ),
            (
                pooled(&[node(kind::ASSET, 0, 0)]),
                WireError::ExtraOutOfRange {
                    node: 0,
                    index: 0,
                    len: 0,
                },
            ),
            (
                table(
                    &[
                        node(kind::ARRAY, 1, 2),
                        node(kind::REFERENCE, 0, 0),
                        node(kind::REFERENCE, 0, 0),
                    ],
                    b"",
                    vec![reference(None)],
                ),
                WireError::SharedExtra { index: 0 },
            ),
            (
                table(&[null()], b"", vec![reference(None)]),
                WireError::UnusedExtra { index: 0 },
            ),
            (
                table(&[node(kind::OUTPUT, 0, 0)], b"", vec![reference(None)]),
                WireError::WrongExtra {
                    node: 0,
                    expected: "output",
                    found: "resource reference",
                },
            ),
            (
                table(
                    &[node(kind::REFERENCE, 0, 0), node(kind::NUMBER, 0, 0)],
                    b"",
                    vec![reference(Some(1))],
                ),
                WireError::BadReferenceId {
                    node: 0,
                    kind: "number",
                },
            ),
            (
                table(
                    &[node(kind::ARCHIVE, 0, 0), text("not an asset")],
                    POOL.as_bytes(),
                    vec![wit::Extra::Archive(wit::Archive {
                        hash: None,
                        source: wit::ArchiveSource::Assets(vec![("x".into(), 1)]),
                    })],
                ),
                WireError::BadArchiveMember {
                    node: 0,
                    key: "x".into(),
                    kind: "string",
                },
            ),
            (
                table(
                    &[node(kind::OUTPUT, 0, 0)],
                    b"",
                    vec![wit::Extra::Output(wit::OutputValue {
                        value: Some(u32::MAX),
                        secret: false,
                        dependencies: vec![],
                    })],
                ),
                WireError::OutOfRange {
                    node: 0,
                    index: u32::MAX,
                    len: 1,
                },
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(decode(value), Err(expected));
        }
        // Many keys are checked for duplicates too.
        let mut nodes = vec![node(kind::OBJECT, 1, 70)];
        nodes.extend((0..70).map(|i| null().key(if i == 69 { "a" } else { "x" })));
        assert_eq!(
            bad(&nodes),
            WireError::DuplicateKey {
                node: 0,
                key: "x".into()
            }
        );
    }

    #[test]
    fn property_maps_need_an_object_root() {
        assert_eq!(decode_map(pooled(&[])).unwrap(), props! {});
        assert_eq!(decode_map(pooled(&[null()])).unwrap(), props! {});
        assert_eq!(
            decode_map(pooled(&[text("x")])),
            Err(WireError::NotAnObject { kind: "string" })
        );
    }

    #[test]
    fn errors_read_well() {
        let e = bad(&[node(kind::ARRAY, 1, 1), node(kind::ARRAY, 0, 1)]);
        assert_eq!(
            e.to_string(),
            "node 1 refers to node 0, which is not after it"
        );
    }

    #[test]
    fn bytes_compare_equal_only_when_equal() {
        for len in 0..26 {
            let a: Vec<u8> = (0..len).map(|i| b'a' + i).collect();
            assert!(same_bytes(&a, &a.clone()), "{len}");
            for at in 0..a.len() {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "{len} differing at {at}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!same_bytes(&a, &longer), "{len} vs {}", len + 1);
        }
    }

    #[test]
    fn words_compare_equal_only_when_equal() {
        for len in 0..7u32 {
            let a: Vec<u32> = (0..len).map(|i| i * 0x0101_0101).collect();
            assert!(same_words(&a, &a.clone()), "{len}");
            for at in 0..a.len() {
                let mut b = a.clone();
                b[at] ^= 0x8000_0000;
                assert!(!same_words(&a, &b), "{len} differing at {at}");
            }
            assert!(!same_words(&a, &[a.clone(), vec![0]].concat()), "{len}");
        }
    }

    #[test]
    fn only_identical_tables_without_unknowns_are_the_same_as_a_block() {
        let map = props! {"a" => 1, "s" => "text", "o" => props! {"b" => true}};
        let table = encode_map(&map);
        assert!(same_known(&table, &encode_map(&map.clone())));
        // Any column differing.
        let mut text = map.clone();
        text.insert("s".into(), Value::from("texT"));
        let mut number = map.clone();
        number.insert("a".into(), Value::from(2));
        let mut kind = map.clone();
        kind.insert("a".into(), Value::from("1"));
        for other in [text, number, kind, props! {}] {
            assert!(!same_known(&table, &encode_map(&other)), "{other:?}");
        }
        // Equal but holding an unknown, or extras: compared node by node instead.
        let unknown = props! {"u" => Value::Unknown};
        assert!(!same_known(&encode_map(&unknown), &encode_map(&unknown)));
        let output = props! {"o" => Value::Output(OutputValue::default())};
        assert!(!same_known(&encode_map(&output), &encode_map(&output)));
    }

    #[test]
    fn nodes_compare_like_values() {
        let cases: Vec<(Value, Value)> = vec![
            (Value::from(1), Value::from(1.0)),
            (Value::from(1), Value::from(2)),
            (Value::from("a"), Value::from("a")),
            (Value::from("a"), Value::from("b")),
            (Value::from("1"), Value::from(1)),
            (Value::Null, Value::Null),
            (Value::Bool(true), Value::Bool(true)),
            (Value::Bool(true), Value::Bool(false)),
            (Value::Unknown, Value::Unknown),
            (secret("x"), Value::from("x")),
            (
                Value::Output(OutputValue {
                    value: Some(Box::new(Value::from(3))),
                    secret: true,
                    dependencies: vec!["urn:x".into()],
                }),
                Value::from(3),
            ),
            (Value::Output(OutputValue::default()), Value::Null),
            (
                Value::from(props! {"a" => 1, "b" => vec![Value::from("x")]}),
                Value::from(props! {"b" => vec![secret("x")], "a" => 1}),
            ),
            (
                Value::from(props! {"a" => 1}),
                Value::from(props! {"a" => 1, "b" => 2}),
            ),
            (
                Value::from(props! {"a" => 1, "c" => 2}),
                Value::from(props! {"a" => 1, "b" => 2}),
            ),
            (
                Value::Array(vec![Value::from(1), Value::from(2)]),
                Value::Array(vec![Value::from(2), Value::from(1)]),
            ),
            (
                Value::Array(vec![Value::from(1)]),
                Value::Array(vec![Value::from(1), Value::from(1)]),
            ),
        ];
        let every = every_kind();
        let mut cases = cases;
        cases.push((every.clone(), every.clone()));
        let Value::Object(map) = &every else {
            unreachable!()
        };
        for a in map.values() {
            for b in map.values() {
                cases.push((a.clone(), b.clone()));
            }
        }
        for (a, b) in cases {
            let (ta, tb) = (
                Table::new(encode(&a)).unwrap(),
                Table::new(encode(&b)).unwrap(),
            );
            let (na, nb) = (ta.root().unwrap(), tb.root().unwrap());
            assert_eq!(na.same_as(nb), a.same_as(&b), "{a:?} vs {b:?}");
            assert_eq!(nb.same_as(na), b.same_as(&a), "{b:?} vs {a:?}");
        }
    }
}
