//! `hostile-wire`: a provider written on the raw WIT bindings (no `Provider` trait, no SDK
//! checks), so it can return what the SDK never would. Every method reads the string `mode`
//! from its request's properties (`news` for check and diff; the token for invoke) and
//! misbehaves accordingly; any other mode behaves well. See `create` for most modes.
//!
//! The manifest requests HTTP to any host (`*`), so the user's grant alone decides.

use cairn_sdk::bindings::cairn::deploy::{engine, host, types as w};
use cairn_sdk::bindings::exports::cairn::deploy::provider::Guest;
use cairn_sdk::wire::{self, Columns};
use cairn_sdk::{PropertyMap, Value};

const MANIFEST_SOURCE: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/cairn.json"));
const MANIFEST_LEN: usize =
    cairn_sdk::manifest::section_len(MANIFEST_SOURCE, env!("CARGO_PKG_VERSION"));

#[cfg_attr(target_family = "wasm", unsafe(link_section = "cairn:manifest"))]
#[used]
static MANIFEST: [u8; MANIFEST_LEN] =
    cairn_sdk::manifest::section::<MANIFEST_LEN>(MANIFEST_SOURCE, env!("CARGO_PKG_VERSION"));

type R<T> = Result<T, w::ProviderError>;

struct Wire;

/// The request's properties and its `mode`.
fn props(value: w::Value) -> (PropertyMap, String) {
    let map = wire::decode_map(value).unwrap_or_default();
    let mode = match map.get("mode") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    (map, mode)
}

fn number(map: &PropertyMap, key: &str, default: f64) -> f64 {
    match map.get(key) {
        Some(Value::Number(n)) => *n,
        _ => default,
    }
}

