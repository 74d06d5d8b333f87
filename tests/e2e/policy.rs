//! Policy packs (`--policy-pack`, `--policy-pack-config`): real Pulumi packs written with
//! `pulumi-policy` (PyPI) and `@pulumi/policy` (npm) run unchanged over the gRPC Analyzer
//! protocol against a Python program (`tests/data/policy`). Advisory, mandatory and disabled
//! policies, resource and stack policies, configuration, packs that crash or lie; a mandatory
//! violation changes nothing. The Node.js cases follow Pulumi's `tests/integration`
//! `TestAdvisoryPolicyPack`, `TestMandatoryPolicyPack` and `TestMultiplePolicyPacks`. Policy
//! components (`--policy-pack pack.wasm`): the example pack and a hostile one.

use std::path::{Path, PathBuf};

use crate::support::{
    Sandbox, assert_contains, example_wasm, node_modules, python, quickstart_stack, repo, test_wasm,
};

fn fixtures() -> PathBuf {
    repo().join("tests/data/policy")
}

/// The test venv's directory (what `VENV` in the fixtures stands for).
fn venv() -> PathBuf {
    let python = python();
    python.parent().unwrap().parent().unwrap().to_owned()
}

/// Copies `from` into `to`, replacing `VENV` in YAML files.
fn copy_fixture(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let mut text = std::fs::read_to_string(entry.path()).unwrap();
        if entry.path().extension().is_some_and(|e| e == "yaml") {
            text = text.replace("VENV", &venv().display().to_string());
        }
        std::fs::write(to.join(entry.file_name()), text).unwrap();
    }
}

