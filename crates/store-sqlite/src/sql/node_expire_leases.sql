-- The leases of nodes that no longer run their attempts (?1: JSON array of node ids) expire at
-- ?2, the database now, so the next acquisition takes their jobs over (SPEC J8) instead of
-- waiting for LOCK_EXP_TIME_: nodes declared dead, or the previous incarnation of a node that is
-- registering. Only live leases are read, through the locked-rows index.
UPDATE ACT_RU_JOB SET LOCK_EXP_TIME_ = ?2
WHERE LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ > ?2
  AND LOCK_OWNER_ IN (SELECT value FROM json_each(?1))
