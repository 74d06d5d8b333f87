//! One module per decoder; each exposes its [`Target`]s.

use cairn_fuzz_driver::Target;

mod config;
mod grants;
mod grpc;
mod journal;
mod manifest;
mod path;
mod project;
mod state;
mod urn;
mod wire;
mod wit;

pub fn all() -> Vec<Target> {
    vec![
        urn::TARGET,
        path::TARGET,
        state::VALUE,
        state::DEPLOYMENT,
        journal::TARGET,
        wit::TARGET,
        wire::TARGET,
        grpc::TARGET,
        manifest::MANIFEST,
        manifest::COMPONENT,
        project::TARGET,
        config::TARGET,
        grants::TARGET,
    ]
}
