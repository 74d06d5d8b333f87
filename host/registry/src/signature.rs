//! Ed25519 signatures of provider components in wasmsign2's format, the key files it reads, and
//! the trust policy (`$CAIRN_HOME/trust.json`) saying whose signatures a registry's components
//! need.
//!
//! The format is wasmsign2 0.2's (the `wasmsign2` crate does the hashing, signing and checking,
//! so files signed by either tool verify with the other): a custom section named `signature`,
//! first after the preamble, holding Ed25519 signatures of the SHA-256 of every byte after it.
//! Everything after the signature is covered, the nested `cairn:manifest` included; a tool
//! that rewrites the component afterwards (`wasm-tools strip`) breaks it, so strip first.
//!
//! A key is named by its fingerprint, `ed25519:` followed by the 64 lower-case hex digits of
//! the 32-byte public key: the key itself, so a trust entry needs no key file to verify. Its
//! key id, stored next to each signature Cairn makes (as `wasmsign2 sign -K` does), is the
//! first 12 bytes of HMAC-SHA256(key = public key, "key_id"), printed as 24 hex digits.
//!
//! wasmsign2 reads what it is given on trust: a length in a section header or signature entry
//! is allocated before it is checked against the bytes that remain. Components come from
//! registries, so every length is checked here first ([`layout`], [`check_signature_data`])
//! and wasmsign2 only ever sees input whose lengths fit.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::error::RegistryError;
use crate::reference::{Reference, SCHEME};

/// The custom section holding the signatures (wasmsign2's `SIGNATURE_SECTION_HEADER_NAME`).
const SIGNATURE_SECTION: &str = "signature";
/// The preambles wasmsign2 accepts: a core module's and a component's.
const CORE_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
/// wasmsign2's caps on hash sets and signatures per set, and its version/type/hash ids (all 1).
const MAX_HASHES: u32 = 64;
const MAX_SIGNATURES: u32 = 256;
const FORMAT_VERSION: u8 = 1;
const ED25519: u8 = 1;
const ED25519_SIGNATURE_BYTES: usize = 64;
/// How a fingerprint starts.
pub const FINGERPRINT_PREFIX: &str = "ed25519:";
/// The trust policy's file in the Cairn home.
pub const TRUST_FILE: &str = "trust.json";
/// Key files are small (a PEM secret key is 119 bytes); anything larger is not one.
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// An Ed25519 public key that signatures are checked against.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PublicKey {
    /// Always with its default key id attached, so signatures naming another key id are
    /// skipped without a signature check (as `wasmsign2 verify` does).
    key: wasmsign2::PublicKey,
}

/// A secret key to sign with, and its public half.
pub struct SecretKeyFile {
    secret: wasmsign2::SecretKey,
    public: PublicKey,
}

/// The key a valid signature was made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// `ed25519:<64 hex digits>`: the public key.
    pub fingerprint: String,
    /// The key id (24 hex digits).
    pub key_id: String,
}

impl fmt::Display for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (key id {})", self.fingerprint, self.key_id)
    }
}

impl PublicKey {
    fn new(key: wasmsign2::PublicKey) -> Result<PublicKey, String> {
        // Constructors only check the length; a key that is not a point could never verify.
        key.pk
            .validate()
            .map_err(|e| format!("not a valid Ed25519 public key ({e})"))?;
        Ok(PublicKey {
            key: wasmsign2::PublicKey {
                key_id: None,
                ..key
            }
            .attach_default_key_id(),
        })
    }

    /// Reads a public key file in any format wasmsign2 reads: its raw format (`0x01` and the
    /// 32-byte key), PEM (`-----BEGIN PUBLIC KEY-----`), DER, or OpenSSH (`ssh-ed25519 …`,
    /// the first Ed25519 key of the file). Errors name the file.
    pub fn load(path: &Path) -> Result<PublicKey, RegistryError> {
        let bytes = read_key_file(path)?;
        PublicKey::parse(&path.display().to_string(), &bytes)
    }

    /// Parses the contents of a public key file; `name` is what errors call it.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<PublicKey, RegistryError> {
        parse_public(bytes)
            .and_then(PublicKey::new)
            .map_err(|message| RegistryError::KeyFile {
                file: name.to_owned(),
                message,
            })
    }

    /// The key a fingerprint (`ed25519:<64 lower-case hex digits>`) names.
    pub fn from_fingerprint(text: &str) -> Result<PublicKey, RegistryError> {
        let bad = |why: String| RegistryError::BadFingerprint {
            text: text.to_owned(),
            why,
        };
        let digits = text
            .strip_prefix(FINGERPRINT_PREFIX)
            .ok_or_else(|| bad(format!("it must start with {FINGERPRINT_PREFIX}")))?;
        if digits.len() != 64
            || !digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(bad(format!(
                "{FINGERPRINT_PREFIX} must be followed by 64 lower-case hex digits"
            )));
        }
        let mut raw = [0u8; 33];
        raw[0] = ED25519;
        hex::decode_to_slice(digits, &mut raw[1..]).map_err(|e| bad(e.to_string()))?;
        wasmsign2::PublicKey::from_bytes(&raw)
            .map_err(|e| e.to_string())
            .and_then(PublicKey::new)
            .map_err(bad)
    }

    /// `ed25519:<64 lower-case hex digits>`.
    pub fn fingerprint(&self) -> String {
        format!("{FINGERPRINT_PREFIX}{}", hex::encode(self.key.pk.as_ref()))
    }

    /// The key id stored with its signatures, 24 hex digits.
    pub fn key_id(&self) -> String {
        hex::encode(self.key.key_id().map(Vec::as_slice).unwrap_or_default())
    }

    /// The key as an OpenSSL-compatible PEM file.
    pub fn to_pem(&self) -> String {
        self.key.to_pem()
    }

    fn signer(&self) -> Signer {
        Signer {
            fingerprint: self.fingerprint(),
            key_id: self.key_id(),
        }
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.fingerprint())
    }
}

impl SecretKeyFile {
    /// Reads a secret key file in any format wasmsign2 reads: its raw format (`0x81`, the seed
    /// and the public key), PEM (`-----BEGIN PRIVATE KEY-----`, PKCS#8), DER, or an
    /// unencrypted OpenSSH key (`-----BEGIN OPENSSH PRIVATE KEY-----`, the first Ed25519 key).
    /// Errors name the file.
    pub fn load(path: &Path) -> Result<SecretKeyFile, RegistryError> {
        let bytes = read_key_file(path)?;
        SecretKeyFile::parse(&path.display().to_string(), &bytes)
    }

