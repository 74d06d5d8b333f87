//! Malformed tables: every rule of the format, each broken on its own, is a `WireError` naming
//! the fault (never a panic), under the guest's strict rules and the host's. These are the
//! cases both sides tested with their own copies of the validator before it was shared.

use cairn_wire::{Node, Rules, Valid, WireError, extra_referrers, kind, referrers, validate};

use crate::support::*;

#[test]
fn spans_are_checked() {
    assert_eq!(
        bad(&[node(kind::TEXT, 10, 7)]),
        WireError::SpanOutOfRange {
            node: 0,
            offset: 10,
            len: 7,
            buffer: 16
        }
    );
    assert_eq!(
        bad(&[node(kind::TEXT, u32::MAX, u32::MAX)]),
        WireError::SpanOutOfRange {
            node: 0,
            offset: u32::MAX,
            len: u32::MAX,
            buffer: 16
        }
    );
    assert_eq!(
        bad(&[
            node(kind::ARRAY, 1, 1),
            node(kind::OBJECT, 2, 1),
            null().raw_key(16, 1)
        ]),
        WireError::SpanOutOfRange {
            node: 2,
            offset: 16,
            len: 1,
            buffer: 16
        }
    );
    // Cut mid-character, at either end, and stray bytes.
    for (offset, len) in [(0, 1), (1, 1), (1, 2)] {
        assert_eq!(
            read(
                &table(&[node(kind::TEXT, offset, len)], "é!".as_bytes(), vec![]),
                Rules::STRICT
            ),
            Err(WireError::InvalidUtf8 {
                node: 0,
                offset,
                len
            })
        );
    }
    assert_eq!(
        read(
            &table(
                &[node(kind::OBJECT, 1, 1), null().raw_key(0, 2)],
                &[b'a', 0xff],
                vec![]
            ),
            Rules::STRICT
        ),
        Err(WireError::InvalidUtf8 {
            node: 1,
            offset: 0,
            len: 2
        })
    );
    // Spans may overlap and come in any order; bytes no span covers are not checked.
    let overlapping = table(
        &[
            node(kind::OBJECT, 1, 2),
            node(kind::TEXT, 3, 0).raw_key(1, 2),
            node(kind::TEXT, 1, 2).raw_key(0, 3),
        ],
        &[b'a', 0xc3, 0xa9, 0xff],
        vec![],
    );
    assert_eq!(read(&overlapping, Rules::STRICT), Ok(()));
    let root = Node::root(&overlapping).unwrap();
    let members: Vec<(&str, &str)> = root.children().map(|m| (m.key(), m.text())).collect();
    assert_eq!(members, [("é", ""), ("aé", "é")]);
    assert_eq!(
        bad(&[node(kind::TEXT, 1, 200)]).to_string(),
        "node 0: text span (offset 1, length 200) is outside the 16-byte string buffer"
    );
}

