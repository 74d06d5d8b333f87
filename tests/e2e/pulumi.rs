//! Pulumi's integration tests, ported (`tests/pulumi`, one directory per case; the format is
//! defined in its README): one test runs every case, a few at a time, and reports every case
//! that fails with its step, what was expected and the tail of the command's output.
//!
//! `CAIRN_PULUMI_CASES=a,b` runs only the cases whose names contain one of the words;
//! `CAIRN_PULUMI_PENDING=1` runs the pending cases too (reported, never failing the test);
//! `CAIRN_PULUMI_JOBS=N` runs N cases at a time (default 2).
//!
//! # The ported suite makes ProgramTest's checks itself
//!
//! Pulumi's Go tests rely on ProgramTest for a preview before each update, an export/import round
//! trip, an empty preview and update, and a refresh that finds nothing. `tests/e2e/pulumi.rs` makes
//! them by default for every case that follows `tests/integration`, and a case turns one off with
//! the name of the Go option its test sets. This way every case checks what its original checked,
//! not only the facts it states.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::support::{
    Sandbox, exact_version, example_wasm, node_modules, node_sdk_modules, python, repo, test_wasm,
};

/// The longest one command of a case may run.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);
/// Lines of a command's output quoted in a failure.
const TAIL_LINES: usize = 40;
/// The stack every step runs in unless it names another.
const STACK: &str = "dev";
/// The directory of tests/pulumi whose `python/` and `nodejs/` modules (the stand-ins for the
/// Go test providers' resources) every step of a case of that runtime gets beside its program.
const LIB: &str = "lib";

/// `case.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// The original: its path in pulumi/pulumi and the Go test function.
    follows: String,
    runtime: Runtime,
    /// A Node.js case's own `@pulumi/pulumi` version (exact), installed once into
    /// `target/nodeenv-<version>` and used by this case only (default: the shared SDK).
    #[serde(default)]
    node_sdk: Option<String>,
    /// The project name when a step has no `Pulumi.yaml` (default: the case's directory name).
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    config: Config,
    /// Wasm providers (components of tests/guests, or the examples' `random`/`file`).
    #[serde(default)]
    providers: Vec<String>,
    /// Plaintexts the program makes secret, for the secret scan (secret config is added).
    #[serde(default)]
    secrets: Vec<String>,
    /// Secret config values the program itself reveals (as the original does): the secret
    /// scan does not look for them.
    #[serde(default)]
    revealed: Vec<String>,
    steps: Vec<Step>,
    /// Destroy the stacks after the last step, expecting success (default true).
    #[serde(default = "yes")]
    destroy: bool,
    /// A known failure of Cairn: the case is listed, not run.
    #[serde(default)]
    pending: Option<String>,
    /// The checks Pulumi's ProgramTest makes around a test's own (each on unless the Go test
    /// turns it off, under the name of its option).
    #[serde(default)]
    program_test: ProgramTest,
}

fn yes() -> bool {
    true
}

impl Case {
    /// Whether the case follows a language conformance test (`pulumi-test-language`) rather
    /// than one run by ProgramTest.
    fn follows_language_test(&self) -> bool {
        self.follows.starts_with("pulumi-test-language")
    }
}

/// ProgramTest's checks (pkg/testing/integration/program.go): a preview before every update
/// of a program expected to succeed; after the first step's update, a round trip of the state
/// through `stack export` / `stack import`, an empty preview and update that change nothing,
/// and a refresh that finds nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ProgramTest {
    /// ProgramTest's `Quick`: none of these checks.
    quick: bool,
    skip_preview: bool,
    skip_export_import: bool,
    skip_empty_preview_update: bool,
    allow_empty_preview_changes: bool,
    allow_empty_update_changes: bool,
    skip_refresh: bool,
    expect_refresh_changes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Runtime {
    Python,
    Nodejs,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Runtime::Python => "python",
            Runtime::Nodejs => "nodejs",
        }
    }
}

/// Configuration in the order it is set: plain keys, and the groups `secret`, `path` and
/// `secret_path` (each a mapping of keys to values).
#[derive(Debug, Default, Deserialize)]
#[serde(transparent)]
struct Config(serde_json::Map<String, Value>);

/// One `cairn config set`.
struct Setting {
    key: String,
    value: String,
    secret: bool,
    path: bool,
}