    /// Parses the contents of a secret key file; `name` is what errors call it.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<SecretKeyFile, RegistryError> {
        parse_secret(bytes)
            .and_then(SecretKeyFile::new)
            .map_err(|message| RegistryError::KeyFile {
                file: name.to_owned(),
                message,
            })
    }

    /// A new random key.
    pub fn generate() -> SecretKeyFile {
        let pair = wasmsign2::KeyPair::generate();
        SecretKeyFile {
            public: PublicKey {
                key: pair.pk.attach_default_key_id(),
            },
            secret: pair.sk,
        }
    }

    fn new(secret: wasmsign2::SecretKey) -> Result<SecretKeyFile, String> {
        // A 64-byte secret key repeats its public key after the seed; signing uses that copy,
        // so one that does not match the seed would only make signatures nothing verifies.
        secret
            .sk
            .validate_public_key(&secret.sk.public_key())
            .map_err(|_| "a damaged key: its public half does not belong to its seed".to_owned())?;
        let public = PublicKey::new(wasmsign2::PublicKey {
            pk: secret.sk.public_key(),
            key_id: None,
        })?;
        Ok(SecretKeyFile { secret, public })
    }

    /// The public half.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The key as an OpenSSL-compatible PEM file (PKCS#8).
    pub fn to_pem(&self) -> String {
        self.secret.to_pem()
    }
}

impl fmt::Debug for SecretKeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKeyFile({}, [secret])", self.public.fingerprint())
    }
}

fn read_key_file(path: &Path) -> Result<Vec<u8>, RegistryError> {
    let bad = |message: String| RegistryError::KeyFile {
        file: path.display().to_string(),
        message,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| bad(format!("cannot read it: {e}")))?
        .len();
    if size > MAX_KEY_FILE_BYTES {
        return Err(bad(format!(
            "is {size} bytes; a key file is at most {MAX_KEY_FILE_BYTES}"
        )));
    }
    std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))
}

const FORMATS: &str =
    "wasmsign2's raw format, PEM, DER or OpenSSH (ssh-keygen -t ed25519), Ed25519 keys only";

/// A public key in whichever format the bytes are; the error says what they looked like.
fn parse_public(bytes: &[u8]) -> Result<wasmsign2::PublicKey, String> {
    match (bytes.first(), bytes.len()) {
        (Some(0x01), 33) => {
            return wasmsign2::PublicKey::from_bytes(bytes).map_err(|e| e.to_string());
        }
        (Some(0x81), 65) => {
            return Err(
                "a secret key (wasmsign2's raw format), not a public key; never hand it out".into(),
            );
        }
        _ => {}
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let text = text.trim_start();
        if text.starts_with("-----BEGIN PUBLIC KEY-----") {
            return wasmsign2::PublicKey::from_pem(text)
                .map_err(|_| "a PEM public key, but not an Ed25519 one".into());
        }
        if text.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----")
            || text.starts_with("-----BEGIN PRIVATE KEY-----")
            || text.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----")
        {
            return Err("a secret key, not a public key; never hand it out".into());
        }
        if let Some(label) = pem_label(text) {
            return Err(format!(
                "a PEM file of a {label}, not an Ed25519 public key ({FORMATS})"
            ));
        }
        if text.lines().any(is_openssh_public_line) {
            return wasmsign2::PublicKey::from_openssh(text).map_err(|_| {
                "an OpenSSH public key file without an ssh-ed25519 key (only Ed25519 keys sign components)"
                    .into()
            });
        }
    }
    if let Ok(key) = wasmsign2::PublicKey::from_der(bytes) {
        return Ok(key);
    }
    if wasmsign2::SecretKey::from_der(bytes).is_ok() {
        return Err("a secret key (DER), not a public key; never hand it out".into());
    }
    Err(format!("not a public key Cairn reads ({FORMATS})"))
}

/// A secret key in whichever format the bytes are; the error says what they looked like.
fn parse_secret(bytes: &[u8]) -> Result<wasmsign2::SecretKey, String> {
    match (bytes.first(), bytes.len()) {
        (Some(0x81), 65) => {
            return wasmsign2::SecretKey::from_bytes(bytes).map_err(|e| e.to_string());
        }
        (Some(0x01), 33) => {
            return Err(
                "a public key (wasmsign2's raw format); signing needs the secret key".into(),
            );
        }
        _ => {}
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let text = text.trim_start();
        if text.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----") {
            return openssh_secret(text);
        }
        if text.starts_with("-----BEGIN PRIVATE KEY-----") {
            return wasmsign2::SecretKey::from_pem(text)
                .map_err(|_| "a PEM private key, but not an Ed25519 one (PKCS#8)".into());
        }
        if text.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            return Err(
                "an encrypted PEM private key; Cairn reads unencrypted keys only (openssl pkey -in FILE -out PLAIN)"
                    .into(),
            );
        }
        if text.starts_with("-----BEGIN PUBLIC KEY-----")
            || text.lines().any(is_openssh_public_line)
        {
            return Err("a public key; signing needs the secret key".into());
        }
        if let Some(label) = pem_label(text) {
            return Err(format!(
                "a PEM file of a {label}, not an Ed25519 secret key ({FORMATS})"
            ));
        }
    }
    if let Ok(key) = wasmsign2::SecretKey::from_der(bytes) {
        return Ok(key);
    }
    if wasmsign2::PublicKey::from_der(bytes).is_ok() {
        return Err("a public key (DER); signing needs the secret key".into());
    }
    Err(format!("not a secret key Cairn reads ({FORMATS})"))
}

/// The label of a PEM file (`RSA PRIVATE KEY` of `-----BEGIN RSA PRIVATE KEY-----`).
fn pem_label(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("-----BEGIN ")?;
    rest.split_once("-----").map(|(label, _)| label)
}

fn is_openssh_public_line(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("ssh-") || line.starts_with("ecdsa-") || line.starts_with("sk-")
}

