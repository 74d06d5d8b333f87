//! Stack lifecycle: init, ls, select, rm, and the errors around them.

use crate::support::{Sandbox, assert_contains, exists};

#[test]
fn init_list_select_and_remove_stacks() {
    let sandbox = Sandbox::new("web");
    assert_contains(
        &sandbox.ok(&["stack", "init", "dev"]),
        &["Created stack \"dev\""],
    );
    sandbox.ok(&["stack", "init", "prod"]);
    // The newest stack is selected.
    let listing = sandbox.ok(&["stack", "ls"]);
    assert_contains(&listing, &["NAME", "dev ", "prod*"]);

    sandbox.ok(&["stack", "select", "dev"]);
    let rows: serde_json::Value =
        serde_json::from_str(&sandbox.ok(&["stack", "ls", "--json"])).unwrap();
    assert_eq!(rows[0]["name"], "dev");
    assert_eq!(rows[0]["current"], true);
    assert_eq!(rows[1]["current"], false);
    assert_eq!(rows[0]["resourceCount"], 0);

    // Each stack has a settings file with its own encryption salt, and a checkpoint.
    let dev = sandbox.read("Pulumi.dev.yaml");
    let prod = sandbox.read("Pulumi.prod.yaml");
    assert!(dev.starts_with("encryptionsalt: v1:"), "{dev}");
    assert_ne!(dev, prod);
    assert!(exists(&sandbox.state_file("web", "dev")));

    assert_contains(
        &sandbox.fails(&["stack", "init", "dev"]),
        &["stack \"dev\" already exists"],
    );
    assert_contains(
        &sandbox.fails(&["stack", "rm", "prod"]),
        &["needs confirmation: pass --yes"],
    );
    sandbox.ok(&["stack", "rm", "prod", "--yes"]);
    assert!(!exists(&sandbox.project.join("Pulumi.prod.yaml")));
    assert!(!exists(&sandbox.state_file("web", "prod")));
    assert!(!sandbox.ok(&["stack", "ls"]).contains("prod"));

    // `stack` alone describes the selected stack.
    assert_contains(
        &sandbox.ok(&["stack"]),
        &["Current stack is dev", "no resources"],
    );
    // Qualified names work where a name is expected.
    sandbox.ok(&["stack", "select", "organization/web/dev"]);
    sandbox.ok(&["stack", "select", "--create", "qa"]);
    assert_contains(&sandbox.ok(&["stack", "ls"]), &["qa*"]);
}

#[test]
fn stack_errors_say_what_to_do() {
    let sandbox = Sandbox::new("web");
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["stack", "export"],
            &["no stack selected for project \"web\"", "cairn stack init"],
        ),
        (
            &["stack", "select", "nope"],
            &["stack \"nope\" does not exist"],
        ),
        (
            &["stack", "init", "bad name"],
            &["invalid stack name \"bad name\""],
        ),
        (
            &["stack", "init", "organization/other/dev"],
            &["belongs to project \"other\""],
        ),
        (
            &["--stack", "ghost", "stack", "export"],
            &["stack \"ghost\" does not exist"],
        ),
        (
            &["stack", "ls", "--backend", "s3://bucket"],
            &["unsupported backend URL"],
        ),
    ];
    for (args, expected) in cases {
        assert_contains(&sandbox.fails(args), expected);
    }
}

#[test]
fn commands_outside_a_project_name_the_missing_file() {
    let sandbox = Sandbox::new("web");
    std::fs::remove_file(sandbox.project.join("Pulumi.yaml")).unwrap();
    assert_contains(
        &sandbox.fails(&["stack", "ls"]),
        &["no Pulumi.yaml project file found in"],
    );
    sandbox.write("Pulumi.yaml", "runtime: wasm\n");
    assert_contains(&sandbox.fails(&["stack", "ls"]), &["Pulumi.yaml", "name"]);
}

#[test]
fn init_without_a_passphrase_fails_non_interactively() {
    let mut sandbox = Sandbox::new("web");
    sandbox.passphrase = None;
    assert_contains(
        &sandbox.fails(&["stack", "init", "dev"]),
        &["set CAIRN_CONFIG_PASSPHRASE"],
    );
    assert!(!exists(&sandbox.state_file("web", "dev")));
}

#[test]
fn backend_can_be_chosen_by_flag_environment_or_project() {
    let sandbox = Sandbox::new("web");
    let flag_dir = sandbox.project.join("flag-state");
    let url = format!("file://{}", flag_dir.display());
    sandbox.ok(&["--backend", &url, "stack", "init", "a"]);
    assert!(exists(&flag_dir.join("stacks/web/a.json")));

    let env_dir = sandbox.project.join("env-state");
    let output = sandbox
        .command(&["stack", "init", "b"])
        .env("CAIRN_BACKEND_URL", format!("file://{}", env_dir.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(exists(&env_dir.join("stacks/web/b.json")));

    sandbox.write(
        "Pulumi.yaml",
        "name: web\nruntime: wasm\nbackend:\n  url: file://./project-state\n",
    );
    sandbox.ok(&["stack", "init", "c"]);
    assert!(exists(
        &sandbox.project.join("project-state/stacks/web/c.json")
    ));
}

#[test]
fn version_is_printed() {
    let sandbox = Sandbox::new("web");
    assert_contains(
        &sandbox.ok(&["--version"]),
        &["cairn ", env!("CARGO_PKG_VERSION")],
    );
}
