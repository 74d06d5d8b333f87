//! TypeScript and JavaScript guests (a directory with `package.json`), built with the
//! TypeScript SDK (guest-sdk/typescript) into components run by QuickJS (componentize-qjs).
//!
//! The SDK and the WIT are embedded in `cairn` and written to `$CAIRN_HOME/sdk/typescript-<hash>`.
//! The Node.js toolchain — componentize-qjs, esbuild and TypeScript at pinned versions, and the
//! WASI WIT files of a pinned jco — is installed with the machine's npm on first use among the
//! toolchains ([`crate::Builder::toolchain`]). A build type-checks the guest with `tsc`,
//! bundles it with the SDK into one ES module with esbuild, and componentizes that for the
//! world (`typescript-provider` / `typescript-program`, guest-sdk/typescript/wit); a provider's
//! manifest (`cairn.json`) goes into the `cairn:manifest` custom section. Built components are
//! cached ([`crate::Cache`]).
//!
//! Why QuickJS and not StarlingMonkey (componentize-js) is measured in
//! guest-sdk/typescript/README.md: a 2 MB component whose linear memory stays flat over
//! 100,000 calls, against 16.6 MB and a growing heap.
//!
//! HTTP: the worlds import wasi:http (with the wasi:io and wasi:clocks it uses) under other
//! package names, which componentize-qjs can build, and the finished component gets the WASI
//! names back ([`crate::wasi_copies`], where the reason is).
//!
//! Promises: componentize-qjs's sync runtime never runs QuickJS's promise jobs inside a call,
//! so the SDK brings its own `Promise` (guest-sdk/typescript/src/promise.ts), installed as the
//! global before any guest module runs (the entry imports `install.ts` first), and esbuild
//! lowers `async` / `await`, async generators and `for await` to generators whose helpers use
//! the global `Promise`. Top-level `await` cannot be lowered (a module would never finish
//! evaluating): the build refuses it, naming the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{BuildError, Builder, Cache, Result, World, files_hash, io, unpack, wasi_copies};

/// The npm packages of the toolchain, exact versions.
pub const COMPONENTIZE_QJS: &str = "componentize-qjs@0.4.5";
pub const ESBUILD: &str = "esbuild@0.28.2";
pub const TYPESCRIPT: &str = "typescript@7.0.2";
/// Only its WASI 0.2.12 WIT files are used (the version QuickJS's runtime imports); the
/// package is fetched with `npm pack`, not installed.
pub const JCO: &str = "@bytecodealliance/jco@1.35.0";
/// Where those WIT files are inside jco's package.
const JCO_WASI_WIT: &str = "package/lib/wit/builtin/0.2.12";

/// The WIT version the manifest states when it does not say (wit/provider.wit's package).
const WIT_VERSION: &str = "0.3.0";
/// The custom section holding a provider's manifest (as the Rust and Python SDKs write it).
const SECTION: &str = "cairn:manifest";

