//! `cairn config`: read and change a stack's configuration in `Pulumi.<stack>.yaml`.

use std::io::{IsTerminal, Read};

use anyhow::{Context as _, Result, bail};
use cairn_engine::config::ConfigKey;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::stack::Stack;
use crate::terminal::{field, json_pretty, outln, quoted};
use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    command: Option<ConfigCommand>,

    /// Show secret values in plaintext (for the listing).
    #[arg(long)]
    show_secrets: bool,

    /// Print JSON (for the listing).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// List the stack's configuration (secrets hidden unless --show-secrets).
    Ls {
        #[arg(long)]
        show_secrets: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print one value; secrets are decrypted.
    Get {
        /// `key`, `namespace:key`, or with --path a property path such as `data.ports[0]`.
        key: String,
        /// Treat KEY as a property path into a structured value.
        #[arg(long)]
        path: bool,
        /// Print `{"value": …, "secret": …}`.
        #[arg(long)]
        json: bool,
    },
    /// Set a value; it is read from standard input when VALUE is omitted.
    Set {
        key: String,
        value: Option<String>,
        /// Encrypt the value with the stack's secrets provider.
        #[arg(long)]
        secret: bool,
        /// Treat KEY as a property path into a structured value.
        #[arg(long)]
        path: bool,
    },
    /// Set several values at once (`--plaintext KEY=VALUE`, `--secret KEY=VALUE`, each
    /// repeatable, or `--json`), written together or not at all.
    SetAll {
        /// A plain value.
        #[arg(long = "plaintext", value_name = "KEY=VALUE")]
        plaintexts: Vec<String>,
        /// A value encrypted with the stack's secrets provider.
        #[arg(long = "secret", value_name = "KEY=VALUE")]
        secrets: Vec<String>,
        /// Treat each KEY as a property path into a structured value.
        #[arg(long)]
        path: bool,
        /// The values as `cairn config --json` prints them: `{"KEY": {"value": "TEXT",
        /// "secret": BOOL}, ...}`, with `objectValue` set for a structured value (whose
        /// `value` is its JSON text). Not with --plaintext, --secret or --path.
        #[arg(
            long,
            value_name = "JSON",
            conflicts_with_all = ["plaintexts", "secrets", "path"]
        )]
        json: Option<String>,
    },
    /// Remove a value (removing one that is not set is not an error).
    Rm {
        key: String,
        #[arg(long)]
        path: bool,
    },
    /// Copy the configuration (all of it, or one key) to another stack of the project,
    /// secrets encrypted again with that stack's secrets provider.
    Cp {
        /// The key to copy (default: every key).
        key: Option<String>,
        /// The stack to copy to.
        #[arg(short, long, value_name = "STACK")]
        dest: String,
        /// KEY is a property path into a structured value.
        #[arg(long, requires = "key")]
        path: bool,
    },
    /// Remove several values at once.
    RmAll {
        #[arg(required = true)]
        keys: Vec<String>,
        #[arg(long)]
        path: bool,
    },
}

pub fn run(context: &Context, args: ConfigArgs) -> Result<()> {
    let workspace = context.project()?;
    let stack = Stack::current(&workspace)?;
    match args.command {
        None => ls(&stack, args.show_secrets, args.json),
        Some(ConfigCommand::Ls { show_secrets, json }) => ls(&stack, show_secrets, json),
        Some(ConfigCommand::Get { key, path, json }) => get(&stack, &key, path, json),
        Some(ConfigCommand::Set {
            key,
            value,
            secret,
            path,
        }) => set(&stack, &key, value, secret, path),
        Some(ConfigCommand::SetAll {
            json: Some(json), ..
        }) => set_all_json(&stack, &json),
        Some(ConfigCommand::SetAll {
            plaintexts,
            secrets,
            path,
            json: None,
        }) => set_all(&stack, &plaintexts, &secrets, path),
        Some(ConfigCommand::Rm { key, path }) => rm(&stack, std::slice::from_ref(&key), path),
        Some(ConfigCommand::RmAll { keys, path }) => rm(&stack, &keys, path),
        Some(ConfigCommand::Cp { key, dest, path }) => cp(&stack, key.as_deref(), &dest, path),
    }
}

