//! State backends: where stacks, their checkpoints, journals, history and tags are kept.
//!
//! [`Backend`] is what commands use. It owns everything the kinds of storage share: reading a
//! checkpoint and replaying the journal of an interrupted deployment onto it, the integrity
//! check, recovery under the stack's lock, the pending-operation warning. A [`Store`] is one
//! kind of storage: a local directory ([`file`], `file://`) or a PostgreSQL database
//! ([`postgres`], `postgres://`). Writing needs the stack's lock: [`Store::lock`] hands out a
//! [`StackWriter`], the only way to write a stack, so nothing can write without holding it.
//!
//! A library: it never prints. Failures are [`BackendError`]s (their messages are what people
//! see); what is worth telling but not a failure (an interrupted deployment's pending
//! operations) is a [`Warning`], handed to the function given to [`Backend::with_warnings`]
//! as it is found. Stack and project names are checked by [`names`].

mod error;
pub mod file;
pub mod names;
pub mod pgconfig;
pub mod pgtls;
pub mod postgres;
pub mod steplog;
pub mod writes;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use cairn_engine::deploy::journal::{self, JournalError, Persister};
use cairn_engine::secrets::Crypter;
use cairn_engine::state::integrity::verify_resources;
use cairn_engine::state::{
    DEPLOYMENT_VERSION, DeploymentSummary, DeploymentV3, JsonMap, Operation, Resource,
    SecretsProvider, Snapshot, StateError, VersionedCheckpoint, decode_checkpoint_json,
    decode_deployment, sort_dependencies_first, summarize_checkpoint_json,
};
use cairn_engine::text::visible_lines;
use serde::{Deserialize, Serialize};

pub use error::{BackendError, ReplayError, Result};
pub use file::release_held_locks;
pub use steplog::{StepLog, StepRecord};

/// The organization name stacks are qualified with, as Pulumi's DIY backends do.
pub const ORGANIZATION: &str = "organization";

/// How many previous checkpoints of a stack are kept, unless `CAIRN_STATE_HISTORY` says otherwise.
const DEFAULT_HISTORY_LIMIT: usize = 50;

