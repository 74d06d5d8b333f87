//! `cairn up`, `cairn preview`, `cairn refresh` and `cairn destroy`: run a deployment of the
//! current stack with the live display (after a preview and a confirmation, unless `--yes`).
//! Ctrl-C and SIGTERM interrupt it gracefully, twice at once (see [`crate::interrupt`]);
//! `--target`, `--exclude`, `--replace` and `--target-replace` must name resources of the stack
//! (for `up`, `--target` and `--exclude` may also name resources the program registers).
//! `cairn import` runs here too ([`run_import`]): the program is the import's, and nothing
//! else of the stack changes.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::config::ConfigKey;
use cairn_engine::deploy::journal::{Persister, SnapshotManager};
use cairn_engine::deploy::{
    DeployError, Deployment, DeploymentOptions, Outcome, PendingCreate, UrnPattern, UrnTargets,
    default_parallelism,
};
use cairn_engine::state::{Manifest, Snapshot, decode_deployment};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyValue;
use clap::Args;
use indexmap::IndexMap;

use crate::display::{Display, DisplayOptions};
use crate::interrupt::{Interrupted, Signals};
use crate::stack::{LazyCrypter, Stack};
use crate::terminal::outln;
use crate::workspace::Context;

/// Options shared by every deploying command.
#[derive(Debug, Default, Args)]
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
    /// Do not show the stack's outputs.
    #[arg(long)]
    suppress_outputs: bool,
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
    /// `up` / `preview`: run this policy pack (a directory with a PulumiPolicy.yaml, or a
    /// policy component `.wasm`) on every resource and on the stack (repeatable).
    #[arg(long = "policy-pack", value_name = "DIR")]
    policy_packs: Vec<std::path::PathBuf>,
    /// `up` / `preview`: the JSON configuration of the `--policy-pack` in the same position
    /// (repeatable).
    #[arg(long = "policy-pack-config", value_name = "FILE")]
    policy_pack_configs: Vec<std::path::PathBuf>,
    /// `up` / `refresh` / `destroy`: do not preview first, even with policy packs (a mandatory
    /// violation then stops the update at its resource, after what was done before it).
    #[arg(long)]
    skip_preview: bool,
    /// `up` / `preview` / `refresh`: fail if the deployment changes (or, previewing, would
    /// change) anything, as Pulumi's flag does: `up` and `refresh` still apply what they find.
    #[arg(long)]
    expect_no_changes: bool,
    /// Set this configuration value before the deployment, saved in the stack's settings
    /// (repeatable).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// The `--config` keys are property paths (`data.ports[0]`).
    #[arg(long)]
    config_path: bool,
    /// `destroy`: leave the protected resources and what they depend on; destroy the rest.
    #[arg(long)]
    exclude_protected: bool,
    /// Accepted for Pulumi's scripts: Cairn always shows each resource's detailed diff.
    #[arg(long)]
    diff: bool,
    /// A message recorded with the update in the stack's history (`cairn stack history`).
    #[arg(short = 'm', long, value_name = "TEXT")]
    message: Option<String>,
    /// `up` / `refresh` / `destroy`: a failed step does not stop the others — what does not
    /// depend on it goes on, what does is skipped — and the command still fails at the end
    /// (also set by PULUMI_CONTINUE_ON_ERROR).
    #[arg(
        long,
        env = "PULUMI_CONTINUE_ON_ERROR",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    continue_on_error: bool,
}

impl DeployArgs {
    /// The deployment options `cairn import` shares with `up`.
    pub fn for_import(
        yes: bool,
        skip_preview: bool,
        parallel: Option<usize>,
        json: bool,
        show_secrets: bool,
    ) -> DeployArgs {
        DeployArgs {
            yes,
            skip_preview,
            parallel,
            json,
            show_secrets,
            ..DeployArgs::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Up,
    Preview,
    Refresh,
    Destroy,
    /// `cairn import`: preview, confirm, import.
    Import,
    /// `cairn import --preview-only`.
    ImportPreview,
}

impl Kind {
    fn verb(self) -> &'static str {
        match self {
            Kind::Up => "update",
            Kind::Preview => "preview",
            Kind::Refresh => "refresh",
            Kind::Destroy => "destroy",
            Kind::Import | Kind::ImportPreview => "import",
        }
    }

    fn command(self) -> &'static str {
        match self {
            Kind::Up => "up",
            other => other.verb(),
        }
    }

