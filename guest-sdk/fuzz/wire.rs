//! Fuzz targets of the guest side of the WIT node table (`src/wire.rs`): decoding the tables
//! the host sends into the SDK's values, and encoding what a provider returns. The table's own
//! rules and reading it in place are `cairn-wire`'s, fuzzed by the host's `wire_table` target;
//! the tables come from the generators both share (`cairn_wire::arbitrary`). Shared by
//! `examples/fuzz.rs` (the long-run command) and `tests/fuzz.rs` (short runs in `cargo test`).

use arbitrary::{Result, Unstructured};
use cairn_fuzz_driver::{Outcome, Target};
use cairn_sdk::bindings::cairn::deploy::types as wit;
use cairn_sdk::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, OutputValue, PropertyMap,
    ResourceReference, Value,
};
use cairn_sdk::wire::{self, Decode, Table};
use cairn_wire::arbitrary::{DICTIONARY, Input, input, text};

pub fn targets() -> Vec<Target> {
    vec![Target {
        name: "wire",
        about: "guest WIT tables: malformed tables are errors, accepted tables read in place as they decode, Node::same_as agrees with Value::same_as, decode∘encode is the identity, generated values round-trip",
        run,
        seeds,
        dictionary: DICTIONARY,
        max_len: 1024,
    }]
}

fn seeds() -> Vec<Vec<u8>> {
    cairn_wire::arbitrary::seeds(19)
}

fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

fn run(data: &[u8]) -> Outcome {
    let encoded = |u: &mut Unstructured<'_>| Ok(wire::encode(&value(u, 0)?));
    match input::<wit::Value>(data, encoded) {
        Some(Input::Table(table)) => check_table(table),
        // A generated value: the SDK's own encoding must come back exactly.
        Some(Input::Value(mut u)) => {
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
            Outcome::Rejected
        }
        None => Outcome::Rejected,
    }
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
    // Node::same_as agrees with Value::same_as on every pair of children too.
    let values: Vec<Value> = root.children().map(Decode::to_value).collect();
    for (a, x) in root.children().zip(&values) {
        for (b, y) in root.children().zip(&values) {
            assert_eq!(
                a.same_as(b),
                x.same_as(y),
                "Node::same_as and Value::same_as disagree on {x:?} and {y:?}"
            );
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
                let mut members = cairn_sdk::Members::default();
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
