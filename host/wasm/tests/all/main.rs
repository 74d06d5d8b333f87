//! Integration tests of the wasm host against real components: the example providers
//! (`random`, `file`, `hello`), the hostile and test guests (`tests/guests`) and the host's own `probe`
//! (`host/wasm/tests/guest`), all built once per run by `support::guests`; and `cairn-wire`'s own
//! suite, built for wasm32-wasip2 and run in wasmtime (`wire`).

mod cache;
mod callbacks;
mod deploy;
mod hostile;
mod lifecycle;
mod pending;
mod policies;
mod pool;
mod previews;
mod programs;
mod sandbox;
mod store;
mod support;
mod tcp;
mod wire;
