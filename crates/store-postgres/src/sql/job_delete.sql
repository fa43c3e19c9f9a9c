-- Deletes one job with its ACT_GE_BYTEARRAY rows (no orphans, seed 000 §4.2), unless it is
-- held by an unexpired lease and $2 (force) is false. Returns whether the row was found and
-- whether it was deleted, so the caller can tell NotFound from Conflict.
WITH target AS (
    SELECT ID_, coalesce(LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ > now(), false) AS leased
    FROM {table}
    WHERE ID_ = $1
    FOR UPDATE
),
removed AS (
    DELETE FROM {table} j
    USING target t
    WHERE j.ID_ = t.ID_ AND ($2 OR NOT t.leased)
    RETURNING j.EXCEPTION_STACK_ID_, j.CUSTOMVALUES_ID_
),
bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY
    WHERE ID_ IN (SELECT EXCEPTION_STACK_ID_ FROM removed UNION ALL SELECT CUSTOMVALUES_ID_ FROM removed)
)
SELECT (SELECT count(*) FROM target) AS found_, (SELECT count(*) FROM removed) AS removed_
