//! Declaring resources: custom resources, components, providers, reads, invokes, and every
//! resource option of the programming model.
//!
//! A declaration returns a [`Resource`] at once. Its request goes to the host when everything
//! it refers to is known: its inputs, its parent's and `dependsOn` resources' URNs, its
//! provider's reference. So declarations that do not refer to each other are in the engine
//! together and deploy in parallel.

use std::collections::BTreeSet;
use std::rc::Rc;

use super::output::{Args, FromValue, IntoInput, Known, Output, Resolved, Resolver};
use super::runtime::{self, Outcome, first_failure, property_value, when_all};
use crate::value::{PropertyMap, Value};

/// The ID a provider reference uses for a provider not created yet (a preview).
pub const UNKNOWN_ID: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/// A declared resource: its URN, its ID (custom resources) and its outputs, as outputs.
#[derive(Clone)]
pub struct Resource {
    pub urn: Output<String>,
    /// The provider-assigned ID; unknown in a preview of a create; empty for components.
    pub id: Output<String>,
    outputs: Output<PropertyMap>,
    resource_type: String,
    name: String,
    /// Transformations children inherit (components).
    transformations: Vec<Transformation>,
    /// Provider references children inherit, by package.
    providers: Vec<(String, Output<String>)>,
}

impl Resource {
    pub fn resource_type(&self) -> &str {
        &self.resource_type
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Output property `key` (lifted: secret or unknown properties make the output so).
    pub fn output(&self, key: &str) -> Output<Value> {
        let key = key.to_owned();
        self.outputs
            .apply(move |mut map| map.shift_remove(&key).unwrap_or(Value::Null))
            .flatten_value()
    }

    /// Output property `key` as a `T`; a value of another type fails the output.
    pub fn get<T: FromValue + Clone + 'static>(&self, key: &str) -> Output<T> {
        let key_name = key.to_owned();
        self.output(key)
            .try_apply(move |v| T::from_value(&v).map_err(|e| format!("output {key_name}: {e}")))
    }

    /// Every output property.
    pub fn outputs(&self) -> Output<PropertyMap> {
        self.outputs.clone()
    }

    /// Sets a component's outputs once they are known (secrets stay secret).
    pub fn register_outputs(&self, outputs: Args) {
        let keys: Vec<String> = outputs.map.keys().cloned().collect();
        let mut items: Vec<Output<Value>> = outputs.map.into_values().collect();
        items.push(self.urn.to_value());
        when_all(items, move |mut settled| {
            let Some(urn) = settled.pop() else { return };
            let Known::Value(Value::String(urn)) = urn.known else {
                return;
            };
            let mut map = PropertyMap::new();
            for (key, r) in keys.into_iter().zip(settled) {
                match property_value(r) {
                    Ok(v) => {
                        map.insert(key, v);
                    }
                    Err(_) => return, // the failure is already recorded
                }
            }
            if let Err(e) = send::outputs(&urn, &map) {
                runtime::record_error(&format!("registering the outputs of {urn}: {e}"));
            }
        });
    }
}

/// A provider resource (`pulumi:providers:<package>`), usable as a resource's `provider`.
#[derive(Clone)]
pub struct ProviderResource {
    pub resource: Resource,
    package: String,
}

impl ProviderResource {
    /// The reference the engine takes: `<urn>::<id>` (the unknown ID in a preview of a create).
    pub fn reference(&self) -> Output<String> {
        let id = self.resource.id.clone();
        let (out, resolver) = Output::pending();
        super::output::all((self.resource.urn.clone(), id.clone()))
            .apply(|(urn, id)| format!("{urn}::{id}"))
            .on_resolved({
                let urn = self.resource.urn.clone();
                move |r| {
                    // An unknown ID (a provider created by this update) still makes a usable
                    // reference: the engine resolves it once the provider exists.
                    let known = match &r.known {
                        Known::Unknown => match urn.peek().map(|u| u.known) {
                            Some(Known::Value(urn)) => Known::Value(format!("{urn}::{UNKNOWN_ID}")),
                            _ => Known::Unknown,
                        },
                        other => other.clone(),
                    };
                    resolver.resolve(Resolved {
                        known,
                        secret: false,
                        deps: r.deps.clone(),
                    });
                }
            });
        out
    }

