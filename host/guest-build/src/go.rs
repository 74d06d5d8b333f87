//! Go guests (a directory with `go.mod`), built with the machine's Go and made components in
//! process, so a user needs Go and nothing else.
//!
//! Go 1.26 has no `wasip2` target, so the module is built as a WASI preview1 reactor
//! (`GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`, exports by `//go:wasmexport`) and
//! made a component here with `wit-component`: the world's metadata embedded, then the
//! preview1 adapter of the wasmtime release the host runs
//! (`wasi-preview1-component-adapter-provider`) put in front of its WASI imports.
//!
//! The SDK (guest-sdk/go, module [`SDK_MODULE`]) is embedded in `cairn` and written to
//! `$CAIRN_HOME/sdk/go-<hash>`; the build resolves it there without the network: `go.mod` is
//! copied next to the build's output with the SDK replaced by that directory (`go mod edit`),
//! and `go build -modfile` builds the user's directory with it, so the user's files are never
//! touched. The user's other dependencies come from the Go proxy as for any Go build.
//!
//! Go's own build cache (`GOCACHE`) stays the user's default: it is content-addressed, safe for
//! concurrent builds, trimmed by Go itself, and shared with the user's other Go builds (the
//! standard library compiled for wasip1 once for every project). Only when Go has none (no
//! home directory to put it in) does the build use one among Cairn's toolchains.
//!
//! Before it becomes a component the core module gets two additions:
//! * the adapter allocates its state and stack through the main module before Go's runtime has
//!   started, when no Go function may run. The SDK reserves a region for them in its data (an
//!   array that starts with [`ADAPTER_MARKER`]); the build finds it and adds
//!   `cabi_realloc_adapter`, a few instructions that allocate from it, which `wit-component`
//!   hands the adapter instead of the Go `cabi_realloc` (the SDK's `internal/abi` package has
//!   the Go side);
//! * a provider's manifest (`cairn.json`, with `version` and `wit` filled in when absent) goes
//!   into a `cairn:manifest` custom section of the core module, where the Rust SDK puts it.
//!
//! Built components are cached ([`crate::Cache`]), keyed by the directory's files, the SDK and
//! the Go version: a dependency replaced by a directory outside the module is not part of the
//! key (edit a file of the module to build again).
//!
//! # A Go guest never runs its collector while the host allocates in it
//!
//! A Go guest never runs its collector while the host allocates in it cabi_realloc serves an arena,
//! automatic collection is on only while the user's code runs, and the WASI adapter allocates from
//! a reserved region, never through Go (wasmtime issue 14318).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use wasm_encoder::{Encode, RawSection, Section};
use wasmparser::{DataKind, ExternalKind, Operator, Parser, Payload, TypeRef};

use crate::{BuildError, Builder, Cache, Result, World, files_hash, io, unpack};

/// The Go module path of the SDK.
pub const SDK_MODULE: &str = "cairn.invalid/sdk";

/// The oldest Go that builds guests: `//go:wasmexport` and `-buildmode=c-shared` for wasip1
/// arrived in Go 1.24.
pub const MIN_GO: (u32, u32) = (1, 24);

/// What the SDK's adapter region starts with (guest-sdk/go/internal/abi).
pub const ADAPTER_MARKER: &[u8] = b"cairn:wasi-adapter-region:7f3a9c";
/// Bytes of the region before its allocations: the marker, then the allocator's offset (u32).
const ADAPTER_HEADER: u32 = 64;
/// The region's size (`AdapterRegionSize` in the SDK).
const ADAPTER_REGION_SIZE: u32 = 192 << 10;
// The adapter's state and stack (64 KiB each, 8-aligned) fit in the region after its header.
const _: () = assert!(ADAPTER_REGION_SIZE - ADAPTER_HEADER >= 2 * (64 << 10) + 16);

/// The version a manifest without one gets (`DefaultVersion` in the SDK's provider package).
pub const DEFAULT_VERSION: &str = "0.0.0";
/// The `cairn:deploy` WIT version the SDK implements.
const WIT_VERSION: &str = "0.3.0";
/// The custom section holding a provider's manifest.
const MANIFEST_SECTION: &str = "cairn:manifest";

/// Changes when this build's output would change for the same sources and Go (it keys the
/// cache).
const BUILD_REVISION: &str = "go-build-1";

