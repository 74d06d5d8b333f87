//! Sessions with the server: the [`Session`] and [`Connector`] seams (real connections in
//! [`Pool`]; scripted ones in the unit tests), statement helpers that give errors their
//! context (and never a password), transactions, and the Terraform provider's shared
//! helpers (role membership juggling, advisory locks, existence checks).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Display;

use cairn_sdk::{Error, Result, log};

use crate::client::{Client, ConnectConfig, ErrorKind, PgError, SslMode};
use crate::config::{Settings, Version};
use crate::sql::{ident, literal};

/// Rows as text, in the order of the columns asked for (`None` for SQL NULL).
pub(crate) type Rows = Vec<Vec<Option<String>>>;

/// One open session on one database.
pub(crate) trait Session {
    /// Runs a statement and returns the values of `columns` of each row.
    fn query(&mut self, sql: &str, columns: &[&str]) -> Result<Rows, PgError>;
    /// Runs statements that return no rows.
    fn execute(&mut self, sql: &str) -> Result<(), PgError>;
    /// The server's version (the configured `expectedVersion` when it does not say).
    fn version(&self) -> Version;
}

/// Opens sessions (Terraform connects to the database a resource lives in).
pub(crate) trait Connector {
    /// A session on `database`.
    fn session(&self, database: &str) -> Result<Box<dyn Session + '_>>;
    /// Closes the idle sessions on `database` (before it is dropped or renamed).
    fn forget(&self, database: &str);
}

/// What an operation works with.
pub(crate) struct Ctx<'a> {
    pub conn: &'a dyn Connector,
    pub settings: &'a Settings,
    /// The resource's URN, for log messages.
    pub urn: &'a str,
}

impl Ctx<'_> {
    /// A session on the provider's own database.
    pub(crate) fn default_session(&self) -> Result<Box<dyn Session + '_>> {
        self.conn.session(&self.settings.database)
    }

    /// A session on `database`, or on the provider's database when it is empty.
    pub(crate) fn session(&self, database: &str) -> Result<Box<dyn Session + '_>> {
        if database.is_empty() {
            self.default_session()
        } else {
            self.conn.session(database)
        }
    }
}

/// `what: error` for a failed statement; the server's errors read as the Terraform
/// provider's driver writes them (`pq: role "x" does not exist`).
fn failure(what: impl Display, e: &PgError) -> Error {
    if e.kind == ErrorKind::Server {
        Error::failed(format!("{what}: pq: {e}"))
    } else {
        Error::failed(format!("{what}: {e}"))
    }
}

/// Runs a statement; a failure says `what` failed (never the statement itself).
pub(crate) fn exec(s: &mut dyn Session, sql: &str, what: impl Display) -> Result<()> {
    log::debug("", format!("SQL: {sql}"));
    s.execute(sql).map_err(|e| failure(what, &e))
}

/// Runs a statement that carries `secret`: it is logged without the statement, and the
/// secret is scrubbed from any error.
pub(crate) fn exec_secret(
    s: &mut dyn Session,
    sql: &str,
    secret: &str,
    what: impl Display,
) -> Result<()> {
    log::debug("", "SQL: (a statement with a password)");
    s.execute(sql).map_err(|mut e| {
        if !secret.is_empty() {
            e.message = e.message.replace(secret, "[secret]");
        }
        failure(what, &e)
    })
}

/// Runs a query and returns its rows.
pub(crate) fn rows(
    s: &mut dyn Session,
    sql: &str,
    columns: &[&str],
    what: impl Display,
) -> Result<Rows> {
    log::debug("", format!("SQL: {sql}"));
    s.query(sql, columns).map_err(|e| failure(what, &e))
}

/// The first row of a query, if any.
pub(crate) fn row(
    s: &mut dyn Session,
    sql: &str,
    columns: &[&str],
    what: impl Display,
) -> Result<Option<Vec<Option<String>>>> {
    Ok(rows(s, sql, columns, what)?.into_iter().next())
}

