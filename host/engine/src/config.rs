//! Stack configuration: config keys, values, and `Pulumi.<stack>.yaml` files, with the semantics
//! of `pulumi config` (plain, secret and structured `--path` values).
//!
//! Everything here is pure: the CLI reads and writes files and supplies the [`Crypter`].

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use indexmap::IndexMap;
use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;

use crate::path::{PathElement, PropertyPath};
use crate::project::{Project, yaml_key_string, yaml_kind, yaml_to_json};
use crate::secrets::{Crypter, SecretsError};

/// What `pulumi config` shows in place of a secret it was not asked to reveal.
pub const SECRET_PLACEHOLDER: &str = "[secret]";

/// The stack configuration file name for a stack: `Pulumi.<stack>.yaml`.
pub fn stack_config_file_name(stack: &str) -> String {
    format!("Pulumi.{stack}.yaml")
}

/// Why config could not be read, changed or resolved. Variants name the file, key and path.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "could not parse {key:?} as a configuration key (configuration keys should be of the form `<namespace>:<name>`)"
    )]
    InvalidKey { key: String },
    #[error("{file}: invalid YAML: {message}")]
    Yaml { file: String, message: String },
    #[error("{file}: {reason}")]
    Malformed { file: String, reason: String },
    #[error("{file}: config path {path:?}: {reason}")]
    InvalidPath {
        file: String,
        path: String,
        reason: String,
    },
    #[error("{file}: config key \"{key}\": path {path:?}: {reason}")]
    Path {
        file: String,
        key: ConfigKey,
        path: String,
        reason: String,
    },
    #[error(
        "{file}: config key \"{key}\" is secret, but no secrets manager is available to encrypt or decrypt it"
    )]
    NoCrypter { file: String, key: ConfigKey },
    #[error("{file}: config key \"{key}\": {source}")]
    Secret {
        file: String,
        key: ConfigKey,
        /// Boxed to keep `ConfigError` small.
        #[source]
        source: Box<SecretsError>,
    },
    #[error("{file}: config key \"{key}\" must be of type '{expected}'")]
    TypeMismatch {
        file: String,
        key: ConfigKey,
        expected: String,
    },
    #[error("{file}: config key \"{key}\" must be encrypted as it is declared secret")]
    MustBeSecret { file: String, key: ConfigKey },
    #[error("{file}: stack is missing configuration {}", missing_text(.keys))]
    Missing { file: String, keys: Vec<String> },
}

fn missing_text(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    match quoted.as_slice() {
        [one] => format!("value {one}"),
        [init @ .., last] => format!("values {} and {last}", init.join(", ")),
        [] => "values".to_owned(),
    }
}

/// A config key, `namespace:name`. The namespace is a package or the project; neither part may
/// contain `:`. Ordered as its string form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigKey {
    namespace: String,
    name: String,
}

impl ConfigKey {
    /// A key from its parts; both must be non-empty and free of `:`.
    pub fn new(namespace: &str, name: &str) -> Result<ConfigKey, ConfigError> {
        let ok = |s: &str| !s.is_empty() && !s.contains(':');
        if ok(namespace) && ok(name) {
            Ok(ConfigKey {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            })
        } else {
            Err(ConfigError::InvalidKey {
                key: format!("{namespace}:{name}"),
            })
        }
    }

    /// Parses a key as `pulumi config` does: a bare `name` is in the project's namespace,
    /// `ns:name` is kept, and the legacy `ns:config:name` means `ns:name`.
    pub fn parse(s: &str, project: &str) -> Result<ConfigKey, ConfigError> {
        if s.contains(':') {
            ConfigKey::parse_qualified(s)
        } else {
            ConfigKey::new(project, s).map_err(|_| ConfigError::InvalidKey { key: s.to_owned() })
        }
    }

    /// Parses a key that must carry its namespace (`ns:name` or `ns:config:name`), as stack
    /// files hold them.
    pub fn parse_qualified(s: &str) -> Result<ConfigKey, ConfigError> {
        let invalid = || ConfigError::InvalidKey { key: s.to_owned() };
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            [namespace, name] | [namespace, "config", name] => {
                ConfigKey::new(namespace, name).map_err(|_| invalid())
            }
            _ => Err(invalid()),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key as `pulumi config` lists it: just the name in the project's own namespace.
    pub fn pretty(&self, project: &str) -> String {
        if self.namespace == project {
            self.name.clone()
        } else {
            self.to_string()
        }
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.namespace
            .bytes()
            .chain(std::iter::once(b':'))
            .chain(self.name.bytes())
    }
}

impl fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.namespace, self.name)
    }
}

impl FromStr for ConfigKey {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<ConfigKey, ConfigError> {
        ConfigKey::parse_qualified(s)
    }
}

impl Ord for ConfigKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for ConfigKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A stored config value, as in the stack file. Ciphertexts only: a file never holds a
/// plaintext secret.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    /// `key: value`. YAML numbers and booleans are read as their text.
    Plain(String),
    /// `key: {secure: <ciphertext>}`.
    Secure(String),
    /// A structured value (maps and lists, set with `--path`); secret leaves are stored as
    /// `{"secure": <ciphertext>}`.
    Object(Json),
}

impl ConfigValue {
    /// True for secure values and for objects holding any secure leaf.
    pub fn is_secret(&self) -> bool {
        match self {
            ConfigValue::Plain(_) => false,
            ConfigValue::Secure(_) => true,
            ConfigValue::Object(v) => has_secure_leaf(v),
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, ConfigValue::Object(_))
    }

    /// The same value with every ciphertext decrypted by `from` and encrypted again by `to`
    /// (`config cp` between stacks, which have their own secrets providers).
    pub fn reencrypt(
        &self,
        from: &dyn Crypter,
        to: &dyn Crypter,
    ) -> Result<ConfigValue, SecretsError> {
        Ok(match self {
            ConfigValue::Plain(text) => ConfigValue::Plain(text.clone()),
            ConfigValue::Secure(ct) => ConfigValue::Secure(to.encrypt(&from.decrypt(ct)?)?),
            ConfigValue::Object(v) => ConfigValue::Object(reencrypt_json(v, from, to)?),
        })
    }

    /// The value for display: decrypted with `crypter`, or with secrets shown as `[secret]` when
    /// there is none.
    pub fn view(&self, crypter: Option<&dyn Crypter>) -> Result<ConfigView, SecretsError> {
        let mode = match crypter {
            Some(c) => Reveal::Decrypt(c),
            None => Reveal::Blind,
        };
        let (value, object) = self.reveal(mode)?;
        Ok(ConfigView {
            value,
            object,
            secret: self.is_secret(),
        })
    }

    /// The text form (objects as JSON with sorted keys, as Pulumi marshals them) and, for
    /// objects, the structure, with secure leaves revealed per `mode`.
    fn reveal(&self, mode: Reveal<'_>) -> Result<(String, Option<Json>), SecretsError> {
        match self {
            ConfigValue::Plain(s) => Ok((s.clone(), None)),
            ConfigValue::Secure(ct) => Ok((mode.apply(ct)?, None)),
            ConfigValue::Object(v) => {
                let revealed = sorted(reveal_json(v, mode)?);
                Ok((revealed.to_string(), Some(revealed)))
            }
        }
    }
}

/// A config value as shown to a user: plain text (JSON text for objects), the structure for
/// objects, and whether it is secret. Secrets are decrypted or `[secret]` per the request.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigView {
    pub value: String,
    pub object: Option<Json>,
    pub secret: bool,
}

/// A config value materialised for a deployment: the plain string (JSON text for objects, as
/// Pulumi passes structured config to programs) and whether the program must treat it as secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedConfig {
    pub value: String,
    pub secret: bool,
}

#[derive(Clone, Copy)]
enum Reveal<'a> {
    Blind,
    Decrypt(&'a dyn Crypter),
}

impl Reveal<'_> {
    fn apply(self, ciphertext: &str) -> Result<String, SecretsError> {
        match self {
            Reveal::Blind => Ok(SECRET_PLACEHOLDER.to_owned()),
            Reveal::Decrypt(c) => c.decrypt(ciphertext),
        }
    }
}

/// `{"secure": "<ciphertext>"}`, the one-key map Pulumi reserves for secret leaves.
fn secure_leaf(v: &Json) -> Option<&str> {
    match v {
        Json::Object(m) if m.len() == 1 => m.get("secure").and_then(Json::as_str),
        _ => None,
    }
}

fn has_secure_leaf(v: &Json) -> bool {
    if secure_leaf(v).is_some() {
        return true;
    }
    match v {
        Json::Object(m) => m.values().any(has_secure_leaf),
        Json::Array(items) => items.iter().any(has_secure_leaf),
        _ => false,
    }
}