/// The Go SDK's files and the WIT, as embedded: (path under the SDK directory, contents).
const GO_SDK: &[(&str, &str)] = &[
    ("go.mod", include_str!("../../../guest-sdk/go/go.mod")),
    ("blob.go", include_str!("../../../guest-sdk/go/blob.go")),
    ("check.go", include_str!("../../../guest-sdk/go/check.go")),
    ("codec.go", include_str!("../../../guest-sdk/go/codec.go")),
    ("log.go", include_str!("../../../guest-sdk/go/log.go")),
    (
        "log_other.go",
        include_str!("../../../guest-sdk/go/log_other.go"),
    ),
    (
        "log_wasip1.go",
        include_str!("../../../guest-sdk/go/log_wasip1.go"),
    ),
    ("path.go", include_str!("../../../guest-sdk/go/path.go")),
    (
        "properties.go",
        include_str!("../../../guest-sdk/go/properties.go"),
    ),
    (
        "propertymap.go",
        include_str!("../../../guest-sdk/go/propertymap.go"),
    ),
    ("urn.go", include_str!("../../../guest-sdk/go/urn.go")),
    ("value.go", include_str!("../../../guest-sdk/go/value.go")),
    (
        "internal/abi/abi.go",
        include_str!("../../../guest-sdk/go/internal/abi/abi.go"),
    ),
    (
        "internal/abi/arena_wasip1.go",
        include_str!("../../../guest-sdk/go/internal/abi/arena_wasip1.go"),
    ),
    (
        "internal/abi/gc_other.go",
        include_str!("../../../guest-sdk/go/internal/abi/gc_other.go"),
    ),
    (
        "internal/abi/gc_wasip1.go",
        include_str!("../../../guest-sdk/go/internal/abi/gc_wasip1.go"),
    ),
    (
        "internal/abi/mem_wasip1.go",
        include_str!("../../../guest-sdk/go/internal/abi/mem_wasip1.go"),
    ),
    (
        "internal/wire/validate.go",
        include_str!("../../../guest-sdk/go/internal/wire/validate.go"),
    ),
    (
        "internal/wire/wire.go",
        include_str!("../../../guest-sdk/go/internal/wire/wire.go"),
    ),
    (
        "program/context.go",
        include_str!("../../../guest-sdk/go/program/context.go"),
    ),
    (
        "program/doc.go",
        include_str!("../../../guest-sdk/go/program/doc.go"),
    ),
    (
        "program/host_wasip1.go",
        include_str!("../../../guest-sdk/go/program/host_wasip1.go"),
    ),
    (
        "program/output.go",
        include_str!("../../../guest-sdk/go/program/output.go"),
    ),
    (
        "program/resource.go",
        include_str!("../../../guest-sdk/go/program/resource.go"),
    ),
    (
        "program/runtime.go",
        include_str!("../../../guest-sdk/go/program/runtime.go"),
    ),
    (
        "provider/diff.go",
        include_str!("../../../guest-sdk/go/provider/diff.go"),
    ),
    (
        "provider/engine.go",
        include_str!("../../../guest-sdk/go/provider/engine.go"),
    ),
    (
        "provider/engine_other.go",
        include_str!("../../../guest-sdk/go/provider/engine_other.go"),
    ),
    (
        "provider/engine_wasip1.go",
        include_str!("../../../guest-sdk/go/provider/engine_wasip1.go"),
    ),
    (
        "provider/errors.go",
        include_str!("../../../guest-sdk/go/provider/errors.go"),
    ),
    (
        "provider/export.go",
        include_str!("../../../guest-sdk/go/provider/export.go"),
    ),
    (
        "provider/glue_wasip1.go",
        include_str!("../../../guest-sdk/go/provider/glue_wasip1.go"),
    ),
    (
        "provider/provider.go",
        include_str!("../../../guest-sdk/go/provider/provider.go"),
    ),
    (
        "provider/requests.go",
        include_str!("../../../guest-sdk/go/provider/requests.go"),
    ),
];

/// The WIT package `cairn:deploy`, whose worlds the components implement.
const WIT: &[(&str, &str)] = &[
    ("provider.wit", include_str!("../../../wit/provider.wit")),
    ("program.wit", include_str!("../../../wit/program.wit")),
    ("policy.wit", include_str!("../../../wit/policy.wit")),
];

