//! The resource rows of the human display: one per resource, kept up to date from the event
//! stream, and drawn as Pulumi draws them — a tree by parent with Type, Name, Status and Info
//! columns (the live view and the final table), or one line per status change (plain mode).
//!
//! A row's status follows its steps. Unless replacement steps are asked for, the halves of a
//! replacement (`create-replacement`, `delete-replaced`, ...) fold into the resource's
//! `replace` row: "replacing" while the new copy is created, "replaced" once the logical
//! replace is reported. Default providers never get a row (Pulumi treats their steps as
//! internal), and unchanged resources only with `show_sames`, or as the parent of a row shown.
//!
//! ```text
//!      Type                       Name      Status          Info
//!  +   pulumi:pulumi:Stack        proj-dev  created (1.2s)
//!  ~   ├─ aws:s3:Bucket           logs      updated (0.3s)  [diff: ~tags]
//!  +   └─ random:index:RandomPet  pet       created (0.4s)  1 warning
//! ```

use std::collections::HashMap;
use std::time::{Duration, Instant};

use cairn_engine::Urn;
use cairn_engine::deploy::events::{Severity, StepInfo, StepOp};
use cairn_engine::urn::ROOT_STACK_TYPE;

use super::format::{diff_summary, format_duration, op_style, op_symbol};
use crate::terminal::{self, Style};

/// What a row's status column says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Status {
    /// Known only as a parent of another row, or unchanged: no status.
    Quiet,
    /// Planned in a preview: the status names the operation.
    Planned,
    /// Running since this instant.
    Running(Instant),
    /// Ended after this long.
    Done(Duration),
    /// Failed after this long.
    Failed(Duration),
}

/// One resource's row.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub urn: Urn,
    /// Whether this is the root stack resource (always shown once it has a step).
    root_stack: bool,
    /// The type token, made visible.
    pub resource_type: String,
    pub parent: Option<Urn>,
    /// The operation the row shows (`None`: no step yet).
    pub op: Option<StepOp>,
    pub status: Status,
    /// When the row's first running step started (a replacement runs over several steps).
    pub since: Option<Instant>,
    /// The plain text of the diff summary (`diff: ~tags`), if the step changed properties.
    pub diff: Option<String>,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// The first line of the latest diagnostic or error (the plain mode's info column).
    pub last_message: Option<String>,
}

impl Row {
    fn new(urn: Urn) -> Row {
        Row {
            resource_type: terminal::field(urn.resource_type()).into_owned(),
            root_stack: urn.qualified_type() == ROOT_STACK_TYPE,
            urn,
            parent: None,
            op: None,
            status: Status::Quiet,
            since: None,
            diff: None,
            errors: 0,
            warnings: 0,
            infos: 0,
            last_message: None,
        }
    }

    /// Whether the row is worth a line of its own: a step that changes something (or a read),
    /// a failure, a diagnostic; unchanged ones with `show_sames`.
    fn noteworthy(&self, show_sames: bool) -> bool {
        let changes = match self.op {
            Some(op) => op.is_change() || op == StepOp::Read || self.diff.is_some(),
            None => false,
        };
        changes
            || show_sames && self.op.is_some()
            || matches!(self.status, Status::Failed(_))
            || self.errors + self.warnings + self.infos > 0
    }

    /// The status column: `creating (1.2s)`, `created (0.4s)`, `**creating failed**`,
    /// `create` (planned), styled.
    pub fn status_text(&self, now: Instant, colors: bool) -> (String, usize) {
        let Some(op) = self.op else {
            return (String::new(), 0);
        };
        let (running, done) = status_words(op);
        let style = op_style(op);
        let text = match self.status {
            Status::Quiet => return (String::new(), 0),
            Status::Planned => return styled(style, colors, planned_word(op)),
            Status::Running(since) if !running.is_empty() => {
                let elapsed = now.saturating_duration_since(self.since.unwrap_or(since));
                return styled(
                    style.bold(),
                    colors,
                    &format!("{running} ({})", format_duration(elapsed)),
                );
            }
            Status::Done(took) if !done.is_empty() => {
                format!("{done} ({})", format_duration(took))
            }
            Status::Failed(_) => {
                let verb = if running.is_empty() { "step" } else { running };
                return styled(Style::ERROR, colors, &format!("**{verb} failed**"));
            }
            Status::Running(_) | Status::Done(_) => return (String::new(), 0),
        };
        styled(style, colors, &text)
    }

