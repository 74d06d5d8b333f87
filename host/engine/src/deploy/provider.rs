//! The provider contract: the lifecycle every provider implements (wasm component, gRPC plugin,
//! or in-process), and the loader that instantiates providers by package and version.
//!
//! Semantics follow the provider implementer's guide: a provider instance is configured
//! (`check_config` → `diff_config` → `configure`) before any resource operation.
//!
//! # Sandboxed code never starts native code implicitly
//!
//! A package used by a wasm program, or registered by a sandboxed provider in `construct`/`call`,
//! resolves to wasm components and to native plugins the project names (`Pulumi.yaml` `plugins:`)
//! only — never to a `pulumi-resource-<pkg>` found on `PATH` or in `<home>/plugins/bin`, nor to an
//! SDK's dynamic provider. The rule (`NativePlugins`) is passed to the loader, which decides before
//! starting anything; providers report their `ProviderOrigin`, so a default provider already
//! started for a Python/Node program is refused to sandboxed callers too. Python and Node.js
//! programs look plugins up as Pulumi does. Providers the program hands a component explicitly are
//! its choice.
//!
//! # Diff borrows its request
//!
//! `Provider::diff` / `diff_config` take a `DiffRequest<'_>` of references (URN, ID, old inputs and
//! outputs, news, ignore paths): a diff keeps nothing of its request and the engine keeps the state
//! it compares, so lending it replaced cloning three maps per Diff and dropping them after (for a 1
//! KB object, ~1.5 µs of the call was that drop). The other requests stay owned: their maps come
//! back in results (Check returns its news) or are consumed.

use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;

use crate::path::PropertyPath;
use crate::urn::{TypeToken, Urn};
use crate::value::{PropertyDependencies, PropertyMap};

// The vocabulary the SDK shares (`cairn-wire`): check failures and how diffs describe changes.
pub use cairn_wire::{CheckFailure, DiffChanges, DiffKind};

/// Lent, as [`DiffRequest`] is: every registration checks its inputs, and a provider encodes
/// them for its guest or plugin without needing its own copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckRequest<'a> {
    pub urn: &'a Urn,
    /// The last recorded inputs (from a prior `check` or `read`); empty for a new resource.
    pub olds: &'a PropertyMap,
    /// The new inputs; may contain unknowns.
    pub news: &'a PropertyMap,
    /// A seed for generated values, stable per resource.
    pub random_seed: &'a [u8],
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckResult {
    /// The validated inputs, with provider defaults applied.
    pub inputs: PropertyMap,
    pub failures: Vec<CheckFailure>,
}

/// One entry of a detailed diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropertyDiff {
    pub kind: DiffKind,
    /// True when the old value was read from the old inputs rather than the old outputs.
    pub input_diff: bool,
}

/// `Diff` / `DiffConfig`. Borrowed: a diff keeps nothing of its request, and the engine keeps
/// the recorded state it compares, so lending it costs nothing where owning it meant cloning
/// three maps per call (and dropping them after).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffRequest<'a> {
    pub urn: &'a Urn,
    pub id: &'a str,
    pub old_inputs: &'a PropertyMap,
    pub old_outputs: &'a PropertyMap,
    /// The checked new inputs; may contain unknowns.
    pub news: &'a PropertyMap,
    pub ignore_changes: &'a [PropertyPath],
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffResult {
    pub changes: DiffChanges,
    /// Top-level input properties whose change requires replacement.
    pub replace_keys: Vec<String>,
    /// Properties guaranteed not to change.
    pub stable_keys: Vec<String>,
    /// Top-level input properties that changed.
    pub changed_keys: Vec<String>,
    /// Per-property-path changes, when the provider reports them.
    pub detailed_diff: Option<IndexMap<String, PropertyDiff>>,
    /// The resource must be deleted before its replacement is created.
    pub delete_before_replace: bool,
}

impl DiffResult {
    /// A result saying nothing changed.
    pub fn none() -> DiffResult {
        DiffResult {
            changes: DiffChanges::None,
            ..DiffResult::default()
        }
    }

