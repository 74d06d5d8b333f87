//! Interactive mode (a TTY): Pulumi's live view. Under the header, a table of the resources
//! as a tree by parent (Type, Name, Status or Plan, Info) and a progress line are redrawn in
//! place (carriage return, cursor up, clear below) by the display's ticker every [`TICK`]
//! while something changed or runs: an event only updates the rows, so a fast deployment is
//! not slowed by its display. The area fits the terminal: lines are cut to its width, and
//! when there are more rows than lines, the running and failed rows are kept, then the
//! latest. When the deployment ends, the area is replaced by the whole table (diagnostic
//! counts in the Info column) and the closing sections.
//!
//! # The live view redraws on a clock, not per event
//!
//! An event only updates the rows (O(1)): only the display's ticker redraws, every 100 ms while
//! something changed or runs, so the engine's tasks never wait for a redraw of their own and a
//! 10,000-resource deployment with an instant provider pays for ~10 redraws a second, not 20,000. A
//! redraw is one walk over the rows with no allocation that grows with them: siblings are kept in
//! lists sorted (by URN) only when drawn — mostly sorted already, so the sort is near linear — the
//! walk's working space is kept between redraws, and tree prefixes are built only for the lines
//! shown. The area fits the terminal: more rows than lines keeps the running and failed rows, then
//! the last of the tree; the whole tree is printed once at the end, as Pulumi leaves it. Measured
//! with `cargo bench -p cairn-cli --bench deploy -- --display suppressed --display live --runs 21
//! 10000` (the median of the run-by-run wall ratios).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_engine::deploy::events::EngineEvent;

use super::format::format_duration;
use super::plain::{Human, HumanOptions};
use super::rows::{Rows, Status, TreeLine, with_prefixes};
use super::{Output, Renderer, lock};
use crate::terminal::Style;

/// How often the live area is redrawn at most, and when no event arrives.
const TICK: Duration = Duration::from_millis(100);

/// Interactive mode: the transcript, and the live area redrawn under its header.
pub(super) struct Live(Mutex<Screen>);

/// What the terminal shows, behind the lock.
struct Screen {
    human: Human,
    output: Output,
    /// How many lines the live area occupies on screen.
    live_lines: usize,
    /// The terminal's size: lines are cut to the width, the area to the height.
    width: usize,
    height: usize,
    /// Something changed since the last redraw.
    dirty: bool,
    started: Instant,
    /// The deployment has started and not yet ended: the area is shown.
    active: bool,
    /// The tree's lines, kept between redraws for their room.
    tree: Vec<TreeLine>,
}

impl Live {
    pub(super) fn new(output: Output, options: HumanOptions) -> Live {
        let (width, height) = terminal_size();
        Live(Mutex::new(Screen {
            human: Human::new(options),
            output,
            live_lines: 0,
            width,
            height,
            dirty: false,
            started: Instant::now(),
            active: false,
            tree: Vec::new(),
        }))
    }
}

impl Renderer for Live {
    fn event(&self, event: EngineEvent) {
        let mut screen = lock(&self.0);
        let ends = matches!(event, EngineEvent::Summary { .. });
        let starts = matches!(event, EngineEvent::Started { .. });
        let (text, _) = screen.human.event(event);
        if starts {
            screen.active = !screen.human.options.suppress_progress;
            screen.started = Instant::now();
            screen.write(&text);
            return;
        }
        if ends {
            // The whole table, then the closing sections, in place of the live area.
            let table = screen.final_table();
            screen.active = false;
            screen.write(&format!("{table}{text}"));
            return;
        }
        // The ticker redraws: an event only updates the rows, so the engine's tasks never
        // wait for a redraw of their own.
        screen.dirty = true;
    }

    fn tick_every(&self) -> Option<Duration> {
        Some(TICK)
    }

    fn tick(&self) {
        let mut screen = lock(&self.0);
        let (running, _, _) = screen.human.rows.progress();
        if screen.active && (screen.dirty || running > 0) {
            screen.write("");
        }
    }

    fn finish(&self) {
        let mut screen = lock(&self.0);
        if screen.active {
            // Ended without a summary (an error): leave the table as it stood.
            let table = screen.final_table();
            screen.active = false;
            screen.write(&table);
        }
    }

    fn details(&self) -> String {
        lock(&self.0).human.details()
    }
}

/// The terminal's size: `COLUMNS` and `LINES` if set (tests, and shells that export them),
/// else what the terminal on stdout says, else 80×24.
fn terminal_size() -> (usize, usize) {
    let env = |name: &str, min: usize| {
        std::env::var(name)
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|n| *n >= min)
    };
    let (mut width, mut height) = (80, 24);
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes a `winsize` into the struct it is given, nothing else.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0
            && size.ws_col >= 20
            && size.ws_row >= 5
        {
            width = usize::from(size.ws_col);
            height = usize::from(size.ws_row);
        }
    }
    (
        env("COLUMNS", 20).unwrap_or(width),
        env("LINES", 5).unwrap_or(height),
    )
}

