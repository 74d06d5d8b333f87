//! cairn-grpc's integration tests: the provider protocol driven from both ends (our client
//! against our server), plugins that misbehave at start-up, hostile replies (scripted and raw),
//! `Engine.Log` floods, previews that never act on plugins without preview support, plugin
//! processes (process groups, parent-death signal), and the real engine deploying through a
//! hostile plugin and a hostile SDK client.

mod deploy;
mod engine_log;
mod hostile;
mod monitor;
mod preview;
mod processes;
mod raw;
mod replies;
mod roundtrip;
mod support;