fn ls(stack: &Stack<'_>, show_secrets: bool, json: bool) -> Result<()> {
    let config = stack.load_config()?;
    let crypter = stack.secrets(&config)?;
    let project = &stack.workspace.project;
    if json {
        let listing = config.list_json(project, Some(&crypter), show_secrets)?;
        outln!("{}", json_pretty(&listing)?);
        return Ok(());
    }
    let entries = config.list(project, Some(&crypter), show_secrets)?;
    if entries.is_empty() {
        outln!("Stack {:?} has no configuration.", stack.name);
        return Ok(());
    }
    // One row per key: keys and values with their line breaks escaped.
    let rows: Vec<(String, String)> = entries
        .iter()
        .map(|(key, view)| {
            (
                field(&key.pretty(stack.project())).into_owned(),
                field(&view.value).into_owned(),
            )
        })
        .collect();
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        .max(3);
    outln!("{:<width$}  VALUE", "KEY");
    for (key, value) in rows {
        outln!("{key:<width$}  {value}");
    }
    Ok(())
}

fn parse_key(stack: &Stack<'_>, key: &str) -> Result<ConfigKey> {
    Ok(ConfigKey::parse(key, stack.project())?)
}

fn get(stack: &Stack<'_>, key: &str, path: bool, json: bool) -> Result<()> {
    let config = stack.load_config()?;
    let crypter = stack.secrets(&config)?;
    let view = if path {
        config.get_path(key, stack.project(), Some(&crypter))?
    } else {
        config.get(&parse_key(stack, key)?, Some(&crypter))?
    };
    let Some(view) = view else {
        bail!(
            "configuration key {} is not set for stack {:?}",
            quoted(key),
            stack.name
        );
    };
    if json {
        let mut out = json!({"value": view.value, "secret": view.secret});
        if let Some(object) = &view.object {
            out["objectValue"] = object.clone();
        }
        outln!("{}", json_pretty(&out)?);
    } else if let Some(object) = &view.object {
        outln!("{}", json_pretty(object)?);
    } else {
        outln!("{}", view.value);
    }
    Ok(())
}

fn set(
    stack: &Stack<'_>,
    key: &str,
    value: Option<String>,
    secret: bool,
    path: bool,
) -> Result<()> {
    let value = match value {
        Some(value) => value,
        None => read_value(stack, key, secret)?,
    };
    let mut config = stack.load_config()?;
    let crypter = if secret {
        stack.secrets_or_create(&mut config)?
    } else {
        stack.secrets(&config)?
    };
    if path {
        config.set_path(key, &value, secret, Some(&crypter), stack.project())?;
    } else {
        config.set(&parse_key(stack, key)?, &value, secret, Some(&crypter))?;
    }
    stack.save_config(&config)
}

fn set_all(stack: &Stack<'_>, plaintexts: &[String], secrets: &[String], path: bool) -> Result<()> {
    let mut settings = key_values("--plaintext", plaintexts, false)?;
    settings.extend(key_values("--secret", secrets, true)?);
    save_settings(stack, settings, path)
}

/// One value `config set-all --json` sets.
#[derive(Debug, PartialEq)]
enum JsonSetting {
    /// A plain or secret text.
    Text { value: String, secret: bool },
    /// A structured value (maps and lists).
    Object(serde_json::Value),
}

/// `config set-all --json`: the values of a listing as `cairn config --json` prints it,
/// checked (and secrets encrypted) before anything is written, then saved at once.
fn set_all_json(stack: &Stack<'_>, text: &str) -> Result<()> {
    let settings = parse_json_settings(text)?;
    let mut config = stack.load_config()?;
    let any_secret = settings
        .iter()
        .any(|(_, s)| matches!(s, JsonSetting::Text { secret: true, .. }));
    let crypter = if any_secret {
        stack.secrets_or_create(&mut config)?
    } else {
        stack.secrets(&config)?
    };
    for (key, setting) in settings {
        let parsed = parse_key(stack, &key)
            .with_context(|| format!("--json: invalid key {}", quoted(&key)))?;
        match setting {
            JsonSetting::Text { value, secret } => {
                config.set(&parsed, &value, secret, Some(&crypter))?;
            }
            JsonSetting::Object(value) => {
                config
                    .config
                    .insert(parsed, cairn_engine::config::ConfigValue::Object(value));
            }
        }
    }
    stack.save_config(&config)
}

