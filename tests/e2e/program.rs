//! Wasm programs end to end: the example programs and a steerable test program deployed by the
//! real `cairn` binary (up, no-op up, preview with a diff, update, replace, destroy; the quick
//! start's without a warning), parallel registration, and program errors leaving a usable
//! state.

use serde_json::Value;

use crate::support::{
    Sandbox, assert_contains, clean_cargo_env, example_wasm, finished_steps, grant_out_dir,
    guest_target, ops_of, outputs, probe_stack, program_stack, repo,
};

/// `cairn up` with the cargo package as `main`: built for wasm32-wasip2 into the shared guest
/// target directory (so the test reuses what `example_wasm` built).
fn up_building(sandbox: &Sandbox) -> String {
    let mut command = sandbox.command(&["up", "--yes"]);
    clean_cargo_env(&mut command);
    let output = command
        .env("CARGO_TARGET_DIR", guest_target())
        .output()
        .expect("run cairn");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cairn up failed:\n{stderr}");
    assert_contains(&stderr, &["Building the program"]);
    assert_no_warning("build", &stderr);
    String::from_utf8(output.stdout).unwrap()
}

/// Fails if a run a newcomer makes from the quick start printed a warning (its build's
/// included): the quick start is meant to run clean.
fn assert_no_warning(what: &str, output: &str) {
    assert!(
        !output.to_lowercase().contains("warning"),
        "the quick start's {what} printed a warning:\n{output}"
    );
}