impl Config {
    fn settings(&self) -> Result<Vec<Setting>, String> {
        let scalar = |key: &str, value: &Value| match value {
            Value::String(s) => Ok(s.clone()),
            Value::Number(_) | Value::Bool(_) => Ok(value.to_string()),
            _ => Err(format!(
                "config {key}: a value must be a string, number or bool"
            )),
        };
        let mut settings = Vec::new();
        for (key, value) in &self.0 {
            let group = match key.as_str() {
                "secret" => Some((true, false)),
                "path" => Some((false, true)),
                "secret_path" => Some((true, true)),
                _ => None,
            };
            match (group, value) {
                (Some((secret, path)), Value::Object(entries)) => {
                    for (key, value) in entries {
                        settings.push(Setting {
                            key: key.clone(),
                            value: scalar(key, value)?,
                            secret,
                            path,
                        });
                    }
                }
                (Some(_), _) => return Err(format!("config {key}: expected a mapping")),
                (None, value) => settings.push(Setting {
                    key: key.clone(),
                    value: scalar(key, value)?,
                    secret: false,
                    path: false,
                }),
            }
        }
        Ok(settings)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    /// The program of this step (replacing the previous one); none keeps the project as it is.
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    command: Command,
    /// Further arguments (for `cairn`: all of them).
    #[serde(default)]
    args: Vec<String>,
    /// The stack to run in (created on first use).
    #[serde(default)]
    stack: Option<String>,
    /// Configuration set before the command.
    #[serde(default)]
    config: Config,
    #[serde(default)]
    expect: Expect,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Command {
    #[default]
    Up,
    Preview,
    Refresh,
    Destroy,
    /// Any `cairn` command: `args` are its arguments.
    Cairn,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// The command exits non-zero.
    #[serde(default)]
    fails: bool,
    /// With `fails`: a fragment of the output.
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    output_contains: Vec<String>,
    #[serde(default)]
    output_lacks: Vec<String>,
    /// The stack's outputs, exactly (secrets in plain text).
    #[serde(default)]
    outputs: Option<serde_json::Map<String, Value>>,
    /// Outputs that must be secret.
    #[serde(default)]
    secret_outputs: Vec<String>,
    /// Resources in the state, the stack and providers included.
    #[serde(default)]
    resources: Option<usize>,
    /// Resources per type in the state.
    #[serde(default)]
    types: BTreeMap<String, usize>,
    /// The names of the resources in the state but the stack and providers (any order).
    #[serde(default)]
    names: Option<Vec<String>>,
    /// Resources of the state, each given by `name` (and `type` where names repeat), whose
    /// other fields must match the exported resource (objects as subsets, secrets shown).
    #[serde(default)]
    state: Vec<serde_json::Map<String, Value>>,
    /// The summary's counts, exactly: create, update, replace, delete, read, import, refresh,
    /// discard, same.
    #[serde(default)]
    changes: Option<BTreeMap<String, usize>>,
    /// The summary shows no changes (only unchanged resources).
    #[serde(default)]
    no_changes: bool,
    /// The steps shown for resources, by name, in the order shown (`[create-replacement,
    /// replace, delete-replaced]`; `[]`: none, as for an unchanged resource).
    #[serde(default)]
    ops: BTreeMap<String, Vec<String>>,
}

/// A line of progress on stderr (not captured, so CI logs show the cases' times).
fn note(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// One case directory, parsed.
struct Loaded {
    name: String,
    dir: PathBuf,
    case: Case,
}

/// How one case ended.
enum Outcome {
    Passed,
    Failed(String),
}

#[test]
fn pulumi_integration_suite() {
    let root = repo().join("tests/pulumi");
    let filter: Vec<String> = std::env::var("CAIRN_PULUMI_CASES")
        .map(|s| s.split(',').map(|w| w.trim().to_owned()).collect())
        .unwrap_or_default();
    let run_pending = std::env::var("CAIRN_PULUMI_PENDING").is_ok_and(|v| v == "1");
    let jobs: usize = std::env::var("CAIRN_PULUMI_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
        .max(1);

    let mut problems = Vec::new();
    let mut cases = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("reading tests/pulumi")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with(LIB))
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if !filter.is_empty() && !filter.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        match load(&dir) {
            Ok(case) => cases.push(Loaded { name, dir, case }),
            Err(e) => problems.push(format!("{name}: case.yaml: {e}")),
        }
    }

    let (pending, runnable): (Vec<_>, Vec<_>) =
        cases.into_iter().partition(|c| c.case.pending.is_some());
    for case in &pending {
        note(format_args!(
            "pulumi suite: pending {}: {}",
            case.name,
            case.case.pending.as_deref().unwrap_or_default()
        ));
    }
    let mut queue: Vec<Loaded> = runnable;
    if run_pending {
        queue.extend(pending);
    }
    if queue.is_empty() {
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        return;
    }

    // What every case shares, prepared once: the SDKs and the providers' store.
    if queue.iter().any(|c| c.case.runtime == Runtime::Python) {
        python();
    }
    if queue
        .iter()
        .any(|c| c.case.runtime == Runtime::Nodejs && c.case.node_sdk.is_none())
    {
        node_modules();
    }
    let mut node_sdks: Vec<&str> = queue
        .iter()
        .filter_map(|c| c.case.node_sdk.as_deref())
        .collect();
    node_sdks.sort();
    node_sdks.dedup();
    for version in node_sdks {
        let began = Instant::now();
        node_sdk_modules(version);
        note(format_args!(
            "pulumi suite: @pulumi/pulumi {version} ready in {:.1}s",
            began.elapsed().as_secs_f64()
        ));
    }
    let mut providers: Vec<String> = queue
        .iter()
        .flat_map(|c| c.case.providers.iter().cloned())
        .collect();
    providers.sort();
    providers.dedup();
    let store = ProviderStore::new(&providers);

    let started = Instant::now();
    let queue = Mutex::new(queue.into_iter().collect::<VecDeque<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(case) = next else { break };
                    let began = Instant::now();
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_case(&case, &store)
                    }))
                    .unwrap_or_else(|panic| {
                        let what = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_else(|| "a panic".to_owned());
                        Outcome::Failed(what)
                    });
                    let took = began.elapsed();
                    let verdict = match &outcome {
                        Outcome::Passed => "ok",
                        Outcome::Failed(_) => "FAILED",
                    };
                    note(format_args!(
                        "pulumi suite: {verdict} {} ({:.1}s)",
                        case.name,
                        took.as_secs_f64()
                    ));
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((case, outcome));
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    note(format_args!(
        "pulumi suite: {} case(s) in {:.1}s",
        results.len(),
        started.elapsed().as_secs_f64()
    ));