    /// Only previews: nothing is recorded.
    fn previews_only(self) -> bool {
        matches!(self, Kind::Preview | Kind::ImportPreview)
    }

    /// Whether the deployment runs the program.
    fn runs_program(self) -> bool {
        matches!(self, Kind::Up | Kind::Preview)
    }
}

/// What `cairn import` deploys: the program registering the imports (and what they refer
/// to), and the registrations that are planned imports, made from the stack's state.
pub struct ImportPlan {
    pub program: Arc<dyn cairn_engine::deploy::program::Program>,
    pub planned: IndexMap<Urn, cairn_engine::deploy::PlannedImport>,
}

/// Builds the [`ImportPlan`] from the stack's current snapshot (read under its lock).
pub type ImportPlanner<'a> = &'a dyn Fn(&Snapshot) -> Result<ImportPlan>;

pub fn run(context: &Context, kind: Kind, args: DeployArgs) -> Result<()> {
    run_deployment(context, kind, args, None).map(|_| ())
}

/// `cairn import` (`kind` [`Kind::Import`] or [`Kind::ImportPreview`]): the deployment `up`
/// runs — preview, confirmation, journaled steps — with the import's program; returns what
/// the import recorded (`None` for a preview).
pub fn run_import(
    context: &Context,
    kind: Kind,
    args: DeployArgs,
    planner: ImportPlanner<'_>,
) -> Result<Option<Outcome>> {
    run_deployment(context, kind, args, Some(planner))
}