    pub fn package(&self) -> &str {
        &self.package
    }
}

/// A function that may change a resource's type, name, arguments and options before it is
/// registered; applied to the resource it is given to and every descendant.
pub type Transformation = Rc<dyn Fn(&mut TransformArgs)>;

/// What a [`Transformation`] may change.
pub struct TransformArgs {
    pub resource_type: String,
    pub name: String,
    pub args: Args,
    pub options: ResourceOptions,
}

/// A previous identity of a resource.
#[derive(Clone, Debug, Default)]
pub struct Alias {
    pub urn: Option<String>,
    pub name: Option<String>,
    pub resource_type: Option<String>,
    /// The old parent (a resource's URN); see [`Alias::no_parent`].
    pub parent_urn: Option<String>,
    pub no_parent: bool,
    pub stack: Option<String>,
    pub project: Option<String>,
}

impl Alias {
    /// The resource used to be called `name`.
    pub fn name(name: impl Into<String>) -> Alias {
        Alias {
            name: Some(name.into()),
            ..Alias::default()
        }
    }

    /// The resource used to have this full URN.
    pub fn urn(urn: impl Into<String>) -> Alias {
        Alias {
            urn: Some(urn.into()),
            ..Alias::default()
        }
    }

    /// The resource used to have type `resource_type`.
    pub fn resource_type(resource_type: impl Into<String>) -> Alias {
        Alias {
            resource_type: Some(resource_type.into()),
            ..Alias::default()
        }
    }

    /// The resource used to have no parent (it was a child of the stack).
    pub fn no_parent() -> Alias {
        Alias {
            no_parent: true,
            ..Alias::default()
        }
    }
}

/// Seconds a create, update or delete may take (0: the provider's default).
#[derive(Clone, Copy, Debug, Default)]
pub struct CustomTimeouts {
    pub create: f64,
    pub update: f64,
    pub delete: f64,
}

/// The programming model's resource options.
#[derive(Clone, Default)]
pub struct ResourceOptions {
    parent: Option<Resource>,
    depends_on: Vec<Resource>,
    protect: bool,
    retain_on_delete: bool,
    deleted_with: Option<Resource>,
    provider: Option<ProviderResource>,
    providers: Vec<ProviderResource>,
    aliases: Vec<Alias>,
    ignore_changes: Vec<String>,
    replace_on_changes: Vec<String>,
    delete_before_replace: Option<bool>,
    additional_secret_outputs: Vec<String>,
    custom_timeouts: Option<CustomTimeouts>,
    import: Option<String>,
    version: Option<String>,
    transformations: Vec<Transformation>,
}

impl ResourceOptions {
    pub fn new() -> ResourceOptions {
        ResourceOptions::default()
    }

    /// The resource's parent (its URN includes the parent's type; children inherit the
    /// parent's providers and transformations).
    pub fn parent(mut self, parent: &Resource) -> Self {
        self.parent = Some(parent.clone());
        self
    }

    /// Depends on `resource` beyond what the inputs say.
    pub fn depends_on(mut self, resource: &Resource) -> Self {
        self.depends_on.push(resource.clone());
        self
    }

    pub fn protect(mut self, protect: bool) -> Self {
        self.protect = protect;
        self
    }

    /// On delete, drop the resource from the stack but leave it in the cloud.
    pub fn retain_on_delete(mut self, retain: bool) -> Self {
        self.retain_on_delete = retain;
        self
    }

    /// Skip deleting this resource when `resource` is deleted too.
    pub fn deleted_with(mut self, resource: &Resource) -> Self {
        self.deleted_with = Some(resource.clone());
        self
    }

    /// Manage the resource with this provider instead of the default one.
    pub fn provider(mut self, provider: &ProviderResource) -> Self {
        self.provider = Some(provider.clone());
        self
    }

    /// Providers for a component's children, by package.
    pub fn providers(mut self, provider: &ProviderResource) -> Self {
        self.providers.push(provider.clone());
        self
    }

    pub fn alias(mut self, alias: Alias) -> Self {
        self.aliases.push(alias);
        self
    }

