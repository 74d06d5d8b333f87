//! Who is calling the resource monitor — the program, or a provider building a component
//! (`construct`) or running one of its methods (`call`) — and how a provider's reach is
//! described: what it does through the engine stays inside its component's subtree.
//!
//! The checks of what such a provider registers (its subtree, the component it was asked
//! for, the built-in package, imports of IDs the stack manages elsewhere, providers it hands
//! on) read the plan; claiming old states and resolving providers check their part where they
//! happen ([`crate::deploy::plan`], [`crate::deploy::generator::providers`]).
//!
//! # Engine callbacks are scoped
//!
//! A provider's `construct` or `call` gets a monitor scoped to its component
//! (`deploy/monitor/scope.rs`): it registers the component exactly as the program asked (type,
//! name, parent, the program's aliases) and everything else with a parent inside the component's
//! subtree; it takes over old states only if their parent was in that subtree; it sets outputs only
//! of components in it; it uses only providers it registered, providers the program handed the
//! component, and default providers, and hands on (to a child or a nested component) only those; it
//! never uses the built-in `pulumi` package (stack references) except `pulumi:pulumi:getResource`,
//! which reads only resources in its subtree and those its caller handed it as references in its
//! inputs or arguments; it registers no stack transforms; it imports or reads by ID nothing the
//! stack manages outside the component. A violation fails the call naming the provider, the
//! component and the URN, even if the provider swallowed the error its callback got. The same
//! monitor serves wasm `construct`, gRPC `Construct` and Python/Node component providers, so one
//! check covers all three.
//!
//! # `getResource` is the engine's, and scoped
//!
//! Pulumi's built-in provider answers `pulumi:pulumi:getResource` from the states this deployment
//! produced; Cairn's monitor answers it from the plan (components and providers) and the journal
//! (`live_state`, O(1)), only for URNs whose registration or read completed, keeping secrets and
//! returning references whatever the SDK says it accepts (as Pulumi does). A provider acting for a
//! component may read what is in its component and what its caller handed it as references (a
//! nested component only what its provider may read itself), not what the states it reads refer to:
//! a provider can write references into the outputs of resources it manages.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::state::{ProviderReference, ResourceState, is_provider_type};
use crate::urn::{TypeToken, Urn};
use crate::value::{PropertyMap, PropertyValue};

use super::super::admission::describe_parent;
use super::super::engine::{Engine, err};
use super::super::program::{RegisterResourceRequest, ResourceOptions};
use super::super::provider::{NativePlugins, Provider, ProviderError, ProviderOrigin};
use super::MonitorError;

/// The party a monitor request comes from.
#[derive(Debug)]
pub(crate) enum Caller {
    /// The program: registers anywhere in the stack.
    Program,
    /// A provider acting for a component.
    Component(Box<ComponentScope>),
}

/// What a provider may touch while it builds a component or runs one of its methods.
#[derive(Debug)]
pub(crate) struct ComponentScope {
    /// `package@version` of the provider acting.
    pub provider: String,
    /// `construct` or `call`.
    pub method: &'static str,
    /// The component whose subtree the provider acts in; `None` for a `call` that names no
    /// component (`__self__`), which may register nothing.
    pub component: Option<Urn>,
    /// In `construct`: the registration of the component itself, which the provider makes once.
    pub root: Option<ExpectedRoot>,
    /// Provider references the program handed to the component (`provider`, `providers`).
    pub passed_providers: Vec<ProviderReference>,
    /// Which native plugins what the provider registers may resolve to.
    pub native: NativePlugins,
    /// Resources outside the component the provider may read (`pulumi:pulumi:getResource`):
    /// those its caller handed it as references in its inputs or arguments (and may read
    /// itself). Not those the states it reads refer to: a provider may have written them.
    pub readable: Mutex<HashSet<Urn>>,
    /// The violations refused so far: the call fails with the first even if the provider
    /// swallowed the error its callback got.
    pub violations: Mutex<Vec<String>>,
}

/// The component a `construct` must register: exactly what the program asked for.
#[derive(Debug, Clone)]
pub(crate) struct ExpectedRoot {
    pub resource_type: TypeToken,
    pub name: String,
    pub parent: Option<Urn>,
    /// The component's old URNs, from the aliases the program gave it.
    pub aliases: Vec<Urn>,
}

