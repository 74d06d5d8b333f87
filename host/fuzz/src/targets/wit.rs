//! The WIT node table, host side (`host/wasm/src/convert.rs`): tables a guest sends.

use arbitrary::{Result, Unstructured};
use cairn_engine::limits;
use cairn_engine::state::{SecretsMode, decode_property_map, encode_property_map};
use cairn_fuzz_driver::{Outcome, Target};
use cairn_wasm::bindings::cairn::deploy::types as w;
use cairn_wasm::convert::{decode_map, decode_value, encode_value};

use crate::generate::{self, Kinds, TestCrypter};

pub const TARGET: Target = Target {
    name: "wit_value",
    about: "WIT node tables from a guest: malformed tables are errors, accepted values pass the value limits, re-encode to themselves and can be stored as state",
    run,
    seeds,
    dictionary: &[
        "\u{0}\u{0}\u{0}\u{0}",
        "\u{5}\u{0}\u{0}\u{0}",
        "\u{4}\u{0}\u{0}\u{0}",
        "\u{1}\u{0}\u{0}\u{0}",
    ],
    max_len: 1024,
};

fn seeds() -> Vec<Vec<u8>> {
    // Structured inputs start with 0: a generated value, encoded, perhaps damaged.
    (0u8..24)
        .map(|i| {
            let mut seed = vec![i % 3];
            seed.extend((0..400u32).map(|j| (j.wrapping_mul(17) + u32::from(i) * 13) as u8));
            seed
        })
        .collect()
}

fn run(data: &[u8]) -> Outcome {
    let Some((mode, rest)) = data.split_first() else {
        return Outcome::Rejected;
    };
    let mut u = Unstructured::new(rest);
    let table = match mode % 3 {
        // A table built word by word: mostly nonsense, sometimes well-formed.
        0 => raw_table(&mut u),
        // An encoded value with a few words, bytes or extras damaged.
        1 => damaged(&mut u),
        // A generated value: it must come back exactly.
        _ => {
            // Any value: it comes back exactly when the limits allow it, else it is refused.
            if let Ok(value) = generate::value(&mut u, Kinds::ALL, 0) {
                match (
                    decode_value(encode_value(&value)),
                    limits::check_value(&value),
                ) {
                    (Ok(back), Ok(())) => assert!(
                        generate::same(&back, &value),
                        "WIT round trip: {value:?} came back as {back:?}"
                    ),
                    (Err(_), Err(_)) => {}
                    (got, limits) => panic!(
                        "the host's own encoding of {value:?}: decoded {got:?}, limits say {limits:?}"
                    ),
                }
            }
            return Outcome::Rejected;
        }
    };
    let Ok(table) = table else {
        return Outcome::Rejected;
    };
    check_table(table)
}

/// The properties of any table: decoding never panics; what decodes re-encodes to a table
/// that decodes to the same value; a property map that decodes is one the engine can keep.
fn check_table(table: w::Value) -> Outcome {
    let value = decode_value(table.clone());
    if let Ok(value) = &value {
        let again = decode_value(encode_value(value)).unwrap_or_else(|e| {
            panic!("re-encoding accepted value {value:?} gives a table that does not decode: {e}")
        });
        assert!(
            generate::same(&again, value),
            "decode∘encode changed {value:?} into {again:?}"
        );
    }
    if let Ok(map) = decode_map(table) {
        check_storable(&map, "a WIT table from a guest");
    }
    crate::outcome(&value)
}

/// A property map a boundary decoder accepted: within the value limits, and it can be written
/// to state and read back as the same stored JSON.
pub(crate) fn check_storable(map: &cairn_engine::value::PropertyMap, what: &str) {
    if let Err(e) = limits::check_properties(map) {
        panic!("{what} was accepted but breaks the value limits: {e}");
    }
    let crypter = TestCrypter;
    let stored = encode_property_map(map, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{what} was accepted but cannot be stored: {e}"));
    let text = serde_json::to_string(&stored).unwrap_or_else(|e| panic!("{e}"));
    let reread: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: its state JSON does not parse back: {e}: {text:.300}"));
    let back = decode_property_map(&reread, Some(&crypter))
        .unwrap_or_else(|e| panic!("{what} was stored but cannot be read back: {e}: {text:.300}"));
    let stored_again = encode_property_map(&back, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        stored_again, stored,
        "{what}: stored, read back and stored again differs: {text:.300}"
    );
}

fn small(u: &mut Unstructured<'_>, n: usize) -> Result<u32> {
    Ok(match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[u32::MAX, u32::MAX - 1, 0x8000_0000, 1 << 16])?,
        _ => u.int_in_range(0..=(n as u32 + 2))?,
    })
}

