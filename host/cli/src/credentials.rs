//! The backend a user logged in to (`cairn login`): `$CAIRN_HOME/credentials.json`, readable by
//! its owner only, as Pulumi keeps `~/.pulumi/credentials.json`. It holds the URL as given,
//! which may carry a password (as `.pgpass` does); nothing prints it without redaction.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cairn_backend::file::write_atomically;
use serde::{Deserialize, Serialize};

/// The login file's contents.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credentials {
    /// The backend commands use when nothing else names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// Every backend logged in to (and not logged out of), for `cairn logout --all`.
    #[serde(default)]
    pub accounts: Vec<String>,
}

fn path(home: &Path) -> PathBuf {
    home.join("credentials.json")
}

impl Credentials {
    /// The home's credentials; none if the file does not exist.
    pub fn load(home: &Path) -> Result<Credentials> {
        let path = path(home);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a Cairn credentials file", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes the file, readable by its owner only.
    pub fn save(&self, home: &Path) -> Result<()> {
        let path = path(home);
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        write_atomically(&path, &bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("restricting {}", path.display()))?;
        }
        Ok(())
    }
}

/// The backend URL the environment names: `CAIRN_BACKEND_URL`, else Pulumi's
/// `PULUMI_BACKEND_URL`.
pub fn env_backend_url() -> Option<String> {
    ["CAIRN_BACKEND_URL", "PULUMI_BACKEND_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
}
