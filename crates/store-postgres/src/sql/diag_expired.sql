-- Jobs locked by an expired lease: their node died or overran its lock time (seed 000 §5.2).
SELECT *
FROM ACT_RU_JOB
WHERE LOCK_OWNER_ IS NOT NULL AND (LOCK_EXP_TIME_ IS NULL OR LOCK_EXP_TIME_ <= now())
ORDER BY LOCK_EXP_TIME_ NULLS FIRST, ID_
LIMIT $1
