//! `cairn import` end to end, with the `file` provider adopting files and directories that
//! exist in its granted directory: one resource from the command line and a bulk file with a
//! parent component and an explicit provider; `--protect` (on by default, `--protect=false`),
//! `--preview-only` recording nothing, `--out`, the generated code in each language (Python
//! compiled, TypeScript parsed, Rust built and previewed against the stack), and bad input — an ID that does not exist, a
//! type the provider does not know, a malformed file, a name already in the stack. Cases
//! follow Pulumi's `pkg/engine/lifecycletest/import_test.go` and `pulumi import` command
//! tests where they apply (named at each test).

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, clean_cargo_env, example_wasm, guest_target, repo};

const FILE_TYPE: &str = "file:index:File";
const STACK: &str = "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev";

/// Project `web` (runtime `runtime`), stack `dev`, the `file` provider installed and granted
/// `./site`, which holds `a.txt`, `b.txt` and the directory `logs`.
fn import_stack(runtime: &str) -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.write(
        "Pulumi.yaml",
        &format!("name: web\nruntime: {runtime}\ndescription: imports\n"),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["plugin", "install", example_wasm("file").to_str().unwrap()]);
    std::fs::create_dir_all(sandbox.project.join("site/logs")).unwrap();
    sandbox.write("site/a.txt", "alpha\n");
    sandbox.write("site/b.txt", "bravo\n");
    for (path, value) in [
        ("[\"cairn:grants\"].file.directories[0].host", "./site"),
        ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
        ("[\"cairn:grants\"].file.directories[0].write", "true"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
    sandbox
}

/// The stack's resources as exported, by URN.
fn resources(sandbox: &Sandbox) -> Vec<Value> {
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    exported["deployment"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn resource(sandbox: &Sandbox, urn: &str) -> Value {
    resources(sandbox)
        .into_iter()
        .find(|r| r["urn"] == urn)
        .unwrap_or_else(|| panic!("{urn} is not in the stack"))
}

/// Like Pulumi's TestImportPlan / `pulumi import TYPE NAME ID`: a preview, the import, the
/// resource recorded with what the provider read, protected, and code that declares it.
#[test]
fn imports_one_resource_protected_and_prints_its_code() {
    let sandbox = import_stack("wasm");
    let out = sandbox.ok(&["import", FILE_TYPE, "a-file", "a.txt", "--yes"]);
    assert_contains(
        &out,
        &[
            "= ",
            "a-file",
            "imported",
            "Please copy the following code into your program",
            "marked as protected",
            "use cairn_sdk::program::{Args, ResourceOptions, custom};",
            "let a_file = custom(\n    \"file:index:File\",\n    \"a-file\",",
            ".set(\"content\", \"alpha\\n\")",
            ".set(\"path\", \"a.txt\")",
            "ResourceOptions::new().protect(true),",
        ],
    );
    let urn = "urn:pulumi:dev::web::file:index:File::a-file";
    let state = resource(&sandbox, urn);
    assert_eq!(state["id"], "a.txt");
    assert_eq!(state["protect"], true);
    assert_eq!(state["inputs"]["content"], "alpha\n");
    assert_eq!(state["parent"], STACK);
    assert!(
        state.get("importID").is_none(),
        "a planned import records no import ID: {state}"
    );
    // The file is where it was, untouched.
    assert_eq!(sandbox.read("site/a.txt"), "alpha\n");

    // Again: the same resource is left out (as Pulumi skips it), nothing changes.
    let again = sandbox.ok(&["import", FILE_TYPE, "a-file", "a.txt", "--yes"]);
    assert!(!again.contains("let a_file"), "{again}");
    // Another resource under that name is refused.
    assert_contains(
        &sandbox.fails(&["import", FILE_TYPE, "a-file", "b.txt", "--yes"]),
        &[&format!("resource '{urn}' already exists")],
    );
    // Protected: a destroy refuses it.
    assert_contains(&sandbox.fails(&["destroy", "--yes"]), &["protected"]);
}

/// `--protect=false` (Pulumi's flag), `--properties`, and `--out` with a Python project.
#[test]
fn protect_false_properties_and_out_write_python() {
    let sandbox = import_stack("python");
    let out = sandbox.ok(&[
        "import",
        FILE_TYPE,
        "b",
        "b.txt",
        "--protect=false",
        "--properties",
        "path",
        "--yes",
        "--out",
        "imported.py",
    ]);
    assert_contains(&out, &["imported.py"]);
    assert!(
        !out.contains("pulumi_file"),
        "the code went to the file: {out}"
    );
    let state = resource(&sandbox, "urn:pulumi:dev::web::file:index:File::b");
    assert_eq!(state["protect"], Value::Null);
    assert_eq!(
        state["inputs"],
        serde_json::json!({"path": "b.txt"}),
        "--properties keeps only the named inputs"
    );
    let code = sandbox.read("imported.py");
    assert_eq!(
        code,
        "import pulumi\nimport pulumi_file as file\n\nb = file.File(\"b\",\n    content=\"\",\n    path=\"b.txt\")\n"
    );
    let compiled = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
        ])
        .arg(sandbox.project.join("imported.py"))
        .output();
    if let Ok(compiled) = compiled {
        assert!(
            compiled.status.success(),
            "{}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
    // Not protected: destroy deletes it (the file with it).
    sandbox.ok(&["destroy", "--yes"]);
    assert!(!sandbox.project.join("site/b.txt").exists());
}

/// `--preview-only` shows the import and records nothing (Pulumi's TestImportPlan preview).
#[test]
fn preview_only_records_nothing() {
    let sandbox = import_stack("wasm");
    let before = resources(&sandbox);
    let out = sandbox.ok(&["import", FILE_TYPE, "a", "a.txt", "--preview-only"]);
    assert_contains(&out, &["= ", "a", "to import"]);
    assert!(!out.contains("custom("), "no code for a preview: {out}");
    assert_eq!(resources(&sandbox), before);
    // Without --yes and without a terminal, an import needs confirmation.
    assert_contains(
        &sandbox.fails(&["import", FILE_TYPE, "a", "a.txt"]),
        &["needs confirmation"],
    );
    assert_eq!(resources(&sandbox), before);
}

/// A bulk file (Pulumi's format) with a component parent named in the file, an explicit
/// provider declared in it, and a nameTable entry naming what the stack has; TypeScript code.
/// Follows Pulumi's TestImportComponent and TestImportWithDifferingImportIdentifierFormat's
/// explicit-provider setup.
#[test]
fn bulk_import_with_parent_component_and_explicit_provider() {
    let sandbox = import_stack("nodejs");
    let file = sandbox.write(
        "import.json",
        r#"{
          "resources": [
            {"type": "file:index:File", "name": "page", "id": "a.txt",
             "parent": "site", "provider": "files"},
            {"type": "web:index:Site", "name": "site", "component": true},
            {"type": "pulumi:providers:file", "name": "files", "version": "0.1.0"},
            {"type": "file:index:Directory", "name": "logs", "id": "logs", "parent": "site"}
          ]
        }"#,
    );
    let out = sandbox.ok(&["import", "--file", file.to_str().unwrap(), "--yes"]);
    assert_contains(
        &out,
        &[
            "import * as file from \"@pulumi/file\";",
            "const files = new file.Provider(\"files\", {});",
            "const site = new pulumi.ComponentResource(\"web:index:Site\", \"site\", {}, {\n    protect: true,\n});",
            "const page = new file.File(\"page\", {\n    content: \"alpha\\n\",\n    path: \"a.txt\",\n}, {\n    parent: site,\n    provider: files,\n    protect: true,\n});",
            "const logs = new file.Directory(\"logs\", {\n    path: \"logs\",\n}, {\n    parent: site,\n    protect: true,\n});",
        ],
    );
    let site = "urn:pulumi:dev::web::web:index:Site::site";
    let page = resource(
        &sandbox,
        "urn:pulumi:dev::web::web:index:Site$file:index:File::page",
    );
    assert_eq!(page["parent"], site);
    assert_eq!(page["protect"], true);
    let provider = page["provider"].as_str().unwrap();
    assert!(
        provider.starts_with("urn:pulumi:dev::web::pulumi:providers:file::files::"),
        "{provider}"
    );
    let logs = resource(
        &sandbox,
        "urn:pulumi:dev::web::web:index:Site$file:index:Directory::logs",
    );
    assert!(
        logs["provider"]
            .as_str()
            .unwrap()
            .contains("pulumi:providers:file::default"),
        "no explicit provider: the default one"
    );
    assert_eq!(resource(&sandbox, site)["protect"], true);

    // A second import under the existing component, named through the nameTable (Pulumi's
    // --parent NAME=URN): the component and the rest stay as they were.
    let before: Vec<Value> = resources(&sandbox);
    let out = sandbox.ok(&[
        "import",
        FILE_TYPE,
        "second",
        "b.txt",
        "--parent",
        &format!("site={site}"),
        "--provider",
        &format!("files={}", provider.rsplit_once("::").unwrap().0),
        "--yes",
    ]);
    assert_contains(
        &out,
        &["parent: site,\n    provider: files,\n    protect: true,"],
    );
    let after = resources(&sandbox);
    for old in &before {
        let now = after.iter().find(|r| r["urn"] == old["urn"]).unwrap();
        assert_eq!(now["inputs"], old["inputs"], "{}", old["urn"]);
        assert_eq!(now["id"], old["id"], "{}", old["urn"]);
    }
    assert_eq!(after.len(), before.len() + 1);
    let ts = sandbox.write("check.mjs", &out[out.find("import * as").unwrap()..]);
    if let Ok(checked) = std::process::Command::new("node")
        .arg("--check")
        .arg(&ts)
        .output()
    {
        assert!(
            checked.status.success(),
            "{}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
}

/// The resources of the stack other than the stack itself and its default providers (which
/// a failed import may have recorded before its imports failed, as Pulumi's does).
fn imported(sandbox: &Sandbox) -> Vec<Value> {
    resources(sandbox)
        .into_iter()
        .filter(|r| {
            let urn = r["urn"].as_str().unwrap_or_default();
            !urn.contains("::pulumi:pulumi:Stack::") && !urn.contains("::pulumi:providers:")
        })
        .collect()
}

/// Bad input: no resource is imported, and the error says what is wrong (Pulumi's "resource
/// '…' does not exist" and the provider's unknown type; the file and JSON path of a bad file).
#[test]
fn bad_input_is_refused_and_records_nothing() {
    let sandbox = import_stack("wasm");
    let before = imported(&sandbox);
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            vec![FILE_TYPE.into(), "gone".into(), "nope.txt".into()],
            vec!["nope.txt", "does not exist"],
        ),
        (
            vec!["file:index:Nope".into(), "x".into(), "a.txt".into()],
            vec!["unknown resource type", "file:index:Nope"],
        ),
        (
            vec!["nothere:index:Thing".into(), "x".into(), "1".into()],
            vec!["no wasm provider found"],
        ),
        (vec![FILE_TYPE.into(), "x".into()], vec!["missing id"]),
        (
            vec!["--file".into(), "missing.json".into()],
            vec!["could not read import file missing.json"],
        ),
    ];
    for (args, expected) in cases {
        let mut full: Vec<&str> = vec!["import"];
        full.extend(args.iter().map(String::as_str));
        full.push("--yes");
        assert_contains(&sandbox.fails(&full), &expected);
        assert_eq!(imported(&sandbox), before, "{args:?} imported something");
    }
    let bad = sandbox.write(
        "bad.json",
        r#"{"resources": [{"type": "file:index:File", "name": "x", "id": "a.txt", "parent": "nobody"}]}"#,
    );
    assert_contains(
        &sandbox.fails(&["import", "--file", bad.to_str().unwrap(), "--yes"]),
        &[
            "bad.json: resources[0] (resource 'x' of type 'file:index:File')",
            "the parent 'nobody' has no entry in 'nameTable'",
        ],
    );
    let broken = sandbox.write("broken.json", r#"{"resources": [{"type": 1}]}"#);
    assert_contains(
        &sandbox.fails(&["import", "--file", broken.to_str().unwrap(), "--yes"]),
        &["broken.json: resources[0].type: expected a string"],
    );
    assert_eq!(imported(&sandbox), before);
}

/// The Rust code `cairn import` prints is a program that declares what was imported: built
/// as the project's wasm program, it previews no changes (Pulumi's promise for the code it
/// generates: "Not doing so will cause Pulumi to report that an update will happen").
#[test]
fn the_generated_rust_program_builds_and_matches_the_stack() {
    let sandbox = import_stack("wasm");
    sandbox.ok(&[
        "import",
        FILE_TYPE,
        "a-file",
        "a.txt",
        "--yes",
        "--out",
        "imported.rs",
    ]);
    let code = sandbox.read("imported.rs");
    let (uses, statements): (Vec<&str>, Vec<&str>) =
        code.lines().partition(|l| l.starts_with("use "));
    let program = format!(
        "#![allow(unused_variables)]\n{}\nuse cairn_sdk::program::{{Context, Result}};\n\nfn main(_ctx: &Context) -> Result<()> {{\n{}\n    Ok(())\n}}\n\ncairn_sdk::export_program!(main);\n",
        uses.join("\n"),
        statements.join("\n")
    );
    std::fs::create_dir_all(sandbox.project.join("prog/src")).unwrap();
    sandbox.write("prog/src/lib.rs", &program);
    sandbox.write(
        "prog/Cargo.toml",
        &format!(
            "[package]\nname = \"imported\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\ncairn-sdk = {{ path = {:?} }}\n\n[workspace]\n\n[profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\ncodegen-units = 1\n",
            repo().join("guest-sdk").to_str().unwrap()
        ),
    );
    // The examples' lock file: the same dependency versions the shared target has built.
    std::fs::copy(
        repo().join("examples/Cargo.lock"),
        sandbox.project.join("prog/Cargo.lock"),
    )
    .unwrap();
    sandbox.write(
        "Pulumi.yaml",
        "name: web\nruntime: wasm\nmain: ./prog\ndescription: imports\n",
    );
    let mut command = sandbox.command(&["preview", "--expect-no-changes"]);
    clean_cargo_env(&mut command);
    let output = command
        .env("CARGO_TARGET_DIR", guest_target())
        .output()
        .expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the generated program does not match the stack:\n{program}\n{stdout}\n{stderr}"
    );
}