fn reencrypt_json(v: &Json, from: &dyn Crypter, to: &dyn Crypter) -> Result<Json, SecretsError> {
    if let Some(ct) = secure_leaf(v) {
        let mut leaf = serde_json::Map::new();
        leaf.insert(
            "secure".into(),
            Json::String(to.encrypt(&from.decrypt(ct)?)?),
        );
        return Ok(Json::Object(leaf));
    }
    Ok(match v {
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), reencrypt_json(v, from, to)?)))
                .collect::<Result<_, SecretsError>>()?,
        ),
        Json::Array(items) => Json::Array(
            items
                .iter()
                .map(|v| reencrypt_json(v, from, to))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

fn reveal_json(v: &Json, mode: Reveal<'_>) -> Result<Json, SecretsError> {
    if let Some(ct) = secure_leaf(v) {
        return Ok(Json::String(mode.apply(ct)?));
    }
    Ok(match v {
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), reveal_json(v, mode)?)))
                .collect::<Result<_, SecretsError>>()?,
        ),
        Json::Array(items) => Json::Array(
            items
                .iter()
                .map(|v| reveal_json(v, mode))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// Sorts object keys at every depth: Pulumi hands structured config to programs as Go-marshalled
/// JSON, whose keys are sorted.
fn sorted(v: Json) -> Json {
    match v {
        Json::Object(m) => {
            let mut m: serde_json::Map<String, Json> =
                m.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            m.sort_keys();
            Json::Object(m)
        }
        Json::Array(items) => Json::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A project default or value as config text: strings as is, other scalars as their text,
/// structures as JSON.
fn declared_text(v: &Json) -> (String, Option<Json>) {
    match v {
        Json::String(s) => (s.clone(), None),
        Json::Null | Json::Bool(_) | Json::Number(_) => (v.to_string(), None),
        other => {
            let s = sorted(other.clone());
            (s.to_string(), Some(s))
        }
    }
}

/// A `Pulumi.<stack>.yaml` file.
#[derive(Debug, Clone, PartialEq)]
pub struct StackConfigFile {
    /// The file's name, used in error messages.
    pub file_name: String,
    /// `secretsprovider`: the secrets manager URL, when not the default.
    pub secrets_provider: Option<String>,
    /// `encryptedkey`: the data key wrapped by a cloud secrets provider.
    pub encrypted_key: Option<String>,
    /// `encryptionsalt`: the passphrase secrets manager's salt and check value.
    pub encryption_salt: Option<String>,
    /// The values; written sorted by key.
    pub config: IndexMap<ConfigKey, ConfigValue>,
    /// Every other top-level key (`environment`, ...), kept as written.
    pub extra: IndexMap<String, Yaml>,
}

/// An empty file with a generic name for messages; prefer [`StackConfigFile::new`] with the path.
impl Default for StackConfigFile {
    fn default() -> StackConfigFile {
        StackConfigFile::new("stack configuration")
    }
}

impl StackConfigFile {
    /// An empty file named `file_name`.
    pub fn new(file_name: &str) -> StackConfigFile {
        StackConfigFile {
            file_name: file_name.to_owned(),
            secrets_provider: None,
            encrypted_key: None,
            encryption_salt: None,
            config: IndexMap::new(),
            extra: IndexMap::new(),
        }
    }

    /// Parses a stack file; an empty file is an empty configuration.
    pub fn from_yaml(text: &str, file_name: &str) -> Result<StackConfigFile, ConfigError> {
        let malformed = |reason: String| ConfigError::Malformed {
            file: file_name.to_owned(),
            reason,
        };
        let doc: Yaml = serde_yaml_ng::from_str(text).map_err(|e| ConfigError::Yaml {
            file: file_name.to_owned(),
            message: e.to_string(),
        })?;
        // What would not survive the file being written back is refused (found by fuzzing: `!`
        // was written as `!! null`, which does not parse; tagged and complex keys changed).
        if let Some(what) = find_unwritable(&doc) {
            return Err(malformed(format!("a stack file cannot hold {what}")));
        }
        let mut file = StackConfigFile::new(file_name);
        let mapping = match doc {
            Yaml::Null => return Ok(file),
            Yaml::Mapping(m) => m,
            other => {
                return Err(malformed(format!(
                    "a stack file must be a YAML mapping, not {}",
                    yaml_kind(&other)
                )));
            }
        };
        let mut raw_config = None;
        for (k, v) in mapping {
            let Yaml::String(k) = k else {
                return Err(malformed(format!(
                    "expected only string keys at the top level, got {}",
                    yaml_kind(&k)
                )));
            };
            let string_field = |v: Yaml| match v {
                Yaml::Null => Ok(None),
                Yaml::String(s) => Ok(Some(s)),
                other => Err(malformed(format!(
                    "'{k}' must be a string, got {}",
                    yaml_kind(&other)
                ))),
            };
            match k.as_str() {
                "secretsprovider" => file.secrets_provider = string_field(v)?,
                "encryptedkey" => file.encrypted_key = string_field(v)?,
                "encryptionsalt" => file.encryption_salt = string_field(v)?,
                "config" => match v {
                    Yaml::Null => {}
                    Yaml::Mapping(m) => raw_config = Some(m),
                    other => {
                        return Err(malformed(format!(
                            "'config' must be a mapping, got {}",
                            yaml_kind(&other)
                        )));
                    }
                },
                _ => {
                    file.extra.insert(k, v);
                }
            }
        }
        let Some(raw_config) = raw_config else {
            return Ok(file);
        };

        // Pulumi reads `key: 1.10` as the string "1.10", not the float 1.1: fetch the source text
        // of scalar values that YAML would otherwise turn into numbers or booleans.
        let wanted: HashSet<String> = raw_config
            .iter()
            .filter(|(_, v)| matches!(v, Yaml::Bool(_) | Yaml::Number(_)))
            .filter_map(|(k, _)| k.as_str().map(str::to_owned))
            .collect();
        let raw_text = if wanted.is_empty() {
            HashMap::new()
        } else {
            raw_scalar_text(text, &wanted).unwrap_or_default()
        };

        for (k, v) in raw_config {
            let Yaml::String(k) = k else {
                return Err(malformed(format!(
                    "config keys must be strings, got {}",
                    yaml_kind(&k)
                )));
            };
            let key = ConfigKey::parse_qualified(&k).map_err(|e| malformed(e.to_string()))?;
            let value = read_value(v, raw_text.get(&k))
                .map_err(|reason| malformed(format!("config key \"{key}\": {reason}")))?;
            if file.config.insert(key.clone(), value).is_some() {
                return Err(malformed(format!(
                    "config key \"{key}\" is set more than once"
                )));
            }
        }
        Ok(file)
    }

    /// Writes the file in Pulumi's layout: `secretsprovider`, `encryptedkey`, `encryptionsalt`,
    /// `config` (sorted by key), then any other keys; two-space indents, lists indented.
    pub fn to_yaml(&self) -> String {
        let mut top: Vec<(Yaml, Yaml)> = Vec::new();
        let fields = [
            ("secretsprovider", &self.secrets_provider),
            ("encryptedkey", &self.encrypted_key),
            ("encryptionsalt", &self.encryption_salt),
        ];
        for (name, value) in fields {
            if let Some(value) = value {
                top.push((Yaml::String(name.into()), Yaml::String(value.clone())));
            }
        }
        if !self.config.is_empty() {
            let mut entries: Vec<(&ConfigKey, &ConfigValue)> = self.config.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mapping = entries
                .into_iter()
                .map(|(k, v)| (Yaml::String(k.to_string()), stored_yaml(v)))
                .collect();
            top.push((Yaml::String("config".into()), Yaml::Mapping(mapping)));
        }
        for (k, v) in &self.extra {
            top.push((Yaml::String(k.clone()), v.clone()));
        }
        if top.is_empty() {
            return "{}\n".to_owned();
        }
        let mut out = String::new();
        emit::mapping(&mut out, top.iter().map(|(k, v)| (k, v)), 0, false);
        out
    }

    /// `pulumi config set [--secret] key value`: stores a plain value, or encrypts it.
    pub fn set(
        &mut self,
        key: &ConfigKey,
        value: &str,
        secret: bool,
        crypter: Option<&dyn Crypter>,
    ) -> Result<(), ConfigError> {
        let stored = if secret {
            ConfigValue::Secure(self.encrypt(key, value, crypter)?)
        } else {
            ConfigValue::Plain(value.to_owned())
        };
        self.config.insert(key.clone(), stored);
        Ok(())
    }

    /// `pulumi config set --path [--secret] path value`. The first path element names the key
    /// (`data.nums[0]` is key `<project>:data`, inner path `nums[0]`; `["aws:tags"].env` and
    /// `aws:tags.env` are key `aws:tags`). Missing maps and lists are created; a list index may
    /// be at most the list's length (appending). Leaves `true`/`false` become booleans and
    /// integers (without leading zeros) become numbers; a secret leaf is stored as
    /// `{secure: <ciphertext>}`. A one-element path sets the key's value as [`Self::set`] does.
    pub fn set_path(
        &mut self,
        path: &str,
        value: &str,
        secret: bool,
        crypter: Option<&dyn Crypter>,
        project: &str,
    ) -> Result<(), ConfigError> {
        let (key, inner) = self.split_path(path, project)?;
        if inner.is_empty() {
            return self.set(&key, value, secret, crypter);
        }
        let leaf = if secret {
            let ct = self.encrypt(&key, value, crypter)?;
            serde_json::json!({ "secure": ct })
        } else {
            path_leaf(value)
        };
        // A plain or secure scalar is replaced by the new structure, as in Pulumi.
        let mut root = match self.config.get(&key) {
            Some(ConfigValue::Object(v)) => v.clone(),
            _ => Json::Null,
        };
        set_in(&mut root, &inner, leaf).map_err(|reason| self.path_error(&key, &inner, reason))?;
        self.config.insert(key, ConfigValue::Object(root));
        Ok(())
    }

    /// `pulumi config get key`: the value, decrypted with `crypter` or with secrets shown as
    /// `[secret]` when there is none; `None` when unset.
    pub fn get(
        &self,
        key: &ConfigKey,
        crypter: Option<&dyn Crypter>,
    ) -> Result<Option<ConfigView>, ConfigError> {
        match self.config.get(key) {
            None => Ok(None),
            Some(v) => self.view(key, v, crypter).map(Some),
        }
    }

    /// `pulumi config get --path path`: the value at a path (see [`Self::set_path`]), viewed as
    /// [`Self::get`] does; `None` when nothing is there.
    pub fn get_path(
        &self,
        path: &str,
        project: &str,
        crypter: Option<&dyn Crypter>,
    ) -> Result<Option<ConfigView>, ConfigError> {
        let (key, inner) = self.split_path(path, project)?;
        let Some(stored) = self.config.get(&key) else {
            return Ok(None);
        };
        if inner.is_empty() {
            return self.view(&key, stored, crypter).map(Some);
        }
        let ConfigValue::Object(root) = stored else {
            return Ok(None);
        };
        let Some(found) = get_in(root, &inner) else {
            return Ok(None);
        };
        let sub = if let Some(ct) = secure_leaf(found) {
            ConfigValue::Secure(ct.to_owned())
        } else {
            match found {
                Json::String(s) => ConfigValue::Plain(s.clone()),
                Json::Bool(_) | Json::Number(_) => ConfigValue::Plain(found.to_string()),
                other => ConfigValue::Object(other.clone()),
            }
        };
        self.view(&key, &sub, crypter).map(Some)
    }

    /// `pulumi config rm key`; removing an unset key is not an error. Returns whether it was set.
    pub fn remove(&mut self, key: &ConfigKey) -> bool {
        self.config.shift_remove(key).is_some()
    }

    /// `pulumi config rm --path path`: removes a map entry or list element (later elements shift
    /// down). Nothing there is not an error; emptied maps and lists stay.
    pub fn remove_path(&mut self, path: &str, project: &str) -> Result<(), ConfigError> {
        let (key, inner) = self.split_path(path, project)?;
        let Some((last, parents)) = inner.split_last() else {
            self.config.shift_remove(&key);
            return Ok(());
        };
        let Some(ConfigValue::Object(root)) = self.config.get(&key) else {
            return Ok(());
        };
        let mut root = root.clone();
        // Secret leaves are opaque: nothing inside them can be removed.
        let Some(container) = get_in_mut(&mut root, parents).filter(|c| secure_leaf(c).is_none())
        else {
            return Ok(());
        };
        match (container, last) {
            (Json::Array(items), PathElement::Index(i)) => {
                if *i >= items.len() {
                    return Ok(());
                }
                items.remove(*i);
            }
            (Json::Object(map), PathElement::Key(k)) => {
                if map.shift_remove(k).is_none() {
                    return Ok(());
                }
                if secure_leaf(&Json::Object(map.clone())).is_some() {
                    return Err(self.path_error(&key, parents, RESERVED_SECURE.into()));
                }
            }
            _ => return Ok(()),
        }
        self.config.insert(key, ConfigValue::Object(root));
        Ok(())
    }

    /// Materialises the config for a deployment: decrypts secure values (an object with any
    /// secret leaf is secret as a whole), adds the project's defaults and values for keys the
    /// stack does not set, checks declared types and secrecy, and fails when a declared
    /// project key without a default is unset. Sorted by key.
    pub fn resolve(
        &self,
        crypter: Option<&dyn Crypter>,
        project: &Project,
    ) -> Result<IndexMap<ConfigKey, ResolvedConfig>, ConfigError> {
        let mut out = IndexMap::new();
        let mut structured = HashMap::new();
        for (key, value) in &self.config {
            let mode = if value.is_secret() {
                Reveal::Decrypt(crypter.ok_or_else(|| ConfigError::NoCrypter {
                    file: self.file_name.clone(),
                    key: key.clone(),
                })?)
            } else {
                Reveal::Blind // nothing to reveal
            };
            let (text, object) = value
                .reveal(mode)
                .map_err(|source| self.secret_error(key, source))?;
            if let Some(object) = object {
                structured.insert(key.clone(), object);
            }
            out.insert(
                key.clone(),
                ResolvedConfig {
                    value: text,
                    secret: value.is_secret(),
                },
            );
        }

        let mut missing = Vec::new();
        for (raw_key, decl) in &project.config {
            let key = ConfigKey::parse(raw_key, &project.name)?;
            match (self.config.get(&key), out.get(&key)) {
                (Some(stored), Some(resolved)) => {
                    // As in Pulumi, only explicitly typed declarations are checked.
                    let Some(expected) = decl.type_name() else {
                        continue;
                    };
                    if decl.secret && !stored.is_secret() {
                        return Err(ConfigError::MustBeSecret {
                            file: self.file_name.clone(),
                            key,
                        });
                    }
                    let content = structured
                        .get(&key)
                        .cloned()
                        .unwrap_or_else(|| Json::String(resolved.value.clone()));
                    if !decl.accepts(&content) {
                        return Err(ConfigError::TypeMismatch {
                            file: self.file_name.clone(),
                            key,
                            expected,
                        });
                    }
                }
                _ => match decl.default.as_ref().or(decl.value.as_ref()) {
                    Some(v) => {
                        // A declared-secret default is handed to the program as secret too.
                        let (value, _) = declared_text(v);
                        out.insert(
                            key,
                            ResolvedConfig {
                                value,
                                secret: decl.secret,
                            },
                        );
                    }
                    None if key.namespace() == project.name => missing.push(raw_key.clone()),
                    None => {}
                },
            }
        }
        if !missing.is_empty() {
            missing.sort();
            return Err(ConfigError::Missing {
                file: self.file_name.clone(),
                keys: missing,
            });
        }
        out.sort_keys();
        Ok(out)
    }

    /// `pulumi config`: every value, with the project's defaults for unset keys, sorted by key.
    /// Secrets are `[secret]` (leaves of objects too) unless `show_secrets`, which needs
    /// `crypter`.
    pub fn list(
        &self,
        project: &Project,
        crypter: Option<&dyn Crypter>,
        show_secrets: bool,
    ) -> Result<Vec<(ConfigKey, ConfigView)>, ConfigError> {
        let mut entries = Vec::new();
        for (key, value) in &self.config {
            let mode = match (show_secrets && value.is_secret(), crypter) {
                (false, _) => Reveal::Blind,
                (true, Some(c)) => Reveal::Decrypt(c),
                (true, None) => {
                    return Err(ConfigError::NoCrypter {
                        file: self.file_name.clone(),
                        key: key.clone(),
                    });
                }
            };
            let (text, object) = value
                .reveal(mode)
                .map_err(|source| self.secret_error(key, source))?;
            let view = ConfigView {
                value: text,
                object,
                secret: value.is_secret(),
            };
            entries.push((key.clone(), view));
        }
        for (raw_key, decl) in &project.config {
            let key = ConfigKey::parse(raw_key, &project.name)?;
            if self.config.contains_key(&key) {
                continue;
            }
            if let Some(v) = decl.default.as_ref().or(decl.value.as_ref()) {
                let (value, object) = declared_text(v);
                let view = if decl.secret && !show_secrets {
                    ConfigView {
                        value: SECRET_PLACEHOLDER.to_owned(),
                        object: None,
                        secret: true,
                    }
                } else {
                    ConfigView {
                        value,
                        object,
                        secret: decl.secret,
                    }
                };
                entries.push((key, view));
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// `pulumi config --json`: `{"ns:key": {"value": ..., "objectValue": ..., "secret": ...}}`.
    /// Without `show_secrets`, secret entries carry only `"secret": true`.
    pub fn list_json(
        &self,
        project: &Project,
        crypter: Option<&dyn Crypter>,
        show_secrets: bool,
    ) -> Result<Json, ConfigError> {
        let mut out = serde_json::Map::new();
        for (key, view) in self.list(project, crypter, show_secrets)? {
            let mut entry = serde_json::Map::new();
            if !view.secret || show_secrets {
                entry.insert("value".into(), Json::String(view.value));
                if let Some(object) = view.object {
                    entry.insert("objectValue".into(), object);
                }
            }
            entry.insert("secret".into(), Json::Bool(view.secret));
            out.insert(key.to_string(), Json::Object(entry));
        }
        Ok(Json::Object(out))
    }

    fn encrypt(
        &self,
        key: &ConfigKey,
        plaintext: &str,
        crypter: Option<&dyn Crypter>,
    ) -> Result<String, ConfigError> {
        let crypter = crypter.ok_or_else(|| ConfigError::NoCrypter {
            file: self.file_name.clone(),
            key: key.clone(),
        })?;
        crypter
            .encrypt(plaintext)
            .map_err(|source| self.secret_error(key, source))
    }

    fn view(
        &self,
        key: &ConfigKey,
        value: &ConfigValue,
        crypter: Option<&dyn Crypter>,
    ) -> Result<ConfigView, ConfigError> {
        value
            .view(crypter)
            .map_err(|source| self.secret_error(key, source))
    }

    fn secret_error(&self, key: &ConfigKey, source: SecretsError) -> ConfigError {
        ConfigError::Secret {
            file: self.file_name.clone(),
            key: key.clone(),
            source: Box::new(source),
        }
    }

    fn path_error(&self, key: &ConfigKey, inner: &[PathElement], reason: String) -> ConfigError {
        ConfigError::Path {
            file: self.file_name.clone(),
            key: key.clone(),
            path: PropertyPath::from(inner.to_vec()).to_string(),
            reason,
        }
    }

    /// Splits a `--path` argument into its config key and the path inside the key's value.
    fn split_path(
        &self,
        path: &str,
        project: &str,
    ) -> Result<(ConfigKey, Vec<PathElement>), ConfigError> {
        let invalid = |reason: String| ConfigError::InvalidPath {
            file: self.file_name.clone(),
            path: path.to_owned(),
            reason,
        };
        let parsed = PropertyPath::parse(path).map_err(|e| invalid(e.to_string()))?;
        let mut segments = parsed.elements().to_vec();
        if segments.contains(&PathElement::Wildcard) {
            return Err(invalid("wildcards are not allowed in config paths".into()));
        }
        let Some(PathElement::Key(first)) = segments.first() else {
            return Err(invalid(
                "the first path element must be a config key name".into(),
            ));
        };
        let key = ConfigKey::parse(first, project).map_err(|e| invalid(e.to_string()))?;
        segments.remove(0);
        Ok((key, segments))
    }
}

const RESERVED_SECURE: &str = "\"secure\" key in maps of length 1 are reserved";

/// Reads one stored value as Pulumi does; `raw` is the source text of a number or boolean.
fn read_value(v: Yaml, raw: Option<&String>) -> Result<ConfigValue, String> {
    Ok(match v {
        Yaml::String(s) => ConfigValue::Plain(s),
        // Go's YAML decoder leaves a string target empty for null.
        Yaml::Null => ConfigValue::Plain(String::new()),
        Yaml::Bool(b) => ConfigValue::Plain(raw.cloned().unwrap_or_else(|| b.to_string())),
        Yaml::Number(n) => ConfigValue::Plain(raw.cloned().unwrap_or_else(|| n.to_string())),
        Yaml::Tagged(t) => read_value(t.value, None)?,
        structured => {
            let json = yaml_to_json(&structured)?;
            match secure_leaf(&json) {
                Some(ct) => ConfigValue::Secure(ct.to_owned()),
                None => ConfigValue::Object(json),
            }
        }
    })
}

/// The YAML form of a stored value.
fn stored_yaml(v: &ConfigValue) -> Yaml {
    match v {
        ConfigValue::Plain(s) => Yaml::String(s.clone()),
        ConfigValue::Secure(ct) => {
            let mut m = serde_yaml_ng::Mapping::new();
            m.insert(Yaml::String("secure".into()), Yaml::String(ct.clone()));
            Yaml::Mapping(m)
        }
        ConfigValue::Object(json) => json_to_yaml(json),
    }
}

fn json_to_yaml(v: &Json) -> Yaml {
    match v {
        Json::Null => Yaml::Null,
        Json::Bool(b) => Yaml::Bool(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Yaml::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Yaml::Number(u.into())
            } else {
                Yaml::Number(n.as_f64().unwrap_or(f64::NAN).into())
            }
        }
        Json::String(s) => Yaml::String(s.clone()),
        Json::Array(items) => Yaml::Sequence(items.iter().map(json_to_yaml).collect()),
        Json::Object(m) => Yaml::Mapping(
            m.iter()
                .map(|(k, v)| (Yaml::String(k.clone()), json_to_yaml(v)))
                .collect(),
        ),
    }
}

/// The source text of the `config:` scalars named in `wanted`, read without YAML's typing
/// (`1.10` stays "1.10"). `None` if the text cannot be walked; callers then use the typed value.
fn raw_scalar_text(text: &str, wanted: &HashSet<String>) -> Option<HashMap<String, String>> {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

    struct Top<'a>(&'a HashSet<String>);
    struct Config<'a>(&'a HashSet<String>);
    struct RawText(String);

    impl<'de> DeserializeSeed<'de> for Top<'_> {
        type Value = HashMap<String, String>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Top<'_> {
        type Value = HashMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a stack file mapping")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = HashMap::new();
            while let Some(key) = map.next_key::<Yaml>()? {
                if key.as_str() == Some("config") {
                    out = map.next_value_seed(Config(self.0))?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    impl<'de> DeserializeSeed<'de> for Config<'_> {
        type Value = HashMap<String, String>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Config<'_> {
        type Value = HashMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a config mapping")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = HashMap::new();
            while let Some(key) = map.next_key::<Yaml>()? {
                match key.as_str() {
                    Some(k) if self.0.contains(k) => {
                        let RawText(text) = map.next_value()?;
                        out.insert(k.to_owned(), text);
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(out)
        }
    }
    impl<'de> serde::Deserialize<'de> for RawText {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = RawText;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a scalar")
                }
                fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawText, E> {
                    Ok(RawText(v.to_owned()))
                }
            }
            // serde_yaml_ng hands a scalar's source text to `deserialize_str`, untyped.
            d.deserialize_str(V)
        }
    }

    Top(wanted)
        .deserialize(serde_yaml_ng::Deserializer::from_str(text))
        .ok()
}

/// Pulumi's `--path` leaf typing: `true`/`false` are booleans, integers without a leading zero
/// are numbers (so `007` stays a string), anything else is a string.
fn path_leaf(value: &str) -> Json {
    match value {
        "true" => Json::Bool(true),
        "false" => Json::Bool(false),
        _ if value.len() > 1 && value.starts_with('0') => Json::String(value.to_owned()),
        _ => match value.parse::<i64>() {
            Ok(i) => Json::from(i),
            Err(_) => Json::String(value.to_owned()),
        },
    }
}

fn set_in(root: &mut Json, segments: &[PathElement], leaf: Json) -> Result<(), String> {
    let mut cursor = &mut *root;
    for segment in segments {
        if secure_leaf(cursor).is_some() {
            return Err("cannot set a path inside a secret value".into());
        }
        cursor = match segment {
            PathElement::Index(index) => {
                if cursor.is_null() {
                    *cursor = Json::Array(Vec::new());
                }
                let Json::Array(items) = cursor else {
                    return Err(format!("an array was expected for index {index}"));
                };
                let len = items.len();
                if *index > len {
                    return Err(format!(
                        "array index {index} out of range (the list has {len} elements)"
                    ));
                }
                if *index == len {
                    items.push(Json::Null);
                }
                &mut items[*index]
            }
            PathElement::Wildcard => return Err("wildcards are not allowed in config paths".into()),
            PathElement::Key(k) => {
                if cursor.is_null() {
                    *cursor = Json::Object(serde_json::Map::new());
                }
                let Json::Object(map) = cursor else {
                    return Err(format!("a map was expected for key {k:?}"));
                };
                map.entry(k.clone()).or_insert(Json::Null)
            }
        };
    }
    *cursor = leaf;
    // The container must not now look like a secret leaf (`data.secure = "x"`).
    if let Some((_, parents)) = segments.split_last()
        && get_in(root, parents).is_some_and(|parent| secure_leaf(parent).is_some())
    {
        return Err(RESERVED_SECURE.into());
    }
    Ok(())
}

/// The value at a path; secret leaves are opaque.
fn get_in<'a>(root: &'a Json, segments: &[PathElement]) -> Option<&'a Json> {
    let mut cursor = root;
    for segment in segments {
        if secure_leaf(cursor).is_some() {
            return None;
        }
        cursor = match (cursor, segment) {
            (Json::Array(items), PathElement::Index(i)) => items.get(*i)?,
            (Json::Object(map), PathElement::Key(k)) => map.get(k)?,
            _ => return None,
        };
    }
    Some(cursor)
}

fn get_in_mut<'a>(root: &'a mut Json, segments: &[PathElement]) -> Option<&'a mut Json> {
    let mut cursor = root;
    for segment in segments {
        if secure_leaf(cursor).is_some() {
            return None;
        }
        cursor = match (cursor, segment) {
            (Json::Array(items), PathElement::Index(i)) => items.get_mut(*i)?,
            (Json::Object(map), PathElement::Key(k)) => map.get_mut(k)?,
            _ => return None,
        };
    }
    Some(cursor)
}

