//! The `file://` state backend: stacks as JSON files under one root directory.
//!
//! Layout under the root (Pulumi's DIY layout, so the files read the same):
//! * `stacks/<project>/<stack>.json` — the stack's checkpoint (`{"version": 3, "checkpoint": …}`);
//! * `stacks/<project>/<stack>.journal` — the journal of a deployment in progress (or
//!   interrupted): JSON lines replayed onto the checkpoint (see `cairn_engine::deploy::journal`);
//! * `history/<project>/<stack>/<stack>-<unix nanos>.checkpoint.json` — previous checkpoints;
//! * `history/<project>/<stack>/<stack>-<unix nanos>.history.json` — one per update
//!   (`cairn stack history`);
//! * `stacks/<project>/<stack>.pulumi-tags` — the stack's tags (`{"version": 1, "tags": …}`);
//! * `locks/<project>/<stack>.lock` — locked (`flock`) by the one process allowed to write the
//!   stack, and naming it (see [`FileLock`]).
//!
//! Every checkpoint write is atomic (temporary file, fsync, rename, fsync of the directory), so a
//! crash leaves either the old or the new checkpoint, never a torn one. Journal lines are appended
//! and fdatasync'ed by the journal's writer, one append for every record queued meanwhile
//! (`cairn_engine::deploy::journal`: group commit).
//!
//! # Atomic, locked writes
//!
//! Checkpoints and settings files are written to a temp file, fsynced, renamed, and the directory
//! fsynced. Writers hold an exclusive advisory lock (`flock`) on `locks/<project>/<stack>.lock`,
//! which names the holder for the error a second writer sees. Why `flock` rather than `O_EXCL`
//! files judged stale by their pid: the kernel releases the lock when its holder dies however it
//! dies, so there is no staleness to judge and no takeover to race (judging, then unlinking, let a
//! delayed process remove a live lock); the descriptor is close-on-exec, so no child process keeps
//! it. Only the holder removes the file, while still holding the lock and only if the path still
//! names the file it locked (device and inode); a process that locks a file which was removed
//! meanwhile starts again, so two writers never both hold a stack. A process stopping at once (a
//! second Ctrl-C) removes its lock files first. `CAIRN_TEST_LOCK_PAUSE=<opened|held>:<file>` is a
//! test hook (it stops the process at that point until `<file>` exists) for the race tests in
//! `tests/e2e/lock.rs`.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use cairn_engine::deploy::journal::{PersistError, Persister};
use cairn_engine::text::quoted;

use crate::error::IoContext;
use crate::{
    BackendError, LockHolder, Result, StackWriter, Store, UpdateRecord, checkpoint_bytes_of_json,
    names,
};
use cairn_engine::text::error_chain;

/// A stack store rooted at a local directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    root: PathBuf,
    history_limit: usize,
}

impl FileStore {
    /// Opens the store named by a `file://` URL (`file://~/x` and `file://./x` are accepted).
    pub fn from_url(url: &str, cwd: &Path, history_limit: usize) -> Result<FileStore> {
        let Some(rest) = url.strip_prefix("file://") else {
            return Err(BackendError::Config(format!(
                "{url:?} is not a file:// URL"
            )));
        };
        let root = if let Some(home_relative) = rest.strip_prefix('~') {
            let home = std::env::var_os("HOME").ok_or_else(|| {
                BackendError::Config(format!("backend URL {url:?} uses ~ but HOME is not set"))
            })?;
            PathBuf::from(home).join(home_relative.trim_start_matches('/'))
        } else if rest.is_empty() {
            return Err(BackendError::Config(format!(
                "backend URL {url:?} names no directory"
            )));
        } else {
            cwd.join(rest)
        };
        Ok(FileStore {
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

    fn tags_path(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("stacks", project, stack, ".pulumi-tags")
    }

    fn lock_path(&self, project: &str, stack: &str) -> Result<PathBuf> {
        self.path("locks", project, stack, ".lock")
    }

    /// Atomically replaces the checkpoint (the caller holds the lock), keeping the previous one.
    fn write_checkpoint(&self, project: &str, stack: &str, bytes: &[u8]) -> Result<()> {
        let path = self.stack_path(project, stack)?;
        let previous = read_if_exists(&path)?;
        if previous.as_deref() == Some(bytes) {
            return Ok(());
        }
        if let Some(previous) = previous {
            self.archive(project, stack, &previous)?;
        }
        write_atomically(&path, bytes)
    }

    /// Keeps a previous checkpoint under the history folder and trims old versions.
    fn archive(&self, project: &str, stack: &str, bytes: &[u8]) -> Result<()> {
        if self.history_limit == 0 {
            return Ok(());
        }
        let dir = self.history_dir(project, stack)?;
        write_atomically(
            &dir.join(format!("{stack}-{:020}.checkpoint.json", unix_nanos())),
            bytes,
        )?;
        let mut versions: Vec<PathBuf> = fs::read_dir(&dir)
            .io_context(|| format!("listing {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".checkpoint.json"))
            })
            .collect();
        versions.sort();
        let excess = versions.len().saturating_sub(self.history_limit);
        for old in &versions[..excess] {
            fs::remove_file(old).io_context(|| format!("removing {}", old.display()))?;
        }
        Ok(())
    }

    fn remove_journal(&self, project: &str, stack: &str) -> Result<()> {
        remove_if_exists(&self.journal_path(project, stack)?)
    }
}

fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).io_context(|| format!("reading {}", path.display())),
    }
}

