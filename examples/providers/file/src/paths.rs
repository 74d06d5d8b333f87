//! Confining paths to the granted directory: resolves a relative path component by component,
//! following symbolic links, and refuses anything that would leave the root.
//!
//! WASI has no `realpath`, so resolution is done here with `symlink_metadata` and `read_link`.
//! Every component already resolved is a real directory, so `..` simply steps back one; a
//! component that does not exist yet ends the link checks (nothing below it can be a link).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The most symbolic links followed while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Why a path is refused; the message completes "path ...".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError(pub String);

/// A path inside the root: relative to it (never empty, no `.`/`..`/links) and absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub relative: String,
    pub absolute: PathBuf,
}

/// Pushes the components of `path` (relative) onto the front of `pending`, in order.
fn push_front(pending: &mut VecDeque<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
}

/// Resolves `path` (relative to `root`) to a location inside `root`.
pub fn resolve(root: &Path, path: &str) -> Result<Resolved, PathError> {
    let refuse = |why: &str| Err(PathError(why.to_owned()));
    if path.is_empty() {
        return refuse("must not be empty");
    }
    if path.contains('\0') {
        return refuse("must not contain NUL");
    }
    if Path::new(path).is_absolute() {
        return refuse(&format!(
            "must be relative to the granted directory {}, not absolute",
            root.display()
        ));
    }
    let mut pending = VecDeque::new();
    push_front(&mut pending, Path::new(path));
    let mut current: Vec<OsString> = Vec::new();
    let mut links = 0;
    let mut exists = true;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            if current.pop().is_none() {
                return refuse("escapes the granted directory");
            }
            continue;
        }
        current.push(part);
        if !exists {
            continue;
        }
        let here: PathBuf = root.join(current.iter().collect::<PathBuf>());
        let meta = match fs::symlink_metadata(&here) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                exists = false;
                continue;
            }
            Err(e) => return refuse(&format!("cannot be inspected ({}): {e}", here.display())),
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return refuse("has too many levels of symbolic links");
        }
        let target = fs::read_link(&here)
            .map_err(|e| PathError(format!("has an unreadable link {}: {e}", here.display())))?;
        current.pop();
        if target.is_absolute() {
            let Ok(inside) = target.strip_prefix(root) else {
                return refuse(&format!(
                    "leads through a symbolic link to {}, outside the granted directory",
                    target.display()
                ));
            };
            current.clear();
            push_front(&mut pending, inside);
        } else {
            push_front(&mut pending, &target);
        }
    }
    if current.is_empty() {
        return refuse("names the granted directory itself");
    }
    let relative: PathBuf = current.iter().collect();
    let Some(relative) = relative.to_str().map(str::to_owned) else {
        return refuse("is not valid UTF-8");
    };
    Ok(Resolved {
        absolute: root.join(&relative),
        relative,
    })
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir (removed on drop).
    pub struct TempDir(pub PathBuf);

    impl TempDir {
        pub fn new() -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "cairn-file-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            fs::create_dir_all(&dir).unwrap();
            // Canonical, so absolute links made from it compare by prefix.
            TempDir(dir.canonicalize().unwrap())
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn rel(root: &Path, p: &str) -> Result<String, String> {
        resolve(root, p).map(|r| r.relative).map_err(|e| e.0)
    }

    #[test]
    fn plain_paths() {
        let t = TempDir::new();
        assert_eq!(rel(&t.0, "a/b.txt"), Ok("a/b.txt".into()));
        assert_eq!(rel(&t.0, "./a//b/../c"), Ok("a/c".into()));
        assert_eq!(resolve(&t.0, "x").unwrap().absolute, t.0.join("x"));
    }

    #[test]
    fn escapes_are_refused() {
        let t = TempDir::new();
        assert!(
            rel(&t.0, "/etc/passwd")
                .unwrap_err()
                .contains("not absolute")
        );
        assert_eq!(
            rel(&t.0, "../x"),
            Err("escapes the granted directory".into())
        );
        assert_eq!(
            rel(&t.0, "a/../../x"),
            Err("escapes the granted directory".into())
        );
        assert_eq!(
            rel(&t.0, "a/.."),
            Err("names the granted directory itself".into())
        );
        assert_eq!(rel(&t.0, ""), Err("must not be empty".into()));
    }

    #[test]
    fn links_inside_are_followed() {
        let t = TempDir::new();
        fs::create_dir_all(t.0.join("real/sub")).unwrap();
        symlink("real/sub", t.0.join("rel-link")).unwrap();
        symlink(t.0.join("real"), t.0.join("abs-link")).unwrap();
        assert_eq!(rel(&t.0, "rel-link/f"), Ok("real/sub/f".into()));
        assert_eq!(rel(&t.0, "abs-link/sub/f"), Ok("real/sub/f".into()));
        // `..` after a link steps out of the link's target, not out of the link's directory.
        assert_eq!(rel(&t.0, "rel-link/../g"), Ok("real/g".into()));
    }

    #[test]
    fn links_outside_are_refused() {
        let t = TempDir::new();
        let outside = TempDir::new();
        symlink(&outside.0, t.0.join("out")).unwrap();
        symlink("../..", t.0.join("up")).unwrap();
        symlink("loop", t.0.join("loop")).unwrap();
        assert!(
            rel(&t.0, "out/x")
                .unwrap_err()
                .contains("outside the granted directory")
        );
        assert_eq!(
            rel(&t.0, "up/x"),
            Err("escapes the granted directory".into())
        );
        assert_eq!(
            rel(&t.0, "loop/x"),
            Err("has too many levels of symbolic links".into())
        );
    }
}
