-- Step 4 of 4: the rows themselves.
DELETE FROM ACT_RU_JOB
WHERE ROWID IN (
    SELECT j.ROWID
    FROM jsonb_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j
      ON j.ID_ = c.value ->> 0 AND j.LOCK_OWNER_ = c.value ->> 1 AND j.ATTEMPTS_ = c.value ->> 2
)
