-- lease_extend.sql for one lease ($2 id, $3 attempt) whose row another transaction held locked:
-- this one waits for the lock (bounded by the session's lock_timeout) instead of skipping, then
-- re-checks the lease on the row as that transaction left it (READ COMMITTED re-reads an
-- updated row before updating it): deleted, taken over or expired meanwhile is lost, else
-- extended. One row per statement, so the wait holds no other lock (no deadlock).
UPDATE ACT_RU_JOB j
SET LOCK_EXP_TIME_ = date_trunc('milliseconds', now()) + $4,
    LOCK_TIME_ = CASE WHEN $5 AND j.DUEDATE_ > j.LOCK_TIME_ THEN j.DUEDATE_ ELSE j.LOCK_TIME_ END
WHERE j.ID_ = $2 AND j.ATTEMPTS_ IS NOT DISTINCT FROM $3
  AND j.LOCK_OWNER_ = $1
  AND j.LOCK_EXP_TIME_ > now()
RETURNING j.ID_ AS id_