    /// The info column: the diff summary, then (with `counts`) the diagnostic counts, else the
    /// latest message.
    pub fn info_text(&self, counts: bool, colors: bool) -> (String, usize) {
        let mut parts: Vec<(String, usize)> = Vec::new();
        if let Some(diff) = &self.diff {
            let plain = format!("[{diff}]");
            let width = plain.chars().count();
            let painted = if colors {
                format!("[{}]", paint_diff_summary(diff))
            } else {
                plain
            };
            parts.push((painted, width));
        }
        if counts {
            for (n, one, many, style) in [
                (self.errors, "error", "errors", Style::ERROR),
                (self.warnings, "warning", "warnings", Style::WARNING),
                (self.infos, "message", "messages", Style::INFO),
            ] {
                if n > 0 {
                    let word = if n == 1 { one } else { many };
                    let plain = format!("{n} {word}");
                    let width = plain.chars().count();
                    parts.push((format!("{n} {}", style.paint(colors, word)), width));
                }
            }
        } else if let Some(message) = &self.last_message {
            parts.push((message.clone(), message.chars().count()));
        }
        let width = parts.iter().map(|(_, w)| w).sum::<usize>() + parts.len().saturating_sub(1) * 2;
        let text = parts
            .into_iter()
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
            .join("; ");
        (text, width)
    }
}

/// `text` styled, with its width.
fn styled(style: Style, colors: bool, text: &str) -> (String, usize) {
    (style.paint(colors, text), text.chars().count())
}

/// Colours each group of a plain diff summary (`diff: +a-b~c`) by its symbol.
fn paint_diff_summary(diff: &str) -> String {
    let Some(keys) = diff.strip_prefix("diff: ") else {
        return diff.to_owned();
    };
    let mut out = String::from("diff: ");
    let mut group = String::new();
    let mut style = Style::PLAIN;
    let flush = |out: &mut String, group: &mut String, style: Style| {
        out.push_str(&style.paint(true, group));
        group.clear();
    };
    for c in keys.chars() {
        let next = match c {
            '+' => Some(Style::CREATE),
            '-' => Some(Style::DELETE),
            '~' => Some(Style::UPDATE),
            _ => None,
        };
        if let Some(next) = next
            && (group.is_empty() || !group.ends_with(','))
        {
            flush(&mut out, &mut group, style);
            style = next;
        }
        group.push(c);
    }
    flush(&mut out, &mut group, style);
    out
}

/// The status words of a step: (while running, once done). Empty for `same`.
pub(super) fn status_words(op: StepOp) -> (&'static str, &'static str) {
    match op {
        StepOp::Same => ("", ""),
        StepOp::Create => ("creating", "created"),
        StepOp::Update => ("updating", "updated"),
        StepOp::Delete => ("deleting", "deleted"),
        StepOp::Replace => ("replacing", "replaced"),
        StepOp::CreateReplacement => ("creating replacement", "created replacement"),
        StepOp::DeleteReplaced => ("deleting original", "deleted original"),
        StepOp::Read => ("reading", "read"),
        StepOp::ReadReplacement => ("reading for replacement", "read for replacement"),
        StepOp::Refresh => ("refreshing", "refreshed"),
        StepOp::Import => ("importing", "imported"),
        StepOp::ImportReplacement => ("importing replacement", "imported replacement"),
        StepOp::Discard => ("discarding", "discarded"),
    }
}

/// What a preview's status column says of a planned step (Pulumi's words).
fn planned_word(op: StepOp) -> &'static str {
    match op {
        StepOp::Same => "",
        StepOp::CreateReplacement => "create-replacement",
        StepOp::DeleteReplaced => "delete-replaced",
        StepOp::ReadReplacement => "read-replacement",
        StepOp::ImportReplacement => "import-replacement",
        other => other.label(),
    }
}

/// Whether `urn` is a default provider's: Pulumi's engine treats their steps as internal, so
/// they are neither shown nor counted.
pub(super) fn is_default_provider(urn: &Urn) -> bool {
    urn.qualified_type().starts_with("pulumi:providers:") && urn.name().starts_with("default")
}