/// The SDK's files and the WIT, as embedded: (path under the SDK directory, contents).
const TYPESCRIPT_SDK: &[(&str, &str)] = &[
    (
        "package.json",
        include_str!("../../../guest-sdk/typescript/package.json"),
    ),
    (
        "tsconfig.json",
        include_str!("../../../guest-sdk/typescript/tsconfig.json"),
    ),
    (
        "src/check.ts",
        include_str!("../../../guest-sdk/typescript/src/check.ts"),
    ),
    (
        "src/engine.ts",
        include_str!("../../../guest-sdk/typescript/src/engine.ts"),
    ),
    (
        "src/http.ts",
        include_str!("../../../guest-sdk/typescript/src/http.ts"),
    ),
    (
        "src/index.ts",
        include_str!("../../../guest-sdk/typescript/src/index.ts"),
    ),
    (
        "src/install.ts",
        include_str!("../../../guest-sdk/typescript/src/install.ts"),
    ),
    (
        "src/log.ts",
        include_str!("../../../guest-sdk/typescript/src/log.ts"),
    ),
    (
        "src/output.ts",
        include_str!("../../../guest-sdk/typescript/src/output.ts"),
    ),
    (
        "src/program.ts",
        include_str!("../../../guest-sdk/typescript/src/program.ts"),
    ),
    (
        "src/promise.ts",
        include_str!("../../../guest-sdk/typescript/src/promise.ts"),
    ),
    (
        "src/provider.ts",
        include_str!("../../../guest-sdk/typescript/src/provider.ts"),
    ),
    (
        "src/values.ts",
        include_str!("../../../guest-sdk/typescript/src/values.ts"),
    ),
    (
        "src/wasi.ts",
        include_str!("../../../guest-sdk/typescript/src/wasi.ts"),
    ),
    (
        "src/wasi-http.d.ts",
        include_str!("../../../guest-sdk/typescript/src/wasi-http.d.ts"),
    ),
    (
        "src/wit.d.ts",
        include_str!("../../../guest-sdk/typescript/src/wit.d.ts"),
    ),
    (
        "wit/typescript.wit",
        include_str!("../../../guest-sdk/typescript/wit/typescript.wit"),
    ),
    (
        "wit/provider.wit",
        include_str!("../../../wit/provider.wit"),
    ),
    ("wit/program.wit", include_str!("../../../wit/program.wit")),
];

/// esbuild's settings for the SDK's promises: async functions, async generators and `for
/// await` lowered to generators (their helpers make promises with the global `Promise`, the
/// SDK's); top-level `await` refused, as nothing could ever resume it.
const LOWER_ASYNC: &[&str] = &[
    "--supported:async-await=false",
    "--supported:async-generator=false",
    "--supported:for-await=false",
    "--supported:top-level-await=false",
];

/// The files a guest's entry module may be, in order, when `package.json` names no `main`.
const ENTRIES: &[&str] = &[
    "index.ts",
    "src/index.ts",
    "main.ts",
    "index.js",
    "src/index.js",
];