/// The settings of `config set-all --json`, as Pulumi reads them: every entry needs a string
/// `value` (a secret listed without `--show-secrets` has none, and cannot be set back); with
/// `objectValue` present, `value` is the structured value's JSON text. Errors name the key.
fn parse_json_settings(text: &str) -> Result<Vec<(String, JsonSetting)>> {
    use serde_json::Value;
    let entries: serde_json::Map<String, Value> = serde_json::from_str(text).context(
        "--json: expected a JSON object of `KEY: {\"value\": TEXT, \"secret\": BOOL}`, as \
         `cairn config --json` prints",
    )?;
    entries
        .into_iter()
        .map(|(key, entry)| {
            let shown = quoted(&key);
            let Value::Object(fields) = entry else {
                bail!("--json key {shown}: expected {{\"value\": TEXT, \"secret\": BOOL}}");
            };
            let secret = match fields.get("secret") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(secret)) => *secret,
                Some(_) => bail!("--json key {shown}: \"secret\" must be true or false"),
            };
            let value = match fields.get("value") {
                None | Some(Value::Null) => bail!(
                    "--json key {shown} has no value (a secret listed without --show-secrets \
                     has none)"
                ),
                Some(Value::String(value)) => value.clone(),
                Some(_) => bail!("--json key {shown}: \"value\" must be a string"),
            };
            let structured = fields.get("objectValue").is_some_and(|v| !v.is_null());
            let setting = if structured {
                if secret {
                    bail!(
                        "--json key {shown}: a secret structured value cannot be set at once; \
                         set its secret leaves with `cairn config set --path --secret`"
                    );
                }
                let object = serde_json::from_str(&value).with_context(|| {
                    format!(
                        "--json key {shown}: \"value\" is not the JSON text of a structured value"
                    )
                })?;
                JsonSetting::Object(object)
            } else {
                JsonSetting::Text { value, secret }
            };
            Ok((key, setting))
        })
        .collect()
}

/// `KEY=VALUE` arguments of `flag` as settings (split at the first `=`).
pub fn key_values(
    flag: &str,
    items: &[String],
    secret: bool,
) -> Result<Vec<(String, String, bool)>> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((key, value)) => Ok((key.to_owned(), value.to_owned(), secret)),
            // A secret given without its key may be the secret itself: never echoed.
            None if secret => bail!("{flag}: expected KEY=VALUE (the argument is not shown)"),
            None => bail!("{flag} {}: expected KEY=VALUE", quoted(item)),
        })
        .collect()
}

/// Sets `(key, value, secret)` settings (keys as property paths with `path`) and saves the
/// stack's settings file once: all of them or, on the first bad one, none.
pub fn save_settings(
    stack: &Stack<'_>,
    settings: Vec<(String, String, bool)>,
    path: bool,
) -> Result<()> {
    let mut config = stack.load_config()?;
    let crypter = if settings.iter().any(|(_, _, secret)| *secret) {
        stack.secrets_or_create(&mut config)?
    } else {
        stack.secrets(&config)?
    };
    for (key, value, secret) in settings {
        if path {
            config.set_path(&key, &value, secret, Some(&crypter), stack.project())?;
        } else {
            config.set(&parse_key(stack, &key)?, &value, secret, Some(&crypter))?;
        }
    }
    stack.save_config(&config)
}

/// Reads a value that was not given on the command line: a hidden prompt for secrets, a line at
/// the terminal, or all of a piped standard input (without its final newline).
fn read_value(stack: &Stack<'_>, key: &str, secret: bool) -> Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        if !stack.workspace.context.interactive {
            bail!(
                "no value given for {}: pass it as an argument or on standard input",
                quoted(key)
            );
        }
        if secret {
            return Ok(rpassword::prompt_password(format!("{}: ", field(key)))?);
        }
        crate::terminal::prompt(&format!("{}: ", field(key)));
        let mut line = String::new();
        stdin.read_line(&mut line)?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_owned());
    }
    let mut text = String::new();
    stdin.lock().read_to_string(&mut text)?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_owned())
}

fn rm(stack: &Stack<'_>, keys: &[String], path: bool) -> Result<()> {
    let mut config = stack.load_config()?;
    for key in keys {
        if path {
            config.remove_path(key, stack.project())?;
        } else {
            config.remove(&parse_key(stack, key)?);
        }
    }
    stack.save_config(&config)
}

