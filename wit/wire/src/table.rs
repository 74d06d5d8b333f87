//! The table as each side holds it, seen through [`Columns`] (its three lists) and
//! [`WitExtra`] (its generated `extra` variant), and read in place through [`Node`]s.
//!
//! The host's and the guest's bindings generate distinct Rust types for the same WIT record;
//! [`bind_wit!`](crate::bind_wit) implements these traits for either from the WIT's names.
//! Everything here is generic over them and monomorphised: no dynamic dispatch.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::asset::{Asset, AssetSource};
use crate::format::{WORDS, idx, kind};

/// A side's generated `value` record: `nodes`, `strings`, `extras`.
pub trait Columns {
    /// The side's generated `extra` variant.
    type Extra: WitExtra;
    fn nodes(&self) -> &[u32];
    fn strings(&self) -> &[u8];
    fn extras(&self) -> &[Self::Extra];
    fn from_parts(nodes: Vec<u32>, strings: Vec<u8>, extras: Vec<Self::Extra>) -> Self;
    fn into_parts(self) -> (Vec<u32>, Vec<u8>, Vec<Self::Extra>);

    /// No nodes: an empty property map (it allocates nothing).
    fn empty() -> Self
    where
        Self: Sized,
    {
        Self::from_parts(Vec::new(), Vec::new(), Vec::new())
    }
}

/// A side's generated `extra` variant: read through a borrowed view, built from an [`Extra`].
pub trait WitExtra: From<Extra> {
    fn view(&self) -> ExtraRef<'_>;
}

/// The payload of a node of a rarer kind, owned (what the encoder builds and the host moves
/// out of a table it decodes). Mirrors WIT's `extra`.
#[derive(Debug, Clone, PartialEq)]
pub enum Extra {
    Asset(Asset),
    Archive {
        hash: Option<String>,
        source: IndexedSource,
    },
    Reference {
        urn: String,
        /// The index of the ID's node; none for components.
        id: Option<u32>,
        package_version: Option<String>,
    },
    Output {
        /// The index of the value's node; none when unknown.
        value: Option<u32>,
        secret: bool,
        dependencies: Vec<String>,
    },
}

/// An archive's source in a table: a literal archive's members are nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexedSource {
    /// Member names and the indices of their nodes (each an asset or an archive).
    Assets(Vec<(String, u32)>),
    Path(String),
    Uri(String),
    HashOnly,
}

/// An extra, borrowed from the side's generated type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExtraRef<'a> {
    Asset {
        hash: Option<&'a str>,
        source: AssetSourceRef<'a>,
    },
    Archive {
        hash: Option<&'a str>,
        source: IndexedSourceRef<'a>,
    },
    Reference {
        urn: &'a str,
        id: Option<u32>,
        package_version: Option<&'a str>,
    },
    Output {
        value: Option<u32>,
        secret: bool,
        dependencies: &'a [String],
    },
}

/// An asset's source, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetSourceRef<'a> {
    Text(&'a str),
    Path(&'a str),
    Uri(&'a str),
    HashOnly,
}

/// An archive's source in a table, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexedSourceRef<'a> {
    Assets(&'a [(String, u32)]),
    Path(&'a str),
    Uri(&'a str),
    HashOnly,
}

impl ExtraRef<'_> {
    /// The node kind this extra belongs to.
    #[inline]
    pub fn kind(&self) -> u32 {
        match self {
            ExtraRef::Asset { .. } => kind::ASSET,
            ExtraRef::Archive { .. } => kind::ARCHIVE,
            ExtraRef::Reference { .. } => kind::REFERENCE,
            ExtraRef::Output { .. } => kind::OUTPUT,
        }
    }

    /// The nodes this extra refers to (archive members, a reference's ID, an output's value).
    #[inline]
    pub fn children(&self) -> impl Iterator<Item = u32> + '_ {
        let (members, one): (&[(String, u32)], Option<u32>) = match *self {
            ExtraRef::Archive {
                source: IndexedSourceRef::Assets(members),
                ..
            } => (members, None),
            ExtraRef::Reference { id, .. } => (&[], id),
            ExtraRef::Output { value, .. } => (&[], value),
            _ => (&[], None),
        };
        members.iter().map(|(_, c)| *c).chain(one)
    }
}

impl AssetSourceRef<'_> {
    /// The source, owned.
    pub fn to_owned(self) -> AssetSource {
        match self {
            AssetSourceRef::Text(t) => AssetSource::Text(t.into()),
            AssetSourceRef::Path(p) => AssetSource::Path(p.into()),
            AssetSourceRef::Uri(u) => AssetSource::Uri(u.into()),
            AssetSourceRef::HashOnly => AssetSource::HashOnly,
        }
    }
}

/// Byte-slice equality eight bytes at a time: in wasm, `memcmp` is a byte-by-byte loop, and
/// comparing texts is most of what a default `diff` does.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or_default());
    x.by_ref().zip(y.by_ref()).all(|(p, q)| word(p) == word(q)) && x.remainder() == y.remainder()
}

