//! Provider resolution: which configured provider manages a resource (explicit, by package,
//! or the default provider for its package and version), the registration of provider
//! resources themselves (`check_config`, `diff_config`, `configure`), and the providers of
//! resources recorded in the old state.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::state::{ProviderReference, ResourceState, UNKNOWN_ID};
use crate::urn::{TypeToken, Urn};
use crate::value::{PropertyMap, PropertyValue};

use super::super::admission::native_refusal;
use super::super::analyzer::AnalyzedResource;
use super::super::engine::{Engine, err};
use super::super::events::StepOp;
use super::super::generator::diff::{Decision, DiffFacts, decide, diff_properties};
use super::super::journal::Mutation;
use super::super::monitor::MonitorError;
use super::super::monitor::scope::{Caller, ComponentScope};
use super::super::program::{RegisterResourceRequest, RegisterResourceResponse, ResourceOptions};
use super::super::provider::{CheckRequest, DiffRequest, NativePlugins, Provider, provider_type};
use super::super::registry::{DOWNLOAD_URL_INPUT, download_url_input, version_input};
use super::super::steps::replace::ReplaceStep;
use super::super::steps::{now, step_state};
use super::identity::Claimed;

/// A provider resource to register: its URN and type (`pulumi:providers:<package>`), parent,
/// configuration and options.
pub(crate) struct ProviderRegistration {
    pub urn: Urn,
    pub resource_type: TypeToken,
    pub parent: Option<Urn>,
    pub inputs: PropertyMap,
    pub options: ResourceOptions,
}

impl Engine {
    /// The provider reference and configured instance for a resource of `package`: the
    /// explicit one, else the one `providers` names for the package, else the default. A
    /// provider acting for a component may use only providers it registered itself, those the
    /// program handed to the component, and default providers; and no caller reaches a native
    /// plugin its rule does not allow.
    pub async fn resolve_provider(
        self: &Arc<Self>,
        explicit: Option<&str>,
        providers: &IndexMap<String, String>,
        package: &str,
        version: Option<&str>,
        download_url: Option<&str>,
        caller: &Caller,
    ) -> Result<(ProviderReference, Arc<dyn Provider>), MonitorError> {
        let native = caller.native(self.options.native_plugins);
        let explicit = explicit.or_else(|| providers.get(package).map(String::as_str));
        let reference = match explicit {
            Some(text) => ProviderReference::parse(text).map_err(|e| err(e.to_string()))?,
            None => {
                self.default_provider(package, version, download_url, native)
                    .await?
            }
        };
        // Compared in place (every registration passes here); the token is built to explain.
        let manages_package = reference
            .urn
            .resource_type()
            .strip_prefix("pulumi:providers:")
            == Some(package);
        if !manages_package {
            let expected = provider_type(package).map_err(|e| err(e.to_string()))?;
            return Err(err(format!(
                "provider {reference} cannot manage package {package:?}: a resource of {package:?} needs a provider of type {expected}"
            )));
        }
        let provider = self.providers.registered(&reference).ok_or_else(|| {
            err(format!(
                "provider {reference} is not registered in this deployment; register the provider resource before the resources that use it"
            ))
        })?;
        let passed = match caller.scope() {
            Some(scope) => {
                let passed = scope.passed_providers.contains(&reference);
                if !passed && !self.may_use_provider(scope, &reference.urn) {
                    return Err(err(scope.violation(format_args!(
                        "it used provider {reference}, which is neither its own, nor handed to the component, nor a default provider"
                    ))));
                }
                passed
            }
            None => false,
        };
        if !passed && !native.allows(provider.origin()) {
            return Err(err(native_refusal(package, caller)));
        }
        Ok((reference, provider))
    }