/// `cairn args`, which must succeed and print no warning; its stdout.
fn quiet(sandbox: &Sandbox, args: &[&str]) -> String {
    let output = sandbox.run(args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cairn {args:?} failed:\n{stderr}");
    assert_no_warning(args[0], &format!("{stdout}{stderr}"));
    stdout.into_owned()
}

#[test]
fn quick_start_up_noop_preview_update_replace_and_destroy() {
    let providers = [example_wasm("random"), example_wasm("file")];
    let package = repo().join("examples/programs/quickstart");
    let sandbox = program_stack(
        "quickstart",
        &package,
        &providers.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );
    grant_out_dir(&sandbox);
    let index = sandbox.project.join("out/site/index.html");
    let credentials = sandbox.project.join("out/site/credentials.txt");

    // up: everything is created, the files are on disk, and nothing warns.
    let out = up_building(&sandbox);
    assert_no_warning("up", &out);
    assert_contains(
        &out,
        &[
            "quickstart:index:Site",
            "random:index/randomPassword:RandomPassword",
            "8 created",
            "adminPassword: [secret]",
        ],
    );
    let page = std::fs::read_to_string(&index).unwrap();
    let plain = outputs(&sandbox, false);
    let pet = plain["petName"].as_str().unwrap().to_owned();
    assert!(
        page.contains(&format!("Hello from Cairn, {pet}!")),
        "{page}"
    );
    assert_eq!(plain["adminPassword"], "[secret]");
    assert_eq!(plain["indexPath"], "site/index.html");
    let revealed = outputs(&sandbox, true);
    let password = revealed["adminPassword"].as_str().unwrap().to_owned();
    assert_eq!(password.len(), 20);
    assert_eq!(
        std::fs::read_to_string(&credentials).unwrap(),
        format!("admin:{password}\n")
    );
    // The secret stays secret in the stored state.
    let state = std::fs::read_to_string(sandbox.state_file("quickstart", "dev")).unwrap();
    assert!(
        !state.contains(&password),
        "the password is stored in plaintext"
    );

    // A second up changes nothing.
    assert_contains(&quiet(&sandbox, &["up", "--yes"]), &["8 unchanged"]);

    // Edited config: preview shows the update with its diff and leaves state and files alone.
    sandbox.ok(&["config", "set", "greeting", "Howdy"]);
    let before = std::fs::read(sandbox.state_file("quickstart", "dev")).unwrap();
    let preview = quiet(&sandbox, &["preview", "--diff"]);
    assert_contains(
        &preview,
        &[
            "update",
            "site-index",
            "content",
            &format!("Howdy, {pet}!"),
            "1 to update",
        ],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("quickstart", "dev")).unwrap(),
        before,
        "a preview changed the state"
    );
    assert!(
        std::fs::read_to_string(&index)
            .unwrap()
            .contains("Hello from Cairn")
    );

    // up applies it.
    assert_contains(&quiet(&sandbox, &["up", "--yes"]), &["1 updated"]);
    assert!(
        std::fs::read_to_string(&index)
            .unwrap()
            .contains(&format!("Howdy, {pet}!"))
    );

    // A changed input of a random resource replaces it: a new name, and the page follows.
    sandbox.ok(&["config", "set", "petLength", "3"]);
    let out = quiet(&sandbox, &["up", "--yes"]);
    assert_contains(&out, &["replace", "random:index/randomPet:RandomPet"]);
    let renamed = outputs(&sandbox, false)["petName"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(renamed, pet);
    assert_eq!(renamed.split('-').count(), 3, "{renamed}");
    assert!(std::fs::read_to_string(&index).unwrap().contains(&renamed));

    // destroy removes everything, files included.
    assert_contains(&quiet(&sandbox, &["destroy", "--yes"]), &["8 deleted"]);
    assert!(!index.exists() && !credentials.exists());
    assert!(!sandbox.project.join("out/site").exists());
    assert_contains(&sandbox.ok(&["stack", "output"]), &["no outputs"]);
}

#[test]
fn two_program_versions_replace_update_keep_aliases_and_protect() {
    let providers = [example_wasm("random"), example_wasm("file")];
    let sandbox = program_stack(
        "lifecycle",
        &example_wasm("lifecycle"),
        &providers.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );
    grant_out_dir(&sandbox);
    sandbox.ok(&["up", "--yes"]);
    let v1 = outputs(&sandbox, false);
    assert_eq!(v1["version"], 1);
    let token_file = sandbox.project.join("out/data/token.txt");
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        format!("{}\n", v1["token"].as_str().unwrap())
    );

    sandbox.ok(&["config", "set", "version", "2"]);
    let json = sandbox.ok(&["up", "--yes", "--json"]);
    let steps = finished_steps(&json);
    let op_of = |name: &str| ops_of(&steps, name);
    assert!(
        op_of("token").iter().any(|op| op.contains("replace")),
        "token must be replaced: {steps:?}"
    );
    assert_eq!(op_of("data"), ["update"], "{steps:?}");
    assert_eq!(op_of("marker"), ["same"], "{steps:?}");
    assert_eq!(
        op_of("new-name"),
        ["same"],
        "the alias keeps the pet: {steps:?}"
    );
    assert!(op_of("old-name").is_empty(), "{steps:?}");
    assert_eq!(op_of("notes"), ["update"], "{steps:?}");
    let v2 = outputs(&sandbox, false);
    let notes = v1["notesPath"].as_str().unwrap();
    assert!(notes.starts_with("notes-"), "auto-named: {notes}");
    assert_eq!(v2["notesPath"], v1["notesPath"], "the auto-name is kept");
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("out").join(notes)).unwrap(),
        "version 2\n"
    );
    assert_eq!(v2["pet"], v1["pet"]);
    assert_eq!(v2["id"], v1["id"]);
    assert_ne!(v2["token"], v1["token"]);
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        format!("{}\n", v2["token"].as_str().unwrap())
    );

    // The protected UUID blocks destroy, naming it; unprotected, destroy finishes.
    let err = sandbox.fails(&["destroy", "--yes"]);
    assert_contains(&err, &["protect", "id"]);
    let urn = "urn:pulumi:dev::lifecycle::random:index/randomUuid:RandomUuid::id";
    sandbox.ok(&["state", "unprotect", urn]);
    sandbox.ok(&["destroy", "--yes"]);
    assert!(!token_file.exists());
}

#[test]
fn up_refresh_recreates_what_was_deleted_out_of_band() {
    let providers = [example_wasm("random"), example_wasm("file")];
    let sandbox = program_stack(
        "lifecycle",
        &example_wasm("lifecycle"),
        &providers.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );
    grant_out_dir(&sandbox);
    sandbox.ok(&["up", "--yes"]);
    let marker = sandbox.project.join("out/data/marker.txt");
    std::fs::remove_file(&marker).unwrap();
    // Without a refresh the state still records the file: nothing to do.
    sandbox.ok(&["up", "--yes"]);
    assert!(!marker.exists());
    // With one, the deletion is noticed and the file is created again.
    let out = sandbox.ok(&["up", "--yes", "--refresh"]);
    assert_contains(&out, &["create", "marker"]);
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "written after token.txt\n"
    );
}

#[test]
fn independent_resources_deploy_in_parallel() {
    let sandbox = probe_stack("parallel");
    let json = sandbox.ok(&["up", "--yes", "--json"]);
    let events: Vec<Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of_thing = |e: &Value, kind: &str| e[kind]["metadata"]["type"] == "probe:index:Thing";
    let first_finish = events
        .iter()
        .position(|e| of_thing(e, "resOutputsEvent"))
        .expect("a thing finished");
    let started_before = events[..first_finish]
        .iter()
        .filter(|e| of_thing(e, "resourcePreEvent"))
        .count();
    assert_eq!(
        started_before, 4,
        "all four 400 ms creates must be under way before the first finishes"
    );
    assert_eq!(outputs(&sandbox, false)["count"], 4);
}