/// Removes a file (durably) if it exists.
fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).io_context(|| format!("removing {}", path.display())),
    }
    if let Some(dir) = path.parent() {
        sync_dir(dir).io_context(|| format!("syncing {}", dir.display()))?;
    }
    Ok(())
}

impl Store for FileStore {
    fn url(&self) -> String {
        format!("file://{}", self.root.display())
    }

    fn user(&self) -> Result<String> {
        Ok(crate::os_user())
    }

    fn checkpoint_location(&self, project: &str, stack: &str) -> String {
        self.stack_path(project, stack)
            .map_or_else(|e| e.to_string(), |p| p.display().to_string())
    }

    fn journal_location(&self, project: &str, stack: &str) -> String {
        self.journal_path(project, stack)
            .map_or_else(|e| e.to_string(), |p| p.display().to_string())
    }

    fn project_names(&self) -> Result<Vec<String>> {
        let dir = self.root.join("stacks");
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).io_context(|| format!("listing projects in {}", dir.display()));
            }
        };
        let mut projects = Vec::new();
        for entry in entries {
            let entry = entry.io_context(|| format!("listing projects in {}", dir.display()))?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if !is_dir {
                continue;
            }
            if !names::is_project_name(&name) {
                tracing::warn!(
                    "ignoring {}: {} is not a project name ({})",
                    entry.path().display(),
                    quoted(&name),
                    names::PROJECT_NAME_RULE
                );
                continue;
            }
            projects.push(name);
        }
        Ok(projects)
    }

    fn stack_names(&self, project: &str) -> Result<Vec<String>> {
        let dir = self.root.join("stacks").join(project);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).io_context(|| format!("listing stacks in {}", dir.display()));
            }
        };
        let mut stacks = Vec::new();
        for entry in entries {
            let path = entry
                .io_context(|| format!("listing stacks in {}", dir.display()))?
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
            stacks.push(name.to_owned());
        }
        Ok(stacks)
    }

    fn read_checkpoint(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        read_if_exists(&self.stack_path(project, stack)?)
    }

    fn read_journal(&self, project: &str, stack: &str) -> Result<Option<Vec<u8>>> {
        Ok(read_if_exists(&self.journal_path(project, stack)?)?.filter(|b| !b.is_empty()))
    }

    fn lock(
        &self,
        project: &str,
        stack: &str,
        holder: &LockHolder,
    ) -> Result<Box<dyn StackWriter>> {
        let lock = FileLock::acquire(self.lock_path(project, stack)?, stack, holder)?;
        Ok(Box::new(FileWriter {
            store: self.clone(),
            project: project.to_owned(),
            stack: stack.to_owned(),
            _lock: lock,
        }))
    }

    fn updates(&self, project: &str, stack: &str) -> Result<Vec<UpdateRecord>> {
        let dir = self.history_dir(project, stack)?;
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).io_context(|| format!("listing {}", dir.display())),
        };
        let mut updates = Vec::new();
        for entry in entries {
            let path = entry
                .io_context(|| format!("listing {}", dir.display()))?
                .path();
            if !path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".history.json"))
            {
                continue;
            }
            let bytes = fs::read(&path).io_context(|| format!("reading {}", path.display()))?;
            updates.push(serde_json::from_slice(&bytes).map_err(|source| {
                BackendError::Malformed {
                    what: format!("{} is not an update record", path.display()),
                    source,
                }
            })?);
        }
        Ok(updates)
    }

    fn tags(&self, project: &str, stack: &str) -> Result<BTreeMap<String, String>> {
        let path = self.tags_path(project, stack)?;
        match read_if_exists(&path)? {
            None => Ok(BTreeMap::new()),
            Some(bytes) => serde_json::from_slice::<TagsFile>(&bytes)
                .map(|file| file.tags)
                .map_err(|source| BackendError::Malformed {
                    what: format!("{} is not a stack tags file", path.display()),
                    source,
                }),
        }
    }

    fn set_tag(&self, project: &str, stack: &str, name: &str, value: Option<&str>) -> Result<()> {
        let mut tags = self.tags(project, stack)?;
        match value {
            Some(value) => tags.insert(name.to_owned(), value.to_owned()),
            None => tags.remove(name),
        };
        let path = self.tags_path(project, stack)?;
        if tags.is_empty() {
            return remove_if_exists(&path);
        }
        let file = TagsFile { version: 1, tags };
        write_atomically(&path, &serde_json::to_vec_pretty(&file)?)
    }
}

