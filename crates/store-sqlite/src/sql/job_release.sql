-- Hands jobs back (graceful shutdown): the lock is cleared, RETRIES_ is not spent. ?1 is a JSON
-- array of ids already checked against the lease in the same transaction.
UPDATE ACT_RU_JOB
SET LOCK_OWNER_ = NULL, LOCK_TIME_ = NULL, LOCK_EXP_TIME_ = NULL, REV_ = REV_ + 1
WHERE ID_ IN (SELECT value FROM json_each(?1))
