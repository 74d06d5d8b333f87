//! Programs written with the real Pulumi SDKs (from PyPI and npm), deployed by Cairn
//! unchanged: SDK resources through the SDK's own dynamic-provider plugin, Cairn wasm
//! providers resolved by package, components, dependsOn, protect, aliases, config, outputs,
//! refresh and destroy.

use serde_json::Value;

use crate::support::{
    Sandbox, assert_contains, example_wasm, finished_steps, node_modules, ops_of, outputs, python,
    repo, test_wasm,
};

/// The SDK an example program is written with.
#[derive(Clone, Copy)]
enum Sdk {
    Python,
    Node,
}

/// A sandbox holding the example program of `sdk` (examples/programs/python or nodejs), with
/// the SDK installed where the project expects it; also the dynamic resource type and the
/// project name.
fn sdk_project(sdk: Sdk) -> (Sandbox, &'static str, &'static str) {
    let (project, dir, files) = match sdk {
        Sdk::Python => ("python-demo", "python", &["__main__.py"][..]),
        Sdk::Node => ("nodejs-demo", "nodejs", &["index.js", "package.json"][..]),
    };
    let sandbox = Sandbox::new(project);
    let example = repo().join("examples/programs").join(dir);
    for file in files {
        std::fs::copy(example.join(file), sandbox.project.join(file)).unwrap();
    }
    let mut yaml = std::fs::read_to_string(example.join("Pulumi.yaml")).unwrap();
    match sdk {
        Sdk::Python => {
            let python = python();
            let venv = python.parent().unwrap().parent().unwrap();
            yaml = yaml.replace(
                "virtualenv: venv",
                &format!("virtualenv: {}", venv.display()),
            );
        }
        Sdk::Node => {
            std::os::unix::fs::symlink(node_modules(), sandbox.project.join("node_modules"))
                .unwrap();
        }
    }
    sandbox.write("Pulumi.yaml", &yaml);
    let dynamic = match sdk {
        Sdk::Python => "pulumi-python:dynamic:Resource",
        Sdk::Node => "pulumi-nodejs:dynamic:Resource",
    };
    (sandbox, dynamic, project)
}

#[test]
fn a_python_sdk_program_with_dynamic_and_wasm_providers() {
    sdk_program_lifecycle(Sdk::Python);
}

#[test]
fn a_nodejs_sdk_program_with_dynamic_and_wasm_providers() {
    sdk_program_lifecycle(Sdk::Node);
}

/// Both example programs declare the same resources and outputs; the same expectations hold.
fn sdk_program_lifecycle(sdk: Sdk) {
    let (sandbox, dynamic, project) = sdk_project(sdk);
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&[
        "plugin",
        "install",
        example_wasm("random").to_str().unwrap(),
    ]);

    // Missing secret config: the SDK's own error, shown as the program's failure.
    assert_contains(&sandbox.fails(&["up", "--yes"]), &["token"]);
    sandbox.ok(&["config", "set", "--secret", "token", "tok-123"]);

    // (The failed run may have created some resources already.)
    let out = sandbox.ok(&["up", "--yes"]);
    assert_contains(
        &out,
        &[dynamic, "random:index/randomPet:RandomPet", "created"],
    );
    let v1 = outputs(&sandbox, false);
    assert_eq!(v1["version"], 1);
    assert_eq!(v1["label"], "v1:stable text");
    assert_eq!(v1["message"], "msg:hello from version 1");
    assert_eq!(v1["greeting"], "greeting:hello", "a component's output");
    assert_eq!(v1["password"], "[secret]");
    assert_eq!(v1["token"], "[secret]");
    assert_eq!(outputs(&sandbox, true)["token"], "tok-123");
    assert_eq!(
        outputs(&sandbox, true)["password"].as_str().unwrap().len(),
        16
    );

    // Nothing changed: nothing to do.
    assert_contains(&sandbox.ok(&["up", "--yes"]), &["8 unchanged"]);

    // Version 2: replace, update, alias.
    sandbox.ok(&["config", "set", "version", "2"]);
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(
        ops_of(&run, "label").iter().any(|op| op == "replace"),
        "{run:?}"
    );
    assert_eq!(ops_of(&run, "message"), ["update"], "{run:?}");
    assert_eq!(
        ops_of(&run, "welcome"),
        ["same"],
        "the alias keeps the component: {run:?}"
    );
    assert!(ops_of(&run, "greeter").is_empty(), "{run:?}");
    let v2 = outputs(&sandbox, false);
    assert_eq!(v2["label"], "v2:stable text");
    assert_eq!(v2["message"], "msg:hello from version 2");
    assert_eq!(v2["pet"], v1["pet"]);
    assert_eq!(v2["id"], v1["id"]);

    // dependsOn: message was registered after the pet it depends on.
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let message = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["urn"].as_str().unwrap().ends_with("::message"))
        .unwrap();
    assert!(
        message["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().ends_with("RandomPet::pet")),
        "{message}"
    );

    sandbox.ok(&["refresh", "--yes"]);
    // The protected UUID stops destroy until it is unprotected.
    assert_contains(
        &sandbox.fails(&["destroy", "--yes"]),
        &["protected", "RandomUuid::id"],
    );
    sandbox.ok(&[
        "state",
        "unprotect",
        &format!("urn:pulumi:dev::{project}::random:index/randomUuid:RandomUuid::id"),
    ]);
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["8 deleted"]);
}

