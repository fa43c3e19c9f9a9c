-- Batched by 100: claim up to 100 free jobs, then delete them by id array (their completions).
BEGIN;
SELECT coalesce(array_agg(id), '{}')::text AS ids FROM (SELECT id FROM jobs ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED) s \gset
DELETE FROM jobs WHERE id = ANY(:ids::bigint[]);
COMMIT;