impl Screen {
    /// The status column's title: what a preview plans, or what an update does.
    fn status_title(&self) -> &'static str {
        if self.human.preview { "Plan" } else { "Status" }
    }

    /// The whole table, every shown row, diagnostic counts in the Info column, and a blank
    /// line; nothing if no row is shown.
    fn final_table(&mut self) -> String {
        if self.human.options.suppress_progress {
            return String::new();
        }
        let title = self.status_title();
        let colors = self.human.options.colors;
        let rows = &mut self.human.rows;
        let tree = rows.tree();
        if tree.is_empty() {
            return String::new();
        }
        let lines = with_prefixes(&tree, 0..tree.len());
        let mut out = String::new();
        for line in rows.table(&lines, Instant::now(), colors, true, title) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Writes `text` above the live area: erases the area, writes, and draws it again.
    fn write(&mut self, text: &str) {
        // Cursor to the start of the live area's first line (carriage return, up n lines: what
        // every terminal knows), then clear to the screen's end.
        let cursor = match self.live_lines {
            0 => String::new(),
            n => format!("\r\x1b[{n}A\x1b[J"),
        };
        let live = if self.active && self.human.rows.progress().2 > 0 {
            self.live_area()
        } else {
            Vec::new()
        };
        self.live_lines = live.len();
        self.dirty = false;
        let mut out = text.to_owned();
        for line in live {
            out.push_str(&line);
            out.push('\n');
        }
        self.output.write_styled_after(&cursor, &out);
    }

    /// The live area: the table (as many rows as the terminal has lines for) and the progress
    /// line, each cut to the width.
    fn live_area(&mut self) -> Vec<String> {
        let title = self.status_title();
        let colors = self.human.options.colors;
        let room = self.height.saturating_sub(3).max(2);
        let rows = &mut self.human.rows;
        rows.tree_into(&mut self.tree);
        let picked = if self.tree.len() > room {
            keep_in_view(rows, &self.tree, room)
        } else {
            (0..self.tree.len()).collect()
        };
        let lines = with_prefixes(&self.tree, picked);
        let mut lines = rows.table(&lines, Instant::now(), colors, false, title);
        let (running, ended, total) = rows.progress();
        let mut progress = format!("{ended} of {total} done");
        if running > 0 {
            progress.push_str(&format!(", {running} in progress"));
        }
        progress.push_str(&format!(" · {}", format_duration(self.started.elapsed())));
        lines.push(Style::UNIMPORTANT.paint(colors, &format!("    {progress}")));
        lines
            .into_iter()
            .map(|line| fit(&line, self.width))
            .collect()
    }
}

/// The lines of `tree` to show in `room` lines: running and failed rows first, then the
/// latest, kept in tree order.
fn keep_in_view(rows: &Rows, tree: &[TreeLine], room: usize) -> Vec<usize> {
    let mut keep = vec![false; tree.len()];
    let mut kept = 0;
    for (k, line) in tree.iter().enumerate() {
        if kept < room
            && matches!(
                rows.at(line.row).status,
                Status::Running(_) | Status::Failed(_)
            )
        {
            keep[k] = true;
            kept += 1;
        }
    }
    for k in (0..tree.len()).rev() {
        if kept >= room {
            break;
        }
        if !keep[k] {
            keep[k] = true;
            kept += 1;
        }
    }
    (0..tree.len()).filter(|&k| keep[k]).collect()
}

/// Cuts `line` to fewer than `width` visible characters, so it cannot wrap (the redraw counts
/// lines); colour sequences are not counted, and a cut line ends its colour.
fn fit(line: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(1);
    let mut visible = 0;
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            for next in chars.by_ref() {
                out.push(next);
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        if visible + 1 == max && chars.peek().is_some() {
            out.push('…');
            if line.contains('\x1b') {
                out.push_str("\x1b[0m");
            }
            return out;
        }
        out.push(c);
        visible += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::deploy::events::{EventSink, StepOp};

    #[test]
    fn the_live_area_is_replaced_by_the_final_table() {
        let (display, buf) = display(false, true, false, false);
        for event in update_events(false) {
            display.emit(event);
        }
        drop(display);
        let text = buf.text();
        // The final table: after the last redraw's erase, the rows as a tree.
        let last = text.rsplit("\x1b[J").next().unwrap();
        assert!(
            last.starts_with("     Type                    Name      Status"),
            "{last}"
        );
        assert!(
            last.contains(" +   random:index:RandomPet  pet       created ("),
            "{last}"
        );
        assert!(last.contains("\nResources:\n"), "{last}");
    }

    #[test]
    fn live_lines_fit_the_terminal() {
        assert_eq!(fit("abcdef", 80), "abcdef");
        assert_eq!(fit("abcdef", 5), "abc…");
        assert_eq!(fit("ééééé", 5), "ééé…");
        let painted = Style::CREATE.paint(true, "abcdef");
        assert_eq!(fit(&painted, 5), "\x1b[32mabc…\x1b[0m");
    }

    #[test]
    fn a_tall_tree_keeps_running_rows_in_view() {
        let mut rows = super::super::rows::Rows::new(false, false);
        for i in 0..10 {
            let s = step(StepOp::Create, "a:b:C", &format!("r{i}"));
            rows.started(&s);
            if i != 2 {
                rows.finished(&s, ms(1));
            }
        }
        let tree = rows.tree();
        let kept = keep_in_view(&rows, &tree, 3);
        let names: Vec<&str> = kept
            .iter()
            .map(|&k| rows.at(tree[k].row).urn.name())
            .collect();
        assert_eq!(names, ["r2", "r8", "r9"]);
    }
}
