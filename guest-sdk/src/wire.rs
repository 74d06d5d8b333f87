//! The guest's side of the WIT node table: `cairn-wire` (the one definition of the format,
//! its validation, in-place reading and encoding) bound to wit-bindgen's types, the SDK's
//! [`Value`] described to its encoder, and tables decoded into [`Value`]s.
//!
//! Tables from the host are read in place through [`Node`]s: a [`Table`] is one validated up
//! front; request properties ([`Properties`](crate::Properties)) keep the table as it came,
//! validate it when first read, decode it into [`Value`]s only if read ([`Decode`]), and send
//! it back as it came if returned unchanged.
//!
//! Encoding never fails. Validation (with `cairn-wire`'s strict rules: every node and extra
//! used, at most [`MAX_DEPTH`] levels) reports malformed tables as [`WireError`]s, never
//! panics. Validation and encoding are iterative; decoding a validated table recurses at most
//! [`MAX_DEPTH`] levels.

use cairn_wire::{ExtraRef, IndexedSourceRef, Rules, Shape, Walk, WitExtra};

use crate::bindings::cairn::deploy::types as wit;
use crate::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, OutputValue, PropertyMap,
    ResourceReference, Value,
};

pub use cairn_wire::{Columns, MAX_DEPTH, WORDS, WireError, kind};

cairn_wire::bind_wit!(crate::bindings::cairn::deploy::types);

/// One node of a validated table from the host.
pub type Node<'t> = cairn_wire::Node<'t, wit::Value>;

/// The SDK's values as `cairn-wire`'s encoder walks them.
pub struct Sdk;

impl Walk for Sdk {
    type Value = Value;
    type Map = indexmap::IndexMap<String, Value>;
    type Urn = String;

    #[inline]
    fn shape(value: &Value) -> Shape<'_, Sdk> {
        match value {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(*n),
            Value::String(s) => Shape::Text(s),
            Value::Unknown => Shape::Unknown,
            Value::Array(items) => Shape::Array(items),
            Value::Object(map) => Shape::Object(map),
            Value::Secret(inner) => Shape::Secret(inner.as_ref()),
            Value::Asset(asset) => Shape::Asset(asset),
            Value::Archive(archive) => Shape::Archive(archive),
            Value::ResourceReference(r) => Shape::Reference {
                urn: &r.urn,
                id: r.id.as_deref(),
                package_version: r.package_version.as_ref(),
            },
            Value::Output(o) => Shape::Output {
                value: o.value.as_deref(),
                secret: o.secret,
                dependencies: &o.dependencies,
            },
        }
    }

    #[inline]
    fn urn(urn: &String) -> &str {
        urn
    }

    #[inline]
    fn entries(map: &Self::Map) -> impl ExactSizeIterator<Item = (&String, &Value)> {
        map.iter()
    }
}

/// Encodes a property map as an object value.
pub fn encode_map(map: &PropertyMap) -> wit::Value {
    cairn_wire::encode_map::<Sdk, _>(map)
}

/// Encodes any value.
pub fn encode(value: &Value) -> wit::Value {
    cairn_wire::encode::<Sdk, _>(value)
}

/// Decodes a property map: an object root, or no nodes / a `null` root for an empty map.
pub fn decode_map(value: wit::Value) -> Result<PropertyMap, WireError> {
    Table::new(value)?.to_map()
}

/// Decodes one value.
pub fn decode(value: wit::Value) -> Result<Value, WireError> {
    let table = Table::new(value)?;
    table.root().map(Decode::to_value).ok_or(WireError::Empty)
}

/// Validates a table meant as a property map: an object root, or no nodes / a `null` root.
pub(crate) fn validate_map(value: &wit::Value) -> Result<(), WireError> {
    cairn_wire::validate_map(value, Rules::STRICT).map(drop)
}

/// The object at the root of a table that passed [`validate_map`] (`None` when the map is
/// empty: no nodes or a `null` root).
pub(crate) fn object(value: &wit::Value) -> Option<Node<'_>> {
    Node::object(value)
}

/// A value from the host, validated; read in place through [`Node`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    value: wit::Value,
}

impl Table {
    /// Validates `value` (see the module docs). No nodes is a valid, empty table.
    pub fn new(value: wit::Value) -> Result<Table, WireError> {
        cairn_wire::validate(&value, Rules::STRICT)?;
        Ok(Table { value })
    }