    /// True when the diff asks for replacement.
    pub fn requires_replacement(&self) -> bool {
        !self.replace_keys.is_empty()
            || self
                .detailed_diff
                .as_ref()
                .is_some_and(|d| d.values().any(|p| p.kind.is_replace()))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateRequest {
    pub urn: Urn,
    pub properties: PropertyMap,
    /// Seconds; 0 means the provider's default.
    pub timeout: f64,
    pub preview: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateResult {
    /// Ignored in previews.
    pub id: String,
    pub outputs: PropertyMap,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    pub urn: Urn,
    pub id: String,
    /// The last recorded inputs; empty when importing.
    pub inputs: PropertyMap,
    /// The last recorded state; empty when importing or reading an external resource.
    pub state: PropertyMap,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadResult {
    /// The resource's ID; empty when the resource no longer exists.
    pub id: String,
    /// The resource's inputs as the provider sees them (empty if the provider cannot tell).
    pub inputs: PropertyMap,
    pub outputs: PropertyMap,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpdateRequest {
    pub urn: Urn,
    pub id: String,
    pub old_inputs: PropertyMap,
    pub old_outputs: PropertyMap,
    pub news: PropertyMap,
    pub timeout: f64,
    pub ignore_changes: Vec<PropertyPath>,
    pub preview: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateResult {
    pub outputs: PropertyMap,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeleteRequest {
    pub urn: Urn,
    pub id: String,
    pub inputs: PropertyMap,
    pub outputs: PropertyMap,
    pub timeout: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct InvokeRequest {
    pub token: String,
    pub args: PropertyMap,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct InvokeResult {
    pub outputs: PropertyMap,
    pub failures: Vec<CheckFailure>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallRequest {
    pub token: String,
    pub args: PropertyMap,
    pub arg_dependencies: PropertyDependencies,
    pub project: String,
    pub stack: String,
    pub dry_run: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResult {
    pub outputs: PropertyMap,
    pub output_dependencies: PropertyDependencies,
    pub failures: Vec<CheckFailure>,
}

/// A request to construct a remote component.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConstructRequest {
    pub project: String,
    pub stack: String,
    pub resource_type: String,
    pub name: String,
    pub parent: Option<Urn>,
    pub inputs: PropertyMap,
    pub input_dependencies: PropertyDependencies,
    pub dependencies: Vec<Urn>,
    pub protect: bool,
    pub providers: IndexMap<String, String>,
    pub aliases: Vec<Urn>,
    pub dry_run: bool,
    /// The stack's config, secret values included (as text).
    pub config: IndexMap<String, String>,
    /// The keys of `config` whose values are secret.
    pub config_secret_keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConstructResult {
    pub urn: Option<Urn>,
    pub state: PropertyMap,
    pub state_dependencies: PropertyDependencies,
}

/// What a provider returns when an operation failed after partly succeeding (for example a
/// resource was created but did not become healthy): its ID and state are still recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartialState {
    pub id: String,
    pub inputs: PropertyMap,
    pub outputs: PropertyMap,
    /// Why the resource did not initialize, as the provider says (a gRPC plugin's
    /// `ErrorResourceInitFailed.reasons`): recorded as its `initErrors`. Empty: the failure's
    /// message is recorded instead.
    pub reasons: Vec<String>,
}

/// Why a provider operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error("{message}")]
    Failed {
        message: String,
        /// Set when the operation left a real resource behind.
        partial: Option<Box<PartialState>>,
    },
    #[error("the provider does not implement {method}")]
    Unimplemented { method: &'static str },
    #[error("the operation was cancelled")]
    Cancelled,
    #[error("the operation did not finish within {seconds} s")]
    Timeout { seconds: f64 },
    /// The provider stopped answering mid-operation (its process or instance died, the
    /// connection broke): the operation may or may not have taken effect, so a mutating one is
    /// left pending in the state rather than recorded as failed.
    #[error("{message}; whether the operation took effect is unknown")]
    OutcomeUnknown { message: String },
}

impl ProviderError {
    pub fn failed(message: impl Into<String>) -> ProviderError {
        ProviderError::Failed {
            message: message.into(),
            partial: None,
        }
    }

    pub fn outcome_unknown(message: impl Into<String>) -> ProviderError {
        ProviderError::OutcomeUnknown {
            message: message.into(),
        }
    }

    pub fn partial(&self) -> Option<&PartialState> {
        match self {
            ProviderError::Failed { partial, .. } => partial.as_deref(),
            _ => None,
        }
    }
}

/// Where a provider's code comes from: what the rule "sandboxed code never reaches native code
/// the project did not name" looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderOrigin {
    /// Code linked into Cairn itself: the built-in `pulumi` provider, in-process providers.
    InProcess,
    /// A WebAssembly component, running in the sandbox.
    Sandboxed,
    /// A native plugin the project names explicitly (Pulumi.yaml `plugins:`).
    NamedPlugin,
    /// A native plugin found by looking it up (on `PATH`, in the Cairn plugin directory), or an
    /// SDK's dynamic-provider host (which runs code the program sends it).
    DiscoveredPlugin,
}

/// Which native plugins a provider lookup may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativePlugins {
    /// Any plugin the lookup finds, as Pulumi does: for Python and Node.js programs, which run
    /// native code of their own anyway.
    Any,
    /// Only native plugins the project names; everything else must be a wasm component. For
    /// wasm programs, and for what a sandboxed provider registers in `construct` or `call`.
    ProjectNamed,
}

impl NativePlugins {
    /// Whether a provider of `origin` may serve a caller under this rule.
    pub fn allows(self, origin: ProviderOrigin) -> bool {
        self == NativePlugins::Any || origin != ProviderOrigin::DiscoveredPlugin
    }

    /// The stricter of two rules.
    pub fn and(self, other: NativePlugins) -> NativePlugins {
        if self == NativePlugins::Any {
            other
        } else {
            self
        }
    }
}

/// A provider instance. Every method is called only after `configure` (except the config
/// methods, `get_schema` and `cancel`).
#[async_trait]
pub trait Provider: Send + Sync {
    /// The package this provider implements (`aws`, `random`, ...).
    fn package(&self) -> &str;

    /// Where the provider's code comes from. Implementations that run code from outside Cairn
    /// say so; the default is code linked into Cairn.
    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::InProcess
    }

    /// `package@version` (or just the package), for messages.
    fn describe(&self) -> String {
        match self.version() {
            Some(version) => format!("{}@{version}", self.package()),
            None => self.package().to_owned(),
        }
    }

    /// The provider's version, if known.
    fn version(&self) -> Option<semver::Version> {
        None
    }

    /// The package schema (JSON text).
    async fn get_schema(&self) -> Result<String, ProviderError> {
        Err(ProviderError::Unimplemented {
            method: "GetSchema",
        })
    }

    /// Validates provider configuration (the `check` of a provider resource).
    async fn check_config(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: request.news.clone(),
            failures: vec![],
        })
    }

    /// Compares provider configurations (the `diff` of a provider resource).
    async fn diff_config(&self, _request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult::default())
    }

    /// Applies checked configuration. `preview` configurations may contain unknowns.
    async fn configure(&self, inputs: PropertyMap, preview: bool) -> Result<(), ProviderError>;

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError>;
    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError>;
    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError>;
    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError>;
    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError>;
    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError>;

    async fn construct(
        &self,
        _request: ConstructRequest,
        _monitor: crate::deploy::monitor::Monitor,
    ) -> Result<ConstructResult, ProviderError> {
        Err(ProviderError::Unimplemented {
            method: "Construct",
        })
    }

    async fn invoke(&self, _request: InvokeRequest) -> Result<InvokeResult, ProviderError> {
        Err(ProviderError::Unimplemented { method: "Invoke" })
    }

    async fn call(
        &self,
        _request: CallRequest,
        _monitor: crate::deploy::monitor::Monitor,
    ) -> Result<CallResult, ProviderError> {
        Err(ProviderError::Unimplemented { method: "Call" })
    }

    /// Asks the provider to stop outstanding work; advisory and non-blocking.
    async fn cancel(&self) {}
}

/// Why a provider could not be instantiated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    #[error("no provider for package {package:?}{} is installed", version.as_ref().map(|v| format!(" compatible with version {v}")).unwrap_or_default())]
    NotFound {
        package: String,
        version: Option<String>,
    },
    #[error("loading the provider for package {package:?}: {message}")]
    Failed { package: String, message: String },
}

/// Instantiates unconfigured providers by package and version (the spec's provider lookup).
#[async_trait]
pub trait ProviderLoader: Send + Sync {
    /// Loads the provider for `package`. Under [`NativePlugins::ProjectNamed`] a loader must
    /// not start a native plugin the project does not name: it must decide before starting
    /// anything.
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError>;

    /// [`ProviderLoader::load`], told where the package can be fetched if it is not installed
    /// (a provider's `pluginDownloadURL`). Loaders that fetch nothing ignore it.
    async fn load_from(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        download_url: Option<&str>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        let _ = download_url;
        self.load(package, version, native).await
    }
}

/// The type token of provider resources for a package: `pulumi:providers:<package>`.
pub fn provider_type(package: &str) -> Result<TypeToken, crate::urn::TypeTokenError> {
    TypeToken::parse(&format!("pulumi:providers:{package}"))
}
