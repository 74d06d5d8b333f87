//! The book's examples, run: every command example in `docs/src/*.md` is executed with the real
//! `cairn` binary, so a renamed flag, a changed message or a command that stopped working fails
//! the tests rather than a reader.
//!
//! # The convention (also in `docs/src/contributing.md`)
//!
//! * A fenced block with the info string `console` is run. Each line starting with `$ ` is a
//!   command, run with `sh -c` (so quoting, `$VAR`, pipes and redirections work as in a shell);
//!   a line ending in ` \` continues on the next. The lines after a command, up to the next
//!   command, are its expected output: each non-empty line must occur in the command's output
//!   (stdout and stderr together, runs of white space compared as one space), where `…` stands
//!   for any text. Every command must succeed.
//! * `$ cd DIR` and `$ export NAME=VALUE` are not run but change the directory and environment of
//!   the commands after them on the page.
//! * Attributes after `console`, separated by commas, change how a block runs:
//!   * `fails`: every command of the block must fail (exit non-zero);
//!   * `background`: the block's one command keeps running (a server such as `cairn console`);
//!     the test waits until it has printed something and its expected output has appeared,
//!     then stops it;
//!   * `postgres`: the test starts a private PostgreSQL server (once per page) and replaces every
//!     `postgres://…` URL in the block's commands with one of a fresh database on it (cairn
//!     prints URLs without their passwords, so expected output keeps the page's text);
//!   * `registry`: the test starts a private OCI registry (once per page) and replaces
//!     `registry.example` with its `127.0.0.1:PORT`.
//! * All blocks of a page run in order in one sandbox: its own Cairn home
//!   (`CAIRN_HOME`), passphrase (`CAIRN_CONFIG_PASSPHRASE`) and project directory, with `cairn`
//!   on `PATH` and `WASM` naming the directory of the built example components
//!   (`target/guests/wasm32-wasip2/release`; the getting-started page tells readers to set both
//!   the same way). A page picks its project with an HTML comment, invisible in the book:
//!   `<!-- book-test: setup=quickstart -->` (a `Pulumi.yaml` for the quick-start program, built,
//!   and an empty `site-files` directory), `setup=empty` (an empty directory); without one the
//!   directory holds a `Pulumi.yaml` for project `book` (`runtime: wasm`, no program).
//! * A fenced block of another kind (`sh`, `text`, …) is never run, and must not hold a `cairn`
//!   command: every `cairn` example is a `console` block (checked).
//! * An inline code span that starts with `cairn ` names a command: its subcommands must exist
//!   and every `--flag` it mentions must be in that command's `--help` (checked), so the command
//!   reference and the prose cannot drift from the binary.
//!
//! Pages run in parallel (three at a time); the example components are built once per test
//! binary, as for the other tests.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::background::Background;
use crate::ociregistry::OciRegistry;
use crate::pgserver;
use crate::support::{Sandbox, example_wasm, guest_target, repo};

/// One `console` block.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    attrs: Vec<String>,
    commands: Vec<Example>,
}

/// One `$ ` command and the output expected of it.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// What a page asks of the test.
#[derive(Debug, Default)]
struct Page {
    setup: String,
    blocks: Vec<Block>,
    /// (line, info string) of other fenced blocks that hold a `cairn` command.
    unrun: Vec<(usize, String)>,
    /// (line, text) of inline code spans starting with `cairn `.
    spans: Vec<(usize, String)>,
}

const ATTRIBUTES: [&str; 4] = ["fails", "background", "postgres", "registry"];

fn parse_page(text: &str) -> Page {
    let mut page = Page::default();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((index, raw)) = lines.next() {
        let line = raw.trim_start();
        if let Some(rest) = line.strip_prefix("<!-- book-test:") {
            for word in rest.trim_end_matches("-->").split_whitespace() {
                if let Some(setup) = word.strip_prefix("setup=") {
                    page.setup = setup.to_owned();
                }
            }
            continue;
        }
        let Some(info) = line.strip_prefix("```") else {
            page.spans.extend(
                inline_spans(raw)
                    .into_iter()
                    .filter(|s| s.starts_with("cairn "))
                    .map(|s| (index + 1, s)),
            );
            continue;
        };
        let mut words = info.split(',').map(str::trim).filter(|w| !w.is_empty());
        let kind = words.next().unwrap_or("").to_owned();
        let attrs: Vec<String> = words.map(str::to_owned).collect();
        let mut body = Vec::new();
        for (i, raw) in lines.by_ref() {
            if raw.trim_start().starts_with("```") {
                break;
            }
            body.push((i + 1, raw.trim_start().to_owned()));
        }
        if kind == "console" {
            page.blocks.push(Block {
                line: index + 1,
                attrs,
                commands: console_commands(&body),
            });
        } else if body.iter().any(|(_, l)| {
            let l = l.strip_prefix("$ ").unwrap_or(l);
            l.starts_with("cairn ")
        }) {
            page.unrun.push((index + 1, kind));
        }
    }
    page
}

