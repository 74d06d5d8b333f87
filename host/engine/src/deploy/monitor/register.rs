//! The monitor's registration entry points: `RegisterResource` (dispatched to the flow for
//! the root stack, providers, remote components, components and custom resources, after the
//! request is admitted), `RegisterResourceOutputs`, and the root stack resource.

use std::sync::Arc;

use crate::state::{ProviderReference, ResourceState, is_provider_type};
use crate::urn::{ROOT_STACK_TYPE, TypeToken, Urn};
use crate::value::{PropertyMap, PropertyValue};

use super::super::admission::check_request;
use super::super::engine::{Engine, err, lock};
use super::super::events::{EngineEvent, Severity};
use super::super::generator::providers::ProviderRegistration;
use super::super::journal::Mutation;
use super::super::program::{Alias, RegisterResourceRequest, RegisterResourceResponse};
use super::super::provider::{NativePlugins, provider_type};
use super::scope::Caller;
use super::{MonitorError, Unregistered};

/// Whether a registration waits at the engine's gate ([`Engine::gate`]) before it is handled.
/// Providers and remote components do not: they register on behalf of (and while) other
/// registrations hold the gate, and Construct registers children through it. Neither does the
/// root stack, which SDKs register themselves and the engine answers at once.
pub(crate) fn waits_at_gate(request: &RegisterResourceRequest) -> bool {
    !request.remote
        && !is_provider_type(&request.resource_type)
        && request.resource_type.as_str() != ROOT_STACK_TYPE
}

impl Engine {
    /// Registers the stack's root resource (a component with no provider).
    pub async fn register_root(self: &Arc<Self>) -> Result<(), MonitorError> {
        let root_type = TypeToken::parse(ROOT_STACK_TYPE).map_err(|e| err(e.to_string()))?;
        let urn = self.root_urn.clone();
        let name = urn.name().to_owned();
        self.register_component(
            urn,
            None,
            RegisterResourceRequest::component(root_type, name),
            &Caller::Program,
        )
        .await
        .map(|_| ())
    }

    /// Records the stack's root as the state has it (or a new one), without changing the
    /// state: what the program registers under it is admitted while the program only
    /// configures (`refresh --run-program`, `destroy --run-program`).
    pub fn record_root(&self) {
        let recorded = self.plan().live.get(&self.root_urn).copied();
        let state = match recorded {
            Some(i) => self.old_state(i).clone(),
            None => match TypeToken::parse(ROOT_STACK_TYPE) {
                Ok(root_type) => ResourceState::new(self.root_urn.clone(), root_type, false),
                Err(_) => return,
            },
        };
        self.record(&state);
    }

    /// Sets a component's (or the stack's) outputs. A provider acting for a component may set
    /// only the outputs of components in its subtree.
    pub fn register_outputs(
        &self,
        urn: &Urn,
        outputs: PropertyMap,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        crate::limits::check_properties(&outputs)
            .map_err(|e| err(format!("registering the outputs of {urn}: {e}")))?;
        if self.configuring() {
            // Components keep their recorded state while the program only configures.
            return Ok(());
        }
        let mut plan = self.plan();
        if let Some(scope) = caller.scope() {
            let inside = scope
                .component
                .as_ref()
                .is_some_and(|component| plan.in_subtree(urn, component));
            if !inside {
                return Err(err(scope.violation(format_args!(
                    "it set the outputs of {urn}, which is outside the component"
                ))));
            }
        }
        let Some(state) = plan.states.get_mut(urn).filter(|s| !s.custom) else {
            return Err(err(format!(
                "cannot register outputs for {urn}: it is not a component registered in this deployment"
            )));
        };
        state.outputs = outputs.clone();
        let updated = state.clone();
        drop(plan);
        self.apply(vec![Mutation::ReplaceAppended(urn.clone(), updated)])?;
        self.emit(EngineEvent::Outputs {
            urn: urn.clone(),
            outputs,
        });
        Ok(())
    }