/// Builds the TypeScript (or JavaScript) guest in `dir` into a component of `world`.
pub fn build(builder: &Builder, dir: &Path, world: World) -> Result<PathBuf> {
    let pins = [
        COMPONENTIZE_QJS,
        ESBUILD,
        TYPESCRIPT,
        JCO,
        wasi_copies::SCHEME,
    ]
    .join(" ");
    let sdk_hash = files_hash(TYPESCRIPT_SDK, &pins);
    let cache = Cache::new(
        builder,
        "typescript",
        dir,
        &[sdk_hash.as_bytes(), world.wit_name().as_bytes()],
    )?;
    if let Some(hit) = cache.hit() {
        return Ok(hit);
    }
    let package = read_json(&dir.join("package.json"))?;
    let entry = entry(dir, &package)?;
    let manifest = match world {
        World::Provider => Some(manifest(dir, &package)?),
        World::Program => None,
    };
    let sdk = builder
        .home
        .join("sdk")
        .join(format!("typescript-{}", &sdk_hash[..16]));
    unpack(&sdk, TYPESCRIPT_SDK, "src/index.ts")?;
    let tools = toolchain(builder)?;
    builder.tell(&format!(
        "Building the {} ({}) with the TypeScript SDK and componentize-qjs…",
        world.noun(),
        dir.display()
    ));

    let partial = cache.partial()?;
    let work = cache
        .out
        .with_extension(format!("build-{}", std::process::id()));
    let built = (|| {
        prepare(&work, &sdk, &tools, &entry, world)?;
        let failed = |what: &str, out: &Output| {
            BuildError::Failed(format!(
                "building the TypeScript {} in {} failed: {what}:\n{}",
                world.noun(),
                dir.display(),
                tool_output(out)
            ))
        };
        let out = run(
            Command::new(tools.join("node_modules/.bin/tsc"))
                .arg("-p")
                .arg(work.join("tsconfig.json"))
                .current_dir(&work),
            "tsc",
        )?;
        if !out.status.success() {
            return Err(failed("the type check found errors", &out));
        }
        let define = serde_json::to_string(manifest.as_deref().unwrap_or("{}"))
            .map_err(|e| BuildError::Failed(format!("encoding the manifest: {e}")))?;
        let out = run(
            Command::new(tools.join("node_modules/.bin/esbuild"))
                .arg(work.join("entry.ts"))
                .args([
                    "--bundle",
                    "--format=esm",
                    "--platform=neutral",
                    "--target=es2023",
                    "--main-fields=module,main",
                    "--log-level=warning",
                    "--external:cairn:*",
                    "--external:wasi:*",
                ])
                .args(LOWER_ASYNC)
                .arg(format!(
                    "--alias:cairn-sdk={}",
                    sdk.join("src/index.ts").display()
                ))
                .arg(format!("--define:__CAIRN_MANIFEST__={define}"))
                .arg(format!("--outfile={}", work.join("bundle.js").display()))
                .current_dir(dir),
            "esbuild",
        )?;
        if !out.status.success() {
            if tool_output(&out).contains("Top-level await is not available") {
                return Err(failed(
                    "bundling failed: top-level `await` cannot run in a component (module code runs once, when the component is built, where nothing can resume it): move it into an async function — the program's `main` or a provider method",
                    &out,
                ));
            }
            return Err(failed("bundling failed", &out));
        }
        let out = run(
            Command::new(tools.join("node_modules/.bin/componentize-qjs"))
                .arg("--wit")
                .arg(work.join("wit"))
                .arg("--world")
                .arg(guest_world(world))
                .arg("--js")
                .arg(work.join("bundle.js"))
                .arg("--sync")
                .arg("-o")
                .arg(&partial)
                .current_dir(&work),
            "componentize-qjs",
        )?;
        if !out.status.success() || !partial.is_file() {
            return Err(failed("componentize-qjs failed", &out));
        }
        // The guest imported wasi:http under the build's names (see `prepare`).
        wasi_copies::restore_names_in(&partial)?;
        if let Some(manifest) = &manifest {
            append_section(&partial, SECTION, manifest.as_bytes())?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&work);
    if let Err(e) = built {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    cache.commit(&partial)
}

/// The world a TypeScript guest is componentized for (guest-sdk/typescript/wit).
fn guest_world(world: World) -> &'static str {
    match world {
        World::Provider => "typescript-provider",
        World::Program => "typescript-program",
    }
}

/// Runs a tool, capturing what it says (shown only when it fails).
fn run(command: &mut Command, tool: &str) -> Result<Output> {
    command.output().map_err(|e| {
        BuildError::Toolchain(format!(
            "running {tool}: {e} (TypeScript guests need Node.js 20 or newer on PATH)"
        ))
    })
}

/// A tool's stdout and stderr, as text.
fn tool_output(out: &Output) -> String {
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text.trim_end().to_owned()
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(io("reading", path))?;
    serde_json::from_str(&text)
        .map_err(|e| BuildError::Failed(format!("{} is not valid JSON: {e}", path.display())))
}

/// The guest's entry module: `package.json`'s `main`, else the first of [`ENTRIES`] there is.
fn entry(dir: &Path, package: &serde_json::Value) -> Result<PathBuf> {
    if let Some(main) = package.get("main").and_then(serde_json::Value::as_str) {
        let path = dir.join(main);
        if !path.is_file() {
            return Err(BuildError::Failed(format!(
                "{}: its main, {main}, does not exist",
                dir.join("package.json").display()
            )));
        }
        return Ok(path);
    }
    ENTRIES
        .iter()
        .map(|e| dir.join(e))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            BuildError::Failed(format!(
                "{} has no entry module: name it under `main` in package.json, or write index.ts",
                dir.display()
            ))
        })
}

