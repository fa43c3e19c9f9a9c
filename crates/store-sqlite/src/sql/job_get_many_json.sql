-- Whole ACT_RU_JOB rows (?1: JSON array of ids) as ONE row holding a JSON array of arrays, in
-- the column order of `rows::JOB_JSON_COLUMNS`. A batch of jobs then crosses the driver as one
-- value instead of one row (and one copied value per column) per job.
SELECT json_group_array(json_array(
    ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_,
    EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
    SCOPE_TYPE_, SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_, EXCEPTION_MSG_,
    DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_,
    TENANT_ID_
)) AS JOBS_
FROM ACT_RU_JOB
WHERE ID_ IN (SELECT value FROM json_each(?1))
