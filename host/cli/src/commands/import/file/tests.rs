//! Import files: what resolves (URNs, parents by name or nameTable, providers), and every
//! malformed or inconsistent file refused with the file, the entry and the rule named
//! (Pulumi's parseImportFile cases, ported where they apply).

use cairn_engine::state::{ResourceState, Snapshot};
use cairn_engine::urn::{TypeToken, Urn};

use super::*;

const STACK_URN: &str = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
const SITE: &str = "urn:pulumi:dev::proj::my:index:Site::site";
const PROVIDER: &str = "urn:pulumi:dev::proj::pulumi:providers:file::files";
const EXISTING_FILE: &str = "urn:pulumi:dev::proj::file:index:File::old";

fn snapshot() -> Snapshot {
    let mut snapshot = Snapshot::empty(None);
    for (urn, ty, custom, id) in [
        (STACK_URN, "pulumi:pulumi:Stack", false, None),
        (SITE, "my:index:Site", false, None),
        (PROVIDER, "pulumi:providers:file", true, Some("p1")),
        (EXISTING_FILE, "file:index:File", true, Some("old.txt")),
    ] {
        let mut state = ResourceState::new(
            Urn::parse(urn).unwrap(),
            TypeToken::parse(ty).unwrap(),
            custom,
        );
        state.id = id.map(str::to_owned);
        snapshot.resources.push(state);
    }
    snapshot
}

fn resolve_text(text: &str) -> Result<Resolved> {
    let file = parse("import.json", text)?;
    resolve("import.json", file, &snapshot(), "dev", "proj")
}

#[test]
fn resolves_parents_by_name_and_providers_by_name_table_or_file() {
    let resolved = resolve_text(&format!(
        r#"{{
          "nameTable": {{"site": "{SITE}", "files": "{PROVIDER}"}},
          "resources": [
            {{"type": "file:index:File", "name": "page", "id": "site/index.html",
              "parent": "group", "provider": "files", "properties": ["path"]}},
            {{"type": "my:index:Group", "name": "group", "component": true, "parent": "site"}},
            {{"type": "pulumi:providers:file", "name": "mine", "version": "v1.2",
              "inputs": {{"root": "x"}}}},
            {{"type": "file:index:File", "name": "other", "logicalName": "other-file",
              "id": "b.txt", "provider": "mine"}}
          ]
        }}"#
    ))
    .unwrap();
    let urns: Vec<&str> = resolved.resources.iter().map(|e| e.urn.as_str()).collect();
    assert_eq!(
        urns,
        [
            "urn:pulumi:dev::proj::my:index:Site$my:index:Group$file:index:File::page",
            "urn:pulumi:dev::proj::my:index:Site$my:index:Group::group",
            "urn:pulumi:dev::proj::pulumi:providers:file::mine",
            "urn:pulumi:dev::proj::file:index:File::other-file",
        ]
    );
    assert_eq!(
        resolved.resources[0].provider.as_ref().map(Urn::as_str),
        Some(PROVIDER)
    );
    assert_eq!(resolved.resources[0].spec.properties, ["path"]);
    assert_eq!(
        resolved.resources[3].provider.as_ref().map(Urn::as_str),
        Some("urn:pulumi:dev::proj::pulumi:providers:file::mine")
    );
    assert_eq!(
        resolved.resources[2].spec.version,
        Some(semver::Version::new(1, 2, 0))
    );
}

#[test]
fn the_same_resource_already_in_the_stack_is_left_out() {
    let resolved = resolve_text(
        r#"{"resources": [
            {"type": "file:index:File", "name": "old", "id": "old.txt"},
            {"type": "file:index:File", "name": "new", "id": "new.txt"}]}"#,
    )
    .unwrap();
    assert_eq!(resolved.resources.len(), 1);
    assert_eq!(resolved.resources[0].spec.name, "new");
}