    /// After an update that failed: stack outputs the program did not export again keep their
    /// previous values (the absence of an output cannot be taken for its deletion), those it
    /// did export take the new ones, as in Pulumi.
    pub fn keep_previous_stack_outputs(&self) {
        let Some(&index) = self.plan().live.get(&self.root_urn) else {
            return;
        };
        let previous = &self.old_state(index).outputs;
        let merged = {
            let mut plan = self.plan();
            let Some(state) = plan.states.get_mut(&self.root_urn) else {
                return;
            };
            let mut merged = previous.clone();
            merged.extend(state.outputs.clone());
            if merged == state.outputs {
                return;
            }
            state.outputs = merged.clone();
            state.clone()
        };
        let outputs = merged.outputs.clone();
        if let Err(e) = self.apply(vec![Mutation::ReplaceAppended(
            self.root_urn.clone(),
            merged,
        )]) {
            self.warn(
                Some(&self.root_urn),
                format!("the stack outputs could not be kept: {e}"),
            );
            return;
        }
        self.emit(EngineEvent::Outputs {
            urn: self.root_urn.clone(),
            outputs,
        });
    }

    /// `RegisterResource`: admits the request (limits, scope, references), then runs the flow
    /// for what it registers — or, under `--continue-on-error`, skips it when something it
    /// depends on failed.
    pub async fn register_resource(
        self: &Arc<Self>,
        mut request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.ensure_running()?;
        if request.resource_type.as_str() == ROOT_STACK_TYPE {
            // SDKs register the root themselves; the engine already has.
            return Ok(RegisterResourceResponse {
                urn: self.root_urn.clone(),
                id: None,
                outputs: PropertyMap::new(),
                property_dependencies: Default::default(),
            });
        }
        // A provider manages it: its type must name the package (a component's may be anything).
        if request.custom || request.remote {
            request.resource_type.check_member().map_err(|e| {
                err(format!(
                    "registering {:?}: {e}",
                    crate::text::visible_line(&request.name)
                ))
            })?;
        }
        let is_provider = is_provider_type(&request.resource_type);
        if is_provider {
            check_provider_package(&request)?;
        }
        let parent = match (&request.parent, caller.scope()) {
            (Some(parent), _) => Some(parent.clone()),
            // What a provider registers for a component belongs to the component; a missing
            // parent is refused by the scope check rather than defaulted to the stack.
            (None, Some(_)) => None,
            (None, None) if is_provider => None,
            (None, None) => Some(self.root_urn.clone()),
        };
        check_request(&request)?;
        let urn = self.urn_for(parent.as_ref(), &request.resource_type, &request.name)?;
        let urn = self.plan().shared_urn(urn);
        // The program's transforms run first; what they answer is admitted like the request.
        let (own_transforms, transformed) = self
            .apply_transforms(&urn, parent.as_ref(), &mut request, caller)
            .await?;
        if transformed {
            check_request(&request)?;
        }
        self.fill_asset_hashes(&mut request, caller)?;
        if let Some(scope) = caller.scope() {
            self.check_in_scope(scope, &urn, parent.as_ref(), &request)?;
        }
        // Before the references are checked: a failed resource never completes, and what
        // refers to it is skipped rather than refused.
        if let Some(dependency) = self.continued_dependency(parent.as_ref(), &request) {
            return self.skip(&urn, parent.as_ref(), &request, caller, &dependency);
        }
        self.check_references(&urn, parent.as_ref(), &request)?;
        self.remember_transforms(&urn, own_transforms);
        if self.configuring() && !request.remote && !is_provider {
            return Box::pin(self.register_kept(urn, parent, request, caller)).await;
        }
        let dependencies = all_dependencies(&request);
        if request.remote {
            return Box::pin(self.construct(urn, parent, request, caller)).await;
        }
        if is_provider {
            let native = caller.native(self.options.native_plugins);
            let registration = ProviderRegistration {
                urn,
                resource_type: request.resource_type,
                parent,
                inputs: request.inputs,
                options: request.options,
            };
            return Box::pin(self.register_provider(registration, native, caller)).await;
        }
        if !request.custom {
            if let Some(root) = caller.scope().and_then(|s| s.root.as_ref())
                && caller.scope().and_then(|s| s.component.as_ref()) == Some(&urn)
            {
                // The component a construct registers keeps the identities the program gave
                // it (checked above to include any the provider sent).
                request.options.aliases = root.aliases.iter().cloned().map(Alias::Urn).collect();
            }
            return Box::pin(self.register_component(urn, parent, request, caller)).await;
        }
        Box::pin(self.register_custom(urn, parent, dependencies, request, caller)).await
    }