/// A sandbox with the test program and a stack `dev`.
fn project() -> Sandbox {
    let sandbox = Sandbox::new("policy-prog");
    copy_fixture(&fixtures().join("program"), &sandbox.project);
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

/// A pack fixture copied next to the project (Node.js packs get the test `node_modules`);
/// returns its path.
fn pack(sandbox: &Sandbox, name: &str) -> String {
    let dir = sandbox.root().join(name);
    copy_fixture(&fixtures().join(name), &dir);
    if name.starts_with("node-") {
        std::os::unix::fs::symlink(node_modules(), dir.join("node_modules")).unwrap();
    }
    dir.display().to_string()
}

/// stdout and stderr of a run, and whether it succeeded.
fn run(sandbox: &Sandbox, args: &[&str]) -> (bool, String) {
    let out = sandbox.run(args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The resources the dynamic provider created (files it left in the project).
fn created(sandbox: &Sandbox) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&sandbox.project)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_prefix("created-").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

/// The URNs in the stack's state.
fn state_resources(sandbox: &Sandbox) -> usize {
    let export: serde_json::Value =
        serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    export["deployment"]["resources"]
        .as_array()
        .map_or(0, Vec::len)
}

#[test]
fn a_python_pack_reports_advisory_resource_and_stack_violations() {
    let sandbox = project();
    let pack = pack(&sandbox, "python-pack");
    let (ok, out) = run(&sandbox, &["preview", "--policy-pack", &pack]);
    assert!(ok, "{out}");
    // Pulumi's section, line for line (as `pulumi preview --policy-pack` prints it).
    assert_contains(
        &out,
        &[
            &format!(
                "Policies:\n    ⚠️ test-pack@v0.0.3 (local: {pack})\n        - [advisory]  count  (pulumi:pulumi:Stack: policy-prog-dev)\n          Counts resources.\n          stack has 4 resources\n        - [advisory]  seen  (pulumi-python:dynamic:Resource: a)\n          Sees.\n          saw pulumi-python:dynamic:Resource a\n"
            ),
            "- [advisory]  seen  (pulumi:providers:pulumi-python: default)",
            "- [advisory]  seen  (pulumi:pulumi:Stack: policy-prog-dev)",
            "- [advisory]  tags  (pulumi-python:dynamic:Resource: b)\n          Things need tags.\n          missing tags; need owner",
        ],
    );
    assert!(!out.contains("a disabled policy ran"), "{out}");

    // The update runs them again and succeeds; --json carries the violations as events.
    let (ok, out) = run(&sandbox, &["up", "--yes", "--json", "--policy-pack", &pack]);
    assert!(ok, "{out}");
    assert_contains(
        &out,
        &[
            r#""policyLoadEvent":{}"#,
            r#""policyEvent":{"#,
            r#""policyName":"count""#,
            r#""enforcementLevel":"advisory""#,
        ],
    );
    assert_eq!(created(&sandbox), ["a", "b"]);
}

#[test]
fn a_mandatory_violation_fails_the_preview_and_changes_nothing() {
    let sandbox = project();
    let pack = pack(&sandbox, "python-pack");
    sandbox.ok(&["config", "set", "public", "true"]);
    let (ok, out) = run(&sandbox, &["preview", "--policy-pack", &pack]);
    assert!(!ok, "{out}");
    assert_contains(
        &out,
        &[
            &format!("❌ test-pack@v0.0.3 (local: {pack})"),
            "- [mandatory]  no-public  (pulumi-python:dynamic:Resource: a)\n          No public things.\n          resource is public",
            "The preview failed.",
            "mandatory policy violation (test-pack/no-public)",
        ],
    );
    // `up --yes` previews first (as Pulumi's `up` does): nothing is created, nothing recorded.
    let (ok, out) = run(&sandbox, &["up", "--yes", "--policy-pack", &pack]);
    assert!(!ok, "{out}");
    assert_contains(&out, &["The preview failed."]);
    assert!(created(&sandbox).is_empty(), "{:?}", created(&sandbox));
    assert_eq!(state_resources(&sandbox), 0);

    // --skip-preview: the violating resource fails before its provider is asked.
    let (ok, out) = run(
        &sandbox,
        &["up", "--yes", "--skip-preview", "--policy-pack", &pack],
    );
    assert!(!ok, "{out}");
    assert_contains(&out, &["The update failed.", "mandatory policy violation"]);
    assert!(!created(&sandbox).contains(&"a".to_owned()), "{out}");
}

#[test]
fn policy_config_sets_levels_and_properties_and_is_checked() {
    let sandbox = project();
    let pack = pack(&sandbox, "python-pack");
    sandbox.ok(&["config", "set", "public", "true"]);
    let config = sandbox.write(
        "policy.json",
        r#"{"no-public": "advisory", "tags": {"required": "team"}, "seen": "disabled",
            "stack-guard": {"forbidStack": "b"}}"#,
    );
    let config = config.display().to_string();
    let args = ["--policy-pack", &pack, "--policy-pack-config", &config];
    let (ok, out) = run(&sandbox, &[&["preview"][..], &args].concat());
    assert!(!ok, "the stack policy is mandatory: {out}");
    assert_contains(
        &out,
        &[
            "- [mandatory]  stack-guard  (pulumi-python:dynamic:Resource: b)\n          Forbidden names.\n          b is forbidden",
            "- [advisory]  no-public  (pulumi-python:dynamic:Resource: a)",
            "missing tags; need team",
            "the stack: mandatory policy violation (test-pack/stack-guard)",
        ],
    );
    assert!(
        !out.contains("[advisory]  seen"),
        "disabled by config: {out}"
    );

    // An update with --skip-preview does its work, then fails on the stack policy.
    let (ok, out) = run(
        &sandbox,
        &[&["up", "--yes", "--skip-preview"][..], &args].concat(),
    );
    assert!(!ok, "{out}");
    assert_contains(&out, &["The update failed.", "test-pack/stack-guard"]);
    assert_eq!(created(&sandbox), ["a", "b"]);

    // Configuration the policy's schema refuses, and flags that do not pair up.
    let bad = sandbox.write("bad.json", r#"{"tags": {"required": 5}}"#);
    let bad = bad.display().to_string();
    let (ok, out) = run(
        &sandbox,
        &[
            "preview",
            "--policy-pack",
            &pack,
            "--policy-pack-config",
            &bad,
        ],
    );
    assert!(!ok);
    assert_contains(
        &out,
        &[
            "validating policy config for \"test-pack\": tags: required: Invalid type. Expected: string, given: integer",
        ],
    );
    sandbox.write("bad.json", r#"{"tags": "loud"}"#);
    let (ok, out) = run(
        &sandbox,
        &[
            "preview",
            "--policy-pack",
            &pack,
            "--policy-pack-config",
            &bad,
        ],
    );
    assert!(!ok);
    assert_contains(&out, &["\"loud\" is not a valid enforcement level"]);
    let (ok, out) = run(&sandbox, &["preview", "--policy-pack-config", &bad]);
    assert!(!ok);
    assert_contains(
        &out,
        &["\"--policy-pack-config\" must be specified with \"--policy-pack\""],
    );
    let (ok, out) = run(&sandbox, &["destroy", "--yes", "--policy-pack", &pack]);
    assert!(!ok);
    assert_contains(&out, &["unexpected argument '--policy-pack' found"]);
}

#[test]
fn node_packs_advisory_mandatory_and_several_at_once() {
    let sandbox = project();
    let advisory = pack(&sandbox, "node-advisory");
    let mandatory = pack(&sandbox, "node-mandatory");

    // TestAdvisoryPolicyPack: `up --skip-preview --yes` succeeds and shows the violation.
    let (ok, out) = run(
        &sandbox,
        &["up", "--skip-preview", "--yes", "--policy-pack", &advisory],
    );
    assert!(ok, "{out}");
    assert_contains(
        &out,
        &["Failing advisory policy pack for testing\n          foobar"],
    );

    // TestMandatoryPolicyPack: the update fails, the pack is marked.
    let (ok, out) = run(
        &sandbox,
        &["up", "--skip-preview", "--yes", "--policy-pack", &mandatory],
    );
    assert!(!ok, "{out}");
    assert_contains(
        &out,
        &[
            "The update failed.",
            &format!("❌ typescript@v0.0.1 (local: {mandatory})"),
        ],
    );

    // TestMultiplePolicyPacks: two packs of one name and version share a line.
    let (ok, out) = run(
        &sandbox,
        &[
            "up",
            "--skip-preview",
            "--yes",
            "--policy-pack",
            &advisory,
            "--policy-pack",
            &mandatory,
        ],
    );
    assert!(!ok, "{out}");
    assert_contains(
        &out,
        &[
            "Failing advisory policy pack for testing\n          foobar",
            &format!("❌ typescript@v0.0.1 (local: {advisory}; {mandatory})"),
        ],
    );

    // Node.js resource policies see configuration too.
    let config = sandbox.write("node.json", r#"{"forbidden-name": {"name": "b"}}"#);
    let (ok, out) = run(
        &sandbox,
        &[
            "preview",
            "--policy-pack",
            &mandatory,
            "--policy-pack-config",
            &config.display().to_string(),
        ],
    );
    assert!(!ok);
    assert_contains(
        &out,
        &[
            "- [mandatory]  forbidden-name  (pulumi-python:dynamic:Resource: b)\n          Names the configuration forbids.\n          forbidden name b",
        ],
    );
}

#[test]
fn packs_that_crash_lie_or_print_garbage_fail_naming_the_pack() {
    let sandbox = project();
    for (name, expected) in [
        (
            "python-crash",
            &["policy pack crash-pack failed", "exited"][..],
        ),
        (
            "python-garbage",
            &["python-garbage", "instead of its port number"][..],
        ),
        (
            "python-hostile",
            &[
                "policy pack hostile failed",
                "Analyze answered an enforcement level that does not exist (7) for policy lies",
            ][..],
        ),
    ] {
        let pack = pack(&sandbox, name);
        let (ok, out) = run(&sandbox, &["up", "--yes", "--policy-pack", &pack]);
        assert!(!ok, "{name}: {out}");
        assert_contains(&out, expected);
        assert!(
            created(&sandbox).is_empty(),
            "{name}: nothing may change: {:?}",
            created(&sandbox)
        );
    }
    let (ok, out) = run(&sandbox, &["preview", "--policy-pack", "nowhere"]);
    assert!(!ok);
    assert_contains(&out, &["policy pack not found at \"nowhere\""]);
}

#[test]
fn policy_components_run_sandboxed_beside_pulumi_packs() {
    let sandbox = project();
    let site = example_wasm("site-policies");
    let site = site.display().to_string();
    let config = sandbox.write("site.json", r#"{"max-resources": {"max": 2}}"#);
    let python_pack = pack(&sandbox, "python-pack");
    let (ok, out) = run(
        &sandbox,
        &[
            "preview",
            "--policy-pack",
            &site,
            "--policy-pack-config",
            &config.display().to_string(),
            "--policy-pack",
            &python_pack,
            "--policy-pack-config",
            &sandbox.write("empty.json", "{}").display().to_string(),
        ],
    );
    assert!(ok, "{out}");
    assert_contains(
        &out,
        &[
            &format!("⚠️ site-policies@v0.1.0 (local: {site})"),
            "- [advisory]  max-resources  (pulumi:pulumi:Stack: policy-prog-dev)\n          Stacks must stay small.\n          the stack has 4 resources (at most 2)",
            "⚠️ test-pack@v0.0.3",
        ],
    );

    // A directory holding one component names it too; a hostile pack that traps fails the
    // update before anything changes, naming the pack.
    let dir = sandbox.root().join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(test_wasm("hostile-policy"), dir.join("hostile.wasm")).unwrap();
    sandbox.ok(&["config", "set", "extra", "trap"]);
    let (ok, out) = run(
        &sandbox,
        &["up", "--yes", "--policy-pack", &dir.display().to_string()],
    );
    assert!(!ok, "{out}");
    assert_contains(
        &out,
        &[
            "policy pack hostile-policy failed: analyze: wasm trap",
            "the hostile policy traps",
        ],
    );
    assert!(created(&sandbox).is_empty(), "{:?}", created(&sandbox));

    // One that loops is stopped at its deadline.
    sandbox.ok(&["config", "set", "extra", "loop"]);
    let out = sandbox
        .command(&["preview", "--policy-pack", &dir.display().to_string()])
        .env("CAIRN_POLICY_TIMEOUT", "2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_contains(
        &String::from_utf8_lossy(&out.stderr),
        &["deadline of 2 s exceeded", "CAIRN_POLICY_TIMEOUT"],
    );

    // A limit that is not one is refused, naming the variable.
    let out = sandbox
        .command(&["preview", "--policy-pack", &dir.display().to_string()])
        .env("CAIRN_POLICY_TIMEOUT", "soon")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_contains(
        &String::from_utf8_lossy(&out.stderr),
        &["CAIRN_POLICY_TIMEOUT is \"soon\", not a number of seconds"],
    );
}

#[test]
fn the_example_pack_guards_a_real_deployment() {
    let sandbox = quickstart_stack();
    let site = example_wasm("site-policies").display().to_string();
    let index = sandbox.project.join("out/site/index.html");

    // Passwords of 32 characters, mandatory: the quick start's 20 stops the update before
    // anything is created.
    let strict = sandbox.write(
        "strict.json",
        r#"{"password-length": {"enforcementLevel": "mandatory", "minLength": 32}}"#,
    );
    let strict = strict.display().to_string();
    let (ok, out) = run(
        &sandbox,
        &[
            "up",
            "--yes",
            "--policy-pack",
            &site,
            "--policy-pack-config",
            &strict,
        ],
    );
    assert!(!ok, "{out}");
    assert_contains(
        &out,
        &[
            &format!("site-policies@v0.1.0 (local: {site})"),
            "- [mandatory]  password-length  (random:index/randomPassword:RandomPassword: admin-password)\n          Passwords must be long enough.\n          admin-password is 20 characters (at least 32)",
            "mandatory policy violation (site-policies/password-length)",
        ],
    );
    assert!(!index.exists(), "a file was written despite the violation");
    assert_eq!(state_resources(&sandbox), 0, "{out}");

    // The defaults pass; a smaller stack limit is advisory: listed, and the update goes on.
    let small = sandbox.write("small.json", r#"{"max-resources": {"max": 3}}"#);
    let small = small.display().to_string();
    let (ok, out) = run(
        &sandbox,
        &[
            "up",
            "--yes",
            "--policy-pack",
            &site,
            "--policy-pack-config",
            &small,
        ],
    );
    assert!(ok, "{out}");
    assert_contains(
        &out,
        &[
            "- [advisory]  max-resources  (pulumi:pulumi:Stack: quickstart-dev)\n          Stacks must stay small.\n          the stack has",
            "resources (at most 3)",
            "8 created",
        ],
    );
    assert!(!out.contains("password-length"), "{out}");
    assert!(index.exists(), "{out}");
}
