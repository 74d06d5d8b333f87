//! The provider's behaviour through its `Provider` methods: generation, previews, diffs,
//! updates, import IDs, and the manifest's schema against the code.

use super::*;
use cairn_sdk::{DiffChanges, manifest, secret};

fn urn(kind: Kind) -> String {
    format!("urn:pulumi:dev::proj::{}::r", kind.token())
}

fn check(kind: Kind, news: PropertyMap) -> CheckResult {
    Random
        .check(CheckRequest {
            urn: urn(kind),
            inputs: news.into(),
            ..CheckRequest::default()
        })
        .unwrap()
}

/// Checked inputs, which must pass.
fn checked(kind: Kind, news: PropertyMap) -> PropertyMap {
    let r = check(kind, news);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    r.inputs.into_map()
}

/// Creates from checked `news` with a repeatable source and a fixed clock.
fn create(kind: Kind, news: PropertyMap, seed: u64) -> CreateResult {
    Random
        .create_with(
            CreateRequest {
                urn: urn(kind),
                inputs: checked(kind, news).into(),
                ..CreateRequest::default()
            },
            &mut Seeded(seed),
            || Ok(1_700_000_000_000),
        )
        .unwrap()
}

fn import(kind: Kind, id: &str) -> Result<ReadResult> {
    Random.read(ReadRequest {
        urn: urn(kind),
        id: id.into(),
        ..ReadRequest::default()
    })
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}

#[test]
fn strings_follow_their_classes_and_minimums() {
    let created = create(
        Kind::String,
        props! {"length" => 12, "minNumeric" => 3, "special" => false},
        1,
    );
    let result = text(&created.outputs["result"]).to_owned();
    assert_eq!(result.chars().count(), 12);
    assert!(
        result.chars().all(|c| c.is_ascii_alphanumeric()),
        "{result}"
    );
    assert!(result.chars().filter(char::is_ascii_digit).count() >= 3);
    assert_eq!(created.id, result);
    assert!(!created.outputs["result"].is_secret());
    assert_eq!(created.outputs["numeric"], Value::Bool(true));
    assert_eq!(created.outputs["number"], Value::Bool(true));
    let only = create(
        Kind::String,
        props! {"length" => 30, "lower" => false, "upper" => false, "numeric" => false, "overrideSpecial" => "_%"},
        2,
    );
    assert!(
        text(&only.outputs["result"])
            .chars()
            .all(|c| c == '_' || c == '%')
    );
}

#[test]
fn passwords_are_secret_with_a_matching_bcrypt_hash() {
    let created = create(Kind::Password, props! {"length" => 20}, 2);
    assert_eq!(created.id, "none");
    let result = &created.outputs["result"];
    let hash = &created.outputs["bcryptHash"];
    assert!(result.is_secret() && hash.is_secret());
    assert_eq!(text(result).len(), 20);
    assert!(text(hash).starts_with("$2a$10$"), "{}", text(hash));
    assert!(bcrypt::verify(text(result), text(hash)).unwrap());
    // bcrypt reads 72 bytes: a longer password's hash is of its first 72.
    let mut src = Seeded(3);
    let long = "x".repeat(80);
    let hash = bcrypt_hash(&long, &mut src).unwrap();
    assert!(bcrypt::verify(&long[..72], &hash).unwrap());
}

#[test]
fn integers_and_their_seeds() {
    let created = create(Kind::Integer, props! {"min" => -3, "max" => 3}, 3);
    let n = created.outputs["result"].as_i64().unwrap();
    assert!((-3..=3).contains(&n));
    assert_eq!(created.id, n.to_string());
    // The same seed gives the same integer, whatever the system's randomness.
    let seeded: Vec<Value> = (0..4)
        .map(|s| {
            create(
                Kind::Integer,
                props! {"min" => 1, "max" => 1_000_000, "seed" => "fixed"},
                s,
            )
            .outputs["result"]
                .clone()
        })
        .collect();
    assert!(seeded.iter().all(|v| *v == seeded[0]), "{seeded:?}");
    assert_eq!(
        create(
            Kind::Integer,
            props! {"min" => 1, "max" => 1_000_000, "seed" => "fixed"},
            0
        )
        .outputs["seed"],
        Value::from("fixed")
    );
}

