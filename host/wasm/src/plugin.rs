//! A provider file: its bytes, their SHA-256 and its manifest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::WasmError;
use crate::manifest::Manifest;

/// A provider component read and identified (not yet compiled).
#[derive(Debug, Clone)]
pub struct WasmPlugin {
    path: Option<PathBuf>,
    bytes: Arc<[u8]>,
    sha256: String,
    manifest: Manifest,
}

impl WasmPlugin {
    /// Reads a `.wasm` file and parses its manifest.
    pub fn from_file(path: impl AsRef<Path>) -> Result<WasmPlugin, WasmError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| WasmError::Io {
            what: "reading provider",
            path: path.to_owned(),
            source,
        })?;
        let mut plugin = WasmPlugin::from_named_bytes(bytes, &path.display().to_string())?;
        plugin.path = Some(path.to_owned());
        Ok(plugin)
    }

    /// Identifies a component held in memory.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<WasmPlugin, WasmError> {
        WasmPlugin::from_named_bytes(bytes.into(), "<in-memory component>")
    }

    fn from_named_bytes(bytes: Vec<u8>, name: &str) -> Result<WasmPlugin, WasmError> {
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let manifest = Manifest::from_component(name, &bytes)?;
        Ok(WasmPlugin {
            path: None,
            bytes: bytes.into(),
            sha256,
            manifest,
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Lower-case hex SHA-256 of the file.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file for messages (its path, or a placeholder for in-memory components).
    pub fn display_name(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "<in-memory component>".to_string(),
        }
    }
}
