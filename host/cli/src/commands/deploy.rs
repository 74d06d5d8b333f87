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
use cairn_backend::StepLog;
use cairn_engine::config::{ConfigKey, ConfigValue, StackConfigFile};
use cairn_engine::deploy::journal::{Persister, SnapshotManager};
use cairn_engine::deploy::{
    DeployError, Deployment, DeploymentOptions, Outcome, PendingCreate, UrnPattern, UrnTargets,
    default_parallelism,
};
use cairn_engine::state::{JsonMap, Manifest, Snapshot, decode_deployment};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyValue;
use clap::Args;
use indexmap::IndexMap;

use crate::display::engine_events::EventSettings;
use crate::display::{Display, DisplayOptions};
use crate::interrupt::{Interrupted, Signals};
use crate::stack::{LazyCrypter, Stack};
use crate::terminal::outln;
use crate::workspace::Context;

/// `--target`, `--exclude`, `--target-dependents`: what `up`, `preview`, `refresh` and
/// `destroy` act on.
#[derive(Debug, Default, Args)]
pub struct TargetArgs {
    /// Only act on this resource: a URN, or a pattern with `*` and `**` (repeatable).
    #[arg(short, long = "target", value_name = "URN")]
    targets: Vec<String>,
    /// Leave this resource alone (repeatable).
    #[arg(long = "exclude", value_name = "URN")]
    excludes: Vec<String>,
    /// Also act on resources that depend on the targets.
    #[arg(long)]
    target_dependents: bool,
}

/// How every deploying command shows what it does.
#[derive(Debug, Default, Args)]
pub struct OutputArgs {
    /// Provider operations to run at once (default: 4 × cores).
    #[arg(short, long, value_name = "N")]
    parallel: Option<usize>,
    /// Print Pulumi's machine-readable output instead of the progress view: a preview's
    /// digest (one JSON document), or one engine event per line.
    #[arg(short = 'j', long)]
    json: bool,
    /// Also write every engine event to FILE, one JSON object per line (Pulumi's event log).
    #[arg(long, value_name = "FILE")]
    event_log: Option<std::path::PathBuf>,
    /// Show secret values in diffs and outputs.
    #[arg(long)]
    show_secrets: bool,
    /// Also list resources that do not change.
    #[arg(long)]
    show_sames: bool,
    /// Show the steps of replacements (`++` create-replacement, `--` delete-replaced) as
    /// rows of their own.
    #[arg(long)]
    show_replacement_steps: bool,
    /// Show each resource's property diff.
    #[arg(long)]
    diff: bool,
    /// Do not show the stack's outputs.
    #[arg(long)]
    suppress_outputs: bool,
    /// Do not show progress while the deployment runs: only the diagnostics, outputs and
    /// summary at the end.
    #[arg(long)]
    suppress_progress: bool,
    /// Fetch no provider from a registry: use what is installed, and what cairn.lock pins
    /// from mirror directories only.
    #[arg(long)]
    offline: bool,
}

/// What the commands that change the stack (`up`, `refresh`, `destroy`) share.
#[derive(Debug, Default, Args)]
pub struct ApplyArgs {
    /// Do not ask for confirmation: preview, then apply.
    #[arg(short, long)]
    yes: bool,
    /// Do not preview first (a policy pack's mandatory violation then stops the update at its
    /// resource, after what was done before it).
    #[arg(long)]
    skip_preview: bool,
    /// A message recorded with the update in the stack's history (`cairn stack history`).
    #[arg(short = 'm', long, value_name = "TEXT")]
    message: Option<String>,
    /// A failed step does not stop the others: what does not depend on it goes on, what does
    /// is skipped, and the command still fails at the end (also set by
    /// PULUMI_CONTINUE_ON_ERROR).
    #[arg(
        long,
        env = "PULUMI_CONTINUE_ON_ERROR",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    continue_on_error: bool,
}