impl Caller {
    /// The native-plugin rule for this caller's requests, given the deployment's.
    pub fn native(&self, deployment: NativePlugins) -> NativePlugins {
        match self {
            Caller::Program => deployment,
            Caller::Component(scope) => scope.native.and(deployment),
        }
    }

    pub fn scope(&self) -> Option<&ComponentScope> {
        match self {
            Caller::Program => None,
            Caller::Component(scope) => Some(scope),
        }
    }
}

impl ComponentScope {
    /// Records a request that reaches outside the component and returns its error, which
    /// names the provider, the component and (in `detail`) the offending URN.
    pub fn violation(&self, detail: impl fmt::Display) -> String {
        let component = match &self.component {
            Some(urn) => urn.to_string(),
            None => "a call without a component".to_owned(),
        };
        let message = format!(
            "{} {} of {component} was refused: {detail}",
            self.provider, self.method
        );
        self.violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message.clone());
        message
    }

    /// Whether the provider may read `urn`'s state: it is in the component's subtree, or
    /// was handed to the provider.
    pub fn may_read(&self, engine: &Engine, urn: &Urn) -> bool {
        self.component
            .as_ref()
            .is_some_and(|component| engine.plan().in_subtree(urn, component))
            || self
                .readable
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(urn)
    }

    /// The first violation refused, if any.
    pub fn first_violation(&self) -> Option<String> {
        self.violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first()
            .cloned()
    }
}

impl Engine {
    /// Refuses what a provider acting for a component may not register: anything outside the
    /// component's subtree, a different component than the one asked for, resources of the
    /// built-in `pulumi` package (which read other stacks), imports of resources the stack
    /// already manages elsewhere, providers it may not hand on.
    pub fn check_in_scope(
        &self,
        scope: &ComponentScope,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let violation = |detail: String| Err(err(scope.violation(detail)));
        let Some(component) = &scope.component else {
            return violation(format!(
                "it registered {urn}, but a call that names no component may register nothing"
            ));
        };
        if urn == component
            && let Some(root) = &scope.root
        {
            return self.check_component_root(scope, root, urn, parent, request);
        }
        let inside = parent.is_some_and(|p| p != urn && self.plan().in_subtree(p, component));
        if !inside {
            return violation(format!(
                "it registered {urn} with parent {}, outside the component; what a provider registers for a component must have the component as its parent, directly or through resources it registered",
                describe_parent(parent)
            ));
        }
        if request.resource_type.package() == "pulumi" && !is_provider_type(&request.resource_type)
        {
            return violation(format!(
                "it registered {urn}, a resource of the built-in pulumi package, which only the program may use"
            ));
        }
        // Importing (or reading) by ID a resource the stack manages elsewhere would let the
        // provider act on it (an import is deleted with the component).
        if let Some(id) = &request.options.import_id
            && let Some(owner) =
                self.owner_of_id(request.resource_type.package(), id, urn, component)
        {
            return violation(format!(
                "it named ID {id:?} for {urn}, the ID of {owner}, which the stack manages outside the component"
            ));
        }
        self.check_handed_providers(scope, urn, &request.options)
    }

    /// The component a construct registers must be exactly what the program asked for, with
    /// no aliases the program did not give it.
    fn check_component_root(
        &self,
        scope: &ComponentScope,
        root: &ExpectedRoot,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let violation = |detail: String| Err(err(scope.violation(detail)));
        if request.custom
            || request.remote
            || request.resource_type != root.resource_type
            || request.name != root.name
            || parent != root.parent.as_ref()
        {
            return violation(format!(
                "it registered {urn} differently from the component the program asked for (a {} with parent {})",
                root.resource_type,
                describe_parent(root.parent.as_ref())
            ));
        }
        let aliases = self.alias_urns(
            urn,
            parent,
            &request.resource_type,
            &request.name,
            &request.options.aliases,
        )?;
        if let Some(extra) = aliases.iter().find(|a| !root.aliases.contains(a)) {
            return violation(format!(
                "it gave the component {urn} the alias {extra}, which the program did not"
            ));
        }
        Ok(())
    }

