-- Failure of the last attempt (SPEC J3, J4): the row moves to ACT_RU_DEADLETTER_JOB with
-- RETRIES_ 0, its lock cleared, the exception message and a new stack (the previous failure's
-- bytes deleted). Parameters as complete_retry.sql without retries and due dates: $8 stack ids,
-- $9 stacks.
WITH c AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::timestamptz[],
                $6::timestamptz[], $7::text[], $8::text[], $9::text[])
        AS c(id, node, attempt, log_id, started, finished, message, stack_id, stack)
),
moved AS (
    DELETE FROM ACT_RU_JOB j
    USING c
    -- The fence (owner, attempt) is compared with IS NOT DISTINCT FROM, which the planner
    -- cannot use as a join key: with `=`, stale statistics (LOCK_OWNER_ mostly null) made it
    -- merge-join on LOCK_OWNER_, comparing every pair of a batch (n^2). The primary key drives.
    WHERE j.ID_ = ANY ($1::text[]) AND j.ID_ = c.id
      AND j.LOCK_OWNER_ IS NOT DISTINCT FROM c.node AND j.ATTEMPTS_ IS NOT DISTINCT FROM c.attempt
    RETURNING j.*, c.log_id, c.node, c.attempt, c.started, c.finished, c.message, c.stack_id,
              c.stack
),
old_bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY
    WHERE ID_ = ANY (ARRAY(SELECT EXCEPTION_STACK_ID_ FROM moved WHERE EXCEPTION_STACK_ID_ IS NOT NULL))
),
new_bytes AS (
    INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, BYTES_, GENERATED_)
    SELECT m.stack_id, 1, 'job.exceptionStack', convert_to(m.stack, 'UTF8'), false
    FROM moved m
),
dead AS (
    INSERT INTO ACT_RU_DEADLETTER_JOB (
        ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_,
        EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
        SCOPE_TYPE_, SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_,
        EXCEPTION_MSG_, DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_,
        CUSTOMVALUES_ID_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_, PRIORITY_
    )
    SELECT m.ID_, m.REV_ + 1, m.TYPE_, NULL, NULL, NULL, m.EXCLUSIVE_, m.EXCLUSIVE_KEY_,
           m.EXECUTION_ID_, m.PROCESS_INSTANCE_ID_, m.PROC_DEF_ID_, m.ELEMENT_ID_,
           m.ELEMENT_NAME_, m.SCOPE_ID_, m.SCOPE_TYPE_, m.SCOPE_DEFINITION_ID_, 0, m.ATTEMPTS_,
           m.stack_id, m.message, m.DUEDATE_, m.REPEAT_, m.RETRY_CYCLE_, m.HANDLER_TYPE_,
           m.HANDLER_CFG_, m.CUSTOMVALUES_ID_, m.CREATE_TIME_, m.TENANT_ID_, m.INITIAL_RETRIES_, m.PRIORITY_
    FROM moved m
)
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT m.log_id, m.ID_, m.attempt, m.node, m.started, m.finished, 'dead-lettered', m.message,
       m.TYPE_, m.HANDLER_TYPE_, m.PROCESS_INSTANCE_ID_, m.ELEMENT_ID_, m.EXCLUSIVE_KEY_,
       m.DUEDATE_, m.TENANT_ID_
FROM moved m
RETURNING ID_ AS log_id_
