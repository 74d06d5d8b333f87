//! `cairn-grpc`: the bridge between Cairn's engine and the gRPC plugin protocol (`pulumirpc`).
//!
//! The only crate that knows protobuf. Generated code lives in [`proto`]; [`convert`] maps
//! `google.protobuf.Struct` values to and from the engine's `PropertyValue`; [`engine`] serves
//! the engine address (`Engine`, `Health`) plugins are given; [`serve`] serves any engine
//! provider as a `ResourceProvider` plugin; [`wire`] holds the limits and checks applied to
//! everything a plugin or SDK program sends (message sizes, log volume, names, IDs, URNs, paths).

pub mod analyzer;
pub mod callbacks;
pub mod child;
pub mod client;
pub mod convert;
pub mod engine;
pub mod language;
pub mod monitor;
pub mod plugin;
pub mod serve;
pub mod wire;

pub use analyzer::GrpcAnalyzer;
pub use client::GrpcProvider;
pub use engine::{ServeError, Served, serve_engine};
pub use language::{Language, LanguageProgram, RunSettings};
pub use monitor::serve_monitor;
pub use plugin::{PluginCommand, PluginError, PluginProcess};
pub use serve::serve_provider;

/// Code generated from `proto/` by tonic and prost.
pub mod proto {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]

    /// The `pulumirpc` package.
    pub mod pulumirpc {
        tonic::include_proto!("pulumirpc");
    }

    /// The standard health-check service.
    pub mod health {
        tonic::include_proto!("grpc.health.v1");
    }
}
