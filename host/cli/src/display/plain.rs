//! Plain mode (not a TTY): a line per resource, written once when its step ends, in the order
//! steps end; a planned step (a preview) is written when it is planned. Stable for logs and
//! tests. [`Lines`] makes these lines; the interactive mode ([`super::live`]) prints the same
//! lines above its live area.
//!
//! ```text
//!   +  create   random:index:RandomPet  pet  created (0.4s)
//!   ~  update   aws:s3:Bucket  logs  updated (1.2s)
//!       ~ tags.env: "dev" => "prod"
//!       + size: 3
//!       - legacy: true
//! warning: logs: bucket versioning is disabled
//!
//! Outputs:
//!     url: "https://example.com"
//!
//! Resources:
//!     + 1 created
//!     ~ 1 updated
//!     2 changes. 4 unchanged
//!
//! Duration: 1.6s
//! ```
//!
//! `same` steps and `refresh` steps without drift are hidden unless `show_sames`; debug
//! diagnostics always are. The diff of a replacement is shown under its `replace` step only, not
//! again under `create-replacement`/`delete-replaced`. Outputs of the root stack resource
//! (`pulumi:pulumi:Stack`) are printed with the summary.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Mutex;

use cairn_engine::deploy::events::{EngineEvent, Severity, StepInfo, StepOp};
use cairn_engine::urn::ROOT_STACK_TYPE;
use cairn_engine::{PropertyMap, Urn};

use super::format::{
    LineStatus, PolicyReport, SummaryInfo, format_diagnostic, format_diff, format_outputs,
    format_policies, format_step_line, format_summary,
};
use super::{Output, Renderer, lock};
use crate::terminal;

/// Indentation of the lines under a step (diffs, errors).
const DETAIL_INDENT: &str = "      ";

/// Plain mode: each event's lines, written as they come.
pub(super) struct Plain(Mutex<(Lines, Output)>);

impl Plain {
    pub(super) fn new(output: Output, show_secrets: bool, show_sames: bool) -> Plain {
        Plain(Mutex::new((Lines::new(show_secrets, show_sames), output)))
    }
}

impl Renderer for Plain {
    fn event(&self, event: EngineEvent) {
        let mut guard = lock(&self.0);
        let (lines, output) = &mut *guard;
        let text = lines.event(event);
        output.write(&text);
    }
}

/// The lines of the human modes: what each event adds to the transcript.
pub(super) struct Lines {
    show_secrets: bool,
    show_sames: bool,
    /// Planned steps already written (a preview may report a step as started and finished).
    planned: HashSet<(Urn, StepOp)>,
    /// The root stack's outputs, printed with the summary.
    stack_outputs: Option<PropertyMap>,
    failed_steps: usize,
    /// What the policy packs reported, printed with the summary.
    policies: PolicyReport,
}

impl Lines {
    pub(super) fn new(show_secrets: bool, show_sames: bool) -> Lines {
        Lines {
            show_secrets,
            show_sames,
            planned: HashSet::new(),
            stack_outputs: None,
            failed_steps: 0,
            policies: PolicyReport::default(),
        }
    }

    /// Whether `step` gets a line (see [`is_shown`]).
    pub(super) fn shows(&self, step: &StepInfo) -> bool {
        is_shown(step, self.show_sames)
    }

    /// The text one event adds, each line ending in a newline (empty when it adds none).
    pub(super) fn event(&mut self, event: EngineEvent) -> String {
        match event {
            EngineEvent::Started { .. } => {
                self.planned.clear();
                self.stack_outputs = None;
                self.failed_steps = 0;
                self.policies = PolicyReport::default();
                String::new()
            }
            EngineEvent::PolicyPacks(packs) => {
                self.policies.packs = packs;
                String::new()
            }
            EngineEvent::PolicyViolation {
                pack,
                urn,
                violation,
            } => {
                self.policies.violations.push((pack, urn, violation));
                String::new()
            }
            EngineEvent::PolicyRemediation { pack, policy, .. } => {
                self.policies.remediations.push((pack, policy));
                String::new()
            }
            EngineEvent::StepStarted(step) | EngineEvent::StepFinished { step, .. }
                if !self.shows(&step) =>
            {
                String::new()
            }
            EngineEvent::StepStarted(step) | EngineEvent::StepFinished { step, .. }
                if step.preview =>
            {
                self.planned_block(&step)
            }
            // A step that runs gets its line when it ends.
            EngineEvent::StepStarted(_) => String::new(),
            EngineEvent::StepFinished { step, duration } => {
                self.block(&step, LineStatus::Done(duration), None)
            }
            EngineEvent::StepFailed {
                step,
                error,
                duration,
            } => {
                self.failed_steps += 1;
                self.planned.insert((step.urn.clone(), step.op));
                self.block(&step, LineStatus::Failed(duration), Some(&error))
            }
            EngineEvent::Diagnostic {
                severity: Severity::Debug,
                ..
            } => String::new(),
            EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            } => {
                let mut out = format_diagnostic(severity, urn.as_ref(), &message);
                out.push('\n');
                out
            }
            EngineEvent::Outputs { urn, outputs } => {
                if urn.qualified_type() == ROOT_STACK_TYPE {
                    self.stack_outputs = Some(outputs);
                }
                String::new()
            }
            EngineEvent::Summary {
                operation,
                preview,
                changes,
                unchanged,
                duration,
                succeeded,
            } => {
                let mut out = String::new();
                let policies = std::mem::take(&mut self.policies);
                if !policies.is_empty() {
                    out.push('\n');
                    out.push_str(&format_policies(&policies));
                }
                if let Some(outputs) = self.stack_outputs.take()
                    && !outputs.is_empty()
                {
                    out.push('\n');
                    out.push_str(&format_outputs(&outputs, self.show_secrets));
                }
                out.push('\n');
                out.push_str(&format_summary(&SummaryInfo {
                    operation,
                    preview,
                    changes: changes.iter().map(|(op, n)| (*op, *n)).collect(),
                    unchanged,
                    duration,
                    succeeded,
                    failed_steps: self.failed_steps,
                }));
                out
            }
        }
    }

    /// A planned step's block, the first time the step is reported.
    fn planned_block(&mut self, step: &StepInfo) -> String {
        if self.planned.insert((step.urn.clone(), step.op)) {
            self.block(step, LineStatus::Planned, None)
        } else {
            String::new()
        }
    }

    /// A step line, its diff, and its error, each line ending in a newline.
    fn block(&self, step: &StepInfo, status: LineStatus, error: Option<&str>) -> String {
        let mut out = format_step_line(step, status);
        out.push('\n');
        for line in format_diff(step, self.show_secrets) {
            let _ = writeln!(out, "{DETAIL_INDENT}{line}");
        }
        if let Some(error) = error {
            let first = format!("{DETAIL_INDENT}error: ");
            let indent = format!("{DETAIL_INDENT}  ");
            let _ = writeln!(out, "{}", terminal::message(&first, &indent, error));
        }
        out
    }
}

