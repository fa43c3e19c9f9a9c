-- Success of repeating timers with fires left (seed 000 §3.3): the row stays, DUEDATE_ and
-- REPEAT_ move on, the lock is cleared, a previous failure's exception is dropped (the job
-- log keeps it) and the next fire starts with the retries the job was created with
-- (INITIAL_RETRIES_, as Flowable's new timer job per fire): failures spread over a timer's
-- life never add up to a dead letter. Parameters as complete_delete.sql, plus $8 repeats and $9 next due dates.
WITH c AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::timestamptz[],
                $6::timestamptz[], $7::text[], $8::text[], $9::timestamptz[])
        AS c(id, node, attempt, log_id, started, finished, message, repeat, due)
),
moved AS (
    UPDATE ACT_RU_JOB j
    SET REPEAT_ = c.repeat, DUEDATE_ = c.due, RETRIES_ = coalesce(j.INITIAL_RETRIES_, j.RETRIES_),
        LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, LOCK_TIME_ = NULL,
        EXCEPTION_MSG_ = NULL, EXCEPTION_STACK_ID_ = NULL, REV_ = j.REV_ + 1
    FROM c, ACT_RU_JOB old
    -- The fence (owner, attempt) is compared with IS NOT DISTINCT FROM, which the planner
    -- cannot use as a join key: with `=`, stale statistics (LOCK_OWNER_ mostly null) made it
    -- merge-join on LOCK_OWNER_, comparing every pair of a batch (n^2). The primary key drives.
    WHERE j.ID_ = ANY ($1::text[]) AND j.ID_ = c.id
      AND j.LOCK_OWNER_ IS NOT DISTINCT FROM c.node AND j.ATTEMPTS_ IS NOT DISTINCT FROM c.attempt AND old.ID_ = j.ID_
    RETURNING j.ID_, j.TYPE_, j.HANDLER_TYPE_, j.PROCESS_INSTANCE_ID_, j.ELEMENT_ID_,
              j.EXCLUSIVE_KEY_, j.TENANT_ID_, old.DUEDATE_ AS fired_due,
              old.EXCEPTION_STACK_ID_ AS old_stack_id, c.log_id, c.node, c.attempt, c.started,
              c.finished, c.message
),
bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY
    WHERE ID_ = ANY (ARRAY(SELECT old_stack_id FROM moved WHERE old_stack_id IS NOT NULL))
)
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT m.log_id, m.ID_, m.attempt, m.node, m.started, m.finished, 'rescheduled', m.message,
       m.TYPE_, m.HANDLER_TYPE_, m.PROCESS_INSTANCE_ID_, m.ELEMENT_ID_, m.EXCLUSIVE_KEY_,
       m.fired_due, m.TENANT_ID_
FROM moved m
RETURNING ID_ AS log_id_
