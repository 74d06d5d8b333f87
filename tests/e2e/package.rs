//! `cairn package check-schema` and `get-schema` on schema files, manifests, `.wasm` files,
//! installed providers and gRPC plugins; and `cairn plugin install` refusing a provider whose
//! schema is invalid.

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, example_wasm, test_wasm};

const GOOD: &str = r##"{
  "name": "shop", "version": "1.0.0",
  "types": {"shop:index:Size": {"type": "string", "enum": [{"value": "small"}, {"value": "large"}]}},
  "resources": {"shop:index:Order": {
    "inputProperties": {"size": {"$ref": "#/types/shop:index:Size", "default": "small"}, "count": {"type": "integer"}},
    "requiredInputs": ["count"],
    "properties": {"total": {"type": "number"}}, "required": ["total"]
  }}
}"##;

const GOOD_YAML: &str = "name: shop\nversion: 1.0.0\nresources:\n  shop:index:Order:\n    inputProperties:\n      count: {type: integer}\n    requiredInputs: [count]\n";

/// Three errors: a metaschema-clean document whose semantic rules fail.
const BAD: &str = r##"{
  "name": "shop",
  "resources": {
    "other:index:Order": {},
    "shop:index:Item": {
      "inputProperties": {"size": {"$ref": "#/types/shop:index:Size"}, "count": {"type": "integer", "default": "many"}},
      "requiredInputs": ["colour"]
    }
  }
}"##;

#[test]
fn check_schema_accepts_good_files_and_lists_every_error_of_bad_ones() {
    let sandbox = Sandbox::new("pkg");
    sandbox.write("good.json", GOOD);
    sandbox.write("good.yaml", GOOD_YAML);
    sandbox.write("bad.json", BAD);
    sandbox.write("broken.json", "{\"name\": ");
    sandbox.write(
        "cairn.json",
        &std::fs::read_to_string(
            crate::support::repo().join("examples/providers/hello/cairn.json"),
        )
        .unwrap(),
    );

    assert_eq!(
        sandbox.ok(&["package", "check-schema", "good.json"]),
        "good.json: valid package schema shop@1.0.0: 1 resource, 0 functions, 1 type, 0 config variables\n"
    );
    assert_contains(
        &sandbox.ok(&["package", "check-schema", "good.yaml"]),
        &["good.yaml: valid package schema shop@1.0.0: 1 resource"],
    );
    assert_contains(
        &sandbox.ok(&["package", "check-schema", "cairn.json"]),
        &["cairn.json (the manifest's schema): valid package schema hello"],
    );

    let errors = sandbox.fails(&["package", "check-schema", "bad.json"]);
    assert_contains(
        &errors,
        &[
            "bad.json: the package schema has 4 errors:",
            r#"resources["other:index:Order"]: the token's package "other" is not the package's name (allowed: "shop") [token-package]"#,
            r#"resources["shop:index:Item"].inputProperties.count.default: "many" is not a 32-bit integer, the property's type [default-type]"#,
            r##"resources["shop:index:Item"].inputProperties.size.$ref: reference "#/types/shop:index:Size": the package has no type "shop:index:Size" [reference]"##,
            r#"resources["shop:index:Item"].requiredInputs[0]: "colour" is not one of the properties [required-exists]"#,
        ],
    );

    // The metaschema's errors name its keyword.
    sandbox.write(
        "shape.json",
        r#"{"name": "shop", "version": "one", "resourcez": {}}"#,
    );
    assert_contains(
        &sandbox.fails(&["package", "check-schema", "shape.json"]),
        &[
            "shape.json: the package schema has 2 errors:",
            "resourcez: unknown field [metaschema: additionalProperties]",
            r#"version: "one" is not a semantic version"#,
            "[metaschema: pattern]",
        ],
    );

    assert_contains(
        &sandbox.fails(&["package", "check-schema", "broken.json"]),
        &["broken.json: not valid JSON"],
    );
    assert_contains(
        &sandbox.fails(&["package", "check-schema", "missing.json"]),
        &["reading missing.json"],
    );
    assert_contains(
        &sandbox.fails(&["package", "check-schema", "no such provider"]),
        &["\"no such provider\" is neither a file nor a provider name"],
    );
}

#[test]
fn get_and_check_schema_of_wasm_providers_installed_or_not() {
    let sandbox = Sandbox::new("pkg");
    let hello = example_wasm("hello");
    let hello = hello.to_str().unwrap();

    // A `.wasm` file: its manifest's schema, as served (name and version filled in).
    assert_contains(
        &sandbox.ok(&["package", "check-schema", hello]),
        &["hello.wasm: valid package schema hello@"],
    );

    assert_contains(
        &sandbox.fails(&["package", "get-schema", "hello"]),
        &[
            "no provider \"hello\" installed",
            "or put a pulumi-resource-hello plugin on PATH",
        ],
    );
    sandbox.ok(&["plugin", "install", hello]);
    let schema: Value =
        serde_json::from_str(&sandbox.ok(&["package", "get-schema", "hello"])).unwrap();
    assert_eq!(schema["name"], "hello");
    assert!(schema["resources"]["hello:index:Greeting"].is_object());
    let version = schema["version"].as_str().unwrap().to_owned();
    assert_contains(
        &sandbox.ok(&["package", "check-schema", &format!("hello@{version}")]),
        &[
            &format!("provider hello@{version} ("),
            "valid package schema hello@",
        ],
    );
    assert_contains(
        &sandbox.fails(&["package", "get-schema", "hello@99.0.0"]),
        &["no provider \"hello\" at version 99.0.0 installed"],
    );
    assert_contains(
        &sandbox.fails(&["package", "get-schema", "hello@latest"]),
        &["invalid provider version \"latest\""],
    );
}

