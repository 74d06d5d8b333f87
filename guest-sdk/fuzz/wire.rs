//! Fuzz targets of the guest side of the WIT node table (`src/wire.rs`): validating and
//! reading tables the host sends, and encoding what a provider returns. Shared by
//! `examples/fuzz.rs` (the long-run command) and `tests/fuzz.rs` (short runs in `cargo test`).

use arbitrary::{Result, Unstructured};
use cairn_fuzz_driver::{Outcome, Target};
use cairn_sdk::bindings::cairn::deploy::types as wit;
use cairn_sdk::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, OutputValue, PropertyMap,
    ResourceReference, Value,
};
use cairn_sdk::wire::{self, Table};

pub fn targets() -> Vec<Target> {
    vec![Target {
        name: "wire",
        about: "guest WIT tables: malformed tables are errors, accepted tables read in place as they decode, decode∘encode is the identity, generated values round-trip",
        run,
        seeds,
        dictionary: &[
            "\u{0}\u{0}\u{0}\u{0}",
            "\u{5}\u{0}\u{0}\u{0}",
            "\u{4}\u{0}\u{0}\u{0}",
        ],
        max_len: 1024,
    }]
}

fn seeds() -> Vec<Vec<u8>> {
    (0u8..24)
        .map(|i| {
            let mut seed = vec![i % 3];
            seed.extend((0..400u32).map(|j| (j.wrapping_mul(19) + u32::from(i) * 7) as u8));
            seed
        })
        .collect()
}

fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

fn run(data: &[u8]) -> Outcome {
    let Some((mode, rest)) = data.split_first() else {
        return Outcome::Rejected;
    };
    let mut u = Unstructured::new(rest);
    let table = match mode % 3 {
        0 => raw_table(&mut u),
        1 => damaged(&mut u),
        _ => {
            if let Ok(v) = value(&mut u, 0) {
                let back = wire::decode(wire::encode(&v))
                    .unwrap_or_else(|e| panic!("the SDK's own encoding of {v:?} is refused: {e}"));
                assert!(same(&back, &v), "round trip of {v:?} gave {back:?}");
                if let Value::Object(map) = &v {
                    let back = wire::decode_map(wire::encode_map(map))
                        .unwrap_or_else(|e| panic!("encode_map of {map:?} is refused: {e}"));
                    assert!(same(&back, map));
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

fn check_table(t: wit::Value) -> Outcome {
    let decoded = wire::decode(t.clone());
    let validated = Table::new(t.clone());
    // Decoding is validating and reading the root (an empty table is valid but has none).
    assert_eq!(
        decoded.is_ok(),
        validated.is_ok() && !t.nodes.is_empty(),
        "Table::new and decode disagree"
    );
    let _ = wire::decode_map(t.clone()).map_err(|e| e.to_string());
    if let Err(e) = &validated {
        let _ = e.to_string();
    }
    let (Ok(table), Ok(v)) = (validated, decoded) else {
        return Outcome::Rejected;
    };
    let root = table
        .root()
        .unwrap_or_else(|| panic!("a decoded table has no root"));
    assert!(
        same(&root.to_value(), &v),
        "reading in place differs from decoding"
    );
    let _ = root.reveal();
    for (i, child) in root.children().enumerate() {
        let _ = child.kind();
        let _ = child.to_value();
        if root.kind() == wire::kind::OBJECT {
            let key = child.key().to_owned();
            let found = root
                .member(&key, i)
                .unwrap_or_else(|| panic!("member {key:?} of a validated object is not found"));
            let _ = found.to_value();
        }
    }
    assert_eq!(
        root.same_as(root),
        v.same_as(&v),
        "Node::same_as and Value::same_as disagree on {v:?}"
    );
    let again = wire::decode(wire::encode(&v))
        .unwrap_or_else(|e| panic!("re-encoding accepted value {v:?} is refused: {e}"));
    assert!(same(&again, &v), "decode∘encode changed {v:?}");
    let _ = table.to_map();
    Outcome::Accepted
}

fn small(u: &mut Unstructured<'_>, n: usize) -> Result<u32> {
    Ok(match u.int_in_range(0..=7)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[u32::MAX, u32::MAX - 1, 0x8000_0000, 1 << 16])?,
        _ => u.int_in_range(0..=(n as u32 + 2))?,
    })
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
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
                "k",
                "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
            ])?
            .to_string(),
    })
}

fn raw_table(u: &mut Unstructured<'_>) -> Result<wit::Value> {
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
    let mut words = Vec::with_capacity(nodes * 5);
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
    Ok(wit::Value {
        nodes: words,
        strings,
        extras,
    })
}

