//! Cairn's wasmtime host: loads provider components, sandboxes them, caches compiled code, and
//! implements the engine's [`Provider`](cairn_engine::deploy::provider::Provider) and
//! [`ProviderLoader`](cairn_engine::deploy::provider::ProviderLoader) contracts with them.
//!
//! * [`WasmPlugin`] — a `.wasm` file: bytes, SHA-256 and its [`Manifest`] (custom section
//!   `cairn:manifest`).
//! * [`WasmRuntime`] — one wasmtime engine per process: compile once (cached on disk by SHA-256
//!   and engine compatibility hash), epoch ticker, the linker with every host API.
//! * [`WasmProvider`] — a provider: a pool of configured instances behind the engine's
//!   `Provider` trait, each call under a deadline and a memory limit.
//! * [`Grants`] / [`Sandbox`] — what the user grants (`cairn:grants`) and what a provider gets:
//!   the intersection with what its manifest requests.
//! * [`PluginStore`] — installed providers (`<dir>/<name>/<version>/<name>-<version>.wasm`) and
//!   the spec's lookup (newest compatible version); [`WasmLoader`] — the `ProviderLoader`.
//!
//! # The sandbox
//!
//! Deny by default. A provider gets its own memory and the host's clocks and randomness;
//! everything else must be requested in its manifest **and** granted by the user:
//!
//! | capability  | manifest requests (`capabilities`)  | user grants (`cairn:grants.<pkg>`)               |
//! |-------------|-------------------------------------|--------------------------------------------------|
//! | outbound HTTP (`wasi:http`) | `"http": ["api.example.com", "*.example.org"]` | `"http": [...]` — a host must match both lists |
//! | outbound TCP (`wasi:sockets`) | `"tcp": ["*:*"]` (`*` for any host or any port) | `"tcp": ["127.0.0.1:5432", "db.internal:5432", "*:5432"]` — a port is required; `*` reaches only public addresses |
//! | directories | `"directories": [{"guest": "/work", "write": true}]` | `"directories": [{"host": "./site", "guest": "/work", "write": true}]` — write only if both say so |
//! | environment | `"env": ["TZ"]`                     | `"env": ["TZ"]` (host's value) or `{"TZ": "UTC"}` |
//!
//! TCP is connect-only and checked on every address (see [`tcp`]): the host resolves names
//! itself, UDP, listening and binding are never granted; stdin is empty; stdout/stderr are captured into the log. Limits
//! come from the grant only: `memoryMiB` (default 256) per instance — which also bounds what
//! one call may pass to the host — and `timeoutSeconds` (default 300) per call, unless the
//! request carries its own timeout. Logs are capped per message, per call and per deployment
//! (see [`state`]). Any violation, trap or limit fails the call with `ProviderError::Failed`
//! naming the provider (or program), method, resource and capability or limit and the setting
//! that raises it; the host itself never crashes or hangs, and the next call gets a fresh
//! instance.
//!
//! Everything a guest returns is checked where it is decoded ([`convert`]): values the engine
//! cannot store (NaN, ±Inf, over-long keys, nesting deeper than the engine's limit) are refused
//! with the property path; IDs, names, keys, lists and messages are bounded. When a `create`
//! or `update` succeeded but its result cannot be accepted, the error carries the partial state
//! (the ID and the outputs that can be kept) so the engine records the resource.
//!
//! # Grants: the `cairn:grants` stack setting
//!
//! Grants are structured stack configuration under the key `cairn:grants`, one object per
//! package. The CLI passes the resolved value to [`Grants::parse`], with the project directory
//! as the base for relative host paths:
//!
//! ```yaml
//! # Pulumi.<stack>.yaml
//! config:
//!   cairn:grants:
//!     site:                          # the package name
//!       http: ["api.example.com", "*.cdn.example.org"]
//!       tcp: ["127.0.0.1:5432"]        # host:port; names resolved by the host
//!       directories:
//!         - host: ./public           # relative to the project directory
//!           guest: /work             # the path the provider sees
//!           write: true              # default false (read-only)
//!       env: ["TZ"]                  # or a map of fixed values: {TZ: UTC}
//!       memoryMiB: 512               # default 256
//!       timeoutSeconds: 60           # default 300
//! ```
//!
//! `http` entries are exact host names or IP addresses, `*.suffix` (any subdomain, not the bare
//! suffix) or `*` (any host); no scheme, port or path. Unless the user grants the *exact* host,
//! requests whose host is or resolves to an address that is not on the public internet (or an
//! IPv6 address embedding one) are refused, so wildcard grants cannot reach the machine's own
//! network; the connection goes to exactly the address checked (see [`http`]). A directory
//! grant may not expose Cairn's own files (the compile cache, the plugin store). Errors name
//! the key: `cairn:grants.site.directories[0].guest: must be an absolute path such as /work`.
//!
//! # Caching
//!
//! See [`runtime`]: artifacts live at `<cache dir>/<sha256>-<compatibility hash>.cwasm`, each
//! recording the SHA-256 of the exact component it was compiled from, which must match the
//! bytes being loaded (otherwise the component is recompiled); the module documents the threat
//! model. [`WasmRuntime::stats`] counts compilations, cache loads and in-process reuse.
//!
//! # Deny by default
//!
//! A wasm program gets exactly what `cairn:program` grants. A wasm provider gets its memory, clocks
//! and randomness; anything else (HTTP hosts, directories, environment variables) only if its
//! manifest requests it AND the user grants it under `cairn:grants.<package>`. Sockets are never
//! granted. Every trap, limit or violation fails the call naming `package@version method urn` and
//! the capability or limit; a trapped instance is discarded, never reused, and the next call works;
//! one whose linear memory grew past its start plus max(start, 16 MiB) (a leaking language runtime)
//! is retired after its call, and a fresh configured one serves the next. An instance that dies
//! (trap, deadline, memory) during a `create`, `update` or `delete` that is not a preview may have
//! acted, so that is `ProviderError::OutcomeUnknown` and the operation stays pending; everything
//! else, and every error the guest returns, is `ProviderError::Failed`.
//!
//! # A program's grant is taken whole
//!
//! Providers get manifest request ∩ user grant; a program has no manifest — its author and the
//! person granting are the same user — so `cairn:program` (same fields as a package grant) is its
//! sandbox.
//!
//! # One WIT package, two worlds
//!
//! `cairn:deploy@0.3.0` holds `provider-world` and `program-world` so both share `types` (one value
//! encoding) and `host` (logging).