/// One kind of state storage. Reads need no lock; writes go through the [`StackWriter`] that
/// [`Store::lock`] returns. Stack and project names reach a store already checked.
pub trait Store: Send + Sync + fmt::Debug {
    /// The backend's URL as shown to people: never with a password.
    fn url(&self) -> String;
    /// Who this backend knows the user as (`cairn whoami`).
    fn user(&self) -> Result<String>;
    /// Where a stack's checkpoint lives, for messages.
    fn checkpoint_location(&self, project: &str, stack: &str) -> String;
    /// Where a stack's journal lives, for messages.
    fn journal_location(&self, project: &str, stack: &str) -> String;
    /// The names of the projects that have stacks here, unsorted; entries that are not
    /// project names are skipped with a warning.
    fn project_names(&self) -> Result<Vec<String>>;
    /// The names of the project's stacks, unsorted; entries that are not stack names are
    /// skipped with a warning.
    fn stack_names(&self, project: &str) -> Result<Vec<String>>;
    /// The stack's stored checkpoint bytes, or `None` if there is no such stack.
    fn read_checkpoint(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>>;
    /// The journal's bytes (lines in order), or `None` if it is absent or empty.
    fn read_journal(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>>;
    /// Takes the stack's write lock for `holder`, refusing (naming the holder) if another
    /// process holds it.
    fn lock(&self, project: &str, stack: &str, holder: &LockHolder)
    -> Result<Box<dyn StackWriter>>;
    /// The stack's recorded updates, oldest first.
    fn updates(&self, project: &str, stack: &str) -> Result<Vec<UpdateRecord>>;
    /// The stack's tags.
    fn tags(&self, project: &str, stack: &str) -> Result<BTreeMap<String, String>>;
    /// Sets (`Some`) or removes (`None`) one tag. Tags are not state: this needs no lock, so a
    /// stack can be tagged while it deploys.
    fn set_tag(&self, project: &str, stack: &str, name: &str, value: Option<&str>) -> Result<()>;
}

/// The writes of one locked stack. Dropping it releases the lock.
pub trait StackWriter: Send + Sync + fmt::Debug {
    /// Replaces the checkpoint (keeping the previous one in the history) and empties the
    /// journal, atomically as far as the storage allows.
    fn write_checkpoint(&self, bytes: &[u8]) -> Result<()>;
    /// Writes this stack's checkpoint and another stack's of the same project (whose lock the
    /// caller also holds) as one change where the storage allows it (PostgreSQL: one
    /// transaction); else the other's first.
    fn write_checkpoint_with(
        &self,
        bytes: &[u8],
        other_stack: &str,
        other_bytes: &[u8],
    ) -> Result<()>;
    /// Empties the journal (it was found already contained in the checkpoint).
    fn drop_journal(&self) -> Result<()>;
    /// The journal of a deployment; its `save` writes the checkpoint and empties it.
    fn open_journal(&self) -> Result<Arc<dyn Persister>>;
    /// Deletes the stack's checkpoint, journal and tags (its history stays, as a backup).
    fn remove(&self) -> Result<()>;
    /// Appends one update to the stack's history.
    fn record_update(&self, record: &UpdateRecord) -> Result<()>;
    /// Moves the stack to `new_stack` (whose lock the caller also holds) with `checkpoint` as
    /// its checkpoint, carrying its history and tags.
    fn rename(&self, new_stack: &str, checkpoint: &[u8]) -> Result<()>;
}

/// A test-only hook: `CAIRN_TEST_LOCK_PAUSE=<point>:<file>` makes a process that reaches
/// `<point>` of taking a stack lock (`opened`: the lock file is open or the database session
/// connected, not yet locked; `held`: the lock is taken) write `<file>.reached` and wait until `<file>` exists (at most a minute),
/// so tests can stop a process exactly where races happen. Unset, it costs one variable lookup.
pub(crate) mod test_hook {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    pub fn pause(point: &str, lock: &Path) {
        let Ok(setting) = std::env::var("CAIRN_TEST_LOCK_PAUSE") else {
            return;
        };
        let Some((at, file)) = setting.split_once(':') else {
            return;
        };
        if at != point {
            return;
        }
        let release = PathBuf::from(file);
        let reached = PathBuf::from(format!("{file}.reached"));
        let _ = std::fs::write(
            &reached,
            format!("{} {}", std::process::id(), lock.display()),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        while !release.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Who holds a stack lock; stored with the lock for the error a second writer sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockHolder {
    pub pid: u32,
    pub host: String,
    pub user: String,
    pub command: String,
    pub time: String,
}

impl LockHolder {
    /// This process, running `command`.
    fn me(command: &str) -> LockHolder {
        LockHolder {
            pid: std::process::id(),
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            user: os_user(),
            command: command.to_owned(),
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }

    /// The refusal a second writer gets.
    fn refusal(self, stack: &str, place: &str) -> BackendError {
        let message = format!(
            "stack {stack:?} is locked by `{}` (pid {} on {}, user {}, since {}; {place}); \
             wait for it to finish",
            visible_lines(&self.command),
            self.pid,
            visible_lines(&self.host),
            visible_lines(&self.user),
            visible_lines(&self.time),
        );
        BackendError::Locked {
            stack: stack.to_owned(),
            holder: Some(Box::new(self)),
            message,
        }
    }
}

/// The operating-system user name (`USER`, else `unknown`).
pub fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// One update in a stack's history (`cairn stack history`): Pulumi's `UpdateInfo`, as its DIY
/// backends store it (`<stack>-<nanos>.history.json`), so either reads the other's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRecord {
    /// `update`, `refresh`, `destroy` or `import`.
    pub kind: String,
    /// Unix seconds.
    pub start_time: i64,
    /// `-m/--message`.
    #[serde(default)]
    pub message: String,
    /// Where it ran: `exec.kind`, `cairn.version`, `user`, `host`.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// The stack's configuration as the update ran with it, as Pulumi's DIY backends record
    /// it: `project:key` → a string, an object, or `{"secure": "<ciphertext>"}`.
    #[serde(default)]
    pub config: JsonMap,
    /// `succeeded` or `failed`.
    pub result: String,
    /// Unix seconds.
    pub end_time: i64,
    /// 1 for the stack's first update, then one more each time (0 in Pulumi's records, which
    /// are numbered by their order when read).
    #[serde(default)]
    pub version: u64,
    /// Changing steps per kind (`create`, `update`, `delete`, `replace`, `same`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_changes: BTreeMap<String, u64>,
    /// The steps that changed something or failed, with their times and property diffs
    /// (Cairn's addition; Pulumi's readers ignore it). At most [`steplog::MAX_STEPS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepRecord>,
    /// Steps left out of `steps` by its limit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steps_omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `stack ls` shows about a stack.
#[derive(Debug, Clone)]
pub struct StackSummary {
    pub name: String,
    pub last_update: Option<String>,
    pub resource_count: usize,
}

/// Something to tell the user that is not a failure, found while reading a stack. Reported
/// each time it is found: the receiver decides whether to repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The last deployment of the stack was interrupted with operations pending; `message`
    /// ([`pending_warning`]) lists them and says what to do.
    PendingOperations {
        project: String,
        stack: String,
        message: String,
    },
}

impl Warning {
    /// The project and stack the warning is about.
    pub fn stack(&self) -> (&str, &str) {
        match self {
            Warning::PendingOperations { project, stack, .. } => (project, stack),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::PendingOperations { message, .. } => f.write_str(message),
        }
    }
}

/// A function [`Warning`]s are handed to.
type WarningSink = Arc<dyn Fn(&Warning) + Send + Sync>;

/// Where a backend's [`Warning`]s go (nowhere, unless [`Backend::with_warnings`] says).
#[derive(Clone, Default)]
struct Warnings(Option<WarningSink>);

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Warnings(..)"
        } else {
            "Warnings(none)"
        })
    }
}

/// A stack store chosen by URL, with the logic every store shares.
#[derive(Debug, Clone)]
pub struct Backend {
    store: Arc<dyn Store>,
    warnings: Warnings,
}

/// The write lock of one stack, held until dropped. Only its holder can write the stack.
#[derive(Debug)]
pub struct StackLock {
    project: String,
    stack: String,
    writer: Box<dyn StackWriter>,
}

impl StackLock {
    /// Guards against writing one stack while holding another's lock.
    fn writer(&self, project: &str, stack: &str) -> Result<&dyn StackWriter> {
        if self.project != project || self.stack != stack {
            return Err(BackendError::Internal(format!(
                "writing stack {project}/{stack} under the lock of {}/{}",
                self.project, self.stack
            )));
        }
        Ok(self.writer.as_ref())
    }
}

impl Backend {
    /// Opens the backend a URL names: `file://DIR` or `postgres://…` (also `postgresql://`).
    /// Relative directories are relative to `cwd`. Its [`Warning`]s go nowhere until
    /// [`Backend::with_warnings`] says where.
    pub fn from_url(url: &str, cwd: &Path) -> Result<Backend> {
        let history_limit = match std::env::var("CAIRN_STATE_HISTORY") {
            Ok(value) => match value.parse() {
                Ok(limit) => limit,
                Err(source) => return Err(BackendError::HistoryLimit { value, source }),
            },
            Err(_) => DEFAULT_HISTORY_LIMIT,
        };
        let store: Arc<dyn Store> = if url.starts_with("file://") {
            Arc::new(file::FileStore::from_url(url, cwd, history_limit)?)
        } else if pgconfig::is_postgres_url(url) {
            Arc::new(postgres::PgStore::open(url, history_limit)?)
        } else {
            return Err(BackendError::UnsupportedUrl {
                url: pgconfig::redact(url),
            });
        };
        Ok(Backend {
            store,
            warnings: Warnings::default(),
        })
    }

