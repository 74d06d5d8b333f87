//! The `postgres://` state backend: stacks, checkpoints, journals, history and tags as rows of
//! a PostgreSQL database, for teams that share stacks.
//!
//! Tables (created by the versioned migrations in [`MIGRATIONS`], run on first use):
//! * `cairn_stacks` — one row per live stack: project, name, and the checkpoint bytes exactly as
//!   the file backend writes `stacks/<project>/<stack>.json` (removed stacks keep their row,
//!   marked `removed_at`, so their history stays as a backup);
//! * `cairn_journal` — the journal of a deployment in progress, one row per append (the begin
//!   and end records of the steps that finished together: one commit), so the bytes written
//!   per step are proportional to the step;
//! * `cairn_checkpoint_history` — previous checkpoints (bounded by `CAIRN_STATE_HISTORY`);
//! * `cairn_updates` — one row per update (`cairn stack history`);
//! * `cairn_stack_tags` — tags;
//! * `cairn_locks` — who holds each stack's lock (for the error a second writer sees);
//! * `cairn_schema_migrations` — the migrations applied.
//!
//! **Locks are session-bound advisory locks** (`pg_try_advisory_lock`), not leases. The server
//! releases one when the session that took it ends, however it ends: the holder exiting, being
//! killed, or its connection dropping. There is no heartbeat to miss and no expiry to judge by
//! clock, so a live holder can never lose its lock to a timeout, and a dead one never keeps it.
//! Every write of a locked stack goes through the session holding the lock: a holder whose
//! session was lost (the server restarted, the network failed) cannot write any more — its next
//! write fails — so two writers never both write a stack. TCP keepalives on both sides (the
//! client's settings and the session's `tcp_keepalives_*`) bound how long a vanished host's
//! session, and so its lock, can linger: about half a minute.
//!
//! The driver (`postgres`) is synchronous and starts its own runtime, so each connection lives on
//! a thread of its own ([`Session`]) and is used from any context, async or not.
//!
//! # PostgreSQL writes are transactions on the lock's session
//!
//! A stack's checkpoint, its history copy and the emptying of its journal commit together; journal
//! appends commit before `append` returns; every write of a locked stack runs on the connection
//! that holds its advisory lock, so none can happen without the lock. Passwords never leave
//! `pgconfig`/the driver: every URL shown is rebuilt without one or redacted.
//!
//! # The PostgreSQL backend has tables of its own, not Pulumi's blob layout
//!
//! Pulumi's DIY PostgreSQL backend (PR #19581) is a gocloud blob bucket: one key-value table
//! (`pulumi_state`: `key`, base64 `data`, `updated_at`) holding the DIY files under their
//! `.pulumi/…` paths, lock files included (check, write, check again), no migrations. Cairn keeps
//! stacks, journal rows, checkpoint history, update records, tags and lock holders in tables of
//! their own (`backend/postgres.rs`): a journal append is one small INSERT rather than a rewrite of
//! a whole blob, a save is one transaction (checkpoint in, previous one to the history, journal
//! emptied) where a blob store needs a file-then-truncate dance, and locks are the server's own.
//! The checkpoint bytes are exactly the file backend's, so a stack moves between Cairn's two
//! backends, and between Pulumi's and Cairn's, by `stack export` / `stack import`; the file backend
//! keeps Pulumi's DIY file layout (`.pulumi-tags`, `.history.json`), so there the files are shared.
//!
//! # Session-bound advisory locks, not leases with heartbeats
//!
//! A lease needs a renewal thread, an expiry judged against clocks, and a fencing check on every
//! write, and a holder paused past its expiry (a long provider call, a stopped laptop) loses its
//! lock while it still writes. An advisory lock lives exactly as long as the holder's database
//! session: the server releases it when the session ends (exit, kill -9, lost connection),
//! keepalives bound how long a vanished host's session lingers (~30 s), and since every write of a
//! locked stack goes through that same session, a holder that lost its session cannot write. The
//! lock holder's details go in `cairn_locks` only to name it in a second writer's error.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cairn_engine::deploy::journal::{PersistError, Persister};
use cairn_engine::text::quoted;
use postgres::{Client, NoTls};
use sha2::{Digest, Sha256};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::pgconfig::{self, PgTarget};
use crate::{
    BackendError, LockHolder, Result, StackWriter, Store, UpdateRecord, checkpoint_bytes_of_json,
    names,
};
use cairn_engine::text::error_chain;

