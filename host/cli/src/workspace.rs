//! The user's workspace: the project around the working directory, the Cairn home, the backend
//! in use and the selected stack.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_backend::file::write_atomically;
use cairn_backend::{Backend, ORGANIZATION, Warning, names};
use cairn_engine::project::{PROJECT_FILE_NAMES, Project};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::terminal::{errln, quoted};

/// Options every command shares.
#[derive(Debug, Clone)]
pub struct Context {
    pub cwd: PathBuf,
    /// Cairn's home directory (`CAIRN_HOME`, default `~/.cairn`): plugins, stack selection, and
    /// the default backend.
    pub home: PathBuf,
    pub stack: Option<String>,
    pub backend_url: Option<String>,
    pub interactive: bool,
}

impl Context {
    pub fn new(
        cwd: Option<PathBuf>,
        stack: Option<String>,
        backend_url: Option<String>,
        non_interactive: bool,
    ) -> Result<Context> {
        let process_cwd = std::env::current_dir().context("reading the current directory")?;
        let cwd = match cwd {
            Some(dir) => {
                let dir = process_cwd.join(dir);
                if !dir.is_dir() {
                    bail!("--cwd {}: not a directory", dir.display());
                }
                dir
            }
            None => process_cwd,
        };
        // CAIRN_HOME, else Pulumi's PULUMI_HOME, else ~/.cairn.
        let home_variable = ["CAIRN_HOME", "PULUMI_HOME"]
            .into_iter()
            .find_map(|name| std::env::var_os(name).map(|value| (name, value)));
        let (home, from_env) = match home_variable {
            Some((name, home)) if !home.is_empty() => (cwd.join(home), Some(name)),
            Some((name, _)) => {
                bail!("{name} is set but empty: set it to a directory, or unset it")
            }
            None => (
                PathBuf::from(
                    std::env::var_os("HOME")
                        .ok_or_else(|| anyhow!("neither CAIRN_HOME nor HOME is set"))?,
                )
                .join(".cairn"),
                None,
            ),
        };
        check_home(&home, from_env)?;
        // --stack, else CAIRN_STACK, else Pulumi's PULUMI_STACK.
        let stack = stack.or_else(|| {
            ["CAIRN_STACK", "PULUMI_STACK"]
                .iter()
                .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        });
        let interactive = !non_interactive
            && std::env::var_os("CI").is_none()
            && std::io::stdin().is_terminal()
            && std::io::stdout().is_terminal();
        Ok(Context {
            cwd,
            home,
            stack,
            backend_url,
            interactive,
        })
    }

    /// The project whose `Pulumi.yaml` is in the working directory or the nearest parent.
    pub fn project(&self) -> Result<Workspace> {
        let mut dir = self.cwd.as_path();
        loop {
            for name in PROJECT_FILE_NAMES {
                let file = dir.join(name);
                if file.is_file() {
                    let text = std::fs::read_to_string(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    crate::yaml::check_nesting(&text, &file.display().to_string())?;
                    let project = Project::from_yaml(&text, &file.display().to_string())?;
                    // The project's name becomes backend paths.
                    names::check_project_name(&project.name, &format!("in {}", file.display()))?;
                    return self.workspace(dir.to_path_buf(), project);
                }
            }
            dir = dir.parent().ok_or_else(|| {
                anyhow!(
                    "no Pulumi.yaml project file found in {} or any parent directory",
                    self.cwd.display()
                )
            })?;
        }
    }

    fn workspace(&self, dir: PathBuf, project: Project) -> Result<Workspace> {
        let project_url = project.backend.as_ref().and_then(|b| b.url.clone());
        let backend = open_backend(&self.backend_url(project_url)?, &dir)?;
        Ok(Workspace {
            context: self.clone(),
            dir,
            project,
            backend,
        })
    }
}

/// Checks that the Cairn home is a directory this process can write, or can be created (it is
/// created on first use): plugins, compiled components, stack selections and the default
/// backend live there, so nearly every command writes to it. `from_env` says whether
/// `CAIRN_HOME` named it.
impl Context {
    /// The backend URL to use: `--backend`, then `CAIRN_BACKEND_URL` / `PULUMI_BACKEND_URL`,
    /// then the project's `backend.url`, then the backend logged in to (`cairn login`), then
    /// the Cairn home's own directory.
    pub fn backend_url(&self, project_url: Option<String>) -> Result<String> {
        if let Some(url) = self
            .backend_url
            .clone()
            .or_else(crate::credentials::env_backend_url)
            .or(project_url)
        {
            return Ok(url);
        }
        let credentials = crate::credentials::Credentials::load(&self.home)?;
        Ok(credentials
            .current
            .unwrap_or_else(|| format!("file://{}", self.home.display())))
    }