/// Whether `op` is half of a replacement (shown only with `--show-replacement-steps`).
pub(super) fn is_replacement_half(op: StepOp) -> bool {
    matches!(
        op,
        StepOp::CreateReplacement
            | StepOp::DeleteReplaced
            | StepOp::ReadReplacement
            | StepOp::ImportReplacement
    )
}

/// The rows of a deployment, in the order resources were first met, and the tree they form.
///
/// Drawing the tree costs one walk over the rows and no allocation that grows with them: the
/// live view redraws ten times a second while thousands of resources arrive. Siblings are kept
/// in lists sorted only when drawn (mostly sorted already: a sort that finds the sorted run
/// is linear), and the walk's working space is kept between draws.
#[derive(Default)]
pub(super) struct Rows {
    index: HashMap<Urn, usize>,
    rows: Vec<Row>,
    /// Each row's children (parallel to `rows`).
    children: Vec<Siblings>,
    /// The rows with no parent row.
    roots: Siblings,
    scratch: TreeScratch,
    pub show_sames: bool,
    pub show_replacement_steps: bool,
}

/// The children of a row (or the rows at the top), sorted by URN when the tree is drawn.
#[derive(Default)]
struct Siblings {
    members: Vec<usize>,
    sorted: bool,
}

impl Siblings {
    fn add(&mut self, i: usize) {
        self.members.push(i);
        self.sorted = self.members.len() < 2;
    }

    fn remove(&mut self, i: usize) {
        self.members.retain(|&m| m != i);
    }

    fn sort(&mut self, rows: &[Row]) {
        if !self.sorted {
            self.members
                .sort_by(|a, b| rows[*a].urn.as_str().cmp(rows[*b].urn.as_str()));
            self.sorted = true;
        }
    }
}

/// The tree walk's working space, kept between draws.
#[derive(Default)]
struct TreeScratch {
    /// The row each row was reached from (`TOP`: a root; `UNSEEN`: not reached yet).
    via: Vec<usize>,
    shown: Vec<bool>,
    /// The rows in pre-order.
    order: Vec<usize>,
    stack: Vec<(usize, usize)>,
    /// The shown walk: (row, its parent's line, whether it is the last shown sibling).
    walk: Vec<(usize, Option<usize>, bool)>,
}

const TOP: usize = usize::MAX;
const UNSEEN: usize = usize::MAX - 1;

/// One shown row of the tree: the row, the line of its parent (`None` at the top), and
/// whether it is its parent's last shown child (`└─` rather than `├─`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TreeLine {
    pub row: usize,
    parent_line: Option<usize>,
    last: bool,
}

/// Walks from the rows on `stack` (each with the row it is reached from) in pre-order,
/// noting each row's `via` and appending it to `order`; rows already reached are skipped.
fn pre_order(
    stack: &mut Vec<(usize, usize)>,
    via: &mut [usize],
    order: &mut Vec<usize>,
    children: &[Siblings],
) {
    while let Some((i, from)) = stack.pop() {
        if via[i] != UNSEEN {
            continue;
        }
        via[i] = from;
        order.push(i);
        stack.extend(children[i].members.iter().rev().map(|&c| (c, i)));
    }
}

/// The tree prefixes (`├─ `, `│  └─ `) of the lines `picked` of `lines`, with their rows.
pub(super) fn with_prefixes(
    lines: &[TreeLine],
    picked: impl IntoIterator<Item = usize>,
) -> Vec<(usize, String)> {
    picked
        .into_iter()
        .map(|k| {
            let line = lines[k];
            let mut prefix = String::new();
            if line.parent_line.is_some() {
                prefix.push_str(if line.last { "└─ " } else { "├─ " });
                // Each ancestor below the top continues its column unless it was last.
                let mut up = line.parent_line;
                while let Some(p) = up {
                    let ancestor = lines[p];
                    if ancestor.parent_line.is_none() {
                        break;
                    }
                    prefix.insert_str(0, if ancestor.last { "   " } else { "│  " });
                    up = ancestor.parent_line;
                }
            }
            (line.row, prefix)
        })
        .collect()
}

/// What a step event did to its row, for the plain mode's lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Change {
    /// Nothing to print.
    None,
    /// The row's status changed: print its line.
    Line,
}

impl Rows {
    pub fn new(show_sames: bool, show_replacement_steps: bool) -> Rows {
        Rows {
            show_sames,
            show_replacement_steps,
            ..Rows::default()
        }
    }

