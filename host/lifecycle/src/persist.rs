//! An in-memory backend: the checkpoint and the journal as bytes, checked on every write.
//!
//! Every append replays the whole journal onto the checkpoint with the real `journal::replay`
//! and decodes the result with the real codec, then checks the snapshot's integrity; every save
//! is decoded and checked too. A violation panics (in the engine's task) and is also recorded,
//! so the scenario reports it even if the panic is swallowed.

use std::sync::{Arc, Mutex};

use cairn_engine::deploy::journal::{PersistError, Persister, replay};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{
    DeploymentV3, SecretsMode, SecretsProvider, Snapshot, decode_deployment, encode_deployment,
    verify_integrity,
};

use crate::provider::lock;

/// Reversible "encryption" for tests: `test:<hex>`.
pub struct TestCrypter;

impl Crypter for TestCrypter {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        Ok(format!("test:{}", hex::encode(plaintext)))
    }

    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        let hex_text =
            ciphertext
                .strip_prefix("test:")
                .ok_or_else(|| SecretsError::MalformedCiphertext {
                    ciphertext: ciphertext.to_owned(),
                    reason: "not a test ciphertext".into(),
                })?;
        let bytes = hex::decode(hex_text).map_err(|_| SecretsError::Decrypt)?;
        String::from_utf8(bytes).map_err(|_| SecretsError::Decrypt)
    }
}

pub struct Store {
    pub checkpoint: DeploymentV3,
    pub journal: Vec<u8>,
    /// Every journal line appended since the runner last took them (for the secret scan; the
    /// journal itself is emptied by each save).
    pub written: Vec<u8>,
    pub appends: usize,
    pub saves: usize,
}

pub struct MemPersister {
    pub store: Mutex<Store>,
    pub violations: Mutex<Vec<String>>,
    crypter: Arc<TestCrypter>,
}

/// Decodes a stored deployment and checks its integrity.
pub fn check_deployment(
    deployment: &DeploymentV3,
    crypter: &TestCrypter,
) -> Result<Snapshot, String> {
    let snapshot = decode_deployment(deployment.clone(), Some(crypter))
        .map_err(|e| format!("the stored deployment does not decode: {e}"))?;
    verify_integrity(&snapshot).map_err(|e| format!("integrity violated: {e}"))?;
    Ok(snapshot)
}

impl MemPersister {
    pub fn new(crypter: Arc<TestCrypter>) -> MemPersister {
        let empty = Snapshot::empty(Some(SecretsProvider {
            kind: "test".into(),
            state: None,
        }));
        let checkpoint = encode_deployment(&empty, SecretsMode::Encrypt(&*crypter))
            .expect("an empty snapshot encodes");
        MemPersister {
            store: Mutex::new(Store {
                checkpoint,
                journal: Vec::new(),
                written: Vec::new(),
                appends: 0,
                saves: 0,
            }),
            violations: Mutex::new(Vec::new()),
            crypter,
        }
    }

    /// The stored checkpoint, decoded.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        check_deployment(&lock(&self.store).checkpoint, &self.crypter)
    }

    /// After a crash: the checkpoint becomes the replay of the journal (what recovery does).
    pub fn recover(&self) -> Result<(), String> {
        let mut store = lock(&self.store);
        let recovered = replay(&store.checkpoint, &store.journal)
            .map_err(|e| format!("replaying the journal failed: {e}"))?;
        check_deployment(&recovered, &self.crypter)?;
        store.checkpoint = recovered;
        store.journal.clear();
        Ok(())
    }

    fn violation(&self, message: String) -> ! {
        lock(&self.violations).push(message.clone());
        panic!("{message}");
    }
}

/// The journal's lines, each cut to a readable length.
fn shortened(journal: &[u8]) -> String {
    String::from_utf8_lossy(journal)
        .lines()
        .map(|line| match line.char_indices().nth(240) {
            Some((cut, _)) => format!("  {}…", &line[..cut]),
            None => format!("  {line}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Persister for MemPersister {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        let outcome = {
            let mut store = lock(&self.store);
            store.journal.extend_from_slice(lines);
            store.written.extend_from_slice(lines);
            store.appends += 1;
            replay(&store.checkpoint, &store.journal)
                .map_err(|e| format!("replaying the journal failed: {e}"))
                .and_then(|replayed| check_deployment(&replayed, &self.crypter).map(|_| ()))
                .map_err(|e| {
                    format!(
                        "after journal append #{}: {e}\njournal (lines shortened):\n{}",
                        store.appends,
                        shortened(&store.journal)
                    )
                })
        };
        if let Err(message) = outcome {
            self.violation(message);
        }
        Ok(())
    }

    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        let deployment: DeploymentV3 = match serde_json::from_slice(deployment) {
            Ok(deployment) => deployment,
            Err(e) => self.violation(format!("saving a checkpoint that is not a deployment: {e}")),
        };
        if let Err(e) = check_deployment(&deployment, &self.crypter) {
            self.violation(format!("saving the checkpoint: {e}"));
        }
        let mut store = lock(&self.store);
        store.checkpoint = deployment;
        store.journal.clear();
        store.saves += 1;
        Ok(())
    }
}