/// What the commands that run the program (`up`, `preview`) share.
#[derive(Debug, Default, Args)]
pub struct ProgramArgs {
    /// Replace this resource even if it has no changes (repeatable).
    #[arg(long = "replace", value_name = "URN")]
    replaces: Vec<String>,
    /// Replace this resource and change nothing else (repeatable).
    #[arg(long = "target-replace", value_name = "URN")]
    target_replaces: Vec<String>,
    /// Run this policy pack (a directory with a PulumiPolicy.yaml, or a policy component
    /// `.wasm`) on every resource and on the stack (repeatable).
    #[arg(long = "policy-pack", value_name = "DIR")]
    policy_packs: Vec<std::path::PathBuf>,
    /// The JSON configuration of the `--policy-pack` in the same position (repeatable).
    #[arg(long = "policy-pack-config", value_name = "FILE")]
    policy_pack_configs: Vec<std::path::PathBuf>,
    /// Set this configuration value before the deployment, saved in the stack's settings
    /// (repeatable).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// The `--config` keys are property paths (`data.ports[0]`).
    #[arg(long)]
    config_path: bool,
}

/// `cairn up`.
#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    apply: ApplyArgs,
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    targets: TargetArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Refresh the state from the providers first, then update.
    #[arg(short, long)]
    refresh: bool,
    /// Fail if the update changes anything (it still applies what it finds).
    #[arg(long)]
    expect_no_changes: bool,
}

/// `cairn preview`.
#[derive(Debug, Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    targets: TargetArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Fail if the update would change anything.
    #[arg(long)]
    expect_no_changes: bool,
}

/// `cairn refresh`.
#[derive(Debug, Args)]
pub struct RefreshArgs {
    #[command(flatten)]
    apply: ApplyArgs,
    #[command(flatten)]
    targets: TargetArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Fail if the refresh finds anything changed (it still records what it finds).
    #[arg(long)]
    expect_no_changes: bool,
    /// Forget the interrupted creates not imported with --import-pending-creates (their
    /// resources were not created).
    #[arg(long)]
    clear_pending_creates: bool,
    /// Adopt the resource an interrupted create made, by its provider ID (repeatable).
    #[arg(long = "import-pending-creates", num_args = 2, value_names = ["URN", "ID"])]
    import_pending_creates: Vec<String>,
    /// Run the program first, as Pulumi's `--run-program`: the providers take the program's
    /// configuration (and the program's hooks are there), while the program creates and
    /// updates nothing (also set by PULUMI_RUN_PROGRAM).
    #[arg(
        long,
        env = "PULUMI_RUN_PROGRAM",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    run_program: bool,
}

/// `cairn destroy`.
#[derive(Debug, Args)]
pub struct DestroyArgs {
    #[command(flatten)]
    apply: ApplyArgs,
    #[command(flatten)]
    targets: TargetArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Leave the protected resources and what they depend on; destroy the rest.
    #[arg(long)]
    exclude_protected: bool,
    /// Run the program first, as Pulumi's `--run-program`: the providers take the program's
    /// configuration (and the program's hooks are there), while the program creates and
    /// updates nothing (also set by PULUMI_RUN_PROGRAM).
    #[arg(
        long,
        env = "PULUMI_RUN_PROGRAM",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    run_program: bool,
}

/// Every deploying command's options, whichever command took them (a command's own flags are
/// its clap struct's: `preview --help` offers no `--yes`).
#[derive(Debug, Default)]
pub struct DeployArgs {
    yes: bool,
    targets: Vec<String>,
    excludes: Vec<String>,
    target_dependents: bool,
    parallel: Option<usize>,
    json: bool,
    show_secrets: bool,
    show_sames: bool,
    show_replacement_steps: bool,
    diff: bool,
    suppress_outputs: bool,
    suppress_progress: bool,
    event_log: Option<std::path::PathBuf>,
    offline: bool,
    refresh: bool,
    replaces: Vec<String>,
    target_replaces: Vec<String>,
    clear_pending_creates: bool,
    import_pending_creates: Vec<String>,
    policy_packs: Vec<std::path::PathBuf>,
    policy_pack_configs: Vec<std::path::PathBuf>,
    skip_preview: bool,
    expect_no_changes: bool,
    config: Vec<String>,
    config_path: bool,
    exclude_protected: bool,
    message: Option<String>,
    continue_on_error: bool,
    /// `refresh --run-program`, `destroy --run-program`.
    run_program: bool,
}

