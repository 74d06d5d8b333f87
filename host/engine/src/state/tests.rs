//! Tests of the deployment model, codec and integrity check against a Pulumi-shaped state.

use serde_json::{Value, json};

use super::codec::{SIG_KEY, UNKNOWN_SENTINEL};
use super::*;
use crate::asset::{ArchiveMember, ArchiveSource, AssetSource};
use crate::secrets::{Crypter, SecretsError};
use crate::value::{OutputValue, PropertyValue};
use sha2::{Digest, Sha256};

/// A transparent, deterministic crypter: `test:<plaintext>`. The real passphrase crypter is
/// tested in `secrets`; here the codec's handling of ciphertexts is what matters.
struct TestCrypter;

impl Crypter for TestCrypter {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        Ok(format!("test:{plaintext}"))
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        ciphertext
            .strip_prefix("test:")
            .map(str::to_owned)
            .ok_or(SecretsError::Decrypt)
    }
}

fn fixture() -> DeploymentV3 {
    serde_json::from_str(include_str!("testdata/deployment.json")).unwrap()
}

fn decode(deployment: &DeploymentV3) -> Snapshot {
    decode_deployment(deployment.clone(), Some(&TestCrypter)).unwrap()
}

fn encode(snapshot: &Snapshot) -> Value {
    serde_json::to_value(encode_deployment(snapshot, SecretsMode::Encrypt(&TestCrypter)).unwrap())
        .unwrap()
}

fn bucket(snapshot: &Snapshot) -> &ResourceState {
    snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "site-bucket")
        .unwrap()
}

#[test]
fn decodes_every_kind_of_value() {
    let snapshot = decode(&fixture());
    let inputs = &bucket(&snapshot).inputs;
    assert_eq!(
        inputs["password"],
        PropertyValue::secret(PropertyValue::from("hunter2"))
    );
    assert_eq!(inputs["pending"], PropertyValue::Computed);
    assert_eq!(
        inputs["nested"],
        PropertyValue::Array(vec![
            1i64.into(),
            2.5.into(),
            PropertyValue::Null,
            true.into(),
            PropertyValue::Array(vec![]),
            PropertyValue::Object(Default::default()),
        ])
    );
    let PropertyValue::Asset(asset) = &inputs["index"] else {
        panic!("index is {:?}", inputs["index"]);
    };
    assert_eq!(asset.source, AssetSource::Text("hello".into()));
    let PropertyValue::Archive(archive) = &inputs["site"] else {
        panic!("site is {:?}", inputs["site"]);
    };
    let ArchiveSource::Assets(members) = &archive.source else {
        panic!("site source is {:?}", archive.source);
    };
    assert!(matches!(members["a.txt"], ArchiveMember::Asset(_)));
    assert!(matches!(members["sub"], ArchiveMember::Archive(_)));
    let PropertyValue::ResourceReference(owner) = &inputs["owner"] else {
        panic!("owner is {:?}", inputs["owner"]);
    };
    assert_eq!(owner.urn.name(), "site");
    assert_eq!(owner.id, None);
    assert_eq!(owner.package_version.as_deref(), Some("1.2.3"));
    assert!(bucket(&snapshot).outputs["secretObj"].contains_secrets());
    assert_eq!(snapshot.pending_operations[0].kind, OperationKind::Creating);
}

#[test]
fn decode_then_encode_is_stable_and_keeps_unknown_fields() {
    let original: Value = serde_json::from_str(include_str!("testdata/deployment.json")).unwrap();
    let once = encode(&decode(&fixture()));
    let twice = encode(&decode(&serde_json::from_value(once.clone()).unwrap()));
    assert_eq!(once, twice, "encoding must be a fixed point");
    // Every resource comes back exactly as written: same fields, values and key order.
    assert_eq!(once["resources"], original["resources"]);
    assert_eq!(once["pending_operations"], original["pending_operations"]);
    assert_eq!(once["manifest"], original["manifest"]);
    assert_eq!(once["metadata"], json!({"futureDeploymentField": 1}));
    assert_eq!(
        serde_json::to_string(&once["resources"]).unwrap(),
        serde_json::to_string(&original["resources"]).unwrap(),
        "key order must survive a round trip"
    );
}

