//! Interactive mode (a TTY): the plain mode's lines ([`super::plain::Lines`]), plus a live
//! area under them listing the running steps with their elapsed time, redrawn with ANSI cursor
//! movement on every event and every [`TICK`]. Live lines are cut to the terminal's width
//! (`COLUMNS`, else 80) so the redraw can count the lines it erases.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_engine::deploy::events::{EngineEvent, StepInfo};

use super::format::{LineStatus, format_step_line};
use super::plain::Lines;
use super::{Output, Renderer, lock};
use crate::terminal;

/// How often the live area is redrawn when no event arrives.
const TICK: Duration = Duration::from_millis(200);
/// At most this many running steps are listed in the live area.
const MAX_LIVE: usize = 20;

/// Interactive mode: the lines, and the live area redrawn under them.
pub(super) struct Live(Mutex<Screen>);

/// What the terminal shows, behind the lock.
struct Screen {
    lines: Lines,
    output: Output,
    /// Steps started and not yet ended, in start order.
    running: Vec<Running>,
    /// How many lines the live area currently occupies on screen.
    live_lines: usize,
    /// Terminal width: live lines are cut to fit so the redraw can count them.
    width: usize,
}

/// A running step: enough of its [`StepInfo`] to draw its line.
struct Running {
    step: StepInfo,
    since: Instant,
}

impl Live {
    pub(super) fn new(output: Output, show_secrets: bool, show_sames: bool) -> Live {
        Live(Mutex::new(Screen {
            lines: Lines::new(show_secrets, show_sames),
            output,
            running: Vec::new(),
            live_lines: 0,
            width: terminal_width(),
        }))
    }
}

impl Renderer for Live {
    fn event(&self, event: EngineEvent) {
        let mut screen = lock(&self.0);
        screen.track_running(&event);
        let text = screen.lines.event(event);
        screen.write(&text);
    }

    fn tick_every(&self) -> Option<Duration> {
        Some(TICK)
    }

    fn tick(&self) {
        let mut screen = lock(&self.0);
        if !screen.running.is_empty() {
            screen.write("");
        }
    }

    fn finish(&self) {
        let mut screen = lock(&self.0);
        screen.running.clear();
        screen.write("");
    }
}

/// The terminal's width in columns: `COLUMNS` if it holds one of at least 20, else 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(80)
}

impl Screen {
    /// Keeps the running steps: a step that gets a line runs from its start to its end; a
    /// deployment's start and its summary clear them.
    fn track_running(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::Started { .. } | EngineEvent::Summary { .. } => self.running.clear(),
            EngineEvent::StepStarted(step) if !step.preview && self.lines.shows(step) => {
                self.running.push(Running {
                    step: line_only(step),
                    since: Instant::now(),
                });
            }
            EngineEvent::StepFinished { step, .. } if self.lines.shows(step) => {
                self.stop_running(step);
            }
            EngineEvent::StepFailed { step, .. } => self.stop_running(step),
            _ => {}
        }
    }

    /// Takes `step` out of the running steps.
    fn stop_running(&mut self, step: &StepInfo) {
        if let Some(i) = self
            .running
            .iter()
            .position(|r| r.step.op == step.op && r.step.urn == step.urn)
        {
            self.running.remove(i);
        }
    }

    /// Writes `text` above the live area: erases the area, writes, and draws it again.
    fn write(&mut self, text: &str) {
        // Cursor to the start of the live area's first line, then clear to the screen's end.
        let cursor = match self.live_lines {
            0 => String::new(),
            n => format!("\x1b[{n}F\x1b[J"),
        };
        let live = self.live_area();
        self.live_lines = live.len();
        let mut out = text.to_owned();
        for line in live {
            out.push_str(&line);
            out.push('\n');
        }
        self.output.write_after(&cursor, &out);
    }

    /// The live area: a line per running step (at most [`MAX_LIVE`]), each cut to the width.
    fn live_area(&self) -> Vec<String> {
        let now = Instant::now();
        let mut lines: Vec<String> = self
            .running
            .iter()
            .take(MAX_LIVE)
            .map(|r| {
                let elapsed = now.saturating_duration_since(r.since);
                truncate(
                    &terminal::field(&format_step_line(&r.step, LineStatus::Running(elapsed))),
                    self.width,
                )
            })
            .collect();
        if self.running.len() > MAX_LIVE {
            lines.push(format!("  ... and {} more", self.running.len() - MAX_LIVE));
        }
        lines
    }
}

/// Cuts `line` to fewer than `width` characters, so it cannot wrap.
fn truncate(line: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(1);
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// The parts of a step its line shows (no states or changes), for the live area.
fn line_only(step: &StepInfo) -> StepInfo {
    StepInfo {
        op: step.op,
        urn: step.urn.clone(),
        resource_type: step.resource_type.clone(),
        custom: step.custom,
        parent: step.parent.clone(),
        old: None,
        new: None,
        changes: Vec::new(),
        replace_keys: Vec::new(),
        preview: step.preview,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::deploy::events::{EventSink, StepOp};

    #[test]
    fn interactive_mode_redraws_running_steps_above_finished_lines() {
        let (display, buf) = display(false, true, false, false);
        let s = pet(StepOp::Create);
        display.emit(EngineEvent::StepStarted(s.clone()));
        let live = buf.text();
        assert!(
            live.starts_with("  +  create   random:index:RandomPet  pet  creating (0.0s)\n"),
            "{live:?}"
        );
        display.emit(EngineEvent::StepFinished {
            step: s,
            duration: ms(400),
        });
        let text = buf.text();
        // The live line is erased (cursor up one line, clear below) before the finished line.
        assert!(
            text.contains(
                "\x1b[1F\x1b[J  +  create   random:index:RandomPet  pet  created (0.4s)\n"
            ),
            "{text:?}"
        );
        assert!(
            text.ends_with("created (0.4s)\n"),
            "nothing running: no live area"
        );
        drop(display);
    }

    #[test]
    fn interactive_live_lines_fit_the_terminal() {
        assert_eq!(truncate("abcdef", 80), "abcdef");
        assert_eq!(truncate("abcdef", 5), "abc…");
        assert_eq!(truncate("ééééé", 5), "ééé…");
    }
}