/// The commands of a console block's lines.
fn console_commands(body: &[(usize, String)]) -> Vec<Example> {
    let mut commands: Vec<Example> = Vec::new();
    let mut continuing = false;
    for (line, text) in body {
        if continuing {
            let last = commands.last_mut().unwrap();
            last.command.push(' ');
            last.command.push_str(text.trim_end_matches('\\').trim());
            continuing = text.ends_with('\\');
        } else if let Some(command) = text.strip_prefix("$ ") {
            continuing = command.ends_with('\\');
            commands.push(Example {
                line: *line,
                command: command.trim_end_matches('\\').trim().to_owned(),
                expected: Vec::new(),
            });
        } else if !text.trim().is_empty()
            && let Some(last) = commands.last_mut()
        {
            last.expected.push(text.trim().to_owned());
        }
    }
    commands
}

/// The inline code spans of a line (single backticks; a double-backtick span is taken whole).
fn inline_spans(line: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + ticks..];
        let fence = "`".repeat(ticks);
        let Some(end) = after.find(&fence) else { break };
        spans.push(after[..end].trim().to_owned());
        rest = &after[end + ticks..];
    }
    spans
}

/// Whether `output` holds `expected`: its `…`-separated pieces, in order, white space collapsed.
fn matches(output: &str, expected: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let output = squash(output);
    let mut at = 0;
    for piece in expected.split('…').map(squash).filter(|p| !p.is_empty()) {
        match output[at..].find(&piece) {
            Some(found) => at += found + piece.len(),
            None => return false,
        }
    }
    true
}

fn pages() -> Vec<(String, String)> {
    let dir = repo().join("docs/src");
    let mut pages: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    pages.sort();
    pages
}

/// The private servers a page's blocks asked for, started on first use.
#[derive(Default)]
struct Services {
    postgres: Option<String>,
    registry: Option<OciRegistry>,
}

impl Services {
    /// `text` with the servers' addresses; PostgreSQL URLs only in commands (`command`), since
    /// cairn prints them without their passwords.
    fn substitute(&mut self, attrs: &[String], text: &str, command: bool) -> String {
        let mut text = text.to_owned();
        if command && attrs.iter().any(|a| a == "postgres") {
            let url = self
                .postgres
                .get_or_insert_with(|| pgserver::shared().fresh_database().url)
                .clone();
            while let Some(start) = text.find("postgres://")
                && !text[start..].starts_with(&url)
            {
                let end = text[start..]
                    .find(|c: char| c.is_whitespace() || c == '\'' || c == '"')
                    .map_or(text.len(), |e| start + e);
                text.replace_range(start..end, &url);
            }
        }
        if attrs.iter().any(|a| a == "registry") {
            let registry = self.registry.get_or_insert_with(OciRegistry::start);
            text = text.replace("registry.example", &format!("127.0.0.1:{}", registry.port));
        }
        text
    }
}

