//! `cairn up`, `cairn preview`, `cairn refresh` and `cairn destroy`: run a deployment of the
//! current stack with the live display (after a preview and a confirmation, unless `--yes`).

use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::config::ConfigKey;
use cairn_engine::deploy::journal::{Persister, SnapshotManager};
use cairn_engine::deploy::{
    DeployError, Deployment, DeploymentOptions, Outcome, PendingCreate, default_parallelism,
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
    /// `up`: refresh the state from the providers first, then update.
    #[arg(long)]
    refresh: bool,
    /// `up` / `preview`: replace this resource even if it has no changes (repeatable).
    #[arg(long = "replace", value_name = "URN")]
    replaces: Vec<String>,
    /// `up` / `preview`: replace this resource and change nothing else (repeatable).
    #[arg(long = "target-replace", value_name = "URN")]
    target_replaces: Vec<String>,
    /// `refresh`: forget the interrupted creates not imported with --import-pending-creates
    /// (their resources were not created).
    #[arg(long)]
    clear_pending_creates: bool,
    /// `refresh`: adopt the resource an interrupted create made, by its provider ID
    /// (repeatable).
    #[arg(long = "import-pending-creates", num_args = 2, value_names = ["URN", "ID"])]
    import_pending_creates: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Up,
    Preview,
    Refresh,
    Destroy,
}

impl Kind {
    fn verb(self) -> &'static str {
        match self {
            Kind::Up => "update",
            Kind::Preview => "preview",
            Kind::Refresh => "refresh",
            Kind::Destroy => "destroy",
        }
    }

    fn command(self) -> &'static str {
        match self {
            Kind::Up => "up",
            other => other.verb(),
        }
    }

    /// Whether the deployment runs the program.
    fn runs_program(self) -> bool {
        matches!(self, Kind::Up | Kind::Preview)
    }
}

