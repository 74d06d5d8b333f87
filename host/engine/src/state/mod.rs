//! Deployment state.
