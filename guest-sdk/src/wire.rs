//! The WIT encoding of values: a flat list of nodes, root at index 0, each child referenced by
//! an index later than its parent's. Text and object keys are spans of the value's one
//! `strings` buffer (UTF-8, concatenated), so a value crosses the boundary in a constant number
//! of allocations however many strings it holds.
//!
//! Encoding never fails. Decoding checks everything the host sends and reports malformed lists
//! as [`WireError`]s (never panics): indices out of range, indices not after their parent (which
//! also rules out cycles), nodes referenced twice or not at all, duplicate keys, archive members
//! that are not assets or archives, spans outside the string buffer or not valid UTF-8 (e.g. cut
//! mid-character), and nesting deeper than [`MAX_DEPTH`]. Both directions are
//! iterative, so a deep value cannot exhaust the guest's stack here.

use std::fmt;

use indexmap::IndexMap;

use crate::bindings::cairn::deploy::types as wit;
use crate::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, OutputValue, PropertyMap,
    ResourceReference, Value,
};

/// The deepest value accepted from the host (the root counts as depth 1).
pub const MAX_DEPTH: usize = 512;

/// Why a node list from the host is not a valid value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The list has no nodes where a single value was expected.
    Empty,
    /// A node refers to an index past the end of the list.
    OutOfRange { node: u32, index: u32, len: usize },
    /// A node refers to itself or an earlier node (this is how cycles show up).
    NotAfterParent { node: u32, index: u32 },
    /// Two references to the same node.
    SharedNode { index: u32 },
    /// A node nothing refers to.
    Unreferenced { index: u32 },
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
    let mut enc = Encoder::default();
    enc.nodes.push(wit::Node::Null);
    let root = enc.object_node(map);
    enc.nodes[0] = root;
    enc.finish()
}

/// Encodes any value.
pub fn encode(value: &Value) -> wit::Value {
    let mut enc = Encoder::default();
    enc.nodes.push(wit::Node::Null);
    enc.stack.push((Item::Value(value), 0));
    enc.finish()
}

/// Decodes a property map: an object root, or no nodes / a `null` root for an empty map.
pub fn decode_map(value: wit::Value) -> Result<PropertyMap, WireError> {
    if value.nodes.is_empty() {
        return Ok(PropertyMap::new());
    }
    match decode(value)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(PropertyMap::new()),
        other => Err(WireError::NotAnObject { kind: other.kind() }),
    }
}

/// Decodes one value.
pub fn decode(value: wit::Value) -> Result<Value, WireError> {
    let wit::Value { nodes, strings } = value;
    let len = nodes.len();
    if len == 0 {
        return Err(WireError::Empty);
    }
    let mut slots: Vec<Option<Value>> = Vec::with_capacity(len);
    slots.resize_with(len, || None);
    let mut depth = vec![1usize; len];
    // Children come after parents, so walking backwards finds every child already decoded.
    for (i, node) in nodes.into_iter().enumerate().rev() {
        let mut d = Decoder {
            slots: &mut slots,
            depth: &mut depth,
            node: i,
            len,
            strings: &strings,
        };
        let value = d.node(node)?;
        if depth[i] > MAX_DEPTH {
            return Err(WireError::TooDeep { node: idx(i) });
        }
        slots[i] = Some(value);
    }
    if let Some(i) = slots.iter().skip(1).position(Option::is_some) {
        return Err(WireError::Unreferenced { index: idx(i + 1) });
    }
    slots[0].take().ok_or(WireError::Empty)
}

/// A node index; lists never approach `u32::MAX` nodes (each node is many bytes).
fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

