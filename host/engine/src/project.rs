//! Project files (`Pulumi.yaml`), read and validated as Pulumi reads them.
//!
//! The CLI finds and reads the file; this module only parses text. Unknown top-level keys are kept
//! in [`Project::extra`] so nothing a newer Pulumi (or a human) wrote is lost.

use std::fmt;

use indexmap::IndexMap;
use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;

use crate::config::ConfigKey;

/// The names Pulumi looks for, in order, when finding a project's file.
pub const PROJECT_FILE_NAMES: [&str; 2] = ["Pulumi.yaml", "Pulumi.yml"];

/// Pulumi caps project names at 100 characters (`tokens.ValidateProjectName`).
const MAX_PROJECT_NAME_LEN: usize = 100;

/// A parsed project file.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub name: String,
    pub runtime: Runtime,
    /// Where the program lives, relative to the project file; the project's directory when unset.
    pub main: Option<String>,
    pub description: Option<String>,
    /// Config declarations keyed as written: bare (`key`, the project's namespace) or `pkg:key`.
    pub config: IndexMap<String, ConfigDeclaration>,
    /// Where `Pulumi.<stack>.yaml` files live (`stackConfigDir`, or the legacy string `config:`).
    pub stack_config_dir: Option<String>,
    pub backend: Option<BackendSpec>,
    /// Plugin overrides (`plugins: {providers, languages, analyzers}`), kept as written.
    pub plugins: Option<Yaml>,
    /// Every other top-level key (`author`, `template`, `options`, `packages`, ...), as written.
    pub extra: IndexMap<String, Yaml>,
}

/// The language runtime: `runtime: nodejs` or `runtime: {name: python, options: {...}}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Runtime {
    pub name: String,
    /// Runtime options (`virtualenv`, `typescript`, `toolchain`, ...); empty for the string form.
    pub options: IndexMap<String, Json>,
}

impl Runtime {
    /// A string-valued runtime option, such as `virtualenv` for Python.
    pub fn option_str(&self, name: &str) -> Option<&str> {
        self.options.get(name).and_then(Json::as_str)
    }
}

/// `backend: {url: ...}`: the state backend this project always uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendSpec {
    pub url: Option<String>,
}

/// A declared config key: the long form `{type, description, default, value, secret, items}` or
/// the short form `key: <value>` (a `default` for project keys, a `value` for other namespaces).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConfigDeclaration {
    /// The declared type; stack values of typed keys are checked against it.
    pub config_type: Option<ConfigType>,
    /// The element type of an `array`.
    pub items: Option<ConfigItems>,
    pub description: Option<String>,
    /// Used when the stack does not set the key (project-namespaced keys only).
    pub default: Option<Json>,
    /// A project-wide value for another package's key (`aws:region: us-west-2`).
    pub value: Option<Json>,
    /// The stack value must be encrypted.
    pub secret: bool,
}

/// The element type of an `array` declaration; arrays nest.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigItems {
    pub item_type: ConfigType,
    pub items: Option<Box<ConfigItems>>,
}

/// A declared config type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    String,
    Integer,
    Boolean,
    Array,
    /// Not in Pulumi's schema (which stops at `array`); Cairn accepts it for structured values.
    Object,
}

