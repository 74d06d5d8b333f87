//! Programs written with the Pulumi Python and Node.js SDKs, run against the engine's monitor:
//! the engine's [`Program`] implemented by a language process talking gRPC.
//!
//! * Python: the PyPI package has no launcher, so a small bootstrap (run with the project's
//!   interpreter: `options.virtualenv`, else `python3`) configures the SDK's runtime settings —
//!   monitor and engine address, project, stack, dry-run, parallelism, organization, config and
//!   secret keys — and runs the program (`__main__.py` of the project, or `main`) inside its
//!   stack, as the SDK's own automation server does.
//! * Node.js: `@pulumi/pulumi/cmd/run` with its flags, started by a small bootstrap that puts
//!   the config into the process's `PULUMI_CONFIG` and `PULUMI_CONFIG_SECRET_KEYS` (where the
//!   SDK reads it) before it loads the run script.
//!
//! The config (secrets decrypted) reaches both bootstraps as JSON on the program's stdin: no
//! size limit (a single argument or environment string is limited to 128 KiB by `execve`), no
//! secret in a file or in another process's view of the command line or environment.
//!
//! The process runs in a process group of its own and dies with cairn ([`crate::child`]);
//! when the program exits, whatever it left running in its group is killed; when the
//! deployment stops waiting for it, the group is asked to stop and killed after
//! [`PROGRAM_GRACE`].
//!
//! The process's stdout and stderr are shown as the program's messages, lines cut at
//! `MAX_MESSAGE_BYTES` and up to the log limit (`CAIRN_GRPC_LOG_MB`), then dropped with a note;
//! a non-zero exit fails the program with the end of its stderr.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError};
use cairn_engine::limits::cap_message;
use cairn_engine::text::visible_text;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::child;
use crate::monitor::{Failures, program_config, serve_monitor};
use crate::wire::{self, Admit, LogBudget};

/// How long a program may keep running after one of its requests failed.
const FAILURE_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a program the deployment no longer waits for has to exit after SIGTERM, before
/// its process group is killed.
pub const PROGRAM_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The end of the program's stderr quoted in errors.
const STDERR_TAIL: usize = 4000;

/// Error messages the program logged that are kept for its failure message.
const KEPT_ERRORS: usize = 20;

/// How a language program is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Language {
    /// `python` with the bootstrap; `main` is a file or a directory with `__main__.py`.
    Python { python: PathBuf },
    /// `node <run script>` (the SDK's `cmd/run`). As Pulumi's Node.js language host does, a
    /// TypeScript program is compiled on the fly by the SDK (ts-node) when `typescript` (the
    /// runtime option, default true) is set, with `tsconfig` (the option) as its settings file.
    Node {
        node: PathBuf,
        run_script: PathBuf,
        typescript: bool,
        tsconfig: Option<String>,
    },
}

/// A program in a language process.
pub struct LanguageProgram {
    pub language: Language,
    /// The project directory (the process's working directory).
    pub dir: PathBuf,
    /// The program: a file or directory relative to `dir` (default: `dir` itself).
    pub main: Option<String>,
    pub parallel: usize,
    pub events: Arc<dyn EventSink>,
}

/// What a program run is told besides its config: where it deploys and whether it previews.
pub struct RunSettings<'a> {
    pub project: &'a str,
    pub stack: &'a str,
    pub preview: bool,
}

impl RunSettings<'_> {
    fn of(monitor: &Monitor) -> RunSettings<'_> {
        RunSettings {
            project: monitor.project(),
            stack: monitor.stack(),
            preview: monitor.is_preview(),
        }
    }
}

/// Configures the Python SDK's runtime and runs the program in its stack.
const PYTHON_BOOTSTRAP: &str = r#"
import asyncio, json, os, runpy, sys, traceback
from pulumi.errors import RunError
from pulumi.runtime import reset_options, run_in_stack, set_all_config

env = os.environ
reset_options(
    project=env["CAIRN_PROJECT"],
    monitor_address=env["CAIRN_MONITOR"],
    engine_address=env["CAIRN_ENGINE"],
    stack=env["CAIRN_STACK"],
    parallel=int(env["CAIRN_PARALLEL"]),
    preview=env["CAIRN_DRY_RUN"] == "true",
    organization=env["CAIRN_ORGANIZATION"],
)
settings = json.loads(sys.stdin.buffer.read() or b"{}")
set_all_config(settings.get("config", {}), settings.get("secretKeys", []))
main = env["CAIRN_MAIN"]
sys.path.insert(0, main if os.path.isdir(main) else os.path.dirname(os.path.abspath(main)))
sys.argv = [main]

