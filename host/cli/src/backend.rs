//! The `file://` state backend: stack checkpoints as JSON files under one root directory.
//!
//! Layout under the root:
//! * `stacks/<project>/<stack>.json` — the stack's checkpoint (`{"version": 3, "checkpoint": …}`);
//! * `stacks/<project>/<stack>.journal` — the journal of a deployment in progress (or
//!   interrupted): JSON lines replayed onto the checkpoint (see `cairn_engine::deploy::journal`);
//! * `history/<project>/<stack>/<stack>-<unix nanos>.checkpoint.json` — previous versions;
//! * `locks/<project>/<stack>.lock` — locked (`flock`) by the one process allowed to write the
//!   stack, and naming it (see [`StackLock`]).
//!
//! Every checkpoint write is atomic (temporary file, fsync, rename, fsync of the directory), so a
//! crash leaves either the old or the new checkpoint, never a torn one. Journal lines are appended
//! and fdatasync'ed one step at a time. Readers see the checkpoint with the journal replayed onto
//! it ([`FileBackend::latest`]); writers first make that replay the checkpoint
//! ([`FileBackend::recover`]), under the stack's lock.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use cairn_engine::deploy::journal::{self, JournalError, PersistError, Persister};
use cairn_engine::state::integrity::verify_resources;
use cairn_engine::state::{
    CheckpointV3, DEPLOYMENT_VERSION, DeploymentV3, JsonMap, Operation, VersionedCheckpoint,
    sort_dependencies_first,
};
use serde::{Deserialize, Serialize};

use crate::names;
use crate::terminal::{errln, quoted};

/// How many previous checkpoints of a stack are kept, unless `CAIRN_STATE_HISTORY` says otherwise.
const DEFAULT_HISTORY_LIMIT: usize = 50;

/// The organization name file-backend stacks are qualified with, as Pulumi's file backend does.
pub const ORGANIZATION: &str = "organization";

/// A stack checkpoint store rooted at a local directory.
#[derive(Debug, Clone)]
pub struct FileBackend {
    root: PathBuf,
    history_limit: usize,
}

/// What `stack ls` shows about a stack.
#[derive(Debug, Clone)]
pub struct StackSummary {
    pub name: String,
    pub last_update: Option<String>,
    pub resource_count: usize,
}

