//! `cairn console`: the web console on a real stack made by `cairn up` (program-probe's
//! `console` mode: a component with children, dependencies, a secret in config and outputs, a
//! resource named with markup, and a second update that changes a property).
//!
//! The attacks come over raw HTTP, so every header is the test's choice: no token, a wrong one,
//! a rebinding `Host`, a foreign `Origin`, a write method, the event stream without a token.
//! What a person sees is checked in headless Chromium: the stack list, the graph's nodes and a
//! selection, the markup resource shown as text, the masked secret, an update's diff and
//! timeline, and the live view advancing during an `up` held at the `gate` provider's gates.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::background::{Background, touch};
use crate::browser::Browser;
use crate::interrupt::gate_stack_of;
use crate::pgserver::shared;
use crate::support::{Sandbox, program_stack, test_wasm};

/// The secret config value; it must reach no page unless `--show-secrets`.
const API_KEY: &str = "console-api-key-7f3e9a";
/// program-probe's `MARKUP`.
const MARKUP: &str = "<img src=x onerror=\"document.body.dataset.pwned=1\">&amp;'";
const START: Duration = Duration::from_secs(180);

/// A stack `dev` of project `prog` in program-probe's `console` mode, deployed twice (`size`
/// 1, then 2).
fn console_stack() -> Sandbox {
    let sandbox = program_stack("prog", &test_wasm("program-probe"), &[&test_wasm("probe")]);
    sandbox.secret(API_KEY);
    sandbox.ok(&["config", "set", "mode", "console"]);
    sandbox.ok(&["config", "set", "--secret", "apiKey", API_KEY]);
    sandbox.ok(&["up", "--yes", "-m", "first"]);
    sandbox.ok(&["config", "set", "round", "2"]);
    sandbox.ok(&["up", "--yes", "-m", "bigger <b>size</b>"]);
    sandbox
}

/// A running `cairn console`, and where it listens.
struct Served {
    /// The console; stopped when this is dropped.
    _process: Background,
    url: String,
    port: u16,
    token: String,
}

fn serve(sandbox: &Sandbox, extra: &[&str]) -> Served {
    let mut args = vec!["console", "--port", "0"];
    args.extend_from_slice(extra);
    let mut process = Background::spawn(sandbox.command(&args), sandbox.root(), "console");
    let mut url = String::new();
    process.wait_for("the console's URL", START, || {
        url = process_line(&process_stdout(sandbox), "http://127.0.0.1:");
        !url.is_empty()
    });
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, query) = rest.split_once('/').unwrap();
    let token = query.strip_prefix("?token=").unwrap().to_owned();
    assert_eq!(token.len(), 64, "a 256-bit token in {url}");
    Served {
        _process: process,
        port: port.parse().unwrap(),
        url,
        token,
    }
}

fn process_stdout(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.root().join("console.stdout")).unwrap_or_default()
}

/// The word of `text` starting with `prefix`, or "".
fn process_line(text: &str, prefix: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with(prefix))
        .unwrap_or_default()
        .to_owned()
}

/// An HTTP answer.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One request over a fresh connection, every header chosen by the caller (`Host` included).
fn raw(port: u16, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut answer = Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    };
    if answer
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        answer.body = dechunk(body);
    }
    answer
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

impl Served {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A GET as the page makes it: our Host, the token's cookie.
    fn get(&self, path: &str) -> Answer {
        let cookie = format!("cairn-console={}", self.token);
        raw(
            self.port,
            "GET",
            path,
            &[("Host", &self.host()), ("Cookie", &cookie)],
        )
    }