    /// This backend with its [`Warning`]s handed to `warn` as they are found (while the call
    /// that found them runs, before it returns).
    pub fn with_warnings(mut self, warn: impl Fn(&Warning) + Send + Sync + 'static) -> Backend {
        self.warnings = Warnings(Some(Arc::new(warn)));
        self
    }

    /// Reports, if any operations are pending, that the stack's last deployment was
    /// interrupted.
    fn warn_pending<P>(&self, project: &str, stack: &str, pending: &[Operation<P>]) {
        if pending.is_empty() {
            return;
        }
        if let Some(warn) = &self.warnings.0 {
            warn(&Warning::PendingOperations {
                project: project.to_owned(),
                stack: stack.to_owned(),
                message: pending_warning(stack, pending),
            });
        }
    }

    /// The backend's URL, without any password.
    pub fn url(&self) -> String {
        self.store.url()
    }

    /// Who the backend knows the user as.
    pub fn user(&self) -> Result<String> {
        self.store.user()
    }

    /// Whether the stack exists (an invalid name names no stack).
    pub fn stack_exists(&self, project: &str, stack: &str) -> Result<bool> {
        if !names::is_stack_name(stack) || !names::is_project_name(project) {
            return Ok(false);
        }
        Ok(self.store.read_checkpoint(project, stack)?.is_some())
    }