    pub fn get(&self, urn: &Urn) -> Option<&Row> {
        self.index.get(urn).map(|&i| &self.rows[i])
    }

    /// The row of `urn`, made if new.
    fn row(&mut self, urn: &Urn) -> &mut Row {
        let i = self.row_index(urn);
        &mut self.rows[i]
    }

    /// The index of `urn`'s row, made (at the top) if new.
    fn row_index(&mut self, urn: &Urn) -> usize {
        if let Some(&i) = self.index.get(urn) {
            return i;
        }
        let i = self.rows.len();
        self.rows.push(Row::new(urn.clone()));
        self.children.push(Siblings::default());
        self.index.insert(urn.clone(), i);
        self.roots.add(i);
        i
    }

    /// Hangs row `i` under `parent` (a row, or the top when `None` or not a row). A parent is
    /// placed before its child, and default providers (the only parents without a row) never
    /// get one, so a child never waits for its parent's row.
    fn set_parent(&mut self, i: usize, parent: Option<&Urn>) {
        if self.rows[i].parent.as_ref() == parent {
            return;
        }
        let old = self.rows[i].parent.take();
        match old.as_ref().and_then(|p| self.index.get(p)) {
            Some(&p) if p != i => self.children[p].remove(i),
            _ => self.roots.remove(i),
        }
        match parent.and_then(|p| self.index.get(p)) {
            Some(&p) if p != i => self.children[p].add(i),
            _ => self.roots.add(i),
        }
        self.rows[i].parent = parent.cloned();
    }

    /// The op a step shows as on its row: replacement halves fold into `replace` unless
    /// replacement steps are shown.
    fn shown_op(&self, op: StepOp) -> StepOp {
        if !self.show_replacement_steps && is_replacement_half(op) {
            StepOp::Replace
        } else {
            op
        }
    }

    /// Notes a step's parent and type; a parent not met yet gets a quiet row, so the tree has
    /// somewhere to hang the child.
    fn place(&mut self, step: &StepInfo) {
        if let Some(parent) = &step.parent
            && !is_default_provider(parent)
        {
            self.row(parent);
        }
        let i = self.row_index(&step.urn);
        self.set_parent(i, step.parent.as_ref());
        let row = &mut self.rows[i];
        if row.resource_type != step.resource_type {
            row.resource_type = terminal::field(&step.resource_type).into_owned();
        }
    }

    /// A step was planned (a preview) or started.
    pub fn started(&mut self, step: &StepInfo) -> Change {
        if is_default_provider(&step.urn) {
            return Change::None;
        }
        self.place(step);
        let op = self.shown_op(step.op);
        let half = op != step.op;
        let show_sames = self.show_sames;
        let diff = diff_summary(step);
        let row = self.row(&step.urn);
        if step.preview {
            // Planned once (a preview may report a step as started and finished); the halves
            // of a replacement fold into its `replace` step, which has the diff.
            if half || (row.status == Status::Planned && row.op == Some(op)) {
                return Change::None;
            }
            row.op = Some(op);
            row.status = Status::Planned;
            if diff.is_some() {
                row.diff = diff;
            }
            return if row.noteworthy(show_sames) {
                Change::Line
            } else {
                Change::None
            };
        }
        // The delete of a replaced original runs after its row said "replaced": it stays so.
        if half && step.op == StepOp::DeleteReplaced && matches!(row.status, Status::Done(_)) {
            return Change::None;
        }
        let now = Instant::now();
        // A replacement's next step while its row already says "replacing": no new line.
        let continuing = matches!(row.status, Status::Running(_)) && row.op == Some(op);
        row.op = Some(op);
        if !continuing {
            row.status = Status::Running(now);
            row.since = Some(now);
        }
        if diff.is_some() {
            row.diff = diff;
        }
        // A step without a running word (a `same`) gets its line when it ends.
        if continuing || status_words(op).0.is_empty() || !row.noteworthy(show_sames) {
            Change::None
        } else {
            Change::Line
        }
    }

