//! One stack of the workspace: its settings file and its secrets manager, opened on demand.

use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::{Context as _, Result, anyhow};
use cairn_backend::file::write_atomically;
use cairn_engine::config::StackConfigFile;
use cairn_engine::secrets::{
    CachingCrypter, Crypter, PASSPHRASE_PROVIDER, PassphraseCrypter, SecretsError,
    passphrase_provider_state, salt_from_provider_state,
};
use cairn_engine::state::SecretsProvider;

use crate::passphrase::{self, Purpose};
use crate::workspace::Workspace;

/// A stack of the current project.
pub struct Stack<'w> {
    pub workspace: &'w Workspace,
    pub name: String,
}

impl<'w> Stack<'w> {
    /// The stack commands act on (`--stack` or the selected one); it must exist.
    pub fn current(workspace: &'w Workspace) -> Result<Stack<'w>> {
        let name = workspace.current_stack()?;
        if !workspace.backend.stack_exists(workspace.name(), &name)? {
            return Err(anyhow!(
                "stack {name:?} does not exist in {}; create it with `cairn stack init {name}`",
                workspace.backend.url()
            ));
        }
        Ok(Stack { workspace, name })
    }

    pub fn project(&self) -> &str {
        self.workspace.name()
    }

    pub fn config_path(&self) -> Result<PathBuf> {
        self.workspace.stack_config_path(&self.name)
    }

    /// The stack's `Pulumi.<stack>.yaml`; empty if the file does not exist yet.
    pub fn load_config(&self) -> Result<StackConfigFile> {
        let path = self.config_path()?;
        let name = self.workspace.display_path(&path).to_string();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                crate::yaml::check_nesting(&text, &name)?;
                Ok(StackConfigFile::from_yaml(&text, &name)?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StackConfigFile::new(&name)),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    pub fn save_config(&self, config: &StackConfigFile) -> Result<()> {
        Ok(write_atomically(
            &self.config_path()?,
            config.to_yaml().as_bytes(),
        )?)
    }

    /// The stack's encryption salt: from its settings file, else from its stored deployment.
    fn encryption_salt(&self, config: &StackConfigFile) -> Result<Option<String>> {
        if let Some(salt) = &config.encryption_salt {
            return Ok(Some(salt.clone()));
        }
        // `None` for a stack without a checkpoint too: one read of the file, not two.
        let backend = &self.workspace.backend;
        let Some(provider) = backend.stored_secrets_provider(self.project(), &self.name)? else {
            return Ok(None);
        };
        match (&provider.kind[..], &provider.state) {
            (PASSPHRASE_PROVIDER, Some(state)) => {
                Ok(Some(salt_from_provider_state(state)?.to_owned()))
            }
            (kind, _) => Err(anyhow!(
                "stack {:?} uses the {kind:?} secrets provider, which Cairn does not support",
                self.name
            )),
        }
    }

    /// The stack's secrets manager, asking for the passphrase only when a secret is touched.
    /// Fails at first use if the stack has no secrets provider yet.
    pub fn secrets(&self, config: &StackConfigFile) -> Result<LazyCrypter> {
        let interactive = self.workspace.context.interactive;
        Ok(match self.encryption_salt(config)? {
            Some(salt) => LazyCrypter::new(move || {
                let passphrase = passphrase::passphrase(interactive, Purpose::Open)?;
                Ok(PassphraseCrypter::from_salt(&passphrase, &salt)?)
            }),
            None => {
                let name = self.name.clone();
                LazyCrypter::new(move || {
                    Err(anyhow!(
                        "stack {name:?} has no secrets provider (its settings file has no encryptionsalt)"
                    ))
                })
            }
        })
    }

    /// Like [`Stack::secrets`], but first gives the stack a passphrase secrets provider if it has
    /// none (recording the new salt in `config`, which the caller saves).
    pub fn secrets_or_create(&self, config: &mut StackConfigFile) -> Result<LazyCrypter> {
        if self.encryption_salt(config)?.is_none() {
            let passphrase =
                passphrase::passphrase(self.workspace.context.interactive, Purpose::Create)?;
            let (crypter, salt) = PassphraseCrypter::new_salt(&passphrase)?;
            config.encryption_salt = Some(salt);
            return Ok(LazyCrypter::ready(crypter));
        }
        self.secrets(config)
    }

    /// The `secrets_providers` record for this stack's deployments.
    pub fn secrets_provider(&self, config: &StackConfigFile) -> Result<Option<SecretsProvider>> {
        Ok(self.encryption_salt(config)?.map(|salt| SecretsProvider {
            kind: PASSPHRASE_PROVIDER.into(),
            state: Some(passphrase_provider_state(&salt)),
        }))
    }
}

type Opener = Box<dyn Fn() -> Result<PassphraseCrypter> + Send + Sync>;

/// A secrets manager opened on first use, so commands that meet no secret never prompt for a
/// passphrase. Re-encrypting a value read through it yields the same ciphertext.
pub struct LazyCrypter {
    open: Opener,
    opened: OnceLock<Result<CachingCrypter<PassphraseCrypter>, String>>,
}

impl LazyCrypter {
    fn new(open: impl Fn() -> Result<PassphraseCrypter> + Send + Sync + 'static) -> LazyCrypter {
        LazyCrypter {
            open: Box::new(open),
            opened: OnceLock::new(),
        }
    }

    /// The crypter of a stack known only by its state (e.g. another stack a program references):
    /// the passphrase provider's salt from `provider`, the passphrase from the environment
    /// (a deployment cannot prompt).
    pub fn from_state(stack: &str, provider: Option<&SecretsProvider>) -> LazyCrypter {
        let salt = match provider {
            Some(p) if p.kind == PASSPHRASE_PROVIDER => p
                .state
                .as_ref()
                .and_then(|state| salt_from_provider_state(state).ok())
                .map(str::to_owned),
            _ => None,
        };
        let stack = stack.to_owned();
        LazyCrypter::new(move || {
            let salt = salt
                .as_deref()
                .ok_or_else(|| anyhow!("stack {stack:?} has no passphrase secrets provider"))?;
            let passphrase = passphrase::passphrase(false, Purpose::Open)?;
            Ok(PassphraseCrypter::from_salt(&passphrase, salt)?)
        })
    }

    fn ready(crypter: PassphraseCrypter) -> LazyCrypter {
        let lazy = LazyCrypter::new(|| Err(anyhow!("already opened")));
        let _ = lazy.opened.set(Ok(CachingCrypter::new(crypter)));
        lazy
    }

    fn get(&self) -> Result<&CachingCrypter<PassphraseCrypter>, SecretsError> {
        self.opened
            .get_or_init(|| {
                (self.open)()
                    .map(CachingCrypter::new)
                    .map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|message| SecretsError::Unavailable(message.clone()))
    }
}

impl Crypter for LazyCrypter {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        self.get()?.encrypt(plaintext)
    }

    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        self.get()?.decrypt(ciphertext)
    }
}