#[test]
fn shuffles_and_their_seeds() {
    let items = || ["a", "b", "c", "d", "e"].map(Value::from).to_vec();
    let created = create(Kind::Shuffle, props! {"inputs" => items()}, 4);
    assert_eq!(created.id, "-");
    let mut results = created.outputs["results"].as_array().unwrap().clone();
    results.sort_by(|a, b| text(a).cmp(text(b)));
    assert_eq!(results, items());
    let seven = create(
        Kind::Shuffle,
        props! {"inputs" => items(), "resultCount" => 7},
        4,
    );
    assert_eq!(seven.outputs["results"].as_array().unwrap().len(), 7);
    let seeded = |s| {
        create(
            Kind::Shuffle,
            props! {"inputs" => items(), "seed" => "order"},
            s,
        )
        .outputs["results"]
            .clone()
    };
    assert_eq!(seeded(1), seeded(2));
    let none = create(
        Kind::Shuffle,
        props! {"inputs" => items(), "resultCount" => 0},
        4,
    );
    assert_eq!(none.outputs["results"], Value::Array(vec![]));
}

#[test]
fn pets_are_their_ids() {
    let created = create(Kind::Pet, props! {"prefix" => "dev", "length" => 3}, 5);
    assert_eq!(created.id.split('-').count(), 4, "{}", created.id);
    assert!(created.id.starts_with("dev-"));
    assert!(!created.outputs.contains_key("result"));
    assert_eq!(created.outputs["separator"], Value::from("-"));
    let plain = create(Kind::Pet, props! {"separator" => "."}, 6);
    assert_eq!(plain.id.split('.').count(), 2, "{}", plain.id);
}

#[test]
fn bytes_and_ids_in_every_encoding() {
    let created = create(Kind::Bytes, props! {"length" => 32}, 7);
    let base64 = &created.outputs["base64"];
    let hex = &created.outputs["hex"];
    assert!(base64.is_secret() && hex.is_secret());
    let bytes = encode::from_b64_std(text(base64)).unwrap();
    assert_eq!(bytes.len(), 32);
    assert_eq!(text(hex), encode::hex(&bytes));
    assert_eq!(created.id, "none", "the secret is not the ID");

    let created = create(Kind::Id, props! {"byteLength" => 8, "prefix" => "p-"}, 8);
    let url = text(&created.outputs["b64Url"]);
    let bytes = encode::from_b64_url(&created.id).unwrap();
    assert_eq!(bytes.len(), 8);
    assert_eq!(url, format!("p-{}", created.id));
    assert_eq!(
        text(&created.outputs["b64Std"]),
        format!("p-{}", encode::b64_std(&bytes))
    );
    assert_eq!(
        text(&created.outputs["hex"]),
        format!("p-{}", encode::hex(&bytes))
    );
    let dec = u64::from_be_bytes(bytes.try_into().unwrap());
    assert_eq!(text(&created.outputs["dec"]), format!("p-{dec}"));
    assert!(!created.outputs["hex"].is_secret());
}

#[test]
fn uuids_of_each_version() {
    for (kind, version) in [(Kind::Uuid, '4'), (Kind::Uuid4, '4'), (Kind::Uuid7, '7')] {
        let created = create(kind, props! {}, 9);
        let uuid = text(&created.outputs["result"]);
        assert_eq!(
            encode::parse_uuid(uuid, encode::UuidForms::Canonical).as_deref(),
            Some(uuid)
        );
        assert_eq!(uuid.chars().nth(14), Some(version), "{uuid}");
        assert_eq!(created.id, uuid);
    }
    // A version 7 UUID starts with the creation time.
    let v7 = create(Kind::Uuid7, props! {}, 10);
    assert!(v7.id.starts_with("018bcfe5-6800-7"), "{}", v7.id);
}

#[test]
fn the_system_sources_work() {
    for kind in [Kind::Password, Kind::Uuid7] {
        let news = if kind == Kind::Password {
            props! {"length" => 32}
        } else {
            props! {}
        };
        let created = Random
            .create(CreateRequest {
                urn: urn(kind),
                inputs: checked(kind, news).into(),
                ..CreateRequest::default()
            })
            .unwrap();
        assert!(!created.id.is_empty());
    }
}

#[test]
fn previews_leave_the_computed_values_unknown() {
    for kind in Kind::ALL {
        let news = match kind {
            Kind::String | Kind::Password | Kind::Bytes => props! {"length" => 8},
            Kind::Integer => props! {"min" => 1, "max" => 2},
            Kind::Shuffle => props! {"inputs" => vec![Value::from("a")]},
            Kind::Id => props! {"byteLength" => 4},
            _ => props! {},
        };
        let inputs = checked(kind, news);
        let preview = Random
            .preview_create(CreateRequest {
                urn: urn(kind),
                inputs: inputs.clone().into(),
                ..CreateRequest::default()
            })
            .unwrap();
        assert!(preview.id.is_empty());
        for key in kind.computed() {
            assert!(preview.outputs[*key].is_unknown(), "{kind:?} {key}");
        }
        for (key, value) in &inputs {
            assert_eq!(&preview.outputs[key], value, "{kind:?} {key}");
        }
        // An update (and its preview) keeps the recorded values.
        let old = create(kind, inputs.clone(), 3);
        let updated = Random
            .preview_update(UpdateRequest {
                urn: urn(kind),
                id: old.id.clone(),
                old_inputs: inputs.clone().into(),
                old_outputs: old.outputs.clone(),
                inputs: inputs.into(),
                ..UpdateRequest::default()
            })
            .unwrap();
        assert_eq!(updated.outputs, old.outputs, "{kind:?}");
    }
}