/// Runs the examples of one page; the failures, each described.
fn run_page(name: &str, page: &Page) -> Vec<String> {
    let sandbox = Sandbox::new("book");
    match page.setup.as_str() {
        "" => {}
        "empty" => std::fs::remove_file(sandbox.project.join("Pulumi.yaml")).unwrap(),
        "quickstart" => {
            sandbox.write(
                "Pulumi.yaml",
                &format!(
                    "name: quickstart\nruntime: wasm\nmain: {}\n",
                    example_wasm("quickstart").display()
                ),
            );
            std::fs::create_dir_all(sandbox.project.join("site-files")).unwrap();
        }
        other => return vec![format!("{name}: unknown setup `{other}`")],
    }
    // The environment the sandbox gives cairn, plus PATH and WASM.
    let template = sandbox.command(&[]);
    let mut env: BTreeMap<String, Option<String>> = template
        .get_envs()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.map(|v| v.to_string_lossy().into_owned()),
            )
        })
        .collect();
    let bin = Path::new(env!("CARGO_BIN_EXE_cairn")).parent().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    env.insert("PATH".into(), Some(format!("{}:{path}", bin.display())));
    env.insert(
        "WASM".into(),
        Some(
            guest_target()
                .join("wasm32-wasip2/release")
                .display()
                .to_string(),
        ),
    );
    env.insert("NO_COLOR".into(), Some("1".into()));
    let mut cwd = sandbox.project.clone();
    let mut services = Services::default();
    let mut failures = Vec::new();
    for block in &page.blocks {
        for attr in &block.attrs {
            if !ATTRIBUTES.contains(&attr.as_str()) {
                failures.push(format!("{name}:{}: unknown attribute `{attr}`", block.line));
            }
        }
        let background = block.attrs.iter().any(|a| a == "background");
        let fails = block.attrs.iter().any(|a| a == "fails");
        for example in &block.commands {
            let command = services.substitute(&block.attrs, &example.command, true);
            let expected: Vec<String> = example
                .expected
                .iter()
                .map(|e| services.substitute(&block.attrs, e, false))
                .collect();
            let place = format!("{name}:{}: `{command}`", example.line);
            if let Some(dir) = command.strip_prefix("cd ") {
                cwd = cwd.join(dir.trim());
                continue;
            }
            if let Some(assignment) = command.strip_prefix("export ") {
                let (key, value) = assignment.split_once('=').expect("export NAME=VALUE");
                let value = value.trim_matches(|c| c == '"' || c == '\'');
                env.insert(key.to_owned(), Some(value.to_owned()));
                continue;
            }
            let mut shell = Command::new("sh");
            shell.current_dir(&cwd).env_clear();
            for (key, value) in std::env::vars() {
                shell.env(key, value);
            }
            shell.env_remove("PWD"); // the shell sets it from its directory
            for (key, value) in &env {
                match value {
                    Some(v) => shell.env(key, v),
                    None => shell.env_remove(key),
                };
            }
            if background {
                shell.arg("-c").arg(format!("exec {command}"));
                let mut job = Background::spawn(shell, sandbox.root(), "background");
                let started = Instant::now();
                let output = loop {
                    let output = format!("{}{}", job.stdout(), job.stderr());
                    let done =
                        !output.trim().is_empty() && expected.iter().all(|e| matches(&output, e));
                    if done || job.exited() || started.elapsed() > Duration::from_secs(120) {
                        break output;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                };
                if let Some(missing) = expected.iter().find(|e| !matches(&output, e)) {
                    failures.push(format!("{place}: no `{missing}` in its output:\n{output}"));
                }
                drop(job);
                continue;
            }
            let output = shell
                .arg("-c")
                .arg(&command)
                .stdin(Stdio::null())
                .output()
                .expect("run sh");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            if output.status.success() == fails {
                let what = if fails { "succeeded" } else { "failed" };
                failures.push(format!("{place} {what} ({}):\n{text}", output.status));
                return failures; // later commands build on this one
            }
            if let Some(missing) = expected.iter().find(|e| !matches(&text, e)) {
                failures.push(format!("{place}: no `{missing}` in its output:\n{text}"));
            }
        }
    }
    failures
}