/// Whether a query returns a row.
pub(crate) fn exists(s: &mut dyn Session, sql: &str, what: impl Display) -> Result<bool> {
    Ok(row(s, sql, &["x"], what)?.is_some())
}

/// Runs `f` in a transaction: committed when it succeeds, rolled back when it fails.
pub(crate) fn transaction<T>(
    s: &mut dyn Session,
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    exec(s, "BEGIN", "could not start transaction")?;
    match f(s) {
        Ok(value) => {
            exec(s, "COMMIT", "could not commit transaction")?;
            Ok(value)
        }
        Err(e) => {
            let _ = s.execute("ROLLBACK");
            Err(e)
        }
    }
}

// ---- The Terraform provider's helpers (helpers.go) ----

/// `SELECT CURRENT_USER`.
pub(crate) fn current_user(s: &mut dyn Session) -> Result<String> {
    row(
        s,
        "SELECT CURRENT_USER AS current_user",
        &["current_user"],
        "error while looking for the current user",
    )?
    .and_then(|r| r.into_iter().next().flatten())
    .ok_or_else(|| Error::failed("SELECT CURRENT_USER returned no row"))
}

/// Whether `role` is a superuser (an error when the role does not exist).
pub(crate) fn is_superuser(s: &mut dyn Session, role: &str) -> Result<bool> {
    let what = format!("could not check if role {role} is superuser");
    let sql = format!(
        "SELECT rolsuper FROM pg_roles WHERE rolname = {}",
        literal(role)
    );
    match row(s, &sql, &["rolsuper"], &what)? {
        Some(r) => Ok(crate::sql::parse_bool(r[0].as_deref())),
        None => Err(Error::failed(format!("{what}: the role does not exist"))),
    }
}

/// Whether `member` is a member of `role` (with the SET option, on servers that have it).
pub(crate) fn is_member_of_role(s: &mut dyn Session, role: &str, member: &str) -> Result<bool> {
    let set_option = exists(
        s,
        "SELECT 1 AS x FROM information_schema.columns WHERE table_name = 'pg_auth_members' AND column_name = 'set_option'",
        "could not read setOption column",
    )?;
    let mut sql = format!(
        "SELECT 1 AS x FROM pg_auth_members WHERE pg_get_userbyid(roleid) = {} AND pg_get_userbyid(member) = {}",
        literal(role),
        literal(member)
    );
    if set_option {
        sql.push_str(" AND set_option");
    }
    exists(s, &sql, "could not read role membership")
}

/// Grants `role` to `member` unless it is already a member (or the same role); true when it
/// granted.
pub(crate) fn grant_role_membership(s: &mut dyn Session, role: &str, member: &str) -> Result<bool> {
    if member == role || is_member_of_role(s, role, member)? {
        return Ok(false);
    }
    let sql = format!("GRANT {} TO {}", ident(role), ident(member));
    exec(s, &sql, format!("error granting role {role} to {member}"))?;
    Ok(true)
}

/// Revokes `role` from `member` when it is a member; true when it revoked.
pub(crate) fn revoke_role_membership(
    s: &mut dyn Session,
    role: &str,
    member: &str,
) -> Result<bool> {
    if member == role || !is_member_of_role(s, role, member)? {
        return Ok(false);
    }
    let sql = format!("REVOKE {} FROM {}", ident(role), ident(member));
    exec(s, &sql, format!("error revoking role {role} from {member}"))?;
    Ok(true)
}

/// Whether a role exists.
pub(crate) fn role_exists(s: &mut dyn Session, role: &str) -> Result<bool> {
    exists(
        s,
        &format!(
            "SELECT 1 AS x FROM pg_roles WHERE rolname = {}",
            literal(role)
        ),
        "could not check if role exists",
    )
}

