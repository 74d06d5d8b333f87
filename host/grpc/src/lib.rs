//! `cairn-grpc`: the bridge between Cairn's engine and the gRPC plugin protocol (`pulumirpc`).
//!
//! The only crate that knows protobuf. Generated code lives in [`proto`]; [`convert`] maps
//! `google.protobuf.Struct` values to and from the engine's `PropertyValue`; [`engine`] serves
//! the engine address (`Engine`, `Health`) plugins are given; [`serve`] serves any engine
//! provider as a `ResourceProvider` plugin; [`wire`] holds the limits and checks applied to
//! everything a plugin or SDK program sends (message sizes, log volume, names, IDs, URNs, paths).
//!
//! # Nothing crosses the gRPC bridge unchecked
//!
//! Nothing crosses the gRPC bridge unchecked (plugins → `client.rs`; SDK programs and the monitor
//! served to `Construct`/`Call` → `monitor.rs`; `Engine.Log` → `engine.rs`):
//! * Values are checked as they are decoded from `google.protobuf.Struct` (`convert.rs`): NaN and
//!   ±Inf, keys over `MAX_KEY_BYTES`, nesting past `MAX_VALUE_DEPTH` and malformed special objects
//!   are refused naming the property path. (prost refuses nesting past ~48 levels first, as an
//!   invalid message.)
//! * Every string that becomes a type, name, URN, alias, dependency, ID, key, property path,
//!   provider reference or version goes through `wire.rs` and is refused naming its field
//!   (`RegisterResource <type> "<name>": ignoreChanges[1]: …`); custom timeouts must be finite.
//! * A `Create`/`Update` that succeeded but whose reply cannot be accepted fails with a partial
//!   state (the ID and the outputs that could be kept), so the engine records the resource;
//!   `ErrorResourceInitFailed` states are checked the same way. A reply with no storable ID fails
//!   saying the resource may exist untracked.
//! * A `Construct` answer must name the component's own URN.
//! * A program's callbacks (`transforms`, `RegisterStackTransform`, `RegisterStackInvokeTransform`)
//!   are reached only at loopback addresses (`wire::callback_target`), with printable bounded
//!   tokens; what a transform answers is decoded and checked as the program's request would be
//!   (values in `convert.rs`, every option with `wire.rs`, refused naming it:
//!   `options.ignore_changes[0]: …`), and the engine then admits the transformed registration like
//!   any other.
//! * Replies and requests are at most `CAIRN_GRPC_MAX_MESSAGE_MB` (64 MiB; `GetSchema` up to 400
//!   MiB), trailers at most 16 MiB; errors, check failures (≤ 100 kept) and log messages are capped
//!   at `MAX_MESSAGE_BYTES`.
//! * Output is bounded: lines are read at most `MAX_MESSAGE_BYTES` at a time (the port line 1 KiB),
//!   and each plugin process, program process and served engine shows at most `CAIRN_GRPC_LOG_MB`
//!   (8 MiB) of log (a line costs its length + 64 bytes), then one note; pipes are drained past it.
//! * A plugin's port must be one its own process tree listens on (Linux, from `/proc`) and must
//!   answer `GetPluginInfo` (or `Unimplemented`) within 30 s; otherwise the plugin is refused.
//!
//! # SDK programs get a monitor, not a language host
//!
//! Pulumi runs programs through a language-host plugin; Cairn starts the SDK directly (a Python
//! bootstrap that configures the runtime as the SDK's automation server does; Node's `cmd/run`) and
//! serves `ResourceMonitor`, `Engine` and `Health` on one loopback port. One process fewer, same
//! protocol to the SDK.
//!
//! # Output values are not offered to SDKs
//!
//! Output values are not offered to SDKs (`SupportsFeature("outputValues")` is false), so they send
//! plain values with property dependencies; secrets, resource references, alias specs,
//! `deletedWith`, transforms and invoke transforms are offered (by `SupportsFeature` and
//! `GetDeploymentInfo` alike, from one list), and so are resource hooks (`resourceHooks`): they
//! run around the executor's provider calls, and delete hooks after the program's code has
//! finished, so the SDK is kept alive in `SignalAndWaitForShutdown` until the deployment is done
//! (`cairn_engine::deploy::hooks`).
//!
//! # `StreamInvoke` streams one result
//!
//! SDKs before Pulumi 3.161 had a streaming invoke that Pulumi's engine forwarded to the provider's
//! `StreamInvoke` (which few providers implemented, and which Pulumi has since removed). Cairn's
//! providers have no streaming form, so the monitor answers it with the invoke's result as one
//! message, then its check failures as another.
//!
//! # The Python SDK's `RecursionError` is its own
//!
//! A Python program with a few hundred dynamic resources fails with `RecursionError` in
//! `pulumi/dynamic/dynamic.py`: `serialize_provider` wraps `pickle._Pickler._batch_setitems` in a
//! sorting wrapper on every call and never restores it, so the N-th dynamic resource pickles
//! through N nested wrappers per dictionary level. Measured with the SDK 3.272 (unchanged in
//! Pulumi's current source): a 400-resource program with a one-method provider fails at the 314th
//! resource under Pulumi's own engine and under Cairn alike, before either engine has answered
//! anything that could matter (the failure is in the resource constructor); with
//! `sys.setrecursionlimit(20000)` both deploy all 400. Nothing in how Cairn answers
//! `SupportsFeature`, registrations, outputs or dependencies is involved; the book's Pulumi page
//! (docs/src/pulumi.md) gives the workaround.

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
