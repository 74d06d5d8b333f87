//! WASI interfaces that a TypeScript guest imports under other names while componentize-qjs
//! builds it, and the rewrite that gives the built component back the WASI names.
//!
//! # Why
//!
//! componentize-qjs 0.4.5 runs the guest's top level once at build time (Wizer) in a wasmtime
//! linker it fills in two steps (`wizer_init` in its crates/core/src/lib.rs): first
//! `Linker::define_unknown_imports_as_traps`, which defines every import as a trap and every
//! imported resource as the same placeholder (`ResourceType::host::<()>()`), then
//! `wasmtime_wasi::p2::add_to_linker_async` with shadowing allowed, which replaces the WASI
//! interfaces wasmtime-wasi implements (wasi:io, wasi:clocks, wasi:filesystem, …) with the real
//! ones. An interface wasmtime-wasi does not implement keeps its placeholder resources. wasi:http
//! is such an interface, and its types `use` wasi:io's (`io-error` is wasi:io/error's `error`),
//! so the placeholder and the real resource meet in one type and instantiation fails:
//! "instance export `io-error` has the wrong type: mismatched resource types". Any interface
//! outside wasmtime-wasi that uses a wasi:io resource fails the same way.
//!
//! # The workaround
//!
//! The guest is built against copies ([`write_copies`]): `cairn:wasi-io`, `cairn:wasi-clocks` and
//! `cairn:wasi-http` are the toolchain's wasi:io, wasi:clocks and wasi:http with only the package
//! names changed. wasmtime-wasi shadows none of them, so all their placeholders agree and the
//! build's pre-initialisation links (it never calls them). [`restore_names`] then renames the
//! built component's imports of the copies back to WASI names: `cairn:wasi-http/types@0.2.12`
//! becomes `wasi:http/types@0.2.12`. Where the component already imports that name (the QuickJS
//! runtime imports wasi:io and wasi:clocks itself, often only some of their functions), the copy
//! keeps a name of its own by build metadata, `wasi:io/error@0.2.12+cairn-copy`, which a
//! semver-aware linker such as wasmtime's links to the same WASI implementation: the host's
//! wasi:io resources are one type whatever the import is called. So the host sees an ordinary
//! wasi:http guest and checks every request against the grants as it does a Rust guest's.
//!
//! Only import names change: no index moves, so the rest of the component is copied byte for
//! byte.

use std::collections::HashSet;
use std::path::Path;

use wasm_encoder::reencode::ReencodeComponent;
use wasmparser::{Parser, Payload};

use crate::{BuildError, Result, io};

/// The WASI packages that get copies, as `wasi:<name>`.
const COPIED: &[&str] = &["io", "clocks", "http"];

/// What a copy's package name starts with instead of `wasi:`.
const PREFIX: &str = "cairn:wasi-";

/// Names this scheme in the build cache's key: a change to it rebuilds every guest.
pub const SCHEME: &str = "wasi-copies/1 cairn:wasi-{io,clocks,http}";

/// Writes the copies of [`COPIED`] from the toolchain's WASI WIT (`wasi_wit/wasi-<name>/
/// package.wit`) into `deps` as `cairn-wasi-<name>/package.wit`.
pub fn write_copies(wasi_wit: &Path, deps: &Path) -> Result<()> {
    for name in COPIED {
        let from = wasi_wit.join(format!("wasi-{name}")).join("package.wit");
        let text = std::fs::read_to_string(&from).map_err(io("reading", &from))?;
        let dir = deps.join(format!("cairn-wasi-{name}"));
        std::fs::create_dir_all(&dir).map_err(io("creating", &dir))?;
        let to = dir.join("package.wit");
        std::fs::write(&to, copy_of(&text)).map_err(io("writing", &to))?;
    }
    Ok(())
}

/// A WIT package's text with every copied package renamed, in its `package` line and in the
/// interfaces it uses (`wasi:io/error@0.2.12` → `cairn:wasi-io/error@0.2.12`). Other WASI
/// packages keep their names: they are the real ones.
fn copy_of(wit: &str) -> String {
    let mut text = wit.to_owned();
    for name in COPIED {
        text = text
            .replace(
                &format!("package wasi:{name}@"),
                &format!("package {PREFIX}{name}@"),
            )
            .replace(&format!("wasi:{name}/"), &format!("{PREFIX}{name}/"));
    }
    text
}

/// The WASI name of an import of a copy (`cairn:wasi-http/types@0.2.12` →
/// `wasi:http/types@0.2.12`), or `None` for any other import.
fn wasi_name(name: &str) -> Option<String> {
    let rest = name.strip_prefix(PREFIX)?;
    COPIED
        .iter()
        .any(|p| rest.strip_prefix(p).is_some_and(|r| r.starts_with('/')))
        .then(|| format!("wasi:{rest}"))
}