/// The schema's migrations, in order; the version of each is its position, from 1. A
/// migration, once released, never changes: later ones add to it.
const MIGRATIONS: &[(&str, &str)] = &[(
    "stacks, journal, checkpoint history, updates, tags, lock holders",
    "CREATE TABLE cairn_stacks (
        id bigserial PRIMARY KEY,
        project text NOT NULL,
        name text NOT NULL,
        checkpoint bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        removed_at timestamptz
    );
    CREATE UNIQUE INDEX cairn_stacks_live_name ON cairn_stacks (project, name)
        WHERE removed_at IS NULL;
    CREATE TABLE cairn_journal (
        stack_id bigint NOT NULL REFERENCES cairn_stacks (id),
        seq bigserial NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (stack_id, seq)
    );
    CREATE TABLE cairn_checkpoint_history (
        id bigserial PRIMARY KEY,
        stack_id bigint NOT NULL REFERENCES cairn_stacks (id),
        checkpoint bytea NOT NULL,
        archived_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX cairn_checkpoint_history_stack ON cairn_checkpoint_history (stack_id, id);
    CREATE TABLE cairn_updates (
        stack_id bigint NOT NULL REFERENCES cairn_stacks (id),
        version bigint NOT NULL,
        record text NOT NULL,
        PRIMARY KEY (stack_id, version)
    );
    CREATE TABLE cairn_stack_tags (
        stack_id bigint NOT NULL REFERENCES cairn_stacks (id),
        name text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (stack_id, name)
    );
    CREATE TABLE cairn_locks (
        lock_key bigint PRIMARY KEY,
        project text NOT NULL,
        stack text NOT NULL,
        holder text NOT NULL,
        backend_pid integer NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now()
    );",
)];

/// The advisory-lock key serializing migrations between processes.
const MIGRATION_LOCK_KEY: i64 = 0x6361_6972_6e5f_6d67; // "cairn_mg"

/// One connection, on a thread of its own.
struct Session {
    jobs: Mutex<mpsc::Sender<Job>>,
    target: Arc<PgTarget>,
}

type Job = Box<dyn FnOnce(&mut Client) + Send>;

impl Session {
    /// Connects (on the session's thread); the error says which server refused and why.
    fn connect(target: &Arc<PgTarget>) -> Result<Session> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, connected) = mpsc::channel();
        let config = target.config.clone();
        let tls = target.tls.client_config()?;
        std::thread::Builder::new()
            .name("cairn-postgres".into())
            .spawn(move || {
                let connected = match tls {
                    Some(tls) => config.connect(MakeRustlsConnect::new(tls)),
                    None => config.connect(NoTls),
                };
                let mut client = match connected {
                    Ok(client) => {
                        let _ = ready.send(Ok(()));
                        client
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                while let Ok(job) = queue.recv() {
                    job(&mut client);
                }
            })
            .map_err(|e| BackendError::io("starting the PostgreSQL connection thread", e))?;
        match connected.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(connect_error(target, &e)),
            Err(_) => return Err(BackendError::ConnectionThread),
        }
        Ok(Session {
            jobs: Mutex::new(jobs),
            target: target.clone(),
        })
    }

    /// Runs `work` on the connection and waits for its result. `what` names the work for the
    /// error.
    fn run<R: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |client| {
            let _ = reply.send(work(client));
        });
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job);
        let outcome = match sent {
            Ok(()) => answer.recv().ok(),
            Err(_) => None,
        };
        match outcome {
            Some(Ok(value)) => Ok(value),
            Some(Err(e)) => Err(query_error(&self.target, what, &e)),
            None => Err(BackendError::ConnectionGone {
                what: what.to_owned(),
                backend: self.target.display.clone(),
            }),
        }
    }
}

