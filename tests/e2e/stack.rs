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

/// `stack output --shell`, after pulumi/pulumi pkg/cmd/pulumi/stack/stack_output_test.go
/// (TestStackOutputCmd_shell, TestStackOutputCmd_jsonAndShellConflict): `NAME=VALUE` lines
/// sorted by name, values quoted for a POSIX shell, secrets masked unless shown; control
/// characters in ANSI-C quoting. The script, run by bash, sets exactly the values.
#[test]
fn stack_output_shell_prints_lines_a_shell_can_eval() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let secret = serde_json::json!({
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        "plaintext": "\"hunter2-secret\""
    });
    sandbox.secret("hunter2-secret");
    let state = serde_json::json!({"version": 3, "deployment": {
        "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
        "resources": [{
            "urn": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev",
            "custom": false,
            "type": "pulumi:pulumi:Stack",
            "outputs": {
                "bucketName": "mybucket-1234",
                "password": secret,
                "quoted": "foo 'bar' baz",
                "count": 42,
                "lines": "a\nb\u{1b}[2J",
                "list": [1, "x"]
            }
        }]
    }});
    let file = sandbox.write("state.json", &state.to_string());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);

    let shell = sandbox.ok(&["stack", "output", "--shell"]);
    let expected = [
        "bucketName=mybucket-1234",
        "count=42",
        "lines=$'a\\nb\\x1b[2J'",
        "list=\\[1,\\\"x\\\"]",
        "password=\\[secret]",
        "quoted='foo '\\''bar'\\'' baz'",
    ];
    assert_eq!(shell.lines().collect::<Vec<_>>(), expected, "{shell}");
    assert_eq!(
        sandbox
            .ok(&["stack", "output", "--shell", "bucketName"])
            .trim(),
        "bucketName=mybucket-1234"
    );
    assert_eq!(
        sandbox
            .ok(&["stack", "output", "--shell", "password", "--show-secrets"])
            .trim(),
        "password=hunter2-secret"
    );
    assert_contains(
        &sandbox.fails(&["stack", "output", "--shell", "--json"]),
        &["--json", "--shell"],
    );
    // What bash makes of it.
    let script = format!(
        "{shell}\nprintf '%s|' \"$bucketName\" \"$count\" \"$lines\" \"$list\" \"$password\" \"$quoted\""
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "mybucket-1234|42|a\nb\u{1b}[2J|[1,\"x\"]|[secret]|foo 'bar' baz|"
    );
}

/// Pulumi's variables where Cairn has the same idea: PULUMI_STACK (and CAIRN_STACK) pick the
/// stack when no --stack is given; PULUMI_HOME is the home when CAIRN_HOME is not set.
#[test]
fn pulumi_stack_and_home_variables_are_honoured() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["stack", "init", "prod"]);
    for variable in ["PULUMI_STACK", "CAIRN_STACK"] {
        let out = sandbox
            .command(&["stack"])
            .env(variable, "dev")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_contains(&stdout, &["Current stack is dev"]);
    }
    let flag_wins = sandbox
        .command(&["stack", "-s", "prod"])
        .env("PULUMI_STACK", "dev")
        .output()
        .unwrap();
    assert_contains(
        &String::from_utf8_lossy(&flag_wins.stdout),
        &["Current stack is prod"],
    );

    let pulumi_home = sandbox.root().join("pulumi-home");
    let out = sandbox
        .command(&["stack", "init", "elsewhere"])
        .env_remove("CAIRN_HOME")
        .env("PULUMI_HOME", &pulumi_home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(exists(&pulumi_home.join("stacks/web/elsewhere.json")));
    let empty = sandbox
        .command(&["stack", "ls"])
        .env_remove("CAIRN_HOME")
        .env("PULUMI_HOME", "")
        .output()
        .unwrap();
    assert_contains(
        &String::from_utf8_lossy(&empty.stderr),
        &["PULUMI_HOME is set but empty"],
    );
}