    /// The backend for commands that may run outside a project (`whoami`): the project's
    /// choice counts when there is a project.
    pub fn backend(&self) -> Result<Backend> {
        match self.project() {
            Ok(workspace) => Ok(workspace.backend),
            Err(_) => open_backend(&self.backend_url(None)?, &self.cwd),
        }
    }
}

/// Opens the backend a URL names (relative directories relative to `cwd`), its warnings
/// printed on stderr as they are found: every command opens its backend here.
pub fn open_backend(url: &str, cwd: &Path) -> Result<Backend> {
    Ok(Backend::from_url(url, cwd)?.with_warnings(print_warning))
}

/// The stacks already warned about in this process.
static WARNED: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

/// Tells the user (on stderr, once per stack and process) what the backend warns about: that
/// a deployment was interrupted.
fn print_warning(warning: &Warning) {
    let (project, stack) = warning.stack();
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if warned
        .get_or_insert_with(HashSet::new)
        .insert((project.to_owned(), stack.to_owned()))
    {
        errln!("{warning}");
    }
}

fn check_home(home: &Path, from_env: Option<&str>) -> Result<()> {
    let problem = |what: &str| {
        if let Some(variable) = from_env {
            format!("{variable} names {}, which {what}", home.display())
        } else {
            format!(
                "the Cairn home {} {what} (set CAIRN_HOME to use another directory)",
                home.display()
            )
        }
    };
    match std::fs::metadata(home) {
        Ok(meta) if !meta.is_dir() => bail!(problem("is not a directory")),
        Ok(_) => {}
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            // Not created here (a command that fails early must leave no trace): the nearest
            // existing ancestor must be a directory.
            let existing = home.ancestors().skip(1).find(|a| a.exists());
            return match existing {
                Some(a) if !a.is_dir() => bail!(problem(&format!(
                    "cannot be created: {} is not a directory",
                    a.display()
                ))),
                _ => Ok(()),
            };
        }
        Err(e) => return Err(e).with_context(|| problem("cannot be read")),
    }
    // Permission bits do not tell (root, read-only mounts, ACLs): create and remove a file.
    let probe = home.join(format!(".cairn-write-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .and_then(|_| std::fs::remove_file(&probe))
        .with_context(|| problem("is not writable"))
}

/// A project, its backend, and the user's stack selection for it.
#[derive(Debug)]
pub struct Workspace {
    pub context: Context,
    /// The directory holding `Pulumi.yaml`.
    pub dir: PathBuf,
    pub project: Project,
    pub backend: Backend,
}

/// The per-project file remembering which stack is selected.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Selection {
    stack: Option<String>,
}

impl Workspace {
    pub fn name(&self) -> &str {
        &self.project.name
    }

    /// Validates a stack name given by the user: `dev` or `organization/<project>/dev`;
    /// `source` says where it was given (`--stack`, `` `cairn stack init` ``) for the error.
    pub fn parse_stack_name(&self, name: &str, source: &str) -> Result<String> {
        let parts: Vec<&str> = name.split('/').collect();
        let short = match parts.as_slice() {
            [stack] => *stack,
            [org, project, stack] if *org == ORGANIZATION && *project == self.name() => *stack,
            [org, project, _] if *org == ORGANIZATION && names::is_project_name(project) => {
                bail!(
                    "stack {} {source} belongs to project {project:?}, but this is project {:?}",
                    quoted(name),
                    self.name()
                )
            }
            _ => bail!(
                "invalid stack name {} {source}: use a name like \"dev\" or \"{ORGANIZATION}/{}/dev\"; {}",
                quoted(name),
                self.name(),
                names::STACK_NAME_RULE
            ),
        };
        names::check_stack_name(short, source)?;
        Ok(short.to_owned())
    }

    fn selection_path(&self) -> PathBuf {
        // Keyed by the project's directory so two checkouts keep separate selections.
        let digest = Sha256::digest(self.dir.to_string_lossy().as_bytes());
        self.context.home.join("workspaces").join(format!(
            "{}-{}.json",
            self.name(),
            &hex::encode(digest)[..16]
        ))
    }

    /// The stack commands act on: `--stack`, else the selected one.
    pub fn current_stack(&self) -> Result<String> {
        if let Some(name) = &self.context.stack {
            return self.parse_stack_name(name, "given to --stack");
        }
        self.selected_stack()?.ok_or_else(|| {
            anyhow!(
                "no stack selected for project {:?}: run `cairn stack init <name>`, `cairn stack select <name>`, or pass --stack",
                self.name()
            )
        })
    }

    /// The stack the user selected, if any (and if it still exists).
    pub fn selected_stack(&self) -> Result<Option<String>> {
        let path = self.selection_path();
        let selection: Selection = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_default(),
            Err(_) => return Ok(None),
        };
        match selection.stack {
            Some(stack) if self.backend.stack_exists(self.name(), &stack)? => Ok(Some(stack)),
            _ => Ok(None),
        }
    }

    pub fn select_stack(&self, stack: Option<&str>) -> Result<()> {
        let selection = Selection {
            stack: stack.map(str::to_owned),
        };
        Ok(write_atomically(
            &self.selection_path(),
            &serde_json::to_vec(&selection)?,
        )?)
    }

    /// The stack's settings file, `Pulumi.<stack>.yaml` beside `Pulumi.yaml` (or in the
    /// project's `stackConfigDir`).
    /// The stack name is checked again here, where it becomes a path.
    pub fn stack_config_path(&self, stack: &str) -> Result<PathBuf> {
        names::check_stack_name(stack, "for its settings file")?;
        let dir = match &self.project.stack_config_dir {
            Some(sub) => self.dir.join(sub),
            None => self.dir.clone(),
        };
        Ok(dir.join(cairn_engine::config::stack_config_file_name(stack)))
    }

    /// Describes a path relative to the project for messages.
    pub fn display_path<'a>(&self, path: &'a Path) -> std::path::Display<'a> {
        path.strip_prefix(&self.dir).unwrap_or(path).display()
    }
}
