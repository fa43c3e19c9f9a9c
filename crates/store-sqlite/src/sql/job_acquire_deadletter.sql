-- Jobs whose expired lease is taken over on their last retry (?1: JSON array of ids) do not run
-- again: the abandoned attempt spent that retry, so they go to ACT_RU_DEADLETTER_JOB with
-- RETRIES_ 0, unlocked, saying whose lease ran out. An earlier failure's stack row stays theirs.
-- (The caller then deletes them from ACT_RU_JOB.)
INSERT INTO ACT_RU_DEADLETTER_JOB (
    ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_,
    EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
    SCOPE_TYPE_, SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_, EXCEPTION_MSG_,
    DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_,
    TENANT_ID_, INITIAL_RETRIES_, PRIORITY_
)
SELECT ID_, REV_ + 1, TYPE_, NULL, NULL, NULL, EXCLUSIVE_, EXCLUSIVE_KEY_,
       EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
       SCOPE_TYPE_, SCOPE_DEFINITION_ID_, 0, ATTEMPTS_, EXCEPTION_STACK_ID_,
       'abandoned on its last retry: the lease of node ' || LOCK_OWNER_ || ' expired before the attempt ended',
       DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_,
       TENANT_ID_, INITIAL_RETRIES_, PRIORITY_
FROM ACT_RU_JOB
WHERE ID_ IN (SELECT value FROM json_each(?1))
