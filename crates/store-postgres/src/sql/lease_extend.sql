-- Extends the leases a node still holds. The lease is (id, owner, attempt): a job taken over
-- by another node has another owner and a higher ATTEMPTS_, so it is not extended and its id is
-- missing from the result ("lease lost"). A lease that has already expired is not revived
-- either: by then another node may hold the job's exclusive key, or the reaper expired it
-- because this node looked dead. Parameters: $1 node, $2 ids, $3 attempts, $4 lock time.
-- (REV_ is left alone, as on SQLite: lease bookkeeping is not a change of the job.)
UPDATE ACT_RU_JOB j
SET LOCK_EXP_TIME_ = date_trunc('milliseconds', now()) + $4
FROM unnest($2::text[], $3::int4[]) AS l(id, attempt)
-- IS NOT DISTINCT FROM keeps ATTEMPTS_ out of the join keys (see complete_delete.sql).
WHERE j.ID_ = ANY ($2::text[]) AND j.ID_ = l.id AND j.ATTEMPTS_ IS NOT DISTINCT FROM l.attempt
  AND j.LOCK_OWNER_ = $1
  AND j.LOCK_EXP_TIME_ > now()
RETURNING j.ID_ AS id_
