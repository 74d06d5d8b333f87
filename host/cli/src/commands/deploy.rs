//! `cairn refresh` and `cairn destroy`: run a deployment of the current stack with the live
//! display, after a preview and a confirmation.

use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::config::ConfigKey;
use cairn_engine::deploy::journal::{Persister, SnapshotManager};
use cairn_engine::deploy::{
    DeployError, Deployment, DeploymentOptions, Outcome, default_parallelism,
};
use cairn_engine::state::{Manifest, Snapshot, decode_deployment};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyValue;
use clap::Args;
use indexmap::IndexMap;

use crate::display::{Display, DisplayOptions};
use crate::stack::{LazyCrypter, Stack};
use crate::workspace::Context;

/// Options shared by every deploying command.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// Skip the preview and the confirmation.
    #[arg(short, long)]
    yes: bool,
    /// Only act on this resource (repeatable).
    #[arg(short, long = "target", value_name = "URN")]
    targets: Vec<String>,
    /// Leave this resource alone (repeatable).
    #[arg(long = "exclude", value_name = "URN")]
    excludes: Vec<String>,
    /// Also act on resources that depend on the targets.
    #[arg(long)]
    target_dependents: bool,
    /// Provider operations to run at once (default: 4 × cores).
    #[arg(short, long, value_name = "N")]
    parallel: Option<usize>,
    /// Print one JSON object per engine event instead of the progress view.
    #[arg(long)]
    json: bool,
    /// Show secret values in diffs and outputs.
    #[arg(long)]
    show_secrets: bool,
    /// Also list resources that do not change.
    #[arg(long)]
    show_sames: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Refresh,
    Destroy,
}

impl Kind {
    fn verb(self) -> &'static str {
        match self {
            Kind::Refresh => "refresh",
            Kind::Destroy => "destroy",
        }
    }
}

pub fn run(context: &Context, kind: Kind, args: DeployArgs) -> Result<()> {
    let workspace = context.project()?;
    let stack = Stack::current(&workspace)?;
    let project = stack.project().to_owned();
    let lock = workspace
        .backend
        .lock(&project, &stack.name, &format!("cairn {}", kind.verb()))?;
    let deployment = workspace
        .backend
        .recover(&lock, &project, &stack.name)?
        .ok_or_else(|| anyhow!("stack {:?} has no state", stack.name))?;
    let config_file = stack.load_config()?;
    let crypter = Arc::new(stack.secrets(&config_file)?);
    let snapshot = decode_deployment(&deployment, Some(crypter.as_ref()))
        .with_context(|| format!("reading the state of stack {:?}", stack.name))?;

    let mut options = DeploymentOptions::new(&project, &stack.name);
    options.parallel = args.parallel.unwrap_or_else(default_parallelism);
    options.targets = parse_urns(&args.targets, "--target")?;
    options.excludes = parse_urns(&args.excludes, "--exclude")?;
    options.target_dependents = args.target_dependents;
    let resolved = config_file.resolve(Some(crypter.as_ref()), &workspace.project)?;
    options.config = engine_config(&resolved);
    let providers = |events: Arc<Display>| {
        crate::providers::loader(
            &context.home,
            &workspace.dir,
            &workspace.project,
            &resolved,
            events,
        )
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let display_options = |interactive: bool| DisplayOptions {
        json: args.json,
        interactive,
        show_secrets: args.show_secrets,
        show_sames: args.show_sames,
        writer: Box::new(std::io::stdout()),
    };

    if !args.yes {
        if !context.interactive {
            bail!(
                "cairn {} needs confirmation: pass --yes (non-interactive)",
                kind.verb()
            );
        }
        let mut preview = options.clone();
        preview.preview = true;
        let outcome = runtime.block_on(deploy(
            kind,
            preview,
            snapshot.clone(),
            None,
            crypter.clone(),
            display_options(true),
            &providers,
        ));
        outcome?;
        if !confirm(kind)? {
            bail!("cancelled; nothing was changed");
        }
    }

    let persister = workspace.backend.persister(&lock, &project, &stack.name)?;
    runtime
        .block_on(deploy(
            kind,
            options,
            snapshot,
            Some(persister),
            crypter,
            display_options(context.interactive),
            &providers,
        ))
        .map(|_| ())
}

async fn deploy(
    kind: Kind,
    options: DeploymentOptions,
    snapshot: Snapshot,
    persister: Option<Arc<dyn Persister>>,
    crypter: Arc<LazyCrypter>,
    display: DisplayOptions,
    providers: &dyn Fn(Arc<Display>) -> Result<cairn_wasm::WasmLoader>,
) -> Result<Outcome> {
    let journal = Arc::new(SnapshotManager::new(
        snapshot,
        Manifest::new(),
        persister,
        crypter,
    )?);
    let events = Arc::new(Display::new(display));
    let loader = Arc::new(providers(events.clone())?);
    let deployment = Deployment::new(options, loader, events.clone(), journal)?;
    let result = match kind {
        Kind::Refresh => deployment.refresh().await,
        Kind::Destroy => deployment.destroy().await,
    };
    events.finish();
    result.map_err(|e: DeployError| anyhow!(e))
}

fn confirm(kind: Kind) -> Result<bool> {
    use std::io::Write;
    print!("Do you want to perform this {}? [y/N] ", kind.verb());
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

fn parse_urns(values: &[String], flag: &str) -> Result<Vec<Urn>> {
    values
        .iter()
        .map(|v| Urn::parse(v).with_context(|| format!("{flag} {v}")))
        .collect()
}

/// Stack configuration as the engine takes it: secrets stay secret.
pub fn engine_config(
    resolved: &IndexMap<ConfigKey, cairn_engine::config::ResolvedConfig>,
) -> IndexMap<String, PropertyValue> {
    resolved
        .iter()
        .map(|(key, value)| {
            let plain = PropertyValue::String(value.value.clone());
            let value = if value.secret {
                PropertyValue::secret(plain)
            } else {
                plain
            };
            (key.to_string(), value)
        })
        .collect()
}
