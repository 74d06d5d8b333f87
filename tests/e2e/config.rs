//! `cairn config`: plain, secret and structured values in `Pulumi.<stack>.yaml`.

use serde_json::Value;

use crate::support::{Sandbox, assert_contains};

fn stack(name: &str) -> Sandbox {
    let sandbox = Sandbox::new(name);
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

#[test]
fn plain_and_secret_values() {
    let sandbox = stack("web");
    sandbox.ok(&["config", "set", "name", "bob"]);
    sandbox.ok(&["config", "set", "aws:region", "us-west-2"]);
    sandbox.ok(&["config", "set", "--secret", "password", "hunter2"]);

    assert_eq!(sandbox.ok(&["config", "get", "name"]), "bob\n");
    assert_eq!(sandbox.ok(&["config", "get", "web:name"]), "bob\n");
    assert_eq!(sandbox.ok(&["config", "get", "aws:region"]), "us-west-2\n");
    assert_eq!(sandbox.ok(&["config", "get", "password"]), "hunter2\n");

    let file = sandbox.read("Pulumi.dev.yaml");
    assert!(
        !file.contains("hunter2"),
        "plaintext secret in the stack file:\n{file}"
    );
    assert_contains(
        &file,
        &[
            "web:password:\n    secure: v1:",
            "web:name: bob",
            "aws:region: us-west-2",
        ],
    );

    let listing = sandbox.ok(&["config"]);
    assert_contains(
        &listing,
        &["KEY", "name", "bob", "password", "[secret]", "aws:region"],
    );
    assert!(!listing.contains("hunter2"));
    assert_contains(
        &sandbox.ok(&["config", "ls", "--show-secrets"]),
        &["hunter2"],
    );

    let json: Value = serde_json::from_str(&sandbox.ok(&["config", "--json"])).unwrap();
    assert_eq!(json["web:name"]["value"], "bob");
    assert_eq!(json["web:name"]["secret"], false);
    assert_eq!(json["web:password"]["secret"], true);
    assert!(json["web:password"].get("value").is_none());
    let get: Value =
        serde_json::from_str(&sandbox.ok(&["config", "get", "password", "--json"])).unwrap();
    assert_eq!(get, serde_json::json!({"value": "hunter2", "secret": true}));

    sandbox.ok(&["config", "rm", "name"]);
    sandbox.ok(&["config", "rm", "name"]);
    assert_contains(
        &sandbox.fails(&["config", "get", "name"]),
        &["configuration key \"name\" is not set for stack \"dev\""],
    );
}

#[test]
fn set_all_and_rm_all_change_several_values_at_once() {
    let sandbox = stack("web");
    sandbox.ok(&[
        "config",
        "set-all",
        "--plaintext",
        "name=bob",
        "--plaintext",
        "aws:region=us-west-2",
        "--secret",
        "password=hunter2=x",
    ]);
    assert_eq!(sandbox.ok(&["config", "get", "name"]), "bob\n");
    assert_eq!(sandbox.ok(&["config", "get", "aws:region"]), "us-west-2\n");
    assert_eq!(sandbox.ok(&["config", "get", "password"]), "hunter2=x\n");
    assert!(!sandbox.read("Pulumi.dev.yaml").contains("hunter2"));

    sandbox.ok(&[
        "config",
        "set-all",
        "--path",
        "--plaintext",
        "data.ports[0]=80",
    ]);
    assert_eq!(
        sandbox.ok(&["config", "get", "--path", "data.ports[0]"]),
        "80\n"
    );

    let before = sandbox.read("Pulumi.dev.yaml");
    let err = sandbox.fails(&[
        "config",
        "set-all",
        "--plaintext",
        "other=1",
        "--plaintext",
        "broken",
    ]);
    assert_contains(&err, &["--plaintext \"broken\": expected KEY=VALUE"]);
    assert_eq!(sandbox.read("Pulumi.dev.yaml"), before, "nothing written");
    let err = sandbox.fails(&["config", "set-all", "--secret", "hunter2-alone"]);
    assert_contains(
        &err,
        &["--secret: expected KEY=VALUE (the argument is not shown)"],
    );
    assert!(!err.contains("hunter2-alone"), "a secret echoed: {err}");

    sandbox.ok(&["config", "rm-all", "name", "password"]);
    sandbox.ok(&["config", "rm-all", "--path", "data.ports[0]"]);
    let listing: Value = serde_json::from_str(&sandbox.ok(&["config", "--json"])).unwrap();
    let keys: Vec<&String> = listing.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["aws:region", "web:data"], "{listing}");
}