fn run_deployment(
    context: &Context,
    kind: Kind,
    args: DeployArgs,
    planner: Option<ImportPlanner<'_>>,
) -> Result<Option<Outcome>> {
    // First, so a signal from here on ends the command in order (locks released).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let signals = Signals::install(&runtime)?;
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
    if !args.config.is_empty() {
        let settings = crate::commands::config::key_values("--config", &args.config, false)?;
        crate::commands::config::save_settings(&stack, settings, args.config_path)?;
    } else if args.config_path {
        bail!("--config-path needs --config KEY=VALUE");
    }
    let config_file = stack.load_config()?;
    let crypter = Arc::new(stack.secrets(&config_file)?);
    let snapshot = decode_deployment(&deployment, Some(crypter.as_ref()))
        .with_context(|| format!("reading the state of stack {:?}", stack.name))?;

    // Checked before the program is built: nothing can run until they are resolved.
    if matches!(kind, Kind::Up | Kind::Destroy | Kind::Import)
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
    // `up` continues in its preview too, as Pulumi's does; `preview` and `import` never do.
    options.continue_on_error =
        args.continue_on_error && matches!(kind, Kind::Up | Kind::Refresh | Kind::Destroy);
    options.replaces = parse_urns(&args.replaces, "--replace")?;
    options.target_replaces = parse_urns(&args.target_replaces, "--target-replace")?;
    if kind == Kind::Refresh {
        options.pending_creates = pending_create_decisions(context, &args, &snapshot)?;
    } else if args.clear_pending_creates || !args.import_pending_creates.is_empty() {
        bail!("--clear-pending-creates and --import-pending-creates belong to `cairn refresh`");
    }
    let kept_protected = exclude_protected(kind, &args, &mut options, &snapshot)?;
    if kept_protected.is_some_and(|n| n == snapshot.resources.len()) {
        outln!(
            "There were no unprotected resources to destroy. There are still {} protected \
             resources associated with this stack.",
            snapshot.resources.len()
        );
        return Ok(None);
    }
    check_targets_before(kind, &options, &snapshot)?;
    if !kind.runs_program()
        && (!args.policy_packs.is_empty() || !args.policy_pack_configs.is_empty())
    {
        bail!("--policy-pack and --policy-pack-config belong to `cairn up` and `cairn preview`");
    }
    if args.skip_preview && kind == Kind::Preview {
        bail!("--skip-preview belongs to `cairn up`, `cairn refresh` and `cairn destroy`");
    }
    if args.expect_no_changes && kind == Kind::Destroy {
        bail!("--expect-no-changes belongs to `cairn up`, `cairn preview` and `cairn refresh`");
    }
    let packs = crate::policy::locate(&args.policy_packs, &args.policy_pack_configs)?;
    let resolved = config_file.resolve(Some(crypter.as_ref()), &workspace.project)?;
    options.config = engine_config(&resolved);
    let import = match planner {
        Some(planner) => {
            let plan = planner(&snapshot)?;
            options.planned_imports = plan.planned;
            Some(plan.program)
        }
        None => None,
    };
    options.native_plugins = crate::program::native_plugins(&workspace.project);
    options.program_dir = Some(workspace.dir.clone());
    let wasm = crate::providers::runtime(&context.home)?;
    let policies = Policies {
        packs: &packs,
        stack: policy_stack(&project, &stack.name, &resolved),
        runtime: &wasm,
    };
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
        let program = match (&program, &import) {
            (Some(source), _) => Some(source.load(&wasm, events, parallel)?),
            (None, Some(import)) => Some(import.clone()),
            (None, None) => None,
        };
        Ok(Setup { loader, program })
    };

    let display_options = |interactive: bool| DisplayOptions {
        json: args.json,
        interactive,
        show_secrets: args.show_secrets,
        show_sames: args.show_sames,
        suppress_outputs: args.suppress_outputs,
        writer: Box::new(std::io::stdout()),
    };

    if !kind.previews_only() && !args.yes && !context.interactive {
        bail!(
            "cairn {} needs confirmation: pass --yes (non-interactive)",
            kind.command()
        );
    }
    // With policy packs, `up` previews first even with --yes (as Pulumi's `up` does unless
    // --skip-preview): a mandatory violation then stops it before anything changes.
    let policy_preview = kind == Kind::Up && !packs.is_empty();
    let previews = kind.previews_only() || (!args.skip_preview && (!args.yes || policy_preview));
    if previews {
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
            &policies,
            &signals,
        ));
        let outcome = outcome?;
        if kind.previews_only() {
            return expect_no_changes(&args, kind, &outcome).map(|()| None);
        }
    }
    if !args.yes && !confirm(kind)? {
        bail!("cancelled; nothing was changed");
    }

    let persister = workspace.backend.persister(&lock, &project, &stack.name)?;
    let history = UpdateHistory::start(kind, args.message.as_deref());
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
            &Policies::none(&wasm),
            &signals,
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
    let outcome = runtime.block_on(deploy(
        kind,
        options,
        snapshot,
        Some(persister),
        crypter,
        display_options(context.interactive),
        &setup,
        &policies,
        &signals,
    ));
    history.record(&workspace.backend, &lock, &project, &stack.name, &outcome)?;
    let outcome = outcome?;
    if let Some(kept) = kept_protected
        && !args.json
    {
        outln!(
            "All unprotected resources were destroyed. There are still {kept} protected \
             resources associated with this stack."
        );
    }
    expect_no_changes(&args, kind, &outcome)?;
    Ok(Some(outcome))
}

/// `destroy --exclude-protected`: excludes the protected resources and everything they depend
/// on (as Pulumi does); returns how many that is, if any.
fn exclude_protected(
    kind: Kind,
    args: &DeployArgs,
    options: &mut DeploymentOptions,
    snapshot: &Snapshot,
) -> Result<Option<usize>> {
    if !args.exclude_protected {
        return Ok(None);
    }
    if kind != Kind::Destroy {
        bail!("--exclude-protected belongs to `cairn destroy`");
    }
    if !args.targets.is_empty() {
        bail!("you cannot specify --target and --exclude-protected");
    }
    let kept = cairn_engine::deploy::graph::protected_and_their_dependencies(&snapshot.resources);
    let count = kept.len();
    for urn in kept {
        options.excludes.add(urn);
    }
    Ok((count > 0).then_some(count))
}

/// `--expect-no-changes`: an error once the deployment has run, if it changed anything (reads
/// and unchanged resources do not count), worded as Pulumi's.
fn expect_no_changes(args: &DeployArgs, kind: Kind, outcome: &Outcome) -> Result<()> {
    if args.expect_no_changes && outcome.changes.values().any(|count| *count > 0) {
        bail!(
            "no changes were expected for {} but changes were proposed",
            kind.verb()
        );
    }
    Ok(())
}

/// The policy packs a deployment runs, and the stack they analyze.
struct Policies<'a> {
    packs: &'a [crate::policy::PolicyPack],
    stack: cairn_grpc::analyzer::StackContext,
    runtime: &'a cairn_wasm::WasmRuntime,
}

