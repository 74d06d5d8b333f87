//! The console's answers for a large stack: a 10,000-resource stack (100 components of 99
//! resources, each depending on the one before it) in a directory backend, served by the real
//! server on loopback; each page's API call timed over HTTP (the first call, then the median of
//! 5), plus whole-graph layouts of 1,000, 3,000 and 10,000 resources.
//!
//! `cargo bench -p cairn-console --bench console [-- RESOURCES]`

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use cairn_backend::Backend;
use cairn_console::{Console, Options, layout};
use cairn_engine::state::graph::{EdgeKinds, ResourceGraph};
use cairn_engine::state::{DeploymentV3, Manifest, Resource, ResourceV3};
use cairn_engine::urn::Urn;
use serde_json::json;

fn urn(path: &str, name: &str) -> Urn {
    format!("urn:pulumi:dev::bench::{path}::{name}")
        .parse()
        .expect("urn")
}

/// A stack of `count` resources: the stack, components of 99 children each, each child
/// depending on its predecessor, with a few inputs and outputs.
fn deployment(count: usize) -> DeploymentV3 {
    let stack = urn("pulumi:pulumi:Stack", "bench-dev");
    let mut resources: Vec<ResourceV3> = vec![Resource::new(
        stack.clone(),
        "pulumi:pulumi:Stack".parse().expect("type"),
        false,
    )];
    let mut previous: Option<Urn> = None;
    let mut component = stack.clone();
    for i in 1..count {
        if i % 100 == 1 {
            component = urn("bench:index:Group", &format!("group-{i}"));
            let mut group: ResourceV3 = Resource::new(
                component.clone(),
                "bench:index:Group".parse().expect("type"),
                false,
            );
            group.parent = Some(stack.clone());
            resources.push(group);
            previous = None;
            continue;
        }
        let this = urn("bench:index:Group$bench:index:Thing", &format!("thing-{i}"));
        let mut thing: ResourceV3 = Resource::new(
            this.clone(),
            "bench:index:Thing".parse().expect("type"),
            true,
        );
        thing.id = Some(format!("id-{i}"));
        thing.parent = Some(component.clone());
        let inputs = json!({"size": i, "name": format!("thing-{i}"), "tags": {"team": "bench"}});
        thing.inputs = inputs.as_object().cloned().unwrap_or_default();
        thing.outputs = thing.inputs.clone();
        if let Some(before) = previous.take() {
            thing.dependencies = vec![before];
        }
        previous = Some(this);
        resources.push(thing);
    }
    DeploymentV3 {
        manifest: Manifest::new(),
        secrets_providers: None,
        resources,
        pending_operations: Vec::new(),
        extra: Default::default(),
    }
}

fn get(port: u16, cookie: &str, path: &str) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{path}: {}",
        String::from_utf8_lossy(&answer[..200.min(answer.len())])
    );
    answer.len()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", dir.path().display());
    let backend = Backend::from_url(&url, dir.path()).expect("backend");
    let lock = backend.lock("bench", "dev", "bench").expect("lock");
    backend
        .create(&lock, "bench", "dev", deployment(count))
        .expect("seed");
    drop(lock);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let console = runtime.block_on(Console::bind(0)).expect("bind");
    let port = console.address().port();
    let token = console
        .url()
        .rsplit('=')
        .next()
        .unwrap_or_default()
        .to_owned();
    let cookie = format!("cairn-console={token}");
    runtime.spawn(console.serve(backend, Options::default()));

    let focus = "urn:pulumi:dev::bench::bench:index:Group$bench:index:Thing::thing-5050";
    let encoded: String = focus
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let pages = [
        ("stack list", "/api/stacks".to_owned()),
        (
            "stack (resource list)",
            "/api/stack?project=bench&stack=dev".to_owned(),
        ),
        (
            "graph around the stack",
            "/api/graph?project=bench&stack=dev".to_owned(),
        ),
        (
            "graph around a resource",
            format!("/api/graph?project=bench&stack=dev&focus={encoded}"),
        ),
        (
            "one resource",
            format!("/api/resource?project=bench&stack=dev&urn={encoded}"),
        ),
        ("history", "/api/history?project=bench&stack=dev".to_owned()),
    ];
    println!(
        "console answers for a {count}-resource stack: the first call, then the median of 5 more"
    );
    for (what, path) in &pages {
        // The server reuses a stack it read less than two seconds ago: the first call of a
        // page after a pause reads and indexes the stack, the next ones do not.
        std::thread::sleep(Duration::from_millis(2_100));
        let started = Instant::now();
        let bytes = get(port, &cookie, path);
        let first = started.elapsed();
        let times = (0..5)
            .map(|_| {
                let started = Instant::now();
                get(port, &cookie, path);
                started.elapsed()
            })
            .collect();
        println!(
            "  {what:<26} {:>8.1} ms first, {:>7.1} ms then  {:>9} bytes",
            first.as_secs_f64() * 1000.0,
            median(times).as_secs_f64() * 1000.0,
            bytes
        );
    }

    // Whole graphs: the console's limit, and what `stack graph --format svg` lays out.
    for whole in [layout::WHOLE_GRAPH_LIMIT, 3_000, 10_000] {
        let graph = ResourceGraph::of(&deployment(whole).resources, EdgeKinds::default());
        let every: Vec<usize> = (0..graph.nodes.len()).collect();
        let started = Instant::now();
        let scene = layout::lay_out(&graph, &every, |urn| urn.name().to_owned());
        println!(
            "  layout of a whole {whole}-resource graph: {:.1} ms ({} boxes, {} edges)",
            started.elapsed().as_secs_f64() * 1000.0,
            scene.nodes.len(),
            scene.edges.len()
        );
    }
}