/// The provider's manifest as the section holds it: `cairn.json` with `version` (from
/// `package.json` when absent) and `wit` filled in, compact, its key order kept.
fn manifest(dir: &Path, package: &serde_json::Value) -> Result<String> {
    let path = dir.join("cairn.json");
    let mut manifest = match read_json(&path)? {
        serde_json::Value::Object(map) => map,
        _ => {
            return Err(BuildError::Failed(format!(
                "{}: the manifest must be a JSON object",
                path.display()
            )));
        }
    };
    if !manifest
        .get("name")
        .is_some_and(serde_json::Value::is_string)
    {
        return Err(BuildError::Failed(format!(
            "{}: the manifest must name the provider (\"name\")",
            path.display()
        )));
    }
    if !manifest.contains_key("version") {
        match package.get("version").and_then(serde_json::Value::as_str) {
            Some(version) => {
                manifest.insert("version".into(), version.into());
            }
            None => {
                return Err(BuildError::Failed(format!(
                    "{}: the manifest states no version, and package.json has none either",
                    path.display()
                )));
            }
        }
    }
    if !manifest
        .get("version")
        .is_some_and(serde_json::Value::is_string)
    {
        return Err(BuildError::Failed(format!(
            "{}: the provider's version must be a string",
            path.display()
        )));
    }
    manifest.entry("wit").or_insert_with(|| WIT_VERSION.into());
    serde_json::to_string(&manifest)
        .map_err(|e| BuildError::Failed(format!("encoding {}: {e}", path.display())))
}

/// Writes the build directory: the entry module that exports the guest for its world, the
/// type checker's configuration, and the WIT (the SDK's worlds and the toolchain's WASI).
fn prepare(work: &Path, sdk: &Path, tools: &Path, entry: &Path, world: World) -> Result<()> {
    if work.exists() {
        std::fs::remove_dir_all(work).map_err(io("removing", work))?;
    }
    let wit = work.join("wit");
    std::fs::create_dir_all(wit.join("deps")).map_err(io("creating", &wit))?;
    for file in ["provider.wit", "program.wit", "typescript.wit"] {
        let from = sdk.join("wit").join(file);
        std::fs::copy(&from, wit.join(file)).map_err(io("copying", &from))?;
    }
    copy_dir(&tools.join("wasi-wit"), &wit.join("deps"))?;
    // wasi:http, wasi:io and wasi:clocks again under other names, which the SDK's worlds import
    // for HTTP: componentize-qjs cannot build a guest importing wasi:http as such.
    wasi_copies::write_copies(&tools.join("wasi-wit"), &wit.join("deps"))?;

    // Imported without their extension: both tsc and esbuild resolve `.ts` and `.js`.
    let quoted = |path: &Path| {
        serde_json::to_string(&path.with_extension("").to_string_lossy())
            .map_err(|e| BuildError::Failed(format!("encoding a path: {e}")))
    };
    let module = quoted(entry)?;
    // First, so that the SDK's `Promise` is the global before any of the guest's modules runs.
    let install = quoted(&sdk.join("src/install.ts"))?;
    let glue = match world {
        World::Provider => format!(
            "// Generated by cairn: the component exports the guest's provider.\n\
             import {install};\n\
             import guest from {module};\n\
             import {{ exportProvider }} from \"cairn-sdk\";\n\
             export const provider = exportProvider(guest);\n"
        ),
        World::Program => format!(
            "// Generated by cairn: the component's `run` runs the guest's main function.\n\
             import {install};\n\
             import main from {module};\n\
             import {{ exportProgram }} from \"cairn-sdk\";\n\
             export const run = exportProgram(main);\n"
        ),
    };
    let glue_path = work.join("entry.ts");
    std::fs::write(&glue_path, glue).map_err(io("writing", &glue_path))?;

    let tsconfig = serde_json::json!({
        "compilerOptions": {
            "strict": true,
            "noEmit": true,
            "target": "es2023",
            "module": "es2022",
            "moduleResolution": "bundler",
            "lib": ["es2023", "esnext.disposable"],
            "types": [],
            "skipLibCheck": true,
            "allowJs": true,
            "paths": { "cairn-sdk": [sdk.join("src/index.ts")] },
        },
        "files": [sdk.join("src/wit.d.ts"), glue_path],
    });
    let path = work.join("tsconfig.json");
    std::fs::write(&path, tsconfig.to_string()).map_err(io("writing", &path))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(io("creating", to))?;
    for entry in std::fs::read_dir(from).map_err(io("listing", from))? {
        let entry = entry.map_err(io("listing", from))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(io("reading", &path))?.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            std::fs::copy(&path, &target).map_err(io("copying", &path))?;
        }
    }
    Ok(())
}