#[test]
fn malformed_tables_are_rejected() {
    let cases: Vec<(wit::Value, WireError)> = vec![
        (pooled(&[]), WireError::Empty),
        (
            wit::Value {
                nodes: vec![0; 4],
                ..pooled(&[null()])
            },
            WireError::WordCount { words: 4 },
        ),
        (
            pooled(&[node(99, 0, 0)]),
            WireError::UnknownKind { node: 0, kind: 99 },
        ),
        (
            pooled(&[node(kind::ARRAY, 1, 5), null()]),
            WireError::OutOfRange {
                node: 0,
                index: 5,
                len: 2,
            },
        ),
        (
            pooled(&[node(kind::ARRAY, 1, u32::MAX), null()]),
            WireError::OutOfRange {
                node: 0,
                index: u32::MAX,
                len: 2,
            },
        ),
        // A self-reference and a cycle both point backwards somewhere.
        (
            pooled(&[node(kind::SECRET, 0, 0)]),
            WireError::NotAfterParent { node: 0, index: 0 },
        ),
        (
            pooled(&[node(kind::ARRAY, 1, 1), node(kind::ARRAY, 0, 1)]),
            WireError::NotAfterParent { node: 1, index: 0 },
        ),
        (
            pooled(&[node(kind::ARRAY, 1, 2), node(kind::SECRET, 2, 0), null()]),
            WireError::SharedNode { index: 2 },
        ),
        (
            pooled(&[
                node(kind::ARRAY, 1, 1),
                node(kind::SECRET, 2, 0),
                null(),
                null(),
            ]),
            WireError::Unreferenced { index: 3 },
        ),
        (
            pooled(&[node(kind::OBJECT, 1, 2), null().key("a"), null().key("a")]),
            WireError::DuplicateKey {
                node: 0,
                key: "a".into(),
            },
        ),
        (
            pooled(&[node(kind::ASSET, 0, 0)]),
            WireError::ExtraOutOfRange {
                node: 0,
                index: 0,
                len: 0,
            },
        ),
        (
            table(
                &[
                    node(kind::ARRAY, 1, 2),
                    node(kind::REFERENCE, 0, 0),
                    node(kind::REFERENCE, 0, 0),
                ],
                b"",
                vec![reference(None)],
            ),
            WireError::SharedExtra { index: 0 },
        ),
        (
            table(&[null()], b"", vec![reference(None)]),
            WireError::UnusedExtra { index: 0 },
        ),
        (
            table(&[node(kind::OUTPUT, 0, 0)], b"", vec![reference(None)]),
            WireError::WrongExtra {
                node: 0,
                expected: "output",
                found: "resource reference",
            },
        ),
        (
            table(
                &[node(kind::REFERENCE, 0, 0), node(kind::NUMBER, 0, 0)],
                b"",
                vec![reference(Some(1))],
            ),
            WireError::BadReferenceId {
                node: 0,
                kind: "number",
            },
        ),
        (
            table(
                &[node(kind::ARCHIVE, 0, 0), text("not an asset")],
                POOL.as_bytes(),
                vec![wit::Extra::Archive(wit::Archive {
                    hash: None,
                    source: wit::ArchiveSource::Assets(vec![("x".into(), 1)]),
                })],
            ),
            WireError::BadArchiveMember {
                node: 0,
                key: "x".into(),
                kind: "string",
            },
        ),
        (
            table(
                &[node(kind::OUTPUT, 0, 0)],
                b"",
                vec![wit::Extra::Output(wit::OutputValue {
                    value: Some(u32::MAX),
                    secret: false,
                    dependencies: vec![],
                })],
            ),
            WireError::OutOfRange {
                node: 0,
                index: u32::MAX,
                len: 1,
            },
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(read(&value, Rules::STRICT), Err(expected));
    }
    // Many keys are checked for duplicates too.
    let mut nodes = vec![node(kind::OBJECT, 1, 70)];
    nodes.extend((0..70).map(|i| null().key(if i == 69 { "a" } else { "x" })));
    assert_eq!(
        bad(&nodes),
        WireError::DuplicateKey {
            node: 0,
            key: "x".into()
        }
    );
}

/// The host's cases, read with the host's rules: what a guest may send it.
#[test]
fn malformed_guest_tables_are_rejected_under_the_host_rules() {
    let cases: Vec<(wit::Value, WireError)> = vec![
        (
            wit::Value {
                nodes: vec![0; 7],
                ..pooled(&[null()])
            },
            WireError::WordCount { words: 7 },
        ),
        (
            pooled(&[node(42, 0, 0)]),
            WireError::UnknownKind { node: 0, kind: 42 },
        ),
        (
            pooled(&[node(kind::ARRAY, 5, 1)]),
            WireError::OutOfRange {
                node: 0,
                index: 5,
                len: 1,
            },
        ),
        (
            pooled(&[node(kind::ARRAY, 0, 1)]),
            WireError::NotAfterParent { node: 0, index: 0 },
        ),
        // Node 0 is a value of its own; node 1, which nothing refers to, still points back.
        (
            pooled(&[null(), node(kind::ARRAY, 0, 1)]),
            WireError::NotAfterParent { node: 1, index: 0 },
        ),
        (
            pooled(&[node(kind::SECRET, u32::MAX, 0)]),
            WireError::OutOfRange {
                node: 0,
                index: u32::MAX,
                len: 1,
            },
        ),
        (
            pooled(&[node(kind::OBJECT, 1, 2), null().key("x"), null().key("x")]),
            WireError::DuplicateKey {
                node: 0,
                key: "x".into(),
            },
        ),
        (
            table(
                &[node(kind::ARCHIVE, 0, 0), node(kind::ASSET, 1, 0)],
                b"",
                vec![
                    wit::Extra::Archive(wit::Archive {
                        hash: None,
                        source: wit::ArchiveSource::Assets(vec![("m".into(), 1), ("m".into(), 1)]),
                    }),
                    wit::Extra::Asset(wit::Asset {
                        hash: None,
                        source: wit::AssetSource::HashOnly,
                    }),
                ],
            ),
            WireError::SharedNode { index: 1 },
        ),
        (
            table(
                &[
                    node(kind::ARCHIVE, 0, 0),
                    node(kind::ASSET, 1, 0),
                    node(kind::ASSET, 2, 0),
                ],
                b"",
                vec![
                    wit::Extra::Archive(wit::Archive {
                        hash: None,
                        source: wit::ArchiveSource::Assets(vec![("m".into(), 1), ("m".into(), 2)]),
                    }),
                    wit::Extra::Asset(wit::Asset {
                        hash: None,
                        source: wit::AssetSource::HashOnly,
                    }),
                    wit::Extra::Asset(wit::Asset {
                        hash: None,
                        source: wit::AssetSource::Text("t".into()),
                    }),
                ],
            ),
            WireError::DuplicateKey {
                node: 0,
                key: "m".into(),
            },
        ),
        (
            pooled(&[node(kind::TEXT, 20, 100)]),
            WireError::SpanOutOfRange {
                node: 0,
                offset: 20,
                len: 100,
                buffer: 16,
            },
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(read(&value, HOST), Err(expected.clone()), "{value:?}");
        // The strict rules find the same fault (nothing here is unused).
        if !matches!(expected, WireError::NotAfterParent { node: 1, .. }) {
            assert_eq!(read(&value, Rules::STRICT), Err(expected), "{value:?}");
        }
    }
}

#[test]
fn the_host_ignores_what_nothing_refers_to_but_checks_it() {
    let stray = pooled(&[node(kind::BOOL, 1, 0), text("x")]);
    assert_eq!(read(&stray, HOST), Ok(()));
    assert_eq!(
        read(&stray, Rules::STRICT),
        Err(WireError::Unreferenced { index: 1 })
    );
    let unused = table(&[null()], b"", vec![reference(None)]);
    assert_eq!(read(&unused, HOST), Ok(()));
    assert_eq!(
        validate(&table(&[], b"", vec![reference(None)]), HOST),
        Ok(Valid { depth: 0 })
    );
    // An unused node is still checked.
    assert_eq!(
        read(&pooled(&[null(), node(kind::TEXT, 10, 7)]), HOST),
        Err(WireError::SpanOutOfRange {
            node: 1,
            offset: 10,
            len: 7,
            buffer: 16
        })
    );
}

#[test]
fn the_first_duplicate_in_member_order_is_named() {
    for rules in [Rules::STRICT, HOST] {
        // "b" repeats at position 2, "a" only at position 3.
        let nodes = [
            node(kind::OBJECT, 1, 4),
            null().key("a"),
            null().key("x"),
            null().key("x"),
            null().key("a"),
        ];
        assert_eq!(
            read(&pooled(&nodes), rules),
            Err(WireError::DuplicateKey {
                node: 0,
                key: "x".into()
            })
        );
    }
    // Many keys, hashed with either hash.
    let mut nodes = vec![node(kind::OBJECT, 1, 70)];
    nodes.extend((0..70).map(|i| null().key(if i == 69 { "a" } else { "x" })));
    assert_eq!(
        read(&pooled(&nodes), HOST),
        Err(WireError::DuplicateKey {
            node: 0,
            key: "x".into()
        })
    );
}

#[test]
fn the_parties_of_a_fault_can_be_named() {
    let shared = pooled(&[node(kind::ARRAY, 1, 2), node(kind::SECRET, 2, 0), null()]);
    assert_eq!(referrers(&shared, 2).collect::<Vec<_>>(), [0, 1]);
    let value = table(
        &[
            node(kind::ARRAY, 1, 2),
            node(kind::REFERENCE, 0, 0),
            node(kind::REFERENCE, 0, 0),
        ],
        b"",
        vec![reference(None)],
    );
    assert_eq!(extra_referrers(&value, 0).collect::<Vec<_>>(), [1, 2]);
    let through_extra = table(
        &[node(kind::REFERENCE, 0, 0), text("x")],
        POOL.as_bytes(),
        vec![reference(Some(1))],
    );
    assert_eq!(referrers(&through_extra, 1).collect::<Vec<_>>(), [0]);
}

#[test]
fn property_maps_need_an_object_root() {
    use cairn_wire::validate_map;
    assert!(validate_map(&pooled(&[]), Rules::STRICT).is_ok());
    assert!(validate_map(&pooled(&[null()]), Rules::STRICT).is_ok());
    assert_eq!(
        validate_map(&pooled(&[text("x")]), Rules::STRICT),
        Err(WireError::NotAnObject { kind: "string" })
    );
    assert!(Node::object(&pooled(&[null()])).is_none());
}

#[test]
fn errors_read_well() {
    let e = bad(&[node(kind::ARRAY, 1, 1), node(kind::ARRAY, 0, 1)]);
    assert_eq!(
        e.to_string(),
        "node 1 refers to node 0, which is not after it"
    );
}

#[test]
fn a_very_deep_table_is_rejected_without_exhausting_the_stack() {
    let n = 200_000u32;
    let nodes: Vec<N> = (0..n)
        .map(|i| {
            if i + 1 < n {
                node(kind::SECRET, i + 1, 0)
            } else {
                null()
            }
        })
        .collect();
    assert!(matches!(
        read(&table(&nodes, b"", vec![]), Rules::STRICT),
        Err(WireError::TooDeep { .. })
    ));
}

#[test]
fn depth_is_bounded_by_the_rules_and_reported() {
    let chain = |n: u32| {
        let mut nodes: Vec<N> = (0..n - 1).map(|i| node(kind::ARRAY, i + 1, 1)).collect();
        nodes.push(null());
        pooled(&nodes)
    };
    assert_eq!(
        validate(&chain(100_000), HOST),
        Err(WireError::TooDeep {
            node: 128,
            limit: 128
        })
    );
    assert_eq!(validate(&chain(128), HOST), Ok(Valid { depth: 128 }));
    assert_eq!(validate(&chain(66), HOST), Ok(Valid { depth: 66 }));
    assert_eq!(
        validate(&chain(513), Rules::STRICT),
        Err(WireError::TooDeep {
            node: 512,
            limit: 512
        })
    );
    assert_eq!(
        validate(&chain(512), Rules::STRICT),
        Ok(Valid { depth: 512 })
    );
    assert_eq!(
        WireError::TooDeep {
            node: 512,
            limit: 512
        }
        .to_string(),
        "node 512 nests deeper than 512 levels"
    );
}