/// The streamed encoding (each resource encoded while it is written) writes the very bytes the
/// built [`DeploymentV3`] does: same fields, order, secrets, pending operations and unknown
/// fields; and its failure is the typed one, naming the resource and property.
#[test]
fn the_streamed_encoding_writes_what_the_built_one_does() {
    let snapshot = decode(&fixture());
    let mode = SecretsMode::Encrypt(&TestCrypter);
    let built = serde_json::to_vec_pretty(&encode_deployment(&snapshot, mode).unwrap()).unwrap();
    let streamed = codec::encode_deployment_json(&snapshot, mode).unwrap();
    assert_eq!(
        String::from_utf8(streamed).unwrap(),
        String::from_utf8(built).unwrap()
    );

    let empty = Snapshot::empty(None);
    assert_eq!(
        codec::encode_deployment_json(&empty, mode).unwrap(),
        serde_json::to_vec_pretty(&encode_deployment(&empty, mode).unwrap()).unwrap(),
        "an empty deployment leaves its empty lists out"
    );

    let mut broken = snapshot.clone();
    let last = broken.resources.len() - 1;
    broken.resources[last]
        .outputs
        .insert("ratio".into(), PropertyValue::Number(f64::NAN));
    let urn = broken.resources[last].urn.clone();
    match codec::encode_deployment_json(&broken, mode) {
        Err(codec::StateError::Resource {
            urn: at,
            section,
            source,
        }) => {
            assert_eq!((at, section), (urn, "outputs"));
            assert!(source.to_string().contains("ratio"), "{source}");
        }
        other => panic!("expected the resource's encoding error, got {other:?}"),
    }
}

#[test]
fn plaintext_mode_exposes_secrets_and_reimports() {
    let snapshot = decode(&fixture());
    let exported =
        serde_json::to_value(encode_deployment(&snapshot, SecretsMode::Plaintext).unwrap())
            .unwrap();
    let password = &exported["resources"][3]["inputs"]["password"];
    assert_eq!(password[SIG_KEY], "1b47061264138c4ac30d75fd1eb44270");
    assert_eq!(password["plaintext"], "\"hunter2\"");
    assert!(password.get("ciphertext").is_none());
    // A plaintext export needs no secrets manager to read back.
    let reimported = decode_deployment(serde_json::from_value(exported).unwrap(), None).unwrap();
    assert_eq!(reimported.resources, snapshot.resources);
}

#[test]
fn numbers_are_written_as_integers_when_exact() {
    let cases = [
        (PropertyValue::from(3i64), json!(3)),
        (PropertyValue::from(-0.0), json!(0)),
        (PropertyValue::from(2.5), json!(2.5)),
        (PropertyValue::from(1e300), json!(1e300)),
        (
            PropertyValue::from(9_007_199_254_740_992.0),
            json!(9_007_199_254_740_992i64),
        ),
    ];
    for (value, expected) in cases {
        let encoded = codec::encode_value(&value, SecretsMode::Plaintext).unwrap();
        assert_eq!(encoded, expected, "{value:?}");
    }
    let err =
        codec::encode_value(&PropertyValue::from(f64::NAN), SecretsMode::Plaintext).unwrap_err();
    assert!(
        err.to_string().contains("cannot be stored in JSON"),
        "{err}"
    );
}

#[test]
fn outputs_and_unknowns_encode_as_state_values() {
    let cases = [
        (PropertyValue::Computed, json!(UNKNOWN_SENTINEL)),
        (
            PropertyValue::Output(Box::default()),
            json!(UNKNOWN_SENTINEL),
        ),
        (
            PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new("v".into())),
                secret: false,
                dependencies: vec![],
            })),
            json!("v"),
        ),
        (
            PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new("v".into())),
                secret: true,
                dependencies: vec![],
            })),
            json!({SIG_KEY: codec::SECRET_SIG, "plaintext": "\"v\""}),
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(
            codec::encode_value(&value, SecretsMode::Plaintext).unwrap(),
            expected,
            "{value:?}"
        );
    }
}

