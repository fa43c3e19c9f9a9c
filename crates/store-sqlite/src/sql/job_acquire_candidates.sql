-- The executable jobs at ?1 (pinned or database now), earliest due first, at most ?2; dated jobs
-- due up to ?3 (now + the acquisition's lookahead: the executor starts them at their due date).
--
-- Seed 001's conditions — RETRIES_ > 0, due (or no due date), lock free or expired, no
-- execution or an active (SUSPENSION_STATE_ = 1) process instance — plus kairos' own: not an
-- external-worker job, and for an exclusive job no other exclusive job of its EXCLUSIVE_KEY_
-- holding an unexpired lease. (One job per key per batch is enforced by the caller.)
--
-- `LIMIT ?2 + 0`, not `LIMIT ?2`: a bare parameter in LIMIT makes SQLite re-prepare the statement
-- every time it is bound (the limit may change the plan), which costs more than the query.
--
-- Jobs due at the same instant go by PRIORITY_, higher first (a trigger's priority, as Quartz
-- orders simultaneous firings); the ready index holds it after DUEDATE_.
--
-- Written as four branches so that each walks an index in due order and stops at the limit:
-- due timers come first, from their own partial index ACT_IDX_JOB_TIMER_ACQUIRE (the timer
-- lane: a timer due now does not wait behind a backlog of async jobs due before it, and the
-- lane's rows are taken ahead of the others, LANE_ 0); other unlocked jobs from the partial
-- ready index ACT_IDX_JOB_ACQUIRE (which an OR on the lock would forbid), expired leases from
-- ACT_IDX_JOB_LOCKED (only the expired ones are read and sorted). Timers waiting in the future
-- are never read. INDEXED BY pins those plans: without
-- statistics SQLite may otherwise walk the whole DUEDATE_ index looking for expired leases.
WITH timers AS (
    SELECT RES.ID_, RES.DUEDATE_, RES.EXCLUSIVE_, RES.EXCLUSIVE_KEY_, RES.LOCK_OWNER_, RES.LOCK_TIME_,
           RES.LOCK_EXP_TIME_, RES.ATTEMPTS_, RES.RETRIES_, RES.PRIORITY_, 0 AS LANE_
    FROM ACT_RU_JOB RES INDEXED BY ACT_IDX_JOB_TIMER_ACQUIRE
    WHERE RES.TYPE_ = 'timer' AND RES.LOCK_OWNER_ IS NULL AND RES.RETRIES_ > 0 AND RES.DUEDATE_ <= ?3
      AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
            SELECT 1 FROM ACT_RU_EXECUTION PI
            WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1))
      AND (RES.EXCLUSIVE_ = 0 OR RES.EXCLUSIVE_KEY_ IS NULL OR NOT EXISTS (
            SELECT 1 FROM ACT_RU_JOB O
            WHERE O.EXCLUSIVE_KEY_ = RES.EXCLUSIVE_KEY_ AND O.EXCLUSIVE_ <> 0
              AND O.LOCK_OWNER_ IS NOT NULL AND O.LOCK_EXP_TIME_ > ?1))
    ORDER BY RES.DUEDATE_, RES.PRIORITY_ DESC
    LIMIT ?2 + 0
), undated AS (
    SELECT RES.ID_, RES.DUEDATE_, RES.EXCLUSIVE_, RES.EXCLUSIVE_KEY_, RES.LOCK_OWNER_, RES.LOCK_TIME_,
           RES.LOCK_EXP_TIME_, RES.ATTEMPTS_, RES.RETRIES_, RES.PRIORITY_, 1 AS LANE_
    FROM ACT_RU_JOB RES INDEXED BY ACT_IDX_JOB_ACQUIRE
    WHERE RES.LOCK_OWNER_ IS NULL AND RES.RETRIES_ > 0 AND RES.DUEDATE_ IS NULL
      AND RES.TYPE_ <> 'external-worker'
      AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
            SELECT 1 FROM ACT_RU_EXECUTION PI
            WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1))
      AND (RES.EXCLUSIVE_ = 0 OR RES.EXCLUSIVE_KEY_ IS NULL OR NOT EXISTS (
            SELECT 1 FROM ACT_RU_JOB O
            WHERE O.EXCLUSIVE_KEY_ = RES.EXCLUSIVE_KEY_ AND O.EXCLUSIVE_ <> 0
              AND O.LOCK_OWNER_ IS NOT NULL AND O.LOCK_EXP_TIME_ > ?1))
    LIMIT ?2 + 0
), ready AS (
    SELECT RES.ID_, RES.DUEDATE_, RES.EXCLUSIVE_, RES.EXCLUSIVE_KEY_, RES.LOCK_OWNER_, RES.LOCK_TIME_,
           RES.LOCK_EXP_TIME_, RES.ATTEMPTS_, RES.RETRIES_, RES.PRIORITY_, 1 AS LANE_
    FROM ACT_RU_JOB RES INDEXED BY ACT_IDX_JOB_ACQUIRE
    WHERE RES.LOCK_OWNER_ IS NULL AND RES.RETRIES_ > 0 AND RES.DUEDATE_ <= ?3
      AND RES.TYPE_ NOT IN ('external-worker', 'timer')
      AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
            SELECT 1 FROM ACT_RU_EXECUTION PI
            WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1))
      AND (RES.EXCLUSIVE_ = 0 OR RES.EXCLUSIVE_KEY_ IS NULL OR NOT EXISTS (
            SELECT 1 FROM ACT_RU_JOB O
            WHERE O.EXCLUSIVE_KEY_ = RES.EXCLUSIVE_KEY_ AND O.EXCLUSIVE_ <> 0
              AND O.LOCK_OWNER_ IS NOT NULL AND O.LOCK_EXP_TIME_ > ?1))
    ORDER BY RES.DUEDATE_, RES.PRIORITY_ DESC
    LIMIT ?2 + 0
), expired AS (
    SELECT RES.ID_, RES.DUEDATE_, RES.EXCLUSIVE_, RES.EXCLUSIVE_KEY_, RES.LOCK_OWNER_, RES.LOCK_TIME_,
           RES.LOCK_EXP_TIME_, RES.ATTEMPTS_, RES.RETRIES_, RES.PRIORITY_, 1 AS LANE_
    FROM ACT_RU_JOB RES INDEXED BY ACT_IDX_JOB_LOCKED
    WHERE RES.LOCK_OWNER_ IS NOT NULL AND RES.LOCK_EXP_TIME_ <= ?1 AND RES.RETRIES_ > 0
      AND (RES.DUEDATE_ IS NULL OR RES.DUEDATE_ <= ?1)
      AND RES.TYPE_ <> 'external-worker'
      AND (RES.EXECUTION_ID_ IS NULL OR EXISTS (
            SELECT 1 FROM ACT_RU_EXECUTION PI
            WHERE PI.ID_ = RES.PROCESS_INSTANCE_ID_ AND PI.SUSPENSION_STATE_ = 1))
      AND (RES.EXCLUSIVE_ = 0 OR RES.EXCLUSIVE_KEY_ IS NULL OR NOT EXISTS (
            SELECT 1 FROM ACT_RU_JOB O
            WHERE O.EXCLUSIVE_KEY_ = RES.EXCLUSIVE_KEY_ AND O.EXCLUSIVE_ <> 0
              AND O.LOCK_OWNER_ IS NOT NULL AND O.LOCK_EXP_TIME_ > ?1))
    ORDER BY RES.DUEDATE_
    LIMIT ?2 + 0
), picked AS (
    SELECT * FROM (
        SELECT * FROM timers UNION ALL SELECT * FROM undated UNION ALL SELECT * FROM ready
        UNION ALL SELECT * FROM expired
    )
    ORDER BY LANE_, DUEDATE_ NULLS FIRST, PRIORITY_ DESC, ID_
    LIMIT ?2 + 0
)
-- One row for the whole window (streaming a row per job through the driver costs more than
-- the query): each candidate as [ID_, EXCLUSIVE_, EXCLUSIVE_KEY_, LOCK_OWNER_, ATTEMPTS_,
-- LOCK_TIME_, LOCK_EXP_TIME_, RETRIES_, STARTED_], in due order (the lane decided which are
-- in the window, not their order: the executor's queue puts timers first); STARTED_ says whether the
-- handler of an expired lease's attempt had started (see job_acquire_lock.sql).
-- A BLOB (which JSON cannot hold) goes as its SQL literal x'00ff': that candidate cannot be read
-- and is set aside, instead of failing the statement and with it every acquisition.
SELECT COUNT(*) AS FETCHED_,
       json_group_array(
           json_array(
               CASE WHEN typeof(ID_) = 'blob' THEN lower(quote(ID_)) ELSE ID_ END,
               CASE WHEN typeof(EXCLUSIVE_) = 'blob' THEN lower(quote(EXCLUSIVE_)) ELSE EXCLUSIVE_ END,
               CASE WHEN typeof(EXCLUSIVE_KEY_) = 'blob' THEN lower(quote(EXCLUSIVE_KEY_)) ELSE EXCLUSIVE_KEY_ END,
               CASE WHEN typeof(LOCK_OWNER_) = 'blob' THEN lower(quote(LOCK_OWNER_)) ELSE LOCK_OWNER_ END,
               CASE WHEN typeof(ATTEMPTS_) = 'blob' THEN lower(quote(ATTEMPTS_)) ELSE ATTEMPTS_ END,
               CASE WHEN typeof(LOCK_TIME_) = 'blob' THEN lower(quote(LOCK_TIME_)) ELSE LOCK_TIME_ END,
               CASE WHEN typeof(LOCK_EXP_TIME_) = 'blob' THEN lower(quote(LOCK_EXP_TIME_)) ELSE LOCK_EXP_TIME_ END,
               CASE WHEN typeof(RETRIES_) = 'blob' THEN lower(quote(RETRIES_)) ELSE RETRIES_ END,
               NOT coalesce(DUEDATE_ > LOCK_TIME_, 0))
           ORDER BY DUEDATE_ NULLS FIRST, PRIORITY_ DESC, ID_
       ) AS CANDIDATES_
FROM picked