/// `stack graph` on an imported state: Pulumi's DOT text (to a file, with its message, or to
/// standard output), an SVG picture, and a resource name holding markup and quotes kept inert
/// in both.
#[test]
fn stack_graph_draws_dependencies_and_parents() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    // A stack with no resources yet is an empty graph, as in Pulumi.
    assert_eq!(sandbox.ok(&["stack", "graph"]), "strict digraph {\n}\n");
    assert_contains(
        &sandbox.fails(&["stack", "graph", "-s", "nosuch"]),
        &["stack \"nosuch\" does not exist"],
    );
    let stack = "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev";
    let provider = "urn:pulumi:dev::web::pulumi:providers:random::default";
    let pet = "urn:pulumi:dev::web::random:index/randomPet:RandomPet::pet";
    let hostile =
        "urn:pulumi:dev::web::random:index/randomPet:RandomPet::<img src=x onerror=alert(1)>\"x";
    let state = serde_json::json!({"version": 3, "deployment": {
    "manifest": {"time": "2024-01-01T00:00:00Z", "magic": "", "version": ""},
    "resources": [
        {"urn": stack, "custom": false, "type": "pulumi:pulumi:Stack"},
        {"urn": provider, "custom": true, "id": "p1", "type": "pulumi:providers:random"},
        {"urn": pet, "custom": true, "id": "pet-1", "type": "random:index/randomPet:RandomPet",
         "parent": stack, "provider": format!("{provider}::p1"),
         "outputs": {"secretish": "hunter2-very-secret"}},
        {"urn": hostile, "custom": true, "id": "h-1", "type": "random:index/randomPet:RandomPet",
         "parent": stack, "provider": format!("{provider}::p1"),
         "dependencies": [pet], "propertyDependencies": {"prefix": [pet], "length": [pet]}},
    ]}});
    let file = sandbox.write("state.json", &state.to_string());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);

    let out = sandbox.root().join("graph.dot");
    let output = sandbox.run(&["stack", "graph", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &["Wrote stack dependency graph to `", "graph.dot`"],
    );
    let dot = std::fs::read_to_string(&out).unwrap();
    // Nodes in URN order (the provider's `pulumi:providers` sorts before `pulumi:pulumi`),
    // numbered on first mention; a node's edges in the order the state's entries give them
    // (the pet's parent edge, then its dependent); a dependency edge names its properties.
    let expected = format!(
        "strict digraph {{
    Resource0 [label=\"{provider}\"];
    Resource1 [label=\"{stack}\"];
    Resource2 [label=\"{escaped}\"];
    Resource2 -> Resource1 [color = \"#AA6639\"];
    Resource3 [label=\"{pet}\"];
    Resource3 -> Resource1 [color = \"#AA6639\"];
    Resource3 -> Resource2 [color = \"#246C60\", label = \"length, prefix\"];
}}
",
        escaped = hostile.replace('"', "\\\"")
    );
    assert_eq!(dot, expected);
    assert_eq!(sandbox.ok(&["stack", "graph"]), expected, "standard output");
    assert!(!dot.contains("hunter2"), "no property values in a graph");

    let short = sandbox.ok(&[
        "stack",
        "graph",
        "--short-node-name",
        "--ignore-parent-edges",
        "--dependency-edge-color",
        "red",
    ]);
    assert_contains(
        &short,
        &[
            "[label=\"pet\"]",
            "[color = \"red\", label = \"length, prefix\"]",
        ],
    );
    assert!(!short.contains("#AA6639"), "{short}");

    let svg_file = sandbox.root().join("graph.svg");
    sandbox.ok(&["stack", "graph", svg_file.to_str().unwrap()]);
    let svg = std::fs::read_to_string(&svg_file).unwrap();
    assert!(svg.contains("<svg") && svg.contains("pet"), "{svg}");
    assert!(svg.contains("&lt;img src=x onerror=alert(1)&gt;"), "{svg}");
    assert!(
        !svg.contains("<img"),
        "markup from a name must stay text: {svg}"
    );
    assert_contains(
        &sandbox.fails(&[
            "stack",
            "graph",
            "--format",
            "svg",
            "--parent-edge-color",
            "no-such",
        ]),
        &["--parent-edge-color", "\"no-such\" is not a colour"],
    );
}
