-- Jobs locked with a lease that expired before ?1 (seed 000 §5.2), longest expired first.
SELECT * FROM ACT_RU_JOB
WHERE LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ <= ?1
ORDER BY LOCK_EXP_TIME_, ID_
LIMIT ?2 + 0
