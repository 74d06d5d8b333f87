//! `cairn login`, `cairn logout` and `cairn whoami`: choosing the backend commands use when no
//! flag, variable or project names one, and saying which it is. A password in a URL is kept in
//! the owner-only credentials file and never printed.

use anyhow::{Result, bail};
use cairn_backend::pgconfig;
use clap::Args;

use crate::credentials::Credentials;
use crate::terminal::outln;
use crate::workspace::{Context, open_backend};

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The backend: `postgres://[user[:password]@]host[:port]/database`, `file://DIRECTORY`
    /// (default: CAIRN_BACKEND_URL or PULUMI_BACKEND_URL).
    url: Option<String>,
    /// Log in to the Cairn home's own directory (`file://$CAIRN_HOME`).
    #[arg(short, long, conflicts_with = "url")]
    local: bool,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The backend to log out of (default: the current one).
    url: Option<String>,
    /// Log out of every backend.
    #[arg(long, conflicts_with = "url")]
    all: bool,
    /// Log out of the Cairn home's own directory.
    #[arg(short, long, conflicts_with_all = ["url", "all"])]
    local: bool,
}

#[derive(Debug, Args)]
pub struct WhoamiArgs {
    /// Also print the backend's URL (never its password).
    #[arg(short, long)]
    verbose: bool,
    /// Print JSON: `{"user", "url"}`.
    #[arg(long)]
    json: bool,
}

/// The URL as it is stored: `file://` directories made absolute (later commands run
/// elsewhere); other URLs as given.
fn normalize(context: &Context, url: &str) -> Result<String> {
    match url.strip_prefix("file://") {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !rest.starts_with('~') => {
            Ok(format!("file://{}", context.cwd.join(rest).display()))
        }
        _ => Ok(url.to_owned()),
    }
}

fn local_url(context: &Context) -> String {
    format!("file://{}", context.home.display())
}

pub fn login(context: &Context, args: LoginArgs) -> Result<()> {
    let url = match (args.url, args.local) {
        (Some(url), _) => url,
        (None, true) => local_url(context),
        (None, false) => match crate::credentials::env_backend_url() {
            Some(url) => url,
            None => bail!(
                "name the backend to log in to: `cairn login postgres://user@host/database`, \
                 `cairn login file://DIRECTORY`, or `cairn login --local`"
            ),
        },
    };
    let url = normalize(context, &url)?;
    let backend = open_backend(&url, &context.cwd)?;
    if let Some(dir) = url.strip_prefix("file://") {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot use {} as a backend: {e}", backend.url()))?;
    }
    // Connects (and for PostgreSQL, checks the credentials and migrates the schema).
    let user = backend.user()?;
    let mut credentials = Credentials::load(&context.home)?;
    if !credentials.accounts.contains(&url) {
        credentials.accounts.push(url.clone());
    }
    credentials.current = Some(url);
    credentials.save(&context.home)?;
    outln!("Logged in to {} as {user}", backend.url());
    Ok(())
}

pub fn logout(context: &Context, args: LogoutArgs) -> Result<()> {
    let mut credentials = Credentials::load(&context.home)?;
    if args.all {
        credentials = Credentials::default();
        credentials.save(&context.home)?;
        outln!("Logged out of every backend.");
        return Ok(());
    }
    let url = match (args.url, args.local) {
        (Some(url), _) => normalize(context, &url)?,
        (None, true) => local_url(context),
        (None, false) => match &credentials.current {
            Some(url) => url.clone(),
            None => {
                outln!("Not logged in: commands use {}.", local_url(context));
                return Ok(());
            }
        },
    };
    let shown = pgconfig::redact(&url);
    let known = credentials.accounts.contains(&url) || credentials.current.as_ref() == Some(&url);
    credentials.accounts.retain(|u| u != &url);
    if credentials.current.as_ref() == Some(&url) {
        credentials.current = None;
    }
    credentials.save(&context.home)?;
    if known {
        outln!("Logged out of {shown}.");
    } else {
        outln!("Not logged in to {shown}.");
    }
    Ok(())
}

pub fn whoami(context: &Context, args: WhoamiArgs) -> Result<()> {
    let backend = context.backend()?;
    let user = backend.user()?;
    if args.json {
        let json = serde_json::json!({ "user": user, "url": backend.url() });
        outln!("{}", crate::terminal::json_pretty(&json)?);
    } else if args.verbose {
        outln!("User: {user}");
        outln!("Backend URL: {}", backend.url());
    } else {
        outln!("{user}");
    }
    Ok(())
}