/// A small block-style YAML writer in Pulumi's (go-yaml v3, indent 2) layout: nested mappings and
/// sequences indented by two, scalars quoted by serde_yaml_ng's rules, multi-line strings
/// double-quoted.
/// The first thing in `v` that the file writer cannot write back as it was read: a tag other
/// than `!name` (letters, digits, `-`, `_`, `.`), a tagged key, or a key that is a mapping or
/// a list.
fn find_unwritable(v: &Yaml) -> Option<String> {
    match v {
        Yaml::Tagged(t) => {
            let text = t.tag.to_string();
            let plain = text.strip_prefix('!').is_some_and(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            });
            if plain {
                find_unwritable(&t.value)
            } else {
                Some(format!(
                    "the YAML tag {:?} (only tags such as `!name` are kept)",
                    crate::text::visible_line(&text)
                ))
            }
        }
        Yaml::Sequence(items) => items.iter().find_map(find_unwritable),
        Yaml::Mapping(m) => m.iter().find_map(|(k, v)| {
            match k {
                Yaml::Tagged(_) => return Some("a tagged key".to_owned()),
                Yaml::Mapping(_) | Yaml::Sequence(_) => {
                    return Some("a key that is a mapping or a list".to_owned());
                }
                _ => {}
            }
            find_unwritable(v).map(|what| match k.as_str() {
                Some(key) => format!("{what} under {key:?}"),
                None => what,
            })
        }),
        _ => None,
    }
}

