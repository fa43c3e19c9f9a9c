-- ACT_HI_JOB_LOG rows, one statement for a whole batch. ?1 is a JSON array of arrays:
-- [id, job id, attempt, node, start, end, outcome, message, type, handler type,
--  process instance, element id, exclusive key, due date, tenant].
INSERT INTO ACT_HI_JOB_LOG (
    ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, MESSAGE_, TYPE_,
    HANDLER_TYPE_, PROCESS_INSTANCE_ID_, ELEMENT_ID_, EXCLUSIVE_KEY_, DUEDATE_, TENANT_ID_
)
SELECT l.value ->> 0, l.value ->> 1, l.value ->> 2, l.value ->> 3, l.value ->> 4, l.value ->> 5,
       l.value ->> 6, l.value ->> 7, l.value ->> 8, l.value ->> 9, l.value ->> 10,
       l.value ->> 11, l.value ->> 12, l.value ->> 13, l.value ->> 14
FROM jsonb_each(?1) AS l
