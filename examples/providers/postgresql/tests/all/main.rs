//! The provider's integration tests, one binary: the protocol client against real private
//! PostgreSQL servers.

mod client;
mod pgserver;
