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
-- (unlike Camunda #2858, where a poison job that kills its node loops forever).
taken AS (
    UPDATE ACT_RU_JOB j
    SET LOCK_OWNER_ = $1,
        LOCK_TIME_ = t.now,
        LOCK_EXP_TIME_ = t.now + $3,
        ATTEMPTS_ = j.ATTEMPTS_ + 1,
        REV_ = j.REV_ + 1,
        RETRIES_ = CASE WHEN c.LOCK_OWNER_ IS NULL THEN j.RETRIES_ ELSE j.RETRIES_ - 1 END
    FROM chosen c, clock t, flags f
    WHERE j.ID_ = c.ID_ AND NOT f.has_exclusive
    RETURNING j.*,
              c.LOCK_OWNER_ AS abandoned_by_,
              c.LOCK_TIME_ AS abandoned_start_,
              coalesce(c.LOCK_EXP_TIME_, t.now) AS abandoned_end_
),
-- The previous owner's attempt, logged in the same transaction as the takeover. It ended, at
-- the latest, when its lease expired. The id is a UUIDv7 built in SQL (time-ordered, like the
-- ids kairos generates).
abandoned AS (
    INSERT INTO ACT_HI_JOB_LOG (
        ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
        HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
    )
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                  PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                  FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid::text,
           u.ID_, u.ATTEMPTS_ - 1, u.abandoned_by_, u.abandoned_start_, u.abandoned_end_,
           'abandoned',
           'the lease of node ' || u.abandoned_by_ || ' expired before the attempt finished; node '
               || $1 || ' took the job over',
           u.TYPE_, u.HANDLER_TYPE_, u.PROCESS_INSTANCE_ID_, u.ELEMENT_ID_, u.EXCLUSIVE_KEY_,
           u.DUEDATE_, u.TENANT_ID_
    FROM taken u
    WHERE u.abandoned_by_ IS NOT NULL
)
-- Always one row at least (the clock), so an empty poll still costs one round trip only.
-- `has_exclusive_` rows are candidates kept for statement 2 (their advisory lock was granted,
-- or they are not exclusive); the other rows are jobs taken.
SELECT t.now AS db_now_, r.*
FROM clock t
LEFT JOIN (
    SELECT false AS has_exclusive_, u.* FROM taken u
    UNION ALL
    SELECT true, c.*, NULL::varchar, NULL::timestamptz, NULL::timestamptz
    FROM chosen c
    CROSS JOIN flags f
    LEFT JOIN got g ON c.EXCLUSIVE_ AND g.k = c.EXCLUSIVE_KEY_
    WHERE f.has_exclusive AND (g.k IS NULL OR g.ok)
) r ON true
ORDER BY r.DUEDATE_ NULLS FIRST, r.ID_
