//! The registry client against hostile registries: a server of the test's own that serves
//! tampered blobs, wrong sizes, manifests of the wrong layout, endless streams, redirect loops
//! and a slow trickle. Each is refused with an error naming what was wrong, within the
//! client's deadline. (The real registry, `docker-registry`, is exercised by tests/e2e.)
//! Signatures are checked against the real `wasmsign2`, both ways.

mod hostile;
mod signature;
