//! Encoding: any side's values into any side's table. A side describes its value type through
//! [`Walk`] (what each value is, as a [`Shape`]); the encoder gives every container a block of
//! consecutive nodes at the end of the table for its children, so children always come after
//! their parent, writes scalars at once and queues containers (iteratively: no recursion).
//! Encoding never fails.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::asset::{Archive, ArchiveMember, ArchiveSource};
use crate::format::{WORDS, idx, kind};
use crate::table::{Columns, Extra, IndexedSource};

/// How one side's value type looks to the encoder. Implemented on a marker type, so a side can
/// describe a value type it does not own (the host's `PropertyValue` is the engine's).
pub trait Walk {
    /// The value type.
    type Value: 'static;
    /// The map type of its objects.
    type Map: 'static;
    /// What resource references and output dependencies hold a URN as.
    type Urn: 'static;
    /// What `value` is.
    fn shape(value: &Self::Value) -> Shape<'_, Self>;
    /// A URN's text.
    fn urn(urn: &Self::Urn) -> &str;
    /// An object's entries, in order.
    fn entries(map: &Self::Map) -> impl ExactSizeIterator<Item = (&String, &Self::Value)>;
}

/// One value as the encoder sees it.
pub enum Shape<'a, W: Walk + ?Sized> {
    Null,
    Bool(bool),
    Number(f64),
    Text(&'a str),
    Unknown,
    Array(&'a [W::Value]),
    Object(&'a W::Map),
    Secret(&'a W::Value),
    Asset(&'a crate::Asset),
    Archive(&'a Archive),
    Reference {
        urn: &'a str,
        id: Option<&'a W::Value>,
        package_version: Option<&'a String>,
    },
    Output {
        value: Option<&'a W::Value>,
        secret: bool,
        dependencies: &'a [W::Urn],
    },
}

/// Encodes any value; the root is node 0.
pub fn encode<W: Walk, C: Columns>(value: &W::Value) -> C {
    let mut encoder = Encoder::<W, C>::with_capacity(1, 0);
    encoder.reserve(1);
    encoder.fill(0, value);
    encoder.finish()
}

/// Encodes a property map as an object value (even an empty one), its columns sized before
/// encoding so they never grow (and get copied) on the way.
pub fn encode_map<W: Walk, C: Columns>(map: &W::Map) -> C {
    let mut size = Size { nodes: 1, bytes: 0 };
    size.object::<W>(map, SIZE_DEPTH);
    let mut encoder = Encoder::<W, C>::with_capacity(size.nodes, size.bytes);
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
    fn object<W: Walk>(&mut self, map: &W::Map, depth: u32) {
        let entries = W::entries(map);
        self.nodes += entries.len();
        for (key, value) in entries {
            self.bytes += key.len();
            self.value::<W>(value, depth);
        }
    }

    fn value<W: Walk>(&mut self, value: &W::Value, depth: u32) {
        match W::shape(value) {
            Shape::Text(s) => self.bytes += s.len(),
            _ if depth == 0 => {}
            Shape::Object(map) => self.object::<W>(map, depth - 1),
            Shape::Array(items) => {
                self.nodes += items.len();
                for item in items {
                    self.value::<W>(item, depth - 1);
                }
            }
            Shape::Secret(inner) => {
                self.nodes += 1;
                self.value::<W>(inner, depth - 1);
            }
            _ => {}
        }
    }
}

/// A node whose contents are still to be written, and where.
enum Pending<'a, V> {
    Value(&'a V),
    Member(&'a ArchiveMember),
}

struct Encoder<'a, W: Walk, C: Columns> {
    nodes: Vec<u32>,
    /// The text of every `text` node and object key, concatenated.
    strings: Vec<u8>,
    extras: Vec<C::Extra>,
    pending: Vec<(u32, Pending<'a, W::Value>)>,
}

impl<'a, W: Walk, C: Columns> Encoder<'a, W, C> {
    fn with_capacity(nodes: usize, bytes: usize) -> Encoder<'a, W, C> {
        Encoder {
            nodes: Vec::with_capacity(nodes * WORDS),
            strings: Vec::with_capacity(bytes),
            extras: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn finish(mut self) -> C {
        while let Some((at, item)) = self.pending.pop() {
            match item {
                Pending::Value(v) => self.fill(at, v),
                Pending::Member(ArchiveMember::Asset(a)) => {
                    let extra = self.extra(Extra::Asset(a.clone()));
                    self.set(at, kind::ASSET, extra, 0);
                }
                Pending::Member(ArchiveMember::Archive(a)) => self.archive(at, a),
            }
        }
        C::from_parts(self.nodes, self.strings, self.extras)
    }

    /// Appends `count` null nodes; returns the first one's index.
    fn reserve(&mut self, count: usize) -> u32 {
        let first = self.nodes.len() / WORDS;
        // Zeroed words are null nodes with no key.
        self.nodes.resize((first + count) * WORDS, 0);
        idx(first)
    }

    #[inline]
    fn set(&mut self, at: u32, kind: u32, a: u32, b: u32) {
        let at = at as usize * WORDS;
        self.nodes[at..at + 3].copy_from_slice(&[kind, a, b]);
    }

    /// Appends `s` to the string buffer; returns its span. (Offsets beyond 4 GiB saturate,
    /// which readers refuse; no side holds such a value.)
    #[inline]
    fn span(&mut self, s: &str) -> (u32, u32) {
        let offset = idx(self.strings.len());
        self.strings.extend_from_slice(s.as_bytes());
        (offset, idx(s.len()))
    }

    fn extra(&mut self, extra: Extra) -> u32 {
        self.extras.push(extra.into());
        idx(self.extras.len() - 1)
    }

    fn object(&mut self, at: u32, map: &'a W::Map) {
        let entries = W::entries(map);
        let first = self.reserve(entries.len());
        self.set(at, kind::OBJECT, first, idx(entries.len()));
        for (i, (key, value)) in entries.enumerate() {
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
    fn child(&mut self, value: &'a W::Value) -> u32 {
        let child = self.reserve(1);
        self.scalar_or_later(child, value);
        child
    }

    /// Writes scalars at once (the common case) and queues containers.
    #[inline]
    fn scalar_or_later(&mut self, at: u32, value: &'a W::Value) {
        match W::shape(value) {
            Shape::Null => {}
            Shape::Bool(b) => self.set(at, kind::BOOL, u32::from(b), 0),
            Shape::Number(n) => self.number(at, n),
            Shape::Text(s) => self.text(at, s),
            Shape::Unknown => self.set(at, kind::UNKNOWN, 0, 0),
            _ => self.pending.push((at, Pending::Value(value))),
        }
    }

    #[inline]
    fn number(&mut self, at: u32, n: f64) {
        let bits = n.to_bits();
        self.set(at, kind::NUMBER, bits as u32, (bits >> 32) as u32);
    }

    #[inline]
    fn text(&mut self, at: u32, s: &str) {
        let (offset, len) = self.span(s);
        self.set(at, kind::TEXT, offset, len);
    }

    fn fill(&mut self, at: u32, value: &'a W::Value) {
        match W::shape(value) {
            Shape::Null => self.set(at, kind::NULL, 0, 0),
            Shape::Bool(b) => self.set(at, kind::BOOL, u32::from(b), 0),
            Shape::Number(n) => self.number(at, n),
            Shape::Text(s) => self.text(at, s),
            Shape::Unknown => self.set(at, kind::UNKNOWN, 0, 0),
            Shape::Object(map) => self.object(at, map),
            Shape::Array(items) => {
                let first = self.reserve(items.len());
                self.set(at, kind::ARRAY, first, idx(items.len()));
                for (i, item) in items.iter().enumerate() {
                    self.scalar_or_later(first + idx(i), item);
                }
            }
            Shape::Secret(inner) => {
                let child = self.child(inner);
                self.set(at, kind::SECRET, child, 0);
            }
            Shape::Asset(asset) => {
                let extra = self.extra(Extra::Asset(asset.clone()));
                self.set(at, kind::ASSET, extra, 0);
            }
            Shape::Archive(archive) => self.archive(at, archive),
            Shape::Reference {
                urn,
                id,
                package_version,
            } => {
                let id = id.map(|id| self.child(id));
                let extra = self.extra(Extra::Reference {
                    urn: urn.to_string(),
                    id,
                    package_version: package_version.cloned(),
                });
                self.set(at, kind::REFERENCE, extra, 0);
            }
            Shape::Output {
                value,
                secret,
                dependencies,
            } => {
                let value = value.map(|v| self.child(v));
                let extra = self.extra(Extra::Output {
                    value,
                    secret,
                    dependencies: dependencies.iter().map(|u| W::urn(u).to_string()).collect(),
                });
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
                    let node = first + idx(i);
                    self.pending.push((node, Pending::Member(member)));
                    named.push((name.clone(), node));
                }
                IndexedSource::Assets(named)
            }
            ArchiveSource::Path(p) => IndexedSource::Path(p.clone()),
            ArchiveSource::Uri(u) => IndexedSource::Uri(u.clone()),
            ArchiveSource::HashOnly => IndexedSource::HashOnly,
        };
        let extra = self.extra(Extra::Archive {
            hash: archive.hash.clone(),
            source,
        });
        self.set(at, kind::ARCHIVE, extra, 0);
    }
}
