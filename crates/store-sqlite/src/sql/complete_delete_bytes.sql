-- Step 3 of 4 (only when step 1 saw any): the stack traces and custom values of those jobs.
DELETE FROM ACT_GE_BYTEARRAY WHERE ID_ IN (
    SELECT j.EXCEPTION_STACK_ID_
    FROM jsonb_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j
      ON j.ID_ = c.value ->> 0 AND j.LOCK_OWNER_ = c.value ->> 1 AND j.ATTEMPTS_ = c.value ->> 2
    UNION ALL
    SELECT j.CUSTOMVALUES_ID_
    FROM jsonb_each(?1) AS c
    CROSS JOIN ACT_RU_JOB AS j
      ON j.ID_ = c.value ->> 0 AND j.LOCK_OWNER_ = c.value ->> 1 AND j.ATTEMPTS_ = c.value ->> 2
)
