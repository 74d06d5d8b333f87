//! `file`: a Cairn provider for files and directories inside one granted directory.
//!
//! The provider asks for the directory capability `{"guest": "/work", "write": true}`: the
//! user grants a host directory, which the provider sees at `/work`. Every path is relative to
//! it and must stay inside it: absolute paths, `..` that climbs out, and symbolic links that
//! lead out are check failures naming `path` (and are checked again before every operation).
//!
//! ## `file:index:File`
//! Inputs: `path` (default: auto-named `<resource name>-<7 hex>`, kept across updates),
//! `content` (required, text), `mode` (optional, octal like
//! `"0644"`). Outputs: the inputs plus `size` (bytes) and `sha256` (lower-case hex). The ID is
//! the resolved path relative to `/work`.
//! * `create` makes missing parent directories and refuses to overwrite an existing file.
//! * `update` rewrites the content in place; changing `path` replaces the resource.
//! * `read` detects drift: changed content is reported in inputs and outputs (so the next
//!   update puts the declared content back); a file deleted out of band reads as gone.
//! * `delete` removes the file (a file already gone is fine).
//! * Content that is secret stays secret, and so does its `sha256`.
//!
//! ## `file:index:Directory`
//! Inputs: `path` (auto-named like a file's when absent), `mode` (optional). Outputs: the
//! inputs. `create` makes missing parents; `delete` removes the directory only when it is empty (otherwise it fails, saying
//! so); `read` reports a directory deleted out of band as gone.
//!
//! ## Previews
//! A preview touches nothing: `preview_create` / `preview_update` compute the outputs from the
//! inputs alone (`size` and `sha256` unknown while the content is).
//!
//! ## `mode`
//! WASI 0.2 has no permission bits (no `chmod`), so `mode` is validated and recorded in the
//! state but **not applied**; the provider logs a warning whenever it is set.

mod paths;

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::PathBuf;

use cairn_sdk::{
    CheckRequest, CheckResult, Checker, Context, CreateRequest, CreateResult, DeleteRequest, Error,
    Properties, PropertyMap, PropertyMapExt, Provider, ReadRequest, ReadResult, Result,
    UpdateRequest, UpdateResult, Value, log, props,
};
use sha2::{Digest, Sha256};

use paths::{Resolved, resolve};

const FILE: &str = "file:index:File";
const DIRECTORY: &str = "file:index:Directory";

/// The outputs of a resource with these inputs: the inputs, and for a file its `size` and
/// `sha256`.
fn planned(resource_type: &str, inputs: &Properties) -> Properties {
    let mut outputs = inputs.clone();
    if resource_type == FILE {
        let content = inputs.get("content").cloned().unwrap_or(Value::Unknown);
        content_outputs(&mut outputs, &content);
    }
    outputs
}

/// Fails on a resource type the provider does not know.
fn known_type(resource_type: &str) -> Result<()> {
    match resource_type {
        FILE | DIRECTORY => Ok(()),
        other => Err(Error::failed(format!("unknown resource type {other:?}"))),
    }
}

/// The provider: its root is where the granted directory is mounted.
pub struct Files {
    root: PathBuf,
}

impl Default for Files {
    fn default() -> Self {
        Files {
            root: PathBuf::from("/work"),
        }
    }
}