def program():
    runpy.run_path(main, run_name="__main__")

def module_path(path):
    path, ext = os.path.splitext(path)
    return os.path.abspath(path if ext else os.path.join(path, "__main__"))

def user_traceback():
    # As Pulumi's language host does: the traceback from the program's first frame on, not
    # the SDK's and the bootstrap's frames that lead to it.
    frames = traceback.extract_tb(sys.exc_info()[2])
    for i, frame in enumerate(frames):
        if module_path(frame.filename) == module_path(main):
            return traceback.format_exc(limit=-(len(frames) - i))
    return traceback.format_exc()

loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
try:
    loop.run_until_complete(run_in_stack(program))
except RunError as e:
    # As Pulumi's language host does: an error diagnostic of the stack (stderr would show it
    # as a warning).
    try:
        from pulumi import log
        log.error(str(e))
    except BaseException:
        print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
except BaseException:
    # As Pulumi's language host does: the traceback is logged once, as the stack's error.
    try:
        from pulumi import log
        log.error("Program failed with an unhandled exception:\n" + user_traceback())
    except BaseException:
        traceback.print_exc()
    sys.exit(32)
finally:
    sys.stdout.flush()
    sys.stderr.flush()
"#;

/// Reads the config from stdin into the environment the Node.js SDK reads it from, then runs
/// the SDK's run script (`process.argv[1]`) with the flags that follow it.
/// What both Node.js bootstraps (a program's, a policy pack's) start with: the settings JSON
/// read from stdin to its end (a pipe may answer EAGAIN), and its config put where the SDK
/// reads it.
macro_rules! node_settings_from_stdin {
    () => {
        r#"
"use strict";
const fs = require("fs");
const path = require("path");
const chunks = [];
const buffer = Buffer.alloc(1 << 16);
for (;;) {
    let n;
    try {
        n = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (e) {
        if (e.code === "EAGAIN") continue;
        if (e.code === "EOF") break;
        throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
}
const settings = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
process.env.PULUMI_CONFIG = JSON.stringify(settings.config || {});
process.env.PULUMI_CONFIG_SECRET_KEYS = JSON.stringify(settings.secretKeys || []);
// Node.js 20's util.inspect with colours never returns (it grows a string until memory runs
// out, ~45 s and 1.6 GB) for an error whose stack names a file directly in a scope directory of
// node_modules, such as the Pulumi SDK's source-mapped `.../node_modules/@pulumi/resource.ts:1:2)`;
// the SDK inspects a program's uncaught error with colours to report it. Such an error is
// inspected without colours, which are not shown anyway.
{
    const util = require("util");
    const inspect = util.inspect;
    const scopeFile = /[\\/]node_modules[\\/]@[^\\/]+[\\/][^\\/]+$/m;
    const wrapped = (value, ...rest) => {
        const options = rest[0];
        if (rest.length === 1 && options !== null && typeof options === "object" && options.colors
            && value instanceof Error && typeof value.stack === "string" && scopeFile.test(value.stack)) {
            return inspect(value, { ...options, colors: false });
        }
        return inspect(value, ...rest);
    };
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(inspect));
    util.inspect = wrapped;
}
"#
    };
}
pub(crate) use node_settings_from_stdin;

const NODE_BOOTSTRAP: &str = concat!(
    node_settings_from_stdin!(),
    r#"// Processes the program forks must not run this bootstrap again.
process.execArgv = [];
require(path.resolve(process.argv[1]));
"#
);

/// Passes events on, keeping the messages logged at error severity.
struct ErrorLog {
    inner: Arc<dyn EventSink>,
    errors: Mutex<Vec<String>>,
}

impl EventSink for ErrorLog {
    fn emit(&self, event: EngineEvent) {
        if let EngineEvent::Diagnostic {
            severity: Severity::Error,
            message,
            ..
        } = &event
        {
            let mut errors = lock(&self.errors);
            if errors.len() < KEPT_ERRORS {
                errors.push(message.clone());
            }
        }
        self.inner.emit(event);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LanguageProgram {
    fn name(&self) -> &'static str {
        match self.language {
            Language::Python { .. } => "python",
            Language::Node { .. } => "nodejs",
        }
    }

    /// The program's process, to run against the monitor (and engine) served at `address`,
    /// its config JSON (`{"config": …, "secretKeys": […]}`) to be written to its stdin. The
    /// SDK bench runs it against a monitor of its own.
    pub fn command(&self, run: &RunSettings<'_>, address: &str) -> Command {
        let main = self.main.clone().unwrap_or_else(|| ".".to_owned());
        let dry_run = if run.preview { "true" } else { "false" };
        let mut cmd = match &self.language {
            Language::Python { python } => {
                let mut cmd = Command::new(python);
                cmd.args(["-u", "-c", PYTHON_BOOTSTRAP])
                    .env("CAIRN_MAIN", self.dir.join(&main))
                    .env("PYTHONUNBUFFERED", "1");
                cmd
            }
            Language::Node {
                node,
                run_script,
                typescript,
                tsconfig,
            } => {
                let mut cmd = Command::new(node);
                // The SDK's cmd/run reads these (Pulumi's language host sets them).
                cmd.env_remove("PULUMI_NODEJS_TYPESCRIPT")
                    .env_remove("PULUMI_NODEJS_TSCONFIG_PATH");
                if *typescript {
                    cmd.env("PULUMI_NODEJS_TYPESCRIPT", "true");
                }
                if let Some(tsconfig) = tsconfig {
                    cmd.env("PULUMI_NODEJS_TSCONFIG_PATH", tsconfig);
                }
                cmd.args(["-e", NODE_BOOTSTRAP])
                    .arg(run_script)
                    .args(["--monitor", address, "--engine", address])
                    .args(["--project", run.project, "--stack", run.stack])
                    .arg("--pwd")
                    .arg(&self.dir)
                    .args(["--parallel", &self.parallel.to_string()])
                    .args(["--organization", "organization"]);
                if run.preview {
                    cmd.arg("--dry-run");
                }
                cmd.arg(&main);
                cmd
            }
        };
        cmd.current_dir(&self.dir)
            .env("CAIRN_PROJECT", run.project)
            .env("CAIRN_STACK", run.stack)
            .env("CAIRN_MONITOR", address)
            .env("CAIRN_ENGINE", address)
            .env("CAIRN_PARALLEL", self.parallel.to_string())
            .env("CAIRN_DRY_RUN", dry_run)
            .env("CAIRN_ORGANIZATION", "organization")
            // The config comes on stdin; none inherited from cairn's environment may mix in.
            .env_remove("PULUMI_CONFIG")
            .env_remove("PULUMI_CONFIG_SECRET_KEYS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

#[async_trait]
impl Program for LanguageProgram {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let failures = Arc::new(Failures::default());
        // Errors the program logs through the engine (SDKs report their own failures that way,
        // then exit with status 32) go into the program's error too.
        let logged = Arc::new(ErrorLog {
            inner: self.events.clone(),
            errors: Mutex::new(Vec::new()),
        });
        let served = serve_monitor(
            monitor.clone(),
            self.parallel,
            logged.clone(),
            failures.clone(),
        )
        .await
        .map_err(|e| ProgramError::new(e.to_string()))?;
        let (mut child, group) = child::spawn(
            self.command(&RunSettings::of(&monitor), &served.target()),
        )
        .map_err(|e| {
            ProgramError::new(format!(
                "starting the {} program: {e} (is {} installed?)",
                self.name(),
                match &self.language {
                    Language::Python { python } => python.display().to_string(),
                    Language::Node { node, .. } => node.display().to_string(),
                }
            ))
        })?;
        // Until the program has exited, leaving (the deployment stopped waiting) stops it.
        let group = group.with_grace_on_drop(PROGRAM_GRACE);
        if let Some(mut stdin) = child.stdin.take() {
            let (config, secret_keys) = program_config(&monitor);
            let settings = serde_json::json!({ "config": config, "secretKeys": secret_keys });
            let bytes = serde_json::to_vec(&settings).unwrap_or_else(|_| b"{}".to_vec());
            // A program that exits without reading it fails on its own; nothing to report.
            tokio::spawn(async move {
                let _ = stdin.write_all(&bytes).await;
                let _ = stdin.shutdown().await;
            });
        }
        let tail = Arc::new(Mutex::new(String::new()));
        let budget = Arc::new(LogBudget::from_settings());
        let mut readers = Vec::new();
        for (stream, stderr) in [
            (
                child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
                false,
            ),
            (
                child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
                true,
            ),
        ] {
            let Some(stream) = stream else { continue };
            let events = self.events.clone();
            let tail = tail.clone();
            let budget = budget.clone();
            let name = self.name();
            readers.push(tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                while let Ok(Some(line)) = wire::read_line(&mut stream).await {
                    if stderr {
                        let mut t = lock(&tail);
                        t.push_str(&line);
                        t.push('\n');
                        if t.len() > STDERR_TAIL {
                            let cut = t.len() - STDERR_TAIL;
                            let cut = (cut..t.len()).find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                            t.drain(..cut);
                        }
                    }
                    let (severity, message) = match budget.admit(line.len()) {
                        Admit::Show if stderr => (Severity::Warning, line),
                        Admit::Show => (Severity::Info, line),
                        Admit::FirstDropped => (
                            Severity::Warning,
                            budget.note(&format!("the {name} program's output")),
                        ),
                        Admit::Dropped => continue,
                    };
                    events.emit(EngineEvent::Diagnostic {
                        severity,
                        urn: None,
                        message,
                    });
                }
            }));
        }
        // A program normally exits by itself once a request it made failed; one that does not
        // (some SDK versions keep running) is stopped after a grace period.
        let stuck = async {
            let first = failures.first().await;
            tokio::time::sleep(FAILURE_GRACE).await;
            first
        };
        let status = tokio::select! {
            status = child.wait() => status.map_err(|e| {
                ProgramError::new(format!("waiting for the {} program: {e}", self.name()))
            })?,
            first = stuck => {
                group.kill();
                let _ = child.wait().await;
                for reader in readers {
                    let _ = reader.await;
                }
                return Err(ProgramError::new(format!(
                    "the {} program did not exit after a request failed; it was stopped. The failure: {first}",
                    self.name()
                )));
            }
        };
        // What the program left running (in its group) would hold its output open.
        group.kill();
        for reader in readers {
            let _ = reader.await;
        }
        drop(served);
        if status.success() {
            return Ok(());
        }
        let errors = lock(&logged.errors).clone();
        if !errors.is_empty() {
            // The errors themselves are shown once, as diagnostics; this names the failure by
            // its last line that is not a stack frame (a Python traceback's exception, a
            // JavaScript stack's `Error: …`).
            let lines: Vec<String> = errors
                .iter()
                .flat_map(|e| e.lines())
                .map(|line| without_colours(line).trim().to_owned())
                .collect();
            let last = lines
                .iter()
                .rev()
                .find(|line| !line.is_empty() && !line.starts_with("at "))
                .map_or("", String::as_str);
            let more = if errors.len() > 1 || errors[0].trim().contains('\n') {
                " (the full error is in the diagnostics above)"
            } else {
                ""
            };
            return Err(ProgramError::new(format!(
                "the {} program failed: {}{more}",
                self.name(),
                cap_message(last)
            )));
        }
        let tail = visible_text(lock(&tail).trim()).into_owned();
        Err(ProgramError::new(format!(
            "the {} program exited with {status}{}",
            self.name(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(":\n{tail}")
            }
        )))
    }
}

/// `line` without the SGR colour sequences (`ESC [ … m`) a runtime may put in its errors
/// (Node.js colours stack frames).
fn without_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                out.push('\x1b');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::NODE_BOOTSTRAP;

    /// The bootstrap's guard against Node.js 20's coloured `util.inspect` never returning for an
    /// error whose stack names a file directly in a node_modules scope directory (what the Pulumi
    /// SDK does with a program's uncaught error): inspected, such an error comes back at once,
    /// as text, and other values keep their colours.
    #[test]
    fn the_node_bootstrap_inspects_scope_file_errors_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("inspect.js");
        std::fs::write(
            &script,
            r#"
const util = require("util");
const e = new Error("This is a test error");
e.stack = "Error: This is a test error\n    at f (/p/node_modules/@pulumi/resource.ts:1598:22)";
const text = util.inspect(e, { colors: true });
if (!text.includes("@pulumi/resource.ts:1598:22")) throw new Error("lost the stack: " + text);
if (!util.inspect("s", { colors: true }).includes("\u001b[")) throw new Error("colours lost");
if (util.inspect.custom === undefined) throw new Error("util.inspect.custom lost");
console.log("inspected");
"#,
        )
        .unwrap();
        let mut child = Command::new("node")
            .args(["-e", NODE_BOOTSTRAP])
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node (Node.js) must be installed for this test");
        child.stdin.take().unwrap().write_all(b"{}").unwrap();
        // Unguarded, node grows one string for ~45 s until it runs out of memory.
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("util.inspect did not return within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("inspected"),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
