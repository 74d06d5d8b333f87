//! End-to-end tests: each drives the real `cairn` binary against a temporary home, backend and
//! project, and checks what a user would see: output, exit status, and files written.

mod background;
mod config;
mod crash;
mod deploy;
mod gen_sdk;
mod grpc;
mod import;
mod input;
mod interrupt;
mod journal;
mod json_output;
mod lock;
mod names;
mod new;
mod ociregistry;
mod package;
mod pgserver;
mod plugin_lock;
mod plugin_registry;
mod plugin_signing;
mod policy;
mod postgres;
mod postgresql_provider;
mod program;
mod pulumi;
mod python_sdk;
mod random_sdks;
mod safety;
mod sdk;
mod stack;
mod state;
mod support;
mod terminal;
mod tty;
mod wasm;