/// True for `644`, `0644`, `1777`-style octal modes.
fn is_mode(s: &str) -> bool {
    (3..=4).contains(&s.len()) && s.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// The lower-case hex SHA-256 of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `size` and `sha256` for a file's content (unknown when the content is).
fn content_outputs(outputs: &mut PropertyMap, content: &Value) {
    let (size, hash) = match content.as_str() {
        Some(text) => {
            let hash = Value::from(sha256(text.as_bytes()));
            let hash = if content.is_secret() {
                Value::secret(hash)
            } else {
                hash
            };
            (Value::from(text.len()), hash)
        }
        None => (Value::Unknown, Value::Unknown),
    };
    outputs.insert("size".into(), size);
    outputs.insert("sha256".into(), hash);
}

impl Files {
    fn resolve(&self, path: &str) -> Result<Resolved> {
        // Without the grant the guest sees no `/work` at all, and "not found" would read as
        // "already deleted" or "gone out of band": refuse instead.
        if !fs::metadata(&self.root).is_ok_and(|m| m.is_dir()) {
            return Err(Error::failed(format!(
                "no directory is granted at {}: grant one under cairn:grants.file.directories \
                 (with \"guest\": \"{}\")",
                self.root.display(),
                self.root.display()
            )));
        }
        resolve(&self.root, path).map_err(|e| Error::failed(format!("path {path:?} {}", e.0)))
    }

    /// Warns that `mode` is recorded but not applied.
    fn note_mode(&self, urn: &str, inputs: &PropertyMap) {
        if let Some(mode) = inputs.get_str("mode") {
            log::warn(
                urn,
                format!("mode {mode} is recorded but not applied: WASI has no permission bits"),
            );
        }
    }

    fn write_file(&self, at: &Resolved, content: &str, create: bool) -> Result<()> {
        if let Some(parent) = at.absolute.parent() {
            fs::create_dir_all(parent)
                .context(format!("creating the parents of {}", at.relative))?;
        }
        let mut options = OpenOptions::new();
        options.write(true);
        if create {
            options.create_new(true);
        } else {
            options.create(true).truncate(true);
        }
        let mut file = options.open(&at.absolute).map_err(|e| {
            if e.kind() == ErrorKind::AlreadyExists {
                Error::failed(format!(
                    "{} already exists; delete it, import it, or choose another path",
                    at.relative
                ))
            } else {
                Error::failed(format!("opening {}: {e}", at.relative))
            }
        })?;
        file.write_all(content.as_bytes())
            .and_then(|()| file.flush())
            .context(format!("writing {}", at.relative))
    }

    fn read_file(&self, r: ReadRequest) -> Result<ReadResult> {
        let at = self.resolve(&r.id)?;
        let bytes = match fs::read(&at.absolute) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(ReadResult::gone()),
            Err(e) => return Err(Error::failed(format!("reading {}: {e}", at.relative))),
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let was_secret = r.old_inputs.get("content").is_some_and(Value::is_secret);
        let content = if was_secret {
            Value::secret(text)
        } else {
            Value::from(text)
        };
        let mut inputs = if r.old_inputs.is_empty() {
            props! {"path" => r.id.clone()}
        } else {
            r.old_inputs.into_map()
        };
        inputs.insert("content".into(), content.clone());
        let mut outputs = inputs.clone();
        content_outputs(&mut outputs, &content);
        Ok(ReadResult {
            id: r.id,
            inputs: inputs.into(),
            outputs: outputs.into(),
        })
    }

    fn read_directory(&self, r: ReadRequest) -> Result<ReadResult> {
        let at = self.resolve(&r.id)?;
        match fs::metadata(&at.absolute) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::failed(format!(
                    "{} is no longer a directory",
                    at.relative
                )));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(ReadResult::gone()),
            Err(e) => return Err(Error::failed(format!("inspecting {}: {e}", at.relative))),
        }
        let inputs = if r.old_inputs.is_empty() {
            props! {"path" => r.id.clone()}
        } else {
            r.old_inputs.into_map()
        };
        Ok(ReadResult {
            id: r.id,
            outputs: inputs.clone().into(),
            inputs: inputs.into(),
        })
    }
}