impl FileBackend {
    /// Opens the backend named by a `file://` URL (`file://~/x` and `file://./x` are accepted).
    pub fn from_url(url: &str, cwd: &Path) -> Result<FileBackend> {
        let Some(rest) = url.strip_prefix("file://") else {
            bail!(
                "unsupported backend URL {url:?}: Cairn supports local backends (file://<directory>)"
            );
        };
        let root = if let Some(home_relative) = rest.strip_prefix('~') {
            let home = std::env::var_os("HOME")
                .ok_or_else(|| anyhow!("backend URL {url:?} uses ~ but HOME is not set"))?;
            PathBuf::from(home).join(home_relative.trim_start_matches('/'))
        } else if rest.is_empty() {
            bail!("backend URL {url:?} names no directory");
        } else {
            cwd.join(rest)
        };
        let history_limit = match std::env::var("CAIRN_STATE_HISTORY") {
            Ok(value) => value.parse().with_context(|| {
                format!("CAIRN_STATE_HISTORY must be a number of versions to keep, got {value:?}")
            })?,
            Err(_) => DEFAULT_HISTORY_LIMIT,
        };
        Ok(FileBackend {
            root,
            history_limit,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/<area>/<project>/<stack><suffix>`: the one place names become backend paths.
    /// Both names were checked where they entered; they are checked again here, so a name
    /// that slipped through cannot leave the backend's directory.
    fn path(&self, area: &str, project: &str, stack: &str, suffix: &str) -> Result<PathBuf> {
        names::check_project_name(project, "for the backend")?;
        names::check_stack_name(stack, "for the backend")?;
        Ok(self
            .root
            .join(area)
            .join(project)
            .join(format!("{stack}{suffix}")))
    }

    fn stack_path(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("stacks", project, stack, ".json")
    }

    fn journal_path(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("stacks", project, stack, ".journal")
    }

    fn history_dir(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("history", project, stack, "")
    }

    fn lock_path(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("locks", project, stack, ".lock")
    }

    /// Whether the stack exists (an invalid name names no stack).
    pub fn stack_exists(&self, project: &str, stack: &str) -> bool {
        self.stack_path(project, stack)
            .is_ok_and(|path| path.is_file())
    }

    /// The project's stacks, sorted by name.
    /// Files whose names are not stack names are skipped with a warning.
    pub fn list_stacks(&self, project: &str) -> Result<Vec<StackSummary>> {
        names::check_project_name(project, "for the backend")?;
        let dir = self.root.join("stacks").join(project);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("listing stacks in {}", dir.display()));
            }
        };
        let mut stacks = Vec::new();
        for entry in entries {
            let path = entry
                .with_context(|| format!("listing stacks in {}", dir.display()))?
                .path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            else {
                continue;
            };
            if !names::is_stack_name(name) {
                tracing::warn!(
                    "ignoring {}: {} is not a stack name ({})",
                    path.display(),
                    quoted(name),
                    names::STACK_NAME_RULE
                );
                continue;
            }
            let latest = self.latest_as_stored(project, name)?;
            let latest = latest.as_ref();
            stacks.push(StackSummary {
                name: name.to_owned(),
                last_update: latest.map(|d| d.manifest.time.clone()),
                resource_count: latest.map_or(0, |d| d.resources.len()),
            });
        }
        stacks.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(stacks)
    }

    /// Reads a stack's checkpoint as stored (without its journal).
    pub fn load(&self, project: &str, stack: &str) -> Result<VersionedCheckpoint> {
        let path = self.stack_path(project, stack)?;
        let text = fs::read_to_string(&path).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                anyhow!("stack {stack:?} does not exist (no {})", path.display())
            } else {
                anyhow!("reading {}: {e}", path.display())
            }
        })?;
        let checkpoint: VersionedCheckpoint = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid stack checkpoint", path.display()))?;
        if checkpoint.version != DEPLOYMENT_VERSION {
            bail!(
                "{}: unsupported checkpoint version {} (this version of Cairn reads version {DEPLOYMENT_VERSION})",
                path.display(),
                checkpoint.version
            );
        }
        Ok(checkpoint)
    }

    /// The stack's latest deployment, if it has one, including what the journal of an
    /// interrupted deployment adds (replayed in memory: nothing is written), refused unless it
    /// passes the integrity check. Warns (once per process) if operations are pending.
    pub fn latest(&self, project: &str, stack: &str) -> Result<Option<DeploymentV3>> {
        let latest = self.latest_as_stored(project, stack)?;
        checked(stack, latest)
    }

    /// Like [`FileBackend::latest`], without the integrity check: for commands that show or
    /// fix a broken state (`stack export`, `state repair`, listings).
    pub fn latest_as_stored(&self, project: &str, stack: &str) -> Result<Option<DeploymentV3>> {
        let latest = self.load(project, stack)?.checkpoint.latest;
        let latest = match self.read_journal(project, stack)? {
            None => latest,
            Some(journal) => match self.replay_journal(project, stack, latest, &journal)? {
                Replayed::Recovered(deployment) => Some(deployment),
                Replayed::Stale(latest) => latest,
            },
        };
        if let Some(deployment) = &latest {
            warn_pending(project, stack, &deployment.pending_operations);
        }
        Ok(latest)
    }

    /// Makes the stack's checkpoint current: if a deployment was interrupted, replays its
    /// journal onto the checkpoint and saves the result (emptying the journal). Returns the
    /// stack's latest deployment, and warns (once per process) if operations are pending.
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

    /// Like [`FileBackend::recover`], without the integrity check (`state repair`): every
    /// completed operation the journal records is kept, whatever state it replays to.
    pub fn recover_as_stored(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
    ) -> Result<Option<DeploymentV3>> {
        lock.check(project, stack)?;
        let Some(journal) = self.read_journal(project, stack)? else {
            return self.latest_as_stored(project, stack);
        };
        let latest = self.load(project, stack)?.checkpoint.latest;
        let latest = match self.replay_journal(project, stack, latest, &journal)? {
            Replayed::Recovered(deployment) => {
                tracing::info!(
                    "recovered stack {stack:?} from the journal of its interrupted deployment"
                );
                self.save(lock, project, stack, deployment.clone())?;
                Some(deployment)
            }
            Replayed::Stale(latest) => {
                self.remove_journal(project, stack)?;
                latest
            }
        };
        if let Some(deployment) = &latest {
            warn_pending(project, stack, &deployment.pending_operations);
        }
        Ok(latest)
    }

    /// The journal's bytes, or `None` if there is no journal or it is empty.
    fn read_journal(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        let path = self.journal_path(project, stack)?;
        match fs::read(&path) {
            Ok(bytes) if bytes.is_empty() => Ok(None),
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Replays a journal onto the stored deployment, refusing (with the files named) a journal
    /// that does not belong to it or whose result is inconsistent.
    fn replay_journal(
        &self,
        project: &str,
        stack: &str,
        latest: Option<DeploymentV3>,
        journal: &[u8],
    ) -> Result<Replayed> {
        let journal_path = self.journal_path(project, stack)?;
        let stack_path = self.stack_path(project, stack)?;
        let context = || {
            format!(
                "cannot recover stack {stack:?} from the journal of its interrupted deployment, {} \
                 (the checkpoint {} is unchanged); if the journal belongs to another checkpoint, \
                 move it out of the way",
                journal_path.display(),
                stack_path.display()
            )
        };
        let Some(base) = latest else {
            return Err(anyhow!("the checkpoint records no deployment")).with_context(context);
        };
        let mut deployment = match journal::replay(&base, journal) {
            Ok(deployment) => deployment,
            Err(JournalError::AlreadyCompacted { .. }) => return Ok(Replayed::Stale(Some(base))),
            Err(e) => return Err(e).with_context(context),
        };
        // Out-of-order states are put in order (nothing is lost by that); any other problem
        // is reported when the state is used, and `cairn state repair` works on this result,
        // so no completed operation the journal records is ever dropped.
        if verify_resources(&deployment.resources).is_err() {
            sort_dependencies_first(&mut deployment.resources);
        }
        Ok(Replayed::Recovered(deployment))
    }

    fn remove_journal(&self, project: &str, stack: &str) -> Result<()> {
        let path = self.journal_path(project, stack)?;
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        }
        if let Some(dir) = path.parent() {
            sync_dir(dir).with_context(|| format!("syncing {}", dir.display()))?;
        }
        Ok(())
    }

    /// The journal of a deployment of the stack, which the caller holds the lock of (and keeps
    /// holding while the persister is in use). The stack must have been recovered first.
    #[allow(
        dead_code,
        reason = "used by the deployment commands, wired in separately"
    )]
    pub fn persister(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
    ) -> Result<Arc<dyn Persister>> {
        Ok(Arc::new(StackJournal::open(self, lock, project, stack)?))
    }

    /// Creates a stack with the given initial deployment; fails if it exists.
    pub fn create(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        deployment: DeploymentV3,
    ) -> Result<()> {
        if self.stack_exists(project, stack) {
            bail!("stack {stack:?} already exists");
        }
        self.save(lock, project, stack, deployment)
    }

    /// Atomically replaces a stack's deployment, keeping the previous version in its history,
    /// and drops the stack's journal (which described the previous checkpoint).
    pub fn save(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        deployment: DeploymentV3,
    ) -> Result<()> {
        lock.check(project, stack)?;
        self.write_checkpoint(project, stack, deployment)?;
        self.remove_journal(project, stack)
    }

    /// Atomically replaces the checkpoint (the caller holds the lock), keeping the previous one.
    fn write_checkpoint(&self, project: &str, stack: &str, deployment: DeploymentV3) -> Result<()> {
        let path = self.stack_path(project, stack)?;
        let previous = match fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let checkpoint = VersionedCheckpoint {
            version: DEPLOYMENT_VERSION,
            checkpoint: CheckpointV3 {
                stack: qualified_stack_name(project, stack),
                config: None,
                latest: Some(deployment),
                extra: Default::default(),
            },
        };
        let mut bytes = serde_json::to_vec_pretty(&checkpoint)?;
        bytes.push(b'\n');
        if previous.as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        if let Some(previous) = previous {
            self.archive(project, stack, &previous)?;
        }
        write_atomically(&path, &bytes)
    }

    /// Keeps a previous checkpoint under the history folder and trims old versions.
    fn archive(&self, project: &str, stack: &str, bytes: &[u8]) -> Result<()> {
        if self.history_limit == 0 {
            return Ok(());
        }
        let dir = self.history_dir(project, stack)?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        write_atomically(
            &dir.join(format!("{stack}-{nanos:020}.checkpoint.json")),
            bytes,
        )?;
        let mut versions: Vec<PathBuf> = fs::read_dir(&dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        versions.sort();
        let excess = versions.len().saturating_sub(self.history_limit);
        for old in &versions[..excess] {
            fs::remove_file(old).with_context(|| format!("removing {}", old.display()))?;
        }
        Ok(())
    }

    /// Deletes a stack's checkpoint and journal (its history stays as a backup).
    pub fn remove(&self, lock: &StackLock, project: &str, stack: &str) -> Result<()> {
        lock.check(project, stack)?;
        let path = self.stack_path(project, stack)?;
        if let Ok(bytes) = fs::read(&path) {
            self.archive(project, stack, &bytes)?;
        }
        fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        self.remove_journal(project, stack)
    }

    /// Takes the stack's write lock, refusing if another live process holds it.
    pub fn lock(&self, project: &str, stack: &str, command: &str) -> Result<StackLock> {
        StackLock::acquire(self.lock_path(project, stack)?, project, stack, command)
    }
}

/// What replaying a journal gave.
enum Replayed {
    /// The deployment with the journal applied.
    Recovered(DeploymentV3),
    /// The journal was already part of the checkpoint (its deployment finished, or it was
    /// recovered, but the journal was not removed): the stored deployment, unchanged.
    Stale(Option<DeploymentV3>),
}

/// The stacks already warned about in this process.
static WARNED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Tells the user (on stderr, once per stack and process) that a deployment was interrupted.
/// The deployment, if it passes the integrity check; else an error listing every problem and
/// how to fix them.
fn checked(stack: &str, deployment: Option<DeploymentV3>) -> Result<Option<DeploymentV3>> {
    if let Some(deployment) = &deployment
        && let Err(e) = verify_resources(&deployment.resources)
    {
        bail!(
            "the state of stack {stack:?} is refused: {e}\n`cairn state repair` fixes what can be fixed safely (it shows the changes first); `cairn stack export` and `cairn stack import` let you edit the rest by hand"
        );
    }
    Ok(deployment)
}

fn warn_pending(project: &str, stack: &str, pending: &[Operation<JsonMap>]) {
    if pending.is_empty() {
        return;
    }
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if warned
        .get_or_insert_with(HashSet::new)
        .insert(format!("{project}/{stack}"))
    {
        errln!("{}", pending_warning(stack, pending));
    }
}

/// The warning about an interrupted deployment's pending operations.
pub fn pending_warning(stack: &str, pending: &[Operation<JsonMap>]) -> String {
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

/// The journal of one locked stack: lines are appended to an `O_APPEND` file opened once and
/// fdatasync'ed; saving writes the checkpoint atomically, then empties the journal.
struct StackJournal {
    backend: FileBackend,
    project: String,
    stack: String,
    path: PathBuf,
    file: Mutex<File>,
}

impl StackJournal {
    fn open(backend: &FileBackend, lock: &StackLock, project: &str, stack: &str) -> Result<Self> {
        lock.check(project, stack)?;
        let path = backend.journal_path(project, stack)?;
        if backend.read_journal(project, stack)?.is_some() {
            bail!(
                "internal error: stack {stack:?} still has the journal {} of an earlier deployment; \
                 it must be recovered first",
                path.display()
            );
        }
        let dir = path
            .parent()
            .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|file| {
                // An earlier, empty journal may be left over; start from nothing.
                file.set_len(0)?;
                sync_dir(dir)?;
                Ok(file)
            })
            .with_context(|| format!("creating the journal {}", path.display()))?;
        Ok(StackJournal {
            backend: backend.clone(),
            project: project.to_owned(),
            stack: stack.to_owned(),
            path,
            file: Mutex::new(file),
        })
    }
}

impl Persister for StackJournal {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(lines)
            .and_then(|()| file.sync_data())
            .map_err(|e| {
                PersistError::with_source(format!("appending to {}", self.path.display()), e)
            })
    }

    fn save(&self, deployment: &DeploymentV3) -> Result<(), PersistError> {
        // Held throughout, so no append lands between the checkpoint and the truncation.
        let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        self.backend
            .write_checkpoint(&self.project, &self.stack, deployment.clone())
            .map_err(|e| PersistError::new(format!("{e:#}")))?;
        // A crash before this leaves a journal the checkpoint already contains; it is
        // recognised by its manifest and dropped.
        file.set_len(0)
            .and_then(|()| file.sync_all())
            .map_err(|e| PersistError::with_source(format!("emptying {}", self.path.display()), e))
    }
}

/// The name a file-backend checkpoint records for a stack.
pub fn qualified_stack_name(project: &str, stack: &str) -> String {
    format!("{ORGANIZATION}/{project}/{stack}")
}

/// Writes `bytes` to `path` so that readers see either the old or the new contents.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| -> io::Result<()> {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("writing {}", path.display()))
}

/// Makes a rename or removal in `dir` durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Who holds a stack lock; written into the lock file for the error a second writer sees.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LockHolder {
    pid: u32,
    host: String,
    user: String,
    command: String,
    time: String,
}

/// The write lock of one stack: an exclusive advisory lock (`flock`) on
/// `locks/<project>/<stack>.lock`, held through the open file and released when dropped.
///
/// The kernel releases the lock when its holder exits, however it ends (kill -9 included), so a
/// lock file left behind is simply free to take: there is no staleness to judge and nothing to
/// take over. Only the holder removes the file, while still holding the lock, and only if the
/// path still names the file it locked; a process that locked a file which was removed (or
/// replaced) in the meantime starts again, so two processes never both hold the stack.
#[derive(Debug)]
pub struct StackLock {
    path: PathBuf,
    project: String,
    stack: String,
    /// The locked file: the lock lives as long as this descriptor (opened close-on-exec, so no
    /// child process inherits it).
    _file: File,
    /// The locked file's device and inode: the lock file is ours while the path names it.
    identity: FileIdentity,
}

/// A file's device and inode number.
type FileIdentity = (u64, u64);

fn identity(meta: &fs::Metadata) -> FileIdentity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// How many times acquiring starts again after the file it locked was removed under it.
const LOCK_ATTEMPTS: usize = 100;

/// The stack locks this process holds (path and identity), for [`release_held_locks`].
static HELD: Mutex<Vec<(PathBuf, FileIdentity)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(PathBuf, FileIdentity)>> {
    HELD.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the lock files this process holds, for a process about to exit without unwinding
/// (a second Ctrl-C): the kernel releases the locks themselves at exit.
pub fn release_held_locks() {
    for (path, id) in held().drain(..) {
        remove_if_ours(&path, id);
    }
}

/// Removes the lock file at `path` if it is still the file with identity `id`.
fn remove_if_ours(path: &Path, id: FileIdentity) {
    match fs::symlink_metadata(path) {
        Ok(meta) if identity(&meta) == id => {
            if let Err(e) = fs::remove_file(path) {
                tracing::warn!("could not remove lock {}: {e}", path.display());
            }
        }
        Ok(_) => tracing::warn!(
            "lock {} was replaced while this process held it; leaving the new one",
            path.display()
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            tracing::warn!(
                "lock {} was removed while this process held it",
                path.display()
            );
        }
        Err(e) => tracing::warn!("could not check lock {}: {e}", path.display()),
    }
}

impl StackLock {
    fn acquire(path: PathBuf, project: &str, stack: &str, command: &str) -> Result<StackLock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let me = LockHolder {
            pid: std::process::id(),
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            user: std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
            command: command.to_owned(),
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        };
        for _ in 0..LOCK_ATTEMPTS {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("opening lock {}", path.display()))?;
            test_hook::pause("opened", &path);
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(held_by_another(&file, stack, &path));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!(
                            "locking {} (the backend's file system must support file locks)",
                            path.display()
                        )
                    });
                }
            }
            // The previous holder removes the file before releasing it, so the file locked here
            // may no longer be the lock file (and another process may have created and locked
            // a new one): the lock counts only if the path still names this file.
            let mine = identity(
                &file
                    .metadata()
                    .with_context(|| format!("reading lock {}", path.display()))?,
            );
            match fs::symlink_metadata(&path) {
                Ok(meta) if identity(&meta) == mine => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("reading lock {}", path.display()));
                }
            }
            write_holder(&file, &me).with_context(|| format!("writing lock {}", path.display()))?;
            held().push((path.clone(), mine));
            test_hook::pause("held", &path);
            return Ok(StackLock {
                path,
                project: project.to_owned(),
                stack: stack.to_owned(),
                _file: file,
                identity: mine,
            });
        }
        bail!(
            "could not lock stack {stack:?}: the lock file {} kept being replaced",
            path.display()
        )
    }

    /// Guards against saving one stack while holding another's lock.
    fn check(&self, project: &str, stack: &str) -> Result<()> {
        if self.project != project || self.stack != stack {
            bail!(
                "internal error: writing stack {project}/{stack} under the lock of {}/{}",
                self.project,
                self.stack
            );
        }
        Ok(())
    }
}

impl Drop for StackLock {
    fn drop(&mut self) {
        // Removed while still locked (the file closes after this), and only if it is ours.
        held().retain(|(path, id)| !(path == &self.path && *id == self.identity));
        remove_if_ours(&self.path, self.identity);
    }
}

/// Writes who holds the lock over the file's contents in one write, padded with spaces to the
/// previous length (JSON allows trailing whitespace), so a reader sees whole contents.
fn write_holder(file: &File, holder: &LockHolder) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(holder)?;
    let previous = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    if previous > bytes.len() {
        bytes.resize(previous, b' ');
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.write_all_at(&bytes, 0)?;
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&bytes)?;
    }
    file.sync_data()
}

/// The error a second writer gets, naming the holder from the locked file's contents.
fn held_by_another(file: &File, stack: &str, path: &Path) -> anyhow::Error {
    // The holder writes its details right after locking: give it a moment to finish.
    let mut holder = None;
    for _ in 0..20 {
        let mut text = String::new();
        let read = {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = file;
            file.seek(SeekFrom::Start(0))
                .and_then(|_| file.read_to_string(&mut text))
        };
        holder = read
            .ok()
            .and_then(|_| serde_json::from_str::<LockHolder>(&text).ok());
        if holder.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    match holder {
        Some(holder) => anyhow!(
            "stack {stack:?} is locked by `{}` (pid {} on {}, user {}, since {}; lock file {}); \
             wait for it to finish",
            holder.command,
            holder.pid,
            holder.host,
            holder.user,
            holder.time,
            path.display()
        ),
        None => anyhow!(
            "stack {stack:?} is locked by another process (lock file {}, which does not say \
             which); wait for it to finish",
            path.display()
        ),
    }
}

/// A test-only hook: `CAIRN_TEST_LOCK_PAUSE=<point>:<file>` makes a process that reaches
/// `<point>` of taking a stack lock (`opened`: the lock file is open, not yet locked; `held`:
/// the lock is taken) write `<file>.reached` and wait until `<file>` exists (at most a minute),
/// so tests can stop a process exactly where races happen. Unset, it costs one variable lookup.
mod test_hook {
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

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_engine::state::Manifest;

    fn backend(dir: &Path, history: usize) -> FileBackend {
        FileBackend {
            root: dir.to_path_buf(),
            history_limit: history,
        }
    }

    fn deployment(time: &str) -> DeploymentV3 {
        DeploymentV3 {
            manifest: Manifest {
                time: time.into(),
                ..Manifest::new()
            },
            secrets_providers: None,
            resources: vec![],
            pending_operations: vec![],
            extra: Default::default(),
        }
    }

    #[test]
    fn saves_atomically_and_keeps_bounded_history() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 2);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        backend
            .create(&lock, "proj", "dev", deployment("t0"))
            .unwrap();
        for t in ["t1", "t2", "t3"] {
            backend.save(&lock, "proj", "dev", deployment(t)).unwrap();
        }
        let latest = backend.latest("proj", "dev").unwrap().unwrap();
        assert_eq!(latest.manifest.time, "t3");
        let history: Vec<_> = fs::read_dir(dir.path().join("history/proj/dev"))
            .unwrap()
            .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        assert_eq!(history.len(), 2, "only the newest two versions are kept");
        assert!(history.iter().any(|h| h.contains("\"t2\"")));
        assert!(history.iter().any(|h| h.contains("\"t1\"")));
        // No temporary files are left behind.
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("stacks/proj"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["dev.json"]);
        let stored = backend.load("proj", "dev").unwrap();
        assert_eq!(stored.checkpoint.stack, "organization/proj/dev");
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holder_named() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 1);
        let held = backend.lock("proj", "dev", "cairn up").unwrap();
        let err = backend
            .lock("proj", "dev", "cairn destroy")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is locked by `cairn up`"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        backend.lock("proj", "dev", "cairn destroy").unwrap();
    }

    #[test]
    fn a_lock_file_left_by_a_dead_process_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 1);
        let path = backend.lock_path("proj", "dev").unwrap();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        // What a killed holder leaves: its details, longer than ours, and no lock.
        let dead = LockHolder {
            pid: u32::MAX - 1,
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            user: "u".repeat(500),
            command: "cairn up".into(),
            time: "t".into(),
        };
        fs::write(&path, serde_json::to_vec(&dead).unwrap()).unwrap();
        let lock = backend.lock("proj", "dev", "cairn refresh").unwrap();
        let written: LockHolder = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(written.pid, std::process::id());
        assert_eq!(written.command, "cairn refresh");
        drop(lock);
        assert!(!path.exists(), "the holder removes its lock file");
    }

    #[test]
    fn a_lock_file_replaced_under_its_holder_is_not_removed_by_it() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 1);
        let path = backend.lock_path("proj", "dev").unwrap();
        let first = backend.lock("proj", "dev", "cairn up").unwrap();
        // Someone removes the lock file by hand; a second writer then gets a new one.
        fs::remove_file(&path).unwrap();
        let second = backend.lock("proj", "dev", "cairn destroy").unwrap();
        drop(first);
        assert!(
            path.exists(),
            "the first holder must not remove the second's lock"
        );
        let err = backend
            .lock("proj", "dev", "cairn refresh")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is locked by `cairn destroy`"), "{err}");
        drop(second);
        assert!(!path.exists());
        assert!(
            !held().iter().any(|(p, _)| p == &path),
            "no lock is left registered"
        );
    }

    #[test]
    fn saving_under_another_stacks_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 1);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let err = backend
            .save(&lock, "proj", "prod", deployment("t"))
            .unwrap_err();
        assert!(
            err.to_string().contains("under the lock of proj/dev"),
            "{err}"
        );
    }

    #[test]
    fn backend_urls() {
        let cwd = Path::new("/work/x");
        let cases = [
            ("file:///var/state", Some("/var/state")),
            ("file://./state", Some("/work/x/./state")),
            ("s3://bucket", None),
            ("file://", None),
        ];
        for (url, expected) in cases {
            match (FileBackend::from_url(url, cwd), expected) {
                (Ok(b), Some(root)) => assert_eq!(b.root(), Path::new(root), "{url}"),
                (Err(_), None) => {}
                (got, _) => panic!("{url}: unexpected {got:?}"),
            }
        }
    }

    /// Journal tests: resources with no secrets, so the crypter is never used.
    struct NoSecrets;

    impl cairn_engine::secrets::Crypter for NoSecrets {
        fn encrypt(&self, _: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
            Err(cairn_engine::secrets::SecretsError::Encrypt)
        }
        fn decrypt(&self, _: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
            Err(cairn_engine::secrets::SecretsError::Decrypt)
        }
    }

    fn resource(name: &str) -> cairn_engine::state::ResourceState {
        let ty = cairn_engine::TypeToken::parse("random:index/randomId:RandomId").unwrap();
        let urn = cairn_engine::Urn::parse(&format!(
            "urn:pulumi:dev::proj::random:index/randomId:RandomId::{name}"
        ))
        .unwrap();
        let mut r = cairn_engine::state::Resource::new(urn, ty, true);
        r.id = Some(format!("{name}-id"));
        r
    }

    /// A stack whose checkpoint holds resources a and b.
    fn stack_with_two(backend: &FileBackend, lock: &StackLock) -> cairn_engine::state::Snapshot {
        let mut snapshot = cairn_engine::state::Snapshot::empty(None);
        snapshot.manifest.time = "2026-01-01T00:00:00Z".into();
        snapshot.resources = vec![resource("a"), resource("b")];
        let stored = cairn_engine::state::encode_deployment(
            &snapshot,
            cairn_engine::state::SecretsMode::Plaintext,
        )
        .unwrap();
        backend.create(lock, "proj", "dev", stored).unwrap();
        snapshot
    }

    fn manager(
        base: cairn_engine::state::Snapshot,
        persister: Arc<dyn Persister>,
    ) -> journal::SnapshotManager {
        journal::SnapshotManager::new(base, Manifest::new(), Some(persister), Arc::new(NoSecrets))
            .unwrap()
    }

    fn names(deployment: &DeploymentV3) -> Vec<&str> {
        deployment.resources.iter().map(|r| r.urn.name()).collect()
    }

    #[test]
    fn an_interrupted_deployment_is_replayed_then_recovered() {
        use cairn_engine::deploy::journal::Mutation;
        use cairn_engine::state::OperationKind;

        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let base = stack_with_two(&backend, &lock);
        let checkpoint = fs::read(backend.stack_path("proj", "dev").unwrap()).unwrap();
        let m = manager(base, backend.persister(&lock, "proj", "dev").unwrap());
        let id = m.begin(OperationKind::Creating, &resource("c")).unwrap();
        m.end(id, vec![Mutation::Append(resource("c"))]).unwrap();
        m.begin(OperationKind::Deleting, &resource("b")).unwrap();
        m.apply(vec![Mutation::RemoveBase(0)]).unwrap();
        drop(m); // the process dies: no finish

        let journal_path = backend.journal_path("proj", "dev").unwrap();
        let journal = fs::read_to_string(&journal_path).unwrap();
        assert_eq!(
            journal.lines().count(),
            4,
            "header, begin, end, begin:\n{journal}"
        );
        // Readers see the replay; nothing is written.
        let latest = backend.latest("proj", "dev").unwrap().unwrap();
        assert_eq!(
            names(&latest),
            ["c", "a", "b"],
            "the unflushed removal is lost"
        );
        assert_eq!(latest.pending_operations.len(), 1);
        assert_eq!(
            fs::read(backend.stack_path("proj", "dev").unwrap()).unwrap(),
            checkpoint
        );
        let listed = backend.list_stacks("proj").unwrap();
        assert_eq!(listed[0].resource_count, 3);

        // A writer makes it the checkpoint, and the journal goes.
        let recovered = backend.recover(&lock, "proj", "dev").unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&recovered).unwrap(),
            serde_json::to_value(&latest).unwrap()
        );
        assert!(!journal_path.exists());
        let stored = backend
            .load("proj", "dev")
            .unwrap()
            .checkpoint
            .latest
            .unwrap();
        assert_eq!(names(&stored), ["c", "a", "b"]);
        assert_eq!(stored.pending_operations[0].resource.urn.name(), "b");
        // Recovering again changes nothing.
        let again = backend.recover(&lock, "proj", "dev").unwrap().unwrap();
        assert_eq!(names(&again), ["c", "a", "b"]);
    }

    #[test]
    fn a_finished_deployment_compacts_the_journal() {
        use cairn_engine::deploy::journal::Mutation;
        use cairn_engine::state::OperationKind;

        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let base = stack_with_two(&backend, &lock);
        let m = manager(
            base.clone(),
            backend.persister(&lock, "proj", "dev").unwrap(),
        );
        let id = m
            .begin(OperationKind::Deleting, &base.resources[1])
            .unwrap();
        m.end(id, vec![Mutation::RemoveBase(1)]).unwrap();
        let journal_path = backend.journal_path("proj", "dev").unwrap();
        let journal = fs::read(&journal_path).unwrap();
        m.finish().unwrap();
        assert_eq!(fs::metadata(&journal_path).unwrap().len(), 0, "emptied");
        let stored = backend
            .load("proj", "dev")
            .unwrap()
            .checkpoint
            .latest
            .unwrap();
        assert_eq!(names(&stored), ["a"]);

        // A crash between the checkpoint write and the truncation leaves a journal the
        // checkpoint already contains: it is recognised and dropped, not replayed again.
        fs::write(&journal_path, &journal).unwrap();
        assert_eq!(
            names(&backend.latest("proj", "dev").unwrap().unwrap()),
            ["a"]
        );
        assert_eq!(
            names(&backend.recover(&lock, "proj", "dev").unwrap().unwrap()),
            ["a"]
        );
        assert!(!journal_path.exists());
    }

    #[test]
    fn an_inconsistent_state_is_refused_on_every_load_with_every_problem() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        stack_with_two(&backend, &lock);
        let mut broken = backend.latest("proj", "dev").unwrap().unwrap();
        let copy = broken.resources[0].clone();
        broken.resources.push(copy);
        broken.resources[1].parent = Some(
            cairn_engine::urn::Urn::parse("urn:pulumi:dev::proj::test:index:Component::gone")
                .unwrap(),
        );
        backend.save(&lock, "proj", "dev", broken).unwrap();
        for err in [
            backend.latest("proj", "dev").unwrap_err(),
            backend.recover(&lock, "proj", "dev").unwrap_err(),
        ] {
            let message = format!("{err:#}");
            assert!(
                message.contains("the state of stack \"dev\" is refused")
                    && message.contains("(2 problems)")
                    && message.contains("::a appears more than once")
                    && message.contains("Component::gone, which is not in the state")
                    && message.contains("`cairn state repair`"),
                "{message}"
            );
        }
        // Shown and fixed as stored.
        assert_eq!(
            names(&backend.latest_as_stored("proj", "dev").unwrap().unwrap()),
            ["a", "b", "a"]
        );
    }

    #[test]
    fn a_journal_of_another_checkpoint_is_refused_and_the_checkpoint_kept() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let mut other = stack_with_two(&backend, &lock);
        other.manifest.time = "2020-01-01T00:00:00Z".into();
        let other = cairn_engine::state::encode_deployment(
            &other,
            cairn_engine::state::SecretsMode::Plaintext,
        )
        .unwrap();
        let header = journal::JournalHeader::new(&other, Manifest::new())
            .to_line()
            .unwrap();
        fs::write(backend.journal_path("proj", "dev").unwrap(), header).unwrap();
        let checkpoint = fs::read(backend.stack_path("proj", "dev").unwrap()).unwrap();
        for err in [
            backend.latest("proj", "dev").unwrap_err(),
            backend.recover(&lock, "proj", "dev").unwrap_err(),
        ] {
            let message = format!("{err:#}");
            assert!(
                message.contains("dev.journal")
                    && message.contains("dev.json is unchanged")
                    && message.contains("2020-01-01T00:00:00Z")
                    && message.contains("2026-01-01T00:00:00Z"),
                "{message}"
            );
        }
        assert_eq!(
            fs::read(backend.stack_path("proj", "dev").unwrap()).unwrap(),
            checkpoint
        );
        assert!(
            backend.persister(&lock, "proj", "dev").is_err(),
            "not recovered"
        );
        // Removing the stack removes its journal too.
        backend.remove(&lock, "proj", "dev").unwrap();
        assert!(!backend.journal_path("proj", "dev").unwrap().exists());
    }

    #[test]
    fn the_pending_warning_names_each_operation() {
        let ops: Vec<Operation<JsonMap>> = ["a", "b"]
            .iter()
            .map(|n| Operation {
                resource: resource(n)
                    .try_map_properties(|_, _| Ok::<_, ()>(JsonMap::new()))
                    .unwrap(),
                kind: cairn_engine::state::OperationKind::Creating,
            })
            .collect();
        let warning = pending_warning("dev", &ops);
        assert!(
            warning.starts_with(
                "warning: the last deployment of stack \"dev\" was interrupted; 2 operations were pending:\n    creating urn:pulumi:dev::proj::random:index/randomId:RandomId::a\n"
            ),
            "{warning}"
        );
        assert!(
            warning.contains("`cairn refresh`") && warning.contains("`cairn stack clear-pending`")
        );
        assert!(pending_warning("dev", &ops[..1]).contains("1 operation was pending"));
    }
}
