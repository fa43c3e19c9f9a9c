-- Job counts at ?1 (the database now), one pass over ACT_RU_JOB. "Executable" is what acquisition
-- could take (job_acquire_candidates.sql, and the PostgreSQL store's job_counts.sql): seed 001's
-- selection (unlocked or lease expired, RETRIES_ > 0, due, no suspended instance) of the types
-- the executor runs, orphans included (acquisition never takes a job whose execution is gone;
-- the backlog shows it and the doctor names it apart); "running" and "expired" split the locked
-- rows at now.
-- A job without DUEDATE_ (an async continuation) has been due since its CREATE_TIME_.
WITH j AS (
    SELECT RES.DUEDATE_, RES.CREATE_TIME_, RES.EXCEPTION_MSG_,
           (RES.LOCK_OWNER_ IS NOT NULL AND RES.LOCK_EXP_TIME_ > ?1) AS RUNNING_,
           (RES.LOCK_OWNER_ IS NOT NULL AND RES.LOCK_EXP_TIME_ <= ?1) AS EXPIRED_,
           (RES.RETRIES_ > 0
             AND (RES.DUEDATE_ IS NULL OR RES.DUEDATE_ <= ?1)
             AND (RES.LOCK_OWNER_ IS NULL OR RES.LOCK_EXP_TIME_ <= ?1)
             AND RES.TYPE_ IN ('message', 'timer')
             AND NOT EXISTS (
                   SELECT 1 FROM ACT_RU_EXECUTION PI
                   WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ <> 1)
           ) AS EXECUTABLE_
    FROM ACT_RU_JOB RES
)
SELECT coalesce(SUM(EXECUTABLE_), 0) AS EXECUTABLE_,
       coalesce(SUM(NOT RUNNING_ AND DUEDATE_ > ?1), 0) AS WAITING_,
       coalesce(SUM(RUNNING_), 0) AS RUNNING_,
       coalesce(SUM(EXPIRED_), 0) AS EXPIRED_,
       coalesce(SUM(EXCEPTION_MSG_ IS NOT NULL), 0) AS FAILING_,
       (SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB) AS DEAD_LETTERS_,
       (SELECT COUNT(*) FROM ACT_RU_SUSPENDED_JOB) AS SUSPENDED_,
       MIN(CASE WHEN EXECUTABLE_ THEN coalesce(DUEDATE_, CREATE_TIME_) END) AS OLDEST_DUE_
FROM j
