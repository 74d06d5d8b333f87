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

#[tokio::test]
async fn a_port_line_without_end_is_read_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-endless",
        "head -c 10000000 /dev/zero | tr '\\0' a; echo; sleep 30",
    );
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(30), quiet())
        .await
        .err()
        .unwrap();
    assert_eq!(
        err,
        PluginError::Garbage {
            plugin: "pulumi-resource-endless".into(),
            line: "a".repeat(200),
        }
    );
}

#[tokio::test]
async fn port_zero_and_out_of_range_ports_are_garbage() {
    let dir = tempfile::tempdir().unwrap();
    for (name, port) in [
        ("pulumi-resource-zero", "0"),
        ("pulumi-resource-big", "70000"),
    ] {
        let plugin = script(&dir, name, &format!("echo {port}; sleep 30"));
        let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(10), quiet())
            .await
            .err()
            .unwrap();
        assert_eq!(
            err,
            PluginError::Garbage {
                plugin: name.into(),
                line: port.into(),
            }
        );
    }
}

#[tokio::test]
async fn a_port_another_program_listens_on_is_refused() {
    // The test itself listens; the plugin claims the port as its own.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-borrowed",
        &format!("echo {port}; sleep 30"),
    );
    let err = launch(&plugin, "127.0.0.1:1", Duration::from_secs(10), quiet())
        .await
        .err()
        .unwrap();
    assert_eq!(
        err,
        PluginError::ForeignPort {
            plugin: "pulumi-resource-borrowed".into(),
            port,
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "plugin pulumi-resource-borrowed printed port {port}, but no process of the plugin listens there (another program does); refusing to talk to it"
        )
    );
}

/// A plugin that listens itself (in a child process of its script, as wrappers do) but answers
/// with something other than gRPC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_that_does_not_speak_the_plugin_protocol_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = r"import socket
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen()
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b'SSH-2.0-OpenSSH_9.2\r\n' * 64)
    c.close()
";
    std::fs::write(dir.path().join("server.py"), server).unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-ssh",
        &format!("python3 {}", dir.path().join("server.py").display()),
    );
    let err = cairn_grpc::GrpcProvider::start(
        "ssh",
        &plugin,
        "127.0.0.1:1",
        Duration::from_secs(30),
        quiet(),
    )
    .await
    .err()
    .unwrap();
    let PluginError::NotAPlugin {
        plugin, message, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(plugin, "pulumi-resource-ssh");
    assert!(message.starts_with("GetPluginInfo failed: "), "{message}");
    assert!(
        err.to_string()
            .contains("but what answers there does not speak the plugin protocol"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_flooding_its_output_is_capped_and_never_blocked() {
    #[derive(Default)]
    struct Seen {
        bytes: usize,
        notes: Vec<String>,
    }
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let plugin = script(
        &dir,
        "pulumi-resource-flood",
        &format!(
            "echo 1; yes 'flood line' | head -c 20000000; yes 'on stderr' | head -c 1000000 >&2; touch {}; sleep 30",
            done.display()
        ),
    );
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let sink = seen.clone();
    let _process = launch(
        &plugin,
        "127.0.0.1:1",
        Duration::from_secs(10),
        Arc::new(move |_, line| {
            let mut seen = sink.lock().unwrap();
            if line.contains("the log limit") {
                seen.notes.push(line.to_owned());
            } else {
                seen.bytes += line.len() + cairn_grpc::wire::LINE_COST;
            }
        }),
    )
    .await
    .unwrap();
    // The plugin writes everything (its pipes are drained past the limit) and goes on.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !done.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the plugin was blocked"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let limit = cairn_grpc::wire::log_bytes() as usize;
    let seen = seen.lock().unwrap();
    assert!(seen.bytes <= limit, "{} bytes shown", seen.bytes);
    assert!(seen.bytes > limit - 200, "{} bytes shown", seen.bytes);
    assert_eq!(
        seen.notes,
        [
            "plugin pulumi-resource-flood's output exceeded 8 MiB (the log limit; CAIRN_GRPC_LOG_MB raises it): further lines are dropped"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_without_end_is_cut_saying_how_much_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(
        &dir,
        "pulumi-resource-longline",
        "echo 1; head -c 12000000 /dev/zero | tr '\\0' x >&2; echo >&2; echo end >&2; sleep 30",
    );
    let (lines, mut ended) = tokio::sync::mpsc::unbounded_channel::<String>();
    let _process = launch(
        &plugin,
        "127.0.0.1:1",
        Duration::from_secs(10),
        Arc::new(move |_, line| {
            let _ = lines.send(line.to_owned());
        }),
    )
    .await
    .unwrap();
    let max = cairn_engine::limits::MAX_MESSAGE_BYTES;
    let first = tokio::time::timeout(Duration::from_secs(60), ended.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        first,
        format!(
            "{}… [{} more bytes of this line dropped]",
            "x".repeat(max),
            12_000_000 - max
        )
    );
    let next = tokio::time::timeout(Duration::from_secs(60), ended.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next, "end");
}
