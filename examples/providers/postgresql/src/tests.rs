//! The provider through its `Provider` methods (no server: `check`, `diff`, previews and
//! refusals never connect), and the manifest's schema against the code.

use super::*;
use cairn_sdk::{DiffChanges, PropertyMapExt, manifest, props};
use resources::REFUSED;

fn urn(token: &str) -> String {
    format!("urn:pulumi:dev::proj::{token}::r")
}

fn provider() -> Postgresql {
    let mut p = Postgresql::default();
    // Nothing listens on port 9 of 127.0.0.9: a connection attempt would fail.
    p.configure(
        props! {"host" => "127.0.0.9", "port" => 9, "sslmode" => "disable"},
        true,
    )
    .unwrap();
    p
}

fn check(token: &str, inputs: PropertyMap) -> Result<CheckResult> {
    provider().check(CheckRequest {
        urn: urn(token),
        inputs: inputs.into(),
        random_seed: b"seed".to_vec(),
        ..CheckRequest::default()
    })
}

#[test]
fn names_are_generated_as_the_published_package_does() {
    for kind in Kind::ALL {
        let r = check(kind.token(), PropertyMap::new()).unwrap();
        let name = r.inputs.get_str("name");
        if kind.auto_named() {
            let name = name.unwrap();
            assert!(name.starts_with("r-") && name.len() == 9, "{name}");
        } else {
            assert_eq!(name, None, "{kind:?}");
        }
    }
    // A recorded name is kept across updates.
    let r = provider()
        .check(CheckRequest {
            urn: urn(Kind::Role.token()),
            old_inputs: props! {"name" => "r-0123456"}.into(),
            ..CheckRequest::default()
        })
        .unwrap();
    assert_eq!(r.inputs.get_str("name"), Some("r-0123456"));
}

#[test]
fn role_defaults_and_secrets() {
    let r = check(
        Kind::Role.token(),
        props! {"name" => "myrole2", "login" => true, "password" => "mypass"},
    )
    .unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let inputs = r.inputs.into_map();
    assert_eq!(inputs["inherit"], Value::Bool(true));
    assert_eq!(inputs["connectionLimit"], Value::from(-1));
    assert_eq!(inputs["validUntil"], Value::from("infinity"));
    assert_eq!(inputs["encryptedPassword"], Value::Bool(true));
    assert!(inputs["password"].is_secret());
    assert!(!inputs.contains_key("statementTimeout"));
}

#[test]
fn refused_resources_name_their_token() {
    for token in REFUSED {
        let expected =
            format!("{token} is not supported by this provider (Cairn's sandboxed postgresql)");
        assert_eq!(
            check(token, PropertyMap::new()).unwrap_err().to_string(),
            expected
        );
        let created = provider().create(CreateRequest {
            urn: urn(token),
            ..CreateRequest::default()
        });
        assert_eq!(created.unwrap_err().to_string(), expected);
    }
    let unknown = check("postgresql:index:Role", PropertyMap::new()).unwrap_err();
    assert!(
        unknown
            .to_string()
            .starts_with("unknown resource type \"postgresql:index:Role\": the postgresql package has postgresql:index/role:Role, "),
        "{unknown}"
    );
}

