#!/usr/bin/env bash
# A throwaway PostgreSQL for kairos tests and benchmarks (no Docker needed).
#
#   eval "$(scripts/pg.sh start)"   # installs PostgreSQL if missing, starts it, exports KAIROS_TEST_PG_URL
#   scripts/pg.sh url               # prints the URL of the running server
#   scripts/pg.sh stop              # stops it; no server is left running
#   scripts/pg.sh status            # exit 0 when running
#
# The cluster lives in $KAIROS_PG_DIR (default: .pg/ at the repository root, gitignored, or a
# folder under /tmp when the postgres user cannot reach the checkout): data/,
# the server log (server.log) and the chosen port (port). It listens on 127.0.0.1 only, trusts
# loopback connections, keeps fsync on (benchmarks must pay for durable commits like production
# does) and is sized for a 2-core machine running tests and benchmarks side by side.
#
# Only the `export ...` line of `start` and the URL of `url` go to stdout; everything else goes
# to stderr, so `eval "$(scripts/pg.sh start)"` is safe.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The cluster runs as the `postgres` OS user, which must reach its directory: when the checkout
# sits below a folder others cannot enter (a CI clone under /root, say), use one under /tmp,
# named after the checkout so that two checkouts never share a cluster.
default_pg_dir() {
    local d="$REPO"
    while [[ "$d" != "/" ]]; do
        if [[ "$(stat -c %A "$d")" != *x ]]; then
            echo "${TMPDIR:-/tmp}/kairos-pg-$(printf %s "$REPO" | md5sum | cut -c1-12)"
            return
        fi
        d="$(dirname "$d")"
    done
    echo "$REPO/.pg"
}
PG_DIR="${KAIROS_PG_DIR:-$(default_pg_dir)}"
DATA="$PG_DIR/data"
LOG="$PG_DIR/server.log"
PORT_FILE="$PG_DIR/port"
DB_USER=kairos
DB_PASS=kairos
DB_NAME=kairos

say() { echo "pg.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# The newest PostgreSQL installed from Debian's packages.
find_bin() {
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$d" && -x "$d/initdb" ]]; then echo "$d"; fi
}

install_postgres() {
    [[ "$(id -u)" == 0 ]] || die "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
    say "installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends postgresql >&2
}

# Runs a command as the OS user that owns the cluster: `postgres` when we are root (initdb and
# the server refuse to run as root), ourselves otherwise.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        # From /, so that a working directory postgres cannot enter draws no warnings.
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
    local p tries=0
    while (( tries < 200 )); do
        p=$(( 20000 + RANDOM % 40000 ))
        if ! port_in_use "$p"; then echo "$p"; return 0; fi
        tries=$(( tries + 1 ))
    done
    die "no free TCP port found on 127.0.0.1"
}

# The postmaster's pid when that process is alive; a zombie (killed, not yet reaped) is dead.
postmaster_pid() {
    local pid state
    [[ -f "$DATA/postmaster.pid" ]] || return 1
    pid="$(head -n 1 "$DATA/postmaster.pid")"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    # /proc rather than ps: procps is not installed on a minimal Debian.
    state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
    [[ -n "$state" && "$state" != Z* ]] || return 1
    echo "$pid"
}

# Running means: a live postmaster that accepts connections on our port.
is_running() {
    postmaster_pid >/dev/null && [[ -f "$PORT_FILE" ]] \
        && "$BIN/pg_isready" -q -h 127.0.0.1 -p "$(cat "$PORT_FILE")" -t 5
}

url() {
    echo "postgres://$DB_USER:$DB_PASS@127.0.0.1:$(cat "$PORT_FILE")/$DB_NAME"
}

psql_admin() {
    as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cat "$PORT_FILE")" -U postgres -d postgres "$@"
}

init_cluster() {
    say "creating a cluster in $DATA"
    as_owner "$BIN/initdb" -D "$DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=trust >&2
    # Loopback only, trusted: this server exists for tests on this machine.
    cat >"$DATA/pg_hba.conf" <<'EOF'
local all all              trust
host  all all 127.0.0.1/32 trust
host  all all ::1/128      trust
EOF
    cat >>"$DATA/postgresql.conf" <<'EOF'

# ---- kairos test/benchmark settings (scripts/pg.sh) ----
include_if_exists = 'kairos_port.conf'
listen_addresses = '127.0.0.1'
# No Unix socket: the default directory may not exist or be writable, and a socket path under a
# deep checkout can exceed the 107-byte limit. Everything connects over TCP.
unix_socket_directories = ''
max_connections = 200
shared_buffers = 256MB
effective_cache_size = 1GB
work_mem = 16MB
maintenance_work_mem = 128MB
# Durable commits, as in production: throughput figures must include fsync.
fsync = on
synchronous_commit = on
full_page_writes = on
wal_buffers = 16MB
max_wal_size = 4GB
min_wal_size = 512MB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
random_page_cost = 1.1
# Two cores: parallel plans and JIT only add latency to the short queries a job queue runs.
max_parallel_workers_per_gather = 0
jit = off
# Queue tables churn; vacuum them promptly.
autovacuum_naptime = 10s
autovacuum_vacuum_scale_factor = 0.05
autovacuum_analyze_scale_factor = 0.05
autovacuum_vacuum_cost_limit = 2000
log_lock_waits = on
deadlock_timeout = 1s
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
timezone = 'UTC'
EOF
    # Per-statement timings for benchmarks (CREATE EXTENSION pg_stat_statements, then read the
    # view), when the module ships with this build; preloading a missing one would stop startup.
    if [[ -f "$("$BIN/pg_config" --pkglibdir)/pg_stat_statements.so" ]]; then
        cat >>"$DATA/postgresql.conf" <<'EOF'
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
EOF
    fi
}

