-- Acquisition, statement 2 of 2: only when statement 1 met exclusive candidates. Runs in the
-- same transaction, after statement 1 took the row locks and the advisory locks of the keys.
-- Parameters: $1 node, $2 ids kept by statement 1, $3 lock time, $4 pinned now.
--
-- Under READ COMMITTED this statement takes a new snapshot, so it sees every acquisition that
-- committed before our advisory lock was granted: re-checking "no unexpired lease on another
-- job of the key" here closes the race two nodes would otherwise have (each taking a different
-- job of one key, neither seeing the other's uncommitted lease).
WITH chosen AS (
    SELECT j.*
    FROM ACT_RU_JOB j
    WHERE j.ID_ = ANY($2::text[])
      AND NOT (j.EXCLUSIVE_ AND j.EXCLUSIVE_KEY_ IS NOT NULL AND EXISTS (
          SELECT 1 FROM ACT_RU_JOB o
          WHERE o.EXCLUSIVE_KEY_ = j.EXCLUSIVE_KEY_ AND o.EXCLUSIVE_ AND o.ID_ <> j.ID_
            AND o.LOCK_OWNER_ IS NOT NULL AND o.LOCK_EXP_TIME_ > coalesce($4, now())))
),
flags AS (
    SELECT false AS has_exclusive
),
exhausted AS (
    SELECT * FROM ACT_RU_JOB WHERE false
),
got AS (
    SELECT NULL::text AS k, NULL::boolean AS ok WHERE false
),
