//! The deployment engine: resource monitor, step generator, step executor, and the journaled
//! snapshot they update.

pub mod events;
pub mod journal;
pub mod monitor;
pub mod program;
pub mod provider;
