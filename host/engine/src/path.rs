//! Property paths.
