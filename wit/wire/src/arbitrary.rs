//! Inputs for the fuzz targets of tables (feature `arbitrary`): tables built word by word
//! (mostly nonsense, now and then well-formed) or a side's own encoding with a few words, bytes
//! or extras damaged, and the seeds and dictionary they start from. The host's and the guest
//! SDK's targets draw their tables from here, each as its own generated type.

extern crate std;

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use arbitrary::{Result, Unstructured};

use crate::asset::{Asset, AssetSource};
use crate::format::WORDS;
use crate::format::kind;
use crate::table::{Columns, Extra, IndexedSource};

/// Tokens worth splicing into inputs: kind codes as little-endian words.
pub const DICTIONARY: &[&str] = &[
    "\u{0}\u{0}\u{0}\u{0}",
    "\u{5}\u{0}\u{0}\u{0}",
    "\u{4}\u{0}\u{0}\u{0}",
    "\u{1}\u{0}\u{0}\u{0}",
    "\u{6}\u{0}\u{0}\u{0}",
];

/// 24 seeds, a third for each [`Input`]; `salt` varies them between targets.
pub fn seeds(salt: u8) -> Vec<Vec<u8>> {
    (0u8..24)
        .map(|i| {
            let mut seed = alloc::vec![i % 3];
            let step = u32::from(salt | 1);
            seed.extend((0..400u32).map(|j| (j.wrapping_mul(step) + u32::from(i) * 13) as u8));
            seed
        })
        .collect()
}

/// What a target's input makes, by its first byte.
pub enum Input<'a, C> {
    /// A table to check: built word by word, or the side's encoding of a value it generated,
    /// damaged.
    Table(C),
    /// The rest of the input, for the side to generate a value of its own from (to check that
    /// it round-trips).
    Value(Unstructured<'a>),
}

/// Reads an input: `None` when it is too short to make anything. `encoded` generates a value
/// of the side's own and encodes it.
pub fn input<'a, C: Columns>(
    data: &'a [u8],
    encoded: impl FnOnce(&mut Unstructured<'a>) -> Result<C>,
) -> Option<Input<'a, C>> {
    let (mode, rest) = data.split_first()?;
    let mut u = Unstructured::new(rest);
    let table = match mode % 3 {
        0 => raw_table(&mut u),
        1 => encoded(&mut u).and_then(|table| damaged(&mut u, table)),
        _ => return Some(Input::Value(u)),
    };
    table.ok().map(Input::Table)
}

/// A node or span operand: mostly within (or just past) `n`, sometimes anything or an
/// interesting extreme.
pub fn small(u: &mut Unstructured<'_>, n: usize) -> Result<u32> {
    Ok(match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[u32::MAX, u32::MAX - 1, 0x8000_0000, 1 << 16])?,
        _ => u.int_in_range(0..=(n as u32 + 2))?,
    })
}

/// A short string: anything, a few characters that matter to parsers, or a well-formed URN.
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=2)? {
        0 => u.arbitrary::<String>()?.chars().take(24).collect(),
        1 => {
            let n = u.int_in_range(0..=8)?;
            (0..n)
                .map(|_| {
                    u.choose(&['a', 'b', ':', '.', '"', 'é', '\u{0}', ' '])
                        .copied()
                })
                .collect::<Result<_>>()?
        }
        _ => u
            .choose(&[
                "",
                "urn:pulumi:s::p::a:b:C::n",
                "urn:pulumi:dev::proj::random:index:RandomPet::pet",
                "k",
                "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
            ])?
            .to_string(),
    })
}

fn optional(u: &mut Unstructured<'_>) -> Result<Option<String>> {
    Ok(if u.arbitrary()? { Some(text(u)?) } else { None })
}