#[test]
fn malformed_values_are_reported_with_resource_and_property_path() {
    let bad_values = [
        (
            json!({SIG_KEY: "nope"}),
            "inputs.bad: unknown value signature \"nope\"",
        ),
        (
            json!({"x": [0, {SIG_KEY: codec::SECRET_SIG}]}),
            "inputs.bad.x[1]: a secret needs a \"ciphertext\" or \"plaintext\" field",
        ),
        (
            json!({SIG_KEY: codec::SECRET_SIG, "ciphertext": "garbage"}),
            "inputs.bad: failed to decrypt",
        ),
        (
            json!({SIG_KEY: codec::SECRET_SIG, "plaintext": "{not json"}),
            "inputs.bad: the secret's contents are not valid JSON",
        ),
        (
            json!({SIG_KEY: codec::RESOURCE_REFERENCE_SIG, "urn": "nope"}),
            "inputs.bad: invalid URN \"nope\"",
        ),
        (
            json!({SIG_KEY: codec::ARCHIVE_SIG, "assets": {"a": "text"}}),
            "inputs.bad.a: an archive member must be an asset or an archive",
        ),
        (json!({SIG_KEY: 7}), "inputs.bad: the signature"),
    ];
    for (bad, expected) in bad_values {
        let mut deployment = fixture();
        deployment.resources[3]
            .inputs
            .insert("bad".into(), bad.clone());
        let err = decode_deployment(deployment, Some(&TestCrypter))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "resource urn:pulumi:dev::web::my:index:Site$aws:s3/bucket:Bucket::site-bucket: "
            ),
            "{err}"
        );
        assert!(err.contains(expected), "{bad}: {err}");
    }
}

#[test]
fn encrypted_secrets_need_a_secrets_manager() {
    let err = decode_deployment(fixture(), None).unwrap_err().to_string();
    assert!(
        err.contains("inputs.password: the value is encrypted but no secrets manager"),
        "{err}"
    );
}

#[test]
fn untyped_deployments_must_be_version_3() {
    let untyped = UntypedDeployment {
        version: 4,
        deployment: json!({}),
    };
    let err = codec::decode_untyped_deployment(untyped).unwrap_err();
    assert!(
        err.to_string().contains("unsupported deployment version 4"),
        "{err}"
    );
    let malformed = UntypedDeployment {
        version: 3,
        deployment: json!({"manifest": {"time": "t", "magic": "", "version": ""}, "resources": [{"urn": "bad"}]}),
    };
    let err = codec::decode_untyped_deployment(malformed).unwrap_err();
    assert!(err.to_string().contains("invalid URN \"bad\""), "{err}");
}

#[test]
fn the_fixture_passes_the_integrity_check() {
    verify_integrity(&decode(&fixture())).unwrap();
}

/// Each case edits the fixture's resource list and names the message it must produce.
#[test]
fn integrity_violations_are_reported_with_the_urns_involved() {
    type Edit = fn(&mut Vec<ResourceV3>);
    let cases: &[(&str, Edit, &[&str])] = &[
        (
            "parent after child",
            |rs| rs.swap(2, 3),
            &[
                "urn:pulumi:dev::web::my:index:Site$aws:s3/bucket:Bucket::site-bucket refers to parent urn:pulumi:dev::web::my:index:Site::site, which appears after it",
            ],
        ),
        (
            "missing dependency",
            |rs| {
                rs[3]
                    .dependencies
                    .push(Urn::parse("urn:pulumi:dev::web::a:b:C::ghost").unwrap())
            },
            &["refers to dependency urn:pulumi:dev::web::a:b:C::ghost, which is not in the state"],
        ),
        (
            "missing property dependency",
            |rs| {
                rs[3].property_dependencies.insert(
                    "x".into(),
                    vec![Urn::parse("urn:pulumi:dev::web::a:b:C::ghost").unwrap()],
                );
            },
            &["refers to property dependency urn:pulumi:dev::web::a:b:C::ghost"],
        ),
        (
            "provider after its resource",
            |rs| {
                let provider = rs.remove(1);
                rs.push(provider);
            },
            &[
                "refers to provider urn:pulumi:dev::web::pulumi:providers:aws::default_6_0_0, which appears after it",
            ],
        ),
        (
            "provider id mismatch",
            |rs| {
                rs[3].provider = Some(
                    ProviderReference::parse(
                        "urn:pulumi:dev::web::pulumi:providers:aws::default_6_0_0::other-id",
                    )
                    .unwrap(),
                )
            },
            &[
                "refers to provider urn:pulumi:dev::web::pulumi:providers:aws::default_6_0_0 with ID \"other-id\", but that provider's ID is \"5d7a1b2c-0000-4000-8000-000000000001\"",
            ],
        ),
        (
            "duplicate live urn",
            |rs| rs[4].delete = false,
            &[
                "urn:pulumi:dev::web::aws:s3/bucket:Bucket::old appears more than once without being marked for deletion",
            ],
        ),
        (
            "component with id",
            |rs| rs[2].id = Some("comp-1".into()),
            &["component urn:pulumi:dev::web::my:index:Site::site has an ID (\"comp-1\")"],
        ),
        (
            "provider not custom",
            |rs| rs[1].custom = false,
            &[
                "provider urn:pulumi:dev::web::pulumi:providers:aws::default_6_0_0 is not marked as a custom resource",
            ],
        ),
        (
            "deletedWith missing",
            |rs| rs[5].deleted_with = Some(Urn::parse("urn:pulumi:dev::web::a:b:C::gone").unwrap()),
            &["refers to deletedWith target urn:pulumi:dev::web::a:b:C::gone"],
        ),
        (
            "several at once",
            |rs| {
                rs[2].id = Some("x".into());
                rs[4].delete = false;
            },
            &["(2 problems)", "has an ID", "appears more than once"],
        ),
    ];
    for (name, edit, expected) in cases {
        let mut deployment = fixture();
        edit(&mut deployment.resources);
        let err = verify_integrity(&decode(&deployment))
            .unwrap_err()
            .to_string();
        for fragment in *expected {
            assert!(
                err.contains(fragment),
                "{name}: expected {fragment:?} in:\n{err}"
            );
        }
    }
}