    let mut failures = problems;
    for (case, outcome) in results {
        match (outcome, case.case.pending.as_deref()) {
            (Outcome::Passed, Some(_)) => note(format_args!(
                "pulumi suite: pending case {} passes now: remove its `pending`",
                case.name
            )),
            (Outcome::Failed(why), Some(_)) => note(format_args!(
                "pulumi suite: pending case {} still fails: {why}",
                case.name
            )),
            (Outcome::Passed, None) => {}
            (Outcome::Failed(why), None) => failures.push(format!(
                "{} (follows {}):\n{why}",
                case.name, case.case.follows
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} ported Pulumi case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn load(dir: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(dir.join("case.yaml")).map_err(|e| e.to_string())?;
    let case: Case = serde_yaml_ng::from_str(&text).map_err(|e| e.to_string())?;
    if case.steps.first().is_none_or(|s| s.dir.is_none()) {
        return Err("the first step must name its `dir`".into());
    }
    for (i, step) in case.steps.iter().enumerate() {
        if let Some(d) = &step.dir
            && !dir.join(d).is_dir()
        {
            return Err(format!("step {}: no directory {d}", i + 1));
        }
        if step.expect.error.is_some() && !step.expect.fails {
            return Err(format!("step {}: `error` needs `fails: true`", i + 1));
        }
        case.config.settings()?;
        step.config.settings()?;
    }
    if let Some(version) = &case.node_sdk {
        if case.runtime != Runtime::Nodejs {
            return Err("`node_sdk` is for `runtime: nodejs`".into());
        }
        if !exact_version(version) {
            return Err(format!(
                "`node_sdk` is an exact version (3.276.0), not {version:?}"
            ));
        }
    }
    Ok(case)
}

/// The providers the cases use, installed once into a home whose plugin store and compile
/// cache every case's home starts from.
struct ProviderStore {
    _sandbox: Option<Sandbox>,
    home: Option<PathBuf>,
}

impl ProviderStore {
    fn new(providers: &[String]) -> ProviderStore {
        if providers.is_empty() {
            return ProviderStore {
                _sandbox: None,
                home: None,
            };
        }
        let sandbox = Sandbox::new("provider-store");
        for name in providers {
            let wasm = if repo().join("tests/guests").join(name).is_dir() {
                test_wasm(name)
            } else {
                example_wasm(name)
            };
            sandbox.ok(&["plugin", "install", wasm.to_str().unwrap()]);
        }
        let home = sandbox.home.clone();
        ProviderStore {
            _sandbox: Some(sandbox),
            home: Some(home),
        }
    }

    /// Copies the store (plugins and compiled artifacts) into `home`.
    fn seed(&self, home: &Path) {
        if let Some(store) = &self.home {
            for dir in ["plugins", "cache"] {
                if store.join(dir).is_dir() {
                    copy_tree(&store.join(dir), &home.join(dir)).expect("seeding a case's home");
                }
            }
        }
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Runs one case; the first failing expectation ends it.
fn run_case(loaded: &Loaded, store: &ProviderStore) -> Outcome {
    let case = &loaded.case;
    let project = case.project.clone().unwrap_or_else(|| loaded.name.clone());
    let sandbox = Sandbox::new(&project);
    for plaintext in &case.secrets {
        sandbox.secret(plaintext);
    }
    store.seed(&sandbox.home);
    let mut run = CaseRun {
        loaded,
        sandbox: &sandbox,
        project,
        stacks: Vec::new(),
    };
    match run.all_steps() {
        Ok(()) => Outcome::Passed,
        Err(why) => Outcome::Failed(why),
    }
}

struct CaseRun<'a> {
    loaded: &'a Loaded,
    sandbox: &'a Sandbox,
    project: String,
    /// The stacks created so far.
    stacks: Vec<String>,
}

impl CaseRun<'_> {
    fn all_steps(&mut self) -> Result<(), String> {
        let case = &self.loaded.case;
        self.select(STACK)?;
        self.configure(&case.config, STACK)?;
        for (i, step) in case.steps.iter().enumerate() {
            let label = format!(
                "step {} ({}{})",
                i + 1,
                command_name(step.command),
                step.dir
                    .as_deref()
                    .map(|d| format!(" of {d}"))
                    .unwrap_or_default()
            );
            self.step(step).map_err(|why| format!("  {label}: {why}"))?;
            if i == 0 && step.command == Command::Up && !step.expect.fails {
                let stack = step.stack.as_deref().unwrap_or(STACK);
                self.after_first_update(stack)
                    .map_err(|why| format!("  after {label} (ProgramTest's checks): {why}"))?;
            }
        }
        let last_destroys = case
            .steps
            .last()
            .is_some_and(|s| s.command == Command::Destroy);
        if case.destroy && !last_destroys {
            for stack in self.stacks.clone().iter().rev() {
                let output =
                    self.cairn(&["destroy", "--yes", "--skip-preview", "--stack", stack])?;
                if !output.success {
                    return Err(format!(
                        "  the final destroy of stack {stack} failed:\n{}",
                        tail(&output.text)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Creates `stack` on first use.
    fn select(&mut self, stack: &str) -> Result<(), String> {
        if !self.stacks.iter().any(|s| s == stack) {
            let output = self.cairn(&["stack", "init", stack])?;
            if !output.success {
                return Err(format!(
                    "stack init {stack} failed:\n{}",
                    tail(&output.text)
                ));
            }
            self.stacks.push(stack.to_owned());
        }
        Ok(())
    }

    fn configure(&self, config: &Config, stack: &str) -> Result<(), String> {
        for s in config.settings()? {
            let mut args = vec!["config", "set", "--stack", stack];
            let revealed = self.loaded.case.revealed.contains(&s.value);
            if s.secret {
                args.push("--secret");
                if !revealed {
                    self.sandbox.secret(&s.value);
                }
            }
            if s.path {
                args.push("--path");
            }
            args.push(s.key.as_str());
            let output = if revealed {
                // On stdin, so that the secret scan does not learn it from the command line.
                self.set_unscanned(&args, &s.value)?
            } else {
                args.extend(["--", s.value.as_str()]);
                self.cairn(&args)?
            };
            if !output.success {
                return Err(format!(
                    "config set {} failed:\n{}",
                    s.key,
                    tail(&output.text)
                ));
            }
        }
        Ok(())
    }

    /// ProgramTest's checks after the first update: the state survives `stack export` /
    /// `stack import`, an empty preview and update change nothing, a refresh finds nothing.
    fn after_first_update(&self, stack: &str) -> Result<(), String> {
        let checks = &self.loaded.case.program_test;
        // pulumi-test-language's runner previews and updates, and checks nothing more.
        if checks.quick || self.loaded.case.follows_language_test() {
            return Ok(());
        }
        let file = self.sandbox.project.join("stack.json");
        let file = file.to_string_lossy();
        let mut commands: Vec<Vec<&str>> = Vec::new();
        if !checks.skip_export_import {
            commands.push(vec!["stack", "export", "--file", &file]);
            commands.push(vec!["stack", "import", "--file", &file]);
        }
        if !checks.skip_empty_preview_update {
            let mut preview = vec!["preview"];
            if !checks.allow_empty_preview_changes {
                preview.push("--expect-no-changes");
            }
            let mut update = vec!["up", "--yes", "--skip-preview"];
            if !checks.allow_empty_update_changes {
                update.push("--expect-no-changes");
            }
            commands.extend([preview, update]);
        }
        if !checks.skip_refresh {
            let mut refresh = vec!["refresh", "--yes", "--skip-preview"];
            if !checks.expect_refresh_changes {
                refresh.push("--expect-no-changes");
            }
            commands.push(refresh);
        }
        for command in commands {
            let mut args = command.clone();
            args.extend(["--stack", stack]);
            let output = self.cairn(&args)?;
            if !output.success {
                return Err(format!(
                    "cairn {} failed:\n{}",
                    args.join(" "),
                    tail(&output.text)
                ));
            }
        }
        let _ = std::fs::remove_file(self.sandbox.project.join("stack.json"));
        Ok(())
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        let stack = step.stack.as_deref().unwrap_or(STACK).to_owned();
        if let Some(dir) = &step.dir {
            self.place_program(&self.loaded.dir.join(dir))?;
        }
        self.select(&stack)?;
        self.configure(&step.config, &stack)?;
        // ProgramTest previews every update it expects to succeed.
        if step.command == Command::Up
            && !step.expect.fails
            && !self.loaded.case.program_test.skip_preview
            && !self.loaded.case.program_test.quick
        {
            let args = ["preview", "--stack", stack.as_str()];
            let output = self.cairn(&args)?;
            if !output.success {
                return Err(format!(
                    "the preview before the update failed:\n{}",
                    tail(&output.text)
                ));
            }
        }
        let mut args: Vec<&str> = match step.command {
            // As ProgramTest runs them (it previews on its own, above), with every step shown.
            Command::Up => vec!["up", "--yes", "--show-replacement-steps"],
            Command::Preview => vec!["preview", "--show-replacement-steps"],
            Command::Refresh => vec!["refresh", "--yes"],
            Command::Destroy => vec!["destroy", "--yes"],
            Command::Cairn => vec![],
        };
        let skips_preview = step.args.iter().any(|a| a == "--skip-preview");
        if matches!(
            step.command,
            Command::Up | Command::Refresh | Command::Destroy
        ) && !skips_preview
        {
            args.push("--skip-preview");
        }
        args.extend(step.args.iter().map(String::as_str));
        args.extend(["--stack", stack.as_str()]);
        let output = self.cairn(&args)?;
        let expect = &step.expect;
        let quoted = || tail(&output.text);

        if output.success == expect.fails {
            let status = if output.success {
                "succeeded"
            } else {
                "failed"
            };
            return Err(format!(
                "cairn {} {status}, expected it to {}:\n{}",
                args.join(" "),
                if expect.fails { "fail" } else { "succeed" },
                quoted()
            ));
        }
        for fragment in expect.error.iter().chain(&expect.output_contains) {
            if !output.text.contains(fragment.as_str()) {
                return Err(format!(
                    "expected {fragment:?} in the output:\n{}",
                    quoted()
                ));
            }
        }
        for fragment in &expect.output_lacks {
            if output.text.contains(fragment.as_str()) {
                return Err(format!(
                    "expected no {fragment:?} in the output:\n{}",
                    quoted()
                ));
            }
        }
        if expect.changes.is_some() || expect.no_changes {
            let summary = summary(&output.text)
                .ok_or_else(|| format!("no `Resources:` summary in the output:\n{}", quoted()))?;
            if let Some(changes) = &expect.changes {
                let expected: BTreeMap<String, usize> = changes
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, n)| (k.clone(), *n))
                    .collect();
                if summary != expected {
                    return Err(format!(
                        "expected the summary {expected:?}, got {summary:?}:\n{}",
                        quoted()
                    ));
                }
            }
            if expect.no_changes && summary.keys().any(|k| k != "same") {
                return Err(format!(
                    "expected no changes, got {summary:?}:\n{}",
                    quoted()
                ));
            }
        }
        if !expect.ops.is_empty() {
            let shown = step_lines(&output.text);
            for (name, expected) in &expect.ops {
                // The logical `replace` between a replacement's halves counts only if listed:
                // where it falls is the display's, not the order of the provider operations.
                let with_replace = expected.iter().any(|op| op == "replace");
                let actual: Vec<&str> = shown
                    .iter()
                    .filter(|(op, n)| n == name && (with_replace || op != "replace"))
                    .map(|(op, _)| op.as_str())
                    .collect();
                if actual != *expected {
                    return Err(format!(
                        "expected the steps {expected:?} for {name}, got {actual:?}:\n{}",
                        quoted()
                    ));
                }
            }
        }
        self.check_stack(expect, &stack)
            .map_err(|why| format!("{why}\nthe command's output:\n{}", quoted()))
    }

    /// Expectations about the stack after the command: outputs and state.
    fn check_stack(&self, expect: &Expect, stack: &str) -> Result<(), String> {
        if let Some(expected) = &expect.outputs {
            let actual = self.json(&["stack", "output", "--json", "--show-secrets"], stack)?;
            let expected = Value::Object(expected.clone());
            if !json_eq(&actual, &expected) {
                return Err(format!(
                    "expected the stack outputs {expected}, got {actual}"
                ));
            }
        }
        if !expect.secret_outputs.is_empty() {
            let masked = self.json(&["stack", "output", "--json"], stack)?;
            for name in &expect.secret_outputs {
                if masked[name] != "[secret]" {
                    return Err(format!(
                        "expected output {name} to be secret, got {}",
                        masked[name]
                    ));
                }
            }
        }
        let wants_state = expect.resources.is_some()
            || !expect.types.is_empty()
            || expect.names.is_some()
            || !expect.state.is_empty();
        if !wants_state {
            return Ok(());
        }
        let export = self.json(&["stack", "export", "--show-secrets"], stack)?;
        let resources = export["deployment"]["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let summary = || {
            resources
                .iter()
                .map(|r| r["urn"].as_str().unwrap_or("?"))
                .collect::<Vec<_>>()
                .join("\n    ")
        };
        if let Some(n) = expect.resources
            && resources.len() != n
        {
            return Err(format!(
                "expected {n} resource(s) in the state, found {}:\n    {}",
                resources.len(),
                summary()
            ));
        }
        for (ty, n) in &expect.types {
            let found = resources.iter().filter(|r| r["type"] == *ty).count();
            if found != *n {
                return Err(format!(
                    "expected {n} resource(s) of type {ty}, found {found}:\n    {}",
                    summary()
                ));
            }
        }
        if let Some(names) = &expect.names {
            let mut expected = names.clone();
            expected.sort();
            let mut actual: Vec<String> = resources
                .iter()
                .filter(|r| {
                    let ty = r["type"].as_str().unwrap_or_default();
                    ty != "pulumi:pulumi:Stack" && !ty.starts_with("pulumi:providers:")
                })
                .map(|r| urn_name(r["urn"].as_str().unwrap_or_default()).to_owned())
                .collect();
            actual.sort();
            if actual != expected {
                return Err(format!(
                    "expected the resources {expected:?}, found {actual:?}"
                ));
            }
        }
        for wanted in &expect.state {
            let name = wanted
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let ty = wanted.get("type").and_then(Value::as_str);
            let found: Vec<&Value> = resources
                .iter()
                .filter(|r| urn_name(r["urn"].as_str().unwrap_or_default()) == name)
                .filter(|r| ty.is_none_or(|t| r["type"] == t))
                .collect();
            let [resource] = found.as_slice() else {
                return Err(format!(
                    "expected one resource named {name:?}{} in the state, found {}:\n    {}",
                    ty.map(|t| format!(" of type {t}")).unwrap_or_default(),
                    found.len(),
                    summary()
                ));
            };
            for (key, value) in wanted {
                if key == "name" {
                    continue;
                }
                let actual = resource.get(key).unwrap_or(&Value::Null);
                // Dependencies are sets: their order is the SDK's (Pulumi's tests compare them
                // as sets too).
                let (value, actual) = if key == "dependencies" || key == "propertyDependencies" {
                    (&sorted_lists(value), &sorted_lists(actual))
                } else {
                    (value, actual)
                };
                if !json_subset(value, actual) {
                    return Err(format!(
                        "resource {name}: expected {key} {value}, got {actual}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// `cairn config set …` with the value on stdin, outside the secret scan's learning.
    fn set_unscanned(&self, args: &[&str], value: &str) -> Result<CommandOutput, String> {
        use std::io::Write as _;
        let mut child = self
            .sandbox
            .command(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("running cairn: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(value.as_bytes())
                .map_err(|e| format!("writing to cairn: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("running cairn: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        Ok(CommandOutput {
            success: output.status.success(),
            text: format!("{stdout}{}", String::from_utf8_lossy(&output.stderr)),
            stdout,
        })
    }

    /// A command's stdout as JSON.
    fn json(&self, args: &[&str], stack: &str) -> Result<Value, String> {
        let mut args = args.to_vec();
        args.extend(["--stack", stack]);
        let output = self.cairn(&args)?;
        if !output.success {
            return Err(format!(
                "cairn {} failed:\n{}",
                args.join(" "),
                tail(&output.text)
            ));
        }
        serde_json::from_str(&output.stdout)
            .map_err(|e| format!("cairn {}: not JSON ({e})", args.join(" ")))
    }

    fn cairn(&self, args: &[&str]) -> Result<CommandOutput, String> {
        let output = self
            .sandbox
            .run_within(args, COMMAND_LIMIT)
            .ok_or_else(|| {
                format!(
                    "cairn {} still ran after {}s and was stopped",
                    args.join(" "),
                    COMMAND_LIMIT.as_secs()
                )
            })?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        Ok(CommandOutput {
            success: output.status.success(),
            text: format!("{stdout}{stderr}"),
            stdout,
        })
    }

    /// Replaces the project's files with `dir`'s (the stacks' settings files stay), then
    /// points the project and any plugin directory at the shared SDKs.
    fn place_program(&self, dir: &Path) -> Result<(), String> {
        let project = &self.sandbox.project;
        for entry in std::fs::read_dir(project)
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("Pulumi.") && name.ends_with(".yaml") && name != "Pulumi.yaml" {
                continue;
            }
            let path = entry.path();
            let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| format!("clearing {}: {e}", path.display()))?;
        }
        let lib = repo()
            .join("tests/pulumi")
            .join(LIB)
            .join(self.loaded.case.runtime.name());
        if lib.is_dir() {
            copy_tree(&lib, project).map_err(|e| format!("copying {}: {e}", lib.display()))?;
        }
        copy_tree(dir, project).map_err(|e| format!("copying {}: {e}", dir.display()))?;
        if !project.join("Pulumi.yaml").exists() {
            std::fs::write(
                project.join("Pulumi.yaml"),
                format!(
                    "name: {}\nruntime: {}\n",
                    self.project,
                    self.loaded.case.runtime.name()
                ),
            )
            .map_err(|e| e.to_string())?;
        }
        prepare_runtimes(project, self.loaded.case.node_sdk.as_deref())
    }
}

struct CommandOutput {
    success: bool,
    /// stdout then stderr.
    text: String,
    stdout: String,
}

fn command_name(command: Command) -> &'static str {
    match command {
        Command::Up => "up",
        Command::Preview => "preview",
        Command::Refresh => "refresh",
        Command::Destroy => "destroy",
        Command::Cairn => "cairn",
    }
}

/// Every `Pulumi.yaml` and `PulumiPlugin.yaml` under `dir`: a Python runtime gets the shared
/// virtualenv, a Node.js one a link to `node_modules` (the shared one, or that of the case's
/// `node_sdk`) beside it.
fn prepare_runtimes(dir: &Path, node_sdk: Option<&str>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            prepare_runtimes(&path, node_sdk)?;
            continue;
        }
        let name = entry.file_name();
        if name != "Pulumi.yaml" && name != "PulumiPlugin.yaml" {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let mut yaml: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let runtime = match &yaml["runtime"] {
            serde_yaml_ng::Value::String(s) => s.clone(),
            other => other["name"].as_str().unwrap_or_default().to_owned(),
        };
        match runtime.as_str() {
            "python" => {
                let python = python();
                let venv = python.parent().and_then(Path::parent).unwrap_or(&python);
                let mut options = match &yaml["runtime"]["options"] {
                    serde_yaml_ng::Value::Mapping(m) => m.clone(),
                    _ => serde_yaml_ng::Mapping::new(),
                };
                options.insert("virtualenv".into(), venv.display().to_string().into());
                let mut runtime = serde_yaml_ng::Mapping::new();
                runtime.insert("name".into(), "python".into());
                runtime.insert("options".into(), options.into());
                yaml["runtime"] = runtime.into();
                let text = serde_yaml_ng::to_string(&yaml).map_err(|e| e.to_string())?;
                std::fs::write(&path, text).map_err(|e| e.to_string())?;
            }
            "nodejs" => {
                let link = dir.join("node_modules");
                if !link.exists() {
                    let target = match node_sdk {
                        Some(version) => node_sdk_modules(version),
                        None => node_modules(),
                    };
                    std::os::unix::fs::symlink(target, &link)
                        .map_err(|e| format!("linking {}: {e}", link.display()))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The counts of the `Resources:` summary: `+ 2 created` is `create: 2`, `4 unchanged` is
/// `same: 4`.
fn summary(text: &str) -> Option<BTreeMap<String, usize>> {
    let start = text.rfind("\nResources:\n")?;
    let mut counts = BTreeMap::new();
    for line in text[start..].lines().skip(2) {
        if line.trim().is_empty() {
            break;
        }
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '.' || c == '+' || c == '-' || c == '~')
            // A preview's counts read `+ 2 to create`.
            .filter(|w| !w.is_empty() && *w != "to")
            .collect();
        for pair in words.windows(2) {
            let kind = match pair[1] {
                "created" | "create" => "create",
                "updated" | "update" => "update",
                "replaced" | "replace" => "replace",
                "deleted" | "delete" => "delete",
                "read" => "read",
                "imported" | "import" => "import",
                "refreshed" | "refresh" => "refresh",
                "discarded" | "discard" => "discard",
                "unchanged" => "same",
                _ => continue,
            };
            if let Ok(n) = pair[0].parse::<usize>() {
                counts.insert(kind.to_owned(), n);
            }
        }
    }
    Some(counts)
}

/// What the status column of Cairn's plain display says once a step is done (or, in a
/// preview, planned), and the step it names.
const STATUS_OPS: [(&str, &str); 24] = [
    ("created replacement", "create-replacement"),
    ("deleted original", "delete-replaced"),
    ("read for replacement", "read-replacement"),
    ("imported replacement", "import-replacement"),
    ("created", "create"),
    ("updated", "update"),
    ("deleted", "delete"),
    ("replaced", "replace"),
    ("read", "read"),
    ("refreshed", "refresh"),
    ("imported", "import"),
    ("discarded", "discard"),
    ("create-replacement", "create-replacement"),
    ("delete-replaced", "delete-replaced"),
    ("read-replacement", "read-replacement"),
    ("import-replacement", "import-replacement"),
    ("create", "create"),
    ("update", "update"),
    ("delete", "delete"),
    ("replace", "replace"),
    ("read", "read"),
    ("refresh", "refresh"),
    ("import", "import"),
    ("discard", "discard"),
];

/// What the status column says of a failed step (`**creating failed**`), and its step.
const FAILED_OPS: [(&str, &str); 12] = [
    ("creating replacement", "create-replacement"),
    ("deleting original", "delete-replaced"),
    ("reading for replacement", "read-replacement"),
    ("importing replacement", "import-replacement"),
    ("creating", "create"),
    ("updating", "update"),
    ("deleting", "delete"),
    ("replacing", "replace"),
    ("reading", "read"),
    ("refreshing", "refresh"),
    ("importing", "import"),
    ("discarding", "discard"),
];

/// The symbols before a step line's type (Pulumi's).
const SYMBOLS: [&str; 10] = ["+", "~", "-", "+-", "++", "--", ">", ">>", "=", "=>"];

/// `(op, resource name)` of every step done (or planned) in a command's plain output
/// (` +  my:index:R a created (0.1s)`), in order; lines of steps still running are left out.
fn step_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|line| line.starts_with(' ') && !line.starts_with("    "))
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let rest = match words.first() {
                Some(w) if SYMBOLS.contains(w) => &words[1..],
                _ => return None,
            };
            let name = rest.get(1)?;
            let mut status: Vec<&str> = Vec::new();
            for word in &rest[2..] {
                // The status ends at the elapsed time, the Info column, or (a failure) its
                // closing `**`.
                if word.starts_with('(') || word.starts_with('[') {
                    break;
                }
                status.push(word);
                if word.ends_with("**") && status.len() > 1 {
                    break;
                }
            }
            let status = status.join(" ");
            // A failed step reads `**creating failed**`: the step it names still ran.
            let failed = status
                .strip_prefix("**")
                .and_then(|s| s.strip_suffix(" failed**"));
            let op = match failed {
                Some(running) => FAILED_OPS
                    .iter()
                    .find(|(words, _)| *words == running)
                    .map(|(_, op)| *op)?,
                None => STATUS_OPS
                    .iter()
                    .find(|(words, _)| *words == status)
                    .map(|(_, op)| *op)?,
            };
            Some((op.to_owned(), (*name).to_owned()))
        })
        .collect()
}

/// The name part of a URN.
fn urn_name(urn: &str) -> &str {
    urn.rsplit("::").next().unwrap_or_default()
}

/// `value` with every array of strings sorted.
fn sorted_lists(value: &Value) -> Value {
    match value {
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let mut items = items.clone();
            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            Value::Array(items)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), sorted_lists(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// JSON equality with numbers compared as numbers (`42` equals `42.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// `expected` matches `actual` where objects may have more keys; null, and false, match an
/// absent key (as an exported state leaves out `protect: false`); a string ending in `*`
/// matches the strings it begins (a provider reference whose ID is not known).
fn json_subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Bool(false), Value::Null) => true,
        (Value::String(e), Value::String(a)) if e.ends_with('*') => {
            a.starts_with(&e[..e.len() - 1])
        }
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .all(|(k, e)| json_subset(e, y.get(k).unwrap_or(&Value::Null))),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(e, a)| json_subset(e, a))
        }
        _ => json_eq(expected, actual),
    }
}

/// The last lines of a command's output, indented.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let mut out = String::new();
    if start > 0 {
        let _ = writeln!(out, "    … ({start} earlier lines)");
    }
    for line in &lines[start..] {
        let _ = writeln!(out, "    | {line}");
    }
    out
}

/// The runner's own parsing, on fixed inputs.
mod runner {
    use super::*;

    #[test]
    fn summaries_are_read_as_counts() {
        let text = "stuff\n\nResources:\n    + 1 created\n    ~ 2 updated\n    +-1 replaced\n    4 changes. 3 unchanged\n\nDuration: 1s\n";
        let counts = summary(text).unwrap();
        assert_eq!(
            counts,
            BTreeMap::from([
                ("create".to_owned(), 1),
                ("update".to_owned(), 2),
                ("replace".to_owned(), 1),
                ("same".to_owned(), 3),
            ])
        );
        assert_eq!(
            summary("x\nResources:\n    no changes\n\nDuration: 0.1s\n"),
            Some(BTreeMap::new())
        );
        assert_eq!(summary("no summary"), None);
        assert_eq!(
            summary(
                "x\nResources:\n    ~ 1 to update\n    +-6 to replace\n    7 changes. 2 unchanged\n\n"
            ),
            Some(BTreeMap::from([
                ("update".to_owned(), 1),
                ("replace".to_owned(), 6),
                ("same".to_owned(), 2),
            ]))
        );
    }

    #[test]
    fn step_lines_are_read_in_order() {
        let text = " +  my:index:R a creating (0.0s)\n +  my:index:R a created (0.1s)\n -- my:index:R b deleted original (0.1s)\n ++ my:index:R b created replacement (0.1s)\n +- my:index:R b replaced (0.2s) [diff: ~value]\n ~  my:index:R c **updating failed** error: boom!\n    same: 2\n";
        assert_eq!(
            step_lines(text),
            [
                ("create".to_owned(), "a".to_owned()),
                ("delete-replaced".to_owned(), "b".to_owned()),
                ("create-replacement".to_owned(), "b".to_owned()),
                ("replace".to_owned(), "b".to_owned()),
                ("update".to_owned(), "c".to_owned()),
            ]
        );
    }

    #[test]
    fn config_groups_become_settings_in_order() {
        let config: Config = serde_yaml_ng::from_str(
            "plain: text\nnumber: 42\nsecret:\n  token: shh-secret\npath:\n  'names[0]': a\nsecret_path:\n  'foo.bar': hidden\n",
        )
        .unwrap();
        let settings: Vec<(String, String, bool, bool)> = config
            .settings()
            .unwrap()
            .into_iter()
            .map(|s| (s.key, s.value, s.secret, s.path))
            .collect();
        assert_eq!(
            settings,
            [
                ("plain".into(), "text".into(), false, false),
                ("number".into(), "42".into(), false, false),
                ("token".into(), "shh-secret".into(), true, false),
                ("names[0]".into(), "a".into(), false, true),
                ("foo.bar".into(), "hidden".into(), true, true),
            ]
        );
    }

    #[test]
    fn subsets_allow_more_keys_and_numbers_of_any_form() {
        let actual = serde_json::json!({"a": 1.0, "b": {"c": true, "d": [1]}, "e": "x"});
        assert!(json_subset(
            &serde_json::json!({"a": 1, "b": {"c": true}}),
            &actual
        ));
        assert!(json_subset(&serde_json::json!({"missing": null}), &actual));
        assert!(json_subset(&serde_json::json!({"missing": false}), &actual));
        assert!(!json_subset(&serde_json::json!({"b": {"d": []}}), &actual));
        assert!(json_subset(&serde_json::json!({"e": "x*"}), &actual));
        assert!(!json_subset(&serde_json::json!({"e": "y*"}), &actual));
        assert_eq!(
            sorted_lists(&serde_json::json!({"d": ["b", "a"], "n": [2, 1]})),
            serde_json::json!({"d": ["a", "b"], "n": [2, 1]})
        );
        assert!(!json_eq(&serde_json::json!({"a": 1}), &actual));
    }
}
