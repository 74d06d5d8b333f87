//! The CLI's side of provider registries: the client with the user's credentials (Cairn's own
//! `registry-auth.json`, then Docker's `config.json`), and fetching a provider from an `oci://`
//! reference or a checksummed URL into a verified [`WasmPlugin`] — nothing is written until
//! every check has passed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cairn_registry::{Client, ClientOptions, Credentials, Digest, Reference, Target};
use cairn_wasm::WasmPlugin;

use crate::terminal::{field, quoted};

/// Cairn's registry credentials, in Docker's format.
pub fn auth_file(home: &Path) -> PathBuf {
    home.join("registry-auth.json")
}

/// A client presenting the user's credentials.
pub fn client(home: &Path, plain_http: bool) -> Result<Client> {
    let mut credentials = Credentials::default();
    credentials.load_file(&auth_file(home))?;
    if let Some(docker) = cairn_registry::credentials::docker_config_path() {
        credentials.load_file(&docker)?;
    }
    Ok(Client::new(ClientOptions {
        plain_http,
        credentials,
        ..ClientOptions::default()
    })?)
}

/// Runs a registry operation to completion on a small runtime of its own.
pub fn block_on<T>(operation: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(operation)
}

/// A provider fetched and verified, with where it came from.
pub struct Fetched {
    pub plugin: WasmPlugin,
    /// `oci://…@sha256:…` (the manifest pinned) or the URL.
    pub source: String,
}

/// Fetches the component `reference` names and checks it: the layout and digests (the client),
/// then that it is a Cairn provider whose version is the one a version tag names.
pub async fn fetch_oci(client: &Client, reference: &Reference) -> Result<Fetched> {
    let pulled = client.pull(reference).await?;
    let plugin = WasmPlugin::from_bytes(pulled.component)
        .with_context(|| format!("{reference}: the component"))?;
    if let Some(Target::Tag(tag)) = &reference.target
        && let Some(version) = cairn_registry::reference::version_of_tag(tag)
        && version != plugin.manifest().version
    {
        bail!(
            "{reference}: the component is {}@{}, not the version {version} its tag names",
            quoted(&plugin.manifest().name),
            plugin.manifest().version
        );
    }
    Ok(Fetched {
        plugin,
        source: pulled.reference.to_string(),
    })
}

/// Downloads `url` and checks it against `checksum` (`sha256:HEX`) before reading it as a
/// provider.
pub async fn fetch_url(client: &Client, url: &str, checksum: &str) -> Result<Fetched> {
    let expected = Digest::parse(checksum)
        .map_err(|why| anyhow::anyhow!("--checksum {}: {why}", quoted(checksum)))?;
    let bytes = client.download(url, &expected).await?;
    let plugin =
        WasmPlugin::from_bytes(bytes).with_context(|| format!("{}: the component", field(url)))?;
    Ok(Fetched {
        plugin,
        source: url.to_owned(),
    })
}
