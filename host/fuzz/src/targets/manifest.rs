//! Provider manifests (`host/wasm/src/manifest.rs`) and reading them from a component's custom
//! section (`host/wasm/src/plugin.rs`).

use cairn_fuzz_driver::{Outcome, Target};
use cairn_wasm::{Manifest, WasmPlugin};

const MANIFESTS: &[&str] = &[
    "examples/providers/file/cairn.json",
    "examples/providers/random/cairn.json",
    "tests/guests/hostile-memory/cairn.json",
    "tests/guests/hostile-loop/cairn.json",
    "tests/guests/hostile-env/cairn.json",
    "tests/guests/hostile-output/cairn.json",
    "tests/guests/hostile-fs/cairn.json",
    "tests/guests/hostile-net/cairn.json",
    "tests/guests/hostile-http/cairn.json",
    "tests/guests/lifecycle-test/cairn.json",
    "tests/guests/hostile-recursion/cairn.json",
    "host/wasm/tests/guest/cairn.json",
];

const DICTIONARY: &[&str] = &[
    "\"name\"",
    "\"version\"",
    "\"wit\"",
    "\"0.3.0\"",
    "\"capabilities\"",
    "\"http\"",
    "\"directories\"",
    "\"guest\"",
    "\"write\"",
    "\"env\"",
    "\"schema\"",
    "\"1.2.3-rc.1+b\"",
    "\"/work\"",
    "\"*.example.org\"",
    "\"[::1]:443\"",
    "null",
];

pub const MANIFEST: Target = Target {
    name: "manifest",
    about: "manifest JSON: what parses is valid (name, paths, hosts, WIT version) and re-serialises to the same manifest",
    run: run_manifest,
    seeds: manifest_seeds,
    dictionary: DICTIONARY,
    max_len: 2048,
};

pub const COMPONENT: Target = Target {
    name: "component",
    about: "the cairn:manifest custom section of a component (wasmparser over arbitrary bytes): found wherever it is nested, same manifest as the section alone",
    run: run_component,
    seeds: component_seeds,
    dictionary: &[
        "\u{0}asm",
        "\r\u{0}\u{1}\u{0}",
        "\u{1}\u{0}\u{0}\u{0}",
        "cairn:manifest",
        "\u{e}cairn:manifest",
    ],
    max_len: 4096,
};

/// The repository's `cairn.json` files, completed as the SDK's build embeds them (with the
/// crate's version and the WIT version), and as written.
fn manifest_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for file in crate::seed_files("manifest", MANIFESTS) {
        if let Ok(serde_json::Value::Object(mut m)) = serde_json::from_slice(&file) {
            m.entry("version").or_insert_with(|| "1.2.3".into());
            m.entry("wit").or_insert_with(|| "0.3.0".into());
            seeds.push(serde_json::Value::Object(m).to_string().into_bytes());
        }
        seeds.push(file);
    }
    seeds
}

fn run_manifest(data: &[u8]) -> Outcome {
    let parsed = Manifest::parse("fuzz.wasm", data);
    if let Ok(manifest) = &parsed {
        check_manifest(manifest);
        let json = serde_json::to_vec(manifest).unwrap_or_else(|e| panic!("{e}"));
        let again = Manifest::parse("fuzz.wasm", &json).unwrap_or_else(|e| {
            panic!(
                "a parsed manifest re-serialises to one that does not parse: {e}\n{}",
                String::from_utf8_lossy(&json)
            )
        });
        assert_eq!(&again, manifest, "manifest → JSON → manifest");
    }
    crate::outcome(&parsed)
}

fn check_manifest(m: &Manifest) {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    assert!(
        m.name.starts_with(|c: char| c.is_ascii_alphanumeric()) && m.name.chars().all(plain),
        "package name {:?} could escape the plugin store",
        m.name
    );
    assert!(m.name != "." && m.name != ".." && m.name.len() <= 128);
    let _ = m.id();
    for dir in &m.capabilities.directories {
        assert!(dir.guest.starts_with('/'));
        assert!(!dir.guest.split('/').any(|c| c == ".." || c == "."));
    }
}

fn component_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (i, manifest) in manifest_seeds().into_iter().enumerate() {
        seeds.push(component(&manifest, i % 3));
        // Structured: mode byte, layout byte, the manifest.
        let mut structured = vec![1, (i % 4) as u8];
        structured.extend(manifest);
        seeds.push(structured);
    }
    seeds
}

fn run_component(data: &[u8]) -> Outcome {
    if data.starts_with(b"\0asm") {
        return check_component(data, None);
    }
    let Some((&layout, section)) = data.get(1..).and_then(|d| d.split_first()) else {
        return Outcome::Rejected;
    };
    let bytes = component(section, usize::from(layout));
    check_component(&bytes, Some(section))
}

/// Reads the manifest of `bytes` both ways; with `section`, it must be that section's manifest.
fn check_component(bytes: &[u8], section: Option<&[u8]>) -> Outcome {
    let found = Manifest::from_component("fuzz.wasm", bytes);
    let plugin = WasmPlugin::from_bytes(bytes.to_vec());
    assert_eq!(
        found.as_ref().ok(),
        plugin.as_ref().ok().map(WasmPlugin::manifest),
        "Manifest::from_component and WasmPlugin::from_bytes disagree"
    );
    if let Some(section) = section {
        let alone = Manifest::parse("fuzz.wasm", section);
        assert_eq!(
            found.as_ref().ok(),
            alone.as_ref().ok(),
            "the manifest read from a component differs from its section's"
        );
    }
    if let Ok(m) = &found {
        check_manifest(m);
    }
    if let Ok(plugin) = &plugin {
        assert_eq!(plugin.sha256().len(), 64);
    }
    crate::outcome(&found)
}

/// A component holding `manifest` in a `cairn:manifest` section: at the top level (layout 0),
/// in a nested core module (1), twice identically (2), or after an empty section (3).
pub(crate) fn component(manifest: &[u8], layout: usize) -> Vec<u8> {
    let section = custom_section("cairn:manifest", manifest);
    let mut out = b"\0asm\x0d\x00\x01\x00".to_vec();
    match layout % 4 {
        0 => out.extend(&section),
        1 => {
            let mut module = b"\0asm\x01\x00\x00\x00".to_vec();
            module.extend(&section);
            out.push(1); // core module section
            leb(&mut out, module.len());
            out.extend(module);
        }
        2 => {
            out.extend(&section);
            out.extend(&section);
        }
        _ => {
            out.extend(custom_section("other", b""));
            out.extend(&section);
        }
    }
    out
}

fn custom_section(name: &str, data: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    leb(&mut body, name.len());
    body.extend(name.as_bytes());
    body.extend(data);
    let mut out = vec![0];
    leb(&mut out, body.len());
    out.extend(body);
    out
}

fn leb(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}