/// Whether a database exists.
pub(crate) fn db_exists(s: &mut dyn Session, database: &str) -> Result<bool> {
    exists(
        s,
        &format!(
            "SELECT 1 AS x FROM pg_database WHERE datname = {}",
            literal(database)
        ),
        "could not check if database exists",
    )
}

/// Whether a schema exists (in the session's database).
pub(crate) fn schema_exists(s: &mut dyn Session, schema: &str) -> Result<bool> {
    exists(
        s,
        &format!(
            "SELECT 1 AS x FROM pg_namespace WHERE nspname = {}",
            literal(schema)
        ),
        "could not check if schema exists",
    )
}

/// The owner of `database` (the session's database when empty).
pub(crate) fn database_owner(s: &mut dyn Session, database: &str) -> Result<String> {
    let which = if database.is_empty() {
        "current_database()".to_owned()
    } else {
        literal(database)
    };
    let sql = format!(
        "SELECT rolname FROM pg_database JOIN pg_roles ON datdba = pg_roles.oid WHERE datname = {which}"
    );
    owner(s, &sql, "database", database)
}

/// The owner of a schema (in the session's database).
pub(crate) fn schema_owner(s: &mut dyn Session, schema: &str) -> Result<String> {
    let sql = format!(
        "SELECT rolname FROM pg_namespace JOIN pg_roles ON nspowner = pg_roles.oid WHERE nspname = {}",
        literal(schema)
    );
    owner(s, &sql, "schema", schema)
}

/// The `rolname` that `sql` answers: the owner of the `kind` (database, schema) `name`, with
/// the Terraform provider's messages when the query fails or finds nothing.
fn owner(s: &mut dyn Session, sql: &str, kind: &str, name: &str) -> Result<String> {
    row(
        s,
        sql,
        &["rolname"],
        format!("error while looking for the owner of {kind} '{name}'"),
    )?
    .and_then(|r| r.into_iter().next().flatten())
    .ok_or_else(|| {
        Error::failed(format!(
            "could not find {kind} '{name}' while looking for owner"
        ))
    })
}

/// The role's OID (0 for `public`).
pub(crate) fn role_oid(s: &mut dyn Session, role: &str) -> Result<u32> {
    if role == "public" {
        return Ok(0);
    }
    let what = format!("could not find oid for role {role}");
    let sql = format!("SELECT oid FROM pg_roles WHERE rolname = {}", literal(role));
    row(s, &sql, &["oid"], &what)?
        .and_then(|r| r.into_iter().next().flatten())
        .and_then(|oid| oid.parse().ok())
        .ok_or_else(|| Error::failed(format!("{what}: the role does not exist")))
}

/// Locks a role and its members for the transaction (Terraform's `pgLockRole`).
pub(crate) fn lock_role(s: &mut dyn Session, role: &str) -> Result<()> {
    exec(
        s,
        "SET statement_timeout = 0",
        "could not disable statement_timeout",
    )?;
    exec(
        s,
        &format!(
            "SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_roles WHERE rolname = {}",
            literal(role)
        ),
        format!("could not get advisory lock for role {role}"),
    )?;
    exec(
        s,
        &format!(
            "SELECT pg_advisory_xact_lock(member::bigint) FROM pg_auth_members JOIN pg_roles ON roleid = pg_roles.oid WHERE rolname = {}",
            literal(role)
        ),
        format!("could not get advisory lock for members of role {role}"),
    )
}

/// Locks a database for the transaction (Terraform's `pgLockDatabase`).
pub(crate) fn lock_database(s: &mut dyn Session, database: &str) -> Result<()> {
    exec(
        s,
        "SET statement_timeout = 0",
        "could not disable statement_timeout",
    )?;
    exec(
        s,
        &format!(
            "SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_database WHERE datname = {}",
            literal(database)
        ),
        format!("could not get advisory lock for database {database}"),
    )
}

