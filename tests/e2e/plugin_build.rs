//! `cairn plugin build`: a provider's source directory in any guest language built into a
//! component file, the same as `cairn up` builds it, then installed and inspected like any
//! other; a directory that is no provider source is named.

use crate::support::*;

#[test]
fn plugin_build_writes_a_component_that_installs() {
    let sandbox = Sandbox::new("plugin-build");
    for (dir, name) in [
        ("examples/providers/go-random", "random"),
        ("examples/providers/typescript-random", "random"),
    ] {
        let source = repo().join(dir);
        let out = sandbox
            .root()
            .join(format!("{}.wasm", dir.replace('/', "-")));
        let text = sandbox.ok(&[
            "plugin",
            "build",
            source.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_contains(&text, &["Built random@", "sha256", out.to_str().unwrap()]);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..4], b"\0asm", "{dir}: not a wasm file");
        let installed = sandbox.ok(&["plugin", "install", out.to_str().unwrap()]);
        assert_contains(&installed, &[&format!("Installed {name}@")]);
        let inspected = sandbox.ok(&["plugin", "inspect", out.to_str().unwrap()]);
        assert_contains(&inspected, &["random:index/randomInteger:RandomInteger"]);
    }

    // Without -o: NAME-VERSION.wasm in the current directory.
    let text = sandbox.ok(&[
        "plugin",
        "build",
        repo()
            .join("examples/providers/go-random")
            .to_str()
            .unwrap(),
    ]);
    assert_contains(&text, &["Built random@"]);
    let written: Vec<_> = std::fs::read_dir(&sandbox.project)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("random-") && n.ends_with(".wasm"))
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");

    // A directory that is not a provider's source is named, with what it lacks.
    std::fs::create_dir_all(sandbox.project.join("empty")).unwrap();
    let err = sandbox.fails(&["plugin", "build", "empty"]);
    assert_contains(
        &err,
        &[
            "empty",
            "is not a provider's source directory",
            "cairn.json",
        ],
    );
}
