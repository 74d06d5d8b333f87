//! cairn-wire's tests: one suite of malformed tables, in-place reading and encoding, run
//! natively (`cargo test -p cairn-wire`) and, built for wasm32-wasip2, inside wasmtime by
//! `cairn-wasm`'s `wire_in_wasm` test, so both sides' builds of the code are checked.

mod encoding;
mod malformed;
mod reading;
mod support;
