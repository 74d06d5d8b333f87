//! Where the CLI finds providers: the installed plugins a deployment may load.
//!
//! Provider kinds register here as Cairn gains them (WebAssembly components, gRPC plugins); a
//! package with no installed provider is a clear error naming it.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::provider::{LoadError, Provider, ProviderLoader};

/// Loads installed provider plugins.
pub struct PluginLoader {}

impl PluginLoader {
    pub fn new() -> PluginLoader {
        PluginLoader {}
    }
}

#[async_trait]
impl ProviderLoader for PluginLoader {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Err(LoadError::NotFound {
            package: package.to_owned(),
            version: version.map(ToString::to_string),
        })
    }
}