/// The first Ed25519 key of an unencrypted OpenSSH private key file (`openssh-key-v1`).
///
/// Read here rather than by wasmsign2's `from_openssh`: the `ssh-keys` crate under it panics
/// on a key blob that is not 64 bytes, and cannot tell an encrypted key from a damaged one.
fn openssh_secret(text: &str) -> Result<wasmsign2::SecretKey, String> {
    const END: &str = "-----END OPENSSH PRIVATE KEY-----";
    const MAGIC: &[u8] = b"openssh-key-v1\0";
    let damaged = |what: &str| format!("a damaged OpenSSH private key ({what})");
    let body = text
        .strip_prefix("-----BEGIN OPENSSH PRIVATE KEY-----")
        .and_then(|rest| rest.split_once(END))
        .map(|(body, _)| body)
        .ok_or_else(|| damaged("no END line"))?;
    let base64: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let blob = base64::engine::general_purpose::STANDARD
        .decode(base64)
        .map_err(|_| damaged("not base64"))?;
    let mut r = blob
        .strip_prefix(MAGIC)
        .map(SshReader)
        .ok_or_else(|| damaged("not openssh-key-v1"))?;
    let short = || damaged("truncated");
    let cipher = r.string().ok_or_else(short)?;
    let kdf = r.string().ok_or_else(short)?;
    let _kdf_options = r.string().ok_or_else(short)?;
    if cipher != b"none" || kdf != b"none" {
        return Err(
            "an OpenSSH private key protected by a passphrase; Cairn reads unencrypted keys only (ssh-keygen -t ed25519 -N '', or ssh-keygen -p -N '' -f COPY)"
                .into(),
        );
    }
    // N public keys, then one section holding the N private keys in turn; OpenSSH writes
    // N = 1, and the first key is the one read (as wasmsign2 reads the first Ed25519 one).
    let count = r.u32().ok_or_else(short)?;
    if count == 0 {
        return Err(damaged("no key"));
    }
    for _ in 0..count {
        r.string().ok_or_else(short)?;
    }
    let mut p = SshReader(r.string().ok_or_else(short)?);
    let (check1, check2) = (p.u32().ok_or_else(short)?, p.u32().ok_or_else(short)?);
    if check1 != check2 {
        return Err(damaged("its check numbers differ"));
    }
    let kind = p.string().ok_or_else(short)?;
    if kind != b"ssh-ed25519" {
        return Err(format!(
            "an OpenSSH {} key, not an Ed25519 one (ssh-keygen -t ed25519)",
            String::from_utf8_lossy(kind)
        ));
    }
    let _public = p.string().ok_or_else(short)?;
    let secret = p.string().ok_or_else(short)?;
    if secret.len() != 64 {
        return Err(damaged("an Ed25519 key that is not 64 bytes"));
    }
    let mut raw = Vec::with_capacity(65);
    raw.push(0x81);
    raw.extend_from_slice(secret);
    wasmsign2::SecretKey::from_bytes(&raw).map_err(|e| e.to_string())
}

/// SSH wire format: big-endian `u32`s and `u32`-length-prefixed strings.
struct SshReader<'a>(&'a [u8]);

impl<'a> SshReader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*head))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (string, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(string)
    }
}

/// Signs `component` with `key`, storing the key id with the signature (as `wasmsign2 sign
/// -K` does). A component already signed keeps its signatures: this one is added next to them
/// (wasmsign2's multi-signature form). The signature covers every byte after it, the manifest
/// included: anything that rewrites the component must run before, never after.
pub fn sign(component: &[u8], key: &SecretKeyFile) -> Result<Vec<u8>, RegistryError> {
    let before = layout(component)?;
    if let Some(payload) = before.signature {
        check_signature_data(payload)?;
    }
    let module = wasmsign2::Module::deserialize(&mut Cursor::new(component))
        .map_err(|e| RegistryError::NotWasm { why: e.to_string() })?;
    let public = key.public_key();
    let (module, _) = key
        .secret
        .sign_multi(module, public.key.key_id(), false, false)
        .map_err(|e| match e {
            wasmsign2::WSError::DuplicateSignature => RegistryError::AlreadySigned {
                key: public.fingerprint(),
            },
            e => RegistryError::Signing { why: e.to_string() },
        })?;
    let mut signed = Vec::with_capacity(component.len() + 256);
    module
        .serialize(&mut signed)
        .map_err(|e| RegistryError::Signing { why: e.to_string() })?;
    // wasmsign2 writes every section anew, with the shortest length encodings; a component
    // written with longer ones would change under the signatures it already carries.
    if before.signature.is_some() && layout(&signed)?.signed != before.signed {
        return Err(RegistryError::Signing {
            why: "the component's sections would be re-encoded, breaking the signatures it already carries".into(),
        });
    }
    // Cheap (milliseconds), and a signature nothing can verify must never be written.
    match examine(&signed, std::slice::from_ref(public))? {
        Examination::Valid(_) => Ok(signed),
        _ => Err(RegistryError::Signing {
            why: "the new signature does not verify".into(),
        }),
    }
}

/// Checks that `component` carries a valid signature by one of `keys` over everything after
/// the signature section; the signer is the first of `keys` (in order) that signed it.
///
/// Errors: [`RegistryError::Unsigned`] (no signature section),
/// [`RegistryError::NoValidSignature`] (signed, but by none of `keys`, or changed since),
/// [`RegistryError::MalformedSignature`] and [`RegistryError::NotWasm`].
pub fn verify(component: &[u8], keys: &[PublicKey]) -> Result<Signer, RegistryError> {
    match examine(component, keys)? {
        Examination::Valid(signer) => Ok(signer),
        Examination::Unsigned => Err(RegistryError::Unsigned),
        Examination::Invalid { .. } => Err(RegistryError::NoValidSignature {
            keys: describe_keys(keys),
        }),
    }
}

