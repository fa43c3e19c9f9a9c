-- Timers keep their time under a backlog (issue 21, item 4). Acquisition takes due timers
-- first, from this index, before the async jobs in due order: a timer due now no longer waits
-- behind every message job that became due before it. (Flowable keeps timers in a table of
-- their own with their own acquisition for the same reason; one partial index does it here
-- without moving rows.) Only timer rows are in it: an async job's insert, lock and delete do
-- not touch it.
CREATE INDEX ACT_IDX_JOB_TIMER_ACQUIRE ON ACT_RU_JOB (DUEDATE_, PRIORITY_ DESC)
    WHERE TYPE_ = 'timer' AND LOCK_OWNER_ IS NULL AND RETRIES_ > 0;