#[test]
fn preview_runs_the_program_with_unknowns_and_changes_nothing() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    let before = std::fs::read(sandbox.state_file("prog", "dev")).unwrap();
    let out = sandbox.ok(&["preview"]);
    assert_contains(
        &out,
        &["5 to create", "probe:index:Thing t3 create", "count: 4"],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("prog", "dev")).unwrap(),
        before
    );
}

#[test]
fn expect_no_changes_fails_only_when_something_changes() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    sandbox.ok(&["preview", "--expect-no-changes"]);
    sandbox.ok(&["up", "--yes", "--expect-no-changes"]);
    sandbox.ok(&["refresh", "--yes", "--expect-no-changes"]);

    sandbox.ok(&["config", "set", "count", "5"]);
    let before = std::fs::read(sandbox.state_file("prog", "dev")).unwrap();
    let err = sandbox.fails(&["preview", "--expect-no-changes"]);
    assert_contains(
        &err,
        &["no changes were expected for preview but changes were proposed"],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("prog", "dev")).unwrap(),
        before,
        "a preview records nothing"
    );
    // As Pulumi's: `up` applies the change, then fails.
    let err = sandbox.fails(&["up", "--yes", "--expect-no-changes"]);
    assert_contains(
        &err,
        &["no changes were expected for update but changes were proposed"],
    );
    assert_eq!(outputs(&sandbox, false)["count"], 5);
    assert_contains(
        &sandbox.fails(&["destroy", "--yes", "--expect-no-changes"]),
        &["unexpected argument '--expect-no-changes' found"],
    );
}

/// Runs `up` in `mode`, expecting failure with `message`; then checks the state is consistent
/// and a fixed program deploys over it.
fn fails_cleanly(mode: &str, message: &[&str]) {
    let sandbox = probe_stack(mode);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, message);
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let pending = &exported["deployment"]["pending_operations"];
    assert!(
        pending.is_null() || pending.as_array().is_some_and(Vec::is_empty),
        "{mode}: pending operations left behind: {pending}"
    );
    sandbox.ok(&["config", "set", "mode", "parallel"]);
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["count"], 4, "{mode}");
}

#[test]
fn a_panicking_program_fails_with_its_message() {
    fails_cleanly(
        "panic",
        &[
            "program prog",
            "panicked",
            "the program panicked on purpose",
        ],
    );
}

#[test]
fn a_failing_apply_fails_the_program() {
    fails_cleanly(
        "apply-error",
        &["apply failed: the callback failed on purpose"],
    );
}

#[test]
fn missing_required_config_names_the_key() {
    fails_cleanly(
        "require",
        &[
            "missing required configuration variable 'prog:missing'",
            "cairn config set prog:missing",
        ],
    );
}

#[test]
fn a_failed_resource_fails_the_update_and_keeps_the_rest() {
    let sandbox = probe_stack("fail-resource");
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, &["create refused on purpose"]);
    let state = std::fs::read_to_string(sandbox.state_file("prog", "dev")).unwrap();
    assert!(
        state.contains("probe:index:Thing::good"),
        "the independent resource is recorded"
    );
    assert!(!state.contains("probe:index:Thing::bad"));
}

/// `up --continue-on-error` (Pulumi's TestUpContinueOnErrorCreate, end to end): without the
/// flag the update fails keeping what was done (whether `after-good` had started by then is the
/// scheduler's); with it, independent work goes on, the failed resource's dependent is not
/// created, and the update still fails.
#[test]
fn up_continue_on_error_creates_what_does_not_depend_on_the_failure() {
    let sandbox = probe_stack("continue-on-error");
    let state =
        |sandbox: &Sandbox| std::fs::read_to_string(sandbox.state_file("prog", "dev")).unwrap();
    let err = sandbox.fails(&["up", "--yes", "--skip-preview"]);
    assert_contains(&err, &["create refused on purpose"]);
    assert!(!state(&sandbox).contains("probe:index:Thing::dependent"));

    let err = sandbox.fails(&["up", "--yes", "--skip-preview", "--continue-on-error"]);
    assert_contains(&err, &["create refused on purpose"]);
    let recorded = state(&sandbox);
    assert!(recorded.contains("probe:index:Thing::good\""), "{recorded}");
    assert!(
        recorded.contains("probe:index:Thing::after-good"),
        "{recorded}"
    );
    assert!(!recorded.contains("probe:index:Thing::bad"), "{recorded}");
    assert!(
        !recorded.contains("probe:index:Thing::dependent"),
        "{recorded}"
    );
}