/// Runs `f` with `roles` granted for a while to the connected user when it is not a
/// superuser (Terraform's `withRolesGranted`): a reverse membership is revoked first and
/// restored after, as PostgreSQL refuses circular memberships.
pub(crate) fn with_roles_granted<T>(
    s: &mut dyn Session,
    roles: &[String],
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    if roles.is_empty() {
        return f(s);
    }
    let current = current_user(s)?;
    if is_superuser(s, &current)? {
        return f(s);
    }
    let mut granted = Vec::new();
    let mut revoked = Vec::new();
    for role in roles {
        if is_superuser(s, role)? {
            log::warn(
                "",
                format!("role {role} could not be granted to {current} as it is a superuser"),
            );
            continue;
        }
        if revoke_role_membership(s, &current, role)? {
            revoked.push(role.clone());
        }
        if grant_role_membership(s, role, &current)? {
            granted.push(role.clone());
        }
    }
    let value = f(s)?;
    for role in &granted {
        revoke_role_membership(s, role, &current)?;
    }
    for role in &revoked {
        if role_exists(s, role)? {
            grant_role_membership(s, &current, role)?;
        }
    }
    Ok(value)
}

// ---- Real sessions ----

/// The provider's connections: opened lazily, kept per database name, several per database
/// when an operation needs two at once (a lock held while another session works).
#[derive(Default)]
pub(crate) struct Pool {
    settings: Option<Settings>,
    /// The CA certificates, read once from `sslrootcert`.
    root_cert: RefCell<Option<String>>,
    idle: RefCell<HashMap<String, Vec<Client>>>,
    open: Cell<usize>,
}

impl Pool {
    pub(crate) fn new(settings: Settings) -> Pool {
        Pool {
            settings: Some(settings),
            ..Pool::default()
        }
    }

    pub(crate) fn settings(&self) -> Option<&Settings> {
        self.settings.as_ref()
    }

    fn connect_config(&self, settings: &Settings, database: &str) -> Result<ConnectConfig> {
        if !settings.unknown.is_empty() {
            return Err(Error::failed(format!(
                "the provider's configuration is not known yet ({})",
                settings.unknown.join(", ")
            )));
        }
        let sslrootcert = match &settings.sslrootcert {
            None => None,
            Some(text) if text.trim_start().starts_with("-----BEGIN") => Some(text.clone()),
            Some(path) => {
                let mut cached = self.root_cert.borrow_mut();
                if cached.is_none() {
                    let pem = std::fs::read_to_string(path).map_err(|e| {
                        Error::failed(format!(
                            "sslrootcert: reading {path:?}: {e} (a path must be inside a directory granted to the provider, e.g. /certs; or give the PEM text itself)"
                        ))
                    })?;
                    *cached = Some(pem);
                }
                cached.clone()
            }
        };
        // As in libpq (and the Terraform provider's driver), `require` with a root
        // certificate verifies the server's chain.
        let sslmode = match (settings.sslmode, &sslrootcert) {
            (SslMode::Require, Some(_)) => SslMode::VerifyCa,
            (mode, _) => mode,
        };
        Ok(ConnectConfig {
            host: settings.host.clone(),
            port: settings.port,
            user: settings.username.clone(),
            password: settings.password.clone(),
            database: database.to_owned(),
            sslmode,
            sslrootcert,
            connect_timeout: settings.connect_timeout,
            application_name: "Cairn postgresql provider".to_owned(),
        })
    }

