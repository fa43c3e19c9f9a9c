#!/usr/bin/env bash
# The whole test suite, on a fresh machine of this kind: installs and starts what the tests need
# (a throwaway PostgreSQL from Debian's packages, on a free port; Quartz 2.3.2 and a JDK for the
# cron differential test; Chromium for the console's browser test; the Flowable and Camunda
# client libraries, playwright-core from npm and PyPI, and schemathesis), runs every test on
# both backends, and stops PostgreSQL again.
# `.ci/run` calls exactly this.
#
#   scripts/test.sh            # everything
#   scripts/test.sh -p kairos  # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "error: cargo not found; install Rust with rustup first" >&2
    exit 1
fi

# The cron differential test (crates/cron/tests/quartz_diff.rs) runs the real Quartz 2.3.2:
# Debian's libquartz2-java and a JDK to compile its small oracle.
if [[ ! -e /usr/share/java/quartz2.jar ]] || ! command -v javac >/dev/null; then
    if [[ "$(id -u)" != 0 ]]; then
        echo "error: the cron differential test needs libquartz2-java and javac; installing them needs root" >&2
        echo "       (apt-get install libquartz2-java openjdk-17-jdk-headless)" >&2
        exit 1
    fi
    echo "test.sh: installing Quartz 2.3.2 and a JDK from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends libquartz2-java openjdk-17-jdk-headless >&2
fi
# The differential test must run against Quartz, not skip.
export KAIROS_REQUIRE_QUARTZ=1

# The console's browser test (crates/server/tests/clients_console.rs) drives Debian's Chromium
# with playwright-core (clients/console/, installed by scripts/clients.sh below).
if ! command -v chromium >/dev/null; then
    if [[ "$(id -u)" != 0 ]]; then
        echo "error: the console's browser test needs Chromium; installing it needs root (apt-get install chromium)" >&2
        exit 1
    fi
    echo "test.sh: installing Chromium from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends chromium >&2
fi
export KAIROS_CHROMIUM
KAIROS_CHROMIUM=$(command -v chromium)

eval "$(scripts/pg.sh start)"
trap 'scripts/pg.sh stop >/dev/null 2>&1 || true' EXIT
export KAIROS_TEST_PG_URL
# Every PostgreSQL test must run, not skip.
export KAIROS_REQUIRE_PG=1

# The official Flowable and Camunda client libraries (npm, PyPI) and schemathesis, which the
# compatibility tests run against a kairos node (clients/README.md); they must run, not skip.
eval "$(scripts/clients.sh)"
export KAIROS_CLIENTS KAIROS_REQUIRE_CLIENTS=1

cargo build --workspace --all-targets --locked
cargo test --workspace --locked "$@"
