-- Job counts by the database clock (metrics, the doctor; seed 000 §5.2). "Leased" means locked
-- by an unexpired lease, as in JobState::of. The executable backlog is what acquisition could
-- take (acquire_candidates.sql, and the SQLite store's job_counts.sql): external-worker jobs
-- wait for their workers, not for the executor, and a job of a suspended process instance waits
-- for its activation. An orphan (its execution gone, which acquisition never takes either) is
-- counted: the backlog shows it, and the doctor names it apart. A job without DUEDATE_ (an async
-- continuation) has been due since its CREATE_TIME_.
WITH j AS (
    SELECT RES.DUEDATE_, RES.CREATE_TIME_, RES.RETRIES_, RES.LOCK_OWNER_, RES.EXCEPTION_MSG_,
           (RES.TYPE_ IN ('message', 'timer')
             AND NOT EXISTS (
                   SELECT 1 FROM ACT_RU_EXECUTION PI
                   WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ <> 1)) AS runnable,
           coalesce(RES.LOCK_OWNER_ IS NOT NULL AND RES.LOCK_EXP_TIME_ > now(), false) AS leased
    FROM ACT_RU_JOB RES
)
SELECT
    count(*) FILTER (WHERE runnable AND NOT leased AND RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= now()))
        AS executable_,
    count(*) FILTER (WHERE NOT leased AND DUEDATE_ > now()) AS waiting_,
    count(*) FILTER (WHERE leased) AS running_,
    count(*) FILTER (WHERE LOCK_OWNER_ IS NOT NULL AND NOT leased) AS expired_locks_,
    count(*) FILTER (WHERE EXCEPTION_MSG_ IS NOT NULL) AS failing_,
    min(coalesce(DUEDATE_, CREATE_TIME_))
        FILTER (WHERE runnable AND NOT leased AND RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= now()))
        AS oldest_executable_due_,
    (SELECT count(*) FROM ACT_RU_DEADLETTER_JOB) AS dead_letters_,
    (SELECT count(*) FROM ACT_RU_SUSPENDED_JOB) AS suspended_
FROM j