    fn connect(&self, database: &str) -> Result<Client> {
        let settings = self
            .settings
            .as_ref()
            .ok_or_else(|| Error::failed("the provider is not configured"))?;
        if settings.max_connections > 0 && self.open.get() >= settings.max_connections {
            return Err(Error::failed(format!(
                "more than maxConnections ({}) connections would be open",
                settings.max_connections
            )));
        }
        let config = self.connect_config(settings, database)?;
        let client = Client::connect(&config).map_err(|e| {
            let mut message = e.to_string();
            if let Some(password) = settings.password.as_deref().filter(|p| !p.is_empty()) {
                message = message.replace(password, "XXXX");
            }
            let hint = if e.kind == ErrorKind::Connect {
                format!(
                    " (the provider reaches only what `cairn:grants.postgresql.tcp` grants: is {}:{} granted?)",
                    settings.host, settings.port
                )
            } else {
                String::new()
            };
            Error::failed(format!(
                "error connecting to PostgreSQL server {} (scheme: postgres): {message}{hint}",
                settings.host
            ))
        })?;
        self.open.set(self.open.get() + 1);
        Ok(client)
    }
}

impl Connector for Pool {
    fn session(&self, database: &str) -> Result<Box<dyn Session + '_>> {
        let idle = self.idle.borrow_mut().get_mut(database).and_then(Vec::pop);
        let (client, reused) = match idle {
            Some(client) => (client, true),
            None => (self.connect(database)?, false),
        };
        Ok(Box::new(Conn {
            pool: self,
            database: database.to_owned(),
            client: Some(client),
            reused,
            broken: false,
        }))
    }

    fn forget(&self, database: &str) {
        if let Some(clients) = self.idle.borrow_mut().remove(database) {
            self.open.set(self.open.get().saturating_sub(clients.len()));
        }
    }
}

/// A session checked out of the [`Pool`]; back to it when dropped (unless broken).
struct Conn<'a> {
    pool: &'a Pool,
    database: String,
    client: Option<Client>,
    /// Taken from the idle list: its first statement may find it closed by the server.
    reused: bool,
    broken: bool,
}

impl Conn<'_> {
    fn run<T>(&mut self, f: impl Fn(&mut Client) -> Result<T, PgError>) -> Result<T, PgError> {
        let client = self.client.as_mut().expect("a session has its client");
        let result = f(client);
        let lost = |e: &PgError| matches!(e.kind, ErrorKind::Connect | ErrorKind::Protocol);
        match result {
            Err(e) if lost(&e) && self.reused => {
                // An idle connection the server closed: nothing ran, so reconnect and retry.
                self.reused = false;
                self.pool.open.set(self.pool.open.get().saturating_sub(1));
                match self.pool.connect(&self.database) {
                    Ok(fresh) => {
                        self.client = Some(fresh);
                        let client = self.client.as_mut().expect("just set");
                        let result = f(client);
                        if let Err(e) = &result
                            && lost(e)
                        {
                            self.broken = true;
                        }
                        result
                    }
                    Err(_) => {
                        self.client = None;
                        self.broken = true;
                        Err(e)
                    }
                }
            }
            Err(e) => {
                self.reused = false;
                if lost(&e) {
                    self.broken = true;
                }
                Err(e)
            }
            Ok(value) => {
                self.reused = false;
                Ok(value)
            }
        }
    }
}

impl Session for Conn<'_> {
    fn query(&mut self, sql: &str, columns: &[&str]) -> Result<Rows, PgError> {
        if self.client.is_none() {
            return Err(lost_connection());
        }
        self.run(|client| {
            let rows = client.query(sql)?;
            Ok(rows
                .iter()
                .map(|r| {
                    columns
                        .iter()
                        .map(|c| r.get(c).map(str::to_owned))
                        .collect()
                })
                .collect())
        })
    }

    fn execute(&mut self, sql: &str) -> Result<(), PgError> {
        if self.client.is_none() {
            return Err(lost_connection());
        }
        self.run(|client| client.execute(sql))
    }

    fn version(&self) -> Version {
        let reported = self
            .client
            .as_ref()
            .and_then(|c| Version::from_num(c.server_version_num()));
        reported.unwrap_or_else(|| {
            self.pool
                .settings
                .as_ref()
                .map_or(crate::config::DEFAULT_VERSION, |s| s.expected_version)
        })
    }
}