#[test]
fn replacements_follow_terraform() {
    let diff = |token: &str, olds: PropertyMap, news: PropertyMap| {
        provider()
            .diff(DiffRequest {
                urn: urn(token),
                old_inputs: olds.clone().into(),
                old_outputs: olds.into(),
                inputs: news.into(),
                ..DiffRequest::default()
            })
            .unwrap()
    };
    let grant = props! {
        "role" => "r", "database" => "d", "schema" => "s", "objectType" => "table",
        "privileges" => props::string_array(&["SELECT"]), "withGrantOption" => false,
        "objects" => props::string_array(&[] as &[&str]), "columns" => props::string_array(&[] as &[&str]),
    };
    let mut more = grant.clone();
    more.insert(
        "privileges".into(),
        props::string_array(&["SELECT", "INSERT"]),
    );
    let d = diff(Kind::Grant.token(), grant.clone(), more);
    assert_eq!(
        (d.changed_keys.as_slice(), d.replace_keys.len()),
        (["privileges".to_owned()].as_slice(), 0)
    );
    let mut other_schema = grant.clone();
    other_schema.insert("schema".into(), "t".into());
    let d = diff(Kind::Grant.token(), grant, other_schema);
    assert_eq!(d.replace_keys, ["schema"]);
    assert!(
        d.delete_before_replace,
        "a Grant is deleted before it is replaced"
    );

    let role = props::with_defaults(
        Kind::Role.props(),
        &props! {"name" => "a", "login" => false},
    );
    let renamed = check(Kind::Role.token(), props! {"name" => "b", "login" => true})
        .unwrap()
        .inputs
        .into_map();
    let d = diff(Kind::Role.token(), role, renamed);
    assert_eq!(d.changed_keys, ["login", "name"]);
    assert!(d.replace_keys.is_empty() && !d.delete_before_replace);

    let db = props! {"name" => "d", "owner" => "postgres", "encoding" => "UTF8", "template" => "template0"};
    let d = diff(Kind::Database.token(), db.clone(), props! {"name" => "d"});
    assert_eq!(
        d.changes,
        DiffChanges::None,
        "computed values left out are no change"
    );
    let d = diff(
        Kind::Database.token(),
        db,
        props! {"name" => "d", "encoding" => "LATIN1"},
    );
    assert_eq!(d.replace_keys, ["encoding"]);

    let d = diff(
        Kind::GrantRole.token(),
        props! {"role" => "a", "grantRole" => "b", "withAdminOption" => false},
        props! {"role" => "a", "grantRole" => "b", "withAdminOption" => true},
    );
    assert_eq!(d.replace_keys, ["withAdminOption"]);
    let extension = props! {"name" => "e", "database" => "d", "schema" => "public"};
    let d = diff(
        Kind::Extension.token(),
        props::with_defaults(Kind::Extension.props(), &extension),
        props! {"name" => "e", "schema" => "other"},
    );
    assert_eq!(
        (d.changed_keys, d.replace_keys),
        (vec!["schema".to_owned()], vec![])
    );
    // An imported state lacks what the server does not know: when something else differs,
    // those defaulted properties are named too, as the published package names them.
    let d = diff(
        Kind::Extension.token(),
        extension,
        props! {"name" => "e", "schema" => "other"},
    );
    assert_eq!(d.changed_keys, ["createCascade", "dropCascade", "schema"]);
    assert!(d.replace_keys.is_empty());
}

#[test]
fn previews_never_connect() {
    let p = provider();
    let created = p
        .preview_create(CreateRequest {
            urn: urn(Kind::Database.token()),
            inputs: props! {"name" => "d", "connectionLimit" => -1}.into(),
            ..CreateRequest::default()
        })
        .unwrap();
    assert_eq!(created.outputs["owner"], Value::Unknown);
    assert_eq!(created.outputs["name"], Value::from("d"));
    let created = p
        .preview_create(CreateRequest {
            urn: urn(Kind::Role.token()),
            inputs: props! {"name" => "r", "password" => "pw"}.into(),
            ..CreateRequest::default()
        })
        .unwrap();
    assert!(created.outputs["password"].is_secret());
    let created = p
        .preview_create(CreateRequest {
            urn: urn(Kind::Schema.token()),
            inputs: props! {"name" => "s"}.into(),
            ..CreateRequest::default()
        })
        .unwrap();
    assert_eq!(created.outputs["database"], Value::from("postgres"));
    let updated = p
        .preview_update(UpdateRequest {
            urn: urn(Kind::Extension.token()),
            old_outputs: props! {"name" => "e", "version" => "1.0", "schema" => "public"}.into(),
            inputs: props! {"name" => "e", "schema" => "other"}.into(),
            ..UpdateRequest::default()
        })
        .unwrap();
    assert_eq!(
        updated.outputs,
        props! {"name" => "e", "schema" => "other", "version" => "1.0", "database" => Value::Unknown}
    );
}

