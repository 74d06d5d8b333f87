//! The lifecycle vocabulary that means the same on both sides of the boundary: check failures
//! and how a diff describes changes. The engine (`cairn_engine::deploy::provider`) and the SDK
//! (`cairn_sdk`) re-export these; their request and result types, which differ (URNs, lazy
//! properties, borrowed requests), stay on each side.

use alloc::string::String;
use core::fmt;

/// A validation failure from `check` / `check_config`: the property path at fault (empty for
/// the resource as a whole) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub property: String,
    pub reason: String,
}

impl CheckFailure {
    pub fn new(property: impl Into<String>, reason: impl Into<String>) -> CheckFailure {
        CheckFailure {
            property: property.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.property.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.property, self.reason)
        }
    }
}

impl core::error::Error for CheckFailure {}

/// Whether a diff found changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffChanges {
    /// The provider cannot tell; the engine compares old and new inputs itself.
    #[default]
    Unknown,
    None,
    Some,
}

/// How one property differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    Add,
    AddReplace,
    Delete,
    DeleteReplace,
    Update,
    UpdateReplace,
}

impl DiffKind {
    /// The same change, requiring replacement.
    pub fn with_replace(self) -> DiffKind {
        match self {
            DiffKind::Add | DiffKind::AddReplace => DiffKind::AddReplace,
            DiffKind::Delete | DiffKind::DeleteReplace => DiffKind::DeleteReplace,
            DiffKind::Update | DiffKind::UpdateReplace => DiffKind::UpdateReplace,
        }
    }

    pub fn is_replace(self) -> bool {
        matches!(
            self,
            DiffKind::AddReplace | DiffKind::DeleteReplace | DiffKind::UpdateReplace
        )
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn failures_read_well_and_replacement_is_a_flag() {
        assert_eq!(
            CheckFailure::new("path", "must be relative").to_string(),
            "path: must be relative"
        );
        assert_eq!(CheckFailure::new("", "bad").to_string(), "bad");
        for kind in [DiffKind::Add, DiffKind::Delete, DiffKind::Update] {
            assert!(!kind.is_replace());
            assert!(kind.with_replace().is_replace());
            assert_eq!(kind.with_replace().with_replace(), kind.with_replace());
        }
        assert_eq!(DiffChanges::default(), DiffChanges::Unknown);
    }
}