/// `destroy` with PULUMI_CONTINUE_ON_ERROR (Pulumi's TestDestroyContinueOnError, end to end):
/// a delete fails, the independent resource is deleted all the same, what the undeleted one
/// depends on stays, and the command fails.
#[test]
fn destroy_continue_on_error_keeps_only_what_a_failed_delete_needs() {
    let sandbox = probe_stack("fail-delete");
    sandbox.ok(&["up", "--yes"]);
    let output = sandbox
        .command(&["destroy", "--yes", "--skip-preview"])
        .env("PULUMI_CONTINUE_ON_ERROR", "true")
        .output()
        .expect("run cairn");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert_contains(&stderr, &["delete refused on purpose"]);
    let recorded = std::fs::read_to_string(sandbox.state_file("prog", "dev")).unwrap();
    assert!(recorded.contains("probe:index:Thing::stuck"), "{recorded}");
    assert!(recorded.contains("probe:index:Thing::anchor"), "{recorded}");
    assert!(!recorded.contains("probe:index:Thing::free"), "{recorded}");
}

#[test]
fn stack_references_read_another_stacks_outputs_and_keep_secrets() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    sandbox.ok(&["stack", "init", "consumer"]);
    sandbox.ok(&["config", "set", "mode", "stackref"]);
    sandbox.ok(&["config", "set", "ref", "dev"]);
    sandbox.ok(&["up", "--yes"]);
    let plain = outputs(&sandbox, false);
    assert_eq!(plain["refCount"], 4);
    assert_eq!(
        plain["refToken"], "[secret]",
        "a secret output stays secret"
    );
    assert_eq!(plain["refMissing"], Value::Null);
    assert_eq!(outputs(&sandbox, true)["refToken"], "s3cret");

    // A reference to a stack that does not exist names it.
    sandbox.ok(&["config", "set", "ref", "nowhere"]);
    assert_contains(
        &sandbox.fails(&["up", "--yes"]),
        &["stack prog/nowhere does not exist"],
    );
}

#[test]
fn reading_an_existing_resource_records_it_as_external() {
    let sandbox = probe_stack("read");
    sandbox.ok(&["up", "--yes"]);
    let out = outputs(&sandbox, false);
    assert_eq!(out["readId"], "thing-outside");
    assert_eq!(
        out["readUrn"],
        "urn:pulumi:dev::prog::probe:index:Thing::existing"
    );
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let resource = exported["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["urn"] == out["readUrn"])
        .expect("the read resource is in the state");
    assert_eq!(resource["external"], true);
    assert_eq!(resource["id"], "thing-outside");
    // Destroy forgets it without deleting it.
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["existing"]);
}

#[test]
fn explicit_providers_and_secret_and_structured_config() {
    let sandbox = probe_stack("options");
    // A missing secret is named with the command that sets it.
    assert_contains(
        &sandbox.fails(&["preview"]),
        &["prog:apiKey", "cairn config set --secret prog:apiKey"],
    );
    sandbox.ok(&["config", "set", "--secret", "apiKey", "xyz-secret-key"]);
    sandbox.ok(&["config", "set", "--path", "ports[0]", "80"]);
    sandbox.ok(&["config", "set", "--path", "ports[1]", "443"]);
    sandbox.ok(&["up", "--yes"]);
    let out = outputs(&sandbox, false);
    assert_eq!(
        out["direct"], "eu",
        "the explicit provider configures `direct`"
    );
    assert_eq!(
        out["child"], "eu",
        "a component passes its providers to children"
    );
    assert_eq!(out["key"], "[secret]");
    assert_eq!(out["portsSum"], 523);
    assert_eq!(outputs(&sandbox, true)["key"], "xyz-secret-key");
    let state = std::fs::read_to_string(sandbox.state_file("prog", "dev")).unwrap();
    assert!(
        !state.contains("xyz-secret-key"),
        "a secret input is stored in plaintext"
    );
    assert!(state.contains("pulumi:providers:probe::eu"));
}