    /// Provider references a provider hands on (to a child, or to a nested component as that
    /// component's providers) must be ones it may use itself.
    fn check_handed_providers(
        &self,
        scope: &ComponentScope,
        urn: &Urn,
        options: &ResourceOptions,
    ) -> Result<(), MonitorError> {
        let handed = options.provider.iter().chain(options.providers.values());
        for text in handed {
            if let Ok(reference) = ProviderReference::parse(text)
                && !scope.passed_providers.contains(&reference)
                && !self.may_use_provider(scope, &reference.urn)
            {
                return Err(err(scope.violation(format!(
                    "it gave {urn} provider {reference}, which is neither its own, nor handed to the component, nor a default provider"
                ))));
            }
        }
        Ok(())
    }

    /// A resource of `package` with ID `id` outside `component`'s subtree, in the old state or
    /// recorded in this deployment, other than `urn`'s own old state. (Scoped imports are rare;
    /// building the current snapshot for one costs less than indexing every ID for all.)
    fn owner_of_id(&self, package: &str, id: &str, urn: &Urn, component: &Urn) -> Option<Urn> {
        let current = self.journal.current();
        let plan = self.plan();
        let managed = |r: &&ResourceState| {
            r.custom
                && !r.delete
                && &r.urn != urn
                && r.resource_type.package() == package
                && r.id.as_deref() == Some(id)
        };
        let outside = |r: &ResourceState| {
            !plan.in_subtree(&r.urn, component)
                && !r
                    .parent
                    .as_ref()
                    .is_some_and(|p| plan.was_in_subtree(p, component))
        };
        self.base()
            .resources
            .iter()
            .chain(current.resources.iter())
            .filter(managed)
            .find(|r| outside(r))
            .map(|r| r.urn.clone())
    }

    /// The scope of a provider acting for `component` in `method`: providers the program handed
    /// over with `options`, resources it handed over as references in `handed` (the inputs or
    /// arguments), and the native-plugin rule (a sandboxed provider's registrations reach only
    /// wasm providers and plugins the project names).
    #[allow(clippy::too_many_arguments)]
    pub fn component_scope(
        &self,
        provider: &Arc<dyn Provider>,
        method: &'static str,
        component: Option<Urn>,
        root: Option<ExpectedRoot>,
        options: &ResourceOptions,
        handed: &PropertyMap,
        caller: &Caller,
    ) -> Box<ComponentScope> {
        let passed_providers = options
            .provider
            .iter()
            .chain(options.providers.values())
            .filter_map(|text| ProviderReference::parse(text).ok())
            .collect();
        let own = match provider.origin() {
            ProviderOrigin::Sandboxed => NativePlugins::ProjectNamed,
            _ => NativePlugins::Any,
        };
        let scope = Box::new(ComponentScope {
            provider: provider.describe(),
            method,
            component,
            root,
            passed_providers,
            native: own.and(caller.native(self.options.native_plugins)),
            readable: Default::default(),
            violations: Default::default(),
        });
        let mut handed_urns = HashSet::new();
        for value in handed.values() {
            references(value, &mut handed_urns);
        }
        // A provider acting for a component hands on only what it may read itself.
        if let Some(outer) = caller.scope() {
            handed_urns.retain(|urn| outer.may_read(self, urn));
        }
        *scope
            .readable
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = handed_urns;
        scope
    }
}

/// The outcome of a provider's `construct` or `call`: its first scope violation if it had one
/// (even if it swallowed the error its callback got), else its own result; `what` says what
/// failed ("constructing <urn>").
pub(crate) fn scoped_result<T>(
    caller: &Caller,
    result: Result<T, ProviderError>,
    what: impl FnOnce() -> String,
) -> Result<T, MonitorError> {
    if let Some(violation) = caller.scope().and_then(ComponentScope::first_violation) {
        return Err(err(format!("{} failed: {violation}", what())));
    }
    result.map_err(|e| err(format!("{} failed: {e}", what())))
}

/// Adds the URNs of the resource references in `value` to `urns`.
fn references(value: &PropertyValue, urns: &mut HashSet<Urn>) {
    match value {
        PropertyValue::ResourceReference(reference) => {
            urns.insert(reference.urn.clone());
        }
        PropertyValue::Array(items) => items.iter().for_each(|v| references(v, urns)),
        PropertyValue::Object(map) => map.values().for_each(|v| references(v, urns)),
        PropertyValue::Secret(inner) => references(inner, urns),
        PropertyValue::Output(output) => {
            if let Some(inner) = &output.value {
                references(inner, urns);
            }
        }
        _ => {}
    }
}
