//! URNs, type tokens and provider references (`host/engine/src/urn.rs`, `state::ProviderReference`).

use arbitrary::Unstructured;
use cairn_engine::limits::MAX_URN_BYTES;
use cairn_engine::state::ProviderReference;
use cairn_engine::text::is_unsafe;
use cairn_engine::urn::{ROOT_STACK_TYPE, TypeToken, Urn};
use cairn_fuzz_driver::{Outcome, Target};

use crate::generate;

pub const TARGET: Target = Target {
    name: "urn",
    about: "Urn/TypeToken/ProviderReference::parse: parts re-assemble to the input, print = input, generated URNs parse back",
    run,
    seeds,
    dictionary: &[
        "urn:pulumi:",
        "::",
        "$",
        ":",
        "pulumi:providers:",
        "pulumi:pulumi:Stack",
        "\u{1b}",
        "/",
        "index",
        "-",
        "\u{9b}",
        "é",
    ],
    max_len: 512,
};

fn seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "urn:pulumi:dev::web::my:mod:Comp$aws:s3/bucket:Bucket::site:assets",
        "urn:pulumi:dev::proj::pkg:index:Group$random:index/randomString:RandomString::pw",
        "urn:pulumi:dev::quickstart::pulumi:providers:random::default_1_0_0::4a9c1c6e-1f0b-4d5a-9b52-0e0b1a3a6c11",
        "urn:pulumi:dev::p::a:b:C::",
        "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev",
        "pkg::Type",
        "k8s:apps/v1:Deployment",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    // URNs from the state files of the import cases.
    for file in crate::seed_files("urn", &["tests/data/import/valid/deployment.json"]) {
        let text = String::from_utf8_lossy(&file);
        for part in text.split('"').filter(|p| p.starts_with("urn:pulumi:")) {
            seeds.push(part.as_bytes().to_vec());
        }
    }
    seeds
}

fn run(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let urn = Urn::parse(&text);
    if let Ok(urn) = &urn {
        check_urn(&text, urn);
    }
    if let Ok(token) = TypeToken::parse(&text) {
        check_token(&text, &token);
    }
    if let Ok(reference) = ProviderReference::parse(&text) {
        let printed = reference.to_string();
        let again = ProviderReference::parse(&printed)
            .unwrap_or_else(|e| panic!("provider reference {printed:?} does not parse back: {e}"));
        assert_eq!(again, reference, "provider reference print/parse");
    }
    // Generated URNs: built from parts, they parse back to the same parts.
    let mut u = Unstructured::new(data);
    if let Ok(generated) = generate::urn(&mut u) {
        let parsed = Urn::parse(generated.as_str())
            .unwrap_or_else(|e| panic!("built URN {generated} does not parse: {e}"));
        assert_eq!(parsed, generated);
        check_urn(generated.as_str(), &parsed);
    }
    crate::outcome(&urn)
}

fn check_urn(text: &str, urn: &Urn) {
    assert_eq!(urn.as_str(), text, "a URN prints as it was parsed");
    assert!(text.len() <= MAX_URN_BYTES);
    assert_eq!(
        Urn::parse(urn.as_str()).as_ref(),
        Ok(urn),
        "parse(print(urn))"
    );
    let (stack, project, name) = (urn.stack(), urn.project(), urn.name());
    assert!(!stack.is_empty() && !project.is_empty() && !urn.qualified_type().is_empty());
    for part in [stack, project, name] {
        assert!(
            !part.contains("::"),
            "{part:?} in {text:?} holds the separator"
        );
        assert!(
            !part.chars().any(is_unsafe),
            "{part:?} in {text:?} holds a control character"
        );
    }
    for t in urn.qualified_type().split('$') {
        TypeToken::parse(t).unwrap_or_else(|e| panic!("type {t:?} of {text:?}: {e}"));
    }
    // The parts re-assemble into the same URN (the builder leaves out the root stack type).
    if urn.parent_type() != Some(ROOT_STACK_TYPE) {
        let token = TypeToken::parse(urn.resource_type())
            .unwrap_or_else(|e| panic!("resource type of {text:?}: {e}"));
        let rebuilt = Urn::new(stack, project, urn.parent_type(), &token, name)
            .unwrap_or_else(|e| panic!("parts of {text:?} do not re-assemble: {e}"));
        assert_eq!(&rebuilt, urn, "re-assembled from its parts");
    }
}

fn check_token(text: &str, token: &TypeToken) {
    assert_eq!(token.as_str(), text);
    assert!(
        !text.chars().any(is_unsafe),
        "type token {text:?} holds a control character"
    );
    assert!(!text.contains('$'), "type token {text:?} holds '$'");
    assert!(!text.contains("::"), "type token {text:?} holds '::'");
    // A URN holds it, and gives it back.
    let urn = Urn::new("s", "p", Some("parent"), token, "n")
        .unwrap_or_else(|e| panic!("type {text:?} does not fit in a URN: {e}"));
    assert_eq!(urn.resource_type(), text);
    if token.check_member().is_ok() {
        let rebuilt = if text.matches(':').count() == 1 {
            format!("{}:{}", token.package(), token.name())
        } else {
            format!("{}:{}:{}", token.package(), token.module(), token.name())
        };
        assert_eq!(rebuilt, text, "type token parts");
    }
}
