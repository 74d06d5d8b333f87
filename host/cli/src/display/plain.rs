//! Plain mode (not a TTY), and the transcript state both human modes share ([`Human`]).
//!
//! Plain mode prints Pulumi's non-interactive progress: a header, then a line each time a
//! resource's status changes (started, done, failed; a preview's planned steps once), then the
//! closing sections. Stable for logs and tests:
//!
//! ```text
//! Updating (dev):
//!
//!  +  random:index:RandomPet pet creating (0.0s)
//!  +  random:index:RandomPet pet created (0.4s)
//!  ~  aws:s3:Bucket logs updating (0.0s) [diff: ~tags]
//!  ~  aws:s3:Bucket logs updated (1.2s) [diff: ~tags]
//!
//! Diagnostics:
//!   aws:s3:Bucket (logs):
//!     warning: bucket versioning is disabled
//!
//! Outputs:
//!     url: "https://example.com"
//!
//! Resources:
//!     + 1 created
//!     ~ 1 updated
//!     2 changes. 4 unchanged
//!     1 warning
//!
//! Duration: 1.6s
//! ```
//!
//! Which rows get lines is [`super::rows`]'s call (no default providers, unchanged ones only
//! with `show_sames`, replacement halves only with `show_replacement_steps`). Property diffs
//! are shown only with `show_diff`, in a `Changes:` section; diagnostics and step errors in the
//! `Diagnostics:` section, grouped by resource, each once.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use cairn_engine::deploy::events::{EngineEvent, Operation, Severity, StepInfo, StepOp};
use cairn_engine::urn::ROOT_STACK_TYPE;
use cairn_engine::{PropertyMap, Urn};

use super::format::{
    DiagnosticGroup, PolicyReport, SummaryInfo, format_details, format_diagnostics, format_outputs,
    format_policies, format_summary,
};
use super::rows::{Change, Rows, is_default_provider, is_replacement_half};
use super::{Output, Renderer, lock};
use crate::terminal::Style;

/// What the human modes are asked to show.
#[derive(Debug, Clone, Default)]
pub(super) struct HumanOptions {
    pub show_secrets: bool,
    pub show_sames: bool,
    pub show_replacement_steps: bool,
    /// Property diffs, in a `Changes:` section.
    pub show_diff: bool,
    /// Keep the steps' diffs for [`Human::details`] ("details" at the prompt).
    pub keep_details: bool,
    /// No progress while running: only the header and the closing sections.
    pub suppress_progress: bool,
    pub colors: bool,
    /// The stack's name, for the header (`Updating (dev):`); no header without it.
    pub stack: Option<String>,
}

/// The transcript of a deployment as the human modes show it: the rows, and what the closing
/// sections need.
pub(super) struct Human {
    pub options: HumanOptions,
    pub rows: Rows,
    pub preview: bool,
    /// The root stack resource: diagnostics about no resource are shown under it.
    root: Option<Urn>,
    diagnostics: Vec<DiagnosticGroup>,
    diagnostic_index: HashMap<Option<Urn>, usize>,
    failed_steps: usize,
    warnings: usize,
    stack_outputs: Option<PropertyMap>,
    /// The outputs the stack had before (from its step), to show how they changed.
    old_stack_outputs: Option<PropertyMap>,
    policies: PolicyReport,
    /// Steps with changes, for `Changes:` and the prompt's details.
    details: Vec<StepInfo>,
    detailed: HashSet<(Urn, StepOp)>,
}

impl Human {
    pub fn new(options: HumanOptions) -> Human {
        Human {
            rows: Rows::new(options.show_sames, options.show_replacement_steps),
            options,
            preview: false,
            root: None,
            diagnostics: Vec::new(),
            diagnostic_index: HashMap::new(),
            failed_steps: 0,
            warnings: 0,
            stack_outputs: None,
            old_stack_outputs: None,
            policies: PolicyReport::default(),
            details: Vec::new(),
            detailed: HashSet::new(),
        }
    }

