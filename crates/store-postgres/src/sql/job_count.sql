-- The total behind a job_list page (same filter).
SELECT count(*) AS total_
FROM {table}
WHERE ($1::text IS NULL OR PROCESS_INSTANCE_ID_ = $1)
  AND ($2::text IS NULL OR HANDLER_TYPE_ = $2)
  AND ($3::text IS NULL OR TYPE_ = $3)
  AND ($4::boolean IS NULL OR (EXCEPTION_MSG_ IS NOT NULL) = $4)
  AND ($5::text IS NULL OR TENANT_ID_ = $5)