/// `config set-all --json` takes what `config --json --show-secrets` prints (plain, secret and
/// structured values; keys without a namespace are the project's), so a listing copies to
/// another stack; a bad entry is refused, naming its key, and nothing is written.
#[test]
fn set_all_json_sets_what_the_json_listing_prints() {
    let sandbox = stack("web");
    sandbox.ok(&[
        "config",
        "set-all",
        "--json",
        r#"{"name": {"value": "bob", "secret": false},
            "aws:region": {"value": "us-west-2"},
            "password": {"value": "hunter2", "secret": true},
            "data": {"value": "{\"ports\":[80,443]}", "objectValue": {"ports": [80, 443]}, "secret": false}}"#,
    ]);
    assert_eq!(sandbox.ok(&["config", "get", "name"]), "bob\n");
    assert_eq!(sandbox.ok(&["config", "get", "aws:region"]), "us-west-2\n");
    assert_eq!(sandbox.ok(&["config", "get", "password"]), "hunter2\n");
    assert_eq!(
        sandbox.ok(&["config", "get", "--path", "data.ports[1]"]),
        "443\n"
    );
    assert!(!sandbox.read("Pulumi.dev.yaml").contains("hunter2"));

    // The listing of one stack sets another to the same values.
    let listing = sandbox.ok(&["config", "--json", "--show-secrets"]);
    sandbox.ok(&["stack", "init", "copy"]);
    sandbox.ok(&["config", "set-all", "--stack", "copy", "--json", &listing]);
    assert_eq!(
        sandbox.ok(&["config", "--json", "--show-secrets", "--stack", "copy"]),
        listing
    );

    let before = sandbox.read("Pulumi.dev.yaml");
    let cases = [
        (
            r#"{"ok": {"value": "1"}, "password": {"secret": true}}"#,
            "--json key \"password\" has no value (a secret listed without --show-secrets has none)",
        ),
        (
            r#"{"count": {"value": 3}}"#,
            "--json key \"count\": \"value\" must be a string",
        ),
        (
            r#"{"a:b:c": {"value": "x"}}"#,
            "--json: invalid key \"a:b:c\"",
        ),
        (
            r#"{"data": {"value": "not json", "objectValue": {}}}"#,
            "--json key \"data\": \"value\" is not the JSON text of a structured value",
        ),
        (
            r#"["name"]"#,
            "--json: expected a JSON object of `KEY: {\"value\": TEXT, \"secret\": BOOL}`",
        ),
    ];
    for (json, expected) in cases {
        let err = sandbox.fails(&["config", "set-all", "--json", json]);
        assert_contains(&err, &[expected]);
        assert_eq!(
            sandbox.read("Pulumi.dev.yaml"),
            before,
            "{json}: nothing written"
        );
    }
    let err = sandbox.fails(&["config", "set-all", "--json", "{}", "--plaintext", "a=b"]);
    assert_contains(&err, &["--json", "cannot be used with"]);
}

#[test]
fn structured_values_by_path() {
    let sandbox = stack("web");
    sandbox.ok(&["config", "set", "--path", "data.ports[0]", "8080"]);
    sandbox.ok(&["config", "set", "--path", "data.ports[1]", "8443"]);
    sandbox.ok(&["config", "set", "--path", "data.public", "true"]);
    sandbox.ok(&["config", "set", "--path", "data.owner.name", "ops team"]);
    sandbox.ok(&[
        "config",
        "set",
        "--path",
        "--secret",
        "data.token",
        "tok-123",
    ]);

    let file = sandbox.read("Pulumi.dev.yaml");
    assert_contains(
        &file,
        &[
            "web:data:\n",
            "ports:\n      - 8080\n      - 8443",
            "public: true",
            "token:\n      secure: v1:",
        ],
    );
    assert!(!file.contains("tok-123"));

    assert_eq!(
        sandbox.ok(&["config", "get", "--path", "data.ports[1]"]),
        "8443\n"
    );
    assert_eq!(
        sandbox.ok(&["config", "get", "--path", "data.token"]),
        "tok-123\n"
    );
    let data: Value = serde_json::from_str(&sandbox.ok(&["config", "get", "data"])).unwrap();
    assert_eq!(data["ports"], serde_json::json!([8080, 8443]));
    assert_eq!(data["public"], true);
    assert_eq!(data["owner"]["name"], "ops team");
    assert_eq!(data["token"], "tok-123");

    sandbox.ok(&["config", "rm", "--path", "data.owner"]);
    let data: Value = serde_json::from_str(&sandbox.ok(&["config", "get", "data"])).unwrap();
    assert!(data.get("owner").is_none(), "{data}");
    assert_contains(
        &sandbox.fails(&["config", "set", "--path", "data.ports[5]", "1"]),
        &["config key \"web:data\": path \"ports[5]\"", "out of range"],
    );
}

