-- Bulk enqueue: one statement for a whole chunk of jobs, one array per column. A null due
-- date means "due now" (see job_insert.sql).
INSERT INTO ACT_RU_JOB (
    ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, EXECUTION_ID_, PROCESS_INSTANCE_ID_,
    PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, DUEDATE_, REPEAT_,
    RETRY_CYCLE_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_
)
SELECT n.id, 1, n.job_type, n.exclusive, n.exclusive_key, n.execution_id, n.process_instance_id,
       n.proc_def_id, n.element_id, n.element_name, n.retries, 0,
       coalesce(n.due, date_trunc('milliseconds', now())), n.repeat,
       n.retry_cycle, n.handler_type, n.handler_cfg, date_trunc('milliseconds', now()),
       coalesce(n.tenant_id, ''), n.retries
FROM unnest(
    $1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::int4[], $11::timestamptz[], $12::text[], $13::text[],
    $14::text[], $15::text[], $16::text[]
) AS n(id, job_type, exclusive, exclusive_key, execution_id, process_instance_id, proc_def_id,
       element_id, element_name, retries, due, repeat, retry_cycle, handler_type, handler_cfg,
       tenant_id)