#[test]
fn bad_files_are_refused_naming_the_entry() {
    let cases: &[(&str, &str)] = &[
        (
            "{",
            "import.json: not valid JSON: EOF while parsing an object",
        ),
        ("[]", "import.json: expected a JSON object"),
        (
            r#"{"resources": {}}"#,
            "import.json: resources: expected an array",
        ),
        (
            r#"{"resources": []}"#,
            "import.json: resources: no resources to import",
        ),
        (
            r#"{"resources": [1]}"#,
            "import.json: resources[0]: expected an object",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": 5}]}"#,
            "import.json: resources[0].id: expected a string",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "colour": "red"}]}"#,
            "import.json: resources[0].colour: unknown field",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "version": "one"}]}"#,
            "import.json: resources[0].version: \"one\" is not a version",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "properties": [1]}]}"#,
            "import.json: resources[0].properties[0]: expected a property name",
        ),
        (
            r#"{"nameTable": {"p": 1}, "resources": [{"type": "a:b:C", "name": "x", "id": "1"}]}"#,
            "import.json: nameTable[\"p\"]: expected a URN (a string)",
        ),
        (
            r#"{"resources": [{"name": "x", "id": "1"}]}"#,
            "import.json: resources[0] (resource 'x') has no type",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "id": "1"}]}"#,
            "import.json: resources[0] (resource '1' of type 'a:b:C') has no name",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x"}]}"#,
            "import.json: resources[0] (resource 'x' of type 'a:b:C') has no ID",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "component": true}]}"#,
            "has an ID, but is marked as a component",
        ),
        (
            r#"{"resources": [{"type": "pulumi:providers:a", "name": "x", "id": "1"}]}"#,
            "has an ID, but is a provider, which is created rather than read",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "remote": true}]}"#,
            "import.json: resources[0].remote: remote components cannot be imported",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "parent": "nope"}]}"#,
            "the parent 'nope' has no entry in 'nameTable'",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "provider": "nope"}]}"#,
            "the provider 'nope' has no entry in 'nameTable' or 'resources'",
        ),
        (
            r#"{"nameTable": {"s": "urn:pulumi:dev::proj::my:index:Site::gone"},
                "resources": [{"type": "a:b:C", "name": "x", "id": "1", "parent": "s"}]}"#,
            "import.json: nameTable[\"s\"]: urn:pulumi:dev::proj::my:index:Site::gone is not a resource of stack \"dev\"",
        ),
        (
            r#"{"nameTable": {"s": "not a urn"},
                "resources": [{"type": "a:b:C", "name": "x", "id": "1"}]}"#,
            "import.json: nameTable[\"s\"]:",
        ),
        (
            &format!(
                r#"{{"nameTable": {{"site": "{SITE}"}},
                    "resources": [{{"type": "a:b:C", "name": "x", "id": "1", "provider": "site"}}]}}"#
            ),
            "is not a provider of package \"a\"",
        ),
        (
            r#"{"resources": [
                {"type": "a:b:C", "name": "x", "id": "1"},
                {"type": "a:b:C", "name": "x", "id": "2"}]}"#,
            "has an ambiguous URN, set name (or logical name) to be unique",
        ),
        (
            r#"{"resources": [
                {"type": "a:b:P", "name": "p", "component": true},
                {"type": "a:b:P", "name": "p", "logicalName": "q", "component": true},
                {"type": "a:b:C", "name": "x", "id": "1", "parent": "p"}]}"#,
            "import.json: resources[2] (resource 'x' of type 'a:b:C') has an ambiguous parent",
        ),
        (
            r#"{"resources": [
                {"type": "a:b:P", "name": "p", "component": true, "parent": "q"},
                {"type": "a:b:P", "name": "q", "component": true, "parent": "p"}]}"#,
            "its parents form a cycle",
        ),
        (
            r#"{"resources": [{"type": "file:index:File", "name": "old", "id": "other.txt"}]}"#,
            "resource 'urn:pulumi:dev::proj::file:index:File::old' already exists",
        ),
        (
            r#"{"resources": [{"type": "a:b:C", "name": "x", "id": "1", "inputs": {"a": 1}}]}"#,
            "inputs are only taken for providers",
        ),
        (
            r#"{"providerInputs": {}, "resources": []}"#,
            "import.json: providerInputs is deprecated and not supported",
        ),
    ];
    for (text, expected) in cases {
        let err = match resolve_text(text) {
            Ok(resolved) => panic!("{text}: resolved as {resolved:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains(expected),
            "{text}:\n  expected {expected:?}\n  in {err:?}"
        );
    }
}

#[test]
fn parent_and_provider_flags_take_a_name_or_a_bare_urn() {
    assert_eq!(
        name_and_urn("--parent", &format!("site={SITE}"), "parent").unwrap(),
        ("site".to_owned(), SITE.to_owned())
    );
    assert_eq!(
        name_and_urn("--parent", SITE, "parent").unwrap(),
        ("parent".to_owned(), SITE.to_owned())
    );
    let err = name_and_urn("--provider", "files", "provider").unwrap_err();
    assert_eq!(
        err.to_string(),
        "--provider \"files\": expected NAME=URN or a URN"
    );
}
