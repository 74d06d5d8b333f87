//! Secrets: the `Crypter` contract and the Pulumi-compatible passphrase secrets manager.
//!
//! The passphrase manager is byte-compatible with Pulumi's: the key is
//! PBKDF2-HMAC-SHA256(passphrase, salt, 1,000,000 rounds), values are AES-256-GCM sealed under a
//! fresh 12-byte nonce and written as `v1:<b64 nonce>:<b64 ciphertext+tag>`, and a stack's
//! `encryptionsalt` is `v1:<b64 salt>:` followed by the encryption of `pulumi`, which proves the
//! passphrase when a stack is opened.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

/// The `type` of the passphrase secrets provider in a deployment's `secrets_providers`.
pub const PASSPHRASE_PROVIDER: &str = "passphrase";

/// The only ciphertext and salt format version Pulumi has ever written.
const VERSION: &str = "v1";
/// PBKDF2 rounds; fixed by Pulumi's format, so it cannot be tuned without breaking interop.
const KDF_ROUNDS: u32 = 1_000_000;
const KEY_LEN: usize = 32;
const SALT_LEN: usize = 8;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
/// The plaintext of the check value stored after the salt.
const CHECK_PLAINTEXT: &str = "pulumi";

/// Why a secret could not be encrypted or decrypted.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("malformed ciphertext {ciphertext:?}: {reason}")]
    MalformedCiphertext { ciphertext: String, reason: String },
    #[error("failed to decrypt a secret: the passphrase or key is wrong, or the value is corrupt")]
    Decrypt,
    /// The stack's `encryptionsalt` (or the provider state's `salt`) cannot be parsed.
    #[error("malformed encryption salt {salt:?}: {reason}")]
    MalformedSalt { salt: String, reason: String },
    /// The passphrase does not decrypt the salt's check value.
    #[error(
        "incorrect passphrase: it cannot decrypt this stack's secrets; \
         check CAIRN_CONFIG_PASSPHRASE"
    )]
    WrongPassphrase,
    /// The `state` of a passphrase secrets provider is not `{"salt": "<string>"}`.
    #[error("malformed passphrase secrets provider state: {0}")]
    MalformedProviderState(String),
    /// AES-GCM refused to seal the value (only possible for absurdly long plaintexts).
    #[error("failed to encrypt a secret")]
    Encrypt,
    /// The secrets manager could not be opened (no passphrase, no provider, ...).
    #[error("{0}")]
    Unavailable(String),
    /// The operating system's random number generator failed.
    #[error("cannot generate random bytes for encryption: {0}")]
    Random(String),
}

/// Encrypts and decrypts secret strings. Ciphertexts are self-describing strings
/// (`v1:<b64 nonce>:<b64 ciphertext>` for the passphrase manager).
pub trait Crypter: Send + Sync {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError>;
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError>;
}

impl<C: Crypter + ?Sized> Crypter for Box<C> {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        (**self).encrypt(plaintext)
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        (**self).decrypt(ciphertext)
    }
}

impl<C: Crypter + ?Sized> Crypter for Arc<C> {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        (**self).encrypt(plaintext)
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        (**self).decrypt(ciphertext)
    }
}

/// Pulumi's passphrase secrets manager: AES-256-GCM under a key derived from a passphrase.
///
/// Deriving the key is deliberately slow (1,000,000 PBKDF2 rounds), so it happens once, when the
/// crypter is built; encrypting and decrypting values is cheap.
pub struct PassphraseCrypter {
    cipher: Aes256Gcm,
    encryption_salt: String,
}

impl fmt::Debug for PassphraseCrypter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The salt is public (it is committed in the stack file); the key never is.
        f.debug_struct("PassphraseCrypter")
            .field("encryption_salt", &self.encryption_salt)
            .finish_non_exhaustive()
    }
}

impl PassphraseCrypter {
    /// Creates a crypter for a new stack: a fresh random salt, plus the `encryptionsalt` string
    /// (`v1:<b64 salt>:v1:<b64 nonce>:<b64 check value>`) to store in the stack file.
    pub fn new_salt(passphrase: &str) -> Result<(Self, String), SecretsError> {
        let salt: [u8; SALT_LEN] = random_bytes()?;
        let nonce: [u8; NONCE_LEN] = random_bytes()?;
        let crypter = Self::with_salt_and_nonce(passphrase, &salt, nonce)?;
        let encryption_salt = crypter.encryption_salt.clone();
        Ok((crypter, encryption_salt))
    }