/// "key ed25519:…" or "any of the keys ed25519:…, ed25519:…".
fn describe_keys(keys: &[PublicKey]) -> String {
    match keys {
        [] => "any key (none was given)".to_owned(),
        [key] => format!("key {key}"),
        keys => format!(
            "any of the keys {}",
            keys.iter()
                .map(PublicKey::fingerprint)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What a component's signatures say about some keys.
enum Examination {
    Unsigned,
    Valid(Signer),
    /// Signed, but by none of the keys; `claimed` are those of the keys whose key id a
    /// signature names (signed by that key once, and changed since — or forged).
    Invalid {
        claimed: Vec<PublicKey>,
    },
}

fn examine(component: &[u8], keys: &[PublicKey]) -> Result<Examination, RegistryError> {
    let layout = layout(component)?;
    let Some(payload) = layout.signature else {
        return Ok(Examination::Unsigned);
    };
    let key_ids = check_signature_data(payload)?;
    let set = wasmsign2::PublicKeySet::new(keys.iter().map(|k| k.key.clone()).collect());
    let valid = match set.verify(&mut Cursor::new(component), None) {
        Ok(valid) => valid.into_iter().cloned().collect(),
        Err(wasmsign2::WSError::VerificationFailed) => Vec::new(),
        Err(wasmsign2::WSError::NoSignatures) => return Ok(Examination::Unsigned),
        Err(e) => {
            return Err(RegistryError::MalformedSignature { why: e.to_string() });
        }
    };
    if let Some(signer) = keys.iter().find(|k| valid.contains(&k.key)) {
        return Ok(Examination::Valid(signer.signer()));
    }
    let claimed = keys
        .iter()
        .filter(|k| k.key.key_id().is_some_and(|id| key_ids.contains(id)))
        .cloned()
        .collect();
    Ok(Examination::Invalid { claimed })
}

/// Where a component's signature is, and what it covers.
struct Layout<'a> {
    /// The contents (after the name) of the `signature` section, when the first section is one.
    signature: Option<&'a [u8]>,
    /// Every byte after the signature section (after the preamble when there is none).
    signed: &'a [u8],
}

/// Walks the top-level sections as wasmsign2 will (each an id byte below 0x80, a LEB128 size,
/// the contents; a custom section's name a LEB128 length and UTF-8), checking every size
/// against what remains.
fn layout(component: &[u8]) -> Result<Layout<'_>, RegistryError> {
    let not_wasm = |why: String| RegistryError::NotWasm { why };
    let body = component
        .strip_prefix(&CORE_PREAMBLE)
        .or_else(|| component.strip_prefix(&COMPONENT_PREAMBLE))
        .ok_or_else(|| {
            not_wasm("it does not start with a WebAssembly module or component preamble".into())
        })?;
    let mut r = Reader::new(body);
    let mut signature = None;
    let mut signed = body;
    let mut index = 0usize;
    while !r.is_empty() {
        let offset = CORE_PREAMBLE.len() + r.pos;
        let at = |why: String| not_wasm(format!("section {index} at byte {offset}: {why}"));
        let id = r.get7().map_err(at)?;
        let contents = r.slice().map_err(at)?;
        if id == 0 {
            let mut c = Reader::new(contents);
            let name = c.slice().map_err(at)?;
            let name = std::str::from_utf8(name)
                .map_err(|_| at("a custom section whose name is not UTF-8".into()))?;
            if name == SIGNATURE_SECTION {
                if index != 0 {
                    return Err(RegistryError::MalformedSignature {
                        why: format!(
                            "a `{SIGNATURE_SECTION}` section is section {index}; it must be the first"
                        ),
                    });
                }
                signature = Some(&contents[c.pos..]);
                signed = &body[r.pos..];
            }
        }
        index += 1;
    }
    Ok(Layout { signature, signed })
}

/// Checks the signature section's contents as wasmsign2 will read them (version, content type
/// and hash function 1; at most 64 hash sets of at most 64 SHA-256 hashes and 256 signatures;
/// every length within its enclosing slice); the key ids its signatures name.
fn check_signature_data(payload: &[u8]) -> Result<BTreeSet<Vec<u8>>, RegistryError> {
    let malformed = |why: String| RegistryError::MalformedSignature { why };
    let mut r = Reader::new(payload);
    for what in ["format version", "content type", "hash function"] {
        let value = r.get7().map_err(malformed)?;
        if value != FORMAT_VERSION {
            return Err(malformed(format!(
                "{what} {value}; wasmsign2's format 1 (SHA-256, whole modules) is the one known"
            )));
        }
    }
    let sets = r.get32().map_err(malformed)?;
    if sets > MAX_HASHES {
        return Err(malformed(format!(
            "{sets} hash sets (at most {MAX_HASHES})"
        )));
    }
    let mut key_ids = BTreeSet::new();
    for _ in 0..sets {
        let mut set = Reader::new(r.slice().map_err(malformed)?);
        let hashes = set.get32().map_err(malformed)?;
        if hashes > MAX_HASHES {
            return Err(malformed(format!("{hashes} hashes (at most {MAX_HASHES})")));
        }
        set.take(hashes as usize * 32).map_err(malformed)?;
        let signatures = set.get32().map_err(malformed)?;
        if signatures > MAX_SIGNATURES {
            return Err(malformed(format!(
                "{signatures} signatures (at most {MAX_SIGNATURES})"
            )));
        }
        for _ in 0..signatures {
            let mut entry = Reader::new(set.slice().map_err(malformed)?);
            let key_id = entry.slice().map_err(malformed)?;
            let algorithm = entry.take(1).map_err(malformed)?;
            // wasmsign2 skips signatures of other algorithms; so does Cairn.
            if algorithm != [ED25519] {
                continue;
            }
            let signature = entry.slice().map_err(malformed)?;
            // One of another length would make wasmsign2 give up on every signature.
            if signature.len() != ED25519_SIGNATURE_BYTES {
                return Err(malformed(format!(
                    "an Ed25519 signature of {} bytes",
                    signature.len()
                )));
            }
            if !key_id.is_empty() {
                key_ids.insert(key_id.to_vec());
            }
        }
    }
    Ok(key_ids)
}

/// A bounds-checked reader decoding integers exactly as wasmsign2 does.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, pos: 0 }
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn byte(&mut self) -> Result<u8, String> {
        let byte = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| "it ends early".to_owned())?;
        self.pos += 1;
        Ok(byte)
    }

    /// wasmsign2's `get7`: one byte below 0x80.
    fn get7(&mut self) -> Result<u8, String> {
        match self.byte()? {
            byte if byte < 0x80 => Ok(byte),
            byte => Err(format!("0x{byte:02x} where a one-byte number belongs")),
        }
    }

    /// wasmsign2's `get32`: LEB128 in at most five bytes, bits past the 32nd dropped as it
    /// drops them (so the length checked is the length it will use).
    fn get32(&mut self) -> Result<u32, String> {
        let mut value = 0u32;
        for i in 0..5 {
            let byte = self.byte()?;
            value |= u32::from(byte & 0x7f) << (i * 7);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number longer than five bytes".into())
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let remaining = self.bytes.len() - self.pos;
        if len > remaining {
            return Err(format!("{len} bytes claimed where {remaining} remain"));
        }
        let taken = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(taken)
    }

    /// A length (`get32`) and that many bytes.
    fn slice(&mut self) -> Result<&'a [u8], String> {
        let len = self.get32()?;
        self.take(len as usize)
    }
}

/// Whose signatures components from which registries need: `$CAIRN_HOME/trust.json`,
/// `{"entries": [{"key": "ed25519:…", "source": "oci://HOST/PREFIX", "require": true}]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustPolicy {
    #[serde(default)]
    pub entries: Vec<TrustEntry>,
}

/// One trusted key for one source prefix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustEntry {
    /// The key's fingerprint, `ed25519:<64 hex digits>`.
    pub key: String,
    /// `oci://HOST[:PORT]` or `oci://HOST[:PORT]/PREFIX`: the registry, or the repositories
    /// at or under PREFIX (whole path components: `acme` covers `acme` and `acme/x`, never
    /// `acmex`).
    pub source: String,
    /// Components from the source must carry a valid signature by one of its keys.
    #[serde(default)]
    pub require: bool,
}