    /// The root, unless the table is empty.
    pub fn root(&self) -> Option<Node<'_>> {
        Node::root(&self.value)
    }

    /// Decodes a property map: an object root, or an empty table / a `null` root.
    pub fn to_map(&self) -> Result<PropertyMap, WireError> {
        Ok(cairn_wire::object_root(&self.value)?
            .map(Decode::to_map)
            .unwrap_or_default())
    }
}

/// Decoding a node of a validated table into the SDK's values.
pub trait Decode {
    /// Decodes the node.
    fn to_value(self) -> Value;
    /// Decodes this node's object members.
    fn to_map(self) -> PropertyMap;
}

impl Decode for Node<'_> {
    fn to_value(self) -> Value {
        match self.kind() {
            kind::BOOL => Value::Bool(self.flag()),
            kind::NUMBER => Value::Number(self.number()),
            kind::TEXT => Value::String(self.text().to_owned()),
            kind::ARRAY => Value::Array(self.children().map(Decode::to_value).collect()),
            kind::OBJECT => Value::Object(self.to_map()),
            kind::SECRET => Value::Secret(Box::new(self.child(self.operands().0).to_value())),
            kind::UNKNOWN => Value::Unknown,
            k if kind::has_extra(k) => extra_value(self),
            _ => Value::Null,
        }
    }

    fn to_map(self) -> PropertyMap {
        self.children()
            .map(|m| (m.key().to_owned(), m.to_value()))
            .collect()
    }
}