/// Whether a step gets a line: changes and reads always, the rest with `show_sames`.
fn is_shown(step: &StepInfo, show_sames: bool) -> bool {
    show_sames
        || step.op.is_change()
        || step.op == StepOp::Read
        || (step.op == StepOp::Refresh && !step.changes.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::deploy::events::{ChangeKind, EventSink};

    #[test]
    fn unchanged_steps_get_a_line_only_with_show_sames() {
        let mut drifted = pet(StepOp::Refresh);
        drifted.changes = vec![change("size", ChangeKind::Add, None, Some(1i64.into()))];
        for op in ALL_OPS {
            let expected = !matches!(op, StepOp::Same | StepOp::Refresh);
            assert_eq!(is_shown(&pet(op), false), expected, "{op}");
            assert!(is_shown(&pet(op), true), "{op} with show_sames");
        }
        assert!(is_shown(&drifted, false), "a refresh with drift");
    }

    const UPDATE_TRANSCRIPT: &str = r#"  +  create   random:index:RandomPet  pet  created (0.2s)
  ~  update   aws:s3:Bucket  logs  updated (0.3s)
      ~ tags.env: "dev" => "prod"
      + size: 3
      - legacy: true
      ~ password: [secret] => [secret]
  ++ create-replacement aws:ec2:Instance  web  created replacement (0.4s)
  +- replace  aws:ec2:Instance  web  replaced (0.5s)
      ~ ami: "ami-1" => [unknown] (forces replacement)
  -  delete   aws:s3:Bucket  old  deleted (0.6s)
  -- delete-replaced aws:ec2:Instance  web  deleted original (0.7s)
warning: logs: versioning is disabled

Outputs:
    petName: "brave-ant"
    dbPassword: [secret]

Resources:
    + 1 created
    ~ 1 updated
    +-1 replaced
    - 1 deleted
    4 changes. 1 unchanged

Duration: 1.2s
"#;

    #[test]
    fn plain_output_is_a_stable_transcript() {
        let (display, buf) = display(false, false, false, false);
        for event in update_events(false) {
            display.emit(event);
        }
        drop(display);
        assert_eq!(buf.text(), UPDATE_TRANSCRIPT);
    }

    #[test]
    fn previews_use_planned_verbs_and_print_each_step_once() {
        let (display, buf) = display(false, false, false, false);
        for event in update_events(true) {
            display.emit(event);
        }
        drop(display);
        let text = buf.text();
        assert_eq!(
            text.matches("  +  create   random:index:RandomPet  pet\n")
                .count(),
            1,
            "{text}"
        );
        assert!(
            text.contains("  +- replace  aws:ec2:Instance  web\n"),
            "{text}"
        );
        assert!(
            text.contains("    + 1 to create\n    ~ 1 to update\n    +-1 to replace\n"),
            "{text}"
        );
        for done in ["created (", "updated (", "replaced (", "deleted ("] {
            assert!(!text.contains(done), "{done} in a preview:\n{text}");
        }
    }

    #[test]
    fn sames_are_hidden_unless_asked_for() {
        for (show_sames, expected) in [(false, 0), (true, 1)] {
            let (display, buf) = display(false, false, false, show_sames);
            for event in update_events(false) {
                display.emit(event);
            }
            drop(display);
            let line = "     same     pulumi:pulumi:Stack  proj-dev\n";
            assert_eq!(buf.text().matches(line).count(), expected, "{}", buf.text());
        }
    }

    #[test]
    fn failures_print_the_error_under_the_resource() {
        let (display, buf) = display(false, false, false, false);
        let mut s = pet(StepOp::Update);
        s.changes = vec![change(
            "length",
            ChangeKind::Update,
            Some(1i64.into()),
            Some(2i64.into()),
        )];
        display.emit(EngineEvent::StepStarted(s.clone()));
        display.emit(EngineEvent::StepFailed {
            step: s,
            error: "quota exceeded\nretry later".into(),
            duration: ms(300),
        });
        display.emit(summary_event(false, &[], 0, false));
        drop(display);
        let expected = "  ~  update   random:index:RandomPet  pet  failed (0.3s)\n      ~ length: 1 => 2\n      error: quota exceeded\n        retry later\n\nResources:\n    no changes\n\nDuration: 1.2s\n\nThe update failed: 1 step failed.\n";
        assert_eq!(buf.text(), expected);
    }
}
