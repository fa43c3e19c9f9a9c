-- One new job. ?17 is the due date resolved against ?16, the database now of the transaction.
-- INITIAL_RETRIES_ keeps the retries it starts with (a repeating timer's every fire gets them).
INSERT INTO ACT_RU_JOB (
    ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, EXECUTION_ID_, PROCESS_INSTANCE_ID_,
    PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, RETRY_CYCLE_, REPEAT_,
    HANDLER_TYPE_, HANDLER_CFG_, TENANT_ID_, CREATE_TIME_, DUEDATE_, INITIAL_RETRIES_
)
VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?10)
RETURNING *
