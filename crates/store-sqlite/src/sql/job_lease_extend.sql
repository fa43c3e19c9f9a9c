-- Extends the leases node ?2 still holds: ?1 is a JSON array of [id, attempt]; the owner and the
-- attempt fence the update, so a lease taken over by another node is never extended; a lease
-- that has already expired (?4 = now) is not revived either: by then another node may hold the
-- job's exclusive key, or the reaper may have expired it because this node looked dead.
UPDATE ACT_RU_JOB
SET LOCK_EXP_TIME_ = ?3
WHERE ROWID IN (
    SELECT j.ROWID
    FROM json_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j ON j.ID_ = c.value ->> 0 AND j.ATTEMPTS_ = c.value ->> 1
    WHERE j.LOCK_OWNER_ = ?2 AND j.LOCK_EXP_TIME_ > ?4
)
RETURNING ID_