#[test]
fn every_change_replaces_and_recorded_defaults_are_no_change() {
    let olds = checked(
        Kind::String,
        props! {"length" => 8, "keepers" => props!{"v" => "1"}},
    );
    let diff = |old_inputs: PropertyMap, news: PropertyMap| {
        Random
            .diff(DiffRequest {
                urn: urn(Kind::String),
                old_inputs: old_inputs.into(),
                inputs: checked(Kind::String, news).into(),
                ..DiffRequest::default()
            })
            .unwrap()
    };
    let same = diff(
        olds.clone(),
        props! {"length" => 8, "keepers" => props!{"v" => secret("1")}},
    );
    assert_eq!(same.changes, DiffChanges::None);
    let keepers = diff(
        olds.clone(),
        props! {"length" => 8, "keepers" => props!{"v" => "2"}},
    );
    assert_eq!(keepers.replace_keys, ["keepers"]);
    let length = diff(
        olds.clone(),
        props! {"length" => 9, "keepers" => props!{"v" => "1"}},
    );
    assert_eq!(length.replace_keys, ["length"]);
    // A number keeper is its text: no change.
    let number = diff(olds, props! {"length" => 8, "keepers" => props!{"v" => 1}});
    assert_eq!(number.changes, DiffChanges::None);
    // Inputs recorded as the program gave them (Pulumi's bridge records no defaults).
    let bare = diff(props! {"length" => 8}, props! {"length" => 8});
    assert_eq!(bare.changes, DiffChanges::None);
    let bare = diff(
        props! {"length" => 8, "number" => false},
        props! {"length" => 8, "numeric" => false},
    );
    assert_eq!(bare.changes, DiffChanges::None);
}

#[test]
fn refresh_returns_the_recorded_state() {
    let state = props! {"length" => 2, "result" => "ab"};
    let read = Random
        .read(ReadRequest {
            urn: urn(Kind::String),
            id: "ab".into(),
            old_inputs: props! {"length" => 2}.into(),
            old_outputs: state.clone().into(),
        })
        .unwrap();
    assert_eq!(read.outputs, state);
    assert_eq!(read.id, "ab");
}

