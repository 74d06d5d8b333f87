#!/usr/bin/env bash
# Runs everything CI runs: installs what the tests need, then the format check, clippy with
# warnings as errors, and every test — for the host workspace and the guest (wasm) workspaces.
set -euo pipefail
cd "$(dirname "$0")/.."

# Toolchain pieces (no-ops when already installed).
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi
if ! rustup target list --installed | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi

# Guest crates build for wasm32-wasip2 into one shared target directory (the tests build the
# same components there, so this work is shared).
guests=(guest-sdk/Cargo.toml examples/Cargo.toml tests/guests/Cargo.toml host/wasm/tests/guest/Cargo.toml)
guest_target="$PWD/target/guests"

echo "== cargo fmt --check"
cargo fmt --all -- --check
for manifest in "${guests[@]}"; do
    cargo fmt --manifest-path "$manifest" --all -- --check
done

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
for manifest in "${guests[@]}"; do
    CARGO_TARGET_DIR="$guest_target" \
        cargo clippy --manifest-path "$manifest" --locked --target wasm32-wasip2 -- -D warnings
done

echo "== guest unit tests (native)"
cargo test --manifest-path guest-sdk/Cargo.toml --locked
cargo test --manifest-path examples/Cargo.toml --locked

echo "== cargo test"
cargo test --workspace --locked
