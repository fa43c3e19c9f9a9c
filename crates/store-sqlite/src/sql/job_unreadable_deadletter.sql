-- Rows of ACT_RU_DEADLETTER_JOB that may not be readable, at most ?1, by id: a value of another type or form
-- than kairos writes (SQLite keeps whatever an UPDATE gives it). Rust decodes each suspect and
-- keeps those that really cannot be read (a hand-written '2026-01-01T08:00:00Z' can).
-- A canonical instant is 'YYYY-MM-DD HH:MM:SS.SSS' that datetime() accepts.
SELECT * FROM ACT_RU_DEADLETTER_JOB
WHERE typeof(ID_) <> 'text' OR typeof(REV_) <> 'integer'
   OR typeof(TYPE_) <> 'text' OR TYPE_ NOT IN ('message', 'timer', 'external-worker')
   OR typeof(EXCLUSIVE_) <> 'integer' OR typeof(RETRIES_) <> 'integer' OR typeof(ATTEMPTS_) <> 'integer'
   OR typeof(HANDLER_TYPE_) <> 'text'
   OR NOT (CREATE_TIME_ GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'
           AND datetime(CREATE_TIME_) IS NOT NULL)
   OR NOT coalesce(DUEDATE_ GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'
                   AND datetime(DUEDATE_) IS NOT NULL, 1)
   OR NOT coalesce(LOCK_EXP_TIME_ GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'
                   AND datetime(LOCK_EXP_TIME_) IS NOT NULL, 1)
   OR NOT coalesce(LOCK_TIME_ GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]'
                   AND datetime(LOCK_TIME_) IS NOT NULL, 1)
ORDER BY ID_
LIMIT ?1 + 0
