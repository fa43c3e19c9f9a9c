-- Success of one-shot jobs: delete each row whose lease (id + owner + attempt) still holds,
-- with its ACT_GE_BYTEARRAY rows, and log the attempt. One statement for the whole batch.
-- Parameters, one array element per completion: $1 job ids, $2 nodes, $3 attempts, $4 log ids,
-- $5 attempt starts, $6 attempt ends, $7 log messages. Returns the log ids of the completions applied.
WITH c AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::timestamptz[],
                $6::timestamptz[], $7::text[])
        AS c(id, node, attempt, log_id, started, finished, message)
),
done AS (
    DELETE FROM ACT_RU_JOB j
    USING c
    -- The fence (owner, attempt) is compared with IS NOT DISTINCT FROM, which the planner
    -- cannot use as a join key: with `=`, stale statistics (LOCK_OWNER_ mostly null) made it
    -- merge-join on LOCK_OWNER_, comparing every pair of a batch (n^2). The primary key drives.
    WHERE j.ID_ = ANY ($1::text[]) AND j.ID_ = c.id
      AND j.LOCK_OWNER_ IS NOT DISTINCT FROM c.node AND j.ATTEMPTS_ IS NOT DISTINCT FROM c.attempt
    RETURNING j.*, c.log_id, c.node, c.attempt, c.started, c.finished, c.message
),
bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY
    WHERE ID_ = ANY (ARRAY(
        SELECT EXCEPTION_STACK_ID_ FROM done WHERE EXCEPTION_STACK_ID_ IS NOT NULL
        UNION ALL
        SELECT CUSTOMVALUES_ID_ FROM done WHERE CUSTOMVALUES_ID_ IS NOT NULL))
)
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT d.log_id, d.ID_, d.attempt, d.node, d.started, d.finished, 'succeeded', d.message, d.TYPE_,
       d.HANDLER_TYPE_, d.PROCESS_INSTANCE_ID_, d.ELEMENT_ID_, d.EXCLUSIVE_KEY_, d.DUEDATE_,
       d.TENANT_ID_
FROM done d
RETURNING ID_ AS log_id_
