-- Of the leases $2/$3 (ids, attempts) that lease_extend.sql did not extend, those the committed
-- state still shows as node $1's and unexpired: skipped there because another transaction held
-- the row locked, not lost. A plain read: it waits for no lock.
SELECT j.ID_ AS id_, j.ATTEMPTS_ AS attempts_
FROM ACT_RU_JOB j
JOIN unnest($2::text[], $3::int4[]) AS l(id, attempt) ON j.ID_ = l.id
WHERE j.ATTEMPTS_ IS NOT DISTINCT FROM l.attempt
  AND j.LOCK_OWNER_ = $1
  AND j.LOCK_EXP_TIME_ > now()
ORDER BY j.ID_
