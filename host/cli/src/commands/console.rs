//! `cairn console`: serves the read-only web console (host/console) for the current backend on
//! 127.0.0.1 and prints the URL with its access token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, Result};
use cairn_console::{Console, OpenSecrets, Options};
use cairn_engine::secrets::Crypter;
use clap::Args;

use crate::stack::LazyCrypter;
use crate::terminal::{errln, outln};
use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct ConsoleArgs {
    /// The port on 127.0.0.1 to serve on (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Open the console in the default web browser.
    #[arg(long)]
    open: bool,
    /// Show secret values (outputs, inputs, configuration) decrypted in the pages; the
    /// passphrase comes from the environment (CAIRN_CONFIG_PASSPHRASE or
    /// PULUMI_CONFIG_PASSPHRASE, or their _FILE forms). Without it they never leave the server.
    #[arg(long)]
    show_secrets: bool,
}

pub fn run(context: &Context, args: ConsoleArgs) -> Result<()> {
    let backend = context.backend()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the console's runtime")?;
    let console = runtime.block_on(Console::bind(args.port))?;
    let url = console.url();
    outln!("Cairn console for {}:", backend.url());
    outln!("    {url}");
    outln!("Read-only; anyone with this URL can read the stacks. Press Ctrl-C to stop.");
    if args.open {
        open_browser(&url);
    }
    let show_secrets = args.show_secrets.then(|| secrets_opener(backend.clone()));
    let options = Options { show_secrets };
    runtime.block_on(async {
        tokio::select! {
            served = console.serve(backend, options) => served.map_err(anyhow::Error::from),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

/// Opens each stack's secrets from its stored secrets provider and the passphrase in the
/// environment, once per stack.
fn secrets_opener(backend: cairn_backend::Backend) -> OpenSecrets {
    let opened: Mutex<HashMap<(String, String), Arc<dyn Crypter>>> = Mutex::new(HashMap::new());
    Arc::new(move |project: &str, stack: &str| {
        let key = (project.to_owned(), stack.to_owned());
        if let Some(crypter) = opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(crypter.clone());
        }
        let provider = backend
            .stored_secrets_provider(project, stack)
            .map_err(|e| format!("{e:#}"))?;
        let crypter: Arc<dyn Crypter> = Arc::new(LazyCrypter::from_state(stack, provider.as_ref()));
        opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, crypter.clone());
        Ok(crypter)
    })
}

/// Starts the platform's URL opener; says so if there is none.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let browser = std::env::var("BROWSER").unwrap_or_else(|_| opener.to_owned());
    if let Err(e) = std::process::Command::new(&browser)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        errln!("could not start {browser} to open the console ({e}); open the URL above");
    }
}
