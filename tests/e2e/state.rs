//! `stack export` / `stack import`: state round trips, secrets at rest, refusal of broken state.

use std::path::Path;

use serde_json::Value;

use crate::support::{Sandbox, assert_contains};

const SIG: &str = "4dabf18193072939515e22adb298388d";
const SECRET: &str = "hunter2-very-secret";

fn cases_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/import"
    ))
}

fn valid_state() -> String {
    std::fs::read_to_string(cases_dir().join("valid/deployment.json")).unwrap()
}

fn export(sandbox: &Sandbox, extra: &[&str]) -> Value {
    let mut args = vec!["stack", "export"];
    args.extend_from_slice(extra);
    serde_json::from_str(&sandbox.ok(&args)).unwrap()
}

/// Every directory under tests/data/import is a case: `deployment.json` is imported into a fresh
/// stack, and `expect` says `ok` or `error`, then fragments the output must contain. A refused
/// import must leave the stored state byte-for-byte unchanged.
#[test]
fn import_cases() {
    let mut dirs: Vec<_> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "import cases are missing");
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let expect = std::fs::read_to_string(dir.join("expect")).unwrap();
        let mut lines = expect.lines();
        let outcome = lines.next().unwrap();
        let fragments: Vec<&str> = lines.collect();
        let file = dir.join("deployment.json");
        let before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
        let output = sandbox.run(&["stack", "import", "--file", file.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        match outcome {
            "ok" => {
                assert!(output.status.success(), "{name}: {stderr}");
                assert_contains(&stdout, &fragments);
            }
            "error" => {
                assert!(!output.status.success(), "{name}: import was accepted");
                assert_contains(&stderr, &fragments);
                assert_contains(&stderr, &["refusing to import"]);
                let after = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
                assert!(before == after, "{name}: the stored state changed");
            }
            other => panic!("{name}: expect must start with ok or error, not {other:?}"),
        }
    }
}

#[test]
fn secrets_are_encrypted_at_rest_and_shown_only_on_request() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &valid_state());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);

    let stored = std::fs::read_to_string(sandbox.state_file("web", "dev")).unwrap();
    assert!(
        !stored.contains(SECRET),
        "plaintext secret in the stored state"
    );
    assert!(stored.contains("\"ciphertext\": \"v1:"), "{stored}");

    let exported = export(&sandbox, &[]);
    let result = &exported["deployment"]["resources"][2]["outputs"]["result"];
    assert_eq!(result[SIG], "1b47061264138c4ac30d75fd1eb44270");
    assert!(result["ciphertext"].as_str().unwrap().starts_with("v1:"));
    assert!(!exported.to_string().contains(SECRET));
    assert_eq!(
        exported["deployment"]["secrets_providers"]["type"],
        "passphrase"
    );

    let shown = export(&sandbox, &["--show-secrets"]);
    let result = &shown["deployment"]["resources"][2]["outputs"]["result"];
    assert_eq!(result["plaintext"], format!("\"{SECRET}\""));

    // Exporting and re-importing unchanged keeps every ciphertext: nothing churns.
    let out = sandbox.project.join("export.json");
    sandbox.ok(&["stack", "export", "--file", out.to_str().unwrap()]);
    sandbox.ok(&["stack", "import", "--file", out.to_str().unwrap()]);
    assert_eq!(
        export(&sandbox, &[])["deployment"]["resources"],
        exported["deployment"]["resources"]
    );
}

#[test]
fn an_edited_export_imports_back() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &valid_state());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);

    let mut exported = export(&sandbox, &[]);
    let resources = exported["deployment"]["resources"].as_array_mut().unwrap();
    resources[2]["inputs"]["length"] = 24.into();
    resources[2]["protect"] = true.into();
    let edited = sandbox.write("edited.json", &exported.to_string());
    assert_contains(
        &sandbox.ok(&["stack", "import", "--file", edited.to_str().unwrap()]),
        &["Imported 3 resources"],
    );
    let after = export(&sandbox, &["--show-secrets"]);
    let password = &after["deployment"]["resources"][2];
    assert_eq!(password["inputs"]["length"], 24);
    assert_eq!(password["protect"], true);
    assert_eq!(
        password["outputs"]["result"]["plaintext"],
        format!("\"{SECRET}\"")
    );
    assert_contains(&sandbox.ok(&["stack"]), &["Resources: 3", "pw"]);
    let rows: Value = serde_json::from_str(&sandbox.ok(&["stack", "ls", "--json"])).unwrap();
    assert_eq!(rows[0]["resourceCount"], 3);
}

#[test]
fn state_moves_between_stacks_with_different_salts() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "a"]);
    let file = sandbox.write("state.json", &valid_state());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    let out = sandbox.project.join("a.json");
    sandbox.ok(&["stack", "export", "--file", out.to_str().unwrap()]);

    sandbox.ok(&["stack", "init", "b"]);
    sandbox.ok(&["stack", "import", "--file", out.to_str().unwrap()]);
    let b = export(&sandbox, &["--show-secrets"]);
    assert_eq!(
        b["deployment"]["resources"][2]["outputs"]["result"]["plaintext"],
        format!("\"{SECRET}\"")
    );
    // b's state names b's own secrets provider, not a's.
    let b_salt = b["deployment"]["secrets_providers"]["state"]["salt"].clone();
    assert!(
        sandbox
            .read("Pulumi.b.yaml")
            .contains(b_salt.as_str().unwrap())
    );
}

#[test]
fn a_wrong_passphrase_is_a_clear_error() {
    let mut sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &valid_state());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox.passphrase = Some("not the passphrase".into());
    assert_contains(
        &sandbox.fails(&["stack", "export", "--show-secrets"]),
        &["incorrect passphrase"],
    );
    // Without --show-secrets nothing needs decrypting, so no passphrase is needed.
    sandbox.passphrase = None;
    sandbox.ok(&["stack", "export"]);
}

#[test]
fn a_locked_stack_refuses_a_second_writer() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    // A lock held by a live process on this host: this test's own process, which locks the file
    // (an advisory lock, as cairn takes it) after writing who it is.
    let lock = sandbox.home.join("locks/web/dev.lock");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    std::fs::write(
        &lock,
        serde_json::json!({
            "pid": std::process::id(), "host": host, "user": "someone",
            "command": "cairn up", "time": "2026-01-01T00:00:00Z"
        })
        .to_string(),
    )
    .unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    let file = sandbox.write("state.json", &valid_state());
    assert_contains(
        &sandbox.fails(&["stack", "import", "--file", file.to_str().unwrap()]),
        &[
            "stack \"dev\" is locked by `cairn up`",
            "user someone",
            "dev.lock",
        ],
    );
    drop(held);
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
}

#[test]
fn removing_a_stack_with_resources_needs_force() {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &valid_state());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    assert_contains(
        &sandbox.fails(&["stack", "rm", "--yes"]),
        &["still has 3 resources", "--force"],
    );
    sandbox.ok(&["stack", "rm", "--yes", "--force", "--preserve-config"]);
    assert!(sandbox.project.join("Pulumi.dev.yaml").exists());
    // History keeps the removed stack's last state as a backup.
    assert!(
        sandbox
            .home
            .join("history/web/dev")
            .read_dir()
            .unwrap()
            .count()
            >= 1
    );
}