    /// Ignore changes to these property paths.
    pub fn ignore_changes(mut self, paths: &[&str]) -> Self {
        self.ignore_changes
            .extend(paths.iter().map(|p| (*p).to_owned()));
        self
    }

    /// Replace the resource when these property paths change.
    pub fn replace_on_changes(mut self, paths: &[&str]) -> Self {
        self.replace_on_changes
            .extend(paths.iter().map(|p| (*p).to_owned()));
        self
    }

    pub fn delete_before_replace(mut self, yes: bool) -> Self {
        self.delete_before_replace = Some(yes);
        self
    }

    /// Mark these output properties secret.
    pub fn additional_secret_outputs(mut self, keys: &[&str]) -> Self {
        self.additional_secret_outputs
            .extend(keys.iter().map(|k| (*k).to_owned()));
        self
    }

    pub fn custom_timeouts(mut self, timeouts: CustomTimeouts) -> Self {
        self.custom_timeouts = Some(timeouts);
        self
    }

    /// Adopt the existing resource with this ID instead of creating one.
    pub fn import(mut self, id: impl Into<String>) -> Self {
        self.import = Some(id.into());
        self
    }

    /// Use this version of the resource's provider package.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    pub fn transformation(mut self, f: impl Fn(&mut TransformArgs) + 'static) -> Self {
        self.transformations.push(Rc::new(f));
        self
    }
}

/// What kind of declaration.
enum Kind {
    Custom,
    Component,
    Remote,
    Read(Output<String>),
}

/// Declares a custom resource managed by its package's provider.
pub fn custom(resource_type: &str, name: &str, args: Args, options: ResourceOptions) -> Resource {
    declare(Kind::Custom, resource_type, name, args, options)
}

/// Declares a local component resource; declare its children with it as `parent`, then call
/// [`Resource::register_outputs`].
pub fn component(resource_type: &str, name: &str, options: ResourceOptions) -> Resource {
    declare(Kind::Component, resource_type, name, Args::new(), options)
}

/// Declares a component built by its provider (`construct`).
pub fn remote_component(
    resource_type: &str,
    name: &str,
    args: Args,
    options: ResourceOptions,
) -> Resource {
    declare(Kind::Remote, resource_type, name, args, options)
}

/// Declares an explicit provider of `package`, configured by `args`.
pub fn provider(
    package: &str,
    name: &str,
    args: Args,
    options: ResourceOptions,
) -> ProviderResource {
    let resource = declare(
        Kind::Custom,
        &format!("pulumi:providers:{package}"),
        name,
        args,
        options,
    );
    ProviderResource {
        resource,
        package: package.to_owned(),
    }
}

/// Reads an existing resource the stack does not manage (`get`).
pub fn read(
    resource_type: &str,
    name: &str,
    id: impl IntoInput<Value = String>,
    args: Args,
    options: ResourceOptions,
) -> Resource {
    declare(
        Kind::Read(id.into_input().into_output()),
        resource_type,
        name,
        args,
        options,
    )
}

/// Calls a provider function once `args` are known; unknown arguments (a preview) give an
/// unknown result.
pub fn invoke(token: &str, args: Args, provider: Option<&ProviderResource>) -> Output<PropertyMap> {
    let (out, resolver) = Output::pending();
    let keys: Vec<String> = args.map.keys().cloned().collect();
    let mut items: Vec<Output<Value>> = args.map.into_values().collect();
    let has_provider = provider.is_some();
    if let Some(p) = provider {
        items.push(p.reference().to_value());
    }
    let token = token.to_owned();
    when_all(items, move |mut settled| {
        let provider = if has_provider {
            settled.pop().and_then(|r| match r.known {
                Known::Value(Value::String(s)) => Some(s),
                _ => None,
            })
        } else {
            None
        };
        let deps = runtime::dependencies(&settled);
        if let Some(e) = first_failure(&settled) {
            return resolver.resolve(failed(e, deps));
        }
        if settled.iter().any(|r| matches!(r.known, Known::Unknown)) {
            return resolver.resolve(Resolved {
                known: Known::Unknown,
                secret: false,
                deps,
            });
        }
        let secret = settled.iter().any(|r| r.secret);
        let args: PropertyMap = keys
            .into_iter()
            .zip(settled)
            .filter_map(|(k, r)| property_value(r).ok().map(|v| (k, v)))
            .collect();
        let invoked = token.clone();
        send::invoke(&invoked, &args, provider, move |outcome| {
            resolver.resolve(match outcome {
                Outcome::Outputs(outputs) | Outcome::Resource { outputs, .. } => Resolved {
                    known: Known::Value(outputs),
                    secret,
                    deps,
                },
                Outcome::Failed(e) => {
                    let message = format!("invoking {token}: {e}");
                    runtime::record_error(&message);
                    failed(message.into(), deps)
                }
            })
        });
    });
    out
}

