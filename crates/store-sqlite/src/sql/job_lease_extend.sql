-- Extends the leases node ?2 still holds: ?1 is a JSON array of [id, attempt]; the owner and the
-- attempt fence the update, so a lease taken over by another node is never extended.
UPDATE ACT_RU_JOB
SET LOCK_EXP_TIME_ = ?3
WHERE ROWID IN (
    SELECT j.ROWID
    FROM json_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j ON j.ID_ = c.value ->> 0 AND j.ATTEMPTS_ = c.value ->> 1
    WHERE j.LOCK_OWNER_ = ?2
)
RETURNING ID_
