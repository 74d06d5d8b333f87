//! `cairn new TEMPLATE [DIR]`: a new project from one of the embedded templates, as
//! `pulumi new` makes one: the files written into an empty directory (or with `--force`), the
//! project named and described, a stack created and selected, its configuration set (the
//! template's defaults and `-c KEY=VALUE`), the dependencies installed (a Python virtualenv,
//! `npm install`; Rust projects get the guest SDK written under the Cairn home), and the next
//! steps printed.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_backend::names;
use clap::Args;

use crate::stack::Stack;
use crate::templates::{self, Kind, Template};
use crate::terminal::{errln, field, outln, quoted};
use crate::workspace::{Context, open_backend};

/// Pulumi's limit on a project description (it becomes a stack tag).
const MAX_DESCRIPTION: usize = 256;

/// The stack `cairn new` creates unless told otherwise (Pulumi's default).
const DEFAULT_STACK: &str = "dev";

/// Entries that do not make a directory "not empty" (Pulumi's list).
const INVISIBLE: &[&str] = &[".git", ".hg", ".bzr"];

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The template: rust, rust-provider, python or typescript (none, or --list: list them).
    template: Option<String>,
    /// The directory to create the project in (created if missing; default: the current one).
    #[arg(value_name = "DIR", conflicts_with = "dir")]
    directory: Option<PathBuf>,
    /// The directory to create the project in (as the DIR argument; Pulumi's flag).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The project name (default: the directory's name, made valid).
    #[arg(short = 'n', long)]
    name: Option<String>,
    /// The project description (default: the template's).
    #[arg(short = 'd', long)]
    description: Option<String>,
    /// Write the files even if the directory is not empty (overwriting files the template has).
    #[arg(short = 'f', long)]
    force: bool,
    /// Take the defaults without asking (needed when not interactive).
    #[arg(short = 'y', long)]
    yes: bool,
    /// Only write the files: no stack, configuration or dependencies.
    #[arg(short = 'g', long)]
    generate_only: bool,
    /// A configuration value for the new stack (repeatable).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// The `--config` keys are property paths (`data.ports[0]`).
    #[arg(long)]
    config_path: bool,
    /// List the templates and exit.
    #[arg(short = 'l', long, visible_alias = "list-templates")]
    list: bool,
}

