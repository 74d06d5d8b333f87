//! cairn-grpc's integration tests: the provider protocol driven from both ends (our client
//! against our server), and plugins that misbehave at start-up.

mod hostile;
mod roundtrip;
