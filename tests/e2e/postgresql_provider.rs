//! The `postgresql` package end to end: unmodified programs written with the published
//! pulumi-postgresql SDKs (`pulumi_postgresql` 3.18.2 from PyPI, `@pulumi/postgresql` 3.18.1
//! from npm), deployed against private PostgreSQL servers (`pgserver.rs`, one per test), each
//! twice:
//!
//! * `wasm::*`: on the sandboxed wasm provider built from `examples/providers/postgresql`,
//!   granted nothing but `cairn:grants.postgresql.tcp: ["127.0.0.1:PORT"]`;
//! * `oracle::*`: on the real pulumi-postgresql plugin (`pulumi-resource-postgresql` 3.18.2), the
//!   behaviour the wasm provider must match, when `CAIRN_PG_ORACLE` names its binary or
//!   `/opt/oracle/bin/pulumi-resource-postgresql` exists. Without one these tests print that
//!   they were skipped and pass: CI has no oracle. (It is never part of the repository.)
//!
//! The scenarios port the Terraform provider's acceptance tests (cyrilgdn/
//! terraform-provider-postgresql, `postgresql/resource_postgresql_*_test.go`; each names the
//! `TestAcc*` it follows) to Python programs and check what a user relies on: the catalog
//! (pg_roles, pg_auth_members, has_*_privilege for the grantee, owners, pg_extension,
//! pg_default_acl), the state Cairn records (IDs, outputs, the defaults the provider fills in),
//! which changes update and which replace, refresh after out-of-band changes, imports by the
//! documented ID formats, errors that name the culprit with nothing recorded that did not
//! happen, and a destroy that leaves the catalog as it was. The sandbox's secret scan runs on
//! every command: the server's and the roles' passwords never appear in plain text in the state,
//! the journal or what the CLI prints.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::pgserver::{PgServer, SUPERUSER, SUPERUSER_PASSWORD, quote_literal};
use crate::support::{
    Sandbox, assert_contains, example_wasm, finished_steps, node_modules, ops_of, python,
};

/// Where the oracle is looked for when `CAIRN_PG_ORACLE` is not set.
const ORACLE: &str = "/opt/oracle/bin/pulumi-resource-postgresql";

/// The project every test deploys.
const PROJECT: &str = "pg";

/// A role password the programs take from a secret config value.
const ROLE_PASSWORD: &str = "role-password-kept-secret-42";

/// Which implementation of the `postgresql` package a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Provider {
    Wasm,
    Oracle,
}

impl Provider {
    /// The provider's file; `None` (said on stderr) when the oracle is not installed.
    fn file(self) -> Option<PathBuf> {
        match self {
            Provider::Wasm => {
                let wasm = example_wasm("postgresql");
                assert!(
                    wasm.is_file(),
                    "the wasm postgresql provider was not built: no {} (is \
                     examples/providers/postgresql a member of examples/Cargo.toml?)",
                    wasm.display()
                );
                Some(wasm)
            }
            Provider::Oracle => match std::env::var_os("CAIRN_PG_ORACLE") {
                Some(path) => {
                    let path = PathBuf::from(path);
                    assert!(
                        path.is_file(),
                        "CAIRN_PG_ORACLE: no file {}",
                        path.display()
                    );
                    Some(path)
                }
                None if std::path::Path::new(ORACLE).is_file() => Some(PathBuf::from(ORACLE)),
                None => {
                    // Straight to stderr: the test harness does not capture it (and std's
                    // printing macros are refused in this crate).
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
                        "skipped: no pulumi-resource-postgresql oracle at {ORACLE} (set \
                         CAIRN_PG_ORACLE to run the oracle tests)"
                    );
                    None
                }
            },
        }
    }
}