    /// Takes in one event. Returns the text it adds to a transcript (plain mode's lines, each
    /// ending in a newline; the live mode prints only the header and the closing sections of
    /// it) and the URN whose line changed.
    pub fn event(&mut self, event: EngineEvent) -> (String, Option<Urn>) {
        match event {
            EngineEvent::Started { operation, preview } => {
                let options = self.options.clone();
                *self = Human::new(options);
                self.preview = preview;
                (self.header(operation, preview), None)
            }
            EngineEvent::PolicyPacks(packs) => {
                self.policies.packs = packs;
                (String::new(), None)
            }
            EngineEvent::PolicyViolation {
                pack,
                urn,
                violation,
            } => {
                self.policies.violations.push((pack, urn, violation));
                (String::new(), None)
            }
            EngineEvent::PolicyRemediation { pack, policy, .. } => {
                self.policies.remediations.push((pack, policy));
                (String::new(), None)
            }
            EngineEvent::StepStarted(step) => {
                self.note_root(&step);
                if step.preview {
                    self.keep_details(&step);
                }
                let change = self.rows.started(&step);
                (String::new(), self.changed(change, step.urn))
            }
            EngineEvent::StepFinished { step, duration } => {
                self.note_root(&step);
                self.keep_details(&step);
                let change = self.rows.finished(&step, duration);
                (String::new(), self.changed(change, step.urn))
            }
            EngineEvent::StepFailed {
                step,
                error,
                duration,
            } => {
                self.failed_steps += 1;
                self.add_diagnostic(Some(step.urn.clone()), Severity::Error, error.clone());
                let change = self.rows.failed(&step, &error, duration);
                (String::new(), self.changed(change, step.urn))
            }
            EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            } => {
                if severity == Severity::Debug || urn.as_ref().is_some_and(is_default_provider) {
                    return (String::new(), None);
                }
                if severity == Severity::Warning {
                    self.warnings += 1;
                }
                let urn = urn.or_else(|| self.root.clone());
                if let Some(urn) = &urn {
                    self.rows.diagnostic(urn, severity, &message);
                }
                self.add_diagnostic(urn, severity, message);
                (String::new(), None)
            }
            EngineEvent::Outputs { urn, outputs } => {
                if urn.qualified_type() == ROOT_STACK_TYPE {
                    self.stack_outputs = Some(outputs);
                }
                (String::new(), None)
            }
            EngineEvent::Summary {
                operation,
                preview,
                changes,
                unchanged,
                duration,
                succeeded,
                interrupted,
            } => {
                // Pulumi reports a deployment that failed or was cancelled as an error of the
                // stack (`update failed`), so the stack counts as errored even when only its
                // resources failed.
                let stack_errored = self
                    .root
                    .as_ref()
                    .and_then(|urn| self.rows.get(urn))
                    .is_some_and(|row| row.errors > 0);
                let resources_errored =
                    self.rows.errored() + usize::from(!succeeded && !stack_errored);
                let summary = SummaryInfo {
                    operation,
                    preview,
                    changes: changes.iter().map(|(op, n)| (*op, *n)).collect(),
                    unchanged,
                    duration,
                    succeeded,
                    interrupted,
                    failed_steps: self.failed_steps,
                    resources_errored,
                    warnings: self.warnings,
                    colors: self.options.colors,
                };
                (self.closing(&summary), None)
            }
        }
    }

    /// The URN whose line to print, if the change calls for one and progress is shown.
    fn changed(&self, change: Change, urn: Urn) -> Option<Urn> {
        (change == Change::Line && !self.options.suppress_progress).then_some(urn)
    }

    fn note_root(&mut self, step: &StepInfo) {
        if step.urn.qualified_type() != ROOT_STACK_TYPE {
            return;
        }
        if self.root.is_none() {
            self.root = Some(step.urn.clone());
        }
        if let Some(old) = &step.old {
            self.old_stack_outputs = Some(old.outputs.clone());
        }
    }

    /// Keeps a step with changes for the `Changes:` section and the prompt's details: once per
    /// resource and op, not the halves of a replacement (its `replace` step has the diff).
    fn keep_details(&mut self, step: &StepInfo) {
        if !(self.options.show_diff || self.options.keep_details)
            || !step.op.is_change()
            || is_replacement_half(step.op)
            || is_default_provider(&step.urn)
        {
            return;
        }
        if self.detailed.insert((step.urn.clone(), step.op)) {
            self.details.push(step.clone());
        }
    }

    fn add_diagnostic(&mut self, urn: Option<Urn>, severity: Severity, message: String) {
        let i = match self.diagnostic_index.get(&urn) {
            Some(&i) => i,
            None => {
                self.diagnostics.push((urn.clone(), Vec::new()));
                self.diagnostic_index
                    .insert(urn, self.diagnostics.len() - 1);
                self.diagnostics.len() - 1
            }
        };
        self.diagnostics[i].1.push((severity, message));
    }

    /// `Previewing update (dev):` / `Updating (dev):` and a blank line, as Pulumi heads its
    /// output.
    fn header(&self, operation: Operation, preview: bool) -> String {
        let Some(stack) = &self.options.stack else {
            return String::new();
        };
        let label = match (operation, preview) {
            (Operation::Update, true) => "Previewing update",
            (Operation::Refresh, true) => "Previewing refresh",
            (Operation::Destroy, true) => "Previewing destroy",
            (Operation::Import, true) => "Previewing import",
            (Operation::Update, false) => "Updating",
            (Operation::Refresh, false) => "Refreshing",
            (Operation::Destroy, false) => "Destroying",
            (Operation::Import, false) => "Importing",
        };
        let text = format!("{label} ({}):", crate::terminal::field(stack));
        format!("{}\n\n", Style::BOLD.paint(self.options.colors, &text))
    }

    /// The `Changes:` section: each changed resource's property diff.
    pub fn details(&self) -> String {
        if self.details.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "{}\n",
            Style::HEADLINE.paint(self.options.colors, "Changes:")
        );
        // By URN, as the tree: not in the order parallel steps happened to run.
        let mut steps: Vec<&StepInfo> = self.details.iter().collect();
        steps.sort_by(|a, b| a.urn.as_str().cmp(b.urn.as_str()));
        for (i, step) in steps.into_iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format_details(
                step,
                self.options.show_secrets,
                self.options.colors,
            ));
        }
        out
    }

    /// The closing sections: changes (with `show_diff`), diagnostics, policies, outputs and
    /// the summary, each after a blank line.
    fn closing(&mut self, summary: &SummaryInfo) -> String {
        let mut out = String::new();
        let colors = self.options.colors;
        if self.options.show_diff {
            let details = self.details();
            if !details.is_empty() {
                out.push('\n');
                out.push_str(&details);
            }
        }
        if self
            .diagnostics
            .iter()
            .any(|(_, messages)| !messages.is_empty())
        {
            // Those about no resource first, then the stack's, then by URN, as the tree.
            let root = self.root.clone();
            let mut groups = std::mem::take(&mut self.diagnostics);
            groups.sort_by_key(|(urn, _)| {
                (
                    urn.is_some(),
                    urn != &root,
                    urn.as_ref().map(|u| u.as_str().to_owned()),
                )
            });
            out.push('\n');
            out.push_str(&format_diagnostics(&groups, colors));
        }
        let policies = std::mem::take(&mut self.policies);
        if !policies.is_empty() {
            out.push('\n');
            out.push_str(&format_policies(&policies));
        }
        // An update shows every output; a preview only those that change.
        let old = self.old_stack_outputs.take();
        if let Some(outputs) = self.stack_outputs.take()
            && (!outputs.is_empty() || old.as_ref().is_some_and(|o| !o.is_empty()))
            && let Some(section) = format_outputs(
                old.as_ref(),
                &outputs,
                !summary.preview,
                self.options.show_secrets,
                colors,
            )
        {
            out.push('\n');
            out.push_str(&section);
        }
        out.push('\n');
        out.push_str(&format_summary(summary));
        // A blank line closes the deployment's output, as Pulumi's does (before the next
        // header, or the prompt).
        out.push('\n');
        out
    }
}