/// Builds the Go module in `dir` (its root package, `package main`) into a component of
/// `world`.
pub fn build(builder: &Builder, dir: &Path, world: World) -> Result<PathBuf> {
    let go = go_binary();
    let toolchain = go_toolchain(&go)?;
    let sdk_hash = files_hash(GO_SDK, BUILD_REVISION);
    let cache = Cache::new(
        builder,
        "go",
        dir,
        &[
            sdk_hash.as_bytes(),
            toolchain.version.as_bytes(),
            world.wit_name().as_bytes(),
        ],
    )?;
    if let Some(hit) = cache.hit() {
        return Ok(hit);
    }
    let manifest = match world {
        World::Provider => Some(manifest(dir)?),
        World::Program => None,
    };
    let sdk = builder
        .home
        .join("sdk")
        .join(format!("go-{}", &sdk_hash[..16]));
    unpack(&sdk, GO_SDK, "go.mod")?;
    builder.tell(&format!(
        "Building the {} ({}) with {} (wasip1) and the Go SDK…",
        world.noun(),
        dir.display(),
        toolchain.version
    ));

    let partial = cache.partial()?;
    let work = partial.with_extension("work");
    std::fs::create_dir_all(&work).map_err(io("creating", &work))?;
    let built = compile(builder, &go, &toolchain, dir, &sdk, &work, world);
    let core = built.and_then(|core| std::fs::read(&core).map_err(io("reading", &core)));
    let _ = std::fs::remove_dir_all(&work);
    let component = componentize(&core?, world, manifest.as_deref()).map_err(|e| {
        BuildError::Failed(format!(
            "making the Go {} in {} a component: {e}",
            world.noun(),
            dir.display()
        ))
    })?;
    std::fs::write(&partial, component).map_err(io("writing", &partial))?;
    cache.commit(&partial)
}

/// The Go command: `CAIRN_GO` when set (a Go elsewhere than on PATH), else `go`.
fn go_binary() -> OsString {
    std::env::var_os("CAIRN_GO").unwrap_or_else(|| "go".into())
}

/// What the build needs to know of the machine's Go.
#[derive(Debug)]
struct Toolchain {
    /// `go1.26.8`
    version: String,
    /// Whether Go has a build cache of its own (`go env GOCACHE` names one).
    has_cache: bool,
}