#[test]
fn provider_references_split_at_the_last_separator() {
    let reference =
        ProviderReference::parse("urn:pulumi:dev::p::pulumi:providers:aws::default::abc-123")
            .unwrap();
    assert_eq!(reference.urn.name(), "default");
    assert_eq!(reference.id, "abc-123");
    assert_eq!(
        reference.to_string(),
        "urn:pulumi:dev::p::pulumi:providers:aws::default::abc-123"
    );
}

#[test]
fn provider_references_must_name_a_provider() {
    let cases = [
        ("no-separator", "expected \"<provider urn>::<provider id>\""),
        (
            "urn:pulumi:dev::p::aws:s3:Bucket::b::id",
            "is not a provider resource",
        ),
        ("bogus::id", "must start with \"urn:pulumi:\""),
    ];
    for (input, expected) in cases {
        let err = ProviderReference::parse(input).unwrap_err().to_string();
        assert!(err.contains(expected), "{input}: {err}");
    }
}

#[test]
fn magic_is_the_sha256_of_the_version() {
    let manifest = Manifest::new();
    assert_eq!(manifest.magic, Manifest::magic_for(&manifest.version));
    assert_eq!(
        Manifest::magic_for("v3.0.0"),
        hex::encode(Sha256::digest(b"v3.0.0"))
    );
    assert_eq!(Manifest::magic_for(""), "");
}

#[test]
fn ciphertexts_are_detected_anywhere_in_a_deployment() {
    let mut deployment = fixture();
    assert!(codec::contains_ciphertext(&deployment));
    let plaintext = encode_deployment(&decode(&deployment), SecretsMode::Plaintext).unwrap();
    assert!(!codec::contains_ciphertext(&plaintext));
    deployment.resources.clear();
    deployment.pending_operations[0].resource.outputs.insert(
        "s".into(),
        json!({"deep": [{SIG_KEY: codec::SECRET_SIG, "ciphertext": "x"}]}),
    );
    assert!(codec::contains_ciphertext(&deployment));
}

#[test]
fn sorting_puts_dependencies_first_and_keeps_valid_order() {
    let mut resources = fixture().resources;
    let valid: Vec<String> = resources.iter().map(|r| r.urn.to_string()).collect();
    integrity::sort_dependencies_first(&mut resources);
    let after: Vec<String> = resources.iter().map(|r| r.urn.to_string()).collect();
    assert_eq!(after, valid, "a valid order is kept as is");

    // Parent after child, provider after its resource: both repaired, the rest stays put.
    resources.swap(2, 3);
    let provider = resources.remove(1);
    resources.push(provider);
    integrity::sort_dependencies_first(&mut resources);
    let snapshot = Snapshot {
        resources: resources
            .iter()
            .map(|r| codec::decode_resource(r, Some(&TestCrypter)).unwrap())
            .collect(),
        ..decode(&fixture())
    };
    verify_integrity(&snapshot).unwrap();
    assert_eq!(resources[0].urn.name(), "web-dev", "the root stays first");
}