#[test]
fn values_from_standard_input() {
    let sandbox = stack("web");
    let mut child = sandbox
        .command(&["config", "set", "--secret", "cert"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"-----BEGIN-----\nline two\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        sandbox.ok(&["config", "get", "cert"]),
        "-----BEGIN-----\nline two\n"
    );
}

#[test]
fn secrets_need_the_right_passphrase() {
    let mut sandbox = stack("web");
    sandbox.ok(&["config", "set", "--secret", "password", "hunter2"]);
    sandbox.ok(&["config", "set", "plain", "visible"]);

    sandbox.passphrase = Some("wrong".into());
    assert_contains(
        &sandbox.fails(&["config", "get", "password"]),
        &["incorrect passphrase"],
    );
    // Plain values and the listing (secrets hidden) need no passphrase at all.
    sandbox.passphrase = None;
    assert_eq!(sandbox.ok(&["config", "get", "plain"]), "visible\n");
    assert_contains(&sandbox.ok(&["config"]), &["[secret]"]);
    assert_contains(
        &sandbox.fails(&["config", "get", "password"]),
        &["set CAIRN_CONFIG_PASSPHRASE"],
    );

    // The passphrase may come from a file, or under Pulumi's variable names.
    let file = sandbox.write("pass.txt", &format!("{}\n", crate::support::PASSPHRASE));
    let output = sandbox
        .command(&["config", "get", "password"])
        .env("CAIRN_CONFIG_PASSPHRASE_FILE", &file)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hunter2\n");
    let output = sandbox
        .command(&["config", "get", "password"])
        .env("PULUMI_CONFIG_PASSPHRASE", crate::support::PASSPHRASE)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hunter2\n");
}

#[test]
fn a_stack_file_written_by_pulumi_is_read() {
    // Values from Pulumi's own passphrase manager tests: passphrase "password", and a stack file
    // whose encryptionsalt Pulumi generated.
    let mut sandbox = stack("web");
    sandbox.write(
        "Pulumi.dev.yaml",
        "encryptionsalt: v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ==\n\
         config:\n  web:plain: 1.10\n  aws:region: us-east-1\n",
    );
    sandbox.passphrase = Some("password".into());
    sandbox.ok(&["config", "set", "--secret", "token", "abc"]);
    assert_eq!(sandbox.ok(&["config", "get", "token"]), "abc\n");
    // Numbers keep their text exactly as written.
    assert_eq!(sandbox.ok(&["config", "get", "plain"]), "1.10\n");
    sandbox.passphrase = Some("password123".into());
    assert_contains(
        &sandbox.fails(&["config", "get", "token"]),
        &["incorrect passphrase"],
    );
}

#[test]
fn project_config_declarations_supply_defaults_and_catch_bad_keys() {
    let sandbox = Sandbox::new("web");
    sandbox.write(
        "Pulumi.yaml",
        "name: web\nruntime: wasm\nconfig:\n  greeting:\n    type: string\n    default: hello\n",
    );
    sandbox.ok(&["stack", "init", "dev"]);
    assert_contains(&sandbox.ok(&["config"]), &["greeting", "hello"]);
    assert_contains(
        &sandbox.fails(&["config", "set", "a:b:c:d", "x"]),
        &["a:b:c:d"],
    );
    sandbox.write("Pulumi.dev.yaml", "config: [not, a, map]\n");
    assert_contains(&sandbox.fails(&["config"]), &["Pulumi.dev.yaml"]);
}