    /// Opens an existing stack's secrets: parses its `encryptionsalt` and checks that
    /// `passphrase` decrypts the check value, failing with [`SecretsError::WrongPassphrase`]
    /// otherwise.
    pub fn from_salt(passphrase: &str, encryption_salt: &str) -> Result<Self, SecretsError> {
        let malformed = |reason: String| SecretsError::MalformedSalt {
            salt: encryption_salt.to_owned(),
            reason,
        };
        let mut parts = encryption_salt.splitn(3, ':');
        let (Some(version), Some(salt_b64), Some(check)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed(
                "expected `v1:<base64 salt>:<check value>`".to_owned(),
            ));
        };
        if version != VERSION {
            return Err(malformed(format!(
                "unknown version {version:?} (expected `v1:<base64 salt>:<check value>`)"
            )));
        }
        // Any salt length is accepted, as Pulumi does; only its encoding is checked.
        let salt = BASE64
            .decode(salt_b64)
            .map_err(|err| malformed(format!("the salt is not valid base64: {err}")))?;
        // Parse the check value before the slow key derivation, so a corrupt stack file is
        // reported as such rather than as a wrong passphrase.
        let (check_nonce, check_sealed) = parse_ciphertext(check)
            .map_err(|reason| malformed(format!("check value: {reason}")))?;

        let crypter = Self::from_key(&derive_key(passphrase, &salt), encryption_salt.to_owned());
        match crypter.open(&check_nonce, &check_sealed) {
            Ok(plaintext) if plaintext == CHECK_PLAINTEXT.as_bytes() => Ok(crypter),
            _ => Err(SecretsError::WrongPassphrase),
        }
    }

    /// The stack's `encryptionsalt` string this crypter was created or opened with.
    pub fn encryption_salt(&self) -> &str {
        &self.encryption_salt
    }

    /// The deployment's `secrets_providers.state` for this crypter: `{"salt": "<encryptionsalt>"}`.
    pub fn provider_state(&self) -> Value {
        passphrase_provider_state(&self.encryption_salt)
    }

    /// Derives the key from an explicit salt and seals the check value under an explicit nonce;
    /// separate from [`Self::new_salt`] so tests can reproduce exact outputs.
    fn with_salt_and_nonce(
        passphrase: &str,
        salt: &[u8],
        check_nonce: [u8; NONCE_LEN],
    ) -> Result<Self, SecretsError> {
        let mut crypter = Self::from_key(&derive_key(passphrase, salt), String::new());
        let check = crypter.encrypt_with_nonce(CHECK_PLAINTEXT, check_nonce)?;
        crypter.encryption_salt = format!("{VERSION}:{}:{check}", BASE64.encode(salt));
        Ok(crypter)
    }

    fn from_key(key: &[u8; KEY_LEN], encryption_salt: String) -> Self {
        Self {
            cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
            encryption_salt,
        }
    }

    fn encrypt_with_nonce(
        &self,
        plaintext: &str,
        nonce: [u8; NONCE_LEN],
    ) -> Result<String, SecretsError> {
        // Like Go's gcm.Seal: the 16-byte tag is appended to the ciphertext; no associated data.
        let sealed = self
            .cipher
            .encrypt(&Nonce::from(nonce), plaintext.as_bytes())
            .map_err(|_| SecretsError::Encrypt)?;
        Ok(format!(
            "{VERSION}:{}:{}",
            BASE64.encode(nonce),
            BASE64.encode(sealed)
        ))
    }

    fn open(&self, nonce: &[u8; NONCE_LEN], sealed: &[u8]) -> Result<Vec<u8>, SecretsError> {
        self.cipher
            .decrypt(&Nonce::from(*nonce), sealed)
            .map_err(|_| SecretsError::Decrypt)
    }
}

