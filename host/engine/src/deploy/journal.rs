//! The snapshot journal: durable begin/end records of provider operations, replayed onto the
//! snapshot a deployment started from.

use crate::state::ResourceState;

/// Identifies a resource of the base snapshot (the one the deployment started from) by index.
pub type BaseIndex = usize;

/// One effect of a finished step on the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation<R = ResourceState> {
    /// A new state, placed after every state this deployment has written so far.
    Append(R),
    /// The base resource is gone (deleted, or superseded by an appended state).
    RemoveBase(BaseIndex),
    /// The base resource keeps its place with new contents (marked `delete`, `pendingReplacement`, ...).
    ReplaceBase(BaseIndex, R),
}