#[test]
fn every_resource_option_reaches_the_state() {
    let sandbox = probe_stack("all-options");
    sandbox.ok(&["up", "--yes"]);
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let optioned = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["urn"] == "urn:pulumi:dev::prog::probe:index:Thing::optioned")
        .expect("optioned is in the state")
        .clone();
    let anchor = "urn:pulumi:dev::prog::probe:index:Thing::anchor";
    assert_eq!(optioned["dependencies"], serde_json::json!([anchor]));
    assert_eq!(optioned["deletedWith"], anchor);
    assert_eq!(optioned["retainOnDelete"], true);
    assert_eq!(optioned["ignoreChanges"], serde_json::json!(["tags.env"]));
    assert_eq!(optioned["replaceOnChanges"], serde_json::json!(["size"]));
    assert_eq!(
        optioned["additionalSecretOutputs"],
        serde_json::json!(["instance"])
    );
    assert_eq!(
        optioned["customTimeouts"],
        serde_json::json!({"create": 60, "update": 120, "delete": 30})
    );
    assert!(
        optioned["provider"]
            .as_str()
            .unwrap()
            .contains("pulumi:providers:probe::default_0_3_0"),
        "the version option picks the provider: {optioned}"
    );
    assert_eq!(
        outputs(&sandbox, false)["instance"],
        "[secret]",
        "additionalSecretOutputs"
    );
}

#[test]
fn invoke_returns_provider_function_results() {
    let sandbox = probe_stack("invoke");
    sandbox.ok(&["up", "--yes"]);
    let who = &outputs(&sandbox, false)["who"];
    assert!(who["instance"].is_number(), "{who}");
}

#[test]
fn a_program_gets_only_what_cairn_program_grants() {
    let sandbox = probe_stack("sandbox");
    std::fs::create_dir_all(sandbox.project.join("data")).unwrap();
    sandbox.write("data/hello.txt", "hello from the host\n");
    let run = |sandbox: &Sandbox| {
        let mut command = sandbox.command(&["up", "--yes"]);
        let output = command.env("PROBE_SECRET", "top").output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        outputs(sandbox, false)
    };
    let denied = run(&sandbox);
    assert!(
        denied["passwd"].as_str().unwrap().starts_with("err:"),
        "{denied}"
    );
    assert!(
        denied["granted"].as_str().unwrap().starts_with("err:"),
        "{denied}"
    );
    assert_eq!(denied["env"], "unset");

    for (path, value) in [
        ("[\"cairn:program\"].directories[0].host", "./data"),
        ("[\"cairn:program\"].directories[0].guest", "/data"),
        ("[\"cairn:program\"].env[0]", "PROBE_SECRET"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
    let granted = run(&sandbox);
    assert_eq!(granted["granted"], "ok:hello from the host");
    assert_eq!(granted["env"], "top");
    assert!(
        granted["passwd"].as_str().unwrap().starts_with("err:"),
        "{granted}"
    );
}

#[test]
fn a_malformed_program_grant_is_named() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&[
        "config",
        "set",
        "--path",
        "[\"cairn:program\"].memoryMiB",
        "oops",
    ]);
    assert_contains(&sandbox.fails(&["preview"]), &["cairn:program.memoryMiB"]);
}

#[test]
fn a_project_with_an_unbuildable_main_says_so() {
    let sandbox = Sandbox::new("broken");
    sandbox.write(
        "Pulumi.yaml",
        "name: broken\nruntime: wasm\nmain: nowhere.wasm\n",
    );
    sandbox.ok(&["stack", "init", "dev"]);
    assert_contains(
        &sandbox.fails(&["preview"]),
        &["main", "nowhere.wasm", "does not exist"],
    );
    sandbox.write("Pulumi.yaml", "name: broken\nruntime: go\n");
    assert_contains(
        &sandbox.fails(&["up", "--yes"]),
        &["runtime \"go\" is not supported"],
    );
    sandbox.write("Pulumi.yaml", "name: broken\nruntime: nodejs\n");
    assert_contains(&sandbox.fails(&["up", "--yes"]), &["run `npm install`"]);
}

/// `main` naming something that is neither a component nor a program project in one of the
/// four guest languages is refused before anything runs, naming the path and what it lacks.
#[test]
fn a_main_that_is_no_program_project_is_named() {
    let sandbox = Sandbox::new("not-a-program");
    sandbox.write(
        "Pulumi.yaml",
        "name: not-a-program\nruntime: wasm\nmain: src\n",
    );
    std::fs::create_dir_all(sandbox.project.join("src")).unwrap();
    sandbox.write("src/README.txt", "no program here\n");
    sandbox.ok(&["stack", "init", "dev"]);
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "main",
            "src",
            "Cargo.toml (Rust), app.py (Python), package.json (TypeScript) or go.mod (Go)",
        ],
    );
    sandbox.write(
        "Pulumi.yaml",
        "name: not-a-program\nruntime: wasm\nmain: prog.txt\n",
    );
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "prog.txt",
            "neither a .wasm component nor a program project",
        ],
    );
}
