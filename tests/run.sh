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

# PostgreSQL for the state-backend end-to-end tests, which start private servers of their own
# (tests/e2e/postgres.rs): only the server programs are needed here, no running cluster. If the
# package starts its default cluster on install, that is left alone; the tests do not use it.
pg_installed() {
    compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null ||
        { command -v pg_ctl >/dev/null && command -v postgres >/dev/null; }
}
if ! pg_installed; then
    echo "== installing PostgreSQL (Debian package postgresql)"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=""
    elif command -v sudo >/dev/null; then
        as_root=sudo
    else
        echo "error: PostgreSQL is not installed and this is not root and has no sudo;" \
            "install Debian's postgresql package (or put pg_ctl and postgres on PATH)" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null; then
        echo "error: PostgreSQL is not installed and there is no apt-get to install it with;" \
            "install PostgreSQL so that pg_ctl and postgres are on PATH" >&2
        exit 1
    fi
    pg_apt_install() {
        $as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends postgresql
    }
    if ! pg_apt_install; then
        # Stale or missing package lists: refresh them and try once more.
        $as_root env DEBIAN_FRONTEND=noninteractive apt-get update &&
            pg_apt_install ||
            { echo "error: could not install Debian's postgresql package (see above)" >&2; exit 1; }
    fi
    if ! pg_installed; then
        echo "error: the postgresql package installed, but no /usr/lib/postgresql/*/bin/postgres" >&2
        exit 1
    fi
fi

# Debian's docker-registry (the CNCF distribution server) for the registry end-to-end tests,
# which start private instances on 127.0.0.1 (tests/e2e/ociregistry.rs). Its package enables a
# system service; a service it managed to start is stopped (the tests never use it).
if [ ! -x /usr/bin/docker-registry ]; then
    echo "== installing docker-registry (Debian package docker-registry)"
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then as_root=sudo; fi
    registry_apt_install() {
        $as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends docker-registry
    }
    if ! registry_apt_install; then
        $as_root env DEBIAN_FRONTEND=noninteractive apt-get update &&
            registry_apt_install ||
            { echo "error: could not install Debian's docker-registry package (see above)" >&2; exit 1; }
    fi
    $as_root invoke-rc.d docker-registry stop >/dev/null 2>&1 || true
fi

# Headless Chromium and its WebDriver server (Debian's chromium and chromium-driver), for the
# web console's browser tests (tests/e2e/console.rs).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "== installing Chromium (Debian packages chromium and chromium-driver)"
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then as_root=sudo; fi
    browser_apt_install() {
        $as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends chromium chromium-driver
    }
    if ! browser_apt_install; then
        $as_root env DEBIAN_FRONTEND=noninteractive apt-get update &&
            browser_apt_install ||
            { echo "error: could not install Debian's chromium and chromium-driver (see above)" >&2; exit 1; }
    fi
fi

# oras, the independent OCI client the registry tests exchange artifacts with, built once into
# target/tools with this machine's Go (skipped, and those checks with it, where there is no Go).
if [ ! -x target/tools/bin/oras ] && command -v go >/dev/null; then
    echo "== installing oras (go install oras.land/oras/cmd/oras@v1.3.6)"
    GOBIN="$PWD/target/tools/bin" GOFLAGS=-p=2 go install oras.land/oras/cmd/oras@v1.3.6
fi

# wasmsign2, the independent signing tool the signature tests exchange signed components with,
# built once into target/tools (its crate ships a lockfile, so --locked).
if [ ! -x target/tools/bin/wasmsign2 ]; then
    echo "== installing wasmsign2 (cargo install wasmsign2-cli --version 0.2.8)"
    cargo install wasmsign2-cli --version 0.2.8 --locked --root "$PWD/target/tools"
fi

# mdBook, which builds the book under docs/ (its command examples are run by the e2e test
# tests/e2e/book.rs), built once into target/tools with only the search feature (no server,
# no file watcher): about 2 minutes on 2 cores.
if [ ! -x target/tools/bin/mdbook ]; then
    echo "== installing mdbook (cargo install mdbook --version 0.5.4)"
    cargo install mdbook --version 0.5.4 --locked --no-default-features --features search \
        --root "$PWD/target/tools"
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

echo "== mdbook build docs"
target/tools/bin/mdbook build docs -d "$PWD/target/book"

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
# Each end-to-end test's duration is in the log (tests/timed-runner).
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$PWD/tests/timed-runner" cargo test --workspace --locked

echo "== Python SDK unit tests"
# The e2e tests made target/pyenv (with componentize-py, for the bindings the tests generate).
target/pyenv/bin/python -m unittest discover guest-sdk/python/tests

echo "== Go SDK unit tests and vet"
# The SDK's tests run natively; every Go module also vets as it is built (GOOS=wasip1).
(cd guest-sdk/go && test -z "$(gofmt -l .)" && go vet ./... && GOOS=wasip1 GOARCH=wasm go vet ./... && go test ./...)
for module in examples/providers/go-random examples/programs/go tests/guests/go-gc \
    tests/guests/go-hostile tests/guests/go-component tests/guests/lifecycle-test-go; do
    (cd "$module" && test -z "$(gofmt -l .)" && GOOS=wasip1 GOARCH=wasm go vet ./...)
done
