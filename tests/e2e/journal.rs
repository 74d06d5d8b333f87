//! The journal of an interrupted deployment (replayed by readers, recovered by writers,
//! refused when it belongs to another checkpoint), `stack clear-pending`, and the `state`
//! commands (delete, protect, unprotect).

use std::path::PathBuf;

use cairn_engine::deploy::journal::JournalHeader;
use cairn_engine::state::{DeploymentV3, Manifest, VersionedCheckpoint};
use serde_json::{Value, json};

use crate::support::{Sandbox, assert_contains};

const SIG: &str = "4dabf18193072939515e22adb298388d";
const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";
const STACK: &str = "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev";
const PROVIDER: &str = "urn:pulumi:dev::web::pulumi:providers:aws::default";
const BUCKET: &str = "urn:pulumi:dev::web::aws:s3/bucket:Bucket::site";
const OBJECT: &str = "urn:pulumi:dev::web::aws:s3/bucketObject:BucketObject::index";
const DB: &str = "urn:pulumi:dev::web::aws:rds/instance:Instance::db";
const EXTRA: &str = "urn:pulumi:dev::web::aws:s3/bucket:Bucket::extra";
const HALF: &str = "urn:pulumi:dev::web::aws:s3/bucket:Bucket::half";

fn custom(urn: &str, ty: &str, id: &str) -> Value {
    json!({
        "urn": urn, "custom": true, "id": id, "type": ty,
        "parent": STACK, "provider": format!("{PROVIDER}::prov-1"),
    })
}

/// stack, provider, bucket (with a secret output), object (depends on bucket), db (protected).
fn deployment() -> Value {
    let mut bucket = custom(BUCKET, "aws:s3/bucket:Bucket", "site-1");
    bucket["outputs"] = json!({"token": {SIG: SECRET_SIG, "plaintext": "\"s3cr3t-token\""}});
    let mut object = custom(OBJECT, "aws:s3/bucketObject:BucketObject", "index-1");
    object["dependencies"] = json!([BUCKET]);
    let mut db = custom(DB, "aws:rds/instance:Instance", "db-1");
    db["protect"] = json!(true);
    json!({
        "version": 3,
        "deployment": {
            "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
            "resources": [
                {"urn": STACK, "custom": false, "type": "pulumi:pulumi:Stack"},
                {"urn": PROVIDER, "custom": true, "id": "prov-1", "type": "pulumi:providers:aws", "parent": STACK},
                bucket, object, db,
            ],
        },
    })
}

/// A sandbox with stack `dev` holding [`deployment`].
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &deployment().to_string());
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox
}

fn journal_path(sandbox: &Sandbox) -> PathBuf {
    sandbox.state_file("web", "dev").with_extension("journal")
}

fn stored(sandbox: &Sandbox) -> DeploymentV3 {
    let text = std::fs::read_to_string(sandbox.state_file("web", "dev")).unwrap();
    let checkpoint: VersionedCheckpoint = serde_json::from_str(&text).unwrap();
    checkpoint.checkpoint.latest.unwrap()
}

