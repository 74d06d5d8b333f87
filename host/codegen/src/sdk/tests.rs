//! The generator on small schemas: each feature's expected snippets, escaping, docs,
//! determinism, and schemas with errors.

use super::*;

/// The schema exercising every feature (also compiled for wasm by the e2e tests).
const FEATURES: &str = include_str!("../../tests/schemas/features.json");

fn options() -> SdkOptions {
    SdkOptions {
        version: None,
        sdk: SdkDependency::Path("../guest-sdk".into()),
    }
}

fn generate_json(json: &str) -> Result<Vec<GeneratedFile>, SdkError> {
    let spec = PackageSpec::from_json(json).expect("the test schema parses");
    generate(&spec, &options())
}

/// The crate's files as `path → text`.
fn features() -> std::collections::BTreeMap<String, String> {
    generate_json(FEATURES)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|f| (f.path, f.text))
        .collect()
}

#[test]
fn generates_each_feature() {
    let files = features();
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "the crate is named and versioned after the package",
            "Cargo.toml",
            &[
                "name = \"cairn-features\"\nversion = \"2.3.4\"\nedition = \"2024\"",
                "license = \"Apache-2.0\"",
                "cairn-sdk = { path = \"../guest-sdk\" }",
            ],
        ),
        (
            "the package description is the crate doc, fences marked text",
            "src/lib.rs",
            &[
                "//! A package exercising every schema feature",
                "//! ```text\n//! not Rust\n//! ```",
            ],
        ),
        (
            "a token module other than index is a module",
            "src/lib.rs",
            &["pub mod nested;"],
        ),
        (
            "required inputs go to new, in schema order; keywords are raw identifiers",
            "src/lib.rs",
            &[
                "pub fn new(size: impl IntoInput<Value = i64>, r#type: impl IntoInput<Value = String>) -> Self {",
            ],
        ),
        (
            "optional inputs are setters taking inputs",
            "src/lib.rs",
            &[
                "pub fn ratio(mut self, value: impl IntoInput<Value = f64>) -> Self {\n        self.args = self.args.set(\"ratio\", value);",
            ],
        ),
        (
            "defaults are applied in new (setters overwrite them), consts always sent",
            "src/lib.rs",
            &[
                "built = built.set(\"kind\", \"widget\");",
                "built = built.set(\"color\", Color::Red);",
                "built = built.set(\"enabled\", true);",
                "built = built.set(\"ratio\", 0.5);",
                "built = built.set(\"label\", \"plain\");",
                "/// Default: `true`.",
            ],
        ),
        (
            "secret inputs are marked secret",
            "src/lib.rs",
            &["self.args = self.args.set(\"password\", crate::secret(value));"],
        ),
        (
            "secret outputs are additional secret outputs",
            "src/lib.rs",
            &["let options = options.additional_secret_outputs(&[\"secretValue\"]);"],
        ),
        (
            "outputs are typed; optional ones are options",
            "src/lib.rs",
            &[
                "pub size: Output<i64>,",
                "pub label: Output<Option<String>>,",
                "pub tree: Output<Option<Tree>>,",
                "size: resource.get(\"size\"),",
            ],
        ),
        (
            "names that collide with the SDK's get a suffix; digits a prefix",
            "src/lib.rs",
            &[
                "pub resource_2: Output<Option<String>>,",
                "pub _2fa: Output<Option<bool>>,",
                "pub fn new_2(mut self",
                "pub fn self_(mut self",
                "pub struct Value2 {",
            ],
        ),
        (
            "deprecation becomes #[deprecated]",
            "src/lib.rs",
            &[
                "#[deprecated = \"Use Widget.\"]\npub struct Gadget {",
                "#[deprecated = \"Use \\\"label\\\" instead.\"]\n    pub fn old_name(",
                "#[deprecated = \"Gone.\"]\n    Old,",
            ],
        ),
        (
            "replacing properties are documented",
            "src/lib.rs",
            &[
                "/// Changing `size`, `label` replaces the resource.",
                "/// Default: `\"plain\"`. Changing it replaces the resource.\n    pub fn label(",
            ],
        ),
        (
            "the provider resource takes the provider's configuration",
            "src/lib.rs",
            &[
                "pub struct Provider {\n    /// The provider resource: pass it to `ResourceOptions::provider`.\n    pub resource: ProviderResource,",
                "let resource = provider(Self::PACKAGE, name, args.into_args(), options);",
                "pub fn new(region: impl IntoInput<Value = String>) -> Self {",
                "self.args = self.args.set(\"token\", crate::secret(value));",
                "environment (`FEATURES_REGION`)",
            ],
        ),
        (
            "components are built by their provider and cannot be read",
            "src/lib.rs",
            &["let resource = remote_component(Self::TYPE, name, args.into_args(), options);"],
        ),
        (
            "functions take typed args and give a typed result",
            "src/lib.rs",
            &[
                "pub fn lookup(args: LookupArgs, provider: Option<&ProviderResource>) -> Output<LookupResult> {",
                "pub struct LookupResult {\n    pub id: String,\n    pub parts: Option<Vec<Part>>,\n}",
                "pub fn now(provider: Option<&ProviderResource>) -> Output<NowResult> {",
                "pub fn count(provider: Option<&ProviderResource>) -> Output<i64> {\n    crate::invoke_single(",
            ],
        ),
        (
            "object types are structs with required and optional fields",
            "src/lib.rs",
            &[
                "#[derive(Clone, Debug, Default, PartialEq)]\npub struct Part {\n    pub name: String,\n    pub weight: Option<f64>,\n    pub level: Option<Level>,\n}",
                "impl IntoValue for Part {",
                "impl FromValue for Part {",
                "impl IntoInput for Part {",
                "name: crate::property(map, \"name\")?,",
                "if let Some(value) = self.weight {\n            map.insert(\"weight\".to_owned(), value.into_value());",
            ],
        ),
        (
            "recursive types are boxed, not through arrays",
            "src/lib.rs",
            &[
                "pub left: Option<Box<Tree>>,",
                "pub children: Option<Vec<Tree>>,",
                "pub forest: Option<Box<Forest>>,",
                "pub root: Box<Tree>,",
                "left: crate::property::<Option<Tree>>(map, \"left\")?.map(Box::new),",
                "root: Box::new(crate::property(map, \"root\")?),",
                "map.insert(\"root\".to_owned(), (*self.root).into_value());",
            ],
        ),
        (
            "enums of each primitive type",
            "src/lib.rs",
            &[
                "pub enum Color {\n    /// Red.\n    Red,\n    DarkBlue,\n    Self_,",
                "Self::DarkBlue => Value::from(\"dark-blue\"),",
                "Some(\"dark-blue\") => Ok(Self::DarkBlue),",
                "_ => crate::not_one_of(\"Color\", value),",
                "Some(10) => Ok(Self::V10),",
                "Some(0.5) => Ok(Self::Half),",
                "Some(true) => Ok(Self::On),",
            ],
        ),
        (
            "maps, arrays, Any, Json, Asset, Archive, unions and resource references",
            "src/lib.rs",
            &[
                "pub fn tags(mut self, value: impl IntoInput<Value = IndexMap<String, String>>) -> Self {",
                "pub fn parts(mut self, value: impl IntoInput<Value = Vec<Part>>) -> Self {",
                "pub fn anything(mut self, value: impl IntoInput<Value = Value>) -> Self {",
                "pub fn settings(mut self, value: impl IntoInput<Value = Value>) -> Self {",
                "pub fn code(mut self, value: impl IntoInput<Value = Archive>) -> Self {",
                "pub fn page(mut self, value: impl IntoInput<Value = Asset>) -> Self {",
                "pub fn size_or_name(mut self, value: impl IntoInput<Value = Value>) -> Self {",
                "pub fn shade(mut self, value: impl IntoInput<Value = String>) -> Self {",
                "pub fn owner(mut self, value: impl IntoInput<Value = Value>) -> Self {",
            ],
        ),
        (
            "types of other modules are referred to by path",
            "src/nested.rs",
            &[
                "pub color: Output<Option<crate::Color>>,",
                "pub fn widget(mut self, value: impl IntoInput<Value = crate::Part>) -> Self {",
                "pub struct Empty {}",
            ],
        ),
        (
            "examples and shortcodes are dropped, indentation capped",
            "src/lib.rs",
            &[
                "/// A widget.\n///\n///    indented, not a doctest\n///\n/// Changing `size`, `label` replaces the resource.\n///\n/// Token: `features:index/widget:Widget`.",
            ],
        ),
    ];
    for (what, file, snippets) in cases {
        let text = files
            .get(*file)
            .unwrap_or_else(|| panic!("{what}: no file {file}"));
        for snippet in *snippets {
            assert!(
                text.contains(snippet),
                "{what}: {file} lacks\n{snippet}\n---\n{text}"
            );
        }
    }
    let lib = &files["src/lib.rs"];
    for absent in [
        "new Widget();",
        "{{%",
        "```typescript",
        "pub fn get(name: &str, id: impl IntoInput<Value = String>, options: ResourceOptions) -> Self {\n        Self::from_resource(read(Self::TYPE, name, id, Args::new(), options))\n    }\n\n    /// The typed view of a declared resource of this type.\n    pub fn from_resource(resource: Resource) -> Self {\n        Self {\n            names",
    ] {
        assert!(!lib.contains(absent), "lib.rs has {absent:?}");
    }
}

