-- Fewer index writes per job (issue 21, item 2): ACT_IDX_JOB_PROCINST and ACT_IDX_JOB_EXECUTION
-- hold only jobs of a process, so a standalone job (NULL ids) no longer writes two entries
-- nobody looks up. Lookups by id (`= ?`) imply NOT NULL, so SQLite still uses them.
-- (ACT_IDX_JOB_LOCK_OWNER stays on SQLite: without statistics its planner would answer a
-- lookup by owner with a table scan rather than a walk of ACT_IDX_JOB_LOCKED.)
DROP INDEX ACT_IDX_JOB_PROCINST;
DROP INDEX ACT_IDX_JOB_EXECUTION;
CREATE INDEX ACT_IDX_JOB_PROCINST ON ACT_RU_JOB (PROCESS_INSTANCE_ID_) WHERE PROCESS_INSTANCE_ID_ IS NOT NULL;
CREATE INDEX ACT_IDX_JOB_EXECUTION ON ACT_RU_JOB (EXECUTION_ID_) WHERE EXECUTION_ID_ IS NOT NULL;
