-- Declares running nodes whose last heartbeat is older than $1 (database clock) dead, and
-- expires the unexpired leases they hold, so other nodes take those jobs over now instead of at
-- LOCK_EXP_TIME_ (SPEC J8). The takeover itself (retry spent, `abandoned` log row) happens in
-- acquisition, as for any expired lease.
WITH dead AS (
    UPDATE KAIROS_NODE
    SET STATE_ = 'dead'
    WHERE STATE_ = 'running' AND HEARTBEAT_ < now() - $1
    RETURNING ID_
),
expired AS (
    UPDATE ACT_RU_JOB j
    SET LOCK_EXP_TIME_ = date_trunc('milliseconds', now())
    FROM dead d
    WHERE j.LOCK_OWNER_ = d.ID_ AND j.LOCK_EXP_TIME_ > date_trunc('milliseconds', now())
)
SELECT ID_ AS id_ FROM dead ORDER BY ID_