/// Plain mode: each event's lines, written as they come.
pub(super) struct Plain(Mutex<(Human, Output)>);

impl Plain {
    pub(super) fn new(output: Output, options: HumanOptions) -> Plain {
        Plain(Mutex::new((Human::new(options), output)))
    }
}

impl Renderer for Plain {
    fn event(&self, event: EngineEvent) {
        let mut guard = lock(&self.0);
        let (human, output) = &mut *guard;
        let (mut text, changed) = human.event(event);
        if let Some(urn) = changed
            && let Some(line) = human.rows.line(&urn, human.options.colors)
        {
            text.push_str(&line);
            text.push('\n');
        }
        output.write(&text);
    }

    fn details(&self) -> String {
        lock(&self.0).0.details()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::deploy::events::{ChangeKind, EventSink};

    const UPDATE_TRANSCRIPT: &str = r#" +  random:index:RandomPet pet creating (0.0s)
 +  random:index:RandomPet pet created (0.2s)
 ~  aws:s3:Bucket logs updating (0.0s) [diff: +size-legacy~password,tags]
 ~  aws:s3:Bucket logs updated (0.3s) [diff: +size-legacy~password,tags]
 +- aws:ec2:Instance web replacing (0.0s)
 +- aws:ec2:Instance web replaced (0.5s) [diff: ~ami]
 -  aws:s3:Bucket old deleting (0.0s)
 -  aws:s3:Bucket old deleted (0.6s)

Diagnostics:
  aws:s3:Bucket (logs):
    warning: versioning is disabled

Outputs:
    dbPassword: [secret]
    petName   : "brave-ant"

Resources:
    + 1 created
    ~ 1 updated
    +-1 replaced
    - 1 deleted
    4 changes. 1 unchanged
    1 warning

Duration: 1.2s

"#;

    /// The transcript with durations rounded away: they depend on the clock.
    fn timeless(text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let mut line = line.to_owned();
            while let Some(at) = line.find(" (")
                && let Some(end) = line[at..].find("s)")
                && line[at + 2..at + end]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == 'm' || c == 'h')
            {
                line.replace_range(at..at + end + 2, " (Ts)");
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    #[test]
    fn plain_output_is_a_stable_transcript() {
        let (display, buf) = display(false, false, false, false);
        for event in update_events(false) {
            display.emit(event);
        }
        drop(display);
        assert_eq!(timeless(&buf.text()), timeless(UPDATE_TRANSCRIPT));
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
            text.matches(" +  random:index:RandomPet pet create\n")
                .count(),
            1,
            "{text}"
        );
        assert!(
            text.contains(" +- aws:ec2:Instance web replace [diff: ~ami]\n"),
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
            let count = buf
                .text()
                .lines()
                .filter(|l| l.trim() == "pulumi:pulumi:Stack proj-dev")
                .count();
            assert_eq!(count, expected, "{}", buf.text());
        }
    }

    #[test]
    fn failures_are_marked_on_the_row_and_told_once_in_diagnostics() {
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
        let expected = " ~  random:index:RandomPet pet updating (Ts) [diff: ~length]\n ~  random:index:RandomPet pet **updating failed** [diff: ~length]; error: quota exceeded\n\nDiagnostics:\n  random:index:RandomPet (pet):\n    error: quota exceeded\n      retry later\n\nResources:\n    no changes\n    2 errored\n\nDuration: 1.2s\n\nThe update failed: 1 step failed.\n\n";
        assert_eq!(timeless(&buf.text()), expected);
        assert_eq!(buf.text().matches("retry later").count(), 1);
    }
}