pub fn run(context: &Context, args: NewArgs) -> Result<()> {
    let Some(template_name) = args.template.as_deref().filter(|_| !args.list) else {
        list();
        return Ok(());
    };
    let template = templates::find(template_name).ok_or_else(|| {
        anyhow!(
            "unknown template {}: the templates are {} (`cairn new --list` describes them)",
            quoted(template_name),
            templates::names()
        )
    })?;
    if !context.interactive && !args.yes {
        bail!(
            "--yes must be given to `cairn new` when it runs non-interactively (it then takes the defaults)"
        );
    }
    if let Some(name) = &args.name {
        check_name(template, name, "given to --name")?;
    }
    if let Some(description) = &args.description {
        check_description(description)?;
    }
    if args.config_path && args.config.is_empty() {
        bail!("--config-path needs --config KEY=VALUE");
    }
    let config = crate::commands::config::key_values("--config", &args.config, false)?;
    let stack_name = context
        .stack
        .clone()
        .unwrap_or_else(|| DEFAULT_STACK.to_owned());
    if !args.generate_only {
        names::check_stack_name(&stack_name, "given to --stack")?;
    }

    // The directory: created if missing (once the name it gives is known to be usable), and
    // empty unless --force.
    let dir = match args.directory.as_ref().or(args.dir.as_ref()) {
        Some(dir) => context.cwd.join(dir),
        None => context.cwd.clone(),
    };
    let default_name = templates::project_name_from_dir(&dir);
    if args.name.is_none() && args.yes {
        check_name(
            template,
            &default_name,
            "(made from the directory's name; pass --name)",
        )?;
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the directory {}", dir.display()))?;
    if !args.force {
        check_empty(&dir)?;
    }

    // Name and description: the flags, else asked for (with --yes, the defaults).
    let name = match args.name.clone() {
        Some(name) => name,
        None if args.yes => default_name,
        None => ask("Project name", &default_name, |answer| {
            check_name(template, answer, "given")
        })?,
    };
    let description = match args.description.clone() {
        Some(description) => description,
        None if args.yes => template.description.to_owned(),
        None => ask(
            "Project description",
            template.description,
            check_description,
        )?,
    };
    let backend = if args.generate_only {
        None
    } else {
        let backend = open_backend(&context.backend_url(None)?, &dir)?;
        if !backend.list_stacks(&name)?.is_empty() {
            bail!(
                "a project named {name:?} already has stacks in {}: choose another name with --name, or remove them (`cairn stack rm`)",
                backend.url()
            );
        }
        Some(backend)
    };

    // The files.
    let sdk_path = match template.kind {
        Kind::RustProgram | Kind::RustProvider => Some(
            crate::guest_sdk::materialise(&context.home)?
                .display()
                .to_string(),
        ),
        Kind::Python | Kind::TypeScript | Kind::GuestProgram | Kind::GuestProvider => None,
    };
    let values = templates::Values {
        project: name.clone(),
        description,
        sdk_path,
    };
    for (path, bytes) in template.files() {
        let text = std::str::from_utf8(bytes)
            .with_context(|| format!("template {}: {path} is not UTF-8", template.name))?;
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&target, values.render(text))
            .with_context(|| format!("writing {}", target.display()))?;
    }
    outln!("Created project {}", quoted(&name));
    outln!("");

    // The stack and its configuration.
    if let Some(backend) = backend {
        drop(backend);
        let project_context = Context {
            cwd: dir.clone(),
            ..context.clone()
        };
        let workspace = project_context.project()?;
        let stack_name = if args.yes || context.stack.is_some() {
            stack_name
        } else {
            ask("Stack name", DEFAULT_STACK, |answer| {
                Ok(names::check_stack_name(answer, "given")?)
            })?
        };
        crate::commands::stack::init(&workspace, &stack_name)?;
        let stack = Stack {
            workspace: &workspace,
            name: stack_name,
        };
        let mut defaults = Vec::new();
        for value in template.config {
            let given = config.iter().any(|(key, _, _)| {
                key == value.key || *key == format!("{}:{}", workspace.name(), value.key)
            });
            if given {
                continue;
            }
            let chosen = if args.yes {
                value.default.to_owned()
            } else {
                ask(
                    &format!("{} ({})", value.key, value.description),
                    value.default,
                    |_| Ok(()),
                )?
            };
            defaults.push((value.key.to_owned(), chosen, false));
        }
        crate::commands::config::save_settings(&stack, defaults, false)?;
        crate::commands::config::save_settings(&stack, config, args.config_path)?;
        outln!("");
        install(template, &dir)?;
    }

    outln!("Your new project is ready to go! ✨");
    outln!("");
    next_steps(context, template, &dir, args.generate_only);
    Ok(())
}

/// `cairn new --list`.
fn list() {
    outln!("Available templates:");
    for template in templates::TEMPLATES {
        outln!("  {:<16} {}", template.name, template.description);
    }
    outln!("");
    outln!("Create a project with `cairn new TEMPLATE [DIR]`.");
}

/// A project name the template can use: valid for a project, and for a provider's package.
fn check_name(template: &Template, name: &str, source: &str) -> Result<()> {
    names::check_project_name(name, source)?;
    if template.kind.is_provider() && !templates::is_package_name(name) {
        bail!(
            "invalid project name {} {source} for template {}: the name is the provider's package name, which starts with a letter and has only letters, digits, '-' and '_'",
            quoted(name),
            template.name
        );
    }
    Ok(())
}

fn check_description(description: &str) -> Result<()> {
    if description.len() > MAX_DESCRIPTION {
        bail!(
            "the project description is {} bytes; at most {MAX_DESCRIPTION} are allowed",
            description.len()
        );
    }
    Ok(())
}

/// Refuses a directory with anything in it but version-control metadata.
fn check_empty(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading the directory {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading the directory {}", dir.display()))?;
        if !INVISIBLE.iter().any(|n| entry.file_name() == *n) {
            bail!(
                "{} is not empty; use --force to write the project there anyway (overwriting files the template has), or give another directory",
                dir.display()
            );
        }
    }
    Ok(())
}

