//! Property paths (`host/engine/src/path.rs`): parsing, printing and evaluation.

use arbitrary::Unstructured;
use cairn_engine::path::{PathElement, PropertyPath};
use cairn_engine::value::PropertyValue;
use cairn_fuzz_driver::{Outcome, Target};

use crate::generate::{self, Kinds};

pub const TARGET: Target = Target {
    name: "path",
    about: "PropertyPath::parse: print(parse(s)) parses to the same path, generated paths round-trip, get/set/delete/reset never panic and set-then-get holds",
    run,
    seeds,
    dictionary: &[
        "[",
        "]",
        "[*]",
        "[\"",
        "\"]",
        ".",
        "\\\"",
        "\\\\",
        "*",
        "0",
        "18446744073709551616",
    ],
    max_len: 256,
};

fn seeds() -> Vec<Vec<u8>> {
    [
        "root",
        "root.nested",
        "root[\"nested\"]",
        "root.array[0][1].nested",
        "root[\"key with \\\"escaped\\\" quotes\"]",
        "root[\"key with a .\"]",
        "[\"root key with a .\"][100]",
        "root.array[*].field",
        "root.array[\"*\"].field",
        "data.ports[0]",
        "tags[\"a b\"][0]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// Indexes above this are not `set` (setting pads an array up to the index, by design).
const MAX_SET_INDEX: usize = 4096;

fn run(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let parsed = PropertyPath::parse(&text);
    if let Ok(path) = &parsed {
        assert!(!path.is_empty(), "{text:?} parsed to the empty path");
        round_trip(path);
    }
    let mut u = Unstructured::new(data);
    if let Ok(path) = generate::path(&mut u) {
        round_trip(&path);
        if let Ok(root) = generate::value(&mut u, Kinds::ALL, 3) {
            evaluate(&path, root, &mut u);
        }
    }
    if let (Ok(path), Ok(root)) = (&parsed, generate::value(&mut u, Kinds::ALL, 2)) {
        evaluate(path, root, &mut u);
    }
    crate::outcome(&parsed)
}

fn round_trip(path: &PropertyPath) {
    let printed = path.to_string();
    let again = PropertyPath::parse(&printed)
        .unwrap_or_else(|e| panic!("{path:?} prints as {printed:?}, which does not parse: {e}"));
    assert_eq!(&again, path, "{printed:?} parses to another path");
    assert_eq!(again.to_string(), printed);
    assert!(path.contains(path));
}

fn evaluate(path: &PropertyPath, mut root: PropertyValue, u: &mut Unstructured<'_>) {
    let _ = path.get(&root);
    let matches = path.get_all(&root);
    if !path.has_wildcard() {
        assert!(
            matches.len() <= 1,
            "{path}: a path without wildcards matched {} values",
            matches.len()
        );
        // The same node, not merely an equal one (NaN is unequal to itself).
        let same_node = match (matches.first(), path.get(&root)) {
            (Some((_, a)), Some(b)) => std::ptr::eq(*a, b),
            (None, None) => true,
            _ => false,
        };
        assert!(same_node, "{path}: get vs get_all");
    }
    for (concrete, value) in &matches {
        assert!(!concrete.has_wildcard());
        assert!(
            path.contains(concrete),
            "{path} does not contain its match {concrete}"
        );
        assert!(
            concrete.get(&root).is_some_and(|v| std::ptr::eq(v, *value)),
            "{concrete}: a match is where get_all says"
        );
    }
    let old = root.clone();
    let huge = path
        .elements()
        .iter()
        .any(|e| matches!(e, PathElement::Index(i) if *i > MAX_SET_INDEX));
    if !huge {
        let value = generate::value(u, generate::Kinds::ALL, 8).unwrap_or(PropertyValue::Null);
        let before = root.clone();
        match path.set(&mut root, value.clone()) {
            Ok(()) if !path.has_wildcard() => {
                assert!(
                    generate::same(&path.get(&root), &Some(&value)),
                    "{path}: get after set"
                );
            }
            Ok(()) => {}
            Err(_) => assert!(
                generate::same(&root, &before),
                "{path}: a failed set changed the value"
            ),
        }
        let _ = path.reset(&old, &mut root);
    }
    let _ = path.delete(&mut root);
}