    /// The projects that have stacks in this backend, sorted.
    pub fn project_names(&self) -> Result<Vec<String>> {
        let mut projects = self.store.project_names()?;
        projects.sort();
        projects.dedup();
        Ok(projects)
    }

    /// The journal of the stack's running (or interrupted) deployment, as stored: `None`
    /// when no deployment is under way. For following a deployment from outside it.
    pub fn read_journal(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        check_names(project, stack)?;
        self.store.read_journal(project, stack)
    }

    /// The project's stacks, sorted by name.
    pub fn list_stacks(&self, project: &str) -> Result<Vec<StackSummary>> {
        names::check_project_name(project, "for the backend")?;
        let mut stacks = Vec::new();
        for name in self.store.stack_names(project)? {
            let latest = match self.summary(project, &name) {
                Ok(latest) => latest,
                // Removed between the listing and the read.
                Err(_) if !self.stack_exists(project, &name)? => continue,
                Err(e) => return Err(e),
            };
            stacks.push(StackSummary {
                resource_count: latest.as_ref().map_or(0, |d| d.resources),
                last_update: latest.map(|d| d.time),
                name,
            });
        }
        stacks.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(stacks)
    }

    /// A stack's latest deployment as a listing shows it (`None` if it has none), including
    /// what an interrupted deployment's journal adds; its resources are counted, not built.
    /// Warns if operations are pending.
    fn summary(&self, project: &str, stack: &str) -> Result<Option<DeploymentSummary>> {
        if self.store.read_journal(project, stack)?.is_some() {
            return Ok(self
                .latest_as_stored(project, stack)?
                .map(|d| DeploymentSummary {
                    time: d.manifest.time,
                    resources: d.resources.len(),
                    pending_operations: d.pending_operations,
                }));
        }
        let summary = self.read_stored(project, stack, summarize_checkpoint_json)?;
        if let Some(summary) = &summary {
            self.warn_pending(project, stack, &summary.pending_operations);
        }
        Ok(summary)
    }

    /// Reads a stack's checkpoint text with `read`, naming the file in the errors (one reading
    /// for every command, whatever it takes from the file).
    fn read_stored<T>(
        &self,
        project: &str,
        stack: &str,
        read: impl FnOnce(&[u8]) -> Result<T, StateError>,
    ) -> Result<T> {
        self.read_stored_if_any(project, stack, read)?
            .ok_or_else(|| BackendError::NoSuchStack {
                stack: stack.to_owned(),
                location: Some(self.store.checkpoint_location(project, stack)),
            })
    }

    /// [`Backend::read_stored`], `None` when the stack has no checkpoint.
    fn read_stored_if_any<T>(
        &self,
        project: &str,
        stack: &str,
        read: impl FnOnce(&[u8]) -> Result<T, StateError>,
    ) -> Result<Option<T>> {
        check_names(project, stack)?;
        let Some(bytes) = self.store.read_checkpoint(project, stack)? else {
            return Ok(None);
        };
        let location = || self.store.checkpoint_location(project, stack);
        match read(&bytes) {
            Ok(read) => Ok(Some(read)),
            Err(StateError::UnsupportedVersion { found }) => {
                Err(BackendError::UnsupportedCheckpoint {
                    location: location(),
                    found,
                })
            }
            Err(StateError::Malformed(source)) => Err(BackendError::MalformedCheckpoint {
                location: location(),
                source,
            }),
            Err(source) => Err(BackendError::State {
                stack: stack.to_owned(),
                source: Box::new(source),
            }),
        }
    }

