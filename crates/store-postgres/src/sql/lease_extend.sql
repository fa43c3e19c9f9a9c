-- Extends the leases a node still holds. The lease is (id, owner, attempt): a job taken over
-- by another node has another owner and a higher ATTEMPTS_, so it is not extended and its id is
-- missing from the result ("lease lost"). A lease that has already expired is not revived
-- either: by then another node may hold the job's exclusive key, or the reaper expired it
-- because this node looked dead. Parameters: $1 node, $2 ids, $3 attempts, $4 lock time, $5 start.
-- (REV_ is left alone, as on SQLite: lease bookkeeping is not a change of the job.)
-- A row locked by another transaction is skipped, never waited for: the node's own completion
-- batches (several at once) delete rows this statement would extend, and waiting on each other
-- in different row orders deadlocked. A skipped row is one being completed here (the executor
-- does not treat a completing job's missing extension as a lost lease) or one another command
-- is deleting or moving, or one an operator's statement holds: complete.rs then extends, one
-- row at a time and waiting for its lock (lease_extend_wait.sql), each skipped lease that is
-- still this node's, so a lock alone never makes a lease look lost.
-- An extension with $5 true is how a node says the handler of a job it took ahead of its due
-- date starts now (the keeper's renewals pass false: a job waiting for its due date has not
-- started): LOCK_TIME_ (the attempt's start) moves from the acquisition to the due date, and
-- from then on a take-over counts the attempt (acquire_candidates.sql).
UPDATE ACT_RU_JOB j
SET LOCK_EXP_TIME_ = date_trunc('milliseconds', now()) + $4,
    LOCK_TIME_ = CASE WHEN $5 AND j.DUEDATE_ > j.LOCK_TIME_ THEN j.DUEDATE_ ELSE j.LOCK_TIME_ END
FROM unnest($2::text[], $3::int4[]) AS l(id, attempt)
-- IS NOT DISTINCT FROM keeps ATTEMPTS_ out of the join keys (see complete_delete.sql).
WHERE j.ID_ IN (SELECT ID_ FROM ACT_RU_JOB WHERE ID_ = ANY ($2::text[]) FOR UPDATE SKIP LOCKED)
  AND j.ID_ = l.id AND j.ATTEMPTS_ IS NOT DISTINCT FROM l.attempt
  AND j.LOCK_OWNER_ = $1
  AND j.LOCK_EXP_TIME_ > now()
RETURNING j.ID_ AS id_
