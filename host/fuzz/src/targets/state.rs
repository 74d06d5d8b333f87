//! The state JSON codec (`host/engine/src/state/codec.rs`): values and whole deployments.

use arbitrary::Unstructured;
use cairn_engine::state::codec::{decode_value, encode_value};
use cairn_engine::state::{
    DeploymentV3, SecretsMode, Snapshot, UntypedDeployment, VersionedCheckpoint, decode_deployment,
    decode_untyped_deployment, encode_deployment, verify_integrity,
};
use cairn_engine::value::PropertyValue;
use cairn_fuzz_driver::{Outcome, Target};
use serde_json::Value;

use crate::generate::{self, Kinds, TestCrypter};

const DICTIONARY: &[&str] = &[
    "\"4dabf18193072939515e22adb298388d\"",
    "\"c44067f5952c0a294b673a41bacd8c17\"",
    "\"0def7320c3a5731c473e5ecbe6d01bc7\"",
    "\"1b47061264138c4ac30d75fd1eb44270\"",
    "\"5cf8f73096256a8f31e491e813e4eb8e\"",
    "\"d0e6a833031e9bbcd3f4e8bde6ca49a4\"",
    "\"04da6b54-80e4-46f7-96ec-b56ff0331ba9\"",
    "\"ciphertext\"",
    "\"plaintext\"",
    "\"fz:7b7d\"",
    "\"urn\"",
    "\"id\"",
    "\"assets\"",
    "\"text\"",
    "\"value\"",
    "\"dependencies\"",
    "\"secret\":true",
    "\"urn:pulumi:dev::p::a:b:C::n\"",
    "{\"a\":",
    "[[[[",
    "1e308",
    "-0",
    "null",
];

pub const VALUE: Target = Target {
    name: "state_value",
    about: "state codec values: decode→encode→decode is a fixed point (ciphertext and plaintext), generated state values round-trip exactly",
    run: run_value,
    seeds: value_seeds,
    dictionary: DICTIONARY,
    max_len: 2048,
};

pub const DEPLOYMENT: Target = Target {
    name: "state_deployment",
    about: "stack files and exports: decode, integrity check, encode→decode gives the same snapshot",
    run: run_deployment,
    seeds: deployment_seeds,
    dictionary: DICTIONARY,
    max_len: 8192,
};

const IMPORT_CASES: &[&str] = &[
    "tests/data/import/valid/deployment.json",
    "tests/data/import/bad-provider-reference/deployment.json",
    "tests/data/import/component-with-id/deployment.json",
    "tests/data/import/duplicate-urn/deployment.json",
    "tests/data/import/malformed-urn/deployment.json",
    "tests/data/import/missing-dependency/deployment.json",
    "tests/data/import/not-a-deployment/deployment.json",
    "tests/data/import/parent-out-of-order/deployment.json",
    "tests/data/import/provider-id-mismatch/deployment.json",
    "tests/data/import/unknown-signature/deployment.json",
    "tests/data/import/unsupported-version/deployment.json",
];

fn value_seeds() -> Vec<Vec<u8>> {
    let mut seeds = crate::seed_files("state_value", &[]);
    // Every property value in the import cases.
    for file in crate::seed_files("state_deployment", IMPORT_CASES) {
        let Ok(doc) = serde_json::from_slice::<Value>(&file) else {
            continue;
        };
        collect_values(&doc, &mut seeds);
    }
    seeds
}

