//! Deployment safety seen from outside, with the real SDKs and real side effects: previews of
//! programs whose dynamic providers write files write nothing; the processes cairn starts (SDK
//! programs, dynamic providers, plugins) run outside its process group and never outlive it,
//! even after kill -9; a config value of any size reaches the program.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Sandbox, finished_steps, node_modules, ops_of, outputs, python, repo, tree};

/// The SDK a program is written with.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    Node,
}

/// A sandbox with the dynamic-effects program of `sdk` (tests/data/dynamic-effects), stack
/// `dev` selected, config `dir` naming its effects directory (empty) and `content` = `v1`.
/// Returns the sandbox and the effects directory.
fn effects_project(sdk: Sdk) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new("effects");
    let data = repo().join("tests/data/dynamic-effects");
    let runtime = match sdk {
        Sdk::Python => {
            std::fs::copy(
                data.join("python/__main__.py"),
                sandbox.project.join("__main__.py"),
            )
            .unwrap();
            let python = python();
            let venv = python.parent().unwrap().parent().unwrap();
            format!(
                "runtime:\n  name: python\n  options:\n    virtualenv: {}\n",
                venv.display()
            )
        }
        Sdk::Node => {
            std::fs::copy(
                data.join("nodejs/index.js"),
                sandbox.project.join("index.js"),
            )
            .unwrap();
            sandbox.write(
                "package.json",
                "{\"name\": \"effects\", \"main\": \"index.js\"}\n",
            );
            std::os::unix::fs::symlink(node_modules(), sandbox.project.join("node_modules"))
                .unwrap();
            "runtime: nodejs\n".to_owned()
        }
    };
    sandbox.write("Pulumi.yaml", &format!("name: effects\n{runtime}"));
    let effects = sandbox.root().join("effects");
    std::fs::create_dir_all(&effects).unwrap();
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["config", "set", "dir", effects.to_str().unwrap()]);
    sandbox.ok(&["config", "set", "content", "v1"]);
    (sandbox, effects)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn a_preview_of_a_python_dynamic_provider_acts_on_nothing() {
    previews_act_on_nothing(Sdk::Python);
}

#[test]
fn a_preview_of_a_nodejs_dynamic_provider_acts_on_nothing() {
    previews_act_on_nothing(Sdk::Node);
}

/// Dynamic providers never support previews: a preview shows the create and the update, and
/// the provider receives neither (its directory is untouched); `up` does both.
fn previews_act_on_nothing(sdk: Sdk) {
    let (sandbox, effects) = effects_project(sdk);
    let before = tree(&effects);
    let steps = finished_steps(&sandbox.ok(&["preview", "--json"]));
    assert_eq!(ops_of(&steps, "a"), ["create"], "{sdk:?}: {steps:?}");
    assert_eq!(
        tree(&effects),
        before,
        "{sdk:?}: the preview of a new stack acted"
    );

    sandbox.ok(&["up", "--yes"]);
    assert_eq!(read(&effects.join("a")), "v1");
    assert_eq!(read(&effects.join("calls.log")), "create a\n");

    sandbox.ok(&["config", "set", "content", "v2"]);
    let before = tree(&effects);
    let steps = finished_steps(&sandbox.ok(&["preview", "--json"]));
    assert_eq!(ops_of(&steps, "a"), ["update"], "{sdk:?}: {steps:?}");
    assert_eq!(
        tree(&effects),
        before,
        "{sdk:?}: the preview of a change acted"
    );

    sandbox.ok(&["up", "--yes"]);
    assert_eq!(read(&effects.join("a")), "v2");
    assert_eq!(read(&effects.join("calls.log")), "create a\nupdate a\n");
}

#[test]
fn a_ten_megabyte_config_value_reaches_python_and_nodejs_programs() {
    const SIZE: usize = 10 * 1024 * 1024;
    for sdk in [Sdk::Python, Sdk::Node] {
        let (sandbox, _) = effects_project(sdk);
        let value = "x".repeat(SIZE);
        let set = sandbox.run_with_stdin(&["config", "set", "big"], value.as_bytes());
        assert!(
            set.status.success(),
            "{}",
            String::from_utf8_lossy(&set.stderr)
        );
        sandbox.ok(&["up", "--yes"]);
        assert_eq!(outputs(&sandbox, false)["bigLength"], SIZE, "{sdk:?}");
    }
}