fn text(map: &PropertyMap, key: &str) -> String {
    match map.get(key) {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

fn map(entries: Vec<(&str, Value)>) -> PropertyMap {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// A well-formed empty map: no nodes.
fn empty() -> w::Value {
    w::Value::empty()
}

/// A `register-resource` request with no dependencies, unprotected.
fn request(
    resource_type: String,
    name: &str,
    custom: bool,
    parent: Option<String>,
    inputs: w::Value,
    provider: Option<String>,
) -> engine::RegisterResourceRequest {
    engine::RegisterResourceRequest {
        resource_type,
        name: name.into(),
        custom,
        parent,
        inputs,
        property_dependencies: vec![],
        dependencies: vec![],
        provider,
        protect: false,
    }
}

fn deep(levels: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Outputs for a mode that returns bad values; `None` for modes that do not.
fn bad_outputs(mode: &str) -> Option<w::Value> {
    let ok = ("ok", Value::Number(1.0));
    let outputs = match mode {
        "nan-output" => map(vec![ok, ("cost", Value::Number(f64::NAN))]),
        "inf-nested" => map(vec![
            ok,
            (
                "tags",
                Value::Object(map(vec![(
                    "a b",
                    Value::Array(vec![Value::Null, Value::Number(f64::NEG_INFINITY)]),
                )])),
            ),
        ]),
        "long-key" => {
            let mut m = map(vec![ok]);
            m.insert("k".repeat(2000), Value::Number(1.0));
            m
        }
        "deep" => map(vec![ok, ("deep", deep(70))]),
        // A node of a kind that does not exist: the whole table is malformed.
        "bad-kind" => {
            return Some(w::Value {
                nodes: vec![99, 0, 0, 0, 0],
                strings: vec![],
                extras: vec![],
            });
        }
        _ => return None,
    };
    Some(wire::encode_map(&outputs))
}

fn failed(message: String, partial: Option<w::PartialState>) -> w::ProviderError {
    w::ProviderError::Failed(w::Failure { message, partial })
}

/// An error for the modes that return one.
fn bad_error(mode: &str) -> Option<w::ProviderError> {
    Some(match mode {
        "huge-error" => failed("E".repeat(10 << 20), None),
        "esc-error" => failed("\u{1b}]0;pwned\u{7}\u{1b}[2Jfake ✓ created".into(), None),
        "error-partial" => failed(
            "half-created".into(),
            Some(w::PartialState {
                id: "p-1".into(),
                inputs: empty(),
                outputs: wire::encode_map(&map(vec![
                    ("ok", Value::Number(1.0)),
                    ("bad", Value::Number(f64::NAN)),
                ])),
            }),
        ),
        "error-partial-bad-id" => failed(
            "half-created".into(),
            Some(w::PartialState {
                id: "\u{1b}[31mred".into(),
                inputs: empty(),
                outputs: empty(),
            }),
        ),
        "timeout-nan" => w::ProviderError::Timeout(f64::NAN),
        "timeout-negative" => w::ProviderError::Timeout(-5.0),
        "timeout-huge" => w::ProviderError::Timeout(1e300),
        "unimplemented-huge" => w::ProviderError::Unimplemented("U".repeat(1 << 20)),
        _ => return None,
    })
}

/// Calls the engine outside `construct`: the errors it gets, as outputs.
fn callbacks() -> PropertyMap {
    let register = engine::register_resource(&request(
        "hostile-wire:index:Probe".into(),
        "sneaky",
        true,
        None,
        empty(),
        None,
    ));
    let outputs = engine::register_resource_outputs(
        "urn:pulumi:test::proj::hostile-wire:index:Probe::x",
        &empty(),
    );
    map(vec![
        (
            "register",
            Value::String(register.err().unwrap_or_else(|| "accepted".into())),
        ),
        (
            "outputs",
            Value::String(outputs.err().unwrap_or_else(|| "accepted".into())),
        ),
    ])
}

/// Sends `count` GET requests to `url` at once; counts the outcomes by kind.
fn http_many(url: &str, count: usize) -> PropertyMap {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let mut futures = Vec::new();
    let mut outcomes = PropertyMap::new();
    let mut count_of = |key: String| {
        let n = match outcomes.get(&key) {
            Some(Value::Number(n)) => *n,
            _ => 0.0,
        };
        outcomes.insert(key, Value::Number(n + 1.0));
    };
    for _ in 0..count {
        let request = OutgoingRequest::new(Fields::new());
        let _ = request.set_method(&Method::Get);
        let _ = request.set_scheme(Some(&if scheme == "https" {
            Scheme::Https
        } else {
            Scheme::Http
        }));
        let _ = request.set_authority(Some(authority));
        let _ = request.set_path_with_query(Some(path));
        match outgoing_handler::handle(request, None) {
            Ok(future) => futures.push(future),
            Err(e) => count_of(format!("{e:?}")),
        }
    }
    for future in futures {
        future.subscribe().block();
        match future.get() {
            Some(Ok(Ok(response))) => count_of(format!("status {}", response.status())),
            Some(Ok(Err(e))) => count_of(format!("{e:?}")),
            _ => count_of("no response".into()),
        }
    }
    outcomes
}

impl Guest for Wire {
    fn get_schema() -> R<String> {
        Err(w::ProviderError::Unimplemented("get-schema".into()))
    }

    fn check_config(r: w::CheckRequest) -> R<w::CheckResult> {
        Ok(w::CheckResult {
            inputs: r.news,
            failures: vec![],
        })
    }

    fn diff_config(_: w::DiffRequest) -> R<w::DiffResult> {
        Ok(no_diff())
    }

    fn configure(_: w::Value, _: bool) -> R<()> {
        Ok(())
    }

    /// `many-failures`: 1,000 failures with 100 KiB reasons; `nan-news`: inputs with NaN;
    /// `alias-flood`: 1,000 failure reasons that all point at the same 1 MiB of memory (so the
    /// host would copy 1,000 MiB out of a guest that holds 1).
    fn check(r: w::CheckRequest) -> R<w::CheckResult> {
        let (_, mode) = props(r.news.clone());
        match mode.as_str() {
            "alias-flood" => {
                let mut one = std::mem::ManuallyDrop::new("R".repeat(1 << 20));
                let (ptr, len) = (one.as_mut_ptr(), one.len());
                let failures = (0..1000)
                    .map(|_| w::CheckFailure {
                        property: String::new(),
                        // SAFETY: deliberately aliased (the host must refuse to copy it all);
                        // the strings are never dropped, since the host traps the call while
                        // lifting them.
                        reason: unsafe { String::from_raw_parts(ptr, len, len) },
                    })
                    .collect();
                Ok(w::CheckResult {
                    inputs: r.news,
                    failures,
                })
            }
            "many-failures" => Ok(w::CheckResult {
                inputs: r.news,
                failures: (0..1000)
                    .map(|i| w::CheckFailure {
                        property: format!("p{i}"),
                        reason: "R".repeat(100 << 10),
                    })
                    .collect(),
            }),
            "nan-news" => Ok(w::CheckResult {
                inputs: wire::encode_map(&map(vec![("n", Value::Number(f64::NAN))])),
                failures: vec![],
            }),
            _ => Ok(w::CheckResult {
                inputs: r.news,
                failures: vec![],
            }),
        }
    }

    /// `huge-keys`: 20,000 replace keys; `long-key`: one 2,000-byte changed key; `long-path`:
    /// a detailed diff path of 20,000 bytes.
    fn diff(r: w::DiffRequest) -> R<w::DiffResult> {
        let (_, mode) = props(r.news);
        let mut result = no_diff();
        match mode.as_str() {
            "huge-keys" => {
                result.changes = w::DiffChanges::Some;
                result.replace_keys = (0..20_000).map(|i| format!("k{i}")).collect();
            }
            "long-key" => {
                result.changes = w::DiffChanges::Some;
                result.changed_keys = vec!["k".repeat(2000)];
            }
            "long-path" => {
                result.changes = w::DiffChanges::Some;
                result.detailed_diff = Some(vec![w::PropertyDiff {
                    path: "p".repeat(20_000),
                    kind: w::DiffKind::Update,
                    input_diff: false,
                }]);
            }
            _ => {}
        }
        Ok(result)
    }

    /// Modes: the bad outputs of [`bad_outputs`], the errors of [`bad_error`], `empty-id`,
    /// `esc-id`, `long-id`, `callback` (engine callbacks outside construct), `socket-flood`
    /// (`count` sockets, each refused), `log-flood`
    /// (`count` messages of `size` bytes), `log-huge` (one 1 MiB message), `http-many`
    /// (`count` requests to `url` at once); otherwise a good resource `w-<name>`.
    fn create(r: w::CreateRequest) -> R<w::CreateResult> {
        let (p, mode) = props(r.properties);
        let name = r.urn.rsplit("::").next().unwrap_or_default().to_owned();
        if let Some(e) = bad_error(&mode) {
            return Err(e);
        }
        let good = |outputs: PropertyMap| w::CreateResult {
            id: format!("w-{name}"),
            outputs: wire::encode_map(&outputs),
        };
        let ok = || map(vec![("ok", Value::Number(1.0))]);
        Ok(match mode.as_str() {
            "empty-id" => w::CreateResult {
                id: String::new(),
                ..good(ok())
            },
            "esc-id" => w::CreateResult {
                id: "\u{1b}]0;pwned\u{7}\u{1b}[2J".into(),
                ..good(ok())
            },
            "long-id" => w::CreateResult {
                id: "i".repeat(9000),
                ..good(ok())
            },
            "callback" => good(callbacks()),
            "socket-flood" => {
                use wasip2::sockets::network::IpAddressFamily;
                use wasip2::sockets::tcp_create_socket::create_tcp_socket;
                let count = number(&p, "count", 100_000.0) as usize;
                let refused = (0..count)
                    .filter(|_| create_tcp_socket(IpAddressFamily::Ipv4).is_err())
                    .count();
                good(map(vec![("refused", Value::Number(refused as f64))]))
            }
            "log-flood" => {
                let count = number(&p, "count", 100_000.0) as usize;
                let message = "L".repeat(number(&p, "size", 100.0) as usize);
                for _ in 0..count {
                    host::log(host::Severity::Info, None, &message);
                }
                good(ok())
            }
            "log-huge" => {
                host::log(host::Severity::Warning, None, &"H".repeat(1 << 20));
                good(ok())
            }
            "http-many" => good(http_many(
                &text(&p, "url"),
                number(&p, "count", 100.0) as usize,
            )),
            _ => match bad_outputs(&mode) {
                Some(outputs) => w::CreateResult {
                    id: format!("w-{name}"),
                    outputs,
                },
                None => good(ok()),
            },
        })
    }

    /// `esc-id`: a read whose ID holds escape sequences; `nan-output`: NaN outputs.
    fn read(r: w::ReadRequest) -> R<w::ReadResult> {
        let (_, mode) = props(r.inputs.clone());
        Ok(match mode.as_str() {
            "esc-id" => w::ReadResult {
                id: "\u{1b}[2J".into(),
                inputs: r.inputs,
                outputs: r.state,
            },
            _ => match bad_outputs(&mode) {
                Some(outputs) => w::ReadResult {
                    id: r.id,
                    inputs: r.inputs,
                    outputs,
                },
                None => w::ReadResult {
                    id: r.id,
                    inputs: r.inputs,
                    outputs: r.state,
                },
            },
        })
    }

    /// The bad outputs of [`bad_outputs`] (by the news' mode); else the news.
    fn update(r: w::UpdateRequest) -> R<w::UpdateResult> {
        let (_, mode) = props(r.news.clone());
        if let Some(e) = bad_error(&mode) {
            return Err(e);
        }
        Ok(w::UpdateResult {
            outputs: bad_outputs(&mode).unwrap_or(r.news),
        })
    }

    fn delete(_: w::DeleteRequest) -> R<()> {
        Ok(())
    }

    /// Registers the component, then: `nan-state` returns a state with NaN; any other mode
    /// sends the engine hostile callbacks (a child with NaN inputs, with an escape sequence
    /// or 2,000 bytes as its name, with a provider reference holding a newline; outputs with
    /// infinity) and returns the errors it got as `errors`.
    fn construct(r: w::ConstructRequest) -> R<w::ConstructResult> {
        let (_, mode) = props(r.inputs);
        let register = |name: &str, custom: bool, parent, inputs, provider| {
            let resource_type = if custom {
                "hostile-wire:index:Probe".into()
            } else {
                r.resource_type.clone()
            };
            engine::register_resource(&request(
                resource_type,
                name,
                custom,
                parent,
                inputs,
                provider,
            ))
        };
        let me = register(&r.name, false, r.parent.clone(), empty(), None)
            .map_err(|e| failed(e, None))?;
        let one = |key: &str, v: f64| wire::encode_map(&map(vec![(key, Value::Number(v))]));
        if mode == "nan-state" {
            return Ok(w::ConstructResult {
                urn: Some(me.urn),
                state: one("x", f64::NAN),
                state_dependencies: vec![],
            });
        }
        let parent = || Some(me.urn.clone());
        let attempts = [
            register("nan", true, parent(), one("x", f64::NAN), None).err(),
            register("\u{1b}[2J", true, parent(), empty(), None).err(),
            register(&"n".repeat(2000), true, parent(), empty(), None).err(),
            register("ref", true, parent(), empty(), Some("urn:x\n::id".into())).err(),
            engine::register_resource_outputs(&me.urn, &one("y", f64::INFINITY)).err(),
        ];
        let errors = Value::Array(
            attempts
                .into_iter()
                .map(|e| Value::String(e.unwrap_or_else(|| "accepted".into())))
                .collect(),
        );
        let state = wire::encode_map(&map(vec![("errors", errors)]));
        engine::register_resource_outputs(&me.urn, &state).map_err(|e| failed(e, None))?;
        Ok(w::ConstructResult {
            urn: Some(me.urn),
            state,
            state_dependencies: vec![],
        })
    }

    /// The token's last part is the mode: bad outputs or errors as in `create`.
    fn invoke(r: w::InvokeRequest) -> R<w::InvokeResult> {
        let mode = r.token.rsplit(':').next().unwrap_or_default();
        if let Some(e) = bad_error(mode) {
            return Err(e);
        }
        Ok(w::InvokeResult {
            outputs: bad_outputs(mode).unwrap_or_else(empty),
            failures: vec![],
        })
    }

    fn call(_: w::CallRequest) -> R<w::CallResult> {
        Err(w::ProviderError::Unimplemented("call".into()))
    }

    fn cancel() {}
}

fn no_diff() -> w::DiffResult {
    w::DiffResult {
        changes: w::DiffChanges::None,
        replace_keys: vec![],
        stable_keys: vec![],
        changed_keys: vec![],
        detailed_diff: None,
        delete_before_replace: false,
    }
}

cairn_sdk::bindings::__export_provider_world!(Wire with_types_in cairn_sdk::bindings);
