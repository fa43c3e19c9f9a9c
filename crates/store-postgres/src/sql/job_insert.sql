-- One new job (SPEC J13). A null $11 means "due now": the database clock of the inserting
-- transaction, the same instant as CREATE_TIME_. Due dates relative to the clock (dueIn, a
-- cycle's first fire) were resolved by the caller against `now()` of the same transaction.
-- INITIAL_RETRIES_ keeps the retries it starts with (a repeating timer's every fire gets them).
INSERT INTO ACT_RU_JOB (
    ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, EXECUTION_ID_, PROCESS_INSTANCE_ID_,
    PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, DUEDATE_, REPEAT_,
    RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_
)
VALUES (
    $1, 1, $2, $3, $4, $5, $6,
    $7, $8, $9, $10, 0, coalesce($11, date_trunc('milliseconds', now())), $12,
    $13, $14, $15, date_trunc('milliseconds', now()), coalesce($16, ''), $10
)
RETURNING *
