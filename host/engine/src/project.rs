//! Project files.