impl Crypter for PassphraseCrypter {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        // A fresh nonce per value: GCM is broken by nonce reuse under one key.
        self.encrypt_with_nonce(plaintext, random_bytes()?)
    }

    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        let (nonce, sealed) =
            parse_ciphertext(ciphertext).map_err(|reason| SecretsError::MalformedCiphertext {
                ciphertext: ciphertext.to_owned(),
                reason,
            })?;
        let plaintext = self.open(&nonce, &sealed)?;
        String::from_utf8(plaintext).map_err(|_| SecretsError::MalformedCiphertext {
            ciphertext: ciphertext.to_owned(),
            reason: "the decrypted value is not UTF-8 text".to_owned(),
        })
    }
}

/// Builds a passphrase provider's `state` for a deployment's `secrets_providers`:
/// `{"salt": "<encryptionsalt>"}`.
pub fn passphrase_provider_state(encryption_salt: &str) -> Value {
    let mut state = serde_json::Map::new();
    state.insert("salt".to_owned(), Value::String(encryption_salt.to_owned()));
    Value::Object(state)
}

/// Reads the `encryptionsalt` string out of a passphrase provider's `state` (`{"salt": "..."}`).
pub fn salt_from_provider_state(state: &Value) -> Result<&str, SecretsError> {
    let Value::Object(fields) = state else {
        return Err(SecretsError::MalformedProviderState(format!(
            "expected an object with a `salt` string, found {state}"
        )));
    };
    match fields.get("salt") {
        Some(Value::String(salt)) => Ok(salt),
        Some(other) => Err(SecretsError::MalformedProviderState(format!(
            "`salt` must be a string, found {other}"
        ))),
        None => Err(SecretsError::MalformedProviderState(
            "the `salt` field is missing".to_owned(),
        )),
    }
}

/// Wraps a [`Crypter`] so that re-encrypting an unchanged secret yields the ciphertext it was
/// read from (or first encrypted to), as Pulumi does, so saving an unchanged stack does not
/// rewrite every secret with a fresh nonce.
///
/// The cache is keyed by plaintext, so equal secrets share one ciphertext while it lives.
pub struct CachingCrypter<C> {
    inner: C,
    /// plaintext → the first ciphertext seen for it.
    cache: Mutex<HashMap<String, String>>,
}

impl<C: Crypter> CachingCrypter<C> {
    /// Wraps `inner` with an empty cache.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped crypter.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// Remembers `ciphertext` for `plaintext` unless one is already known; returns the one kept.
    fn remember(&self, plaintext: String, ciphertext: String) -> String {
        // Each update is a single insert, so a poisoned map is still consistent.
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.entry(plaintext).or_insert(ciphertext).clone()
    }
}

impl<C: fmt::Debug> fmt::Debug for CachingCrypter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the cache: its keys are plaintext secrets.
        let entries = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("CachingCrypter")
            .field("inner", &self.inner)
            .field("cached_secrets", &entries)
            .finish()
    }
}

impl<C: Crypter> Crypter for CachingCrypter<C> {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(plaintext)
            .cloned();
        if let Some(ciphertext) = cached {
            return Ok(ciphertext);
        }
        // The lock is not held while the inner crypter works (it may be slow or remote); if
        // another thread raced us, `remember` keeps the first ciphertext for stability.
        let ciphertext = self.inner.encrypt(plaintext)?;
        Ok(self.remember(plaintext.to_owned(), ciphertext))
    }

    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        let plaintext = self.inner.decrypt(ciphertext)?;
        self.remember(plaintext.clone(), ciphertext.to_owned());
        Ok(plaintext)
    }
}

/// Pulumi's key derivation: PBKDF2-HMAC-SHA256 with 1,000,000 rounds.
fn derive_key(passphrase: &str, salt: &[u8]) -> [u8; KEY_LEN] {
    let mut key = [0u8; KEY_LEN];
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, KDF_ROUNDS, &mut key);
    key
}

fn random_bytes<const N: usize>() -> Result<[u8; N], SecretsError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|err| SecretsError::Random(err.to_string()))?;
    Ok(bytes)
}