#[test]
fn output_is_deterministic_and_independent_of_document_order() {
    let first = generate_json(FEATURES).unwrap();
    assert_eq!(first, generate_json(FEATURES).unwrap());
    // The same schema with its resources, functions and types in reverse order.
    let mut json: serde_json::Value = serde_json::from_str(FEATURES).unwrap();
    for section in ["resources", "functions", "types"] {
        let map = json[section].as_object().unwrap().clone();
        let reversed: serde_json::Map<String, serde_json::Value> = map.into_iter().rev().collect();
        json[section] = serde_json::Value::Object(reversed);
    }
    let spec = PackageSpec::from_value(json).unwrap();
    assert_eq!(first, generate(&spec, &options()).unwrap());
}

#[test]
fn lines_fit_rustfmt_width_outside_comments_and_strings() {
    for (path, text) in features() {
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") || code.contains('"') || path.ends_with(".toml") {
                continue;
            }
            assert!(line.len() <= LINE_WIDTH, "{path}: {line}");
        }
    }
}

#[test]
fn the_version_falls_back_to_the_provider_then_zero() {
    let schema = r#"{"name": "p", "resources": {"p:index:R": {}}}"#;
    let spec = PackageSpec::from_json(schema).unwrap();
    let cargo = |version: Option<&str>| {
        let options = SdkOptions {
            version: version.map(str::to_owned),
            sdk: SdkDependency::Version("0.1".into()),
        };
        generate(&spec, &options).unwrap()[0].text.clone()
    };
    assert!(cargo(Some("1.2.3")).contains("version = \"1.2.3\""));
    assert!(cargo(None).contains("version = \"0.0.0\""));
    assert!(cargo(None).contains("cairn-sdk = \"0.1\""));
}

