//! Programs: declare a stack's resources in Rust, compiled to a wasm component.
//!
//! ```rust,standalone_crate
//! use cairn_sdk::program::{Args, Context, ResourceOptions, Result, custom};
//!
//! fn program(ctx: &Context) -> Result<()> {
//!     let config = ctx.config();
//!     let length = config.get_i64("length")?.unwrap_or(16);
//!     let password = custom(
//!         "random:index/randomPassword:RandomPassword",
//!         "db",
//!         Args::new().set("length", length),
//!         ResourceOptions::new(),
//!     );
//!     ctx.export("password", password.output("result"));
//!     Ok(())
//! }
//!
//! cairn_sdk::export_program!(program);
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2` (crate type `cdylib`) and point
//! the project's `Pulumi.yaml` at it (`runtime: wasm`). The programming model is the spec's:
//! [`Output`] / [`Input`] with dependencies, unknowns and secrets; custom, component,
//! provider and remote-component resources with every resource option; reads, invokes, stack
//! outputs, configuration and stack references. The same program runs for `preview` and `up`
//! ([`Context::is_dry_run`] tells which): in a preview a new resource's `id` is unknown and
//! its outputs are what its provider's `preview_create` described (unknown where the provider
//! cannot know them yet); callbacks on unknown values do not run.

mod output;
mod resource;
pub(crate) mod runtime;

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use indexmap::IndexMap;

pub use output::{All, Args, FromValue, Input, IntoInput, IntoValue, Output, all};
pub use resource::{
    Alias, CustomTimeouts, ProviderResource, Resource, ResourceOptions, TransformArgs,
    Transformation, UNKNOWN_ID, component, custom, invoke, provider, read, remote_component,
};
pub use runtime::run;

use crate::value::Value;

/// Why a program failed; the deployment shows the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error(message.to_owned())
    }
}

/// The program's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

thread_local! {
    static DEPLOYMENT: runtime::host::Deployment = runtime::host::deployment();
    static CONFIG: Rc<IndexMap<String, Value>> = Rc::new(runtime::host::config().into_iter().collect());
    static STACK_TRANSFORMATIONS: RefCell<Vec<Transformation>> = const { RefCell::new(Vec::new()) };
}

/// The deployment the program runs in.
pub(crate) fn deployment() -> runtime::host::Deployment {
    DEPLOYMENT.with(Clone::clone)
}

pub(crate) fn stack_transformations() -> Vec<Transformation> {
    STACK_TRANSFORMATIONS.with(|t| t.borrow().clone())
}

/// What `main` gets: the deployment, its configuration and the stack outputs.
pub struct Context {
    deployment: runtime::host::Deployment,
}

impl Context {
    pub(crate) fn from_host() -> Context {
        Context {
            deployment: deployment(),
        }
    }

    pub fn project(&self) -> &str {
        &self.deployment.project
    }

    pub fn stack(&self) -> &str {
        &self.deployment.stack
    }

    pub fn organization(&self) -> &str {
        &self.deployment.organization
    }

    /// True in a preview: new resources' outputs are unknown.
    pub fn is_dry_run(&self) -> bool {
        self.deployment.dry_run
    }

    /// The URN of the stack's root resource.
    pub fn root_urn(&self) -> &str {
        &self.deployment.root_urn
    }

    /// The project's configuration (keys `<project>:<key>`).
    pub fn config(&self) -> Config {
        Config::new(&self.deployment.project)
    }

    /// Configuration of another namespace, e.g. a provider package's.
    pub fn config_namespace(&self, namespace: &str) -> Config {
        Config::new(namespace)
    }

    /// Exports a stack output (secret outputs stay secret in the state and in
    /// `cairn stack output`).
    pub fn export<I>(&self, name: impl Into<String>, value: I)
    where
        I: IntoInput,
        I::Value: IntoValue,
    {
        runtime::export(name.into(), value.into_input().into_output().to_value());
    }

    /// Applies `f` to every resource the program declares after this call.
    pub fn register_stack_transformation(&self, f: impl Fn(&mut TransformArgs) + 'static) {
        STACK_TRANSFORMATIONS.with(|t| t.borrow_mut().push(Rc::new(f)));
    }
}

/// One namespace of the stack's configuration (`cairn config set <namespace>:<key> ...`).
pub struct Config {
    namespace: String,
    values: Rc<IndexMap<String, Value>>,
}

impl Config {
    pub fn new(namespace: &str) -> Config {
        Config {
            namespace: namespace.to_owned(),
            values: CONFIG.with(Clone::clone),
        }
    }

    fn full_key(&self, key: &str) -> String {
        if key.contains(':') {
            key.to_owned()
        } else {
            format!("{}:{key}", self.namespace)
        }
    }

    fn missing(&self, key: &str, secret: bool) -> Error {
        let full = self.full_key(key);
        Error(format!(
            "missing required configuration variable '{full}'\n    please set a value using the command `cairn config set {}{full} <value>`",
            if secret { "--secret " } else { "" }
        ))
    }

    /// The raw value and whether it is secret.
    fn raw(&self, key: &str) -> Option<(String, bool)> {
        match self.values.get(&self.full_key(key))? {
            Value::Secret(inner) => inner.as_str().map(|s| (s.to_owned(), true)),
            other => other.as_str().map(|s| (s.to_owned(), false)),
        }
    }

    /// A plain value (a secret one is returned as it is; prefer [`Config::get_secret`]).
    pub fn get(&self, key: &str) -> Option<String> {
        self.raw(key).map(|(v, _)| v)
    }

    pub fn require(&self, key: &str) -> Result<String> {
        self.get(key).ok_or_else(|| self.missing(key, false))
    }

    /// A value as a secret output (secret whether or not it was set with `--secret`).
    pub fn get_secret(&self, key: &str) -> Option<Output<String>> {
        self.raw(key).map(|(v, _)| Output::secret(v))
    }

    pub fn require_secret(&self, key: &str) -> Result<Output<String>> {
        self.get_secret(key).ok_or_else(|| self.missing(key, true))
    }

    fn parsed<T>(
        &self,
        key: &str,
        what: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(text) => parse(text.trim()).map(Some).ok_or_else(|| {
                Error(format!(
                    "configuration value '{}' is not {what}: {text:?}",
                    self.full_key(key)
                ))
            }),
        }
    }

    pub fn get_i64(&self, key: &str) -> Result<Option<i64>> {
        self.parsed(key, "a whole number", |s| s.parse().ok())
    }

    pub fn get_f64(&self, key: &str) -> Result<Option<f64>> {
        self.parsed(key, "a number", |s| s.parse().ok())
    }

    pub fn get_bool(&self, key: &str) -> Result<Option<bool>> {
        self.parsed(key, "true or false", |s| s.parse().ok())
    }

    /// A structured value (set with `cairn config set --path` or as JSON), deserialized.
    pub fn get_object<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                Error(format!(
                    "configuration value '{}' is not the expected structure: {e}",
                    self.full_key(key)
                ))
            }),
        }
    }

    pub fn require_object<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<T> {
        self.get_object(key)?
            .ok_or_else(|| self.missing(key, false))
    }
}

/// Another stack's outputs, on the same backend (`<stack>` or `<project>/<stack>`, as
/// `cairn stack ls` shows them). Secret outputs stay secret.
#[derive(Clone)]
pub struct StackReference {
    pub resource: Resource,
}

impl StackReference {
    pub fn new(name: &str) -> StackReference {
        let resource = read(
            "pulumi:pulumi:StackReference",
            name,
            name,
            Args::new().set("name", name),
            ResourceOptions::new(),
        );
        StackReference { resource }
    }

    /// Output `name` of the referenced stack (null when it has none).
    pub fn output(&self, name: &str) -> Output<Value> {
        self.resource.output("outputs").get(name)
    }

    /// Output `name`, failing with a message naming the stack when it does not exist.
    pub fn require_output(&self, name: &str) -> Output<Value> {
        let stack = self.resource.name().to_owned();
        let key = name.to_owned();
        self.resource
            .output("outputs")
            .try_apply(
                move |outputs| match outputs.as_object().and_then(|m| m.get(&key)) {
                    Some(v) => Ok(v.clone()),
                    None => Err(format!("stack {stack} has no output {key:?}")),
                },
            )
            .flatten_value()
    }
}

/// Exports a program: `main` (any `fn(&Context) -> Result<()>`) becomes the component's `run`.
///
/// ```rust,standalone_crate
/// use cairn_sdk::program::{Context, Result};
///
/// fn program(ctx: &Context) -> Result<()> {
///     ctx.export("greeting", "hello");
///     Ok(())
/// }
///
/// cairn_sdk::export_program!(program);
/// ```
#[macro_export]
macro_rules! export_program {
    ($main:path) => {
        const _: () = {
            struct __CairnProgram;
            impl $crate::program_bindings::Guest for __CairnProgram {
                fn run() -> ::core::result::Result<(), ::std::string::String> {
                    $crate::program::run($main)
                }
            }
            $crate::program_bindings::__export_program_world!(
                __CairnProgram with_types_in $crate::program_bindings
            );
        };
    };
}

#[cfg(test)]
mod tests;
