//! Reading validated tables in place: the word-wise compares, identical tables as blocks,
//! member lookup, and `Node::same_as` / `Node::equals` against the value semantics they stand
//! for.

use cairn_wire::{Node, Rules, same_bytes, same_known, same_words, validate};

use crate::support::*;

#[test]
fn bytes_compare_equal_only_when_equal() {
    for len in 0..26 {
        let a: Vec<u8> = (0..len).map(|i| b'a' + i).collect();
        assert!(same_bytes(&a, &a.clone()), "{len}");
        for at in 0..a.len() {
            let mut b = a.clone();
            b[at] ^= 0x20;
            assert!(!same_bytes(&a, &b), "{len} differing at {at}");
        }
        let mut longer = a.clone();
        longer.push(b'z');
        assert!(!same_bytes(&a, &longer), "{len} vs {}", len + 1);
    }
}

#[test]
fn words_compare_equal_only_when_equal() {
    for len in 0..7u32 {
        let a: Vec<u32> = (0..len).map(|i| i * 0x0101_0101).collect();
        assert!(same_words(&a, &a.clone()), "{len}");
        for at in 0..a.len() {
            let mut b = a.clone();
            b[at] ^= 0x8000_0000;
            assert!(!same_words(&a, &b), "{len} differing at {at}");
        }
        assert!(!same_words(&a, &[a.clone(), vec![0]].concat()), "{len}");
    }
}

fn encode_map(map: &Map) -> wit::Value {
    cairn_wire::encode_map::<Model, _>(map)
}

fn map_of(value: V) -> Map {
    match value {
        V::Obj(map) => map,
        other => panic!("not an object: {other:?}"),
    }
}

#[test]
fn only_identical_tables_without_unknowns_are_the_same_as_a_block() {
    let map = map_of(obj(vec![
        ("a", V::Num(1.0)),
        ("s", s("text")),
        ("o", obj(vec![("b", V::Bool(true))])),
    ]));
    let table = encode_map(&map);
    assert!(same_known(&table, &encode_map(&map.clone())));
    // Any column differing.
    let mut text = map.clone();
    text.insert("s".into(), s("texT"));
    let mut number = map.clone();
    number.insert("a".into(), V::Num(2.0));
    let mut kind = map.clone();
    kind.insert("a".into(), s("1"));
    for other in [text, number, kind, Map::default()] {
        assert!(!same_known(&table, &encode_map(&other)), "{other:?}");
    }
    // Equal but holding an unknown, or extras: compared node by node instead.
    let unknown = map_of(obj(vec![("u", V::Unknown)]));
    assert!(!same_known(&encode_map(&unknown), &encode_map(&unknown)));
    let output = map_of(obj(vec![(
        "o",
        V::Out {
            value: None,
            secret: false,
            deps: vec![],
        },
    )]));
    assert!(!same_known(&encode_map(&output), &encode_map(&output)));
}

/// What `same_as` means, on the model: equal contents through secret and output markers,
/// unknowns never the same; assets, archives and references compared whole.
fn same_as(a: &V, b: &V) -> bool {
    fn reveal(v: &V) -> &V {
        match v {
            V::Secret(inner) => reveal(inner),
            V::Out {
                value: Some(inner), ..
            } => reveal(inner),
            V::Out { value: None, .. } => &V::Unknown,
            other => other,
        }
    }
    match (reveal(a), reveal(b)) {
        (V::Unknown, _) | (_, V::Unknown) => false,
        (V::Arr(x), V::Arr(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_as(p, q)),
        (V::Obj(x), V::Obj(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same_as(p, q)))
        }
        (x, y) => x == y,
    }
}