/// A stack's tags file, as Pulumi's DIY backends write it.
#[derive(serde::Serialize, serde::Deserialize)]
struct TagsFile {
    version: u32,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

/// The writes of one stack whose lock this process holds.
#[derive(Debug)]
struct FileWriter {
    store: FileStore,
    project: String,
    stack: String,
    _lock: FileLock,
}

impl StackWriter for FileWriter {
    fn write_checkpoint(&self, bytes: &[u8]) -> Result<()> {
        self.store
            .write_checkpoint(&self.project, &self.stack, bytes)?;
        self.store.remove_journal(&self.project, &self.stack)
    }

    fn write_checkpoint_with(
        &self,
        bytes: &[u8],
        other_stack: &str,
        other_bytes: &[u8],
    ) -> Result<()> {
        self.store
            .write_checkpoint(&self.project, other_stack, other_bytes)?;
        self.store.remove_journal(&self.project, other_stack)?;
        self.write_checkpoint(bytes)
    }

    fn drop_journal(&self) -> Result<()> {
        self.store.remove_journal(&self.project, &self.stack)
    }

    fn open_journal(&self) -> Result<Arc<dyn Persister>> {
        Ok(Arc::new(StackJournal::open(
            &self.store,
            &self.project,
            &self.stack,
        )?))
    }

    fn remove(&self) -> Result<()> {
        let (project, stack) = (&self.project, &self.stack);
        let path = self.store.stack_path(project, stack)?;
        if let Some(bytes) = read_if_exists(&path)? {
            self.store.archive(project, stack, &bytes)?;
        }
        fs::remove_file(&path).io_context(|| format!("removing {}", path.display()))?;
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        self.store.remove_journal(project, stack)?;
        remove_if_exists(&self.store.tags_path(project, stack)?)
    }

    fn record_update(&self, record: &UpdateRecord) -> Result<()> {
        let dir = self.store.history_dir(&self.project, &self.stack)?;
        let mut bytes = serde_json::to_vec_pretty(record)?;
        bytes.push(b'\n');
        write_atomically(
            &dir.join(format!("{}-{:020}.history.json", self.stack, unix_nanos())),
            &bytes,
        )
    }

