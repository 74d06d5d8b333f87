//! The resource monitor: the handle programs and component providers register resources with.

/// A handle to the deployment's resource monitor.
#[derive(Clone)]
pub struct Monitor {}

/// Why a monitor request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct MonitorError {
    pub message: String,
}
