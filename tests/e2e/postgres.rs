//! The PostgreSQL backend against a real private server (`pgserver.rs`), and the stack commands
//! teams use on both backends: login, logout and whoami; a whole lifecycle with history, tags,
//! rename, config cp and state move; two writers on one stack; ten stacks deployed at once by
//! separate processes; moving a stack between a directory and a database; bad passwords and
//! unreachable servers. (Kill -9 of cairn and the server stopping mid-deployment are in the
//! crash harness, `crash.rs`.) Every test scans what cairn prints and what the database holds
//! for the database password and the stack's secrets.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::background::{Background, touch};
use crate::pgserver::{PgDatabase, PgServer, shared};
use crate::support::{Sandbox, assert_contains, example_wasm, find_secrets, test_wasm};

const LIMIT: Duration = Duration::from_secs(120);
const SECRET: &str = "team-backend-secret-value";

/// A project `team` running the `crash-files` program (`count` files of the example `file`
/// provider) with its state at `backend` (none: the Cairn home's directory); stack `dev` is
/// created, with a secret in its config.
fn team_project(backend: Option<&PgDatabase>, count: usize) -> Sandbox {
    let sandbox = Sandbox::new("team");
    if let Some(db) = backend {
        sandbox.use_backend(&db.url);
        sandbox.secret(&db.password);
    }
    sandbox.secret(SECRET);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: team\nruntime: wasm\ndescription: a team project\nmain: {}\n",
            test_wasm("crash-files").display()
        ),
    );
    sandbox.ok(&["plugin", "install", example_wasm("file").to_str().unwrap()]);
    init_stack(&sandbox, "dev", count);
    sandbox
}

/// Creates stack `name`, writing into `out-<name>`, with `count` files and a secret.
fn init_stack(sandbox: &Sandbox, name: &str, count: usize) {
    sandbox.ok(&["stack", "init", name]);
    let dir = format!("./out-{name}");
    std::fs::create_dir_all(sandbox.project.join(&dir)).unwrap();
    for (path, value) in [
        ("[\"cairn:grants\"].file.directories[0].host", dir.as_str()),
        ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
        ("[\"cairn:grants\"].file.directories[0].write", "true"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value, "-s", name]);
    }
    sandbox.ok(&["config", "set", "count", &count.to_string(), "-s", name]);
    sandbox.ok(&["config", "set", "--secret", "token", SECRET, "-s", name]);
}

