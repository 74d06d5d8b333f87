//! The node-table format itself: kind codes, words per node, the depth bound, and the rules a
//! reader applies beyond the format (how deep, whether unused nodes are refused).

/// Words per node in `nodes`: kind, `a`, `b`, key offset, key length.
pub const WORDS: usize = 5;

/// The deepest value a reader accepts under [`Rules::STRICT`] (the root counts as depth 1).
pub const MAX_DEPTH: usize = 512;

/// Node kind codes (a node's first word); `wit/provider.wit` says what `a` and `b` mean for each.
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

    /// The kind's name, for messages (the names of the value kinds on both sides).
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

    /// Whether nodes of this kind carry their payload in `extras`.
    #[inline]
    pub fn has_extra(kind: u32) -> bool {
        matches!(kind, ASSET | ARCHIVE | REFERENCE | OUTPUT)
    }
}

/// What a reader refuses beyond the format, and how much it trusts the table. The guest SDK
/// reads the host's tables with [`Rules::STRICT`]; the host reads a guest's with a tighter
/// depth bound, ignores what nothing refers to (it decodes every node anyway, so an unused one
/// costs what a used one would) and does not trust the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// The deepest node accepted (the root, and any node nothing refers to, is at depth 1).
    pub max_depth: usize,
    /// Nodes and extras nothing refers to are checked like any other but not refused.
    pub ignore_unused: bool,
    /// The table may have been crafted to make checking it slow: duplicate keys are looked for
    /// through a randomly keyed hash ([`MemberState`](crate::MemberState)), which no table can
    /// be made to collide in, rather than a cheaper fixed one.
    pub untrusted: bool,
}

impl Rules {
    /// A trusted table: every node and extra used, at most [`MAX_DEPTH`] levels.
    pub const STRICT: Rules = Rules {
        max_depth: MAX_DEPTH,
        ignore_unused: false,
        untrusted: false,
    };
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::STRICT
    }
}

/// A node or extra index: tables never approach `u32::MAX` nodes (the guest's memory is
/// 32-bit, and the host cannot build such a value in memory first), so this saturates.
#[inline]
pub(crate) fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}