/// [`same_bytes`] for `u32` columns, two words at a time.
#[inline]
pub fn same_words(a: &[u32], b: &[u32]) -> bool {
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
pub fn same_known<C: Columns>(a: &C, b: &C) -> bool {
    a.extras().is_empty()
        && b.extras().is_empty()
        && same_words(a.nodes(), b.nodes())
        && a.nodes().iter().step_by(WORDS).all(|&k| k != kind::UNKNOWN)
        && same_bytes(a.strings(), b.strings())
}

/// The nodes that refer to node `index`, in table order (a well-formed table has one). For
/// naming the parties of a fault in any table, validated or not.
pub fn referrers<C: Columns>(table: &C, index: u32) -> impl Iterator<Item = u32> + '_ {
    let nodes = table.nodes().chunks_exact(WORDS);
    nodes.enumerate().filter_map(move |(i, w)| {
        let refers = match w[0] {
            kind::ARRAY | kind::OBJECT => {
                index >= w[1] && u64::from(index) < u64::from(w[1]) + u64::from(w[2])
            }
            kind::SECRET => w[1] == index,
            k if kind::has_extra(k) => table
                .extras()
                .get(w[1] as usize)
                .is_some_and(|x| x.view().children().any(|c| c == index)),
            _ => false,
        };
        refers.then_some(idx(i))
    })
}

/// The nodes that refer to extra `index`, in table order.
pub fn extra_referrers<C: Columns>(table: &C, index: u32) -> impl Iterator<Item = u32> + '_ {
    let nodes = table.nodes().chunks_exact(WORDS);
    nodes
        .enumerate()
        .filter_map(move |(i, w)| (kind::has_extra(w[0]) && w[1] == index).then_some(idx(i)))
}

/// One node of a validated table (see [`validate`](crate::validate)): reading a node of a
/// table that was not validated may panic.
pub struct Node<'t, C> {
    table: &'t C,
    index: usize,
}

impl<C> Clone for Node<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Node<'_, C> {}

impl<C: Columns> fmt::Debug for Node<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {} ({})", self.index, kind::name(self.kind()))
    }
}

impl<'t, C: Columns> Node<'t, C> {
    /// The root of a validated table, unless it is empty.
    #[inline]
    pub fn root(table: &'t C) -> Option<Node<'t, C>> {
        (!table.nodes().is_empty()).then_some(Node { table, index: 0 })
    }

    /// The root object of a table that passed [`validate_map`](crate::validate_map): `None`
    /// when the map is empty (no nodes or a `null` root).
    #[inline]
    pub fn object(table: &'t C) -> Option<Node<'t, C>> {
        Node::root(table).filter(|r| r.kind() == kind::OBJECT)
    }

    /// Node `index` of a validated table.
    #[inline]
    pub fn at(table: &'t C, index: usize) -> Node<'t, C> {
        Node { table, index }
    }

    #[inline]
    pub fn index(self) -> usize {
        self.index
    }

    #[inline]
    pub fn kind(self) -> u32 {
        self.table.nodes()[self.index * WORDS]
    }

    #[inline]
    fn word(self, w: usize) -> u32 {
        self.table.nodes()[self.index * WORDS + 1 + w]
    }

    /// The node's operands `a` and `b` (their meaning depends on the kind).
    #[inline]
    pub fn operands(self) -> (u32, u32) {
        (self.word(0), self.word(1))
    }

    /// Node `index` of the same table (a child named by this node or its extra).
    #[inline]
    pub fn child(self, index: u32) -> Node<'t, C> {
        Node {
            table: self.table,
            index: index as usize,
        }
    }

    #[inline]
    fn span(self, offset: u32, len: u32) -> &'t [u8] {
        let start = offset as usize;
        &self.table.strings()[start..start + len as usize]
    }

    /// Validated as UTF-8 with the table.
    #[inline]
    fn str(self, offset: u32, len: u32) -> &'t str {
        core::str::from_utf8(self.span(offset, len)).unwrap_or_default()
    }