    /// A step ended.
    pub fn finished(&mut self, step: &StepInfo, took: Duration) -> Change {
        if is_default_provider(&step.urn) {
            return Change::None;
        }
        if step.preview {
            return self.started(step);
        }
        self.place(step);
        let op = self.shown_op(step.op);
        let half = op != step.op;
        let show_sames = self.show_sames;
        let diff = diff_summary(step);
        let row = self.row(&step.urn);
        if half {
            // The replacement's new copy exists, or its original is gone: the logical
            // replace (reported between them) decides the row's status.
            return Change::None;
        }
        let took = row
            .since
            .map(|since| since.elapsed().max(took))
            .unwrap_or(took);
        row.op = Some(op);
        row.status = Status::Done(took);
        if diff.is_some() {
            row.diff = diff;
        }
        if row.noteworthy(show_sames) {
            Change::Line
        } else {
            Change::None
        }
    }

    /// A step failed with `error`.
    pub fn failed(&mut self, step: &StepInfo, error: &str, took: Duration) -> Change {
        if is_default_provider(&step.urn) {
            return Change::None;
        }
        self.place(step);
        let op = self.shown_op(step.op);
        let row = self.row(&step.urn);
        row.op = Some(op);
        row.status = Status::Failed(took);
        row.errors += 1;
        row.last_message = Some(first_line(&format!("error: {error}")));
        Change::Line
    }

    /// A diagnostic about `urn` (the root stack's row holds those about no resource).
    pub fn diagnostic(&mut self, urn: &Urn, severity: Severity, message: &str) {
        if is_default_provider(urn) {
            return;
        }
        let row = self.row(urn);
        match severity {
            Severity::Error => row.errors += 1,
            Severity::Warning => row.warnings += 1,
            Severity::Info => row.infos += 1,
            Severity::Debug => return,
        }
        let prefix = match severity {
            Severity::Error => "error: ",
            Severity::Warning => "warning: ",
            _ => "",
        };
        row.last_message = Some(first_line(&format!("{prefix}{message}")));
    }

    /// How many resources have an error (a failed step or an error diagnostic).
    pub fn errored(&self) -> usize {
        self.rows.iter().filter(|row| row.errors > 0).count()
    }

    /// How many rows are running, and how many have ended (done or failed), of those with a
    /// step.
    pub fn progress(&self) -> (usize, usize, usize) {
        let mut running = 0;
        let mut ended = 0;
        let mut total = 0;
        for row in &self.rows {
            if row.op.is_none() {
                continue;
            }
            total += 1;
            match row.status {
                Status::Running(_) => running += 1,
                Status::Done(_) | Status::Failed(_) => ended += 1,
                Status::Quiet | Status::Planned => {}
            }
        }
        (running, ended, total)
    }

    /// The rows shown, in tree order (each child under its parent, siblings sorted by URN, as
    /// Pulumi sorts them, so the tree does not depend on the order parallel steps ran in). A
    /// row is shown if it is noteworthy, is the root stack, or has a shown descendant.
    pub fn tree(&mut self) -> Vec<TreeLine> {
        let mut lines = Vec::new();
        self.tree_into(&mut lines);
        lines
    }

    /// [`Rows::tree`] into `lines` (cleared first), whose room is reused.
    pub fn tree_into(&mut self, lines: &mut Vec<TreeLine>) {
        lines.clear();
        let Rows {
            rows,
            children,
            roots,
            scratch,
            show_sames,
            ..
        } = self;
        let n = rows.len();
        roots.sort(rows);
        for siblings in children.iter_mut() {
            siblings.sort(rows);
        }
        let TreeScratch {
            via,
            shown,
            order,
            stack,
            walk,
        } = scratch;
        via.clear();
        via.resize(n, UNSEEN);
        order.clear();
        stack.clear();
        // Pre-order walk from the roots, noting the row each was reached from; then from the
        // rows in a parent cycle (a corrupt state), never reached, at the top.
        stack.extend(roots.members.iter().rev().map(|&r| (r, TOP)));
        pre_order(stack, via, order, children);
        let mut cycle_tops = Vec::new();
        for i in 0..n {
            if via[i] == UNSEEN {
                cycle_tops.push(i);
                stack.push((i, TOP));
                pre_order(stack, via, order, children);
            }
        }
        // Shown: noteworthy, the root stack, or an ancestor of one shown (children come after
        // their parent in pre-order, so the reverse meets them first).
        shown.clear();
        shown.resize(n, false);
        for &i in order.iter().rev() {
            let row = &rows[i];
            shown[i] =
                shown[i] || row.noteworthy(*show_sames) || (row.root_stack && row.op.is_some());
            if shown[i] && via[i] != TOP {
                shown[via[i]] = true;
            }
        }
        // The shown rows in order, each under the row it was reached from.
        walk.clear();
        let mut last = true;
        for &r in roots.members.iter().chain(&cycle_tops).rev() {
            if shown[r] {
                walk.push((r, None, last));
                last = false;
            }
        }
        while let Some((i, parent_line, last)) = walk.pop() {
            let line = lines.len();
            lines.push(TreeLine {
                row: i,
                parent_line,
                last,
            });
            let mut is_last = true;
            for &c in children[i].members.iter().rev() {
                if shown[c] && via[c] == i {
                    walk.push((c, Some(line), is_last));
                    is_last = false;
                }
            }
        }
    }