enum Item<'a> {
    Value(&'a Value),
    Asset(&'a Asset),
    Archive(&'a Archive),
}

/// Builds the node list: each container reserves its children's slots at the end of the list
/// (so they come after it) and queues them.
#[derive(Default)]
struct Encoder<'a> {
    nodes: Vec<wit::Node>,
    /// The text of every `text` node and object key, concatenated.
    strings: Vec<u8>,
    stack: Vec<(Item<'a>, usize)>,
}

impl<'a> Encoder<'a> {
    fn finish(mut self) -> wit::Value {
        while let Some((item, slot)) = self.stack.pop() {
            let node = match item {
                Item::Value(v) => self.value(v),
                Item::Asset(a) => wit::Node::Asset(asset(a)),
                Item::Archive(a) => wit::Node::Archive(self.archive(a)),
            };
            // Every queued slot was reserved by `child` (or is the root), so it exists.
            if let Some(n) = self.nodes.get_mut(slot) {
                *n = node;
            }
        }
        wit::Value {
            nodes: self.nodes,
            strings: self.strings,
        }
    }

    /// Appends `s` to the string buffer. (Guest memory is 32-bit, so offsets fit.)
    fn span(&mut self, s: &str) -> wit::Span {
        let offset = idx(self.strings.len());
        self.strings.extend_from_slice(s.as_bytes());
        wit::Span {
            offset,
            len: idx(s.len()),
        }
    }

    /// Reserves a slot for a child and queues it.
    fn child(&mut self, item: Item<'a>) -> u32 {
        let slot = self.nodes.len();
        self.nodes.push(wit::Node::Null);
        self.stack.push((item, slot));
        idx(slot)
    }

    fn object_node(&mut self, map: &'a PropertyMap) -> wit::Node {
        wit::Node::Object(
            map.iter()
                .map(|(k, v)| (self.span(k), self.child(Item::Value(v))))
                .collect(),
        )
    }

    fn value(&mut self, value: &'a Value) -> wit::Node {
        match value {
            Value::Null => wit::Node::Null,
            Value::Bool(b) => wit::Node::Boolean(*b),
            Value::Number(n) => wit::Node::Number(*n),
            Value::String(s) => wit::Node::Text(self.span(s)),
            Value::Array(items) => {
                wit::Node::Array(items.iter().map(|v| self.child(Item::Value(v))).collect())
            }
            Value::Object(map) => self.object_node(map),
            Value::Asset(a) => wit::Node::Asset(asset(a)),
            Value::Archive(a) => wit::Node::Archive(self.archive(a)),
            Value::ResourceReference(r) => wit::Node::ResourceReference(wit::ResourceReference {
                urn: r.urn.clone(),
                id: r.id.as_deref().map(|id| self.child(Item::Value(id))),
                package_version: r.package_version.clone(),
            }),
            Value::Secret(inner) => wit::Node::Secret(self.child(Item::Value(inner))),
            Value::Unknown => wit::Node::Unknown,
            Value::Output(o) => wit::Node::Output(wit::OutputValue {
                value: o.value.as_deref().map(|v| self.child(Item::Value(v))),
                secret: o.secret,
                dependencies: o.dependencies.clone(),
            }),
        }
    }

    fn archive(&mut self, a: &'a Archive) -> wit::Archive {
        let source = match &a.source {
            ArchiveSource::Assets(members) => wit::ArchiveSource::Assets(
                members
                    .iter()
                    .map(|(name, m)| {
                        let item = match m {
                            ArchiveMember::Asset(a) => Item::Asset(a),
                            ArchiveMember::Archive(a) => Item::Archive(a),
                        };
                        (name.clone(), self.child(item))
                    })
                    .collect(),
            ),
            ArchiveSource::Path(p) => wit::ArchiveSource::Path(p.clone()),
            ArchiveSource::Uri(u) => wit::ArchiveSource::Uri(u.clone()),
            ArchiveSource::HashOnly => wit::ArchiveSource::HashOnly,
        };
        wit::Archive {
            hash: a.hash.clone(),
            source,
        }
    }
}

fn asset(a: &Asset) -> wit::Asset {
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

/// Decodes one node, taking its (already decoded) children out of `slots`.
struct Decoder<'s> {
    slots: &'s mut [Option<Value>],
    depth: &'s mut [usize],
    node: usize,
    len: usize,
    strings: &'s [u8],
}

impl Decoder<'_> {
    /// The text of a span: in range and valid UTF-8.
    fn text(&self, span: wit::Span) -> Result<String, WireError> {
        let wit::Span { offset, len } = span;
        let start = offset as usize;
        let bytes = start
            .checked_add(len as usize)
            .and_then(|end| self.strings.get(start..end))
            .ok_or(WireError::SpanOutOfRange {
                node: idx(self.node),
                offset,
                len,
                buffer: self.strings.len(),
            })?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(WireError::InvalidUtf8 {
                node: idx(self.node),
                offset,
                len,
            }),
        }
    }

    fn take(&mut self, index: u32) -> Result<Value, WireError> {
        let c = index as usize;
        if c >= self.len {
            return Err(WireError::OutOfRange {
                node: idx(self.node),
                index,
                len: self.len,
            });
        }
        if c <= self.node {
            return Err(WireError::NotAfterParent {
                node: idx(self.node),
                index,
            });
        }
        let child = self.slots[c]
            .take()
            .ok_or(WireError::SharedNode { index })?;
        self.depth[self.node] = self.depth[self.node].max(self.depth[c] + 1);
        Ok(child)
    }

    /// Decodes keyed children; `key` turns a wire key into its text.
    fn keyed<K>(
        &mut self,
        entries: Vec<(K, u32)>,
        key: impl Fn(&Self, K) -> Result<String, WireError>,
    ) -> Result<IndexMap<String, Value>, WireError> {
        let mut map = IndexMap::with_capacity(entries.len());
        for (k, index) in entries {
            let key = key(self, k)?;
            let v = self.take(index)?;
            // One hash per key: look up and insert through the entry.
            match map.entry(key) {
                indexmap::map::Entry::Vacant(e) => {
                    e.insert(v);
                }
                indexmap::map::Entry::Occupied(e) => {
                    return Err(WireError::DuplicateKey {
                        node: idx(self.node),
                        key: e.key().clone(),
                    });
                }
            }
        }
        Ok(map)
    }

    fn node(&mut self, node: wit::Node) -> Result<Value, WireError> {
        Ok(match node {
            wit::Node::Null => Value::Null,
            wit::Node::Boolean(b) => Value::Bool(b),
            wit::Node::Number(n) => Value::Number(n),
            wit::Node::Text(s) => Value::String(self.text(s)?),
            wit::Node::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|i| self.take(i))
                    .collect::<Result<_, _>>()?,
            ),
            wit::Node::Object(entries) => Value::Object(self.keyed(entries, Self::text)?),
            wit::Node::Asset(a) => Value::Asset(from_wit_asset(a)),
            wit::Node::Archive(a) => Value::Archive(self.archive(a)?),
            wit::Node::ResourceReference(r) => Value::ResourceReference(ResourceReference {
                urn: r.urn,
                id: r.id.map(|i| self.take(i).map(Box::new)).transpose()?,
                package_version: r.package_version,
            }),
            wit::Node::Secret(i) => Value::Secret(Box::new(self.take(i)?)),
            wit::Node::Unknown => Value::Unknown,
            wit::Node::Output(o) => Value::Output(OutputValue {
                value: o.value.map(|i| self.take(i).map(Box::new)).transpose()?,
                secret: o.secret,
                dependencies: o.dependencies,
            }),
        })
    }

    fn archive(&mut self, a: wit::Archive) -> Result<Archive, WireError> {
        let source = match a.source {
            wit::ArchiveSource::Assets(entries) => {
                let mut members = IndexMap::with_capacity(entries.len());
                for (key, value) in self.keyed(entries, |_, k| Ok(k))? {
                    let member = match value {
                        Value::Asset(a) => ArchiveMember::Asset(a),
                        Value::Archive(a) => ArchiveMember::Archive(a),
                        other => {
                            return Err(WireError::BadArchiveMember {
                                node: idx(self.node),
                                key,
                                kind: other.kind(),
                            });
                        }
                    };
                    members.insert(key, member);
                }
                ArchiveSource::Assets(members)
            }
            wit::ArchiveSource::Path(p) => ArchiveSource::Path(p),
            wit::ArchiveSource::Uri(u) => ArchiveSource::Uri(u),
            wit::ArchiveSource::HashOnly => ArchiveSource::HashOnly,
        };
        Ok(Archive {
            hash: a.hash,
            source,
        })
    }
}

