//! `cairn new` and `cairn about`: each template generated into an empty directory deploys as
//! generated (`cairn up --yes`, outputs, `cairn destroy --yes`), with its dependencies
//! installed as `pulumi new` installs them; the refusals (unknown template, non-empty
//! directory, invalid names, no `--yes` when not interactive); `cairn about` in and out of a
//! project, as text and JSON, never showing a password.
//!
//! The Rust templates' guest SDK is written under each sandbox's home; the tests point that
//! home's `sdk` directory at one shared directory (`target/new-sdk`), and `cairn new` writes
//! the SDK's resolved path into the generated `Cargo.toml`, so the SDK is compiled once into
//! the shared guest target directory, not once per test.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, clean_cargo_env, guest_target, outputs, repo};

/// A sandbox whose project directory is `root/<dir>`, empty (not yet a project).
fn empty_project(dir: &str) -> Sandbox {
    let mut sandbox = Sandbox::new("unused");
    sandbox.project = sandbox.root().join(dir);
    std::fs::create_dir_all(&sandbox.project).unwrap();
    sandbox
}

/// Shares the guest SDK directory of the sandbox's home with every other test.
fn share_sdk(sandbox: &Sandbox) {
    let shared = repo().join("target/new-sdk");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(&sandbox.home).unwrap();
    std::os::unix::fs::symlink(shared, sandbox.home.join("sdk")).unwrap();
}

/// Runs `cairn args` in the sandbox with cargo building into the shared guest target.
fn run_building(sandbox: &Sandbox, args: &[&str]) -> Output {
    let mut command = sandbox.command(args);
    clean_cargo_env(&mut command);
    command
        .env("CARGO_TARGET_DIR", guest_target())
        .output()
        .expect("run cairn")
}

