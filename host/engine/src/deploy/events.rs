//! Engine events: the typed stream a front end renders (progress view, JSON lines).

use std::fmt;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Serialize;

use super::analyzer::{PackSummary, Violation};
use crate::path::PropertyPath;
use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::{PropertyMap, PropertyValue};

/// What a deployment does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Update,
    Refresh,
    Destroy,
    /// `cairn import`: resources adopted by ID; nothing else changes.
    Import,
}

/// The kind of a step, as users see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepOp {
    Same,
    Create,
    Update,
    Delete,
    /// The logical replacement of a resource (shown once per replaced resource).
    Replace,
    CreateReplacement,
    DeleteReplaced,
    Read,
    ReadReplacement,
    Refresh,
    Import,
    ImportReplacement,
    /// A resource dropped from state without calling its provider (`retainOnDelete`, or gone
    /// out of band during a refresh).
    Discard,
}

impl StepOp {
    /// The label a user sees ("create", "delete-replaced", ...).
    pub fn label(self) -> &'static str {
        match self {
            StepOp::Same => "same",
            StepOp::Create => "create",
            StepOp::Update => "update",
            StepOp::Delete => "delete",
            StepOp::Replace => "replace",
            StepOp::CreateReplacement => "create-replacement",
            StepOp::DeleteReplaced => "delete-replaced",
            StepOp::Read => "read",
            StepOp::ReadReplacement => "read-replacement",
            StepOp::Refresh => "refresh",
            StepOp::Import => "import",
            StepOp::ImportReplacement => "import-replacement",
            StepOp::Discard => "discard",
        }
    }

    /// Whether the step changes anything (false for `same`, `read` and no-drift `refresh`).
    pub fn is_change(self) -> bool {
        !matches!(self, StepOp::Same | StepOp::Read | StepOp::Refresh)
    }
}

impl fmt::Display for StepOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How one property changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Add,
    Update,
    Delete,
}

/// One changed property, with its old and new values (secrets stay `Secret` values; renderers
/// must mask them).
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyChange {
    pub path: PropertyPath,
    pub kind: ChangeKind,
    /// The change forces replacement.
    pub replace: bool,
    pub old: Option<PropertyValue>,
    pub new: Option<PropertyValue>,
}

/// A resource's state as a step sees it: the whole recorded resource (provider reference,
/// protect, dependencies, ...), as machine-readable output (Pulumi's step metadata and preview
/// digest) shows it. Shared, so the started and finished events of a step copy no properties.
/// Secrets stay `Secret` values: renderers must mask them.
pub type StepState = std::sync::Arc<ResourceState>;

/// A step, as reported to front ends.
#[derive(Debug, Clone, PartialEq)]
pub struct StepInfo {
    pub op: StepOp,
    pub urn: Urn,
    /// The resource's type token.
    pub resource_type: String,
    pub custom: bool,
    /// The resource's parent (the display's tree follows it).
    pub parent: Option<Urn>,
    pub old: Option<StepState>,
    pub new: Option<StepState>,
    /// Property-level changes (inputs for updates and replacements, outputs for refreshes).
    pub changes: Vec<PropertyChange>,
    /// Top-level properties that force replacement.
    pub replace_keys: Vec<String>,
    /// True in a preview.
    pub preview: bool,
}

/// Severity of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Debug,
    Info,
    Warning,
    Error,
}

/// One engine event.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// The deployment started.
    Started { operation: Operation, preview: bool },
    /// A step began executing (in a preview: was planned).
    StepStarted(StepInfo),
    /// A step finished.
    StepFinished { step: StepInfo, duration: Duration },
    /// A step failed; the deployment stops starting new work.
    StepFailed {
        step: StepInfo,
        error: String,
        duration: Duration,
    },
    /// A message from the engine, a provider or the program.
    Diagnostic {
        severity: Severity,
        urn: Option<Urn>,
        message: String,
    },
    /// The policy packs this deployment runs (sent once, at the start, when there are any).
    PolicyPacks(Vec<PackSummary>),
    /// A policy pack reported a violation: about `urn` (a resource policy's resource; for a
    /// stack policy, the resource it named, else none).
    PolicyViolation {
        pack: PackSummary,
        urn: Option<Urn>,
        violation: Violation,
    },
    /// A remediation policy rewrote a resource's inputs.
    PolicyRemediation {
        pack: PackSummary,
        urn: Urn,
        policy: String,
    },
    /// A resource's outputs became known (stack outputs are those of the root stack resource).
    Outputs { urn: Urn, outputs: PropertyMap },
    /// The deployment ended.
    Summary {
        operation: Operation,
        preview: bool,
        /// Steps per kind, counting only changes.
        changes: IndexMap<StepOp, usize>,
        /// Resources left unchanged.
        unchanged: usize,
        duration: Duration,
        succeeded: bool,
        /// It ended early because it was interrupted (Ctrl-C, SIGTERM), not because something
        /// failed.
        interrupted: bool,
    },
}

/// Receives engine events. Called from many tasks; must not block for long.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: EngineEvent);
}

/// Discards every event.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: EngineEvent) {}
}