pub fn run(context: &Context, kind: Kind, args: DeployArgs) -> Result<()> {
    let workspace = context.project()?;
    let stack = Stack::current(&workspace)?;
    let project = stack.project().to_owned();
    let lock =
        workspace
            .backend
            .lock(&project, &stack.name, &format!("cairn {}", kind.command()))?;
    let deployment = workspace
        .backend
        .recover(&lock, &project, &stack.name)?
        .ok_or_else(|| {
            anyhow!(
                "stack {:?} has no state; create it with `cairn stack init {}`",
                stack.name,
                stack.name
            )
        })?;
    let config_file = stack.load_config()?;
    let crypter = Arc::new(stack.secrets(&config_file)?);
    let snapshot = decode_deployment(&deployment, Some(crypter.as_ref()))
        .with_context(|| format!("reading the state of stack {:?}", stack.name))?;

    // Checked before the program is built: nothing can run until they are resolved.
    if matches!(kind, Kind::Up | Kind::Destroy)
        && let Some(refusal) = cairn_engine::deploy::unresolved_creates(
            &snapshot,
            &format!("`cairn {}`", kind.command()),
        )
    {
        bail!("{refusal}");
    }
    let mut options = DeploymentOptions::new(&project, &stack.name);
    options.parallel = args.parallel.unwrap_or_else(default_parallelism);
    options.targets = parse_urns(&args.targets, "--target")?;
    options.excludes = parse_urns(&args.excludes, "--exclude")?;
    options.target_dependents = args.target_dependents;
    options.replaces = parse_urns(&args.replaces, "--replace")?;
    options.target_replaces = parse_urns(&args.target_replaces, "--target-replace")?;
    if kind == Kind::Refresh {
        options.pending_creates = pending_create_decisions(context, &args, &snapshot)?;
    } else if args.clear_pending_creates || !args.import_pending_creates.is_empty() {
        bail!("--clear-pending-creates and --import-pending-creates belong to `cairn refresh`");
    }
    let resolved = config_file.resolve(Some(crypter.as_ref()), &workspace.project)?;
    options.config = engine_config(&resolved);
    options.native_plugins = crate::program::native_plugins(&workspace.project);
    let wasm = crate::providers::runtime(&context.home)?;
    // Built (if need be) and compiled before anything runs, so a broken program fails early.
    let program = if kind.runs_program() {
        Some(crate::program::ProgramSource::prepare(
            &wasm,
            &workspace.dir,
            &workspace.project,
            &resolved,
        )?)
    } else {
        None
    };
    let parallel = options.parallel;
    let setup = |events: Arc<Display>| -> Result<Setup> {
        let loader = crate::providers::loader(
            &wasm,
            &context.home,
            &workspace.backend,
            &workspace.dir,
            &workspace.project,
            &resolved,
            events.clone(),
        )?;
        let program = match &program {
            Some(source) => Some(source.load(&wasm, events, parallel)?),
            None => None,
        };
        Ok(Setup { loader, program })
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

    if kind == Kind::Preview || !args.yes {
        if kind != Kind::Preview && !context.interactive {
            bail!(
                "cairn {} needs confirmation: pass --yes (non-interactive)",
                kind.command()
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
            display_options(context.interactive),
            &setup,
        ));
        outcome?;
        if kind == Kind::Preview {
            return Ok(());
        }
        if !confirm(kind)? {
            bail!("cancelled; nothing was changed");
        }
    }

    let persister = workspace.backend.persister(&lock, &project, &stack.name)?;
    // `up --refresh`: bring the state up to date with the cloud first, then update from it.
    let snapshot = if kind == Kind::Up && args.refresh {
        runtime.block_on(deploy(
            Kind::Refresh,
            options.clone(),
            snapshot,
            Some(persister.clone()),
            crypter.clone(),
            display_options(context.interactive),
            &setup,
        ))?;
        let refreshed = workspace
            .backend
            .recover(&lock, &project, &stack.name)?
            .ok_or_else(|| anyhow!("stack {:?} lost its state during the refresh", stack.name))?;
        decode_deployment(&refreshed, Some(crypter.as_ref()))
            .with_context(|| format!("reading the refreshed state of stack {:?}", stack.name))?
    } else {
        snapshot
    };
    runtime
        .block_on(deploy(
            kind,
            options,
            snapshot,
            Some(persister),
            crypter,
            display_options(context.interactive),
            &setup,
        ))
        .map(|_| ())
}

/// What a deployment runs with: the provider loader and (up, preview) the program.
struct Setup {
    loader: crate::providers::Loader,
    program: Option<Arc<dyn cairn_engine::deploy::program::Program>>,
}

async fn deploy(
    kind: Kind,
    options: DeploymentOptions,
    snapshot: Snapshot,
    persister: Option<Arc<dyn Persister>>,
    crypter: Arc<LazyCrypter>,
    display: DisplayOptions,
    setup: &dyn Fn(Arc<Display>) -> Result<Setup>,
) -> Result<Outcome> {
    let journal = Arc::new(SnapshotManager::new(
        snapshot,
        Manifest::new(),
        persister,
        crypter,
    )?);
    let events = Arc::new(Display::new(display));
    let Setup { loader, program } = setup(events.clone())?;
    let deployment = Deployment::new(options, Arc::new(loader), events.clone(), journal)?;
    let result = match (kind, program) {
        (Kind::Up | Kind::Preview, Some(program)) => deployment.update(program).await,
        (Kind::Up | Kind::Preview, None) => unreachable!("up and preview load the program"),
        (Kind::Refresh, _) => deployment.refresh().await,
        (Kind::Destroy, _) => deployment.destroy().await,
    };
    events.finish();
    result.map_err(|e: DeployError| anyhow!(e))
}

/// What `cairn refresh` does with each interrupted create: as the flags say, else (in a
/// terminal) as the user answers; the rest stay pending.
fn pending_create_decisions(
    context: &Context,
    args: &DeployArgs,
    snapshot: &Snapshot,
) -> Result<IndexMap<Urn, PendingCreate>> {
    let mut decisions = IndexMap::new();
    for pair in args.import_pending_creates.chunks(2) {
        let [urn, id] = pair else {
            bail!("--import-pending-creates takes a URN and an ID");
        };
        let urn = Urn::parse(urn).with_context(|| {
            format!("--import-pending-creates {}", crate::terminal::quoted(urn))
        })?;
        if id.is_empty() {
            bail!("--import-pending-creates {urn}: the ID is empty");
        }
        decisions.insert(urn, PendingCreate::Import(id.clone()));
    }
    let creates: Vec<_> = snapshot
        .pending_operations
        .iter()
        .filter(|op| op.kind.may_have_created() && !decisions.contains_key(&op.resource.urn))
        .collect();
    let asked = args.clear_pending_creates || !args.import_pending_creates.is_empty();
    for op in creates {
        let urn = &op.resource.urn;
        if args.clear_pending_creates {
            decisions.insert(urn.clone(), PendingCreate::Clear);
            continue;
        }
        if asked || !context.interactive || args.yes {
            continue;
        }
        loop {
            crate::terminal::prompt(&format!(
                "The create of {urn} was interrupted; the resource may exist.\n  [i]mport it by its ID, [c]lear it (it was not created), or [s]kip (leave it pending)? "
            ));
            let answer = read_line()?;
            match answer.as_str() {
                "i" | "import" => {
                    crate::terminal::prompt("  its ID: ");
                    let id = read_line()?;
                    if id.is_empty() {
                        continue;
                    }
                    decisions.insert(urn.clone(), PendingCreate::Import(id));
                }
                "c" | "clear" => {
                    decisions.insert(urn.clone(), PendingCreate::Clear);
                }
                "s" | "skip" | "" => {}
                _ => continue,
            }
            break;
        }
    }
    Ok(decisions)
}

fn read_line() -> Result<String> {
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(answer.trim().to_owned())
}

fn confirm(kind: Kind) -> Result<bool> {
    crate::terminal::prompt(&format!(
        "Do you want to perform this {}? [y/N] ",
        kind.verb()
    ));
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

fn parse_urns(values: &[String], flag: &str) -> Result<Vec<Urn>> {
    values
        .iter()
        .map(|v| Urn::parse(v).with_context(|| format!("{flag} {}", crate::terminal::quoted(v))))
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