impl ConfigType {
    /// Parses a `type:` value.
    pub fn parse(s: &str) -> Option<ConfigType> {
        Some(match s {
            "string" => ConfigType::String,
            "integer" => ConfigType::Integer,
            "boolean" => ConfigType::Boolean,
            "array" => ConfigType::Array,
            "object" => ConfigType::Object,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ConfigType::String => "string",
            ConfigType::Integer => "integer",
            ConfigType::Boolean => "boolean",
            ConfigType::Array => "array",
            ConfigType::Object => "object",
        }
    }
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ConfigDeclaration {
    /// The full type name for messages: `integer`, `array<string>`, `array<array<boolean>>`.
    pub fn type_name(&self) -> Option<String> {
        self.config_type
            .map(|t| full_type_name(t, self.items.as_ref()))
    }

    /// Whether `value` fits the declared type (always true when untyped). Plain config values are
    /// passed as JSON strings, structured ones as their JSON; the rules are Pulumi's
    /// `ValidateConfigValue`: integers and booleans may be given as their string forms.
    pub fn accepts(&self, value: &Json) -> bool {
        match self.config_type {
            None => true,
            Some(t) => value_fits(t, self.items.as_ref(), value),
        }
    }
}

fn full_type_name(t: ConfigType, items: Option<&ConfigItems>) -> String {
    match items {
        Some(items) if t == ConfigType::Array => format!(
            "array<{}>",
            full_type_name(items.item_type, items.items.as_deref())
        ),
        _ => t.as_str().to_owned(),
    }
}

fn value_fits(t: ConfigType, items: Option<&ConfigItems>, value: &Json) -> bool {
    match t {
        ConfigType::String => value.is_string(),
        ConfigType::Integer => match value {
            Json::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            // Go's strconv.Atoi: optional sign, decimal digits, within 64 bits.
            Json::String(s) => s.parse::<i64>().is_ok(),
            _ => false,
        },
        ConfigType::Boolean => {
            matches!(value, Json::Bool(_)) || matches!(value.as_str(), Some("true" | "false"))
        }
        ConfigType::Array => match (value, items) {
            (Json::Array(elements), Some(items)) => elements
                .iter()
                .all(|e| value_fits(items.item_type, items.items.as_deref(), e)),
            _ => false,
        },
        ConfigType::Object => value.is_object(),
    }
}

/// Why a project file could not be read. Every variant names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProjectError {
    #[error("{file}: invalid YAML: {message}")]
    Yaml { file: String, message: String },
    #[error("{file}: a project file must be a YAML mapping")]
    NotAMapping { file: String },
    #[error("{file}: project is missing a '{field}' attribute{}", suggestion_text(.found))]
    MissingField {
        file: String,
        field: &'static str,
        /// A present key that is probably a typo of `field`.
        found: Option<String>,
    },
    #[error("{file}: '{field}': {reason}")]
    InvalidField {
        file: String,
        field: String,
        reason: String,
    },
    #[error("{file}: invalid project name {name:?}: {reason}")]
    InvalidName {
        file: String,
        name: String,
        reason: String,
    },
    #[error("{file}: config key '{key}': {reason}")]
    InvalidConfig {
        file: String,
        key: String,
        reason: String,
    },
}

fn suggestion_text(found: &Option<String>) -> String {
    match found {
        Some(key) => format!("; found '{key}' instead"),
        None => String::new(),
    }
}

impl Project {
    /// Parses and validates a project file; `file` names it in errors.
    pub fn from_yaml(text: &str, file: &str) -> Result<Project, ProjectError> {
        let doc: Yaml = serde_yaml_ng::from_str(text).map_err(|e| ProjectError::Yaml {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        let Yaml::Mapping(mapping) = doc else {
            return Err(ProjectError::NotAMapping {
                file: file.to_owned(),
            });
        };
        let mut top = IndexMap::new();
        for (k, v) in mapping {
            let Yaml::String(k) = k else {
                return Err(invalid(
                    file,
                    "(top level)",
                    format!("expected only string keys, got {}", yaml_kind(&k)),
                ));
            };
            top.insert(k, v);
        }
        Parser { file }.project(top)
    }

    /// Whether a declared config key belongs to this project's namespace (bare or `<name>:`).
    pub fn is_project_namespaced(&self, key: &str) -> bool {
        !key.contains(':')
            || key
                .strip_prefix(self.name.as_str())
                .is_some_and(|rest| rest.starts_with(':'))
    }

    /// The declarations with their keys parsed (bare keys go to the project's namespace).
    pub fn config_declarations(
        &self,
    ) -> impl Iterator<
        Item = (
            Result<ConfigKey, crate::config::ConfigError>,
            &ConfigDeclaration,
        ),
    > {
        self.config
            .iter()
            .map(|(k, d)| (ConfigKey::parse(k, &self.name), d))
    }
}

/// Checks a project name as `pulumi new` does: 1 to 100 of `[A-Za-z0-9_.-]`.
pub fn validate_project_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("project names may not be empty".into());
    }
    if name.len() > MAX_PROJECT_NAME_LEN {
        return Err(format!(
            "project names are limited to {MAX_PROJECT_NAME_LEN} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err(
            "project names may only contain alphanumerics, hyphens, underscores, and periods"
                .into(),
        );
    }
    // The name becomes a directory of the backend.
    if name == "." || name == ".." {
        return Err(format!(
            "{name:?} names a directory; project names are letters, digits, '-', '_' and '.', but not \".\" or \"..\""
        ));
    }
    Ok(())
}

fn invalid(file: &str, field: &str, reason: impl Into<String>) -> ProjectError {
    ProjectError::InvalidField {
        file: file.to_owned(),
        field: field.to_owned(),
        reason: reason.into(),
    }
}

/// The kind of a YAML value, for messages.
pub(crate) fn yaml_kind(v: &Yaml) -> &'static str {
    match v {
        Yaml::Null => "null",
        Yaml::Bool(_) => "a boolean",
        Yaml::Number(_) => "a number",
        Yaml::String(_) => "a string",
        Yaml::Sequence(_) => "a list",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(_) => "a tagged value",
    }
}

/// Converts YAML to JSON as Pulumi does: map keys become strings, tags are dropped. Fails only on
/// numbers JSON cannot hold (`.nan`, `.inf`).
pub(crate) fn yaml_to_json(v: &Yaml) -> Result<Json, String> {
    Ok(match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else if let Some(u) = n.as_u64() {
                Json::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map(Json::Number)
                    .ok_or_else(|| format!("the number {n} cannot be represented in JSON"))?
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(items) => {
            Json::Array(items.iter().map(yaml_to_json).collect::<Result<_, _>>()?)
        }
        Yaml::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                out.insert(yaml_key_string(k)?, yaml_to_json(v)?);
            }
            Json::Object(out)
        }
        Yaml::Tagged(t) => yaml_to_json(&t.value)?,
    })
}

