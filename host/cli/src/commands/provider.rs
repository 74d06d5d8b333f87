//! `cairn provider serve FILE.wasm [ENGINE_ADDRESS]`: a wasm provider as a gRPC provider plugin,
//! so stock gRPC engines can use it. It follows the plugin protocol: prints the port it serves
//! on as its first stdout line, serves `ResourceProvider`, and exits when the engine stops
//! answering health checks (or on Ctrl-C / SIGTERM). The provider runs sandboxed exactly as
//! in-process; its grant (the fields of one `cairn:grants` package entry) comes from the
//! `CAIRN_GRANTS` environment variable or `--grants FILE` (JSON).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::{Args, Subcommand};

use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct ProviderArgs {
    #[command(subcommand)]
    command: ProviderCommand,
}

#[derive(Debug, Subcommand)]
enum ProviderCommand {
    /// Serve a wasm provider over the gRPC plugin protocol (prints its port).
    Serve {
        /// The provider component.
        file: PathBuf,
        /// The engine's address (the plugin protocol passes it last); the server exits when the
        /// engine stops answering there.
        engine_address: Option<String>,
        /// The provider's grant as JSON: `{http, directories, env, memoryMiB, timeoutSeconds}`
        /// (default: `CAIRN_GRANTS`, else nothing granted).
        #[arg(long, value_name = "FILE")]
        grants: Option<PathBuf>,
    },
}

pub fn run(context: &Context, args: ProviderArgs) -> Result<()> {
    match args.command {
        ProviderCommand::Serve {
            file,
            engine_address,
            grants,
        } => serve(context, &context.cwd.join(file), engine_address, grants),
    }
}

/// The grant from `--grants FILE` or `CAIRN_GRANTS`, relative directories against `base`.
fn grant(file: Option<PathBuf>, base: &Path, package: &str) -> Result<cairn_wasm::PackageGrant> {
    let text = match file {
        Some(path) => Some(
            std::fs::read_to_string(&path)
                .with_context(|| format!("reading the grants file {}", path.display()))?,
        ),
        None => std::env::var("CAIRN_GRANTS").ok(),
    };
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(cairn_wasm::PackageGrant::default());
    };
    let json: serde_json::Value =
        serde_json::from_str(&text).context("the grants are not valid JSON")?;
    let all = serde_json::json!({ package: json });
    Ok(cairn_wasm::Grants::parse(&all, base)?.package(package))
}

fn serve(
    context: &Context,
    file: &Path,
    engine_address: Option<String>,
    grants: Option<PathBuf>,
) -> Result<()> {
    let plugin = cairn_wasm::WasmPlugin::from_file(file)?;
    let package = plugin.manifest().name.clone();
    let grant = grant(grants, &context.cwd, &package)?;
    let runtime = crate::providers::runtime(&context.home)?;
    let provider = runtime.instantiate(&plugin, &grant, cairn_wasm::tracing_log_sink())?;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    tokio.block_on(async move {
        let served = cairn_grpc::serve_provider(Arc::new(provider)).await?;
        // The plugin protocol: the port alone on the first line of stdout.
        {
            use tokio::io::AsyncWriteExt;
            let mut out = tokio::io::stdout();
            out.write_all(format!("{}\n", served.address.port()).as_bytes())
                .await?;
            out.flush().await?;
        }
        let engine_gone = async {
            match engine_address {
                Some(address) => wait_for_engine_to_go(&address).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = engine_gone => {}
            _ = tokio::signal::ctrl_c() => {}
            () = terminated() => {}
        }
        drop(served);
        Ok::<(), anyhow::Error>(())
    })
}

async fn terminated() {
    #[cfg(unix)]
    {
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            term.recv().await;
            return;
        }
    }
    std::future::pending::<()>().await;
}

/// Returns once the engine has failed three health checks in a row.
async fn wait_for_engine_to_go(address: &str) {
    let mut failures = 0;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if cairn_grpc::engine::healthy(address).await {
            failures = 0;
        } else {
            failures += 1;
            if failures >= 3 {
                return;
            }
        }
    }
}

/// `cairn plugin export-grpc`: writes `pulumi-resource-<name>` (a launcher running
/// `cairn provider serve` on a copy of the component) into `dir`.
pub fn export_grpc(file: &Path, dir: &Path) -> Result<PathBuf> {
    let plugin = cairn_wasm::WasmPlugin::from_file(file)?;
    let name = plugin.manifest().name.clone();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    let wasm = dir.join(format!("{name}-{}.wasm", plugin.manifest().version));
    std::fs::write(&wasm, plugin.bytes()).with_context(|| format!("writing {}", wasm.display()))?;
    let cairn = std::env::current_exe().context("finding the cairn executable")?;
    let launcher = dir.join(format!("pulumi-resource-{name}"));
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let script = format!(
        "#!/bin/sh\n# A gRPC provider plugin for the `{name}` wasm provider (written by `cairn plugin export-grpc`).\n# Grants: CAIRN_GRANTS (JSON) or --grants FILE, as for `cairn provider serve`.\nexec {} provider serve {} \"$@\"\n",
        quote(&cairn),
        quote(&wasm),
    );
    std::fs::write(&launcher, script).with_context(|| format!("writing {}", launcher.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))?;
    }
    if !launcher.is_file() {
        bail!("could not write {}", launcher.display());
    }
    Ok(launcher)
}
