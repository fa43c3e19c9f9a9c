-- A page of ACT_RU_JOB; a NULL filter matches everything. ?4 is 1 (with exception) or 0 (without).
SELECT * FROM ACT_RU_JOB
WHERE (?1 IS NULL OR PROCESS_INSTANCE_ID_ = ?1)
  AND (?2 IS NULL OR HANDLER_TYPE_ = ?2)
  AND (?3 IS NULL OR TYPE_ = ?3)
  AND (?4 IS NULL OR (EXCEPTION_MSG_ IS NOT NULL) = ?4)
  AND (?7 IS NULL OR TENANT_ID_ = ?7)
ORDER BY DUEDATE_, ID_
LIMIT ?5 + 0 OFFSET ?6 + 0  -- "+ 0": no re-prepare per page (see job_acquire_candidates.sql)
