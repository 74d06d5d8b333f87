#!/usr/bin/env bash
# Runs everything CI runs: installs what the tests need, then the format check, clippy with
# warnings as errors, and every test in the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

# Toolchain pieces (no-ops when already installed).
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