impl Provider for Files {
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        let resource_type = r.resource_type().to_owned();
        let name = r.name().to_owned();
        let mut c = Checker::new(r.inputs);
        c.auto_name("path", &name, &r.old_inputs, &r.random_seed);
        if let Some(path) = c.required_string("path")
            && let Err(e) = resolve(&self.root, &path)
        {
            c.fail("path", e.0);
        }
        if let Some(mode) = c.string("mode")
            && !is_mode(&mode)
        {
            c.fail(
                "mode",
                format!("{mode:?} is not an octal mode like \"0644\""),
            );
        }
        match resource_type.as_str() {
            FILE => {
                c.required_string("content");
            }
            DIRECTORY => {}
            other => return Err(Error::failed(format!("unknown resource type {other:?}"))),
        }
        Ok(c.finish())
    }

    fn replace_on_change(&self, _resource_type: &str) -> &[&str] {
        &["path"]
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let outputs = planned(r.resource_type(), &r.inputs);
        let path = r.inputs.require_str("path")?;
        let at = self.resolve(path)?;
        match r.resource_type() {
            FILE => self.write_file(&at, r.inputs.require_str("content")?, true)?,
            DIRECTORY => {
                if let Some(parent) = at.absolute.parent() {
                    fs::create_dir_all(parent)
                        .context(format!("creating the parents of {}", at.relative))?;
                }
                fs::create_dir(&at.absolute).map_err(|e| {
                    Error::failed(if e.kind() == ErrorKind::AlreadyExists {
                        format!("{} already exists", at.relative)
                    } else {
                        format!("creating {}: {e}", at.relative)
                    })
                })?;
            }
            other => return Err(Error::failed(format!("unknown resource type {other:?}"))),
        }
        self.note_mode(&r.urn, &r.inputs);
        Ok(CreateResult {
            id: at.relative,
            outputs,
        })
    }

    /// Touches nothing: the outputs follow from the inputs (unknown where the content is).
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        known_type(r.resource_type())?;
        Ok(CreateResult {
            id: String::new(),
            outputs: planned(r.resource_type(), &r.inputs),
        })
    }

    fn read(&self, r: ReadRequest) -> Result<ReadResult> {
        match r.resource_type() {
            FILE => self.read_file(r),
            DIRECTORY => self.read_directory(r),
            other => Err(Error::failed(format!("unknown resource type {other:?}"))),
        }
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        let outputs = planned(r.resource_type(), &r.inputs);
        if r.resource_type() == FILE {
            let at = self.resolve(&r.id)?;
            self.write_file(&at, r.inputs.require_str("content")?, false)?;
        }
        self.note_mode(&r.urn, &r.inputs);
        Ok(UpdateResult { outputs })
    }

    /// Touches nothing: the outputs follow from the new inputs (unknown where the content is).
    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        known_type(r.resource_type())?;
        Ok(UpdateResult {
            outputs: planned(r.resource_type(), &r.inputs),
        })
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        let at = self.resolve(&r.id)?;
        let result = match r.resource_type() {
            FILE => fs::remove_file(&at.absolute),
            DIRECTORY => fs::remove_dir(&at.absolute),
            other => return Err(Error::failed(format!("unknown resource type {other:?}"))),
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) if e.kind() == ErrorKind::DirectoryNotEmpty => Err(Error::failed(format!(
                "directory {} is not empty; remove its contents first",
                at.relative
            ))),
            Err(e) => Err(Error::failed(format!("deleting {}: {e}", at.relative))),
        }
    }
}