impl TrustPolicy {
    /// The policy's file in the Cairn home `home`.
    pub fn path(home: &Path) -> PathBuf {
        home.join(TRUST_FILE)
    }

    /// Reads the policy at `path` (empty if there is no file), checking every entry.
    pub fn load(path: &Path) -> Result<TrustPolicy, RegistryError> {
        let bad = |message: String| RegistryError::TrustPolicy {
            file: path.display().to_string(),
            message,
        };
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustPolicy::default());
            }
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        let mut policy: TrustPolicy =
            serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        for (i, entry) in policy.entries.iter_mut().enumerate() {
            let at = |e: RegistryError| bad(format!("entry {}: {e}", i + 1));
            PublicKey::from_fingerprint(&entry.key).map_err(at)?;
            entry.source = normalize_source(&entry.source).map_err(at)?;
        }
        Ok(policy)
    }

    /// Writes the policy to `path` atomically (readers see the old or the new file).
    pub fn save(&self, path: &Path) -> Result<(), RegistryError> {
        let bad = |message: String| RegistryError::TrustPolicy {
            file: path.display().to_string(),
            message,
        };
        let mut text = serde_json::to_vec_pretty(self).map_err(|e| bad(e.to_string()))?;
        text.push(b'\n');
        // Not secret (fingerprints are public keys), so readable by all as other settings are.
        crate::files::write_atomically(path, &text, false)
            .map_err(|e| bad(format!("cannot write it: {e}")))
    }

    /// Trusts `key` for `source` (checked and normalized); an entry for the same key and
    /// source is replaced. Whether one was.
    pub fn trust(
        &mut self,
        key: &PublicKey,
        source: &str,
        require: bool,
    ) -> Result<bool, RegistryError> {
        let entry = TrustEntry {
            key: key.fingerprint(),
            source: normalize_source(source)?,
            require,
        };
        match self
            .entries
            .iter_mut()
            .find(|e| e.key == entry.key && e.source == entry.source)
        {
            Some(existing) => {
                *existing = entry;
                Ok(true)
            }
            None => {
                self.entries.push(entry);
                Ok(false)
            }
        }
    }

    /// Removes the entries of the key `fingerprint` (only the one for `source` when given);
    /// the entries removed.
    pub fn remove(
        &mut self,
        fingerprint: &str,
        source: Option<&str>,
    ) -> Result<Vec<TrustEntry>, RegistryError> {
        let key = PublicKey::from_fingerprint(fingerprint)?.fingerprint();
        let source = source.map(normalize_source).transpose()?;
        let (removed, kept) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|e| e.key == key && source.as_ref().is_none_or(|s| *s == e.source));
        self.entries = kept;
        Ok(removed)
    }

    /// The entries that apply to a component from `source` (`oci://HOST/REPO[:TAG|@DIGEST]`;
    /// other sources match none).
    pub fn matching(&self, source: &str) -> Vec<&TrustEntry> {
        let Ok(reference) = Reference::parse(source) else {
            return Vec::new();
        };
        self.entries
            .iter()
            .filter(|e| covers(&e.source, &reference))
            .collect()
    }

    /// Checks a component from `source` against the entries that apply to it:
    ///
    /// * none: `Ok(None)`;
    /// * one requires a signature: a valid signature by one of their keys, else refused;
    /// * none requires one: a valid signature by one of their keys is reported, a component
    ///   without a signature (or signed only by other keys) passes with `Ok(None)`, and one
    ///   whose signature names one of their keys but does not verify is refused.
    ///
    /// A signature section that cannot be read is refused whenever entries apply.
    pub fn check(&self, source: &str, component: &[u8]) -> Result<Option<Signer>, RegistryError> {
        let matching = self.matching(source);
        if matching.is_empty() {
            return Ok(None);
        }
        let mut keys: Vec<PublicKey> = Vec::new();
        for entry in &matching {
            let key = PublicKey::from_fingerprint(&entry.key)?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let required = matching.iter().any(|e| e.require);
        let refuse = |why: String, cause: RegistryError| RegistryError::Untrusted {
            from: source.to_owned(),
            why,
            cause: Box::new(cause),
        };
        let expected = describe_keys(&keys);
        match examine(component, &keys) {
            Ok(Examination::Valid(signer)) => Ok(Some(signer)),
            Ok(Examination::Unsigned) if !required => Ok(None),
            Ok(Examination::Unsigned) => Err(refuse(
                format!("a signature by {expected} is required"),
                RegistryError::Unsigned,
            )),
            Ok(Examination::Invalid { claimed }) if !required && claimed.is_empty() => Ok(None),
            Ok(Examination::Invalid { claimed }) => {
                let why = if required {
                    format!("a valid signature by {expected} is required")
                } else {
                    format!(
                        "its signature by trusted {} does not verify (changed since it was signed?)",
                        describe_keys(&claimed)
                    )
                };
                Err(refuse(
                    why,
                    RegistryError::NoValidSignature { keys: expected },
                ))
            }
            Err(e @ RegistryError::MalformedSignature { .. }) => Err(refuse(
                format!("its signature cannot be checked against {expected}"),
                e,
            )),
            Err(e) => Err(e),
        }
    }
}

