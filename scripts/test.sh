#!/usr/bin/env bash
# The whole test suite, on a fresh machine of this kind: installs and starts what the tests need
# (a throwaway PostgreSQL from Debian's packages, on a free port), runs every test on both
# backends, and stops PostgreSQL again. `.ci/run` calls exactly this.
#
#   scripts/test.sh            # everything
#   scripts/test.sh -p kairos  # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "error: cargo not found; install Rust with rustup first" >&2
    exit 1
fi

eval "$(scripts/pg.sh start)"
trap 'scripts/pg.sh stop >/dev/null 2>&1 || true' EXIT
export KAIROS_TEST_PG_URL
# Every PostgreSQL test must run, not skip.
export KAIROS_REQUIRE_PG=1

cargo build --workspace --all-targets --locked
cargo test --workspace --locked "$@"
