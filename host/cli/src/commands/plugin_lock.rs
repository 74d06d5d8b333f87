//! `cairn plugin lock` and `cairn plugin mirror`: the project's `cairn.lock`, checked,
//! extended and updated; and every provider it pins copied to a directory or a registry.

use anyhow::{Result, bail};
use cairn_registry::lock::{LOCK_FILE, LockFile};
use cairn_registry::reference::{Reference, Target, tag_for_version};

use crate::commands::plugin::{name_and_requirement, project_registries};
use crate::registry;
use crate::terminal::{field, outln};
use crate::workspace::Context;

/// `cairn plugin lock [NAME[@REQ]…] [--update [NAME]]`.
pub fn lock(
    context: &Context,
    store: &cairn_wasm::PluginStore,
    providers: Vec<String>,
    update: Option<String>,
) -> Result<()> {
    let workspace = context.project()?;
    let path = workspace.dir.join(LOCK_FILE);
    let mut lock = LockFile::load(&path)?;
    let registries = registry::registries(&context.home, project_registries(context))?;
    let client = registry::client(&context.home, false)?;
    let home = &context.home;
    // What to (re-)resolve: the named providers, and with --update the entries it covers.
    let mut wanted = Vec::new();
    for text in &providers {
        let Some(parsed) = name_and_requirement(text)? else {
            bail!("{} is not NAME or NAME@REQUIREMENT", field(text));
        };
        wanted.push(parsed);
    }
    if let Some(only) = &update {
        let entries: Vec<_> = lock
            .providers
            .iter()
            .filter(|p| only.is_empty() || p.name == *only)
            .map(|p| (p.name.clone(), semver::VersionReq::parse(&p.requirement)))
            .collect();
        if entries.is_empty() && !only.is_empty() {
            bail!("{} locks no provider named {}", path.display(), field(only));
        }
        for (name, requirement) in entries {
            wanted.push((name, requirement?));
        }
    }
    registry::block_on(async {
        if wanted.is_empty() {
            // Check: every locked digest is still served (through the mirrors), and stored.
            for locked in &lock.providers {
                let plugin =
                    registry::fetch_locked(home, &client, &registries, locked, false).await?;
                store.install_plugin(&plugin)?;
                outln!("{} {}: {} ok", locked.name, locked.version, locked.digest);
            }
            if lock.providers.is_empty() {
                outln!(
                    "{} pins nothing yet: `cairn plugin lock NAME[@REQUIREMENT]`, or run `cairn preview`",
                    path.display()
                );
            }
            return Ok(());
        }
        for (name, requirement) in wanted {
            let (plugin, entry) =
                registry::fetch_by_name(home, &client, &registries, &name, &requirement).await?;
            crate::commands::package::check_before_install(&plugin, &entry.source)?;
            store.install_plugin(&plugin)?;
            let previous = lock
                .find(&name, None)
                .map(|p| (p.version.clone(), p.digest));
            if update.is_some() {
                // An update replaces what the requirement covered.
                lock.providers.retain(|p| {
                    p.name != name
                        || semver::VersionReq::parse(&p.requirement).ok().as_ref()
                            != Some(&requirement)
                });
            }
            outln!(
                "{} {} from {} ({}{}){}",
                entry.name,
                entry.version,
                field(&entry.source),
                entry.digest,
                entry
                    .signer
                    .as_deref()
                    .map(|s| format!(", signed by {s}"))
                    .unwrap_or_default(),
                match previous {
                    Some((v, d)) if v != entry.version || d != entry.digest =>
                        format!(", was {v} ({d})"),
                    _ => String::new(),
                }
            );
            lock.upsert(entry);
        }
        lock.save(&path)?;
        outln!("Wrote {}", path.display());
        Ok(())
    })
}

/// `cairn plugin mirror --to DIR|oci://HOST/PREFIX [--from oci://HOST/PREFIX]`.
pub fn mirror(context: &Context, to: &str, from: Option<&str>, plain_http: bool) -> Result<()> {
    let workspace = context.project()?;
    let path = workspace.dir.join(LOCK_FILE);
    let lock = LockFile::load(&path)?;
    if lock.providers.is_empty() {
        bail!("{} pins no providers: nothing to mirror", path.display());
    }
    let registries = registry::registries(&context.home, project_registries(context))?;
    let client = registry::client(&context.home, plain_http)?;
    let home = &context.home;
    registry::block_on(async {
        for locked in &lock.providers {
            // Fetched from the source (or a mirror of it) and checked against the lock first.
            let plugin = registry::fetch_locked(home, &client, &registries, locked, false).await?;
            if to.starts_with(cairn_registry::reference::SCHEME) {
                // The repository keeps its path below the mirrored prefix.
                let origin = match from {
                    Some(from) => from.trim_end_matches('/').to_owned(),
                    None => locked
                        .source
                        .rsplit_once('/')
                        .map(|(p, _)| p.to_owned())
                        .unwrap_or_default(),
                };
                let Some(rest) = locked.source.strip_prefix(&format!("{origin}/")) else {
                    bail!("{} is not below {} (--from)", locked.source, origin);
                };
                let target = Reference::parse(&format!("{}/{rest}", to.trim_end_matches('/')))?
                    .with_target(Target::Tag(tag_for_version(&locked.version)));
                let manifest = plugin.manifest();
                let artifact = cairn_registry::layout::artifact(
                    plugin.bytes(),
                    &format!("{}-{}.wasm", manifest.name, manifest.version),
                    &manifest.version,
                    chrono::Utc::now(),
                );
                client.push(&target, &artifact, plugin.bytes()).await?;
                outln!("{} {} -> {target}", locked.name, locked.version);
            } else {
                let dir = context.cwd.join(to);
                let written = cairn_registry::sources::write_to_dir(&dir, plugin.bytes())?;
                outln!(
                    "{} {} -> {}",
                    locked.name,
                    locked.version,
                    written.display()
                );
            }
        }
        Ok(())
    })
}