/// A component provider written with the Python SDK: `Component` outputs the length of the
/// stack's config `big`, which reaches it through `Construct`.
const BIG_COMPONENT: &str = r#"
import sys
import pulumi
import pulumi.provider as provider


class Provider(provider.Provider):
    def __init__(self):
        super().__init__("0.0.1")

    def construct(self, name, resource_type, inputs, options=None):
        component = pulumi.ComponentResource(resource_type, name, {}, options)
        length = len(pulumi.Config().require("big"))
        component.register_outputs({"bigLength": length})
        return provider.ConstructResult(urn=component.urn, state={"bigLength": length})


if __name__ == "__main__":
    provider.main(Provider(), sys.argv[1:])
"#;

/// Large config reaches component providers: a 10 MB value travels in the `Construct` request
/// (the gRPC message limits are Pulumi's 400 MiB, where tonic's default is 4 MiB).
#[test]
fn a_ten_megabyte_config_value_reaches_a_component_provider_through_construct() {
    const SIZE: usize = 10 * 1024 * 1024;
    let sandbox = Sandbox::new("bigcfg");
    let python = python();
    let venv = python.parent().unwrap().parent().unwrap();
    let runtime = format!(
        "runtime:\n  name: python\n  options:\n    virtualenv: {}\n",
        venv.display()
    );
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: bigcfg\n{runtime}plugins:\n  providers:\n    - name: bigcomponent\n      path: ./bigcomponent\n"
        ),
    );
    std::fs::create_dir_all(sandbox.project.join("bigcomponent")).unwrap();
    sandbox.write("bigcomponent/PulumiPlugin.yaml", &runtime);
    sandbox.write("bigcomponent/__main__.py", BIG_COMPONENT);
    sandbox.write(
        "__main__.py",
        "import pulumi\n\
         class Component(pulumi.ComponentResource):\n\
         \x20   bigLength: pulumi.Output[int]\n\
         \x20   def __init__(self, name):\n\
         \x20       super().__init__(\"bigcomponent:index:Component\", name, {\"bigLength\": None}, remote=True)\n\
         pulumi.export(\"bigLength\", Component(\"c\").bigLength)\n",
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let value = "x".repeat(SIZE);
    let set = sandbox.run_with_stdin(&["config", "set", "big"], value.as_bytes());
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["bigLength"], SIZE);
}

// ---------------------------------------------------------------------------------------------
// Processes.

/// A process found in `/proc`.
#[derive(Debug)]
struct Process {
    pid: u32,
    group: u32,
    cmdline: String,
}

/// The live processes whose command line or working directory is inside `root` (those a
/// sandbox's cairn started, and that cairn itself through its `--cwd`).
fn processes_in(root: &Path) -> Vec<Process> {
    let root_text = root.to_str().unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; zombies are gone but for their parent's wait.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.first().is_none_or(|state| *state == "Z") {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
        if cmdline.contains(root_text) || cwd.starts_with(root) {
            found.push(Process {
                pid,
                group: fields.get(2).and_then(|g| g.parse().ok()).unwrap_or(0),
                cmdline,
            });
        }
    }
    found
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
fn within(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (up to two minutes: a cold SDK start under load is slow) until `marker` exists, with
/// `cairn` still running.
fn wait_for(marker: &Path, cairn: &mut Child) {
    let appeared = within(Duration::from_secs(120), || {
        marker.exists() || cairn.try_wait().unwrap().is_some()
    });
    assert!(
        appeared && marker.exists(),
        "{} never appeared (cairn: {:?})",
        marker.display(),
        cairn.try_wait().unwrap()
    );
}

/// After cairn is gone, nothing it started may remain for more than a few seconds.
fn assert_nothing_left(root: &Path) {
    let gone = within(Duration::from_secs(5), || processes_in(root).is_empty());
    assert!(
        gone,
        "processes left 5 s after cairn ended: {:#?}",
        processes_in(root)
    );
}

/// A cairn running in the background; a test that fails midway kills it (and so, through the
/// parent-death signal, what it started) and opens the gate its provider may wait at.
struct Background {
    cairn: Child,
    gate: Option<PathBuf>,
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.cairn.kill();
        let _ = self.cairn.wait();
        if let Some(gate) = &self.gate {
            let _ = std::fs::write(gate, "");
        }
    }
}

