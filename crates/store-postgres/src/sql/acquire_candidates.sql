-- Acquisition, statement 1 of 1 (or of 2 when exclusive jobs are among the candidates).
-- See acquire.rs for the protocol. Parameters: $1 node, $2 limit, $3 lock time (interval),
-- $4 pinned now (null in production), $5 lookahead (interval: dated jobs due that much after
-- now are taken too; the executor starts them at their due date).
--
-- A candidate is what seed 001's query selects: RETRIES_ > 0, due (or no due date), lock free
-- or expired, no execution or an active (SUSPENSION_STATE_ = 1) process instance; beyond the
-- seed, only the types the executor runs (external-worker jobs are fetched over HTTP) and, for
-- an exclusive job, no unexpired lease on another exclusive job of its EXCLUSIVE_KEY_.
--
-- An expired lease on the job's last retry (RETRIES_ 1) is not run again: the abandoned attempt
-- spent that retry, so the job goes to the dead letters in this same statement (docs/jobs.md).
-- Unless its handler never started: a lease taken ahead of the due date (the lookahead) keeps
-- LOCK_TIME_ before DUEDATE_ until its node starts the handler (lease_extend.sql moves it), and
-- such a lease expiring was no attempt (`DUEDATE_ > LOCK_TIME_`: taken again, no retry spent).
--
-- Four scans, each FOR UPDATE SKIP LOCKED so concurrent nodes pass over each other's rows
-- instead of waiting or deadlocking (seed 001 line 1): expired leases first (few, and they
-- must not starve behind a deep backlog), then due timers from their own partial index
-- ACT_IDX_JOB_TIMER_ACQUIRE (the timer lane: a timer due now does not wait behind a backlog of
-- async jobs due before it), then jobs without a due date, then dated message jobs in due
-- order, those due at the same instant by PRIORITY_, higher first (a trigger's priority, as
-- Quartz orders simultaneous firings; the ready index holds it after DUEDATE_). Splitting them lets each use its partial index as a bounded range: the dated scan
-- stops at now instead of walking past every future timer.
WITH expired AS (
    SELECT j.*
    FROM ACT_RU_JOB j
    WHERE j.LOCK_OWNER_ IS NOT NULL
      AND (j.LOCK_EXP_TIME_ IS NULL OR j.LOCK_EXP_TIME_ <= coalesce($4, now()))
      AND (j.DUEDATE_ IS NULL OR j.DUEDATE_ <= coalesce($4, now()))
      AND j.RETRIES_ > 0
      AND j.TYPE_ IN ('message', 'timer')
      AND (j.EXECUTION_ID_ IS NULL OR EXISTS (
          SELECT 1 FROM ACT_RU_EXECUTION pi
          WHERE pi.ID_ = j.PROCESS_INSTANCE_ID_ AND pi.SUSPENSION_STATE_ = 1))
      AND NOT (j.EXCLUSIVE_ AND j.EXCLUSIVE_KEY_ IS NOT NULL AND EXISTS (
          SELECT 1 FROM ACT_RU_JOB o
          WHERE o.EXCLUSIVE_KEY_ = j.EXCLUSIVE_KEY_ AND o.EXCLUSIVE_ AND o.ID_ <> j.ID_
            AND o.LOCK_OWNER_ IS NOT NULL AND o.LOCK_EXP_TIME_ > coalesce($4, now())))
    ORDER BY j.LOCK_EXP_TIME_ NULLS FIRST
    LIMIT $2
    FOR UPDATE OF j SKIP LOCKED
),
timers AS (
    SELECT j.*
    FROM ACT_RU_JOB j
    WHERE j.TYPE_ = 'timer'
      AND j.LOCK_OWNER_ IS NULL
      AND j.RETRIES_ > 0
      AND j.DUEDATE_ <= coalesce($4, now()) + $5
      AND (j.EXECUTION_ID_ IS NULL OR EXISTS (
          SELECT 1 FROM ACT_RU_EXECUTION pi
          WHERE pi.ID_ = j.PROCESS_INSTANCE_ID_ AND pi.SUSPENSION_STATE_ = 1))
      AND NOT (j.EXCLUSIVE_ AND j.EXCLUSIVE_KEY_ IS NOT NULL AND EXISTS (
          SELECT 1 FROM ACT_RU_JOB o
          WHERE o.EXCLUSIVE_KEY_ = j.EXCLUSIVE_KEY_ AND o.EXCLUSIVE_ AND o.ID_ <> j.ID_
            AND o.LOCK_OWNER_ IS NOT NULL AND o.LOCK_EXP_TIME_ > coalesce($4, now())))
    ORDER BY j.DUEDATE_, j.PRIORITY_ DESC
    LIMIT greatest($2 - (SELECT count(*) FROM expired WHERE RETRIES_ > 1 OR coalesce(DUEDATE_ > LOCK_TIME_, false)), 0)
    FOR UPDATE OF j SKIP LOCKED
),
undated AS (
    SELECT j.*
    FROM ACT_RU_JOB j
    WHERE j.LOCK_OWNER_ IS NULL
      AND j.RETRIES_ > 0
      AND j.DUEDATE_ IS NULL
      AND j.TYPE_ IN ('message', 'timer')
      AND (j.EXECUTION_ID_ IS NULL OR EXISTS (
          SELECT 1 FROM ACT_RU_EXECUTION pi
          WHERE pi.ID_ = j.PROCESS_INSTANCE_ID_ AND pi.SUSPENSION_STATE_ = 1))
      AND NOT (j.EXCLUSIVE_ AND j.EXCLUSIVE_KEY_ IS NOT NULL AND EXISTS (
          SELECT 1 FROM ACT_RU_JOB o
          WHERE o.EXCLUSIVE_KEY_ = j.EXCLUSIVE_KEY_ AND o.EXCLUSIVE_ AND o.ID_ <> j.ID_
            AND o.LOCK_OWNER_ IS NOT NULL AND o.LOCK_EXP_TIME_ > coalesce($4, now())))
    ORDER BY j.ID_
    LIMIT greatest($2 - (SELECT count(*) FROM expired WHERE RETRIES_ > 1 OR coalesce(DUEDATE_ > LOCK_TIME_, false)) - (SELECT count(*) FROM timers), 0)
    FOR UPDATE OF j SKIP LOCKED
),
dated AS (
    SELECT j.*
    FROM ACT_RU_JOB j
    WHERE j.LOCK_OWNER_ IS NULL
      AND j.RETRIES_ > 0
      AND j.DUEDATE_ <= coalesce($4, now()) + $5
      AND j.TYPE_ = 'message'
      AND (j.EXECUTION_ID_ IS NULL OR EXISTS (
          SELECT 1 FROM ACT_RU_EXECUTION pi
          WHERE pi.ID_ = j.PROCESS_INSTANCE_ID_ AND pi.SUSPENSION_STATE_ = 1))
      AND NOT (j.EXCLUSIVE_ AND j.EXCLUSIVE_KEY_ IS NOT NULL AND EXISTS (
          SELECT 1 FROM ACT_RU_JOB o
          WHERE o.EXCLUSIVE_KEY_ = j.EXCLUSIVE_KEY_ AND o.EXCLUSIVE_ AND o.ID_ <> j.ID_
            AND o.LOCK_OWNER_ IS NOT NULL AND o.LOCK_EXP_TIME_ > coalesce($4, now())))
    ORDER BY j.DUEDATE_, j.PRIORITY_ DESC
    LIMIT greatest($2 - (SELECT count(*) FROM expired WHERE RETRIES_ > 1 OR coalesce(DUEDATE_ > LOCK_TIME_, false)) - (SELECT count(*) FROM timers)
                       - (SELECT count(*) FROM undated), 0)
    FOR UPDATE OF j SKIP LOCKED
),
exhausted AS (
    SELECT * FROM expired WHERE RETRIES_ <= 1 AND NOT coalesce(DUEDATE_ > LOCK_TIME_, false)
),
locked AS (
    SELECT * FROM expired WHERE RETRIES_ > 1 OR coalesce(DUEDATE_ > LOCK_TIME_, false)
    UNION ALL SELECT * FROM timers UNION ALL SELECT * FROM undated UNION ALL SELECT * FROM dated
),
-- At most one job per exclusive key per acquisition: the first in due order. The others stay
-- locked by this transaction until it ends, then wait for the next round.
chosen AS (
    SELECT l.*
    FROM locked l
    WHERE l.ID_ IN (
        SELECT r.ID_ FROM (
            SELECT k.ID_, row_number() OVER (
                PARTITION BY CASE WHEN k.EXCLUSIVE_ AND k.EXCLUSIVE_KEY_ IS NOT NULL
                                  THEN 'k:' || k.EXCLUSIVE_KEY_ ELSE 'j:' || k.ID_ END
                ORDER BY k.DUEDATE_ NULLS FIRST, k.PRIORITY_ DESC, k.ID_) AS rank_
            FROM locked k
        ) r
        WHERE r.rank_ = 1)
),
flags AS (
    SELECT EXISTS (SELECT 1 FROM chosen WHERE EXCLUSIVE_ AND EXCLUSIVE_KEY_ IS NOT NULL) AS has_exclusive
),
-- Only evaluated when exclusive candidates exist (the final SELECT reads it only then). The
-- try-lock never waits, so neither its order nor a concurrent node can deadlock it; keys are
-- still taken in sorted order. Inside the transactional path these locks are held until commit
-- and make the second statement's re-check race-free (acquire.rs). The lock key hashes the
-- schema with the key, so several kairos schemas in one database do not contend.
got AS MATERIALIZED (
    SELECT s.k, pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/' || s.k, 0)) AS ok
    FROM (
        SELECT DISTINCT c.EXCLUSIVE_KEY_ AS k
        FROM chosen c
        WHERE c.EXCLUSIVE_ AND c.EXCLUSIVE_KEY_ IS NOT NULL
        ORDER BY 1
    ) s
),