/// Any extra of a table of `nodes` nodes (its indices mostly in range).
pub fn extra(u: &mut Unstructured<'_>, nodes: usize) -> Result<Extra> {
    let index = |u: &mut Unstructured<'_>| -> Result<Option<u32>> {
        Ok(if u.ratio(1, 4)? {
            None
        } else {
            Some(small(u, nodes)?)
        })
    };
    Ok(match u.int_in_range(0..=3)? {
        0 => Extra::Asset(Asset {
            hash: optional(u)?,
            source: match u.int_in_range(0..=3)? {
                0 => AssetSource::Text(text(u)?),
                1 => AssetSource::Path(text(u)?),
                2 => AssetSource::Uri(text(u)?),
                _ => AssetSource::HashOnly,
            },
        }),
        1 => Extra::Archive {
            hash: optional(u)?,
            source: match u.int_in_range(0..=3)? {
                0 => IndexedSource::Assets(
                    (0..u.int_in_range(0..=3)?)
                        .map(|_| Ok((text(u)?, small(u, nodes)?)))
                        .collect::<Result<_>>()?,
                ),
                1 => IndexedSource::Path(text(u)?),
                2 => IndexedSource::Uri(text(u)?),
                _ => IndexedSource::HashOnly,
            },
        },
        2 => Extra::Reference {
            urn: text(u)?,
            id: index(u)?,
            package_version: optional(u)?,
        },
        _ => Extra::Output {
            value: index(u)?,
            secret: u.arbitrary()?,
            dependencies: (0..u.int_in_range(0..=2)?)
                .map(|_| text(u))
                .collect::<Result<_>>()?,
        },
    })
}

/// A table built word by word: up to 16 nodes of any kind code (and a stray word now and
/// then), a string buffer of mostly ASCII, up to 3 extras.
pub fn raw_table<C: Columns>(u: &mut Unstructured<'_>) -> Result<C> {
    let nodes = u.int_in_range(0..=16)?;
    let n = u.int_in_range(0..=48)?;
    let strings: Vec<u8> = (0..n)
        .map(|_| {
            Ok(if u.ratio(1, 8)? {
                u.arbitrary()?
            } else {
                b'a' + u.int_in_range(0..=25)?
            })
        })
        .collect::<Result<_>>()?;
    let mut words = Vec::with_capacity(nodes * WORDS + 1);
    for _ in 0..nodes {
        words.push(u.int_in_range(0..=kind::OUTPUT + 1)?);
        words.push(small(u, nodes)?);
        words.push(small(u, nodes)?);
        words.push(small(u, strings.len())?);
        words.push(if u.ratio(1, 6)? {
            u.arbitrary()?
        } else {
            u.int_in_range(0..=4)?
        });
    }
    if u.ratio(1, 20)? {
        words.push(u.arbitrary()?);
    }
    let extras = (0..u.int_in_range(0..=3)?)
        .map(|_| Ok(extra(u, nodes)?.into()))
        .collect::<Result<_>>()?;
    Ok(C::from_parts(words, strings, extras))
}

/// `table` (a side's own encoding) with up to three words, string bytes or extras changed,
/// added or cut.
pub fn damaged<C: Columns>(u: &mut Unstructured<'_>, table: C) -> Result<C> {
    let (mut nodes, mut strings, mut extras) = table.into_parts();
    for _ in 0..u.int_in_range(0..=3)? {
        match u.int_in_range(0..=4)? {
            0 if !nodes.is_empty() => {
                let i = u.choose_index(nodes.len())?;
                nodes[i] = small(u, nodes.len() / WORDS)?;
            }
            1 if !strings.is_empty() => {
                let i = u.choose_index(strings.len())?;
                strings[i] = u.arbitrary()?;
            }
            2 => {
                let n = nodes.len() / WORDS;
                extras.push(extra(u, n)?.into());
            }
            3 if !nodes.is_empty() => {
                let cut = u.choose_index(nodes.len())?;
                nodes.truncate(cut);
            }
            _ => {}
        }
    }
    Ok(C::from_parts(nodes, strings, extras))
}
