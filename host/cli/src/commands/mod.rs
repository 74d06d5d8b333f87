//! One module per `cairn` command group.

pub mod about;
pub mod config;
pub mod console;
pub mod deploy;
pub mod gen_sdk;
pub mod import;
pub mod login;
pub mod new;
pub mod package;
pub mod plugin;
pub mod plugin_lock;
pub mod provider;
pub mod signing;
pub mod stack;
pub mod stack_graph;
pub mod stack_info;
pub mod state;
pub mod state_move;
