//! The node table itself (`cairn-wire`), the code the host and the guest SDK both run:
//! validating tables under the guest's strict rules and the host's lenient ones, naming the
//! parties of a fault, and reading accepted tables in place. Tables are built word by word,
//! damaged encodings, and encodings of generated values (which must be accepted); they are
//! held as the host's generated types, bound to `cairn-wire` as the guest's are.

use cairn_fuzz_driver::{Outcome, Target};
use cairn_wasm::bindings::cairn::deploy::types as w;
use cairn_wasm::convert::encode_value;
use cairn_wire::arbitrary::{DICTIONARY, Input, input};
use cairn_wire::{
    Columns, MAX_DEPTH, Node, Rules, WORDS, WireError, WitExtra, extra_referrers, kind, referrers,
    same_known, validate,
};

use crate::generate::{self, Kinds};

pub const TARGET: Target = Target {
    name: "wire_table",
    about: "WIT node tables (cairn-wire): validation never panics, the lenient rules accept what the strict ones do, faults name nodes and referrers that exist, accepted tables read in place consistently, encodings are accepted",
    run,
    seeds,
    dictionary: DICTIONARY,
    max_len: 1024,
};

/// The host's rules, but as deep as the strict ones (so strict acceptance implies lenient).
const LENIENT: Rules = Rules {
    max_depth: MAX_DEPTH,
    ignore_unused: true,
    untrusted: true,
};

fn seeds() -> Vec<Vec<u8>> {
    cairn_wire::arbitrary::seeds(23)
}

fn run(data: &[u8]) -> Outcome {
    match input(data, super::wit::encoded) {
        Some(Input::Table(table)) => check(&table),
        // A generated value's encoding, which must be accepted.
        Some(Input::Value(mut u)) => {
            let Ok(value) = generate::value(&mut u, Kinds::ALL, 0) else {
                return Outcome::Rejected;
            };
            let table = encode_value(&value);
            if let Err(e) = validate(&table, Rules::STRICT) {
                panic!("the encoding of {value:?} is refused: {e}");
            }
            check(&table)
        }
        None => Outcome::Rejected,
    }
}

fn check(table: &w::Value) -> Outcome {
    let strict = validate(table, Rules::STRICT);
    let lenient = validate(table, LENIENT);
    if let Ok(valid) = strict {
        assert_eq!(
            lenient,
            Ok(valid),
            "the lenient rules refuse what the strict ones accept"
        );
    }
    for fault in [&strict, &lenient]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
    {
        check_fault(table, fault);
    }
    if lenient.is_err() {
        return Outcome::Rejected;
    }
    let len = table.nodes.len() / WORDS;
    for i in 0..len {
        read(Node::at(table, i));
    }
    if let Some(root) = Node::root(table) {
        let nan = table.nodes.chunks_exact(WORDS).any(|n| {
            n[0] == kind::NUMBER
                && f64::from_bits(u64::from(n[1]) | (u64::from(n[2]) << 32)).is_nan()
        });
        // Identical tables without unknowns are the same, as blocks and node by node.
        if same_known(table, table) && !nan {
            assert!(root.same_as(root), "same_known but not same_as");
        }
        if !nan {
            assert!(root.equals(root), "a table does not equal itself");
        }
    }
    if strict.is_ok() {
        Outcome::Accepted
    } else {
        Outcome::Rejected
    }
}

/// A fault names nodes and extras of the table, and the parties it implies exist.
fn check_fault(table: &w::Value, fault: &WireError) {
    let _ = fault.to_string();
    let len = table.nodes.len() / WORDS;
    let node_exists = |n: u32| assert!((n as usize) < len, "{fault}: no node {n}");
    match *fault {
        WireError::SharedNode { index } => {
            node_exists(index);
            assert!(
                referrers(table, index).next().is_some(),
                "{fault}: nothing refers to it"
            );
        }
        WireError::SharedExtra { index } => {
            assert!(
                extra_referrers(table, index).count() >= 2,
                "{fault}: not two referrers"
            );
        }
        WireError::UnknownKind { node, .. }
        | WireError::OutOfRange { node, .. }
        | WireError::NotAfterParent { node, .. }
        | WireError::ExtraOutOfRange { node, .. }
        | WireError::WrongExtra { node, .. }
        | WireError::BadReferenceId { node, .. }
        | WireError::DuplicateKey { node, .. }
        | WireError::BadArchiveMember { node, .. }
        | WireError::TooDeep { node, .. }
        | WireError::SpanOutOfRange { node, .. }
        | WireError::InvalidUtf8 { node, .. } => node_exists(node),
        WireError::Unreferenced { index } => node_exists(index),
        WireError::UnusedExtra { index } => {
            assert!((index as usize) < table.extras().len().max(1), "{fault}")
        }
        WireError::Empty | WireError::WordCount { .. } | WireError::NotAnObject { .. } => {}
    }
}

/// Reads one node of an accepted table every way there is.
fn read(node: Node<'_, w::Value>) {
    let _ = (node.kind(), node.operands(), format!("{node:?}"));
    match node.kind() {
        kind::TEXT => {
            let _ = node.text();
        }
        kind::NUMBER => {
            let _ = node.number();
        }
        kind::BOOL => {
            let _ = node.flag();
        }
        k if kind::has_extra(k) => {
            let extra = node.extra().view();
            assert_eq!(extra.kind(), k, "{node:?} has an extra of another kind");
            for c in extra.children() {
                let _ = node.child(c).kind();
            }
        }
        _ => {}
    }
    let _ = node.reveal();
    let children: Vec<_> = node.children().collect();
    for (i, child) in children.iter().enumerate() {
        if node.kind() == kind::OBJECT {
            let key = child.key();
            assert_eq!(child.key_bytes(), key.as_bytes());
            let found = node
                .member(key, i)
                .unwrap_or_else(|| panic!("member {key:?} of a validated object is not found"));
            assert_eq!(
                found.index(),
                child.index(),
                "member {key:?} found elsewhere"
            );
            let hinted = node.member(key, (i + 1) % children.len());
            assert_eq!(hinted.map(Node::index), Some(child.index()));
        }
        for other in &children {
            assert_eq!(
                child.same_as(*other),
                other.same_as(*child),
                "same_as is not symmetric"
            );
        }
    }
}
