//! The `same` step: a resource whose inputs did not change keeps its recorded outputs; no
//! provider is called.

use crate::state::ResourceState;

use super::super::engine::Engine;
use super::super::events::StepOp;
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;

/// Keeps a resource as recorded: `state` is its new registration (new options, same inputs),
/// `old` the recorded copy at base `index`.
pub(crate) struct SameStep<'a> {
    pub state: ResourceState,
    pub old: &'a ResourceState,
    pub index: BaseIndex,
}

impl SameStep<'_> {
    pub fn apply(self, engine: &Engine) -> Result<ResourceState, MonitorError> {
        let SameStep {
            mut state,
            old,
            index,
        } = self;
        state.id = old.id.clone();
        state.outputs = old.outputs.clone();
        state.created = old.created.clone();
        state.modified = old.modified.clone();
        state.init_errors = vec![];
        // Fields this engine does not manage carry over untouched.
        state.source_position = old.source_position.clone();
        super::super::hooks::carry_unknown_fields(&mut state, old);
        // No states in the event: nothing changed, and copying them costs at scale.
        let info = engine.step_info(StepOp::Same, &state);
        engine.finish_instantly(info);
        // An identical state stays where it is in the base: nothing to record or copy. (Moved
        // states are re-ordered dependencies-first when the snapshot is assembled.)
        if &state != old {
            engine.apply(vec![
                Mutation::Append(state.clone()),
                Mutation::RemoveBase(index),
            ])?;
        }
        engine.record(&state);
        Ok(state)
    }
}