/// A connection failure, said plainly: which server, and what to check.
fn connect_error(target: &PgTarget, e: &postgres::Error) -> BackendError {
    let text = describe(e);
    let hint = match e.as_db_error().map(|d| d.code().code()) {
        Some("28P01") => {
            " (check the password: the URL's, PGPASSWORD, or the password file ~/.pgpass)"
        }
        Some("28000") => {
            " (the server's pg_hba.conf refuses this connection: check the user, the database, \
             and whether the server requires TLS, sslmode=require)"
        }
        Some("3D000") => " (create the database first, or name another in the URL)",
        _ if text.contains("certificate") || text.contains("TLS") || text.contains("SSL") => {
            " (the TLS connection failed: with sslmode=verify-ca or verify-full, sslrootcert \
             must name the CA that signed the server's certificate, and verify-full also \
             checks that it names the host)"
        }
        _ if e.to_string().contains("timeout") || e.to_string().contains("timed out") => {
            " (the server did not answer in time: check the host and port, and that it is \
             reachable; PGCONNECT_TIMEOUT sets how long to wait)"
        }
        _ => " (check that the server runs and that the host and port are right)",
    };
    BackendError::Connect {
        backend: target.display.clone(),
        reason: text,
        hint,
    }
}

/// A failed query: lost connections are said as such.
fn query_error(target: &PgTarget, what: &str, e: &postgres::Error) -> BackendError {
    let (what, backend, reason) = (what.to_owned(), target.display.clone(), describe(e));
    if e.is_closed()
        || e.as_db_error()
            .is_some_and(|d| d.code().code().starts_with("57P"))
    {
        BackendError::ConnectionLost {
            what,
            backend,
            reason,
        }
    } else {
        BackendError::Query {
            what,
            backend,
            reason,
        }
    }
}

/// The driver's error with the server's message, if it sent one (the top-level text is often
/// just "db error"), else with its causes.
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A stack store in a PostgreSQL database.
pub struct PgStore {
    target: Arc<PgTarget>,
    history_limit: usize,
    /// The connection for reads, made (and the schema migrated) on first use.
    reader: OnceLock<Session>,
    connecting: Mutex<()>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target.display)
            .finish()
    }
}

impl PgStore {
    /// Resolves the URL; nothing connects until the store is used.
    pub fn open(url: &str, history_limit: usize) -> Result<PgStore> {
        Ok(PgStore {
            target: Arc::new(pgconfig::resolve(url, &pgconfig::ProcessEnv)?),
            history_limit,
            reader: OnceLock::new(),
            connecting: Mutex::new(()),
        })
    }

    /// A new connection, with the schema migrated.
    fn session(&self) -> Result<Session> {
        let session = Session::connect(&self.target)?;
        migrate(&session)?;
        Ok(session)
    }

    fn reader(&self) -> Result<&Session> {
        if let Some(session) = self.reader.get() {
            return Ok(session);
        }
        let _connecting = self
            .connecting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = self.reader.get() {
            return Ok(session);
        }
        let session = self.session()?;
        Ok(self.reader.get_or_init(|| session))
    }

    fn place(&self, project: &str, stack: &str) -> String {
        format!("stack {project}/{stack} in {}", self.target.display)
    }
}

