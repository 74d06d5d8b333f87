//! Where the secrets passphrase comes from: environment, a file, or an interactive prompt.

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};

/// Variables naming the passphrase itself, in order of precedence.
const PASSPHRASE_VARS: [&str; 2] = ["CAIRN_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE"];
/// Variables naming a file that holds the passphrase.
const PASSPHRASE_FILE_VARS: [&str; 2] = [
    "CAIRN_CONFIG_PASSPHRASE_FILE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
];

/// Whether the passphrase is being chosen (new stack) or entered (existing stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Create,
    Open,
}

/// Finds the passphrase: `CAIRN_CONFIG_PASSPHRASE`, `PULUMI_CONFIG_PASSPHRASE`, then the `*_FILE`
/// variants, then a prompt when interactive. An explicitly empty passphrase is allowed.
pub fn passphrase(interactive: bool, purpose: Purpose) -> Result<String> {
    from_env(|name| std::env::var(name).ok())?.map_or_else(|| prompt(interactive, purpose), Ok)
}

fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<String>> {
    for name in PASSPHRASE_VARS {
        if let Some(value) = var(name) {
            return Ok(Some(value));
        }
    }
    for name in PASSPHRASE_FILE_VARS {
        if let Some(path) = var(name) {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading the passphrase file {path} (from {name})"))?;
            // Files usually end with a newline that is not part of the passphrase.
            let passphrase = text.strip_suffix('\n').unwrap_or(&text);
            let passphrase = passphrase.strip_suffix('\r').unwrap_or(passphrase);
            return Ok(Some(passphrase.to_owned()));
        }
    }
    Ok(None)
}

fn prompt(interactive: bool, purpose: Purpose) -> Result<String> {
    if !interactive || !std::io::stdin().is_terminal() {
        bail!(
            "a passphrase is needed for this stack's secrets: set CAIRN_CONFIG_PASSPHRASE \
             (or CAIRN_CONFIG_PASSPHRASE_FILE) or run interactively"
        );
    }
    match purpose {
        Purpose::Open => Ok(rpassword::prompt_password(
            "Enter your passphrase to unlock config/secrets: ",
        )?),
        Purpose::Create => {
            let first =
                rpassword::prompt_password("Enter your passphrase to protect config/secrets: ")?;
            let second = rpassword::prompt_password("Re-enter your passphrase to confirm: ")?;
            if first != second {
                bail!("the passphrases do not match");
            }
            Ok(first)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn environment_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pass");
        std::fs::write(&file, "from-file\n").unwrap();
        let file = file.to_str().unwrap().to_owned();
        type Case<'a> = (Vec<(&'a str, String)>, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (vec![], None),
            (
                vec![
                    ("CAIRN_CONFIG_PASSPHRASE", "cairn".into()),
                    ("PULUMI_CONFIG_PASSPHRASE", "pulumi".into()),
                ],
                Some("cairn"),
            ),
            (
                vec![("PULUMI_CONFIG_PASSPHRASE", "pulumi".into())],
                Some("pulumi"),
            ),
            (vec![("CAIRN_CONFIG_PASSPHRASE", String::new())], Some("")),
            (
                vec![("PULUMI_CONFIG_PASSPHRASE_FILE", file.clone())],
                Some("from-file"),
            ),
            (
                vec![
                    ("CAIRN_CONFIG_PASSPHRASE_FILE", file.clone()),
                    ("PULUMI_CONFIG_PASSPHRASE", "direct".into()),
                ],
                Some("direct"),
            ),
        ];
        for (vars, expected) in cases {
            let env: HashMap<&str, String> = vars.into_iter().collect();
            let got = from_env(|name| env.get(name).cloned()).unwrap();
            assert_eq!(got.as_deref(), expected, "{env:?}");
        }
    }

    #[test]
    fn a_missing_passphrase_file_is_named() {
        let err = from_env(|name| {
            (name == "CAIRN_CONFIG_PASSPHRASE_FILE").then(|| "/nonexistent/pass".to_owned())
        })
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("/nonexistent/pass (from CAIRN_CONFIG_PASSPHRASE_FILE)"),
            "{err:#}"
        );
    }

    #[test]
    fn non_interactive_without_passphrase_explains_what_to_set() {
        let err = prompt(false, Purpose::Open).unwrap_err().to_string();
        assert!(err.contains("set CAIRN_CONFIG_PASSPHRASE"), "{err}");
    }
}