/// A program in one of the languages of the published SDKs, or compiled to wasm.
enum Program<'a> {
    Python(&'a str),
    Node(&'a str),
    /// A `runtime: wasm` program: its component.
    Wasm(&'a std::path::Path),
}

/// A stack `dev` of project [`PROJECT`] running a program on `provider` against `server`, as
/// its superuser (`postgresql:superuser`, password a secret), without TLS.
struct Pg {
    sandbox: Sandbox,
    server: PgServer,
    provider: Provider,
}

impl Pg {
    /// A Python program on a fresh server; `None` when the provider is not there.
    fn python(provider: Provider, program: &str) -> Option<Pg> {
        Pg::on(provider, Program::Python(program), PgServer::start())
    }

    fn on(provider: Provider, program: Program, server: PgServer) -> Option<Pg> {
        let file = provider.file()?;
        let sandbox = Sandbox::new(PROJECT);
        let plugins = format!(
            "plugins:\n  providers:\n    - name: postgresql\n      path: {}\n",
            file.display()
        );
        match program {
            Program::Python(text) => {
                let python = python();
                let venv = python.parent().unwrap().parent().unwrap();
                sandbox.write("__main__.py", text);
                sandbox.write(
                    "Pulumi.yaml",
                    &format!(
                        "name: {PROJECT}\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n{plugins}",
                        venv.display()
                    ),
                );
            }
            Program::Node(text) => {
                std::os::unix::fs::symlink(node_modules(), sandbox.project.join("node_modules"))
                    .unwrap();
                sandbox.write("index.js", text);
                sandbox.write(
                    "package.json",
                    &format!(r#"{{"name": "{PROJECT}", "main": "index.js"}}"#),
                );
                sandbox.write(
                    "Pulumi.yaml",
                    &format!("name: {PROJECT}\nruntime: nodejs\n{plugins}"),
                );
            }
            Program::Wasm(component) => {
                sandbox.write(
                    "Pulumi.yaml",
                    &format!(
                        "name: {PROJECT}\nruntime: wasm\nmain: {}\n{plugins}",
                        component.display()
                    ),
                );
            }
        }
        sandbox.ok(&["stack", "init", "dev"]);
        let pg = Pg {
            sandbox,
            server,
            provider,
        };
        pg.connect_to(pg.server.port(), SUPERUSER_PASSWORD, "disable");
        pg.secret_config("rolePassword", ROLE_PASSWORD);
        Some(pg)
    }

    /// Points the provider at `127.0.0.1:port` with `password` and `sslmode`; the wasm
    /// provider is granted that address (and only that one).
    fn connect_to(&self, port: u16, password: &str, sslmode: &str) {
        for (key, value) in [
            ("postgresql:host", "127.0.0.1"),
            ("postgresql:port", &port.to_string()),
            ("postgresql:username", SUPERUSER),
            ("postgresql:sslmode", sslmode),
            ("postgresql:superuser", "true"),
        ] {
            self.set(key, value);
        }
        self.secret_config("postgresql:password", password);
        if self.provider == Provider::Wasm {
            self.sandbox.ok(&[
                "config",
                "set",
                "--path",
                "[\"cairn:grants\"].postgresql.tcp[0]",
                &format!("127.0.0.1:{port}"),
            ]);
        }
    }

    fn set(&self, key: &str, value: &str) {
        self.sandbox.ok(&["config", "set", key, value]);
    }

    /// A secret config value (which the secret scan then looks for).
    fn secret_config(&self, key: &str, value: &str) {
        self.sandbox.ok(&["config", "set", "--secret", key, value]);
    }

    /// Runs `cairn args`, failing the test with everything it printed if it fails.
    fn cairn(&self, args: &[&str]) -> String {
        let out = self.sandbox.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{:?}: cairn {args:?} failed:\n{stdout}\n{}",
            self.provider,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// `up`: the steps that were done, as `(op, name)`.
    fn up(&self) -> Vec<(String, String)> {
        finished_steps(&self.cairn(&["up", "--yes", "--json"]))
    }

    /// A `preview`: the steps an `up` would do.
    fn preview(&self) -> Vec<(String, String)> {
        finished_steps(&self.cairn(&["preview", "--json"]))
    }

    /// An `up` that must fail: everything it printed.
    fn up_fails(&self) -> String {
        let out = self.sandbox.run(&["up", "--yes"]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.status.success(),
            "{:?}: cairn up succeeded:\n{text}",
            self.provider
        );
        text
    }

    fn refresh(&self) {
        self.cairn(&["refresh", "--yes"]);
    }

    /// `destroy`, after which the state holds no resource.
    fn destroy(&self) {
        self.cairn(&["destroy", "--yes"]);
        assert!(
            self.resources().is_empty(),
            "{:?}: left after destroy: {:?}",
            self.provider,
            self.resources()
        );
    }

    /// The package's resources in the state (not the stack, not providers).
    fn resources(&self) -> Vec<Value> {
        let state: Value = serde_json::from_str(&self.cairn(&["stack", "export"])).unwrap();
        state["deployment"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| {
                r["type"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("postgresql:index/")
            })
            .cloned()
            .collect()
    }

    /// The resource named `name` (the last part of its URN).
    fn resource(&self, name: &str) -> Value {
        let resources = self.resources();
        resources
            .iter()
            .find(|r| {
                r["urn"]
                    .as_str()
                    .is_some_and(|u| u.ends_with(&format!("::{name}")))
            })
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "{:?}: no resource {name} in the state: {:?}",
                    self.provider,
                    resources.iter().map(|r| &r["urn"]).collect::<Vec<_>>()
                )
            })
    }

    fn outputs(&self, name: &str) -> Value {
        self.resource(name)["outputs"].clone()
    }

    fn id(&self, name: &str) -> String {
        text(&self.resource(name)["id"]).to_owned()
    }

    /// `sql` as the superuser in `database`: psql's unaligned output, trimmed.
    fn sql(&self, database: &str, sql: &str) -> String {
        self.server.sql(database, sql).trim().to_owned()
    }

    /// The privileges among SELECT, INSERT, UPDATE and DELETE that `role` has on `table`,
    /// sorted and comma-separated.
    fn table_privileges(&self, database: &str, role: &str, table: &str) -> String {
        self.sql(
            database,
            &format!(
                "SELECT coalesce(string_agg(p, ',' ORDER BY p), '') FROM \
                 unnest(ARRAY['SELECT','INSERT','UPDATE','DELETE']) p \
                 WHERE has_table_privilege({}, {}, p)",
                quote_literal(role),
                quote_literal(table)
            ),
        )
    }

    /// Whether `role` has `privilege` through `function` (`has_schema_privilege`, ...) on
    /// `object`.
    fn has(
        &self,
        database: &str,
        function: &str,
        role: &str,
        object: &str,
        privilege: &str,
    ) -> bool {
        let answer = self.sql(
            database,
            &format!(
                "SELECT {function}({}, {}, {})",
                quote_literal(role),
                quote_literal(object),
                quote_literal(privilege)
            ),
        );
        answer == "t"
    }

    /// The roles `role` is a member of, sorted.
    fn memberships(&self, role: &str) -> Vec<String> {
        lines(&self.sql(
            "postgres",
            &format!(
                "SELECT pg_get_userbyid(roleid) FROM pg_auth_members \
                 WHERE pg_get_userbyid(member) = {} ORDER BY 1",
                quote_literal(role)
            ),
        ))
    }

    /// A role's attributes as `pg_roles` has them: `super inherit createrole createdb login
    /// replication bypassrls connlimit validuntil config`.
    fn role(&self, role: &str) -> String {
        self.sql(
            "postgres",
            &format!(
                "SELECT concat_ws(' ', rolsuper, rolinherit, rolcreaterole, rolcreatedb, \
                 rolcanlogin, rolreplication, rolbypassrls, rolconnlimit, \
                 coalesce(rolvaliduntil::text, '-'), coalesce(rolconfig::text, '-')) \
                 FROM pg_roles WHERE rolname = {}",
                quote_literal(role)
            ),
        )
    }

    /// Whether `role` can log in with `password`.
    fn can_log_in(&self, role: &str, password: &str) -> bool {
        self.server
            .psql(&self.server.url(role, password, "postgres"), "SELECT 1")
            .is_ok()
    }

    /// Everything the tests compare before and after: roles (not passwords), memberships,
    /// databases, and in every database that accepts connections its schemas, extensions,
    /// default privileges and the owners and privileges of its relations and functions. An
    /// access list that is the default (NULL) reads as the default it stands for, so revoking
    /// what was granted restores the same text.
    fn catalog(&self) -> String {
        let mut all = self.sql(
            "postgres",
            "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ( \
             SELECT concat_ws(' ', 'role', rolname, rolsuper, rolinherit, rolcreaterole, \
               rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolconnlimit, \
               rolvaliduntil, rolconfig) FROM pg_roles \
             UNION ALL SELECT concat_ws(' ', 'member', pg_get_userbyid(member), 'of', \
               pg_get_userbyid(roleid), admin_option) FROM pg_auth_members \
             UNION ALL SELECT concat_ws(' ', 'database', datname, pg_get_userbyid(datdba), \
               pg_encoding_to_char(encoding), datcollate, datctype, datistemplate, \
               datallowconn, datconnlimit, coalesce(datacl, acldefault('d', datdba))) \
               FROM pg_database) s(x)",
        );
        let databases = lines(&self.sql(
            "postgres",
            "SELECT datname FROM pg_database WHERE datallowconn AND datname <> 'template0' \
             ORDER BY 1",
        ));
        for database in databases {
            all.push_str(&format!("\n== {database}\n"));
            all.push_str(&self.sql(
                &database,
                "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ( \
                 SELECT concat_ws(' ', 'schema', nspname, pg_get_userbyid(nspowner), \
                   coalesce(nspacl, acldefault('n', nspowner))) FROM pg_namespace \
                   WHERE nspname !~ '^pg_' AND nspname <> 'information_schema' \
                 UNION ALL SELECT concat_ws(' ', 'extension', extname, extversion, \
                   extnamespace::regnamespace) FROM pg_extension \
                 UNION ALL SELECT concat_ws(' ', 'default-acl', pg_get_userbyid(defaclrole), \
                   coalesce(defaclnamespace::regnamespace::text, '-'), defaclobjtype, defaclacl) \
                   FROM pg_default_acl \
                 UNION ALL SELECT concat_ws(' ', 'relation', c.oid::regclass, \
                   pg_get_userbyid(c.relowner), coalesce(c.relacl, acldefault('r', c.relowner))) \
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                   WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' \
                 UNION ALL SELECT concat_ws(' ', 'function', p.oid::regprocedure, \
                   pg_get_userbyid(p.proowner), coalesce(p.proacl, acldefault('f', p.proowner))) \
                   FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                   WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema') s(x)",
            ));
        }
        all
    }

    /// Asserts each resource `name` has the resource ID `id`.
    fn assert_ids(&self, expected: &[(&str, &str)]) {
        for (name, id) in expected {
            assert_eq!(self.id(name), *id, "{:?}: the ID of {name}", self.provider);
        }
    }

    /// Asserts every resource in `names` took step `op`.
    fn assert_ops(&self, steps: &[(String, String)], names: &[&str], op: &str) {
        for name in names {
            assert_eq!(
                ops_of(steps, name),
                [op],
                "{:?}: {name} in {steps:?}",
                self.provider
            );
        }
    }
}

/// Asserts that every step is a `same`.
fn assert_all_same(provider: Provider, steps: &[(String, String)]) {
    assert!(!steps.is_empty(), "{provider:?}: no steps");
    assert!(
        steps.iter().all(|(op, _)| op == "same"),
        "{provider:?}: expected no changes: {steps:?}"
    );
}

/// Whether any step of `name` is one of a replacement's.
fn replaced(steps: &[(String, String)], name: &str) -> bool {
    ops_of(steps, name)
        .iter()
        .any(|op| op == "replace" || op == "create-replacement")
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A list output as sorted strings (a null list is empty).
fn strings(v: &Value) -> Vec<String> {
    let mut all: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| text(s).to_owned())
        .collect();
    all.sort();
    all
}

/// The output property names, without the bridge's internal `__…` keys.
fn keys(outputs: &Value) -> Vec<String> {
    let mut keys: Vec<String> = outputs
        .as_object()
        .unwrap_or_else(|| panic!("outputs are not an object: {outputs}"))
        .keys()
        .filter(|k| !k.starts_with("__"))
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// Asserts `outputs` has each of `expected`'s values.
fn assert_outputs(provider: Provider, name: &str, outputs: &Value, expected: &Value) {
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(
            &outputs[key], value,
            "{provider:?}: {name}.{key} in {outputs}"
        );
    }
}

/// Whether a state value is a secret (encrypted, or shown as a secret).
fn is_secret(v: &Value) -> bool {
    v.get("4dabf18193072939515e22adb298388d")
        .is_some_and(|s| s == "1b47061264138c4ac30d75fd1eb44270")
}

macro_rules! on_both_providers {
    ($($name:ident),* $(,)?) => {
        /// The scenarios on the sandboxed wasm provider (examples/providers/postgresql).
        mod wasm {
            $( #[test] fn $name() { super::$name(super::Provider::Wasm) } )*

            #[test]
            fn without_a_tcp_grant_nothing_reaches_the_server() {
                super::without_a_tcp_grant_nothing_reaches_the_server();
            }
        }
        /// The same scenarios on the real pulumi-postgresql plugin, when there is one.
        mod oracle {
            $( #[test] fn $name() { super::$name(super::Provider::Oracle) } )*
        }
    };
}

on_both_providers!(
    roles,
    role_updates,
    databases,
    database_updates,
    schemas,
    grants,
    grant_role,
    extensions,
    default_privileges,
    lifecycle_with_drift,
    node_program,
    rust_program,
    imports,
    connection_failures,
    tls_failures,
    invalid_inputs,
);

// ---------------------------------------------------------------------------------------------
// The example Rust program

/// examples/programs/postgresql, compiled to wasm against the crate `cairn package gen-sdk`
/// made from the provider's schema (examples/sdks/postgresql): an application's owner and
/// readers, its database, schema, `pgcrypto`, grants and default privileges, used as a reader
/// would use them; then destroyed, leaving the catalog as it was.
fn rust_program(provider: Provider) {
    let program = crate::support::example_wasm("postgresql-app");
    let Some(pg) = Pg::on(provider, Program::Wasm(&program), PgServer::start()) else {
        return;
    };
    let before = pg.catalog();
    let owner_password = "owner-password-kept-secret";
    pg.secret_config("ownerPassword", owner_password);
    pg.set("app", "shop");
    pg.sandbox
        .ok(&["config", "set", "--path", "readers[0]", "alice"]);
    pg.up();
    assert!(pg.can_log_in("shop_owner", owner_password), "{provider:?}");
    assert_eq!(pg.memberships("alice"), ["shop_readers"], "{provider:?}");
    assert!(pg.has("shop", "has_database_privilege", "alice", "shop", "CONNECT"));
    assert!(pg.has("shop", "has_schema_privilege", "alice", "shop", "USAGE"));
    assert_eq!(
        pg.sql(
            "shop",
            "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'pgcrypto'"
        ),
        "shop"
    );
    // A table the owner makes later is readable by the readers (the default privileges).
    pg.server
        .psql(
            &pg.server.url("shop_owner", owner_password, "shop"),
            "CREATE TABLE shop.orders (id int)",
        )
        .unwrap_or_else(|e| panic!("{provider:?}: {e}"));
    assert_eq!(
        pg.table_privileges("shop", "alice", "shop.orders"),
        "SELECT"
    );
    // Nothing changed: a preview says so.
    assert_all_same(provider, &pg.preview());
    pg.server
        .psql(
            &pg.server.url("shop_owner", owner_password, "shop"),
            "DROP TABLE shop.orders",
        )
        .unwrap_or_else(|e| panic!("{provider:?}: {e}"));
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Roles

/// TestAccPostgresqlRole_Basic and TestAccPostgresqlRole_Superuser, with an autonamed role.
const ROLES: &str = r#"
import pulumi
import pulumi_postgresql as pg

password = pulumi.Config().require_secret("rolePassword")

myrole2 = pg.Role("myrole2", name="myrole2", login=True)
pg.Role("role_with_pwd", name="role_with_pwd", login=True, password=password)
pg.Role("role_with_pwd_encr", name="role_with_pwd_encr", login=True, password=password, encrypted_password=True)
role_simple = pg.Role("role_simple", name="role_simple")
pg.Role("role_with_defaults", name="role_default", superuser=False, create_database=False,
        create_role=False, inherit=False, login=False, replication=False,
        bypass_row_level_security=False, connection_limit=-1, encrypted_password=True, password="",
        skip_drop_role=False, valid_until="infinity", statement_timeout=0,
        idle_in_transaction_session_timeout=0, assume_role="")
pg.Role("role_with_create_database", name="role_with_create_database", create_database=True)
pg.Role("sub_role", name="sub_role", roles=[myrole2.id, role_simple.id])
pg.Role("role_with_search_path", name="role_with_search_path", search_paths=["bar", "foo-with-hyphen"])
pg.Role("role_with_superuser", name="role_with_superuser", superuser=True, login=True, password=password)
autonamed = pg.Role("autonamed", login=True)
pulumi.export("autonamed", autonamed.name)
"#;

/// Every output a role has (beside the bridge's internal keys).
const ROLE_OUTPUTS: [&str; 23] = [
    "assumeRole",
    "bypassRowLevelSecurity",
    "connectionLimit",
    "createDatabase",
    "createRole",
    "encrypted",
    "encryptedPassword",
    "id",
    "idleInTransactionSessionTimeout",
    "inherit",
    "login",
    "name",
    "password",
    "passwordWo",
    "passwordWoVersion",
    "replication",
    "roles",
    "searchPaths",
    "skipDropRole",
    "skipReassignOwned",
    "statementTimeout",
    "superuser",
    "validUntil",
];

fn roles(provider: Provider) {
    let Some(pg) = Pg::python(provider, ROLES) else {
        return;
    };
    let before = pg.catalog();
    let steps = pg.up();
    let names = [
        "myrole2",
        "role_with_pwd",
        "role_with_pwd_encr",
        "role_simple",
        "role_with_defaults",
        "role_with_create_database",
        "sub_role",
        "role_with_search_path",
        "role_with_superuser",
        "autonamed",
    ];
    pg.assert_ops(&steps, &names, "create");

    // A role's ID is its name; its outputs are every property, the unset ones with the
    // provider's defaults.
    assert_eq!(pg.id("role_with_defaults"), "role_default");
    assert_eq!(pg.id("myrole2"), "myrole2");
    let simple = pg.outputs("role_simple");
    assert_eq!(keys(&simple), ROLE_OUTPUTS, "{provider:?}");
    assert_outputs(
        provider,
        "role_simple",
        &simple,
        &json!({
            "id": "role_simple", "name": "role_simple", "superuser": false,
            "createDatabase": false, "createRole": false, "inherit": true, "login": false,
            "replication": false, "bypassRowLevelSecurity": false, "connectionLimit": -1,
            "encryptedPassword": true, "validUntil": "infinity", "skipDropRole": false,
            "skipReassignOwned": false, "statementTimeout": 0,
            "idleInTransactionSessionTimeout": 0, "assumeRole": "",
        }),
    );
    assert!(strings(&simple["roles"]).is_empty(), "{simple}");
    assert!(strings(&simple["searchPaths"]).is_empty(), "{simple}");
    // Passwords are secrets even when there is none.
    assert!(is_secret(&simple["password"]), "{simple}");
    assert!(is_secret(&pg.outputs("role_with_pwd")["password"]));
    assert_outputs(
        provider,
        "role_with_defaults",
        &pg.outputs("role_with_defaults"),
        &json!({"name": "role_default", "inherit": false, "login": false, "connectionLimit": -1,
                "validUntil": "infinity", "statementTimeout": 0, "assumeRole": ""}),
    );
    assert_eq!(
        pg.outputs("role_with_create_database")["createDatabase"],
        true
    );
    assert_eq!(
        strings(&pg.outputs("sub_role")["roles"]),
        ["myrole2", "role_simple"]
    );
    assert_eq!(
        pg.outputs("role_with_search_path")["searchPaths"],
        json!(["bar", "foo-with-hyphen"])
    );
    assert_eq!(pg.outputs("role_with_superuser")["superuser"], true);

    // The catalog.
    assert_eq!(
        pg.role("myrole2"),
        "f t f f t f f -1 infinity -",
        "{provider:?}: a login role"
    );
    assert_eq!(
        pg.role("role_default"),
        "f f f f f f f -1 infinity -",
        "{provider:?}: every attribute given"
    );
    assert_eq!(
        pg.role("role_with_create_database"),
        "f t f t f f f -1 infinity -"
    );
    assert_eq!(
        pg.role("role_with_superuser"),
        "t t f f t f f -1 infinity -"
    );
    assert_eq!(pg.memberships("sub_role"), ["myrole2", "role_simple"]);
    assert!(pg.memberships("myrole2").is_empty());
    assert_eq!(
        pg.role("role_with_search_path"),
        "f t f f f f f -1 infinity {\"search_path=bar, \\\"foo-with-hyphen\\\"\"}"
    );
    for role in ["role_with_pwd", "role_with_pwd_encr", "role_with_superuser"] {
        assert!(pg.can_log_in(role, ROLE_PASSWORD), "{provider:?}: {role}");
        assert_eq!(
            pg.sql(
                "postgres",
                &format!(
                    "SELECT left(rolpassword, 14) FROM pg_authid WHERE rolname = {}",
                    quote_literal(role)
                )
            ),
            "SCRAM-SHA-256$",
            "{provider:?}: {role}'s password is stored hashed"
        );
    }
    assert!(!pg.can_log_in("myrole2", ROLE_PASSWORD));
    // An autonamed role: the resource name, a dash and seven hex digits.
    let outputs: Value = serde_json::from_str(&pg.cairn(&["stack", "output", "--json"])).unwrap();
    let autonamed = text(&outputs["autonamed"]);
    let suffix = autonamed.strip_prefix("autonamed-").unwrap_or_else(|| {
        panic!("{provider:?}: autonamed role {autonamed:?}");
    });
    assert!(
        suffix.len() == 7 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{provider:?}: {autonamed}"
    );
    assert_eq!(pg.id("autonamed"), autonamed);
    assert_eq!(pg.role(autonamed), "f t f f t f f -1 infinity -");

    // Nothing changed: nothing to do.
    assert_all_same(provider, &pg.up());

    pg.destroy();
    assert_eq!(
        pg.catalog(),
        before,
        "{provider:?}: destroy left the catalog changed"
    );
}

/// TestAccPostgresqlRole_Update: a role renamed and given a limit, memberships, a search path,
/// timeouts and a role to assume, then set back.
const ROLE_UPDATES: &str = r#"
import pulumi
import pulumi_postgresql as pg

step = pulumi.Config().get_int("step") or 1
if step == 2:
    group_role = pg.Role("group_role", name="group_role")
    pg.Role("update_role", name="update_role2", login=True, connection_limit=5,
            password="titi-password", roles=[group_role.name], search_paths=["mysearchpath"],
            statement_timeout=30000, idle_in_transaction_session_timeout=60000,
            assume_role=group_role.name)
else:
    pg.Role("update_role", name="update_role", login=True, password="toto-password",
            valid_until="2099-05-04 12:00:00+00")
"#;

fn role_updates(provider: Provider) {
    let Some(pg) = Pg::python(provider, ROLE_UPDATES) else {
        return;
    };
    pg.sandbox.secret("toto-password");
    pg.sandbox.secret("titi-password");
    let before = pg.catalog();
    let first = |steps: &[(String, String)]| {
        let outputs = pg.outputs("update_role");
        assert_outputs(
            provider,
            "update_role",
            &outputs,
            &json!({"id": "update_role", "name": "update_role", "login": true,
                    "connectionLimit": -1, "validUntil": "2099-05-04 12:00:00+00",
                    "statementTimeout": 0, "idleInTransactionSessionTimeout": 0,
                    "assumeRole": ""}),
        );
        assert!(strings(&outputs["roles"]).is_empty(), "{outputs}");
        assert!(strings(&outputs["searchPaths"]).is_empty(), "{outputs}");
        assert_eq!(
            pg.role("update_role"),
            "f t f f t f f -1 2099-05-04 12:00:00+00 -"
        );
        assert!(pg.memberships("update_role").is_empty());
        assert!(pg.can_log_in("update_role", "toto-password"));
        assert_eq!(
            pg.sql(
                "postgres",
                "SELECT count(*) FROM pg_roles WHERE rolname IN ('update_role2', 'group_role')"
            ),
            "0"
        );
        steps.to_vec()
    };
    let steps = first(&pg.up());
    pg.assert_ops(&steps, &["update_role"], "create");

    // Renamed and changed in place: the ID follows the name.
    pg.set("step", "2");
    let steps = pg.up();
    pg.assert_ops(&steps, &["update_role"], "update");
    pg.assert_ops(&steps, &["group_role"], "create");
    // An update cannot change the ID; the `id` output follows the name (and a refresh, which
    // reads the role by it, takes it as the ID).
    assert_eq!(pg.id("update_role"), "update_role");
    let outputs = pg.outputs("update_role");
    assert_outputs(
        provider,
        "update_role",
        &outputs,
        &json!({"id": "update_role2", "name": "update_role2", "connectionLimit": 5,
                "validUntil": "infinity", "statementTimeout": 30000,
                "idleInTransactionSessionTimeout": 60000, "assumeRole": "group_role",
                "roles": ["group_role"], "searchPaths": ["mysearchpath"]}),
    );
    assert_eq!(
        pg.sql(
            "postgres",
            "SELECT count(*) FROM pg_roles WHERE rolname = 'update_role'"
        ),
        "0"
    );
    assert_eq!(
        pg.role("update_role2"),
        "f t f f t f f 5 infinity {search_path=mysearchpath,statement_timeout=30000,idle_in_transaction_session_timeout=60000,role=group_role}"
    );
    assert_eq!(pg.memberships("update_role2"), ["group_role"]);
    assert!(pg.can_log_in("update_role2", "titi-password"));
    assert!(!pg.can_log_in("update_role2", "toto-password"));

    // Back to the first configuration: the membership is revoked, the settings reset.
    pg.set("step", "1");
    let steps = first(&pg.up());
    pg.assert_ops(&steps, &["update_role"], "update");
    pg.assert_ops(&steps, &["group_role"], "delete");

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Databases

/// TestAccPostgresqlDatabase_Basic and TestAccPostgresqlDatabase_DefaultOwner (this machine's
/// UTF-8 locale is C.UTF-8, not en_US.UTF-8).
const DATABASES: &str = r#"
import pulumi
import pulumi_postgresql as pg

myrole = pg.Role("myrole", name="myrole", login=True)
pg.Database("mydb", name="mydb", owner=myrole.name)
pg.Database("mydb2", name="mydb2", owner=myrole.name)
pg.Database("default_opts", name="default_opts_name", owner=myrole.name, template="template0",
            encoding="UTF8", lc_collate="C", lc_ctype="C", connection_limit=-1,
            is_template=False, alter_object_ownership=False)
pg.Database("modified_opts", name="custom_template_db", owner=myrole.name, template="template0",
            encoding="UTF8", lc_collate="C.UTF-8", lc_ctype="C.UTF-8", connection_limit=10,
            is_template=True, alter_object_ownership=True)
pg.Database("pathological_opts", name="bad_template_db", owner=myrole.name, template="template0",
            encoding="LATIN1", lc_collate="C", lc_ctype="C", connection_limit=0, is_template=True)
pg.Database("pg_default_opts", name="pg_defaults_db", owner=myrole.name, template="DEFAULT",
            encoding="DEFAULT", lc_collate="DEFAULT", lc_ctype="DEFAULT",
            tablespace_name="DEFAULT", connection_limit=0, is_template=True,
            opts=pulumi.ResourceOptions(ignore_changes=["template", "encoding", "lcCollate",
                                                        "lcCtype", "tablespaceName"]))
pg.Database("mydb_default_owner", name="mydb_default_owner")
"#;

const DATABASE_OUTPUTS: [&str; 12] = [
    "allowConnections",
    "alterObjectOwnership",
    "connectionLimit",
    "encoding",
    "id",
    "isTemplate",
    "lcCollate",
    "lcCtype",
    "name",
    "owner",
    "tablespaceName",
    "template",
];

impl Pg {
    /// `owner encoding collate ctype istemplate allowconn connlimit` from pg_database.
    fn database(&self, name: &str) -> String {
        self.sql(
            "postgres",
            &format!(
                "SELECT concat_ws(' ', pg_get_userbyid(datdba), pg_encoding_to_char(encoding), \
                 datcollate, datctype, datistemplate, datallowconn, datconnlimit) \
                 FROM pg_database WHERE datname = {}",
                quote_literal(name)
            ),
        )
    }
}

fn databases(provider: Provider) {
    let Some(pg) = Pg::python(provider, DATABASES) else {
        return;
    };
    let before = pg.catalog();
    let steps = pg.up();
    pg.assert_ops(
        &steps,
        &[
            "mydb",
            "mydb2",
            "default_opts",
            "modified_opts",
            "pathological_opts",
            "pg_default_opts",
            "mydb_default_owner",
        ],
        "create",
    );
    assert_eq!(pg.id("default_opts"), "default_opts_name");
    // What a database given only a name and an owner gets.
    let mydb = pg.outputs("mydb");
    assert_eq!(keys(&mydb), DATABASE_OUTPUTS, "{provider:?}");
    assert_outputs(
        provider,
        "mydb",
        &mydb,
        &json!({"id": "mydb", "name": "mydb", "owner": "myrole", "template": "template0",
                "encoding": "UTF8", "lcCollate": "C", "lcCtype": "C",
                "tablespaceName": "pg_default", "connectionLimit": -1, "isTemplate": false,
                "allowConnections": true, "alterObjectOwnership": false}),
    );
    assert_outputs(
        provider,
        "default_opts",
        &pg.outputs("default_opts"),
        &json!({"name": "default_opts_name", "owner": "myrole", "template": "template0",
                "encoding": "UTF8", "lcCollate": "C", "lcCtype": "C",
                "tablespaceName": "pg_default", "connectionLimit": -1, "isTemplate": false,
                "alterObjectOwnership": false}),
    );
    assert_outputs(
        provider,
        "modified_opts",
        &pg.outputs("modified_opts"),
        &json!({"name": "custom_template_db", "template": "template0", "encoding": "UTF8",
                "lcCollate": "C.UTF-8", "lcCtype": "C.UTF-8", "tablespaceName": "pg_default",
                "connectionLimit": 10, "isTemplate": true, "alterObjectOwnership": true}),
    );
    assert_outputs(
        provider,
        "pathological_opts",
        &pg.outputs("pathological_opts"),
        &json!({"name": "bad_template_db", "encoding": "LATIN1", "lcCollate": "C",
                "lcCtype": "C", "connectionLimit": 0, "isTemplate": true}),
    );
    assert_outputs(
        provider,
        "pg_default_opts",
        &pg.outputs("pg_default_opts"),
        &json!({"name": "pg_defaults_db", "template": "DEFAULT", "connectionLimit": 0,
                "isTemplate": true}),
    );
    // No owner: the connected user.
    assert_eq!(pg.outputs("mydb_default_owner")["owner"], "postgres");

    assert_eq!(pg.database("mydb"), "myrole UTF8 C C f t -1");
    assert_eq!(pg.database("default_opts_name"), "myrole UTF8 C C f t -1");
    assert_eq!(
        pg.database("custom_template_db"),
        "myrole UTF8 C.UTF-8 C.UTF-8 t t 10"
    );
    assert_eq!(pg.database("bad_template_db"), "myrole LATIN1 C C t t 0");
    assert_eq!(pg.database("pg_defaults_db"), "myrole UTF8 C C t t 0");
    assert_eq!(
        pg.database("mydb_default_owner"),
        "postgres UTF8 C C f t -1"
    );

    assert_all_same(provider, &pg.up());
    // Templates too are dropped.
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

/// TestAccPostgresqlDatabase_Update, TestAccPostgresqlDatabase_GrantOwner and
/// TestAccPostgresqlDatabase_AlterObjectOwnership; then a changed encoding, which replaces.
const DATABASE_UPDATES: &str = r#"
import pulumi
import pulumi_postgresql as pg

step = pulumi.Config().get_int("step") or 1
test_owner = pg.Role("test_owner", name="test_owner")
previous_owner = pg.Role("previous_owner", name="previous_owner")
new_owner = pg.Role("new_owner", name="new_owner")
if step == 1:
    pg.Database("test_db", name="test_db", owner=test_owner.name, allow_connections=True)
elif step == 2:
    pg.Database("test_db", name="test_db", owner=test_owner.name, connection_limit=2,
                allow_connections=False)
else:
    pg.Database("test_db", name="test_db", owner=test_owner.name, connection_limit=2,
                allow_connections=False, template="template0", encoding="LATIN1",
                lc_collate="C", lc_ctype="C")
pg.Database("ownership", name="tf_tests_db_ownership",
            owner=(previous_owner if step == 1 else new_owner).name, alter_object_ownership=True)
"#;

fn database_updates(provider: Provider) {
    let Some(pg) = Pg::python(provider, DATABASE_UPDATES) else {
        return;
    };
    let before = pg.catalog();
    pg.up();
    assert_eq!(pg.database("test_db"), "test_owner UTF8 C C f t -1");
    assert_eq!(pg.outputs("test_db")["allowConnections"], true);
    // The connected user is not left a member of the owner it had to become.
    assert!(pg.memberships(SUPERUSER).is_empty(), "{provider:?}");
    pg.sql(
        "tf_tests_db_ownership",
        "CREATE TABLE testtable1 (id int); ALTER TABLE testtable1 OWNER TO previous_owner",
    );

    pg.set("step", "2");
    let steps = pg.up();
    pg.assert_ops(&steps, &["test_db", "ownership"], "update");
    assert_outputs(
        provider,
        "test_db",
        &pg.outputs("test_db"),
        &json!({"connectionLimit": 2, "allowConnections": false, "owner": "test_owner"}),
    );
    assert_eq!(pg.database("test_db"), "test_owner UTF8 C C f f 2");
    assert_eq!(pg.outputs("ownership")["owner"], "new_owner");
    assert_eq!(
        pg.sql(
            "tf_tests_db_ownership",
            "SELECT tableowner FROM pg_tables WHERE tablename = 'testtable1'"
        ),
        "new_owner",
        "{provider:?}: alterObjectOwnership hands the tables over"
    );
    assert!(pg.memberships(SUPERUSER).is_empty(), "{provider:?}");

    // A changed encoding replaces the database (deleting it first).
    pg.set("step", "3");
    let steps = pg.up();
    assert!(replaced(&steps, "test_db"), "{provider:?}: {steps:?}");
    assert_eq!(
        ops_of(&steps, "test_db").first().map(String::as_str),
        Some("delete-replaced"),
        "{provider:?}: deleted before it is created again: {steps:?}"
    );
    assert_eq!(pg.database("test_db"), "test_owner LATIN1 C C f f 2");
    assert_eq!(pg.outputs("test_db")["encoding"], "LATIN1");

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Schemas

/// TestAccPostgresqlSchema_Basic, TestAccPostgresqlSchema_Database,
/// TestAccPostgresqlSchema_DropCascade and TestAccPostgresqlSchema_AlreadyExists.
const SCHEMAS: &str = r#"
import pulumi
import pulumi_postgresql as pg

without_grant = pg.Role("role_all_without_grant", name="role_all_without_grant", login=True)
with_grant = pg.Role("role_all_with_grant", name="role_all_with_grant")
pg.Schema("test1", name="foo")
pg.Schema("test2", name="bar", owner=without_grant.name, if_not_exists=False,
          policies=[pg.SchemaPolicyArgs(create=True, usage=True, role=without_grant.name)])
pg.Schema("test3", name="baz", owner=without_grant.name, if_not_exists=True, policies=[
    pg.SchemaPolicyArgs(create_with_grant=True, usage_with_grant=True, role=with_grant.name),
    pg.SchemaPolicyArgs(create=True, usage=True, role=without_grant.name),
])
db = pg.Database("schema_db", name="schema_db")
pg.Schema("test_database", name="test_database", database=db.name)
pg.Schema("test_cascade", name="foo", database=db.name, drop_cascade=True)
pg.Schema("public", name="public", database=db.name, owner=with_grant.name)
"#;

impl Pg {
    /// A schema's owner in `database`.
    fn schema_owner(&self, database: &str, schema: &str) -> String {
        self.sql(
            database,
            &format!(
                "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = {}",
                quote_literal(schema)
            ),
        )
    }
}

fn schemas(provider: Provider) {
    let Some(pg) = Pg::python(provider, SCHEMAS) else {
        return;
    };
    let before = pg.catalog();
    pg.up();
    // IDs: database.schema; the provider's database when none is given.
    pg.assert_ids(&[
        ("test1", "postgres.foo"),
        ("test2", "postgres.bar"),
        ("test3", "postgres.baz"),
        ("test_database", "schema_db.test_database"),
        ("test_cascade", "schema_db.foo"),
        ("public", "schema_db.public"),
    ]);
    let test1 = pg.outputs("test1");
    assert_eq!(
        keys(&test1),
        [
            "database",
            "dropCascade",
            "id",
            "ifNotExists",
            "name",
            "owner",
            "policies"
        ],
        "{provider:?}"
    );
    assert!(strings(&test1["policies"]).is_empty(), "{test1}");
    assert_outputs(
        provider,
        "test1",
        &test1,
        &json!({"name": "foo", "database": "postgres", "owner": "postgres", "ifNotExists": true,
                "dropCascade": false}),
    );
    assert_outputs(
        provider,
        "test2",
        &pg.outputs("test2"),
        &json!({"name": "bar", "owner": "role_all_without_grant", "ifNotExists": false,
                "policies": [{"create": true, "createWithGrant": false, "usage": true,
                              "usageWithGrant": false, "role": "role_all_without_grant"}]}),
    );
    let mut policies: Vec<Value> = pg.outputs("test3")["policies"].as_array().unwrap().clone();
    policies.sort_by_key(|p| p["role"].to_string());
    assert_eq!(
        Value::Array(policies),
        json!([
            {"create": false, "createWithGrant": true, "usage": false, "usageWithGrant": true,
             "role": "role_all_with_grant"},
            {"create": true, "createWithGrant": false, "usage": true, "usageWithGrant": false,
             "role": "role_all_without_grant"},
        ]),
        "{provider:?}"
    );
    assert_eq!(pg.schema_owner("postgres", "foo"), "postgres");
    assert_eq!(pg.schema_owner("postgres", "bar"), "role_all_without_grant");
    assert_eq!(pg.schema_owner("postgres", "baz"), "role_all_without_grant");
    assert_eq!(pg.schema_owner("schema_db", "test_database"), "postgres");
    assert_eq!(
        pg.schema_owner("schema_db", "public"),
        "role_all_with_grant"
    );
    for privilege in ["CREATE", "USAGE"] {
        assert!(pg.has(
            "postgres",
            "has_schema_privilege",
            "role_all_without_grant",
            "bar",
            privilege
        ));
        assert!(pg.has(
            "postgres",
            "has_schema_privilege",
            "role_all_with_grant",
            "baz",
            &format!("{privilege} WITH GRANT OPTION")
        ));
        assert!(!pg.has(
            "postgres",
            "has_schema_privilege",
            "role_all_with_grant",
            "bar",
            privilege
        ));
    }
    assert_all_same(provider, &pg.up());

    // A table in the drop_cascade schema does not stop the destroy.
    pg.sql("schema_db", "CREATE TABLE foo.test_table (id serial)");
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Grants

/// TestAccPostgresqlGrant, TestAccPostgresqlGrantPublic, TestAccPostgresqlGrantObjects,
/// TestAccPostgresqlGrantEmptyPrivileges, TestAccPostgresqlImplicitGrants,
/// TestAccPostgresqlGrantColumns, TestAccPostgresqlGrantFunction, TestAccPostgresqlGrantDatabase
/// and TestAccPostgresqlGrantSchema, in four steps. The tables, schemas and function are made
/// beforehand as the originals do (`setup_grants`).
const GRANTS: &str = r#"
import pulumi
import pulumi_postgresql as pg

step = pulumi.Config().get_int("step") or 1
db = "tf_tests_db"
role = "tf_tests_role"
privileges = {1: ["SELECT"], 2: ["SELECT", "INSERT", "UPDATE"], 3: ["SELECT"], 4: []}[step]
pg.Grant("test", database=db, role=role, schema="test_schema", object_type="table",
         privileges=privileges)
pg.Grant("public", database=db, role="public", schema="pub_schema", object_type="table",
         privileges=privileges)
objects = {1: ["test_table"], 2: ["test_table", "test_table2"], 3: ["test_table"], 4: []}[step]
pg.Grant("objects", database=db, role=role, schema="obj_schema", object_type="table",
         objects=objects, privileges=["SELECT"])
pg.Grant("empty", database=db, role=role, schema="empty_schema", object_type="table",
         privileges=[])
implicit = {1: ["ALL"], 2: ["SELECT"]}.get(step, ["SELECT", "INSERT", "UPDATE", "DELETE"])
pg.Grant("implicit", database=db, role=role, schema="impl_schema", object_type="table",
         objects=["test_table"], privileges=implicit)
pg.Grant("columns", database=db, role=role, schema="col_schema", object_type="column",
         objects=["test_table"], columns=["test_column_one", "test_column_two"],
         privileges=[{1: "SELECT", 2: "INSERT"}.get(step, "UPDATE")])
pg.Grant("function", database=db, role=role, schema="fn_schema", object_type="function",
         privileges=["EXECUTE"])

grant_role = pg.Role("test_grant_role", name="test_grant_role", login=True,
                     password=pulumi.Config().require_secret("rolePassword"))
grant_db = pg.Database("test_grant_db", name="test_grant_db",
                       opts=pulumi.ResourceOptions(depends_on=[grant_role]))
pg.Grant("database", database=grant_db.name, role=grant_role.name, object_type="database",
         privileges={1: ["CONNECT"], 2: ["CONNECT", "CREATE"]}.get(step, []))
grant_schema = pg.Schema("grant_schema", name="test_schema", drop_cascade=True,
                         opts=pulumi.ResourceOptions(depends_on=[grant_role]))
pg.Grant("schema", database="postgres", schema=grant_schema.name, role=grant_role.name,
         object_type="schema", privileges={1: ["USAGE"], 2: ["USAGE", "CREATE"]}.get(step, []))
"#;

const GRANT_OUTPUTS: [&str; 9] = [
    "columns",
    "database",
    "id",
    "objectType",
    "objects",
    "privileges",
    "role",
    "schema",
    "withGrantOption",
];

/// The roles, database, schemas, tables and function the grants act on, as the originals'
/// `setupTestDatabase` and `createTestTables` make them.
fn setup_grants(pg: &Pg) {
    pg.sql(
        "postgres",
        "CREATE ROLE tf_tests_role LOGIN PASSWORD 'tf-tests-role-password'; \
         CREATE ROLE tf_tests_role2 LOGIN PASSWORD 'tf-tests-role-password'",
    );
    pg.sql("postgres", "CREATE DATABASE tf_tests_db");
    let mut sql = String::new();
    for schema in [
        "test_schema",
        "pub_schema",
        "obj_schema",
        "empty_schema",
        "impl_schema",
        "col_schema",
        "fn_schema",
    ] {
        sql.push_str(&format!(
            "CREATE SCHEMA {schema}; GRANT USAGE ON SCHEMA {schema} TO tf_tests_role, tf_tests_role2; "
        ));
        if schema != "fn_schema" {
            for table in ["test_table", "test_table2"] {
                sql.push_str(&format!(
                    "CREATE TABLE {schema}.{table} (val text, test_column_one text, test_column_two text); "
                ));
            }
        }
    }
    sql.push_str(
        "CREATE FUNCTION fn_schema.test() RETURNS text AS $$ select 'foo'::text $$ LANGUAGE SQL; \
         REVOKE ALL ON FUNCTION fn_schema.test() FROM PUBLIC",
    );
    pg.sql("tf_tests_db", &sql);
}

fn grants(provider: Provider) {
    let Some(pg) = Pg::python(provider, GRANTS) else {
        return;
    };
    setup_grants(&pg);
    let before = pg.catalog();
    // TestAccPostgresqlGrantEmptyPrivileges: privileges granted out of band, which the grant
    // with none revokes.
    pg.sql(
        "tf_tests_db",
        "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA empty_schema TO tf_tests_role",
    );
    let db = "tf_tests_db";
    let role = "tf_tests_role";
    let tables = |schema: &str| {
        [
            format!("{schema}.test_table"),
            format!("{schema}.test_table2"),
        ]
    };
    let check_tables = |schema: &str, grantee: &str, expected: &[&str; 2], step: usize| {
        for (table, expected) in tables(schema).iter().zip(expected) {
            assert_eq!(
                pg.table_privileges(db, grantee, table),
                *expected,
                "{provider:?} step {step}: {grantee} on {table}"
            );
        }
    };

    // Step 1.
    let steps = pg.up();
    pg.assert_ops(
        &steps,
        &[
            "test", "public", "objects", "empty", "implicit", "columns", "function", "database",
            "schema",
        ],
        "create",
    );
    pg.assert_ids(&[
        ("test", "tf_tests_role_tf_tests_db_test_schema_table"),
        ("public", "public_tf_tests_db_pub_schema_table"),
        (
            "objects",
            "tf_tests_role_tf_tests_db_obj_schema_table_test_table",
        ),
        ("empty", "tf_tests_role_tf_tests_db_empty_schema_table"),
        (
            "implicit",
            "tf_tests_role_tf_tests_db_impl_schema_table_test_table",
        ),
        ("function", "tf_tests_role_tf_tests_db_fn_schema_function"),
        ("database", "test_grant_role_test_grant_db_database"),
        ("schema", "test_grant_role_postgres_test_schema_schema"),
    ]);
    // Objects and columns join the ID in the order of Terraform's set of strings: by the
    // decimal text of each one's CRC-32 (IEEE), compared as text.
    assert_eq!(
        pg.id("columns"),
        "tf_tests_role_tf_tests_db_col_schema_column_test_table_test_column_one_test_column_two"
    );
    let test = pg.outputs("test");
    assert_eq!(keys(&test), GRANT_OUTPUTS, "{provider:?}");
    assert_outputs(
        provider,
        "test",
        &test,
        &json!({"database": db, "role": role, "schema": "test_schema", "objectType": "table",
                "privileges": ["SELECT"], "withGrantOption": false}),
    );
    check_tables("test_schema", role, &["SELECT", "SELECT"], 1);
    check_tables("pub_schema", "tf_tests_role2", &["SELECT", "SELECT"], 1);
    check_tables("obj_schema", role, &["SELECT", ""], 1);
    check_tables("empty_schema", role, &["", ""], 1);
    // No privileges: the output is null (the bridge's empty set).
    assert!(strings(&pg.outputs("empty")["privileges"]).is_empty());
    check_tables("impl_schema", role, &["DELETE,INSERT,SELECT,UPDATE", ""], 1);
    for privilege in ["TRUNCATE", "REFERENCES", "TRIGGER"] {
        assert!(pg.has(
            db,
            "has_table_privilege",
            role,
            "impl_schema.test_table",
            privilege
        ));
    }
    let column = |column: &str, privilege: &str| {
        pg.sql(
            db,
            &format!(
                "SELECT has_column_privilege('tf_tests_role', 'col_schema.test_table', '{column}', '{privilege}')"
            ),
        ) == "t"
    };
    assert!(column("test_column_one", "SELECT") && column("test_column_two", "SELECT"));
    assert!(!column("val", "SELECT") && !column("test_column_one", "INSERT"));
    assert_eq!(
        strings(&pg.outputs("columns")["columns"]),
        ["test_column_one", "test_column_two"]
    );
    assert!(pg.has(
        db,
        "has_function_privilege",
        role,
        "fn_schema.test()",
        "EXECUTE"
    ));
    assert!(!pg.has(
        db,
        "has_function_privilege",
        "tf_tests_role2",
        "fn_schema.test()",
        "EXECUTE"
    ));
    let database_acl = || {
        pg.sql(
            "postgres",
            "SELECT coalesce(array_to_string(array(SELECT a FROM unnest(datacl) a \
             WHERE a::text LIKE 'test_grant_role=%'), ','), '') FROM pg_database \
             WHERE datname = 'test_grant_db'",
        )
    };
    assert_eq!(database_acl(), "test_grant_role=c/postgres", "{provider:?}");
    assert!(!pg.has(
        "postgres",
        "has_database_privilege",
        "test_grant_role",
        "test_grant_db",
        "CREATE"
    ));
    assert!(pg.has(
        "postgres",
        "has_schema_privilege",
        "test_grant_role",
        "test_schema",
        "USAGE"
    ));
    assert!(!pg.has(
        "postgres",
        "has_schema_privilege",
        "test_grant_role",
        "test_schema",
        "CREATE"
    ));

    // Step 2: more privileges in place; another object replaces the grant.
    pg.set("step", "2");
    let steps = pg.up();
    pg.assert_ops(
        &steps,
        &[
            "test", "public", "implicit", "columns", "database", "schema",
        ],
        "update",
    );
    assert!(replaced(&steps, "objects"), "{provider:?}: {steps:?}");
    assert_eq!(
        ops_of(&steps, "objects").first().map(String::as_str),
        Some("delete-replaced"),
        "{provider:?}: a grant is revoked before it is granted again: {steps:?}"
    );
    assert_eq!(
        pg.outputs("test")["privileges"],
        json!(["INSERT", "SELECT", "UPDATE"]),
        "{provider:?}: privileges are a sorted set"
    );
    // CRC-32 of test_table2 is 306541577, of test_table 4260833613: "3…" sorts first.
    assert_eq!(
        pg.id("objects"),
        "tf_tests_role_tf_tests_db_obj_schema_table_test_table2_test_table"
    );
    assert_eq!(
        strings(&pg.outputs("objects")["objects"]),
        ["test_table", "test_table2"]
    );
    check_tables(
        "test_schema",
        role,
        &["INSERT,SELECT,UPDATE", "INSERT,SELECT,UPDATE"],
        2,
    );
    check_tables(
        "pub_schema",
        role,
        &["INSERT,SELECT,UPDATE", "INSERT,SELECT,UPDATE"],
        2,
    );
    check_tables("obj_schema", role, &["SELECT", "SELECT"], 2);
    check_tables("impl_schema", role, &["SELECT", ""], 2);
    assert!(!pg.has(
        db,
        "has_table_privilege",
        role,
        "impl_schema.test_table",
        "TRUNCATE"
    ));
    assert!(column("test_column_one", "INSERT") && !column("test_column_one", "SELECT"));
    assert_eq!(
        database_acl(),
        "test_grant_role=Cc/postgres",
        "{provider:?}"
    );
    assert!(pg.has(
        "postgres",
        "has_database_privilege",
        "test_grant_role",
        "test_grant_db",
        "CREATE"
    ));
    assert!(pg.has(
        "postgres",
        "has_schema_privilege",
        "test_grant_role",
        "test_schema",
        "CREATE"
    ));

    // Step 3: back to fewer; no privileges at all on the database and the schema.
    pg.set("step", "3");
    let steps = pg.up();
    assert!(replaced(&steps, "objects"), "{provider:?}: {steps:?}");
    check_tables("test_schema", role, &["SELECT", "SELECT"], 3);
    check_tables("pub_schema", "tf_tests_role2", &["SELECT", "SELECT"], 3);
    check_tables("obj_schema", role, &["SELECT", ""], 3);
    check_tables("impl_schema", role, &["DELETE,INSERT,SELECT,UPDATE", ""], 3);
    assert!(column("test_column_one", "UPDATE") && !column("test_column_one", "INSERT"));
    assert_eq!(database_acl(), "", "{provider:?}");
    assert!(strings(&pg.outputs("database")["privileges"]).is_empty());
    assert!(!pg.has(
        "postgres",
        "has_schema_privilege",
        "test_grant_role",
        "test_schema",
        "USAGE"
    ));

    // Step 4: none on the schema's tables; no objects means every table.
    pg.set("step", "4");
    let steps = pg.up();
    pg.assert_ops(&steps, &["test", "public"], "update");
    check_tables("test_schema", role, &["", ""], 4);
    check_tables("pub_schema", "tf_tests_role2", &["", ""], 4);
    check_tables("obj_schema", role, &["SELECT", "SELECT"], 4);
    assert_eq!(
        pg.id("objects"),
        "tf_tests_role_tf_tests_db_obj_schema_table"
    );
    assert_all_same(provider, &pg.up());

    pg.destroy();
    check_tables("obj_schema", role, &["", ""], 5);
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

/// TestAccPostgresqlGrantRole; then without the admin option, which replaces the grant.
const GRANT_ROLE: &str = r#"
import pulumi
import pulumi_postgresql as pg

admin = pulumi.Config().get_bool("admin")
grant = pg.Role("grant", name="foo")
pg.GrantRole("grant_role", role="tf_tests_role", grant_role=grant.name,
             with_admin_option=admin is not False)
"#;

impl Pg {
    /// `member of role admin_option` rows of pg_auth_members for `member`.
    fn membership_rows(&self, member: &str) -> String {
        self.sql(
            "postgres",
            &format!(
                "SELECT coalesce(string_agg(concat_ws(' ', pg_get_userbyid(roleid), admin_option), \
                 ','), '') FROM pg_auth_members WHERE pg_get_userbyid(member) = {}",
                quote_literal(member)
            ),
        )
    }
}

fn grant_role(provider: Provider) {
    let Some(pg) = Pg::python(provider, GRANT_ROLE) else {
        return;
    };
    pg.sql("postgres", "CREATE ROLE tf_tests_role LOGIN");
    let before = pg.catalog();
    pg.up();
    assert_eq!(pg.id("grant_role"), "tf_tests_role_foo_true");
    let outputs = pg.outputs("grant_role");
    assert_eq!(
        keys(&outputs),
        ["grantRole", "id", "role", "withAdminOption"],
        "{provider:?}"
    );
    assert_outputs(
        provider,
        "grant_role",
        &outputs,
        &json!({"role": "tf_tests_role", "grantRole": "foo", "withAdminOption": true}),
    );
    assert_eq!(pg.membership_rows("tf_tests_role"), "foo t");
    assert_all_same(provider, &pg.up());

    // Every property replaces a role grant, the new one created before the old one is deleted
    // (pulumi-postgresql asks for no delete-before-replace here, unlike for `Grant`). So the
    // new GRANT finds the membership there already, and the old one's REVOKE then removes it:
    // the state records a grant the catalog no longer has, until a refresh notices and the
    // next deployment grants it again. (This is pulumi-postgresql's behaviour, kept here as the
    // contract; a provider that asked for delete-before-replace would end with "foo f" at once.)
    pg.set("admin", "false");
    let steps = pg.up();
    assert_eq!(
        ops_of(&steps, "grant_role"),
        ["create-replacement", "replace", "delete-replaced"],
        "{provider:?}"
    );
    assert_eq!(pg.id("grant_role"), "tf_tests_role_foo_false");
    assert_eq!(pg.membership_rows("tf_tests_role"), "", "{provider:?}");
    pg.refresh();
    assert!(
        !pg.resources()
            .iter()
            .any(|r| r["urn"].as_str().unwrap().ends_with("::grant_role")),
        "{provider:?}: the refresh found the membership gone"
    );
    pg.assert_ops(&pg.up(), &["grant_role"], "create");
    assert_eq!(pg.membership_rows("tf_tests_role"), "foo f");

    pg.destroy();
    assert_eq!(pg.membership_rows("tf_tests_role"), "");
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Extensions

/// TestAccPostgresqlExtension_Basic, TestAccPostgresqlExtension_SchemaRename,
/// TestAccPostgresqlExtension_Database, TestAccPostgresqlExtension_DropCascade and
/// TestAccPostgresqlExtension_CreateCascade.
const EXTENSIONS: &str = r#"
import pulumi
import pulumi_postgresql as pg

step = pulumi.Config().get_int("step") or 1
pg.Extension("myextension", name="pg_trgm")
ext_db = pg.Database("ext_db", name="ext_db")
ext1foo = pg.Schema("ext1foo", name="foo" if step == 1 else "bar", database=ext_db.name)
pg.Extension("ext1trgm", name="pg_trgm", database=ext_db.name, schema=ext1foo.name)
cascade_db = pg.Database("cascade_db", name="cascade_db")
pg.Extension("cascade", name="pgcrypto", database=cascade_db.name, drop_cascade=True)
pg.Extension("create_cascade", name="earthdistance", database=cascade_db.name,
             create_cascade=True)
"#;

impl Pg {
    /// `name version schema` of every extension in `database`.
    fn extensions(&self, database: &str) -> Vec<String> {
        lines(&self.sql(
            database,
            "SELECT concat_ws(' ', extname, extversion, extnamespace::regnamespace) \
             FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1",
        ))
    }
}

fn extensions(provider: Provider) {
    let Some(pg) = Pg::python(provider, EXTENSIONS) else {
        return;
    };
    let before = pg.catalog();
    pg.up();
    pg.assert_ids(&[
        ("myextension", "postgres.pg_trgm"),
        ("ext1trgm", "ext_db.pg_trgm"),
        ("cascade", "cascade_db.pgcrypto"),
        ("create_cascade", "cascade_db.earthdistance"),
    ]);
    let trgm = pg.outputs("myextension");
    assert_eq!(
        keys(&trgm),
        [
            "createCascade",
            "database",
            "dropCascade",
            "id",
            "name",
            "schema",
            "version"
        ],
        "{provider:?}"
    );
    assert_outputs(
        provider,
        "myextension",
        &trgm,
        &json!({"name": "pg_trgm", "database": "postgres", "schema": "public",
                "version": "1.6", "createCascade": false, "dropCascade": false}),
    );
    assert_eq!(pg.outputs("cascade")["version"], "1.3");
    assert_eq!(pg.extensions("postgres"), ["pg_trgm 1.6 public"]);
    assert_eq!(pg.extensions("ext_db"), ["pg_trgm 1.6 foo"]);
    assert_eq!(
        pg.extensions("cascade_db"),
        [
            "cube 1.5 public",
            "earthdistance 1.1 public",
            "pgcrypto 1.3 public"
        ],
        "{provider:?}: createCascade installs what earthdistance needs"
    );
    // Something that depends on pgcrypto, which drop_cascade must not mind.
    pg.sql(
        "cascade_db",
        "CREATE TABLE hashes (h bytea DEFAULT digest('x', 'sha256'))",
    );
    assert_all_same(provider, &pg.up());

    // The schema renamed: the extension follows it.
    pg.set("step", "2");
    let steps = pg.up();
    pg.assert_ops(&steps, &["ext1foo"], "update");
    assert_eq!(pg.outputs("ext1trgm")["schema"], "bar");
    // An update cannot change a resource's ID (the protocol's Update returns none): the
    // schema keeps its first one, while its `id` output follows the name.
    assert_eq!(pg.id("ext1foo"), "ext_db.foo");
    assert_eq!(pg.outputs("ext1foo")["id"], "ext_db.bar");
    assert_eq!(pg.extensions("ext_db"), ["pg_trgm 1.6 bar"]);

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Default privileges

/// TestAccPostgresqlDefaultPrivileges (to a role with the grant option, and to PUBLIC),
/// TestAccPostgresqlDefaultPrivileges_NoSchema, TestAccPostgresqlDefaultPrivilegesOnSchemas,
/// TestAccPostgresqlDefaultPrivileges_Routines and TestAccPostgresqlDefaultPrivileges_GrantOwner.
const DEFAULT_PRIVILEGES: &str = r#"
import pulumi
import pulumi_postgresql as pg

step = pulumi.Config().get_int("step") or 1
db = "tf_tests_db"
privileges = {1: [], 2: ["SELECT"], 3: ["SELECT", "UPDATE"], 4: []}[step]
pg.DefaultPrivileges("test_ro", database=db, owner="postgres", role="tf_tests_role",
                     schema="test_schema", object_type="table", with_grant_option=True,
                     privileges=privileges)
pg.DefaultPrivileges("test_public", database=db, owner="postgres", role="public",
                     schema="dev_schema", object_type="table", privileges=privileges)
pg.DefaultPrivileges("no_schema", database=db, owner="postgres", role="tf_tests_role2",
                     object_type="table",
                     privileges=["SELECT"] if step < 3 else ["SELECT", "UPDATE"])
pg.DefaultPrivileges("on_schemas", database=db, owner="postgres", role="tf_tests_role3",
                     object_type="schema", privileges=[] if step == 1 else ["CREATE", "USAGE"])
pg.DefaultPrivileges("routines", database=db, owner="postgres", role="tf_tests_role",
                     schema="test_schema", object_type="routine", privileges=["EXECUTE"])
test_owner = pg.Role("test_owner", name="test_owner")
usage = pg.Grant("public_usage", database=db, schema="public", role=test_owner.name,
                 object_type="schema", privileges=["CREATE", "USAGE"])
pg.DefaultPrivileges("grant_owner", database=db, owner=test_owner.name, role="tf_tests_role",
                     schema="public", object_type="table", privileges=["SELECT"],
                     opts=pulumi.ResourceOptions(depends_on=[usage]))
"#;

const DEFAULT_PRIVILEGES_OUTPUTS: [&str; 8] = [
    "database",
    "id",
    "objectType",
    "owner",
    "privileges",
    "role",
    "schema",
    "withGrantOption",
];

impl Pg {
    /// `owner schema type aclitem` for every item of pg_default_acl in `database`.
    fn default_acls(&self, database: &str) -> Vec<String> {
        // The owner's own entry (`owner=arwdDxt/owner` in a default for every schema) is what
        // holds without any default too, and is left out: only what was granted to others.
        lines(&self.sql(
            database,
            "SELECT concat_ws(' ', pg_get_userbyid(d.defaclrole), \
             coalesce(d.defaclnamespace::regnamespace::text, '-'), d.defaclobjtype, a) \
             FROM pg_default_acl d, unnest(d.defaclacl) a \
             WHERE a::text NOT LIKE pg_get_userbyid(d.defaclrole) || '=%' ORDER BY 1",
        ))
    }
}

fn default_privileges(provider: Provider) {
    let Some(pg) = Pg::python(provider, DEFAULT_PRIVILEGES) else {
        return;
    };
    pg.sql(
        "postgres",
        "CREATE ROLE tf_tests_role LOGIN; CREATE ROLE tf_tests_role2 LOGIN; \
         CREATE ROLE tf_tests_role3 LOGIN",
    );
    pg.sql("postgres", "CREATE DATABASE tf_tests_db");
    pg.sql(
        "tf_tests_db",
        "CREATE SCHEMA test_schema; CREATE SCHEMA dev_schema; \
         GRANT USAGE ON SCHEMA test_schema, dev_schema TO tf_tests_role, tf_tests_role2, tf_tests_role3",
    );
    let before = pg.catalog();
    let db = "tf_tests_db";
    // What objects created after the deployment get: tables made by the owner (postgres, or
    // test_owner in public) and schemas, dropped again after the check.
    let check = |step: usize, expected: &[(&str, &str, &str)], schema_privileges: &[&str]| {
        pg.sql(
            db,
            "CREATE TABLE test_schema.t (val text); CREATE TABLE dev_schema.t (val text); \
             SET ROLE test_owner; CREATE TABLE public.t (val text); RESET ROLE; \
             CREATE SCHEMA s",
        );
        for (grantee, table, privileges) in expected {
            assert_eq!(
                pg.table_privileges(db, grantee, table),
                *privileges,
                "{provider:?} step {step}: {grantee} on {table}"
            );
        }
        for privilege in ["CREATE", "USAGE"] {
            assert_eq!(
                pg.has(db, "has_schema_privilege", "tf_tests_role3", "s", privilege),
                schema_privileges.contains(&privilege),
                "{provider:?} step {step}: tf_tests_role3 {privilege} on a new schema"
            );
        }
        pg.sql(
            db,
            "DROP TABLE test_schema.t, dev_schema.t, public.t; DROP SCHEMA s",
        );
    };

    let steps = pg.up();
    pg.assert_ops(
        &steps,
        &[
            "test_ro",
            "test_public",
            "no_schema",
            "on_schemas",
            "routines",
            "grant_owner",
        ],
        "create",
    );
    pg.assert_ids(&[
        (
            "test_ro",
            "tf_tests_role_tf_tests_db_test_schema_postgres_table",
        ),
        (
            "test_public",
            "public_tf_tests_db_dev_schema_postgres_table",
        ),
        (
            "no_schema",
            "tf_tests_role2_tf_tests_db_noschema_postgres_table",
        ),
        (
            "on_schemas",
            "tf_tests_role3_tf_tests_db_noschema_postgres_schema",
        ),
        (
            "routines",
            "tf_tests_role_tf_tests_db_test_schema_postgres_routine",
        ),
        (
            "grant_owner",
            "tf_tests_role_tf_tests_db_public_test_owner_table",
        ),
    ]);
    let test_ro = pg.outputs("test_ro");
    assert_eq!(keys(&test_ro), DEFAULT_PRIVILEGES_OUTPUTS, "{provider:?}");
    assert_outputs(
        provider,
        "test_ro",
        &test_ro,
        &json!({"database": db, "owner": "postgres", "role": "tf_tests_role",
        "schema": "test_schema", "objectType": "table", "withGrantOption": true,
        }),
    );
    // No privileges, no schema: null (or an empty list).
    assert!(strings(&test_ro["privileges"]).is_empty(), "{test_ro}");
    assert_eq!(pg.outputs("no_schema")["schema"], Value::Null);
    assert_eq!(
        pg.default_acls(db),
        [
            "postgres - r tf_tests_role2=r/postgres",
            "postgres test_schema f tf_tests_role=X/postgres",
            "test_owner public r tf_tests_role=r/test_owner",
        ],
        "{provider:?}"
    );
    check(
        1,
        &[
            ("tf_tests_role", "test_schema.t", ""),
            ("tf_tests_role3", "dev_schema.t", ""),
            ("tf_tests_role2", "test_schema.t", "SELECT"),
            ("tf_tests_role2", "dev_schema.t", "SELECT"),
            ("tf_tests_role", "public.t", "SELECT"),
        ],
        &[],
    );
    // The connected user is not left a member of the owner it had to become.
    assert!(pg.memberships(SUPERUSER).is_empty(), "{provider:?}");

    pg.set("step", "2");
    let steps = pg.up();
    pg.assert_ops(&steps, &["test_ro", "test_public", "on_schemas"], "update");
    check(
        2,
        &[
            ("tf_tests_role", "test_schema.t", "SELECT"),
            ("tf_tests_role3", "dev_schema.t", "SELECT"),
            ("tf_tests_role3", "test_schema.t", ""),
        ],
        &["CREATE", "USAGE"],
    );

    pg.set("step", "3");
    let steps = pg.up();
    pg.assert_ops(&steps, &["test_ro", "test_public", "no_schema"], "update");
    assert_eq!(
        pg.outputs("test_ro")["privileges"],
        json!(["SELECT", "UPDATE"])
    );
    check(
        3,
        &[
            ("tf_tests_role", "test_schema.t", "SELECT,UPDATE"),
            ("tf_tests_role3", "dev_schema.t", "SELECT,UPDATE"),
            ("tf_tests_role2", "dev_schema.t", "SELECT,UPDATE"),
        ],
        &["CREATE", "USAGE"],
    );
    pg.sql(db, "CREATE TABLE test_schema.g (val text)");
    assert!(pg.has(
        db,
        "has_table_privilege",
        "tf_tests_role",
        "test_schema.g",
        "SELECT WITH GRANT OPTION"
    ));
    pg.sql(db, "DROP TABLE test_schema.g");

    pg.set("step", "4");
    pg.up();
    assert!(strings(&pg.outputs("test_ro")["privileges"]).is_empty());
    check(
        4,
        &[
            ("tf_tests_role", "test_schema.t", ""),
            ("tf_tests_role3", "dev_schema.t", ""),
        ],
        &["CREATE", "USAGE"],
    );

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// A whole lifecycle with drift

/// Every resource type the ports cover, in one program: a database with its owner, a schema,
/// grants on its tables and on the schema, a role membership, an extension and default
/// privileges.
const LIFECYCLE: &str = r#"
import pulumi
import pulumi_postgresql as pg

password = pulumi.Config().require_secret("rolePassword")
owner = pg.Role("owner", name="lc_owner", login=True, password=password)
reader = pg.Role("reader", name="lc_reader", login=True)
group = pg.Role("group", name="lc_group")
db = pg.Database("db", name="lc_db", owner=owner.name)
schema = pg.Schema("schema", name="app", database=db.name, owner=owner.name)
pg.Grant("tables", database=db.name, schema=schema.name, role=reader.name, object_type="table",
         privileges=["SELECT", "INSERT"])
pg.Grant("usage", database=db.name, schema=schema.name, role=reader.name, object_type="schema",
         privileges=["USAGE"])
pg.GrantRole("member", role=owner.name, grant_role=group.name)
ext = pg.Extension("ext", name="pgcrypto", database=db.name, schema=schema.name)
pg.DefaultPrivileges("defaults", database=db.name, schema=schema.name, owner=owner.name,
                     role=reader.name, object_type="table", privileges=["SELECT"])
pulumi.export("extVersion", ext.version)
"#;

fn lifecycle_with_drift(provider: Provider) {
    let Some(pg) = Pg::python(provider, LIFECYCLE) else {
        return;
    };
    pg.sandbox.secret(ROLE_PASSWORD);
    let before = pg.catalog();
    let steps = pg.up();
    let names = [
        "owner", "reader", "group", "db", "schema", "tables", "usage", "member", "ext", "defaults",
    ];
    pg.assert_ops(&steps, &names, "create");
    pg.assert_ids(&[
        ("owner", "lc_owner"),
        ("db", "lc_db"),
        ("schema", "lc_db.app"),
        ("tables", "lc_reader_lc_db_app_table"),
        ("usage", "lc_reader_lc_db_app_schema"),
        ("member", "lc_owner_lc_group_false"),
        ("ext", "lc_db.pgcrypto"),
        ("defaults", "lc_reader_lc_db_app_lc_owner_table"),
    ]);
    assert_eq!(pg.database("lc_db"), "lc_owner UTF8 C C f t -1");
    assert_eq!(pg.schema_owner("lc_db", "app"), "lc_owner");
    assert_eq!(pg.memberships("lc_owner"), ["lc_group"]);
    assert_eq!(pg.extensions("lc_db"), ["pgcrypto 1.3 app"]);
    assert!(pg.has("lc_db", "has_schema_privilege", "lc_reader", "app", "USAGE"));
    assert_eq!(
        pg.default_acls("lc_db"),
        ["lc_owner app r lc_reader=r/lc_owner"]
    );
    assert!(pg.can_log_in("lc_owner", ROLE_PASSWORD));
    // A table the owner makes is readable by the reader (default privileges).
    pg.sql(
        "lc_db",
        "SET ROLE lc_owner; CREATE TABLE app.items (id int)",
    );
    assert_eq!(
        pg.table_privileges("lc_db", "lc_reader", "app.items"),
        "SELECT"
    );
    pg.sql("lc_db", "DROP TABLE app.items");

    // The role's password is a secret everywhere: in the state and the journal (the sandbox's
    // scan looks for it in every file of the home and in all that the CLI prints).
    let state = std::fs::read_to_string(pg.sandbox.state_file(PROJECT, "dev")).unwrap();
    assert!(state.contains("ciphertext"), "{provider:?}");
    let journal = pg
        .sandbox
        .home
        .join("stacks")
        .join(PROJECT)
        .join("dev.journal");
    assert!(
        journal.is_file(),
        "{provider:?}: no journal at {}",
        journal.display()
    );
    assert!(is_secret(&pg.outputs("owner")["password"]));
    assert!(is_secret(&pg.resource("owner")["inputs"]["password"]));

    // Out-of-band changes: a connection limit, a revoked schema privilege, a dropped extension.
    pg.sql("postgres", "ALTER ROLE lc_reader CONNECTION LIMIT 5");
    pg.sql("lc_db", "REVOKE USAGE ON SCHEMA app FROM lc_reader");
    pg.sql("lc_db", "DROP EXTENSION pgcrypto");
    pg.refresh();
    assert_eq!(pg.outputs("reader")["connectionLimit"], 5, "{provider:?}");
    assert!(
        strings(&pg.outputs("usage")["privileges"]).is_empty(),
        "{provider:?}"
    );
    assert!(
        !pg.resources()
            .iter()
            .any(|r| r["urn"].as_str().unwrap().ends_with("::ext")),
        "{provider:?}: the dropped extension left the state"
    );
    assert_eq!(pg.role("lc_reader"), "f t f f t f f 5 infinity -");

    // The next deployment repairs all three.
    let preview = pg.preview();
    pg.assert_ops(&preview, &["reader", "usage"], "update");
    pg.assert_ops(&preview, &["ext"], "create");
    let steps = pg.up();
    pg.assert_ops(&steps, &["reader", "usage"], "update");
    pg.assert_ops(&steps, &["ext"], "create");
    assert_eq!(pg.role("lc_reader"), "f t f f t f f -1 infinity -");
    assert!(pg.has("lc_db", "has_schema_privilege", "lc_reader", "app", "USAGE"));
    assert_eq!(pg.extensions("lc_db"), ["pgcrypto 1.3 app"]);
    assert_all_same(provider, &pg.preview());

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Node.js

/// A role with a secret password, its database, a database grant and an extension with
/// `@pulumi/postgresql`.
const NODE: &str = r#"
"use strict";
const pulumi = require("@pulumi/pulumi");
const pg = require("@pulumi/postgresql");

const config = new pulumi.Config();
const owner = new pg.Role("owner", { name: "js_owner", login: true, password: config.requireSecret("rolePassword") });
const db = new pg.Database("db", { name: "js_db", owner: owner.name, connectionLimit: Number(config.get("limit") || "-1") });
new pg.Grant("connect", { database: db.name, role: owner.name, objectType: "database", privileges: ["CONNECT", "TEMPORARY"] });
const ext = new pg.Extension("ext", { name: "pg_trgm", database: db.name });
exports.roleId = owner.id;
exports.extension = ext.id;
exports.extVersion = ext.version;
"#;

fn node_program(provider: Provider) {
    if provider.file().is_none() {
        return;
    }
    let pg = Pg::on(provider, Program::Node(NODE), PgServer::start()).unwrap();
    let before = pg.catalog();
    pg.cairn(&["up", "--yes"]);
    let outputs: Value = serde_json::from_str(&pg.cairn(&["stack", "output", "--json"])).unwrap();
    assert_eq!(
        outputs,
        json!({"roleId": "js_owner", "extension": "js_db.pg_trgm", "extVersion": "1.6"}),
        "{provider:?}"
    );
    assert_eq!(pg.id("connect"), "js_owner_js_db_database");
    assert_eq!(pg.database("js_db"), "js_owner UTF8 C C f t -1");
    assert!(pg.can_log_in("js_owner", ROLE_PASSWORD));
    assert!(pg.has(
        "postgres",
        "has_database_privilege",
        "js_owner",
        "js_db",
        "TEMPORARY"
    ));
    assert_eq!(pg.extensions("js_db"), ["pg_trgm 1.6 public"]);
    assert!(is_secret(&pg.outputs("owner")["password"]));

    pg.set("limit", "7");
    let out = pg.cairn(&["up", "--yes"]);
    assert_contains(&out, &["1 updated"]);
    assert_eq!(pg.database("js_db"), "js_owner UTF8 C C f t 7");

    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Imports

/// Existing objects adopted with the `import` resource option, by each documented ID format:
/// a role's and a database's name, `database.schema`, `database.extension`. pulumi-postgresql
/// cannot read a schema's `ifNotExists` and `dropCascade` back (an imported schema has them
/// unset, so its diff against the program's inputs is never empty, and Cairn, like Pulumi,
/// refuses to import over a diff): the program ignores changes to them, as Pulumi's users must.
/// (A provider that reads them as their defaults imports the schema without that too; the tests
/// require neither.) `bad` adds one that cannot be imported.
const IMPORTS: &str = r#"
import pulumi
import pulumi_postgresql as pg

def imported(id_, *after, ignore=None):
    return pulumi.ResourceOptions(import_=id_, depends_on=list(after), ignore_changes=ignore)

role = pg.Role("adopted", name="adopted", login=True, connection_limit=3, opts=imported("adopted"))
db = pg.Database("adopted_db", name="adopted_db", owner="adopted", opts=imported("adopted_db", role))
schema = pg.Schema("adopted_schema", name="adopted_schema", database="adopted_db", owner="adopted",
                   opts=imported("adopted_db.adopted_schema", db,
                                 ignore=["ifNotExists", "dropCascade"]))
pg.Extension("adopted_ext", name="pg_trgm", database="adopted_db", schema="adopted_schema",
             opts=imported("adopted_db.pg_trgm", schema))

bad = pulumi.Config().get("bad")
if bad == "schema-id":
    pg.Schema("bad", name="adopted_schema", database="adopted_db", opts=imported("adopted_schema"))
if bad == "different":
    pg.Role("bad", name="adopted", login=True, connection_limit=4, opts=imported("adopted"))
if bad == "missing":
    pg.Role("bad", name="ghost", opts=imported("ghost"))
if bad == "grant":
    pg.Grant("bad", database="adopted_db", role="adopted", object_type="database",
             privileges=["CONNECT"], opts=imported("adopted_adopted_db_database"))
"#;

fn imports(provider: Provider) {
    let Some(pg) = Pg::python(provider, IMPORTS) else {
        return;
    };
    let before = pg.catalog();
    pg.sql("postgres", "CREATE ROLE adopted LOGIN CONNECTION LIMIT 3");
    pg.sql("postgres", "CREATE DATABASE adopted_db OWNER adopted");
    pg.sql(
        "adopted_db",
        "CREATE SCHEMA adopted_schema AUTHORIZATION adopted; \
         CREATE EXTENSION pg_trgm SCHEMA adopted_schema",
    );
    let existing = pg.catalog();

    let steps = pg.up();
    pg.assert_ops(
        &steps,
        &["adopted", "adopted_db", "adopted_schema", "adopted_ext"],
        "import",
    );
    assert_eq!(
        pg.catalog(),
        existing,
        "{provider:?}: an import changes nothing"
    );
    assert_outputs(
        provider,
        "adopted",
        &pg.outputs("adopted"),
        &json!({"id": "adopted", "name": "adopted", "login": true, "connectionLimit": 3,
                "inherit": true, "validUntil": "infinity"}),
    );
    assert_outputs(
        provider,
        "adopted_db",
        &pg.outputs("adopted_db"),
        &json!({"id": "adopted_db", "owner": "adopted", "encoding": "UTF8", "lcCollate": "C",
                "template": "template0"}),
    );
    assert_outputs(
        provider,
        "adopted_schema",
        &pg.outputs("adopted_schema"),
        &json!({"id": "adopted_db.adopted_schema", "owner": "adopted"}),
    );
    assert_outputs(
        provider,
        "adopted_ext",
        &pg.outputs("adopted_ext"),
        &json!({"id": "adopted_db.pg_trgm", "schema": "adopted_schema", "version": "1.6"}),
    );
    assert_all_same(provider, &pg.up());

    // What cannot be imported says why, and nothing is recorded or changed.
    for (bad, expected) in [
        (
            "schema-id",
            "schema ID adopted_schema has not the expected format 'database.schema'",
        ),
        ("different", "(connectionLimit)"),
        ("missing", "ghost"),
        // Grants cannot be imported: read by an ID alone, they are not found.
        ("grant", "adopted_adopted_db_database"),
    ] {
        pg.set("bad", bad);
        let out = pg.up_fails();
        assert_contains(&out, &[expected]);
        assert!(
            !pg.resources()
                .iter()
                .any(|r| r["urn"].as_str().unwrap().ends_with("::bad")),
            "{provider:?}: {bad} recorded"
        );
        assert_eq!(pg.catalog(), existing, "{provider:?}: {bad}");
    }
    pg.sandbox.ok(&["config", "rm", "bad"]);

    // Adopted, so destroyed with the stack.
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

// ---------------------------------------------------------------------------------------------
// Bad input

/// One role, and with `bad` an invalid resource after it.
const INVALID: &str = r#"
import pulumi
import pulumi_postgresql as pg

ok = pg.Role("ok", name="err_ok")
bad = pulumi.Config().get("bad")
if bad == "privilege":
    pg.Grant("bad", database="postgres", schema="public", role=ok.name, object_type="table",
             privileges=["FLY"])
if bad == "objects":
    pg.Grant("bad", database="postgres", role=ok.name, object_type="database", objects=["o1"],
             privileges=["CONNECT"])
if bad == "object-type":
    pg.Grant("bad", database="postgres", role=ok.name, object_type="teapot",
             privileges=["CONNECT"])
if bad == "columns":
    pg.Grant("bad", database="postgres", schema="public", role=ok.name, object_type="column",
             objects=["t"], privileges=["SELECT"])
if bad == "member-of-nobody":
    pg.Role("bad", name="err_bad", roles=["nobody"])
if bad == "extension":
    pg.Extension("bad", name="no_such_extension")
"#;

fn connection_failures(provider: Provider) {
    let Some(pg) = Pg::python(provider, INVALID) else {
        return;
    };
    let before = pg.catalog();
    let port = pg.server.port();

    // A wrong password: the server says so, for the user the configuration names.
    pg.secret_config("postgresql:password", "not-the-password");
    let out = pg.up_fails();
    assert_contains(
        &out,
        &[
            "error connecting to PostgreSQL server 127.0.0.1",
            "password authentication failed for user \"postgres\"",
        ],
    );
    assert!(
        pg.resources().is_empty(),
        "{provider:?}: {:?}",
        pg.resources()
    );
    assert_eq!(pg.catalog(), before);

    // Nothing listening: the address that was tried.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    pg.connect_to(closed, SUPERUSER_PASSWORD, "disable");
    let out = pg.up_fails();
    // The operating system's words for it: Go writes "connection refused", Rust "Connection
    // refused".
    assert_contains(
        &out.to_lowercase(),
        &[
            "error connecting to postgresql server 127.0.0.1",
            &format!("127.0.0.1:{closed}"),
            "connection refused",
        ],
    );
    assert!(pg.resources().is_empty(), "{provider:?}");

    // Repaired, it deploys.
    pg.connect_to(port, SUPERUSER_PASSWORD, "disable");
    pg.up();
    assert_eq!(pg.id("ok"), "err_ok");
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

/// A server that takes TCP connections only over TLS, with a certificate from a CA of its own.
/// The CA certificates the configuration names (`postgresql:sslrootcert`, a file) are in a
/// directory the wasm provider is granted as `/certs` (what its manifest asks for): it names
/// them by that path, the plugin by the host's.
fn tls_failures(provider: Provider) {
    if provider.file().is_none() {
        return;
    }
    let pg = Pg::on(provider, Program::Python(INVALID), PgServer::start_tls()).unwrap();
    let before = pg.catalog_over_tls();
    let port = pg.server.port();
    let certs = pg.sandbox.root().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let server_ca = certs.join("server-ca.crt");
    std::fs::copy(pg.server.tls_cert(), &server_ca).unwrap();
    let other_ca = certs.join("other-ca.crt");
    let openssl = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=some-other-ca", "-keyout"])
        .arg(certs.join("other-ca.key"))
        .arg("-out")
        .arg(&other_ca)
        .output()
        .expect("running openssl");
    assert!(openssl.status.success(), "{openssl:?}");
    if provider == Provider::Wasm {
        for (path, value) in [
            (
                "[\"cairn:grants\"].postgresql.directories[0].host",
                certs.to_str().unwrap(),
            ),
            (
                "[\"cairn:grants\"].postgresql.directories[0].guest",
                "/certs",
            ),
        ] {
            pg.sandbox.ok(&["config", "set", "--path", path, value]);
        }
    }
    let verify_with = |ca: &std::path::Path| {
        pg.connect_to(port, SUPERUSER_PASSWORD, "verify-full");
        let path = match provider {
            Provider::Wasm => format!("/certs/{}", ca.file_name().unwrap().to_str().unwrap()),
            Provider::Oracle => ca.to_str().unwrap().to_owned(),
        };
        pg.set("postgresql:sslrootcert", &path);
    };

    // Without TLS the server turns the connection away.
    let out = pg.up_fails();
    assert_contains(
        &out,
        &[
            "error connecting to PostgreSQL server 127.0.0.1",
            "no pg_hba.conf entry for host \"127.0.0.1\", user \"postgres\", database \"postgres\", no encryption",
        ],
    );
    assert!(pg.resources().is_empty(), "{provider:?}");

    // A certificate signed by a CA the configuration does not trust.
    verify_with(&other_ca);
    let out = pg.up_fails();
    assert_contains(
        &out,
        &[
            "error connecting to PostgreSQL server 127.0.0.1",
            "certificate signed by unknown authority",
        ],
    );
    assert!(pg.resources().is_empty(), "{provider:?}");
    assert_eq!(pg.catalog_over_tls(), before);

    // Verified against its own CA (the name too: the certificate is for 127.0.0.1), it
    // deploys; so does `require`, which encrypts without verifying.
    verify_with(&server_ca);
    pg.up();
    assert_eq!(pg.id("ok"), "err_ok");
    pg.sandbox.ok(&["config", "rm", "postgresql:sslrootcert"]);
    pg.connect_to(port, SUPERUSER_PASSWORD, "require");
    assert_all_same(provider, &pg.up());
    pg.destroy();
    assert_eq!(pg.catalog_over_tls(), before, "{provider:?}");
}

impl Pg {
    /// The roles and databases of a server that takes only TLS connections.
    fn catalog_over_tls(&self) -> String {
        let url = format!("{}?sslmode=require", self.server.superuser_url("postgres"));
        self.server
            .psql(
                &url,
                "SELECT string_agg(x, E'\\n' ORDER BY x) FROM (SELECT 'role ' || rolname FROM \
                 pg_roles UNION ALL SELECT 'database ' || datname FROM pg_database) s(x)",
            )
            .unwrap()
    }
}

fn invalid_inputs(provider: Provider) {
    let Some(pg) = Pg::python(provider, INVALID) else {
        return;
    };
    let before = pg.catalog();
    for (bad, expected) in [
        (
            "privilege",
            "FLY is not an allowed privilege for object type table",
        ),
        (
            "objects",
            "cannot specify `objects` when `object_type` is `database` or `schema`",
        ),
        (
            "object-type",
            "expected object_type to be one of [\"database\" \"function\" \"procedure\" \"routine\" \"schema\" \"sequence\" \"table\" \"foreign_data_wrapper\" \"foreign_server\" \"column\"], got teapot",
        ),
        (
            "columns",
            "must specify `columns` when `object_type` is `column`",
        ),
        (
            "member-of-nobody",
            "could not grant role nobody to err_bad: pq: role \"nobody\" does not exist",
        ),
        (
            "extension",
            "extension \"no_such_extension\" is not available",
        ),
    ] {
        pg.set("bad", bad);
        let out = pg.up_fails();
        assert_contains(&out, &[expected]);
        // What happened is recorded (the valid role), what did not is not.
        assert_eq!(pg.id("ok"), "err_ok", "{provider:?}: {bad}");
        assert!(
            !pg.resources()
                .iter()
                .any(|r| r["urn"].as_str().unwrap().ends_with("::bad")),
            "{provider:?}: {bad} recorded"
        );
        assert_eq!(
            pg.sql(
                "postgres",
                "SELECT string_agg(rolname, ',') FROM pg_roles WHERE rolname LIKE 'err_%'"
            ),
            "err_ok",
            "{provider:?}: {bad}"
        );
        assert_eq!(
            pg.sql(
                "postgres",
                "SELECT count(*) FROM pg_class WHERE relacl::text LIKE '%err_ok%'"
            ),
            "0"
        );
    }
    pg.sandbox.ok(&["config", "rm", "bad"]);
    pg.destroy();
    assert_eq!(pg.catalog(), before, "{provider:?}");
}

/// A sandboxed provider without `cairn:grants.postgresql.tcp` cannot reach the server: the
/// error names the address and the grant, and the server sees no connection.
fn without_a_tcp_grant_nothing_reaches_the_server() {
    let pg = Pg::python(Provider::Wasm, INVALID).unwrap();
    let port = pg.server.port();
    pg.sandbox.ok(&["config", "rm", "cairn:grants"]);
    pg.sql("postgres", "ALTER SYSTEM SET log_connections = on");
    pg.sql("postgres", "SELECT pg_reload_conf()");
    // Reloaded once a new connection logs itself.
    let connections = || pg.server.log().matches("connection received").count();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while connections() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "log_connections never took effect"
        );
        pg.sql("postgres", "SELECT 1");
    }
    let seen = connections();
    let out = pg.up_fails();
    assert_contains(&out, &[&format!("127.0.0.1:{port}"), "cairn:grants"]);
    assert_eq!(
        connections(),
        seen,
        "the server saw a connection:\n{}",
        pg.server.log()
    );
    assert!(pg.resources().is_empty());
}
