//! Starting a plugin process the way the plugin protocol says: the engine address as the last
//! argument, the plugin's port on the first line of its stdout. Later stdout and stderr lines
//! are forwarded as log messages. The plugin runs in a process group of its own and dies with
//! cairn ([`crate::child`]); the group is killed when the handle is dropped.
//!
//! What a plugin writes is bounded: the port line is read up to [`MAX_PORT_LINE`] bytes, later
//! lines are cut at `MAX_MESSAGE_BYTES`, and each plugin's output is shown up to the log limit
//! (`CAIRN_GRPC_LOG_MB`), then dropped with a note (the pipes are still drained, so the plugin
//! never blocks on them). On Linux, the port must be one the plugin's own processes listen on.
//!
//! # A plugin that misbehaves is named
//!
//! Start-up problems (no port, garbage, early exit, missing binary) and deaths mid-call become
//! errors naming the plugin, quoting the end of its stderr; a language program that keeps running
//! after a failed request is stopped after a grace period. A plugin that dies, or whose connection
//! breaks, during `Create`, `Update` or `Delete` (outside a preview) yields
//! `ProviderError::OutcomeUnknown`: the operation stays pending.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::text::visible_text;
use tokio::io::{AsyncBufRead, BufReader};
use tokio::process::{Child, Command};

use crate::child::{self, ProcessGroup};
use crate::wire::{self, Admit, LogBudget};

/// A line a plugin wrote after its port: `(stderr?, line)`.
pub type OutputSink = Arc<dyn Fn(bool, &str) + Send + Sync>;

/// How long a plugin may take to print its port.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// The last stderr bytes kept for error messages.
const STDERR_TAIL: usize = 2000;

/// The longest first line (the port) read from a plugin.
pub const MAX_PORT_LINE: usize = 1024;

/// Why a plugin could not be started.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    #[error("starting plugin {plugin} ({path}): {message}")]
    Spawn {
        plugin: String,
        path: String,
        message: String,
    },
    #[error("plugin {plugin} exited before printing its port{}", describe_tail(.stderr))]
    ExitedEarly { plugin: String, stderr: String },
    #[error("plugin {plugin} printed {line:?} instead of its port number on its first line")]
    Garbage { plugin: String, line: String },
    #[error("plugin {plugin} did not print its port within {seconds} s")]
    NoPort { plugin: String, seconds: u64 },
    #[error(
        "plugin {plugin} printed port {port}, but no process of the plugin listens there (another program does); refusing to talk to it"
    )]
    ForeignPort { plugin: String, port: u16 },
    #[error(
        "plugin {plugin} printed port {port}, but what answers there does not speak the plugin protocol: {message}"
    )]
    NotAPlugin {
        plugin: String,
        port: u16,
        message: String,
    },
    #[error("connecting to plugin {plugin} at port {port}: {message}")]
    Connect {
        plugin: String,
        port: u16,
        message: String,
    },
}

fn describe_tail(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with: {}", visible_text(stderr.trim()))
    }
}

/// What to run: a program and its leading arguments (the engine address is appended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCommand {
    /// The plugin's name for messages (`random`, `pulumi-resource-random`).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The working directory (the project directory for dynamic providers).
    pub dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Written to the plugin's stdin, which is then closed (a policy pack's configuration;
    /// nothing in its arguments or environment). `None`: stdin is empty.
    pub stdin: Option<Vec<u8>>,
}

impl PluginCommand {
    pub fn new(name: impl Into<String>, program: impl AsRef<Path>) -> PluginCommand {
        PluginCommand {
            name: name.into(),
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
            stdin: None,
        }
    }
}

/// A running plugin.
pub struct PluginProcess {
    pub name: String,
    pub port: u16,
    child: Mutex<Option<Child>>,
    /// The plugin's process group: killed when the handle is dropped.
    group: ProcessGroup,
    stderr_tail: Arc<Mutex<String>>,
}

