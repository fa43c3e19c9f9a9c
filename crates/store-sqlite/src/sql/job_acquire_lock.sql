-- Locks the chosen jobs (?1: JSON array of ids) for node ?2 from ?3 until ?4. A job taken over
-- from an expired lease spends a retry: the abandoned attempt counts (unlike Camunda #2858) —
-- if its handler had started. A lease taken ahead of the due date (the lookahead) keeps a
-- LOCK_TIME_ before DUEDATE_ until its node starts the handler (the lease extension that comes
-- first moves LOCK_TIME_ to DUEDATE_), so such a lease expiring means no attempt was made.
-- SET expressions read the old row, so LOCK_OWNER_ here is the previous owner.
UPDATE ACT_RU_JOB
SET LOCK_OWNER_ = ?2,
    LOCK_TIME_ = ?3,
    LOCK_EXP_TIME_ = ?4,
    RETRIES_ = RETRIES_ - (CASE WHEN LOCK_OWNER_ IS NULL OR coalesce(DUEDATE_ > LOCK_TIME_, 0) THEN 0 ELSE 1 END),
    ATTEMPTS_ = ATTEMPTS_ + 1,
    REV_ = REV_ + 1
WHERE ID_ IN (SELECT value FROM json_each(?1))
