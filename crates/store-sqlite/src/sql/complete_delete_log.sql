-- Step 2 of 4: one ACT_HI_JOB_LOG row per fenced job, its columns copied from the row itself.
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT c.value ->> 3, j.ID_, j.ATTEMPTS_, j.LOCK_OWNER_, c.value ->> 4, c.value ->> 5, 'succeeded',
       c.value ->> 6, j.TYPE_, j.HANDLER_TYPE_, j.PROCESS_INSTANCE_ID_, j.ELEMENT_ID_,
       j.EXCLUSIVE_KEY_, j.DUEDATE_, j.TENANT_ID_
FROM jsonb_each(?1) AS c
CROSS JOIN ACT_RU_JOB AS j
  ON j.ID_ = c.value ->> 0 AND j.LOCK_OWNER_ = c.value ->> 1 AND j.ATTEMPTS_ = c.value ->> 2
