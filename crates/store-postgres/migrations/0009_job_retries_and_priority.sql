-- A repeating timer's retries are spent per fire, not over its whole life: as in Flowable
-- (where every fire of a cycle is a new job, created with the retries its definition gives),
-- each fire starts with the retries the job was created with. INITIAL_RETRIES_ keeps that
-- RETRIES_; a successful fire (complete_reschedule.sql) sets RETRIES_ back to it. It travels
-- with the row to the dead letters and the suspended jobs and back. Null on rows written
-- before this migration (and on jobs that never repeat): their RETRIES_ is left as it is.
ALTER TABLE ACT_RU_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;
ALTER TABLE ACT_RU_DEADLETTER_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;
ALTER TABLE ACT_RU_SUSPENDED_JOB ADD COLUMN INITIAL_RETRIES_ INTEGER;
