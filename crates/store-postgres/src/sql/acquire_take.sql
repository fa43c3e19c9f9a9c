-- Acquisition, the common tail of both statements: lock the chosen rows for the node.
--
-- The clock is read once, after every row lock of this statement is held (the count forces
-- `chosen` to be complete first): it is LOCK_TIME_, the attempt's start in the job log, and the
-- `db_now` returned. Reading it after the locks (clock_timestamp(), not the transaction's
-- now()) keeps an exclusive job's start after the end of the previous attempt of its key.
clock AS MATERIALIZED (
    SELECT date_trunc('milliseconds', coalesce($4, clock_timestamp())) AS now
    FROM (SELECT count(*) FROM chosen) AS after_locks
),
-- Taken only when no exclusive candidate awaits statement 2, so one acquisition has one clock.
-- A row taken over from an expired lease spends a retry: the abandoned attempt counts
-- (unlike Camunda #2858, where a poison job that kills its node loops forever), if its handler
-- had started (see acquire_candidates.sql: `DUEDATE_ > LOCK_TIME_` means it had not).
taken AS (
    UPDATE ACT_RU_JOB j
    SET LOCK_OWNER_ = $1,
        LOCK_TIME_ = t.now,
        LOCK_EXP_TIME_ = t.now + $3,
        ATTEMPTS_ = j.ATTEMPTS_ + 1,
        REV_ = j.REV_ + 1,
        RETRIES_ = CASE WHEN c.LOCK_OWNER_ IS NULL OR coalesce(c.DUEDATE_ > c.LOCK_TIME_, false)
                        THEN j.RETRIES_ ELSE j.RETRIES_ - 1 END
    FROM chosen c, clock t, flags f
    WHERE j.ID_ = c.ID_ AND NOT f.has_exclusive
    RETURNING j.*,
              c.LOCK_OWNER_ AS abandoned_by_,
              coalesce(c.DUEDATE_ > c.LOCK_TIME_, false) AS unstarted_,
              c.LOCK_TIME_ AS abandoned_start_,
              coalesce(c.LOCK_EXP_TIME_, t.now) AS abandoned_end_
),
-- Expired leases on their last retry: to the dead letters, unlocked, RETRIES_ 0, saying whose
-- lease ran out. An earlier failure's stack stays with the job.
buried AS (
    DELETE FROM ACT_RU_JOB j
    USING exhausted e
    WHERE j.ID_ = e.ID_
    RETURNING j.*
),
dead_lettered AS (
    INSERT INTO ACT_RU_DEADLETTER_JOB (
        ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_,
        EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
        SCOPE_TYPE_, SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_,
        EXCEPTION_MSG_, DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_,
        CUSTOMVALUES_ID_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_, PRIORITY_
    )
    SELECT b.ID_, b.REV_ + 1, b.TYPE_, NULL, NULL, NULL, b.EXCLUSIVE_, b.EXCLUSIVE_KEY_,
           b.EXECUTION_ID_, b.PROCESS_INSTANCE_ID_, b.PROC_DEF_ID_, b.ELEMENT_ID_, b.ELEMENT_NAME_,
           b.SCOPE_ID_, b.SCOPE_TYPE_, b.SCOPE_DEFINITION_ID_, 0, b.ATTEMPTS_, b.EXCEPTION_STACK_ID_,
           'abandoned on its last retry: the lease of node ' || b.LOCK_OWNER_
               || ' expired before the attempt ended; node ' || $1 || ' moved the job to the dead letters',
           b.DUEDATE_, b.REPEAT_, b.RETRY_CYCLE_, b.HANDLER_TYPE_, b.HANDLER_CFG_,
           b.CUSTOMVALUES_ID_, b.CREATE_TIME_, b.TENANT_ID_, b.INITIAL_RETRIES_, b.PRIORITY_
    FROM buried b
),
-- The previous owner's attempt of every expired lease, logged in the same transaction as the
-- takeover. It ended, at the latest, when its lease expired. The id is a UUIDv7 built in SQL
-- (time-ordered, like the ids kairos generates).
abandoned AS (
    INSERT INTO ACT_HI_JOB_LOG (
        ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
        HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
    )
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                  PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                  FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid::text,
           a.job_id, a.attempt, a.node, a.started, a.ended, a.outcome, a.message, a.job_type,
           a.handler_type, a.process_instance_id, a.element_id, a.exclusive_key, a.duedate,
           a.tenant_id
    FROM (
        SELECT u.ID_ AS job_id, u.ATTEMPTS_ - 1 AS attempt, u.abandoned_by_ AS node,
               u.abandoned_start_ AS started, u.abandoned_end_ AS ended,
               CASE WHEN u.unstarted_ THEN 'not-started' ELSE 'abandoned' END AS outcome,
               CASE WHEN u.unstarted_
                    THEN 'the lease of node ' || u.abandoned_by_ || ' expired before the handler started (the job '
                         || 'was taken ahead of its due date); not counted as an attempt'
                    ELSE 'the lease of node ' || u.abandoned_by_ || ' expired before the attempt finished; node '
                         || $1 || ' took the job over' END AS message,
               u.TYPE_ AS job_type, u.HANDLER_TYPE_ AS handler_type,
               u.PROCESS_INSTANCE_ID_ AS process_instance_id, u.ELEMENT_ID_ AS element_id,
               u.EXCLUSIVE_KEY_ AS exclusive_key, u.DUEDATE_ AS duedate, u.TENANT_ID_ AS tenant_id
        FROM taken u
        WHERE u.abandoned_by_ IS NOT NULL
        UNION ALL
        SELECT b.ID_, b.ATTEMPTS_, b.LOCK_OWNER_, b.LOCK_TIME_, coalesce(b.LOCK_EXP_TIME_, t.now), 'abandoned',
               'the lease of node ' || b.LOCK_OWNER_ || ' expired on the last retry; node ' || $1
                   || ' moved the job to the dead letters',
               b.TYPE_, b.HANDLER_TYPE_, b.PROCESS_INSTANCE_ID_, b.ELEMENT_ID_, b.EXCLUSIVE_KEY_,
               b.DUEDATE_, b.TENANT_ID_
        FROM buried b, clock t
    ) a
)
-- Always one row at least (the clock), so an empty poll still costs one round trip only.
-- `has_exclusive_` rows are candidates kept for statement 2 (their advisory lock was granted,
-- or they are not exclusive); the other rows are jobs taken.
SELECT t.now AS db_now_, r.*
FROM clock t
LEFT JOIN (
    SELECT false AS has_exclusive_, u.* FROM taken u
    UNION ALL
    SELECT true, c.*, NULL::varchar, NULL::boolean, NULL::timestamptz, NULL::timestamptz
    FROM chosen c
    CROSS JOIN flags f
    LEFT JOIN got g ON c.EXCLUSIVE_ AND g.k = c.EXCLUSIVE_KEY_
    WHERE f.has_exclusive AND (g.k IS NULL OR g.ok)
) r ON true
ORDER BY r.DUEDATE_ NULLS FIRST, r.PRIORITY_ DESC, r.ID_
