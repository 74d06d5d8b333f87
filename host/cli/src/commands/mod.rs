//! One module per `cairn` command group.

pub mod config;
pub mod deploy;
pub mod import;
pub mod plugin;
pub mod provider;
pub mod stack;
pub mod state;
