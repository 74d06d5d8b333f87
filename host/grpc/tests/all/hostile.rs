//! Plugins that misbehave before they serve: each yields an error naming the plugin and what
//! went wrong, within the start-up timeout.

use std::sync::Arc;
use std::time::Duration;

use cairn_grpc::plugin::{PluginCommand, PluginError, launch};

/// A plugin that is a shell script.
fn script(dir: &tempfile::TempDir, name: &str, body: &str) -> PluginCommand {
    let path = dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    PluginCommand::new(name, path)
}

fn quiet() -> cairn_grpc::plugin::OutputSink {
    Arc::new(|_, _| {})
}

#[tokio::test]
async fn a_plugin_that_never_prints_its_port_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(&dir, "pulumi-resource-silent", "sleep 30");
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_millis(300), quiet())
        .await
        .err()
        .unwrap();
    assert_eq!(
        err,
        PluginError::NoPort {
            plugin: "pulumi-resource-silent".into(),
            seconds: 0
        }
    );
    assert!(err.to_string().contains("did not print its port"));
}

#[tokio::test]
async fn a_plugin_that_prints_garbage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-chatty",
        "echo 'hello there'; sleep 30",
    );
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(10), quiet())
        .await
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "plugin pulumi-resource-chatty printed \"hello there\" instead of its port number on its first line"
    );
}

#[tokio::test]
async fn a_plugin_that_exits_at_once_is_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-broken",
        "echo 'fatal: missing credentials' >&2; exit 3",
    );
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(10), quiet())
        .await
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(
        text.contains("plugin pulumi-resource-broken exited before printing its port"),
        "{text}"
    );
    assert!(text.contains("fatal: missing credentials"), "{text}");
}

#[tokio::test]
async fn a_missing_plugin_binary_is_named() {
    let plugin = PluginCommand::new("pulumi-resource-nowhere", "/definitely/not/here");
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(1), quiet())
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("/definitely/not/here"), "{err}");
}

#[tokio::test]
async fn the_engine_address_is_the_last_argument_and_later_output_is_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    // Prints a port nobody listens on, then echoes its arguments.
    let plugin = script(
        &dir,
        "pulumi-resource-args",
        "echo 1; echo \"args: $*\"; echo 'warn: careful' >&2; sleep 30",
    );
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = lines.clone();
    let mut command = plugin;
    command.args = vec!["--flag".into()];
    let process = launch(
        &command,
        "127.0.0.1:4242",
        Duration::from_secs(10),
        Arc::new(move |stderr, line| seen.lock().unwrap().push((stderr, line.to_owned()))),
    )
    .await
    .unwrap();
    assert_eq!(process.port, 1);
    for _ in 0..100 {
        if lines.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines = lines.lock().unwrap().clone();
    assert!(
        lines.contains(&(false, "args: --flag 127.0.0.1:4242".to_owned())),
        "{lines:?}"
    );
    assert!(
        lines.contains(&(true, "warn: careful".to_owned())),
        "{lines:?}"
    );
}
