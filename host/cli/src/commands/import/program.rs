//! The program an import runs: it registers what the imported resources refer to that the
//! stack already has (their parents and explicit providers, with their own parents and
//! providers, as recorded, so they stay as they are), then the file's components, providers
//! and resources to import — each after its parent and provider, independent ones at once.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use cairn_engine::deploy::PlannedImport;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{
    Program, ProgramError, RegisterResourceRequest, ResourceOptions,
};
use cairn_engine::state::{ResourceState, Snapshot};
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::PropertyValue;
use futures::future::join_all;
use indexmap::IndexMap;

use super::file::{Entry, Resolved};

/// The import's program (see the module docs).
pub struct ImportProgram {
    /// Existing resources the imports refer to, in the snapshot's order (parents first).
    existing: Vec<ResourceState>,
    /// The file's resources in waves: each after the parent and provider it names.
    waves: Vec<Vec<Entry>>,
    protect: bool,
    /// Provider references by provider URN, as registered in this deployment.
    references: Mutex<HashMap<Urn, String>>,
}

impl ImportProgram {
    /// The program importing `resolved` into the stack whose state is `snapshot`, with
    /// `protect` on what it imports; and the planned imports (by URN) it registers.
    pub fn new(
        resolved: &Resolved,
        snapshot: &Snapshot,
        protect: bool,
    ) -> (ImportProgram, IndexMap<Urn, PlannedImport>) {
        let planned = resolved
            .resources
            .iter()
            .filter(|e| !e.spec.component && !e.is_provider())
            .map(|e| {
                (
                    e.urn.clone(),
                    PlannedImport {
                        properties: e.spec.properties.clone(),
                    },
                )
            })
            .collect();
        let program = ImportProgram {
            existing: referenced_existing(resolved, snapshot),
            waves: waves(&resolved.resources),
            protect,
            references: Mutex::new(HashMap::new()),
        };
        (program, planned)
    }

    fn reference_of(&self, provider: &Urn) -> Option<String> {
        self.references
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(provider)
            .cloned()
    }

    fn remember(&self, urn: &Urn, id: Option<String>) {
        if urn.resource_type().starts_with("pulumi:providers:") {
            self.references
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(urn.clone(), format!("{urn}::{}", id.unwrap_or_default()));
        }
    }

    /// An existing resource's registration, as recorded: it stays as it is.
    fn existing_request(&self, state: &ResourceState, root: &Urn) -> RegisterResourceRequest {
        let mut request = RegisterResourceRequest::custom(
            state.resource_type.clone(),
            state.urn.name(),
            state.inputs.clone(),
        );
        request.custom = state.custom;
        request.parent = state.parent.clone().filter(|p| p != root);
        request.property_dependencies = state.property_dependencies.clone();
        request.options = ResourceOptions {
            protect: state.protect,
            retain_on_delete: state.retain_on_delete,
            deleted_with: state.deleted_with.clone(),
            depends_on: state.dependencies.clone(),
            ignore_changes: state.ignore_changes.clone(),
            replace_on_changes: state.replace_on_changes.clone(),
            additional_secret_outputs: state.additional_secret_outputs.clone(),
            custom_timeouts: state.custom_timeouts.as_deref().copied(),
            import_id: state.import_id.clone(),
            ..ResourceOptions::default()
        };
        if let Some(provider) = &state.provider {
            match default_provider_version(&provider.urn, &self.existing) {
                // A default provider is the engine's to register again.
                Some(version) => request.options.version = version,
                None => {
                    request.options.provider = Some(
                        self.reference_of(&provider.urn)
                            .unwrap_or_else(|| provider.to_string()),
                    )
                }
            }
        }
        request
    }

    /// A file entry's registration: a component, a provider (created from its `inputs`), or
    /// a resource imported by ID.
    fn entry_request(&self, entry: &Entry) -> Result<RegisterResourceRequest, ProgramError> {
        let spec = &entry.spec;
        let ty =
            TypeToken::parse(&spec.resource_type).map_err(|e| ProgramError::new(e.to_string()))?;
        let mut request = if spec.component {
            RegisterResourceRequest::component(ty, &spec.logical_name)
        } else if entry.is_provider() {
            let mut inputs = spec.inputs.clone().unwrap_or_default();
            if let Some(version) = &spec.version {
                inputs.insert("version".into(), PropertyValue::String(version.to_string()));
            }
            RegisterResourceRequest::custom(ty, &spec.logical_name, inputs)
        } else {
            let mut request =
                RegisterResourceRequest::custom(ty, &spec.logical_name, Default::default());
            request.options.import_id = Some(spec.id.clone());
            request.options.version = spec.version.as_ref().map(ToString::to_string);
            request
        };
        request.parent = entry.parent.clone();
        if !entry.is_provider() {
            request.options.protect = self.protect;
        }
        if let Some(provider) = &entry.provider {
            let reference = self.reference_of(provider).ok_or_else(|| {
                ProgramError::new(format!(
                    "{}: its provider {provider} was not registered",
                    entry.urn
                ))
            })?;
            request.options.provider = Some(reference);
        }
        Ok(request)
    }
}

