//! Encoding any value model: children after their parents, every kind read back as written,
//! order kept, columns sized up front, and the nesting limit met exactly.

use cairn_wire::{ExtraRef, MAX_DEPTH, Node, Rules, WORDS, WireError, WitExtra, kind, validate};

use crate::support::*;

#[test]
fn every_kind_round_trips() {
    let value = every_kind();
    assert_eq!(round_trip(&value), value);
    let V::Obj(map) = &value else { unreachable!() };
    let table: wit::Value = cairn_wire::encode_map::<Model, _>(map);
    validate(&table, Rules::STRICT).unwrap();
    assert_eq!(decode(Node::root(&table).unwrap()), value);
}

#[test]
fn scalars_round_trip_at_the_root() {
    for v in [
        V::Null,
        V::Bool(false),
        V::Num(f64::MAX),
        V::Num(-0.0),
        s(""),
        V::Unknown,
        V::Secret(Box::new(V::Unknown)),
    ] {
        assert_eq!(round_trip(&v), v);
    }
}

#[test]
fn order_is_preserved() {
    let keys: Vec<String> = (0..200).rev().map(|i| format!("k{i}")).collect();
    let map: Map = keys.iter().map(|k| (k.clone(), s(k))).collect();
    let V::Obj(back) = round_trip(&V::Obj(map)) else {
        unreachable!()
    };
    assert_eq!(back.keys().cloned().collect::<Vec<_>>(), keys);
    let items: Vec<V> = (0..100).map(|i| V::Num(f64::from(i))).collect();
    assert_eq!(round_trip(&V::Arr(items.clone())), V::Arr(items));
}

#[test]
fn encoding_puts_children_after_parents() {
    let table: wit::Value = cairn_wire::encode::<Model, _>(&every_kind());
    let (nodes, _, _) = columns(&table);
    assert_eq!(nodes.len() % WORDS, 0);
    let forward = |i: usize, c: u32| assert!(c as usize > i, "node {i} refers to {c}");
    for (i, node) in nodes.chunks(WORDS).enumerate() {
        let (a, b) = (node[1], node[2]);
        match node[0] {
            kind::ARRAY | kind::OBJECT if b > 0 => forward(i, a),
            kind::SECRET => forward(i, a),
            k if kind::has_extra(k) => {
                let extra = table.extras[a as usize].view();
                assert_eq!(extra.kind(), k);
                extra.children().for_each(|c| forward(i, c));
            }
            _ => {}
        }
    }
}

#[test]
fn maps_encode_as_objects_rooted_at_zero() {
    let map: Map = [
        ("a".to_owned(), V::Num(1.0)),
        ("b".to_owned(), V::Arr(vec![V::Bool(true)])),
    ]
    .into_iter()
    .collect();
    let encoded: wit::Value = cairn_wire::encode_map::<Model, _>(&map);
    assert_eq!(encoded.strings, b"ab");
    let one = 1f64.to_bits();
    #[rustfmt::skip]
    assert_eq!(encoded.nodes, [
        kind::OBJECT, 1, 2, 0, 0, // the root: members 1 and 2
        kind::NUMBER, one as u32, (one >> 32) as u32, 0, 1, // "a": 1
        kind::ARRAY, 3, 1, 1, 1, // "b": the array at 3
        kind::BOOL, 1, 0, 0, 0, // true
    ]);
    assert!(encoded.extras.is_empty());
    // An empty map is an object with no members.
    let empty: wit::Value = cairn_wire::encode_map::<Model, _>(&Map::default());
    assert_eq!(empty.nodes, [kind::OBJECT, 1, 0, 0, 0]);
}

#[test]
fn columns_are_sized_before_encoding() {
    let map: Map = [
        ("name".to_owned(), s("a-name")),
        (
            "tags".to_owned(),
            obj(vec![
                ("env", s("dev")),
                ("team", V::Secret(Box::new(s("x")))),
            ]),
        ),
        ("ports".to_owned(), V::Arr(vec![V::Num(80.0), s("eighty")])),
    ]
    .into_iter()
    .collect();
    let value: wit::Value = cairn_wire::encode_map::<Model, _>(&map);
    // Allocated once at their final size: nothing grew (and was copied) while encoding.
    assert_eq!(value.nodes.capacity(), value.nodes.len());
    assert_eq!(value.strings.capacity(), value.strings.len());
    assert_eq!(round_trip(&V::Obj(map.clone())), V::Obj(map));
}

#[test]
fn deep_nesting_round_trips_up_to_the_limit() {
    let mut v = s("leaf");
    for i in 0..MAX_DEPTH - 1 {
        v = match i % 3 {
            0 => V::Arr(vec![v]),
            1 => obj(vec![("k", v)]),
            _ => V::Secret(Box::new(v)),
        };
    }
    let table: wit::Value = cairn_wire::encode::<Model, _>(&v);
    assert_eq!(table.nodes.len(), MAX_DEPTH * WORDS);
    assert_eq!(round_trip(&v), v);
    let deeper: wit::Value = cairn_wire::encode::<Model, _>(&V::Arr(vec![v]));
    assert_eq!(
        validate(&deeper, Rules::STRICT),
        Err(WireError::TooDeep {
            node: idx(MAX_DEPTH),
            limit: MAX_DEPTH
        })
    );
}

#[test]
fn extras_carry_what_their_nodes_need() {
    let table: wit::Value = cairn_wire::encode::<Model, _>(&V::Ref {
        urn: "urn:x".into(),
        id: Some(Box::new(s("id-1"))),
        version: Some("1.0.0".into()),
    });
    match table.extras[0].view() {
        ExtraRef::Reference {
            urn,
            id,
            package_version,
        } => {
            assert_eq!((urn, package_version), ("urn:x", Some("1.0.0")));
            assert_eq!(
                Node::root(&table).unwrap().child(id.unwrap()).text(),
                "id-1"
            );
        }
        other => panic!("{other:?}"),
    }
    // The shared extra converts to the generated one and back unchanged.
    let extra = cairn_wire::Extra::from(table.extras[0].clone());
    assert_eq!(wit::Extra::from(extra), table.extras[0]);
    // So do the lifecycle types.
    for k in [
        cairn_wire::DiffKind::Add,
        cairn_wire::DiffKind::AddReplace,
        cairn_wire::DiffKind::Delete,
        cairn_wire::DiffKind::DeleteReplace,
        cairn_wire::DiffKind::Update,
        cairn_wire::DiffKind::UpdateReplace,
    ] {
        assert_eq!(cairn_wire::DiffKind::from(wit::DiffKind::from(k)), k);
    }
    for c in [
        cairn_wire::DiffChanges::Unknown,
        cairn_wire::DiffChanges::None,
        cairn_wire::DiffChanges::Some,
    ] {
        assert_eq!(cairn_wire::DiffChanges::from(wit::DiffChanges::from(c)), c);
    }
    let failure = cairn_wire::CheckFailure::new("p", "r");
    assert_eq!(
        cairn_wire::CheckFailure::from(wit::CheckFailure::from(failure.clone())),
        failure
    );
}