fn ok_building(sandbox: &Sandbox, args: &[&str]) -> String {
    let output = run_building(sandbox, args);
    assert!(
        output.status.success(),
        "cairn {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn new_rust_program_deploys_as_generated() {
    let sandbox = empty_project("new-rust-app");
    share_sdk(&sandbox);
    let out = sandbox.ok(&["new", "rust", "--yes"]);
    assert_contains(
        &out,
        &[
            "Created project \"new-rust-app\"",
            "Created stack \"dev\"",
            "ready to go",
            "run `cairn up`",
        ],
    );
    assert_eq!(
        files(&sandbox.project),
        [
            ".gitignore",
            "Cargo.toml",
            "Pulumi.dev.yaml",
            "Pulumi.yaml",
            "README.md",
            "src"
        ]
    );
    // The SDK comes from the home (resolved), never from this repository's checkout.
    let cargo = sandbox.read("Cargo.toml");
    assert_contains(&cargo, &["name = \"new-rust-app\"", "/cairn-sdk-0.1.0-"]);
    let checkout_sdk = repo().canonicalize().unwrap().join("guest-sdk");
    assert!(
        !cargo.contains(&format!("{}\"", checkout_sdk.display())),
        "{cargo}"
    );
    assert_contains(
        &sandbox.read("Pulumi.dev.yaml"),
        &["new-rust-app:name: world"],
    );

    let up = ok_building(&sandbox, &["up", "--yes"]);
    assert_contains(&up, &["new-rust-app:index:App", "2 created"]);
    let outs = outputs(&sandbox, false);
    assert_eq!(outs["greeting"], "Hello, world!");
    assert_eq!(
        outs["appUrn"],
        "urn:pulumi:dev::new-rust-app::new-rust-app:index:App::app"
    );

    sandbox.ok(&["config", "set", "name", "Ada"]);
    ok_building(&sandbox, &["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["greeting"], "Hello, Ada!");
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["2 deleted"]);
}

#[test]
fn new_rust_provider_builds_and_deploys_its_example_with_up_alone() {
    let sandbox = empty_project("provider-dir");
    share_sdk(&sandbox);
    let out = sandbox.ok(&[
        "new",
        "rust-provider",
        "--yes",
        "--name",
        "newgreeter",
        "--description",
        "Greetings, \"quoted\"",
    ]);
    // `cairn up` builds the provider itself: no build or install step to run first.
    assert_contains(&out, &["run `cairn up`"]);
    assert!(!out.contains("cargo build"), "{out}");
    assert_contains(
        &sandbox.read("cairn.json"),
        &[
            "\"name\": \"newgreeter\"",
            "newgreeter:index:Greeting",
            "Greetings, \\\"quoted\\\"",
        ],
    );

    // `cairn up` alone builds the provider (named in Pulumi.yaml's plugins) and the example
    // program, which creates a greeting with the provider; nothing is installed.
    let up = ok_building(&sandbox, &["up", "--yes"]);
    assert_contains(&up, &["newgreeter:index:Greeting", "2 created"]);
    assert_eq!(outputs(&sandbox, false)["message"], "Hello, world!");
    sandbox.ok(&["config", "set", "name", "Grace"]);
    let up = ok_building(&sandbox, &["up", "--yes"]);
    assert_contains(&up, &["1 updated"]);
    assert_eq!(outputs(&sandbox, false)["message"], "Hello, Grace!");
    assert_contains(
        &ok_building(&sandbox, &["destroy", "--yes"]),
        &["2 deleted"],
    );
    assert!(!sandbox.home.join("plugins/newgreeter").exists());
}

#[test]
fn new_python_program_installs_a_virtualenv_and_deploys() {
    let sandbox = empty_project("new-python-app");
    let out = sandbox.run(&["new", "python", "--yes", "-c", "name=Ada"]);
    assert!(
        out.status.success(),
        "cairn new python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_contains(
        &String::from_utf8_lossy(&out.stderr),
        &[
            "Installing dependencies",
            "Finished installing dependencies",
        ],
    );
    assert!(sandbox.project.join("venv/bin/python").is_file());
    let settings = sandbox.read("Pulumi.dev.yaml");
    assert_contains(&settings, &["new-python-app:name: Ada"]);
    assert!(!settings.contains("world"), "{settings}");

    assert_contains(
        &sandbox.ok(&["up", "--yes"]),
        &["new-python-app:index:App", "2 created"],
    );
    assert_eq!(outputs(&sandbox, false)["greeting"], "Hello, Ada!");
    let about: Value = serde_json::from_str(&sandbox.ok(&["about", "--json"])).unwrap();
    assert_eq!(about["project"]["runtime"], "python");
    assert!(
        about["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "pulumi"),
        "{about}"
    );
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["2 deleted"]);
}

#[test]
fn new_typescript_program_runs_npm_install_and_deploys() {
    let sandbox = empty_project("new-ts-app");
    sandbox.ok(&["new", "typescript", "--yes"]);
    assert!(sandbox.project.join("node_modules/@pulumi/pulumi").is_dir());
    assert!(sandbox.project.join("node_modules/typescript").is_dir());
    assert_contains(
        &sandbox.ok(&["up", "--yes"]),
        &["new-ts-app:index:App", "2 created"],
    );
    let outs = outputs(&sandbox, false);
    assert_eq!(outs["greeting"], "Hello, world!");
    assert_eq!(
        outs["appUrn"],
        "urn:pulumi:dev::new-ts-app::new-ts-app:index:App::app"
    );
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["2 deleted"]);
}

#[test]
fn new_lists_templates_and_refuses_what_it_cannot_do() {
    let sandbox = empty_project("new-refusals");
    for args in [&["new"][..], &["new", "--list"], &["new", "rust", "--list"]] {
        assert_contains(
            &sandbox.ok(args),
            &[
                "rust ",
                "rust-provider",
                "python",
                "typescript",
                "python-provider",
                "typescript-provider",
                "go-provider",
                "python-wasm",
                "typescript-wasm",
                "go-wasm",
            ],
        );
    }
    assert_contains(
        &sandbox.fails(&["new", "cobol", "--yes"]),
        &[
            "unknown template \"cobol\"",
            "rust, rust-provider, python-wasm, python-provider, typescript-wasm, typescript-provider, go-wasm, go-provider, python, typescript",
        ],
    );
    // Not interactive (the tests pass --non-interactive): --yes is required.
    assert_contains(&sandbox.fails(&["new", "rust"]), &["--yes"]);
    assert_contains(
        &sandbox.fails(&["new", "rust", "--yes", "--name", "bad name"]),
        &["invalid project name \"bad name\" given to --name"],
    );
    for template in [
        "rust-provider",
        "python-provider",
        "typescript-provider",
        "go-provider",
    ] {
        assert_contains(
            &sandbox.fails(&["new", template, "--yes", "--name", "9lives"]),
            &["package name", template],
        );
    }
    assert_contains(
        &sandbox.fails(&["new", "rust-provider", "--yes", "--name", "9lives"]),
        &["package name"],
    );
    assert_contains(
        &sandbox.fails(&["new", "rust", "--yes", "--stack", "a/b/c/d"]),
        &["invalid stack name"],
    );
    // A directory name that makes no project name for a provider: refused before it is made.
    assert_contains(
        &sandbox.fails(&["new", "rust-provider", "--yes", "1st"]),
        &["made from the directory's name"],
    );
    assert!(!sandbox.project.join("1st").exists());

    // A non-empty directory needs --force, which keeps files the template does not have.
    sandbox.write("notes.txt", "mine");
    assert_contains(
        &sandbox.fails(&["new", "python", "--yes", "--generate-only"]),
        &["is not empty", "--force"],
    );
    assert!(!sandbox.project.join("Pulumi.yaml").exists());
    // --generate-only: the files, no stack and nothing installed.
    let out = sandbox.ok(&["new", "python", "--yes", "--generate-only", "--force"]);
    assert_contains(&out, &["cairn stack init dev", "venv/bin/pip install"]);
    assert_eq!(sandbox.read("notes.txt"), "mine");
    assert!(sandbox.project.join("__main__.py").is_file());
    assert!(!sandbox.project.join("venv").exists());
    assert!(!sandbox.project.join("Pulumi.dev.yaml").exists());
    assert_contains(&sandbox.ok(&["stack", "ls"]), &["No stacks"]);

    // A DIR argument is created; its stack is made; the project name is taken once.
    let out = sandbox.ok(&[
        "new",
        "python",
        "sub dir",
        "--yes",
        "--generate-only",
        "-n",
        "other",
    ]);
    assert_contains(&out, &["cd \"sub dir\""]);
    assert!(sandbox.project.join("sub dir/requirements.txt").is_file());
}

#[test]
fn new_refuses_a_project_name_the_backend_already_has() {
    let sandbox = Sandbox::new("taken");
    sandbox.ok(&["stack", "init", "dev"]);
    let dir = sandbox.root().join("again");
    assert_contains(
        &sandbox.fails(&[
            "new",
            "python",
            dir.to_str().unwrap(),
            "--yes",
            "--name",
            "taken",
        ]),
        &["a project named \"taken\" already has stacks"],
    );
}

#[test]
fn about_in_and_out_of_a_project_never_shows_a_password() {
    // Outside a project.
    let outside = empty_project("about-outside");
    let text = outside.ok(&["about"]);
    assert_contains(
        &text,
        &[
            "CLI",
            "Version",
            "wasmtime",
            "cairn-sdk",
            "Host",
            "No current project",
            "Backend",
        ],
    );
    let json: Value = serde_json::from_str(&outside.ok(&["about", "--json"])).unwrap();
    assert_eq!(json["cli"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        json["cli"]["wasmtimeVersion"]
            .as_str()
            .unwrap()
            .starts_with("48.")
    );
    assert_eq!(json["host"]["os"], std::env::consts::OS);
    assert!(json["project"].is_null());
    assert!(json["currentStack"].is_null());
    assert_eq!(json["backend"]["kind"], "file");
    assert!(json["plugins"].is_array());
    assert!(
        json["runtimes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "cargo")
    );

    // In a project with a stack.
    let sandbox = Sandbox::new("about-project");
    sandbox.ok(&["stack", "init", "dev"]);
    let json: Value = serde_json::from_str(&sandbox.ok(&["about", "--json"])).unwrap();
    assert_eq!(json["project"]["name"], "about-project");
    assert_eq!(json["project"]["runtime"], "wasm");
    assert_eq!(json["currentStack"]["name"], "dev");
    assert_eq!(json["currentStack"]["resources"], 0);
    assert!(
        json["environment"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "CAIRN_CONFIG_PASSPHRASE" && v["value"] == "[secret]"),
        "{json}"
    );
    assert_contains(
        &sandbox.ok(&["about"]),
        &["Current Stack: dev", "about-project"],
    );

    // A backend URL with a password (unreachable): the password appears nowhere.
    let password = "hunter2-about-secret";
    sandbox.secret(password);
    sandbox.secret("pgpassword-about-secret");
    let url = format!("postgres://alice:{password}@127.0.0.1:1/cairn");
    for args in [&["about"][..], &["about", "--json"]] {
        let mut command = sandbox.command(args);
        let output = command
            .env("CAIRN_BACKEND_URL", &url)
            .env("PGPASSWORD", "pgpassword-about-secret")
            .env("PGCONNECT_TIMEOUT", "1")
            .output()
            .expect("run cairn");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        for text in [&stdout, &stderr] {
            assert!(!text.contains(password), "{text}");
            assert!(!text.contains("pgpassword-about-secret"), "{text}");
        }
        assert_contains(&stdout, &["postgres://alice:****@127.0.0.1:1/cairn"]);
    }
}