/// Applies the migrations the database lacks, one transaction, serialized between processes.
fn migrate(session: &Session) -> Result<()> {
    let known = MIGRATIONS.len() as i64;
    let applied = session.run("reading the schema version", |client| {
        let exists: bool = client
            .query_one(
                "SELECT to_regclass('cairn_schema_migrations') IS NOT NULL",
                &[],
            )?
            .try_get(0)?;
        if !exists {
            return Ok(0);
        }
        client
            .query_one(
                "SELECT coalesce(max(version), 0)::bigint FROM cairn_schema_migrations",
                &[],
            )
            .and_then(|row| row.try_get::<_, i64>(0))
    })?;
    if applied > known {
        return Err(BackendError::SchemaTooNew {
            backend: session.target.display.clone(),
            found: applied,
            known,
        });
    }
    if applied == known {
        return Ok(());
    }
    session.run("migrating the Cairn schema", move |client| {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK_KEY])?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS cairn_schema_migrations (
                version bigint PRIMARY KEY,
                description text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )?;
        let applied: i64 = tx
            .query_one(
                "SELECT coalesce(max(version), 0)::bigint FROM cairn_schema_migrations",
                &[],
            )?
            .try_get(0)?;
        for (index, (description, sql)) in MIGRATIONS.iter().enumerate() {
            let version = index as i64 + 1;
            if version <= applied {
                continue;
            }
            tx.batch_execute(sql)?;
            tx.execute(
                "INSERT INTO cairn_schema_migrations (version, description) VALUES ($1, $2)",
                &[&version, description],
            )?;
        }
        tx.commit()
    })
}

