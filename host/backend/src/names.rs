//! Names that become paths: stack and project names (backend files, locks, history, settings
//! files). One rule each, checked where a name enters (the command line, a program's stack
//! reference, a directory listing) with an error naming where it came from, and checked again
//! where the backend turns names into paths, so no name reaches the file system unchecked.
//! (Plugin names are checked by `cairn_wasm::store`.)
//!
//! # Names never become paths unchecked
//!
//! Stack and project names (`host/backend/src/names.rs`: `[A-Za-z0-9_.-]`, 1–100, not `.`/`..`) are
//! checked where they enter (`--stack`, command arguments, Pulumi.yaml, a program's StackReference,
//! directory listings) and again in `FileStore::path`, the one place the backend joins them into
//! paths. Plugin names are checked by `PluginStore` (`host/wasm/src/store.rs`: the manifest's
//! package-name rule) before any join, store listings skip entries that break it, and removal
//! refuses symbolic links; a `plugin inspect` argument is a file only if it ends in `.wasm`;
//! versions are parsed as semver.

use cairn_engine::text::quoted;

/// Pulumi's rule for stack names, plus no `.` or `..` (which name directories).
pub const STACK_NAME_RULE: &str =
    "stack names are 1 to 100 letters, digits, '-', '_' or '.', and not \".\" or \"..\"";

/// Pulumi's rule for project names (`tokens.ValidateProjectName`), plus no `.` or `..`.
pub const PROJECT_NAME_RULE: &str =
    "project names are 1 to 100 letters, digits, '-', '_' or '.', and not \".\" or \"..\"";

/// Whether `name` is a valid stack name.
pub fn is_stack_name(name: &str) -> bool {
    plain(name, 100)
}

/// Whether `name` is a valid project name.
pub fn is_project_name(name: &str) -> bool {
    plain(name, 100) && cairn_engine::project::validate_project_name(name).is_ok()
}

fn plain(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A name that breaks its rule; `origin` says where it came from (`given to --stack`, `in
/// Pulumi.yaml`, `for the backend`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("invalid stack name {} {origin}: {STACK_NAME_RULE}", quoted(.name))]
    Stack { name: String, origin: String },
    #[error("invalid project name {} {origin}: {PROJECT_NAME_RULE}", quoted(.name))]
    Project { name: String, origin: String },
}

/// Checks a stack name; `source` says where it came from (`--stack`, a command's argument,
/// a file), for the error.
pub fn check_stack_name(name: &str, source: &str) -> Result<(), NameError> {
    if is_stack_name(name) {
        return Ok(());
    }
    Err(NameError::Stack {
        name: name.to_owned(),
        origin: source.to_owned(),
    })
}

/// Checks a project name; `source` says where it came from.
pub fn check_project_name(name: &str, source: &str) -> Result<(), NameError> {
    if is_project_name(name) {
        return Ok(());
    }
    Err(NameError::Project {
        name: name.to_owned(),
        origin: source.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_a_directory_are_refused() {
        let long = "x".repeat(101);
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "/abs",
            "a/b",
            "a\\b",
            "a\0b",
            "a\x1b[2J",
            "a\u{9b}b",
            "a\u{202e}b",
            "名前",
            long.as_str(),
        ] {
            assert!(!is_stack_name(bad), "{bad:?}");
            assert!(!is_project_name(bad), "{bad:?}");
        }
        for good in [
            "dev",
            "prod-eu_1",
            "v1.2",
            "...",
            ".hidden",
            "x".repeat(100).as_str(),
        ] {
            assert!(is_stack_name(good), "{good:?}");
            assert!(is_project_name(good), "{good:?}");
        }
        assert_eq!(
            check_stack_name("../x", "given to --stack")
                .unwrap_err()
                .to_string(),
            format!("invalid stack name \"../x\" given to --stack: {STACK_NAME_RULE}")
        );
    }
}