/// A Python project `name` running `program` (a file of `tests/data/python-provider`) with the
/// Python provider plugin `provider` (a directory there) named in its Pulumi.yaml.
fn python_provider_project(name: &str, program: &str, provider: &str) -> Sandbox {
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    let sandbox = Sandbox::new(name);
    let data = repo().join("tests/data/python-provider");
    std::fs::create_dir_all(sandbox.project.join(provider)).unwrap();
    std::fs::copy(data.join(program), sandbox.project.join("__main__.py")).unwrap();
    std::fs::copy(
        data.join(provider).join("__main__.py"),
        sandbox.project.join(provider).join("__main__.py"),
    )
    .unwrap();
    sandbox.write(
        &format!("{provider}/PulumiPlugin.yaml"),
        &std::fs::read_to_string(data.join(provider).join("PulumiPlugin.yaml"))
            .unwrap()
            .replace("VENV", &venv.display().to_string()),
    );
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: {name}\nruntime:\n  name: python\n  options:\n    virtualenv: {}\nplugins:\n  providers:\n    - name: {provider}\n      path: ./{provider}\n",
            venv.display()
        ),
    );
    sandbox
}

#[test]
fn a_python_provider_plugin_builds_a_component() {
    let sandbox = python_provider_project("uses-greeter", "__main__.py", "greeter");
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&[
        "plugin",
        "install",
        example_wasm("random").to_str().unwrap(),
    ]);
    let out = sandbox.ok(&["up", "--yes"]);
    assert_contains(
        &out,
        &[
            "greeter:index:Greeter",
            "random:index/randomPet:RandomPet",
            "hi-pet",
        ],
    );
    let outputs = outputs(&sandbox, false);
    let message = outputs["message"].as_str().unwrap();
    assert!(message.starts_with("hey, "), "{message}");
    assert_eq!(outputs["shouted"], "QUIET");
    // The component's child (registered by the plugin) is in the state, parented to it.
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let pet = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "random:index/randomPet:RandomPet")
        .expect("the plugin's child resource");
    assert!(
        pet["parent"]
            .as_str()
            .unwrap()
            .ends_with("greeter:index:Greeter::hi"),
        "{pet}"
    );
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["deleted"]);
}