#[test]
fn get_schema_asks_a_grpc_plugin_when_no_wasm_provider_is_installed() {
    let sandbox = Sandbox::new("pkg");
    // `pulumi-resource-hello` in the Cairn plugin directory: a launcher serving the component
    // over gRPC.
    let bin = sandbox.home.join("plugins/bin");
    sandbox.ok(&[
        "plugin",
        "export-grpc",
        example_wasm("hello").to_str().unwrap(),
        "-o",
        bin.to_str().unwrap(),
    ]);
    let schema: Value =
        serde_json::from_str(&sandbox.ok(&["package", "get-schema", "hello"])).unwrap();
    assert_eq!(schema["name"], "hello");
    assert_contains(
        &sandbox.ok(&["package", "check-schema", "hello"]),
        &[
            "plugin ",
            "pulumi-resource-hello: valid package schema hello@",
        ],
    );
}

#[test]
fn plugin_install_refuses_a_provider_whose_schema_is_invalid() {
    // The probe provider with its function's token moved to another package (a same-length
    // edit of the manifest's JSON, so the component stays valid).
    let mut bytes = std::fs::read(test_wasm("probe")).unwrap();
    let (from, to): (&[u8], &[u8]) = (br#""probe:index:whoami""#, br#""other:index:whoami""#);
    let mut found = 0;
    while let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
        bytes[at..at + from.len()].copy_from_slice(to);
        found += 1;
    }
    assert!(found > 0, "the probe's manifest names its function");
    let sandbox = Sandbox::new("pkg");
    let file = sandbox.project.join("bad-probe.wasm");
    std::fs::write(&file, &bytes).unwrap();
    let file = file.to_str().unwrap();

    let refused = sandbox.fails(&["plugin", "install", file]);
    assert_contains(
        &refused,
        &[
            "bad-probe.wasm: not installing \"probe\"@",
            "the package schema has 1 error:",
            r#"functions["other:index:whoami"]: the token's package "other" is not the package's name (allowed: "probe") [token-package]"#,
        ],
    );
    assert!(!sandbox.ok(&["plugin", "ls"]).contains("probe"));
    // check-schema says the same of the file.
    assert_contains(
        &sandbox.fails(&["package", "check-schema", file]),
        &["[token-package]"],
    );

    // Without a schema (its key renamed: unknown manifest fields are ignored) it installs.
    let mut bytes = std::fs::read(test_wasm("probe")).unwrap();
    let (from, to): (&[u8], &[u8]) = (
        b"\"schema\": {\n    \"name\": \"probe\"",
        b"\"schemx\": {\n    \"name\": \"probe\"",
    );
    let mut found = 0;
    while let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
        bytes[at..at + from.len()].copy_from_slice(to);
        found += 1;
    }
    assert!(found > 0, "the probe's manifest has a schema");
    let schemaless = sandbox.project.join("schemaless-probe.wasm");
    std::fs::write(&schemaless, &bytes).unwrap();
    sandbox.ok(&["plugin", "install", schemaless.to_str().unwrap()]);
    assert_contains(
        &sandbox.fails(&["package", "get-schema", "probe"]),
        &["has no package schema in its manifest"],
    );

    // The unedited probe installs (replacing it: same name and version).
    sandbox.ok(&["plugin", "install", test_wasm("probe").to_str().unwrap()]);
    assert!(sandbox.ok(&["plugin", "ls"]).contains("probe"));
}

/// `get-schema` asks the guest for its schema; when what it serves disagrees with the copy in
/// its manifest (which deployments and `plugin install` read), the command fails naming the
/// provider file and every difference.
#[test]
fn get_schema_asks_the_guest_and_refuses_a_manifest_that_disagrees() {
    let sandbox = Sandbox::new("pkg-mismatch");
    let wasm = test_wasm("schema-mismatch");
    let wasm = wasm.to_str().unwrap();
    let differences = [
        "differs from its manifest's schema",
        "/resources/schema-mismatch:index:Thing/properties/size/type: \"integer\" in the manifest, \"string\" from get-schema",
        "/functions: only in what get-schema serves",
    ];
    let err = sandbox.fails(&["package", "get-schema", wasm]);
    assert_contains(
        &err,
        &["schema_mismatch.wasm: provider \"schema-mismatch\"@0.1.0 serves a schema"],
    );
    assert_contains(&err, &differences);
    // check-schema reads the schema the same way.
    assert_contains(
        &sandbox.fails(&["package", "check-schema", wasm]),
        &differences,
    );

    // Installed, it is asked all the same.
    sandbox.ok(&["plugin", "install", wasm]);
    let err = sandbox.fails(&["package", "get-schema", "schema-mismatch"]);
    assert_contains(
        &err,
        &["provider schema-mismatch@0.1.0 (", "): serves a schema"],
    );
    assert_contains(&err, &differences);
}
