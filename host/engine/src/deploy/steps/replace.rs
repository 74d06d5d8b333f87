//! The logical `replace` step: announces (and counts, once) the replacement of a resource
//! whose physical steps — create-replacement, delete-replaced — run around it.

use crate::state::ResourceState;

use super::super::engine::Engine;
use super::super::events::{PropertyChange, StepOp};
use super::super::monitor::MonitorError;
use super::step_state;

/// The replacement of `old` by `new`, because of `keys` (top-level properties; empty for a
/// forced replacement) with the property `changes` shown.
pub(crate) struct ReplaceStep<'a> {
    pub old: &'a ResourceState,
    pub new: &'a ResourceState,
    pub changes: Vec<PropertyChange>,
    pub keys: Vec<String>,
}

impl ReplaceStep<'_> {
    pub async fn apply(self, engine: &Engine) -> Result<(), MonitorError> {
        let new = self.new;
        let mut info = engine.step_info(StepOp::Replace, new);
        info.old = Some(step_state(self.old));
        info.new = Some(step_state(new));
        info.changes = self.changes;
        info.replace_keys = self.keys;
        engine.run_step(info, true, async { Ok(()) }).await
    }
}