/// A project whose program declares `crashy:index:Thing` `boom` served by the hostile plugin
/// (tests/data/hostile-plugin/pulumi-resource-crashy).
pub(crate) fn crashy_project() -> Sandbox {
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    let sandbox = Sandbox::new("crash");
    let script =
        std::fs::read_to_string(repo().join("tests/data/hostile-plugin/pulumi-resource-crashy"))
            .unwrap()
            .replace("#!PYTHON", &format!("#!{}", python.display()));
    std::fs::create_dir_all(sandbox.project.join("plugins")).unwrap();
    let plugin = sandbox.write("plugins/pulumi-resource-crashy", &script);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    sandbox.write(
        "__main__.py",
        "import pulumi\npulumi.CustomResource('crashy:index:Thing', 'boom', {'size': 1})\n",
    );
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: crash\nruntime:\n  name: python\n  options:\n    virtualenv: {}\nplugins:\n  providers:\n    - name: crashy\n      path: ./plugins\n",
            venv.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

#[test]
fn a_plugin_that_hangs_mid_create_times_out_naming_it() {
    let sandbox = crashy_project();
    let output = sandbox
        .command(&["up", "--yes"])
        .env("CRASHY_HANG", "1")
        .env("CAIRN_PLUGIN_CALL_TIMEOUT", "2")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &["pulumi-resource-crashy Create", "did not answer within 2 s"],
    );
}

/// Two things of the crashy plugin: `keep`, then `boom` (which depends on it).
const KEEP_AND_BOOM: &str = "import pulumi\n\
    keep = pulumi.CustomResource('crashy:index:Thing', 'keep', {'size': 1})\n\
    pulumi.CustomResource('crashy:index:Thing', 'boom', {'size': 2}, pulumi.ResourceOptions(depends_on=[keep]))\n";

/// `cairn up --yes` with the crashy plugin dying where `crash` says; returns its stderr.
fn up_crashing(sandbox: &Sandbox, crash: &str) -> String {
    let output = sandbox
        .command(&["up", "--yes"])
        .env("CRASHY_CRASH", crash)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() == (crash == "none"),
        "{crash}: {stderr}"
    );
    stderr
}