/// The advisory-lock key of a stack: the first 8 bytes of a SHA-256 of its names.
fn lock_key(project: &str, stack: &str) -> i64 {
    let digest = Sha256::digest(format!("cairn stack lock\0{project}\0{stack}").as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

const LIVE_STACK: &str =
    "SELECT id FROM cairn_stacks WHERE project = $1 AND name = $2 AND removed_at IS NULL";

impl Store for PgStore {
    fn url(&self) -> String {
        self.target.display.clone()
    }

    fn user(&self) -> Result<String> {
        self.reader()?;
        Ok(self.target.user.clone())
    }

    fn checkpoint_location(&self, project: &str, stack: &str) -> String {
        format!("checkpoint of {}", self.place(project, stack))
    }

    fn journal_location(&self, project: &str, stack: &str) -> String {
        format!(
            "journal of {} (table cairn_journal)",
            self.place(project, stack)
        )
    }

    fn project_names(&self) -> Result<Vec<String>> {
        let names: Vec<String> = self.reader()?.run("listing projects", |client| {
            let rows = client.query(
                "SELECT DISTINCT project FROM cairn_stacks WHERE removed_at IS NULL",
                &[],
            )?;
            rows.iter().map(|r| r.try_get::<_, String>(0)).collect()
        })?;
        Ok(names
            .into_iter()
            .filter(|name| {
                let ok = names::is_project_name(name);
                if !ok {
                    tracing::warn!(
                        "ignoring the rows of project {}: not a project name ({})",
                        quoted(name),
                        names::PROJECT_NAME_RULE
                    );
                }
                ok
            })
            .collect())
    }

    fn stack_names(&self, project: &str) -> Result<Vec<String>> {
        let project = project.to_owned();
        self.reader()?
            .run("listing stacks", move |client| {
                let rows = client.query(
                    "SELECT name FROM cairn_stacks WHERE project = $1 AND removed_at IS NULL",
                    &[&project],
                )?;
                rows.iter().map(|r| r.try_get::<_, String>(0)).collect()
            })
            .map(|names: Vec<String>| {
                names
                    .into_iter()
                    .filter(|name| {
                        let ok = names::is_stack_name(name);
                        if !ok {
                            tracing::warn!(
                                "ignoring the row of stack {}: not a stack name ({})",
                                quoted(name),
                                names::STACK_NAME_RULE
                            );
                        }
                        ok
                    })
                    .collect()
            })
    }

    fn read_checkpoint(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        let (p, s) = (project.to_owned(), stack.to_owned());
        self.reader()?
            .run(&format!("reading {}", self.place(project, stack)), move |c| {
                let row = c.query_opt(
                    "SELECT checkpoint FROM cairn_stacks WHERE project = $1 AND name = $2 AND removed_at IS NULL",
                    &[&p, &s],
                )?;
                row.map(|r| r.try_get::<_, Vec<u8>>(0)).transpose()
            })
    }

    fn read_journal(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        let (p, s) = (project.to_owned(), stack.to_owned());
        let what = format!("reading the journal of {}", self.place(project, stack));
        self.reader()?.run(&what, move |c| {
            let rows = c.query(
                &format!(
                    "SELECT data FROM cairn_journal WHERE stack_id = ({LIVE_STACK}) ORDER BY seq"
                ),
                &[&p, &s],
            )?;
            let mut bytes = Vec::new();
            for row in rows {
                bytes.extend_from_slice(row.try_get::<_, &[u8]>(0)?);
            }
            Ok((!bytes.is_empty()).then_some(bytes))
        })
    }

    fn lock(
        &self,
        project: &str,
        stack: &str,
        holder: &LockHolder,
    ) -> Result<Box<dyn StackWriter>> {
        let session = Arc::new(self.session()?);
        let key = lock_key(project, stack);
        let holder_json = serde_json::to_string(holder)?;
        let (p, s) = (project.to_owned(), stack.to_owned());
        let hook_path = std::path::PathBuf::from(self.place(project, stack));
        crate::test_hook::pause("opened", &hook_path);
        let taken = session.run(
            &format!("locking {}", self.place(project, stack)),
            move |c| {
                // The server drops this session (and so the lock) within about half a minute
                // of its client vanishing without closing the connection.
                c.batch_execute(
                    "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; \
                 SET tcp_keepalives_count = 3",
                )?;
                let taken: bool = c
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&key])?
                    .try_get(0)?;
                if taken {
                    c.execute(
                        "INSERT INTO cairn_locks (lock_key, project, stack, holder, backend_pid)
                     VALUES ($1, $2, $3, $4, pg_backend_pid())
                     ON CONFLICT (lock_key) DO UPDATE SET project = $2, stack = $3,
                         holder = $4, backend_pid = pg_backend_pid(), acquired_at = now()",
                        &[&key, &p, &s, &holder_json],
                    )?;
                }
                Ok(taken)
            },
        )?;
        if !taken {
            return Err(self.held_by_another(project, stack, key));
        }
        crate::test_hook::pause("held", &hook_path);
        Ok(Box::new(PgWriter {
            session,
            project: project.to_owned(),
            stack: stack.to_owned(),
            key,
            history_limit: self.history_limit,
            place: self.place(project, stack),
        }))
    }

    fn updates(&self, project: &str, stack: &str) -> Result<Vec<UpdateRecord>> {
        let (p, s) = (project.to_owned(), stack.to_owned());
        let what = format!("reading the history of {}", self.place(project, stack));
        let records: Vec<String> = self.reader()?.run(&what, move |c| {
            let rows = c.query(
                &format!(
                    "SELECT record FROM cairn_updates WHERE stack_id = ({LIVE_STACK}) ORDER BY version"
                ),
                &[&p, &s],
            )?;
            rows.iter().map(|r| r.try_get::<_, String>(0)).collect()
        })?;
        records
            .iter()
            .map(|r| {
                serde_json::from_str(r).map_err(|source| BackendError::Malformed {
                    what: format!("{what}: a malformed row"),
                    source,
                })
            })
            .collect()
    }

    fn tags(&self, project: &str, stack: &str) -> Result<BTreeMap<String, String>> {
        let (p, s) = (project.to_owned(), stack.to_owned());
        let what = format!("reading the tags of {}", self.place(project, stack));
        self.reader()?.run(&what, move |c| {
            let rows = c.query(
                &format!(
                    "SELECT name, value FROM cairn_stack_tags WHERE stack_id = ({LIVE_STACK})"
                ),
                &[&p, &s],
            )?;
            rows.iter()
                .map(|r| Ok((r.try_get::<_, String>(0)?, r.try_get::<_, String>(1)?)))
                .collect()
        })
    }

    fn set_tag(&self, project: &str, stack: &str, name: &str, value: Option<&str>) -> Result<()> {
        let (p, s, n) = (project.to_owned(), stack.to_owned(), name.to_owned());
        let value = value.map(str::to_owned);
        let what = format!("tagging {}", self.place(project, stack));
        self.reader()?.run(&what, move |c| {
            match value {
                Some(value) => c.execute(
                    &format!(
                        "INSERT INTO cairn_stack_tags (stack_id, name, value) VALUES (({LIVE_STACK}), $3, $4)
                         ON CONFLICT (stack_id, name) DO UPDATE SET value = $4"
                    ),
                    &[&p, &s, &n, &value],
                )?,
                None => c.execute(
                    &format!(
                        "DELETE FROM cairn_stack_tags WHERE stack_id = ({LIVE_STACK}) AND name = $3"
                    ),
                    &[&p, &s, &n],
                )?,
            };
            Ok(())
        })
    }
}

