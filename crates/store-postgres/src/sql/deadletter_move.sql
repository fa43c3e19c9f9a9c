-- Moves a dead letter back to ACT_RU_JOB (SPEC J4): $2 retries, due now, lock and exception
-- cleared, the old stack bytes deleted. ATTEMPTS_ is kept: it keeps counting attempts and stays
-- the fencing token, so a completion from before the move can never apply.
WITH moved AS (
    DELETE FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = $1 RETURNING *
),
bytes AS (
    DELETE FROM ACT_GE_BYTEARRAY b USING moved m WHERE b.ID_ = m.EXCEPTION_STACK_ID_
)
INSERT INTO ACT_RU_JOB (
    ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_,
    EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_,
    SCOPE_TYPE_, SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_, EXCEPTION_MSG_,
    DUEDATE_, REPEAT_, RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_,
    TENANT_ID_, INITIAL_RETRIES_
)
SELECT m.ID_, m.REV_ + 1, m.TYPE_, NULL, NULL, NULL, m.EXCLUSIVE_, m.EXCLUSIVE_KEY_,
       m.EXECUTION_ID_, m.PROCESS_INSTANCE_ID_, m.PROC_DEF_ID_, m.ELEMENT_ID_, m.ELEMENT_NAME_,
       m.SCOPE_ID_, m.SCOPE_TYPE_, m.SCOPE_DEFINITION_ID_, $2, m.ATTEMPTS_, NULL, NULL,
       date_trunc('milliseconds', now()), m.REPEAT_, m.RETRY_CYCLE_, m.HANDLER_TYPE_,
       m.HANDLER_CFG_, m.CUSTOMVALUES_ID_, m.CREATE_TIME_, m.TENANT_ID_, m.INITIAL_RETRIES_
FROM moved m
RETURNING *
