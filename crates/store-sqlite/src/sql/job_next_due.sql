-- The database now and the earliest due date among jobs acquisition could take once due:
-- unlocked, retries left, not external-worker, not of a suspended instance. A job without a
-- due date is due now. Walks the partial ready index in due order and stops at the first hit.
WITH clock(T) AS (SELECT strftime('%Y-%m-%d %H:%M:%f', 'now'))
SELECT clock.T AS NOW_,
       CASE WHEN EXISTS (
                SELECT 1 FROM ACT_RU_JOB RES
                WHERE RES.LOCK_OWNER_ IS NULL AND RES.RETRIES_ > 0 AND RES.DUEDATE_ IS NULL
                  AND RES.TYPE_ <> 'external-worker'
                  AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
                        SELECT 1 FROM ACT_RU_EXECUTION PI
                        WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1)))
            THEN clock.T
            ELSE (
                SELECT RES.DUEDATE_ FROM ACT_RU_JOB RES
                WHERE RES.LOCK_OWNER_ IS NULL AND RES.RETRIES_ > 0 AND RES.DUEDATE_ IS NOT NULL
                  AND RES.TYPE_ <> 'external-worker'
                  AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
                        SELECT 1 FROM ACT_RU_EXECUTION PI
                        WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1))
                ORDER BY RES.DUEDATE_
                LIMIT 1)
       END AS NEXT_
FROM clock