/// Good import IDs: the resource ID, the inputs, and the computed outputs expected.
#[test]
fn imports_by_documented_ids() {
    let cases: Vec<(Kind, &str, &str, PropertyMap, PropertyMap)> = vec![
        (
            Kind::String,
            "aB3$x",
            "aB3$x",
            props! {"length" => 5},
            props! {"result" => "aB3$x"},
        ),
        (
            Kind::Integer,
            "4,1,9",
            "4",
            props! {"min" => 1, "max" => 9},
            props! {"result" => 4},
        ),
        (
            Kind::Integer,
            "-2,-5,5,lucky",
            "-2",
            props! {"min" => -5, "max" => 5, "seed" => "lucky"},
            props! {"result" => -2},
        ),
        (
            Kind::Id,
            "-_8B",
            "-_8B",
            props! {"byteLength" => 3},
            props! {"b64Std" => "+/8B", "b64Url" => "-_8B", "hex" => "fbff01", "dec" => "16514817"},
        ),
        (
            Kind::Id,
            "my,prefix-,AQ",
            "AQ",
            props! {"byteLength" => 1, "prefix" => "my,prefix-"},
            props! {"b64Std" => "my,prefix-AQ==", "b64Url" => "my,prefix-AQ", "hex" => "my,prefix-01", "dec" => "my,prefix-1"},
        ),
        (
            Kind::Bytes,
            "+/8B",
            "none",
            props! {"length" => 3},
            props! {"base64" => secret("+/8B"), "hex" => secret("fbff01")},
        ),
        (
            Kind::Uuid,
            "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            props! {},
            props! {"result" => "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
        ),
        (
            Kind::Uuid4,
            "{6ba7b8109dad11d180b400c04fd430c8}",
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            props! {},
            props! {"result" => "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
        ),
        (
            Kind::Uuid7,
            "urn:uuid:0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            props! {},
            props! {"result" => "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
        ),
    ];
    for (kind, id, resource_id, inputs, computed) in cases {
        let read = import(kind, id).unwrap_or_else(|e| panic!("{kind:?} {id}: {e}"));
        assert_eq!(read.id, resource_id, "{kind:?} {id}");
        // The inputs are what a program declaring them would have after check, so the
        // import resource option's comparison passes.
        assert_eq!(*read.inputs, checked(kind, inputs.clone()), "{kind:?} {id}");
        let expected = outputs(checked(kind, inputs), computed);
        assert_eq!(*read.outputs, expected, "{kind:?} {id}");
    }
    let password = import(Kind::Password, "s3cret!").unwrap();
    assert_eq!(password.id, "none");
    assert_eq!(password.outputs["result"], secret("s3cret!"));
    assert!(bcrypt::verify("s3cret!", text(&password.outputs["bcryptHash"])).unwrap());
    assert!(password.outputs["bcryptHash"].is_secret());
}

/// Bad import IDs: the error names the resource, the ID and the expected format.
#[test]
fn bad_import_ids_say_what_is_expected() {
    for (kind, id, expected) in [
        (
            Kind::Integer,
            "4,1",
            "cannot import RandomInteger with ID \"4,1\": expected result,min,max or result,min,max,seed",
        ),
        (
            Kind::Integer,
            "x,1,9",
            "cannot import RandomInteger with ID \"x,1,9\": the result \"x\" is not an integer",
        ),
        (
            Kind::Integer,
            "12,1,9",
            "cannot import RandomInteger with ID \"12,1,9\": 12 is not between 1 and 9",
        ),
        (
            Kind::String,
            "",
            "cannot import RandomString with ID \"\": the ID is the value itself, of 1 to 65536 characters",
        ),
        (
            Kind::Id,
            "p,AQ==",
            "cannot import RandomId with ID \"p,AQ==\": expected the unpadded URL-safe base64 of the bytes, optionally after `prefix,`",
        ),
        (
            Kind::Bytes,
            "-_8B",
            "cannot import RandomBytes with ID \"-_8B\": expected the standard base64 (padded) of the bytes",
        ),
        (
            Kind::Uuid,
            "6ba7b8109dad11d180b400c04fd430c8",
            "cannot import RandomUuid with ID \"6ba7b8109dad11d180b400c04fd430c8\": expected a UUID of 8-4-4-4-12 hex digits",
        ),
        (
            Kind::Uuid4,
            "nope",
            "cannot import RandomUuid4 with ID \"nope\": expected a UUID",
        ),
        (
            Kind::Pet,
            "brave-ant",
            "cannot import RandomPet with ID \"brave-ant\": this resource type cannot be imported",
        ),
        (
            Kind::Shuffle,
            "-",
            "cannot import RandomShuffle with ID \"-\": this resource type cannot be imported",
        ),
    ] {
        let err = import(kind, id).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
}

#[test]
fn unknown_types_are_errors_naming_the_known_ones() {
    let err = Random
        .check(CheckRequest {
            urn: "urn:pulumi:dev::proj::random:index:RandomString::r".into(),
            ..CheckRequest::default()
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "unknown resource type \"random:index:RandomString\": the random package has random:index/randomBytes:RandomBytes, "
        ),
        "{err}"
    );
}

/// The schema in the manifest describes what the code does: the same resources, every
/// input the code reads, every computed output, and the secrets.
#[test]
fn the_manifest_schema_matches_the_code() {
    let m = manifest::validate_source(include_bytes!("../cairn.json"), env!("CARGO_PKG_VERSION"))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(m.version, "4.21.4");
    let schema = m.schema.unwrap();
    let resources = schema["resources"].as_object().unwrap();
    assert_eq!(resources.len(), Kind::ALL.len());
    for kind in Kind::ALL {
        let resource = &resources[kind.token()];
        let properties = resource["properties"].as_object().unwrap();
        let required: Vec<&str> = resource["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for key in kind.computed() {
            assert!(properties.contains_key(*key), "{kind:?} {key}");
            assert!(required.contains(key), "{kind:?} {key} is always set");
        }
        // Secret outputs are exactly the ones the code wraps as secrets.
        let secrets: Vec<&str> = properties
            .iter()
            .filter(|(_, p)| p["secret"] == true)
            .map(|(k, _)| k.as_str())
            .collect();
        let expected: &[&str] = match kind {
            Kind::Password => &["bcryptHash", "result"],
            Kind::Bytes => &["base64", "hex"],
            _ => &[],
        };
        let mut secrets = secrets;
        secrets.sort();
        assert_eq!(secrets, expected, "{kind:?}");
        // Every input is an output too (outputs are the checked inputs plus the computed).
        for input in resource["inputProperties"].as_object().unwrap().keys() {
            assert!(properties.contains_key(input), "{kind:?} {input}");
        }
    }
}
