//! `cairn plugin sign`, `verify` and `trust`: Ed25519 signatures of provider components in
//! wasmsign2's format, and the trust policy (`$CAIRN_HOME/trust.json`) naming whose signatures
//! the components of a registry prefix need. The format, key files and policy are
//! cairn-registry's `signature` module; this is the terminal's side.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use cairn_registry::RegistryError;
use cairn_registry::signature::{self, PublicKey, SecretKeyFile, TrustPolicy};
use clap::Subcommand;

use crate::terminal::{field, json_pretty, outln, quoted};
use crate::workspace::Context;

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// Trust a public key for the components of a registry or repository prefix: their
    /// signatures by it must verify, and with `--require` they must carry one.
    Add {
        /// The public key: a file (wasmsign2's raw format, PEM, DER or OpenSSH
        /// `ssh-ed25519 …`) or a fingerprint (`ed25519:HEX`).
        key: String,
        /// `oci://HOST[:PORT]` or `oci://HOST[:PORT]/PREFIX` (whole path components: `acme`
        /// covers `acme/x`, not `acmex`).
        #[arg(long, value_name = "oci://HOST/PREFIX")]
        source: String,
        /// Refuse components from the source that lack a valid signature by a trusted key.
        #[arg(long)]
        require: bool,
    },
    /// List the trusted keys and their sources.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Stop trusting a key (for every source, or only `--source`).
    Rm {
        /// The key's fingerprint (`ed25519:HEX`, as `cairn plugin trust ls` shows it).
        fingerprint: String,
        #[arg(long, value_name = "oci://HOST/PREFIX")]
        source: Option<String>,
    },
}

/// `cairn plugin sign FILE --key SECRETKEY [-o OUT]`: adds a signature (next to any already
/// there) and writes the result to OUT, or over FILE (atomically).
pub fn sign(context: &Context, file: &str, key: &str, output: Option<&str>) -> Result<()> {
    let path = context.cwd.join(file);
    let key = SecretKeyFile::load(&context.cwd.join(key))?;
    let component = read_component(&path)?;
    let target = context.cwd.join(output.unwrap_or(file));
    let public = key.public_key();
    match signature::sign(&component, &key) {
        Ok(signed) => {
            cairn_backend::file::write_atomically(&target, &signed)?;
            outln!("Signed {} with {}", field(file), public.fingerprint());
        }
        // Signing twice with one key is a no-op rather than an error, so scripts can re-run.
        Err(RegistryError::AlreadySigned { .. }) => {
            if target != path {
                cairn_backend::file::write_atomically(&target, &component)?;
            }
            outln!(
                "{} is already signed by {}; unchanged",
                field(file),
                public.fingerprint()
            );
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("signing {}", field(file)))),
    }
    outln!("  key id {}", public.key_id());
    if output.is_some() {
        outln!("  written to {}", target.display());
    }
    Ok(())
}

/// `cairn plugin verify FILE --key PUBKEY [--key …]`: succeeds when a signature by one of the
/// keys covers the whole component.
pub fn verify(context: &Context, file: &str, keys: &[String]) -> Result<()> {
    let keys = keys
        .iter()
        .map(|key| load_public_key(context, key))
        .collect::<Result<Vec<_>>>()?;
    let component = read_component(&context.cwd.join(file))?;
    let signer = signature::verify(&component, &keys)
        .with_context(|| format!("verifying {}", field(file)))?;
    outln!("Signature valid: signed by {}", signer.fingerprint);
    outln!("  key id {}", signer.key_id);
    Ok(())
}

/// `cairn plugin trust add|ls|rm`.
pub fn trust(context: &Context, command: TrustCommand) -> Result<()> {
    let file = TrustPolicy::path(&context.home);
    let mut policy = TrustPolicy::load(&file)?;
    match command {
        TrustCommand::Add {
            key,
            source,
            require,
        } => {
            let key = load_public_key(context, &key)?;
            let replaced = policy.trust(&key, &source, require)?;
            policy.save(&file)?;
            let source = signature::normalize_source(&source)?;
            outln!(
                "{} {} for {} ({})",
                if replaced { "Updated" } else { "Trusted" },
                key.fingerprint(),
                field(&source),
                if require {
                    "a valid signature by a trusted key is required"
                } else {
                    "signatures by it must verify; unsigned components are accepted"
                }
            );
            outln!("  key id {}", key.key_id());
        }
        TrustCommand::Ls { json } => {
            if json {
                outln!("{}", json_pretty(&policy.entries)?);
            } else if policy.entries.is_empty() {
                outln!(
                    "No trusted keys; add one with `cairn plugin trust add KEY --source oci://HOST/PREFIX`."
                );
            } else {
                outln!("{:<72} {:<8} SOURCE", "KEY", "REQUIRE");
                for entry in &policy.entries {
                    outln!(
                        "{:<72} {:<8} {}",
                        entry.key,
                        if entry.require { "yes" } else { "no" },
                        field(&entry.source)
                    );
                }
            }
        }
        TrustCommand::Rm {
            fingerprint,
            source,
        } => {
            let removed = policy.remove(&fingerprint, source.as_deref())?;
            if removed.is_empty() {
                bail!(
                    "{} is not trusted{} (`cairn plugin trust ls`)",
                    quoted(&fingerprint),
                    source
                        .map(|s| format!(" for {}", quoted(&s)))
                        .unwrap_or_default()
                );
            }
            policy.save(&file)?;
            for entry in removed {
                outln!(
                    "No longer trusting {} for {}",
                    entry.key,
                    field(&entry.source)
                );
            }
        }
    }
    Ok(())
}

/// Checks a component fetched from `source` against the trust policy in the Cairn home `home`:
/// the fingerprint of the trusted key that signed it, `None` when no entry applies or none
/// requires a signature and it carries none by a trusted key; an error when the policy refuses
/// it (the install must then store nothing).
pub fn trust_check(home: &Path, source: &str, component: &[u8]) -> Result<Option<String>> {
    let policy = TrustPolicy::load(&TrustPolicy::path(home))?;
    Ok(policy
        .check(source, component)?
        .map(|signer| signer.fingerprint))
}

/// A public key from a file, or given as its fingerprint (`ed25519:HEX`) when no such file
/// exists.
fn load_public_key(context: &Context, key: &str) -> Result<PublicKey> {
    let path = context.cwd.join(key);
    if key.starts_with(signature::FINGERPRINT_PREFIX) && !path.exists() {
        return Ok(PublicKey::from_fingerprint(key)?);
    }
    Ok(PublicKey::load(&path)?)
}

fn read_component(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}