/// The machine's Go, checked: present, and at least [`MIN_GO`].
fn go_toolchain(go: &OsStr) -> Result<Toolchain> {
    let wanted = format!("Go {}.{} or newer", MIN_GO.0, MIN_GO.1);
    let output = Command::new(go)
        .args(["env", "GOVERSION", "GOCACHE"])
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            BuildError::Toolchain(format!(
                "running {}: {e} (Go guests need {wanted}: install it from https://go.dev/dl/ and put `go` on PATH)",
                go.to_string_lossy()
            ))
        })?;
    if !output.status.success() {
        return Err(BuildError::Toolchain(format!(
            "`{} env GOVERSION` failed: {} (Go guests need {wanted})",
            go.to_string_lossy(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let version = lines.next().unwrap_or_default().trim().to_owned();
    let cache = lines.next().unwrap_or_default().trim();
    match go_release(&version) {
        Some(release) if release >= MIN_GO => {}
        _ => {
            return Err(BuildError::Toolchain(format!(
                "Go guests need {wanted}; {} is {}: install a newer one from https://go.dev/dl/",
                go.to_string_lossy(),
                if version.is_empty() {
                    "of an unknown version"
                } else {
                    &version
                }
            )));
        }
    }
    Ok(Toolchain {
        version,
        has_cache: !cache.is_empty() && cache != "off",
    })
}

/// The release (major, minor) of a `GOVERSION` (`go1.26.8`, `go1.24rc1`); a development build
/// (`devel go1.27-abcdef`) counts as its release.
fn go_release(version: &str) -> Option<(u32, u32)> {
    let at = version.find("go1.")?;
    let rest = &version[at + 2..];
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `go build`s the module in `dir` with the SDK at `sdk` into `work/core.wasm`.
fn compile(
    builder: &Builder,
    go: &OsStr,
    toolchain: &Toolchain,
    dir: &Path,
    sdk: &Path,
    work: &Path,
    world: World,
) -> Result<PathBuf> {
    let go_mod = dir.join("go.mod");
    let modfile = work.join("go.mod");
    std::fs::copy(&go_mod, &modfile).map_err(io("copying", &go_mod))?;
    let go_sum = dir.join("go.sum");
    if go_sum.is_file() {
        std::fs::copy(&go_sum, work.join("go.sum")).map_err(io("copying", &go_sum))?;
    }
    let sdk = sdk.canonicalize().map_err(io("resolving", sdk))?;
    let mut edit = go_command(builder, go, toolchain);
    edit.arg("mod")
        .arg("edit")
        .arg(format!("-dropreplace={SDK_MODULE}"))
        .arg(format!("-replace={SDK_MODULE}={}", sdk.display()))
        // Required (at any version: the replacement decides), so `go build` need not add it.
        .arg(format!("-require={SDK_MODULE}@v0.0.0"))
        .arg(&modfile);
    run(&mut edit, "go mod edit", dir, world)?;

    let core = work.join("core.wasm");
    let mut build = go_command(builder, go, toolchain);
    build
        .arg("build")
        .arg("-C")
        .arg(dir)
        .arg(format!("-modfile={}", modfile.display()))
        // The SDK's requirement is added to the copy; the user's missing dependencies are
        // downloaded (from the Go proxy) into Go's module cache.
        .arg("-mod=mod")
        .arg("-buildmode=c-shared")
        .arg("-trimpath")
        .arg("-o")
        .arg(&core)
        .arg(".");
    run(&mut build, "go build", dir, world)?;
    Ok(core)
}

/// A `go` command for a wasip1 build, untouched by the user's build settings that would
/// change what is built (a `go.work` above the module, `GOFLAGS`).
fn go_command(builder: &Builder, go: &OsStr, toolchain: &Toolchain) -> Command {
    let mut command = Command::new(go);
    command
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("CGO_ENABLED", "0")
        .env("GOWORK", "off")
        .env_remove("GOFLAGS")
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    if !toolchain.has_cache {
        command.env("GOCACHE", builder.toolchains.join("go-build-cache"));
    }
    command
}

fn run(command: &mut Command, what: &str, dir: &Path, world: World) -> Result<()> {
    let status = command
        .status()
        .map_err(|e| BuildError::Toolchain(format!("running {what}: {e}")))?;
    if !status.success() {
        return Err(BuildError::Failed(format!(
            "building the Go {} in {} failed: {what} exited with {status} (see Go's messages above)",
            world.noun(),
            dir.display()
        )));
    }
    Ok(())
}

/// The provider's manifest as the `cairn:manifest` section holds it: `cairn.json` with
/// `version` ([`DEFAULT_VERSION`]) and `wit` filled in when absent.
fn manifest(dir: &Path) -> Result<Vec<u8>> {
    let path = dir.join("cairn.json");
    let text = std::fs::read(&path).map_err(io("reading", &path))?;
    let json: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| BuildError::Failed(format!("{}: not valid JSON: {e}", path.display())))?;
    let serde_json::Value::Object(mut object) = json else {
        return Err(BuildError::Failed(format!(
            "{}: the manifest must be a JSON object",
            path.display()
        )));
    };
    if !object.get("name").is_some_and(serde_json::Value::is_string) {
        return Err(BuildError::Failed(format!(
            "{}: the manifest has no \"name\"",
            path.display()
        )));
    }
    object
        .entry("version")
        .or_insert_with(|| DEFAULT_VERSION.into());
    object.entry("wit").or_insert_with(|| WIT_VERSION.into());
    serde_json::to_vec(&object).map_err(|e| BuildError::Failed(format!("{}: {e}", path.display())))
}

/// Why a core module could not be made a component (a Go module not built with the SDK, or a
/// module `wit-component` refuses).
#[derive(Debug, thiserror::Error)]
pub enum ComponentError {
    #[error("the module is not valid WebAssembly: {0}")]
    Parse(#[from] wasmparser::BinaryReaderError),
    #[error(
        "found the Go SDK's adapter region {0} times (expected once: is the module built with the Go SDK?)"
    )]
    AdapterRegion(usize),
    #[error("the embedded WIT does not parse: {0}")]
    Wit(String),
    /// `wit-component` refused the module (its message chain).
    #[error("{0}")]
    Encode(String),
}

/// `wit-component` reports with `anyhow`: its whole chain of causes, in one line.
fn encode_error(e: impl std::fmt::Display) -> ComponentError {
    ComponentError::Encode(format!("{e:#}"))
}

/// Makes the Go SDK's core module a component of `world`: the adapter's allocator added, the
/// manifest (providers) and the world's metadata embedded, the preview1 adapter applied.
pub fn componentize(
    core: &[u8],
    world: World,
    manifest: Option<&[u8]>,
) -> std::result::Result<Vec<u8>, ComponentError> {
    let region = adapter_region(core)?;
    let mut module = with_adapter_realloc(core, region)?;
    if let Some(manifest) = manifest {
        wasm_encoder::CustomSection {
            name: MANIFEST_SECTION.into(),
            data: manifest.into(),
        }
        .append_to(&mut module);
    }
    let mut resolve = wit_parser::Resolve::default();
    let mut sources = wit_parser::SourceMap::default();
    for (name, text) in WIT {
        sources.push_str(name, *text);
    }
    let group = sources
        .parse()
        .map_err(|(_, e)| ComponentError::Wit(e.to_string()))?;
    let package = resolve
        .push_group(group)
        .map_err(|e| ComponentError::Wit(e.to_string()))?;
    let world_id = resolve
        .select_world(&[package], Some(world.wit_name()))
        .map_err(|e| ComponentError::Wit(format!("{e:#}")))?;
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world_id,
        wit_component::StringEncoding::UTF8,
    )
    .map_err(encode_error)?;
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .map_err(encode_error)?
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .map_err(encode_error)?
        .encode()
        .map_err(encode_error)
}

/// The address of the SDK's adapter region: where [`ADAPTER_MARKER`] is in the module's
/// active data (exactly once).
fn adapter_region(core: &[u8]) -> std::result::Result<u32, ComponentError> {
    let mut found = Vec::new();
    for payload in Parser::new(0).parse_all(core) {
        let Payload::DataSection(reader) = payload? else {
            continue;
        };
        for data in reader {
            let data = data?;
            let DataKind::Active { offset_expr, .. } = data.kind else {
                continue;
            };
            let Some(Ok(Operator::I32Const { value })) =
                offset_expr.get_operators_reader().into_iter().next()
            else {
                continue;
            };
            let mut from = 0;
            while let Some(at) = find(&data.data[from..], ADAPTER_MARKER) {
                found.push((value as u32).wrapping_add((from + at) as u32));
                from += at + 1;
            }
        }
    }
    match found[..] {
        [address] => Ok(address),
        _ => Err(ComponentError::AdapterRegion(found.len())),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The module with one more function exported as `cabi_realloc_adapter`: a bump allocator in
/// the adapter region at `region` (fresh allocations only, as the adapter makes them; a
/// request that does not fit traps). Sections are copied as they are, with one entry appended
/// to the type, function, export and code sections: new entries at the end shift no index.
fn with_adapter_realloc(core: &[u8], region: u32) -> std::result::Result<Vec<u8>, ComponentError> {
    let mut out = Vec::with_capacity(core.len() + 256);
    out.extend_from_slice(&[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    let mut types = 0u32;
    let mut imported_functions = 0u32;
    let mut functions = 0u32;
    for payload in Parser::new(0).parse_all(core) {
        let payload = payload?;
        let Some((id, range)) = payload.as_section() else {
            continue;
        };
        let data = &core[range];
        let appended = match &payload {
            Payload::TypeSection(reader) => {
                types = reader.count();
                // (func (param i32 i32 i32 i32) (result i32))
                Some(vec![0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f])
            }
            Payload::ImportSection(reader) => {
                for import in reader.clone().into_imports() {
                    if matches!(import?.ty, TypeRef::Func(_) | TypeRef::FuncExact(_)) {
                        imported_functions += 1;
                    }
                }
                None
            }
            Payload::FunctionSection(reader) => {
                functions = reader.count();
                let mut entry = Vec::new();
                types.encode(&mut entry);
                Some(entry)
            }
            Payload::ExportSection(_) => {
                let mut entry = Vec::new();
                "cabi_realloc_adapter".encode(&mut entry);
                entry.push(ExternalKind::Func as u8);
                (imported_functions + functions).encode(&mut entry);
                Some(entry)
            }
            Payload::CodeSectionStart { .. } => {
                let body = adapter_realloc_body(region);
                let mut entry = Vec::new();
                body.encode(&mut entry);
                Some(entry)
            }
            _ => None,
        };
        let data = match appended {
            Some(entry) => append_entry(data, &entry)?,
            None => data.to_vec(),
        };
        RawSection { id, data: &data }.append_to(&mut out);
    }
    Ok(out)
}

/// A vector section's contents (a count, then the entries) with one more entry.
fn append_entry(section: &[u8], entry: &[u8]) -> std::result::Result<Vec<u8>, ComponentError> {
    let mut reader = wasmparser::BinaryReader::new(section, 0);
    let count = reader.read_var_u32()?;
    let rest = &section[reader.current_position()..];
    let mut out = Vec::with_capacity(section.len() + entry.len() + 5);
    (count + 1).encode(&mut out);
    out.extend_from_slice(rest);
    out.extend_from_slice(entry);
    Ok(out)
}

/// `cabi_realloc_adapter(old, old_len, align, new_len) -> ptr`: `align_up(start + used, align)`
/// where `used` is kept after the marker, trapping on a reallocation or when the region is full.
fn adapter_realloc_body(region: u32) -> wasm_encoder::Function {
    use wasm_encoder::{Instruction as I, MemArg, ValType};
    let start = region + ADAPTER_HEADER;
    let end = region + ADAPTER_REGION_SIZE;
    let used = MemArg {
        offset: u64::from(region) + ADAPTER_MARKER.len() as u64,
        align: 0,
        memory_index: 0,
    };
    // Locals 4 and 5: the allocation and its end.
    let mut f = wasm_encoder::Function::new([(2, ValType::I32)]);
    let (old, align, len, p, stop) = (0, 2, 3, 4, 5);
    for i in [
        I::LocalGet(old),
        I::If(wasm_encoder::BlockType::Empty),
        I::Unreachable,
        I::End,
        // p = (start + used + align - 1) & -align
        I::I32Const(start as i32),
        I::I32Const(0),
        I::I32Load(used),
        I::I32Add,
        I::LocalGet(align),
        I::I32Add,
        I::I32Const(1),
        I::I32Sub,
        I::I32Const(0),
        I::LocalGet(align),
        I::I32Sub,
        I::I32And,
        I::LocalTee(p),
        I::LocalGet(len),
        I::I32Add,
        I::LocalTee(stop),
        I::I32Const(end as i32),
        I::I32GtU,
        I::If(wasm_encoder::BlockType::Empty),
        I::Unreachable,
        I::End,
        // used = stop - start
        I::I32Const(0),
        I::LocalGet(stop),
        I::I32Const(start as i32),
        I::I32Sub,
        I::I32Store(used),
        I::LocalGet(p),
        I::End,
    ] {
        f.instruction(&i);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_releases_are_read_from_goversion() {
        for (version, expected) in [
            ("go1.26.8", Some((1, 26))),
            ("go1.24rc1", Some((1, 24))),
            ("go1.24", Some((1, 24))),
            ("devel go1.27-0a1b2c3 Mon Jan 1", Some((1, 27))),
            ("go1.9.7", Some((1, 9))),
            ("", None),
            ("gccgo", None),
        ] {
            assert_eq!(go_release(version), expected, "{version}");
        }
    }

    /// A fake `go` (a shell script printing `output` for `go env …`) in a temporary directory.
    fn fake_go(dir: &Path, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("go");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_missing_or_old_go_is_named_with_what_is_needed() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (None, "Go guests need Go 1.24 or newer"),
            (Some("echo go1.21.13; echo /tmp/cache"), "go1.21.13"),
            (Some("echo; echo"), "of an unknown version"),
            (Some("echo broken >&2; exit 3"), "broken"),
        ];
        for (script, expected) in cases {
            let go = match script {
                Some(script) => fake_go(dir.path(), script),
                None => dir.path().join("no-such-go"),
            };
            let err = go_toolchain(go.as_os_str()).unwrap_err().to_string();
            assert!(err.contains(expected), "{script:?}: {err}");
            assert!(err.contains("1.24"), "{script:?}: {err}");
        }
        let go = fake_go(dir.path(), "echo go1.26.8; echo off");
        let toolchain = go_toolchain(go.as_os_str()).unwrap();
        assert_eq!(toolchain.version, "go1.26.8");
        assert!(!toolchain.has_cache, "GOCACHE=off is no cache");
    }

    /// Every Go file of guest-sdk/go (tests and docs aside) is embedded: a file added to the SDK
    /// but not here would be missing from every build.
    #[test]
    fn every_sdk_file_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk/go");
        let mut on_disk = Vec::new();
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, out);
                    continue;
                }
                let name = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if (name.ends_with(".go") && !name.ends_with("_test.go")) || name == "go.mod" {
                    out.push(name);
                }
            }
        }
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = GO_SDK.iter().map(|(p, _)| (*p).to_owned()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
    }

    /// The region the build hands the adapter is the one the SDK reserves: the marker, the
    /// header and the size are the Go constants' (a mismatch would let the adapter write past
    /// the array).
    #[test]
    fn the_adapter_region_matches_the_sdk() {
        let (_, arena) = GO_SDK
            .iter()
            .find(|(path, _)| *path == "internal/abi/arena_wasip1.go")
            .expect("the SDK's arena");
        let constant = |name: &str| {
            let line = arena
                .lines()
                .find(|l| l.trim_start().starts_with(name) && l.contains('='))
                .unwrap_or_else(|| panic!("no {name} in arena_wasip1.go"));
            line.split('=').nth(1).unwrap().trim().to_owned()
        };
        assert_eq!(
            constant("AdapterMarker"),
            format!("\"{}\"", String::from_utf8_lossy(ADAPTER_MARKER))
        );
        assert_eq!(constant("AdapterHeader"), ADAPTER_HEADER.to_string());
        assert_eq!(
            constant("AdapterRegionSize"),
            format!("{} << 10", ADAPTER_REGION_SIZE >> 10)
        );
        // The array's initialiser spells the marker out, byte by byte.
        let spelled: String = arena
            .split("var adapterRegion")
            .nth(1)
            .unwrap()
            .split('}')
            .next()
            .unwrap()
            .split('\'')
            .skip(1)
            .step_by(2)
            .collect();
        assert_eq!(spelled.as_bytes(), ADAPTER_MARKER);
    }

    #[test]
    fn manifests_get_a_version_and_the_wit_version_when_absent() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                r#"{"name": "x"}"#,
                Ok(r#"{"name":"x","version":"0.0.0","wit":"0.3.0"}"#),
            ),
            (
                r#"{"name": "x", "version": "1.2.3", "wit": "0.3.0"}"#,
                Ok(r#"{"name":"x","version":"1.2.3","wit":"0.3.0"}"#),
            ),
            (r#"{"version": "1.0.0"}"#, Err("has no \"name\"")),
            ("[1]", Err("must be a JSON object")),
            ("{", Err("not valid JSON")),
        ];
        for (text, expected) in cases {
            std::fs::write(dir.path().join("cairn.json"), text).unwrap();
            match (manifest(dir.path()), expected) {
                (Ok(bytes), Ok(json)) => assert_eq!(String::from_utf8(bytes).unwrap(), json),
                (Err(e), Err(message)) => assert!(e.to_string().contains(message), "{e}"),
                (got, want) => panic!("{text}: {got:?}, expected {want:?}"),
            }
        }
    }

    /// A module with data holding the marker: the region is found, the allocator added and
    /// exported after the existing functions, and the result validates.
    #[test]
    fn the_adapter_allocator_is_added_over_the_marked_region() {
        let marker: String = ADAPTER_MARKER
            .iter()
            .map(|b| format!("\\{b:02x}"))
            .collect();
        let wat = format!(
            r#"(module
                (import "env" "f" (func $f))
                (memory 4)
                (func $g (export "g") call $f)
                (data (i32.const 1000) "padding")
                (data (i32.const 4096) "{marker}"))"#
        );
        let core = wat::parse_str(&wat).unwrap();
        assert_eq!(adapter_region(&core).unwrap(), 4096);
        let module = with_adapter_realloc(&core, 4096).unwrap();
        wasmparser::Validator::new().validate_all(&module).unwrap();
        let exports: Vec<(String, u32)> = Parser::new(0)
            .parse_all(&module)
            .filter_map(|p| match p.unwrap() {
                Payload::ExportSection(r) => Some(
                    r.into_iter()
                        .map(|e| e.unwrap())
                        .map(|e| (e.name.to_owned(), e.index))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(
            exports,
            [("g".to_owned(), 1), ("cabi_realloc_adapter".to_owned(), 2)]
        );

        // No marker, or two: not a module built with the SDK.
        for data in ["", &format!("{marker}{marker}")] {
            let wat = format!(r#"(module (memory 1) (data (i32.const 8) "{data}x"))"#);
            let core = wat::parse_str(&wat).unwrap();
            assert!(matches!(
                adapter_region(&core),
                Err(ComponentError::AdapterRegion(_))
            ));
        }
    }
}
