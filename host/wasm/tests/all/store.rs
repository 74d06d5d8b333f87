//! The plugin store and the loader: install, list, inspect, lookup, remove; the engine's
//! `ProviderLoader` over the store and project-local files.

use cairn_engine::deploy::provider::{LoadError, NativePlugins, ProviderLoader};
use cairn_wasm::{Grants, PluginStore, WasmLoader, store::compatible};

use crate::support::*;

fn v(s: &str) -> semver::Version {
    semver::Version::parse(s).unwrap()
}

#[test]
fn install_list_inspect_lookup_remove() {
    let dir = tempfile::tempdir().unwrap();
    let store = PluginStore::new(dir.path().join("plugins")).with_runtime(runtime().clone());
    assert!(store.list().unwrap().is_empty());

    // What an install killed midway left (a process that no longer runs) is cleaned up by the
    // next install of the package; another process's work in progress is left alone.
    let abandoned = dir.path().join("plugins/random/.install-4000000000-0");
    std::fs::create_dir_all(&abandoned).unwrap();
    std::fs::write(abandoned.join("random-4.21.4.wasm"), b"\0asm half").unwrap();
    let live = dir
        .path()
        .join(format!("plugins/random/.install-{}-99", std::process::id()));
    std::fs::create_dir_all(&live).unwrap();
    let random = store.install(wasm("random")).unwrap();
    assert!(!abandoned.exists());
    assert!(live.exists());
    std::fs::remove_dir(&live).unwrap();
    assert_eq!(
        (random.name.as_str(), random.version.to_string().as_str()),
        ("random", "4.21.4")
    );
    assert_eq!(
        random.path,
        dir.path().join("plugins/random/4.21.4/random-4.21.4.wasm")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("plugins/random/4.21.4/sha256")).unwrap(),
        random.sha256
    );
    assert_eq!(random.sha256, plugin("random").sha256());
    // Installing the same file again changes nothing.
    assert_eq!(store.install(wasm("random")).unwrap(), random);
    let file = store.install(wasm("file")).unwrap();
    let names: Vec<String> = store
        .list()
        .unwrap()
        .iter()
        .map(|i| format!("{}@{}", i.name, i.version))
        .collect();
    assert_eq!(names, ["file@0.1.0", "random@4.21.4"]);

    // Inspect by name, by name@version and by path.
    let by_name = store.inspect("random").unwrap();
    assert_eq!(by_name.sha256, random.sha256);
    assert!(
        by_name
            .schema
            .resources
            .contains(&"random:index/randomString:RandomString".to_string())
    );
    assert_eq!(by_name.schema.resources.len(), 10);
    assert_eq!(store.inspect("random@4.21.4").unwrap().version, v("4.21.4"));
    let by_path = store.inspect(wasm("file").to_str().unwrap()).unwrap();
    assert_eq!(by_path.capabilities.directories[0].guest, "/work");
    assert!(by_path.capabilities.directories[0].write);
    assert!(matches!(
        store.inspect("nothing"),
        Err(cairn_wasm::WasmError::NotInstalled(_))
    ));

    // Lookup: compatible versions only.
    assert_eq!(
        store
            .lookup("random", Some(&compatible(&v("4.21.2"))))
            .unwrap(),
        Some(random.clone())
    );
    for newer_or_other_major in ["4.22.0", "5.0.0", "3.0.0"] {
        assert_eq!(
            store
                .lookup("random", Some(&compatible(&v(newer_or_other_major))))
                .unwrap(),
            None,
            "{newer_or_other_major}"
        );
    }
    assert_eq!(store.lookup("random", None).unwrap(), Some(random.clone()));

    // A file changed after installation is refused.
    std::fs::write(&file.path, b"tampered").unwrap();
    let err = store.load(&file).unwrap_err().to_string();
    assert!(
        err.contains("not a WebAssembly file") || err.contains("modified"),
        "{err}"
    );

    // Remove.
    assert_eq!(
        store.remove("random", Some(&v("4.21.4"))).unwrap(),
        vec![random]
    );
    assert!(!dir.path().join("plugins/random").exists());
    assert_eq!(store.remove("file", None).unwrap().len(), 1);
    assert!(store.list().unwrap().is_empty());
    assert!(store.remove("file", None).is_err());
}

#[test]
fn installing_something_that_is_not_a_provider_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = PluginStore::new(dir.path());
    let bogus = dir.path().join("bogus.wasm");
    std::fs::write(&bogus, wat::parse_str("(module)").unwrap()).unwrap();
    let err = store.install(&bogus).unwrap_err().to_string();
    assert!(err.contains("not a component"), "{err}");
    assert!(store.list().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loader_finds_local_plugins_then_installed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = PluginStore::new(dir.path()).with_runtime(runtime().clone());
    store.install(wasm("random")).unwrap();
    let loader = WasmLoader::new(runtime().clone(), Grants::none(), Logs::default().sink())
        .with_store(store)
        .with_local_plugin(wasm("probe"))
        .unwrap();

    let random = loader
        .load("random", Some(&v("4.21.2")), NativePlugins::ProjectNamed)
        .await
        .unwrap();
    assert_eq!(random.version(), Some(v("4.21.4")));
    let probe = loader
        .load("probe", None, NativePlugins::ProjectNamed)
        .await
        .unwrap();
    assert_eq!(probe.package(), "probe");
    let err = loader
        .load("random", Some(&v("5.0.0")), NativePlugins::ProjectNamed)
        .await
        .err()
        .unwrap();
    assert_eq!(
        err,
        LoadError::NotFound {
            package: "random".into(),
            version: Some("5.0.0".into())
        }
    );
    assert_eq!(
        err.to_string(),
        "no provider for package \"random\" compatible with version 5.0.0 is installed"
    );
    assert!(matches!(
        loader.load("aws", None, NativePlugins::ProjectNamed).await,
        Err(LoadError::NotFound { .. })
    ));
}