    /// `refresh --run-program`, `destroy --run-program`: a component or custom resource the
    /// program registers keeps its recorded state as it is (the refresh then reads it, the
    /// destroy deletes it), and one the state lacks is not created. A custom resource still
    /// resolves its provider, so its default provider takes the program's configuration.
    async fn register_kept(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let old = self
            .claim_with_aliases(
                &urn,
                parent.as_ref(),
                &request.resource_type,
                &request.name,
                &request.options.aliases,
                caller,
            )?
            .map(|(_, old)| old.clone());
        if request.custom {
            self.provider_of(&request, caller).await?;
        }
        let (state, outputs) = match old {
            Some(old) => {
                let outputs = old.outputs.clone();
                (old, outputs)
            }
            None => {
                let mut state =
                    ResourceState::new(urn.clone(), request.resource_type, request.custom);
                state.parent = parent;
                (state, request.inputs)
            }
        };
        // Recorded for the plan only, so what refers to it is admitted; the state is unchanged.
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: state.id.clone(),
            outputs,
            property_dependencies: Default::default(),
        })
    }

    /// Under `--continue-on-error`, the first resource the request depends on (parent,
    /// `dependsOn`, property dependencies, `deletedWith`, provider) that the deployment went on
    /// without (Pulumi's `doesStepDependOn`).
    fn continued_dependency(
        &self,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Option<Urn> {
        if !self.options.continue_on_error {
            return None;
        }
        let continued = lock(&self.continued);
        if continued.is_empty() {
            return None;
        }
        let options = &request.options;
        let providers = options
            .provider
            .iter()
            .chain(options.providers.values())
            .filter_map(|text| ProviderReference::parse(text).ok())
            .map(|reference| reference.urn);
        parent
            .cloned()
            .into_iter()
            .chain(options.depends_on.iter().cloned())
            .chain(request.property_dependencies.values().flatten().cloned())
            .chain(options.deleted_with.iter().cloned())
            .chain(providers)
            .find(|urn| continued.contains_key(urn))
    }

    /// Skips a registration that depends on a resource the deployment went on without: nothing
    /// is done for it (Pulumi's `step.Skip()`), its old state — claimed, so it is not deleted
    /// as unregistered — stays as it was, and what depends on it is skipped in turn.
    fn skip(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
        caller: &Caller,
        dependency: &Urn,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.claim_with_aliases(
            urn,
            parent,
            &request.resource_type,
            &request.name,
            &request.options.aliases,
            caller,
        )?;
        lock(&self.continued).insert(urn.clone(), Unregistered::Skipped);
        let message =
            format!("{urn} was skipped: it depends on {dependency}, which failed or was skipped");
        self.emit(EngineEvent::Diagnostic {
            severity: Severity::Info,
            urn: Some(urn.clone()),
            message: message.clone(),
        });
        let mut error = err(message);
        error.continued = Some(Unregistered::Skipped);
        error.urn = Some(urn.clone());
        Err(error)
    }

    /// Gives every asset and archive in a registration's inputs its SHA-256 `hash`, as Pulumi's
    /// engine does (SDK programs send none), so the state records it. Files are read only for
    /// callers that run native code anyway (Python and Node.js programs), relative to the
    /// program's directory: a sandboxed program or provider must not make the engine read host
    /// files (or block on `/dev/zero`). Values with remote sources are left as they came.
    fn fill_asset_hashes(
        &self,
        request: &mut RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        let mut found = BlobSources::default();
        for value in request.inputs.values() {
            found.scan(value);
        }
        let reads_files = caller.native(self.options.native_plugins) == NativePlugins::Any;
        if !found.unhashed || found.remote || (found.local && !reads_files) {
            return Ok(());
        }
        let context = crate::asset::AssetContext {
            base_dir: self.options.program_dir.as_deref(),
            fetcher: None,
        };
        crate::asset::fill_hashes(&mut request.inputs, &context).map_err(|e| {
            err(format!(
                "{} {:?}: {e}",
                request.resource_type,
                crate::text::visible_line(&request.name)
            ))
        })
    }
}