    /// The key of an object member.
    #[inline]
    pub fn key(self) -> &'t str {
        self.str(self.word(2), self.word(3))
    }

    /// The key of an object member, as bytes (no UTF-8 check).
    #[inline]
    pub fn key_bytes(self) -> &'t [u8] {
        self.span(self.word(2), self.word(3))
    }

    /// A `text` node's text.
    #[inline]
    pub fn text(self) -> &'t str {
        self.str(self.word(0), self.word(1))
    }

    /// A `bool` node's value.
    #[inline]
    pub fn flag(self) -> bool {
        self.word(0) != 0
    }

    /// A `number` node's value.
    #[inline]
    pub fn number(self) -> f64 {
        f64::from_bits(u64::from(self.word(0)) | (u64::from(self.word(1)) << 32))
    }

    /// The elements of an array or the members of an object (nothing for other kinds).
    #[inline]
    pub fn children(self) -> impl ExactSizeIterator<Item = Node<'t, C>> {
        let (first, count) = match self.kind() {
            kind::ARRAY | kind::OBJECT => (self.word(0) as usize, self.word(1) as usize),
            _ => (0, 0),
        };
        let table = self.table;
        (first..first + count).map(move |index| Node { table, index })
    }

    /// An object's member named `key`. Members are usually looked up in the order they
    /// come, so `hint` (a position) is tried first.
    #[inline]
    pub fn member(self, key: &str, hint: usize) -> Option<Node<'t, C>> {
        self.member_bytes(key.as_bytes(), hint)
    }

    /// [`Node::member`] by the key's bytes.
    #[inline]
    pub fn member_bytes(self, key: &[u8], hint: usize) -> Option<Node<'t, C>> {
        if self.kind() != kind::OBJECT {
            return None;
        }
        let named = |m: &Node<'_, C>| same_bytes(m.key_bytes(), key);
        self.children()
            .nth(hint)
            .filter(named)
            .or_else(|| self.children().find(named))
    }

    /// The extra of an asset, archive, reference or output node.
    #[inline]
    pub fn extra(self) -> &'t C::Extra {
        &self.table.extras()[self.word(0) as usize]
    }

    /// The contents with secret and output wrappers removed; `None` for an unknown output.
    pub fn reveal(self) -> Option<Node<'t, C>> {
        let mut node = self;
        loop {
            match node.kind() {
                kind::SECRET => node = node.child(node.word(0)),
                kind::OUTPUT => match node.extra().view() {
                    ExtraRef::Output { value, .. } => node = node.child(value?),
                    _ => return Some(node),
                },
                _ => return Some(node),
            }
        }
    }

    /// Equal contents, ignoring secret and output markers at every depth; unknowns are never
    /// the same as anything (their value may turn out to differ). Assets, archives and
    /// references are the same when they are [equal](Node::equals).
    pub fn same_as(self, other: Node<'_, C>) -> bool {
        let (Some(a), Some(b)) = (self.reveal(), other.reveal()) else {
            return false;
        };
        match (a.kind(), b.kind()) {
            (kind::UNKNOWN, _) | (_, kind::UNKNOWN) => false,
            (x, y) if x != y => false,
            (kind::NULL, _) => true,
            (kind::BOOL, _) => a.flag() == b.flag(),
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
            _ => a.equals(b),
        }
    }

    /// Structural equality, as of decoded values: kinds and contents equal at every depth,
    /// secret and output markers included, an unknown equal to an unknown, members and keys in
    /// any order.
    pub fn equals(self, other: Node<'_, C>) -> bool {
        let (a, b) = (self, other);
        if a.kind() != b.kind() {
            return false;
        }
        match a.kind() {
            kind::NULL | kind::UNKNOWN => true,
            kind::BOOL => a.flag() == b.flag(),
            kind::NUMBER => a.number() == b.number(),
            kind::TEXT => same_bytes(a.span(a.word(0), a.word(1)), b.span(b.word(0), b.word(1))),
            kind::ARRAY => {
                a.word(1) == b.word(1) && a.children().zip(b.children()).all(|(x, y)| x.equals(y))
            }
            kind::OBJECT => {
                a.word(1) == b.word(1)
                    && a.children().enumerate().all(|(i, x)| {
                        b.member_bytes(x.key_bytes(), i)
                            .is_some_and(|y| x.equals(y))
                    })
            }
            kind::SECRET => a.child(a.word(0)).equals(b.child(b.word(0))),
            _ => a.extra_equals(b),
        }
    }

    fn extra_equals(self, other: Node<'_, C>) -> bool {
        let same = |x: Option<u32>, y: Option<u32>| match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => self.child(x).equals(other.child(y)),
            _ => false,
        };
        match (self.extra().view(), other.extra().view()) {
            (
                ExtraRef::Archive {
                    hash: h1,
                    source: IndexedSourceRef::Assets(m1),
                },
                ExtraRef::Archive {
                    hash: h2,
                    source: IndexedSourceRef::Assets(m2),
                },
            ) => {
                // Members are a map: equal when the same names hold equal members.
                h1 == h2
                    && m1.len() == m2.len()
                    && m1.iter().all(|(name, x)| {
                        m2.iter()
                            .find(|(n, _)| n == name)
                            .is_some_and(|(_, y)| same(Some(*x), Some(*y)))
                    })
            }
            (
                ExtraRef::Reference {
                    urn: u1,
                    id: i1,
                    package_version: p1,
                },
                ExtraRef::Reference {
                    urn: u2,
                    id: i2,
                    package_version: p2,
                },
            ) => u1 == u2 && p1 == p2 && same(i1, i2),
            (
                ExtraRef::Output {
                    value: v1,
                    secret: s1,
                    dependencies: d1,
                },
                ExtraRef::Output {
                    value: v2,
                    secret: s2,
                    dependencies: d2,
                },
            ) => s1 == s2 && d1 == d2 && same(v1, v2),
            // Assets and archives from a file or URI hold no nodes: equal as data.
            (x, y) => x == y,
        }
    }
}