fn export(sandbox: &Sandbox) -> Value {
    let output = sandbox.run(&["stack", "export"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn urns(exported: &Value, field: &str) -> Vec<String> {
    exported["deployment"][field]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|r| {
                    let r = if field == "pending_operations" {
                        &r["resource"]
                    } else {
                        r
                    };
                    r["urn"].as_str().unwrap().to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A journal, by hand, of a deployment over `base` that re-recorded the stack and provider,
/// created `extra`, then began updating the bucket and creating `half`, and died while writing
/// the end of the update.
fn interrupted_journal(base: &DeploymentV3) -> String {
    let manifest = Manifest {
        time: "2026-01-02T00:00:00Z".into(),
        ..Manifest::new()
    };
    let header = JournalHeader::new(base, manifest).to_line().unwrap();
    let mut extra = custom(EXTRA, "aws:s3/bucket:Bucket", "extra-1");
    let mut begun = extra.clone();
    begun.as_object_mut().unwrap().remove("id");
    let mut bucket = custom(BUCKET, "aws:s3/bucket:Bucket", "site-1");
    bucket["inputs"] = json!({"versioning": true});
    extra["inputs"] = json!({"n": 1});
    let half = custom(HALF, "aws:s3/bucket:Bucket", "");
    let same = json!([
        {"append": base.resources[0]}, {"removeBase": 0},
        {"append": base.resources[1]}, {"removeBase": 1},
    ]);
    let lines = [
        json!({"seq": 1, "mutations": same}),
        json!({"seq": 2, "begin": "creating", "resource": begun}),
        json!({"seq": 3, "end": 2, "mutations": [{"append": extra}]}),
        json!({"seq": 4, "begin": "updating", "resource": bucket}),
        json!({"seq": 5, "begin": "creating", "resource": half}),
    ];
    let mut journal = String::from_utf8(header).unwrap();
    for line in lines {
        journal.push_str(&line.to_string());
        journal.push('\n');
    }
    // Torn by the crash.
    journal.push_str(r#"{"seq":6,"end":4,"mutations":[{"append":{"urn":"#);
    journal
}

#[test]
fn an_interrupted_deployment_is_seen_warned_about_and_cleared() {
    let sandbox = sandbox();
    let checkpoint_before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
    std::fs::write(
        journal_path(&sandbox),
        interrupted_journal(&stored(&sandbox)),
    )
    .unwrap();

    // Readers see the journal replayed, and a warning, but write nothing.
    let output = sandbox.run(&["stack", "export"]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let exported: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        urns(&exported, "resources"),
        [STACK, PROVIDER, EXTRA, BUCKET, OBJECT, DB]
    );
    assert_eq!(urns(&exported, "pending_operations"), [BUCKET, HALF]);
    assert_eq!(
        exported["deployment"]["pending_operations"][0]["type"],
        "updating"
    );
    assert_eq!(
        exported["deployment"]["manifest"]["time"],
        "2026-01-02T00:00:00Z"
    );
    assert_contains(
        &stderr,
        &[
            "warning: the last deployment of stack \"dev\" was interrupted; 2 operations were pending:",
            &format!("updating {BUCKET}"),
            &format!("creating {HALF}"),
            "`cairn refresh`",
            "`cairn stack clear-pending`",
        ],
    );
    assert_eq!(
        stderr.matches("warning:").count(),
        1,
        "warned once: {stderr}"
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("web", "dev")).unwrap(),
        checkpoint_before
    );
    assert!(journal_path(&sandbox).exists());
    assert_contains(
        &sandbox.ok(&["stack"]),
        &["Resources: 6", "Pending operations: 2"],
    );
    let rows: Value = serde_json::from_str(&sandbox.ok(&["stack", "ls", "--json"])).unwrap();
    assert_eq!(rows[0]["resourceCount"], 6);

    // clear-pending recovers the journal under the lock, then needs confirmation.
    assert_contains(
        &sandbox.fails(&["stack", "clear-pending"]),
        &["needs confirmation: pass --yes"],
    );
    assert!(
        !journal_path(&sandbox).exists(),
        "recovered into the checkpoint"
    );
    assert_eq!(stored(&sandbox).pending_operations.len(), 2);
    let cleared = sandbox.ok(&["stack", "clear-pending", "--yes"]);
    assert_contains(
        &cleared,
        &[
            "Stack \"dev\" has 2 pending operations:",
            &format!("updating {BUCKET}"),
            &format!("creating {HALF}"),
            "Cleared 2 pending operations.",
        ],
    );
    let output = sandbox.run(&["stack", "export"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("warning"));
    let exported: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(urns(&exported, "pending_operations").is_empty());
    assert_eq!(urns(&exported, "resources").len(), 6);
    assert_contains(
        &sandbox.ok(&["stack", "clear-pending", "--yes"]),
        &["Stack \"dev\" has no pending operations."],
    );
    // Secrets stayed encrypted through recovery and the edit.
    let text = std::fs::read_to_string(sandbox.state_file("web", "dev")).unwrap();
    assert!(!text.contains("s3cr3t-token") && text.contains("\"ciphertext\": \"v1:"));
}

#[test]
fn a_journal_of_another_checkpoint_is_refused() {
    let sandbox = sandbox();
    let mut other = stored(&sandbox);
    other.manifest.time = "2025-12-31T00:00:00Z".into();
    other.resources.pop();
    std::fs::write(journal_path(&sandbox), interrupted_journal(&other)).unwrap();
    let before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
    for args in [
        &["stack", "export"][..],
        &["state", "protect", "--all"],
        &["stack", "clear-pending", "--yes"],
    ] {
        assert_contains(
            &sandbox.fails(args),
            &[
                "cannot recover stack \"dev\" from the journal of its interrupted deployment",
                "dev.journal",
                "dev.json is unchanged",
                "the journal was written for another checkpoint",
                "checkpoint of 2025-12-31T00:00:00Z with 4 resources",
                "checkpoint of 2026-01-01T00:00:00Z with 5 resources",
            ],
        );
    }
    assert_eq!(
        std::fs::read(sandbox.state_file("web", "dev")).unwrap(),
        before
    );
    assert!(journal_path(&sandbox).exists());
    // Moved out of the way, the stack works again.
    std::fs::remove_file(journal_path(&sandbox)).unwrap();
    sandbox.ok(&["stack", "export"]);
}

#[test]
fn protect_and_unprotect() {
    let sandbox = sandbox();
    let token_before = export(&sandbox)["deployment"]["resources"][2]["outputs"]["token"].clone();
    assert_contains(
        &sandbox.ok(&["state", "protect", BUCKET]),
        &[&format!("Protected {BUCKET}.")],
    );
    assert_contains(
        &sandbox.ok(&["state", "protect", BUCKET]),
        &[&format!("{BUCKET} is already protected.")],
    );
    let exported = export(&sandbox);
    assert_eq!(exported["deployment"]["resources"][2]["protect"], true);
    // Nothing else churned: the secret keeps its ciphertext.
    assert_eq!(
        exported["deployment"]["resources"][2]["outputs"]["token"],
        token_before
    );
    assert_contains(
        &sandbox.ok(&["state", "unprotect", "--all"]),
        &["Unprotected 2 resources."],
    );
    assert!(
        export(&sandbox)["deployment"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("protect").is_none())
    );
    assert_contains(
        &sandbox.ok(&["state", "protect", "--all"]),
        &["Protected 5 resources."],
    );
    let missing = "urn:pulumi:dev::web::aws:s3/bucket:Bucket::nope";
    assert_contains(
        &sandbox.fails(&["state", "unprotect", missing]),
        &[&format!("no resource {missing} is in the state")],
    );
    assert_contains(
        &sandbox.fails(&["state", "protect", "not-a-urn"]),
        &["\"not-a-urn\" is not a resource URN"],
    );
    sandbox.fails(&["state", "protect"]);
    sandbox.fails(&["state", "protect", BUCKET, "--all"]);
}

#[test]
fn delete_refuses_protected_resources_and_dependents() {
    let sandbox = sandbox();
    let before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
    assert_contains(
        &sandbox.fails(&["state", "delete", DB, "--yes"]),
        &[
            &format!("cannot delete protected resource {DB}"),
            "cairn state unprotect",
            "--force",
        ],
    );
    assert_contains(
        &sandbox.fails(&["state", "delete", BUCKET, "--yes"]),
        &[
            &format!("cannot delete {BUCKET}: 1 resource depends on it:"),
            &format!("{OBJECT} (through its dependency)"),
            "--target-dependents",
        ],
    );
    assert_contains(
        &sandbox.fails(&["state", "delete", PROVIDER, "--yes"]),
        &[
            "3 resources depend on it",
            &format!("{DB} (through its provider)"),
        ],
    );
    assert_contains(
        &sandbox.fails(&["state", "delete", OBJECT]),
        &["needs confirmation: pass --yes"],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("web", "dev")).unwrap(),
        before
    );

    assert_contains(
        &sandbox.ok(&["state", "delete", DB, "--force", "--yes"]),
        &[&format!("Deleted {DB} from the state.")],
    );
    let deleted = sandbox.ok(&["state", "delete", BUCKET, "--target-dependents", "--yes"]);
    assert_contains(
        &deleted,
        &[&format!(
            "Deleted {OBJECT} from the state.\nDeleted {BUCKET} from the state."
        )],
    );
    assert_eq!(urns(&export(&sandbox), "resources"), [STACK, PROVIDER]);
    assert_contains(
        &sandbox.fails(&["state", "delete", BUCKET, "--yes"]),
        &[&format!("no resource {BUCKET} is in the state")],
    );
    // The previous versions are in the history.
    assert!(
        sandbox
            .home
            .join("history/web/dev")
            .read_dir()
            .unwrap()
            .count()
            >= 3
    );
}

/// Rewrites the stored checkpoint with `edit` applied to its resources (as a hand edit or a
/// broken tool would).
fn edit_checkpoint(sandbox: &Sandbox, edit: impl FnOnce(&mut Vec<Value>)) {
    let path = sandbox.state_file("web", "dev");
    let mut checkpoint: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let resources = checkpoint["checkpoint"]["latest"]["resources"]
        .as_array_mut()
        .unwrap();
    edit(resources);
    std::fs::write(&path, checkpoint.to_string()).unwrap();
}

#[test]
fn an_inconsistent_state_is_refused_by_every_command_and_repaired_safely() {
    let sandbox = sandbox();
    // An identical duplicate of the bucket, and the object moved before the bucket it
    // depends on: both fixable without losing anything.
    edit_checkpoint(&sandbox, |resources| {
        let bucket = resources[2].clone();
        resources.push(bucket);
        resources.swap(2, 3);
    });
    let before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
    for command in [
        &["up", "--yes"][..],
        &["preview"],
        &["refresh", "--yes"],
        &["destroy", "--yes"],
        &["stack", "output"],
        &["state", "protect", BUCKET],
    ] {
        let err = sandbox.fails(command);
        assert_contains(
            &err,
            &[
                "the state of stack \"dev\" is refused",
                "(2 problems)",
                &format!("{OBJECT} refers to dependency {BUCKET}, which appears after it"),
                &format!("{BUCKET} appears more than once"),
                "`cairn state repair`",
            ],
        );
    }
    assert_eq!(
        std::fs::read(sandbox.state_file("web", "dev")).unwrap(),
        before,
        "nothing was written"
    );
    // What is broken can still be looked at.
    assert_eq!(urns(&export(&sandbox), "resources").len(), 6);

    assert_contains(
        &sandbox.fails(&["state", "repair"]),
        &["repairing the state needs confirmation: pass --yes"],
    );
    let repaired = sandbox.ok(&["state", "repair", "--yes"]);
    assert_contains(
        &repaired,
        &[
            "Repairing the state of stack \"dev\" makes 2 changes:",
            &format!("drop a second, identical entry for {BUCKET}"),
            "reorder the resources so each follows what it refers to",
            "Repaired; the state passes its integrity check.",
        ],
    );
    assert_eq!(
        urns(&export(&sandbox), "resources"),
        [STACK, PROVIDER, BUCKET, OBJECT, DB]
    );
    assert_contains(
        &sandbox.ok(&["state", "repair"]),
        &["passes its integrity check; nothing to repair"],
    );
}

#[test]
fn a_state_missing_a_provider_is_refused_and_not_guessed_at() {
    let sandbox = sandbox();
    edit_checkpoint(&sandbox, |resources| {
        resources.remove(1);
    });
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "(3 problems)",
            &format!("{BUCKET} refers to provider {PROVIDER}, which is not in the state"),
        ],
    );
    let before = std::fs::read(sandbox.state_file("web", "dev")).unwrap();
    let err = sandbox.fails(&["state", "repair", "--yes"]);
    assert_contains(
        &err,
        &[
            "None of these can be fixed safely by `cairn state repair`",
            "`cairn stack export`, then `cairn stack import`",
        ],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("web", "dev")).unwrap(),
        before
    );
}
