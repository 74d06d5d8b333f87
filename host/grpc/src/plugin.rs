//! Starting a plugin process the way the plugin protocol says: the engine address as the last
//! argument, the plugin's port on the first line of its stdout. Later stdout and stderr lines
//! are forwarded as log messages; the process is killed when the handle is dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A line a plugin wrote after its port: `(stderr?, line)`.
pub type OutputSink = Arc<dyn Fn(bool, &str) + Send + Sync>;

/// How long a plugin may take to print its port.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// The last stderr bytes kept for error messages.
const STDERR_TAIL: usize = 2000;

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
        format!("; its stderr ends with: {}", stderr.trim())
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
}

impl PluginCommand {
    pub fn new(name: impl Into<String>, program: impl AsRef<Path>) -> PluginCommand {
        PluginCommand {
            name: name.into(),
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
        }
    }
}

/// A running plugin.
pub struct PluginProcess {
    pub name: String,
    pub port: u16,
    child: Mutex<Option<Child>>,
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

    /// Waits up to `grace` for the process to exit, then kills it.
    pub async fn shutdown(&self, grace: Duration) {
        let child = lock(&self.child).take();
        if let Some(mut child) = child
            && tokio::time::timeout(grace, child.wait()).await.is_err()
        {
            let _ = child.kill().await;
        }
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.start_kill();
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

/// Forwards the lines of `stream` to `sink` (and to the stderr tail).
fn forward<R: AsyncBufRead + Unpin + Send + 'static>(
    stream: R,
    stderr: bool,
    sink: OutputSink,
    tail: Arc<Mutex<String>>,
) {
    tokio::spawn(async move {
        let mut lines = stream.lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if stderr {
                keep_tail(&tail, &line);
            }
            sink(stderr, &line);
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
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &command.dir {
        cmd.current_dir(dir);
    }
    for (k, v) in &command.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| PluginError::Spawn {
        plugin: command.name.clone(),
        path: command.program.display().to_string(),
        message: e.to_string(),
    })?;
    let tail = Arc::new(Mutex::new(String::new()));
    if let Some(stderr) = child.stderr.take() {
        forward(BufReader::new(stderr), true, sink.clone(), tail.clone());
    }
    let Some(stdout) = child.stdout.take() else {
        return Err(PluginError::ExitedEarly {
            plugin: command.name.clone(),
            stderr: String::new(),
        });
    };
    let mut reader = BufReader::new(stdout);
    let mut first = String::new();
    let read = tokio::time::timeout(timeout, reader.read_line(&mut first)).await;
    let port = match read {
        Err(_) => {
            let _ = child.start_kill();
            return Err(PluginError::NoPort {
                plugin: command.name.clone(),
                seconds: timeout.as_secs(),
            });
        }
        Ok(Ok(0)) | Ok(Err(_)) => {
            // Give stderr a moment to drain so the message can quote it.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            return Err(PluginError::ExitedEarly {
                plugin: command.name.clone(),
                stderr: lock(&tail).clone(),
            });
        }
        Ok(Ok(_)) => first.trim().parse::<u16>().map_err(|_| {
            let _ = child.start_kill();
            PluginError::Garbage {
                plugin: command.name.clone(),
                line: first.trim().chars().take(200).collect(),
            }
        })?,
    };
    // The reader, not its inner stream: lines already buffered after the port must not be lost.
    forward(reader, false, sink, tail.clone());
    Ok(PluginProcess {
        name: command.name.clone(),
        port,
        child: Mutex::new(Some(child)),
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
