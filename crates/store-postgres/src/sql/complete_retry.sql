-- Failure with attempts left (SPEC J3, seed 001's failure branch), in one statement per batch:
-- RETRIES_ as planned, lock cleared, EXCEPTION_MSG_ set, the full error chain stored in
-- ACT_GE_BYTEARRAY under a new id (the previous failure's bytes deleted: no orphans), DUEDATE_
-- pushed back. Parameters as complete_delete.sql (the message is the exception message), plus
-- $8 retries, $9 due dates, $10 stack ids, $11 stacks.
WITH c AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::timestamptz[],
                $6::timestamptz[], $7::text[], $8::int4[], $9::timestamptz[], $10::text[],
                $11::text[])
        AS c(id, node, attempt, log_id, started, finished, message, retries, due, stack_id, stack)
),
failed AS (
    UPDATE ACT_RU_JOB j
    SET RETRIES_ = c.retries, DUEDATE_ = c.due,
        LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, LOCK_TIME_ = NULL,
        EXCEPTION_MSG_ = c.message, EXCEPTION_STACK_ID_ = c.stack_id, REV_ = j.REV_ + 1
    FROM c, ACT_RU_JOB old
    -- The fence (owner, attempt) is compared with IS NOT DISTINCT FROM, which the planner
    -- cannot use as a join key: with `=`, stale statistics (LOCK_OWNER_ mostly null) made it
    -- merge-join on LOCK_OWNER_, comparing every pair of a batch (n^2). The primary key drives.
    WHERE j.ID_ = ANY ($1::text[]) AND j.ID_ = c.id
      AND j.LOCK_OWNER_ IS NOT DISTINCT FROM c.node AND j.ATTEMPTS_ IS NOT DISTINCT FROM c.attempt AND old.ID_ = j.ID_
    RETURNING j.ID_, j.TYPE_, j.HANDLER_TYPE_, j.PROCESS_INSTANCE_ID_, j.ELEMENT_ID_,
              j.EXCLUSIVE_KEY_, j.TENANT_ID_, old.DUEDATE_ AS attempt_due,
              old.EXCEPTION_STACK_ID_ AS old_stack_id, c.log_id, c.node, c.attempt, c.started,
              c.finished, c.message, c.stack_id, c.stack
),
old_bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY
    WHERE ID_ = ANY (ARRAY(SELECT old_stack_id FROM failed WHERE old_stack_id IS NOT NULL))
),
new_bytes AS (
    INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, BYTES_, GENERATED_)
    SELECT f.stack_id, 1, 'job.exceptionStack', convert_to(f.stack, 'UTF8'), false
    FROM failed f
)
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT f.log_id, f.ID_, f.attempt, f.node, f.started, f.finished, 'failed', f.message, f.TYPE_,
       f.HANDLER_TYPE_, f.PROCESS_INSTANCE_ID_, f.ELEMENT_ID_, f.EXCLUSIVE_KEY_, f.attempt_due,
       f.TENANT_ID_
FROM failed f
RETURNING ID_ AS log_id_