    pub fn at(&self, i: usize) -> &Row {
        &self.rows[i]
    }

    /// The table of `lines` (indexes into the tree, with prefixes): a header line, then a line
    /// per row, columns padded to fit. `counts`: the info column counts diagnostics (the final
    /// table) rather than showing the latest message.
    pub fn table(
        &self,
        lines: &[(usize, String)],
        now: Instant,
        colors: bool,
        counts: bool,
        status_title: &str,
    ) -> Vec<String> {
        struct Cells<'a> {
            symbol: (String, usize),
            prefix: &'a str,
            kind: &'a str,
            kind_width: usize,
            name: std::borrow::Cow<'a, str>,
            name_width: usize,
            status: (String, usize),
            info: (String, usize),
        }
        let cells: Vec<Cells> = lines
            .iter()
            .map(|(i, prefix)| {
                let row = &self.rows[*i];
                let symbol = match row.op {
                    Some(op) if row.status != Status::Quiet => {
                        let s = op_symbol(op);
                        let style = match row.status {
                            Status::Running(_) => op_style(op).bold(),
                            _ => op_style(op),
                        };
                        (style.paint(colors, s), s.chars().count())
                    }
                    _ => (String::new(), 0),
                };
                let name = terminal::field(row.urn.name());
                Cells {
                    symbol,
                    prefix,
                    kind: &row.resource_type,
                    kind_width: prefix.chars().count() + row.resource_type.chars().count(),
                    name_width: name.chars().count(),
                    name,
                    status: row.status_text(now, colors),
                    info: row.info_text(counts, colors),
                }
            })
            .collect();
        let width = |f: &dyn Fn(&Cells) -> usize, title: &str| {
            cells
                .iter()
                .map(f)
                .max()
                .unwrap_or(0)
                .max(title.chars().count())
        };
        let type_w = width(&|c| c.kind_width, "Type");
        let name_w = width(&|c| c.name_width, "Name");
        let status_w = width(&|c| c.status.1, status_title);
        let pad = |line: &mut String, n: usize| line.extend(std::iter::repeat_n(' ', n));
        let column = |line: &mut String, title: &str, w: usize| {
            line.push_str(&Style::COLUMN.paint(colors, title));
            pad(line, w - title.chars().count());
        };
        let mut out = Vec::with_capacity(cells.len() + 1);
        let mut header = String::from("     ");
        column(&mut header, "Type", type_w);
        header.push_str("  ");
        column(&mut header, "Name", name_w);
        header.push_str("  ");
        column(&mut header, status_title, status_w);
        header.push_str("  ");
        header.push_str(&Style::COLUMN.paint(colors, "Info"));
        out.push(header);
        for c in cells {
            let mut line = String::with_capacity(
                16 + type_w + name_w + c.symbol.0.len() + c.status.0.len() + c.info.0.len(),
            );
            line.push(' ');
            line.push_str(&c.symbol.0);
            pad(&mut line, 2 - c.symbol.1.min(2));
            line.push_str("  ");
            line.push_str(c.prefix);
            line.push_str(c.kind);
            pad(&mut line, type_w - c.kind_width);
            line.push_str("  ");
            line.push_str(&c.name);
            pad(&mut line, name_w - c.name_width);
            line.push_str("  ");
            line.push_str(&c.status.0);
            pad(&mut line, status_w - c.status.1);
            line.push_str("  ");
            line.push_str(&c.info.0);
            line.truncate(line.trim_end().len());
            out.push(line);
        }
        out
    }

    /// The plain mode's line for a row: ` +  random:index:RandomPet pet created (0.4s) [diff: …]`.
    pub fn line(&self, urn: &Urn, colors: bool) -> Option<String> {
        let row = self.get(urn)?;
        let op = row.op?;
        let symbol = op_symbol(op);
        let style = match row.status {
            Status::Running(_) => op_style(op).bold(),
            _ => op_style(op),
        };
        let (status, _) = row.status_text(Instant::now(), colors);
        let (info, _) = row.info_text(false, colors);
        let line = format!(
            " {}{} {} {} {} {}",
            style.paint(colors, symbol),
            " ".repeat(2 - symbol.chars().count().min(2)),
            row.resource_type,
            terminal::field(urn.name()),
            status,
            info
        );
        Some(line.trim_end().to_owned())
    }
}