/// What a copy is called when the component already imports its WASI name: the same version,
/// with build metadata (which semver-aware linkers ignore when they match versions).
const COPY_METADATA: &str = "+cairn-copy";

/// Renames the imports of copies in `component` (a componentize-qjs component) to WASI names
/// (see the module's documentation). Only the top level's import sections are rewritten; every
/// other section, nested components and modules included, is copied as it is. The result is
/// validated. A component without such imports is returned unchanged.
pub fn restore_names(component: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let err = |e: wasmparser::BinaryReaderError| format!("reading the component: {e}");
    // First every top-level import name, so that a copy never takes a name imported later.
    let mut names: HashSet<String> = HashSet::new();
    let mut copies = 0;
    for_each_section(component, |payload| {
        if let Payload::ComponentImportSection(section) = payload {
            for import in section.clone() {
                let import = import.map_err(err)?;
                if wasi_name(import.name.name).is_some() {
                    copies += 1;
                }
                names.insert(import.name.name.to_owned());
            }
        }
        Ok(())
    })?;
    if copies == 0 {
        return Ok(component.to_vec());
    }

    let mut out = wasm_encoder::Component::new();
    let mut reencoder = wasm_encoder::reencode::RoundtripReencoder;
    for_each_section(component, |payload| {
        match payload {
            Payload::ComponentImportSection(section) => {
                let mut imports = wasm_encoder::ComponentImportSection::new();
                for import in section.clone() {
                    let import = import.map_err(err)?;
                    let mut name = wasm_encoder::ComponentExternName::from(import.name);
                    if let Some(wasi) = wasi_name(import.name.name) {
                        let wasi = if names.contains(&wasi) {
                            format!("{wasi}{COPY_METADATA}")
                        } else {
                            wasi
                        };
                        if !names.insert(wasi.clone()) {
                            return Err(format!(
                                "{} cannot be renamed: the component already imports {wasi}",
                                import.name.name
                            ));
                        }
                        name.name = wasi.into();
                    }
                    let ty = reencoder
                        .component_type_ref(import.ty)
                        .map_err(|e| format!("re-encoding an import: {e}"))?;
                    imports.import(name, ty);
                }
                out.section(&imports);
            }
            other => {
                if let Some((id, range)) = other.as_section() {
                    out.section(&wasm_encoder::RawSection {
                        id,
                        data: &component[range],
                    });
                }
            }
        }
        Ok(())
    })?;
    let bytes = out.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&bytes)
        .map_err(|e| format!("the renamed component is invalid: {e}"))?;
    Ok(bytes)
}

/// Calls `f` with each payload of the component's top level (nested components and modules
/// come whole, as one payload each).
fn for_each_section<'a>(
    component: &'a [u8],
    mut f: impl FnMut(&Payload<'a>) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let mut parser = Parser::new(0);
    let mut rest = component;
    loop {
        let (consumed, payload) = match parser
            .parse(rest, true)
            .map_err(|e| format!("reading the component: {e}"))?
        {
            wasmparser::Chunk::Parsed { consumed, payload } => (consumed, payload),
            wasmparser::Chunk::NeedMoreData(_) => return Err("the component is truncated".into()),
        };
        rest = &rest[consumed..];
        match &payload {
            Payload::Version { encoding, .. } if *encoding != wasmparser::Encoding::Component => {
                return Err("not a component".into());
            }
            // The parser leaves a nested component's or module's bytes to its caller.
            Payload::ComponentSection {
                unchecked_range, ..
            }
            | Payload::ModuleSection {
                unchecked_range, ..
            } => {
                rest = &rest[unchecked_range.len()..];
            }
            Payload::End(_) => return Ok(()),
            _ => {}
        }
        f(&payload)?;
    }
}