/// The pending operations of a stack's state: `(type, resource name)`.
fn pending(state: &Value) -> Vec<(String, String)> {
    state["deployment"]["pending_operations"]
        .as_array()
        .map(|ops| {
            ops.iter()
                .map(|op| {
                    let urn = op["resource"]["urn"].as_str().unwrap_or_default();
                    (
                        op["type"].as_str().unwrap_or_default().to_owned(),
                        urn.rsplit("::").next().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A plugin that dies during a Create or a Delete: whether the operation took effect is
/// unknown, so it is left pending; the error says so and quotes the plugin; everything else
/// the deployment did is recorded.
#[test]
fn a_plugin_that_dies_mid_create_or_delete_leaves_the_operation_pending() {
    // Create.
    let sandbox = crashy_project();
    sandbox.write("__main__.py", KEEP_AND_BOOM);
    assert_contains(
        &up_crashing(&sandbox, "create:boom"),
        &[
            "pulumi-resource-crashy Create: the plugin exited unexpectedly",
            "segmentation fault while creating",
            "whether the operation took effect is unknown",
        ],
    );
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert_eq!(
        pending(&state),
        [("creating".to_owned(), "boom".to_owned())]
    );
    assert_eq!(
        resource(&state, "keep").expect("keep is recorded")["id"],
        "keep"
    );
    assert!(resource(&state, "boom").is_none(), "boom was never created");

    // Delete.
    let sandbox = crashy_project();
    sandbox.write("__main__.py", KEEP_AND_BOOM);
    up_crashing(&sandbox, "none");
    sandbox.write(
        "__main__.py",
        "import pulumi\npulumi.CustomResource('crashy:index:Thing', 'keep', {'size': 1})\n",
    );
    assert_contains(
        &up_crashing(&sandbox, "delete:boom"),
        &[
            "pulumi-resource-crashy Delete: the plugin exited unexpectedly",
            "segmentation fault while deleting",
            "whether the operation took effect is unknown",
        ],
    );
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert_eq!(
        pending(&state),
        [("deleting".to_owned(), "boom".to_owned())]
    );
    assert_eq!(
        resource(&state, "keep").expect("keep is kept")["id"],
        "keep"
    );
    assert_eq!(
        resource(&state, "boom").expect("boom may still exist: it stays recorded")["id"],
        "boom"
    );
}

/// A Python project `hostile` whose program is `program`, with the hostile plugin
/// (tests/data/hostile-plugin/pulumi-resource-hostile) named in its Pulumi.yaml for package
/// `hostile`.
fn hostile_project(program: &str) -> Sandbox {
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    let sandbox = Sandbox::new("hostile");
    let script =
        std::fs::read_to_string(repo().join("tests/data/hostile-plugin/pulumi-resource-hostile"))
            .unwrap()
            .replace("#!PYTHON", &format!("#!{}", python.display()));
    std::fs::create_dir_all(sandbox.project.join("plugins")).unwrap();
    let plugin = sandbox.write("plugins/pulumi-resource-hostile", &script);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    sandbox.write("__main__.py", program);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: hostile\nruntime:\n  name: python\n  options:\n    virtualenv: {}\nplugins:\n  providers:\n    - name: hostile\n      path: ./plugins\n",
            venv.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

/// The stack's state, checked to have no pending operation.
fn settled_state(sandbox: &Sandbox) -> Value {
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let pending = &state["deployment"]["pending_operations"];
    assert!(
        pending.is_null() || pending.as_array().is_some_and(Vec::is_empty),
        "{pending}"
    );
    state
}

fn resource<'a>(state: &'a Value, name: &str) -> Option<&'a Value> {
    state["deployment"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["urn"].as_str().unwrap().ends_with(&format!("::{name}")))
}

const NAN_PROBLEM: &str = "is not a number JSON can store (NaN and infinities are refused)";

#[test]
fn a_python_program_sending_nan_or_infinity_is_refused_naming_the_property() {
    let program = |ratio: &str| {
        format!(
            "import pulumi\n\
             pulumi.CustomResource('hostile:index:Thing', 'a', {{'size': 1}})\n\
             pulumi.CustomResource('hostile:index:Thing', 'b', {{'tags': {{'ratio': {ratio}, 'limits': [1, 2]}}}})\n"
        )
    };
    let sandbox = hostile_project(&program("float('nan')"));
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[&format!(
            "RegisterResource hostile:index:Thing \"b\": object: property tags.ratio: NaN {NAN_PROBLEM}"
        )],
    );
    let state = settled_state(&sandbox);
    assert!(resource(&state, "b").is_none(), "nothing was created for b");

    sandbox.write("__main__.py", &program("float('-inf')"));
    assert_contains(
        &sandbox.fails(&["up", "--yes"]),
        &[&format!("property tags.ratio: -inf {NAN_PROBLEM}")],
    );
    settled_state(&sandbox);

    // Fixed, the next update works.
    sandbox.write("__main__.py", &program("0.5"));
    sandbox.ok(&["up", "--yes"]);
    let state = settled_state(&sandbox);
    assert_eq!(resource(&state, "b").unwrap()["id"], "b-1");
    assert_eq!(resource(&state, "a").unwrap()["id"], "a-1");
}

#[test]
fn a_plugin_whose_created_outputs_hold_nan_leaves_the_resource_tracked() {
    let sandbox = hostile_project(
        "import pulumi\npulumi.CustomResource('hostile:index:Thing', 't', {'size': 1})\n",
    );
    let output = sandbox
        .command(&["up", "--yes"])
        .env("HOSTILE_MODE", "nan-outputs")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &[&format!(
            "pulumi-resource-hostile Create: the resource \"t-1\" was created but the plugin's outputs cannot be accepted (property limits.max: inf {NAN_PROBLEM}; property ratio: NaN {NAN_PROBLEM}); it is recorded without them"
        )],
    );
    // The resource exists: it is in the state with its ID and the outputs that could be kept.
    let state = settled_state(&sandbox);
    let thing = resource(&state, "t").expect("the created resource is tracked");
    assert_eq!(thing["id"], "t-1");
    assert_eq!(thing["outputs"]["created"], true);
    assert!(thing["outputs"].get("ratio").is_none(), "{thing}");

    // The plugin behaves again: the next update works and keeps the same resource.
    sandbox.ok(&["up", "--yes"]);
    let state = settled_state(&sandbox);
    assert_eq!(resource(&state, "t").unwrap()["id"], "t-1");
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["deleted"]);
}

#[test]
fn a_plugin_flooding_the_engine_log_is_capped_with_a_note() {
    let sandbox = hostile_project(
        "import pulumi\npulumi.CustomResource('hostile:index:Thing', 't', {'size': 1})\n",
    );
    let output = sandbox
        .command(&["up", "--yes"])
        .env("HOSTILE_MODE", "log-flood")
        .output()
        .unwrap();
    let shown = output.stdout.len() + output.stderr.len();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "{}",
        &all[all.len().saturating_sub(2000)..]
    );
    // 400 messages of 64 KiB were sent: about 8 MiB are shown, then one note.
    assert!(shown < 10 * 1024 * 1024, "{shown} bytes of output");
    assert!(shown > 7 * 1024 * 1024, "{shown} bytes of output");
    assert_contains(
        &all,
        &[
            "log messages sent to the engine exceeded 8 MiB (the log limit; CAIRN_GRPC_LOG_MB raises it): further lines are dropped",
        ],
    );
    assert_eq!(
        resource(&settled_state(&sandbox), "t").unwrap()["id"],
        "t-1"
    );
}

#[test]
fn a_construct_answering_with_another_resource_s_urn_is_refused() {
    let sandbox = hostile_project(
        "import pulumi\n\
         class Comp(pulumi.ComponentResource):\n\
         \x20   def __init__(self, name):\n\
         \x20       super().__init__('hostile:index:Comp', name, None, None, remote=True)\n\
         Comp('c')\n",
    );
    let output = sandbox
        .command(&["up", "--yes"])
        .env("HOSTILE_MODE", "construct-urn")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &[
            "pulumi-resource-hostile Construct: the plugin answered with the URN \"urn:pulumi:dev::hostile::random:index/randomPassword:RandomPassword::victim\", not the component's urn:pulumi:dev::hostile::hostile:index:Comp::c",
        ],
    );
    settled_state(&sandbox);
    // Answering without registering the component at all is refused too.
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "constructing urn:pulumi:dev::hostile::hostile:index:Comp::c failed: hostile@0.0.1 did not register the component it was asked to build",
        ],
    );
    settled_state(&sandbox);
    sandbox.write("__main__.py", "import pulumi\n");
    sandbox.ok(&["up", "--yes"]);
    settled_state(&sandbox);
}