impl DeployArgs {
    /// The options the groups every command has give.
    fn from_groups(targets: TargetArgs, output: OutputArgs, apply: Option<ApplyArgs>) -> Self {
        let apply = apply.unwrap_or_default();
        DeployArgs {
            yes: apply.yes,
            skip_preview: apply.skip_preview,
            message: apply.message,
            continue_on_error: apply.continue_on_error,
            targets: targets.targets,
            excludes: targets.excludes,
            target_dependents: targets.target_dependents,
            parallel: output.parallel,
            json: output.json,
            show_secrets: output.show_secrets,
            show_sames: output.show_sames,
            show_replacement_steps: output.show_replacement_steps,
            diff: output.diff,
            suppress_outputs: output.suppress_outputs,
            suppress_progress: output.suppress_progress,
            event_log: output.event_log,
            offline: output.offline,
            ..DeployArgs::default()
        }
    }

    fn with_program(self, program: ProgramArgs) -> Self {
        DeployArgs {
            replaces: program.replaces,
            target_replaces: program.target_replaces,
            policy_packs: program.policy_packs,
            policy_pack_configs: program.policy_pack_configs,
            config: program.config,
            config_path: program.config_path,
            ..self
        }
    }
}

impl From<UpArgs> for DeployArgs {
    fn from(args: UpArgs) -> Self {
        DeployArgs {
            refresh: args.refresh,
            expect_no_changes: args.expect_no_changes,
            ..DeployArgs::from_groups(args.targets, args.output, Some(args.apply))
                .with_program(args.program)
        }
    }
}

impl From<PreviewArgs> for DeployArgs {
    fn from(args: PreviewArgs) -> Self {
        DeployArgs {
            expect_no_changes: args.expect_no_changes,
            ..DeployArgs::from_groups(args.targets, args.output, None).with_program(args.program)
        }
    }
}

impl From<RefreshArgs> for DeployArgs {
    fn from(args: RefreshArgs) -> Self {
        DeployArgs {
            expect_no_changes: args.expect_no_changes,
            clear_pending_creates: args.clear_pending_creates,
            import_pending_creates: args.import_pending_creates,
            run_program: args.run_program,
            ..DeployArgs::from_groups(args.targets, args.output, Some(args.apply))
        }
    }
}

impl From<DestroyArgs> for DeployArgs {
    fn from(args: DestroyArgs) -> Self {
        DeployArgs {
            exclude_protected: args.exclude_protected,
            run_program: args.run_program,
            ..DeployArgs::from_groups(args.targets, args.output, Some(args.apply))
        }
    }
}

