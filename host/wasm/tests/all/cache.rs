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
    // The artifact's code is mapped from the cache, not copied into the heap.
    #[cfg(target_os = "linux")]
    {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mapped = artifact.canonicalize().unwrap().display().to_string();
        assert!(maps.contains(&mapped), "{mapped} is not mapped:\n{maps}");
    }
    p.configure(PropertyMap::new(), false).await.unwrap();
    let created = p
        .create(create(
            "random:index/randomUuid:RandomUuid",
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

    // So are an artifact of the previous format (digest first) and one cut short.
    let code = std::fs::read(&artifact).unwrap();
    let (elf, trailer) = code.split_at(code.len() - 48);
    let mut older = b"cairn-cwasm-v1\0\0".to_vec();
    older.extend_from_slice(&trailer[..32]);
    older.extend_from_slice(elf);
    for bad in [older, code[..code.len() - 1].to_vec(), code[..20].to_vec()] {
        std::fs::write(&corrupt, bad).unwrap();
        std::fs::rename(&corrupt, &artifact).unwrap();
        let runtime = WasmRuntime::new(options()).unwrap();
        runtime.prepare(&plugin).unwrap();
        assert_eq!(runtime.stats().compiled, 1);
    }
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

/// A cached artifact is used only for the exact bytes it was compiled from: two artifacts
/// swapped in the cache directory (or one copied over another's name) are ignored and the
/// components recompiled, so each still runs its own code under its own manifest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_artifacts_are_recompiled_not_trusted() {
    let cache = tempfile::tempdir().unwrap();
    let options = || RuntimeOptions {
        cache_dir: Some(cache.path().to_owned()),
        pool_size: None,
    };
    let (random, probe) = (plugin("random"), plugin("probe"));
    let first = WasmRuntime::new(options()).unwrap();
    first.prepare(&random).unwrap();
    first.prepare(&probe).unwrap();
    let (a, b) = (
        first.cache_path(&random).unwrap(),
        first.cache_path(&probe).unwrap(),
    );
    let swap = cache.path().join("swap.tmp");
    std::fs::rename(&a, &swap).unwrap();
    std::fs::rename(&b, &a).unwrap();
    std::fs::rename(&swap, &b).unwrap();

    // Each component runs its own code: random makes a UUID, probe echoes its inputs.
    async fn check_both(runtime: &WasmRuntime) {
        let logs = Logs::default();
        let random = runtime
            .instantiate(&plugin("random"), &PackageGrant::default(), logs.sink())
            .unwrap();
        random.configure(PropertyMap::new(), false).await.unwrap();
        let uuid = random
            .create(create(
                "random:index/randomUuid:RandomUuid",
                "u",
                serde_json::json!({}),
            ))
            .await
            .unwrap();
        assert_eq!(uuid.id.len(), 36, "{uuid:?}");
        let probe = runtime
            .instantiate(&plugin("probe"), &PackageGrant::default(), logs.sink())
            .unwrap();
        probe.configure(PropertyMap::new(), false).await.unwrap();
        let thing = probe
            .create(create(
                "probe:index:Thing",
                "t",
                serde_json::json!({"x": 1}),
            ))
            .await
            .unwrap();
        assert_eq!(thing.id, "thing-t");
    }
    let second = WasmRuntime::new(options()).unwrap();
    check_both(&second).await;
    assert_eq!(
        second.stats(),
        CompileStats {
            compiled: 2,
            loaded_from_cache: 0,
            reused: 0
        }
    );

    // The artifacts were rewritten for their own bytes: a new runtime loads both.
    let third = WasmRuntime::new(options()).unwrap();
    check_both(&third).await;
    assert_eq!(third.stats().loaded_from_cache, 2);
    assert_eq!(third.stats().compiled, 0);

    // A copy under another's name is refused the same way.
    std::fs::copy(&a, cache.path().join("copy.tmp")).unwrap();
    std::fs::rename(cache.path().join("copy.tmp"), &b).unwrap();
    let fourth = WasmRuntime::new(options()).unwrap();
    check_both(&fourth).await;
    assert_eq!(fourth.stats().compiled, 1);
    assert_eq!(fourth.stats().loaded_from_cache, 1);
}

/// No guest may be granted a directory that shows the compile cache (whose artifacts are
/// native code) or another protected directory.
#[test]
fn grants_that_expose_the_cache_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache").join("wasm");
    let runtime = WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(cache.clone()),
        pool_size: None,
    })
    .unwrap();
    let store = home.path().join("plugins");
    std::fs::create_dir_all(&store).unwrap();
    runtime.protect(&store);
    let elsewhere = tempfile::tempdir().unwrap();
    let grant = |host: &std::path::Path| {
        cairn_wasm::Grants::parse(
            &serde_json::json!({"hostile-fs": {"directories": [
                {"host": elsewhere.path(), "guest": "/ok"},
                {"host": host, "guest": "/work", "write": true},
            ]}}),
            std::path::Path::new("/"),
        )
        .unwrap()
        .package("hostile-fs")
    };
    let logs = Logs::default();
    for (host, protected) in [
        (home.path().to_owned(), cache.clone()),
        (cache.join("..").join("wasm"), cache.clone()),
        (store.clone(), store.clone()),
    ] {
        let err = match runtime.instantiate(&plugin("hostile-fs"), &grant(&host), logs.sink()) {
            Ok(_) => panic!("{} was granted", host.display()),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            err,
            format!(
                "cairn:grants.hostile-fs.directories[1].host: {} would show Cairn's own files ({}) to the guest, which could then change the code other components run; grant a directory outside them",
                host.display(),
                protected.canonicalize().unwrap().display()
            )
        );
    }
    // A directory beside them is fine.
    runtime
        .instantiate(&plugin("hostile-fs"), &grant(elsewhere.path()), logs.sink())
        .unwrap();
}
