-- A node shutting down hands its running jobs back: locks cleared, no retry spent (the node
-- chose to stop; the job did nothing wrong), each attempt logged as abandoned with the reason.
-- Parameters: $1 node, $2 ids, $3 attempts, $4 log ids, $5 reason.
WITH c AS (
    SELECT * FROM unnest($2::text[], $3::int4[], $4::text[]) AS c(id, attempt, log_id)
),
released AS (
    UPDATE ACT_RU_JOB j
    SET LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, LOCK_TIME_ = NULL, REV_ = j.REV_ + 1
    FROM c, ACT_RU_JOB old
    -- IS NOT DISTINCT FROM keeps ATTEMPTS_ out of the join keys (see complete_delete.sql).
    WHERE j.ID_ = ANY ($2::text[]) AND j.ID_ = c.id AND j.ATTEMPTS_ IS NOT DISTINCT FROM c.attempt
      AND j.LOCK_OWNER_ = $1
      AND old.ID_ = j.ID_
    RETURNING j.*, old.LOCK_TIME_ AS started_, c.log_id
)
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT r.log_id, r.ID_, r.ATTEMPTS_, $1, r.started_,
       greatest(date_trunc('milliseconds', clock_timestamp()), r.started_), 'abandoned', $5,
       r.TYPE_, r.HANDLER_TYPE_, r.PROCESS_INSTANCE_ID_, r.ELEMENT_ID_, r.EXCLUSIVE_KEY_,
       r.DUEDATE_, r.TENANT_ID_
FROM released r
RETURNING JOB_ID_ AS id_
