//! Compile once: a second runtime with the same cache directory loads the artifact instead of
//! compiling, and the loaded component works.

use cairn_engine::deploy::provider::Provider;
use cairn_engine::value::PropertyMap;
use cairn_wasm::{CompileStats, PackageGrant, RuntimeOptions, WasmRuntime};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_load_does_not_recompile() {
    let cache = tempfile::tempdir().unwrap();
    let options = || RuntimeOptions {
        cache_dir: Some(cache.path().to_owned()),
        pool_size: None,
    };
    let plugin = plugin("random");

    let first = WasmRuntime::new(options()).unwrap();
    first.prepare(&plugin).unwrap();
    assert_eq!(
        first.stats(),
        CompileStats {
            compiled: 1,
            loaded_from_cache: 0,
            reused: 0
        }
    );
    let artifact = first.cache_path(&plugin).unwrap();
    assert!(artifact.is_file());
    let name = artifact.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("{}-", plugin.sha256())) && name.ends_with(".cwasm"),
        "{name}"
    );
    // Within one runtime, a prepared component is reused.
    first.prepare(&plugin).unwrap();
    assert_eq!(first.stats().reused, 1);
    assert_eq!(first.stats().compiled, 1);

    // A new runtime (a new process, say) loads the artifact: no compilation.
    let second = WasmRuntime::new(options()).unwrap();
    let logs = Logs::default();
    let p = second
        .instantiate(&plugin, &PackageGrant::default(), logs.sink())
        .unwrap();
    assert_eq!(
        second.stats(),
        CompileStats {
            compiled: 0,
            loaded_from_cache: 1,
            reused: 0
        }
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    let created = p
        .create(create(
            "random:index:RandomUuid",
            "u",
            serde_json::json!({}),
        ))
        .await
        .unwrap();
    assert_eq!(created.id.len(), 36);

    // A corrupt artifact is ignored and replaced, not trusted. (Replaced by rename, as the cache
    // itself does: the loaded artifact above is memory-mapped and must not change in place.)
    let corrupt = cache.path().join("corrupt.tmp");
    std::fs::write(&corrupt, b"not an artifact").unwrap();
    std::fs::rename(&corrupt, &artifact).unwrap();
    let third = WasmRuntime::new(options()).unwrap();
    third.prepare(&plugin).unwrap();
    assert_eq!(third.stats().compiled, 1);
    let fourth = WasmRuntime::new(options()).unwrap();
    fourth.prepare(&plugin).unwrap();
    assert_eq!(fourth.stats().loaded_from_cache, 1);
}

#[test]
fn files_that_are_not_providers_are_refused_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.wasm");
    std::fs::write(&path, b"\0asm junk").unwrap();
    let err = cairn_wasm::WasmPlugin::from_file(&path)
        .unwrap_err()
        .to_string();
    assert_contains(
        &err,
        &[&path.display().to_string(), "not a WebAssembly file"],
    );
    let err = cairn_wasm::WasmPlugin::from_file(dir.path().join("missing.wasm"))
        .unwrap_err()
        .to_string();
    assert_contains(&err, &["reading provider", "missing.wasm"]);

    // A component with a manifest but without the provider interface compiles, but is not a
    // provider.
    let component = wat::parse_str(
        r#"(component (core module (@custom "cairn:manifest" "{\"name\":\"empty\",\"version\":\"1.0.0\",\"wit\":\"0.3.0\"}")))"#,
    )
    .unwrap();
    let plugin = cairn_wasm::WasmPlugin::from_bytes(component).unwrap();
    let err = runtime().prepare(&plugin).unwrap_err().to_string();
    assert_contains(
        &err,
        &[
            "empty@1.0.0",
            "is not a usable Cairn provider",
            "cairn:deploy/provider",
        ],
    );
}
