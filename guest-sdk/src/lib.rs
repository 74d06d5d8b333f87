//! `cairn-sdk`: write Cairn providers as WebAssembly components (`wasm32-wasip2`).
//!
//! A provider implements [`Provider`] (only `create`, `update` and `delete` are required),
//! keeps a manifest next to its `Cargo.toml`, and exports both with one macro:
//!
//! ```rust,standalone_crate
//! use cairn_sdk::{
//!     CreateRequest, CreateResult, DeleteRequest, PropertyMapExt, Provider, Result, UpdateRequest,
//!     UpdateResult, props,
//! };
//!
//! #[derive(Default)]
//! struct Hello;
//!
//! impl Provider for Hello {
//!     fn create(&self, r: CreateRequest) -> Result<CreateResult> {
//!         let name = r.inputs.require_str("name")?;
//!         Ok(CreateResult {
//!             id: r.name().to_owned(),
//!             outputs: props! { "greeting" => format!("hi, {name}") }.into(),
//!         })
//!     }
//!     fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
//!         Ok(UpdateResult { outputs: r.old_outputs })
//!     }
//!     fn delete(&self, _: DeleteRequest) -> Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! cairn_sdk::export_provider!(Hello, manifest = "cairn.json");
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2`; the `.wasm` is the component.
//! The crate must be a `cdylib`. Requests name the new inputs `inputs` and what the state
//! recorded `old_inputs` / `old_outputs` (see [`provider`] for Pulumi's names). A preview
//! never reaches `create` or `update`: see [`Provider::preview_create`]. The crate's README
//! (shown on its repository) has complete provider and program crates.
//!
//! * [`Value`] / [`PropertyMap`]: the value model (every kind the engine has), with
//!   [`props!`], [`secret`], typed readers ([`PropertyMapExt`]) and [`Checker`] for `check`.
//! * [`Error`]: becomes the WIT `provider-error` (failed with optional partial state,
//!   unimplemented, cancelled, timeout).
//! * [`log`]: messages through the host; [`engine`]: the resource monitor for `construct`.
//! * [`manifest`]: the manifest format and a validator for unit tests.
//! * [`program`]: programs (resources, outputs, configuration) and [`export_program!`].
//! * [`policy`]: policy packs (resource and stack policies, enforcement, configuration) and
//!   [`export_policy_pack!`].
//! * [`wire`]: the node-list encoding of values (used by the export glue; public for tests).

extern crate self as cairn_sdk;

/// The README's Rust blocks, compiled (and run) as doctests: a sample that stops compiling
/// fails `cargo test`. Its provider sample embeds `cairn.json`, which for these doctests is
/// this crate's own copy of the `hello` example's manifest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod check;
pub mod engine;
pub mod error;
#[doc(hidden)]
pub mod export;
pub mod log;
pub mod manifest;
pub mod policy;
pub mod program;
pub mod properties;
pub mod provider;
pub mod urn;
pub mod value;
pub mod wire;

/// Bindings generated from `wit/provider.wit` (`world provider-world`).
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "provider-world",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "__export_provider_world",
        default_bindings_module: "::cairn_sdk::bindings",
        runtime_path: "::cairn_sdk::__private::wit_bindgen::rt",
        additional_derives: [PartialEq],
    });
}

/// Bindings generated from `wit/program.wit` (`world program-world`), sharing the provider
/// bindings' value types and host interface.
#[doc(hidden)]
pub mod program_bindings {
    wit_bindgen::generate!({
        world: "program-world",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "__export_program_world",
        default_bindings_module: "::cairn_sdk::program_bindings",
        runtime_path: "::cairn_sdk::__private::wit_bindgen::rt",
        with: {
            "cairn:deploy/types@0.3.0": crate::bindings::cairn::deploy::types,
            "cairn:deploy/host@0.3.0": crate::bindings::cairn::deploy::host,
        },
    });
}

/// Bindings generated from `wit/policy.wit` (`world policy-world`), sharing the provider
/// bindings' value types and host interface.
#[doc(hidden)]
pub mod policy_bindings {
    wit_bindgen::generate!({
        world: "policy-world",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "__export_policy_world",
        default_bindings_module: "::cairn_sdk::policy_bindings",
        runtime_path: "::cairn_sdk::__private::wit_bindgen::rt",
        with: {
            "cairn:deploy/types@0.3.0": crate::bindings::cairn::deploy::types,
            "cairn:deploy/host@0.3.0": crate::bindings::cairn::deploy::host,
        },
    });
}

pub use check::{Checker, PropertyMapExt, auto_name};
pub use error::{CheckFailure, Context, Error, PartialState, Result};
pub use properties::Properties;
pub use provider::{
    CallRequest, CallResult, CheckRequest, CheckResult, ConstructRequest, ConstructResult,
    CreateRequest, CreateResult, DeleteRequest, Dependencies, DiffChanges, DiffKind, DiffRequest,
    DiffResult, InvokeRequest, InvokeResult, PropertyDiff, Provider, ReadRequest, ReadResult,
    UpdateRequest, UpdateResult, diff_inputs,
};
pub use value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Lookup, Members, OutputValue,
    PropertyMap, ResourceReference, Value, secret,
};

/// Re-exports for the macros; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{Adapter, Instance};
    pub use wit_bindgen;
}

/// Exports a [`Provider`] as the component's `provider` interface and embeds its manifest.
///
/// ```rust,standalone_crate
/// # use cairn_sdk::{CreateRequest, CreateResult, DeleteRequest, Provider, Result};
/// # use cairn_sdk::{UpdateRequest, UpdateResult};
/// # #[derive(Default)]
/// # struct MyProvider;
/// # impl MyProvider {
/// #     fn new(_root: &str) -> MyProvider { MyProvider }
/// # }
/// # impl Provider for MyProvider {
/// #     fn create(&self, _: CreateRequest) -> Result<CreateResult> { unimplemented!() }
/// #     fn update(&self, _: UpdateRequest) -> Result<UpdateResult> { unimplemented!() }
/// #     fn delete(&self, _: DeleteRequest) -> Result<()> { unimplemented!() }
/// # }
/// cairn_sdk::export_provider!(MyProvider, manifest = "cairn.json"); // MyProvider: Default
/// ```
///
/// or, built by an expression:
///
/// ```rust,standalone_crate
/// # use cairn_sdk::{CreateRequest, CreateResult, DeleteRequest, Provider, Result};
/// # use cairn_sdk::{UpdateRequest, UpdateResult};
/// # #[derive(Default)]
/// # struct MyProvider;
/// # impl MyProvider {
/// #     fn new(_root: &str) -> MyProvider { MyProvider }
/// # }
/// # impl Provider for MyProvider {
/// #     fn create(&self, _: CreateRequest) -> Result<CreateResult> { unimplemented!() }
/// #     fn update(&self, _: UpdateRequest) -> Result<UpdateResult> { unimplemented!() }
/// #     fn delete(&self, _: DeleteRequest) -> Result<()> { unimplemented!() }
/// # }
/// cairn_sdk::export_provider!(MyProvider = MyProvider::new("/work"), manifest = "cairn.json");
/// ```
///
/// The manifest path is relative to the crate's `Cargo.toml`. Its JSON (see [`manifest`]) goes
/// into the `cairn:manifest` custom section, with `version` (from `CARGO_PKG_VERSION`) and `wit`
/// filled in when absent; a manifest that is not a JSON object or has no `name` fails the build.
/// The provider value is created on first use, once per component instance.
/// Use the macro once per crate.
#[macro_export]
macro_rules! export_provider {
    ($ty:ty = $init:expr, manifest = $path:literal $(,)?) => {
        const _: () = {
            const __CAIRN_MANIFEST_SOURCE: &[u8] = ::core::include_bytes!(::core::concat!(
                ::core::env!("CARGO_MANIFEST_DIR"),
                "/",
                $path
            ));
            const __CAIRN_MANIFEST_LEN: usize = $crate::manifest::section_len(
                __CAIRN_MANIFEST_SOURCE,
                ::core::env!("CARGO_PKG_VERSION"),
            );
            #[cfg_attr(target_family = "wasm", unsafe(link_section = "cairn:manifest"))]
            #[used]
            static __CAIRN_MANIFEST: [u8; __CAIRN_MANIFEST_LEN] =
                $crate::manifest::section::<__CAIRN_MANIFEST_LEN>(
                    __CAIRN_MANIFEST_SOURCE,
                    ::core::env!("CARGO_PKG_VERSION"),
                );

            struct __CairnInstance;
            ::std::thread_local! {
                static __CAIRN_PROVIDER: ::core::cell::RefCell<$ty> =
                    ::core::cell::RefCell::new($init);
            }
            impl $crate::__private::Instance for __CairnInstance {
                type Provider = $ty;
                fn manifest() -> &'static [u8] {
                    &__CAIRN_MANIFEST
                }
                fn with<R>(f: impl FnOnce(&::core::cell::RefCell<$ty>) -> R) -> R {
                    __CAIRN_PROVIDER.with(f)
                }
            }
            type __CairnExport = $crate::__private::Adapter<__CairnInstance>;
            $crate::bindings::__export_provider_world!(
                __CairnExport with_types_in $crate::bindings
            );
        };
    };
    ($ty:ty, manifest = $path:literal $(,)?) => {
        $crate::export_provider!(
            $ty = <$ty as ::core::default::Default>::default(),
            manifest = $path
        );
    };
}