fn raw_table(u: &mut Unstructured<'_>) -> Result<w::Value> {
    let nodes = u.int_in_range(0..=16)?;
    let strings: Vec<u8> = {
        let n = u.int_in_range(0..=48)?;
        (0..n)
            .map(|_| {
                Ok(if u.ratio(1, 8)? {
                    u.arbitrary()?
                } else {
                    b'a' + u.int_in_range(0..=25)?
                })
            })
            .collect::<Result<_>>()?
    };
    let mut words = Vec::with_capacity(nodes * 5 + 1);
    for _ in 0..nodes {
        words.push(u.int_in_range(0..=12)?);
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
        .map(|_| extra(u, nodes))
        .collect::<Result<_>>()?;
    Ok(w::Value {
        nodes: words,
        strings,
        extras,
    })
}

fn extra(u: &mut Unstructured<'_>, nodes: usize) -> Result<w::Extra> {
    let opt = |u: &mut Unstructured<'_>| -> Result<Option<String>> {
        Ok(if u.arbitrary()? {
            Some(generate::text(u)?)
        } else {
            None
        })
    };
    let index = |u: &mut Unstructured<'_>| -> Result<Option<u32>> {
        Ok(if u.ratio(1, 4)? {
            None
        } else {
            Some(small(u, nodes)?)
        })
    };
    let urn = |u: &mut Unstructured<'_>| -> Result<String> {
        Ok(if u.ratio(3, 4)? {
            generate::urn(u)?.to_string()
        } else {
            generate::text(u)?
        })
    };
    Ok(match u.int_in_range(0..=3)? {
        0 => w::Extra::Asset(w::Asset {
            hash: opt(u)?,
            source: asset_source(u)?,
        }),
        1 => w::Extra::Archive(w::Archive {
            hash: opt(u)?,
            source: match u.int_in_range(0..=3)? {
                0 => w::ArchiveSource::Assets(
                    (0..u.int_in_range(0..=3)?)
                        .map(|_| Ok((generate::text(u)?, small(u, nodes)?)))
                        .collect::<Result<_>>()?,
                ),
                1 => w::ArchiveSource::Path(generate::text(u)?),
                2 => w::ArchiveSource::Uri(generate::text(u)?),
                _ => w::ArchiveSource::HashOnly,
            },
        }),
        2 => w::Extra::ResourceReference(w::ResourceReference {
            urn: urn(u)?,
            id: index(u)?,
            package_version: opt(u)?,
        }),
        _ => w::Extra::Output(w::OutputValue {
            value: index(u)?,
            secret: u.arbitrary()?,
            dependencies: (0..u.int_in_range(0..=2)?)
                .map(|_| urn(u))
                .collect::<Result<_>>()?,
        }),
    })
}

fn asset_source(u: &mut Unstructured<'_>) -> Result<w::AssetSource> {
    Ok(match u.int_in_range(0..=3)? {
        0 => w::AssetSource::Text(generate::text(u)?),
        1 => w::AssetSource::Path(generate::text(u)?),
        2 => w::AssetSource::Uri(generate::text(u)?),
        _ => w::AssetSource::HashOnly,
    })
}

/// A generated value's table with a few words, string bytes or extras changed.
fn damaged(u: &mut Unstructured<'_>) -> Result<w::Value> {
    let value = generate::value(u, Kinds::ALL, 0)?;
    let mut table = encode_value(&value);
    for _ in 0..u.int_in_range(0..=3)? {
        match u.int_in_range(0..=4)? {
            0 if !table.nodes.is_empty() => {
                let i = u.choose_index(table.nodes.len())?;
                table.nodes[i] = small(u, table.nodes.len() / 5)?;
            }
            1 if !table.strings.is_empty() => {
                let i = u.choose_index(table.strings.len())?;
                table.strings[i] = u.arbitrary()?;
            }
            2 => {
                let n = table.nodes.len() / 5;
                table.extras.push(extra(u, n)?);
            }
            3 if !table.nodes.is_empty() => {
                let cut = u.choose_index(table.nodes.len())?;
                table.nodes.truncate(cut);
            }
            _ => {}
        }
    }
    Ok(table)
}
