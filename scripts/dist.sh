#!/usr/bin/env bash
# The kairos binary to ship: the release build with its debug info moved out into a file of its
# own, target/dist/ship/kairos.debug, which the binary names in .gnu_debuglink (gdb, addr2line
# and perf find it there, or in /usr/lib/debug). The binary keeps its symbol table, so a
# backtrace still names functions without the .debug file.
#
#   scripts/dist.sh        # → target/dist/ship/kairos and target/dist/ship/kairos.debug
set -euo pipefail
cd "$(dirname "$0")/.."

command -v objcopy >/dev/null || { echo "error: objcopy not found (Debian: apt-get install binutils)" >&2; exit 1; }

cargo build --profile dist -p kairos-cli --locked
ship=target/dist/ship
mkdir -p "$ship"
objcopy --only-keep-debug target/dist/kairos "$ship/kairos.debug"
# --add-gnu-debuglink reads the .debug file by the name given: run it beside the file.
objcopy --strip-debug target/dist/kairos "$ship/kairos"
(cd "$ship" && objcopy --add-gnu-debuglink=kairos.debug kairos)
ls -l "$ship"
