//! Validation: every rule of the format checked in one forward pass, iteratively (parents come
//! before children, so a node's depth and whether something refers to it are known when the
//! pass reaches it). A table that passes can be read in place ([`Node`](crate::Node)) and
//! decoded without further checks: no index out of range, no cycle, no sharing, every span
//! valid UTF-8, no duplicate key, nothing deeper than the rules allow.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use core::hash::BuildHasher;

use crate::error::WireError;
use crate::format::{Rules, WORDS, idx, kind};
use crate::hash::MemberState;
use crate::table::{Columns, ExtraRef, IndexedSourceRef, Node, WitExtra};

/// What validation learnt about a table that passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Valid {
    /// The depth of the deepest node (the root is 1; 0 for an empty table).
    pub depth: usize,
}

/// The number of nodes of a `nodes` list: it must be whole nodes.
#[inline]
pub fn node_count(nodes: &[u32]) -> Result<usize, WireError> {
    if nodes.len().is_multiple_of(WORDS) {
        Ok(nodes.len() / WORDS)
    } else {
        Err(WireError::WordCount { words: nodes.len() })
    }
}

/// Checks every rule of the format (see the crate docs) and `rules`. No nodes is a valid,
/// empty table (no extras allowed then, unless `rules` ignore unused ones).
pub fn validate<C: Columns>(table: &C, rules: Rules) -> Result<Valid, WireError> {
    let len = node_count(table.nodes())?;
    if len == 0 {
        if table.extras().is_empty() || rules.ignore_unused {
            return Ok(Valid { depth: 0 });
        }
        return Err(WireError::UnusedExtra { index: 0 });
    }
    let strings = table.strings();
    let mut v = Validator {
        nodes: table.nodes(),
        strings,
        extras: table.extras(),
        utf8: core::str::from_utf8(strings).is_ok(),
        depth: vec![0; len],
        extra_used: vec![false; table.extras().len()],
        rules,
        keyed: rules.untrusted.then(MemberState::default),
    };
    v.depth[0] = 1;
    let mut deepest = 0;
    for i in 0..len {
        deepest = deepest.max(v.node(i)?);
    }
    if !rules.ignore_unused
        && let Some(i) = v.extra_used.iter().position(|used| !used)
    {
        return Err(WireError::UnusedExtra { index: idx(i) });
    }
    Ok(Valid { depth: deepest })
}

/// Validates a table meant as a property map: an object root, or no nodes / a `null` root
/// (an empty map).
pub fn validate_map<C: Columns>(table: &C, rules: Rules) -> Result<Valid, WireError> {
    let valid = validate(table, rules)?;
    object_root(table)?;
    Ok(valid)
}

/// The object at the root of a validated table meant as a property map: `None` for an empty
/// map (no nodes or a `null` root), an error for a root of any other kind.
pub fn object_root<C: Columns>(table: &C) -> Result<Option<Node<'_, C>>, WireError> {
    match Node::root(table) {
        None => Ok(None),
        Some(root) => match root.kind() {
            kind::OBJECT => Ok(Some(root)),
            kind::NULL => Ok(None),
            other => Err(WireError::NotAnObject {
                kind: kind::name(other),
            }),
        },
    }
}

struct Validator<'v, X> {
    nodes: &'v [u32],
    strings: &'v [u8],
    extras: &'v [X],
    /// The whole string buffer is valid UTF-8 (the usual case: no span needs decoding).
    utf8: bool,
    /// Each node's depth (the root's is 1); 0 while nothing refers to it.
    depth: Vec<u16>,
    extra_used: Vec<bool>,
    rules: Rules,
    /// The keyed hash for duplicate keys of an untrusted table.
    keyed: Option<MemberState>,
}

impl<'v, X: WitExtra> Validator<'v, X> {
    /// Node `i`'s operands and key span.
    #[inline]
    fn words(&self, i: usize) -> (u32, u32, u32, u32) {
        let w = &self.nodes[i * WORDS + 1..i * WORDS + WORDS];
        (w[0], w[1], w[2], w[3])
    }

    #[inline]
    fn kind(&self, i: usize) -> u32 {
        self.nodes[i * WORDS]
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
        self.depth[c] = self.depth[parent].saturating_add(1);
        Ok(())
    }

