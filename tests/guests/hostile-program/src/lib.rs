//! `hostile-program`: a program written on the raw WIT bindings (no SDK event loop or checks),
//! steered by its config `<project>:mode`. It sends one hostile request (or does one hostile
//! thing), waits for everything it started, and fails with the outcomes it got, one per line
//! (`failed: <message>` or `ok`), so the host's tests can assert the exact errors; it succeeds
//! when every request did (any other mode registers one good component, `fine`).
//!
//! Modes: `nan-inputs`, `esc-name`, `long-name`, `nan-timeout`, `huge-timeout`, `esc-import-id`,
//! `long-key`, `bad-kind` (register-resource requests the host must refuse); `nan-outputs`
//! (stack outputs with NaN); `many-handles` (`count` requests, default 1,000,000, never
//! waiting); `huge-error` (fails with a 10 MiB message); `trap` (hits `unreachable`);
//! `http` (GETs `url`); `log-flood` (`count` messages of `size` bytes).

use cairn_sdk::bindings::cairn::deploy::{host, types as w};
use cairn_sdk::program_bindings::cairn::deploy::{context, monitor};
use cairn_sdk::{PropertyMap, Value, wire};

struct Program;

fn empty() -> w::Value {
    w::Value {
        nodes: vec![],
        strings: vec![],
        extras: vec![],
    }
}

fn options() -> monitor::ResourceOptions {
    monitor::ResourceOptions {
        parent: None,
        depends_on: vec![],
        protect: false,
        retain_on_delete: false,
        deleted_with: None,
        provider: None,
        providers: vec![],
        aliases: vec![],
        ignore_changes: vec![],
        replace_on_changes: vec![],
        delete_before_replace: None,
        additional_secret_outputs: vec![],
        custom_timeouts: None,
        import_id: None,
        version: None,
    }
}

fn component(name: &str) -> monitor::RegisterResourceRequest {
    monitor::RegisterResourceRequest {
        resource_type: "hostile:index:Group".into(),
        name: name.into(),
        custom: false,
        remote: false,
        inputs: empty(),
        property_dependencies: vec![],
        options: options(),
    }
}

fn config() -> PropertyMap {
    context::config()
        .into_iter()
        .filter_map(|(key, value)| {
            let key = key.rsplit(':').next()?.to_owned();
            Some((key, wire::decode(value).ok()?))
        })
        .collect()
}

fn number(config: &PropertyMap, key: &str, default: f64) -> f64 {
    match config.get(key) {
        Some(Value::Number(n)) => *n,
        Some(Value::String(s)) => s.parse().unwrap_or(default),
        _ => default,
    }
}

fn http_get(url: &str) -> String {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    let _ = request.set_method(&Method::Get);
    let _ = request.set_scheme(Some(&if scheme == "http" {
        Scheme::Http
    } else {
        Scheme::Https
    }));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some(path));
    match outgoing_handler::handle(request, None) {
        Err(e) => format!("handle: {e:?}"),
        Ok(future) => {
            future.subscribe().block();
            match future.get() {
                Some(Ok(Ok(response))) => format!("status {}", response.status()),
                Some(Ok(Err(e))) => format!("{e:?}"),
                _ => "no response".into(),
            }
        }
    }
}

/// Waits for every outstanding request; their outcomes, one per line, in handle order.
fn collect() -> Vec<String> {
    let mut done = Vec::new();
    loop {
        let batch = monitor::wait();
        if batch.is_empty() {
            break;
        }
        done.extend(batch);
    }
    done.sort_by_key(|c| c.handle);
    done.into_iter()
        .map(|c| match c.outcome {
            monitor::Outcome::Failed(message) => format!("failed: {message}"),
            _ => "ok".into(),
        })
        .collect()
}

impl cairn_sdk::program_bindings::Guest for Program {
    fn run() -> Result<(), String> {
        let config = config();
        let mode = match config.get("mode") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let root = context::deployment().root_urn;
        let register = |request: &monitor::RegisterResourceRequest| {
            monitor::register_resource(request);
        };
        match mode.as_str() {
            "nan-inputs" => register(&monitor::RegisterResourceRequest {
                inputs: wire::encode_map(
                    &[("cost".to_owned(), Value::Number(f64::NAN))]
                        .into_iter()
                        .collect(),
                ),
                ..component("nan")
            }),
            "long-key" => register(&monitor::RegisterResourceRequest {
                inputs: wire::encode_map(&[("k".repeat(2000), Value::Null)].into_iter().collect()),
                ..component("long-key")
            }),
            "bad-kind" => register(&monitor::RegisterResourceRequest {
                inputs: w::Value {
                    nodes: vec![5, 1, 1, 0, 0, 77, 0, 0, 0, 1],
                    strings: b"k".to_vec(),
                    extras: vec![],
                },
                ..component("bad-kind")
            }),
            "esc-name" => register(&component("\u{1b}]0;pwned\u{7}\u{1b}[2J")),
            "long-name" => register(&component(&"n".repeat(2000))),
            "nan-timeout" | "huge-timeout" => {
                let t = if mode == "nan-timeout" {
                    f64::NAN
                } else {
                    1e300
                };
                register(&monitor::RegisterResourceRequest {
                    options: monitor::ResourceOptions {
                        custom_timeouts: Some(monitor::CustomTimeouts {
                            create: t,
                            update: 0.0,
                            delete: 0.0,
                        }),
                        ..options()
                    },
                    ..component("timeout")
                })
            }
            "esc-import-id" => register(&monitor::RegisterResourceRequest {
                custom: true,
                options: monitor::ResourceOptions {
                    import_id: Some("\u{1b}[2Jid".into()),
                    ..options()
                },
                ..component("import")
            }),
            "nan-outputs" => {
                let outputs = wire::encode_map(
                    &[("n".to_owned(), Value::Number(f64::INFINITY))]
                        .into_iter()
                        .collect(),
                );
                return monitor::register_resource_outputs(&root, &outputs);
            }
            "many-handles" => {
                let count = number(&config, "count", 1e6) as usize;
                let bad = component("\u{7}");
                for _ in 0..count {
                    register(&bad);
                }
                return Err(format!("sent {count} requests"));
            }
            "huge-error" => return Err("E".repeat(10 << 20)),
            "trap" => core::arch::wasm32::unreachable(),
            "http" => {
                let url = match config.get("url") {
                    Some(Value::String(s)) => s.clone(),
                    _ => "https://example.com/".into(),
                };
                return Err(format!("http: {}", http_get(&url)));
            }
            "log-flood" => {
                let message = "L".repeat(number(&config, "size", 100.0) as usize);
                for _ in 0..number(&config, "count", 100_000.0) as usize {
                    host::log(host::Severity::Info, None, &message);
                }
                return Ok(());
            }
            _ => register(&component("fine")),
        }
        let outcomes = collect();
        if outcomes.iter().all(|o| o == "ok") {
            Ok(())
        } else {
            Err(outcomes.join("\n"))
        }
    }
}

cairn_sdk::program_bindings::__export_program_world!(Program with_types_in cairn_sdk::program_bindings);