#[test]
fn nodes_compare_like_values() {
    let secret = |v: V| V::Secret(Box::new(v));
    let mut cases: Vec<(V, V)> = vec![
        (V::Num(1.0), V::Num(1.0)),
        (V::Num(1.0), V::Num(2.0)),
        (s("a"), s("a")),
        (s("a"), s("b")),
        (s("1"), V::Num(1.0)),
        (V::Null, V::Null),
        (V::Bool(true), V::Bool(true)),
        (V::Bool(true), V::Bool(false)),
        (V::Unknown, V::Unknown),
        (secret(s("x")), s("x")),
        (
            V::Out {
                value: Some(Box::new(V::Num(3.0))),
                secret: true,
                deps: vec!["urn:x".into()],
            },
            V::Num(3.0),
        ),
        (
            V::Out {
                value: None,
                secret: false,
                deps: vec![],
            },
            V::Null,
        ),
        (
            obj(vec![("a", V::Num(1.0)), ("b", V::Arr(vec![s("x")]))]),
            obj(vec![
                ("b", V::Arr(vec![secret(s("x"))])),
                ("a", V::Num(1.0)),
            ]),
        ),
        (
            obj(vec![("a", V::Num(1.0))]),
            obj(vec![("a", V::Num(1.0)), ("b", V::Num(2.0))]),
        ),
        (
            obj(vec![("a", V::Num(1.0)), ("c", V::Num(2.0))]),
            obj(vec![("a", V::Num(1.0)), ("b", V::Num(2.0))]),
        ),
        (
            V::Arr(vec![V::Num(1.0), V::Num(2.0)]),
            V::Arr(vec![V::Num(2.0), V::Num(1.0)]),
        ),
        (
            V::Arr(vec![V::Num(1.0)]),
            V::Arr(vec![V::Num(1.0), V::Num(1.0)]),
        ),
        // References with an unknown ID are equal whole (unknowns inside compare equal).
        (
            V::Ref {
                urn: "urn:a".into(),
                id: Some(Box::new(V::Unknown)),
                version: None,
            },
            V::Ref {
                urn: "urn:a".into(),
                id: Some(Box::new(V::Unknown)),
                version: None,
            },
        ),
    ];
    let every = every_kind();
    cases.push((every.clone(), every.clone()));
    let V::Obj(map) = &every else { unreachable!() };
    for a in map.values() {
        for b in map.values() {
            cases.push((a.clone(), b.clone()));
        }
    }
    // Archives whose members come in another order are the same.
    let member =
        |text: &str| -> cairn_wire::ArchiveMember { cairn_wire::Asset::from_text(text).into() };
    let forward: cairn_wire::Members =
        [("a".to_owned(), member("1")), ("b".to_owned(), member("2"))]
            .into_iter()
            .collect();
    let backward: cairn_wire::Members =
        [("b".to_owned(), member("2")), ("a".to_owned(), member("1"))]
            .into_iter()
            .collect();
    let other: cairn_wire::Members = [("b".to_owned(), member("1")), ("a".to_owned(), member("2"))]
        .into_iter()
        .collect();
    let archive = |m: &cairn_wire::Members| V::Archive(cairn_wire::Archive::from_assets(m.clone()));
    cases.push((archive(&forward), archive(&backward)));
    cases.push((archive(&forward), archive(&other)));
    for (a, b) in cases {
        let (ta, tb): (wit::Value, wit::Value) = (
            cairn_wire::encode::<Model, _>(&a),
            cairn_wire::encode::<Model, _>(&b),
        );
        validate(&ta, Rules::STRICT).unwrap();
        validate(&tb, Rules::STRICT).unwrap();
        let (na, nb) = (Node::root(&ta).unwrap(), Node::root(&tb).unwrap());
        assert_eq!(na.same_as(nb), same_as(&a, &b), "{a:?} vs {b:?}");
        assert_eq!(nb.same_as(na), same_as(&b, &a), "{b:?} vs {a:?}");
        assert_eq!(na.equals(nb), a == b, "{a:?} equals {b:?}");
    }
}

#[test]
fn members_are_found_by_key_with_or_without_a_hint() {
    let value = obj(vec![("a", V::Num(1.0)), ("bb", s("x")), ("c", V::Null)]);
    let table: wit::Value = cairn_wire::encode::<Model, _>(&value);
    validate(&table, Rules::STRICT).unwrap();
    let root = Node::object(&table).unwrap();
    for hint in 0..4 {
        assert_eq!(root.member("bb", hint).map(Node::text), Some("x"));
        assert_eq!(root.member_bytes(b"a", hint).map(Node::number), Some(1.0));
        assert!(root.member("b", hint).is_none());
    }
    assert!(root.member("a", 0).unwrap().member("a", 0).is_none());
    // Secrets and outputs reveal their contents; an unknown output reveals nothing.
    let wrapped = V::Secret(Box::new(V::Out {
        value: Some(Box::new(s("inside"))),
        secret: false,
        deps: vec![],
    }));
    let table: wit::Value = cairn_wire::encode::<Model, _>(&wrapped);
    validate(&table, Rules::STRICT).unwrap();
    assert_eq!(
        Node::root(&table).unwrap().reveal().map(Node::text),
        Some("inside")
    );
    let unknown = V::Out {
        value: None,
        secret: true,
        deps: vec![],
    };
    let table: wit::Value = cairn_wire::encode::<Model, _>(&unknown);
    assert!(Node::root(&table).unwrap().reveal().is_none());
}