/// `cairn config cp`: values are copied as stored, except secrets, which are decrypted with
/// this stack's provider and encrypted with the destination's (created if it has none).
fn cp(stack: &Stack<'_>, key: Option<&str>, dest: &str, path: bool) -> Result<()> {
    let workspace = stack.workspace;
    let dest = workspace.parse_stack_name(dest, "given to `cairn config cp --dest`")?;
    if dest == stack.name {
        bail!("--dest names the stack being copied from ({dest:?})");
    }
    if !workspace.backend.stack_exists(stack.project(), &dest)? {
        bail!("stack {dest:?} does not exist; create it with `cairn stack init {dest}`");
    }
    let dest = Stack {
        workspace,
        name: dest,
    };
    let source = stack.load_config()?;
    let source_crypter = stack.secrets(&source)?;
    let mut target = dest.load_config()?;
    if path {
        let key = key.unwrap_or_default();
        let Some(view) = source.get_path(key, stack.project(), Some(&source_crypter))? else {
            bail!(
                "configuration key {} is not set for stack {:?}",
                quoted(key),
                stack.name
            );
        };
        let crypter = if view.secret {
            dest.secrets_or_create(&mut target)?
        } else {
            dest.secrets(&target)?
        };
        if view.object.is_some() {
            bail!(
                "{} holds a structured value: copy a leaf with --path, or the whole key without it",
                quoted(key)
            );
        }
        target.set_path(
            key,
            &view.value,
            view.secret,
            Some(&crypter),
            stack.project(),
        )?;
        return dest.save_config(&target);
    }
    let entries: Vec<_> = match key {
        Some(key) => {
            let key = parse_key(stack, key)?;
            match source.config.get(&key) {
                Some(value) => vec![(key, value.clone())],
                None => bail!(
                    "configuration key {} is not set for stack {:?}",
                    quoted(&key.pretty(stack.project())),
                    stack.name
                ),
            }
        }
        None => source
            .config
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let dest_crypter = if entries.iter().any(|(_, v)| v.is_secret()) {
        dest.secrets_or_create(&mut target)?
    } else {
        dest.secrets(&target)?
    };
    for (key, value) in entries {
        let copied = value
            .reencrypt(&source_crypter, &dest_crypter)
            .map_err(|e| {
                anyhow::anyhow!("copying {}: {e}", quoted(&key.pretty(stack.project())))
            })?;
        target.config.insert(key, copied);
    }
    dest.save_config(&target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_settings_read_what_the_listing_prints() {
        let settings = parse_json_settings(
            r#"{"a": {"value": "1", "secret": false}, "p:s": {"value": "x", "secret": true},
                "o": {"value": "{\"k\":[1]}", "objectValue": {"k": [1]}, "secret": false},
                "n": {"value": "2"}}"#,
        )
        .unwrap();
        let text = |value: &str, secret| JsonSetting::Text {
            value: value.to_owned(),
            secret,
        };
        let keys: Vec<&str> = settings.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 4);
        for (key, setting) in &settings {
            let expected = match key.as_str() {
                "a" => text("1", false),
                "p:s" => text("x", true),
                "o" => JsonSetting::Object(json!({"k": [1]})),
                "n" => text("2", false),
                other => panic!("unexpected key {other}"),
            };
            assert_eq!(setting, &expected, "{key}");
        }
    }

    #[test]
    fn json_settings_errors_name_the_key() {
        let cases = [
            (r#"[1]"#, "--json: expected a JSON object"),
            (r#"{"k": "v"}"#, "--json key \"k\": expected"),
            (
                r#"{"k": {"secret": true}}"#,
                "--json key \"k\" has no value",
            ),
            (
                r#"{"k": {"value": 1}}"#,
                "--json key \"k\": \"value\" must be a string",
            ),
            (
                r#"{"k": {"value": "v", "secret": "yes"}}"#,
                "--json key \"k\": \"secret\" must be true or false",
            ),
            (
                r#"{"k": {"value": "nope", "objectValue": {}}}"#,
                "--json key \"k\": \"value\" is not the JSON text",
            ),
            (
                r#"{"k": {"value": "{}", "objectValue": {}, "secret": true}}"#,
                "--json key \"k\": a secret structured value",
            ),
        ];
        for (json, expected) in cases {
            let err = parse_json_settings(json).unwrap_err().to_string();
            assert!(err.starts_with(expected), "{json}: {err}");
        }
    }
}
