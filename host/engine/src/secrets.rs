//! Secrets: the `Crypter` contract and the passphrase secrets manager.

/// Why a secret could not be encrypted or decrypted.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("malformed ciphertext {ciphertext:?}: {reason}")]
    MalformedCiphertext { ciphertext: String, reason: String },
    #[error("failed to decrypt a secret: the passphrase or key is wrong, or the value is corrupt")]
    Decrypt,
}

/// Encrypts and decrypts secret strings. Ciphertexts are self-describing strings
/// (`v1:<b64 nonce>:<b64 ciphertext>` for the passphrase manager).
pub trait Crypter: Send + Sync {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError>;
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError>;
}
