//! The gRPC bridge from the CLI: wasm providers served as plugins (`cairn provider serve`,
//! `cairn plugin export-grpc`) and used by Cairn's own engine through the plugin protocol, and
//! by a third-party client (the Pulumi Python SDK's generated `ResourceProviderStub`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, example_wasm, outputs, python, test_wasm};

/// `cairn provider serve FILE` in the background; returns the process and its port.
fn serve(sandbox: &Sandbox, file: &std::path::Path) -> (std::process::Child, u16) {
    let mut child = sandbox
        .command(&["provider", "serve", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start cairn provider serve");
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    let port = first
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a port: {first:?}"));
    (child, port)
}

#[test]
fn the_python_sdk_stub_drives_a_served_wasm_provider() {
    let sandbox = Sandbox::new("stub");
    let (mut server, port) = serve(&sandbox, &example_wasm("random"));
    let script = r#"
import json, sys
import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

stub = provider_pb2_grpc.ResourceProviderStub(grpc.insecure_channel("127.0.0.1:" + sys.argv[1]))
info = stub.GetPluginInfo(empty_pb2.Empty())
schema = stub.GetSchema(provider_pb2.GetSchemaRequest())
configured = stub.Configure(provider_pb2.ConfigureRequest(acceptSecrets=True, acceptResources=True))
urn = "urn:pulumi:dev::stub::random:index/randomPassword:RandomPassword::pw"
news = struct_pb2.Struct()
news.update({"length": 14})
checked = stub.Check(provider_pb2.CheckRequest(urn=urn, news=news, randomSeed=b"seed"))
created = stub.Create(provider_pb2.CreateRequest(urn=urn, properties=checked.inputs))
result = created.properties["result"]
sig = "4dabf18193072939515e22adb298388d"
secret = result[sig] == "1b47061264138c4ac30d75fd1eb44270" if hasattr(result, "keys") else False
try:
    stub.Create(provider_pb2.CreateRequest(urn="urn:pulumi:dev::stub::random:index:Nope::x", properties=news))
    unknown_type = "accepted"
except grpc.RpcError as e:
    unknown_type = e.details()
stub.Cancel(empty_pb2.Empty())
print(json.dumps({
    "version": info.version,
    "hasPassword": "random:index/randomPassword:RandomPassword" in json.loads(schema.schema)["resources"],
    "acceptSecrets": configured.acceptSecrets,
    "id": created.id,
    "secret": secret,
    "length": len(result["value"]) if secret else None,
    "unknownType": unknown_type,
}))
"#;
    let out = Command::new(python())
        .args(["-c", script, &port.to_string()])
        .output()
        .expect("run python");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["version"], "4.21.4");
    assert_eq!(report["hasPassword"], true);
    assert_eq!(report["acceptSecrets"], true);
    assert!(!report["id"].as_str().unwrap().is_empty());
    assert_eq!(
        report["secret"], true,
        "a password is sent as a secret: {report}"
    );
    assert_eq!(report["length"], 14);
    assert!(
        report["unknownType"].as_str().unwrap().contains("Nope"),
        "{report}"
    );
}

#[test]
fn an_exported_grpc_plugin_deploys_through_the_plugin_protocol() {
    let sandbox = Sandbox::new("prog");
    let plugins = sandbox.project.join("grpc-plugins");
    let out = sandbox.ok(&[
        "plugin",
        "export-grpc",
        test_wasm("probe").to_str().unwrap(),
        "-o",
        plugins.to_str().unwrap(),
    ]);
    assert_contains(&out, &["pulumi-resource-probe"]);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: prog\nruntime: wasm\nmain: {}\nplugins:\n  providers:\n    - name: probe\n      path: ./grpc-plugins\n",
            test_wasm("program-probe").display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["config", "set", "count", "2"]);
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    // No wasm provider is installed: `probe` resolves to the gRPC plugin.
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["count"], 2);
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let things: Vec<&Value> = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "probe:index:Thing")
        .collect();
    let mut ids: Vec<&str> = things.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["thing-t0", "thing-t1"]);
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["deleted"]);
}

#[test]
fn a_package_with_no_provider_anywhere_is_named() {
    let sandbox = Sandbox::new("prog");
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: prog\nruntime: wasm\nmain: {}\n",
            test_wasm("program-probe").display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "probe",
            "no wasm provider found",
            "name a provider in Pulumi.yaml",
            "never start native plugins found on PATH or in the plugin directory",
        ],
    );
}