fn from_wit_asset(a: wit::Asset) -> Asset {
    Asset {
        hash: a.hash,
        source: match a.source {
            wit::AssetSource::Text(t) => AssetSource::Text(t),
            wit::AssetSource::Path(p) => AssetSource::Path(p),
            wit::AssetSource::Uri(u) => AssetSource::Uri(u),
            wit::AssetSource::HashOnly => AssetSource::HashOnly,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{props, secret};
    use wit::Node as N;

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
        for (i, node) in wire.nodes.iter().enumerate() {
            let children: Vec<u32> = match node {
                N::Array(c) => c.clone(),
                N::Object(e) => e.iter().map(|(_, c)| *c).collect(),
                N::Secret(c) => vec![*c],
                N::Output(o) => o.value.into_iter().collect(),
                N::ResourceReference(r) => r.id.into_iter().collect(),
                N::Archive(wit::Archive {
                    source: wit::ArchiveSource::Assets(e),
                    ..
                }) => e.iter().map(|(_, c)| *c).collect(),
                _ => vec![],
            };
            assert!(children.iter().all(|&c| c as usize > i), "node {i}");
        }
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
        assert_eq!(wire.nodes.len(), MAX_DEPTH);
        assert_eq!(decode(wire).unwrap(), v);

        let deeper = Value::Array(vec![v]);
        assert_eq!(decode(encode(&deeper)), Err(WireError::TooDeep { node: 0 }));
    }

    #[test]
    fn a_very_deep_list_is_rejected_without_exhausting_the_stack() {
        let n = 200_000u32;
        let nodes = (0..n)
            .map(|i| if i + 1 < n { N::Secret(i + 1) } else { N::Null })
            .collect();
        assert!(matches!(
            decode(wit::Value {
                nodes,
                strings: vec![]
            }),
            Err(WireError::TooDeep { .. })
        ));
    }

    fn bad(nodes: Vec<N>) -> WireError {
        decode(pooled(nodes)).unwrap_err()
    }

    /// The string buffer hand-written test values share: `sp` finds a span in it.
    const POOL: &str = "a x|not an asset";

    fn sp(s: &str) -> wit::Span {
        let offset = POOL.find(s).expect("in the pool");
        wit::Span {
            offset: idx(offset),
            len: idx(s.len()),
        }
    }

    fn pooled(nodes: Vec<N>) -> wit::Value {
        wit::Value {
            nodes,
            strings: POOL.as_bytes().to_vec(),
        }
    }

    fn span(offset: u32, len: u32) -> wit::Span {
        wit::Span { offset, len }
    }

    #[test]
    fn spans_are_checked() {
        assert_eq!(
            bad(vec![N::Text(span(10, 7))]),
            WireError::SpanOutOfRange {
                node: 0,
                offset: 10,
                len: 7,
                buffer: 16
            }
        );
        assert_eq!(
            bad(vec![N::Text(span(u32::MAX, u32::MAX))]),
            WireError::SpanOutOfRange {
                node: 0,
                offset: u32::MAX,
                len: u32::MAX,
                buffer: 16
            }
        );
        assert_eq!(
            bad(vec![
                N::Array(vec![1]),
                N::Object(vec![(span(16, 1), 2)]),
                N::Null
            ]),
            WireError::SpanOutOfRange {
                node: 1,
                offset: 16,
                len: 1,
                buffer: 16
            }
        );
        let with = |nodes: Vec<N>, strings: &[u8]| {
            decode(wit::Value {
                nodes,
                strings: strings.to_vec(),
            })
        };
        // Cut mid-character, at either end, and stray bytes.
        for (offset, len) in [(0, 1), (1, 1), (1, 2)] {
            assert_eq!(
                with(vec![N::Text(span(offset, len))], "é!".as_bytes()),
                Err(WireError::InvalidUtf8 {
                    node: 0,
                    offset,
                    len
                })
            );
        }
        assert_eq!(
            with(
                vec![N::Object(vec![(span(0, 2), 1)]), N::Null],
                &[b'a', 0xff]
            ),
            Err(WireError::InvalidUtf8 {
                node: 0,
                offset: 0,
                len: 2
            })
        );
        // Spans may overlap and come in any order; bytes no span covers are not checked.
        assert_eq!(
            with(
                vec![
                    N::Object(vec![(span(1, 2), 1), (span(0, 3), 2)]),
                    N::Text(span(3, 0)),
                    N::Text(span(1, 2)),
                ],
                &[b'a', 0xc3, 0xa9, 0xff]
            ),
            Ok(Value::Object(props! {"é" => "", "aé" => "é"}))
        );
        assert_eq!(
            bad(vec![N::Text(span(1, 200))]).to_string(),
            "node 0: text span (offset 1, length 200) is outside the 16-byte string buffer"
        );
    }

    #[test]
    fn malformed_lists_are_rejected() {
        assert_eq!(bad(vec![]), WireError::Empty);
        assert_eq!(
            bad(vec![N::Array(vec![1, 5]), N::Null]),
            WireError::OutOfRange {
                node: 0,
                index: 5,
                len: 2
            }
        );
        // A self-reference and a cycle both point backwards somewhere.
        assert_eq!(
            bad(vec![N::Secret(0)]),
            WireError::NotAfterParent { node: 0, index: 0 }
        );
        assert_eq!(
            bad(vec![N::Array(vec![1]), N::Array(vec![0])]),
            WireError::NotAfterParent { node: 1, index: 0 }
        );
        assert_eq!(
            bad(vec![N::Array(vec![2]), N::Null, N::Array(vec![1])]),
            WireError::NotAfterParent { node: 2, index: 1 }
        );
        assert_eq!(
            bad(vec![N::Array(vec![1, 1]), N::Null]),
            WireError::SharedNode { index: 1 }
        );
        assert_eq!(
            bad(vec![N::Array(vec![1]), N::Secret(2), N::Null, N::Null]),
            WireError::Unreferenced { index: 3 }
        );
        assert_eq!(
            bad(vec![
                N::Object(vec![(sp("a"), 1), (sp("a"), 2)]),
                N::Null,
                N::Null
            ]),
            WireError::DuplicateKey {
                node: 0,
                key: "a".into()
            }
        );
        assert_eq!(
            bad(vec![
                N::Archive(wit::Archive {
                    hash: None,
                    source: wit::ArchiveSource::Assets(vec![("x".into(), 1)]),
                }),
                N::Text(sp("not an asset")),
            ]),
            WireError::BadArchiveMember {
                node: 0,
                key: "x".into(),
                kind: "string"
            }
        );
        assert_eq!(
            bad(vec![N::Output(wit::OutputValue {
                value: Some(u32::MAX),
                secret: false,
                dependencies: vec![]
            })]),
            WireError::OutOfRange {
                node: 0,
                index: u32::MAX,
                len: 1
            }
        );
    }

    #[test]
    fn property_maps_need_an_object_root() {
        assert_eq!(decode_map(pooled(vec![])).unwrap(), props! {});
        assert_eq!(decode_map(pooled(vec![N::Null])).unwrap(), props! {});
        assert_eq!(
            decode_map(pooled(vec![N::Text(sp("x"))])),
            Err(WireError::NotAnObject { kind: "string" })
        );
    }

    #[test]
    fn errors_read_well() {
        let e = bad(vec![N::Array(vec![1]), N::Array(vec![0])]);
        assert_eq!(
            e.to_string(),
            "node 1 refers to node 0, which is not after it"
        );
    }
}