impl PgStore {
    /// The error a second writer gets, naming the holder from `cairn_locks`.
    fn held_by_another(&self, project: &str, stack: &str, key: i64) -> BackendError {
        let place = self.place(project, stack);
        let found = self.reader().and_then(|reader| {
            reader.run("reading the lock holder", move |c| {
                let row = c.query_opt(
                    "SELECT holder, backend_pid FROM cairn_locks WHERE lock_key = $1",
                    &[&key],
                )?;
                row.map(|r| Ok((r.try_get::<_, String>(0)?, r.try_get::<_, i32>(1)?)))
                    .transpose()
            })
        });
        let unnamed = || BackendError::Locked {
            stack: stack.to_owned(),
            holder: None,
            message: format!("{place} is locked by another session; wait for it to finish"),
        };
        match found {
            Ok(Some((holder, backend_pid))) => match serde_json::from_str::<LockHolder>(&holder) {
                Ok(holder) => holder.refusal(
                    stack,
                    &format!("PostgreSQL session {backend_pid}, {}", self.target.display),
                ),
                Err(_) => unnamed(),
            },
            _ => unnamed(),
        }
    }
}

/// The writes of one stack whose advisory lock `session` holds.
struct PgWriter {
    session: Arc<Session>,
    project: String,
    stack: String,
    key: i64,
    history_limit: usize,
    place: String,
}

impl std::fmt::Debug for PgWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgWriter")
            .field("place", &self.place)
            .finish()
    }
}

impl Drop for PgWriter {
    fn drop(&mut self) {
        let key = self.key;
        // Best effort: closing the session releases the lock anyway.
        let _ = self.session.run("unlocking", move |c| {
            c.execute(
                "DELETE FROM cairn_locks WHERE lock_key = $1 AND backend_pid = pg_backend_pid()",
                &[&key],
            )?;
            c.execute("SELECT pg_advisory_unlock($1)", &[&key])?;
            Ok(())
        });
    }
}

/// Replaces a stack's checkpoint in one transaction: the previous one into the history
/// (trimmed to `limit`), the new one in, the journal emptied. Creates the stack if need be.
fn write_checkpoint(
    client: &mut Client,
    project: &str,
    stack: &str,
    bytes: &[u8],
    limit: i64,
) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    write_checkpoint_in(&mut tx, project, stack, bytes, limit)?;
    tx.commit()
}

/// [`write_checkpoint`]'s work, inside a transaction of the caller's.
fn write_checkpoint_in(
    tx: &mut postgres::Transaction<'_>,
    project: &str,
    stack: &str,
    bytes: &[u8],
    limit: i64,
) -> Result<(), postgres::Error> {
    let row = tx.query_opt(
        "SELECT id, checkpoint FROM cairn_stacks
         WHERE project = $1 AND name = $2 AND removed_at IS NULL FOR UPDATE",
        &[&project, &stack],
    )?;
    match row {
        None => {
            tx.execute(
                "INSERT INTO cairn_stacks (project, name, checkpoint) VALUES ($1, $2, $3)",
                &[&project, &stack, &bytes],
            )?;
        }
        Some(row) => {
            let id: i64 = row.try_get(0)?;
            let previous: &[u8] = row.try_get(1)?;
            if previous != bytes {
                if limit > 0 {
                    tx.execute(
                        "INSERT INTO cairn_checkpoint_history (stack_id, checkpoint)
                         SELECT id, checkpoint FROM cairn_stacks WHERE id = $1",
                        &[&id],
                    )?;
                    tx.execute(
                        "DELETE FROM cairn_checkpoint_history WHERE stack_id = $1 AND id NOT IN
                         (SELECT id FROM cairn_checkpoint_history WHERE stack_id = $1
                          ORDER BY id DESC LIMIT $2)",
                        &[&id, &limit],
                    )?;
                }
                tx.execute(
                    "UPDATE cairn_stacks SET checkpoint = $2, updated_at = now() WHERE id = $1",
                    &[&id, &bytes],
                )?;
            }
            tx.execute("DELETE FROM cairn_journal WHERE stack_id = $1", &[&id])?;
        }
    }
    Ok(())
}