    fn rename(&self, new_stack: &str, checkpoint: &[u8]) -> Result<()> {
        let store = &self.store;
        let project = &self.project;
        // The new stack first: a crash part-way leaves both names, never neither.
        write_atomically(&store.stack_path(project, new_stack)?, checkpoint)?;
        let old_history = store.history_dir(project, &self.stack)?;
        if old_history.is_dir() {
            let new_history = store.history_dir(project, new_stack)?;
            fs::create_dir_all(&new_history)
                .io_context(|| format!("creating {}", new_history.display()))?;
            for entry in fs::read_dir(&old_history)
                .io_context(|| format!("listing {}", old_history.display()))?
            {
                let from = entry?.path();
                let Some(name) = from.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                let Some(rest) = name.strip_prefix(&format!("{}-", self.stack)) else {
                    continue;
                };
                let to = new_history.join(format!("{new_stack}-{rest}"));
                fs::rename(&from, &to)
                    .io_context(|| format!("moving {} to {}", from.display(), to.display()))?;
            }
            sync_dir(&new_history)?;
            let _ = fs::remove_dir(&old_history);
        }
        let old_tags = store.tags_path(project, &self.stack)?;
        if old_tags.is_file() {
            let new_tags = store.tags_path(project, new_stack)?;
            fs::rename(&old_tags, &new_tags)
                .io_context(|| format!("moving {}", old_tags.display()))?;
        }
        store.remove_journal(project, &self.stack)?;
        remove_if_exists(&store.stack_path(project, &self.stack)?)
    }
}

/// The journal of one locked stack: lines are appended to an `O_APPEND` file opened once and
/// fdatasync'ed; saving writes the checkpoint atomically, then empties the journal.
struct StackJournal {
    store: FileStore,
    project: String,
    stack: String,
    path: PathBuf,
    file: Mutex<File>,
}

impl StackJournal {
    fn open(store: &FileStore, project: &str, stack: &str) -> Result<Self> {
        let path = store.journal_path(project, stack)?;
        let dir = path
            .parent()
            .ok_or_else(|| BackendError::NoParent(path.clone()))?;
        fs::create_dir_all(dir).io_context(|| format!("creating {}", dir.display()))?;
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
            .io_context(|| format!("creating the journal {}", path.display()))?;
        Ok(StackJournal {
            store: store.clone(),
            project: project.to_owned(),
            stack: stack.to_owned(),
            path,
            file: Mutex::new(file),
        })
    }
}

impl Persister for StackJournal {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        let _writing = crate::writes::section();
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(lines)
            .and_then(|()| file.sync_data())
            .map_err(|e| {
                PersistError::with_source(format!("appending to {}", self.path.display()), e)
            })
    }

    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        let _writing = crate::writes::section();
        // Held throughout, so no append lands between the checkpoint and the truncation.
        let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        checkpoint_bytes_of_json(&self.project, &self.stack, deployment)
            .and_then(|bytes| {
                self.store
                    .write_checkpoint(&self.project, &self.stack, &bytes)
            })
            .map_err(|e| PersistError::new(error_chain(&e)))?;
        // A crash before this leaves a journal the checkpoint already contains; it is
        // recognised by its manifest and dropped.
        file.set_len(0)
            .and_then(|()| file.sync_all())
            .map_err(|e| PersistError::with_source(format!("emptying {}", self.path.display()), e))
    }
}

/// Writes `bytes` to `path` so that readers see either the old or the new contents.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let _writing = crate::writes::section();
    let dir = path
        .parent()
        .ok_or_else(|| BackendError::NoParent(path.to_path_buf()))?;
    fs::create_dir_all(dir).io_context(|| format!("creating {}", dir.display()))?;
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
    result.io_context(|| format!("writing {}", path.display()))
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

/// The write lock of one stack: an exclusive advisory lock (`flock`) on
/// `locks/<project>/<stack>.lock`, held through the open file and released when dropped.
///
/// The kernel releases the lock when its holder exits, however it ends (kill -9 included), so a
/// lock file left behind is simply free to take: there is no staleness to judge and nothing to
/// take over. Only the holder removes the file, while still holding the lock, and only if the
/// path still names the file it locked; a process that locked a file which was removed (or
/// replaced) in the meantime starts again, so two processes never both hold the stack.
#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
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