cairn_sdk::export_provider!(Files, manifest = "cairn.json");

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_sdk::{DiffRequest, manifest, secret};
    use paths::tests::TempDir;

    fn urn(ty: &str) -> String {
        format!("urn:pulumi:dev::proj::{ty}::f")
    }

    fn provider(t: &TempDir) -> Files {
        Files { root: t.0.clone() }
    }

    fn check(p: &Files, ty: &str, inputs: PropertyMap) -> Vec<String> {
        p.check(CheckRequest {
            urn: urn(ty),
            inputs: inputs.into(),
            ..CheckRequest::default()
        })
        .unwrap()
        .failures
        .iter()
        .map(ToString::to_string)
        .collect()
    }

    fn create(p: &Files, ty: &str, inputs: PropertyMap) -> Result<CreateResult> {
        p.create(CreateRequest {
            urn: urn(ty),
            inputs: inputs.into(),
            ..CreateRequest::default()
        })
    }

    fn read(p: &Files, ty: &str, id: &str, old_inputs: PropertyMap) -> ReadResult {
        p.read(ReadRequest {
            urn: urn(ty),
            id: id.into(),
            old_inputs: old_inputs.into(),
            old_outputs: PropertyMap::new().into(),
        })
        .unwrap()
    }

    #[test]
    fn a_missing_path_is_auto_named_and_kept_across_updates() {
        let t = TempDir::new();
        let p = provider(&t);
        let request = |old_inputs: PropertyMap| CheckRequest {
            urn: urn(FILE),
            inputs: props! {"content" => "x"}.into(),
            old_inputs: old_inputs.into(),
            random_seed: urn(FILE).into_bytes(),
        };
        let first = p.check(request(PropertyMap::new())).unwrap();
        assert!(first.failures.is_empty(), "{:?}", first.failures);
        let path = first.inputs.get_str("path").unwrap().to_owned();
        assert!(path.starts_with("f-") && path.len() == 9, "{path}");
        let again = p.check(request(PropertyMap::new())).unwrap();
        assert_eq!(
            again.inputs.get_str("path"),
            Some(path.as_str()),
            "same seed, same name"
        );
        let kept = p.check(request(props! {"path" => "f-1234567"})).unwrap();
        assert_eq!(kept.inputs.get_str("path"), Some("f-1234567"));
    }

    #[test]
    fn check_names_the_property() {
        let t = TempDir::new();
        let p = provider(&t);
        assert_eq!(
            check(&p, FILE, props! {"path" => "/etc/passwd", "content" => "x"}),
            [format!(
                "path: must be relative to the granted directory {}, not absolute",
                t.0.display()
            )]
        );
        assert_eq!(
            check(&p, FILE, props! {"path" => "a/../../x", "content" => "x"}),
            ["path: escapes the granted directory"]
        );
        std::os::unix::fs::symlink("/etc", t.0.join("etc")).unwrap();
        let failures = check(&p, FILE, props! {"path" => "etc/passwd", "content" => "x"});
        assert!(
            failures[0].starts_with("path: leads through a symbolic link to /etc"),
            "{failures:?}"
        );
        assert_eq!(
            check(&p, FILE, props! {"path" => "a", "mode" => "rwx"}),
            [
                "mode: \"rwx\" is not an octal mode like \"0644\"",
                "content: missing required property"
            ]
        );
        assert!(check(&p, DIRECTORY, props! {"path" => "d", "mode" => "0755"}).is_empty());
        assert!(
            check(
                &p,
                FILE,
                props! {"path" => Value::Unknown, "content" => "x"}
            )
            .is_empty()
        );
    }

    #[test]
    fn file_lifecycle() {
        let t = TempDir::new();
        let p = provider(&t);
        let inputs = props! {"path" => "sub/hello.txt", "content" => "hello", "mode" => "0644"};
        let created = create(&p, FILE, inputs.clone()).unwrap();
        assert_eq!(created.id, "sub/hello.txt");
        assert_eq!(
            fs::read_to_string(t.0.join("sub/hello.txt")).unwrap(),
            "hello"
        );
        assert_eq!(created.outputs["size"], Value::from(5));
        assert_eq!(
            created.outputs["sha256"],
            Value::from("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        assert_eq!(created.outputs["mode"], Value::from("0644"));

        // No clobbering.
        let again = create(&p, FILE, inputs.clone()).unwrap_err();
        assert!(again.to_string().contains("already exists"), "{again}");

        // No drift.
        let r = read(&p, FILE, &created.id, inputs.clone());
        assert_eq!(r.id, created.id);
        assert_eq!(r.outputs, created.outputs);

        // Drift: the content changed out of band.
        fs::write(t.0.join("sub/hello.txt"), "changed").unwrap();
        let r = read(&p, FILE, &created.id, inputs.clone());
        assert_eq!(r.inputs["content"], Value::from("changed"));
        assert_eq!(r.outputs["size"], Value::from(7));

        // Update rewrites in place.
        let news = props! {"path" => "sub/hello.txt", "content" => "hi", "mode" => "0644"};
        let updated = p
            .update(UpdateRequest {
                urn: urn(FILE),
                id: created.id.clone(),
                old_inputs: r.inputs.clone(),
                inputs: news.clone().into(),
                ..UpdateRequest::default()
            })
            .unwrap();
        assert_eq!(fs::read_to_string(t.0.join("sub/hello.txt")).unwrap(), "hi");
        assert_eq!(updated.outputs["size"], Value::from(2));

        // Delete, twice.
        let delete = || {
            p.delete(DeleteRequest {
                urn: urn(FILE),
                id: created.id.clone(),
                ..DeleteRequest::default()
            })
        };
        delete().unwrap();
        assert!(!t.0.join("sub/hello.txt").exists());
        delete().unwrap();

        // Gone out of band: an empty ID.
        assert_eq!(read(&p, FILE, &created.id, news).id, "");
    }

    #[test]
    fn path_changes_replace_and_content_changes_update() {
        let p = Files::default();
        let diff = |inputs| {
            p.diff(DiffRequest {
                urn: urn(FILE),
                old_inputs: props! {"path" => "a", "content" => "x"}.into(),
                inputs,
                ..DiffRequest::default()
            })
            .unwrap()
        };
        let d = diff(props! {"path" => "b", "content" => "x"}.into());
        assert_eq!(d.replace_keys, ["path"]);
        let d = diff(props! {"path" => "a", "content" => "y"}.into());
        assert!(d.replace_keys.is_empty());
        assert_eq!(d.changed_keys, ["content"]);
    }

    #[test]
    fn secret_content_stays_secret() {
        let t = TempDir::new();
        let p = provider(&t);
        let inputs = props! {"path" => "s", "content" => secret("pw")};
        let created = create(&p, FILE, inputs.clone()).unwrap();
        assert!(created.outputs["content"].is_secret());
        assert!(created.outputs["sha256"].is_secret());
        assert_eq!(fs::read_to_string(t.0.join("s")).unwrap(), "pw");
        let r = read(&p, FILE, "s", inputs);
        assert!(r.inputs["content"].is_secret());
    }

    #[test]
    fn import_reads_the_file() {
        let t = TempDir::new();
        let p = provider(&t);
        fs::write(t.0.join("existing"), "data").unwrap();
        let r = read(&p, FILE, "existing", PropertyMap::new());
        assert_eq!(r.inputs, props! {"path" => "existing", "content" => "data"});
        assert_eq!(r.outputs["size"], Value::from(4));
    }

    #[test]
    fn previews_touch_nothing() {
        let t = TempDir::new();
        let p = provider(&t);
        fs::write(t.0.join("kept"), "old").unwrap();
        let created = p
            .preview_create(CreateRequest {
                urn: urn(FILE),
                inputs: props! {"path" => "p", "content" => Value::Unknown}.into(),
                ..CreateRequest::default()
            })
            .unwrap();
        assert!(created.outputs["sha256"].is_unknown());
        assert!(created.id.is_empty());
        let created = p
            .preview_create(CreateRequest {
                urn: urn(DIRECTORY),
                inputs: props! {"path" => "d/e"}.into(),
                ..CreateRequest::default()
            })
            .unwrap();
        assert_eq!(created.outputs, props! {"path" => "d/e"});
        let updated = p
            .preview_update(UpdateRequest {
                urn: urn(FILE),
                id: "kept".into(),
                inputs: props! {"path" => "kept", "content" => "new"}.into(),
                ..UpdateRequest::default()
            })
            .unwrap();
        assert_eq!(updated.outputs["size"], Value::from(3));
        assert_eq!(updated.outputs["sha256"], Value::from(sha256(b"new")));
        // Nothing was created or changed.
        let mut names: Vec<String> = fs::read_dir(&t.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["kept"]);
        assert_eq!(fs::read_to_string(t.0.join("kept")).unwrap(), "old");
    }

    #[test]
    fn operations_recheck_the_path() {
        let t = TempDir::new();
        let outside = TempDir::new();
        let p = provider(&t);
        std::os::unix::fs::symlink(&outside.0, t.0.join("link")).unwrap();
        let err = create(&p, FILE, props! {"path" => "link/x", "content" => "x"}).unwrap_err();
        assert!(
            err.to_string().contains("outside the granted directory"),
            "{err}"
        );
        assert!(!outside.0.join("x").exists());
        let err = p
            .delete(DeleteRequest {
                urn: urn(FILE),
                id: "../x".into(),
                ..DeleteRequest::default()
            })
            .unwrap_err();
        assert!(err.to_string().contains("escapes"), "{err}");
    }

    #[test]
    fn directory_lifecycle() {
        let t = TempDir::new();
        let p = provider(&t);
        let created = create(&p, DIRECTORY, props! {"path" => "a/b", "mode" => "0755"}).unwrap();
        assert_eq!(created.id, "a/b");
        assert!(t.0.join("a/b").is_dir());
        assert!(create(&p, DIRECTORY, props! {"path" => "a/b"}).is_err());
        assert_eq!(
            read(&p, DIRECTORY, "a/b", props! {"path" => "a/b"}).id,
            "a/b"
        );

        fs::write(t.0.join("a/b/inside"), "x").unwrap();
        let delete = || {
            p.delete(DeleteRequest {
                urn: urn(DIRECTORY),
                id: "a/b".into(),
                ..DeleteRequest::default()
            })
        };
        assert!(delete().unwrap_err().to_string().contains("not empty"));
        fs::remove_file(t.0.join("a/b/inside")).unwrap();
        delete().unwrap();
        assert_eq!(read(&p, DIRECTORY, "a/b", props! {"path" => "a/b"}).id, "");
    }

    #[test]
    fn the_manifest_is_valid() {
        let m =
            manifest::validate_source(include_bytes!("../cairn.json"), env!("CARGO_PKG_VERSION"))
                .unwrap_or_else(|e| panic!("{}", e.join("\n")));
        assert_eq!(m.capabilities.directories[0].guest, "/work");
        assert!(m.capabilities.directories[0].write);
        let resources = m.schema.unwrap()["resources"].clone();
        assert!(resources.get(FILE).is_some() && resources.get(DIRECTORY).is_some());
    }
}