/// The package a provider resource names is looked up (and may name a file): it must be a
/// package name.
fn check_provider_package(request: &RegisterResourceRequest) -> Result<(), MonitorError> {
    let package = request.resource_type.name();
    provider_type(package)
        .ok()
        .filter(|_| crate::urn::is_package_name(package))
        .map(|_| ())
        .ok_or_else(|| {
            err(format!(
                "{}: {package:?} is not a package name (a letter, then letters, digits and '-')",
                request.resource_type
            ))
        })
}

/// What the assets and archives in a value need to get their hashes: whether any lacks one,
/// and whether any comes from a local file or a remote URI.
#[derive(Default)]
struct BlobSources {
    unhashed: bool,
    local: bool,
    remote: bool,
}

impl BlobSources {
    fn note(&mut self, hash: &Option<String>, local: bool, remote: bool) {
        self.unhashed |= hash.is_none();
        self.local |= local;
        self.remote |= remote;
    }

    fn scan(&mut self, value: &PropertyValue) {
        match value {
            PropertyValue::Asset(a) => self.scan_asset(a),
            PropertyValue::Archive(a) => self.scan_archive(a),
            PropertyValue::Array(items) => items.iter().for_each(|v| self.scan(v)),
            PropertyValue::Object(map) => map.values().for_each(|v| self.scan(v)),
            PropertyValue::Secret(inner) => self.scan(inner),
            PropertyValue::Output(o) => {
                if let Some(v) = &o.value {
                    self.scan(v)
                }
            }
            _ => {}
        }
    }

    fn scan_asset(&mut self, asset: &crate::asset::Asset) {
        use crate::asset::AssetSource;
        self.note(
            &asset.hash,
            matches!(asset.source, AssetSource::Path(_)),
            matches!(asset.source, AssetSource::Uri(_)),
        );
    }

    fn scan_archive(&mut self, archive: &crate::asset::Archive) {
        use crate::asset::{ArchiveMember, ArchiveSource};
        self.note(
            &archive.hash,
            matches!(archive.source, ArchiveSource::Path(_)),
            matches!(archive.source, ArchiveSource::Uri(_)),
        );
        if let ArchiveSource::Assets(members) = &archive.source {
            for member in members.values() {
                match member {
                    ArchiveMember::Asset(a) => self.scan_asset(a),
                    ArchiveMember::Archive(a) => self.scan_archive(a),
                }
            }
        }
    }
}

/// The request's dependencies: `dependsOn` plus every property dependency, without repeats.
fn all_dependencies(request: &RegisterResourceRequest) -> Vec<Urn> {
    let mut out: Vec<Urn> = Vec::new();
    for urn in request
        .options
        .depends_on
        .iter()
        .chain(request.property_dependencies.values().flatten())
    {
        if !out.contains(urn) {
            out.push(urn.clone());
        }
    }
    out
}
