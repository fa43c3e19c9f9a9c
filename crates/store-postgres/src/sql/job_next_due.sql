-- When the executor should look again: the database's now and the earliest due date among
-- unlocked jobs with retries left that the executor can run (external-worker jobs are fetched
-- by their workers). A job without a due date is due now.
SELECT date_trunc('milliseconds', now()) AS db_now_,
       CASE
           WHEN EXISTS (
               SELECT 1 FROM ACT_RU_JOB
               WHERE LOCK_OWNER_ IS NULL AND RETRIES_ > 0 AND DUEDATE_ IS NULL
                 AND TYPE_ IN ('message', 'timer'))
           THEN date_trunc('milliseconds', now())
           ELSE (
               SELECT min(DUEDATE_) FROM ACT_RU_JOB
               WHERE LOCK_OWNER_ IS NULL AND RETRIES_ > 0 AND TYPE_ IN ('message', 'timer'))
       END AS next_