fn lost_connection() -> PgError {
    PgError {
        kind: ErrorKind::Protocol,
        code: None,
        message: "the connection was lost".to_owned(),
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        match self.client.take() {
            Some(client) if !self.broken => {
                self.pool
                    .idle
                    .borrow_mut()
                    .entry(std::mem::take(&mut self.database))
                    .or_default()
                    .push(client);
            }
            Some(_) => self.pool.open.set(self.pool.open.get().saturating_sub(1)),
            None => {}
        }
    }
}

// ---- Scripted sessions for tests ----

#[cfg(test)]
pub(crate) mod fake {
    //! A [`Connector`] whose sessions record every statement (with its database) and answer
    //! queries from a script: the first rule whose pattern the SQL contains gives the rows.

    use super::*;

    /// A scripted server.
    pub(crate) struct Fake {
        pub version: Version,
        /// (substring of the SQL, rows, uses left) — the first match with uses left wins;
        /// no match: no rows.
        pub script: RefCell<Vec<(String, Rows, Option<usize>)>>,
        /// Statements as `database: SQL`, in order.
        pub log: RefCell<Vec<String>>,
        /// A statement containing this fails with a server error.
        pub fail_on: RefCell<Option<(String, String)>>,
        /// The provider settings its [`Fake::ctx`] carries.
        pub settings: Settings,
    }

    impl Fake {
        pub(crate) fn new(major: u32) -> Fake {
            Fake {
                version: Version::new(major, 0, 0),
                script: RefCell::new(Vec::new()),
                log: RefCell::new(Vec::new()),
                fail_on: RefCell::new(None),
                settings: Fake::settings(),
            }
        }

        /// A context whose sessions are this fake's.
        pub(crate) fn ctx(&self) -> Ctx<'_> {
            Ctx {
                conn: self,
                settings: &self.settings,
                urn: "",
            }
        }

        /// Answers SQL containing `pattern` with `rows` (strings; "NULL" is SQL NULL).
        pub(crate) fn answer(&self, pattern: &str, rows: &[&[&str]]) -> &Fake {
            self.rule(pattern, rows, None)
        }

        /// Answers the next SQL containing `pattern` with `rows`, once.
        pub(crate) fn answer_once(&self, pattern: &str, rows: &[&[&str]]) -> &Fake {
            self.rule(pattern, rows, Some(1))
        }