#[test]
fn imports_only_what_terraform_imports() {
    for kind in [Kind::Grant, Kind::GrantRole, Kind::DefaultPrivileges] {
        let err = provider()
            .read(ReadRequest {
                urn: urn(kind.token()),
                id: "x".into(),
                ..ReadRequest::default()
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot import {} \"x\": the Terraform provider it follows has no import for it",
                kind.token()
            )
        );
    }
}

#[test]
fn configuration_failures_name_their_keys() {
    let r = provider()
        .check_config(CheckRequest {
            inputs: props! {"port" => "x", "awsRdsIamAuth" => "true"}.into(),
            ..CheckRequest::default()
        })
        .unwrap();
    let failures: Vec<String> = r.failures.iter().map(ToString::to_string).collect();
    assert_eq!(
        failures,
        [
            "port: expected an integer, found String(\"x\")",
            "awsRdsIamAuth: is not supported by this provider: it needs cloud credentials outside the sandbox",
        ]
    );
    let mut p = Postgresql::default();
    assert!(p.configure(props! {"sslmode" => "bogus"}, false).is_err());
}

/// The schema in the manifest is the published one's shape and matches the code: every
/// resource token, the refused ones, each input property with its type, secrets and
/// replacement marks.
#[test]
fn the_manifest_schema_matches_the_code() {
    let m = manifest::validate_source(include_bytes!("../cairn.json"), env!("CARGO_PKG_VERSION"))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(
        (m.name.as_str(), m.version.as_str()),
        ("postgresql", "3.18.2")
    );
    assert_eq!(m.capabilities.tcp, ["*:*"]);
    let schema = m.schema.unwrap();
    let resources = schema["resources"].as_object().unwrap();
    assert_eq!(resources.len(), Kind::ALL.len() + REFUSED.len());
    for token in REFUSED {
        assert!(resources.contains_key(token), "{token}");
    }
    for kind in Kind::ALL {
        let resource = &resources[kind.token()];
        let inputs = resource["inputProperties"].as_object().unwrap();
        let table = kind.props();
        assert_eq!(
            inputs.len(),
            table.len(),
            "{kind:?}: every input property has a row"
        );
        for p in table {
            let spec = &inputs[p.name];
            let ty = spec["type"].as_str().unwrap_or_default();
            let expected = match p.ty {
                props::Ty::Str => "string",
                props::Ty::Int => "integer",
                props::Ty::Bool => "boolean",
                props::Ty::StrSet | props::Ty::StrList | props::Ty::Policies => "array",
            };
            assert_eq!(ty, expected, "{kind:?}.{}", p.name);
            assert_eq!(
                spec["secret"] == true,
                p.has(props::SECRET),
                "{kind:?}.{} secret",
                p.name
            );
            assert_eq!(
                spec["willReplaceOnChanges"] == true,
                p.has(props::REPLACE),
                "{kind:?}.{} replaces",
                p.name
            );
            assert!(
                spec["description"].is_string(),
                "{kind:?}.{} is described",
                p.name
            );
        }
        let required: Vec<&str> = resource["requiredInputs"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let ours: Vec<&str> = table
            .iter()
            .filter(|p| p.has(props::REQUIRED))
            .map(|p| p.name)
            .collect();
        let mut required = required;
        required.sort_unstable();
        let mut ours = ours;
        ours.sort_unstable();
        assert_eq!(required, ours, "{kind:?} required inputs");
        // Auto-named resources have an optional name.
        assert_eq!(
            kind.auto_named(),
            inputs.contains_key("name") && !required.contains(&"name"),
            "{kind:?}"
        );
    }
    for token in [
        functions::GET_SCHEMAS,
        functions::GET_TABLES,
        functions::GET_SEQUENCES,
    ] {
        assert!(schema["functions"].get(token).is_some(), "{token}");
    }
    let config = schema["config"]["variables"].as_object().unwrap();
    for key in [
        "host",
        "port",
        "username",
        "password",
        "database",
        "sslmode",
        "sslMode",
        "sslrootcert",
        "superuser",
        "connectTimeout",
        "expectedVersion",
        "scheme",
        "clientcert",
        "maxConnections",
        "databaseUsername",
    ] {
        assert!(config.contains_key(key), "{key}");
    }
    assert_eq!(config["password"]["secret"], true);
}

#[test]
fn a_resource_named_by_the_program_is_deleted_before_it_is_replaced() {
    let checked = |inputs: PropertyMap| {
        check(Kind::Database.token(), inputs)
            .unwrap()
            .inputs
            .into_map()
    };
    let named = checked(props! {"name" => "d", "encoding" => "LATIN1"});
    // What check filled in, sorted: the defaults that are not zero values, and the name.
    let defaults = |keys: &[&str]| props::string_array(keys);
    assert_eq!(
        named["__defaults"],
        defaults(&["allowConnections", "connectionLimit"])
    );
    assert!(
        !named.contains_key("alterObjectOwnership"),
        "false is left out"
    );
    let auto = checked(props! {"encoding" => "LATIN1"});
    assert_eq!(
        auto["__defaults"],
        defaults(&["allowConnections", "connectionLimit", "name"])
    );
    let olds = props::with_defaults(
        Kind::Database.props(),
        &props! {"name" => auto["name"].clone(), "encoding" => "UTF8"},
    );
    let diff = |news: PropertyMap| {
        provider()
            .diff(DiffRequest {
                urn: urn(Kind::Database.token()),
                old_inputs: olds.clone().into(),
                old_outputs: olds.clone().into(),
                inputs: news.into(),
                ..DiffRequest::default()
            })
            .unwrap()
    };
    let mut named = named;
    named.insert("name".into(), auto["name"].clone());
    let d = diff(named);
    assert_eq!(d.replace_keys, ["encoding"]);
    assert!(d.delete_before_replace, "the same name cannot exist twice");
    let d = diff(auto);
    assert_eq!(d.replace_keys, ["encoding"]);
    assert!(!d.delete_before_replace, "an auto-name is new each time");
}

#[test]
fn outputs_have_every_property_and_the_id() {
    let out = resources::complete(Kind::Role, "r", props! {"name" => "r", "login" => true});
    let keys: Vec<&str> = out.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), Kind::Role.props().len() + 1);
    assert_eq!(out["id"], Value::from("r"));
    assert_eq!(out["password"], Value::secret(Value::Null));
    assert_eq!(out["passwordWo"], Value::secret(Value::Null));
    assert_eq!(out["encrypted"], Value::Null);
    assert_eq!(out["login"], Value::Bool(true));
}

#[test]
fn schema_policies_are_kept_as_given() {
    let policy = props! {"role" => "r", "usage" => true};
    let checked = check(
        Kind::Schema.token(),
        props! {"name" => "s", "policies" => vec![Value::from(policy.clone())]},
    )
    .unwrap()
    .inputs
    .into_map();
    let mut marked = policy.clone();
    marked.insert("__defaults".into(), Value::Array(vec![]));
    assert_eq!(checked["policies"], Value::Array(vec![Value::from(marked)]));
    // A refresh keeps them as given (the server does not say), without the marks.
    let outputs = props! {"name" => "s", "owner" => "o", "policies" => vec![Value::from(props! {
        "create" => false, "createWithGrant" => false, "role" => "r", "usage" => true,
        "usageWithGrant" => false,
    })]};
    let inputs = props::inputs_after_read(Kind::Schema.props(), &checked, &outputs);
    assert_eq!(inputs["policies"], Value::Array(vec![Value::from(policy)]));
}
