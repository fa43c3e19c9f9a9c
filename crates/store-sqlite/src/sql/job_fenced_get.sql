-- The row if node ?2 still holds its lease for attempt ?3.
SELECT * FROM ACT_RU_JOB WHERE ID_ = ?1 AND LOCK_OWNER_ = ?2 AND ATTEMPTS_ = ?3
