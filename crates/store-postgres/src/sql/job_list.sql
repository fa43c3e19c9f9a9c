-- A page of one job table, in due order (nulls first, as SQLite sorts them) then by id.
SELECT *
FROM {table}
WHERE ($1::text IS NULL OR PROCESS_INSTANCE_ID_ = $1)
  AND ($2::text IS NULL OR HANDLER_TYPE_ = $2)
  AND ($3::text IS NULL OR TYPE_ = $3)
  AND ($4::boolean IS NULL OR (EXCEPTION_MSG_ IS NOT NULL) = $4)
  AND ($7::text IS NULL OR TENANT_ID_ = $7)
ORDER BY DUEDATE_ NULLS FIRST, ID_
LIMIT $5 OFFSET $6
