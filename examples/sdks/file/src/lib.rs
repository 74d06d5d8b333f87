//! Typed resources of the `file` provider (examples/providers/file) for Cairn programs.
//!
//! Paths are relative to the directory the user grants the provider (`/work` inside its
//! sandbox). Hand-written for now (a later version generates them from the schema).
//!
//! ```text
//! let dir = Directory::new("site", DirectoryArgs::new("site"), ResourceOptions::new());
//! let page = File::new("index", FileArgs::new("site/index.html", html),
//!     ResourceOptions::new().depends_on(&dir.resource));
//! ctx.export("sha256", page.sha256);
//! ```

use cairn_sdk::program::{Args, IntoInput, Output, Resource, ResourceOptions, custom};

/// Arguments of [`File`].
#[derive(Clone, Debug)]
pub struct FileArgs(Args);

impl FileArgs {
    /// A file at `path` (relative to the granted directory) holding `content`.
    pub fn new(
        path: impl IntoInput<Value = String>,
        content: impl IntoInput<Value = String>,
    ) -> Self {
        FileArgs(Args::new().set("path", path).set("content", content))
    }

    /// A file holding `content` at an auto-generated path (`<resource name>-<7 hex>`, kept
    /// across updates).
    pub fn auto_named(content: impl IntoInput<Value = String>) -> Self {
        FileArgs(Args::new().set("content", content))
    }

    /// The octal mode, e.g. `"0644"` (recorded; WASI cannot apply it).
    pub fn mode(self, mode: impl IntoInput<Value = String>) -> Self {
        FileArgs(self.0.set("mode", mode))
    }
}

/// A file (`file:index:File`). A secret `content` keeps `content` and `sha256` secret.
#[derive(Clone)]
pub struct File {
    pub resource: Resource,
    pub path: Output<String>,
    pub content: Output<String>,
    pub size: Output<i64>,
    pub sha256: Output<String>,
}

impl File {
    pub fn new(name: &str, args: FileArgs, options: ResourceOptions) -> Self {
        let resource = custom("file:index:File", name, args.0, options);
        File {
            path: resource.get("path"),
            content: resource.get("content"),
            size: resource.get("size"),
            sha256: resource.get("sha256"),
            resource,
        }
    }
}

/// Arguments of [`Directory`].
#[derive(Clone, Debug)]
pub struct DirectoryArgs(Args);

impl DirectoryArgs {
    pub fn new(path: impl IntoInput<Value = String>) -> Self {
        DirectoryArgs(Args::new().set("path", path))
    }

    pub fn mode(self, mode: impl IntoInput<Value = String>) -> Self {
        DirectoryArgs(self.0.set("mode", mode))
    }
}

/// A directory (`file:index:Directory`); deleting it fails while it is not empty.
#[derive(Clone)]
pub struct Directory {
    pub resource: Resource,
    pub path: Output<String>,
}

impl Directory {
    pub fn new(name: &str, args: DirectoryArgs, options: ResourceOptions) -> Self {
        let resource = custom("file:index:Directory", name, args.0, options);
        Directory {
            path: resource.get("path"),
            resource,
        }
    }
}