#[async_trait]
impl Program for ImportProgram {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let root = monitor.root_urn().clone();
        for state in &self.existing {
            if state.urn == root || is_default_provider(&state.urn) {
                continue;
            }
            let response = monitor
                .register_resource(self.existing_request(state, &root))
                .await?;
            self.remember(&response.urn, response.id);
        }
        let mut failures = Vec::new();
        let monitor = &monitor;
        for wave in &self.waves {
            let registrations = wave.iter().map(|entry| async move {
                let request = self.entry_request(entry)?;
                let response = monitor.register_resource(request).await?;
                self.remember(&response.urn, response.id);
                Ok::<(), ProgramError>(())
            });
            failures.extend(
                join_all(registrations)
                    .await
                    .into_iter()
                    .filter_map(Result::err)
                    .map(|e| e.message),
            );
            if !failures.is_empty() {
                break;
            }
        }
        match failures.len() {
            0 => Ok(()),
            1 => Err(ProgramError::new(failures.remove(0))),
            n => Err(ProgramError::new(format!(
                "{n} imports failed:\n  {}",
                failures.join("\n  ")
            ))),
        }
    }
}

fn is_default_provider(urn: &Urn) -> bool {
    urn.resource_type().starts_with("pulumi:providers:")
        && (urn.name() == "default" || urn.name().starts_with("default_"))
}

/// For a default provider's URN: the version it was registered for (`Some(None)`: none);
/// `None` if the URN is not a default provider's.
fn default_provider_version(urn: &Urn, existing: &[ResourceState]) -> Option<Option<String>> {
    if !is_default_provider(urn) {
        return None;
    }
    let version =
        existing
            .iter()
            .find(|s| &s.urn == urn)
            .and_then(|s| match s.inputs.get("version") {
                Some(PropertyValue::String(v)) if urn.name() != "default" => Some(v.clone()),
                _ => None,
            });
    Some(version)
}

/// The existing resources the entries refer to (parents, explicit providers), with the
/// resources those refer to in turn (parents, providers, dependencies), in snapshot order.
fn referenced_existing(resolved: &Resolved, snapshot: &Snapshot) -> Vec<ResourceState> {
    let by_urn: HashMap<&Urn, &ResourceState> = snapshot
        .resources
        .iter()
        .filter(|r| !r.delete)
        .map(|r| (&r.urn, r))
        .collect();
    let mut wanted: HashSet<Urn> = HashSet::new();
    let mut todo: Vec<Urn> = resolved
        .resources
        .iter()
        .flat_map(|e| e.parent.iter().chain(e.provider.iter()))
        .filter(|u| by_urn.contains_key(u))
        .cloned()
        .collect();
    while let Some(urn) = todo.pop() {
        if !wanted.insert(urn.clone()) {
            continue;
        }
        let Some(state) = by_urn.get(&urn) else {
            continue;
        };
        let referenced = state
            .parent
            .iter()
            .chain(state.provider.iter().map(|p| &p.urn))
            .chain(state.dependencies.iter())
            .chain(state.deleted_with.iter())
            .chain(state.property_dependencies.values().flatten());
        todo.extend(referenced.filter(|u| by_urn.contains_key(u)).cloned());
    }
    snapshot
        .resources
        .iter()
        .filter(|r| !r.delete && wanted.contains(&r.urn))
        .cloned()
        .collect()
}

/// The entries in waves: each wave's parents and providers are in earlier waves (or the
/// stack).
fn waves(entries: &[Entry]) -> Vec<Vec<Entry>> {
    let in_file: HashSet<&Urn> = entries.iter().map(|e| &e.urn).collect();
    let mut done: HashSet<&Urn> = HashSet::new();
    let mut waves = Vec::new();
    let mut left: Vec<&Entry> = entries.iter().collect();
    while !left.is_empty() {
        let (ready, rest): (Vec<&Entry>, Vec<&Entry>) = left.into_iter().partition(|e| {
            e.parent
                .iter()
                .chain(e.provider.iter())
                .all(|u| !in_file.contains(u) || done.contains(u))
        });
        if ready.is_empty() {
            // Cycles are refused when the file is resolved; register the rest in order.
            waves.push(rest.into_iter().cloned().collect());
            break;
        }
        done.extend(ready.iter().map(|e| &e.urn));
        waves.push(ready.into_iter().cloned().collect());
        left = rest;
    }
    waves
}
