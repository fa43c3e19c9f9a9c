-- Whole ACT_RU_JOB rows (?1: JSON array of ids) as ONE row holding a JSON array of arrays, in
-- the column order of `rows::JOB_JSON_COLUMNS`. A batch of jobs then crosses the driver as one
-- value instead of one row (and one copied value per column) per job. JSON cannot hold a BLOB
-- (SQLite keeps one in any column an UPDATE puts it in): one is passed as its SQL literal, x'00ff',
-- which no column reads, so the row is named unreadable instead of failing the whole batch.
SELECT json_group_array(json_array(
    CASE WHEN typeof(ID_) = 'blob' THEN lower(quote(ID_)) ELSE ID_ END,
    CASE WHEN typeof(REV_) = 'blob' THEN lower(quote(REV_)) ELSE REV_ END,
    CASE WHEN typeof(TYPE_) = 'blob' THEN lower(quote(TYPE_)) ELSE TYPE_ END,
    CASE WHEN typeof(LOCK_EXP_TIME_) = 'blob' THEN lower(quote(LOCK_EXP_TIME_)) ELSE LOCK_EXP_TIME_ END,
    CASE WHEN typeof(LOCK_OWNER_) = 'blob' THEN lower(quote(LOCK_OWNER_)) ELSE LOCK_OWNER_ END,
    CASE WHEN typeof(LOCK_TIME_) = 'blob' THEN lower(quote(LOCK_TIME_)) ELSE LOCK_TIME_ END,
    CASE WHEN typeof(EXCLUSIVE_) = 'blob' THEN lower(quote(EXCLUSIVE_)) ELSE EXCLUSIVE_ END,
    CASE WHEN typeof(EXCLUSIVE_KEY_) = 'blob' THEN lower(quote(EXCLUSIVE_KEY_)) ELSE EXCLUSIVE_KEY_ END,
    CASE WHEN typeof(EXECUTION_ID_) = 'blob' THEN lower(quote(EXECUTION_ID_)) ELSE EXECUTION_ID_ END,
    CASE WHEN typeof(PROCESS_INSTANCE_ID_) = 'blob' THEN lower(quote(PROCESS_INSTANCE_ID_)) ELSE PROCESS_INSTANCE_ID_ END,
    CASE WHEN typeof(PROC_DEF_ID_) = 'blob' THEN lower(quote(PROC_DEF_ID_)) ELSE PROC_DEF_ID_ END,
    CASE WHEN typeof(ELEMENT_ID_) = 'blob' THEN lower(quote(ELEMENT_ID_)) ELSE ELEMENT_ID_ END,
    CASE WHEN typeof(ELEMENT_NAME_) = 'blob' THEN lower(quote(ELEMENT_NAME_)) ELSE ELEMENT_NAME_ END,
    CASE WHEN typeof(SCOPE_ID_) = 'blob' THEN lower(quote(SCOPE_ID_)) ELSE SCOPE_ID_ END,
    CASE WHEN typeof(SCOPE_TYPE_) = 'blob' THEN lower(quote(SCOPE_TYPE_)) ELSE SCOPE_TYPE_ END,
    CASE WHEN typeof(SCOPE_DEFINITION_ID_) = 'blob' THEN lower(quote(SCOPE_DEFINITION_ID_)) ELSE SCOPE_DEFINITION_ID_ END,
    CASE WHEN typeof(RETRIES_) = 'blob' THEN lower(quote(RETRIES_)) ELSE RETRIES_ END,
    CASE WHEN typeof(ATTEMPTS_) = 'blob' THEN lower(quote(ATTEMPTS_)) ELSE ATTEMPTS_ END,
    CASE WHEN typeof(EXCEPTION_STACK_ID_) = 'blob' THEN lower(quote(EXCEPTION_STACK_ID_)) ELSE EXCEPTION_STACK_ID_ END,
    CASE WHEN typeof(EXCEPTION_MSG_) = 'blob' THEN lower(quote(EXCEPTION_MSG_)) ELSE EXCEPTION_MSG_ END,
    CASE WHEN typeof(DUEDATE_) = 'blob' THEN lower(quote(DUEDATE_)) ELSE DUEDATE_ END,
    CASE WHEN typeof(REPEAT_) = 'blob' THEN lower(quote(REPEAT_)) ELSE REPEAT_ END,
    CASE WHEN typeof(RETRY_CYCLE_) = 'blob' THEN lower(quote(RETRY_CYCLE_)) ELSE RETRY_CYCLE_ END,
    CASE WHEN typeof(HANDLER_TYPE_) = 'blob' THEN lower(quote(HANDLER_TYPE_)) ELSE HANDLER_TYPE_ END,
    CASE WHEN typeof(HANDLER_CFG_) = 'blob' THEN lower(quote(HANDLER_CFG_)) ELSE HANDLER_CFG_ END,
    CASE WHEN typeof(CUSTOMVALUES_ID_) = 'blob' THEN lower(quote(CUSTOMVALUES_ID_)) ELSE CUSTOMVALUES_ID_ END,
    CASE WHEN typeof(CREATE_TIME_) = 'blob' THEN lower(quote(CREATE_TIME_)) ELSE CREATE_TIME_ END,
    CASE WHEN typeof(TENANT_ID_) = 'blob' THEN lower(quote(TENANT_ID_)) ELSE TENANT_ID_ END
)) AS JOBS_
FROM ACT_RU_JOB
WHERE ID_ IN (SELECT value FROM json_each(?1))