/// `restore_names` as a build step on the file at `path`.
pub fn restore_names_in(path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).map_err(io("reading", path))?;
    let renamed = restore_names(&bytes).map_err(|e| {
        BuildError::Failed(format!(
            "giving the WASI imports of {} back their names: {e}",
            path.display()
        ))
    })?;
    std::fs::write(path, renamed).map_err(io("writing", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_rename_only_the_copied_packages() {
        let wit = "package wasi:http@0.2.12;\n\
                   interface types {\n\
                   \x20 use wasi:clocks/monotonic-clock@0.2.12.{duration};\n\
                   \x20 use wasi:io/error@0.2.12.{error as io-error};\n\
                   }\n\
                   world imports {\n\
                   \x20 import wasi:random/random@0.2.12;\n\
                   \x20 import wasi:cli/stdout@0.2.12;\n\
                   }\n";
        let copy = copy_of(wit);
        for fragment in [
            "package cairn:wasi-http@0.2.12;",
            "use cairn:wasi-clocks/monotonic-clock@0.2.12.{duration};",
            "use cairn:wasi-io/error@0.2.12.{error as io-error};",
            "import wasi:random/random@0.2.12;",
            "import wasi:cli/stdout@0.2.12;",
        ] {
            assert!(copy.contains(fragment), "{fragment} not in\n{copy}");
        }
        assert_eq!(copy_of(&copy), copy, "renaming twice changes nothing more");
    }

    #[test]
    fn wasi_names() {
        for (name, wasi) in [
            (
                "cairn:wasi-http/types@0.2.12",
                Some("wasi:http/types@0.2.12"),
            ),
            ("cairn:wasi-io/poll@0.2.12", Some("wasi:io/poll@0.2.12")),
            (
                "cairn:wasi-clocks/monotonic-clock@0.2.12",
                Some("wasi:clocks/monotonic-clock@0.2.12"),
            ),
            ("cairn:wasi-random/random@0.2.12", None),
            ("cairn:wasi-iox/poll@0.2.12", None),
            ("cairn:deploy/host@0.3.0", None),
            ("wasi:io/poll@0.2.12", None),
        ] {
            assert_eq!(wasi_name(name).as_deref(), wasi, "{name}");
        }
    }

    /// The top-level import names of a component.
    fn imports(component: &[u8]) -> Vec<String> {
        let mut names = Vec::new();
        for_each_section(component, |payload| {
            if let Payload::ComponentImportSection(section) = payload {
                for import in section.clone() {
                    names.push(import.unwrap().name.name.to_owned());
                }
            }
            Ok(())
        })
        .unwrap();
        names
    }

    /// What componentize-qjs makes of a guest that uses the copies, in small: the runtime's
    /// wasi:io import, the copies (wasi:http's types using the copy of wasi:io's resource), and
    /// the guest itself nested, instantiated with them.
    const GUEST: &str = r#"
        (component
          (import "wasi:io/error@0.2.12" (instance $io
            (export "error" (type (sub resource)))))
          (import "cairn:wasi-io/error@0.2.12" (instance $copy
            (export "error" (type (sub resource)))))
          (alias export $copy "error" (type $error))
          (import "cairn:wasi-http/types@0.2.12" (instance $types
            (alias outer 1 $error (type $e))
            (export "io-error" (type (eq $e)))
            (export "fields" (type (sub resource)))))
          (component $guest
            (import "wasi:io/error@0.2.12" (instance
              (export "error" (type (sub resource)))))
            (import "cairn:wasi-io/error@0.2.12" (instance $c
              (export "error" (type (sub resource)))))
            (alias export $c "error" (type $err))
            (import "cairn:wasi-http/types@0.2.12" (instance
              (alias outer 1 $err (type $e))
              (export "io-error" (type (eq $e)))
              (export "fields" (type (sub resource))))))
          (instance (instantiate $guest
            (with "wasi:io/error@0.2.12" (instance $io))
            (with "cairn:wasi-io/error@0.2.12" (instance $copy))
            (with "cairn:wasi-http/types@0.2.12" (instance $types))))
        )"#;

    #[test]
    fn copies_get_wasi_names_back() {
        let guest = wat::parse_str(GUEST).unwrap();
        let renamed = restore_names(&guest).unwrap();
        assert_eq!(
            imports(&renamed),
            [
                "wasi:io/error@0.2.12",
                // Taken by the runtime's own import: the copy is told apart by build metadata.
                "wasi:io/error@0.2.12+cairn-copy",
                "wasi:http/types@0.2.12",
            ]
        );
        // Nothing but the top level's import names changed: the nested guest still imports
        // the copies, and the instantiation still passes them under those names.
        let count = |bytes: &[u8]| {
            String::from_utf8_lossy(bytes)
                .matches("cairn:wasi-http/types@0.2.12")
                .count()
        };
        assert_eq!((count(&guest), count(&renamed)), (3, 2));
    }

    #[test]
    fn a_component_without_copies_is_left_alone() {
        let plain = wat::parse_str(
            r#"(component (import "wasi:io/error@0.2.12" (instance (export "error" (type (sub resource))))))"#,
        )
        .unwrap();
        assert_eq!(restore_names(&plain).unwrap(), plain);
        assert!(
            restore_names(b"\0asm\x01\0\0\0")
                .unwrap_err()
                .contains("not a component")
        );
    }
}
