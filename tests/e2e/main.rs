//! End-to-end tests driving the real `cairn` binary.
