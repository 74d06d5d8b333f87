//! `cairn refresh --run-program` and `cairn destroy --run-program`, as Pulumi's: the program
//! runs first and the providers take its configuration, so resources are read (or deleted)
//! with the configuration the program gives today, not the one recorded at the last update;
//! what the program declares is neither created nor updated.
//!
//! The provider is a Python dynamic provider whose configuration (`prog:dir`, the whole stack
//! configuration, as Pulumi gives dynamic providers) says where it is: `read` reports it as
//! an output and `delete` leaves a file there.

use serde_json::Value;

use crate::support::{Sandbox, python};

const PROGRAM: &str = r#"
import os
import pulumi
from pulumi.dynamic import CreateResult, ReadResult, Resource, ResourceProvider


class Marker(ResourceProvider):
    def configure(self, req):
        self.dir = req.config.get("prog:dir")

    def create(self, props):
        return CreateResult("m-" + props["name"], {"name": props["name"], "dir": self.dir})

    def read(self, id, props):
        return ReadResult(id, {**props, "dir": self.dir})

    def delete(self, id, props):
        with open(os.path.join(self.dir, "deleted-" + id), "w") as f:
            f.write(id)


class M(Resource):
    dir: pulumi.Output[str]

    def __init__(self, name):
        super().__init__(Marker(), name, {"name": name, "dir": None})


a = M("a")
pulumi.export("dir", a.dir)
if pulumi.Config().get_bool("more"):
    M("b")
"#;

/// Stack `dev` of project `prog` running [`PROGRAM`], with directories `one` and `two`.
fn marker_stack() -> Sandbox {
    let venv = python().parent().unwrap().parent().unwrap().to_owned();
    let sandbox = Sandbox::new("prog");
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: prog\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
            venv.display()
        ),
    );
    sandbox.write("__main__.py", PROGRAM);
    for dir in ["one", "two"] {
        std::fs::create_dir_all(sandbox.project.join(dir)).unwrap();
    }
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

fn set_dir(sandbox: &Sandbox, name: &str) {
    let dir = sandbox.project.join(name);
    sandbox.ok(&["config", "set", "dir", dir.to_str().unwrap()]);
}

fn resources(sandbox: &Sandbox) -> Vec<Value> {
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    state["deployment"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn resource(sandbox: &Sandbox, name: &str) -> Option<Value> {
    resources(sandbox)
        .into_iter()
        .find(|r| r["urn"].as_str().unwrap().ends_with(&format!("::{name}")))
}

/// The directory `a` was last read with.
fn dir_of_a(sandbox: &Sandbox) -> String {
    let a = resource(sandbox, "a").expect("a is in the state");
    let dir = a["outputs"]["dir"].as_str().unwrap();
    std::path::Path::new(dir)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn refresh_with_the_program_reads_with_the_programs_provider_configuration() {
    let sandbox = marker_stack();
    set_dir(&sandbox, "one");
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(dir_of_a(&sandbox), "one");

    // The configuration changes; the program also declares `b` now.
    set_dir(&sandbox, "two");
    sandbox.ok(&["config", "set", "more", "true"]);

    // Without the program, the provider recorded at the last update reads.
    sandbox.ok(&["refresh", "--yes"]);
    assert_eq!(dir_of_a(&sandbox), "one");

    // With it, the provider the program configures reads; `b` is not created.
    let out = sandbox.ok(&["refresh", "--run-program", "--yes"]);
    assert_eq!(dir_of_a(&sandbox), "two", "{out}");
    assert!(resource(&sandbox, "b").is_none(), "{out}");
    assert!(!out.contains("created"), "{out}");
    // The default provider's recorded configuration is the program's.
    let provider = resource(&sandbox, "default").expect("the default provider");
    let configured = provider["inputs"]["prog:dir"].as_str().unwrap();
    assert!(configured.ends_with("/two"), "{provider}");

    // PULUMI_RUN_PROGRAM says the same as the flag.
    set_dir(&sandbox, "one");
    let mut refresh = sandbox.command(&["refresh", "--yes"]);
    refresh.env("PULUMI_RUN_PROGRAM", "true");
    let output = refresh.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(dir_of_a(&sandbox), "one");
}

#[test]
fn destroy_with_the_program_deletes_with_the_programs_provider_configuration() {
    let sandbox = marker_stack();
    let deleted = |dir: &str| sandbox.project.join(dir).join("deleted-m-a").exists();

    // Without the program: the provider recorded at the last update deletes.
    set_dir(&sandbox, "one");
    sandbox.ok(&["up", "--yes"]);
    set_dir(&sandbox, "two");
    sandbox.ok(&["destroy", "--yes"]);
    assert!(deleted("one") && !deleted("two"));
    assert!(resources(&sandbox).is_empty());
    std::fs::remove_file(sandbox.project.join("one/deleted-m-a")).unwrap();

    // With it: the provider the program configures deletes, and nothing new is created.
    set_dir(&sandbox, "one");
    sandbox.ok(&["up", "--yes"]);
    set_dir(&sandbox, "two");
    sandbox.ok(&["config", "set", "more", "true"]);
    let out = sandbox.ok(&["destroy", "--run-program", "--yes"]);
    assert!(deleted("two") && !deleted("one"), "{out}");
    assert!(!sandbox.project.join("two/deleted-m-b").exists(), "{out}");
    assert!(resources(&sandbox).is_empty(), "{out}");
    assert!(!out.contains("created"), "{out}");
}
