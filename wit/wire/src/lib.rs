//! `cairn-wire`: the one definition of how a value crosses the component boundary — the node
//! table of `wit/provider.wit` (`types.value`) — and of the data both sides of the boundary
//! share. Built for the host and for `wasm32-wasip2` guests alike (`no_std` + `alloc`).
//!
//! # The table
//!
//! WIT has no recursive types, so a value is a table of nodes that refer to each other by
//! index: five words per node in `nodes` (kind, two operands, the span of its key in its parent
//! object), one `strings` buffer, and `extras` for the rarer kinds that carry strings of their
//! own (assets, archives, references, outputs). Node 0 is the root; an array's elements and an
//! object's members are consecutive nodes after their parent. The kind codes are in [`kind`],
//! the meaning of each node's words in `wit/provider.wit`.
//!
//! * [`validate`] checks every rule of the format in one forward pass and reports a malformed
//!   table as a [`WireError`] (never a panic): a `nodes` list that is not whole nodes, unknown
//!   kinds, indices out of range or not after their parent (which also rules out cycles),
//!   nodes or extras used twice (or, under [`Rules::STRICT`], not at all), extras of the wrong
//!   kind, duplicate keys, archive members that are not assets or archives, resource IDs that
//!   are neither text nor unknown, spans outside the string buffer or not valid UTF-8 (e.g.
//!   cut mid-character), and nesting deeper than the [`Rules`] allow.
//! * [`Node`] reads a validated table in place: kinds, texts, keys, children, member lookup,
//!   [`Node::same_as`] (comparing texts and keys eight bytes at a time: wasm's `memcmp` is a
//!   byte loop) and [`same_known`] (identical tables compared as blocks).
//! * [`encode`] / [`encode_map`] write any side's values ([`Walk`]) into any side's table,
//!   children after their parents, the columns sized up front.
//!
//! # The two sides
//!
//! The host (wasmtime's `bindgen!`) and the guest SDK (wit-bindgen) generate distinct Rust
//! types for the same WIT record. Each side instantiates [`bind_wit!`] on its generated
//! `types` module, which implements [`Columns`] and [`WitExtra`] (the table and its extras as
//! this crate reads and builds them) and the conversions between the generated and the shared
//! types, from the names the WIT gives them. Everything else here is generic over those traits
//! and monomorphised: no dynamic dispatch, no allocation per node.
//!
//! Shared data: [`Asset`] / [`Archive`] (whose member maps hash with a randomly keyed
//! [`MemberState`]) and the lifecycle vocabulary [`CheckFailure`], [`DiffChanges`],
//! [`DiffKind`]. What only one side does stays there: the host decodes into the engine's
//! values with the engine's limits, the guest into lazy properties and its own `Value`.
//!
//! # Values as a node table in lists of primitives
//!
//! WIT has no recursive types, so a value is a table of nodes referring to each other by index
//! (root first, children after parents, each node used once): `nodes` (five `u32` per node: kind,
//! two operands, the span of the node's key in its parent object), one `strings` buffer, and
//! `extras` for the rare kinds that carry strings of their own (assets, archives, references,
//! outputs). Why, measured: with a `list<node>` of variants (0.1.0) moving a 20-node object cost
//! ~250 ns a node in wasmtime's typed lowering and wit-bindgen's lifting; lists of primitives are
//! copied as blocks on both sides, so moving a value is a few `memcpy`s whatever its size. What a
//! call costs then is mostly the number of lists: wasmtime calls the guest's `realloc` once per
//! list it lowers (~0.1 µs each, empty lists included), so 0.3.0 folded the separate `kinds` byte
//! column (0.2.0) into `nodes` — three lists per value instead of four, and a `check-request` small
//! enough to pass in registers rather than through a guest allocation — which took ~0.3 µs off
//! Check and Diff for 3 bytes more per node. Both sides validate what they receive (the guest when
//! it first reads it): lengths, ranges, forward references, single use, UTF-8 spans; the guest
//! checks the whole string buffer once and then only character boundaries. The WIT version
//! is 0.3.0: older components are refused with a message naming both versions.
//!
//! # One wire crate, thin adapters
//!
//! The table format is defined once, in `cairn-wire` (`wit/wire/`, next to the WIT it implements):
//! kind codes, validation, reading in place, encoding, its errors, and the data both sides mean the
//! same by (assets and archives, `CheckFailure`, `DiffChanges`, `DiffKind`). It was two ~1,600-line
//! copies (host `convert.rs`, SDK `wire.rs`) sharing ten runs of identical logic and each with its
//! own malformed-table tests. It is `no_std` + `alloc` so the host workspace and the wasm32-wasip2
//! guest workspaces build the very same code. The host's (wasmtime `bindgen!`) and the guest's
//! (wit-bindgen) generated types differ, so the crate reads and builds tables through two small
//! traits, `Columns` (a side's `value` record) and `WitExtra` (its `extra` variant), and walks
//! values to encode through `Walk` (a side's value type, as a `Shape`, implemented on a marker type
//! so the host can describe the engine's `PropertyValue`); all generic and monomorphised, no
//! dynamic dispatch, no allocation per node. `bind_wit!` writes each side's adapter from the names
//! the WIT gives (identical in both generators), so the mapping exists once too. What differs
//! between the sides is data, not code: `Rules` (the SDK reads the trusted host's tables strictly —
//! every node used, 512 levels; the host reads a guest's at 128 levels, ignores unused nodes as it
//! always did, and hashes keys with a random key since the guest chooses them) and the wording of
//! faults (the SDK displays `WireError`; the host renders the same faults in the engine's words,
//! which tests assert). What is each side's own stays there: the host's decoding into
//! `PropertyValue` with the engine's limits and size bound, its request/result conversions; the
//! SDK's lazy `Properties` and `Value` decoding. The engine keeps reading, hashing and writing
//! assets as extension traits (`AssetExt`, `ArchiveExt`): a foreign type takes no inherent methods,
//! and a trait keeps `asset.ensure_hash(ctx)` and the tests as they were, where free functions
//! would have changed every call. Archive member maps (`Members`) need an explicit hasher without
//! std: `MemberState`, SipHash-1-3 (std's algorithm) keyed once per process from the OS
//! (`getrandom`: `getrandom(2)`, `wasi:random`), because member names come from untrusted guests
//! and a known key (FNV, a fixed SipHash key, or `foldhash`, which says it does not aim at flooding
//! resistance) would let a guest make every insertion collide. The suite in `wit/wire/tests` runs
//! natively (`cargo test -p cairn-wire`) and in wasm: cairn-wasm's `wire` test builds the crate's
//! test binaries for wasm32-wasip2 into `target/guests`, runs each as a command component in
//! wasmtime with WASI, and checks it exits 0, passes every test it lists, and that together they
//! ran every `#[test]` in `wit/wire` — it found a `u32` sum that overflowed `usize` only on the
//! 32-bit guest.