    /// Reads a stack's checkpoint as stored (without its journal).
    pub fn load(&self, project: &str, stack: &str) -> Result<VersionedCheckpoint> {
        self.read_stored(project, stack, |text| {
            let checkpoint: VersionedCheckpoint =
                serde_json::from_slice(text).map_err(StateError::Malformed)?;
            supported(checkpoint.version)?;
            Ok(checkpoint)
        })
    }

    /// The secrets provider a stack's stored checkpoint records (`None` for a stack without a
    /// checkpoint), read without decoding its resources (a 100,000-resource state is not parsed
    /// whole to find its salt).
    pub fn stored_secrets_provider(
        &self,
        project: &str,
        stack: &str,
    ) -> Result<Option<SecretsProvider>> {
        /// Only the path to `checkpoint.latest.secrets_providers`: the rest is skipped.
        #[derive(Deserialize)]
        struct File {
            version: u32,
            checkpoint: Checkpoint,
        }
        #[derive(Deserialize)]
        struct Checkpoint {
            #[serde(default)]
            latest: Option<Latest>,
        }
        #[derive(Deserialize)]
        struct Latest {
            #[serde(default)]
            secrets_providers: Option<SecretsProvider>,
        }
        let provider = self.read_stored_if_any(project, stack, |text| {
            let file: File = serde_json::from_slice(text).map_err(StateError::Malformed)?;
            supported(file.version)?;
            Ok(file.checkpoint.latest.and_then(|l| l.secrets_providers))
        })?;
        Ok(provider.flatten())
    }

    /// The stack's latest deployment, if it has one, including what the journal of an
    /// interrupted deployment adds (replayed in memory: nothing is written), refused unless it
    /// passes the integrity check. Warns if operations are pending.
    pub fn latest(&self, project: &str, stack: &str) -> Result<Option<DeploymentV3>> {
        let latest = self.latest_as_stored(project, stack)?;
        checked(stack, latest)
    }

    /// Like [`Backend::latest`], without the integrity check: for commands that show or
    /// fix a broken state (`stack export`, `state repair`, listings).
    pub fn latest_as_stored(&self, project: &str, stack: &str) -> Result<Option<DeploymentV3>> {
        let latest = self.load(project, stack)?.checkpoint.latest;
        let latest = match self.store.read_journal(project, stack)? {
            None => latest,
            Some(journal) => match self.replay_journal(project, stack, latest, &journal)? {
                Replayed::Recovered(deployment) => Some(deployment),
                Replayed::Stale(latest) => latest,
            },
        };
        if let Some(deployment) = &latest {
            self.warn_pending(project, stack, &deployment.pending_operations);
        }
        Ok(latest)
    }

    /// Makes the stack's checkpoint current: if a deployment was interrupted, replays its
    /// journal onto the checkpoint and saves the result (emptying the journal). Returns the
    /// stack's latest deployment, and warns if operations are pending.
    /// Every command that writes a stack calls this first, so none works on a stale checkpoint.
    pub fn recover(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
    ) -> Result<Option<DeploymentV3>> {
        let latest = self.recover_as_stored(lock, project, stack)?;
        checked(stack, latest)
    }

    /// [`Backend::recover`], decoded with `decrypter`: the stack's latest deployment as the
    /// engine's snapshot. Without a journal to replay (the usual case) it is read straight from
    /// the stack file's text, each resource decoded as it is parsed, so a large state is never
    /// held twice (as JSON values and decoded).
    pub fn recover_snapshot(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        decrypter: &dyn Crypter,
    ) -> Result<Option<Snapshot>> {
        let decode = |deployment: DeploymentV3| {
            decode_deployment(deployment, Some(decrypter)).map_err(|source| BackendError::State {
                stack: stack.to_owned(),
                source: Box::new(source),
            })
        };
        lock.writer(project, stack)?;
        if self.store.read_journal(project, stack)?.is_some() {
            return self.recover(lock, project, stack)?.map(decode).transpose();
        }
        let latest = self.read_stored(project, stack, |text| {
            decode_checkpoint_json(text, Some(decrypter))
        })?;
        if let Some(snapshot) = &latest {
            refuse_inconsistent(stack, &snapshot.resources)?;
            self.warn_pending(project, stack, &snapshot.pending_operations);
        }
        Ok(latest)
    }