/// Appends a custom section to a wasm file (a component's top level).
fn append_section(file: &Path, name: &str, payload: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let bytes = section(name, payload);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .map_err(io("opening", file))?;
    f.write_all(&bytes).map_err(io("writing", file))
}

/// A custom section: id 0, its size, then the name (length-prefixed) and the payload.
fn section(name: &str, payload: &[u8]) -> Vec<u8> {
    let mut body = leb128(name.len() as u64);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    let mut out = vec![0u8];
    out.extend(leb128(body.len() as u64));
    out.extend(body);
    out
}

fn leb128(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// The toolchain directory (`node_modules` with componentize-qjs, esbuild and TypeScript;
/// `wasi-wit` with the WASI WIT), installed with npm on first use.
fn toolchain(builder: &Builder) -> Result<PathBuf> {
    let name = format!(
        "node-{}-{}-{}-wasi-0.2.12",
        COMPONENTIZE_QJS.replace('@', "-"),
        ESBUILD.replace('@', "-"),
        TYPESCRIPT.replace('@', "-")
    );
    builder.toolchain(&name, |dir| {
        builder.tell(&format!(
            "Installing {COMPONENTIZE_QJS}, {ESBUILD} and {TYPESCRIPT} into {} (first use)…",
            builder.toolchains.join(&name).display()
        ));
        let package = serde_json::json!({
            "name": "cairn-typescript-toolchain",
            "private": true,
            "dependencies": dependencies(),
        });
        let path = dir.join("package.json");
        std::fs::write(&path, package.to_string()).map_err(io("writing", &path))?;
        npm(
            dir,
            &[
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
            ],
            "installing the TypeScript toolchain from the npm registry",
        )?;
        npm(
            dir,
            &["pack", "--loglevel=error", JCO],
            "fetching jco's WASI WIT files from the npm registry",
        )?;
        let tarball = std::fs::read_dir(dir)
            .map_err(io("listing", dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|e| e == "tgz"))
            .ok_or_else(|| BuildError::Toolchain(format!("npm pack {JCO} wrote no tarball")))?;
        let unpacked = dir.join("jco");
        std::fs::create_dir_all(&unpacked).map_err(io("creating", &unpacked))?;
        let out = Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(&unpacked)
            .arg(JCO_WASI_WIT)
            .output()
            .map_err(|e| BuildError::Toolchain(format!("running tar: {e}")))?;
        if !out.status.success() {
            return Err(BuildError::Toolchain(format!(
                "unpacking {JCO}'s WIT files failed: {}",
                tool_output(&out)
            )));
        }
        let from = unpacked.join(JCO_WASI_WIT);
        let to = dir.join("wasi-wit");
        std::fs::rename(&from, &to).map_err(io("moving", &from))?;
        std::fs::remove_dir_all(&unpacked).map_err(io("removing", &unpacked))?;
        std::fs::remove_file(&tarball).map_err(io("removing", &tarball))?;
        for tool in ["tsc", "esbuild", "componentize-qjs"] {
            let bin = dir.join("node_modules/.bin").join(tool);
            if !bin.exists() {
                return Err(BuildError::Toolchain(format!(
                    "the TypeScript toolchain has no {tool} after npm install ({})",
                    bin.display()
                )));
            }
        }
        Ok(())
    })
}

/// The toolchain's `package.json` dependencies: each pin as name → exact version.
fn dependencies() -> serde_json::Map<String, serde_json::Value> {
    [COMPONENTIZE_QJS, ESBUILD, TYPESCRIPT]
        .iter()
        .filter_map(|pin| pin.rsplit_once('@'))
        .map(|(name, version)| (name.to_owned(), version.into()))
        .collect()
}

/// Runs npm in `dir`; a missing npm or a failed command is a toolchain error saying what to do.
fn npm(dir: &Path, args: &[&str], what: &str) -> Result<()> {
    let out = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| {
            BuildError::Toolchain(format!(
                "{what}: running npm: {e} (TypeScript guests need Node.js 20 or newer with npm: install nodejs and npm)"
            ))
        })?;
    if !out.status.success() {
        return Err(BuildError::Toolchain(format!(
            "{what} failed (npm {}):\n{}",
            args.join(" "),
            tool_output(&out)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_leb128() {
        for (n, bytes) in [
            (0u64, vec![0u8]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (624_485, vec![0xe5, 0x8e, 0x26]),
        ] {
            assert_eq!(leb128(n), bytes, "{n}");
        }
        let s = section("ab", b"xyz");
        assert_eq!(s, [0, 6, 2, b'a', b'b', b'x', b'y', b'z']);
    }

    #[test]
    fn pins_become_exact_dependencies() {
        let deps = dependencies();
        assert_eq!(deps["componentize-qjs"], "0.4.5");
        assert_eq!(deps["esbuild"], "0.28.2");
        assert_eq!(deps["typescript"], "7.0.2");
        assert_eq!(deps.len(), 3);
    }

    /// What a manifest becomes: data-driven (cairn.json, package.json, expected section or
    /// the start of the error).
    #[test]
    fn manifests() {
        let cases: &[(&str, &str, std::result::Result<&str, &str>)] = &[
            (
                r#"{"name": "a", "version": "1.0.0"}"#,
                "{}",
                Ok(r#"{"name":"a","version":"1.0.0","wit":"0.3.0"}"#),
            ),
            (
                r#"{"wit": "0.3.0", "name": "a", "schema": {"z": 1, "a": 2}}"#,
                r#"{"version": "2.1.0"}"#,
                Ok(r#"{"wit":"0.3.0","name":"a","schema":{"z":1,"a":2},"version":"2.1.0"}"#),
            ),
            (r#"{"name": "a"}"#, "{}", Err("states no version")),
            (
                r#"{"version": "1.0.0"}"#,
                "{}",
                Err("must name the provider"),
            ),
            (r#"["a"]"#, "{}", Err("must be a JSON object")),
            (
                r#"{"name": "a", "version": 1}"#,
                "{}",
                Err("must be a string"),
            ),
            (r#"{"name": "a""#, "{}", Err("is not valid JSON")),
        ];
        for (cairn, package, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("cairn.json"), cairn).unwrap();
            let package: serde_json::Value = serde_json::from_str(package).unwrap();
            match (manifest(dir.path(), &package), expected) {
                (Ok(text), Ok(want)) => assert_eq!(&text, want, "{cairn}"),
                (Err(e), Err(want)) => assert!(e.to_string().contains(want), "{cairn}: {e}"),
                (got, want) => panic!("{cairn}: got {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn entries() {
        let dir = tempfile::tempdir().unwrap();
        let none = serde_json::json!({});
        assert!(entry(dir.path(), &none).is_err());
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/index.ts"), "").unwrap();
        assert_eq!(
            entry(dir.path(), &none).unwrap(),
            dir.path().join("src/index.ts")
        );
        std::fs::write(dir.path().join("index.ts"), "").unwrap();
        assert_eq!(
            entry(dir.path(), &none).unwrap(),
            dir.path().join("index.ts")
        );
        let named = serde_json::json!({"main": "app.js"});
        let err = entry(dir.path(), &named).unwrap_err().to_string();
        assert!(err.contains("app.js, does not exist"), "{err}");
        std::fs::write(dir.path().join("app.js"), "").unwrap();
        assert_eq!(
            entry(dir.path(), &named).unwrap(),
            dir.path().join("app.js")
        );
    }
}