impl FileLock {
    fn acquire(path: PathBuf, stack: &str, me: &LockHolder) -> Result<FileLock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).io_context(|| format!("creating {}", dir.display()))?;
        }
        for _ in 0..LOCK_ATTEMPTS {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .io_context(|| format!("opening lock {}", path.display()))?;
            crate::test_hook::pause("opened", &path);
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(held_by_another(&file, stack, &path));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).io_context(|| {
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
                    .io_context(|| format!("reading lock {}", path.display()))?,
            );
            match fs::symlink_metadata(&path) {
                Ok(meta) if identity(&meta) == mine => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(e).io_context(|| format!("reading lock {}", path.display()));
                }
            }
            write_holder(&file, me).io_context(|| format!("writing lock {}", path.display()))?;
            held().push((path.clone(), mine));
            crate::test_hook::pause("held", &path);
            return Ok(FileLock {
                path,
                _file: file,
                identity: mine,
            });
        }
        Err(BackendError::LockReplaced {
            stack: stack.to_owned(),
            path,
        })
    }
}

impl Drop for FileLock {
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
fn held_by_another(file: &File, stack: &str, path: &Path) -> BackendError {
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
        Some(holder) => holder.refusal(stack, &format!("lock file {}", path.display())),
        None => BackendError::Locked {
            stack: stack.to_owned(),
            holder: None,
            message: format!(
                "stack {stack:?} is locked by another process (lock file {}, which does not say \
                 which); wait for it to finish",
                path.display()
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backend, StackLock, Warning, Warnings, pending_warning};
    use cairn_engine::deploy::journal;
    use cairn_engine::state::{DeploymentV3, JsonMap, Manifest, Operation};
    use cairn_engine::text::error_chain;

    fn store(dir: &Path, history: usize) -> FileStore {
        FileStore {
            root: dir.to_path_buf(),
            history_limit: history,
        }
    }

    fn backend(dir: &Path, history: usize) -> Backend {
        Backend {
            store: Arc::new(store(dir, history)),
            warnings: Warnings::default(),
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
        let path = store(dir.path(), 1).lock_path("proj", "dev").unwrap();
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
        let path = store(dir.path(), 1).lock_path("proj", "dev").unwrap();
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
            ("postgres://h/db", None),
        ];
        for (url, expected) in cases {
            match (FileStore::from_url(url, cwd, 1), expected) {
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
    fn stack_with_two(backend: &Backend, lock: &StackLock) -> cairn_engine::state::Snapshot {
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
        let checkpoint = fs::read(store(dir.path(), 1).stack_path("proj", "dev").unwrap()).unwrap();
        let m = manager(base, backend.persister(&lock, "proj", "dev").unwrap());
        let id = m.begin(OperationKind::Creating, &resource("c")).unwrap();
        m.end(id, vec![Mutation::Append(resource("c"))]).unwrap();
        m.begin(OperationKind::Deleting, &resource("b")).unwrap();
        m.apply(vec![Mutation::RemoveBase(0)]).unwrap();
        drop(m); // the process dies: no finish

        let journal_path = store(dir.path(), 1).journal_path("proj", "dev").unwrap();
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
            fs::read(store(dir.path(), 1).stack_path("proj", "dev").unwrap()).unwrap(),
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
        // Read straight from the stack file's text, it decodes as the stored form does.
        let snapshot = backend
            .recover_snapshot(&lock, "proj", "dev", &Plain)
            .unwrap()
            .unwrap();
        assert_eq!(
            snapshot,
            cairn_engine::state::decode_deployment(again, Some(&Plain)).unwrap()
        );
    }

    #[test]
    fn pending_operations_are_reported_as_warnings_each_time_they_are_found() {
        use cairn_engine::state::OperationKind;

        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let backend = {
            let seen = seen.clone();
            backend(dir.path(), 5).with_warnings(move |w: &Warning| {
                seen.lock().unwrap().push(w.clone());
            })
        };
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let base = stack_with_two(&backend, &lock);
        backend.latest("proj", "dev").unwrap();
        assert!(seen.lock().unwrap().is_empty(), "nothing pending");
        let m = manager(base, backend.persister(&lock, "proj", "dev").unwrap());
        m.begin(OperationKind::Creating, &resource("c")).unwrap();
        drop(m); // the process dies: the create is pending

        backend.latest("proj", "dev").unwrap();
        backend.list_stacks("proj").unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], seen[1]);
        assert_eq!(seen[0].stack(), ("proj", "dev"));
        assert!(
            seen[0].to_string().starts_with(
                "warning: the last deployment of stack \"dev\" was interrupted; 1 operation was pending:\n    creating urn:pulumi:dev::proj::random:index/randomId:RandomId::c\n"
            ),
            "{}",
            seen[0]
        );
    }

    #[test]
    fn a_deployment_reads_an_interrupted_one_through_its_journal() {
        use cairn_engine::deploy::journal::Mutation;
        use cairn_engine::state::OperationKind;

        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        let lock = backend.lock("proj", "dev", "test").unwrap();
        let base = stack_with_two(&backend, &lock);
        let m = manager(base, backend.persister(&lock, "proj", "dev").unwrap());
        let id = m.begin(OperationKind::Creating, &resource("c")).unwrap();
        m.end(id, vec![Mutation::Append(resource("c"))]).unwrap();
        drop(m); // the process dies: no finish

        let snapshot = backend
            .recover_snapshot(&lock, "proj", "dev", &Plain)
            .unwrap()
            .unwrap();
        let urns: Vec<&str> = snapshot.resources.iter().map(|r| r.urn.name()).collect();
        assert_eq!(urns, ["c", "a", "b"]);
        let journal_path = store(dir.path(), 1).journal_path("proj", "dev").unwrap();
        assert!(!journal_path.exists(), "recovered into the checkpoint");
    }

    #[test]
    fn the_secrets_provider_is_read_without_the_resources() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 5);
        assert_eq!(
            backend.stored_secrets_provider("proj", "dev").unwrap(),
            None
        );
        let lock = backend.lock("proj", "dev", "test").unwrap();
        stack_with_two(&backend, &lock);
        let mut latest = backend.latest("proj", "dev").unwrap().unwrap();
        assert_eq!(
            backend.stored_secrets_provider("proj", "dev").unwrap(),
            None
        );
        let provider = cairn_engine::state::SecretsProvider {
            kind: "passphrase".into(),
            state: Some(serde_json::json!({"salt": "v1:abc:def"})),
        };
        latest.secrets_providers = Some(provider.clone());
        backend.save(&lock, "proj", "dev", latest).unwrap();
        assert_eq!(
            backend.stored_secrets_provider("proj", "dev").unwrap(),
            Some(provider)
        );
        let path = store(dir.path(), 1).stack_path("proj", "dev").unwrap();
        fs::write(&path, br#"{"version": 4, "checkpoint": {"stack": "s"}}"#).unwrap();
        let err = backend.stored_secrets_provider("proj", "dev").unwrap_err();
        assert!(
            error_chain(&err).contains("unsupported checkpoint version 4"),
            "{err}"
        );
    }

    /// Secrets as plain text: these stacks hold none to decrypt.
    struct Plain;

    impl cairn_engine::secrets::Crypter for Plain {
        fn encrypt(&self, plaintext: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
            Ok(plaintext.to_owned())
        }
        fn decrypt(&self, ciphertext: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
            Ok(ciphertext.to_owned())
        }
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
        let journal_path = store(dir.path(), 1).journal_path("proj", "dev").unwrap();
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
            backend
                .recover_snapshot(&lock, "proj", "dev", &Plain)
                .unwrap_err(),
        ] {
            let message = error_chain(&err);
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
        fs::write(
            store(dir.path(), 1).journal_path("proj", "dev").unwrap(),
            header,
        )
        .unwrap();
        let checkpoint = fs::read(store(dir.path(), 1).stack_path("proj", "dev").unwrap()).unwrap();
        for err in [
            backend.latest("proj", "dev").unwrap_err(),
            backend.recover(&lock, "proj", "dev").unwrap_err(),
        ] {
            let message = error_chain(&err);
            assert!(
                message.contains("dev.journal")
                    && message.contains("dev.json is unchanged")
                    && message.contains("2020-01-01T00:00:00Z")
                    && message.contains("2026-01-01T00:00:00Z"),
                "{message}"
            );
        }
        assert_eq!(
            fs::read(store(dir.path(), 1).stack_path("proj", "dev").unwrap()).unwrap(),
            checkpoint
        );
        assert!(
            backend.persister(&lock, "proj", "dev").is_err(),
            "not recovered"
        );
        // Removing the stack removes its journal too.
        backend.remove(&lock, "proj", "dev").unwrap();
        assert!(
            !store(dir.path(), 1)
                .journal_path("proj", "dev")
                .unwrap()
                .exists()
        );
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