/// Found by fuzzing (`cairn-fuzz`, targets wit_value and state_value): values a provider can
/// return whose stored form read back as something that was stored differently, so saving a
/// snapshot twice wrote two different files.
#[test]
fn stored_values_read_back_as_what_was_stored() {
    use crate::asset::{Archive, Asset};
    use crate::state::codec::{decode_value, encode_value};
    use crate::urn::Urn;
    use crate::value::ResourceReference;

    let urn = Urn::parse("urn:pulumi:dev::p::a:b:C::n").unwrap();
    let cases = [
        (
            "an empty reference ID",
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn.clone(),
                id: Some(Box::new(PropertyValue::String(String::new()))),
                package_version: Some(String::new()),
            })),
        ),
        (
            "an empty asset hash",
            PropertyValue::Asset(Box::new(Asset {
                hash: Some(String::new()),
                source: AssetSource::Text("t".into()),
            })),
        ),
        (
            "an empty archive hash",
            PropertyValue::Archive(Box::new(Archive {
                hash: Some(String::new()),
                source: ArchiveSource::HashOnly,
            })),
        ),
        (
            "a secret in a secret",
            PropertyValue::secret(PropertyValue::secret(PropertyValue::from(1i64))),
        ),
        (
            // Found by the long run of wit_value.
            "a secret in a plain output in a secret",
            PropertyValue::secret(PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new(PropertyValue::secret(PropertyValue::from(2i64)))),
                secret: false,
                dependencies: vec![],
            }))),
        ),
        (
            "a secret output in a secret",
            PropertyValue::secret(PropertyValue::Output(Box::new(OutputValue {
                value: Some(Box::new(PropertyValue::from("x"))),
                secret: true,
                dependencies: vec![urn.clone()],
            }))),
        ),
    ];
    for (name, value) in cases {
        let stored = encode_value(&value, SecretsMode::Encrypt(&TestCrypter)).unwrap();
        let read = decode_value(&stored, Some(&TestCrypter)).unwrap();
        let stored_again = encode_value(&read, SecretsMode::Encrypt(&TestCrypter)).unwrap();
        assert_eq!(stored_again, stored, "{name}");
    }
    let once = encode_value(
        &PropertyValue::secret(PropertyValue::secret(PropertyValue::from(1i64))),
        SecretsMode::Plaintext,
    )
    .unwrap();
    assert_eq!(
        once,
        json!({SIG_KEY: super::codec::SECRET_SIG, "plaintext": "1"})
    );
}

/// The streamed reader decodes exactly what parsing into `DeploymentV3` and then decoding does,
/// as a bare deployment and as a stack file's latest deployment.
#[test]
fn the_streamed_reader_decodes_what_the_built_one_does() {
    let text = include_str!("testdata/deployment.json");
    let expected = decode(&fixture());
    assert!(!expected.pending_operations.is_empty() && !expected.extra.is_empty());
    let streamed = decode_deployment_json(text.as_bytes(), Some(&TestCrypter)).unwrap();
    assert_eq!(streamed, expected);

    let deployment: Value = serde_json::from_str(text).unwrap();
    let file = json!({
        "version": 3,
        "checkpoint": {"stack": "organization/web/dev", "config": {"a": 1}, "latest": deployment,
                       "future": [1, 2]},
        "later": true,
    });
    let read = decode_checkpoint_json(file.to_string().as_bytes(), Some(&TestCrypter)).unwrap();
    // A listing's summary counts the resources without keeping them (nor decrypting secrets).
    let summary = summarize_checkpoint_json(file.to_string().as_bytes())
        .unwrap()
        .unwrap();
    assert_eq!(summary.time, expected.manifest.time);
    assert_eq!(summary.resources, expected.resources.len());
    assert_eq!(
        summary.pending_operations.len(),
        expected.pending_operations.len()
    );
    assert_eq!(read, Some(expected));
    for empty in [
        json!({"version": 3, "checkpoint": {"stack": "s"}}),
        json!({"version": 3, "checkpoint": {"stack": "s", "latest": null}}),
    ] {
        let read = decode_checkpoint_json(empty.to_string().as_bytes(), None).unwrap();
        assert_eq!(read, None, "{empty}");
        let summary = summarize_checkpoint_json(empty.to_string().as_bytes()).unwrap();
        assert_eq!(summary, None, "{empty}");
    }
}