fn extra(u: &mut Unstructured<'_>, nodes: usize) -> Result<wit::Extra> {
    let opt = |u: &mut Unstructured<'_>| -> Result<Option<String>> {
        Ok(if u.arbitrary()? { Some(text(u)?) } else { None })
    };
    let index = |u: &mut Unstructured<'_>| -> Result<Option<u32>> {
        Ok(if u.ratio(1, 4)? {
            None
        } else {
            Some(small(u, nodes)?)
        })
    };
    Ok(match u.int_in_range(0..=3)? {
        0 => wit::Extra::Asset(wit::Asset {
            hash: opt(u)?,
            source: wit::AssetSource::Text(text(u)?),
        }),
        1 => wit::Extra::Archive(wit::Archive {
            hash: opt(u)?,
            source: match u.int_in_range(0..=2)? {
                0 => wit::ArchiveSource::Assets(
                    (0..u.int_in_range(0..=3)?)
                        .map(|_| Ok((text(u)?, small(u, nodes)?)))
                        .collect::<Result<_>>()?,
                ),
                1 => wit::ArchiveSource::Path(text(u)?),
                _ => wit::ArchiveSource::HashOnly,
            },
        }),
        2 => wit::Extra::ResourceReference(wit::ResourceReference {
            urn: text(u)?,
            id: index(u)?,
            package_version: opt(u)?,
        }),
        _ => wit::Extra::Output(wit::OutputValue {
            value: index(u)?,
            secret: u.arbitrary()?,
            dependencies: (0..u.int_in_range(0..=2)?)
                .map(|_| text(u))
                .collect::<Result<_>>()?,
        }),
    })
}

fn damaged(u: &mut Unstructured<'_>) -> Result<wit::Value> {
    let v = value(u, 0)?;
    let mut t = wire::encode(&v);
    for _ in 0..u.int_in_range(0..=3)? {
        match u.int_in_range(0..=4)? {
            0 if !t.nodes.is_empty() => {
                let i = u.choose_index(t.nodes.len())?;
                t.nodes[i] = small(u, t.nodes.len() / 5)?;
            }
            1 if !t.strings.is_empty() => {
                let i = u.choose_index(t.strings.len())?;
                t.strings[i] = u.arbitrary()?;
            }
            2 => {
                let n = t.nodes.len() / 5;
                t.extras.push(extra(u, n)?);
            }
            3 if !t.nodes.is_empty() => {
                let cut = u.choose_index(t.nodes.len())?;
                t.nodes.truncate(cut);
            }
            _ => {}
        }
    }
    Ok(t)
}

fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let top = if depth >= 10 { 4 } else { 12 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(match u.int_in_range(0..=2)? {
            0 => f64::from(u.int_in_range(-100..=100)?),
            1 => *u.choose(&[f64::NAN, f64::INFINITY, -0.0, 1e308])?,
            _ => f64::from_bits(u.arbitrary()?),
        }),
        3 => Value::String(text(u)?),
        4 => Value::Unknown,
        5 => Value::Array(
            (0..u.int_in_range(0..=4)?)
                .map(|_| value(u, depth + 1))
                .collect::<Result<_>>()?,
        ),
        6 => {
            let mut map = PropertyMap::new();
            for _ in 0..u.int_in_range(0..=4)? {
                map.insert(text(u)?, value(u, depth + 1)?);
            }
            Value::Object(map)
        }
        7 => Value::Secret(Box::new(value(u, depth + 1)?)),
        8 => Value::Asset(asset(u)?),
        9 => Value::Archive(archive(u, depth)?),
        10 => Value::ResourceReference(ResourceReference {
            urn: text(u)?,
            id: match u.int_in_range(0..=2)? {
                0 => None,
                1 => Some(Box::new(Value::Unknown)),
                _ => Some(Box::new(Value::String(text(u)?))),
            },
            package_version: if u.arbitrary()? { Some(text(u)?) } else { None },
        }),
        _ => Value::Output(OutputValue {
            value: if u.arbitrary()? {
                Some(Box::new(value(u, depth + 1)?))
            } else {
                None
            },
            secret: u.arbitrary()?,
            dependencies: (0..u.int_in_range(0..=2)?)
                .map(|_| text(u))
                .collect::<Result<_>>()?,
        }),
    })
}

fn asset(u: &mut Unstructured<'_>) -> Result<Asset> {
    Ok(Asset {
        hash: if u.arbitrary()? { Some(text(u)?) } else { None },
        source: match u.int_in_range(0..=3)? {
            0 => AssetSource::Text(text(u)?),
            1 => AssetSource::Path(text(u)?),
            2 => AssetSource::Uri(text(u)?),
            _ => AssetSource::HashOnly,
        },
    })
}

fn archive(u: &mut Unstructured<'_>, depth: usize) -> Result<Archive> {
    Ok(Archive {
        hash: if u.arbitrary()? { Some(text(u)?) } else { None },
        source: match u.int_in_range(0..=3)? {
            0 => {
                let mut members = indexmap::IndexMap::new();
                for _ in 0..u.int_in_range(0..=3)? {
                    let member = if depth < 6 && u.ratio(1, 4)? {
                        ArchiveMember::Archive(archive(u, depth + 1)?)
                    } else {
                        ArchiveMember::Asset(asset(u)?)
                    };
                    members.insert(text(u)?, member);
                }
                ArchiveSource::Assets(members)
            }
            1 => ArchiveSource::Path(text(u)?),
            2 => ArchiveSource::Uri(text(u)?),
            _ => ArchiveSource::HashOnly,
        },
    })
}