/// A mapping key as a string: scalars take their text form (Go's `%v`), as Pulumi does.
pub(crate) fn yaml_key_string(k: &Yaml) -> Result<String, String> {
    match k {
        Yaml::String(s) => Ok(s.clone()),
        Yaml::Bool(b) => Ok(b.to_string()),
        Yaml::Number(n) => Ok(n.to_string()),
        Yaml::Null => Ok("null".to_owned()),
        Yaml::Tagged(t) => yaml_key_string(&t.value),
        other => Err(format!(
            "expected a scalar mapping key, got {}",
            yaml_kind(other)
        )),
    }
}

struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    fn project(&self, mut top: IndexMap<String, Yaml>) -> Result<Project, ProjectError> {
        let file = self.file;
        let name = self.name(&mut top)?;
        let runtime = match top.shift_remove("runtime") {
            None => return Err(self.missing("runtime", &top)),
            Some(v) => self.runtime(v)?,
        };
        if runtime.name.is_empty() {
            return Err(ProjectError::MissingField {
                file: file.to_owned(),
                field: "runtime",
                found: None,
            });
        }

        let main = self.optional_string(&mut top, "main")?;
        let description = self.optional_string(&mut top, "description")?;
        let mut stack_config_dir = self.optional_string(&mut top, "stackConfigDir")?;
        let config = match top.shift_remove("config") {
            Some(value) => self.config(&name, value, &mut stack_config_dir)?,
            None => IndexMap::new(),
        };
        let backend = match top.shift_remove("backend") {
            Some(value) => self.backend(value)?,
            None => None,
        };
        let plugins = match top.shift_remove("plugins") {
            None | Some(Yaml::Null) => None,
            Some(v @ Yaml::Mapping(_)) => Some(v),
            Some(other) => {
                return Err(invalid(
                    file,
                    "plugins",
                    format!("expected a mapping, got {}", yaml_kind(&other)),
                ));
            }
        };

        let project = Project {
            name,
            runtime,
            main,
            description,
            config,
            stack_config_dir,
            backend,
            plugins,
            extra: top,
        };
        self.check_declarations(&project)?;
        Ok(project)
    }

    /// `name`: present, a non-empty string, and a valid project name.
    fn name(&self, top: &mut IndexMap<String, Yaml>) -> Result<String, ProjectError> {
        let file = self.file;
        let name = match top.shift_remove("name") {
            None => return Err(self.missing("name", top)),
            Some(Yaml::String(s)) if !s.is_empty() => s,
            Some(_) => {
                return Err(invalid(
                    file,
                    "name",
                    "project is missing a non-empty string 'name' attribute",
                ));
            }
        };
        validate_project_name(&name).map_err(|reason| ProjectError::InvalidName {
            file: file.to_owned(),
            name: name.clone(),
            reason,
        })?;
        Ok(name)
    }

    /// `config`: the declarations of project `name`'s keys, or (legacy) a directory, which
    /// goes to `stack_config_dir`.
    fn config(
        &self,
        name: &str,
        value: Yaml,
        stack_config_dir: &mut Option<String>,
    ) -> Result<IndexMap<String, ConfigDeclaration>, ProjectError> {
        let file = self.file;
        let mut config = IndexMap::new();
        match value {
            Yaml::Null => {}
            // Legacy: `config: <dir>` meant what `stackConfigDir` means now.
            Yaml::String(dir) => {
                if stack_config_dir.is_some() {
                    return Err(invalid(
                        file,
                        "config",
                        "should not use both config and stackConfigDir to define the stack directory; use only stackConfigDir",
                    ));
                }
                *stack_config_dir = Some(dir);
            }
            Yaml::Mapping(m) => {
                for (k, v) in m {
                    let Yaml::String(key) = k else {
                        return Err(invalid(
                            file,
                            "config",
                            format!("expected string keys, got {}", yaml_kind(&k)),
                        ));
                    };
                    let decl = self.declaration(name, &key, v)?;
                    config.insert(key, decl);
                }
            }
            other => {
                return Err(invalid(
                    file,
                    "config",
                    format!("expected a mapping, got {}", yaml_kind(&other)),
                ));
            }
        }
        Ok(config)
    }

    /// `backend`: a mapping whose only attribute is `url`.
    fn backend(&self, value: Yaml) -> Result<Option<BackendSpec>, ProjectError> {
        let file = self.file;
        let m = match value {
            Yaml::Null => return Ok(None),
            Yaml::Mapping(m) => m,
            other => {
                return Err(invalid(
                    file,
                    "backend",
                    format!("expected a mapping, got {}", yaml_kind(&other)),
                ));
            }
        };
        let mut spec = BackendSpec::default();
        for (k, v) in m {
            match (k.as_str(), v) {
                (Some("url"), Yaml::String(url)) => spec.url = Some(url),
                (Some("url"), Yaml::Null) => {}
                (Some("url"), other) => {
                    return Err(invalid(
                        file,
                        "backend.url",
                        format!("expected a string, got {}", yaml_kind(&other)),
                    ));
                }
                (_, _) => {
                    return Err(invalid(
                        file,
                        "backend",
                        format!(
                            "additional property {} not allowed; the only allowed attribute is 'url'",
                            describe_key(&k)
                        ),
                    ));
                }
            }
        }
        Ok(Some(spec))
    }

    fn missing(&self, field: &'static str, top: &IndexMap<String, Yaml>) -> ProjectError {
        ProjectError::MissingField {
            file: self.file.to_owned(),
            field,
            found: closest_key(field, top.keys()),
        }
    }

    fn optional_string(
        &self,
        top: &mut IndexMap<String, Yaml>,
        field: &str,
    ) -> Result<Option<String>, ProjectError> {
        match top.shift_remove(field) {
            None | Some(Yaml::Null) => Ok(None),
            Some(Yaml::String(s)) => Ok(Some(s)),
            Some(other) => Err(invalid(
                self.file,
                field,
                format!("expected a string, got {}", yaml_kind(&other)),
            )),
        }
    }

    fn runtime(&self, v: Yaml) -> Result<Runtime, ProjectError> {
        const SHAPE: &str =
            "runtime section must be a string or an object with name and options attributes";
        match v {
            Yaml::String(name) => Ok(Runtime {
                name,
                options: IndexMap::new(),
            }),
            Yaml::Mapping(m) => {
                let mut runtime = Runtime::default();
                for (k, v) in m {
                    match (k.as_str(), v) {
                        (Some("name"), Yaml::String(name)) => runtime.name = name,
                        (Some("options"), Yaml::Null) => {}
                        (Some("options"), Yaml::Mapping(options)) => {
                            for (ok, ov) in options {
                                let key = yaml_key_string(&ok)
                                    .map_err(|r| invalid(self.file, "runtime.options", r))?;
                                let value = yaml_to_json(&ov).map_err(|r| {
                                    invalid(self.file, &format!("runtime.options.{key}"), r)
                                })?;
                                runtime.options.insert(key, value);
                            }
                        }
                        (Some(field @ ("name" | "options")), other) => {
                            return Err(invalid(
                                self.file,
                                &format!("runtime.{field}"),
                                format!("{SHAPE}; got {}", yaml_kind(&other)),
                            ));
                        }
                        (_, _) => {
                            return Err(invalid(
                                self.file,
                                "runtime",
                                format!(
                                    "additional property {} not allowed; the allowed attributes are 'name' and 'options'",
                                    describe_key(&k)
                                ),
                            ));
                        }
                    }
                }
                Ok(runtime)
            }
            other => Err(invalid(
                self.file,
                "runtime",
                format!("{SHAPE}; got {}", yaml_kind(&other)),
            )),
        }
    }

    fn declaration(
        &self,
        project: &str,
        key: &str,
        v: Yaml,
    ) -> Result<ConfigDeclaration, ProjectError> {
        let bad = |reason: String| ProjectError::InvalidConfig {
            file: self.file.to_owned(),
            key: key.to_owned(),
            reason,
        };
        ConfigKey::parse(key, project).map_err(|e| bad(e.to_string()))?;
        let project_namespaced = !key.contains(':')
            || key
                .strip_prefix(project)
                .is_some_and(|rest| rest.starts_with(':'));
        let m = match v {
            Yaml::Mapping(m) => m,
            // Short form: a plain value is a default for the project's own keys and a value for
            // other packages' keys (Pulumi's `RewriteShorthandConfigValues`).
            short => {
                let value = yaml_to_json(&short).map_err(bad)?;
                let mut decl = ConfigDeclaration::default();
                if project_namespaced {
                    decl.default = Some(value);
                } else {
                    decl.value = Some(value);
                }
                return Ok(decl);
            }
        };
        let mut decl = ConfigDeclaration::default();
        for (k, v) in m {
            let Some(field) = k.as_str() else {
                return Err(bad(format!("unexpected attribute {}", describe_key(&k))));
            };
            match field {
                "type" => {
                    let t = v.as_str().and_then(ConfigType::parse).ok_or_else(|| {
                        bad(format!(
                            "'type' must be one of string, integer, boolean, array or object; got {}",
                            describe_value(&v)
                        ))
                    })?;
                    decl.config_type = Some(t);
                }
                "items" => decl.items = Some(self.items(&v).map_err(bad)?),
                "description" => match v {
                    Yaml::String(s) => decl.description = Some(s),
                    Yaml::Null => {}
                    other => {
                        return Err(bad(format!(
                            "'description' must be a string, got {}",
                            yaml_kind(&other)
                        )));
                    }
                },
                "secret" => match v {
                    Yaml::Bool(b) => decl.secret = b,
                    Yaml::Null => {}
                    other => {
                        return Err(bad(format!(
                            "'secret' must be a boolean, got {}",
                            yaml_kind(&other)
                        )));
                    }
                },
                "default" => {
                    decl.default = non_null(&v).map(yaml_to_json).transpose().map_err(bad)?
                }
                "value" => decl.value = non_null(&v).map(yaml_to_json).transpose().map_err(bad)?,
                other => {
                    let allowed = ["default", "description", "items", "secret", "type", "value"];
                    let hint = closest_key(other, allowed.iter())
                        .map(|c| format!("; did you mean '{c}'?"))
                        .unwrap_or_default();
                    return Err(bad(format!("unexpected attribute '{other}'{hint}")));
                }
            }
        }
        Ok(decl)
    }

    fn items(&self, v: &Yaml) -> Result<ConfigItems, String> {
        let Yaml::Mapping(m) = v else {
            return Err(format!(
                "'items' must be a mapping with a 'type', got {}",
                yaml_kind(v)
            ));
        };
        let mut item_type = None;
        let mut items = None;
        for (k, v) in m {
            match k.as_str() {
                Some("type") => {
                    item_type = Some(v.as_str().and_then(ConfigType::parse).ok_or_else(|| {
                        format!("items 'type' must be one of string, integer, boolean, array or object; got {}", describe_value(v))
                    })?);
                }
                Some("items") => items = Some(Box::new(self.items(v)?)),
                _ => {
                    return Err(format!(
                        "unexpected attribute {} in 'items'",
                        describe_key(k)
                    ));
                }
            }
        }
        let item_type = item_type.ok_or("'items' is missing its 'type'")?;
        if item_type == ConfigType::Array && items.is_none() {
            return Err("nested array 'items' must declare their own 'items'".into());
        }
        Ok(ConfigItems { item_type, items })
    }

    /// Pulumi's `Project.Validate` rules for config declarations.
    fn check_declarations(&self, project: &Project) -> Result<(), ProjectError> {
        let mut seen = std::collections::HashMap::new();
        for (key, decl) in &project.config {
            let bad = |reason: String| ProjectError::InvalidConfig {
                file: self.file.to_owned(),
                key: key.clone(),
                reason,
            };
            // `x`, `<project>:x` and `<project>:config:x` are the same key.
            if let Ok(parsed) = ConfigKey::parse(key, &project.name)
                && let Some(first) = seen.insert(parsed, key)
            {
                return Err(bad(format!("is declared twice (also as '{first}')")));
            }
            if decl.default.is_some() && decl.value.is_some() {
                return Err(bad(
                    "cannot have both a 'default' and a 'value' attribute".into()
                ));
            }
            if project.is_project_namespaced(key) {
                if decl.config_type == Some(ConfigType::Array) && decl.items.is_none() {
                    return Err(bad(
                        "declares an array but does not specify the underlying type via the 'items' attribute".into(),
                    ));
                }
                if let (Some(type_name), Some(default)) = (decl.type_name(), &decl.default)
                    && !decl.accepts(default)
                {
                    return Err(bad(format!(
                        "the default value is not of the expected type '{type_name}'"
                    )));
                }
            } else {
                if decl.config_type.is_some() {
                    return Err(bad(
                        "is not namespaced by the project and should not define a type".into(),
                    ));
                }
                if decl.default.is_some() {
                    return Err(bad(
                        "is not namespaced by the project and should not define a default value; did you mean to use the 'value' attribute instead of 'default'?".into(),
                    ));
                }
                if decl.value.is_none() {
                    return Err(bad(
                        "is namespaced and must provide an attribute 'value'".into()
                    ));
                }
            }
        }
        Ok(())
    }
}