    /// Like [`Backend::recover`], without the integrity check (`state repair`): every
    /// completed operation the journal records is kept, whatever state it replays to.
    pub fn recover_as_stored(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
    ) -> Result<Option<DeploymentV3>> {
        let writer = lock.writer(project, stack)?;
        let Some(journal) = self.store.read_journal(project, stack)? else {
            return self.latest_as_stored(project, stack);
        };
        let latest = self.load(project, stack)?.checkpoint.latest;
        let latest = match self.replay_journal(project, stack, latest, &journal)? {
            Replayed::Recovered(deployment) => {
                tracing::info!(
                    "recovered stack {stack:?} from the journal of its interrupted deployment"
                );
                let bytes = checkpoint_bytes(project, stack, &deployment)?;
                let _writing = writes::section();
                writer.write_checkpoint(&bytes)?;
                Some(deployment)
            }
            Replayed::Stale(latest) => {
                let _writing = writes::section();
                writer.drop_journal()?;
                latest
            }
        };
        if let Some(deployment) = &latest {
            self.warn_pending(project, stack, &deployment.pending_operations);
        }
        Ok(latest)
    }

    /// Replays a journal onto the stored deployment, refusing (with the places named) a
    /// journal that does not belong to it or whose result is inconsistent.
    fn replay_journal(
        &self,
        project: &str,
        stack: &str,
        latest: Option<DeploymentV3>,
        journal: &[u8],
    ) -> Result<Replayed> {
        let refused = |source: ReplayError| BackendError::Unrecoverable {
            stack: stack.to_owned(),
            journal: self.store.journal_location(project, stack),
            checkpoint: self.store.checkpoint_location(project, stack),
            source: Box::new(source),
        };
        let Some(base) = latest else {
            return Err(refused(ReplayError::NoDeployment));
        };
        let mut deployment = match journal::replay(&base, journal) {
            Ok(deployment) => deployment,
            Err(JournalError::AlreadyCompacted { .. }) => return Ok(Replayed::Stale(Some(base))),
            Err(e) => return Err(refused(ReplayError::Journal(e))),
        };
        // Out-of-order states are put in order (nothing is lost by that); any other problem
        // is reported when the state is used, and `cairn state repair` works on this result,
        // so no completed operation the journal records is ever dropped.
        if verify_resources(&deployment.resources).is_err() {
            sort_dependencies_first(&mut deployment.resources);
        }
        Ok(Replayed::Recovered(deployment))
    }

    /// The journal of a deployment of the stack, which the caller holds the lock of (and keeps
    /// holding while the persister is in use). The stack must have been recovered first.
    pub fn persister(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
    ) -> Result<Arc<dyn Persister>> {
        let writer = lock.writer(project, stack)?;
        if self.store.read_journal(project, stack)?.is_some() {
            return Err(BackendError::Internal(format!(
                "stack {stack:?} still has the journal {} of an earlier deployment; \
                 it must be recovered first",
                self.store.journal_location(project, stack)
            )));
        }
        writer.open_journal()
    }

    /// Creates a stack with the given initial deployment; fails if it exists.
    pub fn create(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        deployment: DeploymentV3,
    ) -> Result<()> {
        if self.stack_exists(project, stack)? {
            return Err(BackendError::StackExists {
                stack: stack.to_owned(),
            });
        }
        self.save(lock, project, stack, deployment)
    }

    /// Replaces a stack's deployment, keeping the previous version in its history, and drops
    /// the stack's journal (which described the previous checkpoint).
    pub fn save(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        deployment: DeploymentV3,
    ) -> Result<()> {
        let writer = lock.writer(project, stack)?;
        let bytes = checkpoint_bytes(project, stack, &deployment)?;
        let _writing = writes::section();
        writer.write_checkpoint(&bytes)
    }

    /// Saves two stacks of a project together (`state move`): one transaction on PostgreSQL;
    /// in a directory, `second` first, so an interruption leaves resources in both stacks,
    /// never in neither.
    pub fn save_both(
        &self,
        project: &str,
        first: (&StackLock, &str, &DeploymentV3),
        second: (&StackLock, &str, &DeploymentV3),
    ) -> Result<()> {
        let writer = first.0.writer(project, first.1)?;
        second.0.writer(project, second.1)?;
        let _writing = writes::section();
        writer.write_checkpoint_with(
            &checkpoint_bytes(project, first.1, first.2)?,
            second.1,
            &checkpoint_bytes(project, second.1, second.2)?,
        )
    }