    fn api(&self, path: &str, params: &[(&str, &str)]) -> Value {
        let query: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        let answer = self.get(&format!("/api/{path}?{}", query.join("&")));
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert_eq!(
            answer.header("content-type").as_deref(),
            Some("application/json"),
            "{path}"
        );
        answer.json()
    }
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn console_refuses_whoever_lacks_the_token_or_comes_from_elsewhere() {
    let sandbox = console_stack();
    let served = serve(&sandbox, &[]);
    let host = served.host();
    let cookie = format!("cairn-console={}", served.token);
    let wrong = format!("cairn-console={}", "0".repeat(64));
    let ok: &[(&str, &str)] = &[("Host", &host), ("Cookie", &cookie)];
    // What, method, path, headers, the status expected.
    type Attack<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: Vec<Attack> = vec![
        ("the page with the cookie", "GET", "/", ok.to_vec(), 200),
        ("no token", "GET", "/", vec![("Host", &host)], 401),
        (
            "no token, the API",
            "GET",
            "/api/stacks",
            vec![("Host", &host)],
            401,
        ),
        (
            "no token, the event stream",
            "GET",
            "/api/live?project=prog&stack=dev",
            vec![("Host", &host)],
            401,
        ),
        (
            "no token, the script",
            "GET",
            "/app.js",
            vec![("Host", &host)],
            401,
        ),
        (
            "a wrong token",
            "GET",
            "/api/stacks",
            vec![("Host", &host), ("Cookie", &wrong)],
            401,
        ),
        (
            "DNS rebinding",
            "GET",
            "/api/stacks",
            vec![("Host", "attacker.example"), ("Cookie", &cookie)],
            403,
        ),
        (
            "another port",
            "GET",
            "/api/stacks",
            vec![("Host", "127.0.0.1:1"), ("Cookie", &cookie)],
            403,
        ),
        (
            "a foreign origin",
            "GET",
            "/api/stacks",
            [ok, &[("Origin", "http://attacker.example")]].concat(),
            403,
        ),
        (
            "a cross-site fetch",
            "GET",
            "/api/stacks",
            [ok, &[("Sec-Fetch-Site", "cross-site")]].concat(),
            403,
        ),
        ("a write", "POST", "/api/stacks", ok.to_vec(), 405),
        (
            "a delete",
            "DELETE",
            "/api/stack?project=prog&stack=dev",
            ok.to_vec(),
            405,
        ),
    ];
    for (what, method, path, headers, status) in cases {
        let answer = raw(served.port, method, path, &headers);
        assert_eq!(answer.status, status, "{what}: {}", answer.body);
        let csp = answer.header("content-security-policy").unwrap_or_default();
        assert!(csp.contains("script-src 'self'"), "{what}: CSP {csp:?}");
        assert!(!csp.contains("unsafe"), "{what}: CSP {csp:?}");
        assert_eq!(
            answer.header("x-content-type-options").as_deref(),
            Some("nosniff")
        );
        if status != 200 {
            assert!(!answer.body.contains("\"stacks\""), "{what} leaked data");
        }
    }
    // The URL's token is swapped for a strict, script-proof cookie and leaves the address.
    let first = raw(
        served.port,
        "GET",
        &format!("/?token={}", served.token),
        &[("Host", &host)],
    );
    assert_eq!(first.status, 303);
    assert_eq!(first.header("location").as_deref(), Some("/"));
    let set = first.header("set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    // The server listens on loopback only.
    assert!(served.url.starts_with("http://127.0.0.1:"));
    if let Some(other) = non_loopback_address() {
        assert!(
            TcpStream::connect((other, served.port)).is_err(),
            "the console answers on {other}"
        );
    }
    // The page loads its script from a file: no inline script for the policy to allow.
    let page = served.get("/");
    assert!(page.body.contains("<script src=\"/app.js\""));
    assert!(!page.body.contains("<script>") && !page.body.contains("onload="));
}

/// An address of this machine other than loopback, if it has one.
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let address = socket.local_addr().ok()?.ip();
    (!address.is_loopback() && !address.is_unspecified()).then_some(address)
}

#[test]
fn console_api_masks_secrets_and_serves_markup_as_data() {
    let sandbox = console_stack();
    let served = serve(&sandbox, &[]);
    let stacks = served.api("stacks", &[]);
    assert_eq!(stacks["stacks"][0]["project"], "prog");
    assert_eq!(stacks["stacks"][0]["stack"], "dev");
    assert_eq!(stacks["stacks"][0]["running"], false);
    let p = [("project", "prog"), ("stack", "dev")];
    let stack = served.api("stack", &p);
    assert_eq!(stack["outputs"]["key"], json!({"$secret": true}));
    assert_eq!(stack["outputs"]["size"], json!(2));
    assert_eq!(stack["outputs"][MARKUP], json!(MARKUP));
    let key = stack["config"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "prog:apiKey")
        .unwrap_or_else(|| panic!("no prog:apiKey in {}", stack["config"]));
    assert_eq!(key["value"], json!({"$secret": true}));
    let history = served.api("history", &p);
    let updates = history["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[0]["message"], "bigger <b>size</b>");
    let version = updates[0]["version"].to_string();
    let update = served.api("update", &[p[0], p[1], ("version", &version)]);
    let base_step = update["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["urn"].as_str().unwrap().ends_with("::base"))
        .unwrap_or_else(|| panic!("no step of base in {update}"));
    assert_eq!(base_step["op"], "update");
    assert!(base_step["end"].as_u64() >= base_step["start"].as_u64());
    assert_eq!(
        base_step["diff"],
        json!([{"path": "size", "kind": "update", "old": 1.0, "new": 2.0}])
    );
    // Every resource, the graph: nothing carries the secret.
    let mut everything = vec![
        stacks.to_string(),
        stack.to_string(),
        history.to_string(),
        update.to_string(),
    ];
    everything.push(served.api("graph", &p).to_string());
    for resource in stack["resources"].as_array().unwrap() {
        let urn = resource["urn"].as_str().unwrap();
        everything.push(
            served
                .api("resource", &[p[0], p[1], ("urn", urn)])
                .to_string(),
        );
    }
    for text in &everything {
        assert!(
            !text.contains(API_KEY),
            "the secret reached the page: {text}"
        );
    }
    let keyed = served.api(
        "resource",
        &[
            p[0],
            p[1],
            (
                "urn",
                "urn:pulumi:dev::prog::prog:index:Group$probe:index:Thing::keyed",
            ),
        ],
    );
    assert_eq!(keyed["inputs"]["key"], json!({"$secret": true}));
    assert_eq!(
        keyed["dependencies"][0],
        "urn:pulumi:dev::prog::prog:index:Group$probe:index:Thing::base"
    );
    let base = served.api(
        "resource",
        &[
            p[0],
            p[1],
            (
                "urn",
                "urn:pulumi:dev::prog::prog:index:Group$probe:index:Thing::base",
            ),
        ],
    );
    let dependents: Vec<&str> = base["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["urn"].as_str().unwrap())
        .collect();
    assert_eq!(dependents.len(), 2, "{dependents:?}");
    drop(served);

    // --show-secrets: the owner of the passphrase sees the values.
    let shown = serve(&sandbox, &["--show-secrets"]);
    let stack = shown.api("stack", &p);
    assert_eq!(
        stack["outputs"]["key"],
        json!({"$secret": true, "value": API_KEY})
    );
}

#[test]
fn console_lists_every_project_on_postgres() {
    let db = shared().fresh_database();
    let mut sandboxes = Vec::new();
    for project in ["alpha", "beta"] {
        let sandbox = program_stack(project, &test_wasm("program-probe"), &[&test_wasm("probe")]);
        sandbox.use_backend(&db.url);
        sandbox.secret(&db.password);
        sandbox.ok(&["stack", "init", "dev"]);
        sandbox.ok(&["config", "set", "count", "2"]);
        sandbox.ok(&["config", "set", "sleepMs", "0"]);
        sandbox.ok(&["up", "--yes"]);
        sandboxes.push(sandbox);
    }
    let served = serve(&sandboxes[0], &[]);
    let stacks = served.api("stacks", &[]);
    let names: Vec<String> = stacks["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}/{} {}",
                s["project"].as_str().unwrap(),
                s["stack"].as_str().unwrap(),
                s["resourceCount"]
            )
        })
        .collect();
    assert_eq!(names, ["alpha/dev 4", "beta/dev 4"]);
    assert!(!stacks.to_string().contains(&db.password));
    let graph = served.api("graph", &[("project", "beta"), ("stack", "dev")]);
    assert_eq!(graph["nodes"].as_array().unwrap().len(), 4);
}

#[test]
fn console_in_chromium_shows_the_graph_a_diff_a_masked_secret_and_a_live_update() {
    let sandbox = console_stack();
    let served = serve(&sandbox, &[]);
    let browser = Browser::start(sandbox.root());

    // The stack list.
    browser.goto(&served.url);
    browser.wait_for_text("#stacks td", "dev");
    assert!(
        browser.eval("return location.search;", vec![]) == json!(""),
        "the token left the address bar"
    );
    browser.screenshot("stacks");

    // The resource tree: the markup resource is text, and did not become an element.
    browser.click("#stacks a");
    browser.wait_for_text("#tree .name", "group");
    browser.wait_for_text("#tree .name", MARKUP);
    assert_eq!(
        browser.count("img[src=x]"),
        0,
        "markup from the state became an element"
    );
    assert_eq!(
        browser.eval("return document.body.dataset.pwned || null;", vec![]),
        Value::Null
    );

    // Open the group and select `keyed`: its secret input is masked.
    browser.click("#tree [data-urn$='prog:index:Group::group'] .toggle");
    browser.wait_for_text("#tree .name", "keyed");
    browser.click("#tree [data-urn$='::keyed']");
    browser.wait_for_text("#details-name", "keyed");
    browser.wait_for_text("#details .secret", "[secret]");
    assert!(!browser.text().contains(API_KEY));
    browser.screenshot("resources");

    // The graph: every resource drawn; selecting `base` lists what depends on it.
    browser.click("#tab-graph");
    browser.wait_until("the graph's nodes", |b| b.count("#graph .node") == 6);
    assert!(browser.count("#graph .edge.dependency") >= 2);
    browser.click("#graph .node[data-urn$='::base']");
    browser.wait_for_text("#dependents", "keyed");
    browser.click("#zoom-in");
    browser.screenshot("graph");

    // Outputs and configuration: secrets masked.
    browser.click("#tab-config");
    browser.wait_for_text("#config .secret", "[secret]");
    browser.click("#tab-outputs");
    browser.wait_for_text(".props .secret", "[secret]");
    assert!(!browser.text().contains(API_KEY));

    // History: the second update's diff and timeline.
    browser.click("#tab-history");
    browser.wait_for_text("#history td", "bigger <b>size</b>");
    browser.click("#history tbody tr:first-child a");
    browser.wait_for_text("#steps .diff-update th", "size");
    assert!(browser.count("#timeline .bar") >= 1);
    browser.screenshot("update");
    assert_eq!(
        browser.eval("return document.body.dataset.pwned || null;", vec![]),
        Value::Null
    );
}

#[test]
fn console_follows_a_running_up_live_in_chromium() {
    let program = test_wasm("program-probe");
    let (sandbox, gates) = gate_stack_of(&format!(
        "name: prog\nruntime: wasm\nmain: {}\n",
        program.to_str().unwrap()
    ));
    sandbox.ok(&["config", "set", "mode", "gates"]);
    // The stack needs a deployment to show: create both gates once, then replace nothing.
    touch(&gates.join("first.open"));
    touch(&gates.join("second.open"));
    sandbox.ok(&["up", "--yes"]);
    std::fs::remove_file(gates.join("first.open")).unwrap();
    std::fs::remove_file(gates.join("second.open")).unwrap();
    // Destroy and create again: `first` then waits at its gate in the background `up`.
    sandbox.ok(&["destroy", "--yes"]);
    std::fs::remove_file(gates.join("first.entered")).unwrap();

    let served = serve(&sandbox, &[]);
    let browser = Browser::start(sandbox.root());
    let mut up = Background::spawn(sandbox.command(&["up", "--yes"]), sandbox.root(), "up");
    up.wait_for("the create of `first` in flight", START, || {
        gates.join("first.entered").exists()
    });

    browser.goto(&served.url);
    browser.wait_for_text("#stacks .badge.live", "update running");
    browser.click("#stacks a");
    browser.wait_for_text("#live-summary", "1 running");
    browser.screenshot("live-running");

    // `first` finishes; `second` (which depends on it) starts: the view advances.
    touch(&gates.join("first.open"));
    browser.wait_for_text("#live-recent", "first");
    touch(&gates.join("second.open"));
    up.wait(START);
    browser.wait_for_text("#live-done", "The update finished");
    // The page shows the stack as the update left it.
    browser.wait_for_text("#tree .name", "second");
    browser.screenshot("live-done");
}

#[test]
fn console_open_hands_the_url_to_the_browser() {
    let sandbox = Sandbox::new("prog");
    let opened = sandbox.root().join("opened");
    let browser = sandbox.write(
        "fake-browser",
        &format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", opened.display()),
    );
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut command = sandbox.command(&["console", "--port", "0", "--open"]);
    command.env("BROWSER", &browser);
    let mut console = Background::spawn(command, sandbox.root(), "console");
    console.wait_for("the browser to be started", START, || {
        std::fs::read_to_string(&opened).is_ok_and(|url| url.contains("?token="))
    });
    let url = std::fs::read_to_string(&opened).unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(
        process_line(&process_stdout(&sandbox), "http://127.0.0.1:"),
        url
    );
}