/// An asset, archive, reference or output node, from its extra.
fn extra_value(node: Node<'_>) -> Value {
    let child = |c: u32| Box::new(node.child(c).to_value());
    match node.extra().view() {
        ExtraRef::Asset { hash, source } => Value::Asset(Asset {
            hash: hash.map(str::to_owned),
            source: source.to_owned(),
        }),
        ExtraRef::Archive { hash, source } => Value::Archive(Archive {
            hash: hash.map(str::to_owned),
            source: match source {
                IndexedSourceRef::Assets(members) => ArchiveSource::Assets(
                    members
                        .iter()
                        .map(|(name, c)| {
                            let member = match node.child(*c).to_value() {
                                Value::Archive(a) => ArchiveMember::Archive(a),
                                Value::Asset(a) => ArchiveMember::Asset(a),
                                // Validation admits only assets and archives.
                                _ => ArchiveMember::Asset(Asset {
                                    hash: None,
                                    source: AssetSource::HashOnly,
                                }),
                            };
                            (name.clone(), member)
                        })
                        .collect(),
                ),
                IndexedSourceRef::Path(p) => ArchiveSource::Path(p.to_owned()),
                IndexedSourceRef::Uri(u) => ArchiveSource::Uri(u.to_owned()),
                IndexedSourceRef::HashOnly => ArchiveSource::HashOnly,
            },
        }),
        ExtraRef::Reference {
            urn,
            id,
            package_version,
        } => Value::ResourceReference(ResourceReference {
            urn: urn.to_owned(),
            id: id.map(child),
            package_version: package_version.map(str::to_owned),
        }),
        ExtraRef::Output {
            value,
            secret,
            dependencies,
        } => Value::Output(OutputValue {
            value: value.map(child),
            secret,
            dependencies: dependencies.to_vec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{props, secret};

    fn every_kind() -> Value {
        let asset = Asset {
            hash: Some("ab".repeat(32)),
            source: AssetSource::Text("hello".into()),
        };
        let nested = Archive {
            hash: None,
            source: ArchiveSource::Assets(crate::value::Members::from_iter([(
                "inner.txt".to_owned(),
                ArchiveMember::Asset(Asset {
                    hash: None,
                    source: AssetSource::Path("./inner.txt".into()),
                }),
            )])),
        };
        let archive = Archive {
            hash: Some("cd".repeat(32)),
            source: ArchiveSource::Assets(crate::value::Members::from_iter([
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
        assert_eq!(wire.nodes.len() % WORDS, 0);
        let forward = |i: usize, c: u32| assert!(c as usize > i, "node {i} refers to {c}");
        for (i, node) in wire.nodes.chunks(WORDS).enumerate() {
            let (a, b) = (node[1], node[2]);
            match node[0] {
                kind::ARRAY | kind::OBJECT if b > 0 => forward(i, a),
                kind::SECRET => forward(i, a),
                kind::ARCHIVE | kind::REFERENCE | kind::OUTPUT => match &wire.extras[a as usize] {
                    wit::Extra::Archive(wit::Archive {
                        source: wit::ArchiveSource::Assets(m),
                        ..
                    }) => m.iter().for_each(|(_, c)| forward(i, *c)),
                    wit::Extra::ResourceReference(r) => {
                        r.id.into_iter().for_each(|c| forward(i, c))
                    }
                    wit::Extra::Output(o) => o.value.into_iter().for_each(|c| forward(i, c)),
                    _ => {}
                },
                _ => {}
            }
        }
        // What validation accepts, it reads back identically in place.
        let table = Table::new(wire).unwrap();
        assert_eq!(table.root().unwrap().to_value(), every_kind());
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
        assert_eq!(wire.nodes.len(), MAX_DEPTH * WORDS);
        assert_eq!(decode(wire).unwrap(), v);

        let deeper = Value::Array(vec![v]);
        assert_eq!(
            decode(encode(&deeper)),
            Err(WireError::TooDeep {
                node: MAX_DEPTH as u32,
                limit: MAX_DEPTH
            })
        );
    }

    #[test]
    fn property_maps_need_an_object_root() {
        let table = |nodes: &[u32]| wit::Value {
            nodes: nodes.to_vec(),
            strings: b"x".to_vec(),
            extras: vec![],
        };
        assert_eq!(decode_map(table(&[])).unwrap(), props! {});
        assert_eq!(
            decode_map(table(&[kind::NULL, 0, 0, 0, 0])).unwrap(),
            props! {}
        );
        assert_eq!(
            decode_map(table(&[kind::TEXT, 0, 1, 0, 0])),
            Err(WireError::NotAnObject { kind: "string" })
        );
    }

    #[test]
    fn nodes_compare_like_values() {
        let cases: Vec<(Value, Value)> = vec![
            (Value::from(1), Value::from(1.0)),
            (Value::from(1), Value::from(2)),
            (Value::from("a"), Value::from("a")),
            (Value::from("a"), Value::from("b")),
            (Value::from("1"), Value::from(1)),
            (Value::Null, Value::Null),
            (Value::Bool(true), Value::Bool(true)),
            (Value::Bool(true), Value::Bool(false)),
            (Value::Unknown, Value::Unknown),
            (secret("x"), Value::from("x")),
            (
                Value::Output(OutputValue {
                    value: Some(Box::new(Value::from(3))),
                    secret: true,
                    dependencies: vec!["urn:x".into()],
                }),
                Value::from(3),
            ),
            (Value::Output(OutputValue::default()), Value::Null),
            (
                Value::from(props! {"a" => 1, "b" => vec![Value::from("x")]}),
                Value::from(props! {"b" => vec![secret("x")], "a" => 1}),
            ),
            (
                Value::from(props! {"a" => 1}),
                Value::from(props! {"a" => 1, "b" => 2}),
            ),
            (
                Value::from(props! {"a" => 1, "c" => 2}),
                Value::from(props! {"a" => 1, "b" => 2}),
            ),
            (
                Value::Array(vec![Value::from(1), Value::from(2)]),
                Value::Array(vec![Value::from(2), Value::from(1)]),
            ),
            (
                Value::Array(vec![Value::from(1)]),
                Value::Array(vec![Value::from(1), Value::from(1)]),
            ),
        ];
        let every = every_kind();
        let mut cases = cases;
        cases.push((every.clone(), every.clone()));
        let Value::Object(map) = &every else {
            unreachable!()
        };
        for a in map.values() {
            for b in map.values() {
                cases.push((a.clone(), b.clone()));
            }
        }
        for (a, b) in cases {
            let (ta, tb) = (
                Table::new(encode(&a)).unwrap(),
                Table::new(encode(&b)).unwrap(),
            );
            let (na, nb) = (ta.root().unwrap(), tb.root().unwrap());
            assert_eq!(na.same_as(nb), a.same_as(&b), "{a:?} vs {b:?}");
            assert_eq!(nb.same_as(na), b.same_as(&a), "{b:?} vs {a:?}");
        }
    }
}