fn non_null(v: &Yaml) -> Option<&Yaml> {
    (!v.is_null()).then_some(v)
}

fn describe_key(k: &Yaml) -> String {
    match k.as_str() {
        Some(s) => format!("'{s}'"),
        None => yaml_kind(k).to_owned(),
    }
}

fn describe_value(v: &Yaml) -> String {
    match v.as_str() {
        Some(s) => format!("{s:?}"),
        None => yaml_kind(v).to_owned(),
    }
}

/// Pulumi suggests a present key within edit distance 2 (case-insensitively) of a missing one.
fn closest_key<'a>(
    needle: &str,
    keys: impl Iterator<Item = &'a (impl AsRef<str> + 'a + ?Sized)>,
) -> Option<String> {
    let needle = needle.to_lowercase();
    let mut sorted: Vec<&str> = keys.map(AsRef::as_ref).collect();
    sorted.sort_unstable();
    let mut best: Option<(usize, &str)> = None;
    for key in sorted {
        let d = edit_distance(&needle, &key.to_lowercase());
        if d <= 2 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, key));
        }
    }
    best.map(|(_, k)| k.to_owned())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FILE: &str = "Pulumi.yaml";

    fn parse(text: &str) -> Project {
        match Project::from_yaml(text, FILE) {
            Ok(p) => p,
            Err(e) => panic!("{text}\n=> {e}"),
        }
    }

    fn error(text: &str) -> String {
        match Project::from_yaml(text, FILE) {
            Ok(p) => panic!("expected an error for\n{text}\ngot {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn string_runtime_and_basic_fields() {
        let p = parse("name: web\nruntime: nodejs\ndescription: A site\nmain: src/\n");
        assert_eq!(p.name, "web");
        assert_eq!(p.runtime.name, "nodejs");
        assert!(p.runtime.options.is_empty());
        assert_eq!(p.description.as_deref(), Some("A site"));
        assert_eq!(p.main.as_deref(), Some("src/"));
        assert!(p.config.is_empty() && p.extra.is_empty() && p.backend.is_none());
    }

    #[test]
    fn object_runtime_with_options() {
        let p = parse(
            "name: svc\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n    typescript: false\n",
        );
        assert_eq!(p.runtime.name, "python");
        assert_eq!(p.runtime.option_str("virtualenv"), Some("venv"));
        assert_eq!(p.runtime.options.get("typescript"), Some(&json!(false)));
        assert_eq!(p.runtime.option_str("typescript"), None);
    }

    #[test]
    fn config_declarations_long_and_short() {
        let p = parse(
            r#"
name: app
runtime: go
config:
  size:
    type: integer
    description: Instance count
    default: 3
  password:
    type: string
    secret: true
  zones:
    type: array
    items:
      type: string
    default: [a, b]
  greeting: hello
  ports: [80, 443]
  app:flag: true
  aws:region: us-west-2
  gcp:project:
    value: my-proj
"#,
        );
        let size = &p.config["size"];
        assert_eq!(size.config_type, Some(ConfigType::Integer));
        assert_eq!(size.description.as_deref(), Some("Instance count"));
        assert_eq!(size.default, Some(json!(3)));
        assert!(!size.secret);
        assert!(p.config["password"].secret);
        assert_eq!(p.config["password"].default, None);
        let zones = &p.config["zones"];
        assert_eq!(zones.type_name().as_deref(), Some("array<string>"));
        assert_eq!(zones.default, Some(json!(["a", "b"])));
        // Short forms: project keys get defaults, other namespaces get values.
        assert_eq!(p.config["greeting"].default, Some(json!("hello")));
        assert_eq!(p.config["ports"].default, Some(json!([80, 443])));
        assert_eq!(p.config["app:flag"].default, Some(json!(true)));
        assert_eq!(p.config["aws:region"].value, Some(json!("us-west-2")));
        assert_eq!(p.config["aws:region"].default, None);
        assert_eq!(p.config["gcp:project"].value, Some(json!("my-proj")));
        // Declaration order is kept.
        let keys: Vec<&str> = p.config.keys().map(String::as_str).collect();
        assert_eq!(keys[..3], ["size", "password", "zones"]);
        let parsed: Vec<String> = p
            .config_declarations()
            .map(|(k, _)| k.map(|k| k.to_string()).unwrap_or_default())
            .collect();
        assert_eq!(parsed[0], "app:size");
        assert_eq!(parsed[7], "gcp:project");
    }

    #[test]
    fn unknown_keys_backend_plugins_and_config_dir_are_kept() {
        let p = parse(
            "name: x\nruntime: nodejs\nauthor: me\ntemplate:\n  description: t\nbackend:\n  url: file://~\nplugins:\n  providers:\n    - name: aws\n      path: ./bin\nstackConfigDir: stacks\nlicense: MIT\n",
        );
        let extra: Vec<&str> = p.extra.keys().map(String::as_str).collect();
        assert_eq!(extra, ["author", "template", "license"]);
        assert_eq!(p.extra["author"], Yaml::String("me".into()));
        assert_eq!(
            p.backend,
            Some(BackendSpec {
                url: Some("file://~".into())
            })
        );
        assert!(p.plugins.as_ref().is_some_and(Yaml::is_mapping));
        assert_eq!(p.stack_config_dir.as_deref(), Some("stacks"));
        // The legacy string `config:` is the stack config directory.
        let legacy = parse("name: x\nruntime: nodejs\nconfig: cfg\n");
        assert_eq!(legacy.stack_config_dir.as_deref(), Some("cfg"));
        assert!(legacy.config.is_empty());
    }

    #[test]
    fn project_names() {
        for ok in ["a", "my-proj", "my_proj.v2", "ABC123", &"x".repeat(100)] {
            assert_eq!(validate_project_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "my proj", "a/b", "é", "a:b", &"x".repeat(101)] {
            assert!(validate_project_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn is_project_namespaced() {
        let p = parse("name: app\nruntime: go\n");
        assert!(p.is_project_namespaced("key"));
        assert!(p.is_project_namespaced("app:key"));
        assert!(!p.is_project_namespaced("aws:key"));
        assert!(!p.is_project_namespaced("application:key"));
    }

    #[test]
    fn errors_name_the_file_and_field() {
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            ("runtime: nodejs\n", "Pulumi.yaml: project is missing a 'name' attribute"),
            ("nme: x\nruntime: nodejs\n", "project is missing a 'name' attribute; found 'nme' instead"),
            ("name: x\n", "Pulumi.yaml: project is missing a 'runtime' attribute"),
            ("name: x\nruntim: go\n", "found 'runtim' instead"),
            ("name: ''\nruntime: go\n", "'name': project is missing a non-empty string"),
            ("name: [a]\nruntime: go\n", "'name': project is missing a non-empty string"),
            ("name: my proj\nruntime: go\n", "invalid project name \"my proj\": project names may only contain"),
            ("name: x\nruntime: ''\n", "project is missing a 'runtime' attribute"),
            ("name: x\nruntime: [go]\n", "'runtime': runtime section must be a string or an object"),
            ("name: x\nruntime:\n  name: go\n  opts: {}\n", "additional property 'opts' not allowed"),
            ("name: x\nruntime:\n  options: {a: 1}\n", "missing a 'runtime' attribute"),
            ("name: x\nruntime: go\nmain: 3\n", "'main': expected a string, got a number"),
            ("name: x\nruntime: go\nbackend:\n  uri: s3://b\n", "'backend': additional property 'uri' not allowed"),
            ("name: x\nruntime: go\nconfig: [a]\n", "'config': expected a mapping, got a list"),
            ("name: x\nruntime: go\nconfig: d\nstackConfigDir: e\n", "should not use both config and stackConfigDir"),
            ("- a\n", "Pulumi.yaml: a project file must be a YAML mapping"),
            ("name: [\n", "Pulumi.yaml: invalid YAML"),
            ("", "must be a YAML mapping"),
            // Config declarations.
            ("name: x\nruntime: go\nconfig:\n  n:\n    type: number\n", "config key 'n': 'type' must be one of"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    typ: string\n", "config key 'n': unexpected attribute 'typ'; did you mean 'type'?"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    type: integer\n    default: abc\n", "config key 'n': the default value is not of the expected type 'integer'"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    type: array\n    items:\n      type: integer\n    default: [1, a]\n", "not of the expected type 'array<integer>'"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    type: array\n", "declares an array but does not specify the underlying type"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    default: 1\n    value: 2\n", "cannot have both a 'default' and a 'value'"),
            ("name: x\nruntime: go\nconfig:\n  aws:region:\n    type: string\n", "config key 'aws:region': is not namespaced by the project and should not define a type"),
            ("name: x\nruntime: go\nconfig:\n  aws:region:\n    default: us-east-1\n", "did you mean to use the 'value' attribute"),
            ("name: x\nruntime: go\nconfig:\n  aws:region:\n    description: d\n", "must provide an attribute 'value'"),
            ("name: x\nruntime: go\nconfig:\n  a:b:c: 1\n", "config key 'a:b:c': could not parse"),
            ("name: x\nruntime: go\nconfig:\n  n: 1\n  x:n: 2\n", "config key 'x:n': is declared twice (also as 'n')"),
            ("name: x\nruntime: go\nconfig:\n  n:\n    secret: yes\n", "'secret' must be a boolean"),
        ];
        for (text, want) in cases {
            let got = error(text);
            assert!(
                got.contains(want),
                "for\n{text}\nwant {want:?}\ngot  {got:?}"
            );
            assert!(got.starts_with("Pulumi.yaml: "), "{got}");
        }
    }

    #[test]
    fn declared_types_accept_pulumis_forms() {
        let decl = |t: ConfigType, items: Option<ConfigItems>| ConfigDeclaration {
            config_type: Some(t),
            items,
            ..ConfigDeclaration::default()
        };
        let strings = Some(ConfigItems {
            item_type: ConfigType::String,
            items: None,
        });
        #[rustfmt::skip]
        let cases = [
            (decl(ConfigType::String, None), json!("x"), true),
            (decl(ConfigType::String, None), json!(1), false),
            (decl(ConfigType::Integer, None), json!("42"), true),
            (decl(ConfigType::Integer, None), json!("-7"), true),
            (decl(ConfigType::Integer, None), json!("4.2"), false),
            (decl(ConfigType::Integer, None), json!("abc"), false),
            (decl(ConfigType::Integer, None), json!(3.0), true),
            (decl(ConfigType::Integer, None), json!(3.5), false),
            (decl(ConfigType::Boolean, None), json!("true"), true),
            (decl(ConfigType::Boolean, None), json!(false), true),
            (decl(ConfigType::Boolean, None), json!("yes"), false),
            (decl(ConfigType::Array, strings.clone()), json!(["a"]), true),
            (decl(ConfigType::Array, strings.clone()), json!(["a", 1]), false),
            (decl(ConfigType::Array, strings), json!("a"), false),
            (decl(ConfigType::Array, None), json!([]), false),
            (decl(ConfigType::Object, None), json!({"a": 1}), true),
            (decl(ConfigType::Object, None), json!("{}"), false),
            (ConfigDeclaration::default(), json!({"any": "thing"}), true),
        ];
        for (d, value, want) in cases {
            assert_eq!(
                d.accepts(&value),
                want,
                "{:?} accepts {value}",
                d.type_name()
            );
        }
    }

    #[test]
    fn file_names() {
        assert_eq!(PROJECT_FILE_NAMES, ["Pulumi.yaml", "Pulumi.yml"]);
    }
}
