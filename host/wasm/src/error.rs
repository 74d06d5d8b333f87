//! The crate's error type for loading, compiling and storing providers and programs. (Failures of provider
//! *calls* are the engine's `ProviderError`; see [`crate::provider`].)

use std::path::PathBuf;

use crate::grants::GrantsError;
use crate::manifest::ManifestError;

/// Why a provider could not be loaded, compiled, stored or found.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Grants(#[from] GrantsError),
    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("compiling {provider} ({file}): {message}")]
    Compile {
        provider: String,
        file: String,
        message: String,
    },
    #[error("{provider} ({file}) is not a usable Cairn provider: {message}")]
    NotAProvider {
        provider: String,
        file: String,
        message: String,
    },
    #[error("{file} is not a usable Cairn program component: {message}")]
    NotAProgram { file: String, message: String },
    #[error("{file} is not a usable Cairn policy pack component: {message}")]
    NotAPolicyPack { file: String, message: String },
    #[error("setting up the wasm engine: {0}")]
    Engine(String),
    #[error("plugin store {}: {message}", .dir.display())]
    Store { dir: PathBuf, message: String },
    #[error("no installed provider matches {0:?}")]
    NotInstalled(String),
}