/// `cairn up --yes` in the background, in a process group of its own (as a terminal runs a
/// command), its output discarded.
fn up_in_background(sandbox: &Sandbox, env: &[(&str, &str)]) -> Child {
    use std::os::unix::process::CommandExt;
    let mut command = sandbox.command(&["up", "--yes"]);
    command
        .envs(env.iter().copied())
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command.spawn().expect("start cairn up")
}

#[test]
fn kill_9_of_cairn_mid_create_leaves_no_python_program_or_dynamic_provider_running() {
    let (sandbox, effects) = effects_project(Sdk::Python);
    let gate = sandbox.root().join("gate");
    sandbox.ok(&["config", "set", "gate", gate.to_str().unwrap()]);
    let mut background = Background {
        cairn: up_in_background(&sandbox, &[]),
        gate: Some(gate),
    };
    let cairn = &mut background.cairn;
    // The dynamic provider is inside Create, waiting for the gate.
    wait_for(&effects.join("a.started"), cairn);
    let running = processes_in(sandbox.root());
    for (what, fragment) in [
        ("cairn", "--non-interactive"),
        ("the program", "reset_options"),
        ("the dynamic provider", "pulumi.dynamic"),
    ] {
        assert!(
            running.iter().any(|p| p.cmdline.contains(fragment)),
            "{what} is not running: {running:#?}"
        );
    }
    cairn.kill().unwrap();
    cairn.wait().unwrap();
    assert_nothing_left(sandbox.root());
}

#[test]
fn kill_9_of_cairn_mid_create_leaves_no_plugin_running() {
    let sandbox = crate::sdk::crashy_project();
    let started = sandbox.root().join("started");
    let mut background = Background {
        cairn: up_in_background(
            &sandbox,
            &[
                ("CRASHY_HANG", "1"),
                ("CRASHY_STARTED", started.to_str().unwrap()),
            ],
        ),
        gate: None,
    };
    let cairn = &mut background.cairn;
    wait_for(&started, cairn);
    let running = processes_in(sandbox.root());
    assert!(
        running
            .iter()
            .any(|p| p.cmdline.contains("pulumi-resource-crashy")),
        "the plugin is not running: {running:#?}"
    );
    cairn.kill().unwrap();
    cairn.wait().unwrap();
    assert_nothing_left(sandbox.root());
}

/// A terminal's Ctrl-C goes to its foreground process group: cairn's children are not in it
/// (cairn decides how they stop), and once cairn has ended nothing it started remains.
#[test]
fn a_sigint_to_cairn_s_process_group_does_not_reach_its_children() {
    let (sandbox, effects) = effects_project(Sdk::Python);
    let gate = sandbox.root().join("gate");
    sandbox.ok(&["config", "set", "gate", gate.to_str().unwrap()]);
    let mut background = Background {
        cairn: up_in_background(&sandbox, &[]),
        gate: Some(gate.clone()),
    };
    let cairn = &mut background.cairn;
    wait_for(&effects.join("a.started"), cairn);
    let running = processes_in(sandbox.root());
    let children: Vec<&Process> = running.iter().filter(|p| p.pid != cairn.id()).collect();
    assert!(
        children.len() >= 2,
        "the program and its dynamic provider: {running:#?}"
    );
    for child in &children {
        assert_ne!(
            child.group,
            cairn.id(),
            "a child in cairn's process group: {child:#?}"
        );
    }
    let signalled = std::process::Command::new(python())
        .args([
            "-c",
            "import os, signal, sys; os.killpg(int(sys.argv[1]), signal.SIGINT)",
            &cairn.id().to_string(),
        ])
        .status()
        .unwrap();
    assert!(signalled.success());
    // However cairn handles the signal, the create it waits for can now finish.
    std::fs::write(&gate, "").unwrap();
    let ended = within(Duration::from_secs(60), || {
        cairn.try_wait().unwrap().is_some()
    });
    assert!(ended, "cairn did not end after SIGINT");
    assert_nothing_left(sandbox.root());
}