    /// Deletes a stack's checkpoint, journal and tags (its history stays as a backup).
    pub fn remove(&self, lock: &StackLock, project: &str, stack: &str) -> Result<()> {
        let writer = lock.writer(project, stack)?;
        let _writing = writes::section();
        writer.remove()
    }

    /// Takes the stack's write lock, refusing if another live process holds it.
    pub fn lock(&self, project: &str, stack: &str, command: &str) -> Result<StackLock> {
        check_names(project, stack)?;
        let writer = self.store.lock(project, stack, &LockHolder::me(command))?;
        Ok(StackLock {
            project: project.to_owned(),
            stack: stack.to_owned(),
            writer,
        })
    }

    /// The stack's updates, oldest first.
    pub fn history(&self, project: &str, stack: &str) -> Result<Vec<UpdateRecord>> {
        check_names(project, stack)?;
        let mut updates = self.store.updates(project, stack)?;
        // Pulumi's records carry no version: they are numbered in the order they were made.
        updates.sort_by_key(|u| (u.version, u.start_time));
        if updates.iter().any(|u| u.version == 0) {
            for (n, update) in updates.iter_mut().enumerate() {
                update.version = n as u64 + 1;
            }
        }
        Ok(updates)
    }

    /// Appends an update to the stack's history; its version is the next one.
    pub fn record_update(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        mut record: UpdateRecord,
    ) -> Result<u64> {
        let writer = lock.writer(project, stack)?;
        record.version = self
            .history(project, stack)?
            .last()
            .map_or(0, |u| u.version)
            + 1;
        let _writing = writes::section();
        writer.record_update(&record)?;
        Ok(record.version)
    }

    /// The stack's tags.
    pub fn tags(&self, project: &str, stack: &str) -> Result<BTreeMap<String, String>> {
        check_names(project, stack)?;
        self.store.tags(project, stack)
    }

    /// Sets or (with `None`) removes a tag of an existing stack.
    pub fn set_tag(
        &self,
        project: &str,
        stack: &str,
        name: &str,
        value: Option<&str>,
    ) -> Result<()> {
        if !self.stack_exists(project, stack)? {
            return Err(BackendError::NoSuchStack {
                stack: stack.to_owned(),
                location: None,
            });
        }
        let _writing = writes::section();
        self.store.set_tag(project, stack, name, value)
    }