/// Splits `v1:<b64 nonce>:<b64 ciphertext+tag>` into its nonce and sealed bytes, or says what is
/// wrong with it.
fn parse_ciphertext(ciphertext: &str) -> Result<([u8; NONCE_LEN], Vec<u8>), String> {
    let parts: Vec<&str> = ciphertext.split(':').collect();
    let [version, nonce_b64, sealed_b64] = parts[..] else {
        return Err(format!(
            "expected `v1:<base64 nonce>:<base64 ciphertext>`, found {} `:`-separated part(s)",
            parts.len()
        ));
    };
    if version != VERSION {
        return Err(format!("unknown version {version:?} (expected \"v1\")"));
    }
    let nonce = BASE64
        .decode(nonce_b64)
        .map_err(|err| format!("the nonce is not valid base64: {err}"))?;
    let nonce: [u8; NONCE_LEN] = nonce
        .as_slice()
        .try_into()
        .map_err(|_| format!("the nonce is {} bytes, expected {NONCE_LEN}", nonce.len()))?;
    let sealed = BASE64
        .decode(sealed_b64)
        .map_err(|err| format!("the ciphertext is not valid base64: {err}"))?;
    if sealed.len() < TAG_LEN {
        return Err(format!(
            "the ciphertext is {} bytes, shorter than the {TAG_LEN}-byte authentication tag",
            sealed.len()
        ));
    }
    Ok((nonce, sealed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crypter with a fixed key, skipping the slow key derivation for tests of the value format.
    fn fast_crypter() -> PassphraseCrypter {
        PassphraseCrypter::from_key(&[7u8; KEY_LEN], "v1:test-salt:unused".to_owned())
    }

    fn b64(bytes: &[u8]) -> String {
        BASE64.encode(bytes)
    }

    #[test]
    fn crypters_are_send_and_sync() {
        fn assert_crypter<C: Crypter>() {}
        assert_crypter::<PassphraseCrypter>();
        assert_crypter::<CachingCrypter<PassphraseCrypter>>();
        assert_crypter::<CachingCrypter<Box<dyn Crypter>>>();
        assert_crypter::<Arc<dyn Crypter>>();
    }

    #[test]
    fn values_round_trip_with_fresh_nonces() {
        let crypter = fast_crypter();
        for plaintext in [
            "",
            "hunter2",
            "pässwörd ✓ 秘密 🔑",
            "a:b:c",
            &"x".repeat(10_000),
        ] {
            let first = crypter.encrypt(plaintext).expect("encrypt");
            let second = crypter.encrypt(plaintext).expect("encrypt");
            assert!(first.starts_with("v1:"), "{first}");
            assert_ne!(first, second, "each encryption must use a fresh nonce");
            assert_eq!(crypter.decrypt(&first).expect("decrypt"), plaintext);
            assert_eq!(crypter.decrypt(&second).expect("decrypt"), plaintext);

            // The format: 12-byte nonce, ciphertext the plaintext's length plus a 16-byte tag.
            let (nonce, sealed) = parse_ciphertext(&first).expect("well-formed");
            assert_eq!(nonce.len(), NONCE_LEN);
            assert_eq!(sealed.len(), plaintext.len() + TAG_LEN);
        }
    }

    #[test]
    fn malformed_ciphertexts_name_the_problem() {
        let crypter = fast_crypter();
        let nonce = b64(&[1u8; NONCE_LEN]);
        let tag_sized = b64(&[2u8; TAG_LEN]);
        let rows: Vec<(String, &str)> = vec![
            (String::new(), "found 1 `:`-separated part(s)"),
            ("secret".to_owned(), "found 1 `:`-separated part(s)"),
            (
                format!("{nonce}:{tag_sized}"),
                "found 2 `:`-separated part(s)",
            ),
            (format!("v2:{nonce}:{tag_sized}"), "unknown version \"v2\""),
            (format!("v1:{nonce}"), "found 2 `:`-separated part(s)"),
            (
                format!("v1:{nonce}:{tag_sized}:extra"),
                "found 4 `:`-separated part(s)",
            ),
            (
                format!("v1:!!!!:{tag_sized}"),
                "the nonce is not valid base64",
            ),
            (
                format!("v1:{}:{tag_sized}", b64(&[1u8; 8])),
                "the nonce is 8 bytes, expected 12",
            ),
            (
                format!("v1::{tag_sized}"),
                "the nonce is 0 bytes, expected 12",
            ),
            (
                format!("v1:{nonce}:not*base64"),
                "the ciphertext is not valid base64",
            ),
            (
                format!("v1:{nonce}:{}", b64(&[2u8; 10])),
                "the ciphertext is 10 bytes, shorter than the 16-byte authentication tag",
            ),
            (
                format!("v1:{nonce}:"),
                "the ciphertext is 0 bytes, shorter than the 16-byte authentication tag",
            ),
        ];
        for (ciphertext, expected) in rows {
            let err = crypter.decrypt(&ciphertext).expect_err(&ciphertext);
            assert!(
                matches!(&err, SecretsError::MalformedCiphertext { ciphertext: c, .. } if *c == ciphertext),
                "{ciphertext:?}: {err:?}"
            );
            let message = err.to_string();
            assert!(
                message.contains(expected),
                "{ciphertext:?}: {message:?} should contain {expected:?}"
            );
        }
    }

    #[test]
    fn tampered_or_foreign_ciphertexts_fail_to_decrypt() {
        let crypter = fast_crypter();
        let ciphertext = crypter.encrypt("the launch codes").expect("encrypt");
        let (nonce, sealed) = parse_ciphertext(&ciphertext).expect("well-formed");

        let mut flipped = sealed.clone();
        flipped[0] ^= 1;
        let mut other_nonce = nonce;
        other_nonce[0] ^= 1;
        let rows = [
            (
                "flipped ciphertext bit",
                format!("v1:{}:{}", b64(&nonce), b64(&flipped)),
            ),
            (
                "other nonce",
                format!("v1:{}:{}", b64(&other_nonce), b64(&sealed)),
            ),
            (
                "truncated by one byte",
                format!("v1:{}:{}", b64(&nonce), b64(&sealed[..sealed.len() - 1])),
            ),
        ];
        for (case, tampered) in rows {
            let err = crypter.decrypt(&tampered).expect_err(case);
            assert!(matches!(err, SecretsError::Decrypt), "{case}: {err:?}");
        }

        let other_key = PassphraseCrypter::from_key(&[8u8; KEY_LEN], String::new());
        assert!(matches!(
            other_key.decrypt(&ciphertext),
            Err(SecretsError::Decrypt)
        ));
    }

    #[test]
    fn non_utf8_plaintexts_are_rejected() {
        let crypter = fast_crypter();
        let nonce = [3u8; NONCE_LEN];
        let sealed = crypter
            .cipher
            .encrypt(&Nonce::from(nonce), &[0xff, 0xfe][..])
            .expect("seal");
        let ciphertext = format!("v1:{}:{}", b64(&nonce), b64(&sealed));
        let err = crypter.decrypt(&ciphertext).expect_err("not UTF-8");
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn new_salt_opens_with_the_same_passphrase_only() {
        let (created, encryption_salt) =
            PassphraseCrypter::new_salt("correct horse battery staple").expect("new salt");
        assert_eq!(created.encryption_salt(), encryption_salt);

        // `v1:<b64 8-byte salt>:v1:<b64 nonce>:<b64 ciphertext>`
        let mut parts = encryption_salt.splitn(3, ':');
        assert_eq!(parts.next(), Some("v1"));
        let salt = BASE64.decode(parts.next().expect("salt")).expect("base64");
        assert_eq!(salt.len(), SALT_LEN);
        let check = parts.next().expect("check value");
        assert_eq!(created.decrypt(check).expect("check"), CHECK_PLAINTEXT);

        let opened = PassphraseCrypter::from_salt("correct horse battery staple", &encryption_salt)
            .expect("right passphrase");
        let secret = created.encrypt("s3cr3t").expect("encrypt");
        assert_eq!(opened.decrypt(&secret).expect("decrypt"), "s3cr3t");
        let back = opened.encrypt("other").expect("encrypt");
        assert_eq!(created.decrypt(&back).expect("decrypt"), "other");

        let err = PassphraseCrypter::from_salt("Correct horse battery staple", &encryption_salt)
            .expect_err("wrong passphrase");
        assert!(matches!(err, SecretsError::WrongPassphrase), "{err:?}");
        assert!(err.to_string().starts_with("incorrect passphrase"), "{err}");
    }

    #[test]
    fn fixed_salt_and_nonce_reproduce_pulumis_salt_exactly() {
        // Rebuilds the `encryptionsalt` of pulumi/pulumi's pkg/secrets/passphrase/manager_test.go
        // (passphrase "password") from its salt and nonce bytes: key derivation, sealing and
        // layout must all match Pulumi byte for byte.
        let salt = BASE64.decode("fozI5u6B030=").expect("base64");
        let nonce = BASE64.decode("F+6ZduKKd8G0/V7L").expect("base64");
        let nonce: [u8; NONCE_LEN] = nonce.as_slice().try_into().expect("12 bytes");
        let crypter =
            PassphraseCrypter::with_salt_and_nonce("password", &salt, nonce).expect("create");
        assert_eq!(
            crypter.encryption_salt(),
            "v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ=="
        );
    }

    #[test]
    fn malformed_salts_name_the_problem() {
        let check = format!("v1:{}:{}", b64(&[1u8; NONCE_LEN]), b64(&[2u8; 22]));
        let rows: Vec<(String, &str)> = vec![
            (String::new(), "expected `v1:<base64 salt>:<check value>`"),
            (
                "v1:c2FsdA==".to_owned(),
                "expected `v1:<base64 salt>:<check value>`",
            ),
            // Pulumi's own `brokenState` test value (the leading `v1:` is missing).
            (
                "fozI5u6B030=:v1:F+6ZduL:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ==".to_owned(),
                "unknown version \"fozI5u6B030=\"",
            ),
            (format!("v2:c2FsdA==:{check}"), "unknown version \"v2\""),
            (
                format!("v1:c2F*dA==:{check}"),
                "the salt is not valid base64",
            ),
            (
                "v1:c2FsdA==:garbage".to_owned(),
                "check value: expected `v1:<base64 nonce>:<base64 ciphertext>`",
            ),
            (
                format!("v1:c2FsdA==:v1:{}:{}", b64(&[1u8; 4]), b64(&[2u8; 22])),
                "check value: the nonce is 4 bytes, expected 12",
            ),
            (
                format!(
                    "v1:c2FsdA==:v1:{}:{}",
                    b64(&[1u8; NONCE_LEN]),
                    b64(&[2u8; 3])
                ),
                "check value: the ciphertext is 3 bytes",
            ),
        ];
        for (salt, expected) in rows {
            // Malformed salts are rejected before the slow key derivation.
            let err = PassphraseCrypter::from_salt("pw", &salt).expect_err(&salt);
            assert!(
                matches!(&err, SecretsError::MalformedSalt { salt: s, .. } if *s == salt),
                "{salt:?}: {err:?}"
            );
            let message = err.to_string();
            assert!(
                message.contains(expected),
                "{salt:?}: {message:?} should contain {expected:?}"
            );
        }
    }

    /// Known answers produced by Pulumi itself.
    #[test]
    fn decrypts_values_written_by_pulumi() {
        // github.com/pulumi/pulumi, pkg/secrets/passphrase/manager_test.go: the `state` salt, which
        // the tests open with PULUMI_CONFIG_PASSPHRASE="password" and reject with "password123".
        let pulumi_salt = "v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ==";
        let crypter = PassphraseCrypter::from_salt("password", pulumi_salt).expect("right");
        // Sealing "pulumi" under the check value's nonce must reproduce Pulumi's bytes exactly.
        let check = crypter
            .encrypt_with_nonce(CHECK_PLAINTEXT, {
                let nonce = BASE64.decode("F+6ZduKKd8G0/V7L").expect("base64");
                nonce.as_slice().try_into().expect("12 bytes")
            })
            .expect("encrypt");
        assert_eq!(
            check,
            "v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ=="
        );
        assert!(matches!(
            PassphraseCrypter::from_salt("password123", pulumi_salt),
            Err(SecretsError::WrongPassphrase)
        ));

        // github.com/mheers/pulumi-helper, stack/crypt_test.go (TestDecrypt): a value encrypted
        // by Pulumi's passphrase manager (`passphrase.GetPassphraseSecretsManager`) with
        // PULUMI_CONFIG_PASSPHRASE="foo".
        let salt = "v1:LAQ7P6sT/+w=:v1:WejwuMb5G4TZsR/r:xZvrv45hbT2QRrHCkQrepVv3xQfMjw==";
        let secure = "v1:6rgJQkU0YY5NFozT:HN1XFZSfr2YW1Pi1QtMfUJjad4w=";
        let crypter = PassphraseCrypter::from_salt("foo", salt).expect("right passphrase");
        assert_eq!(crypter.decrypt(secure).expect("decrypt"), "test");
    }

    #[test]
    fn empty_passphrases_are_allowed() {
        // Pulumi's passphrase secrets-plugin test `TestPassphraseEmptyPassphraseIsValid`
        // (`emptyPassphraseState`): a salt Pulumi created with PULUMI_CONFIG_PASSPHRASE="".
        let pulumi_salt = "v1:LVuDkcjhUns=:v1:WPbL+tmbxnqWswQ2:lebZxStyHT3IZkmbN+3xCx9zqtoPog==";
        let crypter = PassphraseCrypter::from_salt("", pulumi_salt).expect("empty passphrase");
        let secret = crypter.encrypt("").expect("encrypt");
        assert_eq!(crypter.decrypt(&secret).expect("decrypt"), "");
        assert!(matches!(
            PassphraseCrypter::from_salt("password", pulumi_salt),
            Err(SecretsError::WrongPassphrase)
        ));
    }

    #[test]
    fn caching_crypter_keeps_ciphertexts_stable() {
        let caching = CachingCrypter::new(fast_crypter());
        let original = caching.inner().encrypt("db-password").expect("encrypt");

        // Read from state, then written back unchanged: the same ciphertext.
        assert_eq!(caching.decrypt(&original).expect("decrypt"), "db-password");
        assert_eq!(caching.encrypt("db-password").expect("encrypt"), original);

        // A second ciphertext of the same value does not displace the first.
        let other = caching.inner().encrypt("db-password").expect("encrypt");
        assert_eq!(caching.decrypt(&other).expect("decrypt"), "db-password");
        assert_eq!(caching.encrypt("db-password").expect("encrypt"), original);

        // New values are encrypted once and then reused.
        let fresh = caching.encrypt("api-key").expect("encrypt");
        assert_eq!(caching.encrypt("api-key").expect("encrypt"), fresh);
        assert_eq!(caching.decrypt(&fresh).expect("decrypt"), "api-key");

        // Failures propagate and cache nothing.
        assert!(matches!(
            caching.decrypt("v1:bad"),
            Err(SecretsError::MalformedCiphertext { .. })
        ));
        let debug = format!("{caching:?}");
        assert!(debug.contains("cached_secrets: 2"), "{debug}");
        assert!(
            !debug.contains("db-password") && !debug.contains("api-key"),
            "{debug}"
        );
    }

    #[test]
    fn debug_output_hides_the_key() {
        let crypter = fast_crypter();
        assert_eq!(
            format!("{crypter:?}"),
            "PassphraseCrypter { encryption_salt: \"v1:test-salt:unused\", .. }"
        );
    }

    #[test]
    fn provider_state_round_trips() {
        let salt = "v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ==";
        let state = passphrase_provider_state(salt);
        assert_eq!(state, serde_json::json!({ "salt": salt }));
        assert_eq!(salt_from_provider_state(&state).expect("salt"), salt);
        assert_eq!(
            fast_crypter().provider_state(),
            serde_json::json!({ "salt": "v1:test-salt:unused" })
        );

        let rows = [
            (
                serde_json::json!("v1:abc"),
                "expected an object with a `salt` string",
            ),
            (serde_json::json!({}), "the `salt` field is missing"),
            (
                serde_json::json!({ "salt": 7 }),
                "`salt` must be a string, found 7",
            ),
        ];
        for (state, expected) in rows {
            let err = salt_from_provider_state(&state).expect_err("malformed");
            assert!(err.to_string().contains(expected), "{state}: {err}");
        }
    }
}