/// A component provider written with the Python SDK that tries to reach outside its component
/// in `Construct`: every attempt is refused naming the provider, the component and the URN,
/// the program's own resources are untouched, and the next `up` works.
#[test]
fn a_python_component_provider_cannot_reach_outside_its_component() {
    let sandbox = python_provider_project("escape", "escape.py", "escaper");
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&[
        "plugin",
        "install",
        example_wasm("random").to_str().unwrap(),
    ]);
    let up = |how: &str| {
        sandbox
            .command(&["up", "--yes"])
            .env("HOW", how)
            .output()
            .unwrap()
    };
    let first = up("none");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let export = || -> Value { serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap() };
    let victim = |state: &Value| {
        state["deployment"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["type"] == "random:index/randomPassword:RandomPassword")
            .cloned()
            .expect("the victim")
    };
    let before = victim(&export());
    let component = "urn:pulumi:dev::escape::escaper:index:Escaper::esc";
    for (how, detail) in [
        (
            "root",
            // The SDK sends no parent, or the stack's, depending on its version.
            "it registered urn:pulumi:dev::escape::random:index/randomPassword:RandomPassword::victim with parent ",
        ),
        (
            "outputs",
            "it set the outputs of urn:pulumi:dev::escape::pulumi:pulumi:Stack::escape-dev, which is outside the component",
        ),
    ] {
        let output = up(how);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{how}: the escape succeeded");
        assert_contains(
            &stderr,
            &[
                &format!("constructing {component} failed: escaper@"),
                &format!("construct of {component} was refused: "),
                detail,
            ],
        );
        let state = export();
        assert_eq!(victim(&state), before, "{how}: the victim changed");
        // The next honest deployment works from what was saved.
        let next = up("honest");
        assert!(
            next.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&next.stderr)
        );
    }
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["deleted"]);
}

