-- Registers node $1 as it starts, and expires the unexpired leases held under its id, in one
-- statement (one transaction). A node that has not acquired yet holds no lease, so such leases
-- belong to a previous incarnation (a process restarted under a fixed node id), which the
-- reaper will never declare dead because this one heartbeats under the same id. The takeover
-- itself (retry spent, `abandoned` log row) happens in acquisition, as for any expired lease.
--
-- STARTED_ is reset even when the row says `running`: this is a new incarnation.
-- Lock order: the node row first (`held` joins `node`, so no job row is locked before the
-- upsert has produced its row; the reaper also locks the node row before its jobs), then the
-- job rows in ID_ order, the order in which completion batches lock them (primary key scans of
-- `ID_ = ANY(...)`), so a concurrent batch of the old incarnation cannot deadlock with this.
WITH node AS (
    INSERT INTO KAIROS_NODE AS n (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_,
                                 LOCK_TIME_MS_, HEARTBEAT_MS_, DEAD_AFTER_MS_, LOOKAHEAD_MS_, POLL_MS_, TIME_ZONE_)
    VALUES ($1, $2, $3, $4, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()), 'running',
            $5, $6, $7, $8, $9, $10)
    ON CONFLICT (ID_) DO UPDATE
    SET HOST_ = excluded.HOST_,
        PID_ = excluded.PID_,
        WORKERS_ = excluded.WORKERS_,
        LOCK_TIME_MS_ = coalesce(excluded.LOCK_TIME_MS_, n.LOCK_TIME_MS_),
        HEARTBEAT_MS_ = coalesce(excluded.HEARTBEAT_MS_, n.HEARTBEAT_MS_),
        DEAD_AFTER_MS_ = coalesce(excluded.DEAD_AFTER_MS_, n.DEAD_AFTER_MS_),
        LOOKAHEAD_MS_ = coalesce(excluded.LOOKAHEAD_MS_, n.LOOKAHEAD_MS_),
        POLL_MS_ = coalesce(excluded.POLL_MS_, n.POLL_MS_),
        TIME_ZONE_ = coalesce(excluded.TIME_ZONE_, n.TIME_ZONE_),
        STARTED_ = excluded.STARTED_,
        HEARTBEAT_ = excluded.HEARTBEAT_,
        STATE_ = 'running'
    RETURNING ID_, HEARTBEAT_
),
held AS MATERIALIZED (
    SELECT j.ID_
    FROM ACT_RU_JOB j
    JOIN node ON j.LOCK_OWNER_ = node.ID_
    WHERE j.LOCK_OWNER_ = $1 AND j.LOCK_EXP_TIME_ > date_trunc('milliseconds', now())
    ORDER BY j.ID_
    FOR UPDATE OF j
),
expired AS (
    UPDATE ACT_RU_JOB j
    SET LOCK_EXP_TIME_ = date_trunc('milliseconds', now())
    FROM held h
    WHERE j.ID_ = h.ID_ AND j.LOCK_OWNER_ = $1
      AND j.LOCK_EXP_TIME_ > date_trunc('milliseconds', now())
    RETURNING j.ID_
)
SELECT (SELECT HEARTBEAT_ FROM node) AS db_now_, (SELECT count(*) FROM expired) AS released_