impl PluginProcess {
    /// The end of what the plugin wrote to stderr (for error messages).
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr_tail).clone()
    }

    /// The exit status if the process has exited.
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        lock(&self.child)
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// The plugin's process ID (also its process group's).
    pub fn pid(&self) -> u32 {
        self.group.id()
    }

    /// Asks the plugin's process group to stop (SIGTERM), waits up to `grace` for the plugin
    /// to exit, then kills what is left of the group.
    pub async fn shutdown(&self, grace: Duration) {
        let child = lock(&self.child).take();
        match child {
            Some(mut child) => self.group.stop(&mut child, grace).await,
            None => self.group.kill(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn keep_tail(tail: &Mutex<String>, line: &str) {
    let mut tail = lock(tail);
    tail.push_str(line);
    tail.push('\n');
    if tail.len() > STDERR_TAIL {
        let cut = tail.len() - STDERR_TAIL;
        let cut = (cut..tail.len())
            .find(|i| tail.is_char_boundary(*i))
            .unwrap_or(0);
        tail.drain(..cut);
    }
}

/// Forwards the lines of `stream` to `sink` (and to the stderr tail), within `budget` (shared
/// by the plugin's stdout and stderr); what is over the budget is read and dropped.
fn forward<R: AsyncBufRead + Unpin + Send + 'static>(
    mut stream: R,
    stderr: bool,
    sink: OutputSink,
    tail: Arc<Mutex<String>>,
    budget: Arc<LogBudget>,
    plugin: String,
) {
    tokio::spawn(async move {
        while let Ok(Some(line)) = wire::read_line(&mut stream).await {
            if stderr {
                keep_tail(&tail, &line);
            }
            match budget.admit(line.len()) {
                Admit::Show => sink(stderr, &line),
                Admit::FirstDropped => {
                    sink(true, &budget.note(&format!("plugin {plugin}'s output")));
                }
                Admit::Dropped => {}
            }
        }
    });
}

/// Starts `command` with `engine_address` as its last argument and waits (up to `timeout`) for
/// its port.
pub async fn launch(
    command: &PluginCommand,
    engine_address: &str,
    timeout: Duration,
    sink: OutputSink,
) -> Result<PluginProcess, PluginError> {
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args)
        .arg(engine_address)
        .stdin(if command.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &command.dir {
        cmd.current_dir(dir);
    }
    for (k, v) in &command.env {
        cmd.env(k, v);
    }
    // The group is killed if start-up fails (when it goes out of scope).
    let (mut child, group) = child::spawn(cmd).map_err(|e| PluginError::Spawn {
        plugin: command.name.clone(),
        path: command.program.display().to_string(),
        message: e.to_string(),
    })?;
    if let (Some(bytes), Some(mut stdin)) = (command.stdin.clone(), child.stdin.take()) {
        // A plugin that exits without reading it fails on its own; nothing to report.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
    let tail = Arc::new(Mutex::new(String::new()));
    let budget = Arc::new(LogBudget::from_settings());
    if let Some(stderr) = child.stderr.take() {
        forward(
            BufReader::new(stderr),
            true,
            sink.clone(),
            tail.clone(),
            budget.clone(),
            command.name.clone(),
        );
    }
    let Some(stdout) = child.stdout.take() else {
        return Err(PluginError::ExitedEarly {
            plugin: command.name.clone(),
            stderr: String::new(),
        });
    };
    let mut reader = BufReader::new(stdout);
    let read =
        tokio::time::timeout(timeout, wire::read_line_within(&mut reader, MAX_PORT_LINE)).await;
    let port = match read {
        Err(_) => {
            let _ = child.start_kill();
            return Err(PluginError::NoPort {
                plugin: command.name.clone(),
                seconds: timeout.as_secs(),
            });
        }
        Ok(Ok(None)) | Ok(Err(_)) => {
            // Give stderr a moment to drain so the message can quote it.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            return Err(PluginError::ExitedEarly {
                plugin: command.name.clone(),
                stderr: lock(&tail).clone(),
            });
        }
        Ok(Ok(Some(first))) => match first.trim().parse::<u16>() {
            Ok(port) if port != 0 => port,
            _ => {
                let _ = child.start_kill();
                return Err(PluginError::Garbage {
                    plugin: command.name.clone(),
                    line: first.trim().chars().take(200).collect(),
                });
            }
        },
    };
    if let Some(pid) = child.id()
        && owner::listens(pid, port) == Some(false)
    {
        let _ = child.start_kill();
        return Err(PluginError::ForeignPort {
            plugin: command.name.clone(),
            port,
        });
    }
    // The reader, not its inner stream: lines already buffered after the port must not be lost.
    forward(
        reader,
        false,
        sink,
        tail.clone(),
        budget,
        command.name.clone(),
    );
    Ok(PluginProcess {
        name: command.name.clone(),
        port,
        child: Mutex::new(Some(child)),
        group,
        stderr_tail: tail,
    })
}

/// The longest a single call to a plugin may take (`CAIRN_PLUGIN_CALL_TIMEOUT`, seconds;
/// default an hour): a plugin that hangs fails the call instead of the deployment hanging.
pub fn call_timeout() -> Duration {
    std::env::var("CAIRN_PLUGIN_CALL_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(3600), Duration::from_secs_f64)
}

/// Connects to a plugin's port, retrying while it starts listening.
pub async fn connect(
    plugin: &str,
    port: u16,
    timeout: Duration,
) -> Result<tonic::transport::Channel, PluginError> {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .map_err(|e| PluginError::Connect {
            plugin: plugin.to_owned(),
            port,
            message: e.to_string(),
        })?
        .connect_timeout(Duration::from_secs(5))
        .timeout(call_timeout())
        .http2_max_header_list_size(wire::MAX_HEADER_LIST_BYTES)
        .tcp_nodelay(true);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut delay = Duration::from_millis(10);
    loop {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(PluginError::Connect {
                    plugin: plugin.to_owned(),
                    port,
                    message: e.to_string(),
                });
            }
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// Who listens on a loopback port, from `/proc` (Linux): whether it is the plugin process or
/// one of its descendants. `None` when it cannot be told (no `/proc`, the listener not found),
/// so elsewhere the check is skipped rather than refusing working plugins.
mod owner {
    use std::collections::{HashMap, HashSet};

    /// Whether a process in the tree rooted at `pid` holds the socket listening on `port`.
    pub fn listens(pid: u32, port: u16) -> Option<bool> {
        let inodes = listening_inodes(port)?;
        if inodes.is_empty() {
            return None;
        }
        let tree = tree(pid);
        let mut readable = false;
        for process in &tree {
            let Ok(fds) = std::fs::read_dir(format!("/proc/{process}/fd")) else {
                continue;
            };
            readable = true;
            for fd in fds.flatten() {
                if let Ok(target) = std::fs::read_link(fd.path())
                    && let Some(inode) = target
                        .to_str()
                        .and_then(|t| t.strip_prefix("socket:["))
                        .and_then(|t| t.strip_suffix(']'))
                        .and_then(|t| t.parse::<u64>().ok())
                    && inodes.contains(&inode)
                {
                    return Some(true);
                }
            }
        }
        readable.then_some(false)
    }

    /// The inodes of sockets in the LISTEN state on `port` (IPv4 and IPv6).
    fn listening_inodes(port: u16) -> Option<HashSet<u64>> {
        let mut inodes = HashSet::new();
        let mut any = false;
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(table) else {
                continue;
            };
            any = true;
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                let (Some(local), Some(state), Some(inode)) =
                    (fields.get(1), fields.get(3), fields.get(9))
                else {
                    continue;
                };
                let listening = *state == "0A";
                let on_port = local
                    .rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                    == Some(port);
                if listening
                    && on_port
                    && let Ok(inode) = inode.parse::<u64>()
                    && inode != 0
                {
                    inodes.insert(inode);
                }
            }
        }
        any.then_some(inodes)
    }

    /// `pid` and its descendants.
    fn tree(pid: u32) -> Vec<u32> {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(child) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                    continue;
                };
                // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
                let parent = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<u32>().ok());
                if let Some(parent) = parent {
                    children.entry(parent).or_default().push(child);
                }
            }
        }
        let mut out = vec![pid];
        let mut i = 0;
        while i < out.len() {
            if let Some(kids) = children.get(&out[i]) {
                out.extend(
                    kids.iter()
                        .copied()
                        .filter(|k| !out.contains(k))
                        .collect::<Vec<_>>(),
                );
            }
            i += 1;
        }
        out
    }
}
