//! One module per `cairn` command group.

pub mod config;
pub mod stack;
