//! The display as a person sees it: `cairn` run in a pseudo-terminal (util-linux `script`), its
//! output fed to a terminal emulator (`vt100`), and the final screen compared with a reviewed
//! snapshot in `tests/e2e/snapshots/` — the live view's final table (the tree by parent), the
//! colours on and off, the prompt and its details, an error, a cancelled update — and warnings
//! in colour.
//!
//! Snapshots keep text and, where colour matters, each run of styled text marked as
//! `«fg,b,u|text»` (`fg`: the ANSI colour number; `b` bold; `u` underlined). Durations are
//! masked (`(Ns)`). `CAIRN_UPDATE_SNAPSHOTS=1` rewrites them (then review the diff).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{Sandbox, assert_no_raw_controls, probe_stack, quickstart_stack, repo};

/// Terminal size the display is told (`COLUMNS`, `LINES`) and the emulator renders.
const COLUMNS: u16 = 110;
const LINES: u16 = 40;

/// What a run in the terminal produced: the raw bytes and the exit status.
struct TtyRun {
    bytes: Vec<u8>,
    success: bool,
}

/// Runs `cairn args` in a pseudo-terminal, answering each `(prompt, answer)` in turn once the
/// prompt's text has appeared (typed as a person would, after the question, so the echo lands
/// where a person sees it).
fn in_tty(
    sandbox: &Sandbox,
    args: &[&str],
    answers: &[(&str, &str)],
    env: &[(&str, &str)],
) -> TtyRun {
    let template = sandbox.command(args);
    let mut line = shell_quote(template.get_program().to_str().unwrap());
    for arg in template.get_args() {
        let arg = arg.to_str().unwrap();
        if arg != "--non-interactive" {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
    }
    let mut command = Command::new("script");
    command
        .args(["-q", "-e", "-f", "-c", &line, "/dev/null"])
        .env_remove("CI")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .env("COLUMNS", COLUMNS.to_string())
        .env("LINES", LINES.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in template.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("run script (util-linux)");
    let mut stdout = child.stdout.take().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let mut stdin = child.stdin.take().unwrap();
    let mut from = 0;
    for (prompt, answer) in answers {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let text = String::from_utf8_lossy(&seen.lock().unwrap()[from..]).into_owned();
            if let Some(at) = text.find(prompt) {
                from += at + prompt.len();
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no prompt {prompt:?} in:\n{}",
                String::from_utf8_lossy(&seen.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stdin.write_all(answer.as_bytes()).unwrap();
        stdin.write_all(b"\r").unwrap();
        stdin.flush().unwrap();
    }
    let status = child.wait().expect("script ends");
    drop(stdin);
    reader.join().unwrap();
    let bytes = seen.lock().unwrap().clone();
    TtyRun {
        bytes,
        success: status.success(),
    }
}

fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// The screen after `bytes`, as text (`styled`: with the style marks), trailing blank lines and
/// spaces dropped, durations masked.
fn screen(bytes: &[u8], styled: bool) -> String {
    let mut parser = vt100::Parser::new(400, COLUMNS, 0);
    parser.process(bytes);
    let screen = parser.screen();
    let mut lines = Vec::new();
    for row in 0..400 {
        let mut line = String::new();
        let mut style = (vt100::Color::Default, false, false);
        let mut run = String::new();
        let flush = |line: &mut String, run: &mut String, style: (vt100::Color, bool, bool)| {
            if run.is_empty() {
                return;
            }
            let plain = style == (vt100::Color::Default, false, false);
            if !styled || plain || run.trim().is_empty() {
                line.push_str(run);
            } else {
                let mut marks = Vec::new();
                match style.0 {
                    vt100::Color::Idx(n) => marks.push(n.to_string()),
                    vt100::Color::Rgb(r, g, b) => marks.push(format!("#{r:02x}{g:02x}{b:02x}")),
                    vt100::Color::Default => {}
                }
                if style.1 {
                    marks.push("b".into());
                }
                if style.2 {
                    marks.push("u".into());
                }
                line.push_str(&format!("«{}|{run}»", marks.join(",")));
            }
            run.clear();
        };
        for col in 0..COLUMNS {
            let Some(cell) = screen.cell(row, col) else {
                continue;
            };
            let cell_style = (cell.fgcolor(), cell.bold(), cell.underline());
            if cell_style != style {
                flush(&mut line, &mut run, style);
                style = cell_style;
            }
            let contents = cell.contents();
            run.push_str(if contents.is_empty() { " " } else { &contents });
        }
        flush(&mut line, &mut run, style);
        lines.push(line.trim_end().to_owned());
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    mask_durations(&lines.join("\n"))
}

/// Durations (`(0.4s)`, `(2m5s)`, `Duration: 1.2s`, `· 3.1s`) as `Ns`: they depend on the clock.
fn mask_durations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_alphanumeric());
        if starts {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit() || matches!(chars[j], '.' | 'm' | 'h'))
            {
                j += 1;
            }
            if j < chars.len()
                && chars[j] == 's'
                && (j + 1 == chars.len() || !chars[j + 1].is_ascii_alphanumeric())
                && chars[i..j].iter().any(char::is_ascii_digit)
            {
                out.push_str("Ns");
                i = j + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Compares `actual` with the snapshot `name` (or writes it, with `CAIRN_UPDATE_SNAPSHOTS=1`).
fn assert_snapshot(name: &str, actual: &str) {
    let path: PathBuf = repo()
        .join("tests/e2e/snapshots")
        .join(format!("{name}.txt"));
    let actual = format!("{actual}\n");
    if std::env::var_os("CAIRN_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (CAIRN_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "the screen differs from {}:\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// The part of a screen from the line starting with `from` on.
fn from_line<'a>(text: &'a str, from: &str) -> &'a str {
    let at = text
        .find(&format!("\n{from}"))
        .map(|at| at + 1)
        .or_else(|| text.starts_with(from).then_some(0))
        .unwrap_or_else(|| panic!("no line starting with {from:?} in:\n{text}"));
    &text[at..]
}

#[test]
fn tty_up_shows_the_tree_in_colour_and_the_prompt_with_details() {
    let sandbox = quickstart_stack();
    // The prompt: details, then yes.
    let run = in_tty(
        &sandbox,
        &["up", "--suppress-outputs", "--parallel", "1"],
        &[
            ("[yes/no/details] ", "details"),
            ("[yes/no/details] ", "yes"),
        ],
        &[],
    );
    assert!(run.success, "{}", String::from_utf8_lossy(&run.bytes));
    assert_no_raw_controls_but_styles(&run.bytes);
    let plain = screen(&run.bytes, false);
    assert_snapshot(
        "up-prompt-details",
        from_line(&plain, "Previewing update (dev):"),
    );
    let styled = screen(&run.bytes, true);
    assert_snapshot("up-colours", from_line(&styled, "«b|Updating (dev):»"));

    // A change, with colours off: the update's diff summary in the Info column.
    sandbox.ok(&["config", "set", "greeting", "Hi"]);
    let run = in_tty(
        &sandbox,
        &["up", "--yes", "--suppress-outputs", "--color", "never"],
        &[],
        &[],
    );
    assert!(run.success, "{}", String::from_utf8_lossy(&run.bytes));
    assert!(
        !run.bytes.contains(&0x1b) || only_cursor_moves(&run.bytes),
        "--color never writes no colour"
    );
    let plain = screen(&run.bytes, false);
    assert_snapshot("update-no-colour", from_line(&plain, "Updating (dev):"));

    // NO_COLOR does the same as --color never.
    let run = in_tty(&sandbox, &["preview"], &[], &[("NO_COLOR", "1")]);
    assert!(run.success);
    assert!(only_cursor_moves(&run.bytes), "NO_COLOR writes no colour");

    // A cancelled destroy changes nothing.
    let run = in_tty(
        &sandbox,
        &["destroy", "--suppress-outputs"],
        &[("[yes/no/details] ", "no")],
        &[],
    );
    assert!(!run.success, "declining fails the command");
    let plain = screen(&run.bytes, false);
    assert_snapshot(
        "destroy-declined",
        from_line(&plain, "Previewing destroy (dev):"),
    );
    assert!(
        sandbox.project.join("out/site/index.html").exists(),
        "nothing was destroyed"
    );
}

/// Warnings in colour: a resource's count in the Info column, the message in Diagnostics and
/// the summary's count, in yellow (the quick start, which runs warning-free, shows none).
#[test]
fn tty_a_warning_is_counted_and_told_in_yellow() {
    // `program-probe` in `hostile`: a resource whose provider logs warnings.
    let sandbox = probe_stack("hostile");
    let run = in_tty(&sandbox, &["up", "--yes", "--skip-preview"], &[], &[]);
    assert!(run.success, "{}", String::from_utf8_lossy(&run.bytes));
    let styled = screen(&run.bytes, true);
    // The program and its resource each log three warnings (and some messages).
    for wanted in [
        "loud      «2|created (Ns)»  3 «3|warnings»",
        "«3|warning: »probe@0.3.0: ",
        "«3|6 warnings»",
    ] {
        assert!(styled.contains(wanted), "no {wanted:?} in:\n{styled}");
    }
}

#[test]
fn tty_a_failing_resource_is_marked_and_its_hostile_error_told_once_escaped() {
    // `program-probe` in `hostile-fail`: one resource whose create fails with an error full of
    // control characters and a fake line of Cairn's own (tests/guests/program-probe).
    let sandbox = probe_stack("hostile-fail");
    let run = in_tty(&sandbox, &["up", "--yes", "--skip-preview"], &[], &[]);
    assert!(!run.success);
    assert_no_raw_controls_but_styles(&run.bytes);
    let plain = screen(&run.bytes, false);
    let shown = from_line(&plain, "Updating (dev):");
    assert_snapshot("up-error", shown);
}

/// Whether the only escape sequences in `bytes` are the live area's cursor movements and the
/// pty's own line handling (no SGR colour).
fn only_cursor_moves(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    !text.split('\x1b').skip(1).any(|seq| {
        seq.starts_with('[')
            && seq[1..]
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                .starts_with('m')
    })
}

/// The raw-control scan of `support`, after taking out Cairn's own colour and cursor sequences.
fn assert_no_raw_controls_but_styles(bytes: &[u8]) {
    // The pty ends lines with CR LF; the live area moves up with CR ESC [ n A.
    let text = String::from_utf8_lossy(bytes)
        .replace("\r\n", "\n")
        .replace("\r\x1b[", "\x1b[");
    let mut cleaned = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find('\x1b') {
        cleaned.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let body = after.strip_prefix('[').unwrap_or("");
        let len = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .filter(|&end| matches!(body.as_bytes().get(end), Some(b'm' | b'A' | b'J')));
        match len {
            Some(end) => rest = &body[end + 1..],
            None => panic!(
                "an escape sequence that is not Cairn's: {:?}",
                &after[..after.len().min(20)]
            ),
        }
    }
    cleaned.push_str(rest);
    assert_no_raw_controls("cairn in a terminal", cleaned.as_bytes());
}
