-- The rows node ?2 still holds among ?1, a JSON array of [id, attempt].
SELECT j.*
FROM json_each(?1) AS c
CROSS JOIN ACT_RU_JOB AS j ON j.ID_ = c.value ->> 0 AND j.ATTEMPTS_ = c.value ->> 1
WHERE j.LOCK_OWNER_ = ?2
