-- The total behind a page of job_list_deadletter.sql (same filters).
SELECT COUNT(*) AS TOTAL_ FROM ACT_RU_DEADLETTER_JOB
WHERE (?1 IS NULL OR PROCESS_INSTANCE_ID_ = ?1)
  AND (?2 IS NULL OR HANDLER_TYPE_ = ?2)
  AND (?3 IS NULL OR TYPE_ = ?3)
  AND (?4 IS NULL OR (EXCEPTION_MSG_ IS NOT NULL) = ?4)
  AND (?5 IS NULL OR TENANT_ID_ = ?5)
