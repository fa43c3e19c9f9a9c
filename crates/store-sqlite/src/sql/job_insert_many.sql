-- Bulk enqueue: one statement per chunk. ?1 is a JSON array of job arrays, in the order
-- [id, type, exclusive, exclusive key, execution, process instance, process definition,
--  element id, element name, retries, retry cycle, repeat, handler type, handler cfg, tenant,
--  due date]; INITIAL_RETRIES_ is the retries; ?2 is the database now of the transaction (CREATE_TIME_).
INSERT INTO ACT_RU_JOB (
    ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, EXECUTION_ID_, PROCESS_INSTANCE_ID_,
    PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, RETRY_CYCLE_, REPEAT_,
    HANDLER_TYPE_, HANDLER_CFG_, TENANT_ID_, CREATE_TIME_, DUEDATE_, INITIAL_RETRIES_
)
SELECT j.value ->> 0, 1, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4,
       j.value ->> 5, j.value ->> 6, j.value ->> 7, j.value ->> 8, j.value ->> 9, 0,
       j.value ->> 10, j.value ->> 11, j.value ->> 12, j.value ->> 13, j.value ->> 14, ?2,
       j.value ->> 15, j.value ->> 9
FROM json_each(?1) AS j