    /// The provider a registration names through its options (`provider`, `providers`,
    /// `version`), resolved as [`Engine::resolve_provider`] does.
    pub async fn provider_of(
        self: &Arc<Self>,
        request: &RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<(ProviderReference, Arc<dyn Provider>), MonitorError> {
        let options = &request.options;
        self.resolve_provider(
            options.provider.as_deref(),
            &options.providers,
            request.resource_type.package(),
            options.version.as_deref(),
            options.plugin_download_url.as_deref(),
            caller,
        )
        .await
    }

    /// Whether a provider acting for a component may use the provider resource `urn`: one it
    /// registered in the component's subtree, or a default provider.
    pub fn may_use_provider(&self, scope: &ComponentScope, urn: &Urn) -> bool {
        let plan = self.plan();
        plan.default_providers.contains(urn)
            || scope
                .component
                .as_ref()
                .is_some_and(|component| plan.in_subtree(urn, component))
    }

    /// The default provider for `(package, version)`, registering it on first use (with the
    /// native-plugin rule of the first caller that needs it; later callers check the provider
    /// they get against their own rule).
    async fn default_provider(
        self: &Arc<Self>,
        package: &str,
        version: Option<&str>,
        download_url: Option<&str>,
        native: NativePlugins,
    ) -> Result<ProviderReference, MonitorError> {
        let cell = {
            let mut defaults = super::super::engine::lock(&self.defaults);
            // Every registration asks: found without building a key (a stack has a few).
            let found = defaults.iter().find_map(|((p, v, u), cell)| {
                (p == package && v.as_deref() == version && u.as_deref() == download_url)
                    .then(|| cell.clone())
            });
            match found {
                Some(cell) => cell,
                None => defaults
                    .entry((
                        package.to_owned(),
                        version.map(str::to_owned),
                        download_url.map(str::to_owned),
                    ))
                    .or_default()
                    .clone(),
            }
        };
        cell.get_or_init(|| async {
            let response = self
                .register_default_provider(package, version, download_url, native)
                .await
                .map_err(|e| e.message)?;
            let reference = format!("{}::{}", response.urn, response.id.unwrap_or_default());
            ProviderReference::parse(&reference).map_err(|e| e.to_string())
        })
        .await
        .clone()
        .map_err(err)
    }

    /// Registers the default provider of `(package, version)`: named `default` (or
    /// `default_<version>`), configured from the stack's `<package>:*` config.
    async fn register_default_provider(
        self: &Arc<Self>,
        package: &str,
        version: Option<&str>,
        download_url: Option<&str>,
        native: NativePlugins,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let name = match version {
            Some(v) => format!("default_{}", v.replace(['.', '-', '+'], "_")),
            None => "default".to_owned(),
        };
        let mut inputs = PropertyMap::new();
        let prefix = format!("{package}:");
        // The SDKs' dynamic providers run the program's own code, which may read any key: as
        // Pulumi does, they get the whole configuration, keys with their namespaces.
        let dynamic = matches!(package, "pulumi-nodejs" | "pulumi-python");
        for (key, value) in &self.options.config {
            if dynamic {
                inputs.insert(key.clone(), value.clone());
            } else if let Some(name) = key.strip_prefix(&prefix) {
                inputs.insert(name.to_owned(), value.clone());
            }
        }
        if let Some(v) = version {
            inputs.insert("version".into(), PropertyValue::String(v.to_owned()));
        }
        if let Some(url) = download_url {
            inputs.insert(
                DOWNLOAD_URL_INPUT.into(),
                PropertyValue::String(url.to_owned()),
            );
        }
        let resource_type = provider_type(package).map_err(|e| err(e.to_string()))?;
        let urn = self.urn_for(None, &resource_type, &name)?;
        self.plan().default_providers.insert(urn.clone());
        let registration = ProviderRegistration {
            urn,
            resource_type,
            parent: None,
            inputs,
            options: ResourceOptions::default(),
        };
        self.register_provider(registration, native, &Caller::Program)
            .await
    }

    /// Registers a provider resource (`pulumi:providers:<package>`): `check_config`,
    /// `diff_config` against its old state, then `configure` as its step.
    pub async fn register_provider(
        self: &Arc<Self>,
        registration: ProviderRegistration,
        native: NativePlugins,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.ensure_running()?;
        let ProviderRegistration {
            urn,
            resource_type,
            parent,
            inputs,
            options,
        } = registration;
        let old = self.claim_with_aliases(
            &urn,
            parent.as_ref(),
            &resource_type,
            urn.name(),
            &options.aliases,
            caller,
        )?;
        let provider = self
            .load_provider(&urn, &resource_type, &inputs, native, caller)
            .await?;
        let no_olds = PropertyMap::new();
        let olds = old.as_ref().map_or(&no_olds, |(_, o)| &o.inputs);
        let checked = self
            .call_check(
                &urn,
                &inputs,
                provider.check_config(CheckRequest {
                    urn: &urn,
                    olds,
                    news: &inputs,
                    random_seed: &[],
                }),
            )
            .await?;

        let mut state = ResourceState::new(urn.clone(), resource_type, true);
        state.parent = parent;
        state.inputs = checked.clone();
        state.outputs = checked.clone();
        state.protect = options.protect;
        state.aliases = old
            .as_ref()
            .filter(|(_, o)| o.urn != urn)
            .map(|(_, o)| vec![o.urn.clone()])
            .unwrap_or_default();
        if !self.options.analyzers.is_empty() {
            // Providers are analyzed, not remediated: their inputs configure the plugin
            // already loaded.
            let resource = AnalyzedResource {
                state: &state,
                properties: &state.inputs,
                delete_before_replace: options.delete_before_replace,
                provider: None,
            };
            self.analyze(&resource).await?;
        }
        let configuring = self.configuring();
        let (op, mutations, id) = if configuring {
            self.reconfiguration(&old, &checked)
        } else {
            self.provider_decision(&urn, &*provider, &old, &checked)
                .await?
        };
        state.id = Some(id.clone());
        // Timestamps as Pulumi keeps them for any resource: a created (or replacing) provider
        // is created and modified now, an updated one modified now, an unchanged one keeps
        // both.
        match old.map(|(_, o)| o).filter(|_| op != StepOp::Replace) {
            Some(kept) => {
                state.created = kept.created.clone();
                state.modified = match op {
                    StepOp::Update => Some(now()),
                    _ => kept.modified.clone(),
                };
            }
            None => {
                let created = now();
                state.modified = Some(created.clone());
                state.created = Some(created);
            }
        }
        self.configure(op, &state, old.map(|(_, o)| o), &provider)
            .await?;
        // Recorded before it can be used, so no resource refers to a provider the state lacks.
        let mut all = Vec::new();
        if !configuring {
            all.push(Mutation::Append(state.clone()));
        }
        all.extend(mutations);
        self.apply(all)?;
        let reference = ProviderReference {
            urn: urn.clone(),
            id: id.clone(),
        };
        // Taken over under a new URN (an alias) and kept: what the old state records under the
        // old reference is managed by this instance.
        if let Some((_, old)) = old.as_ref().filter(|(_, o)| o.urn != urn)
            && old.id.as_deref() == Some(id.as_str())
        {
            let renamed_from = ProviderReference {
                urn: old.urn.clone(),
                id: id.clone(),
            };
            self.providers.insert(&renamed_from, provider.clone());
        }
        self.providers.insert(&reference, provider);
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: Some(id),
            outputs: checked,
            property_dependencies: Default::default(),
        })
    }

    /// Loads (starts) the provider a provider resource names, at the version its inputs ask
    /// for, under the caller's native-plugin rule.
    async fn load_provider(
        &self,
        urn: &Urn,
        resource_type: &TypeToken,
        inputs: &PropertyMap,
        native: NativePlugins,
        caller: &Caller,
    ) -> Result<Arc<dyn Provider>, MonitorError> {
        let package = resource_type.name();
        let version = version_input(inputs);
        let download_url = download_url_input(inputs);
        let loader = self.providers.loader().clone();
        let provider = loader
            .load_from(package, version.as_ref(), download_url.as_deref(), native)
            .await
            .map_err(|e| err(format!("{urn}: {e}")))?;
        if !native.allows(provider.origin()) {
            // A loader must not start what the rule forbids; this catches one that did.
            return Err(err(format!("{urn}: {}", native_refusal(package, caller))));
        }
        Ok(provider)
    }

    /// What registering a provider does with its old state (per its `diff_config`): keep it
    /// (`same`/`update`: the old copy goes, the ID stays) or replace it (a new ID; the old copy
    /// is marked for deletion once the program has finished). Returns the step, its effects on
    /// the base, and the provider's ID.
    async fn provider_decision(
        &self,
        urn: &Urn,
        provider: &dyn Provider,
        old: &Claimed<'_>,
        checked: &PropertyMap,
    ) -> Result<(StepOp, Vec<Mutation>, String), MonitorError> {
        let Some((i, old)) = old else {
            return Ok((StepOp::Create, vec![], self.new_id()));
        };
        let diff = provider
            .diff_config(DiffRequest {
                urn,
                id: old.id.as_deref().unwrap_or_default(),
                old_inputs: &old.inputs,
                old_outputs: &old.outputs,
                news: checked,
                ignore_changes: &[],
            })
            .await
            .map_err(|e| err(format!("{urn}: DiffConfig failed: {e}")))?;
        let decision = decide(&DiffFacts {
            diff: Some(&diff),
            old_inputs: Some(&old.inputs),
            new_inputs: Some(checked),
            ..DiffFacts::default()
        });
        Ok(match decision {
            Decision::Same | Decision::Update => {
                let op = if decision == Decision::Same {
                    StepOp::Same
                } else {
                    StepOp::Update
                };
                let id = old.id.clone().unwrap_or_default();
                (op, vec![Mutation::RemoveBase(*i)], id)
            }
            Decision::Replace { .. } => {
                let mut doomed = ResourceState::clone(old);
                doomed.delete = true;
                self.plan().pending_deletes.push(*i);
                (
                    StepOp::Replace,
                    vec![Mutation::ReplaceBase(*i, doomed)],
                    self.new_id(),
                )
            }
        })
    }

    /// What registering a provider does while the program only configures (`refresh
    /// --run-program`, `destroy --run-program`): its old state keeps its place and its ID and
    /// takes the new configuration, so the refresh or destroy that follows uses it; nothing is
    /// replaced, and a provider the state lacks is configured for this run without being
    /// recorded (shown as unchanged: nothing is created).
    fn reconfiguration(
        &self,
        old: &Claimed<'_>,
        checked: &PropertyMap,
    ) -> (StepOp, Vec<Mutation>, String) {
        let Some((i, old)) = old else {
            return (StepOp::Same, vec![], self.new_id());
        };
        let id = old.id.clone().unwrap_or_default();
        if &old.inputs == checked {
            return (StepOp::Same, vec![], id);
        }
        let mut reconfigured = ResourceState::clone(old);
        reconfigured.inputs = checked.clone();
        reconfigured.outputs = checked.clone();
        (
            StepOp::Update,
            vec![Mutation::ReplaceBase(*i, reconfigured)],
            id,
        )
    }

    /// The step of a provider resource: `configure` with its checked config. A replaced
    /// provider follows the custom-resource lifecycle: the replacement is created (configured)
    /// first, the logical replace is reported, and the old copy is deleted once the program
    /// has finished.
    async fn configure(
        &self,
        op: StepOp,
        state: &ResourceState,
        old: Option<&ResourceState>,
        provider: &Arc<dyn Provider>,
    ) -> Result<(), MonitorError> {
        let replaced = op == StepOp::Replace;
        let configure_op = if replaced {
            StepOp::CreateReplacement
        } else {
            op
        };
        let mut info = self.step_info(configure_op, state);
        info.old = old.map(step_state);
        info.new = Some(step_state(state));
        if let Some(old) = old {
            info.changes = diff_properties(&old.inputs, &state.inputs);
        }
        let changes = info.changes.clone();
        let preview = self.preview();
        let config = state.inputs.clone();
        self.run_step(info, !replaced, async move {
            self.provider_operation(provider.configure(config, preview))
                .await?
                .map_err(|e| format!("configuring the provider failed: {e}").into())
        })
        .await?;
        if let (true, Some(old)) = (replaced, old) {
            ReplaceStep::new(self, old, state, changes, vec![])
                .apply(self)
                .await?;
        }
        Ok(())
    }

    /// A fresh ID for a created provider; unknown in a preview.
    fn new_id(&self) -> String {
        if self.preview() {
            UNKNOWN_ID.to_owned()
        } else {
            uuid::Uuid::new_v4().to_string()
        }
    }

    /// The configured provider managing an old resource (None for components and providers).
    pub async fn provider_for_old(
        &self,
        resource: &ResourceState,
    ) -> Result<Option<Arc<dyn Provider>>, String> {
        if !resource.custom || resource.is_provider() {
            return Ok(None);
        }
        let Some(reference) = &resource.provider else {
            return Err(format!("{} records no provider", resource.urn));
        };
        if let Some(provider) = self.providers.registered(reference) {
            return Ok(Some(provider));
        }
        let provider_state = self
            .base()
            .resources
            .iter()
            .find(|r| r.urn == reference.urn && r.id.as_deref() == Some(reference.id.as_str()));
        self.providers
            .recorded(reference, provider_state, self.options.native_plugins)
            .await
            .map(Some)
    }

    /// Whether `old_ref` and `new_ref` name the same provider: equal, or the provider was
    /// taken over under a new URN (an alias) in this deployment and kept its ID.
    pub fn same_provider(&self, old_ref: &ProviderReference, new_ref: &ProviderReference) -> bool {
        old_ref == new_ref
            || (old_ref.id == new_ref.id
                && self.plan().renamed.get(&old_ref.urn) == Some(&new_ref.urn))
    }

    /// Whether a resource may move from its old provider to `new_ref` without replacement:
    /// only between default providers of one package, when the new one's `diff_config`
    /// against the old one's config asks for no replacement.
    pub async fn default_provider_can_adopt(
        &self,
        old_ref: &ProviderReference,
        new_ref: &ProviderReference,
        new_provider: &Arc<dyn Provider>,
    ) -> bool {
        let is_default = |r: &ProviderReference| r.urn.name().starts_with("default");
        if !is_default(old_ref)
            || !is_default(new_ref)
            || old_ref.urn.resource_type() != new_ref.urn.resource_type()
        {
            return false;
        }
        let Some(old_provider) = self.live_base_state(&old_ref.urn) else {
            return false;
        };
        let Some(new_state) = self.state_of(&new_ref.urn) else {
            return false;
        };
        match new_provider
            .diff_config(DiffRequest {
                urn: &new_ref.urn,
                id: &new_ref.id,
                old_inputs: &old_provider.inputs,
                old_outputs: &old_provider.outputs,
                news: &new_state.inputs,
                ignore_changes: &[],
            })
            .await
        {
            Ok(diff) => !decide(&DiffFacts {
                diff: Some(&diff),
                old_inputs: Some(&old_provider.inputs),
                new_inputs: Some(&new_state.inputs),
                ..DiffFacts::default()
            })
            .is_replace(),
            Err(_) => false,
        }
    }

    /// The live copy of `urn` in the base snapshot.
    fn live_base_state(&self, urn: &Urn) -> Option<ResourceState> {
        self.base()
            .resources
            .iter()
            .find(|r| &r.urn == urn && !r.delete)
            .cloned()
    }
}