/// Checks a trust entry's source (`oci://HOST[:PORT][/PREFIX]`, no tag or digest) and writes
/// it one way: registry lower-cased, no trailing `/`.
pub fn normalize_source(text: &str) -> Result<String, RegistryError> {
    let bad = |why: &str| RegistryError::BadTrustSource {
        text: text.to_owned(),
        why: why.to_owned(),
    };
    let rest = text
        .strip_prefix(SCHEME)
        .ok_or_else(|| bad("it must start with oci:// (oci://HOST[:PORT][/PREFIX])"))?;
    let rest = rest.trim_end_matches('/');
    let (registry, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    // The reference grammar checks both; a registry alone is checked with a stand-in path.
    let reference = Reference::parse(&format!(
        "{SCHEME}{registry}/{}",
        if prefix.is_empty() { "x" } else { prefix }
    ))
    .map_err(|e| match e {
        RegistryError::BadReference { why, .. } => bad(&why),
        e => bad(&e.to_string()),
    })?;
    if reference.target.is_some() {
        return Err(bad(
            "a trust source names a registry or repository prefix, not a tag or digest",
        ));
    }
    Ok(if prefix.is_empty() {
        format!("{SCHEME}{}", reference.registry)
    } else {
        format!("{SCHEME}{}/{}", reference.registry, reference.repository)
    })
}

/// Whether the entry source `prefix` (normalized) covers the repository `reference` names:
/// the same registry, and the repository at or under the prefix, whole components only.
fn covers(prefix: &str, reference: &Reference) -> bool {
    let Some(rest) = prefix.strip_prefix(SCHEME) else {
        return false;
    };
    let (registry, path) = rest.split_once('/').unwrap_or((rest, ""));
    registry == reference.registry
        && (path.is_empty()
            || reference.repository == path
            || reference
                .repository
                .strip_prefix(path)
                .is_some_and(|after| after.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"{"name":"signed","version":"1.0.0","wit":"0.3.0"}"#;

    /// A component whose nested core module holds a `cairn:manifest` section.
    fn component() -> Vec<u8> {
        let escaped: String = MANIFEST.bytes().map(|b| format!("\\{b:02x}")).collect();
        wat::parse_str(format!(
            "(component (core module (func (export \"f\")) (@custom \"cairn:manifest\" \"{escaped}\")))"
        ))
        .unwrap()
    }

    /// `bytes` with one byte of the manifest changed.
    fn tamper_manifest(bytes: &[u8]) -> Vec<u8> {
        let at = bytes
            .windows(MANIFEST.len())
            .position(|w| w == MANIFEST.as_bytes())
            .expect("the manifest is in the component");
        let mut tampered = bytes.to_vec();
        tampered[at + 10] ^= 0x01;
        tampered
    }

    fn raw_secret(key: &SecretKeyFile) -> Vec<u8> {
        key.secret.to_bytes()
    }

    /// An unencrypted `openssh-key-v1` file, as `ssh-keygen -t ed25519 -N ''` writes it.
    fn openssh_private(key: &SecretKeyFile, cipher: &str) -> String {
        fn string(out: &mut Vec<u8>, s: &[u8]) {
            out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            out.extend_from_slice(s);
        }
        let pk = key.secret.sk.public_key();
        let mut public = Vec::new();
        string(&mut public, b"ssh-ed25519");
        string(&mut public, pk.as_ref());
        let mut private = Vec::new();
        private.extend_from_slice(&[1, 2, 3, 4, 1, 2, 3, 4]);
        string(&mut private, b"ssh-ed25519");
        string(&mut private, pk.as_ref());
        string(&mut private, key.secret.sk.as_ref());
        string(&mut private, b"me@host");
        let mut pad = 1u8;
        while private.len() % 8 != 0 {
            private.push(pad);
            pad += 1;
        }
        let mut blob = b"openssh-key-v1\0".to_vec();
        string(&mut blob, cipher.as_bytes());
        string(
            &mut blob,
            if cipher == "none" { b"none" } else { b"bcrypt" },
        );
        string(&mut blob, b"");
        blob.extend_from_slice(&1u32.to_be_bytes());
        string(&mut blob, &public);
        string(&mut blob, &private);
        let b64 = base64::engine::general_purpose::STANDARD.encode(blob);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(70)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    fn openssh_public(key: &PublicKey) -> String {
        let mut blob = Vec::new();
        for part in [b"ssh-ed25519".as_slice(), key.key.pk.as_ref()] {
            blob.extend_from_slice(&(part.len() as u32).to_be_bytes());
            blob.extend_from_slice(part);
        }
        format!(
            "ssh-ed25519 {} me@host\n",
            base64::engine::general_purpose::STANDARD.encode(blob)
        )
    }

    #[test]
    fn sign_then_verify_and_the_manifest_is_covered() {
        let key = SecretKeyFile::generate();
        let original = component();
        let signed = sign(&original, &key).unwrap();
        assert!(signed.starts_with(&COMPONENT_PREAMBLE));
        // The original sections follow the signature unchanged.
        assert!(signed.ends_with(&original[8..]));
        let signer = verify(&signed, &[key.public_key().clone()]).unwrap();
        assert_eq!(signer.fingerprint, key.public_key().fingerprint());
        assert_eq!(signer.key_id.len(), 24);
        assert!(signer.fingerprint.starts_with("ed25519:") && signer.fingerprint.len() == 72);
        // The signed component is still a valid component.
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
            .validate_all(&signed)
            .unwrap();

        let tampered = tamper_manifest(&signed);
        let err = verify(&tampered, &[key.public_key().clone()]).unwrap_err();
        assert!(
            matches!(err, RegistryError::NoValidSignature { .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "no valid signature for key {}",
                key.public_key().fingerprint()
            )
        );

        let other = SecretKeyFile::generate();
        let err = verify(&signed, &[other.public_key().clone()]).unwrap_err();
        assert!(
            matches!(err, RegistryError::NoValidSignature { .. }),
            "{err}"
        );
        let err = verify(&original, &[key.public_key().clone()]).unwrap_err();
        assert!(matches!(err, RegistryError::Unsigned), "{err}");
        assert_eq!(err.to_string(), "not signed: no `signature` section");
    }

    #[test]
    fn signatures_accumulate() {
        let (a, b) = (SecretKeyFile::generate(), SecretKeyFile::generate());
        let once = sign(&component(), &a).unwrap();
        let twice = sign(&once, &b).unwrap();
        let (pa, pb) = (a.public_key().clone(), b.public_key().clone());
        assert_eq!(
            verify(&twice, std::slice::from_ref(&pa)).unwrap(),
            pa.signer()
        );
        assert_eq!(
            verify(&twice, std::slice::from_ref(&pb)).unwrap(),
            pb.signer()
        );
        // The first key given that signed is the signer.
        assert_eq!(
            verify(&twice, &[pb.clone(), pa.clone()]).unwrap(),
            pb.signer()
        );
        let stranger = SecretKeyFile::generate().public_key().clone();
        assert_eq!(
            verify(&twice, &[stranger.clone(), pa.clone()]).unwrap(),
            pa.signer()
        );
        // Signing again with the same key changes nothing and says so.
        let err = sign(&twice, &a).unwrap_err();
        assert!(matches!(err, RegistryError::AlreadySigned { .. }), "{err}");
        // A tampered component fails for both.
        let tampered = tamper_manifest(&twice);
        assert!(verify(&tampered, &[pa, pb]).is_err());
    }

    #[test]
    fn every_key_format_reads() {
        let key = SecretKeyFile::generate();
        let public = key.public_key().clone();
        let secrets: Vec<(&str, Vec<u8>)> = vec![
            ("raw", raw_secret(&key)),
            ("pem", key.secret.to_pem().into_bytes()),
            ("der", key.secret.to_der()),
            ("openssh", openssh_private(&key, "none").into_bytes()),
        ];
        let publics: Vec<(&str, Vec<u8>)> = vec![
            ("raw", public.key.to_bytes()),
            ("pem", public.to_pem().into_bytes()),
            ("der", public.key.to_der()),
            ("openssh", openssh_public(&public).into_bytes()),
            (
                "openssh, several lines",
                format!(
                    "# keys\nssh-rsa AAAAB3NzaC1yc2E= other\n{}",
                    openssh_public(&public)
                )
                .into_bytes(),
            ),
        ];
        let unsigned = component();
        for (format, bytes) in &secrets {
            let loaded =
                SecretKeyFile::parse(format, bytes).unwrap_or_else(|e| panic!("{format}: {e}"));
            assert_eq!(loaded.public_key(), &public, "{format}");
            let signed = sign(&unsigned, &loaded).unwrap();
            for (public_format, public_bytes) in &publics {
                let loaded = PublicKey::parse(public_format, public_bytes)
                    .unwrap_or_else(|e| panic!("{public_format}: {e}"));
                assert_eq!(loaded, public, "{public_format}");
                assert_eq!(verify(&signed, &[loaded]).unwrap(), public.signer());
            }
        }
        assert_eq!(
            PublicKey::from_fingerprint(&public.fingerprint()).unwrap(),
            public
        );

        // Files from a file: errors name it.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("id.pub");
        std::fs::write(&file, openssh_public(&public)).unwrap();
        assert_eq!(PublicKey::load(&file).unwrap(), public);
        let missing = dir.path().join("missing.key");
        let err = SecretKeyFile::load(&missing).unwrap_err().to_string();
        assert!(err.starts_with(&missing.display().to_string()), "{err}");
    }

    #[test]
    fn key_files_of_the_wrong_kind_say_what_they_are() {
        let key = SecretKeyFile::generate();
        let public = key.public_key();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                public.key.to_bytes(),
                "a public key (wasmsign2's raw format)",
            ),
            (public.to_pem().into_bytes(), "a public key; signing needs"),
            (
                openssh_public(public).into_bytes(),
                "a public key; signing needs",
            ),
            (
                openssh_private(&key, "aes256-ctr").into_bytes(),
                "protected by a passphrase",
            ),
            (
                b"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n".to_vec(),
                "a PEM file of a RSA PRIVATE KEY",
            ),
            (b"hello".to_vec(), "not a secret key Cairn reads"),
            (Vec::new(), "not a secret key Cairn reads"),
        ];
        for (bytes, expected) in cases {
            let err = SecretKeyFile::parse("k", &bytes).unwrap_err().to_string();
            assert!(err.starts_with("k: ") && err.contains(expected), "{err}");
        }
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (raw_secret(&key), "a secret key (wasmsign2's raw format)"),
            (key.to_pem().into_bytes(), "a secret key, not a public key"),
            (
                openssh_private(&key, "none").into_bytes(),
                "a secret key, not a public key",
            ),
            (key.secret.to_der(), "a secret key (DER)"),
            (
                b"ssh-rsa AAAAB3NzaC1yc2E= me\n".to_vec(),
                "without an ssh-ed25519 key",
            ),
            (b"\x01short".to_vec(), "not a public key Cairn reads"),
        ];
        for (bytes, expected) in cases {
            let err = PublicKey::parse("p", &bytes).unwrap_err().to_string();
            assert!(err.starts_with("p: ") && err.contains(expected), "{err}");
        }

        // A secret key whose public half is not its seed's.
        let mut raw = raw_secret(&key);
        raw[64] ^= 1;
        let err = SecretKeyFile::parse("k", &raw).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        // An OpenSSH key blob of the wrong length is refused, not a panic.
        let text = openssh_private(&key, "none");
        let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
        let mut blob = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        let at = blob.windows(4).rposition(|w| w == [0, 0, 0, 64]).unwrap();
        blob[at + 3] = 63;
        let text = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(blob)
        );
        let err = SecretKeyFile::parse("k", text.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("damaged OpenSSH"), "{err}");

        for (text, expected) in [
            ("ed25519:abc", "64 lower-case hex digits"),
            ("rsa:00", "must start with ed25519:"),
            (
                &format!("ed25519:{}", "A".repeat(64)),
                "64 lower-case hex digits",
            ),
        ] {
            let err = PublicKey::from_fingerprint(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    /// A signature section with the given contents before `component`'s sections.
    fn with_signature_section(component: &[u8], contents: &[u8]) -> Vec<u8> {
        let mut section = vec![SIGNATURE_SECTION.len() as u8];
        section.extend_from_slice(SIGNATURE_SECTION.as_bytes());
        section.extend_from_slice(contents);
        let mut out = component[..8].to_vec();
        out.push(0);
        let mut len = section.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(&section);
        out.extend_from_slice(&component[8..]);
        out
    }

    #[test]
    fn hostile_signature_sections_are_refused_before_wasmsign2_reads_them() {
        let key = SecretKeyFile::generate();
        let keys = [key.public_key().clone()];
        let unsigned = component();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            // A hash set claiming 4 GiB, in a section of a few bytes.
            (
                vec![1, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f],
                "4294967295 bytes claimed",
            ),
            (vec![2, 1, 1, 0], "format version 2"),
            (vec![1, 1, 2, 0], "hash function 2"),
            (vec![1, 1, 1, 65], "65 hash sets"),
            (vec![1, 1, 1, 1, 1, 1], "32 bytes claimed where 0 remain"),
            // One signature entry of 3 bytes: no key id, Ed25519, a 1-byte signature.
            (
                vec![1, 1, 1, 1, 6, 0, 1, 3, 0, 1, 1],
                "1 bytes claimed where 0 remain",
            ),
            (
                vec![1, 1, 1, 1, 7, 0, 1, 4, 0, 1, 1, 9],
                "an Ed25519 signature of 1 bytes",
            ),
            (
                vec![1, 1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
                "longer than five bytes",
            ),
        ];
        for (contents, expected) in cases {
            let bytes = with_signature_section(&unsigned, &contents);
            let err = verify(&bytes, &keys).unwrap_err();
            assert!(
                matches!(err, RegistryError::MalformedSignature { .. })
                    && err.to_string().contains(expected),
                "{contents:?}: {err}"
            );
            let err = sign(&bytes, &key).unwrap_err();
            assert!(
                matches!(err, RegistryError::MalformedSignature { .. }),
                "{err}"
            );
        }
        // An entry of another algorithm is skipped, as wasmsign2 skips it.
        let skipped = with_signature_section(&unsigned, &[1, 1, 1, 1, 6, 0, 1, 3, 0, 2, 0]);
        assert!(matches!(
            verify(&skipped, &keys).unwrap_err(),
            RegistryError::NoValidSignature { .. }
        ));

        // A signature section that is not the first one.
        let signed = sign(&unsigned, &key).unwrap();
        let signature_len = signed.len() - unsigned.len();
        let mut moved = unsigned.clone();
        moved.extend_from_slice(&signed[8..8 + signature_len]);
        let err = verify(&moved, &keys).unwrap_err();
        assert!(err.to_string().contains("it must be the first"), "{err}");

        // Sections whose sizes overrun the file, and files that are not wasm at all.
        let mut truncated = signed.clone();
        truncated.truncate(signed.len() - 1);
        let err = verify(&truncated, &keys).unwrap_err();
        assert!(matches!(err, RegistryError::NotWasm { .. }), "{err}");
        for bytes in [b"not wasm".to_vec(), Vec::new(), vec![0, 0x61, 0x73, 0x6d]] {
            let err = sign(&bytes, &key).unwrap_err();
            assert!(matches!(err, RegistryError::NotWasm { .. }), "{err}");
        }
    }

    #[test]
    fn trust_sources_match_whole_path_components() {
        for (text, normalized) in [
            (
                "oci://Reg.Example:5000/acme/",
                "oci://reg.example:5000/acme",
            ),
            ("oci://h", "oci://h"),
            ("oci://h/", "oci://h"),
            ("oci://h/acme/tools", "oci://h/acme/tools"),
        ] {
            assert_eq!(normalize_source(text).unwrap(), normalized);
        }
        for bad in [
            "https://h/acme",
            "oci://h/acme:1.0",
            "oci://h/Acme",
            "oci:///x",
            "h/acme",
        ] {
            assert!(normalize_source(bad).is_err(), "{bad}");
        }
        let mut policy = TrustPolicy::default();
        let key = SecretKeyFile::generate().public_key().clone();
        policy.trust(&key, "oci://h/acme", false).unwrap();
        let digest = "0".repeat(64);
        for (source, matches) in [
            ("oci://h/acme".to_owned(), true),
            ("oci://h/acme:1.0".to_owned(), true),
            (format!("oci://h/acme/x@sha256:{digest}"), true),
            ("oci://h/acme/x/y:2".to_owned(), true),
            ("oci://h/acmex".to_owned(), false),
            ("oci://h/acmex/y".to_owned(), false),
            ("oci://h/acm".to_owned(), false),
            ("oci://h:5000/acme".to_owned(), false),
            ("oci://other/acme".to_owned(), false),
            ("/tmp/acme.wasm".to_owned(), false),
            ("https://h/acme/x.wasm".to_owned(), false),
        ] {
            assert_eq!(
                policy.matching(&source).len(),
                usize::from(matches),
                "{source}"
            );
        }
        policy.trust(&key, "oci://h", true).unwrap();
        assert_eq!(policy.matching("oci://h/anything").len(), 1);
        assert_eq!(policy.matching("oci://h/acme/x").len(), 2);
    }

    #[test]
    fn the_trust_policy_decides() {
        let (alice, bob) = (SecretKeyFile::generate(), SecretKeyFile::generate());
        let unsigned = component();
        let by_alice = sign(&unsigned, &alice).unwrap();
        let by_bob = sign(&unsigned, &bob).unwrap();
        let tampered = tamper_manifest(&by_alice);
        let mut policy = TrustPolicy::default();
        policy
            .trust(alice.public_key(), "oci://h/optional", false)
            .unwrap();
        policy
            .trust(alice.public_key(), "oci://h/required", true)
            .unwrap();
        let alice_signer = Some(alice.public_key().signer());

        // No entry applies: nothing is checked.
        assert_eq!(policy.check("oci://h/other/x", &tampered).unwrap(), None);
        // Optional: reported when valid; missing, or by someone else, is fine; invalid is not.
        let optional = "oci://h/optional/x:1.0";
        assert_eq!(policy.check(optional, &by_alice).unwrap(), alice_signer);
        assert_eq!(policy.check(optional, &unsigned).unwrap(), None);
        assert_eq!(policy.check(optional, &by_bob).unwrap(), None);
        let err = policy.check(optional, &tampered).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "{optional}: refused by the trust policy: its signature by trusted key {} does not verify",
                alice.public_key().fingerprint()
            )),
            "{err}"
        );
        // Required: only a valid signature by a trusted key passes; errors name what is needed.
        let required = "oci://h/required/x@sha256:".to_owned() + &"1".repeat(64);
        assert_eq!(policy.check(&required, &by_alice).unwrap(), alice_signer);
        for (bytes, cause) in [
            (&unsigned, "not signed"),
            (&by_bob, "no valid signature"),
            (&tampered, "no valid signature"),
        ] {
            let err = policy.check(&required, bytes).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with(&required)
                    && text.contains(&format!(
                        "a valid signature by key {} is required",
                        alice.public_key().fingerprint()
                    ))
                    || text.contains(&format!(
                        "a signature by key {} is required",
                        alice.public_key().fingerprint()
                    )),
                "{text}"
            );
            let source = std::error::Error::source(&err).unwrap().to_string();
            assert!(source.contains(cause), "{source}");
        }
        // A second key for the same source: either signature will do.
        policy
            .trust(bob.public_key(), "oci://h/required", true)
            .unwrap();
        assert_eq!(
            policy.check(&required, &by_bob).unwrap(),
            Some(bob.public_key().signer())
        );
    }

    #[test]
    fn the_trust_policy_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = TrustPolicy::path(&dir.path().join("home"));
        assert_eq!(TrustPolicy::load(&path).unwrap(), TrustPolicy::default());
        let key = SecretKeyFile::generate().public_key().clone();
        let mut policy = TrustPolicy::default();
        assert!(!policy.trust(&key, "oci://h/acme", false).unwrap());
        assert!(policy.trust(&key, "oci://h/acme/", true).unwrap());
        policy.trust(&key, "oci://h/tools", false).unwrap();
        policy.save(&path).unwrap();
        let loaded = TrustPolicy::load(&path).unwrap();
        assert_eq!(loaded, policy);
        assert_eq!(loaded.entries.len(), 2);
        assert!(loaded.entries[0].require);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(json["entries"][0]["key"], key.fingerprint());
        assert_eq!(json["entries"][0]["source"], "oci://h/acme");

        let mut edited = loaded.clone();
        let removed = edited
            .remove(&key.fingerprint(), Some("oci://h/tools"))
            .unwrap();
        assert_eq!(removed.len(), 1);
        assert_eq!(edited.remove(&key.fingerprint(), None).unwrap().len(), 1);
        assert!(edited.entries.is_empty());

        std::fs::write(
            &path,
            r#"{"entries": [{"key": "ed25519:00", "source": "oci://h"}]}"#,
        )
        .unwrap();
        let err = TrustPolicy::load(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&path.display().to_string()) && err.contains("entry 1"),
            "{err}"
        );
        std::fs::write(&path, "{").unwrap();
        assert!(TrustPolicy::load(&path).is_err());
    }
}