    fn text(&self, node: usize, offset: u32, len: u32) -> Result<&'v [u8], WireError> {
        let strings = self.strings;
        let start = offset as usize;
        let bytes = start
            .checked_add(len as usize)
            .and_then(|end| strings.get(start..end))
            .ok_or(WireError::SpanOutOfRange {
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
            core::str::from_utf8(bytes).is_ok()
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

    fn extra(&mut self, node: usize, at: u32) -> Result<ExtraRef<'v>, WireError> {
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
                Ok(self.extras[at as usize].view())
            }
        }
    }

    /// Checks node `i`; returns its depth.
    fn node(&mut self, i: usize) -> Result<usize, WireError> {
        let mut depth = self.depth[i];
        if depth == 0 {
            if !self.rules.ignore_unused {
                return Err(WireError::Unreferenced { index: idx(i) });
            }
            // Nothing refers to it: the root of a value of its own.
            depth = 1;
            self.depth[i] = 1;
        }
        if usize::from(depth) > self.rules.max_depth {
            return Err(WireError::TooDeep {
                node: idx(i),
                limit: self.rules.max_depth,
            });
        }
        let (a, b, _, _) = self.words(i);
        match self.kind(i) {
            kind::NULL | kind::BOOL | kind::NUMBER | kind::UNKNOWN => {}
            kind::TEXT => {
                self.text(i, a, b)?;
            }
            k @ (kind::ARRAY | kind::OBJECT) => {
                let len = self.depth.len();
                // In u64: on a 32-bit guest, `a + b` can overflow `usize`.
                if b > 0 && u64::from(a) + u64::from(b) > len as u64 {
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
        Ok(usize::from(depth))
    }

    /// Checks an object's member keys: valid spans, no duplicates.
    fn keys(&self, i: usize, first: u32, count: u32) -> Result<(), WireError> {
        for c in first..first + count {
            let (_, _, offset, len) = self.words(c as usize);
            self.text(c as usize, offset, len)?;
        }
        let strings = self.strings;
        let key = |c: u32| {
            let (_, _, offset, len) = self.words(c as usize);
            &strings[offset as usize..offset as usize + len as usize]
        };
        duplicate(i, (first..first + count).map(key), self.keyed.as_ref())
    }

    fn extra_node(&mut self, i: usize, k: u32, extra: ExtraRef<'v>) -> Result<(), WireError> {
        let found = extra.kind();
        if found != k {
            return Err(WireError::WrongExtra {
                node: idx(i),
                expected: kind::name(k),
                found: kind::name(found),
            });
        }
        match extra {
            ExtraRef::Asset { .. } => {}
            ExtraRef::Archive { source, .. } => {
                if let IndexedSourceRef::Assets(members) = source {
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
                    duplicate(
                        i,
                        members.iter().map(|(name, _)| name.as_bytes()),
                        self.keyed.as_ref(),
                    )?;
                }
            }
            ExtraRef::Reference { id, .. } => {
                if let Some(c) = id {
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
            ExtraRef::Output { value, .. } => {
                if let Some(c) = value {
                    self.refer(i, c)?;
                }
            }
        }
        Ok(())
    }
}

/// Fails on a key that appears twice: the first, in member order, that repeats an earlier
/// one. Keys are hashed and the hashes sorted, so only keys with equal hashes are compared
/// (comparing keys pairwise is quadratic, and keys often share long prefixes); `keyed` hashes
/// the keys of an untrusted table, which could otherwise be made to collide.
fn duplicate<'k>(
    node: usize,
    keys: impl ExactSizeIterator<Item = &'k [u8]> + Clone,
    keyed: Option<&MemberState>,
) -> Result<(), WireError> {
    if keys.len() < 2 {
        return Ok(());
    }
    let mut hashes: Vec<(u64, u32)> = keys
        .clone()
        .enumerate()
        .map(|(i, key)| {
            let h = keyed.map_or_else(|| hash(key), |state| state.hash_one(key));
            (h, idx(i))
        })
        .collect();
    hashes.sort_unstable();
    let key = |i: u32| keys.clone().nth(i as usize).unwrap_or_default();
    let mut first: Option<u32> = None;
    for run in hashes
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
    {
        // Positions ascend within a run: each is compared with the earlier ones.
        for (n, a) in run.iter().enumerate() {
            if first.is_none_or(|f| a.1 < f) && run[..n].iter().any(|b| key(b.1) == key(a.1)) {
                first = Some(a.1);
            }
        }
    }
    match first {
        None => Ok(()),
        Some(at) => Err(WireError::DuplicateKey {
            node: idx(node),
            key: String::from_utf8_lossy(key(at)).into_owned(),
        }),
    }
}

/// FNV-1a over 8-byte words: cheap, and only used to find candidate duplicates.
#[inline]
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