fn failed<T>(error: Rc<str>, deps: BTreeSet<String>) -> Resolved<T> {
    Resolved {
        known: Known::Failed(error),
        secret: false,
        deps,
    }
}

/// The resolvers of a declared resource's outputs.
struct Resolvers {
    urn: Resolver<String>,
    id: Resolver<String>,
    outputs: Resolver<PropertyMap>,
}

impl Resolvers {
    fn fail(self, error: Rc<str>) {
        self.urn.resolve(failed(error.clone(), BTreeSet::new()));
        self.id.resolve(failed(error.clone(), BTreeSet::new()));
        self.outputs.resolve(failed(error, BTreeSet::new()));
    }

    fn finish(self, dry_run: bool, outcome: Outcome, what: String) {
        match outcome {
            Outcome::Resource { urn, id, outputs } => {
                let deps: BTreeSet<String> = [urn.clone()].into();
                let known_id = match id {
                    Some(id) if !id.is_empty() => Known::Value(id),
                    _ if dry_run => Known::Unknown,
                    _ => Known::Value(String::new()),
                };
                self.id.resolve(Resolved {
                    known: known_id,
                    secret: false,
                    deps: deps.clone(),
                });
                self.outputs.resolve(Resolved {
                    known: Known::Value(outputs),
                    secret: false,
                    deps: deps.clone(),
                });
                self.urn.resolve(Resolved {
                    known: Known::Value(urn),
                    secret: false,
                    deps,
                });
            }
            Outcome::Outputs(_) => {
                self.fail(format!("{what}: the host answered with function outputs").into())
            }
            Outcome::Failed(e) => {
                let message = if e.contains(&what) {
                    e
                } else {
                    format!("{what}: {e}")
                };
                runtime::record_error(&message);
                self.fail(message.into());
            }
        }
    }
}

/// A string output as a value output, for joining with the inputs.
fn as_value(o: &Output<String>) -> Output<Value> {
    o.to_value()
}

