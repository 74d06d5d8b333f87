//! Registry credentials in Docker's `config.json` format (`{"auths": {"HOST[:PORT]": {"auth":
//! base64("user:password")}}}`, or `username`/`password` fields): Docker's own file
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`) and Cairn's
//! (`$CAIRN_HOME/registry-auth.json`, written by `cairn plugin registry login`, readable by its
//! owner only — as Docker and Pulumi keep theirs). Docker's credential helpers (`credHelpers` per
//! registry, `credsStore` for the rest) are run as Docker runs them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::error::RegistryError;

/// A user name and password (or token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential({:?}, [secret])", self.username)
    }
}

/// Credentials by registry (`host[:port]`); the first source loaded wins. Registries whose
/// secrets a Docker credential helper keeps (`credHelpers`, `credsStore`) are asked of the helper
/// (`docker-credential-<name> get`) when a registry asks for credentials.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    by_registry: BTreeMap<String, Credential>,
    helpers: BTreeMap<String, String>,
    default_helper: Option<String>,
    /// Where helper programs are looked for (default: `PATH`).
    helper_path: Option<Vec<PathBuf>>,
}

#[derive(serde::Deserialize, serde::Serialize, Default)]
struct ConfigFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(
        default,
        rename = "credsStore",
        skip_serializing_if = "Option::is_none"
    )]
    creds_store: Option<String>,
    #[serde(
        default,
        rename = "credHelpers",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    cred_helpers: BTreeMap<String, String>,
}

#[derive(serde::Deserialize, serde::Serialize, Default)]
struct AuthEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auth: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password: Option<String>,
}

/// Docker's configuration file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
pub fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker/config.json"))
}

/// `https://host:port/v1/` and `host:port` name the same registry.
fn registry_key(key: &str) -> String {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key).to_ascii_lowercase()
}

impl Credentials {
    /// The credential for `registry` (`host[:port]`): a stored one, else its helper's answer.
    pub fn for_registry(&self, registry: &str) -> Option<Credential> {
        let key = registry.to_ascii_lowercase();
        if let Some(found) = self.by_registry.get(&key) {
            return Some(found.clone());
        }
        let helper = self.helpers.get(&key).or(self.default_helper.as_ref())?;
        self.ask_helper(helper, registry)
    }

    /// Looks helper programs up in `dirs` instead of `PATH`.
    pub fn with_helper_path(mut self, dirs: Vec<PathBuf>) -> Credentials {
        self.helper_path = Some(dirs);
        self
    }

