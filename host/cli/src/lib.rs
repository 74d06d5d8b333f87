//! The `cairn` command-line tool as a library: argument parsing, dispatch, and error reporting
//! ([`main`]); the binary (`main.rs`) only calls it. The state backends are a crate of their
//! own (`cairn_backend`); this one holds the commands and what they print.

mod builtins;
mod commands;
mod credentials;
pub mod display;
mod guest_sdk;
mod interrupt;
mod passphrase;
mod policy;
mod program;
mod providers;
mod registry;
mod shell;
mod stack;
mod templates;
mod terminal;
mod workspace;
mod yaml;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::workspace::Context;

/// Cairn deploys infrastructure described by programs, with sandboxed WebAssembly providers.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, propagate_version = true)]
struct Cli {
    /// Run as if started in DIR.
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// The stack to operate on (default: the selected stack).
    #[arg(short = 's', long, global = true, value_name = "NAME")]
    stack: Option<String>,

    /// The state backend URL: file:///path/to/state or postgres://user@host/database
    /// (default: CAIRN_BACKEND_URL, PULUMI_BACKEND_URL, the project's backend.url, the
    /// backend logged in to, file://$CAIRN_HOME).
    #[arg(long, global = true, value_name = "URL")]
    backend: Option<String>,

    /// Never prompt; fail instead when input is needed.
    #[arg(long, global = true)]
    non_interactive: bool,

    /// Colour the output: always, never, or auto (when writing to a terminal, unless
    /// NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    color: terminal::ColorChoice,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Manage stacks: create, list, select, remove, export and import their state.
    Stack(commands::stack::StackArgs),
    /// Manage a stack's configuration (plain and secret values).
    Config(commands::config::ConfigArgs),
    /// Edit a stack's recorded state directly: delete, protect or unprotect resources.
    State(commands::state::StateArgs),
    /// Install, list, inspect and remove provider components.
    Plugin(commands::plugin::PluginArgs),
    /// Work with package schemas: check one, print a provider's, generate a typed SDK.
    Package(commands::package::PackageArgs),
    /// Serve a wasm provider over the gRPC plugin protocol.
    Provider(commands::provider::ProviderArgs),
    /// Run the program and deploy what it declares (after a preview and a confirmation).
    Up(commands::deploy::UpArgs),
    /// Show what `up` would change, without changing anything.
    Preview(commands::deploy::PreviewArgs),
    /// Read every resource from its provider and record what changed out of band.
    Refresh(commands::deploy::RefreshArgs),
    /// Delete every resource of the stack (or the targets), dependents first.
    Destroy(commands::deploy::DestroyArgs),
    /// Import existing resources into the stack by ID (one, or a file of them) and print
    /// the code that declares them.
    Import(commands::import::ImportArgs),
    /// Choose the backend commands use: a PostgreSQL database or a directory.
    Login(commands::login::LoginArgs),
    /// Forget a backend logged in to (commands then use the Cairn home's directory).
    Logout(commands::login::LogoutArgs),
    /// Print the user the backend knows you as (with -v, the backend too).
    Whoami(commands::login::WhoamiArgs),
    /// Create a project from a template (rust, rust-provider, python, typescript) and its stack.
    New(commands::new::NewArgs),
    /// Show the CLI's versions, the host, installed providers, language tools, and the
    /// current project, stack and backend.
    About(commands::about::AboutArgs),
    /// Serve a read-only web console for the backend's stacks on 127.0.0.1: resources, the
    /// dependency graph, outputs, configuration, history and running updates.
    Console(commands::console::ConsoleArgs),
}

/// Runs the `cairn` command line and returns its exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    terminal::set_colors(cli.color.enabled());
    init_tracing();
    let result = run(cli);
    if let Err(err) = &result {
        terminal::err(&error_report(err));
    }
    // A signal that arrived while the command ended (its last write, say) stops it as it does
    // any other command: with the signal's status, not the command's.
    interrupt::await_stop();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A command ended by a signal exits as conventional (130 for SIGINT, 143 for SIGTERM).
        Err(err) => match err.downcast_ref::<interrupt::Interrupted>() {
            Some(interrupted) => ExitCode::from(interrupted.signal.exit_code()),
            None => ExitCode::FAILURE,
        },
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    // First, so that a signal ends any command that writes in order: after the write in
    // progress, locks released (see `interrupt`). The servers keep the default action.
    if !matches!(cli.command, Command::Provider(_) | Command::Console(_)) {
        interrupt::install()?;
    }
    let context = Context::new(cli.cwd, cli.stack, cli.backend, cli.non_interactive)?;
    match cli.command {
        Command::Stack(args) => commands::stack::run(&context, args),
        Command::Config(args) => commands::config::run(&context, args),
        Command::State(args) => commands::state::run(&context, args),
        Command::Plugin(args) => commands::plugin::run(&context, args),
        Command::Package(args) => commands::package::run(&context, args),
        Command::Provider(args) => commands::provider::run(&context, args),
        Command::Up(args) => {
            commands::deploy::run(&context, commands::deploy::Kind::Up, args.into())
        }
        Command::Preview(args) => {
            commands::deploy::run(&context, commands::deploy::Kind::Preview, args.into())
        }
        Command::Refresh(args) => {
            commands::deploy::run(&context, commands::deploy::Kind::Refresh, args.into())
        }
        Command::Destroy(args) => {
            commands::deploy::run(&context, commands::deploy::Kind::Destroy, args.into())
        }
        Command::Import(args) => commands::import::run(&context, args),
        Command::Login(args) => commands::login::login(&context, args),
        Command::Logout(args) => commands::login::logout(&context, args),
        Command::Whoami(args) => commands::login::whoami(&context, args),
        Command::New(args) => commands::new::run(&context, args),
        Command::About(args) => commands::about::run(&context, args),
        Command::Console(args) => commands::console::run(&context, args),
    }
}

/// Clap's help and version as clap prints them; its usage errors, which quote the arguments
/// given, without colours and with control characters made visible.
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => err.exit(),
        _ => {
            terminal::err(err.render().to_string().trim_end());
            ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
        }
    }
}

/// An error and its causes, one per line; lines inside a message (which may quote a guest,
/// a plugin or a file) are indented under it, so they cannot pass for another cause.
fn error_report(err: &anyhow::Error) -> String {
    let mut report = terminal::message("error: ", "    ", &err.to_string());
    for cause in err.chain().skip(1) {
        report.push('\n');
        report.push_str(&terminal::message(
            "  caused by: ",
            "    ",
            &cause.to_string(),
        ));
    }
    report
}

/// Logs go to stderr, filtered by `CAIRN_LOG` (e.g. `CAIRN_LOG=debug`); warnings by default.
/// One line per event, control characters made visible (log fields quote guests and files),
/// so no colours either.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(terminal::SafeStderr)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn error_reports_indent_lines_inside_messages() {
        let err = anyhow::anyhow!("provider said: boom\n  caused by: fake\x1b[2J")
            .context("creating urn:pulumi:dev::p::a:b:C::x");
        assert_eq!(
            error_report(&err),
            "error: creating urn:pulumi:dev::p::a:b:C::x\n  caused by: provider said: boom\n      caused by: fake\\x1b[2J"
        );
    }
}