impl PgWriter {
    fn limit(&self) -> i64 {
        i64::try_from(self.history_limit).unwrap_or(i64::MAX)
    }

    fn names(&self) -> (String, String) {
        (self.project.clone(), self.stack.clone())
    }
}

impl StackWriter for PgWriter {
    fn write_checkpoint(&self, bytes: &[u8]) -> Result<()> {
        let (p, s) = self.names();
        let (bytes, limit) = (bytes.to_vec(), self.limit());
        self.session
            .run(&format!("saving {}", self.place), move |c| {
                write_checkpoint(c, &p, &s, &bytes, limit)
            })
    }

    fn write_checkpoint_with(
        &self,
        bytes: &[u8],
        other_stack: &str,
        other_bytes: &[u8],
    ) -> Result<()> {
        let (p, s) = self.names();
        let (bytes, other, other_bytes) =
            (bytes.to_vec(), other_stack.to_owned(), other_bytes.to_vec());
        let limit = self.limit();
        // The other stack's lock is held (by this process) on another session; writing its row
        // from this one makes the two saves one transaction.
        self.session.run(
            &format!("saving {} with stack {p}/{other_stack}", self.place),
            move |c| {
                let mut tx = c.transaction()?;
                write_checkpoint_in(&mut tx, &p, &other, &other_bytes, limit)?;
                write_checkpoint_in(&mut tx, &p, &s, &bytes, limit)?;
                tx.commit()
            },
        )
    }

    fn drop_journal(&self) -> Result<()> {
        let (p, s) = self.names();
        self.session.run(
            &format!("emptying the journal of {}", self.place),
            move |c| {
                c.execute(
                    &format!("DELETE FROM cairn_journal WHERE stack_id = ({LIVE_STACK})"),
                    &[&p, &s],
                )?;
                Ok(())
            },
        )
    }

    fn open_journal(&self) -> Result<Arc<dyn Persister>> {
        let (p, s) = self.names();
        let stack_id: Option<i64> = self.session.run(
            &format!("opening the journal of {}", self.place),
            move |c| {
                c.query_opt(LIVE_STACK, &[&p, &s])?
                    .map(|r| r.try_get(0))
                    .transpose()
            },
        )?;
        let stack_id = stack_id.ok_or_else(|| BackendError::Vanished {
            place: self.place.clone(),
        })?;
        Ok(Arc::new(PgJournal {
            insert: Arc::new(Mutex::new(None)),
            appending: format!("appending to the journal of {}", self.place),
            session: self.session.clone(),
            project: self.project.clone(),
            stack: self.stack.clone(),
            stack_id,
            limit: self.limit(),
            place: self.place.clone(),
        }))
    }

    fn remove(&self) -> Result<()> {
        let (p, s) = self.names();
        self.session
            .run(&format!("removing {}", self.place), move |c| {
                let mut tx = c.transaction()?;
                if let Some(row) = tx.query_opt(&format!("{LIVE_STACK} FOR UPDATE"), &[&p, &s])? {
                    let id: i64 = row.try_get(0)?;
                    tx.execute(
                        "INSERT INTO cairn_checkpoint_history (stack_id, checkpoint)
                     SELECT id, checkpoint FROM cairn_stacks WHERE id = $1",
                        &[&id],
                    )?;
                    tx.execute("DELETE FROM cairn_journal WHERE stack_id = $1", &[&id])?;
                    tx.execute("DELETE FROM cairn_stack_tags WHERE stack_id = $1", &[&id])?;
                    tx.execute(
                        "UPDATE cairn_stacks SET removed_at = now() WHERE id = $1",
                        &[&id],
                    )?;
                }
                tx.commit()
            })
    }

