//! The README's provider sample is `examples/providers/hello/src/lib.rs` (between its `README
//! sample` markers), which is built as a component and unit-tested there: the README's block
//! must be that text exactly, so what the README shows compiles and behaves as documented.

use std::path::Path;

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first ```rust block after `heading`.
fn block_after<'a>(text: &'a str, heading: &str) -> &'a str {
    let at = text.find(heading).expect("the heading is in the README");
    let rest = &text[at..];
    let start = rest
        .find("```rust\n")
        .expect("a rust block follows the heading")
        + 8;
    let len = rest[start..].find("```\n").expect("the block ends");
    &rest[start..start + len]
}

#[test]
fn the_readme_provider_sample_is_the_hello_example() {
    let readme = read("README.md");
    let source = read("../examples/providers/hello/src/lib.rs");
    let sample = source
        .split_once("// README sample begins\n")
        .and_then(|(_, rest)| rest.split_once("// README sample ends\n"))
        .map(|(sample, _)| sample)
        .expect("the hello example marks the README sample");
    let shown = block_after(&readme, "## A provider");
    assert_eq!(
        shown, sample,
        "guest-sdk/README.md's provider sample differs from examples/providers/hello/src/lib.rs"
    );
    // The sample shows what a preview does.
    assert!(shown.contains("fn preview_create"));
}
