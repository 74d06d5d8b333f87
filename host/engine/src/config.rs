//! Stack configuration.
