//! The CLI's side of provider registries: the client with the user's credentials (Cairn's own
//! `registry-auth.json`, then Docker's `config.json`), and fetching a provider from an `oci://`
//! reference or a checksummed URL into a verified [`WasmPlugin`] — nothing is written until
//! every check has passed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cairn_registry::lock::{LockFile, LockedProvider};
use cairn_registry::sources::{self, RegistryEntry, RegistryList};
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
pub async fn fetch_oci(home: &Path, client: &Client, reference: &Reference) -> Result<Fetched> {
    let pulled = client.pull(reference).await?;
    crate::commands::signing::trust_check(home, &reference.to_string(), &pulled.component)?;
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
pub async fn fetch_url(home: &Path, client: &Client, url: &str, checksum: &str) -> Result<Fetched> {
    let expected = Digest::parse(checksum)
        .map_err(|why| anyhow::anyhow!("--checksum {}: {why}", quoted(checksum)))?;
    let bytes = client.download(url, &expected).await?;
    crate::commands::signing::trust_check(home, url, &bytes)?;
    let plugin =
        WasmPlugin::from_bytes(bytes).with_context(|| format!("{}: the component", field(url)))?;
    Ok(Fetched {
        plugin,
        source: url.to_owned(),
    })
}

/// The home's registry list.
pub fn registries_file(home: &Path) -> PathBuf {
    home.join(cairn_registry::sources::REGISTRIES_FILE)
}

/// The config key a project lists its own registries under (in Pulumi.yaml's `config:` or a
/// stack's settings): a list of `oci://HOST/PREFIX` strings or `{url, mirrorOf}` objects.
pub const PROJECT_REGISTRIES_KEY: &str = "cairn:registries";

/// The registries to consult: the project's, then the home's.
pub fn registries(home: &Path, project: Option<serde_json::Value>) -> Result<Vec<RegistryEntry>> {
    let mut all = Vec::new();
    if let Some(value) = project {
        let items = value.as_array().cloned().ok_or_else(|| {
            anyhow::anyhow!("{PROJECT_REGISTRIES_KEY} must be a list of oci://HOST/PREFIX strings or {{url, mirrorOf}} objects")
        })?;
        for (i, item) in items.into_iter().enumerate() {
            let entry = match item {
                serde_json::Value::String(url) => RegistryEntry {
                    url,
                    mirror_of: None,
                },
                other => serde_json::from_value(other)
                    .map_err(|e| anyhow::anyhow!("{PROJECT_REGISTRIES_KEY}[{i}]: {e}"))?,
            };
            entry
                .check()
                .map_err(|why| anyhow::anyhow!("{PROJECT_REGISTRIES_KEY}[{i}]: {why}"))?;
            all.push(entry);
        }
    }
    all.extend(RegistryList::load(&registries_file(home))?.registries);
    Ok(all)
}

/// A fetched component checked as a provider: its name and version are the ones asked for,
/// and the trust policy accepts it. Returns the plugin and its verified signer.
pub fn accept(
    home: &Path,
    name: &str,
    version: &semver::Version,
    source: &str,
    component: Vec<u8>,
) -> Result<(WasmPlugin, Option<String>)> {
    let signer = crate::commands::signing::trust_check(home, source, &component)?;
    let plugin = WasmPlugin::from_bytes(component)
        .with_context(|| format!("{}: the component", field(source)))?;
    let manifest = plugin.manifest();
    if manifest.name != name || manifest.version != *version {
        bail!(
            "{}: the component is {}@{}, not {name}@{version}",
            field(source),
            quoted(&manifest.name),
            manifest.version
        );
    }
    Ok((plugin, signer))
}

/// Finds `name` in `registries` (the newest version `requirement` allows) and fetches it.
pub async fn fetch_by_name(
    home: &Path,
    client: &Client,
    registries: &[RegistryEntry],
    name: &str,
    requirement: &semver::VersionReq,
) -> Result<(WasmPlugin, LockedProvider)> {
    if registries.iter().all(|e| e.mirror_of.is_some()) {
        bail!(
            "no registry to look {name} up in: add one with `cairn plugin registry add oci://HOST/PREFIX` (or list the project's under {PROJECT_REGISTRIES_KEY})"
        );
    }
    let found = sources::resolve(client, registries, name, requirement)
        .await?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no version of {name} matching {requirement} in {}",
                registries
                    .iter()
                    .filter(|e| e.mirror_of.is_none())
                    .map(|e| e.url.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let fetched = sources::fetch(
        client,
        registries,
        name,
        &found.source,
        &found.version,
        None,
        false,
    )
    .await?;
    let digest = fetched.digest;
    let (plugin, signer) = accept(home, name, &found.version, &found.source, fetched.component)?;
    let entry = sources::lock_entry(
        name,
        &found.source,
        requirement,
        &found.version,
        digest,
        signer,
    );
    Ok((plugin, entry))
}

/// Fetches exactly what `locked` pins (through mirrors; only directory mirrors when
/// `offline`), checking the digest and that a locked signer still signs it.
pub async fn fetch_locked(
    home: &Path,
    client: &Client,
    registries: &[RegistryEntry],
    locked: &LockedProvider,
    offline: bool,
) -> Result<WasmPlugin> {
    let component = if locked.source.starts_with("https://") || locked.source.starts_with("http://")
    {
        if offline {
            bail!(
                "{} {} comes from {}, and --offline fetches nothing",
                locked.name,
                locked.version,
                locked.source
            );
        }
        let bytes = client.fetch_url(&locked.source).await?;
        let actual = Digest::of(&bytes);
        if actual != locked.digest {
            return Err(cairn_registry::RegistryError::locked_digest_changed(
                &locked.name,
                &locked.version,
                &locked.source,
                &locked.digest,
                &actual,
            )
            .into());
        }
        bytes
    } else {
        sources::fetch(
            client,
            registries,
            &locked.name,
            &locked.source,
            &locked.version,
            Some(&locked.digest),
            offline,
        )
        .await?
        .component
    };
    let (plugin, signer) = accept(
        home,
        &locked.name,
        &locked.version,
        &locked.source,
        component,
    )?;
    if let Some(expected) = &locked.signer
        && signer.as_deref() != Some(expected.as_str())
    {
        bail!(
            "{} {}: cairn.lock records it signed by {expected}, but {}",
            locked.name,
            locked.version,
            match signer {
                Some(other) => format!("it is now signed by {other}"),
                None => "no trusted signature verifies it now".to_owned(),
            }
        );
    }
    Ok(plugin)
}

/// A deployment's access to providers that are not installed: pinned by the project's
/// `cairn.lock`, else found by name in its registries (then locked).
pub struct ProviderFetcher {
    home: PathBuf,
    store: cairn_wasm::PluginStore,
    lock_path: PathBuf,
    lock: tokio::sync::Mutex<LockFile>,
    registries: Vec<RegistryEntry>,
    offline: bool,
    client: std::sync::OnceLock<Client>,
}

/// What the fetcher did, for the deployment's diagnostics.
pub type Notice = Box<dyn Fn(String) + Send + Sync>;

impl ProviderFetcher {
    pub fn new(
        home: &Path,
        project_dir: &Path,
        registries: Vec<RegistryEntry>,
        offline: bool,
        store: cairn_wasm::PluginStore,
    ) -> Result<ProviderFetcher> {
        let lock_path = project_dir.join(cairn_registry::lock::LOCK_FILE);
        let lock = LockFile::load(&lock_path)?;
        Ok(ProviderFetcher {
            home: home.to_owned(),
            store,
            lock_path,
            lock: tokio::sync::Mutex::new(lock),
            registries,
            offline,
            client: std::sync::OnceLock::new(),
        })
    }

    fn client(&self) -> Result<&Client> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let made = client(&self.home, false)?;
        Ok(self.client.get_or_init(|| made))
    }

    /// The locked provider for `package` (compatible with `version`), from the store when it
    /// holds exactly the locked bytes, else fetched and stored; `None` if the lock has no entry.
    pub async fn locked(
        &self,
        package: &str,
        version: Option<&semver::Version>,
    ) -> Result<Option<WasmPlugin>> {
        let Some(locked) = self.lock.lock().await.find(package, version).cloned() else {
            return Ok(None);
        };
        let installed = self
            .store
            .versions(package)?
            .into_iter()
            .find(|i| i.version == locked.version);
        if let Some(installed) = installed {
            if installed.sha256 == locked.digest.hex() {
                return Ok(Some(self.store.load(&installed)?));
            }
            bail!(
                "the installed {package} {} is sha256:{}, but {} pins {} (from {}): remove it (`cairn plugin rm {package} {}`) to fetch the locked one, or `cairn plugin lock --update {package}`",
                locked.version,
                installed.sha256,
                self.lock_path.display(),
                locked.digest,
                locked.source,
                locked.version
            );
        }
        let plugin = fetch_locked(
            &self.home,
            self.client()?,
            &self.registries,
            &locked,
            self.offline,
        )
        .await?;
        self.install(plugin).await.map(Some)
    }

    /// Finds `package` in the registries (compatible with `version`), installs it and locks it;
    /// `None` when there are no registries to look in. `notice` hears what was trusted.
    pub async fn resolve(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        download_url: Option<&str>,
        notice: &Notice,
    ) -> Result<Option<WasmPlugin>> {
        let download_url = download_url.filter(|u| {
            u.starts_with(cairn_registry::reference::SCHEME)
                || u.starts_with("https://")
                || u.starts_with("http://")
        });
        if download_url.is_none() && self.registries.iter().all(|e| e.mirror_of.is_some()) {
            return Ok(None);
        }
        if self.offline {
            bail!(
                "{package}{} is neither installed nor in {} (--offline fetches nothing new)",
                version.map(|v| format!(" {v}")).unwrap_or_default(),
                self.lock_path.display()
            );
        }
        let requirement = match version {
            Some(v) => cairn_wasm::store::compatible(v),
            None => semver::VersionReq::STAR,
        };
        let (plugin, entry) = match download_url {
            // A base URL: `<url>/<name>-<version>.wasm`, trusted on first use (TLS), then locked.
            Some(url) if !url.starts_with(cairn_registry::reference::SCHEME) => {
                let Some(version) = version else {
                    bail!(
                        "{package}: its pluginDownloadURL {} is a web address, which needs the provider's version to name a file",
                        field(url)
                    );
                };
                let file = format!("{}/{package}-{version}.wasm", url.trim_end_matches('/'));
                let bytes = self.client()?.fetch_url(&file).await?;
                let digest = Digest::of(&bytes);
                let (plugin, signer) = accept(&self.home, package, version, &file, bytes)?;
                let entry =
                    sources::lock_entry(package, &file, &requirement, version, digest, signer);
                (plugin, entry)
            }
            // A registry prefix: consulted first, then the others.
            Some(url) => {
                let mut registries = vec![RegistryEntry {
                    url: url.trim_end_matches('/').to_owned(),
                    mirror_of: None,
                }];
                registries.extend(self.registries.iter().cloned());
                fetch_by_name(
                    &self.home,
                    self.client()?,
                    &registries,
                    package,
                    &requirement,
                )
                .await?
            }
            None => {
                fetch_by_name(
                    &self.home,
                    self.client()?,
                    &self.registries,
                    package,
                    &requirement,
                )
                .await?
            }
        };
        let plugin = self.install(plugin).await?;
        let mut lock = self.lock.lock().await;
        notice(format!(
            "{}: locked {} {} from {} ({}{})",
            self.lock_path.display(),
            entry.name,
            entry.version,
            entry.source,
            entry.digest,
            entry
                .signer
                .as_deref()
                .map(|s| format!(", signed by {s}"))
                .unwrap_or_default()
        ));
        lock.upsert(entry);
        lock.save(&self.lock_path)?;
        Ok(Some(plugin))
    }

    /// Stores `plugin` (compiling it once, off the async executor) and returns it.
    async fn install(&self, plugin: WasmPlugin) -> Result<WasmPlugin> {
        let store = self.store.clone();
        let name = plugin.display_name();
        tokio::task::spawn_blocking(move || {
            crate::commands::package::check_before_install(&plugin, &name)?;
            store.install_plugin(&plugin)?;
            Ok::<_, anyhow::Error>(plugin)
        })
        .await
        .context("the install task failed")?
    }
}
