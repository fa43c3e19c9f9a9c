-- Rows of {table} that may not be readable, at most $1, by id: a TYPE_ kairos does not know or
-- an instant outside the years kairos represents (`infinity`, beyond 9999 or before year 1:
-- the range narrows the scan; Rust decodes each suspect and keeps those that cannot be read).
SELECT *
FROM {table}
WHERE TYPE_ NOT IN ('message', 'timer', 'external-worker')
   OR NOT (CREATE_TIME_ BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-30 00:00:00+00')
   OR NOT coalesce(DUEDATE_ BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-30 00:00:00+00', true)
   OR NOT coalesce(LOCK_EXP_TIME_ BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-30 00:00:00+00', true)
   OR NOT coalesce(LOCK_TIME_ BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-30 00:00:00+00', true)
ORDER BY ID_
LIMIT $1