mod emit {
    use super::{Yaml, yaml_key_string, yaml_to_json};

    pub(super) fn mapping<'a>(
        out: &mut String,
        entries: impl Iterator<Item = (&'a Yaml, &'a Yaml)>,
        indent: usize,
        first_inline: bool,
    ) {
        for (i, (k, v)) in entries.enumerate() {
            if i > 0 || !first_inline {
                push_indent(out, indent);
            }
            let key = key_text(k);
            if key.len() > MAX_IMPLICIT_KEY_BYTES {
                // YAML readers refuse an implicit key of over 1,024 characters; a long key is
                // written as an explicit one (`? key` then `: value`), as go-yaml does.
                out.push_str("? ");
                out.push_str(&key);
                out.push('\n');
                push_indent(out, indent);
            } else {
                out.push_str(&key);
            }
            out.push(':');
            after_indicator(out, v, indent);
        }
    }

    /// The longest key written as `key: value` (go-yaml's limit for simple keys).
    const MAX_IMPLICIT_KEY_BYTES: usize = 128;

    /// Writes list items, the first one on the current line when `first_inline` (`- - x`).
    fn sequence(out: &mut String, items: &[Yaml], indent: usize, first_inline: bool) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !first_inline {
                push_indent(out, indent);
            }
            out.push('-');
            match item {
                Yaml::Mapping(m) if !m.is_empty() => {
                    out.push(' ');
                    mapping(out, m.iter(), indent + 2, true);
                }
                Yaml::Sequence(inner) if !inner.is_empty() => {
                    out.push(' ');
                    sequence(out, inner, indent + 2, true);
                }
                other => after_indicator(out, other, indent),
            }
        }
    }

    /// Writes a value following `key:` or `-`.
    fn after_indicator(out: &mut String, v: &Yaml, indent: usize) {
        match v {
            Yaml::Mapping(m) if !m.is_empty() => {
                out.push('\n');
                mapping(out, m.iter(), indent + 2, false);
            }
            Yaml::Sequence(items) if !items.is_empty() => {
                out.push('\n');
                sequence(out, items, indent + 2, false);
            }
            Yaml::Tagged(t) => {
                out.push(' ');
                out.push_str(&t.tag.to_string());
                after_indicator(out, &t.value, indent);
            }
            scalar => {
                out.push(' ');
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }

    fn push_indent(out: &mut String, indent: usize) {
        out.extend(std::iter::repeat_n(' ', indent));
    }

    fn key_text(k: &Yaml) -> String {
        match k {
            Yaml::Mapping(_) | Yaml::Sequence(_) | Yaml::Tagged(_) => {
                // Complex keys are written as JSON, which YAML reads as a flow collection.
                match yaml_key_string(k) {
                    Ok(s) => string_text(&s),
                    Err(_) => yaml_to_json(k)
                        .map(|j| j.to_string())
                        .unwrap_or_else(|_| "null".to_owned()),
                }
            }
            scalar => scalar_text(scalar),
        }
    }

    fn scalar_text(v: &Yaml) -> String {
        match v {
            Yaml::Null => "null".to_owned(),
            Yaml::Bool(b) => b.to_string(),
            Yaml::String(s) => string_text(s),
            Yaml::Mapping(_) => "{}".to_owned(),
            Yaml::Sequence(_) => "[]".to_owned(),
            other => single_line(other).unwrap_or_else(|| "null".to_owned()),
        }
    }

    fn string_text(s: &str) -> String {
        single_line(&Yaml::String(s.to_owned())).unwrap_or_else(|| double_quoted(s))
    }

    /// serde_yaml_ng's rendering of a scalar when it fits on one line (it picks plain or quoted
    /// style so the text reads back as the same value).
    fn single_line(v: &Yaml) -> Option<String> {
        let text = serde_yaml_ng::to_string(v).ok()?;
        let text = text.strip_suffix('\n').unwrap_or(&text);
        (!text.contains('\n') && !text.starts_with(['|', '>'])).then(|| text.to_owned())
    }

    fn double_quoted(s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control()
                    || matches!(
                        c,
                        '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                    ) =>
                {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FILE: &str = "Pulumi.dev.yaml";
    const PROJECT: &str = "proj";

    /// Reversible and recognisable: `test:` plus the reversed text.
    struct TestCrypter;

    impl Crypter for TestCrypter {
        fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
            Ok(format!(
                "test:{}",
                plaintext.chars().rev().collect::<String>()
            ))
        }
        fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
            ciphertext
                .strip_prefix("test:")
                .map(|s| s.chars().rev().collect())
                .ok_or(SecretsError::Decrypt)
        }
    }

    /// A crypter with the wrong passphrase: nothing decrypts.
    struct WrongCrypter;

    impl Crypter for WrongCrypter {
        fn encrypt(&self, _: &str) -> Result<String, SecretsError> {
            Err(SecretsError::Decrypt)
        }
        fn decrypt(&self, _: &str) -> Result<String, SecretsError> {
            Err(SecretsError::Decrypt)
        }
    }

    /// Another stack's secrets provider: `other:` plus the text.
    struct OtherCrypter;

    impl Crypter for OtherCrypter {
        fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
            Ok(format!("other:{plaintext}"))
        }
        fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
            ciphertext
                .strip_prefix("other:")
                .map(str::to_owned)
                .ok_or(SecretsError::Decrypt)
        }
    }

    #[test]
    fn reencrypting_moves_every_secret_to_the_other_provider() {
        let cases = [
            (
                ConfigValue::Plain("x".into()),
                ConfigValue::Plain("x".into()),
            ),
            (
                ConfigValue::Secure("test:terces".into()),
                ConfigValue::Secure("other:secret".into()),
            ),
            (
                ConfigValue::Object(
                    json!({"a": [1, {"secure": "test:ti"}], "b": {"secure": "test:x"}}),
                ),
                ConfigValue::Object(
                    json!({"a": [1, {"secure": "other:it"}], "b": {"secure": "other:x"}}),
                ),
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(
                value.reencrypt(&TestCrypter, &OtherCrypter).unwrap(),
                expected
            );
        }
        assert!(
            ConfigValue::Secure("test:x".into())
                .reencrypt(&WrongCrypter, &OtherCrypter)
                .is_err()
        );
    }

    fn key(s: &str) -> ConfigKey {
        match ConfigKey::parse(s, PROJECT) {
            Ok(k) => k,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn file(text: &str) -> StackConfigFile {
        match StackConfigFile::from_yaml(text, FILE) {
            Ok(f) => f,
            Err(e) => panic!("{text}\n=> {e}"),
        }
    }

    fn project(text: &str) -> Project {
        match Project::from_yaml(text, "Pulumi.yaml") {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    fn ok<T>(r: Result<T, ConfigError>) -> T {
        match r {
            Ok(v) => v,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err<T: fmt::Debug>(r: Result<T, ConfigError>) -> String {
        match r {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    const C: Option<&dyn Crypter> = Some(&TestCrypter);

    #[test]
    fn key_parsing() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<&str>)] = &[
            ("region", Some("proj:region")),
            ("aws:region", Some("aws:region")),
            ("proj:name", Some("proj:name")),
            ("aws:config:region", Some("aws:region")),
            ("a-b.c:x_y", Some("a-b.c:x_y")),
            ("aws:other:region", None),
            ("a:b:c:d", None),
            (":region", None),
            ("aws:", None),
            ("", None),
            ("aws:config:", None),
        ];
        for (input, want) in cases {
            let got = ConfigKey::parse(input, PROJECT);
            match (got, want) {
                (Ok(k), Some(w)) => assert_eq!(k.to_string(), *w, "{input}"),
                (Err(e), None) => {
                    let msg = e.to_string();
                    assert!(msg.contains(&format!("{input:?}")), "{msg}");
                    assert!(msg.contains("<namespace>:<name>"), "{msg}");
                }
                (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
            }
        }
        // Stack files need the namespace.
        assert!(ConfigKey::parse_qualified("region").is_err());
        assert_eq!(ok("aws:region".parse::<ConfigKey>()).name(), "region");
        let k = key("aws:region");
        assert_eq!((k.namespace(), k.name()), ("aws", "region"));
        assert_eq!(key("x").pretty(PROJECT), "x");
        assert_eq!(k.pretty(PROJECT), "aws:region");
    }

    #[test]
    fn keys_order_as_strings() {
        let mut keys = [key("aws:region"), key("aws-native:x"), key("b"), key("a:z")];
        keys.sort();
        let got: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(got, ["a:z", "aws-native:x", "aws:region", "proj:b"]);
    }

    #[test]
    fn reads_every_value_form() {
        let f = file(
            r#"
secretsprovider: passphrase
encryptionsalt: v1:salt
config:
  proj:plain: hello
  proj:int: 42
  proj:version: 1.10
  proj:flag: true
  proj:zip: 01234
  proj:empty:
  proj:password:
    secure: v1:abc:def
  aws:config:region: us-west-2
  proj:data:
    active: true
    nums:
      - 1
      - 2.5
    inner:
      secret:
        secure: ct
environment:
  - env1
"#,
        );
        assert_eq!(f.secrets_provider.as_deref(), Some("passphrase"));
        assert_eq!(f.encryption_salt.as_deref(), Some("v1:salt"));
        let get = |k: &str| f.config.get(&key(k)).cloned();
        assert_eq!(get("plain"), Some(ConfigValue::Plain("hello".into())));
        assert_eq!(get("int"), Some(ConfigValue::Plain("42".into())));
        // The source text, not the float 1.1.
        assert_eq!(get("version"), Some(ConfigValue::Plain("1.10".into())));
        assert_eq!(get("flag"), Some(ConfigValue::Plain("true".into())));
        assert_eq!(get("zip"), Some(ConfigValue::Plain("01234".into())));
        assert_eq!(get("empty"), Some(ConfigValue::Plain(String::new())));
        assert_eq!(
            get("password"),
            Some(ConfigValue::Secure("v1:abc:def".into()))
        );
        assert_eq!(
            get("aws:region"),
            Some(ConfigValue::Plain("us-west-2".into()))
        );
        let data = get("data");
        assert_eq!(
            data,
            Some(ConfigValue::Object(json!({
                "active": true, "nums": [1, 2.5], "inner": {"secret": {"secure": "ct"}}
            })))
        );
        assert!(data.is_some_and(|d| d.is_secret() && d.is_object()));
        assert!(!ConfigValue::Object(json!({"a": [1]})).is_secret());
        assert_eq!(f.extra.keys().collect::<Vec<_>>(), ["environment"]);
        assert!(f.config.values().any(ConfigValue::is_secret));
        // An empty file is an empty configuration.
        assert_eq!(file(""), StackConfigFile::new(FILE));
        assert!(StackConfigFile::default().config.is_empty());
    }

    #[test]
    fn read_errors_name_the_file_and_key() {
        #[rustfmt::skip]
        let cases = [
            ("config:\n  region: x\n", "Pulumi.dev.yaml: could not parse \"region\""),
            ("config:\n  a:b: 1\n  a:config:b: 2\n", "config key \"a:b\" is set more than once"),
            ("config: [a]\n", "'config' must be a mapping, got a list"),
            ("encryptionsalt: [a]\n", "'encryptionsalt' must be a string"),
            ("- a\n", "a stack file must be a YAML mapping"),
            ("config:\n  p:x: [\n", "Pulumi.dev.yaml: invalid YAML"),
            ("config:\n  p:x:\n    a: .nan\n", "config key \"p:x\": the number .nan cannot be represented"),
            // Found by fuzzing: tags were written back as YAML that did not parse, or dropped.
            ("encryg:g:\n\n  !", "a stack file cannot hold the YAML tag"),
            ("x:\n !tag k: v\n", "cannot hold a tagged key under \"x\""),
            ("fcg:\n ?    ?\n", "cannot hold a key that is a mapping or a list under \"fcg\""),
        ];
        for (text, want) in cases {
            let got = err(StackConfigFile::from_yaml(text, FILE));
            assert!(
                got.contains(want),
                "for {text:?}\nwant {want:?}\ngot  {got:?}"
            );
            assert!(got.starts_with("Pulumi.dev.yaml: "), "{got}");
        }
    }

    #[test]
    fn writes_pulumis_layout() {
        let mut f = StackConfigFile::new(FILE);
        f.encryption_salt = Some("v1:salt".into());
        ok(f.set(&key("plain"), "hello", false, None));
        ok(f.set(&key("password"), "hunter2", true, C));
        ok(f.set_path("data.active", "true", false, None, PROJECT));
        ok(f.set_path("data.nums[0]", "1", false, None, PROJECT));
        ok(f.set(&key("aws:region"), "us-west-2", false, None));
        let want = "\
encryptionsalt: v1:salt
config:
  aws:region: us-west-2
  proj:data:
    active: true
    nums:
      - 1
  proj:password:
    secure: test:2retnuh
  proj:plain: hello
";
        assert_eq!(f.to_yaml(), want);
        assert_eq!(StackConfigFile::new(FILE).to_yaml(), "{}\n");
    }

    #[test]
    fn round_trip_keeps_every_value() {
        let text = r##"secretsprovider: awskms://key
encryptedkey: abc
encryptionsalt: v1:salt
config:
  aws:region: us-west-2
  proj:a-bool: 'true'
  proj:empty: ''
  proj:float: 1.50
  proj:int: 42
  proj:lines: "one\ntwo\n  three\u2028"
  proj:list:
    - - nested
    - a: 1
      b:
        - x
    - {}
    - []
    - null
  proj:obj:
    z: 1
    a:
      secure: v1:x:y
    "key with: colon": "#hash"
    quote: "it's"
  proj:password:
    secure: v1:abc:def
  proj:plain: hello
  proj:quoted: '123'
  proj:unicode: "héllo 世界"
environment:
  imports:
    - base
custom: !tag value
"##;
        let first = file(text);
        let written = first.to_yaml();
        let second = file(&written);
        assert_eq!(first.config, second.config, "\n{written}");
        assert_eq!(first.extra, second.extra, "\n{written}");
        assert_eq!(first, second);
        // Writing again is stable.
        assert_eq!(second.to_yaml(), written);
        // Values whose text YAML would retype keep their text.
        assert_eq!(
            second.config[&key("float")],
            ConfigValue::Plain("1.50".into())
        );
        assert_eq!(
            second.config[&key("a-bool")],
            ConfigValue::Plain("true".into())
        );
        assert_eq!(
            second.config[&key("lines")],
            ConfigValue::Plain("one\ntwo\n  three\u{2028}".into())
        );
    }

    #[test]
    fn long_keys_are_written_as_explicit_keys_and_read_back() {
        // YAML readers refuse implicit keys over 1,024 characters.
        let long = "k".repeat(1100);
        let mut f = StackConfigFile::new(FILE);
        ok(f.set(&key(&long), "v", false, None));
        ok(f.set_path(&format!("obj.{long}[0]"), "w", false, None, PROJECT));
        let written = f.to_yaml();
        assert!(
            written.contains(&format!("  ? proj:{long}\n  : v\n")),
            "{written}"
        );
        let read = file(&written);
        assert_eq!(read, f);
        assert_eq!(read.to_yaml(), written);
    }

    #[test]
    fn set_get_remove_plain_and_secret() {
        let mut f = StackConfigFile::new(FILE);
        ok(f.set(&key("name"), "world", false, None));
        ok(f.set(&key("password"), "s3cret", true, C));
        // The file holds ciphertext only.
        assert_eq!(
            f.config[&key("password")],
            ConfigValue::Secure("test:terc3s".into())
        );
        assert!(!f.to_yaml().contains("s3cret"));

        let plain = ok(f.get(&key("name"), None));
        assert_eq!(
            plain,
            Some(ConfigView {
                value: "world".into(),
                object: None,
                secret: false
            })
        );
        let blind = ok(f.get(&key("password"), None));
        assert_eq!(
            blind.map(|v| (v.value, v.secret)),
            Some(("[secret]".into(), true))
        );
        let shown = ok(f.get(&key("password"), C));
        assert_eq!(shown.map(|v| v.value), Some("s3cret".into()));
        assert_eq!(ok(f.get(&key("missing"), C)), None);

        // Secrets need a crypter; a failing one is reported with the key.
        let no = err(f.set(&key("other"), "x", true, None));
        assert!(
            no.contains("Pulumi.dev.yaml: config key \"proj:other\" is secret"),
            "{no}"
        );
        let wrong = err(f.get(&key("password"), Some(&WrongCrypter)));
        assert!(
            wrong.starts_with("Pulumi.dev.yaml: config key \"proj:password\": failed to decrypt"),
            "{wrong}"
        );

        assert!(f.remove(&key("name")));
        assert!(!f.remove(&key("name")), "removing a missing key is fine");
        assert_eq!(ok(f.get(&key("name"), None)), None);
    }

    #[test]
    fn path_set_table() {
        // (existing file config, path, value, secret, resulting value of the key)
        #[rustfmt::skip]
        let cases: &[(&str, &str, &str, bool, &str, Json)] = &[
            ("", "data.active", "true", false, "proj:data", json!({"active": true})),
            ("", "data.n", "false", false, "proj:data", json!({"n": false})),
            ("", "data.n", "42", false, "proj:data", json!({"n": 42})),
            ("", "data.n", "-7", false, "proj:data", json!({"n": -7})),
            ("", "data.n", "007", false, "proj:data", json!({"n": "007"})),
            ("", "data.n", "0", false, "proj:data", json!({"n": 0})),
            ("", "data.n", "1.5", false, "proj:data", json!({"n": "1.5"})),
            ("", "data.n", "True", false, "proj:data", json!({"n": "True"})),
            ("", "data.nums[0]", "1", false, "proj:data", json!({"nums": [1]})),
            ("", "data[0].x", "y", false, "proj:data", json!([{"x": "y"}])),
            ("", "data[0][0]", "y", false, "proj:data", json!([["y"]])),
            ("", "data.a.b.c", "d", false, "proj:data", json!({"a": {"b": {"c": "d"}}})),
            ("", "data[\"x.y\"].z", "1", false, "proj:data", json!({"x.y": {"z": 1}})),
            ("", "[\"aws:tags\"].env", "prod", false, "aws:tags", json!({"env": "prod"})),
            ("", "aws:tags.env", "prod", false, "aws:tags", json!({"env": "prod"})),
            ("", "proj:config:data.x", "1", false, "proj:data", json!({"x": 1})),
            ("", "data.password", "pw", true, "proj:data", json!({"password": {"secure": "test:wp"}})),
            ("", "data.list[0]", "pw", true, "proj:data", json!({"list": [{"secure": "test:wp"}]})),
            // Appending at the end, replacing in place, and keeping siblings.
            ("proj:data:\n    nums: [1, 2]\n", "data.nums[2]", "3", false, "proj:data", json!({"nums": [1, 2, 3]})),
            ("proj:data:\n    nums: [1, 2]\n", "data.nums[0]", "9", false, "proj:data", json!({"nums": [9, 2]})),
            ("proj:data:\n    a: 1\n", "data.b", "2", false, "proj:data", json!({"a": 1, "b": 2})),
            // A plain or secure scalar is replaced by the structure.
            ("proj:data: text\n", "data.a", "1", false, "proj:data", json!({"a": 1})),
            ("proj:data:\n    secure: ct\n", "data.a", "1", false, "proj:data", json!({"a": 1})),
        ];
        for (existing, path, value, secret, k, want) in cases {
            let mut f = file(&format!("config:\n  {existing}"));
            if let Err(e) = f.set_path(path, value, *secret, C, PROJECT) {
                panic!("set --path {path} {value}: {e}");
            }
            assert_eq!(
                f.config.get(&key(k)),
                Some(&ConfigValue::Object(want.clone())),
                "{path}"
            );
            // What was set reads back; secrets decrypted on request.
            let got = ok(f.get_path(path, PROJECT, C)).map(|v| v.value);
            assert_eq!(got.as_deref(), Some(*value), "get --path {path}");
        }
        // A one-element path is a plain set: no typing.
        let mut f = StackConfigFile::new(FILE);
        ok(f.set_path("flag", "true", false, None, PROJECT));
        assert_eq!(f.config[&key("flag")], ConfigValue::Plain("true".into()));
        ok(f.set_path("[\"aws:region\"]", "x", true, C, PROJECT));
        assert_eq!(
            f.config[&key("aws:region")],
            ConfigValue::Secure("test:x".into())
        );
    }

    #[test]
    fn path_set_errors() {
        #[rustfmt::skip]
        let cases = [
            ("proj:data:\n    nums: [1]\n", "data.nums[5]", "Pulumi.dev.yaml: config key \"proj:data\": path \"nums[5]\": array index 5 out of range"),
            ("proj:data:\n    nums: [1]\n", "data.nums[-1]", "invalid index \"-1\" at byte 10"),
            ("proj:data:\n    nums: [1]\n", "data.nums.x", "config key \"proj:data\": path \"nums.x\": a map was expected for key \"x\""),
            ("proj:data:\n    a: {}\n", "data.a[0]", "path \"a[0]\": an array was expected for index 0"),
            ("proj:data:\n    a: [1]\n", "data.a[0].b", "a map was expected for key \"b\""),
            ("proj:data:\n    pw: {secure: ct}\n", "data.pw.x", "cannot set a path inside a secret value"),
            ("", "data.secure", "\"secure\" key in maps of length 1 are reserved"),
            ("", "data.nums[x]", "Pulumi.dev.yaml: config path \"data.nums[x]\": invalid property path \"data.nums[x]\": invalid index \"x\""),
            ("", "data.nums[0", "missing ']' to close the '[' at byte 9"),
            ("", "data[\"x", "unterminated string starting at byte 5"),
            ("", "data[\"x\"y", "unexpected 'y' at byte 8, expected ']' after the quoted key"),
            ("", "[0].x", "the first path element must be a config key name"),
            ("", ".data", "unexpected '.' at byte 0"),
            ("", "data..x", "empty key after the '.' at byte 4"),
            ("", "data.", "empty key after the '.' at byte 4"),
            ("", "data.list[*]", "wildcards are not allowed in config paths"),
            ("", "data[0]x", "unexpected 'x' at byte 7"),
            ("", "", "invalid property path: it is empty"),
            ("", "a:b:c:d.x", "could not parse \"a:b:c:d\" as a configuration key"),
        ];
        for (existing, path, want) in cases {
            let mut f = file(&format!("config:\n  {existing}"));
            let before = f.clone();
            let got = err(f.set_path(path, "v", false, None, PROJECT));
            assert!(
                got.contains(want),
                "set --path {path}\nwant {want:?}\ngot  {got:?}"
            );
            assert_eq!(f, before, "a failed set changes nothing");
        }
    }

    #[test]
    fn path_get_and_remove_table() {
        let base = "config:\n  proj:data:\n    a: 1\n    nums: [1, 2, 3]\n    pw:\n      secure: test:terces\n    deep:\n      x: {y: true}\n  proj:plain: text\n";
        #[rustfmt::skip]
        let gets: &[(&str, Option<&str>, bool)] = &[
            ("data.a", Some("1"), false),
            ("data.nums[1]", Some("2"), false),
            ("data.nums", Some("[1,2,3]"), false),
            ("data.deep.x.y", Some("true"), false),
            ("data.deep", Some("{\"x\":{\"y\":true}}"), false),
            ("data.pw", Some("[secret]"), true),
            ("data.nums[9]", None, false),
            ("data.missing", None, false),
            ("data.a.b", None, false),
            ("data.pw.secure", None, false),
            ("plain.x", None, false),
            ("nothing.x", None, false),
            ("plain", Some("text"), false),
        ];
        let f = file(base);
        for (path, want, secret) in gets {
            let got = ok(f.get_path(path, PROJECT, None));
            assert_eq!(
                got.as_ref().map(|v| v.value.as_str()),
                *want,
                "get --path {path}"
            );
            assert_eq!(got.is_some_and(|v| v.secret), *secret, "{path}");
        }
        let whole = ok(f.get_path("data", PROJECT, None)).map(|v| v.value);
        assert_eq!(
            whole.as_deref(),
            Some(r#"{"a":1,"deep":{"x":{"y":true}},"nums":[1,2,3],"pw":"[secret]"}"#)
        );
        let revealed = ok(f.get_path("data", PROJECT, C)).and_then(|v| v.object);
        assert_eq!(revealed.map(|o| o["pw"].clone()), Some(json!("secret")));
        #[rustfmt::skip]
        let removes: &[(&str, Option<Json>)] = &[
            ("data.a", Some(json!({"nums": [1, 2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {"y": true}}}))),
            ("data.nums[0]", Some(json!({"a": 1, "nums": [2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {"y": true}}}))),
            ("data.deep.x.y", Some(json!({"a": 1, "nums": [1, 2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {}}}))),
            ("data", None),
            // Nothing there: no change, no error.
            ("data.nums[7]", Some(json!({"a": 1, "nums": [1, 2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {"y": true}}}))),
            ("data.zzz.y", Some(json!({"a": 1, "nums": [1, 2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {"y": true}}}))),
            ("data.pw.secure", Some(json!({"a": 1, "nums": [1, 2, 3], "pw": {"secure": "test:terces"}, "deep": {"x": {"y": true}}}))),
        ];
        for (path, want) in removes {
            let mut f = file(base);
            ok(f.remove_path(path, PROJECT));
            let got = f.config.get(&key("data")).cloned();
            assert_eq!(
                got,
                want.clone().map(ConfigValue::Object),
                "rm --path {path}"
            );
        }
        let mut f = file(base);
        ok(f.remove_path("unset.x", PROJECT));
        ok(f.remove_path("plain.x", PROJECT));
        assert_eq!(f, file(base));
        // Removing a sibling must not leave a map that looks like a secret leaf.
        let mut f = file("config:\n  proj:d:\n    secure: x\n    other: 1\n");
        let got = err(f.remove_path("d.other", PROJECT));
        assert!(
            got.contains("\"secure\" key in maps of length 1 are reserved"),
            "{got}"
        );
    }

    #[test]
    fn resolve_with_defaults_types_and_secrets() {
        let p = project(
            r#"
name: proj
runtime: nodejs
config:
  size:
    type: integer
    default: 3
  name: anon
  tags:
    type: array
    items: {type: string}
    default: [a, b]
  token:
    type: string
    secret: true
    default: dflt
  count:
    type: integer
  aws:region: us-east-1
"#,
        );
        let mut f = StackConfigFile::new(FILE);
        ok(f.set(&key("count"), "5", false, None));
        ok(f.set(&key("password"), "pw", true, C));
        ok(f.set_path("data.active", "true", false, None, PROJECT));
        ok(f.set_path("data.key", "k", true, C, PROJECT));
        ok(f.set_path("data.nums[0]", "1", false, None, PROJECT));
        ok(f.set_path("plainobj.b", "2", false, None, PROJECT));
        ok(f.set_path("plainobj.a", "1", false, None, PROJECT));
        let resolved = ok(f.resolve(C, &p));
        let got: Vec<(String, String, bool)> = resolved
            .iter()
            .map(|(k, v)| (k.to_string(), v.value.clone(), v.secret))
            .collect();
        #[rustfmt::skip]
        let want = [
            ("aws:region", "us-east-1", false),
            ("proj:count", "5", false),
            ("proj:data", r#"{"active":true,"key":"k","nums":[1]}"#, true),
            ("proj:name", "anon", false),
            ("proj:password", "pw", true),
            ("proj:plainobj", r#"{"a":1,"b":2}"#, false),
            ("proj:size", "3", false),
            ("proj:tags", r#"["a","b"]"#, false),
            ("proj:token", "dflt", true),
        ];
        let want: Vec<(String, String, bool)> = want
            .iter()
            .map(|(k, v, s)| (k.to_string(), v.to_string(), *s))
            .collect();
        assert_eq!(got, want);

        // Stack values win over project values.
        ok(f.set(&key("aws:region"), "eu-west-1", false, None));
        ok(f.set(&key("tags"), "x", false, None));
        let e = err(f.resolve(C, &p));
        assert_eq!(
            e,
            "Pulumi.dev.yaml: config key \"proj:tags\" must be of type 'array<string>'"
        );
        ok(f.set_path("tags[0]", "x", false, None, PROJECT));
        let resolved = ok(f.resolve(C, &p));
        assert_eq!(resolved[&key("aws:region")].value, "eu-west-1");
        assert_eq!(resolved[&key("tags")].value, r#"["x"]"#);
    }

    #[test]
    fn resolve_errors() {
        let p = project(
            "name: proj\nruntime: go\nconfig:\n  n:\n    type: integer\n  flag:\n    type: boolean\n    default: false\n  token:\n    type: string\n    secret: true\n    default: d\n",
        );
        /// (key, value, secret)
        type Entry<'a> = (&'a str, &'a str, bool);
        let with = |entries: &[Entry]| {
            let mut f = StackConfigFile::new(FILE);
            ok(f.set(&key("n"), "1", false, None));
            for (k, v, secret) in entries {
                ok(f.set(&key(k), v, *secret, C));
            }
            f
        };
        #[rustfmt::skip]
        let cases: &[(&[Entry], &str)] = &[
            (&[("n", "abc", false)], "Pulumi.dev.yaml: config key \"proj:n\" must be of type 'integer'"),
            (&[("n", "1.5", false)], "config key \"proj:n\" must be of type 'integer'"),
            (&[("n", "abc", true)], "config key \"proj:n\" must be of type 'integer'"),
            (&[("flag", "yes", false)], "config key \"proj:flag\" must be of type 'boolean'"),
            (&[("token", "plain", false)], "config key \"proj:token\" must be encrypted"),
        ];
        for (entries, want) in cases {
            let got = err(with(entries).resolve(C, &p));
            assert!(
                got.contains(want),
                "{entries:?}\nwant {want:?}\ngot  {got:?}"
            );
        }
        // A missing required key, with and without others.
        let missing = err(StackConfigFile::new(FILE).resolve(C, &p));
        assert_eq!(
            missing,
            "Pulumi.dev.yaml: stack is missing configuration value 'n'"
        );
        let p2 = project(
            "name: proj\nruntime: go\nconfig:\n  b: {type: string}\n  a: {type: string}\n  c: {type: string}\n",
        );
        let missing = err(StackConfigFile::new(FILE).resolve(C, &p2));
        assert!(
            missing.ends_with("missing configuration values 'a', 'b' and 'c'"),
            "{missing}"
        );
        // Secrets without a crypter, or with the wrong passphrase, name the key.
        let f = with(&[("token", "t", true)]);
        let none = err(f.resolve(None, &p));
        assert!(
            none.contains("config key \"proj:token\" is secret, but no secrets manager"),
            "{none}"
        );
        let wrong = err(f.resolve(Some(&WrongCrypter), &p));
        assert!(
            wrong.starts_with("Pulumi.dev.yaml: config key \"proj:token\": failed to decrypt"),
            "{wrong}"
        );
        // Nested secrets too.
        let mut f = with(&[]);
        ok(f.set_path("obj.inner[0]", "s", true, C, PROJECT));
        let wrong = err(f.resolve(Some(&WrongCrypter), &p));
        assert!(
            wrong.contains("config key \"proj:obj\": failed to decrypt"),
            "{wrong}"
        );
        // Untyped stack-only plain config needs no crypter.
        let f = with(&[]);
        assert_eq!(ok(f.resolve(None, &p))[&key("n")].value, "1");
    }

    #[test]
    fn list_and_json_views() {
        let p = project("name: proj\nruntime: go\nconfig:\n  dflt: 7\n  aws:region: us-east-1\n");
        let mut f = StackConfigFile::new(FILE);
        ok(f.set(&key("plain"), "hello", false, None));
        ok(f.set(&key("password"), "pw", true, C));
        ok(f.set_path("obj.b", "true", false, None, PROJECT));
        ok(f.set_path("obj.a", "x", true, C, PROJECT));
        ok(f.set_path("nums[0]", "1", false, None, PROJECT));

        let rows = |show: bool| -> Vec<(String, String, bool)> {
            ok(f.list(&p, C, show))
                .into_iter()
                .map(|(k, v)| (k.pretty(PROJECT), v.value, v.secret))
                .collect()
        };
        let s = |k: &str, v: &str, secret: bool| (k.to_owned(), v.to_owned(), secret);
        assert_eq!(
            rows(false),
            [
                s("aws:region", "us-east-1", false),
                s("dflt", "7", false),
                s("nums", "[1]", false),
                s("obj", r#"{"a":"[secret]","b":true}"#, true),
                s("password", "[secret]", true),
                s("plain", "hello", false),
            ]
        );
        assert_eq!(rows(true)[3], s("obj", r#"{"a":"x","b":true}"#, true));
        assert_eq!(rows(true)[4], s("password", "pw", true));
        // Showing secrets needs the crypter; hiding them does not.
        assert!(err(f.list(&p, None, true)).contains("is secret, but no secrets manager"));
        assert_eq!(ok(f.list(&p, None, false)).len(), 6);

        let hidden = ok(f.list_json(&p, None, false));
        let want_hidden = json!({
            "aws:region": {"value": "us-east-1", "secret": false},
            "proj:dflt": {"value": "7", "secret": false},
            "proj:nums": {"value": "[1]", "objectValue": [1], "secret": false},
            "proj:obj": {"secret": true},
            "proj:password": {"secret": true},
            "proj:plain": {"value": "hello", "secret": false},
        });
        assert_eq!(hidden, want_hidden);
        // Key order is sorted and each entry's fields are in Pulumi's order.
        assert_eq!(
            hidden.to_string(),
            r#"{"aws:region":{"value":"us-east-1","secret":false},"proj:dflt":{"value":"7","secret":false},"proj:nums":{"value":"[1]","objectValue":[1],"secret":false},"proj:obj":{"secret":true},"proj:password":{"secret":true},"proj:plain":{"value":"hello","secret":false}}"#
        );
        let shown = ok(f.list_json(&p, C, true));
        assert_eq!(
            shown["proj:obj"],
            json!({"value": r#"{"a":"x","b":true}"#, "objectValue": {"a": "x", "b": true}, "secret": true})
        );
        assert_eq!(
            shown["proj:password"],
            json!({"value": "pw", "secret": true})
        );
    }

    #[test]
    fn stack_file_names() {
        assert_eq!(stack_config_file_name("dev"), "Pulumi.dev.yaml");
    }
}
