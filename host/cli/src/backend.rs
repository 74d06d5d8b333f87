//! The `file://` state backend: stack checkpoints as JSON files under one root directory.
//!
//! Layout under the root:
//! * `stacks/<project>/<stack>.json` — the stack's checkpoint (`{"version": 3, "checkpoint": …}`);
//! * `history/<project>/<stack>/<stack>-<unix nanos>.checkpoint.json` — previous versions;
//! * `locks/<project>/<stack>.lock` — held by the one process allowed to write the stack.
//!
//! Every write is atomic (temporary file, fsync, rename, fsync of the directory), so a crash
//! leaves either the old or the new checkpoint, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use cairn_engine::state::{CheckpointV3, DEPLOYMENT_VERSION, DeploymentV3, VersionedCheckpoint};
use serde::{Deserialize, Serialize};

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

    fn stack_path(&self, project: &str, stack: &str) -> PathBuf {
        self.root
            .join("stacks")
            .join(project)
            .join(format!("{stack}.json"))
    }

    fn history_dir(&self, project: &str, stack: &str) -> PathBuf {
        self.root.join("history").join(project).join(stack)
    }

    fn lock_path(&self, project: &str, stack: &str) -> PathBuf {
        self.root
            .join("locks")
            .join(project)
            .join(format!("{stack}.lock"))
    }

    pub fn stack_exists(&self, project: &str, stack: &str) -> bool {
        self.stack_path(project, stack).is_file()
    }

    /// The project's stacks, sorted by name.
    pub fn list_stacks(&self, project: &str) -> Result<Vec<StackSummary>> {
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
            let checkpoint = self.load(project, name)?;
            let latest = checkpoint.checkpoint.latest.as_ref();
            stacks.push(StackSummary {
                name: name.to_owned(),
                last_update: latest.map(|d| d.manifest.time.clone()),
                resource_count: latest.map_or(0, |d| d.resources.len()),
            });
        }
        stacks.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(stacks)
    }

    /// Reads a stack's checkpoint.
    pub fn load(&self, project: &str, stack: &str) -> Result<VersionedCheckpoint> {
        let path = self.stack_path(project, stack);
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

    /// The stack's latest deployment, if it has one.
    pub fn latest(&self, project: &str, stack: &str) -> Result<Option<DeploymentV3>> {
        Ok(self.load(project, stack)?.checkpoint.latest)
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

    /// Atomically replaces a stack's deployment, keeping the previous version in its history.
    pub fn save(
        &self,
        lock: &StackLock,
        project: &str,
        stack: &str,
        deployment: DeploymentV3,
    ) -> Result<()> {
        lock.check(project, stack)?;
        let path = self.stack_path(project, stack);
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
        let dir = self.history_dir(project, stack);
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

    /// Deletes a stack's checkpoint (its history stays as a backup).
    pub fn remove(&self, lock: &StackLock, project: &str, stack: &str) -> Result<()> {
        lock.check(project, stack)?;
        let path = self.stack_path(project, stack);
        if let Ok(bytes) = fs::read(&path) {
            self.archive(project, stack, &bytes)?;
        }
        fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        Ok(())
    }

    /// Takes the stack's write lock, refusing if another live process holds it.
    pub fn lock(&self, project: &str, stack: &str, command: &str) -> Result<StackLock> {
        StackLock::acquire(self.lock_path(project, stack), project, stack, command)
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

/// The write lock of one stack, released when dropped.
#[derive(Debug)]
pub struct StackLock {
    path: PathBuf,
    project: String,
    stack: String,
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
        // Two attempts: the second after clearing a lock left by a process that died.
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let bytes = serde_json::to_vec(&me)?;
                    file.write_all(&bytes)
                        .and_then(|()| file.sync_all())
                        .with_context(|| format!("writing lock {}", path.display()))?;
                    return Ok(StackLock {
                        path,
                        project: project.to_owned(),
                        stack: stack.to_owned(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(&path)
                        .ok()
                        .and_then(|text| serde_json::from_str::<LockHolder>(&text).ok());
                    match holder {
                        Some(holder) if holder.host == me.host && !process_alive(holder.pid) => {
                            tracing::warn!(
                                "removing stale lock {} left by pid {} ({})",
                                path.display(),
                                holder.pid,
                                holder.command
                            );
                            fs::remove_file(&path).with_context(|| {
                                format!("removing stale lock {}", path.display())
                            })?;
                        }
                        Some(holder) => bail!(
                            "stack {stack:?} is locked by `{}` (pid {} on {}, user {}, since {}); \
                             wait for it to finish, or if that process is gone remove {}",
                            holder.command,
                            holder.pid,
                            holder.host,
                            holder.user,
                            holder.time,
                            path.display()
                        ),
                        None => bail!(
                            "stack {stack:?} is locked by another process (lock file {} is unreadable); \
                             if no cairn command is running on this stack, remove it",
                            path.display()
                        ),
                    }
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("creating lock {}", path.display()));
                }
            }
        }
        bail!("could not lock stack {stack:?} at {}", path.display())
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
        if let Err(e) = fs::remove_file(&self.path) {
            tracing::warn!("could not release lock {}: {e}", self.path.display());
        }
    }
}

/// Whether a process with this ID runs on this machine (conservatively true where unknown).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
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
    fn a_lock_left_by_a_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path(), 1);
        let path = backend.lock_path("proj", "dev");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let dead = LockHolder {
            pid: u32::MAX - 1,
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            user: "u".into(),
            command: "cairn up".into(),
            time: "t".into(),
        };
        fs::write(&path, serde_json::to_vec(&dead).unwrap()).unwrap();
        backend.lock("proj", "dev", "cairn refresh").unwrap();
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
}