/// Every file under `dir` (state, journals, history, backups), read whole.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    crate::support::tree(dir)
        .into_iter()
        .filter_map(|(path, bytes)| bytes.map(|b| (path, b)))
        .collect()
}

#[test]
fn a_secret_given_to_a_dynamic_provider_stays_secret() {
    // Dynamic providers do not accept secrets: the SDK's provider gets (and returns) plain
    // text. What came from a secret input must be secret again in the state and the display.
    const SECRET: &str = "hunter2-plain-secret";
    let (sandbox, _, _) = sdk_project(Sdk::Python);
    sandbox.write(
        "__main__.py",
        &format!(
            r#"import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class Echo(ResourceProvider):
    def create(self, props):
        return CreateResult(id_="echo-1", outs={{**props, "echo": props["password"], "nested": {{"pw": props["password"], "plain": "x"}}}})


class Thing(Resource):
    password: pulumi.Output[str]
    echo: pulumi.Output[str]
    nested: pulumi.Output[dict]

    def __init__(self, name, password):
        super().__init__(Echo(), name, {{"password": password, "echo": None, "nested": None, "note": "visible"}})


thing = Thing("thing", pulumi.Output.secret("{SECRET}"))
pulumi.export("password", thing.password)
pulumi.export("echo", thing.echo)
"#
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let preview = sandbox.run(&["preview", "--show-sames"]);
    let up = sandbox.run(&["up", "--yes"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let shown = sandbox.run(&["stack", "output"]);
    for (what, output) in [("preview", &preview), ("up", &up), ("stack output", &shown)] {
        for stream in [&output.stdout, &output.stderr] {
            assert!(
                !String::from_utf8_lossy(stream).contains(SECRET),
                "{what} shows the secret: {}",
                String::from_utf8_lossy(stream)
            );
        }
    }
    for (path, bytes) in files_under(&sandbox.home) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{} holds the secret in plain text",
            path.display()
        );
    }
    let v = outputs(&sandbox, false);
    assert_eq!(v["password"], "[secret]");
    assert_eq!(v["echo"], "[secret]");
    assert_eq!(outputs(&sandbox, true)["echo"], SECRET);
    // Only the member that came from the secret is secret in the nested output.
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let thing = resource(&state, "thing").unwrap();
    assert_eq!(thing["outputs"]["nested"]["plain"], "x", "{thing}");
    assert!(
        thing["outputs"]["nested"]["pw"]["ciphertext"].is_string(),
        "{thing}"
    );
    assert!(
        thing["inputs"]["password"]["ciphertext"].is_string(),
        "{thing}"
    );
    assert_eq!(thing["inputs"]["note"], "visible");
}

/// A program that raises: its traceback (Python) or stack (Node.js) is shown once, in the
/// Diagnostics section under the stack, and the command's error names the exception without
/// repeating the trace.
#[test]
fn an_unhandled_exception_is_told_once() {
    for sdk in [Sdk::Python, Sdk::Node] {
        let (sandbox, _, project) = sdk_project(sdk);
        let marker = "the-marker-of-a-failed-program";
        match sdk {
            Sdk::Python => sandbox.write(
                "__main__.py",
                &format!("def deep():\n    raise ValueError(\"{marker}\")\n\ndeep()\n"),
            ),
            Sdk::Node => sandbox.write(
                "index.js",
                &format!("function deep() {{ throw new Error(\"{marker}\"); }}\ndeep();\n"),
            ),
        };
        sandbox.ok(&["stack", "init", "dev"]);
        let out = sandbox.run(&["up", "--yes"]);
        assert!(!out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let all = format!("{stdout}{stderr}");
        // The error names the exception (its last line) without the trace.
        assert!(stderr.contains(marker), "{stderr}");
        let trace_line = match sdk {
            Sdk::Python => "in deep",
            Sdk::Node => "at deep",
        };
        assert_eq!(all.matches(trace_line).count(), 1, "the trace once:\n{all}");
        assert_contains(
            &stdout,
            &[
                "Diagnostics:\n",
                &format!("  pulumi:pulumi:Stack ({project}-dev):\n    error: "),
            ],
        );
        assert!(!stderr.contains(trace_line), "{stderr}");
    }
}

/// `up --continue-on-error` with SDK programs (Pulumi's TestUpContinueOnErrorCreate through
/// the SDKs' result reporting): the failed registration is answered `FAIL`, its dependent
/// `SKIP`, the program runs to its end, so independent work and the deletion of what the
/// program no longer declares still happen; the update still fails, naming the error.
#[test]
fn sdk_programs_carry_on_without_a_failed_resource_under_continue_on_error() {
    for sdk in [Sdk::Python, Sdk::Node] {
        let (sandbox, _, project) = sdk_project(sdk);
        match sdk {
            Sdk::Python => sandbox.write(
                "__main__.py",
                "import pulumi\n\
                 T = \"probe:index:Thing\"\n\
                 if pulumi.Config().get_bool(\"first\"):\n\
                 \x20   pulumi.CustomResource(T, \"old\", {})\n\
                 else:\n\
                 \x20   bad = pulumi.CustomResource(T, \"bad\", {\"fail\": \"create refused on purpose\"})\n\
                 \x20   pulumi.CustomResource(T, \"dependent\", {}, pulumi.ResourceOptions(depends_on=[bad]))\n\
                 \x20   good = pulumi.CustomResource(T, \"good\", {})\n\
                 \x20   pulumi.CustomResource(T, \"after-good\", {}, pulumi.ResourceOptions(depends_on=[good]))\n\
                 \x20   pulumi.export(\"good\", good.id)\n",
            ),
            Sdk::Node => sandbox.write(
                "index.js",
                "const pulumi = require(\"@pulumi/pulumi\");\n\
                 const T = \"probe:index:Thing\";\n\
                 if (new pulumi.Config().getBoolean(\"first\")) {\n\
                 \x20   new pulumi.CustomResource(T, \"old\", {});\n\
                 } else {\n\
                 \x20   const bad = new pulumi.CustomResource(T, \"bad\", { fail: \"create refused on purpose\" });\n\
                 \x20   new pulumi.CustomResource(T, \"dependent\", {}, { dependsOn: [bad] });\n\
                 \x20   const good = new pulumi.CustomResource(T, \"good\", {});\n\
                 \x20   new pulumi.CustomResource(T, \"after-good\", {}, { dependsOn: [good] });\n\
                 \x20   exports.good = good.id;\n\
                 }\n",
            ),
        };
        sandbox.ok(&["stack", "init", "dev"]);
        sandbox.ok(&["plugin", "install", test_wasm("probe").to_str().unwrap()]);
        sandbox.ok(&["config", "set", "first", "true"]);
        sandbox.ok(&["up", "--yes", "--skip-preview"]);
        sandbox.ok(&["config", "set", "first", "false"]);

        let err = sandbox.fails(&["up", "--yes", "--skip-preview", "--continue-on-error"]);
        assert_contains(&err, &["create refused on purpose"]);
        assert!(
            !err.contains("resource registration failed") && !err.contains("Traceback"),
            "the program itself did not fail: {err}"
        );
        let state = std::fs::read_to_string(sandbox.state_file(project, "dev")).unwrap();
        let thing = |name: &str| format!("probe:index:Thing::{name}\"");
        for present in ["good", "after-good"] {
            assert!(state.contains(&thing(present)), "{present}: {state}");
        }
        for absent in ["bad", "dependent", "old"] {
            assert!(!state.contains(&thing(absent)), "{absent}: {state}");
        }
    }
}
