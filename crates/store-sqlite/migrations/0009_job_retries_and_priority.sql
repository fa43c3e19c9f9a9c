-- A repeating timer's retries are spent per fire, not over its whole life: as in Flowable
-- (where every fire of a cycle is a new job, created with the retries its definition gives),
-- each fire starts with the retries the job was created with. INITIAL_RETRIES_ keeps that
-- RETRIES_; a successful fire (complete_reschedule.sql) sets RETRIES_ back to it. It travels
-- with the row to the dead letters and the suspended jobs and back, as PRIORITY_ below does.
-- Null on rows written before this migration: their RETRIES_ is left as it is.
ALTER TABLE ACT_RU_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;
ALTER TABLE ACT_RU_DEADLETTER_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;
ALTER TABLE ACT_RU_SUSPENDED_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;

-- Quartz fires triggers due at the same time in priority order (its acquisition orders by
-- NEXT_FIRE_TIME, then PRIORITY descending). A trigger's jobs carry its priority in PRIORITY_
-- (Camunda 7's column: a BIGINT, higher first) and acquisition breaks ties of DUEDATE_ by it;
-- every other job has 0. The ready index gets the column, so the due-order walk of the ready set
-- still stops at the limit without sorting it.
ALTER TABLE ACT_RU_JOB ADD COLUMN PRIORITY_ BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ACT_RU_DEADLETTER_JOB ADD COLUMN PRIORITY_ BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ACT_RU_SUSPENDED_JOB ADD COLUMN PRIORITY_ BIGINT NOT NULL DEFAULT 0;
DROP INDEX ACT_IDX_JOB_ACQUIRE;
CREATE INDEX ACT_IDX_JOB_ACQUIRE ON ACT_RU_JOB (DUEDATE_, PRIORITY_ DESC) WHERE LOCK_OWNER_ IS NULL AND RETRIES_ > 0;
