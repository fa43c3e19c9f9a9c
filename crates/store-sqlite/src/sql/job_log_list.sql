-- A page of the job log, oldest attempt first; a NULL filter matches everything.
SELECT * FROM ACT_HI_JOB_LOG
WHERE (?1 IS NULL OR JOB_ID_ = ?1)
  AND (?2 IS NULL OR PROCESS_INSTANCE_ID_ = ?2)
ORDER BY START_TIME_, JOB_ID_, ATTEMPT_, ID_
LIMIT ?3 + 0 OFFSET ?4 + 0  -- "+ 0": no re-prepare per page (see job_acquire_candidates.sql)
