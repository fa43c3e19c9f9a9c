-- An operator's "execute": the job becomes due at the database's now. Its lease, if any, is
-- left alone: a running job is not interrupted.
UPDATE ACT_RU_JOB
SET DUEDATE_ = date_trunc('milliseconds', now()), REV_ = REV_ + 1
WHERE ID_ = $1
RETURNING *
