-- Locks the chosen jobs (?1: JSON array of ids) for node ?2 from ?3 until ?4. A job taken over
-- from an expired lease spends a retry: the abandoned attempt counts (unlike Camunda #2858).
-- SET expressions read the old row, so LOCK_OWNER_ here is the previous owner.
UPDATE ACT_RU_JOB
SET LOCK_OWNER_ = ?2,
    LOCK_TIME_ = ?3,
    LOCK_EXP_TIME_ = ?4,
    RETRIES_ = RETRIES_ - (CASE WHEN LOCK_OWNER_ IS NULL THEN 0 ELSE 1 END),
    ATTEMPTS_ = ATTEMPTS_ + 1,
    REV_ = REV_ + 1
WHERE ID_ IN (SELECT value FROM json_each(?1))
