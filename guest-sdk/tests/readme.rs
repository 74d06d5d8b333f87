//! The README's samples: every Rust block is a doctest (`ReadmeDoctests` in `src/lib.rs`); this
//! ties the provider sample to `examples/providers/hello`, which builds it as a component and
//! unit-tests it. The README's `src/lib.rs` block must be the example's text between its
//! `README sample` markers, its `cairn.json` the example's manifest (and the doctests' copy,
//! `guest-sdk/cairn.json`), and its `Cargo.toml` a cdylib depending on the SDK.

use std::path::Path;

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first block fenced as ```` ```lang ```` after `heading`.
fn block_after<'a>(text: &'a str, heading: &str, lang: &str) -> &'a str {
    let at = text.find(heading).expect("the heading is in the README");
    let rest = &text[at..];
    let fence = format!("```{lang}\n");
    let start = rest
        .find(&fence)
        .unwrap_or_else(|| panic!("a {lang} block follows {heading:?}"))
        + fence.len();
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
    let shown = block_after(&readme, "## A provider", "rust");
    assert_eq!(
        shown, sample,
        "guest-sdk/README.md's provider sample differs from examples/providers/hello/src/lib.rs"
    );
    // The sample shows what a preview does, with the requests' names.
    assert!(shown.contains("fn preview_create"));
    assert!(shown.contains("r.inputs") && shown.contains("r.old_outputs"));
}

#[test]
fn the_readme_manifest_is_the_hello_manifest_and_the_doctests_copy() {
    let readme = read("README.md");
    let hello = read("../examples/providers/hello/cairn.json");
    assert_eq!(block_after(&readme, "## A provider", "json"), hello);
    assert_eq!(
        read("cairn.json"),
        hello,
        "guest-sdk/cairn.json (the doctests' manifest)"
    );
}

#[test]
fn the_readme_cargo_toml_builds_a_component_with_the_sdk() {
    let readme = read("README.md");
    let shown = block_after(&readme, "## A provider", "toml");
    let hello = read("../examples/providers/hello/Cargo.toml");
    for line in [
        "name = \"hello\"",
        "[lib]",
        "crate-type = [\"cdylib\"]",
        "[dependencies]",
    ] {
        assert!(shown.contains(line), "README Cargo.toml lacks {line}");
        assert!(hello.contains(line), "hello's Cargo.toml lacks {line}");
    }
    assert!(shown.contains("cairn-sdk = { path = \""));
}

#[test]
fn no_sample_is_left_uncompiled() {
    // `ignore` blocks are never compiled, and Rust marked `text` is not either: samples that
    // cannot run natively are `no_run` (still compiled).
    let mut sources = vec![("README.md".to_owned(), read("README.md"))];
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                sources.push((path.display().to_string(), text));
            }
        }
    }
    assert!(sources.len() > 10, "the SDK's sources were found");
    for (name, text) in &sources {
        for line in text.lines() {
            let fence = line
                .trim_start()
                .trim_start_matches("//!")
                .trim_start_matches("///")
                .trim();
            let Some(info) = fence.strip_prefix("```") else {
                continue;
            };
            assert!(
                !info
                    .split(',')
                    .any(|a| a.trim() == "ignore" || a.trim() == "text"),
                "{name}: an uncompiled block: {line}"
            );
        }
    }
}
