-- Fewer index writes per job (issue 21, item 2). A job's lock is not a HOT update (it changes
-- LOCK_OWNER_ and LOCK_EXP_TIME_, which indexes hold), so every lock, like every insert, adds
-- an entry to each index whose predicate the row meets. Measured on a 100,000-job drain
-- (`kairos bench jobs --phases drain --workers 32`): the acquisition's UPDATE was ~30 µs per
-- row, most of it index inserts.
--
-- * ACT_IDX_JOB_PROCINST and ACT_IDX_JOB_EXECUTION hold only jobs of a process: a standalone
--   job (NULL ids) no longer writes two entries nobody looks up. Lookups by id (`= $1`) imply
--   NOT NULL, so the planner still uses them.
-- * ACT_IDX_JOB_LOCK_OWNER goes: the leases of one node are found through ACT_IDX_JOB_LOCKED,
--   which holds only locked rows (a few per worker), by scanning it and checking the owner.
DROP INDEX ACT_IDX_JOB_PROCINST;
DROP INDEX ACT_IDX_JOB_EXECUTION;
DROP INDEX ACT_IDX_JOB_LOCK_OWNER;
CREATE INDEX ACT_IDX_JOB_PROCINST ON ACT_RU_JOB (PROCESS_INSTANCE_ID_) WHERE PROCESS_INSTANCE_ID_ IS NOT NULL;
CREATE INDEX ACT_IDX_JOB_EXECUTION ON ACT_RU_JOB (EXECUTION_ID_) WHERE EXECUTION_ID_ IS NOT NULL;