#[test]
fn schemas_with_errors_name_the_path() {
    let cases = [
        (
            r##"{"name": "p", "resources": {"p:index:R": {"inputProperties": {"x": {"$ref": "#/types/p:index:Nope"}}}}}"##,
            r##"resources["p:index:R"].inputProperties["x"]: reference "#/types/p:index:Nope": the package has no type "p:index:Nope""##,
        ),
        (
            r#"{"name": "p", "types": {"p:index:T": {"type": "object", "properties": {"a": {"type": "float"}}}}}"#,
            r#"types["p:index:T"].properties["a"]: unknown primitive type "float""#,
        ),
        (
            r#"{"name": "p", "resources": {"nocolons": {}}}"#,
            r#"resources["nocolons"]: "nocolons" is not a token"#,
        ),
        (
            r#"{"name": "p", "resources": {"q:index:R": {}}}"#,
            r#"resources["q:index:R"]: token "q:index:R" belongs to package "q", not "p""#,
        ),
        (
            r#"{"name": "p", "functions": {"p:index:f": {"outputs": {"properties": {"a": {"type": "array"}}}}}}"#,
            r#"functions["p:index:f"].outputs.properties["a"]: an array type needs "items""#,
        ),
        (
            r#"{"name": "p", "types": {"p:index:E": {"type": "string", "enum": [{"value": 3}]}}}"#,
            r#"types["p:index:E"].enum[0].value: 3 is not a value of the enum's type"#,
        ),
        (
            r#"{"name": "p", "resources": {"p:index:R": {"inputProperties": {}, "requiredInputs": ["gone"]}}}"#,
            r#"resources["p:index:R"].requiredInputs: "gone" is required but is not a property"#,
        ),
        (
            r#"{"name": "1bad name", "version": "one"}"#,
            r#"name: package name "1bad name" cannot name a crate"#,
        ),
        (
            r#"{"name": "p", "version": "one"}"#,
            r#"version: version "one" is not a semantic version"#,
        ),
    ];
    for (schema, expected) in cases {
        let error = generate_json(schema).unwrap_err().to_string();
        assert!(error.contains(expected), "{schema}\n{error}");
        assert!(error.starts_with("the schema of package"), "{error}");
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let schema = r##"{"name": "p", "resources": {
        "p:index:A": {"inputProperties": {"x": {"$ref": "#/types/p:index:Nope"}}},
        "p:index:B": {"properties": {"y": {"type": "float"}}}}}"##;
    let SdkError::Schema { problems, .. } = generate_json(schema).unwrap_err();
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            r#"resources["p:index:A"].inputProperties["x"]"#,
            r#"resources["p:index:B"].properties["y"]"#
        ]
    );
}

#[test]
fn methods_are_left_out_and_modules_follow_the_module_format() {
    let schema = r#"{"name": "p",
        "provider": {"methods": {"terraformConfig": "pulumi:providers:p/terraformConfig"}},
        "functions": {"pulumi:providers:p/terraformConfig": {}, "p:apps/v1:get": {}},
        "resources": {"p:apps/v1:Deployment": {}, "p:type:Thing": {}}}"#;
    let files: Vec<String> = generate_json(schema)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(
        files,
        ["Cargo.toml", "src/lib.rs", "src/apps_v1.rs", "src/type_.rs"]
    );
    let bridged = r#"{"name": "p", "meta": {"moduleFormat": "(.*)(?:/[^/]*)"},
        "resources": {"p:index/thing:Thing": {}, "p:x509/cert:Cert": {}}}"#;
    let files: Vec<String> = generate_json(bridged)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(files, ["Cargo.toml", "src/lib.rs", "src/x509.rs"]);
}
