-- Extends the leases node ?2 still holds: ?1 is a JSON array of [id, attempt]; the owner and the
-- attempt fence the update, so a lease taken over by another node is never extended; a lease
-- that has already expired (?4 = now) is not revived either: by then another node may hold the
-- job's exclusive key, or the reaper may have expired it because this node looked dead.
-- An extension with ?5 = 1 is how a node says the handler of a job it took ahead of its due date
-- starts now: LOCK_TIME_ (the attempt's start) moves from the acquisition to the due date, and
-- from then on a take-over counts the attempt (see job_acquire_lock.sql). The keeper's renewals
-- (?5 = 0) leave it: a job waiting for its due date has not started.
UPDATE ACT_RU_JOB
SET LOCK_EXP_TIME_ = ?3,
    LOCK_TIME_ = CASE WHEN ?5 AND DUEDATE_ > LOCK_TIME_ THEN DUEDATE_ ELSE LOCK_TIME_ END
WHERE ROWID IN (
    SELECT j.ROWID
    FROM json_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j ON j.ID_ = c.value ->> 0 AND j.ATTEMPTS_ = c.value ->> 1
    WHERE j.LOCK_OWNER_ = ?2 AND j.LOCK_EXP_TIME_ > ?4
)
RETURNING ID_