fn string_of(r: &Resolved<Value>) -> Option<String> {
    match &r.known {
        Known::Value(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

fn declare(
    kind: Kind,
    resource_type: &str,
    name: &str,
    args: Args,
    options: ResourceOptions,
) -> Resource {
    // Transformations: the resource's own, then its ancestors' (nearest first), then the
    // stack's. Children inherit the first two.
    let mut inherited: Vec<Transformation> = options.transformations.clone();
    if let Some(parent) = &options.parent {
        inherited.extend(parent.transformations.iter().cloned());
    }
    let mut t = TransformArgs {
        resource_type: resource_type.to_owned(),
        name: name.to_owned(),
        args,
        options,
    };
    for f in inherited
        .iter()
        .chain(super::stack_transformations().iter())
    {
        f(&mut t);
    }
    let TransformArgs {
        resource_type,
        name,
        args,
        options,
    } = t;

    let (urn, urn_resolver) = Output::pending();
    let (id, id_resolver) = Output::pending();
    let (outputs, outputs_resolver) = Output::pending();
    let resolvers = Resolvers {
        urn: urn_resolver,
        id: id_resolver,
        outputs: outputs_resolver,
    };

    // Providers children inherit: the parent's, overridden by this resource's own.
    let mut providers: Vec<(String, Output<String>)> = options
        .parent
        .as_ref()
        .map(|p| p.providers.clone())
        .unwrap_or_default();
    for p in &options.providers {
        providers.retain(|(pkg, _)| pkg != p.package());
        providers.push((p.package().to_owned(), p.reference()));
    }
    let package = resource_type.strip_prefix("pulumi:providers:").map_or_else(
        || {
            resource_type
                .split(':')
                .next()
                .unwrap_or_default()
                .to_owned()
        },
        |_| String::new(),
    );
    // The provider: explicit, else one the parent passes down for this package.
    let provider: Option<Output<String>> = match &options.provider {
        Some(p) => Some(p.reference()),
        None => providers
            .iter()
            .find(|(pkg, _)| *pkg == package)
            .map(|(_, r)| r.clone()),
    };

    let resource = Resource {
        urn,
        id,
        outputs,
        resource_type: resource_type.clone(),
        name: name.clone(),
        transformations: inherited,
        providers: providers.clone(),
    };

    // Everything the request needs, in a fixed order after the inputs.
    let keys: Vec<String> = args.map.keys().cloned().collect();
    let mut items: Vec<Output<Value>> = args.map.into_values().collect();
    let inputs_len = items.len();
    let parent_at = options.parent.as_ref().map(|p| {
        items.push(as_value(&p.urn));
        items.len() - 1
    });
    let deleted_with_at = options.deleted_with.as_ref().map(|r| {
        items.push(as_value(&r.urn));
        items.len() - 1
    });
    let provider_at = provider.as_ref().map(|p| {
        items.push(as_value(p));
        items.len() - 1
    });
    let depends_from = items.len();
    items.extend(options.depends_on.iter().map(|r| as_value(&r.urn)));
    let providers_from = items.len();
    items.extend(providers.iter().map(|(_, r)| as_value(r)));
    let read_id_at = match &kind {
        Kind::Read(id) => {
            items.push(as_value(id));
            Some(items.len() - 1)
        }
        _ => None,
    };
    let dry_run = super::deployment().dry_run;
    let what = format!("{resource_type} {name}");

    when_all(items, move |settled| {
        if let Some(e) = first_failure(&settled) {
            return resolvers.fail(e);
        }
        let mut inputs = PropertyMap::new();
        let mut property_dependencies = Vec::new();
        for (key, r) in keys.iter().zip(&settled[..inputs_len]) {
            if !r.deps.is_empty() {
                property_dependencies.push((key.clone(), r.deps.iter().cloned().collect()));
            }
            if let Ok(v) = property_value(r.clone()) {
                inputs.insert(key.clone(), v);
            }
        }
        let parent = parent_at.and_then(|i| string_of(&settled[i]));
        let deleted_with = deleted_with_at.and_then(|i| string_of(&settled[i]));
        let provider = provider_at.and_then(|i| string_of(&settled[i]));
        let mut depends_on: Vec<String> = settled[depends_from..providers_from]
            .iter()
            .filter_map(string_of)
            .collect();
        depends_on.dedup();
        let provider_refs: Vec<(String, String)> = providers
            .iter()
            .zip(&settled[providers_from..providers_from + providers.len()])
            .filter_map(|((pkg, _), r)| string_of(r).map(|s| (pkg.clone(), s)))
            .collect();
        let request = Request {
            resource_type: resource_type.clone(),
            name: name.clone(),
            inputs,
            property_dependencies,
            parent,
            depends_on,
            deleted_with,
            provider,
            providers: provider_refs,
            options: &options,
        };
        let finish = move |outcome| resolvers.finish(dry_run, outcome, what);
        match (&kind, read_id_at) {
            (Kind::Read(_), Some(i)) => match string_of(&settled[i]) {
                Some(id) => send::read(&request, id, finish),
                None => finish(Outcome::Failed("the ID to read is not known".into())),
            },
            (Kind::Custom, _) => send::register(&request, true, false, finish),
            (Kind::Component, _) => send::register(&request, false, false, finish),
            (Kind::Remote, _) => send::register(&request, false, true, finish),
            (Kind::Read(_), None) => unreachable!("a read always has its ID item"),
        }
    });
    resource
}

/// A request ready for the host.
#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
struct Request<'a> {
    resource_type: String,
    name: String,
    inputs: PropertyMap,
    property_dependencies: Vec<(String, Vec<String>)>,
    parent: Option<String>,
    depends_on: Vec<String>,
    deleted_with: Option<String>,
    provider: Option<String>,
    providers: Vec<(String, String)>,
    options: &'a ResourceOptions,
}

#[cfg(target_family = "wasm")]
mod send {
    use super::{Outcome, PropertyMap, Request};
    use crate::bindings::cairn::deploy::types::PropertyDependencies;
    use crate::program::runtime::{self, host};

    fn dependencies(deps: &[(String, Vec<String>)]) -> Vec<PropertyDependencies> {
        deps.iter()
            .map(|(property, urns)| PropertyDependencies {
                property: property.clone(),
                urns: urns.clone(),
            })
            .collect()
    }

    fn options(r: &Request<'_>) -> host::ResourceOptions {
        let o = r.options;
        host::ResourceOptions {
            parent: r.parent.clone(),
            depends_on: r.depends_on.clone(),
            protect: o.protect,
            retain_on_delete: o.retain_on_delete,
            deleted_with: r.deleted_with.clone(),
            provider: r.provider.clone(),
            providers: r.providers.clone(),
            aliases: o
                .aliases
                .iter()
                .map(|a| host::Alias {
                    urn: a.urn.clone(),
                    name: a.name.clone(),
                    resource_type: a.resource_type.clone(),
                    parent_urn: a.parent_urn.clone(),
                    no_parent: a.no_parent,
                    stack: a.stack.clone(),
                    project: a.project.clone(),
                })
                .collect(),
            ignore_changes: o.ignore_changes.clone(),
            replace_on_changes: o.replace_on_changes.clone(),
            delete_before_replace: o.delete_before_replace,
            additional_secret_outputs: o.additional_secret_outputs.clone(),
            custom_timeouts: o.custom_timeouts.map(|t| host::CustomTimeouts {
                create: t.create,
                update: t.update,
                delete: t.delete,
            }),
            import_id: o.import.clone(),
            version: o.version.clone(),
        }
    }

    pub fn register(
        r: &Request<'_>,
        custom: bool,
        remote: bool,
        done: impl FnOnce(Outcome) + 'static,
    ) {
        let handle = host::register(&host::RegisterResourceRequest {
            resource_type: r.resource_type.clone(),
            name: r.name.clone(),
            custom,
            remote,
            inputs: host::encode(&r.inputs),
            property_dependencies: dependencies(&r.property_dependencies),
            options: options(r),
        });
        runtime::on_complete(handle, done);
    }

    pub fn read(r: &Request<'_>, id: String, done: impl FnOnce(Outcome) + 'static) {
        let handle = host::read(&host::ReadResourceRequest {
            resource_type: r.resource_type.clone(),
            name: r.name.clone(),
            id,
            parent: r.parent.clone(),
            properties: host::encode(&r.inputs),
            dependencies: r.depends_on.clone(),
            provider: r.provider.clone(),
            version: r.options.version.clone(),
            additional_secret_outputs: r.options.additional_secret_outputs.clone(),
        });
        runtime::on_complete(handle, done);
    }

    pub fn invoke(
        token: &str,
        args: &PropertyMap,
        provider: Option<String>,
        done: impl FnOnce(Outcome) + 'static,
    ) {
        let handle = host::invoke(token, args, provider, None);
        runtime::on_complete(handle, done);
    }

    pub fn outputs(urn: &str, outputs: &PropertyMap) -> Result<(), String> {
        host::register_outputs(urn, outputs)
    }
}

#[cfg(not(target_family = "wasm"))]
mod send {
    //! Native builds (unit tests): no host, so every request fails.
    use super::{Outcome, PropertyMap, Request};

    const NO_HOST: &str = "resources can only be declared in a program component";

    pub fn register(
        _: &Request<'_>,
        _custom: bool,
        _remote: bool,
        done: impl FnOnce(Outcome) + 'static,
    ) {
        done(Outcome::Failed(NO_HOST.into()));
    }

    pub fn read(_: &Request<'_>, _id: String, done: impl FnOnce(Outcome) + 'static) {
        done(Outcome::Failed(NO_HOST.into()));
    }

    pub fn invoke(
        _token: &str,
        _args: &PropertyMap,
        _provider: Option<String>,
        done: impl FnOnce(Outcome) + 'static,
    ) {
        done(Outcome::Failed(NO_HOST.into()));
    }

    pub fn outputs(_urn: &str, _outputs: &PropertyMap) -> Result<(), String> {
        Err(NO_HOST.into())
    }
}