        fn rule(&self, pattern: &str, rows: &[&[&str]], uses: Option<usize>) -> &Fake {
            let rows = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| (*v != "NULL").then(|| (*v).to_owned()))
                        .collect()
                })
                .collect();
            self.script
                .borrow_mut()
                .push((pattern.to_owned(), rows, uses));
            self
        }

        /// The statements that changed something (no `SELECT`, no transaction control).
        pub(crate) fn changes(&self) -> Vec<String> {
            self.log
                .borrow()
                .iter()
                .filter(|l| {
                    let sql = l.split_once(": ").map_or(l.as_str(), |(_, s)| s);
                    !sql.starts_with("SELECT")
                        && !matches!(sql, "BEGIN" | "COMMIT" | "ROLLBACK")
                        && !sql.starts_with("SET statement_timeout")
                })
                .cloned()
                .collect()
        }

        pub(crate) fn settings() -> Settings {
            Settings {
                host: "db".into(),
                ..Settings::default()
            }
        }
    }

    struct FakeSession<'a> {
        fake: &'a Fake,
        database: String,
    }

    impl Session for FakeSession<'_> {
        fn query(&mut self, sql: &str, _columns: &[&str]) -> Result<Rows, PgError> {
            self.fake
                .log
                .borrow_mut()
                .push(format!("{}: {sql}", self.database));
            if let Some((pattern, message)) = &*self.fake.fail_on.borrow()
                && sql.contains(pattern.as_str())
            {
                return Err(PgError {
                    kind: ErrorKind::Server,
                    code: Some("42000".into()),
                    message: message.clone(),
                });
            }
            let mut script = self.fake.script.borrow_mut();
            let rule = script
                .iter_mut()
                .find(|(pattern, _, uses)| sql.contains(pattern.as_str()) && *uses != Some(0));
            Ok(match rule {
                Some((_, rows, uses)) => {
                    if let Some(n) = uses {
                        *n -= 1;
                    }
                    rows.clone()
                }
                None => Vec::new(),
            })
        }

        fn execute(&mut self, sql: &str) -> Result<(), PgError> {
            self.query(sql, &[]).map(|_| ())
        }

        fn version(&self) -> Version {
            self.fake.version
        }
    }

    impl Connector for Fake {
        fn session(&self, database: &str) -> Result<Box<dyn Session + '_>> {
            Ok(Box::new(FakeSession {
                fake: self,
                database: database.to_owned(),
            }))
        }

        fn forget(&self, database: &str) {
            self.log
                .borrow_mut()
                .push(format!("{database}: (connections closed)"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::Fake;
    use super::*;

    #[test]
    fn transactions_roll_back_on_failure() {
        let fake = Fake::new(15);
        let mut s = fake.session("db").unwrap();
        let r: Result<()> = transaction(&mut *s, |s| {
            exec(s, "CREATE ROLE \"a\"", "error creating role a")?;
            Err(Error::failed("later step failed"))
        });
        assert_eq!(r.unwrap_err().to_string(), "later step failed");
        assert_eq!(
            *fake.log.borrow(),
            ["db: BEGIN", "db: CREATE ROLE \"a\"", "db: ROLLBACK"]
        );
    }

    #[test]
    fn a_password_never_shows_in_an_error() {
        let fake = Fake::new(15);
        *fake.fail_on.borrow_mut() = Some((
            "PASSWORD".into(),
            "syntax error at or near \"hunter2\"".into(),
        ));
        let mut s = fake.session("db").unwrap();
        let err = exec_secret(
            &mut *s,
            "ALTER ROLE \"r\" PASSWORD 'hunter2'",
            "hunter2",
            "error updating role password",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "error updating role password: pq: syntax error at or near \"[secret]\" (SQLSTATE 42000)"
        );
    }

    #[test]
    fn roles_granted_for_a_while_to_a_non_superuser() {
        let fake = Fake::new(16);
        let none: &[&[&str]] = &[];
        // owner is a member of admin (the reverse relation) until it is revoked; admin
        // becomes a member of owner once granted.
        fake.answer("CURRENT_USER", &[&["admin"]])
            .answer("rolsuper FROM pg_roles WHERE rolname = 'admin'", &[&["f"]])
            .answer("rolsuper FROM pg_roles WHERE rolname = 'owner'", &[&["f"]])
            .answer("column_name = 'set_option'", &[&["1"]])
            .answer_once("= 'admin' AND pg_get_userbyid(member) = 'owner'", &[&["1"]])
            .answer("= 'admin' AND pg_get_userbyid(member) = 'owner'", none)
            .answer_once("= 'owner' AND pg_get_userbyid(member) = 'admin'", none)
            .answer("= 'owner' AND pg_get_userbyid(member) = 'admin'", &[&["1"]])
            .answer("FROM pg_roles WHERE rolname = 'owner'", &[&["1"]]);
        let mut s = fake.session("db").unwrap();
        with_roles_granted(&mut *s, &["owner".to_owned()], |s| {
            exec(s, "DROP SCHEMA \"x\" RESTRICT", "error deleting schema")
        })
        .unwrap();
        assert_eq!(
            fake.changes(),
            [
                "db: REVOKE \"admin\" FROM \"owner\"",
                "db: GRANT \"owner\" TO \"admin\"",
                "db: DROP SCHEMA \"x\" RESTRICT",
                "db: REVOKE \"owner\" FROM \"admin\"",
                "db: GRANT \"admin\" TO \"owner\"",
            ]
        );
    }
}