/// A wasm program never starts a native plugin it finds by lookup (the Cairn plugin
/// directory, PATH): only one the project names.
#[test]
fn a_wasm_program_starts_only_native_plugins_the_project_names() {
    let sandbox = Sandbox::new("prog");
    let bin = sandbox.home.join("plugins/bin");
    sandbox.ok(&[
        "plugin",
        "export-grpc",
        test_wasm("probe").to_str().unwrap(),
        "-o",
        bin.to_str().unwrap(),
    ]);
    // The plugin leaves a mark when it is started.
    let marker = sandbox.project.join("plugin-started");
    let launcher = bin.join("pulumi-resource-probe");
    std::fs::rename(&launcher, bin.join("real-probe")).unwrap();
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            bin.join("real-probe").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    let project = |plugins: &str| {
        format!(
            "name: prog\nruntime: wasm\nmain: {}\n{plugins}",
            test_wasm("program-probe").display()
        )
    };
    sandbox.write("Pulumi.yaml", &project(""));
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["config", "set", "count", "1"]);
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let refused = sandbox
        .command(&["up", "--yes"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert_contains(
        &String::from_utf8_lossy(&refused.stderr),
        &[
            "no wasm provider found",
            "never start native plugins found on PATH",
        ],
    );
    assert!(!marker.exists(), "the plugin was started");

    sandbox.write(
        "Pulumi.yaml",
        &project(&format!(
            "plugins:\n  providers:\n    - name: probe\n      path: {}\n",
            bin.display()
        )),
    );
    sandbox.ok(&["up", "--yes"]);
    assert!(marker.exists(), "the named plugin was not used");
    assert_eq!(outputs(&sandbox, false)["count"], 1);
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert!(
        state["deployment"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["type"] == "probe:index:Thing" && r["id"] == "thing-t0"),
        "{state}"
    );
}

/// Plugins in `<home>/plugins/bin` serve the packages of Python and Node.js programs (as Pulumi
/// looks plugins up; wasm programs use only what the project names).
#[test]
fn grpc_plugins_in_the_cairn_plugin_directory_are_found() {
    let sandbox = Sandbox::new("prog");
    let bin = sandbox.home.join("plugins/bin");
    sandbox.ok(&[
        "plugin",
        "export-grpc",
        test_wasm("probe").to_str().unwrap(),
        "-o",
        bin.to_str().unwrap(),
    ]);
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    sandbox.write(
        "__main__.py",
        "import pulumi\n\
         pulumi.CustomResource('probe:index:Thing', 't0', {'sleepMs': 0, 'index': 0})\n\
         pulumi.export('count', 1)\n",
    );
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: prog\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
            venv.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["count"], 1);
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert!(
        state["deployment"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["type"] == "probe:index:Thing" && r["id"] == "thing-t0"),
        "{state}"
    );
}

/// Like Pulumi's provider servers (400 MiB), a wasm provider served over gRPC accepts large
/// requests: a 10 MB input from a Python program's config reaches it (tonic's default stopped
/// at 4 MiB).
#[test]
fn a_ten_megabyte_input_reaches_a_wasm_provider_served_over_grpc() {
    const SIZE: usize = 10 * 1024 * 1024;
    let sandbox = Sandbox::new("prog");
    let plugins = sandbox.project.join("grpc-plugins");
    sandbox.ok(&[
        "plugin",
        "export-grpc",
        test_wasm("probe").to_str().unwrap(),
        "-o",
        plugins.to_str().unwrap(),
    ]);
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: prog\nruntime:\n  name: python\n  options:\n    virtualenv: {}\nplugins:\n  providers:\n    - name: probe\n      path: ./grpc-plugins\n",
            venv.display()
        ),
    );
    sandbox.write(
        "__main__.py",
        "import pulumi\n\
         big = pulumi.Config().require(\"big\")\n\
         thing = pulumi.CustomResource(\"probe:index:Thing\", \"t\", {\"payload\": big})\n\
         pulumi.export(\"id\", thing.id)\n",
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let set = sandbox.run_with_stdin(&["config", "set", "big"], "x".repeat(SIZE).as_bytes());
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["id"], "thing-t");
}