fn collect_values(doc: &Value, out: &mut Vec<Vec<u8>>) {
    match doc {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "inputs" || key == "outputs" {
                    out.push(value.to_string().into_bytes());
                } else {
                    collect_values(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_values(v, out)),
        _ => {}
    }
}

fn deployment_seeds() -> Vec<Vec<u8>> {
    crate::seed_files("state_deployment", IMPORT_CASES)
}

/// What the state decoder accepts encodes, and decodes again to a value that encodes the same.
pub(crate) fn check_state_fixed_point(value: &PropertyValue, what: &str) {
    let crypter = TestCrypter;
    let first = encode_value(value, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{what}: a decoded value cannot be encoded for state: {e}"));
    let text = serde_json::to_string(&first).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reread: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: state JSON {text:.200} does not parse back: {e}"));
    assert_eq!(
        reread, first,
        "{what}: the JSON text of a value reads back differently"
    );
    let again = decode_value(&reread, Some(&crypter))
        .unwrap_or_else(|e| panic!("{what}: stored value {text:.300} cannot be read back: {e}"));
    let second = encode_value(&again, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        second, first,
        "{what}: decode→encode is not a fixed point for {text:.300}"
    );
    // Exported with secrets in plaintext, it reads back as the same value.
    let plain = encode_value(value, SecretsMode::Plaintext).unwrap_or_else(|e| panic!("{e}"));
    let from_plain = decode_value(&plain, None)
        .unwrap_or_else(|e| panic!("{what}: a plaintext export cannot be read back: {e}"));
    assert!(
        generate::same(&from_plain, &again),
        "{what}: plaintext and ciphertext exports read back differently"
    );
}

fn run_value(data: &[u8]) -> Outcome {
    let crypter = TestCrypter;
    let decoded = serde_json::from_slice::<Value>(data)
        .map_err(|e| e.to_string())
        .and_then(|json| decode_value(&json, Some(&crypter)).map_err(|e| e.to_string()));
    if let Ok(value) = &decoded {
        check_state_fixed_point(value, "state value");
    }
    let mut u = Unstructured::new(data);
    let kinds = Kinds {
        outputs: false,
        ..Kinds::EXACT
    };
    if let Ok(value) = generate::value(&mut u, kinds, 0) {
        let json = encode_value(&value, SecretsMode::Encrypt(&crypter))
            .unwrap_or_else(|e| panic!("generated {value:?} cannot be encoded: {e}"));
        let back = decode_value(&json, Some(&crypter)).unwrap_or_else(|e| {
            panic!("generated {value:?} encodes to {json}, which does not decode: {e}")
        });
        assert_eq!(
            back, value,
            "state codec round trip of a generated value via {json}"
        );
    }
    crate::outcome(&decoded)
}

/// A stack file (`{version, checkpoint}`), an export (`{version, deployment}`) or a bare
/// deployment.
fn read_deployment(data: &[u8]) -> Option<DeploymentV3> {
    if let Ok(file) = serde_json::from_slice::<VersionedCheckpoint>(data) {
        return file.checkpoint.latest;
    }
    if let Ok(export) = serde_json::from_slice::<UntypedDeployment>(data) {
        return decode_untyped_deployment(export).ok();
    }
    serde_json::from_slice::<DeploymentV3>(data).ok()
}

fn run_deployment(data: &[u8]) -> Outcome {
    let Some(deployment) = read_deployment(data) else {
        return Outcome::Rejected;
    };
    let crypter = TestCrypter;
    let Ok(snapshot) = decode_deployment(deployment, Some(&crypter)) else {
        return Outcome::Rejected;
    };
    let _ = verify_integrity(&snapshot).map_err(|e| e.to_string());
    check_snapshot_round_trip(&snapshot);
    Outcome::Accepted
}

/// A snapshot encodes, its JSON text parses back, and decodes to the same snapshot.
pub(crate) fn check_snapshot_round_trip(snapshot: &Snapshot) {
    let crypter = TestCrypter;
    let encoded = encode_deployment(snapshot, SecretsMode::Encrypt(&crypter))
        .unwrap_or_else(|e| panic!("a decoded snapshot cannot be encoded: {e}"));
    let text = serde_json::to_string(&encoded).unwrap_or_else(|e| panic!("{e}"));
    let reread: DeploymentV3 = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("a written deployment does not parse back: {e}\n{text:.500}"));
    let again = decode_deployment(reread, Some(&crypter))
        .unwrap_or_else(|e| panic!("a written deployment cannot be read back: {e}\n{text:.500}"));
    let encoded_again =
        encode_deployment(&again, SecretsMode::Encrypt(&crypter)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde_json::to_value(&encoded_again).ok(),
        serde_json::to_value(&encoded).ok(),
        "deployment decode→encode is not a fixed point:\n{text:.500}"
    );
    assert_eq!(
        verify_integrity(&again).is_ok(),
        verify_integrity(snapshot).is_ok(),
        "the integrity verdict changed across a save"
    );
}