impl DeployArgs {
    /// The deployment options `cairn import` shares with `up`.
    pub fn for_import(
        yes: bool,
        skip_preview: bool,
        parallel: Option<usize>,
        json: bool,
        show_secrets: bool,
        event_log: Option<std::path::PathBuf>,
    ) -> DeployArgs {
        DeployArgs {
            yes,
            skip_preview,
            parallel,
            json,
            show_secrets,
            event_log,
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
    let signals = crate::interrupt::install()?;
    // Created first: a path that cannot be written fails before anything else happens.
    let event_log = args
        .event_log
        .as_deref()
        .map(crate::display::engine_events::EventLog::create)
        .transpose()?;
    let workspace = context.project()?;
    let stack = Stack::current(&workspace)?;
    let project = stack.project().to_owned();
    let lock =
        workspace
            .backend
            .lock(&project, &stack.name, &format!("cairn {}", kind.command()))?;
    if !args.config.is_empty() {
        let settings = crate::commands::config::key_values("--config", &args.config, false)?;
        crate::commands::config::save_settings(&stack, settings, args.config_path)?;
    } else if args.config_path {
        bail!("--config-path needs --config KEY=VALUE");
    }
    let config_file = stack.load_config()?;
    let crypter = Arc::new(stack.secrets(&config_file)?);
    let snapshot = workspace
        .backend
        .recover_snapshot(&lock, &project, &stack.name, crypter.as_ref())?
        .ok_or_else(|| {
            anyhow!(
                "stack {:?} has no state; create it with `cairn stack init {}`",
                stack.name,
                stack.name
            )
        })?;

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
    let program = if kind.runs_program() || args.run_program {
        Some(crate::program::ProgramSource::prepare(
            &wasm,
            &context.home,
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
            args.offline,
        )?;
        let program = match (&program, &import) {
            (Some(source), _) => Some(source.load(&wasm, events, parallel)?),
            (None, Some(import)) => Some(import.clone()),
            (None, None) => None,
        };
        Ok(Setup { loader, program })
    };

    let event_settings = EventSettings {
        config: config_file
            .list(&workspace.project, None, false)?
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.value))
            .collect(),
        secrets: resolved
            .values()
            .filter(|v| v.secret)
            .map(|v| v.value.clone())
            .collect(),
        log: event_log,
    };
    let display = |keep_details: bool, preview: bool| {
        Arc::new(Display::new(DisplayOptions {
            json: args.json,
            interactive: context.interactive,
            show_secrets: args.show_secrets,
            show_sames: args.show_sames,
            suppress_outputs: args.suppress_outputs,
            show_replacement_steps: args.show_replacement_steps,
            show_diff: args.diff,
            keep_details,
            suppress_progress: args.suppress_progress,
            colors: crate::terminal::colors(),
            stack: Some(stack.name.clone()),
            writer: Box::new(std::io::stdout()),
            preview,
            events: event_settings.clone(),
        }))
    };

    if !kind.previews_only() && !args.yes && !context.interactive {
        bail!(
            "cairn {} needs confirmation: pass --yes (non-interactive)",
            kind.command()
        );
    }
    // As Pulumi's, the commands that change the stack preview first, --yes included (it only
    // skips the question), unless --skip-preview: a failing preview or a policy pack's
    // mandatory violation then stops them before anything changes.
    let previews = kind.previews_only() || !args.skip_preview;
    let mut details = String::new();
    if previews {
        let mut preview = options.clone();
        preview.preview = true;
        let preview_display = display(!args.yes && !kind.previews_only(), true);
        let outcome = runtime.block_on(deploy(
            kind,
            preview,
            snapshot.clone(),
            None,
            crypter.clone(),
            preview_display.clone(),
            &setup,
            &policies,
            signals,
        ));
        let outcome = outcome?;
        if kind.previews_only() {
            return expect_no_changes(&args, kind, &outcome).map(|()| None);
        }
        details = preview_display.details();
    }
    if !args.yes && !confirm(kind, &details)? {
        bail!("cancelled; nothing was changed");
    }

    let persister = workspace.backend.persister(&lock, &project, &stack.name)?;
    let history = UpdateHistory::start(kind, args.message.as_deref(), &config_file);
    // `up --refresh`: bring the state up to date with the cloud first, then update from it.
    let snapshot = if kind == Kind::Up && args.refresh {
        // Its refresh reads with the recorded providers, as Pulumi's `up --refresh` does.
        let without_program = |events: Arc<Display>| -> Result<Setup> {
            setup(events).map(|setup| Setup {
                program: None,
                ..setup
            })
        };
        runtime.block_on(deploy(
            Kind::Refresh,
            options.clone(),
            snapshot,
            Some(persister.clone()),
            crypter.clone(),
            display(false, false),
            &without_program,
            &Policies::none(&wasm),
            signals,
        ))?;
        let refreshed = workspace
            .backend
            .recover(&lock, &project, &stack.name)?
            .ok_or_else(|| anyhow!("stack {:?} lost its state during the refresh", stack.name))?;
        decode_deployment(refreshed, Some(crypter.as_ref()))
            .with_context(|| format!("reading the refreshed state of stack {:?}", stack.name))?
    } else {
        snapshot
    };
    let shown = display(false, false);
    shown.record_steps_in(history.steps.clone());
    let outcome = runtime.block_on(deploy(
        kind,
        options,
        snapshot,
        Some(persister),
        crypter,
        shown,
        &setup,
        &policies,
        signals,
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
    if !args.exclude_protected || kind != Kind::Destroy {
        return Ok(None);
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
    events: Arc<Display>,
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
            (Kind::Refresh, Some(program)) => deployment.refresh_with_program(program).await,
            (Kind::Refresh, None) => deployment.refresh().await,
            (Kind::Destroy, Some(program)) => deployment.destroy_with_program(program).await,
            (Kind::Destroy, None) => deployment.destroy().await,
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

/// Asks whether to go on, as Pulumi does: yes, no, or details (the preview's property diffs,
/// then the question again). No answer (end of input) is no.
fn confirm(kind: Kind, details: &str) -> Result<bool> {
    use crate::terminal::Style;
    loop {
        let question = format!("Do you want to perform this {}?", kind.verb());
        crate::terminal::prompt(&format!(
            "{} [yes/no/details] ",
            Style::PROMPT.apply(&question)
        ));
        let mut answer = String::new();
        if std::io::stdin().read_line(&mut answer)? == 0 {
            return Ok(false);
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(true),
            "d" | "details" => {
                if details.is_empty() {
                    outln!("No property changes to show.\n");
                } else {
                    outln!("{details}");
                }
            }
            _ => return Ok(false),
        }
    }
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
    /// The configuration it runs with, as Pulumi records it (secrets as ciphertext).
    config: JsonMap,
    /// Its steps, as the display sees them.
    steps: Arc<StepLog>,
}

impl UpdateHistory {
    fn start(kind: Kind, message: Option<&str>, config: &StackConfigFile) -> UpdateHistory {
        UpdateHistory {
            kind: kind.verb(),
            message: message.unwrap_or_default().to_owned(),
            start: chrono::Utc::now().timestamp(),
            config: recorded_config(config),
            steps: Arc::new(StepLog::new()),
        }
    }

    /// Records the update; a failure to record it is reported after the deployment's own.
    fn record(
        self,
        backend: &cairn_backend::Backend,
        lock: &cairn_backend::StackLock,
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
            // What a failed deployment did is recorded too, as Pulumi records it (a failed
            // first update created the stack: `+1`).
            Err(_) => ("failed", self.steps.resource_changes().unwrap_or_default()),
        };
        let (steps, steps_omitted) = self.steps.take();
        let record = cairn_backend::UpdateRecord {
            version: 0,
            kind: self.kind.to_owned(),
            start_time: self.start,
            end_time: chrono::Utc::now().timestamp(),
            config: self.config,
            steps,
            steps_omitted,
            message: self.message,
            result: result.to_owned(),
            resource_changes,
            environment: [
                ("exec.kind", "cli".to_owned()),
                ("cairn.version", env!("CARGO_PKG_VERSION").to_owned()),
                ("user", cairn_backend::os_user()),
                (
                    "host",
                    gethostname::gethostname().to_string_lossy().into_owned(),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        match backend
            .record_update(lock, project, stack, record)
            .map_err(anyhow::Error::from)
        {
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

/// The stack's configuration as an update's history records it (Pulumi's form): strings,
/// objects, and `{"secure": "<ciphertext>"}` for secrets, which stay encrypted.
fn recorded_config(config: &StackConfigFile) -> JsonMap {
    config
        .config
        .iter()
        .map(|(key, value)| {
            let value = match value {
                ConfigValue::Plain(text) => serde_json::Value::String(text.clone()),
                ConfigValue::Secure(ciphertext) => serde_json::json!({ "secure": ciphertext }),
                ConfigValue::Object(object) => object.clone(),
            };
            (key.to_string(), value)
        })
        .collect()
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
