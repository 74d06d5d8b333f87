//! The logical `replace` step: announces (and counts, once) the replacement of a resource
//! whose physical steps — create-replacement, delete-replaced — run around it.

use crate::state::ResourceState;

use super::super::engine::Engine;
use super::super::events::{PropertyChange, StepInfo, StepOp};
use super::super::monitor::MonitorError;
use super::step_state;

/// The replacement of a resource, reported once its replacement exists: a replacement whose
/// create fails is not counted as replaced (as in Pulumi, where the logical replace follows
/// the create-replacement).
pub(crate) struct ReplaceStep {
    info: StepInfo,
}

impl ReplaceStep {
    /// The replacement of `old` by `new`, because of `keys` (top-level properties; empty for
    /// a forced replacement) with the property `changes` shown.
    pub fn new(
        engine: &Engine,
        old: &ResourceState,
        new: &ResourceState,
        changes: Vec<PropertyChange>,
        keys: Vec<String>,
    ) -> ReplaceStep {
        let mut info = engine.step_info(StepOp::Replace, new);
        info.old = Some(step_state(old));
        info.new = Some(step_state(new));
        info.changes = changes;
        info.replace_keys = keys;
        ReplaceStep { info }
    }

    pub async fn apply(self, engine: &Engine) -> Result<(), MonitorError> {
        engine.run_step(self.info, true, async { Ok(()) }).await
    }
}