fn files_of(sandbox: &Sandbox, stack: &str) -> usize {
    std::fs::read_dir(sandbox.project.join(format!("out-{stack}")))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn export(sandbox: &Sandbox, stack: &str) -> Value {
    serde_json::from_str(&sandbox.ok(&["stack", "export", "-s", stack])).unwrap()
}

fn urns(export: &Value) -> Vec<String> {
    export["deployment"]["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| r["urn"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Everything the database holds, as text, for the secret scan.
fn database_text(db: &PgDatabase) -> String {
    let tables = [
        "cairn_stacks",
        "cairn_journal",
        "cairn_checkpoint_history",
        "cairn_updates",
        "cairn_stack_tags",
        "cairn_locks",
    ];
    tables
        .iter()
        .map(|t| {
            shared()
                .psql(&db.url, &format!("SELECT t::text FROM {t} t"))
                .unwrap_or_else(|e| panic!("reading {t}: {e}"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_database_has_no_secret(db: &PgDatabase) {
    let text = database_text(db);
    // bytea columns print as hex: decode them to find plaintext inside checkpoints.
    let decoded: String = text
        .split("\\x")
        .skip(1)
        .map(|hex| {
            let hex: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
            let bytes: Vec<u8> = (0..hex.len() / 2)
                .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect();
    let secrets = [SECRET.to_owned(), db.password.clone()]
        .into_iter()
        .collect();
    let found = find_secrets(&secrets, "the database", &format!("{text}\n{decoded}"));
    assert!(found.is_empty(), "{found:?}");
    assert!(
        decoded.contains("file:index:File"),
        "the checkpoints were not decoded for the scan"
    );
}

/// The whole life of a stack on PostgreSQL, and the same commands on the file backend.
#[test]
fn postgres_full_lifecycle_with_history_tags_rename_and_destroy() {
    let db = shared().fresh_database();
    lifecycle(&team_project(Some(&db), 12));
    assert_database_has_no_secret(&db);
    let rows = shared().psql(
        &db.url,
        "SELECT name, removed_at IS NOT NULL FROM cairn_stacks ORDER BY id",
    );
    assert_eq!(
        rows.unwrap().trim(),
        "prod|t\nqa|t",
        "the removed stacks' rows stay, marked"
    );
    let versions = shared()
        .psql(&db.url, "SELECT max(version) FROM cairn_schema_migrations")
        .unwrap();
    assert_eq!(versions.trim(), "1");
}

#[test]
fn file_backend_has_the_same_stack_commands() {
    let sandbox = team_project(None, 12);
    lifecycle(&sandbox);
    // Pulumi's DIY layout: history records and checkpoints side by side.
    let history = sandbox.home.join("history/team/prod");
    let names: Vec<String> = std::fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("prod-") && n.ends_with(".history.json"))
            && names.iter().any(|n| n.ends_with(".checkpoint.json")),
        "{names:?}"
    );
}

fn lifecycle(sandbox: &Sandbox) {
    sandbox.ok(&["up", "--yes", "-m", "first files"]);
    assert_eq!(files_of(sandbox, "dev"), 12);
    sandbox.ok(&["config", "set", "generation", "2"]);
    sandbox.ok(&["up", "--yes", "--message", "second generation"]);

    let history: Value =
        serde_json::from_str(&sandbox.ok(&["stack", "history", "--json"])).unwrap();
    let history = history.as_array().unwrap();
    assert_eq!(history.len(), 2, "{history:#?}");
    assert_eq!(history[0]["version"], 2, "newest first");
    assert_eq!(history[0]["message"], "second generation");
    assert_eq!(history[0]["kind"], "update");
    assert_eq!(history[0]["result"], "succeeded");
    assert_eq!(history[0]["resourceChanges"]["update"], 12);
    assert_eq!(history[1]["message"], "first files");
    assert!(history[1]["resourceChanges"]["create"].as_u64().unwrap() >= 12);
    assert!(history[1]["startTime"].as_str().unwrap().ends_with('Z'));
    let shown = sandbox.ok(&["stack", "history"]);
    assert_contains(
        &shown,
        &[
            "Version: 2",
            "Message: second generation",
            "UpdateKind: update",
            "Status: succeeded",
            "Resource changes: +0-0~12",
        ],
    );
    let page = sandbox.ok(&[
        "stack",
        "history",
        "--json",
        "--page-size",
        "1",
        "--page",
        "2",
    ]);
    assert_contains(&page, &["first files"]);
    assert!(!page.contains("second generation"), "{page}");

    sandbox.ok(&["stack", "tag", "set", "owner", "platform-team"]);
    sandbox.ok(&["stack", "tag", "set", "cost:center", "42"]);
    assert_eq!(
        sandbox.ok(&["stack", "tag", "get", "owner"]).trim(),
        "platform-team"
    );
    let tags: Value = serde_json::from_str(&sandbox.ok(&["stack", "tag", "ls", "--json"])).unwrap();
    assert_eq!(tags["cost:center"], "42");
    assert_eq!(tags["pulumi:project"], "team");
    assert_eq!(tags["pulumi:description"], "a team project");
    sandbox.ok(&["stack", "tag", "rm", "cost:center"]);
    assert_contains(
        &sandbox.fails(&["stack", "tag", "get", "cost:center"]),
        &["has no tag"],
    );
    assert_contains(
        &sandbox.fails(&["stack", "tag", "set", "bad name!", "x"]),
        &["bad name!", "ASCII letters"],
    );
    assert_contains(
        &sandbox.fails(&["stack", "tag", "set", "long", &"v".repeat(257)]),
        &["256"],
    );

    // Rename: every URN, the history, the tags and the settings file follow.
    sandbox.ok(&["stack", "rename", "prod"]);
    assert!(!sandbox.project.join("Pulumi.dev.yaml").exists());
    assert!(sandbox.project.join("Pulumi.prod.yaml").exists());
    let renamed = export(sandbox, "prod");
    let all = urns(&renamed);
    assert!(
        all.iter().all(|u| u.starts_with("urn:pulumi:prod::team::")),
        "{all:#?}"
    );
    assert!(
        all.iter()
            .any(|u| u.ends_with("pulumi:pulumi:Stack::team-prod"))
    );
    assert_contains(
        &sandbox.fails(&["stack", "select", "dev"]),
        &["does not exist"],
    );
    assert_eq!(
        sandbox.ok(&["stack", "tag", "get", "owner"]).trim(),
        "platform-team"
    );
    let history: Value =
        serde_json::from_str(&sandbox.ok(&["stack", "history", "--json"])).unwrap();
    assert_eq!(history.as_array().unwrap().len(), 2);
    // Nothing changes for the renamed stack: its settings file still grants out-dev.
    sandbox.ok(&["preview", "--expect-no-changes"]);
    assert_eq!(sandbox.ok(&["config", "get", "token"]).trim(), SECRET);

    // config cp and state move to a second stack.
    init_stack(sandbox, "qa", 0);
    sandbox.ok(&["stack", "select", "prod"]);
    sandbox.ok(&[
        "config",
        "set",
        "--secret",
        "apiKey",
        "copy-me-secretly",
        "-s",
        "prod",
    ]);
    sandbox.secret("copy-me-secretly");
    sandbox.ok(&["config", "cp", "apiKey", "--dest", "qa"]);
    assert_eq!(
        sandbox.ok(&["config", "get", "apiKey", "-s", "qa"]).trim(),
        "copy-me-secretly"
    );
    let qa_settings = sandbox.read("Pulumi.qa.yaml");
    let prod_settings = sandbox.read("Pulumi.prod.yaml");
    let salt = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("encryptionsalt"))
            .unwrap()
            .to_owned()
    };
    assert_ne!(
        salt(&qa_settings),
        salt(&prod_settings),
        "each stack has its own key"
    );
    let moved = all.iter().find(|u| u.ends_with("::f003")).unwrap().clone();
    let refused = sandbox.fails(&["state", "move", "--dest", "qa", &moved]);
    assert_contains(
        &refused,
        &[
            "moving resources between stacks needs confirmation",
            "pass --yes",
        ],
    );
    let out = sandbox.ok(&["state", "move", "--dest", "qa", "--yes", &moved]);
    assert_contains(
        &out,
        &[
            "Moved 1 resource",
            "crash:index:Group$file:index:File::f003",
        ],
    );
    let qa = urns(&export(sandbox, "qa"));
    assert!(
        qa.iter()
            .any(|u| u == "urn:pulumi:qa::team::file:index:File::f003"),
        "{qa:#?}"
    );
    assert!(
        !urns(&export(sandbox, "prod"))
            .iter()
            .any(|u| u.ends_with("::f003"))
    );
    // The resource is the destination's now: destroying qa deletes it, where qa's grant puts
    // its files.
    std::fs::rename(
        sandbox.project.join("out-dev/f003.txt"),
        sandbox.project.join("out-qa/f003.txt"),
    )
    .unwrap();
    sandbox.ok(&["destroy", "--yes", "-s", "qa"]);
    assert_eq!(files_of(sandbox, "qa"), 0);
    assert_eq!(files_of(sandbox, "dev"), 11);
    sandbox.ok(&["stack", "rm", "qa", "--yes"]);

    sandbox.ok(&["destroy", "--yes", "-m", "teardown"]);
    let history: Value =
        serde_json::from_str(&sandbox.ok(&["stack", "history", "--json"])).unwrap();
    assert_eq!(history[0]["kind"], "destroy");
    assert_eq!(history[0]["message"], "teardown");
    assert_eq!(history[0]["version"], 3);
    sandbox.ok(&["stack", "rm", "prod", "--yes"]);
    assert_contains(&sandbox.ok(&["stack", "ls"]), &["No stacks"]);
}

#[test]
fn postgres_login_whoami_and_logout_keep_the_password_to_themselves() {
    let db = shared().fresh_database();
    let sandbox = Sandbox::new("team");
    sandbox.secret(&db.password);
    let out = sandbox.ok(&["login", &db.url]);
    assert_contains(&out, &["Logged in to postgres://", &db.user]);
    let credentials = sandbox.home.join("credentials.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&credentials)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the credentials file is the owner's only");
    }
    // Without a flag or variable, commands use the backend logged in to.
    sandbox.ok(&["stack", "init", "dev"]);
    let stacks = shared().psql(&db.url, "SELECT project || '/' || name FROM cairn_stacks");
    assert_eq!(stacks.unwrap().trim(), "team/dev");
    assert_eq!(sandbox.ok(&["whoami"]).trim(), db.user);
    let verbose = sandbox.ok(&["whoami", "-v"]);
    assert_contains(
        &verbose,
        &["User: ", "Backend URL: postgres://", "/cairn_test_"],
    );
    let json: Value = serde_json::from_str(&sandbox.ok(&["whoami", "--json"])).unwrap();
    assert_eq!(json["user"], db.user.as_str());
    assert_contains(&sandbox.ok(&["stack"]), &["Backend: postgres://"]);

    // Pulumi's variable and the URL's password through PGPASSWORD instead.
    let no_password = db.url.replace(&format!(":{}@", db.password), "@");
    let out = sandbox
        .command(&["whoami", "-v"])
        .env("PULUMI_BACKEND_URL", &no_password)
        .env("PGPASSWORD", &db.password)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    assert_contains(
        &sandbox.ok(&["logout"]),
        &["Logged out of postgres://", ":****@"],
    );
    assert_contains(&sandbox.ok(&["whoami", "-v"]), &["Backend URL: file://"]);
    assert_contains(&sandbox.fails(&["login"]), &["cairn login postgres://"]);
    assert_contains(
        &sandbox.ok(&["login", "--local"]),
        &["Logged in to file://"],
    );
}

/// Two `up` on one stack at once: the second is refused, naming the first; the lock dies with
/// its holder's session (kill -9), so the next `up` runs.
#[test]
fn postgres_two_ups_on_one_stack_one_is_refused_naming_the_holder() {
    let db = shared().fresh_database();
    let sandbox = team_project(Some(&db), 4);
    let release = sandbox.root().join("release");
    let mut command = sandbox.command(&["up", "--yes"]);
    command.env(
        "CAIRN_TEST_LOCK_PAUSE",
        format!("held:{}", release.display()),
    );
    let mut first = Background::spawn(command, sandbox.root(), "first");
    let reached = PathBuf::from(format!("{}.reached", release.display()));
    first.wait_for("the first up holding the lock", LIMIT, || reached.exists());

    let refused = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &refused,
        &[
            "stack \"dev\" is locked by `cairn up`",
            &format!("pid {}", first.pid()),
            "PostgreSQL session",
            "wait for it to finish",
        ],
    );
    assert!(!refused.contains(&db.password));
    touch(&release);
    let status = first.wait(LIMIT);
    assert!(status.success(), "{}", first.stderr());
    assert_eq!(files_of(&sandbox, "dev"), 4);

    // A holder killed with SIGKILL: its session ends, and with it the lock.
    let _ = std::fs::remove_file(&release);
    let _ = std::fs::remove_file(&reached);
    let mut command = sandbox.command(&["refresh", "--yes"]);
    command.env(
        "CAIRN_TEST_LOCK_PAUSE",
        format!("held:{}", release.display()),
    );
    let mut killed = Background::spawn(command, sandbox.root(), "killed");
    killed.wait_for("the refresh holding the lock", LIMIT, || reached.exists());
    killed.signal("KILL");
    killed.wait(LIMIT);
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let out = sandbox.run(&["up", "--yes"]);
        if out.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is locked") && std::time::Instant::now() < deadline,
            "{stderr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ten stacks of one project deployed at the same moment by ten processes, all on one
/// database: each succeeds and records exactly its own files.
#[test]
fn postgres_ten_stacks_deploy_concurrently() {
    let db = shared().fresh_database();
    let sandbox = team_project(Some(&db), 8);
    let names: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
    for name in &names {
        init_stack(&sandbox, name, 8);
    }
    let mut runs: Vec<Background> = names
        .iter()
        .map(|name| {
            Background::spawn(
                sandbox.command(&["up", "--yes", "-s", name, "-m", name]),
                sandbox.root(),
                name,
            )
        })
        .collect();
    for (name, run) in names.iter().zip(runs.iter_mut()) {
        let status = run.wait(LIMIT);
        assert!(status.success(), "{name}: {}", run.stderr());
    }
    for name in &names {
        assert_eq!(files_of(&sandbox, name), 8, "{name}");
        let state = export(&sandbox, name);
        let files = urns(&state)
            .iter()
            .filter(|u| u.contains("file:index:File::"))
            .count();
        assert_eq!(files, 8, "{name}");
        assert!(
            urns(&state)
                .iter()
                .all(|u| u.starts_with(&format!("urn:pulumi:{name}::")))
        );
        let history: Value =
            serde_json::from_str(&sandbox.ok(&["stack", "history", "--json", "-s", name])).unwrap();
        assert_eq!(history[0]["message"], name.as_str());
    }
    let listed = sandbox.ok(&["stack", "ls"]);
    for name in &names {
        assert_contains(&listed, &[name]);
    }
    let journal = shared()
        .psql(&db.url, "SELECT count(*) FROM cairn_journal")
        .unwrap();
    assert_eq!(journal.trim(), "0", "every journal was compacted");
    assert_database_has_no_secret(&db);
}

/// A stack moves between a directory and a database (and back) with `stack export` and
/// `stack import`: the layouts differ (files there, rows here), the checkpoint format is the
/// same, secrets stay encrypted with the stack's own key.
#[test]
fn a_stack_moves_between_the_file_and_postgres_backends() {
    let db = shared().fresh_database();
    let sandbox = team_project(None, 6);
    sandbox.ok(&["up", "--yes"]);
    let exported = sandbox.ok(&["stack", "export"]);
    let file = sandbox.write("dev.json", &exported);

    sandbox.use_backend(&db.url);
    sandbox.secret(&db.password);
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox.ok(&["preview", "--expect-no-changes"]);
    assert_eq!(
        urns(&export(&sandbox, "dev")),
        urns(&serde_json::from_str(&exported).unwrap())
    );
    assert_eq!(sandbox.ok(&["config", "get", "token"]).trim(), SECRET);
    sandbox.ok(&["config", "set", "generation", "2"]);
    sandbox.ok(&["up", "--yes"]);

    // And back to a new directory.
    let back = sandbox.ok(&["stack", "export"]);
    let file = sandbox.write("back.json", &back);
    let dir = sandbox.root().join("state-again");
    sandbox.use_backend(&format!("file://{}", dir.display()));
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox.ok(&["preview", "--expect-no-changes"]);
    sandbox.ok(&["destroy", "--yes"]);
    assert_eq!(files_of(&sandbox, "dev"), 0);
    assert_database_has_no_secret(&db);
}

/// Wrong passwords, missing databases and unreachable servers: each a clear error naming the
/// backend (never the password), and no data touched.
#[test]
fn postgres_connection_failures_are_clear() {
    let db = shared().fresh_database();
    let sandbox = Sandbox::new("team");
    sandbox.secret("not-the-password");
    sandbox.secret(&db.password);
    let wrong = db.url.replace(&db.password, "not-the-password");
    let missing = shared().url(&db.user, &db.password, "no_such_database");
    let refused = format!(
        "postgres://{}:{}@127.0.0.1:1/{}",
        db.user, db.password, db.name
    );
    // A blackhole address: nothing answers, so the connect timeout decides.
    let unreachable = format!(
        "postgres://{}:{}@10.255.255.1:5432/{}?connect_timeout=2",
        db.user, db.password, db.name
    );
    let cases = [
        (
            wrong.as_str(),
            vec![
                "password authentication failed",
                "check the password",
                "127.0.0.1",
            ],
        ),
        (
            missing.as_str(),
            vec!["no_such_database", "does not exist", "create the database"],
        ),
        (
            refused.as_str(),
            vec!["cannot connect to the PostgreSQL backend", "127.0.0.1:1"],
        ),
        (
            unreachable.as_str(),
            vec![
                "cannot connect to the PostgreSQL backend",
                "10.255.255.1:5432",
            ],
        ),
        (
            "postgres://u@h/db?sslmode=on",
            vec!["sslmode \"on\" is not an SSL mode"],
        ),
        (
            "mysql://u@h/db",
            vec!["unsupported backend URL", "postgres://"],
        ),
    ];
    for (url, expected) in cases {
        sandbox.use_backend(url);
        let started = std::time::Instant::now();
        let err = sandbox.fails(&["stack", "ls"]);
        assert_contains(&err, &expected);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url}: took {:?}",
            started.elapsed()
        );
        let login = sandbox.fails(&["login", url]);
        assert_contains(&login, &expected[..1]);
    }
    assert!(
        !sandbox.home.join("credentials.json").exists(),
        "a failed login saves nothing"
    );
}

/// First use by several processes at once migrates the schema exactly once; a database whose
/// schema is newer than this Cairn knows is refused, naming both versions, and left alone.
#[test]
fn postgres_schema_migrates_once_and_refuses_a_newer_one() {
    let db = shared().fresh_database();
    let sandbox = Sandbox::new("team");
    sandbox.use_backend(&db.url);
    sandbox.secret(&db.password);
    let mut runs: Vec<Background> = (0..6)
        .map(|i| {
            Background::spawn(
                sandbox.command(&["whoami"]),
                sandbox.root(),
                &format!("w{i}"),
            )
        })
        .collect();
    for run in &mut runs {
        let status = run.wait(LIMIT);
        assert!(status.success(), "{}", run.stderr());
        assert_eq!(run.stdout().trim(), db.user);
    }
    let applied = shared()
        .psql(
            &db.url,
            "SELECT count(*), max(version) FROM cairn_schema_migrations",
        )
        .unwrap();
    assert_eq!(applied.trim(), "1|1");

    shared()
        .psql(
            &db.url,
            "INSERT INTO cairn_schema_migrations (version, description) VALUES (99, 'future')",
        )
        .unwrap();
    let refused = sandbox.fails(&["stack", "ls"]);
    assert_contains(
        &refused,
        &[
            "schema version 99",
            "newer than this Cairn knows (1)",
            "upgrade Cairn",
        ],
    );
    let tables = shared()
        .psql(&db.url, "SELECT count(*) FROM cairn_schema_migrations")
        .unwrap();
    assert_eq!(tables.trim(), "2", "nothing was changed");
}

/// A removed stack's name can be used again; the old stack's history stays with its row.
#[test]
fn postgres_a_removed_stack_name_is_free_again() {
    let db = shared().fresh_database();
    let sandbox = team_project(Some(&db), 2);
    sandbox.ok(&["up", "--yes", "-m", "before"]);
    sandbox.ok(&["destroy", "--yes"]);
    sandbox.ok(&["stack", "rm", "dev", "--yes"]);
    init_stack(&sandbox, "dev", 2);
    let history: Value =
        serde_json::from_str(&sandbox.ok(&["stack", "history", "--json"])).unwrap();
    assert_eq!(
        history,
        serde_json::json!([]),
        "a new stack starts a new history"
    );
    sandbox.ok(&["up", "--yes"]);
    let rows = shared()
        .psql(
            &db.url,
            "SELECT count(*) FILTER (WHERE removed_at IS NULL), count(*) FROM cairn_stacks",
        )
        .unwrap();
    assert_eq!(rows.trim(), "1|2");
}

/// A server that takes TCP logins only over TLS, reached with each `sslmode`: the modes that
/// check the certificate accept it only when `sslrootcert` names its CA (and, for verify-full,
/// the name matches); plain text is refused by the server.
#[test]
fn postgres_over_tls_with_each_sslmode() {
    let server = PgServer::start_tls();
    let db = server.fresh_database();
    let sandbox = Sandbox::new("team");
    sandbox.secret(&db.password);
    let ca = server.tls_cert();
    let other = sandbox.root().join("other.crt");
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=another-ca", "-keyout"])
        .arg(sandbox.root().join("other.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let url = |query: &str| format!("{}?{query}", db.url);
    let (ca, other) = (ca.display(), other.display());
    let accepted = [
        url("sslmode=prefer"),
        url("sslmode=require"),
        url(&format!("sslmode=verify-ca&sslrootcert={ca}")),
        url(&format!("sslmode=verify-full&sslrootcert={ca}")),
        db.url.replace("127.0.0.1", "localhost")
            + &format!("?sslmode=verify-full&sslrootcert={ca}"),
    ];
    for url in &accepted {
        sandbox.use_backend(url);
        assert_eq!(sandbox.ok(&["whoami"]).trim(), db.user, "{url}");
    }
    let refused = [
        (url("sslmode=disable"), "pg_hba.conf"),
        (url("sslmode=verify-full"), "certificate"),
        (
            url(&format!("sslmode=verify-full&sslrootcert={other}")),
            "certificate",
        ),
        (
            url(&format!("sslmode=require&sslrootcert={other}")),
            "certificate",
        ),
    ];
    for (url, expected) in &refused {
        sandbox.use_backend(url);
        let err = sandbox.fails(&["whoami"]);
        assert_contains(
            &err,
            &["cannot connect to the PostgreSQL backend", expected],
        );
    }
    // The libpq variables do the same, and a whole deployment runs over TLS.
    let project = team_project(None, 2);
    project.use_backend(&db.url);
    project.secret(&db.password);
    let out = project
        .command(&["stack", "ls"])
        .env("PGSSLMODE", "verify-full")
        .env("PGSSLROOTCERT", server.tls_cert())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    project.use_backend(&url(&format!("sslmode=verify-full&sslrootcert={ca}")));
    init_stack(&project, "tls", 2);
    project.ok(&["up", "--yes", "-s", "tls"]);
    assert_eq!(files_of(&project, "tls"), 2);
    project.ok(&["destroy", "--yes", "-s", "tls"]);
}

/// What the database holds is untrusted: a row whose name is not a stack name is skipped with
/// a warning, and control characters in tags and update messages reach the terminal made
/// visible.
#[test]
fn postgres_rows_written_by_someone_else_are_checked() {
    let db = shared().fresh_database();
    let sandbox = team_project(Some(&db), 1);
    shared()
        .psql(
            &db.url,
            "INSERT INTO cairn_stacks (project, name, checkpoint) \
             VALUES ('team', E'../evil\\x1b[2J', '\\x7b7d'::bytea)",
        )
        .unwrap();
    let listed = sandbox.run(&["stack", "ls"]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    crate::support::assert_no_raw_controls("stack ls", &listed.stdout);
    crate::support::assert_no_raw_controls("stack ls", &listed.stderr);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(!stdout.contains("evil"), "{stdout}");
    assert_contains(
        &String::from_utf8_lossy(&listed.stderr),
        &["not a stack name"],
    );

    sandbox.ok(&["up", "--yes", "-m", "ok"]);
    shared()
        .psql(
            &db.url,
            "INSERT INTO cairn_stack_tags (stack_id, name, value) \
             SELECT id, 'owner', E'evil\\x1b]0;title\\x07' FROM cairn_stacks WHERE name = 'dev'; \
             UPDATE cairn_updates SET record = replace(record, '\"message\":\"ok\"', \
             '\"message\":\"a\\u001b[31mred\"');",
        )
        .unwrap();
    for args in [
        &["stack", "tag", "ls"][..],
        &["stack", "tag", "get", "owner"],
        &["stack", "history"],
        &["stack", "history", "--json"],
    ] {
        let out = sandbox.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        crate::support::assert_no_raw_controls(&format!("{args:?}"), &out.stdout);
    }
    assert_contains(
        &sandbox.ok(&["stack", "history"]),
        &["Message: a\\x1b[31mred"],
    );
}