    /// Renames a stack, with `deployment` (its state with URNs rewritten) as its checkpoint.
    /// The caller holds both stacks' locks and recovered the old one.
    pub fn rename(
        &self,
        old_lock: &StackLock,
        new_lock: &StackLock,
        project: &str,
        old: &str,
        new: &str,
        deployment: &DeploymentV3,
    ) -> Result<()> {
        let writer = old_lock.writer(project, old)?;
        new_lock.writer(project, new)?;
        if self.stack_exists(project, new)? {
            return Err(BackendError::StackExists {
                stack: new.to_owned(),
            });
        }
        let bytes = checkpoint_bytes(project, new, deployment)?;
        let _writing = writes::section();
        writer.rename(new, &bytes)
    }
}

fn check_names(project: &str, stack: &str) -> Result<()> {
    names::check_project_name(project, "for the backend")?;
    Ok(names::check_stack_name(stack, "for the backend")?)
}

/// A stack's checkpoint as stored: `{"version": 3, "checkpoint": …}`, pretty-printed JSON
/// (the file backend's format, which Pulumi's file backend reads too).
pub fn checkpoint_bytes(project: &str, stack: &str, deployment: &DeploymentV3) -> Result<Vec<u8>> {
    checkpoint_bytes_of_json(project, stack, &serde_json::to_vec_pretty(deployment)?)
}

/// The stack file (`VersionedCheckpoint`) holding `latest`, a deployment's JSON text as the
/// engine's journal hands it over: framed as it is, neither parsed nor copied into JSON values
/// (at 100,000 resources those were a few hundred megabytes).
pub fn checkpoint_bytes_of_json(project: &str, stack: &str, latest: &[u8]) -> Result<Vec<u8>> {
    let name = serde_json::to_string(&qualified_stack_name(project, stack))?;
    let head = format!(
        "{{\n  \"version\": {DEPLOYMENT_VERSION},\n  \"checkpoint\": {{\n    \"stack\": {name},\n    \"latest\": "
    );
    let mut bytes = Vec::with_capacity(head.len() + latest.len() + 8);
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(latest);
    bytes.extend_from_slice(b"\n  }\n}\n");
    Ok(bytes)
}

/// The name a checkpoint records for a stack.
pub fn qualified_stack_name(project: &str, stack: &str) -> String {
    format!("{ORGANIZATION}/{project}/{stack}")
}

/// What replaying a journal gave.
enum Replayed {
    /// The deployment with the journal applied.
    Recovered(DeploymentV3),
    /// The journal was already part of the checkpoint (its deployment finished, or it was
    /// recovered, but the journal was not removed): the stored deployment, unchanged.
    Stale(Option<DeploymentV3>),
}

/// The deployment, if it passes the integrity check; else an error listing every problem and
/// how to fix them.
fn checked(stack: &str, deployment: Option<DeploymentV3>) -> Result<Option<DeploymentV3>> {
    if let Some(deployment) = &deployment {
        refuse_inconsistent(stack, &deployment.resources)?;
    }
    Ok(deployment)
}

/// Refuses a stack file of another format version than this Cairn's.
fn supported(version: u32) -> Result<(), StateError> {
    if version != DEPLOYMENT_VERSION {
        return Err(StateError::UnsupportedVersion {
            found: u64::from(version),
        });
    }
    Ok(())
}

/// Refuses a state that fails the integrity check, saying how to fix it.
fn refuse_inconsistent<P>(stack: &str, resources: &[Resource<P>]) -> Result<()> {
    verify_resources(resources).map_err(|problems| BackendError::Inconsistent {
        stack: stack.to_owned(),
        problems,
    })
}

/// The warning about an interrupted deployment's pending operations.
pub fn pending_warning<P>(stack: &str, pending: &[Operation<P>]) -> String {
    let mut text = format!(
        "warning: the last deployment of stack {stack:?} was interrupted; {} operation{} pending:",
        pending.len(),
        if pending.len() == 1 { " was" } else { "s were" }
    );
    for op in pending {
        text.push_str(&format!("\n    {} {}", operation_verb(op), op.resource.urn));
    }
    text.push_str(
        "\n  The resources may or may not exist. `cairn refresh` reconciles them with their \
         providers (an interrupted create is imported with `--import-pending-creates <URN> <ID>` \
         or forgotten with `--clear-pending-creates`); `cairn stack clear-pending` forgets them all.",
    );
    text
}

/// `creating`, `updating`, ...: how the checkpoint format names an operation's kind.
pub fn operation_verb<P>(op: &Operation<P>) -> String {
    serde_json::to_value(op.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{:?}", op.kind).to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_engine::state::Manifest;

    /// The framed stack file reads back as the stack file's own type, holding the deployment.
    #[test]
    fn a_framed_checkpoint_reads_back_as_the_stack_file() {
        let deployment: DeploymentV3 = serde_json::from_value(serde_json::json!({
            "manifest": serde_json::to_value(Manifest::new()).unwrap(),
            "resources": [{
                "urn": "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev",
                "custom": false,
                "type": "pulumi:pulumi:Stack",
                "outputs": {"greeting": "hello \"world\""}
            }]
        }))
        .unwrap();
        let bytes = checkpoint_bytes("p", "dev\"x", &deployment).unwrap();
        let read: VersionedCheckpoint = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read.version, DEPLOYMENT_VERSION);
        assert_eq!(read.checkpoint.stack, qualified_stack_name("p", "dev\"x"));
        assert!(read.checkpoint.config.is_none() && read.checkpoint.extra.is_empty());
        assert_eq!(
            serde_json::to_value(read.checkpoint.latest.unwrap()).unwrap(),
            serde_json::to_value(&deployment).unwrap()
        );
        assert!(bytes.ends_with(b"}\n"), "a stack file ends its last line");
    }
}
