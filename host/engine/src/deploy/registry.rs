//! The deployment's configured provider instances, by provider reference (`<urn>::<id>`).
//!
//! Providers registered in this deployment are added as their provider resources complete;
//! providers only recorded in the old state (needed to delete or refresh what they manage) are
//! loaded and configured from their recorded inputs on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use crate::state::{ProviderReference, ResourceState};
use crate::value::PropertyValue;

use super::provider::{LoadError, NativePlugins, Provider, ProviderError, ProviderLoader};

type Slot = Arc<OnceCell<Result<Arc<dyn Provider>, String>>>;

pub struct ProviderRegistry {
    loader: Arc<dyn ProviderLoader>,
    instances: Mutex<HashMap<String, Slot>>,
}

impl ProviderRegistry {
    pub fn new(loader: Arc<dyn ProviderLoader>) -> ProviderRegistry {
        ProviderRegistry {
            loader,
            instances: Mutex::new(HashMap::new()),
        }
    }

    pub fn loader(&self) -> &Arc<dyn ProviderLoader> {
        &self.loader
    }

    fn slot(&self, reference: &str) -> Slot {
        self.instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(reference.to_owned())
            .or_default()
            .clone()
    }

    /// Records the configured instance behind `reference`.
    pub fn insert(&self, reference: &ProviderReference, provider: Arc<dyn Provider>) {
        let slot = Slot::default();
        let _ = slot.set(Ok(provider));
        self.instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(reference.to_string(), slot);
    }

    /// The instance registered under `reference` in this deployment, if any.
    pub fn registered(&self, reference: &ProviderReference) -> Option<Arc<dyn Provider>> {
        let slot = self
            .instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&reference.to_string())
            .cloned()?;
        slot.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// The instance for a provider recorded in the old state: registered in this deployment, or
    /// loaded (under the deployment's native-plugin rule) and configured once from
    /// `provider_state`'s recorded inputs.
    pub async fn recorded(
        &self,
        reference: &ProviderReference,
        provider_state: Option<&ResourceState>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, String> {
        let slot = self.slot(&reference.to_string());
        slot.get_or_init(|| async {
            let state = provider_state.ok_or_else(|| {
                format!("provider {reference} is not in the state, so the resources it managed cannot be reached")
            })?;
            let package = state.resource_type.name().to_owned();
            if !crate::urn::is_package_name(&package) {
                return Err(format!(
                    "provider {reference} is of type {}, which names no package",
                    state.resource_type
                ));
            }
            let version = version_input(&state.inputs);
            let download_url = download_url_input(&state.inputs);
            let provider = self
                .loader
                .load_from(&package, version.as_ref(), download_url.as_deref(), native)
                .await
                .map_err(|e: LoadError| e.to_string())?;
            provider
                .configure(state.inputs.clone(), false)
                .await
                .map_err(|e: ProviderError| format!("configuring provider {reference}: {e}"))?;
            Ok(provider)
        })
        .await
        .clone()
    }

    /// Every instance that has been configured, to signal cancellation to.
    pub fn all(&self) -> Vec<Arc<dyn Provider>> {
        self.instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter_map(|slot| slot.get().and_then(|r| r.as_ref().ok()).cloned())
            .collect()
    }
}

/// The `version` input of a provider resource, if it is a valid semantic version.
/// The provider input naming where its package can be fetched (Pulumi's `pluginDownloadURL`).
pub const DOWNLOAD_URL_INPUT: &str = "pluginDownloadURL";

/// A provider's `pluginDownloadURL` input, if it is a string.
pub fn download_url_input(inputs: &crate::value::PropertyMap) -> Option<String> {
    match inputs.get(DOWNLOAD_URL_INPUT) {
        Some(PropertyValue::String(url)) if !url.is_empty() => Some(url.clone()),
        _ => None,
    }
}

pub fn version_input(inputs: &crate::value::PropertyMap) -> Option<semver::Version> {
    match inputs.get("version") {
        Some(PropertyValue::String(v)) => semver::Version::parse(v).ok(),
        _ => None,
    }
}