#![no_std]

extern crate alloc;

mod asset;
mod encode;
mod error;
mod format;
mod hash;
mod lifecycle;
mod table;
mod validate;

#[cfg(feature = "arbitrary")]
pub mod arbitrary;

pub use asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Members};
pub use encode::{Shape, Walk, encode, encode_map};
pub use error::WireError;
pub use format::{MAX_DEPTH, Rules, WORDS, kind};
pub use hash::MemberState;
pub use lifecycle::{CheckFailure, DiffChanges, DiffKind};
pub use table::{
    AssetSourceRef, Columns, Extra, ExtraRef, IndexedSource, IndexedSourceRef, Node, WitExtra,
    extra_referrers, referrers, same_bytes, same_known, same_words,
};
pub use validate::{Valid, node_count, object_root, validate, validate_map};

/// Names [`bind_wit!`] expands to, so its expansion needs nothing of the caller.
#[doc(hidden)]
pub mod __private {
    pub use alloc::vec::Vec;
}

/// Binds this crate to one side's generated bindings of the WIT interface `types`: implements
/// [`Columns`] for its `Value`, [`WitExtra`] for its `Extra`, and `From` both ways between its
/// `Extra`, `Asset`, `AssetSource`, `CheckFailure`, `DiffChanges` and `DiffKind` and this
/// crate's. Every name used is one the WIT gives, so the same expansion fits wasmtime's
/// `bindgen!` and wit-bindgen alike.
///
/// ```text
/// cairn_wire::bind_wit!(crate::bindings::cairn::deploy::types);
/// ```
#[macro_export]
macro_rules! bind_wit {
    ($($types:tt)+) => {
        const _: () = {
            use $($types)+ as w;
            use $crate::__private::Vec;

            impl $crate::Columns for w::Value {
                type Extra = w::Extra;
                #[inline]
                fn nodes(&self) -> &[u32] {
                    &self.nodes
                }
                #[inline]
                fn strings(&self) -> &[u8] {
                    &self.strings
                }
                #[inline]
                fn extras(&self) -> &[w::Extra] {
                    &self.extras
                }
                #[inline]
                fn from_parts(nodes: Vec<u32>, strings: Vec<u8>, extras: Vec<w::Extra>) -> Self {
                    w::Value { nodes, strings, extras }
                }
                #[inline]
                fn into_parts(self) -> (Vec<u32>, Vec<u8>, Vec<w::Extra>) {
                    (self.nodes, self.strings, self.extras)
                }
            }

            impl $crate::WitExtra for w::Extra {
                #[inline]
                fn view(&self) -> $crate::ExtraRef<'_> {
                    use $crate::{AssetSourceRef as A, ExtraRef as E, IndexedSourceRef as I};
                    match self {
                        w::Extra::Asset(a) => E::Asset {
                            hash: a.hash.as_deref(),
                            source: match &a.source {
                                w::AssetSource::Text(t) => A::Text(t),
                                w::AssetSource::Path(p) => A::Path(p),
                                w::AssetSource::Uri(u) => A::Uri(u),
                                w::AssetSource::HashOnly => A::HashOnly,
                            },
                        },
                        w::Extra::Archive(a) => E::Archive {
                            hash: a.hash.as_deref(),
                            source: match &a.source {
                                w::ArchiveSource::Assets(m) => I::Assets(m),
                                w::ArchiveSource::Path(p) => I::Path(p),
                                w::ArchiveSource::Uri(u) => I::Uri(u),
                                w::ArchiveSource::HashOnly => I::HashOnly,
                            },
                        },
                        w::Extra::ResourceReference(r) => E::Reference {
                            urn: &r.urn,
                            id: r.id,
                            package_version: r.package_version.as_deref(),
                        },
                        w::Extra::Output(o) => E::Output {
                            value: o.value,
                            secret: o.secret,
                            dependencies: &o.dependencies,
                        },
                    }
                }
            }

            impl From<$crate::Extra> for w::Extra {
                fn from(extra: $crate::Extra) -> w::Extra {
                    use $crate::{Extra as E, IndexedSource as I};
                    match extra {
                        E::Asset(a) => w::Extra::Asset(a.into()),
                        E::Archive { hash, source } => w::Extra::Archive(w::Archive {
                            hash,
                            source: match source {
                                I::Assets(m) => w::ArchiveSource::Assets(m),
                                I::Path(p) => w::ArchiveSource::Path(p),
                                I::Uri(u) => w::ArchiveSource::Uri(u),
                                I::HashOnly => w::ArchiveSource::HashOnly,
                            },
                        }),
                        E::Reference { urn, id, package_version } => {
                            w::Extra::ResourceReference(w::ResourceReference {
                                urn,
                                id,
                                package_version,
                            })
                        }
                        E::Output { value, secret, dependencies } => {
                            w::Extra::Output(w::OutputValue { value, secret, dependencies })
                        }
                    }
                }
            }

            impl From<w::Extra> for $crate::Extra {
                fn from(extra: w::Extra) -> $crate::Extra {
                    use $crate::{Extra as E, IndexedSource as I};
                    match extra {
                        w::Extra::Asset(a) => E::Asset(a.into()),
                        w::Extra::Archive(a) => E::Archive {
                            hash: a.hash,
                            source: match a.source {
                                w::ArchiveSource::Assets(m) => I::Assets(m),
                                w::ArchiveSource::Path(p) => I::Path(p),
                                w::ArchiveSource::Uri(u) => I::Uri(u),
                                w::ArchiveSource::HashOnly => I::HashOnly,
                            },
                        },
                        w::Extra::ResourceReference(r) => E::Reference {
                            urn: r.urn,
                            id: r.id,
                            package_version: r.package_version,
                        },
                        w::Extra::Output(o) => E::Output {
                            value: o.value,
                            secret: o.secret,
                            dependencies: o.dependencies,
                        },
                    }
                }
            }

            impl From<$crate::Asset> for w::Asset {
                fn from(a: $crate::Asset) -> w::Asset {
                    use $crate::AssetSource as S;
                    w::Asset {
                        hash: a.hash,
                        source: match a.source {
                            S::Text(t) => w::AssetSource::Text(t),
                            S::Path(p) => w::AssetSource::Path(p),
                            S::Uri(u) => w::AssetSource::Uri(u),
                            S::HashOnly => w::AssetSource::HashOnly,
                        },
                    }
                }
            }

            impl From<w::Asset> for $crate::Asset {
                fn from(a: w::Asset) -> $crate::Asset {
                    use $crate::AssetSource as S;
                    $crate::Asset {
                        hash: a.hash,
                        source: match a.source {
                            w::AssetSource::Text(t) => S::Text(t),
                            w::AssetSource::Path(p) => S::Path(p),
                            w::AssetSource::Uri(u) => S::Uri(u),
                            w::AssetSource::HashOnly => S::HashOnly,
                        },
                    }
                }
            }

            impl From<$crate::CheckFailure> for w::CheckFailure {
                fn from(f: $crate::CheckFailure) -> w::CheckFailure {
                    w::CheckFailure { property: f.property, reason: f.reason }
                }
            }

            impl From<w::CheckFailure> for $crate::CheckFailure {
                fn from(f: w::CheckFailure) -> $crate::CheckFailure {
                    $crate::CheckFailure { property: f.property, reason: f.reason }
                }
            }

            impl From<$crate::DiffChanges> for w::DiffChanges {
                fn from(c: $crate::DiffChanges) -> w::DiffChanges {
                    use $crate::DiffChanges as C;
                    match c {
                        C::Unknown => w::DiffChanges::Unknown,
                        C::None => w::DiffChanges::None,
                        C::Some => w::DiffChanges::Some,
                    }
                }
            }

            impl From<w::DiffChanges> for $crate::DiffChanges {
                fn from(c: w::DiffChanges) -> $crate::DiffChanges {
                    use $crate::DiffChanges as C;
                    match c {
                        w::DiffChanges::Unknown => C::Unknown,
                        w::DiffChanges::None => C::None,
                        w::DiffChanges::Some => C::Some,
                    }
                }
            }

            impl From<$crate::DiffKind> for w::DiffKind {
                fn from(k: $crate::DiffKind) -> w::DiffKind {
                    use $crate::DiffKind as K;
                    match k {
                        K::Add => w::DiffKind::Add,
                        K::AddReplace => w::DiffKind::AddReplace,
                        K::Delete => w::DiffKind::Delete,
                        K::DeleteReplace => w::DiffKind::DeleteReplace,
                        K::Update => w::DiffKind::Update,
                        K::UpdateReplace => w::DiffKind::UpdateReplace,
                    }
                }
            }

            impl From<w::DiffKind> for $crate::DiffKind {
                fn from(k: w::DiffKind) -> $crate::DiffKind {
                    use $crate::DiffKind as K;
                    match k {
                        w::DiffKind::Add => K::Add,
                        w::DiffKind::AddReplace => K::AddReplace,
                        w::DiffKind::Delete => K::Delete,
                        w::DiffKind::DeleteReplace => K::DeleteReplace,
                        w::DiffKind::Update => K::Update,
                        w::DiffKind::UpdateReplace => K::UpdateReplace,
                    }
                }
            }
        };
    };
}