    fn record_update(&self, record: &UpdateRecord) -> Result<()> {
        let (p, s) = self.names();
        let version = i64::try_from(record.version).unwrap_or(i64::MAX);
        let json = serde_json::to_string(record)?;
        self.session.run(
            &format!("recording an update of {}", self.place),
            move |c| {
                c.execute(
                    &format!(
                        "INSERT INTO cairn_updates (stack_id, version, record) VALUES (({LIVE_STACK}), $3, $4)"
                    ),
                    &[&p, &s, &version, &json],
                )?;
                Ok(())
            },
        )
    }

    fn rename(&self, new_stack: &str, checkpoint: &[u8]) -> Result<()> {
        let (p, s) = self.names();
        let (new, bytes) = (new_stack.to_owned(), checkpoint.to_vec());
        self.session.run(&format!("renaming {}", self.place), move |c| {
            let mut tx = c.transaction()?;
            let id: i64 = tx
                .query_one(&format!("{LIVE_STACK} FOR UPDATE"), &[&p, &s])?
                .try_get(0)?;
            tx.execute(
                "INSERT INTO cairn_checkpoint_history (stack_id, checkpoint)
                 SELECT id, checkpoint FROM cairn_stacks WHERE id = $1",
                &[&id],
            )?;
            tx.execute(
                "UPDATE cairn_stacks SET name = $2, checkpoint = $3, updated_at = now() WHERE id = $1",
                &[&id, &new, &bytes],
            )?;
            tx.execute("DELETE FROM cairn_journal WHERE stack_id = $1", &[&id])?;
            tx.commit()
        })
    }
}

/// The journal of a deployment: one row per append, committed before `append` returns.
struct PgJournal {
    /// The INSERT, prepared on the first append: each later one is a single round trip.
    insert: Arc<Mutex<Option<postgres::Statement>>>,
    /// What an append is, for its error (made once: appends are the hot path).
    appending: String,
    session: Arc<Session>,
    project: String,
    stack: String,
    stack_id: i64,
    limit: i64,
    place: String,
}

impl Persister for PgJournal {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        let (id, data, insert) = (self.stack_id, lines.to_vec(), self.insert.clone());
        let _writing = crate::writes::section();
        self.session
            .run(&self.appending, move |c| {
                let mut prepared = insert.lock().unwrap_or_else(PoisonError::into_inner);
                let statement = match prepared.as_ref() {
                    Some(statement) => statement.clone(),
                    None => prepared
                        .insert(c.prepare(
                            "INSERT INTO cairn_journal (stack_id, data) VALUES ($1, $2)",
                        )?)
                        .clone(),
                };
                c.execute(&statement, &[&id, &data])?;
                Ok(())
            })
            .map_err(|e| PersistError::new(error_chain(&e)))
    }

    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        let bytes = checkpoint_bytes_of_json(&self.project, &self.stack, deployment)
            .map_err(|e| PersistError::new(error_chain(&e)))?;
        let (p, s, limit) = (self.project.clone(), self.stack.clone(), self.limit);
        let _writing = crate::writes::section();
        self.session
            .run(&format!("saving {}", self.place), move |c| {
                write_checkpoint(c, &p, &s, &bytes, limit)
            })
            .map_err(|e| PersistError::new(error_chain(&e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_differ_per_stack_and_are_stable() {
        assert_eq!(lock_key("p", "dev"), lock_key("p", "dev"));
        assert_ne!(lock_key("p", "dev"), lock_key("p", "prod"));
        assert_ne!(lock_key("pa", "b"), lock_key("p", "ab"));
    }
}