/// The first line of `text`, made visible.
fn first_line(text: &str) -> String {
    let first = text.trim_start().lines().next().unwrap_or_default();
    terminal::field(first.trim_end()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;

    fn child(op: StepOp, ty: &str, name: &str, parent: &Urn) -> StepInfo {
        let mut s = step(op, ty, name);
        s.parent = Some(parent.clone());
        s
    }

    #[test]
    fn the_tree_hangs_children_under_parents_whatever_the_order() {
        let stack = urn(ROOT_STACK_TYPE, "proj-dev");
        let comp = urn("my:index:Comp", "web");
        let mut rows = Rows::new(false, false);
        // The child is deleted before its parent's step arrives (a destroy's order).
        rows.finished(
            &child(StepOp::Delete, "aws:s3:Bucket", "logs", &comp),
            ms(10),
        );
        rows.finished(
            &child(StepOp::Delete, "my:index:Comp", "web", &stack),
            ms(10),
        );
        rows.finished(
            &child(StepOp::Create, "random:index:RandomPet", "pet", &stack),
            ms(10),
        );
        rows.finished(&step(StepOp::Same, ROOT_STACK_TYPE, "proj-dev"), ms(0));
        let provider = step(StepOp::Create, "pulumi:providers:aws", "default_6_0_0");
        rows.finished(&provider, ms(1));
        let tree = rows.tree();
        let lines = with_prefixes(&tree, 0..tree.len());
        let table = rows.table(&lines, Instant::now(), false, true, "Status");
        assert_eq!(
            table.join("\n"),
            "     Type                       Name      Status          Info\n     \
             pulumi:pulumi:Stack        proj-dev\n \
             -   ├─ my:index:Comp           web       deleted (0.0s)\n \
             -   │  └─ aws:s3:Bucket        logs      deleted (0.0s)\n \
             +   └─ random:index:RandomPet  pet       created (0.0s)"
        );
    }

    /// The tree as text (prefix, type, name), one line per shown row.
    fn tree_text(rows: &mut Rows) -> Vec<String> {
        let tree = rows.tree();
        with_prefixes(&tree, 0..tree.len())
            .into_iter()
            .map(|(i, prefix)| {
                let row = rows.at(i);
                format!("{prefix}{} {}", row.resource_type, row.urn.name())
            })
            .collect()
    }

    #[test]
    fn the_tree_is_the_same_whatever_order_steps_arrive_in() {
        let stack = urn(ROOT_STACK_TYPE, "proj-dev");
        let web = urn("my:index:Comp", "web");
        let db = urn("my:index:Comp", "db");
        let steps = [
            step(StepOp::Same, ROOT_STACK_TYPE, "proj-dev"),
            child(StepOp::Create, "my:index:Comp", "web", &stack),
            child(StepOp::Create, "my:index:Comp", "db", &stack),
            child(StepOp::Create, "aws:s3:Bucket", "logs", &web),
            child(StepOp::Create, "aws:s3:Bucket", "assets", &web),
            child(StepOp::Create, "aws:rds:Instance", "main", &db),
            child(StepOp::Create, "aws:s3:Bucket", "backups", &db),
        ];
        let expected = [
            "pulumi:pulumi:Stack proj-dev",
            "├─ my:index:Comp db",
            "│  ├─ aws:rds:Instance main",
            "│  └─ aws:s3:Bucket backups",
            "└─ my:index:Comp web",
            "   ├─ aws:s3:Bucket assets",
            "   └─ aws:s3:Bucket logs",
        ];
        for order in [
            [0, 1, 2, 3, 4, 5, 6],
            [6, 5, 4, 3, 2, 1, 0],
            [3, 5, 0, 6, 1, 4, 2],
            [4, 2, 6, 0, 3, 1, 5],
        ] {
            let mut rows = Rows::new(false, false);
            for k in order {
                rows.finished(&steps[k], ms(1));
            }
            assert_eq!(tree_text(&mut rows), expected, "arrival order {order:?}");
        }
    }

    #[test]
    fn a_row_moves_when_its_parent_changes() {
        let stack = urn(ROOT_STACK_TYPE, "proj-dev");
        let comp = urn("my:index:Comp", "web");
        let mut rows = Rows::new(false, false);
        rows.finished(&step(StepOp::Same, ROOT_STACK_TYPE, "proj-dev"), ms(0));
        // First met as a top-level resource, then reported under a component (an alias).
        rows.started(&child(StepOp::Create, "aws:s3:Bucket", "logs", &stack));
        rows.finished(
            &child(StepOp::Create, "my:index:Comp", "web", &stack),
            ms(1),
        );
        rows.finished(
            &child(StepOp::Create, "aws:s3:Bucket", "logs", &comp),
            ms(1),
        );
        assert_eq!(
            tree_text(&mut rows),
            [
                "pulumi:pulumi:Stack proj-dev",
                "└─ my:index:Comp web",
                "   └─ aws:s3:Bucket logs",
            ]
        );
    }

    #[test]
    fn rows_in_a_parent_cycle_are_still_shown() {
        // A corrupt state: a is b's parent and b is a's.
        let a = urn("my:index:Comp", "a");
        let b = urn("my:index:Comp", "b");
        let mut rows = Rows::new(false, false);
        rows.finished(&child(StepOp::Delete, "my:index:Comp", "a", &b), ms(1));
        rows.finished(&child(StepOp::Delete, "my:index:Comp", "b", &a), ms(1));
        let text = tree_text(&mut rows);
        assert_eq!(text.len(), 2, "{text:?}");
        assert!(text.iter().any(|l| l.ends_with("Comp a")), "{text:?}");
        assert!(text.iter().any(|l| l.ends_with("Comp b")), "{text:?}");
    }

    #[test]
    fn replacement_halves_fold_into_the_replace_row_unless_asked_for() {
        let web = |op| step(op, "aws:ec2:Instance", "web");
        let sequence = [
            (StepOp::CreateReplacement, false),
            (StepOp::CreateReplacement, true),
            (StepOp::Replace, false),
            (StepOp::Replace, true),
            (StepOp::DeleteReplaced, false),
            (StepOp::DeleteReplaced, true),
        ];
        for (show_steps, expected) in [
            (false, &["+- replacing", "+- replaced"][..]),
            (
                true,
                &[
                    "++ creating replacement",
                    "++ created replacement",
                    "+- replacing",
                    "+- replaced",
                    "-- deleting original",
                    "-- deleted original",
                ][..],
            ),
        ] {
            let mut rows = Rows::new(false, show_steps);
            let mut lines = Vec::new();
            for (op, ended) in sequence {
                let change = if ended {
                    rows.finished(&web(op), ms(5))
                } else {
                    rows.started(&web(op))
                };
                if change == Change::Line {
                    let row = rows.get(&web(op).urn).unwrap();
                    let (status, _) = row.status_text(Instant::now(), false);
                    let words = status.split(" (").next().unwrap().to_owned();
                    lines.push(format!("{} {words}", op_symbol(row.op.unwrap())));
                }
            }
            assert_eq!(lines, expected, "show_replacement_steps={show_steps}");
        }
    }

    #[test]
    fn default_providers_get_no_row() {
        let mut rows = Rows::new(true, true);
        let provider = step(StepOp::Create, "pulumi:providers:random", "default");
        assert_eq!(rows.started(&provider), Change::None);
        assert_eq!(rows.finished(&provider, ms(1)), Change::None);
        let named = step(StepOp::Create, "pulumi:providers:random", "mine");
        assert_eq!(rows.finished(&named, ms(1)), Change::Line);
        assert_eq!(rows.progress(), (0, 1, 1));
    }
}