pub mod bindings {
    //! Host bindings of the `cairn:deploy` world (`wit/provider.wit`), generated by wasmtime.
    wasmtime::component::bindgen!({
        world: "provider-world",
        path: "../../wit",
        imports: { default: async | trappable },
        exports: { default: async },
        additional_derives: [PartialEq],
    });
}

pub mod program_bindings {
    //! Host bindings of the `cairn:deploy` program world (`wit/program.wit`), sharing the
    //! provider bindings' value types and host interface.
    wasmtime::component::bindgen!({
        world: "program-world",
        path: "../../wit",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "cairn:deploy/types": crate::bindings::cairn::deploy::types,
            "cairn:deploy/host": crate::bindings::cairn::deploy::host,
        },
    });
}

pub mod policy_bindings {
    //! Host bindings of the `cairn:deploy` policy world (`wit/policy.wit`), sharing the
    //! provider bindings' value types and host interface.
    wasmtime::component::bindgen!({
        world: "policy-world",
        path: "../../wit",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "cairn:deploy/types": crate::bindings::cairn::deploy::types,
            "cairn:deploy/host": crate::bindings::cairn::deploy::host,
        },
    });
}

pub mod convert;
pub mod error;
pub mod grants;
pub mod http;
pub mod loader;
pub mod log;
pub mod manifest;
pub mod plugin;
pub mod policy;
pub mod program;
pub mod provider;
pub mod runtime;
pub mod state;
pub mod store;
pub mod tcp;

pub use error::WasmError;
pub use grants::{DirGrant, GRANTS_KEY, Grants, GrantsError, PROGRAM_KEY, PackageGrant, Sandbox};
pub use loader::WasmLoader;
pub use log::{LogRecord, LogSink, LogSource, events_log_sink, tracing_log_sink};
pub use manifest::{Capabilities, DirRequest, Manifest, ManifestError};
pub use plugin::WasmPlugin;
pub use program::{ProgramFile, WasmProgram};
pub use provider::{Method, PoolStats, WasmProvider};
pub use runtime::{CompileStats, RuntimeOptions, WasmRuntime};
pub use state::{DEPLOYMENT_LOG_LIMIT, InstanceState, LOG_LIMIT, OUTPUT_LIMIT, RECORD_OVERHEAD};
pub use store::{Inspection, Installed, PluginStore, SchemaSummary};
pub use tcp::{TcpHost, TcpPattern, TcpPolicy};