/// What the streamed reader refuses, and how it says so: the same typed errors as the built
/// path (a value that does not decode names its resource, section and property).
#[test]
fn the_streamed_reader_refuses_what_the_built_one_does() {
    let mut deployment: Value =
        serde_json::from_str(include_str!("testdata/deployment.json")).unwrap();
    deployment["resources"][3]["inputs"]["bad"] =
        json!({SIG_KEY: codec::SECRET_SIG, "ciphertext": "garbage"});
    let built = decode_deployment(
        serde_json::from_value(deployment.clone()).unwrap(),
        Some(&TestCrypter),
    )
    .unwrap_err();
    let streamed =
        decode_deployment_json(deployment.to_string().as_bytes(), Some(&TestCrypter)).unwrap_err();
    assert!(matches!(
        streamed,
        StateError::Resource {
            section: "inputs",
            ..
        }
    ));
    assert_eq!(streamed.to_string(), built.to_string());
    assert!(
        streamed
            .to_string()
            .starts_with("resource urn:pulumi:dev::web::my:index:Site$aws:s3/bucket:Bucket::site-bucket: inputs.bad: failed to decrypt"),
        "{streamed}"
    );

    let cases: Vec<(String, &str)> = vec![
        (r#"{"resources": []}"#.into(), "missing field `manifest`"),
        (
            r#"{"manifest": {"time": "t", "magic": "", "version": ""}, "resources": [], "resources": []}"#.into(),
            "duplicate field `resources`",
        ),
        (
            r#"{"manifest": {"time": "t", "magic": "", "version": ""}, "resources": null}"#.into(),
            "invalid type: null",
        ),
        (
            r#"{"manifest": {"time": "t", "magic": "", "version": ""}} trailing"#.into(),
            "trailing characters",
        ),
        (r#"[1]"#.into(), "expected a deployment object"),
    ];
    for (text, expected) in cases {
        let err = decode_deployment_json(text.as_bytes(), None).unwrap_err();
        assert!(matches!(err, StateError::Malformed(_)), "{text}: {err}");
        assert!(err.to_string().contains(expected), "{text}: {err}");
    }

    let files = [
        (
            json!({"version": 4, "checkpoint": {"stack": "s"}}),
            "unsupported deployment version 4",
        ),
        (
            json!({"checkpoint": {"stack": "s"}}),
            "missing field `version`",
        ),
        (
            json!({"version": 3, "checkpoint": {}}),
            "missing field `stack`",
        ),
        (json!({"version": 3}), "missing field `checkpoint`"),
    ];
    for (file, expected) in files {
        let err = decode_checkpoint_json(file.to_string().as_bytes(), None).unwrap_err();
        assert!(err.to_string().contains(expected), "{file}: {err}");
        let err = summarize_checkpoint_json(file.to_string().as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains(expected),
            "summary of {file}: {err}"
        );
    }
    for (text, expected) in [
        (
            r#"{"version": 3, "checkpoint": {"stack": "s"}, "checkpoint": {"stack": "s"}}"#,
            "duplicate field `checkpoint`",
        ),
        (
            r#"{"version": 3, "checkpoint": {"stack": "s", "latest": null, "latest": null}}"#,
            "duplicate field `latest`",
        ),
        (
            r#"{"version": 3, "checkpoint": {"stack": "s", "latest": {"resources": [1]}}}"#,
            "expected struct Resource",
        ),
    ] {
        let err = decode_checkpoint_json(text.as_bytes(), None).unwrap_err();
        assert!(err.to_string().contains(expected), "{text}: {err}");
        let err = summarize_checkpoint_json(text.as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains(expected),
            "summary of {text}: {err}"
        );
    }
}