#[test]
fn every_console_example_in_the_book_runs() {
    // Built once, before the pages start in parallel.
    example_wasm("random");
    let pages: Vec<(String, Page)> = pages()
        .into_iter()
        .map(|(name, text)| (name, parse_page(&text)))
        .filter(|(_, page)| !page.blocks.is_empty())
        .collect();
    assert!(pages.len() >= 5, "few pages with examples: {}", pages.len());
    let next = Mutex::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let index = {
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        *next - 1
                    };
                    let Some((name, page)) = pages.get(index) else {
                        break;
                    };
                    let found = run_page(name, page);
                    failures.lock().unwrap().extend(found);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_cairn_command_in_the_book_is_a_console_block() {
    let mut unrun = Vec::new();
    for (name, text) in pages() {
        for (line, kind) in parse_page(&text).unrun {
            unrun.push(format!("{name}:{line}: a `{kind}` block runs cairn"));
        }
    }
    assert!(
        unrun.is_empty(),
        "make these `console` blocks (docs/src/contributing.md):\n{}",
        unrun.join("\n")
    );
}

/// `cairn <path…> --help`: its subcommands and its long flags.
fn help(
    cache: &mut HashMap<Vec<String>, (Vec<String>, String)>,
    path: &[String],
) -> (Vec<String>, String) {
    cache
        .entry(path.to_vec())
        .or_insert_with(|| {
            let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
                .args(path)
                .arg("--help")
                .output()
                .expect("run cairn --help");
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            let subcommands = text
                .split("\nCommands:\n")
                .nth(1)
                .map(|rest| {
                    rest.lines()
                        .take_while(|l| !l.trim().is_empty())
                        .filter(|l| l.starts_with("  ") && !l.starts_with("      "))
                        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            (subcommands, text)
        })
        .clone()
}

#[test]
fn every_cairn_command_in_the_book_names_real_flags() {
    let mut cache = HashMap::new();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (name, text) in pages() {
        let page = parse_page(&text);
        let mut spans = page.spans.clone();
        for block in &page.blocks {
            for example in &block.commands {
                if let Some(rest) = example.command.find("cairn ") {
                    spans.push((example.line, example.command[rest..].to_owned()));
                }
            }
        }
        for (line, span) in spans {
            let mut path: Vec<String> = Vec::new();
            for word in span.split_whitespace().skip(1) {
                let (subcommands, _) = help(&mut cache, &path);
                if subcommands.iter().any(|s| s == word) {
                    path.push(word.to_owned());
                } else {
                    break;
                }
            }
            let (_, help_text) = help(&mut cache, &path);
            for flag in long_flags(&span) {
                checked += 1;
                let known = help_text.contains(&format!("{flag} "))
                    || help_text.contains(&format!("{flag},"))
                    || help_text.contains(&format!("{flag}\n"))
                    || help_text.contains(&format!("{flag}="))
                    || help_text.contains(&format!("{flag}["));
                if !known {
                    wrong.push(format!(
                        "{name}:{line}: `cairn {}` has no `{flag}` (in `{span}`)",
                        path.join(" ")
                    ));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} flags checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The `--long` flags a command span mentions.
fn long_flags(span: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let bytes = span.as_bytes();
    let mut i = 0;
    while let Some(found) = span[i..].find("--") {
        let start = i + found;
        let boundary =
            start == 0 || !bytes[start - 1].is_ascii_alphanumeric() && bytes[start - 1] != b'-';
        let end = span[start + 2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(span.len(), |e| start + 2 + e);
        let flag = &span[start..end];
        if boundary && flag.len() > 3 && bytes[start + 2].is_ascii_lowercase() {
            flags.push(flag.to_owned());
        }
        i = end.max(start + 2);
    }
    flags
}

#[test]
fn the_convention_parses_as_documented() {
    let page = parse_page(
        "<!-- book-test: setup=quickstart -->\nSee `cairn up --yes` and `x`.\n\
         ```console,postgres\n$ cairn login \\\n    postgres://u@h/db\nLogged in…db\n\n$ cairn whoami\n```\n\
         ```sh\ncairn up\n```\n```text\ncargo build\n```\n",
    );
    assert_eq!(page.setup, "quickstart");
    assert_eq!(page.spans, vec![(2, "cairn up --yes".to_owned())]);
    assert_eq!(page.unrun, vec![(10, "sh".to_owned())]);
    assert_eq!(
        page.blocks,
        vec![Block {
            line: 3,
            attrs: vec!["postgres".into()],
            commands: vec![
                Example {
                    line: 4,
                    command: "cairn login postgres://u@h/db".into(),
                    expected: vec!["Logged in…db".into()],
                },
                Example {
                    line: 8,
                    command: "cairn whoami".into(),
                    expected: vec![],
                },
            ],
        }]
    );
    assert!(matches("Logged  in to\n postgres://db", "Logged in…db"));
    assert!(!matches("db Logged in", "Logged in…db"));
    assert_eq!(
        long_flags("cairn up [--yes] --target=URN --x -- --parallel N a--b"),
        vec!["--yes", "--target", "--parallel"]
    );
    let mut services = Services::default();
    assert_eq!(
        services.substitute(&[], "postgres://a", true),
        "postgres://a"
    );
}

/// `docs/src/SUMMARY.md` lists every page, and every page it lists exists.
#[test]
fn the_summary_lists_every_page() {
    let summary = std::fs::read_to_string(repo().join("docs/src/SUMMARY.md")).unwrap();
    for (name, _) in pages() {
        if name != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({name})")),
                "SUMMARY.md does not list {name}"
            );
        }
    }
    for link in summary.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        assert!(
            repo().join("docs/src").join(target).is_file(),
            "SUMMARY.md links to missing {target}"
        );
    }
}