/// Asks for a value on the terminal (an empty answer takes `default`) until `check` accepts it.
fn ask(label: &str, default: &str, check: impl Fn(&str) -> Result<()>) -> Result<String> {
    loop {
        crate::terminal::prompt(&format!("{label} ({}): ", field(default)));
        let mut answer = String::new();
        let read = std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .context("reading the answer")?;
        if read == 0 {
            bail!(
                "no answer for {label:?} (standard input is closed); pass it as a flag, or --yes for the defaults"
            );
        }
        let answer = answer.trim();
        let answer = if answer.is_empty() { default } else { answer };
        match check(answer) {
            Ok(()) => return Ok(answer.to_owned()),
            Err(e) => errln!("{e:#}"),
        }
    }
}

/// Installs what the project needs, as `pulumi new` does: a virtualenv with the requirements,
/// or `npm install`. Rust projects need nothing more (their SDK is already written).
fn install(template: &Template, dir: &Path) -> Result<()> {
    let steps: Vec<(&str, Vec<String>, String)> = match template.kind {
        Kind::RustProgram | Kind::RustProvider | Kind::GuestProgram | Kind::GuestProvider => {
            return Ok(());
        }
        Kind::Python => vec![
            (
                "python3",
                vec!["-m".into(), "venv".into(), "venv".into()],
                "python3 -m venv venv".into(),
            ),
            (
                "venv/bin/python",
                vec![
                    "-m".into(),
                    "pip".into(),
                    "install".into(),
                    "-r".into(),
                    "requirements.txt".into(),
                ],
                "venv/bin/pip install -r requirements.txt".into(),
            ),
        ],
        Kind::TypeScript => vec![(
            "npm",
            vec!["install".into(), "--no-audit".into(), "--no-fund".into()],
            "npm install".into(),
        )],
    };
    errln!("Installing dependencies...");
    for (program, arguments, shown) in steps {
        let program_path = if program.contains('/') {
            dir.join(program)
        } else {
            PathBuf::from(program)
        };
        // The tool's output goes to stderr: stdout stays cairn's.
        let status = Command::new(&program_path)
            .args(&arguments)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(stderr_stdio())
            .status();
        let failed = |why: String| {
            anyhow!(
                "installing the project's dependencies failed: `{shown}` {why}; the project is written: fix the problem and run `{shown}` in {}",
                dir.display()
            )
        };
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => return Err(failed(format!("exited with {status}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(failed(format!(
                    "could not start: {program} is not installed"
                )));
            }
            Err(e) => return Err(failed(format!("could not start: {e}"))),
        }
    }
    errln!("Finished installing dependencies");
    errln!("");
    Ok(())
}

/// Stdio that writes to this process's stderr.
fn stderr_stdio() -> Stdio {
    use std::os::fd::AsFd as _;
    match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::inherit(),
    }
}

/// What to run next, as `pulumi new` prints it.
fn next_steps(context: &Context, template: &Template, dir: &Path, generate_only: bool) {
    let mut commands = Vec::new();
    if dir != context.cwd {
        let shown = dir.strip_prefix(&context.cwd).unwrap_or(dir);
        let shown = shown.display().to_string();
        if shown.contains(char::is_whitespace) {
            commands.push(format!("cd \"{shown}\""));
        } else {
            commands.push(format!("cd {shown}"));
        }
    }
    if generate_only {
        match template.kind {
            Kind::Python => commands
                .push("python3 -m venv venv && venv/bin/pip install -r requirements.txt".into()),
            Kind::TypeScript => commands.push("npm install".into()),
            Kind::RustProgram | Kind::RustProvider | Kind::GuestProgram | Kind::GuestProvider => {}
        }
        commands.push("cairn stack init dev".into());
    }
    if commands.is_empty() {
        outln!("To perform an initial deployment, run `cairn up`");
    } else {
        outln!("To perform an initial deployment, run the following commands:");
        outln!("");
        for (i, command) in commands.iter().enumerate() {
            outln!("   {}. {command}", i + 1);
        }
        outln!("");
        outln!("Then, run `cairn up`");
    }
    if matches!(template.kind, Kind::RustProgram | Kind::RustProvider) {
        outln!("");
        outln!("Building needs Rust's wasm32-wasip2 target (`rustup target add wasm32-wasip2`).");
    }
}