impl<'a> Policies<'a> {
    fn none(runtime: &'a cairn_wasm::WasmRuntime) -> Policies<'a> {
        Policies {
            packs: &[],
            stack: Default::default(),
            runtime,
        }
    }
}

/// The stack as policy packs are told it: names and the configuration (secrets decrypted, as
/// Pulumi hands them to packs).
fn policy_stack(
    project: &str,
    stack: &str,
    resolved: &IndexMap<ConfigKey, cairn_engine::config::ResolvedConfig>,
) -> cairn_grpc::analyzer::StackContext {
    let mut secret_keys: Vec<String> = resolved
        .iter()
        .filter(|(_, v)| v.secret)
        .map(|(k, _)| k.to_string())
        .collect();
    secret_keys.sort();
    cairn_grpc::analyzer::StackContext {
        project: project.to_owned(),
        stack: stack.to_owned(),
        organization: "organization".to_owned(),
        dry_run: false,
        config: resolved
            .iter()
            .map(|(k, v)| (k.to_string(), v.value.clone()))
            .collect(),
        secret_keys,
    }
}

/// What a deployment runs with: the provider loader and (up, preview) the program.
struct Setup {
    loader: crate::providers::Loader,
    program: Option<Arc<dyn cairn_engine::deploy::program::Program>>,
}

#[allow(clippy::too_many_arguments, reason = "one call per phase of `run`")]
async fn deploy(
    kind: Kind,
    options: DeploymentOptions,
    snapshot: Snapshot,
    persister: Option<Arc<dyn Persister>>,
    crypter: Arc<LazyCrypter>,
    display: DisplayOptions,
    setup: &dyn Fn(Arc<Display>) -> Result<Setup>,
    policies: &Policies<'_>,
    signals: &Signals,
) -> Result<Outcome> {
    let mut options = options;
    let olds: HashSet<Urn> = snapshot.resources.iter().map(|r| r.urn.clone()).collect();
    let journal = Arc::new(SnapshotManager::new(
        snapshot,
        Manifest::new(),
        persister,
        crypter,
    )?);
    let events = Arc::new(Display::new(display));
    let Setup { loader, program } = setup(events.clone())?;
    let stack = cairn_grpc::analyzer::StackContext {
        dry_run: options.preview,
        ..policies.stack.clone()
    };
    // Kept until the deployment ends: the engine address the packs were given.
    let (analyzers, _pack_engine) =
        crate::policy::start(policies.packs, &stack, policies.runtime, events.clone()).await?;
    options.analyzers = analyzers;
    let deployment = Deployment::new(options.clone(), Arc::new(loader), events.clone(), journal)?;
    let result = {
        let counter = events.clone();
        let _running = signals.running(deployment.interrupter(), options.preview, move || {
            counter.in_flight()
        });
        match (kind, program) {
            (Kind::Up | Kind::Preview, Some(program)) => deployment.update(program).await,
            (Kind::Import | Kind::ImportPreview, Some(program)) => deployment.import(program).await,
            (Kind::Up | Kind::Preview | Kind::Import | Kind::ImportPreview, None) => {
                unreachable!("up, preview and import have a program")
            }
            (Kind::Refresh, _) => deployment.refresh().await,
            (Kind::Destroy, _) => deployment.destroy().await,
        }
    };
    events.finish();
    if let Some(signal) = signals.received() {
        let message = match result {
            Err(e) => e.to_string(),
            Ok(_) => "interrupted, but the deployment had already finished: everything it did is \
                      recorded"
                .to_owned(),
        };
        return Err(Interrupted::new(signal, message).into());
    }
    let outcome = result.map_err(|e: DeployError| anyhow!(e))?;
    if kind.runs_program() {
        let met: HashSet<Urn> = olds.union(&events.seen()).cloned().collect();
        check_targets(
            &options.stack,
            &met,
            &[
                ("--target", &options.targets),
                ("--exclude", &options.excludes),
            ],
        )?;
    }
    Ok(outcome)
}

/// `--target`, `--exclude`, `--replace` and `--target-replace` that must name resources of the
/// stack before anything runs, as Pulumi checks them: for `refresh` and `destroy` all of them;
/// for `up` and `preview` the replacements (targets and excludes may also name resources the
/// program is about to register, so they are checked after it ran).
fn check_targets_before(
    kind: Kind,
    options: &DeploymentOptions,
    snapshot: &Snapshot,
) -> Result<()> {
    let olds: HashSet<Urn> = snapshot.resources.iter().map(|r| r.urn.clone()).collect();
    let flags: &[(&str, &UrnTargets)] = if kind.runs_program() {
        &[
            ("--replace", &options.replaces),
            ("--target-replace", &options.target_replaces),
        ]
    } else {
        &[
            ("--target", &options.targets),
            ("--exclude", &options.excludes),
            ("--replace", &options.replaces),
            ("--target-replace", &options.target_replaces),
        ]
    };
    check_targets(&options.stack, &olds, flags)
}

/// Fails naming every URN given to a flag that is not in `known`, as Pulumi does ("no resource
/// named '…' found"). Only literal URNs are checked: a glob may match nothing, which is no
/// error (Pulumi's `checkTargets` looks at `Literals()` only).
fn check_targets(stack: &str, known: &HashSet<Urn>, flags: &[(&str, &UrnTargets)]) -> Result<()> {
    let missing: Vec<(&str, &Urn)> = flags
        .iter()
        .flat_map(|(flag, targets)| {
            targets
                .literals()
                .filter(|urn| !known.contains(*urn))
                .map(move |urn| (*flag, urn))
        })
        .collect();
    let message = match missing.as_slice() {
        [] => return Ok(()),
        [(flag, urn)] => format!(
            "no resource named '{urn}' found in stack {stack:?} ({flag}){}",
            shell_hint(urn.as_str())
        ),
        _ => {
            let lines: Vec<String> = missing
                .iter()
                .map(|(flag, urn)| format!("\n  {flag} '{urn}'{}", shell_hint(urn.as_str())))
                .collect();
            format!(
                "{} resources named by flags were not found in stack {stack:?}:{}",
                missing.len(),
                lines.concat()
            )
        }
    };
    bail!(message)
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

/// A flag's values: URNs, or globs (a value with `*`: `**` matches anything, `*` anything but
/// `:`), as Pulumi's `NewUrnTargets`.
fn parse_urns(values: &[String], flag: &str) -> Result<UrnTargets> {
    values
        .iter()
        .map(|v| {
            UrnPattern::parse(v)
                .map_err(|e| e.source)
                .with_context(|| format!("{flag} {}", crate::terminal::quoted(v)))
        })
        .collect()
}

/// A shell expands `$name` in an unquoted URN of a nested type: `my:mod:Comp$aws:s3:Bucket`
/// becomes `my:mod:Comp:s3:Bucket`, a type of more than three parts. Says so, as Pulumi does.
fn shell_hint(urn: &str) -> &'static str {
    let qualified_type = urn.split("::").nth(2).unwrap_or_default();
    if !qualified_type.contains('$') && qualified_type.split(':').count() > 3 {
        " (did you forget to quote a `$` in it? your shell may have expanded it)"
    } else {
        ""
    }
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

/// The stack-history entry of a deployment that changes the stack: started before its first
/// step, recorded (success or failure) after it ends.
struct UpdateHistory {
    kind: &'static str,
    message: String,
    start: i64,
}

impl UpdateHistory {
    fn start(kind: Kind, message: Option<&str>) -> UpdateHistory {
        UpdateHistory {
            kind: kind.verb(),
            message: message.unwrap_or_default().to_owned(),
            start: chrono::Utc::now().timestamp(),
        }
    }

    /// Records the update; a failure to record it is reported after the deployment's own.
    fn record(
        self,
        backend: &crate::backend::Backend,
        lock: &crate::backend::StackLock,
        project: &str,
        stack: &str,
        outcome: &Result<Outcome>,
    ) -> Result<()> {
        let (result, resource_changes) = match outcome {
            Ok(outcome) => {
                let mut changes: std::collections::BTreeMap<String, u64> = outcome
                    .changes
                    .iter()
                    .map(|(op, n)| (op.label().to_owned(), *n as u64))
                    .collect();
                if outcome.unchanged > 0 {
                    changes.insert("same".into(), outcome.unchanged as u64);
                }
                ("succeeded", changes)
            }
            Err(_) => ("failed", Default::default()),
        };
        let record = crate::backend::UpdateRecord {
            version: 0,
            kind: self.kind.to_owned(),
            start_time: self.start,
            end_time: chrono::Utc::now().timestamp(),
            config: Default::default(),
            message: self.message,
            result: result.to_owned(),
            resource_changes,
            environment: [
                ("exec.kind", "cli".to_owned()),
                ("cairn.version", env!("CARGO_PKG_VERSION").to_owned()),
                ("user", crate::backend::os_user()),
                (
                    "host",
                    gethostname::gethostname().to_string_lossy().into_owned(),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        match backend.record_update(lock, project, stack, record) {
            Ok(_) => Ok(()),
            // The deployment's own error matters more; this one is only logged then.
            Err(e) if outcome.is_err() => {
                tracing::warn!("could not record the update in the stack's history: {e:#}");
                Ok(())
            }
            Err(e) => {
                Err(e
                    .context("the update finished, but recording it in the stack's history failed"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::p::{name}")).unwrap()
    }

    #[test]
    fn targets_not_in_the_stack_are_named_with_their_flag() {
        let known: HashSet<Urn> = [urn("a:b:C::x"), urn("a:b:C$d:e:F::y")].into();
        let (x, y, gone, nested) = (
            urn("a:b:C::x"),
            urn("a:b:C$d:e:F::y"),
            urn("a:b:C::gone"),
            urn("a:b:C$d:e:F::gone"),
        );
        let targets = |urns: &[&Urn]| -> UrnTargets {
            urns.iter()
                .map(|u| UrnPattern::Literal((*u).clone()))
                .collect()
        };
        let (x, y, gone, both) = (
            targets(&[&x]),
            targets(&[&y]),
            targets(&[&gone]),
            targets(&[&x, &nested]),
        );
        let none = UrnTargets::default();
        // Globs are never checked, matching or not.
        let globs = UrnTargets::parse(&["**::x", "**nothing**"]).unwrap();
        let gone_urn = urn("a:b:C::gone");
        /// The flags given, and the error (if any).
        type Case<'a> = (Vec<(&'a str, &'a UrnTargets)>, Option<String>);
        let cases: [Case<'_>; 5] = [
            (vec![("--target", &x), ("--exclude", &y)], None),
            (vec![("--target", &none)], None),
            (vec![("--target", &globs), ("--replace", &globs)], None),
            (
                vec![("--replace", &gone)],
                Some(format!(
                    "no resource named '{gone_urn}' found in stack \"dev\" (--replace)"
                )),
            ),
            (
                vec![("--target", &gone), ("--exclude", &both)],
                Some(format!(
                    "2 resources named by flags were not found in stack \"dev\":\n  --target \
                     '{gone_urn}'\n  --exclude '{nested}'"
                )),
            ),
        ];
        for (flags, expected) in cases {
            let got = check_targets("dev", &known, &flags)
                .err()
                .map(|e| e.to_string());
            assert_eq!(got, expected, "{flags:?}");
        }
    }

    #[test]
    fn a_urn_whose_dollar_the_shell_ate_gets_a_hint() {
        let eaten = Urn::parse("urn:pulumi:dev::p::my:mod:Comp:s3:Bucket::b").unwrap();
        let known: HashSet<Urn> = HashSet::new();
        let err =
            check_targets("dev", &known, &[("--target", &vec![eaten.clone()].into())]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no resource named '{eaten}' found in stack \"dev\" (--target) (did you forget \
                 to quote a `$` in it? your shell may have expanded it)"
            )
        );
        let nested = Urn::parse("urn:pulumi:dev::p::my:mod:Comp$aws:s3:Bucket::b").unwrap();
        let err = check_targets("dev", &known, &[("--target", &vec![nested.clone()].into())])
            .unwrap_err();
        assert!(!err.to_string().contains("shell"), "{err}");
        let plain = parse_urns(&["urn:pulumi:dev::p::nope".into()], "--target").unwrap_err();
        assert_eq!(plain.to_string(), "--target \"urn:pulumi:dev::p::nope\"");
        // A value with `*` is a glob, whatever it looks like.
        let glob = parse_urns(&["**::nope*".into()], "--target").unwrap();
        assert_eq!(glob.literals().count(), 0);
        assert!(glob.contains(&urn("a:b:C::nope-1")));
    }
}