    /// `docker-credential-<helper> get` with `registry` on its standard input: its
    /// `{"Username", "Secret"}`, or none when it has nothing (or fails).
    fn ask_helper(&self, helper: &str, registry: &str) -> Option<Credential> {
        use std::io::Write as _;
        if helper.is_empty()
            || !helper
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            tracing::warn!(
                helper,
                "ignoring a credential helper whose name is not a plain name"
            );
            return None;
        }
        let program = format!("docker-credential-{helper}");
        let dirs = match &self.helper_path {
            Some(dirs) => dirs.clone(),
            None => std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
        };
        let path = dirs
            .iter()
            .map(|d| d.join(&program))
            .find(|p| p.is_file())?;
        let mut child = std::process::Command::new(&path)
            .arg("get")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let _ = child
            .stdin
            .take()?
            .write_all(format!("{registry}\n").as_bytes());
        let output = child.wait_with_output().ok()?;
        if !output.status.success() || output.stdout.len() > 64 * 1024 {
            return None;
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            #[serde(rename = "Username")]
            username: String,
            #[serde(rename = "Secret")]
            secret: String,
        }
        let answer: Answer = serde_json::from_slice(&output.stdout).ok()?;
        Some(Credential {
            username: answer.username,
            password: answer.secret,
        })
    }

    /// Adds the credentials of a Docker-format file (nothing if it does not exist); those
    /// already known win.
    pub fn load_file(&mut self, path: &Path) -> Result<(), RegistryError> {
        let bad = |message: String| RegistryError::Credentials {
            file: path.display().to_string(),
            message,
        };
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        let file: ConfigFile =
            serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        for (key, helper) in file.cred_helpers {
            self.helpers.entry(registry_key(&key)).or_insert(helper);
        }
        if self.default_helper.is_none() {
            self.default_helper = file.creds_store;
        }
        for (key, entry) in file.auths {
            let credential = match (entry.auth, entry.username, entry.password) {
                (Some(auth), _, _) if !auth.is_empty() => {
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(auth.trim())
                        .ok()
                        .and_then(|d| String::from_utf8(d).ok())
                        .ok_or_else(|| {
                            bad(format!(
                                "the auth of {key:?} is not base64 of user:password"
                            ))
                        })?;
                    let (username, password) = decoded.split_once(':').ok_or_else(|| {
                        bad(format!(
                            "the auth of {key:?} is not base64 of user:password"
                        ))
                    })?;
                    Credential {
                        username: username.to_owned(),
                        password: password.to_owned(),
                    }
                }
                (_, Some(username), Some(password)) => Credential { username, password },
                // Entries kept by a credential helper: asked of it when needed.
                _ => continue,
            };
            self.by_registry
                .entry(registry_key(&key))
                .or_insert(credential);
        }
        Ok(())
    }

    /// Records `credential` for `registry` in the Docker-format file at `path` (created
    /// readable by its owner only), keeping its other entries.
    pub fn save(path: &Path, registry: &str, credential: &Credential) -> Result<(), RegistryError> {
        Self::edit(path, |auths| {
            let auth = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", credential.username, credential.password));
            auths.insert(
                registry.to_ascii_lowercase(),
                AuthEntry {
                    auth: Some(auth),
                    ..AuthEntry::default()
                },
            );
        })
    }

    /// Removes `registry` from the file at `path`; whether it was there.
    pub fn forget(path: &Path, registry: &str) -> Result<bool, RegistryError> {
        let mut removed = false;
        Self::edit(path, |auths| {
            removed = auths.remove(&registry.to_ascii_lowercase()).is_some();
        })?;
        Ok(removed)
    }

    fn edit(
        path: &Path,
        change: impl FnOnce(&mut BTreeMap<String, AuthEntry>),
    ) -> Result<(), RegistryError> {
        let bad = |message: String| RegistryError::Credentials {
            file: path.display().to_string(),
            message,
        };
        let mut file: ConfigFile = match std::fs::read(path) {
            Ok(text) => {
                serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ConfigFile::default(),
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        change(&mut file.auths);
        let text = serde_json::to_vec_pretty(&file).map_err(|e| bad(e.to_string()))?;
        crate::files::write_atomically(path, &text, true)
            .map_err(|e| bad(format!("cannot write it: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_files_are_read_and_cairn_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let docker = dir.path().join("config.json");
        std::fs::write(
            &docker,
            r#"{"auths": {
                "https://Registry.Example:5000/v1/": {"auth": "dXNlcjpwYTpzcw=="},
                "other.example": {"username": "u2", "password": "p2"},
                "helper.example": {}
            }, "credsStore": "desktop"}"#,
        )
        .unwrap();
        let mut c = Credentials::default();
        c.load_file(&docker).unwrap();
        let first = c.for_registry("registry.example:5000").unwrap();
        assert_eq!(
            (first.username.as_str(), first.password.as_str()),
            ("user", "pa:ss")
        );
        assert_eq!(c.for_registry("other.example").unwrap().username, "u2");
        assert!(c.for_registry("helper.example").is_none());
        assert!(!format!("{first:?}").contains("pa:ss"));

        let mine = dir.path().join("home/registry-auth.json");
        let cred = Credential {
            username: "me".into(),
            password: "s3cret".into(),
        };
        Credentials::save(&mine, "127.0.0.1:5000", &cred).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&mine).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        let mut c = Credentials::default();
        c.load_file(&mine).unwrap();
        assert_eq!(c.for_registry("127.0.0.1:5000"), Some(cred));
        assert!(Credentials::forget(&mine, "127.0.0.1:5000").unwrap());
        assert!(!Credentials::forget(&mine, "127.0.0.1:5000").unwrap());

        // Helpers: per registry, then the store, asked only for registries without an entry.
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, answer) in [
            (
                "vault",
                r#"{"ServerURL":"x","Username":"from-vault","Secret":"v4ult"}"#,
            ),
            (
                "store",
                r#"{"ServerURL":"x","Username":"from-store","Secret":"st0re"}"#,
            ),
        ] {
            let script = bin.join(format!("docker-credential-{name}"));
            // Answers only for the registry it is asked about on standard input.
            std::fs::write(
                &script,
                format!("#!/bin/sh\nread host\n[ \"$1\" = get ] || exit 2\ncase \"$host\" in nothing*) exit 1;; esac\necho '{answer}'\n"),
            )
            .unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        std::fs::write(
            &docker,
            r#"{"auths": {"plain.example": {"auth": "dTpw"}}, "credHelpers": {"ecr.example": "vault", "bad.example": "../x"}, "credsStore": "store"}"#,
        )
        .unwrap();
        let mut c = Credentials::default().with_helper_path(vec![bin]);
        c.load_file(&docker).unwrap();
        assert_eq!(c.for_registry("plain.example").unwrap().username, "u");
        let vault = c.for_registry("ecr.example").unwrap();
        assert_eq!(
            (vault.username.as_str(), vault.password.as_str()),
            ("from-vault", "v4ult")
        );
        assert_eq!(
            c.for_registry("other.example").unwrap().username,
            "from-store"
        );
        assert!(c.for_registry("nothing.example").is_none());
        assert!(c.for_registry("bad.example").is_none());

        std::fs::write(&docker, r#"{"auths": {"x": {"auth": "!!"}}}"#).unwrap();
        let err = Credentials::default()
            .load_file(&docker)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("config.json") && err.contains("\"x\""),
            "{err}"
        );
    }
}
