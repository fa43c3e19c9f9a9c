#!/usr/bin/env bash
# The raw SQL floor: the enqueue / claim (FOR UPDATE SKIP LOCKED) / delete statements of a
# Postgres-backed queue replayed by pgbench on a minimal table, with nothing else around them.
#
#   driver.sh --batch 1|100 --workload drain --jobs N --concurrency C --url URL [--deadline S]
#
# Settings: pgbench -M prepared (server-side prepared statements, as every driver uses),
# C clients (4 by default: twice the cores, where a 2-core machine peaks), -j 2 threads, -n (no
# vacuum of pgbench's own tables, which do not exist here). Prints one JSON line.
# --deadline S bounds the measured phase (the claims) as for every peer (README "Workloads"):
# pgbench runs its N claims as before, but is stopped S seconds after its start if it has not
# finished; the jobs deleted by then (counted in the table once its sessions are gone) over the
# elapsed time are the jobs/s, with "completed" < "jobs" and "partial": true. (pgbench -T would
# bound the time too, but keeps claiming from an empty table until T when the N finish first.)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
batch=100 workload=drain jobs=100000 conc=4 url="" deadline=""
while (($#)); do
    case "$1" in
        --batch) batch="$2"; shift 2 ;;
        --workload) workload="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --concurrency) conc="$2"; shift 2 ;;
        --url) url="$2"; shift 2 ;;
        --deadline) deadline="$2"; shift 2 ;;
        --*) shift; [[ $# -gt 0 && "$1" != --* ]] && shift ;;  # another workload's argument: ignored
        *) echo "unexpected argument $1" >&2; exit 2 ;;
    esac
done
peer="sqlfloor-batch$batch"
[[ "$batch" == 1 ]] && peer="sqlfloor-1pertx"
version="$(pgbench --version | awk '{print $3}')"

# Runs one pgbench script for T transactions in total (spread over the clients) and prints the
# elapsed seconds, measured around pgbench (connections included, as a worker pays them once).
# With a third argument S (seconds), pgbench is stopped S seconds after its start if still
# running; the elapsed seconds are then followed by " stopped".
run_pgbench() {
    local script="$1" total_tx="$2" limit="${3:-}" per_client t0 t1 rc=0 out=/tmp/sqlfloor-pgbench.$$
    per_client=$(( (total_tx + conc - 1) / conc ))
    local cmd=(pgbench -n -M prepared -c "$conc" -j 2 -t "$per_client" -f "$here/$script" "$url")
    [[ -n "$limit" ]] && cmd=(timeout --signal=TERM "$limit" "${cmd[@]}")
    t0=$(date +%s.%N)
    "${cmd[@]}" >"$out" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    if [[ -n "$limit" && "$rc" == 124 ]]; then
        echo "pgbench stopped at the deadline ($limit s)" >&2
        # Its sessions end with it (an open transaction rolls back): count only once they are gone.
        for _ in $(seq 100); do
            [[ "$(psql -X -tA "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")" == 0 ]] && break
            sleep 0.05
        done
        rm -f "$out"
        python3 -c "print($t1 - $t0, 'stopped')"
        return
    fi
    (( rc == 0 )) || { cat "$out" >&2; rm -f "$out"; exit 1; }
    grep -E "^(tps|latency average|number of failed)" "$out" >&2 || true
    rm -f "$out"
    python3 -c "print($t1 - $t0)"
}

drain() {
    psql -X -q -v ON_ERROR_STOP=1 "$url" -f "$here/schema.sql" >&2
    # Enqueue: the same batching as the claims, so the figure is the full life cycle's first half.
    local enq_s drain_s left done_jobs
    enq_s=$(run_pgbench "enqueue_$batch.sql" $(( (jobs + batch - 1) / batch )))
    psql -X -q "$url" -c "VACUUM ANALYZE jobs" >&2
    local queued; queued=$(psql -X -tA "$url" -c "SELECT count(*) FROM jobs")
    # Claims: one transaction per batch; the last ones may find the table already empty. Bounded
    # by --deadline (when given): stopped there, it reports what it completed.
    local res stopped=false
    res=$(run_pgbench "claim_delete_$batch.sql" $(( (queued + batch - 1) / batch )) "$deadline")
    drain_s=${res%% *}
    [[ "$res" == *stopped ]] && stopped=true
    left=$(psql -X -tA "$url" -c "SELECT count(*) FROM jobs")
    done_jobs=$(( queued - left ))
    python3 - "$peer" "$version" "$workload" "$done_jobs" "$drain_s" "$queued" "$enq_s" "$batch" "$conc" "$stopped" "$deadline" <<'PY'
import json, sys
peer, version, workload, done, secs, queued, enq_s, batch, conc, stopped, deadline = sys.argv[1:]
done, secs, queued, enq_s = int(done), float(secs), int(queued), float(enq_s)
print(json.dumps({
    "peer": peer, "version": "pgbench " + version, "workload": workload,
    "jobs": queued, "completed": done, "partial": stopped == "true",
    "seconds": round(secs, 3), "jobs_per_s": round(done / secs, 1),
    "enqueue_per_s": round(queued / enq_s, 1),
    "settings": {"pgbench": "-M prepared -n -j 2", "clients": int(conc), "jobs_per_transaction": int(batch),
                 "claim": "SELECT id ... ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED; DELETE ... WHERE id = ANY(ids)" % batch,
                 "deadline_s": float(deadline) if deadline else None},
}))
PY
}

case "$workload" in
    drain) drain ;;
    # The floor is a throughput limit: a lateness workload has no meaning for bare statements.
    steady|timers) printf '{"peer":"%s","version":"pgbench %s","workload":"%s","error":"not applicable: the SQL floor measures throughput only"}\n' "$peer" "$version" "$workload" ;;
    *) printf '{"peer":"%s","version":"pgbench %s","workload":"%s","error":"not yet implemented"}\n' "$peer" "$version" "$workload" ;;
esac