# The settings written at every start (included by postgresql.conf), so that a cluster made by
# an older pg.sh gets them on its next start too: the port, and room for prepared transactions —
# the opt-in two-phase commit (docs/two-phase-commit.md) and its tests PREPARE TRANSACTION, which
# PostgreSQL refuses while max_prepared_transactions is 0 (its default).
write_port() {
    echo "$1" >"$PORT_FILE"
    printf 'port = %s\nmax_prepared_transactions = 64\n' "$1" | as_owner tee "$DATA/kairos_port.conf" >/dev/null
}

create_role_and_db() {
    psql_admin <<EOF
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
    CREATE ROLE $DB_USER LOGIN SUPERUSER PASSWORD '$DB_PASS';
  END IF;
END
\$\$;
EOF
    if [[ -z "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" ]]; then
        psql_admin -c "CREATE DATABASE $DB_NAME OWNER $DB_USER"
    fi
}

start() {
    BIN="$(find_bin)"
    if [[ -z "$BIN" ]]; then
        install_postgres
        BIN="$(find_bin)"
        [[ -n "$BIN" ]] || die "initdb not found after installing postgresql"
    fi
    mkdir -p "$PG_DIR"
    if [[ "$(id -u)" == 0 ]]; then chown postgres: "$PG_DIR"; fi
    if is_running; then
        say "already running ($(url))"
        # A cluster started before pg.sh set max_prepared_transactions keeps 0 until restarted.
        if [[ "$(psql_admin -tAc 'SHOW max_prepared_transactions' 2>/dev/null || true)" == "0" ]]; then
            say "it runs with max_prepared_transactions = 0 (started by an older pg.sh): the two-phase tests" \
                "need prepared transactions; restart it (scripts/pg.sh stop; scripts/pg.sh start) when no one uses it"
        fi
        echo "export KAIROS_TEST_PG_URL=$(url)"
        return 0
    fi
    if postmaster_pid >/dev/null; then
        # Perhaps still starting (crash recovery): give it a while before replacing it.
        for _ in $(seq 30); do
            if is_running; then
                echo "export KAIROS_TEST_PG_URL=$(url)"
                return 0
            fi
            sleep 1
        done
        say "a postmaster is alive but does not answer; restarting it"
        stop
    fi
    # A postmaster.pid whose process is gone (kill -9, a crash) would make the server refuse to
    # start while its pid is a zombie; the data directory itself is recovered by the server.
    rm -f "$DATA/postmaster.pid"
    [[ -f "$DATA/PG_VERSION" ]] || init_cluster
    # A stale port (taken meanwhile by something else) is replaced.
    local attempt port
    for attempt in 1 2 3 4 5; do
        port="$(cat "$PORT_FILE" 2>/dev/null || true)"
        if [[ -z "$port" ]] || port_in_use "$port"; then port="$(pick_port)"; fi
        write_port "$port"
        # 9>&-: the server must not inherit the lock descriptor, or it would hold the lock for
        # its whole life and the next pg.sh would wait forever.
        if as_owner "$BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t 60 >/dev/null 2>&1 9>&-; then
            create_role_and_db
            say "running on 127.0.0.1:$port (data in $DATA, log in $LOG)"
            echo "export KAIROS_TEST_PG_URL=$(url)"
            return 0
        fi
        say "start on port $port failed (attempt $attempt); see $LOG"
        rm -f "$PORT_FILE"
    done
    tail -n 20 "$LOG" >&2 || true
    die "PostgreSQL did not start"
}

stop() {
    BIN="${BIN:-$(find_bin)}"
    local pid
    if [[ -z "$BIN" ]] || ! pid="$(postmaster_pid)"; then
        rm -f "$DATA/postmaster.pid"
        say "not running"
        return 0
    fi
    if ! as_owner "$BIN/pg_ctl" stop -D "$DATA" -m fast -w -t 60 >/dev/null 2>&1; then
        say "fast shutdown did not finish; stopping immediately"
        as_owner "$BIN/pg_ctl" stop -D "$DATA" -m immediate -w -t 30 >/dev/null 2>&1 || true
    fi
    # pg_ctl can give up on a server that is still exiting; make sure no postmaster survives.
    if postmaster_pid >/dev/null; then
        kill -QUIT "$pid" 2>/dev/null || true
        for _ in $(seq 50); do postmaster_pid >/dev/null || break; sleep 0.1; done
        postmaster_pid >/dev/null && die "postmaster $pid is still running"
    fi
    rm -f "$DATA/postmaster.pid"
    say "stopped"
}

cmd="${1:-}"
mkdir -p "$PG_DIR"
# One pg.sh at a time per cluster directory: two concurrent `start`s must not both initdb.
exec 9>"$PG_DIR/.lock"
flock 9
case "$cmd" in
    start) start ;;
    stop) stop ;;
    url)
        BIN="$(find_bin)"
        [[ -n "$BIN" ]] && is_running || die "not running (scripts/pg.sh start)"
        url
        ;;
    status)
        BIN="$(find_bin)"
        [[ -n "$BIN" ]] && is_running && { say "running ($(url))"; exit 0; }
        say "not running"; exit 1
        ;;
    *) die "usage: scripts/pg.sh start|stop|url|status" ;;
esac
